"""The runs of chakrabarti2008 (Fig. 9 and Fig. 7 on the test files, the C sweep, the timed fits, the gap
study) and ``reproduce``."""

from __future__ import annotations

import dataclasses
import functools
import time

import numpy as np

from structrank.data import letor_folds, read_letor
from structrank.data.prepare import prepare_like_chakrabarti
from structrank_lab.experiments.chakrabarti2008.design import (BINARY, DATASETS, EXPERIMENT, FIG9_METRICS, GAP_ALL_ROWS,
                                                           GAP_BEST_C, GAP_EVERY_ROW, GAP_ROWS, GAP_TREC, GAP_VARIANTS,
                                                           METRICS, MRR_KS, PREPARED_ROWS, QUERY_PREFIX, QUICK, ROWS,
                                                           SLACK, SWEEP, SWEEP_C, SWEEP_FIXED, TIMING, TIMING_ROUNDS,
                                                           sweep_scale)
from structrank_lab.experiments.chakrabarti2008.published import PAPER_FIG9
from structrank_lab.experiments.chakrabarti2008.report import report_sections
from structrank_lab.experiments.chakrabarti2008.training import query_slacks
from structrank_lab.experiments.runner import Measurement, RunSpec, paper_model, reproduce_letor_experiment
from structrank.learners.registry import fit_and_score, select_on_vali
from structrank.metrics import evaluate


@functools.lru_cache(maxsize=12)
def _load(path: str, n_features: int | None, prep: str, variant: str | None = None):
    data = read_letor(path, n_features=n_features, sparse=True)
    if variant is not None:  # the gap study: binary labels at the reading's threshold, then its preparation
        v = GAP_VARIANTS[variant]
        data = dataclasses.replace(data, y=(data.y >= v["good"]).astype(np.int64))
        if v["prep"] and (prep != "test" or v["test"]):
            data, _ = prepare_like_chakrabarti(data, threshold=v["threshold"], drop=v["drop"])
    elif prep == "chakrabarti":
        data, _ = prepare_like_chakrabarti(data)
    return data


def _fold(root, name, prep):
    fold = next(f for f in letor_folds(root) if f.name == name)
    train = _load(str(fold.train), None, prep)
    return train, _load(str(fold.vali), train.n_features, prep), _load(str(fold.test), train.n_features, prep)


def binarize(y):
    return (np.asarray(y) >= 1).astype(np.int64)


def per_query(result, convention, prefix=""):
    """Each test query's value of the Fig. 9 metrics, as ``q:<qid>:<prefix><metric>`` (the claims' units)."""
    return [Measurement(f"{QUERY_PREFIX}{q}:{prefix}{m}", convention, float(v))
            for m in FIG9_METRICS for q, v in zip(result.qids, result.per_query[m])]


def _test_run(spec, root):
    label = spec.model
    name, fixed, grid = ROWS[label]
    if spec.params.get("grid") == "quick":
        grid = QUICK.get(label, grid)
    convention = DATASETS[spec.dataset]
    train, vali, test = _fold(root, spec.fold, spec.params["prep"])
    model_spec = paper_model(name)
    model, params, _ = select_on_vali(model_spec, train, vali, fixed, convention=convention, grid=grid)
    start = time.perf_counter()
    model_spec.make(**params).fit(train)  # timed once more at the chosen parameters (Fig. 10)
    seconds = time.perf_counter() - start
    scores = model.predict(test.X)
    out = [Measurement(m, convention, v) for m, v in
           evaluate(test.y, scores, test.qid, METRICS, convention, docids=test.docids).metrics.items()]
    binary = evaluate(binarize(test.y), scores, test.qid, ["map", *(f"mrr@{k}" for k in MRR_KS), "ndcg@10"],
                      convention, docids=test.docids)
    out += [Measurement(BINARY + m, convention, v) for m, v in binary.metrics.items()]
    out += per_query(binary, convention, BINARY)
    out += [Measurement("train_seconds", "time", seconds)]
    chosen = {**params, **(params.get("loss_params") or {})}  # the loss's options as the model's own (dorm_cut)
    out += [Measurement(f"chosen:{k}", "param", float(v)) for k, v in chosen.items() if isinstance(v, (int, float))]
    return out


def _gap_run(spec, root):
    variant = spec.params["variant"]
    fold = next(f for f in letor_folds(root) if f.name == spec.fold)
    train = _load(str(fold.train), None, "train", variant)
    vali = _load(str(fold.vali), train.n_features, "vali", variant)
    test = _load(str(fold.test), train.n_features, "test", variant)
    name, fixed, grid = ROWS[spec.model]
    model_spec = paper_model(name)
    convention = DATASETS[spec.dataset]
    # every grid point, scored on vali (the choice) and on test (what a better choice of C could close)
    fits = [(params, *fit_and_score(model_spec, params, train, vali, convention))
            for params in model_spec.candidates(fixed, grid)]
    results = [evaluate(test.y, model.predict(test.X), test.qid, list(FIG9_METRICS), convention, docids=test.docids)
               for _, model, _ in fits]
    tests = [result.metrics for result in results]
    chosen = max(range(len(fits)), key=lambda i: (fits[i][2], -i))  # the first of equals, as select_on_vali
    params, model, _ = fits[chosen]
    out = [Measurement(m, convention, v) for m, v in tests[chosen].items()]
    out += per_query(results[chosen], convention)
    trec = evaluate(test.y, model.predict(test.X), test.qid, list(FIG9_METRICS), "trec", docids=test.docids)
    out += [Measurement(GAP_TREC + m, "trec", v) for m, v in trec.metrics.items()]
    out += [Measurement(GAP_BEST_C + m, convention, max(t[m] for t in tests)) for m in FIG9_METRICS]
    out += [Measurement(f"chosen:{k}", "param", float(v)) for k, v in params.items() if isinstance(v, (int, float))]
    out += [Measurement("test_queries", "count", test.n_queries)]
    return out


def _fit_once(name, params, data):
    start = time.perf_counter()
    model = paper_model(name).make(**params).fit(data)
    return model, time.perf_counter() - start


def _sweep_run(spec, root):
    train, _, _ = _fold(root, spec.fold, "none")
    model, seconds = _fit_once(SWEEP[spec.model], {"C": spec.params["C"], **SWEEP_FIXED.get(spec.model, {})}, train)
    qids, slacks = query_slacks(model, train)
    return [
        Measurement("avg_slack", "train", model.slack_),
        Measurement("objective_ratio", "train", model.objective_ / model.zero_objective_),
        Measurement("zero_objective", "train", model.zero_objective_),
        Measurement("w_norm2", "train", float(model.coef_ @ model.coef_)),
        Measurement("iterations", "train", model.n_iter_),
        Measurement("converged", "train", float(model.converged_)),
        Measurement("seconds", "time", seconds),
    ] + [Measurement(f"{QUERY_PREFIX}{q}:{SLACK}", "train", float(v)) for q, v in zip(qids, slacks)]


def _timing_run(spec, root):
    train, _, _ = _fold(root, spec.fold, "none")
    name, params = TIMING[spec.model]
    _fit_once(name, params, train.take_queries(np.arange(min(5, train.n_queries))))  # compile first
    model, seconds = min((_fit_once(name, params, train) for _ in range(TIMING_ROUNDS)), key=lambda fit: fit[1])
    out = [Measurement("seconds", "time", seconds)]
    if hasattr(model, "oracle_seconds_"):
        out += [Measurement("oracle_seconds", "time", model.oracle_seconds_),
                Measurement("qp_seconds", "time", model.qp_seconds_),
                Measurement("iterations", "train", model.n_iter_)]
    return out


def _run(spec, root):
    kind = {"test": _test_run, "train-sweep": _sweep_run, "train-timing": _timing_run, "gap": _gap_run}[spec.split]
    return kind(spec, root)


def plan(roots, quick=False):
    """The runs of the reproduction (``quick``: MQ2008 Fold1, small grids, a few rows)."""
    specs = []
    grid = "quick" if quick else "full"
    for dataset, root in roots.items():
        folds = [f.name for f in letor_folds(root)][: 1 if quick else None]
        rows = list(QUICK) if quick else list(ROWS)
        for prep in ("none",) if quick else ("none", "chakrabarti"):
            for fold in folds:
                for row in rows:
                    if prep != "none" and row not in PREPARED_ROWS:
                        continue
                    specs.append(RunSpec(EXPERIMENT, dataset, "test", fold, 0, row, {"prep": prep, "grid": grid}))
        first = folds[0]
        for row in SWEEP:
            cs = SWEEP_C[sweep_scale(row)]
            for C in cs[1:3] if quick else cs:
                specs.append(RunSpec(EXPERIMENT, dataset, "train-sweep", first, 0, row, {"C": C}))
        for fold in folds:  # every fold: the units of the timing claims
            specs += [RunSpec(EXPERIMENT, dataset, "train-timing", fold, 0, row, {})
                      for row in (list(TIMING)[:2] if quick else TIMING)]
        if dataset in PAPER_FIG9 and not quick:
            specs += [RunSpec(EXPERIMENT, dataset, "gap", fold, 0, row, {"variant": variant})
                      for variant in GAP_VARIANTS for fold in folds
                      for row in (GAP_ALL_ROWS if variant in GAP_EVERY_ROW else GAP_ROWS)]
    return specs


def reproduce(out, data_dir=None, quick=False, n_jobs=1, keep=None):
    """Run the experiments (``quick``: MQ2008 Fold1 only) and write the report into ``out``."""
    return reproduce_letor_experiment(out, EXPERIMENT, DATASETS, plan, _run, report_sections,
                                      "Chakrabarti et al. (2008), reproduced", data_dir, quick, n_jobs, keep)
