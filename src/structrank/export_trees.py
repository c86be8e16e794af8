"""Tree models out: the LTR plugin's ``model/xgboost+json`` and LightGBM's own model text.

``LambdaMARTRanker``, ``McRank`` and ``StructuredBoostingRanker`` keep a LightGBM booster as text
(``booster_text_``). Its leaf values already hold all that a prediction adds up (the learning rate,
and the average ``boost_from_average`` starts from), so a raw score is the sum of one leaf per tree.

``model/xgboost+json`` is the tree format of the Elasticsearch and OpenSearch LTR plugins, written
here from their parser (``XGBoostJsonParser``) and evaluator (``NaiveAdditiveDecisionTree``): a JSON
list of trees; a node is ``{"nodeid", "depth", "split": feature name, "split_condition", "yes", "no",
"missing", "children": [the yes node, the no node]}``, a leaf ``{"nodeid", "leaf"}``. The plugin
reads feature values, split conditions and leaves as float32, goes to ``yes`` when ``value <
split_condition``, to the ``missing`` child when the value is missing (NaN), else to ``no``, and
scores the float32 sum of the leaves it reaches.

LightGBM goes left when ``value <= threshold`` (doubles). The plugin sees ``float32(value)``, so the
split condition is the float32 just above ``float32(threshold)``: ``float32(x) < c`` exactly when
``float32(x) <= float32(threshold)``. A value at or below the threshold goes left as in LightGBM
(rounding keeps order); a value above it goes right unless it rounds to the threshold's own float32,
which no float32 comparison can tell from the threshold. The threshold is rounded to nearest, not
down, because LightGBM puts thresholds just above training values (a double or two past them): a
feature equal to such a value rounds to the threshold's float32 and must go left. A threshold beyond
float32's range sends every finite value left and infinity (what the plugin reads for any value
beyond that range) right.

Zeros and missing values follow LightGBM's predictor: it reads every ``|x| <= 1e-35`` (its
kZeroThreshold, a float32) as 0, and its ``missing_type`` says where 0 and NaN go. ``None`` reads
NaN as 0, so ``missing`` is the child 0 goes to; ``NaN`` sends NaN to the default child;
``Zero`` (``zero_as_missing``) sends 0 and NaN there. When those ±1e-35 matter (``Zero``, or a
threshold within them) the node becomes two splits on the feature, below ``-1e-35`` and at most
``1e-35``, with the threshold's split under them where it cuts a region; a value just outside
±1e-35 that rounds to their float32 counts as inside. Categorical splits (LightGBM's ``==``) and
linear leaves cannot be written and are refused. The plugin follows ``missing`` since the
Elasticsearch LTR plugin 1.5.9 and OpenSearch LTR 3.8.0; before, a missing value went to ``no``.

McRank scores ``sum_k classes_[k] * softmax_k(f(x))`` over one ensemble per grade. The plugin's one
sum (with an optional sigmoid) holds that only for the grades 0 and 1, where it is
``sigmoid(f_1(x) - f_0(x))``: objective ``binary:logistic`` over the grade-1 trees and the grade-0
trees with negated leaves (the plugin's ``{"objective", "splits"}`` form). Other grades are refused.
"""

from __future__ import annotations

import itertools
import json

import numpy as np

#: LightGBM's kZeroThreshold, a float constant: its predictor reads every |x| <= it as 0
_ZERO = np.float32(1e-35)
#: what the plugin's float32 parse turns into +infinity (JSON has no infinity): above float32's largest
_PLUS_INFINITY = 1e39
#: the LightGBM objectives whose prediction is the raw sum of the trees (a custom objective has none)
_RAW_SUM_OBJECTIVES = ("lambdarank", "rank_xendcg", "regression", None)


def model_booster(model):
    """The LightGBM booster of a fitted tree ranker (validated from ``booster_text_``); a clear error else."""
    if getattr(model, "booster_text_", None) is None:
        raise ValueError(f"{type(model).__name__} is not a tree model (no LightGBM booster booster_text_): only "
                         "LambdaMARTRanker, McRank and StructuredBoostingRanker export as trees")
    return model._booster()  # checks the text as loading a model file does


def lightgbm_text(model) -> str:
    """LightGBM's own model text of a tree ranker, which ``lightgbm.Booster(model_file=...)`` loads.

    The booster predicts the model's scores, except McRank's: its booster gives P(grade) for each of
    ``classes_``, and the score is their expectation (``predict(X) @ classes_``).
    """
    # deferred: lightgbm_rankers loads its checks with the learners, not with the exporters
    from structrank.learners.lightgbm_rankers import checked_model_text

    model_booster(model)
    # the checked text has no tree_sizes= line, so LightGBM parses its trees one by one (and raises on a bad one)
    return checked_model_text(str(model.booster_text_))


def _cut(threshold):
    """The float32 split condition c with ``float32(x) < c`` iff ``float32(x) <= float32(threshold)``."""
    with np.errstate(over="ignore"):
        rounded = np.float32(threshold)
    return np.nextafter(rounded, np.float32(np.inf))


def _split(feature, cut, yes, no, missing_yes):
    return ("split", feature, np.float32(cut), yes, no, bool(missing_yes))


def _converted(node, sign):
    """A LightGBM dump node as nested ``("leaf", value)`` / ``("split", feature, cut, yes, no, missing_yes)``."""
    if "leaf_value" in node:
        if node.get("leaf_features"):
            raise ValueError("a linear leaf (linear_tree): the plugin's leaves are constants")
        return ("leaf", sign * float(node.get("leaf_const", node["leaf_value"])))  # a linear tree's constant leaf
    feature = int(node["split_feature"])
    if node["decision_type"] != "<=":
        raise ValueError(f"a categorical split on feature {feature + 1} ({node['decision_type']}): the plugin's trees "
                         "only compare a value with a threshold")
    missing = node["missing_type"]
    if missing not in ("None", "NaN", "Zero"):
        raise ValueError(f"a split with LightGBM missing_type {missing!r}, which structrank does not know")
    left, right = _converted(node["left_child"], sign), _converted(node["right_child"], sign)
    threshold, default = float(node["threshold"]), (left if node["default_left"] else right)
    # where LightGBM sends a zero (and every |x| <= z, which its predictor reads as 0) and a NaN
    zero = default if missing == "Zero" else (left if 0.0 <= threshold else right)
    nan = zero if missing == "None" else default
    cut = _cut(threshold)
    plain = _split(feature, cut, left, right, nan is left)
    above_zero = np.nextafter(_ZERO, np.float32(np.inf))
    if missing != "Zero" and not -_ZERO < cut <= _ZERO:
        return plain  # the cut is outside [-z, z], so all of it goes where 0 goes
    # three regions: below -z, the zero band [-z, z], above z; the plain split only where the threshold cuts a region
    below = left if cut >= -_ZERO else plain
    above = right if cut <= above_zero else plain
    if nan is zero:
        return _split(feature, -_ZERO, below, _split(feature, above_zero, zero, above, True), False)
    if nan is left:  # below is left or the plain split, which sends NaN left
        return _split(feature, -_ZERO, below, _split(feature, above_zero, zero, above, False), True)
    return _split(feature, -_ZERO, below, _split(feature, above_zero, zero, above, False), False)


def _json_number(value) -> float:
    """A float32 as a JSON number that Java parses back to it (through double, as the plugin does)."""
    return _PLUS_INFINITY if np.isposinf(value) else float(value)


def _numbered(tree, names) -> dict:
    """Nested nodes as the plugin's JSON: node ids in depth-first order, children [yes, no]."""
    counter = itertools.count()

    def node(part, depth):
        nodeid = next(counter)
        if part[0] == "leaf":
            return {"nodeid": nodeid, "leaf": part[1]}
        _, feature, cut, yes, no, missing_yes = part
        yes_node, no_node = node(yes, depth + 1), node(no, depth + 1)
        return {"nodeid": nodeid, "depth": depth, "split": names[feature], "split_condition": _json_number(cut),
                "yes": yes_node["nodeid"], "no": no_node["nodeid"],
                "missing": yes_node["nodeid"] if missing_yes else no_node["nodeid"], "children": [yes_node, no_node]}

    return node(tree, 0)


def _checked_leaves(trees):
    for tree in trees:
        stack = [tree]
        while stack:
            part = stack.pop()
            if part[0] == "leaf":
                if not abs(part[1]) <= np.finfo(np.float32).max:
                    raise ValueError(f"a leaf value {part[1]!r} is beyond float32, which the plugin reads leaves as")
            else:
                stack.extend(part[3:5])


def booster_trees(dump, names, signs=None) -> list:
    """The trees of a LightGBM ``Booster.dump_model()`` as the plugin's ``model/xgboost+json`` list.

    Parameters
    ----------
    dump : dict
        ``Booster.dump_model()``.
    names : list of str
        The feature names, in the booster's feature order (the feature set's names).
    signs : sequence of float, optional
        A factor for each tree's leaves (1 by default): McRank's grade-0 trees are negated.

    Returns
    -------
    list of dict
        One tree per booster tree, in order; the leaves reached add up to the booster's raw score.
    """
    if dump.get("average_output"):
        raise ValueError("a random-forest booster (average_output) averages its trees; the plugin adds them")
    infos = dump["tree_info"]
    signs = [1.0] * len(infos) if signs is None else signs
    trees = [_converted(info["tree_structure"], sign) for info, sign in zip(infos, signs)]
    _checked_leaves(trees)
    return [_numbered(tree, names) for tree in trees]


def plugin_definition(model, names):
    """The plugin's ``model/xgboost+json`` definition of a tree ranker: a list of trees, or
    ``{"objective", "splits"}`` for McRank on the grades 0 and 1."""
    booster = model_booster(model)
    dump = booster.dump_model()
    objective = dump.get("objective")  # "lambdarank", "multiclass num_class:3"; a custom objective has none
    first = objective.split()[0] if objective else None
    classes = getattr(model, "classes_", None)
    if classes is None:
        if dump["num_tree_per_iteration"] != 1 or first not in _RAW_SUM_OBJECTIVES or "sqrt" in (objective or "").split():
            raise ValueError(f"{type(model).__name__}'s booster (objective {objective!r}) does not predict the raw sum "
                             "of its trees, the plugin's score")
        return booster_trees(dump, names)
    classes = [int(c) for c in classes]
    if classes != [0, 1]:
        raise ValueError(f"McRank's score is the expected grade over a softmax of {len(classes)} tree ensembles "
                         f"(grades {classes}); the plugin adds one ensemble (with an optional sigmoid), which "
                         "expresses it only for the two grades 0 and 1")
    per_round = dump["num_tree_per_iteration"]  # tree i belongs to grade i % 2; P(grade 1) = sigmoid(f_1 - f_0)
    signs = [1.0 if i % per_round == 1 else -1.0 for i in range(len(dump["tree_info"]))]
    return {"objective": "binary:logistic", "splits": booster_trees(dump, names, signs)}


def plugin_model(model, names, model_name) -> dict:
    """The LTR plugin's ``_createmodel`` body for a tree ranker (``model/xgboost+json``)."""
    text = json.dumps(plugin_definition(model, names), separators=(",", ":"), allow_nan=False)
    return {"model": {"name": model_name, "model": {"type": "model/xgboost+json", "definition": text}}}

