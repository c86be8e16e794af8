"""MLPRanker started at the linear learner of its loss."""

from __future__ import annotations

import numpy as np
import pytest

from extras import need

need("torch")
pytestmark = pytest.mark.extra("torch")
import torch  # noqa: E402

from structrank.data import make_ranking_dataset  # noqa: E402
from structrank.learners import MLPRanker, PermutationCRFRanker, StructSVMRanker  # noqa: E402
from structrank.learners.mlp import linear_model_name  # noqa: E402
from structrank.learners.registry import get_model  # noqa: E402


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
    assert mlp.best_epoch_ == 0 and mlp.dev_curve_.shape == (1,)
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
    """Trained on, the kept epoch is never worse on the eval set than the linear start."""
    train, vali = split
    mlp = MLPRanker(loss="ndcg", init="linear", epochs=3, hidden_layer_sizes=(4,)).fit(train, eval_set=vali)
    assert mlp.dev_curve_.shape == (4,)
    assert mlp.score(vali) == pytest.approx(mlp.dev_curve_.max()) and mlp.dev_curve_.max() >= mlp.dev_curve_[0]
    assert mlp.best_epoch_ == int(np.argmax(mlp.dev_curve_))


def test_bad_inits_are_refused(split):
    train, _ = split
    with pytest.raises(ValueError, match="init must be"):
        MLPRanker(init="random").fit(train)
    with pytest.raises(ValueError, match="linear_skip"):
        MLPRanker(init="linear", linear_skip=False).fit(train)
