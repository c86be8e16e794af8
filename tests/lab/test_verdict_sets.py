"""Claims of several comparisons (experiments.verdict_sets) judged from verdict_rules' judgements of each, on paired
values whose answer is known."""

from __future__ import annotations

import numpy as np
import pytest

from structrank_lab.experiments.claims import FAILS, HOLDS, INCONCLUSIVE
from structrank_lab.experiments.verdict_rules import direction
from structrank_lab.experiments.verdict_sets import all_of, at_least, at_level, constant, separated
from structrank.metrics.significance import paired_test

BASE = np.random.default_rng(0).uniform(0.2, 0.8, 300)


def moved(shift, noise, seed=1):
    return BASE + shift + np.random.default_rng(seed).normal(0.0, noise, BASE.size)


UP, DOWN, UNSURE = direction(moved(0.03, 0.05), BASE), direction(moved(-0.03, 0.05), BASE), \
    direction(moved(0.001, 0.3), BASE)


def test_the_parts_are_what_their_names_say():
    assert (UP.verdict, DOWN.verdict, UNSURE.verdict) == (HOLDS, FAILS, INCONCLUSIVE)


@pytest.mark.parametrize("parts, expected", [
    ([UP, UP], HOLDS),
    ([UP, UNSURE], INCONCLUSIVE),
    ([UP, UNSURE, DOWN], FAILS),  # one comparison against the claim is enough
])
def test_all_of(parts, expected):
    judged = all_of([(f"c{i}", j) for i, j in enumerate(parts)])
    assert judged.verdict == expected
    assert judged.interval == "; ".join(f"c{i}: {j.interval}" for i, j in enumerate(parts))
    deciding = {HOLDS: min(parts, key=lambda j: j.low), INCONCLUSIVE: UNSURE, FAILS: DOWN}[expected]
    assert (judged.low, judged.high, judged.n) == (deciding.low, deciding.high, deciding.n)


@pytest.mark.parametrize("parts, k, expected", [
    ([UP, UP, DOWN], 2, HOLDS),
    ([UP, DOWN, DOWN], 2, FAILS),          # two of three against: two cannot hold
    ([UP, UNSURE, DOWN], 2, INCONCLUSIVE),  # the unsettled one decides
    ([UP, UNSURE, UNSURE, UNSURE], 1, HOLDS),
])
def test_at_least(parts, k, expected):
    assert at_least([(str(i), j) for i, j in enumerate(parts)], k).verdict == expected


def test_the_combinations_refuse_empty_or_impossible_counts():
    with pytest.raises(ValueError, match="at least one"):
        all_of([])
    with pytest.raises(ValueError, match="between 1 and the 2"):
        at_least([("a", UP), ("b", UP)], 3)


def test_at_level_asks_both_tests_at_the_claims_own_level():
    z = np.random.default_rng(3).normal(size=BASE.size)
    a = BASE + 0.012 + 0.1 * (z - z.mean()) / z.std(ddof=1)  # t = 0.012 / (0.1 / sqrt(300)), about 2.1
    t = paired_test(a, BASE)
    assert 0.01 < max(t.t_p, t.rand_p) < 0.05  # significant at 0.05, not at 0.01
    assert direction(a, BASE).verdict == at_level(a, BASE, 0.05).verdict == HOLDS
    strict = at_level(a, BASE, 0.01)
    assert strict.verdict == INCONCLUSIVE and strict.interval == direction(a, BASE).interval
    assert at_level(BASE - 0.05, BASE, 0.01).verdict == FAILS


def test_separated_compares_intervals_of_unpaired_differences():
    big, small = direction(moved(0.08, 0.05), BASE), direction(moved(0.01, 0.05, seed=2), BASE)
    assert big.low > small.high
    assert (separated(big, small), separated(small, big), separated(big, big)) == (HOLDS, FAILS, INCONCLUSIVE)


def test_a_published_constant_makes_the_one_sample_test():
    ours = np.array([0.41, 0.43, 0.42, 0.44])
    t = paired_test(ours, constant(0.40, ours.size))
    assert t.mean_diff == pytest.approx(0.025) and t.ci_low > 0
    assert constant(0.4, 3).tolist() == [0.4, 0.4, 0.4]


def test_the_combinations_are_stated_for_the_page():
    from structrank_lab.experiments.verdict_sets import rules_text

    text = rules_text()
    assert "**holds** when k or more hold" in text and "p = 0.01" in text and "one-sample" in text
