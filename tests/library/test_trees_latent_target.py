"""Boosted trees on the NDCG@k hinge held to a latent target."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from structrank.data import make_ranking_dataset
from structrank.learners import StructuredBoostingRanker
from structrank.learners.registry import get_model
from structrank.learners.structured_boosting import latent_star
from structrank.losses import get_loss
from structrank.oracles.graded import _grades, graded_po_coef_from_order
from structrank.oracles.latent import latent_po_star


def _offsets(sizes):
    return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)


def _dcg(gains, order, k):
    ranked = gains[order][:k]
    return float(np.sum(ranked / np.log2(np.arange(2, ranked.size + 2))))


@pytest.mark.parametrize("seed", range(8))
def test_the_latent_target_is_the_best_loss_zero_ranking(seed):
    """Brute force over every ranking of a short graded list (log2 discount, so no two top places
    tie): the latent target has NDCG@k = 1 and the largest s . c of all rankings with NDCG@k = 1."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, size=6)
    labels[:2] = (0, 2)
    scores = rng.normal(size=6)
    loss = get_loss("ndcg", k=3, gain="exp2", discount="log2")
    star = latent_star(loss, scores, labels, _offsets([6]))
    gains = np.exp2(labels) - 1.0
    ideal = _dcg(gains, np.argsort(-gains, kind="stable"), 3)
    grade, levels = _grades(labels.astype(np.float64))
    best = -np.inf
    for perm in itertools.permutations(range(6)):
        order = np.array(perm)
        if _dcg(gains, order, 3) < ideal - 1e-12:
            continue
        coef = np.zeros(6)
        graded_po_coef_from_order(order, grade, levels.shape[0], coef)
        best = max(best, float(scores @ coef))
    assert scores @ star == pytest.approx(best)


def test_with_binary_gains_it_is_the_latent_svms_target():
    rng = np.random.default_rng(0)
    offsets = _offsets([30, 7, 12])
    labels = rng.integers(0, 2, size=offsets[-1])
    scores = rng.normal(size=offsets[-1])
    loss = get_loss("ndcg", k=5)
    np.testing.assert_allclose(latent_star(loss, scores, labels, offsets),
                               latent_po_star(scores, loss.relevance(labels), offsets, 5))


def test_the_latent_hinge_is_non_negative_and_zero_below_the_head():
    """Delta(r_hat) + s . (c_hat - c_latent) >= 0, and a list whose head is right has hinge 0
    however its tail is ordered, where the hinge against the ideal ranking is not."""
    loss = get_loss("ndcg", k=2, gain="exp2")
    labels = np.array([2, 1, 1, 0, 1, 0, 0, 1])
    offsets = _offsets([8])
    scores = np.array([10.0, 9.0, 0.0, 0.1, -0.1, 0.2, 0.3, -0.2])  # top 2 right, the tail mixed up
    c_hat, delta = loss.batch(scores, labels, offsets)
    latent = delta[0] + scores @ (c_hat - latent_star(loss, scores, labels, offsets))
    ideal = delta[0] + scores @ (c_hat - loss.star(scores, labels, offsets))
    assert latent == pytest.approx(0.0, abs=1e-12) and ideal > 0.01
    for seed in range(5):
        s = np.random.default_rng(seed).normal(size=8)
        c_hat, delta = loss.batch(s, labels, offsets)
        assert delta[0] + s @ (c_hat - latent_star(loss, s, labels, offsets)) >= -1e-12


def test_trees_fit_on_the_latent_target_and_refuse_it_elsewhere():
    ds = make_ranking_dataset(n_queries=40, docs_per_query=(10, 30), n_features=6, random_state=3)
    model = StructuredBoostingRanker(loss="ndcg", target="latent", n_estimators=15).fit(ds)
    assert model.score(ds) > 0.5
    with pytest.raises(ValueError, match="target='latent'"):
        StructuredBoostingRanker(loss="map", target="latent").fit(ds)
    with pytest.raises(ValueError, match="target must be"):
        StructuredBoostingRanker(target="best").fit(ds)


def test_gbrt_ndcg_trains_on_the_latent_target():
    """gbrt-ndcg and StructuredBoostingRanker(loss="ndcg") train the latent target with the chosen smoothing; other
    losses and phi_dorm their ideal target, unsmoothed."""
    from structrank.learners.structured_boosting import LATENT_NDCG_SMOOTHING

    for model in (get_model("gbrt-ndcg").make(), StructuredBoostingRanker(loss="ndcg")):
        assert (model._target(), model._smoothing()) == ("latent", LATENT_NDCG_SMOOTHING)
    for model in (get_model("gbrt-map").make(), StructuredBoostingRanker(loss="ndcg", loss_params={"feature_map": "dorm"})):
        assert (model._target(), model._smoothing()) == ("ideal", 0.0)


def _reference_latent_graded_po_star(scores, grades, offsets, k):
    """The target as first written, per query with numpy: lexsort for the head, argsort for the rest."""
    from structrank.oracles.graded import _grades, graded_po_coef_from_order

    out = np.zeros(scores.shape[0])
    for q in range(offsets.shape[0] - 1):
        a, b = offsets[q], offsets[q + 1]
        by_grade = np.lexsort((-scores[a:b], -grades[a:b]))
        head = by_grade[:k]
        rest = np.ones(b - a, dtype=bool)
        rest[head] = False
        by_score = np.argsort(-scores[a:b], kind="stable")
        order = np.concatenate([head, by_score[rest[by_score]]])
        grade, levels = _grades(np.ascontiguousarray(grades[a:b]))
        graded_po_coef_from_order(order, grade, levels.shape[0], out[a:b])
    return out


@settings(max_examples=100, deadline=None)
@given(sizes=st.lists(st.integers(1, 15), min_size=1, max_size=5), k=st.integers(1, 12),
       levels=st.integers(1, 4), ties=st.booleans(), seed=st.integers(0, 2**16))
def test_the_numba_target_is_the_numpy_one(sizes, k, levels, ties, seed):
    from structrank.oracles.latent import latent_graded_po_star

    rng = np.random.default_rng(seed)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    scores = rng.integers(0, 3, offsets[-1]).astype(float) if ties else rng.normal(size=offsets[-1])
    grades = np.exp2(rng.integers(0, levels + 1, offsets[-1]).astype(float)) - 1.0
    np.testing.assert_array_equal(latent_graded_po_star(scores, grades, offsets, k),
                                  _reference_latent_graded_po_star(scores, grades, offsets, k))
