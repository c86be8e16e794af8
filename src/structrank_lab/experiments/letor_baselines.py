"""LETOR baselines: pointwise linear regression and pairwise RankSVM on every fold.

``structrank reproduce letor-baselines`` trains each baseline on a fold's train file, picks its
parameter from the model's grid on the vali file (MAP), and measures the test file under the
data set's own convention (MQ2008: letor4, OHSUMED: letor3). The structured rankers of the later
issues are measured the same way, so their numbers sit next to these.

Each test is also measured over the test queries that have a relevant document only (metrics
prefixed ``nonempty:``), since the LETOR scripts count a query without one as 0 in every mean.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import numpy as np

from structrank.data import letor_folds, letor_root, read_letor
from structrank_lab.experiments.report import markdown_table, write_report
from structrank.figures import cutoff_line, new_figure, save_figure
from structrank_lab.experiments.runner import Measurement, RunSpec, SpecRun, dataset_inputs, run_experiment
from structrank.learners.registry import get_model, select_on_vali
from structrank.metrics import evaluate

EXPERIMENT = "letor-baselines"
DATASETS = {"MQ2008": "letor4", "OHSUMED": "letor3"}
METRICS = ("map", "mrr", "ndcg@1", "ndcg@2", "ndcg@3", "ndcg@4", "ndcg@5", "ndcg@10", "p@1", "p@5", "p@10")
MODELS = ("linreg", "ranksvm")
#: the NDCG cut-offs measured (METRICS) and drawn
NDCG_KS = (1, 2, 3, 4, 5, 10)
# --quick: a smaller grid, so that the whole quick run takes seconds.
QUICK_GRIDS = {"linreg": {"alpha": [0.0, 1.0]}, "ranksvm": {"C": [0.01, 0.1]}}
# Metrics also measured on the queries that have a relevant document, to show what counting the
# others as 0 (the convention of the LETOR scripts) does to a mean; prefixed "nonempty:".
NONEMPTY_PREFIX = "nonempty:"


@functools.lru_cache(maxsize=8)
def _load(path: str, n_features: int | None = None):
    return read_letor(path, n_features=n_features, sparse=True)


def fit_select_evaluate(model_name, train_path, vali_path, test_path, convention, metrics=METRICS, grid=None):
    """Fit every grid point on train, keep the best on vali (MAP), and measure it on test.

    Returns (measurements, chosen parameters). The measurements include the metrics over the
    test queries that have a relevant document, named with the ``nonempty:`` prefix.
    """
    train = _load(str(train_path))
    vali = _load(str(vali_path), train.n_features)
    test = _load(str(test_path), train.n_features)
    model, params, _ = select_on_vali(get_model(model_name), train, vali, convention=convention, grid=grid)
    scores = model.predict(test.X)
    result = evaluate(test.y, scores, test.qid, metrics, convention, docids=test.docids)
    measurements = [Measurement(name, convention, value) for name, value in result.metrics.items()]
    nonempty = result.qids[np.add.reduceat(test.y >= 1, test.offsets[:-1]) > 0]
    rows = np.isin(test.qid, nonempty)
    part = evaluate(test.y[rows], scores[rows], test.qid[rows], metrics, convention)
    measurements += [Measurement(NONEMPTY_PREFIX + name, convention, value) for name, value in part.metrics.items()]
    return measurements, params


def _run(spec: RunSpec, root: str):
    fold = next(f for f in letor_folds(root) if f.name == spec.fold)
    grid = QUICK_GRIDS[spec.model] if spec.params.get("grid") == "quick" else None
    measurements, _ = fit_select_evaluate(spec.model, fold.train, fold.vali, fold.test, DATASETS[spec.dataset],
                                          grid=grid)
    return measurements


def ndcg_figure(rows, dataset, convention, path):
    """Test NDCG@k against k for each baseline: the mean over the folds that measured it. The line
    joins adjacent cut-offs only (NDCG@6-9 are not measured, nor is a metric missing from the rows)."""
    fig = new_figure(figsize=(5, 3.5))
    ax = fig.add_subplot()
    for model in MODELS:
        values = [[r["value"] for r in rows if r["model"] == model and r["metric"] == f"ndcg@{k}"] for k in NDCG_KS]
        cutoff_line(ax, NDCG_KS, [np.mean(v) if v else np.nan for v in values], label=model)
    ax.set_xlabel("k")
    ax.set_ylabel(f"NDCG@k ({convention})")
    ax.set_title(f"{dataset}: baselines, test folds")
    ax.legend()
    save_figure(fig, path)


def reproduce(out, data_dir=None, quick=False, n_jobs=1, keep=None):
    """Run the baselines on every fold (``quick``: MQ2008 Fold1-2) and write the report into ``out``."""
    out = Path(out)
    roots, specs = {}, []
    for dataset in DATASETS:
        root = letor_root(dataset, data_dir)
        if root is None:
            print(f"{dataset}: not in the data folder, skipped", file=sys.stderr)
            continue
        if quick and dataset != "MQ2008":
            continue
        roots[dataset] = str(root)
        folds = letor_folds(root)[: 2 if quick else None]
        params = {"select": "vali-map", "grid": "quick" if quick else "full"}
        specs += [RunSpec(EXPERIMENT, dataset, "test", f.name, 0, m, params) for f in folds for m in MODELS]
    if not specs:
        raise FileNotFoundError("no LETOR data set found (looked for MQ2008 and OHSUMED under the data folder)")
    out.mkdir(parents=True, exist_ok=True)
    rows = run_experiment(out, specs, SpecRun.per_dataset(_run, roots), n_jobs, EXPERIMENT, data=roots.values(),
                          inputs=dataset_inputs(roots), kept=keep)
    sections = []
    for dataset in roots:
        part = [r for r in rows if r["dataset"] == dataset and not r["metric"].startswith(NONEMPTY_PREFIX)]
        nonempty = [{**r, "metric": r["metric"][len(NONEMPTY_PREFIX):]} for r in rows
                    if r["dataset"] == dataset and r["metric"].startswith(NONEMPTY_PREFIX)]
        convention = DATASETS[dataset]
        sections.append((f"{dataset} test, mean ± std over folds ({convention} convention)",
                         markdown_table(part, column_order=list(METRICS), std=True)))
        sections.append((f"{dataset} test, only the queries with a relevant document ({convention} rules otherwise)",
                         "The LETOR scripts count a query without relevant documents as 0 in every mean; "
                         "papers that drop such queries report the numbers below.\n\n"
                         + markdown_table(nonempty, column_order=list(METRICS), std=True)))
        ndcg_figure(part, dataset, convention, out / f"{dataset.lower()}_ndcg.png")
        sections.append(f"![{dataset} NDCG@k]({dataset.lower()}_ndcg.png)")
    write_report(out / "report.md", sections, title="LETOR baselines (linear regression, RankSVM)")
    print(f"wrote {out / 'results.csv'} and {out / 'report.md'}", file=sys.stderr)
    return rows
