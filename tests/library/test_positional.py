"""The positional map's MAP inference (Haponchyk & Moschitti 2018) against brute force.

- exact: its value ``sum_j v_j s_{r^j} + C (1 - AP)`` equals the maximum over all permutations;
- greedy: each item it places, from the bottom up, is the argmin of Eq. 7 over *all* remaining
  items given the partial ranking below (the paper's claim), and its value never exceeds the
  exact maximum;
- every reported loss equals 1 - AP computed by structrank.metrics on the returned ranking;
- the latent ground truth (Eq. 3) is the best correct ranking.
The brute force computes the objective from the paper's definitions, independently of the kernels.
"""

from __future__ import annotations

import itertools
from functools import lru_cache

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from structrank.metrics import evaluate
from structrank.losses.map import PositionalAPLoss
from structrank.feature_maps import positional_weights

TOL = 1e-9


@lru_cache(maxsize=None)
def permutations(n):
    return np.array(list(itertools.permutations(range(n))), dtype=np.int64).reshape(-1, n)


def ap_by_metrics(labels, order):
    """AP of one ranking by structrank.metrics (trec convention, no ties)."""
    n = len(order)
    y = np.asarray(labels)[order]
    scores = np.arange(n, 0, -1, dtype=np.float64)
    return evaluate(y, scores, np.zeros(n, dtype=np.int64), ["map"], "trec",
                    docids=np.arange(n).astype(str)).metrics["map"]


def brute_values(s, z, v, scale):
    """Worth of every permutation: sum_j v_j s_{r^j} + scale * (1 - AP), AP from its definition."""
    perms = permutations(len(s))
    worth = (s[perms] * v[None, : len(s)]).sum(axis=1)
    rel = z[perms]
    hits = np.cumsum(rel, axis=1)
    ranks = np.arange(1, len(s) + 1)
    ap = (rel * hits / ranks).sum(axis=1) / z.sum()
    return worth + scale * (1.0 - ap)


def value_of(s, z, v, scale, order):
    rel = z[order]
    ap = (rel * np.cumsum(rel) / np.arange(1, len(s) + 1)).sum() / z.sum()
    return (s[order] * v[: len(s)]).sum() + scale * (1.0 - ap)


queries = st.integers(2, 7).flatmap(
    lambda n: st.tuples(
        st.lists(st.sampled_from([-2.0, -1.0, -0.5, 0.0, 0.25, 0.5, 1.0, 3.0]), min_size=n, max_size=n)
        | st.lists(st.floats(-3, 3, allow_nan=False, width=32), min_size=n, max_size=n),
        st.lists(st.integers(0, 1), min_size=n, max_size=n),
    )
)
scales = st.sampled_from([0.0, 0.1, 1.0, 10.0, 100.0])
schemes = st.sampled_from(["harmonic", "log2", "linear"])


def mixed(labels):
    z = np.array(labels, dtype=np.int8)
    return 0 < z.sum() < len(z)


def case(query, scheme):
    """(scores, relevance, weights) of a generated query with both classes."""
    scores, labels = query
    assume(mixed(labels))
    return np.array(scores), np.array(labels, dtype=np.int8), positional_weights(len(scores), scheme)


@settings(max_examples=300, deadline=None)
@given(queries, scales, schemes)
def test_exact_equals_brute_force(query, scale, scheme):
    s, z, v = case(query, scheme)
    found = PositionalAPLoss("exact", scheme, scale).oracle(s, z)
    assert value_of(s, z, v, scale, found.order) == pytest.approx(brute_values(s, z, v, scale).max(), abs=TOL)
    assert found.loss == pytest.approx(1.0 - ap_by_metrics(z, found.order), abs=TOL)
    assert np.allclose(found.coef[found.order], v[: len(s)])


@settings(max_examples=300, deadline=None)
@given(queries, scales, schemes)
def test_greedy_places_each_item_optimally_given_the_ranking_below(query, scale, scheme):
    s, z, v = case(query, scheme)
    n, n_good = len(s), int(z.sum())
    found = PositionalAPLoss("greedy", scheme, scale).oracle(s, z)
    order = found.order
    assert sorted(order.tolist()) == list(range(n))
    remaining = set(range(n))
    for pos in range(n - 1, -1, -1):
        # Eq. 7: cost of d at position pos: v_pos s_d + C [d bad] l_pos, l from the good ones below
        l_pos = sum(1.0 / (k + 1) for k in range(pos + 1, n) if z[order[k]]) / n_good
        costs = {d: v[pos] * s[d] + scale * (0.0 if z[d] else l_pos) for d in remaining}
        assert costs[order[pos]] <= min(costs.values()) + TOL
        remaining.remove(order[pos])
    assert found.loss == pytest.approx(1.0 - ap_by_metrics(z, order), abs=TOL)
    assert value_of(s, z, v, scale, order) <= brute_values(s, z, v, scale).max() + TOL


@settings(max_examples=200, deadline=None)
@given(queries, schemes)
def test_no_loss_inference_is_the_argmax_of_the_score(query, scheme):
    s, z, v = case(query, scheme)
    found = PositionalAPLoss("none", scheme, scale=50.0).oracle(s, z)  # the scale is ignored
    assert value_of(s, z, v, 0.0, found.order) == pytest.approx(brute_values(s, z, v, 0.0).max(), abs=TOL)
    assert found.loss == pytest.approx(1.0 - ap_by_metrics(z, found.order), abs=TOL)


@settings(max_examples=200, deadline=None)
@given(queries, scales, schemes, st.sampled_from(["exact", "none"]))
def test_hinge_value_is_the_scaled_objective_over_the_best_correct_ranking(query, scale, scheme, inference):
    """value_and_grad's hinge (what a scorer trained on the positional map reports) is the worth the oracle
    maximises, ``v . s_r + scale * Delta(r)`` (no Delta with no-loss inference), over all permutations, less
    the best correct ranking's: the scaled loss in the value, as in the search, so it is never negative."""
    s, z, v = case(query, scheme)
    n, n_good = len(s), int(z.sum())
    values, grad = PositionalAPLoss(inference, scheme, scale).value_and_grad(s, z, np.array([0, n]))
    perms = permutations(n)
    correct = perms[(z[perms][:, :n_good] == 1).all(axis=1)]
    best_correct = (s[correct] * v[None, :n]).sum(axis=1).max()
    worth = brute_values(s, z, v, 0.0 if inference == "none" else scale).max()
    assert values[0] == pytest.approx(worth - best_correct, abs=1e-7)
    assert values[0] >= -TOL


@settings(max_examples=200, deadline=None)
@given(queries, schemes)
def test_latent_ground_truth_is_the_best_correct_ranking(query, scheme):
    s, z, v = case(query, scheme)
    n, n_good = len(s), int(z.sum())
    star = PositionalAPLoss("greedy", scheme).star(s, z, [0, n])
    perms = permutations(n)
    correct = perms[(z[perms][:, :n_good] == 1).all(axis=1)]
    best = (s[correct] * v[None, :n]).sum(axis=1).max()
    assert s @ star == pytest.approx(best, abs=TOL)
    assert np.allclose(np.sort(star)[::-1], v[:n])  # one weight per position
    top = PositionalAPLoss("greedy", scheme, positions="positives").star(s, z, [0, n])
    assert np.allclose(top[z == 0], 0.0) and np.allclose(np.sort(top[z == 1])[::-1], v[:n_good])


@settings(max_examples=200, deadline=None)
@given(queries, scales, schemes, st.integers(0, 6))
def test_greedy_places_a_lone_good_document_by_its_score_at_any_scale(query, scale, scheme, good):
    """Bottom-up, a bad document's loss term counts the good ones already placed below it, so with one good document
    the greedy is the score order whatever the scale (a margin on such a list comes only from the exact search)."""
    s = np.array(query[0])
    z = np.zeros(s.size, dtype=np.int8)
    z[good % s.size] = 1  # one good document among two to seven, drawn rather than filtered for
    greedy = PositionalAPLoss("greedy", scheme, scale).oracle(s, z)
    plain = PositionalAPLoss("none", scheme).oracle(s, z)
    np.testing.assert_array_equal(greedy.order, plain.order)


def test_greedy_is_not_always_exact_and_the_exact_search_finds_more():
    """A case where bottom-up greedy misses the maximum (the paper says it is a local optimum)."""
    rng = np.random.default_rng(0)
    gaps = 0
    for _ in range(300):
        n = 7
        s, z = rng.normal(size=n), (rng.random(n) < 0.4).astype(np.int8)
        if not mixed(z):
            continue
        v = positional_weights(n)
        greedy = value_of(s, z, v, 1.0, PositionalAPLoss("greedy").oracle(s, z).order)
        exact = value_of(s, z, v, 1.0, PositionalAPLoss("exact").oracle(s, z).order)
        assert greedy <= exact + TOL
        gaps += greedy < exact - 1e-9
    assert gaps > 0


def test_batch_matches_single_queries_and_top_p_coefficients():
    rng = np.random.default_rng(1)
    sizes = [5, 1, 8, 3, 6]
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    s = rng.normal(size=offsets[-1])
    y = rng.integers(0, 3, size=offsets[-1])
    y[offsets[3]:offsets[4]] = 0  # a query without good documents
    for inference in ("greedy", "exact", "none"):
        loss = PositionalAPLoss(inference, scale=2.0, positions="positives")
        coef, delta = loss.batch(s, y, offsets)
        for q in range(len(sizes)):
            a, b = offsets[q], offsets[q + 1]
            one = loss.oracle(s[a:b], y[a:b])
            assert np.allclose(coef[a:b], one.coef) and delta[q] == pytest.approx(one.loss)
            n_good = int((y[a:b] >= 1).sum())
            assert np.count_nonzero(coef[a:b]) <= n_good  # only the top P positions are kept
    # queries that cannot be violated: loss 0 and the latent ground truth itself
    loss = PositionalAPLoss("greedy")
    coef, delta = loss.batch(s, y, offsets)
    star = loss.star(s, y, offsets)
    for q in (1, 3):
        a, b = offsets[q], offsets[q + 1]
        assert delta[q] == 0.0 and np.allclose(coef[a:b], star[a:b])


def test_tied_scores_give_an_update_at_w_zero():
    z = np.array([1, 0, 0, 1, 0], dtype=np.int8)
    for inference in ("greedy", "exact", "none"):
        found = PositionalAPLoss(inference).oracle(np.zeros(5), z)
        assert found.loss > 0  # ties broken against the good documents


def test_bad_options_are_rejected():
    with pytest.raises(ValueError, match="inference"):
        PositionalAPLoss("beam")
    with pytest.raises(ValueError, match="positional weights"):
        PositionalAPLoss(weights="cubic")
    with pytest.raises(ValueError, match="positions"):
        PositionalAPLoss(positions="top")
    with pytest.raises(ValueError, match="scale"):
        PositionalAPLoss(scale=-1.0)
