"""Paired significance tests over queries (structrank.metrics.significance)."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from structrank.metrics.significance import paired_test, per_query_pairs, sign_test_p


def brute_force_sign_flip(d):
    """Two-sided exact randomisation p-value: every one of the 2^n sign patterns."""
    observed = abs(d.mean())
    hits = 0
    for signs in itertools.product((1.0, -1.0), repeat=d.size):
        hits += abs(np.mean(d * np.array(signs))) >= observed - 1e-12
    return hits / 2 ** d.size


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 10), st.integers(0, 10)), min_size=2, max_size=10))
def test_exact_randomisation_equals_enumerating_every_sign_pattern(pairs):
    a = np.array([p[0] for p in pairs]) / 10.0
    b = np.array([p[1] for p in pairs]) / 10.0
    result = paired_test(a, b)
    if np.any(a != b):
        assert result.rand_p == pytest.approx(brute_force_sign_flip(a - b), abs=1e-12)
    else:
        assert result.rand_p == 1.0 and result.t_p == 1.0


def test_t_test_is_scipys_paired_t_test():
    from scipy import stats

    rng = np.random.default_rng(3)
    a, b = rng.random(50), rng.random(50)
    assert paired_test(a, b).t_p == pytest.approx(stats.ttest_rel(a, b).pvalue, rel=1e-12)


def test_a_clear_difference_is_significant_and_noise_is_not():
    rng = np.random.default_rng(0)
    b = rng.random(200)
    better = paired_test(b + 0.05 + rng.normal(0, 0.02, 200), b)
    assert better.significant() and better.verdict() == "A > B" and better.mean_diff > 0.04
    worse = paired_test(b - 0.05 + rng.normal(0, 0.02, 200), b)
    assert worse.verdict() == "A < B"
    noise = paired_test(b + rng.normal(0, 0.1, 200), b + rng.normal(0, 0.1, 200))
    assert noise.rand_p > 0.05 and noise.verdict() == "no significant difference"


def test_sampled_randomisation_is_seeded_and_close_to_the_t_test_on_many_queries():
    rng = np.random.default_rng(1)
    a, b = rng.random(300), rng.random(300) - 0.03
    first, again = paired_test(a, b, seed=7), paired_test(a, b, seed=7)
    assert first.rand_p == again.rand_p
    assert abs(first.rand_p - first.t_p) < 0.03


def test_constant_nonzero_difference_is_certain_for_the_t_test():
    result = paired_test([0.5, 0.6, 0.7], [0.4, 0.5, 0.6])
    assert result.t_p == 0.0 and result.rand_p == pytest.approx(0.25)
    assert result.ci_low == result.ci_high == result.mean_diff


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 10), st.integers(0, 10)), min_size=2, max_size=30))
def test_confidence_interval_is_the_textbook_t_interval_and_agrees_with_the_t_test(pairs):
    from scipy import stats

    a = np.array([p[0] for p in pairs]) / 10.0
    b = np.array([p[1] for p in pairs]) / 10.0
    result, d = paired_test(a, b), a - b
    if np.ptp(d) == 0:  # no spread: the interval is the mean difference itself
        assert result.ci_low == result.ci_high == pytest.approx(d.mean())
        return
    # mean -/+ t(0.975, n - 1) * s / sqrt(n), written out
    half = stats.t.ppf(0.975, d.size - 1) * d.std(ddof=1) / np.sqrt(d.size)
    assert (result.ci_low, result.ci_high) == pytest.approx((d.mean() - half, d.mean() + half), abs=1e-12)
    # the interval leaves out 0 exactly where the two-sided t-test rejects at 0.05 (away from the edge)
    if abs(result.t_p - 0.05) > 1e-9:
        assert (result.ci_low > 0 or result.ci_high < 0) == (result.t_p < 0.05)


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="one value per query"):
        paired_test([1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="at least 2"):
        paired_test([1], [1])
    with pytest.raises(ValueError, match="finite"):
        paired_test([1, np.nan], [1, 2])


def test_per_query_pairs_aligns_the_common_queries():
    queries, a, b = per_query_pairs({"q1": 0.1, "q2": 0.2, "q3": 0.3}, {"q3": 0.9, "q1": 0.7})
    assert queries == ["q1", "q3"] and a.tolist() == [0.1, 0.3] and b.tolist() == [0.7, 0.9]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-3, 3), min_size=0, max_size=14))
def test_sign_test_counts_the_signs_of_the_nonzero_differences(d):
    """The exact two-sided binomial p-value, by enumerating every sign pattern of the non-zero differences."""
    nonzero = [x for x in d if x != 0]
    n, k = len(nonzero), sum(x > 0 for x in nonzero)
    if n == 0:
        assert sign_test_p(d) == 1.0
        return
    from math import comb

    probs = [comb(n, j) / 2 ** n for j in range(n + 1)]
    expected = min(1.0, sum(p for p in probs if p <= probs[k] * (1 + 1e-9)))
    assert sign_test_p(d) == pytest.approx(expected, rel=1e-9)
    assert sign_test_p([-x for x in d]) == pytest.approx(sign_test_p(d), rel=1e-12)
