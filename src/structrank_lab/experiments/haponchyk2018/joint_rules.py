"""Two rules haponchyk2018's claims need, built from ``verdict_rules``' paired tests: a claim made of several
orderings (``every``) and "A beats B by more than x points" (``exceeds``)."""

from __future__ import annotations

import dataclasses
import re

import numpy as np

from structrank_lab.experiments.verdict_rules import Judged, direction, not_below
from structrank_lab.experiments.verdict_sets import all_of


#: an interval as ``verdict_rules`` prints it: "+1.2 [+0.3, +2.1] points, n = 784 queries, p = 0.008<rest>"
_INTERVAL = re.compile(r"^(?P<diff>\S+ \[\S+, \S+\])(?P<unit>[^,]*), n = (?P<n>\d+) (?P<units>[^,]+), "
                       r"p = (?P<p>[^,;]+)(?P<rest>.*)$")


def _joined(parts: dict) -> str:
    """The parts' intervals, the unit and n said once when they share them."""
    found = {name: _INTERVAL.match(j.interval) for name, j in parts.items()}
    shared = {(m["unit"], m["n"], m["units"]) for m in found.values() if m}
    if None in found.values() or len(shared) != 1:
        return "; ".join(f"{name}: {j.interval}" for name, j in parts.items())
    unit, n, units = shared.pop()
    return ("; ".join(f"{name}: {m['diff']}, p = {m['p']}{m['rest']}" for name, m in found.items())
            + f" ({unit.strip() or 'difference'}; n = {n} {units})")


def every(parts: dict) -> Judged:
    """A claim that holds when each of its parts (``{name: Judged}``) holds: it does not hold when any part does
    not, holds when all do, and is inconclusive otherwise. The interval names each part's.

    >>> from structrank_lab.experiments.verdict_rules import direction
    >>> a = [0.5, 0.6, 0.7, 0.4, 0.9, 0.3, 0.8, 0.2]
    >>> up = direction(a, [x - 0.1 + 0.01 * (i % 3) for i, x in enumerate(a)], units="questions")
    >>> flat = direction(a, [x + (0.02 if i % 2 else -0.02) for i, x in enumerate(a)], units="questions")
    >>> every({"a": up}).verdict, every({"a": up, "b": flat}).verdict
    ('holds', 'inconclusive')
    >>> every({"a": up, "b": flat}).interval.endswith("(points; n = 8 questions)")
    True
    """
    if not parts:
        raise ValueError("every() needs at least one part")
    return dataclasses.replace(all_of(parts.items()), interval=_joined(parts))  # the unit and n said once


def exceeds(a, b, threshold, units="queries", scale=100.0, unit_name=" points") -> Judged:
    """The claim "A is above B by more than ``threshold``": holds when the whole interval of A - B lies above it,
    does not hold when the whole interval lies below it, else inconclusive (``not_below`` of A - ``threshold``
    against B with no margin). The interval printed is A - B's, with the threshold beside it."""
    a = np.asarray(a, dtype=np.float64)
    shifted = not_below(a - threshold, b, margin=0.0, units=units, scale=scale, unit_name=unit_name)
    plain = direction(a, b, units=units, scale=scale, unit_name=unit_name)
    return Judged(shifted.verdict, f"{plain.interval}, claimed above {scale * threshold:+.2f}", plain.mean_diff,
                  plain.low, plain.high, plain.n)
