"""Two rules haponchyk2018's claims need, built from ``verdict_rules``' paired tests: a claim made of several
orderings (``every``) and "A beats B by more than x points" (``exceeds``)."""

from __future__ import annotations

import numpy as np

from structrank.experiments.claims import FAILS, HOLDS, INCONCLUSIVE
from structrank.experiments.verdict_rules import Judged, direction, not_below


def every(parts: dict) -> Judged:
    """A claim that holds when each of its parts (``{name: Judged}``) holds: it does not hold when any part does
    not, holds when all do, and is inconclusive otherwise. The interval names each part's.

    >>> from structrank.experiments.verdict_rules import direction
    >>> up, flat = direction([1.0, 2.0, 3.0], [0.0, 1.1, 2.0]), direction([1.0, 2.0, 3.0], [1.1, 1.9, 3.0])
    >>> every({"a": up}).verdict, every({"a": up, "b": flat}).verdict
    ('holds', 'inconclusive')
    """
    if not parts:
        raise ValueError("every() needs at least one part")
    judged = list(parts.values())
    failing, open_ = [j for j in judged if j.verdict == FAILS], [j for j in judged if j.verdict != HOLDS]
    verdict = FAILS if failing else INCONCLUSIVE if open_ else HOLDS
    decisive = (failing or open_ or judged)[0]  # the part that decides the verdict: its mean and interval
    text = "; ".join(f"{name}: {j.interval}" for name, j in parts.items())
    return Judged(verdict, text, decisive.mean_diff, decisive.low, decisive.high, min(j.n for j in parts.values()))


def exceeds(a, b, threshold, units="queries", scale=100.0, unit_name=" points") -> Judged:
    """The claim "A is above B by more than ``threshold``": holds when the whole interval of A - B lies above it,
    does not hold when the whole interval lies below it, else inconclusive (``not_below`` of A - ``threshold``
    against B with no margin). The interval printed is A - B's, with the threshold beside it."""
    a = np.asarray(a, dtype=np.float64)
    shifted = not_below(a - threshold, b, margin=0.0, units=units, scale=scale, unit_name=unit_name)
    plain = direction(a, b, units=units, scale=scale, unit_name=unit_name)
    return Judged(shifted.verdict, f"{plain.interval}; claimed above {scale * threshold:+.2f}", plain.mean_diff,
                  plain.low, plain.high, plain.n)
