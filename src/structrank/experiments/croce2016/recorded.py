"""The recorded runs of croce2016 read back: the sweep by landmarks and seeds, the single runs, and which
landmark counts come close to the full SVM."""

from __future__ import annotations

import json

import numpy as np

from structrank.experiments.croce2016.design import DATASET, FULL

# The claims' tolerances (stated in each claim's `why`)
CLOSE = 0.01  # "the same", "comparable", "negligible drop": within one MAP or F1 point
STEP_TOL = 0.005  # "grows with the landmarks": no step down by more than half a point (Table 1's own dip is 0.1)


def collect(rows):
    """{(split, model, landmarks or None, seed, dataset, fold): {metric: value}}."""
    runs = {}
    for r in rows:
        params = r["params"] if isinstance(r["params"], dict) else json.loads(r["params"])
        key = (r["split"], r["model"], params.get("landmarks"), int(r["seed"]), r["dataset"], r["fold"])
        runs.setdefault(key, {})[r["metric"]] = r["value"]
    return runs


def sweep(runs):
    """{landmarks: {seed: metrics}} of the Nyström runs."""
    out = {}
    for (split, model, m, seed, _, _), metrics in runs.items():
        if split == "nystroem":
            out.setdefault(m, {})[seed] = metrics
    return dict(sorted(out.items()))


def _single(runs, split, model):
    """The metrics of a run without landmarks or seeds (full SVM, linear SVM, IR, kernel columns), or None."""
    return runs.get((split, model, None, 0, DATASET, ""))


def _full(runs, model=next(iter(FULL))):
    return _single(runs, "full", model)


def _means(points, metric):
    """{landmarks: mean of ``metric`` over the landmark samples (seeds)} of a sweep."""
    return {m: float(np.mean([v[metric] for v in by_seed.values()])) for m, by_seed in points.items()}


def _close_counts(points, full):
    """The landmark counts whose mean test MAP is at most ``CLOSE`` below the full SVM's."""
    return [m for m, v in _means(points, "test:map").items() if v >= full["test:map"] - CLOSE]


def saving(landmarks, full):
    """Share of the full SVM's kernel evaluations per test pair (its support vectors) avoided."""
    return 1.0 - landmarks / full["support_vectors"]
