"""MLPRanker started at the linear learner of its loss (issue 20, point 8)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the optional torch extra is not installed")

from structrank.data import make_ranking_dataset  # noqa: E402
from structrank.learners import MLPRanker, PermutationCRFRanker, StructSVMRanker  # noqa: E402
from structrank.learners.mlp import departs, linear_model_name  # noqa: E402
from structrank.models import get_model  # noqa: E402


@pytest.fixture(scope="module")
def split():
    ds = make_ranking_dataset(n_queries=50, docs_per_query=10, n_features=5, random_state=7)
    return ds.take_queries(np.arange(35)), ds.take_queries(np.arange(35, 50))


def test_the_linear_learner_of_each_loss():
    assert linear_model_name("map") == "svm-map" and linear_model_name("crf-kl") == "crf-kl"
    assert get_model("mlp-map").make().init == "linear"


def test_without_training_the_network_is_the_linear_model(split):
    """epochs=0: the start is kept, and it predicts as the SVM of the same loss with the C chosen on vali."""
    train, vali = split
    mlp = MLPRanker(loss="map", init="linear", epochs=0, hidden_layer_sizes=(4,)).fit(train, eval_set=vali)
    assert mlp.best_epoch_ == 0 and mlp.eval_history_.shape == (1,)
    spec = get_model("svm-map")
    fits = [StructSVMRanker(loss="map", C=c).fit(train) for c in spec.grid["C"]]
    best = max(fits, key=lambda m: m.score(vali))
    np.testing.assert_allclose(mlp.predict(vali.X), best.predict(vali.X), atol=1e-9)


def test_without_eval_set_the_start_is_the_learners_defaults(split):
    train, vali = split
    mlp = MLPRanker(loss="crf-kl", init="linear", epochs=0, hidden_layer_sizes=(4,)).fit(train)
    linear = PermutationCRFRanker(objective="kl").fit(train)
    np.testing.assert_allclose(mlp.predict(vali.X), linear.predict(vali.X), atol=1e-9)


def test_the_start_is_epoch_zero_of_the_choice(split):
    """Trained on with departure_se=0, the kept epoch is the best on the eval set, the linear start included."""
    train, vali = split
    mlp = MLPRanker(loss="ndcg", init="linear", epochs=3, hidden_layer_sizes=(4,), departure_se=0.0,
                    learning_rate=1e-2).fit(train, eval_set=vali)
    assert mlp.eval_history_.shape == (4,)
    assert mlp.score(vali) == pytest.approx(mlp.eval_history_.max()) and mlp.eval_history_.max() >= mlp.eval_history_[0]
    assert mlp.best_epoch_ == int(np.argmax(mlp.eval_history_))


def test_departs_is_the_one_standard_error_rule():
    start = np.zeros(4)
    assert departs(start, [0.1, 0.1, 0.1, 0.1], 1.0)  # a gain with no spread
    assert not departs(start, [0.4, -0.3, 0.3, -0.2], 1.0)  # mean 0.05, standard error 0.18
    assert departs(start, [0.4, -0.3, 0.3, -0.2], 0.0)
    assert not departs(start, start, 0.0)  # no gain is no departure
    assert departs([0.0], [0.1], 5.0) and not departs([0.1], [0.0], 0.0)  # one query: its sign


def test_the_network_leaves_the_start_only_beyond_the_noise(split):
    """The same fit kept at the start under a strict rule, at the best epoch under none; each choice
    is the rule applied to the recorded per-query gains."""
    train, vali = split
    fit = dict(loss="ndcg", init="linear", epochs=4, hidden_layer_sizes=(8,), learning_rate=5e-2)
    loose = MLPRanker(**fit, departure_se=0.0).fit(train, eval_set=vali)
    assert loose.best_epoch_ == int(np.argmax(loose.eval_history_)) > 0  # training did help on vali here
    strict = MLPRanker(**fit, departure_se=1e6).fit(train, eval_set=vali)
    np.testing.assert_array_equal(strict.eval_history_, loose.eval_history_)
    assert strict.best_epoch_ == 0
    np.testing.assert_allclose(strict.predict(vali.X),
                               MLPRanker(**{**fit, "epochs": 0}).fit(train, eval_set=vali).predict(vali.X), atol=1e-12)
    start = strict._dev_values(strict.params_, (vali.X, vali.y, vali.qid))
    default = MLPRanker(**fit).fit(train, eval_set=vali)
    best = default._dev_values(loose.params_, (vali.X, vali.y, vali.qid))
    assert default.best_epoch_ == (loose.best_epoch_ if departs(start, best, 1.0) else 0)


def test_bad_inits_are_refused(split):
    train, _ = split
    with pytest.raises(ValueError, match="init must be"):
        MLPRanker(init="random").fit(train)
    with pytest.raises(ValueError, match="linear_skip"):
        MLPRanker(init="linear", linear_skip=False).fit(train)
