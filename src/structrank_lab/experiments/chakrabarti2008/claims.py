"""Every claim of Chakrabarti et al. (2008), judged from the recorded runs.

The orderings and magnitudes are replications judged by ``verdict_rules`` over paired units: the test queries
of the five folds (Figs. 7 and 9: ``fig9_claims``), Fold1's training queries (Figs. 4-5) and the folds' timed
fits (Figs. 8 and 10: ``training_claims``); Fig. 6's |w|^2 > 0 is a check. The OHSUMED values of Fig. 9 are
judged against the paper's numbers per test query (``gap_claim``); the data sets the folder lacks are claims
that cannot be tested here.
"""

from __future__ import annotations

import numpy as np

from structrank_lab.experiments.chakrabarti2008.design import DATASETS, FIG9_METRICS, GAP_BAND, GAP_EVERY_ROW, PAPER_ROWS
from structrank_lab.experiments.chakrabarti2008.fig9_claims import fig9_claims
from structrank_lab.experiments.chakrabarti2008.judging import LITERAL, READINGS, compare, mrr_reading
from structrank_lab.experiments.chakrabarti2008.published import PAPER, PAPER_FIG9
from structrank_lab.experiments.chakrabarti2008.recorded import Recorded
from structrank_lab.experiments.chakrabarti2008.training_claims import sweep_claims, timing_claims
from structrank_lab.experiments.claims import UNTESTABLE, Claim, judged_claim, not_run
from structrank_lab.experiments.verdict_rules import even

GAP_WHERE, GAP_CLAIM = "Fig. 9 (OHSUMED)", "the values of Fig. 9 (after the preparation of Sec. 4.1)"


def query_gaps(recorded, variant, mrr=LITERAL, dataset="OHSUMED") -> tuple[dict, list]:
    """({(fold, qid): the query's mean over the criteria and metrics of ours minus the paper's}, the criteria) of
    a gap-study reading, SVM-mrr's row being ``mrr``; only the queries every recorded cell has."""
    paper = PAPER_FIG9[dataset]
    cells = {(row, i): recorded.units(dataset, "gap", mrr if row == LITERAL else row, metric, variant=variant)
             for row in PAPER_ROWS for i, metric in enumerate(FIG9_METRICS)}
    cells = {cell: values for cell, values in cells.items() if values}
    if not cells:
        return {}, []
    keys = set.intersection(*(set(v) for v in cells.values()))
    gaps = {k: float(np.mean([values[k] - paper[row][i] for (row, i), values in cells.items()])) for k in keys}
    return gaps, sorted({row for row, _ in cells}, key=PAPER_ROWS.index)


def cell_verdicts(recorded, variant, mrr=LITERAL, dataset="OHSUMED") -> dict:
    """{verdict: the number of Fig. 9 cells with it}: each cell's queries against the paper's value (``even``)."""
    paper = PAPER_FIG9[dataset]
    counts: dict = {}
    for row in PAPER_ROWS:
        for i, metric in enumerate(FIG9_METRICS):
            values = recorded.units(dataset, "gap", mrr if row == LITERAL else row, metric, variant=variant)
            judged = compare(even, values, dict.fromkeys(values, paper[row][i]), band=GAP_BAND)
            if judged is not None:
                counts[judged.verdict] = counts.get(judged.verdict, 0) + 1
    return counts


def gap_claim(recorded, reading) -> Claim:
    """Our OHSUMED Fig. 9 against the paper's, per test query over every criterion and metric (``even`` within
    ``GAP_BAND``), after Sec. 4.1's preparation as we read it, and with the good documents kept beside it
    (SVM-mrr: ``reading``'s primary)."""
    evidence = "e.g. AUC 0.799 / 0.635 / 0.582"
    judged = {}
    for variant in GAP_EVERY_ROW:
        gaps, rows = query_gaps(recorded, variant, reading.primary)
        found = compare(even, gaps, dict.fromkeys(gaps, 0.0), band=GAP_BAND)
        if found is not None:
            judged[variant] = (found, rows, cell_verdicts(recorded, variant, reading.primary))
    primary, other = GAP_EVERY_ROW
    if primary not in judged:
        return not_run(PAPER, GAP_WHERE, GAP_CLAIM, evidence, "the gap study's per-query test values (recorded since "
                       "an older store: run structrank reproduce chakrabarti2008 again)")
    first, rows, cells = judged[primary]
    ours = (f"ours minus the paper's, mean over {len(rows)} criteria x 3 metrics: {100 * first.mean_diff:+.1f} points; "
            "cells judged alone: " + ", ".join(f"{n} {v}" for v, n in sorted(cells.items())))
    beside = ""
    if other in judged:
        j, _, cells_other = judged[other]
        beside = (f"{j.verdict}: {j.interval} ({other}; cells: " +
                  ", ".join(f"{n} {v}" for v, n in sorted(cells_other.items())) + ")")
    return judged_claim(PAPER, GAP_WHERE, GAP_CLAIM, evidence, ours, first,
                        f"Each test query's mean over {', '.join(rows)} and the three metrics of ours minus the "
                        f"paper's value, against 0 (even: within {100 * GAP_BAND:g} points); see the gap study's table "
                        f"of both preparations. SVM-mrr's row: {READINGS[reading.primary]}.", setup=primary,
                        ours_setup=beside)


def claims(rows):
    """The claims of Chakrabarti et al. (2008) against this experiment's runs (``claims.Claim``)."""
    recorded = Recorded(rows)
    out = []
    datasets = [d for d in DATASETS if d in recorded.datasets()]
    for dataset in datasets:
        reading = mrr_reading(recorded, dataset)
        out += sweep_claims(recorded, dataset, reading)
        out += fig9_claims(recorded, dataset, reading)
        out += timing_claims(recorded, dataset)
    if "OHSUMED" in datasets:
        out.append(gap_claim(recorded, mrr_reading(recorded, "OHSUMED")))
    for name in ("TD2003", "TD2004"):
        if name not in datasets:
            out.append(Claim(PAPER, f"Figs. 8-9 ({name})", f"the {name} columns of Figs. 8-9", "Figs. 8-9", "—",
                             UNTESTABLE, f"LETOR 3.0 {name} is not in the data folder."))
    out.append(Claim(PAPER, "Fig. 9 (TREC 2000/2001)", "the TREC 2000/2001 columns (Yue et al.'s data)", "Fig. 9", "—",
                     UNTESTABLE, "Yue et al.'s TREC 2000/2001 files are not in the data folder."))
    return out
