"""How many seeds per row would settle an inconclusive paired target, projected from the kept runs: a hypothesis.

A paired interval over test questions, each question's value the mean over a row's seeds, is wide for two reasons:
the questions differ in how the two rows rank them, which more seeds do not change, and each question's value moves
from seed to seed, which averaging over S seeds divides by S. Both are estimated from the runs: the seeds' part as
each question's sample variance over a row's seeds, averaged over the questions; the questions' part as what is left
of the measured variance of the differences. The projection keeps the measured mean difference, so it says what more
seeds could settle, not what they would find.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy import stats

from structrank_lab.experiments.neural_qa.design import ALPHA

#: the most seeds per row a projection looks at
MAX_SEEDS = 50
#: the seed counts the sentence gives the half-width at, beside today's
SHOWN = (5, 10)


class Projection(NamedTuple):
    """The measured mean difference over ``n`` questions with ``seeds_now`` seeds per row (the fewer of the two), the
    variance of a question's difference that seeds do not change (``questions``) and that of one seed per row
    (``seed``), and the first seed count up to ``MAX_SEEDS`` at which the interval would clear ``-margin`` or lie
    wholly below it (``settles_at``, None: none does) with the verdict it would give."""

    mean: float
    n: int
    seeds_now: int
    questions: float
    seed: float
    settles_at: int | None
    settles_as: str | None


def half_width(p: Projection, seeds=None) -> float:
    """The paired interval's half-width at ``ALPHA`` with ``seeds`` per row (None: seeds without end)."""
    t = float(stats.t.ppf(1 - ALPHA / 2, p.n - 1))
    return t * float(np.sqrt((p.questions + (p.seed / seeds if seeds else 0.0)) / p.n))


def _seed_variance(values) -> float:
    """The mean over questions of each question's sample variance over the seeds (rows: seeds)."""
    return float(np.var(values, axis=0, ddof=1).mean())


def project(a, b, margin, target=None) -> Projection | None:
    """``a``, ``b``: (seeds, questions) arrays of two rows' values on the same questions; ``b`` None compares ``a``
    with the constant ``target``. None when a row has fewer than two seeds (its seeds' spread is unknown)."""
    sides = [np.asarray(a, dtype=np.float64)] + ([] if b is None else [np.asarray(b, dtype=np.float64)])
    if min(side.shape[0] for side in sides) < 2:
        return None
    difference = sides[0].mean(axis=0) - (target if b is None else sides[1].mean(axis=0))
    seed = sum(_seed_variance(side) for side in sides)  # one seed per row: the seeds' part of the variance
    measured = sum(_seed_variance(side) / side.shape[0] for side in sides)  # that part in the measured variance
    questions = max(0.0, float(np.var(difference, ddof=1)) - measured)
    p = Projection(float(difference.mean()), difference.size, min(side.shape[0] for side in sides), questions, seed,
                   None, None)
    for seeds in range(p.seeds_now + 1, MAX_SEEDS + 1):
        h = half_width(p, seeds)
        if p.mean - h >= -margin or p.mean + h < -margin:
            return p._replace(settles_at=seeds, settles_as="holds" if p.mean - h >= -margin else "does not hold")
    return p


def sentence(p: Projection | None, against: str) -> str:
    """The projection in words, labelled a hypothesis (``against``: the threshold the interval is judged by, in
    words); empty without one."""
    if p is None:
        return ""
    shown = "".join(f", {s} seeds ±{100 * half_width(p, s):.2f}" for s in SHOWN if s > p.seeds_now)
    head = (f" Projection, a hypothesis (the measured mean difference {100 * p.mean:+.2f} kept, each question's "
            f"spread over seeds as measured): {p.seeds_now} seeds per row give ±{100 * half_width(p, p.seeds_now):.2f} "
            f"points{shown}")
    if p.settles_at is not None:
        return f"{head}; the interval would settle ({p.settles_as}) from {p.settles_at} seeds per row."
    return (f"{head}; no number of seeds up to {MAX_SEEDS} would settle it against {against}: the questions alone "
            f"leave ±{100 * half_width(p):.2f}.")
