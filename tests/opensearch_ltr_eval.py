"""An evaluator of the LTR plugin's ``model/xgboost+json`` models, written from the plugin's rules alone.

It reads nothing of structrank: only a ``_createmodel`` body (or its definition), the feature set's
names and feature rows. The rules are those of the Elasticsearch/OpenSearch LTR plugin's
``XGBoostJsonParser`` and ``NaiveAdditiveDecisionTree`` (o19s/elasticsearch-learning-to-rank,
opensearch-project/opensearch-learning-to-rank-base):

- the definition is a JSON list of trees, or an object ``{"objective", "splits": [trees]}``;
  objectives ``reg:linear``, ``rank:*``, ``binary:logitraw`` give the sum, ``binary:logistic`` and
  ``reg:logistic`` its sigmoid (computed in double, returned as float);
- a split node has ``nodeid``, ``depth``, ``split`` (a feature name of the set), ``split_condition``,
  ``yes``, ``no`` and two ``children``, the first the ``yes`` node and the second the ``no`` node;
  ``missing``, if given, names one of them; a leaf has ``nodeid`` and ``leaf``;
- feature values, split conditions and leaves are float32 (Java ``float``; JSON numbers are read as
  a double and cast); a missing feature value is NaN;
- at a split, NaN goes to the ``missing`` child (the ``no`` child when ``missing`` is not the
  ``yes`` one), else ``split_condition > value`` goes ``yes``, otherwise ``no``;
- the score is the float32 sum, tree after tree, of the leaves reached (each tree's weight is 1).
"""

from __future__ import annotations

import json

import numpy as np

#: the plugin's objectives and whether they apply a sigmoid to the sum
OBJECTIVES = {"binary:logitraw": False, "rank:ndcg": False, "rank:map": False, "rank:pairwise": False,
              "reg:linear": False, "binary:logistic": True, "reg:logistic": True}


def _float32(number):
    """A JSON number as the plugin reads it: a double cast to float (overflow gives infinity)."""
    with np.errstate(over="ignore"):
        return np.float32(float(number))


class Tree:
    """One tree as flat arrays (node index -> feature ordinal, condition, yes, no, missing, leaf)."""

    def __init__(self, root, ordinals):
        self.feature, self.condition, self.yes, self.no, self.missing_yes, self.leaf = [], [], [], [], [], []
        self._add(root, ordinals)
        self.feature = np.array(self.feature, dtype=np.int64)
        self.condition = np.array(self.condition, dtype=np.float32)
        self.yes, self.no = np.array(self.yes, dtype=np.int64), np.array(self.no, dtype=np.int64)
        self.missing_yes = np.array(self.missing_yes, dtype=bool)
        self.leaf = np.array(self.leaf, dtype=np.float32)
        self.is_leaf = self.feature < 0

    def _add(self, node, ordinals):
        index = len(self.feature)
        for column in (self.feature, self.condition, self.yes, self.no, self.missing_yes, self.leaf):
            column.append(0)
        assert isinstance(node.get("nodeid"), int), node
        if "leaf" in node:  # a node with a leaf is a leaf, whatever else it has
            self.feature[index], self.leaf[index] = -1, _float32(node["leaf"])
            return index
        for field in ("depth", "split", "split_condition", "yes", "no", "children"):
            assert field in node, f"a split without {field}: {node}"
        children = node["children"]
        assert len(children) == 2 and children[0]["nodeid"] == node["yes"] and children[1]["nodeid"] == node["no"], node
        assert node.get("missing") in (None, node["yes"], node["no"]), node
        assert node["split"] in ordinals, f"unknown feature {node['split']!r}"
        self.feature[index] = ordinals[node["split"]]
        self.condition[index] = _float32(node["split_condition"])
        self.missing_yes[index] = node.get("missing") == node["yes"]
        self.yes[index] = self._add(children[0], ordinals)
        self.no[index] = self._add(children[1], ordinals)
        return index

    def leaves(self, X):
        """The float32 leaf value each row of the float32 matrix X reaches."""
        rows = np.arange(X.shape[0])
        node = np.zeros(X.shape[0], dtype=np.int64)
        active = ~self.is_leaf[node]
        while active.any():
            value = X[rows, np.where(active, self.feature[node], 0)]
            yes = np.where(np.isnan(value), self.missing_yes[node], self.condition[node] > value)
            node = np.where(active, np.where(yes, self.yes[node], self.no[node]), node)
            active = ~self.is_leaf[node]
        return self.leaf[node]


class PluginModel:
    """A ``model/xgboost+json`` model over the feature set ``names`` (in the set's order)."""

    def __init__(self, definition, names):
        if isinstance(definition, str):
            definition = json.loads(definition)
        if isinstance(definition, dict):
            objective, splits = definition.get("objective", "reg:linear"), definition["splits"]
        else:
            objective, splits = "reg:linear", definition
        assert objective in OBJECTIVES, f"not an objective of the plugin: {objective!r}"
        assert splits, "the plugin needs at least one tree"
        self.sigmoid = OBJECTIVES[objective]
        ordinals = {name: i for i, name in enumerate(names)}
        self.trees = [Tree(tree, ordinals) for tree in splits]
        #: the names of the features the splits test
        self.split_features = {names[f] for tree in self.trees for f in tree.feature[~tree.is_leaf]}

    @classmethod
    def from_body(cls, body, names):
        """The model of a ``_createmodel`` request body (its text or its JSON)."""
        doc = json.loads(body) if isinstance(body, str) else body
        model = doc["model"]["model"]
        assert model["type"] == "model/xgboost+json", model["type"]
        return cls(model["definition"], names)

    def scores(self, X, accumulate=np.float32):
        """One score per row of X (cast to float32, the plugin's feature values). ``accumulate=np.float64``
        adds the same float32 leaves in double, to tell the routing from the plugin's float32 rounding."""
        X = np.asarray(X, dtype=np.float32)
        total = np.zeros(X.shape[0], dtype=accumulate)
        for tree in self.trees:
            total = (total + tree.leaves(X).astype(accumulate)).astype(accumulate)
        if self.sigmoid:
            return (1.0 / (1.0 + np.exp(-total.astype(np.float64)))).astype(np.float32)
        return total
