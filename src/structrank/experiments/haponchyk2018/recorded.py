"""The recorded values of haponchyk2018 read back: the official split, the cross-validation folds, the dev
curves and the grid study."""

from __future__ import annotations

import json

import numpy as np

from structrank.experiments.haponchyk2018.design import CURVE_ROWS, GRID_STUDY, SUM_ROW
from structrank.experiments.haponchyk2018.published import PAPER_C_GRID


def _params(row):
    return row["params"] if isinstance(row["params"], dict) else json.loads(row["params"])


def _official(rows, feature_set, split, metric="map") -> dict:
    """{model: value} of the official split's runs on ``feature_set`` (Tables 1 and 2)."""
    return {r["model"]: r["value"] for r in rows if r["split"] == "official"
            and _params(r)["features"] == feature_set and r["metric"] == f"{split}:{metric}"}


def _official_map(rows, feature_set, split):
    """{model: MAP} of the official split's runs on ``feature_set``."""
    return _official(rows, feature_set, split)


def _cv(rows, dataset, feature_set, metric="map") -> dict:
    """{model: (mean, sample std, folds)} of the cross-validation test folds (Tables 3 and 4)."""
    values = {}
    for r in rows:
        if (r["split"] == "cv" and r["dataset"] == dataset and r["metric"] == f"test:{metric}"
                and _params(r)["features"] == feature_set):
            values.setdefault(r["model"], []).append(r["value"])
    return {m: (float(np.mean(v)), float(np.std(v, ddof=1)) if len(v) > 1 else 0.0, len(v)) for m, v in values.items()}


def _curves(rows, feature_set) -> dict:
    """{model: dev MAP after each epoch} of the official runs (Fig. 1)."""
    points = {}
    for r in rows:
        if (r["split"] == "official" and r["metric"].startswith("curve:") and r["model"] in CURVE_ROWS
                and _params(r)["features"] == feature_set):
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
    counts = {r["value"] for r in rows if r["model"] == SUM_ROW and r["metric"] == "train:queries"}
    return ", ".join(f"{int(c)}" for c in sorted(counts)) or "|Q|"
