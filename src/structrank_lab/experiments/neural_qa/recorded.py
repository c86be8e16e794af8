"""The recorded runs of neural-qa read back: values by row and seed, their means, the dev curves, the run times and
the paired tests over test questions, which the report and the claims share."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from structrank_lab.experiments.neural_qa.design import ALPHA, CURVE_PREFIX, DATASETS, PEERS, ROWS, STRUCTURED, TUNED
from structrank_lab.experiments.report import per_query, query_values
from structrank.metrics.compare import against_baseline


def values(rows, dataset, metric) -> dict:
    """{row: [value of each seed's run, seed order]} of one recorded metric, rows in ``ROWS``' order."""
    found: dict = {}
    for r in sorted(rows, key=lambda r: int(r["seed"])):
        if r["dataset"] == dataset and r["metric"] == metric and r["value"] is not None:
            found.setdefault(r["model"], []).append(float(r["value"]))
    return {row: found[row] for row in (*ROWS, *sorted(set(found) - set(ROWS))) if row in found}


def means(rows, dataset, metric) -> dict:
    """{row: mean over its seeds} of one recorded metric."""
    return {row: float(np.mean(v)) for row, v in values(rows, dataset, metric).items()}


def datasets(rows) -> list:
    """The data sets with recorded runs, in the design's order."""
    present = {r["dataset"] for r in rows}
    return [d for d in DATASETS if d in present]


def curves(rows, dataset) -> dict:
    """{row: (epochs, mean dev MAP over the seeds at each epoch)} of the fine-tuned rows."""
    points: dict = {}
    for r in rows:
        if r["dataset"] == dataset and r["metric"].startswith(CURVE_PREFIX) and r["value"] is not None:
            points.setdefault(r["model"], {}).setdefault(int(r["metric"][len(CURVE_PREFIX):]), []).append(r["value"])
    return {row: (np.array(sorted(points[row])), np.array([np.mean(points[row][e]) for e in sorted(points[row])]))
            for row in TUNED if row in points}


def paired(rows, dataset, baseline, systems=STRUCTURED, metric="map") -> list:
    """[PairedRow] of each of ``systems`` against ``baseline`` over the test questions both were measured on, each
    question's value the mean over the row's seeds; Holm-adjusted across ``systems``. Empty without the baseline."""
    table = {name: per_query(rows, dataset, name, metric) for name in (baseline, *systems)}
    table = {name: v for name, v in table.items() if v}
    if baseline not in table or len(table) < 2:
        return []
    return against_baseline(table, baseline, metric)


def verdict(row, baseline) -> str:
    """The paired test's verdict at ``ALPHA`` (both tests, Holm-adjusted)."""
    return row.verdict(baseline, ALPHA)


def against(rows, dataset, metric="map") -> dict:
    """{baseline: [PairedRow]} of the structured losses against each of sentence-transformers' losses."""
    return {baseline: found for baseline in PEERS if (found := paired(rows, dataset, baseline, STRUCTURED, metric))}


def best_on_dev(rows, dataset, candidates):
    """The row of ``candidates`` with the best mean dev MAP on ``dataset`` (whose test questions are recorded), or
    None: a choice made on dev, never on the test values it is judged on."""
    dev = means(rows, dataset, "dev:map")
    present = [row for row in candidates if row in dev and len(per_query(rows, dataset, row, "map")) >= 2]
    return max(present, key=dev.get) if present else None


class Timed(NamedTuple):
    """One run's wall time and torch threads (None when not recorded)."""

    seconds: float
    threads: int | None
    seed: int
    dataset: str
    row: str


def timed_runs(rows, models) -> list:
    """[Timed] of every run of the rows ``models``."""
    seconds, threads = {}, {}
    for r in rows:
        if r["model"] in models and r["metric"] in ("time:wall", "run:threads"):
            key = (r["dataset"], r["model"], int(r["seed"]))
            (seconds if r["metric"] == "time:wall" else threads)[key] = float(r["value"])
    return [Timed(wall, None if (dataset, model, seed) not in threads else int(threads[dataset, model, seed]), seed,
                  dataset, model) for (dataset, model, seed), wall in sorted(seconds.items())]


def by_seed(rows, dataset, row, metric="map") -> dict:
    """{seed: {(fold, question): value}} of one row's test questions, each seed's run apart."""
    found: dict = {}
    for seed, question, value in query_values(rows, dataset, row, metric):
        if value is not None:
            found.setdefault(int(seed), {})[question] = float(value)
    return found


def seed_count(rows, dataset, row) -> int:
    return len(values(rows, dataset, "test:map").get(row, []))
