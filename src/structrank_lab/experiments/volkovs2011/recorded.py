"""The recorded runs of volkovs2011 read back: the setting chosen on vali per fold and seed, the seed means,
the paired differences between rows, the same in points for the claims, and the units the claims' paired tests
run over (test queries pooled over the folds, seeds, folds and seeds)."""

from __future__ import annotations

import numpy as np

from structrank_lab.experiments.report import QUERY_PREFIX
from structrank_lab.experiments.run_key import params_of as _params
from structrank_lab.experiments.volkovs2011.design import CRF_RATE_GRID, DATASETS, NDCG, QUERY_METRIC, SELECT
from structrank.metrics.significance import paired_units


def _setting(params):
    return tuple(sorted((k, v) for k, v in params.items() if k != "max_epochs"))


def runs_by_setting(rows, dataset):
    """{(model, fold, seed, setting): {metric: value}} of one data set's runs."""
    runs = {}
    for r in rows:
        if r["dataset"] == dataset and r["split"] == "test":
            key = (r["model"], r["fold"], r["seed"], _setting(_params(r)))
            runs.setdefault(key, {})[r["metric"]] = r["value"]
    return runs


def selected(runs):
    """{(model, fold, seed): (setting, metrics)} with the setting of best vali NDCG (first in grid order on ties)."""
    best = {}
    for (model, fold, seed, setting), metrics in sorted(runs.items(), key=lambda kv: _order_key(kv[0])):
        key = (model, fold, seed)
        if key not in best or metrics[SELECT] > best[key][1][SELECT]:
            best[key] = (setting, metrics)
    return best


def _order_key(key):
    model, fold, seed, setting = key
    # grid order: the learning rate as listed, then alpha or T ascending
    rate = dict(setting).get("learning_rate")
    rank = CRF_RATE_GRID.index(rate) if rate in CRF_RATE_GRID else len(CRF_RATE_GRID)
    return (model, fold, seed, rank, setting)


def seed_means(chosen, model, metric):
    """{seed: mean over folds} of ``metric`` for one row's chosen runs."""
    by_seed = {}
    for (m, fold, seed), (_, metrics) in chosen.items():
        if m == model and metric in metrics:
            by_seed.setdefault(seed, []).append(metrics[metric])
    return {seed: float(np.mean(values)) for seed, values in sorted(by_seed.items())}


def paired_differences(chosen, model, reference="ML"):
    """{metric: [per-seed mean over folds of (model - reference)]}, paired by fold and seed."""
    out = {}
    for metric in NDCG:
        by_seed = {}
        for (m, fold, seed), (_, metrics) in chosen.items():
            other = chosen.get((reference, fold, seed))
            if m == model and other is not None:
                by_seed.setdefault(seed, []).append(metrics["test:" + metric] - other[1]["test:" + metric])
        out[metric] = [float(np.mean(v)) for _, v in sorted(by_seed.items())]
    return out


def _measured(rows):
    """{dataset: (runs, chosen)} of the data sets with runs in the store."""
    out = {}
    for dataset in DATASETS:
        runs = runs_by_setting(rows, dataset)
        if runs:
            out[dataset] = (runs, selected(runs))
    return out


def _points(chosen, model):
    """Test NDCG@1..5 of a row in points (mean over seeds of the fold means), or None if it did not run."""
    means = [seed_means(chosen, model, "test:" + m) for m in NDCG]
    return [100 * float(np.mean(list(v.values()))) for v in means] if means[0] else None


def _differences(chosen, a, b):
    """Paired test differences a - b at NDCG@1..5 in points, or None if either row did not run."""
    d = paired_differences(chosen, a, b)
    return [100 * float(np.mean(d[m])) for m in NDCG] if d[NDCG[0]] else None


def _fmt(values, sign=True):
    return ", ".join(f"{v:+.2f}" if sign else f"{v:.2f}" for v in values)


def _above(d):
    return sum(v > 0 for v in d)


# -- the units of the claims' paired tests --------------------------------------------------------


def query_values(chosen, model):
    """{(fold, qid): the query's test NDCG@1-5, the mean over the seeds} of a row's chosen runs ({} when the store
    records no per-query values, as before they were recorded)."""
    suffix = ":" + QUERY_METRIC
    by_query = {}
    for (m, fold, _), (_, metrics) in chosen.items():
        if m == model:
            for name, value in metrics.items():
                if name.startswith(QUERY_PREFIX) and name.endswith(suffix):
                    by_query.setdefault((fold, name[len(QUERY_PREFIX):-len(suffix)]), []).append(value)
    return {key: float(np.mean(v)) for key, v in by_query.items()}


def paired_queries(chosen, a, b):
    """(values of a, values of b) over the test queries both rows were measured on, or None if either has none."""
    return paired_units(query_values(chosen, a), query_values(chosen, b))


def seed_values(chosen, model, metrics=NDCG):
    """{seed: the 5-fold mean of the mean over ``metrics``} of a row's chosen runs (its test NDCG@1-5 by seed)."""
    per_metric = [seed_means(chosen, model, "test:" + m) for m in metrics]
    seeds = set.intersection(*(set(v) for v in per_metric))
    return {seed: float(np.mean([v[seed] for v in per_metric])) for seed in sorted(seeds)}


def run_values(chosen, model, metric=SELECT):
    """{(fold, seed): ``metric``} of a row's chosen runs."""
    return {(fold, seed): metrics[metric] for (m, fold, seed), (_, metrics) in chosen.items()
            if m == model and metric in metrics}
