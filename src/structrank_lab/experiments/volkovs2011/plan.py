"""The runs of volkovs2011 (one CRF per fold, seed, objective and setting) and ``reproduce``."""

from __future__ import annotations

import functools
import itertools
import sys
import time
from pathlib import Path

import numpy as np

from structrank.data import letor_folds, read_letor
from structrank_lab.experiments.report import QUERY_PREFIX, write_report
from structrank_lab.experiments.runner import Measurement, RunSpec, SpecRun, dataset_inputs, letor_roots, run_experiment
from structrank_lab.experiments.volkovs2011.design import (CONVENTION, CRF_RATE_GRID, DATASETS, EXPERIMENT, MAX_EPOCHS,
                                                       NDCG, QUERY_METRIC, QUICK_ROWS, ROWS, SEEDS, SELECT,
                                                       TEST_METRICS)
from structrank_lab.experiments.volkovs2011.report import report_sections
from structrank.learners.crf import PermutationCRFRanker
from structrank.metrics import evaluate


@functools.lru_cache(maxsize=16)
def _fold(root, name):
    fold = next(f for f in letor_folds(root) if f.name == name)
    # CSR, as when docs/RESULTS.md was made (read_letor's default is dense for LETOR files; sklearn's
    # linear regression, liblinear and LightGBM may differ in the last bits between the two)
    train = read_letor(fold.train, sparse=True)
    return (train, read_letor(fold.vali, n_features=train.n_features, sparse=True),
            read_letor(fold.test, n_features=train.n_features, sparse=True))


def grid_points(row, quick=False):
    """The settings of a row, in a fixed order: dicts of learning_rate and alpha or T."""
    extra = ROWS[row][1]
    grid = {"learning_rate": CRF_RATE_GRID, **extra}
    if quick:
        grid = {**grid, **QUICK_ROWS.get(row, {})}
    keys = sorted(grid)
    return [dict(zip(keys, values)) for values in itertools.product(*(grid[k] for k in keys))]


def _run(spec, root):
    """One CRF trained on one fold at one setting: its dev choice, test metrics (and each test query's mean NDCG@1-5,
    for the paired tests of the claims) and the data's counts."""
    train, vali, test = _fold(root, spec.fold)
    objective, _, skip, shuffle = ROWS[spec.model]
    params = {k: v for k, v in spec.params.items() if k in ("learning_rate", "alpha", "T")}
    model = PermutationCRFRanker(objective=objective, max_epochs=spec.params["max_epochs"], skip_single_level=skip,
                                 shuffle=shuffle, random_state=spec.seed, dev_metric=",".join(NDCG),
                                 dev_convention=CONVENTION, **params)
    start = time.perf_counter()
    model.fit(train, eval_set=vali)
    seconds = time.perf_counter() - start
    out = [Measurement(SELECT, CONVENTION, float(model.dev_curve_.max())),
           Measurement("best_epoch", "train", model.best_epoch_),
           Measurement("train_seconds", "time", seconds),
           Measurement("queries_used", "train", model.n_queries_used_)]
    result = evaluate(test.y, model.predict(test.X), test.qid, TEST_METRICS, CONVENTION)
    per_query = np.mean([result.per_query[m] for m in NDCG], axis=0)
    queries = [Measurement(f"{QUERY_PREFIX}{q}:{QUERY_METRIC}", CONVENTION, float(v))
               for q, v in zip(result.qids, per_query)]
    data = [Measurement(f"data:{split}_{name}", "data", value) for split, ds in (("train", train), ("vali", vali),
                                                                                  ("test", test))
            for name, value in data_counts(ds).items()]
    return out + [Measurement("test:" + m, CONVENTION, v) for m, v in result.metrics.items()] + queries + data


def data_counts(ds):
    """What Sec. 6.1 says of the data, counted on one file: queries, documents, lowest and highest label,
    and the queries whose documents all share one label (recorded with every run, for :func:`claims`)."""
    levels = [np.unique(ds.y[a:b]).size for a, b in zip(ds.offsets[:-1], ds.offsets[1:])]
    return {"queries": ds.n_queries, "documents": ds.n_rows, "min_label": int(ds.y.min()),
            "max_label": int(ds.y.max()), "single_level_queries": sum(n == 1 for n in levels)}


def plan(roots, quick=False):
    """Every (dataset, fold, seed, row, setting) run (``quick``: MQ2008 Fold1, one seed, ML and KL at one setting)."""
    specs = []
    for dataset, root in roots.items():
        folds = [f.name for f in letor_folds(root)][: 1 if quick else None]
        for fold, seed, row in itertools.product(folds, SEEDS[: 1 if quick else None], QUICK_ROWS if quick else ROWS):
            for point in grid_points(row, quick):
                specs.append(RunSpec(EXPERIMENT, dataset, "test", fold, seed, row,
                                     {**point, "max_epochs": 20 if quick else MAX_EPOCHS}))
    return specs


def reproduce(out, data_dir=None, quick=False, n_jobs=1, keep=None):
    """Run the sweeps (``quick``: MQ2008 Fold1, one seed, two settings) and write the report into ``out``."""
    roots = letor_roots(DATASETS, data_dir, only="MQ2008" if quick else None)
    rows = run_experiment(out, plan(roots, quick), SpecRun.per_dataset(_run, roots), n_jobs, EXPERIMENT, data=roots.values(),
                          inputs=dataset_inputs(roots), kept=keep)
    write_report(Path(out) / "report.md", report_sections(rows, out),
                 title="Volkovs, Larochelle & Zemel (2011), reproduced")
    print(f"wrote {Path(out) / 'results.csv'} and {Path(out) / 'report.md'}", file=sys.stderr)
    return rows
