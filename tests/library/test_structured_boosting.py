"""Boosted trees on structured losses (structrank.learners.structured_boosting)."""

from __future__ import annotations

import numpy as np
import pytest

from structrank.data import make_ranking_dataset
from structrank.learners import StructuredBoostingRanker
from structrank.losses import loss_names
from structrank.losses.crf import crf_subset

LOSSES = loss_names()
from structrank.learners.structured_boosting import _per_query_hessian
from structrank.metrics import evaluate
from structrank.model_io import load_model, save_model
from structrank.losses import get_loss
from structrank.oracles.crf import query_objective


@pytest.fixture(scope="module")
def split():
    ds = make_ranking_dataset(n_queries=60, docs_per_query=12, n_features=6, random_state=2)
    return ds.take_queries(np.arange(40)), ds.take_queries(np.arange(40, 60))


def _offsets(ds):
    return np.concatenate([[0], np.cumsum(np.unique(ds.qid, return_counts=True)[1])])


def test_a_hinge_loss_boosts_on_its_subgradient(split):
    """The objective LightGBM gets is the hinge's subgradient c_hat - c_star with respect to the scores."""
    train, _ = split
    model = StructuredBoostingRanker(loss="map")
    model.gain_ = "binary"
    offsets = _offsets(train)
    scores = np.random.default_rng(0).normal(size=train.n_rows)
    loss = get_loss("map")
    c_hat, delta = loss.batch(scores, train.y, offsets)
    values, grad = model.score_loss().bind(train.y, offsets)(scores)
    np.testing.assert_array_equal(grad, c_hat - loss.star(scores, train.y, offsets))
    # each query's value is its hinge: Delta of the max-violator plus its margin violation, >= 0
    np.testing.assert_allclose(values, delta + np.add.reduceat(scores * grad, offsets[:-1]), atol=1e-12)
    assert np.all(values >= -1e-12)


def test_a_crf_objective_boosts_on_its_exact_gradient_over_a_subset():
    y = np.array([2, 0, 1, 0, 0, 1, 0, 0, 0, 1, 0])
    offsets = np.array([0, 4, y.size])  # a query of 4 documents (all used) and one of 7 (a subset of 6)
    model = StructuredBoostingRanker(loss="crf-kl", random_state=3, loss_params={"crf_param": 2.0})
    scores = np.linspace(1.0, -1.0, y.size)
    values, grad = model.score_loss().bind(y, offsets)(scores)
    value, exact = query_objective("kl", scores[:4], y[:4], 2.0)
    np.testing.assert_allclose(grad[:4], exact, atol=1e-12)
    assert values[0] == value
    used = np.flatnonzero(grad[4:] != 0)
    assert 2 <= used.size <= 6 and set(y[4:][used]) == {0, 1}  # every level of the query is in the subset


def test_crf_subsets_hold_every_level_and_at_most_six_documents():
    rng = np.random.default_rng(0)
    labels = np.array([0] * 20 + [1] * 3 + [2])
    for _ in range(50):
        rows = crf_subset(labels, rng)
        assert rows.size == 6 and np.unique(rows).size == 6 and set(labels[rows]) == {0, 1, 2}


def test_the_hessian_normalises_each_query_by_its_largest_gradient():
    grad = np.array([0.5, -2.0, 1.0, 0.0, 0.0, 3e-3])
    offsets = np.array([0, 3, 5, 6])
    np.testing.assert_allclose(_per_query_hessian(grad, offsets), [2.0, 2.0, 2.0, 1e-12, 1e-12, 3e-3])


@pytest.mark.parametrize("loss", LOSSES)
def test_every_loss_trains_trees_that_rank_better_than_chance(split, loss):
    train, test = split
    model = StructuredBoostingRanker(loss=loss, n_estimators=30, num_leaves=7, min_child_samples=5).fit(train)
    scores = model.predict(test.X)
    chance = evaluate(test.y, np.random.default_rng(0).normal(size=test.n_rows), test.qid, ["ndcg@10"], "letor4")
    assert evaluate(test.y, scores, test.qid, ["ndcg@10"], "letor4").metrics["ndcg@10"] > \
        chance.metrics["ndcg@10"] + 0.05
    assert model.best_iteration_ == 30 and model.dev_curve_.size == 0


def test_early_stopping_keeps_the_best_round_on_the_eval_metric(split):
    train, dev = split
    model = StructuredBoostingRanker(loss="ndcg", n_estimators=60, learning_rate=0.3, early_stopping_rounds=5,
                                     num_leaves=7, min_child_samples=5).fit(train, eval_set=dev)
    assert model.gain_ == "exp2"  # the synthetic labels are graded
    best = int(np.argmax(model.dev_curve_)) + 1
    assert model.best_iteration_ == best <= 60
    # the kept trees give the best recorded value of the loss's metric (graded NDCG@10, mslr)
    assert model.score(dev) == pytest.approx(model.dev_curve_.max(), abs=1e-12)


def test_model_file_round_trip(split, tmp_path):
    train, test = split
    model = StructuredBoostingRanker(loss="mrr", n_estimators=10).fit(train)
    save_model(model, tmp_path / "m.npz")
    again = load_model(tmp_path / "m.npz")
    np.testing.assert_array_equal(again.predict(test.X), model.predict(test.X))
    assert str(again.gain_) == "binary" and again.score(test) == model.score(test)


def test_clear_errors(split):
    train, dev = split
    with pytest.raises(ValueError, match="unknown loss 'p@5'; known: "):
        StructuredBoostingRanker(loss="p@5").fit(train)
    with pytest.raises(ValueError, match="eval_set"):
        StructuredBoostingRanker(early_stopping_rounds=3).fit(train)


def test_smoothing_averages_the_subgradients_at_perturbed_scores(split):
    """With smoothing s, the gradient is the mean of the hinge's subgradients at scores + s * Z for
    the seeded stream's draws of Z, and the value the mean of the hinges there."""
    train, _ = split
    offsets = _offsets(train)
    scores = np.random.default_rng(1).normal(size=train.n_rows)
    model = StructuredBoostingRanker(loss="ndcg", smoothing=0.5, smoothing_samples=3, random_state=7)
    model.gain_ = "binary"
    values, grad = model.score_loss().bind(train.y, offsets)(scores)
    exact = StructuredBoostingRanker(loss="ndcg", smoothing=0.0).score_loss().bind(train.y, offsets)
    draws = np.random.default_rng(7)
    parts = [exact(scores + 0.5 * draws.standard_normal(scores.shape)) for _ in range(3)]
    np.testing.assert_allclose(grad, np.mean([g for _, g in parts], axis=0), atol=1e-12)
    np.testing.assert_allclose(values, np.mean([v for v, _ in parts], axis=0), atol=1e-12)
    assert not np.array_equal(grad, exact(scores)[1])


def test_smoothing_pushes_a_query_the_scores_rank_right_by_a_small_margin():
    """The exact hinge is 0 with a zero subgradient once the margin holds; its smoothing still pulls
    the relevant document up, and the pull fades as the margin grows."""
    y, offsets = np.array([1, 0, 0]), np.array([0, 3])
    model = StructuredBoostingRanker(loss="map", smoothing=1.0, smoothing_samples=200)
    model.gain_ = "binary"
    _, near = model.score_loss().bind(y, offsets)(np.array([1.5, 0.0, 0.0]))
    _, far = model.score_loss().bind(y, offsets)(np.array([6.0, 0.0, 0.0]))
    exact = StructuredBoostingRanker(loss="map").score_loss().bind(y, offsets)
    assert not exact(np.array([1.5, 0.0, 0.0]))[1].any()
    assert near[0] < 0 and far[0] > near[0]


def test_smoothed_trees_train_on_the_latent_target_and_beat_chance(split):
    train, dev = split
    model = StructuredBoostingRanker(loss="ndcg", target="latent", smoothing=0.3, n_estimators=30).fit(train)
    plain = StructuredBoostingRanker(loss="ndcg", target="latent", smoothing=0.0, n_estimators=30).fit(train)
    assert not np.array_equal(model.predict(dev.X), plain.predict(dev.X))
    chance = evaluate(dev.y, np.zeros(dev.n_rows), dev.qid, ["ndcg@10"], "letor4").metrics["ndcg@10"]
    assert model.score(dev) > chance


def test_smoothing_a_crf_objective_is_refused(split):
    train, _ = split
    with pytest.raises(ValueError, match="smooth already"):
        StructuredBoostingRanker(loss="crf-kl", smoothing=0.3).fit(train)
    with pytest.raises(ValueError, match="smoothing"):
        StructuredBoostingRanker(smoothing=-1.0).fit(train)


def test_a_malformed_eval_set_is_refused_even_when_no_tree_can_grow():
    """Too few rows to split return a constant model early; the eval set is still checked first."""
    from structrank.errors import DataValidationError

    rng = np.random.default_rng(0)
    X, y, qid = rng.normal(size=(20, 3)), np.tile([1, 0], 10), np.repeat([1, 2], 10)
    with pytest.raises(DataValidationError, match="eval_set: X has 20 rows, y 20 and qid 3"):
        StructuredBoostingRanker(n_estimators=2).fit(X, y, qid=qid, eval_set=(X, y, qid[:3]))


def test_the_nystroem_ranker_refuses_a_malformed_eval_set_its_inner_ranker_would_not_read():
    from structrank.errors import DataValidationError
    from structrank.learners import NystroemRanker

    rng = np.random.default_rng(0)
    X, y, qid = rng.normal(size=(20, 3)), np.tile([1, 0], 10), np.repeat([1, 2], 10)
    with pytest.raises(DataValidationError, match="eval_set: X has 20 rows, y 20 and qid 3"):
        NystroemRanker(n_landmarks=5).fit(X, y, qid=qid, eval_set=(X, y, qid[:3]))
