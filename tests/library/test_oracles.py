"""Every oracle against brute force over all rankings of small lists.

For random scores and labels (n <= 8) the value ``s . c + Delta`` of the structure an oracle
returns must equal the maximum over all permutations (all partial orders for AUC), its loss must
equal 1 - metric computed by structrank.metrics on its ranking, and its coefficients must be the
feature map of that ranking. The brute force builds the maps here, from their definitions in the
paper, independently of structrank.feature_maps.
"""

from __future__ import annotations

import dataclasses
import itertools
from functools import lru_cache

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from structrank.metrics import evaluate
from structrank.metrics.conventions import CONVENTIONS
from structrank.losses import get_loss
from structrank.feature_maps import phi_dorm, phi_mrr, phi_po

TOL = 1e-9


def structured(name, feature_map=None, **options):
    """The loss ``name`` with a feature map (None: the paper's) and options."""
    return get_loss(name, feature_map=feature_map, **options)


def auc_oracle(scores, labels, relevant_from=1):
    return get_loss("auc", relevant_from=relevant_from).oracle(scores, labels)


def map_oracle(scores, labels, relevant_from=1):
    return get_loss("map", relevant_from=relevant_from).oracle(scores, labels)


def ndcg_oracle(scores, labels, k=10, discount="letor", relevant_from=1, gain="binary"):
    """NDCG@k with phi_po; ``k=None``: the whole list (ndcg-nc)."""
    name = "ndcg-nc" if k is None else "ndcg"
    return get_loss(name, k=k, discount=discount, relevant_from=relevant_from, gain=gain).oracle(scores, labels)


def mrr_oracle(scores, labels, k=10, feature_map="mrr", relevant_from=1):
    return get_loss("mrr", feature_map=feature_map, k=k, relevant_from=relevant_from).oracle(scores, labels)


def dorm_oracle(scores, labels, k=10, cut=None, gain="binary", discount="letor", relevant_from=1):
    """NDCG@k (``k=None``: the whole list) with phi_dorm."""
    name = "ndcg-nc" if k is None else "ndcg"
    return get_loss(name, feature_map="dorm", k=10 if k is None else k, dorm_cut=cut, gain=gain, discount=discount,
                    relevant_from=relevant_from).oracle(scores, labels)


@lru_cache(maxsize=None)
def permutations(n):
    return np.array(list(itertools.permutations(range(n))), dtype=np.int64).reshape(-1, n)


def positions(perms):
    """pos[p, i] = rank of document i in permutation p."""
    pos = np.empty_like(perms)
    rows = np.arange(perms.shape[0])[:, None]
    pos[rows, perms] = np.arange(perms.shape[1])[None, :]
    return pos


def brute_po(perms, z):
    """phi_po (Eq. 3) of every permutation: sum over good/bad pairs of y_gb (x_g - x_b) / (n+ n-)."""
    pos = positions(perms)
    good, bad = np.flatnonzero(z), np.flatnonzero(z == 0)
    coef = np.zeros(perms.shape, dtype=np.float64)
    for g in good:
        for b in bad:
            y = np.where(pos[:, g] < pos[:, b], 1.0, -1.0)
            coef[:, g] += y
            coef[:, b] -= y
    return coef / (len(good) * len(bad))


def brute_mrr(perms, z):
    """phi_mrr (Eq. 5): sum over bad b above the top good g0 of (x_b - x_g0)."""
    pos = positions(perms)
    top = np.where(z[None, :] == 1, pos, 10**6).min(axis=1)
    coef = np.where((z[None, :] == 0) & (pos < top[:, None]), 1.0, 0.0)
    first = np.argmin(np.where(z[None, :] == 1, pos, 10**6), axis=1)
    coef[np.arange(len(perms)), first] = -coef.sum(axis=1)
    return coef


def brute_dorm(perms, cut=None):
    pos = positions(perms)
    decay = 1.0 / np.sqrt(1.0 + pos)
    if cut is not None:
        decay[pos >= cut] = 0.0
    return decay


def metric_of_orders(labels, orders, metric, convention):
    """metric of each ranking, computed by structrank.metrics (each ranking is one query)."""
    m, n = orders.shape
    y = np.repeat(labels[None, :], m, axis=0)
    y = np.take_along_axis(y, orders, axis=1).ravel()
    scores = np.tile(np.arange(n, 0, -1, dtype=np.float64), m)  # strictly decreasing: no ties
    qid = np.repeat(np.arange(m), n)
    docids = np.tile(np.arange(n).astype(str), m)  # trec_eval breaks ties by docid; there are none
    return evaluate(y, scores, qid, [metric], convention, docids=docids).per_query[metric]


def check(violation, scores, brute_coef, brute_loss, own_metric):
    """The oracle's structure is optimal, its loss and coefficients are those of its ranking."""
    values = brute_coef @ scores + brute_loss
    got = scores @ violation.coef + violation.loss
    assert got == pytest.approx(values.max(), abs=TOL)
    assert sorted(violation.order.tolist()) == list(range(len(scores)))
    assert violation.loss == pytest.approx(own_metric, abs=TOL)


scores_st = st.integers(1, 8).flatmap(
    lambda n: st.tuples(
        st.lists(st.one_of(st.floats(-3, 3, allow_nan=False, width=32), st.sampled_from([0.0, 0.5, 1.0])),
                 min_size=n, max_size=n),
        st.lists(st.integers(0, 1), min_size=n, max_size=n),
    )
)


def arrays(case):
    scores, labels = case
    scores, labels = np.array(scores, dtype=np.float64), np.array(labels, dtype=np.int64)
    assume(0 < labels.sum() < len(labels))  # both kinds: the empty cases are tested below
    return scores, labels


@settings(max_examples=150, deadline=None)
@given(scores_st)
def test_auc_oracle_is_best_partial_order(case):
    s, y = arrays(case)
    v = auc_oracle(s, y)
    good, bad = np.flatnonzero(y), np.flatnonzero(y == 0)
    pairs = [(g, b) for g in good for b in bad]
    if len(pairs) <= 12:  # every partial order: each pair independently +1 / -1
        signs = np.array(list(itertools.product([1.0, -1.0], repeat=len(pairs))))
        coef = np.zeros((len(signs), len(s)))
        for p, (g, b) in enumerate(pairs):
            coef[:, g] += signs[:, p]
            coef[:, b] -= signs[:, p]
        coef /= len(pairs)
        loss = (signs < 0).sum(axis=1) / len(pairs)
        assert s @ v.coef + v.loss == pytest.approx((coef @ s + loss).max(), abs=TOL)
    perms = permutations(len(s))
    auc = metric_of_orders(y, perms, "auc", "trec")
    own = metric_of_orders(y, v.order[None, :], "auc", "trec")[0]
    check(v, s, brute_po(perms, y), 1.0 - auc, 1.0 - own)
    np.testing.assert_allclose(v.coef, phi_po(v.order, y), atol=TOL)


@settings(max_examples=150, deadline=None)
@given(scores_st)
def test_map_oracle_equals_brute_force(case):
    s, y = arrays(case)
    v = map_oracle(s, y)
    perms = permutations(len(s))
    ap = metric_of_orders(y, perms, "map", "trec")
    own = metric_of_orders(y, v.order[None, :], "map", "trec")[0]
    check(v, s, brute_po(perms, y), 1.0 - ap, 1.0 - own)
    np.testing.assert_allclose(v.coef, brute_po(v.order[None, :], y)[0], atol=TOL)


NDCG_CONVENTION = {"letor": "letor4", "log2": "trec"}


@settings(max_examples=200, deadline=None)
@given(scores_st, st.integers(1, 9), st.sampled_from(["letor", "log2"]))
def test_ndcg_oracle_equals_brute_force(case, k, discount):
    s, y = arrays(case)
    v = ndcg_oracle(s, y, k=k, discount=discount)
    perms = permutations(len(s))
    metric = f"ndcg@{min(k, len(s))}"  # NDCG@k over n < k documents is NDCG@n
    ndcg = metric_of_orders(y, perms, metric, NDCG_CONVENTION[discount])
    own = metric_of_orders(y, v.order[None, :], metric, NDCG_CONVENTION[discount])[0]
    check(v, s, brute_po(perms, y), 1.0 - ndcg, 1.0 - own)
    np.testing.assert_allclose(v.coef, brute_po(v.order[None, :], y)[0], atol=TOL)


@settings(max_examples=150, deadline=None)
@given(scores_st, st.sampled_from(["letor", "log2"]))
def test_ndcg_noclip_oracle_equals_brute_force(case, discount):
    s, y = arrays(case)
    v = ndcg_oracle(s, y, k=None, discount=discount)
    perms = permutations(len(s))
    ndcg = metric_of_orders(y, perms, "ndcg", NDCG_CONVENTION[discount])
    own = metric_of_orders(y, v.order[None, :], "ndcg", NDCG_CONVENTION[discount])[0]
    check(v, s, brute_po(perms, y), 1.0 - ndcg, 1.0 - own)


@settings(max_examples=200, deadline=None)
@given(scores_st, st.integers(1, 9), st.sampled_from(["mrr", "po"]))
def test_mrr_oracle_equals_brute_force(case, k, feature_map):
    s, y = arrays(case)
    v = mrr_oracle(s, y, k=k, feature_map=feature_map)
    perms = permutations(len(s))
    rr = metric_of_orders(y, perms, f"mrr@{k}", "trec")
    own = metric_of_orders(y, v.order[None, :], f"mrr@{k}", "trec")[0]
    coef = brute_mrr(perms, y) if feature_map == "mrr" else brute_po(perms, y)
    check(v, s, coef, 1.0 - rr, 1.0 - own)
    ref = brute_mrr(v.order[None, :], y) if feature_map == "mrr" else brute_po(v.order[None, :], y)
    np.testing.assert_allclose(v.coef, ref[0], atol=TOL)


@settings(max_examples=120, deadline=None)
@given(scores_st, st.integers(1, 9), st.sampled_from([None, 1, 3]))
def test_dorm_oracle_equals_brute_force(case, k, cut):
    s, y = arrays(case)
    v = dorm_oracle(s, y, k=k, cut=cut)
    perms = permutations(len(s))
    metric = f"ndcg@{min(k, len(s))}"
    ndcg = metric_of_orders(y, perms, metric, "letor4")
    own = metric_of_orders(y, v.order[None, :], metric, "letor4")[0]
    check(v, s, brute_dorm(perms, cut), 1.0 - ndcg, 1.0 - own)
    np.testing.assert_allclose(v.coef, phi_dorm(v.order, 1.0 / np.sqrt(1.0 + np.arange(len(s))) * (
        np.arange(len(s)) < (cut if cut is not None else len(s)))), atol=TOL)


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 80).flatmap(lambda n: st.tuples(
    st.lists(st.floats(-3, 3, allow_nan=False, width=32) | st.sampled_from([0.0, 1.0]), min_size=n, max_size=n),
    st.lists(st.integers(0, 1), min_size=n, max_size=n))), st.integers(1, 12), st.sampled_from([None, 1, 5, 30]),
    st.sampled_from([1.0, 3.0]))
def test_two_level_dorm_dp_reaches_the_assignment_optimum(case, k, cut, gain):
    """On long lists (beyond brute force) the DP for two gain levels finds a ranking whose value
    s . A(rank) + Delta equals scipy's assignment optimum, and its coefficients and loss are those
    of the ranking it returns."""
    from scipy.optimize import linear_sum_assignment

    from structrank.oracles.dorm import dorm_query
    from structrank.feature_maps import dorm_decay

    s, gains = np.array(case[0]), gain * np.array(case[1], dtype=np.float64)
    n = s.size
    discount = 1.0 / np.log2(np.arange(n) + 2.0)
    decay = dorm_decay(n, cut)
    coef, delta, order = dorm_query(s, gains, k, discount, decay)
    np.testing.assert_array_equal(np.sort(order), np.arange(n))
    np.testing.assert_allclose(coef[order], decay, atol=0)
    depth = min(k, n)
    ideal = np.sort(gains)[::-1][:depth] @ discount[:depth]
    if ideal <= 0 or np.all(gains == gains[0]):
        assert delta == 0.0
        return
    assert delta == pytest.approx(1.0 - gains[order[:depth]] @ discount[:depth] / ideal, abs=1e-12)
    d = np.zeros(n)
    d[:depth] = discount[:depth] / ideal
    cells = s[:, None] * decay[None, :] - gains[:, None] * d[None, :]
    rows, cols = linear_sum_assignment(cells, maximize=True)
    assert s @ coef + delta == pytest.approx(cells[rows, cols].sum() + 1.0, abs=1e-9)


@settings(max_examples=100, deadline=None)
@given(st.integers(2, 7).flatmap(lambda n: st.tuples(
    st.lists(st.floats(-3, 3, allow_nan=False, width=32), min_size=n, max_size=n),
    st.lists(st.integers(0, 4), min_size=n, max_size=n))), st.integers(1, 8))
def test_graded_dorm_oracle_equals_brute_force(case, k):
    """The graded-gain NDCG oracle (2^label - 1): compared with the MSLR convention, labels 0-4."""
    s, y = np.array(case[0]), np.array(case[1])
    assume(len(set(y.tolist())) > 1)
    v = dorm_oracle(s, y, k=k, gain="exp2")
    perms = permutations(len(s))
    metric = f"ndcg@{min(k, len(s))}"
    # mslr counts labels >= 2 as relevant for AP, but its NDCG gain is 2^l - 1 for 0..4
    ndcg = metric_of_orders(y, perms, metric, "mslr")
    own = metric_of_orders(y, v.order[None, :], metric, "mslr")[0]
    check(v, s, brute_dorm(perms), 1.0 - ndcg, 1.0 - own)


@settings(max_examples=60, deadline=None)
@given(scores_st, st.integers(1, 5))
def test_combo_oracle_takes_the_most_violated_component(case, k):
    s, y = arrays(case)
    combo = get_loss("combo", k=k)
    v = combo.oracle(s, y)
    perms = permutations(len(s))
    best = -np.inf
    for part in combo.components:
        star = part.star(s, y, [0, len(s)])
        coef = brute_mrr(perms, y) if part.feature_map == "mrr" else brute_po(perms, y)
        metric = {"map": "map", "ndcg": f"ndcg@{min(k, len(s))}", "ndcg-nc": "ndcg", "mrr": f"mrr@{k}"}[part.name]
        loss = 1.0 - metric_of_orders(y, perms, metric, "letor4")
        best = max(best, ((coef - star) @ s + loss).max())
    assert s @ v.coef + v.loss == pytest.approx(best, abs=TOL)


# Edge cases: documented behaviour


@pytest.mark.parametrize("labels", [[1, 1, 1], [0, 0, 0], [1], [0]])
@pytest.mark.parametrize("name,feature_map", [("auc", "po"), ("map", "po"), ("ndcg", "po"), ("ndcg-nc", "po"),
                                              ("mrr", "mrr"), ("mrr", "po"), ("ndcg", "dorm")])
def test_query_with_one_kind_of_document_has_no_violation(labels, name, feature_map):
    """All relevant, all irrelevant or a single document: loss 0 and c_hat = c_star."""
    loss = structured(name, feature_map)
    s = np.linspace(1.0, -1.0, len(labels))
    v = loss.oracle(s, np.array(labels))
    assert v.loss == 0.0
    np.testing.assert_allclose(v.coef, loss.star(s, np.array(labels), [0, len(labels)]))


@pytest.mark.parametrize("name,feature_map", [("auc", "po"), ("map", "po"), ("ndcg", "po"), ("ndcg-nc", "po"),
                                              ("mrr", "mrr"), ("mrr", "po"), ("ndcg", "dorm")])
def test_all_equal_scores_give_the_worst_ranking(name, feature_map):
    """With all scores equal, the score term is constant: the oracle returns a ranking of maximal loss."""
    y = np.array([1, 0, 0, 1, 0, 0])
    v = structured(name, feature_map, k=3).oracle(np.zeros(6), y)
    worst_order = np.array([1, 2, 4, 5, 0, 3])  # every bad document first
    metric = {"auc": "auc", "map": "map", "ndcg": "ndcg@3", "ndcg-nc": "ndcg", "mrr": "mrr@3"}[name]
    worst = 1.0 - metric_of_orders(y, worst_order[None, :], metric, "letor4")[0]
    assert v.loss == pytest.approx(worst)


@pytest.mark.parametrize("k", [1, 5, 50])
def test_k_longer_than_the_list(k):
    """k beyond the list length: NDCG@k is NDCG over the whole list, MRR@k has no miss class."""
    s, y = np.array([0.3, 0.2, 0.1]), np.array([0, 1, 0])
    for loss, metric in ((structured("ndcg", k=k), f"ndcg@{min(k, 3)}"), (structured("mrr", k=k), f"mrr@{k}")):
        v = loss.oracle(s, y)
        perms = permutations(3)
        coef = brute_mrr(perms, y) if loss.feature_map == "mrr" else brute_po(perms, y)
        brute = coef @ s + 1.0 - metric_of_orders(y, perms, metric, "letor4")
        assert s @ v.coef + v.loss == pytest.approx(brute.max())


def test_batch_equals_query_by_query():
    rng = np.random.default_rng(3)
    sizes = [5, 1, 8, 3, 12]
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    s = rng.normal(size=offsets[-1])
    y = rng.integers(0, 3, size=offsets[-1])
    for loss in (structured("map"), structured("ndcg", k=3), structured("mrr"),
                 structured("ndcg", "dorm", dorm_cut=4), structured("ndcg", "dorm"),
                 structured("ndcg", "dorm", gain="exp2"), structured("ndcg-nc", "dorm"), get_loss("combo")):
        coef, delta = loss.batch(s, y, offsets)
        for q in range(len(sizes)):
            a, b = offsets[q], offsets[q + 1]
            v = loss.oracle(s[a:b], y[a:b])
            np.testing.assert_allclose(coef[a:b], v.coef)
            assert delta[q] == pytest.approx(v.loss)


def test_structures_match_their_definitions():
    rng = np.random.default_rng(0)
    for _ in range(20):
        n = rng.integers(2, 7)
        z = rng.integers(0, 2, size=n)
        if not 0 < z.sum() < n:
            continue
        order = rng.permutation(n)
        np.testing.assert_allclose(phi_po(order, z), brute_po(order[None, :], z)[0])
        np.testing.assert_allclose(phi_mrr(order, z), brute_mrr(order[None, :], z)[0])


def test_bad_loss_options_are_refused():
    with pytest.raises(ValueError, match="unknown loss"):
        get_loss("p@x")
    with pytest.raises(ValueError, match="dorm"):
        structured("map", "dorm")
    with pytest.raises(ValueError, match="k must be"):
        structured("ndcg", k=0)
    with pytest.raises(ValueError, match="discount"):
        structured("ndcg", discount="ln")


def brute_graded_po(perms, y):
    """Graded phi_po: sum over pairs with y_i > y_j of y_ij (x_i - x_j), over the number of such pairs."""
    pos = positions(perms)
    coef = np.zeros(perms.shape, dtype=np.float64)
    pairs = 0
    for i in range(len(y)):
        for j in range(len(y)):
            if y[i] > y[j]:
                sign = np.where(pos[:, i] < pos[:, j], 1.0, -1.0)
                coef[:, i] += sign
                coef[:, j] -= sign
                pairs += 1
    return coef / pairs


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 7).flatmap(lambda n: st.tuples(
    st.lists(st.one_of(st.floats(-3, 3, allow_nan=False, width=32), st.sampled_from([0.0, 0.5, 1.0])),
             min_size=n, max_size=n),
    st.lists(st.integers(0, 4), min_size=n, max_size=n))), st.integers(1, 8), st.sampled_from(["letor", "log2"]))
def test_graded_ndcg_po_oracle_equals_brute_force(case, k, discount):
    """NDCG@k with gains 2^label - 1 and graded phi_po: the optimum over all rankings, letor4 and
    MSLR NDCG (gain 2^l - 1 for labels 0-4) as the loss, the graded phi_po of its ranking."""
    s, y = np.array(case[0]), np.array(case[1])
    assume(len(set(y.tolist())) > 1)
    v = ndcg_oracle(s, y, k=k, discount=discount, gain="exp2")
    perms = permutations(len(s))
    metric = f"ndcg@{min(k, len(s))}"
    # MSLR's NDCG (gain 2^l - 1 for 0..4); with the log2 discount the same with 1/log2(rank + 1)
    convention = CONVENTIONS["mslr"] if discount == "letor" else dataclasses.replace(
        CONVENTIONS["mslr"], name="mslr-log2", discount="log2_rank_plus_1")
    ndcg = metric_of_orders(y, perms, metric, convention)
    own = metric_of_orders(y, v.order[None, :], metric, convention)[0]
    brute = brute_graded_po(perms, y)
    check(v, s, brute, 1.0 - ndcg, 1.0 - own)
    position = np.argsort(v.order)
    np.testing.assert_allclose(v.coef, brute[np.flatnonzero((positions(perms) == position).all(axis=1))[0]], atol=TOL)


def test_graded_ndcg_with_two_grades_is_the_binary_oracle():
    """With labels 0/1 the graded phi_po and NDCG are the paper's binary ones."""
    rng = np.random.default_rng(3)
    for _ in range(50):
        n = int(rng.integers(2, 40))
        s, y = rng.normal(size=n), rng.integers(0, 2, size=n)
        if y.min() == y.max():
            continue
        for k in (1, 3, 10):
            graded, binary = ndcg_oracle(s, y, k=k, gain="exp2"), ndcg_oracle(s, y, k=k)
            assert graded.loss + s @ graded.coef == pytest.approx(binary.loss + s @ binary.coef, abs=1e-12)


def test_graded_star_is_the_ideal_ranking():
    loss = structured("ndcg", "po", k=3, gain="exp2")
    y = np.array([2, 0, 1, 1, 0, 2, 1])
    s = np.zeros(len(y))
    ideal = np.argsort(-y, kind="stable")
    perms = permutations(len(y))
    expected = brute_graded_po(perms, y)[np.flatnonzero((perms == ideal).all(axis=1))[0]]
    np.testing.assert_allclose(loss.star(s, y, [0, len(y)]), expected, atol=TOL)
    assert not np.any(loss.star(s, np.array([1, 1, 1]), [0, 3]))  # one grade: no pairs


def test_graded_gain_options_are_checked():
    from structrank.losses import get_entry

    assert "gain" not in get_entry("map").options  # graded gains are NDCG's alone
    with pytest.raises(ValueError, match="exp2"):
        structured("ndcg-nc", "po", gain="exp2")
    with pytest.raises(ValueError, match="labels >= 0"):
        ndcg_oracle(np.zeros(3), np.array([-1, 0, 1]), gain="exp2")


def test_the_oracles_package_serves_no_loss_names():
    """The losses live in structrank.losses (get_loss and its .oracle); structrank.oracles holds the oracles only."""
    import structrank.oracles as oracles

    for name in ("make_loss", "map_oracle", "StructuredLoss"):
        with pytest.raises(AttributeError):
            getattr(oracles, name)
