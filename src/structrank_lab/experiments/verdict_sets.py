"""Claims made of several paired comparisons, judged from ``verdict_rules``' judgements of each.

A paper often claims several comparisons at once ("KL beats every other objective", "the baseline rerankers
beat the HMM in Chinese and Swedish but not in English and French", "in most reranker-language pairs"). Each
comparison is judged by a ``verdict_rules`` rule over its own paired units; these functions give the claim's
verdict from theirs, with every interval printed:

- ``all_of``: the claim needs every comparison; it holds when each holds, does not hold when one does not,
  and is inconclusive otherwise (no comparison contradicts it, some are not settled). Holding needs every
  test to reject on its own, so no correction for the number of comparisons is needed.
- ``at_least``: "in most cases", "in at least k of n": holds when k or more hold, does not hold when so many
  do not hold that fewer than k can, inconclusive otherwise.
- ``at_level``: ``verdict_rules.direction`` at another level than ``verdict_rules.ALPHA``, for a claim that
  names its own ("significant at p = 0.01").
- ``separated``: two differences measured on different units (two languages' test sets), which cannot be
  paired: the first is larger when its 95% confidence interval lies wholly above the second's, smaller when wholly
  below, inconclusive when they overlap (conservative: overlapping intervals can still differ).

``rules_text`` states them for the page, beside ``verdict_rules.rules_text``.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from structrank_lab.experiments.verdicts import FAILS, HOLDS, INCONCLUSIVE
from structrank_lab.experiments.verdict_rules import Judged, direction
from structrank.metrics.significance import paired_test


def _labelled(parts) -> str:
    return "; ".join(f"{label}: {judged.interval}" for label, judged in parts)


def _combined(verdict, parts, deciding) -> Judged:
    """A Judged with ``verdict``, every part's interval, and the numbers of the ``deciding`` part."""
    return Judged(verdict, _labelled(parts), deciding.mean_diff, deciding.low, deciding.high, deciding.n)


def all_of(parts) -> Judged:
    """The claim of every comparison in ``parts`` ([(label, Judged)], non-empty).

    >>> from structrank_lab.experiments.verdict_rules import Judged
    >>> yes, unsure = Judged(HOLDS, "+1", 1, 0.5, 1.5, 9), Judged(INCONCLUSIVE, "+0.1", 0.1, -1, 1, 9)
    >>> all_of([("a", yes), ("b", yes)]).verdict, all_of([("a", yes), ("b", unsure)]).verdict
    ('holds', 'inconclusive')
    >>> all_of([("a", yes), ("b", unsure)]).interval
    'a: +1; b: +0.1'
    """
    parts = list(parts)
    if not parts:
        raise ValueError("all_of needs at least one comparison")
    verdicts = [j.verdict for _, j in parts]
    for wanted in (FAILS, INCONCLUSIVE):  # the first comparison that stops the claim decides its numbers
        if wanted in verdicts:
            return _combined(wanted, parts, parts[verdicts.index(wanted)][1])
    return _combined(HOLDS, parts, min((j for _, j in parts), key=lambda j: j.low))


def at_least(parts, k: int) -> Judged:
    """The claim "at least ``k`` of the comparisons in ``parts`` hold" ([(label, Judged)]).

    >>> from structrank_lab.experiments.verdict_rules import Judged
    >>> yes, no = Judged(HOLDS, "+1", 1, 0.5, 1.5, 9), Judged(FAILS, "-1", -1, -1.5, -0.5, 9)
    >>> unsure = Judged(INCONCLUSIVE, "0", 0, -1, 1, 9)
    >>> [at_least(p, 2).verdict for p in ([("a", yes), ("b", yes), ("c", no)], [("a", yes), ("b", no), ("c", no)],
    ...                                     [("a", yes), ("b", unsure), ("c", no)])]
    ['holds', 'does not hold', 'inconclusive']
    """
    parts = list(parts)
    if not 1 <= k <= len(parts):
        raise ValueError(f"k must be between 1 and the {len(parts)} comparisons, got {k}")
    held = [j for _, j in parts if j.verdict == HOLDS]
    failed = [j for _, j in parts if j.verdict == FAILS]
    if len(held) >= k:
        return _combined(HOLDS, parts, held[0])
    if len(parts) - len(failed) < k:
        return _combined(FAILS, parts, failed[0])
    return _combined(INCONCLUSIVE, parts, next(j for _, j in parts if j.verdict == INCONCLUSIVE))


def at_level(a, b, alpha: float, **options) -> Judged:
    """``direction(a, b)`` judged at level ``alpha``: both tests must reject at ``alpha``.

    The interval printed is still ``direction``'s (the 95% confidence interval), with the larger p-value, which the
    reader compares with ``alpha``.
    """
    judged = direction(a, b, **options)
    t = paired_test(np.asarray(a, dtype=np.float64).ravel(), np.asarray(b, dtype=np.float64).ravel())
    if not t.significant(alpha):
        return dataclasses.replace(judged, verdict=INCONCLUSIVE)
    return dataclasses.replace(judged, verdict=HOLDS if t.mean_diff > 0 else FAILS)


def separated(first: Judged, second: Judged) -> str:
    """Is the difference ``first`` larger than ``second`` (measured on other units)? HOLDS when ``first``'s
    interval lies wholly above ``second``'s, FAILS when wholly below, INCONCLUSIVE when they overlap.

    >>> from structrank_lab.experiments.verdict_rules import Judged
    >>> separated(Judged(HOLDS, "", 0.6, 0.4, 0.8, 9), Judged(HOLDS, "", 0.1, 0.0, 0.2, 9))
    'holds'
    >>> separated(Judged(HOLDS, "", 0.3, 0.1, 0.5, 9), Judged(HOLDS, "", 0.2, 0.0, 0.4, 9))
    'inconclusive'
    """
    if first.low > second.high:
        return HOLDS
    if first.high < second.low:
        return FAILS
    return INCONCLUSIVE


def constant(value: float, n: int) -> np.ndarray:
    """A published number as the other side of a paired test over ``n`` units: the test of our values against it
    is the one-sample test of their mean."""
    return np.full(int(n), float(value))


def rules_text() -> str:
    """The combinations as the page should state them, beside ``verdict_rules.rules_text``."""
    return "\n".join([
        "A claim of several comparisons combines their verdicts, each printed with its interval:",
        "",
        "- *every comparison* (\"A beats B, C and D\"): **holds** when each holds, **does not hold** when one does not, "
        "otherwise inconclusive;",
        "- *k of n* (\"in most cases\", \"in at least 3 of 4 languages\"): **holds** when k or more hold, **does not "
        "hold** when fewer than k can, otherwise inconclusive;",
        "- a claim that names its own significance level (\"significant at p = 0.01\") asks both tests at that level;",
        "- two differences on units that cannot be paired (two languages' test sets): the first is larger when its "
        "95% confidence interval lies wholly above the second's, smaller when wholly below, otherwise inconclusive;",
        "- a published number without per-unit values is the other side of a test over our seeds (the one-sample "
        "test of their mean).",
    ])
