"""The recorded values of haponchyk2018 read back: the official split, the cross-validation folds, the dev
curves, the grid study, and (``Recorded``, for the claims) each question's values and the seeds' curves.

A run counts for its feature set's setup (``counts``) unless it is SVM-map on a set that stands for the paper's
tuned on our C grid: a store written before SVM-map was tuned there on the paper's grid keeps such runs, and
they are left out rather than shown as the paper's setup. The tables are seed 0's runs (Alg. 1 in the file's
order); the other seeds are the perceptrons' Fig. 1 runs.
"""

from __future__ import annotations

import functools
import json

import numpy as np

from structrank_lab.experiments.haponchyk2018.design import (CURVE_ROWS, DEV_QUERY_PREFIX, GRID_STUDY, PAPER_GRID_SETS,
                                                         SUM_ROW)
from structrank_lab.experiments.haponchyk2018.published import PAPER_C_GRID
from structrank_lab.experiments.report import QUERY_PREFIX


@functools.lru_cache(maxsize=4096)
def _parsed(text: str) -> dict:
    return json.loads(text)


def _params(row) -> dict:
    """A row's parameters (shared: read, never change them)."""
    return row["params"] if isinstance(row["params"], dict) else _parsed(row["params"])


def _seed(row) -> int:
    return int(row.get("seed", 0) or 0)


def counts(row) -> bool:
    """Whether a run stands for its feature set's setup (see the module's docstring)."""
    p = _params(row)
    return not (row["model"] == "SVM-map" and row["split"] in ("official", "cv") and p.get("grid") != "quick"
                and p.get("features") in PAPER_GRID_SETS and p.get("c_grid") != "paper")


def _mine(row, split, feature_set, seed=0) -> bool:
    return (row["split"] == split and _seed(row) == seed and _params(row).get("features") == feature_set
            and counts(row))


def _official(rows, feature_set, split, metric="map") -> dict:
    """{model: value} of the official split's runs on ``feature_set`` (Tables 1 and 2)."""
    return {r["model"]: r["value"] for r in rows if r["metric"] == f"{split}:{metric}"
            and _mine(r, "official", feature_set)}


def _official_map(rows, feature_set, split):
    """{model: MAP} of the official split's runs on ``feature_set``."""
    return _official(rows, feature_set, split)


def _official_rows(rows, feature_set) -> list:
    """The official split's rows of ``feature_set`` that make its tables (seed 0, the setup's runs)."""
    return [r for r in rows if _mine(r, "official", feature_set)]


def _cv_rows(rows, dataset, feature_set) -> list:
    return [r for r in rows if r["dataset"] == dataset and _mine(r, "cv", feature_set)]


def _cv(rows, dataset, feature_set, metric="map") -> dict:
    """{model: (mean, sample std, folds)} of the cross-validation test folds (Tables 3 and 4)."""
    values = {}
    for r in _cv_rows(rows, dataset, feature_set):
        if r["metric"] == f"test:{metric}":
            values.setdefault(r["model"], []).append(r["value"])
    return {m: (float(np.mean(v)), float(np.std(v, ddof=1)) if len(v) > 1 else 0.0, len(v)) for m, v in values.items()}


def _curves(rows, feature_set, seed=0) -> dict:
    """{model: dev MAP after each epoch} of the official runs (Fig. 1)."""
    points = {}
    for r in rows:
        if r["metric"].startswith("curve:") and r["model"] in CURVE_ROWS and _mine(r, "official", feature_set, seed):
            points.setdefault(r["model"], []).append((int(r["metric"].split(":")[1]), r["value"]))
    return {m: np.array([v for _, v in sorted(p)]) for m, p in points.items()}


def _chosen(select: dict) -> float:
    """The C ``select_on_vali`` keeps: the best dev value, the smallest C on ties."""
    return max(select, key=lambda c: (select[c], -c))


def _study(rows, feature_set) -> dict:
    """{model: summary} of the grid study: the paper-grid choice, the extended choice, where it sits."""
    select, test = _study_values(rows, feature_set), _study_values(rows, feature_set, "test:map")
    out = {}
    for model, values in select.items():
        base = [c for c in GRID_STUDY[model] if c in values]
        paper_grid = [c for c in PAPER_C_GRID if c in values] if model != "SVM" else []
        points = sorted(values)
        best = _chosen(values)
        out[model] = {
            "points": points, "select": values, "test": test.get(model, {}),
            "missing": [c for c in GRID_STUDY[model] if c not in values],
            "base_choice": _chosen({c: values[c] for c in base}) if base else None,
            "paper_choice": _chosen({c: values[c] for c in paper_grid}) if paper_grid else None,
            "paper_complete": model != "SVM" and all(c in values for c in PAPER_C_GRID),
            "choice": best, "at_edge": best in (points[0], points[-1]) and len(points) > 1,
        }
    return out


def _study_values(rows, feature_set, value="select:map") -> dict:
    """{model: {C: value}} of the grid study's runs on ``feature_set``."""
    out = {}
    for r in rows:
        if r["split"] == "grid" and r["metric"] == value and _params(r)["features"] == feature_set:
            out.setdefault(r["model"], {})[float(_params(r)["C"])] = r["value"]
    return out


def _number(c: float) -> str:
    return f"{c:g}"


def _sum_queries(rows) -> str:
    sizes = {r["value"] for r in rows if r["model"] == SUM_ROW and r["metric"] == "train:queries"}
    return ", ".join(f"{int(c)}" for c in sorted(sizes)) or "|Q|"


def _question_key(metric: str):
    """("test" | "dev", qid, metric) of a per-question value's name, else None."""
    for prefix, which in ((QUERY_PREFIX, "test"), (DEV_QUERY_PREFIX, "dev")):
        if metric.startswith(prefix):
            qid, _, name = metric[len(prefix):].rpartition(":")
            return which, qid, name
    return None


class Recorded:
    """The rows of a store read once for the claims: each question's values and the seeds' dev curves.

    ``questions(...)`` is {(fold, qid): value} (fold 0 on the official split; the cross-validation's test folds
    pooled, each question in one of them); ``curves(feature_set)`` is {model: {seed: dev MAP per epoch}}.
    """

    def __init__(self, rows):
        self.rows = rows
        self._questions, self._grid, curves = {}, {}, {}
        for r in rows:
            key = _question_key(r["metric"])
            p = _params(r)
            if key is not None:
                which, qid, name = key
                if r["split"] == "grid":
                    self._grid.setdefault((p["features"], r["model"], float(p["C"]), name), {})[(0, qid)] = r["value"]
                elif counts(r):
                    where = (r["split"], r["dataset"], p["features"], _seed(r), r["model"], which, name)
                    self._questions.setdefault(where, {})[(int(r["fold"]), qid)] = r["value"]
            elif r["metric"].startswith("curve:") and r["split"] == "official" and counts(r):
                curves.setdefault((p["features"], r["model"], _seed(r)), []).append(
                    (int(r["metric"].split(":")[1]), r["value"]))
        self._curves = {k: np.array([v for _, v in sorted(points)]) for k, points in curves.items()}

    def questions(self, feature_set, model, split="test", metric="map", kind="official", dataset="wikiqa", seed=0):
        """{(fold, qid): value} of one model's questions (empty when not recorded)."""
        return self._questions.get((kind, dataset, feature_set, seed, model, split, metric), {})

    def grid_questions(self, feature_set, model, c, metric="map") -> dict:
        """{(0, qid): test value} of one grid-study fit."""
        return self._grid.get((feature_set, model, float(c), metric), {})

    def curves(self, feature_set) -> dict:
        """{model: {seed: dev MAP per epoch}} of the Fig. 1 rows' official runs on ``feature_set``."""
        out = {}
        for (fs, model, seed), values in self._curves.items():
            if fs == feature_set:
                out.setdefault(model, {})[seed] = values
        return out
