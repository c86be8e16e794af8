"""The permutation CRF of Volkovs, Larochelle & Zemel (2011): objectives, gradients and the ranker.

- the permutation table holds every ranking's position weights ``alpha_j = log 2 / log(j + 1)``;
- the losses are 1 - NDCG of Eq. 12, checked against a plain Python NDCG of each ranking;
- each objective's value equals a straightforward numpy/scipy implementation of the paper's
  formula (Eqs. 4, 6, 8-11; ML and LA with the mean over Y0 and with Eq. 10's sum) and its gradient
  (wrt energies, scores and theta) agrees with central finite differences;
- the gradients on the five configurations of Fig. 1 behave as Sec. 3.4 describes;
- the subset drawn at each visit holds every relevance level and is seeded;
- PermutationCRFRanker learns, is reproducible, picks its epoch on dev, and rejects bad parameters.
The references are written from the paper's definitions, independently of the numba kernels.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import logsumexp, rel_entr

from structrank.data import make_ranking_dataset
from structrank.data.dataset import group_offsets
from structrank.learners import PermutationCRFRanker
from structrank.learners.crf import _draw_subset, _seed
from structrank.learners.registry import ranker_class
from structrank.metrics import evaluate
from structrank.model_io import load_model, save_model
from structrank.oracles.crf import (
    OBJECTIVE_CODES,
    OBJECTIVES,
    energy_gradient,
    ndcg_losses,
    objective_gradient,
    permutation_table,
    position_weights,
    query_objective,
    stacked_tables,
)

LOG2 = math.log(2.0)
#: (objective, param): a for la, T for kl
SETTINGS = [("ml", 0.0), ("la", 1.0), ("la", 10.0), ("ls", 0.0), ("el", 0.0), ("kl", 0.1), ("kl", 1.0), ("kl", 10.0),
            ("ml-sum", 0.0), ("la-sum", 10.0)]


# ----------------------------------------------------------------------------------------------
# references written from the paper


def brute_ndcg(labels, order):
    """NDCG of Eq. 12 of the ranking ``order`` (documents, best first): gain r, discount log 2 / log(1 + pos)."""
    def dcg(gains):
        return sum(g * LOG2 / math.log(1 + pos) for pos, g in enumerate(gains, start=1))

    ideal = dcg(sorted(labels, reverse=True))
    if ideal == 0:
        return 1.0
    return dcg([labels[d] for d in order]) / ideal


def brute_configurations(scores, labels):
    """(energies, losses) of every ranking of the documents, enumerated here (order irrelevant)."""
    m = len(scores)
    energies, losses = [], []
    for order in itertools.permutations(range(m)):
        # document order[k] at position k + 1: E = -sum_i alpha_{y_i} s_i
        energies.append(-sum(LOG2 / math.log(k + 2) * scores[d] for k, d in enumerate(order)))
        losses.append(1.0 - brute_ndcg(labels, order))
    losses = np.array(losses)
    losses[np.abs(losses) < 1e-10] = 0.0  # tied orderings differ by rounding
    return np.array(energies), losses


def reference_value(objective, E, losses, param):
    """The objective of one example, straight from the paper's formulas."""
    E, losses = np.asarray(E, dtype=np.float64), np.asarray(losses, dtype=np.float64)
    zero = losses == 0.0
    log_p = -E - logsumexp(-E)
    if objective == "ml":  # Eq. 10, with the mean over Y0
        return float(-np.mean(log_p[zero]))
    if objective == "la":  # Eq. 4 in Eq. 10
        E_la = E - param * losses
        return float(-np.mean((-E_la - logsumexp(-E_la))[zero]))
    if objective == "ml-sum":  # Eq. 10 as printed: the sum over Y0
        return float(-np.sum(log_p[zero]))
    if objective == "la-sum":
        E_la = E - param * losses
        return float(-np.sum((-E_la - logsumexp(-E_la))[zero]))
    if objective == "ls":  # Eq. 11 in Eq. 10: E_LS is 0 on Y0
        E_ls = losses * (E - E[zero].mean()) - losses
        return float(np.mean(E_ls[zero]) + logsumexp(-E_ls))
    if objective == "el":  # Eq. 6
        return float(np.sum(losses * np.exp(log_p)))
    if objective == "kl":  # Eqs. 8-9 with the entropy of q kept
        q = np.exp(-losses / param - logsumexp(-losses / param))
        return float(np.sum(rel_entr(q, np.exp(log_p))))
    raise AssertionError(objective)


def central_difference(f, x, h=1e-5):
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    for i in range(x.size):
        up, down = x.copy(), x.copy()
        up[i] += h
        down[i] -= h
        out[i] = (f(up) - f(down)) / (2 * h)
    return out


# ----------------------------------------------------------------------------------------------
# 1. the permutation table


@pytest.mark.parametrize("m", range(1, 8))
def test_permutation_table_rows_are_the_position_weights_permuted(m):
    A = permutation_table(m)
    alpha = position_weights(m)
    assert A.shape == (math.factorial(m), m)
    assert np.allclose(alpha, [LOG2 / math.log(j + 1) for j in range(1, m + 1)])
    assert np.array_equal(np.sort(A, axis=1), np.broadcast_to(np.sort(alpha), A.shape))
    assert np.unique(A, axis=0).shape[0] == math.factorial(m)  # every ranking once
    assert np.array_equal(A[0], alpha)  # row 0 is the identity
    # itertools order of the position vectors
    expected = np.array([alpha[list(p)] for p in itertools.permutations(range(m))]).reshape(-1, m)
    assert np.array_equal(A, expected)
    assert not A.flags.writeable
    with pytest.raises(ValueError):
        A[0, 0] = 5.0
    assert permutation_table(m) is A  # cached


def test_permutation_table_bounds_and_stacked_tables():
    for m in (0, 10):
        with pytest.raises(ValueError):
            permutation_table(m)
    tables, starts = stacked_tables(5)
    for m in range(1, 6):
        block = tables[starts[m]:starts[m + 1]]
        assert np.array_equal(block[:, :m], permutation_table(m))
        assert np.all(block[:, m:] == 0.0)
    assert starts[-1] == tables.shape[0] == sum(math.factorial(m) for m in range(1, 6))


# ----------------------------------------------------------------------------------------------
# 2. the NDCG losses


label_lists = st.lists(st.integers(0, 4), min_size=1, max_size=6)


@settings(max_examples=200, deadline=None)
@given(label_lists)
def test_ndcg_losses_equal_a_brute_force_ndcg(labels):
    m = len(labels)
    A = permutation_table(m)
    r = np.array(labels, dtype=np.float64)
    losses = np.full(A.shape[0], np.nan)
    ndcg_losses(A, r, losses)
    alpha = position_weights(m)
    for y in range(A.shape[0]):
        # read the ranking off the row: the document with the largest weight is first
        order = np.argsort(-A[y], kind="stable")
        assert np.allclose(A[y][order], alpha)
        expected = 1.0 - brute_ndcg(labels, order.tolist())
        assert losses[y] == pytest.approx(expected, abs=1e-9)
        sorted_by_relevance = all(labels[a] >= labels[b] for a, b in zip(order[:-1], order[1:]))
        assert (losses[y] == 0.0) == sorted_by_relevance  # Y0: exactly the relevance orderings
        assert losses[y] >= 0.0
    if not any(labels):
        assert np.all(losses == 0.0)
    # |Y0| = product of the factorials of the level sizes
    counts = np.unique(labels, return_counts=True)[1]
    assert np.sum(losses == 0.0) == np.prod([math.factorial(c) for c in counts])


def test_ndcg_losses_of_a_small_query_by_hand():
    losses = np.empty(2)
    ndcg_losses(permutation_table(2), np.array([0.0, 1.0]), losses)
    # identity puts the irrelevant document first: DCG = log2/log3, ideal 1
    assert losses.tolist() == pytest.approx([1.0 - LOG2 / math.log(3.0), 0.0])


# ----------------------------------------------------------------------------------------------
# 3. objectives over explicit configurations


configurations = st.integers(2, 8).flatmap(
    lambda n: st.tuples(
        st.lists(st.floats(-5, 5, allow_nan=False, allow_subnormal=False), min_size=n, max_size=n),
        st.lists(st.sampled_from([0.0, 0.1, 0.5, 1.0, 5.0]) | st.floats(0, 5, allow_subnormal=False),
                 min_size=n, max_size=n),
        st.integers(0, n - 1),
    )
)


def config_arrays(config):
    E, losses, truth = config
    losses = np.array(losses)
    losses[truth] = 0.0
    return np.array(E), losses


@settings(max_examples=120, deadline=None)
@given(configurations, st.sampled_from(SETTINGS))
def test_objective_value_equals_the_papers_formula(config, setting):
    objective, param = setting
    E, losses = config_arrays(config)
    value, g = energy_gradient(objective, E, losses, param)
    assert value == pytest.approx(reference_value(objective, E, losses, param), rel=1e-9, abs=1e-9)
    # the numba function directly gives the same
    g2, work = np.empty_like(E), np.empty_like(E)
    assert objective_gradient(OBJECTIVE_CODES[objective], E, losses, float(param), g2, work) == value
    assert np.array_equal(g, g2)
    if objective == "kl":
        assert value >= -1e-12  # a true KL divergence


@settings(max_examples=120, deadline=None)
@given(configurations, st.sampled_from(SETTINGS))
def test_energy_gradient_agrees_with_finite_differences(config, setting):
    objective, param = setting
    E, losses = config_arrays(config)
    _, g = energy_gradient(objective, E, losses, param)
    numeric = central_difference(lambda e: reference_value(objective, e, losses, param), E)
    assert np.allclose(g, numeric, rtol=1e-5, atol=1e-6)
    if objective in ("ml", "la", "kl"):  # target minus model distribution: sums to 0
        assert g.sum() == pytest.approx(0.0, abs=1e-9)
    if objective in ("ml-sum", "la-sum"):  # |Y0| times that
        assert g.sum() == pytest.approx(0.0, abs=1e-7)


@settings(max_examples=100, deadline=None)
@given(configurations)
def test_objectives_relations_of_section_3(config):
    E, losses = config_arrays(config)
    zero = losses == 0.0
    ml, g_ml = energy_gradient("ml", E, losses)
    # LA with weight 0 is ML
    la0, g_la0 = energy_gradient("la", E, losses, 0.0)
    assert la0 == pytest.approx(ml) and np.allclose(g_la0, g_ml)
    # Eq. 10's sum over Y0 is |Y0| times our mean, value and gradient, for ML and LA alike
    for mean, a in (("ml", 0.0), ("la", 0.0), ("la", 10.0)):
        value, g = energy_gradient(mean, E, losses, a)
        summed, g_sum = energy_gradient(mean + "-sum", E, losses, a)
        assert summed == pytest.approx(zero.sum() * value, rel=1e-9, abs=1e-9)
        assert np.allclose(g_sum, zero.sum() * g, rtol=1e-9, atol=1e-12)
    # ML is the T -> 0 limit of KL: KL(u || p) = ML - log |Y0| when the other losses are >> T
    if np.all(losses[~zero] >= 0.1):
        kl, g_kl = energy_gradient("kl", E, losses, 1e-3)
        assert kl == pytest.approx(ml - math.log(zero.sum()), abs=1e-9)
        assert np.allclose(g_kl, g_ml, atol=1e-9)
    # the upper bounds of Sec. 3.1 on the loss of the prediction argmin E
    predicted = losses[E == E.min()]
    ls, _ = energy_gradient("ls", E, losses)
    assert ls >= predicted.max() - 1e-9
    for a in (1.0, 10.0):
        la, _ = energy_gradient("la", E, losses, a)
        assert la >= a * predicted.max() - 1e-9
    # EL is an expectation of the loss
    el, _ = energy_gradient("el", E, losses)
    assert 0.0 <= el <= losses.max() + 1e-12


def test_energy_gradient_rejects_bad_input():
    with pytest.raises(ValueError, match="objective"):
        energy_gradient("svm", [0.0, 1.0], [0.0, 1.0])
    with pytest.raises(ValueError, match="temperature"):
        energy_gradient("kl", [0.0, 1.0], [0.0, 1.0], 0.0)
    with pytest.raises(ValueError):
        energy_gradient("la", [0.0, 1.0], [0.0, 1.0], -1.0)
    with pytest.raises(ValueError, match="loss 0"):
        energy_gradient("ml", [0.0, 1.0], [0.5, 1.0])
    with pytest.raises(ValueError):
        energy_gradient("ml", [0.0, 1.0], [0.0, 1.0, 2.0])


# ----------------------------------------------------------------------------------------------
# 4. gradients wrt scores and theta


queries = st.integers(2, 6).flatmap(
    lambda n: st.tuples(
        st.lists(st.floats(-3, 3, allow_nan=False, allow_subnormal=False), min_size=n, max_size=n),
        st.lists(st.integers(0, 2), min_size=n, max_size=n),
    )
)


@settings(max_examples=60, deadline=None)
@given(queries, st.sampled_from(SETTINGS))
def test_query_objective_value_and_score_gradient(query, setting):
    objective, param = setting
    scores, labels = np.array(query[0]), query[1]
    value, grad = query_objective(objective, scores, labels, param)
    E, losses = brute_configurations(scores.tolist(), labels)
    assert value == pytest.approx(reference_value(objective, E, losses, param), rel=1e-8, abs=1e-9)
    numeric = central_difference(lambda s: query_objective(objective, s, labels, param)[0], scores)
    assert np.allclose(grad, numeric, rtol=1e-5, atol=1e-6)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 6), st.integers(1, 5), st.integers(0, 2**32 - 1), st.sampled_from(SETTINGS))
def test_chain_rule_to_theta(m, n_features, seed, setting):
    objective, param = setting
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, n_features))
    labels = rng.integers(0, 3, size=m)
    theta = rng.normal(size=n_features)
    _, grad_scores = query_objective(objective, X @ theta, labels, param)
    numeric = central_difference(lambda t: query_objective(objective, X @ t, labels, param)[0], theta)
    assert np.allclose(X.T @ grad_scores, numeric, rtol=1e-5, atol=1e-6)


def test_descent_raises_the_relevant_documents_score():
    for objective, param in SETTINGS:
        _, grad = query_objective(objective, [0.0, 0.0, 0.0], [0, 2, 1], param)
        assert grad[1] < grad[2] < grad[0], objective  # -grad orders the documents by relevance


# ----------------------------------------------------------------------------------------------
# 5. Fig. 1 and Sec. 3.4


FIG1_E = [-1.0, -0.5, 0.0, 0.5, 1.0]
FIG1_L = [5.0, 1.0, 0.0, 1.0, 5.0]
FIG1_PARAM = {"ml": 0.0, "la": 1.0, "ls": 0.0, "el": 0.0, "kl": 1.0, "ml-sum": 0.0, "la-sum": 1.0}


@pytest.fixture(scope="module")
def fig1():
    out = {}
    for objective in OBJECTIVES:
        _, g = energy_gradient(objective, FIG1_E, FIG1_L, FIG1_PARAM[objective])
        out[objective] = -g / np.linalg.norm(g)
    return out


def test_fig1_only_el_and_kl_lower_a_nonzero_loss_energy(fig1):
    nonzero = np.array(FIG1_L) > 0
    for objective, n in fig1.items():
        lowers = bool(np.any(n[nonzero] < -1e-12))
        assert lowers == (objective in ("el", "kl")), objective
    for objective in ("ml", "la", "ls"):
        n = fig1[objective]
        assert np.all(n[nonzero] >= 0.0) and n[2] < 0.0, objective


def test_fig1_has_one_ground_truth_so_the_sum_over_it_is_the_mean(fig1):
    """Fig. 1 cannot tell Eq. 10's sum from our mean: its example has |Y0| = 1."""
    assert np.array_equal(fig1["ml-sum"], fig1["ml"]) and np.array_equal(fig1["la-sum"], fig1["la"])
    # with two ground truths the unnormalised gradients differ by the factor |Y0| = 2
    losses = [5.0, 1.0, 0.0, 0.0, 5.0]
    _, mean = energy_gradient("ml", FIG1_E, losses)
    _, summed = energy_gradient("ml-sum", FIG1_E, losses)
    assert np.allclose(summed, 2 * mean) and not np.allclose(summed, mean)


def test_fig1_ml_raises_energies_in_proportion_to_probability(fig1):
    n = fig1["ml"]
    p = np.exp(-np.array(FIG1_E) - logsumexp(-np.array(FIG1_E)))
    nonzero = np.array(FIG1_L) > 0
    assert np.allclose(n[nonzero] / p[nonzero], n[0] / p[0])


def test_fig1_ls_puts_the_gradient_on_the_worst_violator(fig1):
    nonzero = np.array(FIG1_L) > 0

    def share(n):
        return abs(n[0]) / np.abs(n[nonzero]).sum()

    assert share(fig1["ls"]) > 0.99
    for objective in ("ml", "la", "el", "kl"):
        assert share(fig1["ls"]) > share(fig1[objective]), objective
    # LA also concentrates on the worst violator, more than ML
    assert share(fig1["la"]) > share(fig1["ml"])


def test_fig1_el_lowers_the_probable_low_loss_configuration_most(fig1):
    n = fig1["el"]
    assert n[1] < n[2] < 0.0


def test_fig1_kl_lowers_only_the_ground_truth_and_the_improbable_low_loss_configuration(fig1):
    n = fig1["kl"]
    assert n[2] < 0.0 and n[3] < 0.0
    assert n[0] > 0.0 and n[1] > 0.0 and n[4] > 0.0


# ----------------------------------------------------------------------------------------------
# 6. the subsets


@settings(max_examples=200, deadline=None)
@given(st.data(), st.lists(st.integers(0, 4), min_size=1, max_size=40), st.integers(0, 2**31 - 1))
def test_draw_subset_holds_every_level_and_is_seeded(data, labels, seed):
    r = np.array(labels, dtype=np.float64)
    levels = set(labels)
    size = data.draw(st.integers(max(2, len(levels)), 9))
    out = np.full(size, -1, dtype=np.int64)
    _seed(seed)
    k = _draw_subset(r, size, out)
    assert k == min(len(labels), size)
    chosen = out[:k]
    assert len(set(chosen.tolist())) == k
    assert np.all((0 <= chosen) & (chosen < len(labels)))
    assert {labels[i] for i in chosen} == levels
    again = np.full(size, -1, dtype=np.int64)
    _seed(seed)
    assert _draw_subset(r, size, again) == k
    assert np.array_equal(again[:k], chosen)


@pytest.mark.parametrize("size", [3, 6])
def test_draw_subset_varies_the_document_of_each_level(size):
    rng = np.random.default_rng(0)
    r = rng.permutation(np.array([0] * 12 + [1] * 5 + [2] * 3, dtype=np.float64))
    seen = np.zeros(r.size, dtype=np.int64)
    out = np.empty(size, dtype=np.int64)
    _seed(123)
    for _ in range(2000):
        k = _draw_subset(r, size, out)
        assert k == size and set(r[out[:k]]) == {0.0, 1.0, 2.0}
        seen[out[:k]] += 1
    # with size 3 the subset is one document per level: each level's pick must vary
    assert np.all(seen > 0)
    if size == 3:  # and each document of a level is picked about uniformly
        for level in (0.0, 1.0, 2.0):
            docs = r == level
            assert seen[docs].sum() == 2000
            assert np.all(np.abs(seen[docs] / 2000 - 1 / docs.sum()) < 0.05)


def test_draw_subset_of_a_short_query_is_all_of_it():
    out = np.full(6, -1, dtype=np.int64)
    assert _draw_subset(np.array([1.0, 0.0, 0.0]), 6, out) == 3
    assert out[:3].tolist() == [0, 1, 2]


# ----------------------------------------------------------------------------------------------
# 7. the ranker


@pytest.fixture(scope="module")
def splits():
    full = make_ranking_dataset(n_queries=70, docs_per_query=(5, 15), n_features=10, random_state=0)
    return full.take_queries(np.arange(40)), full.take_queries(np.arange(40, 50)), full.take_queries(np.arange(50, 70))


def ndcg5(scores, ds):
    return evaluate(ds.y, scores, ds.qid, ["ndcg@5"], "letor4").metrics["ndcg@5"]


@pytest.mark.parametrize("objective,param", SETTINGS)
def test_each_objective_learns(splits, objective, param):
    train, _, test = splits
    rng = np.random.default_rng(0)
    chance = np.mean([ndcg5(rng.normal(size=test.n_rows), test) for _ in range(10)])
    model = PermutationCRFRanker(objective=objective, alpha=param or 1.0, T=param or 1.0, max_epochs=5,
                                 random_state=0).fit(train)
    assert np.all(np.isfinite(model.coef_))
    assert ndcg5(model.predict(test.X), test) > chance + 0.15
    assert model.objective_curve_.shape == (5,) and np.all(np.isfinite(model.objective_curve_))
    assert model.best_epoch_ == 5 and model.dev_curve_.shape == (0,)
    assert np.allclose(model.predict(test.X), test.X @ model.coef_)


@pytest.mark.parametrize("objective,param", SETTINGS)
def test_one_step_on_one_small_query_is_the_query_gradient(objective, param):
    """A query of at most subset_size documents is used whole: one SGD step from theta = 0."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(5, 3))
    y = np.array([0, 2, 1, 0, 1])
    qid = np.zeros(5, dtype=np.int64)
    rate = 0.3
    model = PermutationCRFRanker(objective=objective, alpha=param or 1.0, T=param or 1.0, learning_rate=rate,
                                 max_epochs=1, random_state=0).fit(X, y, qid=qid)
    value, grad = query_objective(objective, np.zeros(5), y, param)
    assert np.allclose(model.coef_, -rate * X.T @ grad)
    assert model.objective_curve_[0] == pytest.approx(value)
    # a second epoch steps from there
    two = PermutationCRFRanker(objective=objective, alpha=param or 1.0, T=param or 1.0, learning_rate=rate,
                               max_epochs=2, random_state=0).fit(X, y, qid=qid)
    value2, grad2 = query_objective(objective, X @ model.coef_, y, param)
    assert np.allclose(two.coef_, model.coef_ - rate * X.T @ grad2)
    assert two.objective_curve_[1] == pytest.approx(value2)


def test_random_state_makes_fits_reproducible(splits):
    train = splits[0]
    a = PermutationCRFRanker(objective="kl", max_epochs=3, random_state=7).fit(train)
    b = PermutationCRFRanker(objective="kl", max_epochs=3, random_state=7).fit(train)
    c = PermutationCRFRanker(objective="kl", max_epochs=3, random_state=8).fit(train)
    assert np.array_equal(a.coef_, b.coef_)
    assert np.array_equal(a.objective_curve_, b.objective_curve_)
    assert not np.array_equal(a.coef_, c.coef_)


def test_sparse_input_fits_like_dense(splits):
    import scipy.sparse as sp

    train = splits[0]
    dense = PermutationCRFRanker(objective="ls", max_epochs=2, random_state=3).fit(train.X, train.y, qid=train.qid)
    sparse = PermutationCRFRanker(objective="ls", max_epochs=2, random_state=3).fit(
        sp.csr_matrix(train.X), train.y, qid=train.qid)
    assert np.allclose(dense.coef_, sparse.coef_)


def test_eval_set_picks_the_best_epoch(splits):
    train, dev, _ = splits
    model = PermutationCRFRanker(objective="el", learning_rate=0.5, max_epochs=6, random_state=0)
    model.fit(train, eval_set=dev)
    curve = model.dev_curve_
    assert curve.shape == (6,) and model.objective_curve_.shape == (6,)
    assert model.best_epoch_ in range(1, 7)
    assert curve[model.best_epoch_ - 1] == curve.max()
    assert model.best_epoch_ == int(np.argmax(curve)) + 1  # the first best
    # the kept weights are that epoch's: refitting for best_epoch_ epochs gives them again
    again = PermutationCRFRanker(objective="el", learning_rate=0.5, max_epochs=model.best_epoch_, random_state=0)
    assert np.array_equal(again.fit(train).coef_, model.coef_)
    metrics = [f"ndcg@{k}" for k in range(1, 6)]
    result = evaluate(dev.y, model.predict(dev.X), dev.qid, metrics, "letor4").metrics
    assert np.mean([result[m] for m in metrics]) == pytest.approx(curve.max())
    # eval_set as a tuple
    tupled = PermutationCRFRanker(objective="el", learning_rate=0.5, max_epochs=6, random_state=0)
    assert np.allclose(tupled.fit(train, eval_set=(dev.X, dev.y, dev.qid)).dev_curve_, curve)


def single_level_data():
    ds = make_ranking_dataset(n_queries=30, docs_per_query=(3, 8), n_features=6, no_relevant_fraction=0.3,
                              random_state=1)
    # plus one query whose documents are all relevant (one level, not level 0)
    rng = np.random.default_rng(2)
    X = np.vstack([ds.X, rng.random((4, 6))])
    y = np.concatenate([ds.y, [2, 2, 2, 2]])
    qid = np.concatenate([ds.qid, [999] * 4])
    return X, y, qid


def test_single_level_queries_are_skipped_and_counted():
    X, y, qid = single_level_data()
    offsets, _ = group_offsets(qid)
    n_queries = offsets.size - 1
    single = sum(np.unique(y[offsets[q]:offsets[q + 1]]).size == 1 for q in range(n_queries))
    assert single >= 3  # the test means something
    model = PermutationCRFRanker(objective="ml", max_epochs=2, random_state=0).fit(X, y, qid=qid)
    assert model.n_queries_skipped_ == single
    assert model.n_queries_used_ == n_queries - single
    kept = PermutationCRFRanker(objective="ml", max_epochs=2, random_state=0, skip_single_level=False)
    kept.fit(X, y, qid=qid)
    assert kept.n_queries_skipped_ == 0 and kept.n_queries_used_ == n_queries
    assert not np.allclose(kept.coef_, model.coef_)


def test_bad_parameters_raise(splits):
    train = splits[0]
    bad = [
        dict(objective="svm"), dict(objective="kl", T=0.0), dict(objective="kl", T=-1.0),
        dict(objective="la", alpha=-1.0), dict(objective="la-sum", alpha=-1.0), dict(subset_size=1), dict(subset_size=10), dict(subset_size=0),
        dict(subset_size=2.5), dict(learning_rate=0.0), dict(learning_rate=-0.1), dict(max_epochs=0),
        dict(max_epochs=-3), dict(max_epochs=1.5),
    ]
    for params in bad:
        with pytest.raises(ValueError):
            PermutationCRFRanker(**params).fit(train)
    # a subset of 2 documents cannot hold one of each of 3 levels
    with pytest.raises(ValueError, match="levels"):
        PermutationCRFRanker(subset_size=2, max_epochs=1).fit([[0.0], [1.0], [2.0]], [0, 1, 2], qid=[1, 1, 1])
    with pytest.raises(ValueError, match="nothing to learn"):
        PermutationCRFRanker(max_epochs=1).fit(train.X, np.zeros(train.n_rows, dtype=int), qid=train.qid)


@pytest.mark.parametrize("objective", ["ml", "ls", "kl", "ml-sum"])
@pytest.mark.parametrize("rate", [1e6, 1e300, 1e308])
def test_huge_learning_rate_never_gives_nan_weights_silently(splits, objective, rate):
    train, _, test = splits
    model = PermutationCRFRanker(objective=objective, learning_rate=rate, max_epochs=3, random_state=0)
    try:
        model.fit(train)
    except FloatingPointError:
        return
    assert rate < 1e308  # the largest step overflows the weights: it must have raised
    assert np.all(np.isfinite(model.coef_))
    assert np.all(np.isfinite(model.predict(test.X)))


def test_save_and_load(tmp_path, splits):
    if ranker_class("PermutationCRFRanker") is not PermutationCRFRanker:
        pytest.skip("PermutationCRFRanker is not registered")
    train, dev, test = splits
    model = PermutationCRFRanker(objective="la", alpha=2.0, max_epochs=3, random_state=0).fit(train, eval_set=dev)
    path = tmp_path / "crf.npz"
    save_model(model, path)
    loaded = load_model(path)
    assert type(loaded) is PermutationCRFRanker
    assert np.array_equal(loaded.predict(test.X), model.predict(test.X))
    assert loaded.get_params() == model.get_params()


def test_two_fits_with_the_defaults_are_the_same_model():
    """random_state defaults to 0: the CLI's crf-* models (and their choice on --vali) repeat."""
    from structrank.data import make_ranking_dataset
    from structrank.learners import PermutationCRFRanker

    ds = make_ranking_dataset(n_queries=20, docs_per_query=12, random_state=1)
    first, second = (PermutationCRFRanker(max_epochs=2).fit(ds) for _ in range(2))
    np.testing.assert_array_equal(first.coef_, second.coef_)
