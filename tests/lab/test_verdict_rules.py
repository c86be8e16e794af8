"""The verdict rules (experiments.verdict_rules) on paired values whose answer is known, and the claims
table's counts (replications apart from checks, three verdicts from tests)."""

from __future__ import annotations

import numpy as np
import pytest

from structrank_lab.experiments.claims import (CHECK, FAILS, HOLDS, INCONCLUSIVE, REPLICATION, UNTESTABLE, Claim, check,
                                           claims_section, judged_claim)
from structrank_lab.experiments.verdict_rules import MARGIN, direction, even, magnitude, not_below, rules_text

RNG = np.random.default_rng(0)
BASE = RNG.uniform(0.2, 0.8, 400)


def shifted(shift, noise):
    """BASE moved by ``shift`` plus paired noise of scale ``noise``."""
    return BASE + shift + np.random.default_rng(1).normal(0.0, noise, BASE.size)


@pytest.mark.parametrize("shift, noise, expected", [
    (+0.03, 0.05, HOLDS),          # clearly better
    (-0.03, 0.05, FAILS),          # clearly worse
    (+0.002, 0.2, INCONCLUSIVE),   # inside the noise: the interval allows both
])
def test_direction(shift, noise, expected):
    judged = direction(shifted(shift, noise), BASE)
    assert judged.verdict == expected
    assert (judged.low > 0 or judged.high < 0) == (expected != INCONCLUSIVE)  # no verdict on an interval with 0


@pytest.mark.parametrize("shift, noise, expected", [
    (0.0, 0.01, HOLDS),              # tight around 0: inside +-1 point
    (+0.05, 0.01, FAILS),            # wholly above the band
    (0.0, 0.3, INCONCLUSIVE),        # too wide to tell
])
def test_even(shift, noise, expected):
    assert even(shifted(shift, noise), BASE).verdict == expected


@pytest.mark.parametrize("shift, noise, expected", [
    (-0.002, 0.01, HOLDS),           # a little below, within the margin
    (-0.05, 0.01, FAILS),            # wholly below -1 point
    (-0.01, 0.2, INCONCLUSIVE),
])
def test_not_below(shift, noise, expected):
    assert not_below(shifted(shift, noise), BASE).verdict == expected


def test_magnitude():
    assert magnitude(shifted(0.013, 0.005), BASE, claimed=0.013, band=0.005).verdict == HOLDS
    assert magnitude(shifted(0.0004, 0.005), BASE, claimed=0.013, band=0.005).verdict == FAILS
    assert magnitude(shifted(0.013, 0.3), BASE, claimed=0.013, band=0.005).verdict == INCONCLUSIVE


def test_interval_is_printed_in_points():
    judged = direction(shifted(0.03, 0.05), BASE, units="queries")
    mean = 100 * judged.mean_diff
    assert judged.interval.startswith(f"{mean:+.2f} [") and "n = 400 queries" in judged.interval


def test_claims_section_counts_replications_apart_from_checks():
    claims = [judged_claim("P", "Fig. 1", "A beats B", "e", "o", direction(shifted(0.03, 0.05), BASE)),
              judged_claim("P", "Fig. 2", "A beats C", "e", "o", direction(shifted(0.001, 0.3), BASE)),
              check("P", "Eq. 3", "an identity", "e", "o", True),
              Claim("P", "Fig. 9", "TD2003", "e", "—", UNTESTABLE, "not in the data folder")]
    text = claims_section(claims)
    assert text.startswith("3 replications: 1 holds, 0 does not hold, 1 inconclusive, 1 cannot be tested here. "
                           "1 checks: 1 holds, 0 does not hold, 0 inconclusive, 0 cannot be tested here.")
    assert rules_text() in text and f"{100 * MARGIN:g} point" in text
    rows = [line for line in text.splitlines() if line.startswith("| P |")]
    assert [row.split(" | ")[2] for row in rows] == [REPLICATION] * 3 + [CHECK]  # replications first
    assert "[+" in rows[0] and "—" in rows[3]  # an interval beside each judged verdict


def test_kind_and_verdict_are_checked():
    with pytest.raises(ValueError, match="kind"):
        Claim("P", "w", "c", "e", "o", HOLDS, kind="anecdote")
    with pytest.raises(ValueError, match="verdict"):
        Claim("P", "w", "c", "e", "o", "probably")
