"""The store of chakrabarti2008 read once for the claims: each run's per-unit values (test queries, training
queries) and its scalar measurements, found by dataset, split, row, metric and the run's parameters."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from structrank_lab.experiments.chakrabarti2008.design import QUERY_PREFIX
from structrank_lab.experiments.run_key import params_of as _params


class Recorded:
    """The runs of one store, indexed: ``units`` (per-query values, keyed by (fold, qid)) and ``scalar``.

    >>> rows = [{"dataset": "D", "split": "test", "model": "A", "params": '{"prep": "none"}', "fold": "Fold1",
    ...          "metric": "q:7:map", "value": 0.5}]
    >>> Recorded(rows).units("D", "test", "A", "map", prep="none")
    {('Fold1', '7'): 0.5}
    """

    def __init__(self, rows):
        self._units = defaultdict(list)  # (dataset, split, model, metric) -> [(params, fold, qid, value)]
        self._scalars = defaultdict(list)  # (dataset, split, model, metric) -> [(params, fold, value)]
        self._found: dict = {}  # the answers of ``units``: the claims ask for the same values many times
        for r in rows:
            key_start = (r["dataset"], r["split"], r["model"])
            metric = r["metric"]
            if metric.startswith(QUERY_PREFIX):
                qid, _, name = metric[len(QUERY_PREFIX):].partition(":")
                self._units[(*key_start, name)].append((_params(r), r.get("fold"), qid, r["value"]))
            else:
                self._scalars[(*key_start, metric)].append((_params(r), r.get("fold"), r["value"]))

    @staticmethod
    def _matches(params, wanted):
        return all(params.get(k) == v for k, v in wanted.items())

    def units(self, dataset, split, model, metric, **params) -> dict:
        """{(fold, qid): value} of the runs whose parameters include ``params``; empty when none was recorded."""
        key = (dataset, split, model, metric, tuple(sorted(params.items())))
        if key not in self._found:
            self._found[key] = {(fold, qid): value for p, fold, qid, value in self._units.get(key[:4], ())
                                if self._matches(p, params) and value is not None and np.isfinite(value)}
        return dict(self._found[key])

    def by_fold(self, dataset, split, model, metric, **params) -> dict:
        """{fold: value} of a scalar measurement (one run per fold)."""
        return {fold: value for p, fold, value in self._scalars.get((dataset, split, model, metric), ())
                if self._matches(p, params) and value is not None and np.isfinite(value)}

    def points(self, dataset, split, model, metric, key) -> dict:
        """{the run's parameter ``key``: value} of a scalar measurement (the C sweep: {C: value})."""
        return {p[key]: value for p, _, value in self._scalars.get((dataset, split, model, metric), ())
                if key in p and value is not None}

    def mean(self, dataset, split, model, metric, **params) -> float:
        values = list(self.by_fold(dataset, split, model, metric, **params).values())
        return float(np.mean(values)) if values else float("nan")

    def datasets(self) -> set:
        return {key[0] for key in (*self._units, *self._scalars)}
