"""What the claims of chakrabarti2008 share: the setups a claim is judged on (the paper's first), the paired
values of a setup, ``all_hold`` (a claim made of several paired comparisons), and the reading of Fact 3.5 that
the C sweep says reproduces the paper's training behaviour.

The setups. The paper's Fig. 9 was measured after its data preparation (Sec. 4.1), so the claims on Fig. 9 are
judged first on our files after that preparation, and again on the files as distributed (our earlier setup).
SVM-mrr has two readings of Fact 3.5: as written, the max-violator places the *lowest-scoring* good document
first (``svm-mrr-ideal``, row "MRR"); read as the best-scoring good document, the truth is imputed at w (the
latent variant, row "MRR latent"). The primary is the one whose training behaviour in the C sweep matches the
paper's Figs. 4-5, where SVM-mrr's slack falls as C grows: the latent one when its slack falls significantly more
than the literal one's (``mrr_reading``); the other is judged beside it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from structrank_lab.experiments.chakrabarti2008.design import BINARY, FIG9_METRICS, SLACK, sweep_ends
from structrank_lab.experiments.chakrabarti2008.published import PAPER
from structrank_lab.experiments.claims import HOLDS, judged_claim, not_run
from structrank_lab.experiments.verdict_rules import Judged, direction
from structrank_lab.experiments.verdict_sets import all_of
from structrank.metrics.significance import paired_units

PREPARED, DISTRIBUTED = "chakrabarti", "none"
PREPARATIONS = {PREPARED: "Sec. 4.1's preparation (zero rows and near-identical good/bad pairs dropped)",
                DISTRIBUTED: "the files as distributed"}
LATENT, LITERAL = "MRR latent", "MRR"
READINGS = {LATENT: "SVM-mrr with the best-scoring good document (svm-mrr-latent)",
            LITERAL: "SVM-mrr as Fact 3.5 is written, the lowest-scoring good document (svm-mrr-ideal)"}
TRAIN_UNITS = "Fold1 training queries"


@dataclass(frozen=True)
class Setup:
    """A preparation of the data and the row that stands for SVM-mrr."""

    prep: str
    mrr: str

    def name(self, uses_mrr=True) -> str:
        return PREPARATIONS[self.prep] + (f"; {READINGS[self.mrr]}" if uses_mrr else "")


def compare(rule, a: dict, b: dict, **options) -> Judged | None:
    """``rule`` (a ``verdict_rules`` function) over the paired units of ``a`` and ``b``; None without them."""
    pair = paired_units(a, b)
    return None if pair is None else rule(*pair, **options)


def all_hold(parts) -> Judged | None:
    """[(label, Judged)] as one claim (``verdict_sets.all_of``), or None when a part could not be judged."""
    if not parts or any(j is None for _, j in parts):
        return None
    return all_of(parts)


class Fig9:
    """One setup's binary-relevance test values of a data set, per test query pooled over the folds."""

    def __init__(self, recorded, dataset, setup: Setup):
        self.recorded, self.dataset, self.setup = recorded, dataset, setup

    def row(self, name: str) -> str:
        """The row that stands for ``name`` in this setup (SVM-mrr's reading)."""
        return self.setup.mrr if name == LITERAL else name

    def q(self, name: str, metric: str) -> dict:
        return self.recorded.units(self.dataset, "test", self.row(name), BINARY + metric, prep=self.setup.prep)

    def mean3(self, name: str) -> dict:
        """Each query's mean of the three Fig. 9 metrics (MRR@10, NDCG@10, MAP)."""
        each = [self.q(name, m) for m in FIG9_METRICS]
        keys = set(each[0]).intersection(*each[1:])
        return {k: float(np.mean([values[k] for values in each])) for k in keys}

    def mean(self, name: str, metric: str) -> float:
        values = list(self.q(name, metric).values())
        return float(np.mean(values)) if values else float("nan")

    def has(self, *names) -> bool:
        return all(self.q(n, FIG9_METRICS[0]) for n in names)


def setups(reading: "Reading", uses_mrr: bool) -> list:
    """The setups a Fig. 9 claim is judged on, the paper-faithful first."""
    out = [Setup(PREPARED, reading.primary)]
    if uses_mrr:
        out.append(Setup(PREPARED, reading.other))
    out.append(Setup(DISTRIBUTED, reading.primary))
    if uses_mrr:
        out.append(Setup(DISTRIBUTED, reading.other))
    return out


def fig9_claim(recorded, dataset, reading, where, claim, evidence, judge, uses_mrr=False, why=""):
    """A Fig. 9 claim judged by ``judge(Fig9) -> (Judged, ours) or None`` on every setup: the paper-faithful
    one's verdict, the others' in ``ours_setup``."""
    results = [(s, judge(Fig9(recorded, dataset, s))) for s in setups(reading, uses_mrr)]
    (first, found), others = results[0], results[1:]
    beside = "; ".join(f"{r[0].verdict}: {r[0].interval} ({s.name(uses_mrr)})" for s, r in others if r is not None)
    if found is None:  # the others' verdicts beside, when they were run (a quick run has the files as distributed)
        missing = not_run(PAPER, where, claim, evidence, f"the per-query test values of {first.name(uses_mrr)} "
                          "(not in an older store: run structrank reproduce chakrabarti2008 again)")
        return dataclasses.replace(missing, setup=first.name(uses_mrr), ours_setup=beside)
    judged, ours = found
    if uses_mrr:
        why = f"{why} {reading.note}".strip()
    return judged_claim(PAPER, where, claim, evidence, ours, judged, why, setup=first.name(uses_mrr),
                        ours_setup=beside)


def sweep_cs(recorded, dataset, row) -> list:
    """The C values of a sweep row within the range Figs. 4-5's claims compare (``sweep_ends``), ascending."""
    lo, hi = sweep_ends(row)
    return sorted(c for c in recorded.points(dataset, "train-sweep", row, "avg_slack", "C") if lo <= c <= hi)


def training_slacks(recorded, dataset, row, C) -> dict:
    """{(fold, qid): slack at termination} of a sweep row's fit at C."""
    return recorded.units(dataset, "train-sweep", row, SLACK, C=C)


def slack_drop(recorded, dataset, row) -> tuple:
    """(each training query's slack at the smallest C minus at the largest, (C_lo, C_hi)); ({}, None) without
    two values of C."""
    cs = sweep_cs(recorded, dataset, row)
    if len(cs) < 2:
        return {}, None
    lo, hi = training_slacks(recorded, dataset, row, cs[0]), training_slacks(recorded, dataset, row, cs[-1])
    return {k: lo[k] - hi[k] for k in set(lo) & set(hi)}, (cs[0], cs[-1])


@dataclass(frozen=True)
class Reading:
    """The reading of Fact 3.5 judged first (``primary``), the other, the measured reason (``note``, which the
    claims quote) and the sweep's numbers behind it (``detail``, which the report prints)."""

    primary: str
    other: str
    note: str
    detail: str = ""


def mrr_reading(recorded, dataset) -> Reading:
    """The reading of Fact 3.5 whose training slack falls more as C grows, as SVM-mrr's does in the paper's
    Figs. 4-5: each training query's slack at the smallest C minus at the largest (``slack_drop``), the latent
    reading's against the literal's (``direction``, paired over the queries). The literal reading (the paper's
    words) unless the latent one falls significantly more, and when the sweep has no per-query slacks."""
    drops = {row: slack_drop(recorded, dataset, row) for row in (LATENT, LITERAL)}
    judged = compare(direction, drops[LATENT][0], drops[LITERAL][0], units=TRAIN_UNITS, unit_name=" points of slack")
    if judged is None:
        return Reading(LITERAL, LATENT, "SVM-mrr: Fact 3.5 as written (the sweep's per-query slacks are not in the "
                                        "store, so which reading adapts was not measured).")
    primary = LATENT if judged.verdict == HOLDS else LITERAL
    other = LITERAL if primary == LATENT else LATENT
    note = (f"SVM-mrr: {READINGS[primary]}; on the C sweep the latent reading's training slack falls "
            f"{'' if primary == LATENT else 'not '}significantly more than the literal one's (drop, latent minus "
            f"literal: {judged.interval}).")
    detail = "Mean drop of the training slack, in points: " + "; ".join(
        f"{row}, C = {ends[0]:g} to {ends[1]:g}: {100 * np.mean(list(drop.values())):+.2f}"
        for row, (drop, ends) in drops.items()) + "."
    return Reading(primary, other, note, detail)
