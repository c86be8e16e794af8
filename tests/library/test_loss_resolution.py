"""A learner's loss is resolved in one place (``losses.resolve_loss``), a pure function of the loss's name, its
options and the labels, in two parts: the options read against the loss's declaration (``declaration_problems``,
nothing built) and the build (``build_loss``):

- it stores nothing and gives equal results for equal arguments; checking a learner's parameters outside a fit
  (``parameter_problems``: ``--set``, model files) leaves the learner as it was;
- one fit runs each part once: the declaration before its data, the build on its labels; the loss's options are
  read against its declaration once and the loss is built once;
- ``structrank train``'s model is checked whole before the data (``ModelSpec.make``), then fitted as above.
"""

import copy

import numpy as np
import pytest
from structrank.constraints import InvalidParameterError

import structrank.learners.loss_params as loss_params
from structrank.data import make_ranking_dataset
from structrank.learners import (LatentPerceptronRanker, LatentSSVMRanker, MLPRanker, StructSVMRanker,
                                 StructuredBoostingRanker)
from structrank.learners.base import parameter_problems
from structrank.learners.registry import get_model
from structrank.losses import Resolved, registry, resolve_loss

DS = make_ranking_dataset(n_queries=20, n_features=5, random_state=0)


@pytest.mark.parametrize("name, params, labels", [
    ("ndcg", {"k": 5}, [0, 1, 2]),
    ("ndcg", {"k": 5, "feature_map": "dorm"}, None),
    ("map", {"scale": 5.0}, None),  # an option only another feature map reads
    ("map", {"k": 5}, [0, 1]),  # an option the loss does not take
    ("crf-kl", {}, None),  # a loss of another kind
    ("nope", None, None),
])
def test_resolving_is_pure(name, params, labels):
    given = copy.deepcopy(params)
    first, second = (resolve_loss(name, params, labels, kind="hinge", learner="StructSVMRanker") for _ in range(2))
    assert first == second and isinstance(first, Resolved)
    assert (first.loss is None) == bool(first.problems)
    assert params == given  # the options are read, not changed


def test_the_labels_settle_an_auto_gain_and_nothing_else():
    assert resolve_loss("ndcg", {}, [0, 1, 2]).gain == "exp2"
    assert resolve_loss("ndcg", {}, [0, 1, 0]).gain == "binary"
    assert resolve_loss("ndcg", {}).gain == "binary"  # no labels to grade by
    assert resolve_loss("ndcg", {}, [0, 1, 2], target="latent").gain == "binary"
    assert resolve_loss("ndcg", {"gain": "binary"}, [0, 1, 2]).gain == "binary"
    assert resolve_loss("map", {}, [0, 1, 2]).gain is None  # a loss without the option
    assert resolve_loss("crf-kl", {}, kind="hinge", learner="X").problems["loss"].startswith("X needs a hinge loss")


@pytest.mark.parametrize("make", [
    lambda: StructSVMRanker(loss="ndcg", loss_params={"k": 5}, C=1.0),
    lambda: StructSVMRanker(loss="map", loss_params={"scale": 5.0}),  # refused: its problems are not stored either
    lambda: LatentPerceptronRanker(loss="ndcg"),
    lambda: StructuredBoostingRanker(loss="crf-kl"),
], ids=["svm-ndcg", "svm-map-refused", "lsp-ndcg", "gbrt-crf-kl"])
def test_checking_parameters_stores_nothing(make):
    model = make()
    before = dict(vars(model))
    parameter_problems(model)
    assert vars(model) == before


def test_checking_a_fitted_model_leaves_its_loss():
    fitted = StructSVMRanker(loss="ndcg", target="ideal", C=1.0).fit(DS)
    before = dict(vars(fitted))
    assert parameter_problems(fitted) == {}
    assert vars(fitted).keys() == before.keys() and all(vars(fitted)[key] is before[key] for key in before)


@pytest.fixture
def resolutions(monkeypatch):
    """The parts of a loss's resolution, in the order they run: ("declaration", name) each time the options are read
    against the loss's declaration, ("build", labels) each time the loss is built."""
    events = []
    problems, build = registry.LossEntry.problems, loss_params.build_loss

    def counted_problems(self, *args, **kwargs):
        events.append(("declaration", self.name))
        return problems(self, *args, **kwargs)

    def counted_build(name, params=None, labels=None, **kwargs):
        events.append(("build", labels))
        return build(name, params, labels, **kwargs)

    monkeypatch.setattr(registry.LossEntry, "problems", counted_problems)
    monkeypatch.setattr(loss_params, "build_loss", counted_build)
    return events


@pytest.mark.parametrize("make, with_labels", [
    (lambda: StructSVMRanker(loss="map", C=1.0), True),
    (lambda: StructSVMRanker(loss="ndcg", target="ideal", C=1.0), True),
    (lambda: LatentSSVMRanker(C=1.0, max_outer=2), True),
    (lambda: StructuredBoostingRanker(loss="ndcg", n_estimators=3), True),
    # the perceptron takes its loss before it reads the data (a LetorCache is read shard by shard): no labels
    (lambda: LatentPerceptronRanker(max_epochs=3), False),
], ids=["svm-map", "svm-ndcg", "lssvm-ap", "gbrt-ndcg", "lsp-ap"])
def test_a_fit_reads_its_loss_once_before_the_data_and_builds_it_once(resolutions, make, with_labels):
    model = make()
    model.fit(DS).score(DS)
    assert [kind for kind, _ in resolutions] == ["declaration", "build"], resolutions
    assert resolutions[0][1] == model.loss
    labels = resolutions[1][1]
    assert (labels is not None) == with_labels
    if with_labels:
        np.testing.assert_array_equal(labels, DS.y)


def test_a_network_reads_its_loss_once_and_builds_it_once(resolutions):
    pytest.importorskip("torch", reason="MLPRanker trains with PyTorch, the torch extra (pip install 'structrank[torch]')")
    MLPRanker(loss="ndcg", epochs=2, batch_queries=4).fit(DS, eval_set=DS).score(DS)
    assert [kind for kind, _ in resolutions] == ["declaration", "build"] and resolutions[1][1] is not None


def test_the_declaration_is_read_before_the_data_and_the_build_waits_for_the_labels(resolutions):
    with pytest.raises(InvalidParameterError, match="loss 'map' takes no option 'k'"):
        StructSVMRanker(loss="map", loss_params={"k": 5}).fit(None, None)
    assert resolutions == [("declaration", "map")]  # refused before the data: nothing built
    resolutions.clear()
    with pytest.raises(ValueError, match="relevance labels"):
        StructSVMRanker(loss="map", loss_params={"scale": 5.0}).fit(None, None)
    assert resolutions == [("declaration", "map")]  # a problem of the build shows on the labels (--set: at once)
    assert "would be ignored" in parameter_problems(StructSVMRanker(loss="map", loss_params={"scale": 5.0}))["loss_params"]


def test_a_command_line_model_is_checked_whole_before_the_data_then_fitted_once(resolutions):
    model = get_model("svm-ndcg").make(C=1.0)  # ``structrank train --set``: before any data, without labels
    assert resolutions == [("declaration", "ndcg"), ("build", None)]
    resolutions.clear()
    model.fit(DS)
    assert [kind for kind, _ in resolutions] == ["declaration", "build"] and resolutions[1][1] is not None
