"""``structrank reproduce chakrabarti2008``: the experiments of Chakrabarti et al. (2008), KDD.

On LETOR 3.0 OHSUMED and LETOR 4.0 MQ2008, five folds each (TD2003/TD2004 too when the data folder
has them; they are not in ours, nor are the paper's TREC 2000/2001, whose SVMlight files the reader
accepts):

- Fig. 9: test MRR@10, NDCG@10 and MAP for each training criterion (AUC, MAP, NDCG, NDCG-NC,
  MRR, COMBO, DORM, McRank), C chosen on vali from ``ROWS``' grid (by the criterion's own
  metric); RankSVM and LambdaMART beside them. Measured on the official test files under the
  data set's convention, and with binary relevance (the paper's G = z; prefix ``binary:``), both
  on the files as distributed and after the data preparation of Sec. 4.1 (``prep``).
- Fig. 7: test MRR@k, k = 1..10, of SVM-mrr with phi_mrr against phi_po.
- Figs. 4-6: average slack, objective / objective(w = 0) and |w|^2 at termination against C,
  on Fold1's training file.
- Figs. 8 and 10: time in the oracle and in the QP, DORM (dense and sparse A) against SVM-ndcg,
  and McRank's training time beside SVM-ndcg's and SVM-mrr's, on Fold1's training file.
- The OHSUMED gap study (split ``gap``): SVM-auc, SVM-map and SVM-ndcg-nc under other readings of
  Sec. 4.1 and of "good" (``GAP_VARIANTS``), each measured also under trec_eval's conventions and
  with C chosen on the test file (an upper bound of what C selection can explain); the report
  says how many of the points between our Fig. 9 and the paper's each reading closes.

The report puts the paper's OHSUMED cells beside ours in Fig. 9 and the latent targets beside the
paper's in Figs. 4-6, gives the rows the text describes (sparse DORM, SVM-combo with shared slacks
and with phi_mrr, the latent targets), and ``claims`` judges each claim of the paper.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import time
from pathlib import Path

import numpy as np

from structrank.data import letor_folds, read_letor
from structrank.data.prepare import prepare_like_chakrabarti
from structrank.experiments.claims import UNTESTABLE, Claim, hypothesis, not_run, verdict_of
from structrank.experiments.report import markdown_table
from structrank.figures import new_figure, save_figure
from structrank.experiments.runner import Measurement, RunSpec, paper_model, reproduce_letor_experiment
from structrank.learners.registry import fit_and_score, select_on_vali
from structrank.metrics import evaluate

EXPERIMENT = "chakrabarti2008"
# TD2003/TD2004 (LETOR 3.0 Gov, the paper's other LETOR sets) run when the data folder has them.
DATASETS = {"OHSUMED": "letor3", "MQ2008": "letor4", "TD2003": "letor3", "TD2004": "letor3"}

# The structural SVMs' C grids (the paper gives none). phi_po is scaled by 1/(n+ n-) and phi_dorm by its
# decay; phi_mrr (a count of documents) is not, so the same C means a much weaker regulariser for it: its
# grid is lower. The latent hinge only counts the top of the list, so a useful w is larger for the same
# slack: on OHSUMED Fold1 the latent SVM-mrr was best at C = 0.1-10 and the latent SVM-ndcg kept improving
# up to C = 10^4.
C_GRID = {"C": [0.001, 0.01, 0.1, 1.0, 10.0, 100.0]}
MRR_C_GRID = {"C": [1e-5, 1e-4, 0.001, 0.01, 0.1]}
LATENT_C_GRID = {"C": [0.01, 0.1, 1.0, 10.0, 100.0, 1000.0]}
# Fig. 9 rows: label -> (CLI model name, fixed parameters, grid; None: the model's documented grid)
ROWS = {
    "AUC": ("svm-auc", {}, C_GRID),
    "MAP": ("svm-map", {}, C_GRID),
    "NDCG": ("svm-ndcg-ideal", {}, C_GRID),
    "NDCG-graded": ("svm-ndcg-ideal", {"gain": "exp2"}, C_GRID),  # not in the paper: gains 2^label - 1
    "NDCG-NC": ("svm-ndcg-nc", {}, C_GRID),
    "MRR": ("svm-mrr-ideal", {}, MRR_C_GRID),
    "COMBO": ("svm-combo", {}, C_GRID),
    "DORM": ("dorm-ideal", {}, C_GRID),
    "McRank": ("mcrank", {"n_estimators": 30}, {"num_leaves": [7, 31]}),
    "RankSVM": ("ranksvm", {}, {"C": [0.001, 0.01, 0.1]}),  # larger C takes minutes per fit on OHSUMED
    "LambdaMART": ("lambdamart", {}, None),
    "MRR-po": ("svm-mrr-ideal", {"feature_map": "po"}, C_GRID),  # Fig. 7
    # not in the paper's Fig. 9: the variants its text describes, and the latent targets
    "DORM sparse": ("dorm-ideal", {"dorm_cut": 30}, C_GRID),  # Sec. 4.4: A(.) cut after rank 30
    "COMBO shared": ("svm-combo", {"slacks": "shared"}, C_GRID),  # Sec. 3.7: one slack per query
    "COMBO phi_mrr": ("svm-combo", {"components": ("map", "ndcg", "ndcg-nc", "mrr")}, C_GRID),  # MRR with phi_mrr
    "NDCG latent": ("svm-ndcg-latent", {}, LATENT_C_GRID),
    "MRR latent": ("svm-mrr-latent", {}, LATENT_C_GRID),
    "DORM latent": ("dorm-latent", {"dorm_cut": 30}, LATENT_C_GRID),
}
PAPER_ROWS = ("AUC", "MAP", "NDCG", "NDCG-NC", "MRR", "COMBO", "DORM", "McRank")
QUICK = {"AUC": {"C": [1.0]}, "MAP": {"C": [0.1, 1.0]}, "NDCG": {"C": [1.0]}, "MRR": {"C": [0.001]},
         "DORM": {"C": [1.0]}, "McRank": {"num_leaves": [7]}, "MRR-po": {"C": [1.0]}}

METRICS = ("map", "mrr@10", "ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "p@1", "p@5", "p@10")
FIG9_METRICS = ("mrr@10", "ndcg@10", "map")
MRR_KS = tuple(range(1, 11))
BINARY = "binary:"

# Published Fig. 9 values (MRR@10, NDCG@10, MAP) for OHSUMED, LETOR's older release after the
# paper's own preparation; printed beside ours, never used in a computation of ours.
PAPER_FIG9 = {
    "OHSUMED": {
        "AUC": (0.799, 0.635, 0.582), "MAP": (0.808, 0.642, 0.586), "NDCG": (0.790, 0.636, 0.581),
        "NDCG-NC": (0.818, 0.640, 0.582), "MRR": (0.795, 0.623, 0.570), "COMBO": (0.813, 0.635, 0.578),
        "DORM": (0.807, 0.637, 0.583), "McRank": (0.701, 0.565, 0.527),
    }
}

# Figs. 4-6: the C sweep. phi_mrr is not scaled by 1/(n+ n-), so its C range is lower.
SWEEP = {"AUC": "svm-auc", "MAP": "svm-map", "NDCG": "svm-ndcg-ideal", "MRR": "svm-mrr-ideal", "DORM": "dorm-ideal",
         "NDCG latent": "svm-ndcg-latent", "MRR latent": "svm-mrr-latent", "DORM latent": "dorm-latent"}
SWEEP_C = {"po": [0.01, 0.1, 1.0, 10.0, 100.0], "scaled": [1e-4, 0.001, 0.01, 0.1, 1.0],
           "latent": [0.01, 0.1, 1.0, 10.0, 100.0, 1000.0]}
SWEEP_FIXED = {"DORM latent": {"dorm_cut": 30}}
# file names of the Figs. 4-6 plots
FIGURE = {"avg_slack": "fig4-avg-slack", "objective_ratio": "fig5-objective-ratio", "w_norm2": "fig6-w-norm"}
# Figs. 8 and 10: training time at one C
TIMING = {
    "SVM-ndcg": ("svm-ndcg-ideal", {"C": 1.0}),
    "SVM-mrr": ("svm-mrr-ideal", {"C": 0.001}),
    "DORM": ("dorm-ideal", {"C": 1.0}),
    "DORM sparse A (cut 30)": ("dorm-ideal", {"C": 1.0, "dorm_cut": 30}),
    "McRank": ("mcrank", {"n_estimators": 30}),
}


# The OHSUMED gap study: rows (fast phi_po learners with a paper value) and readings of Sec. 4.1.
# Each reading: prepare the files (drop "both" or only the "bad" document of a near-identical
# pair, cosine threshold), prepare the test file too or not, and where "good" starts.
GAP_ROWS = ("AUC", "MAP", "NDCG-NC")
GAP_VARIANTS = {
    "ours (Sec. 4.1 as read for Fig. 9)": {"prep": True, "drop": "both", "threshold": 0.99, "test": True, "good": 1},
    "files as distributed (no preparation)": {"prep": False, "good": 1},
    "test file untouched (train and vali prepared)": {"prep": True, "drop": "both", "threshold": 0.99, "test": False,
                                                      "good": 1},
    "good documents kept (only the bad one of a pair dropped)": {"prep": True, "drop": "bad", "threshold": 0.99,
                                                                 "test": True, "good": 1},
    "identical vectors only (cosine > 0.99999)": {"prep": True, "drop": "both", "threshold": 0.99999, "test": True,
                                                  "good": 1},
    "good = label 2 (definitely relevant only)": {"prep": True, "drop": "both", "threshold": 0.99, "test": True,
                                                  "good": 2},
}
GAP_TREC = "trec:"  # the same ranking measured under trec_eval's conventions
GAP_BEST_C = "bestC:"  # each metric at the C that is best for it on the test file


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
    out += [Measurement("train_seconds", "time", seconds)]
    out += [Measurement(f"chosen:{k}", "param", float(v)) for k, v in params.items() if isinstance(v, (int, float))]
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
    tests = [evaluate(test.y, model.predict(test.X), test.qid, list(FIG9_METRICS), convention,
                      docids=test.docids).metrics for _, model, _ in fits]
    chosen = max(range(len(fits)), key=lambda i: (fits[i][2], -i))  # the first of equals, as select_on_vali
    params, model, _ = fits[chosen]
    out = [Measurement(m, convention, v) for m, v in tests[chosen].items()]
    trec = evaluate(test.y, model.predict(test.X), test.qid, list(FIG9_METRICS), "trec", docids=test.docids)
    out += [Measurement(GAP_TREC + m, "trec", v) for m, v in trec.metrics.items()]
    out += [Measurement(GAP_BEST_C + m, convention, max(t[m] for t in tests)) for m in FIG9_METRICS]
    out += [Measurement("chosen:C", "param", float(params["C"])), Measurement("test_queries", "count", test.n_queries)]
    return out


def _fit_once(name, params, data):
    start = time.perf_counter()
    model = paper_model(name).make(**params).fit(data)
    return model, time.perf_counter() - start


def _sweep_run(spec, root):
    train, _, _ = _fold(root, spec.fold, "none")
    model, seconds = _fit_once(SWEEP[spec.model], {"C": spec.params["C"], **SWEEP_FIXED.get(spec.model, {})}, train)
    return [
        Measurement("avg_slack", "train", model.slack_),
        Measurement("objective_ratio", "train", model.objective_ / model.zero_objective_),
        Measurement("w_norm2", "train", float(model.coef_ @ model.coef_)),
        Measurement("iterations", "train", model.n_iter_),
        Measurement("converged", "train", float(model.converged_)),
        Measurement("seconds", "time", seconds),
    ]


def _timing_run(spec, root):
    train, _, _ = _fold(root, spec.fold, "none")
    name, params = TIMING[spec.model]
    _fit_once(name, params, train.take_queries(np.arange(min(5, train.n_queries))))  # compile first
    model, seconds = _fit_once(name, params, train)
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
                    if prep != "none" and row not in PAPER_ROWS:
                        continue
                    specs.append(RunSpec(EXPERIMENT, dataset, "test", fold, 0, row, {"prep": prep, "grid": grid}))
        first = folds[0]
        for row, name in SWEEP.items():
            scale = "latent" if "latent" in row else "scaled" if row == "MRR" else "po"
            for C in SWEEP_C[scale][1:3] if quick else SWEEP_C[scale]:
                specs.append(RunSpec(EXPERIMENT, dataset, "train-sweep", first, 0, row, {"C": C}))
        for row in list(TIMING)[:2] if quick else TIMING:
            specs.append(RunSpec(EXPERIMENT, dataset, "train-timing", first, 0, row, {}))
        if dataset in PAPER_FIG9 and not quick:
            specs += [RunSpec(EXPERIMENT, dataset, "gap", fold, 0, row, {"variant": variant})
                      for variant in GAP_VARIANTS for fold in folds for row in GAP_ROWS]
    return specs


def reproduce(out, data_dir=None, quick=False, n_jobs=1):
    """Run the experiments (``quick``: MQ2008 Fold1 only) and write the report into ``out``."""
    return reproduce_letor_experiment(out, EXPERIMENT, DATASETS, plan, _run, report_sections,
                                      "Chakrabarti et al. (2008), reproduced", data_dir, quick, n_jobs)


# -- report ---------------------------------------------------------------------------------


def _select(rows, **fields):
    return [r for r in rows if all(r.get(k) == v or (k == "params" and _param(r, v)) for k, v in fields.items())]


def _param(row, wanted):
    params = row["params"] if isinstance(row["params"], dict) else json.loads(row["params"])
    return all(params.get(k) == v for k, v in wanted.items())


def _mean(rows, model, metric):
    values = [r["value"] for r in rows if r["model"] == model and r["metric"] == metric]
    return float(np.mean(values)) if values else float("nan")


def fig9_sections(rows, dataset, convention):
    sections = []
    for prep, what in (("none", "the test files as distributed"),
                       ("chakrabarti", "after the preparation of Sec. 4.1 (zero vectors and good/bad pairs with "
                                       "cosine > 0.99 dropped, then queries without both kinds)")):
        part = _select(rows, dataset=dataset, split="test", params={"prep": prep})
        if not part:
            continue
        folds = len({r["fold"] for r in part})
        official = [r for r in part if r["metric"] in METRICS]
        table = markdown_table(official, std=True, row_order=list(ROWS), column_order=list(METRICS))
        if any(r["model"] == "NDCG-graded" for r in official):
            table += ("\n\nNDCG-graded (not in the paper) is SVM-ndcg trained for the graded NDCG@10 the "
                      "table reports (gains 2^label - 1) with phi_po over all pairs of different labels; the "
                      "paper's SVM-ndcg (row NDCG) sees relevance as binary.")
        sections.append((f"{dataset}, Fig. 9: {what}, {convention} convention, mean ± std over {folds} folds", table))
        binary = [{**r, "metric": r["metric"][len(BINARY):]} for r in part
                  if r["metric"] in {BINARY + m for m in FIG9_METRICS}]
        sections.append((f"{dataset}, Fig. 9 with binary relevance (label >= 1 is good, gain 1, as in the paper): "
                         f"{what}", markdown_table(binary, std=True, row_order=list(ROWS),
                                                   column_order=list(FIG9_METRICS))))
    return sections


def paper_comparison(rows, dataset):
    """Our binary-relevance Fig. 9 cells beside the paper's, naming each that differs by > 3 points."""
    paper = PAPER_FIG9.get(dataset)
    if not paper:
        return None
    part = _select(rows, dataset=dataset, split="test", params={"prep": "chakrabarti"}) or \
        _select(rows, dataset=dataset, split="test", params={"prep": "none"})
    lines = ["| criterion | " + " | ".join(f"{m} ours / paper" for m in FIG9_METRICS) + " |",
             "|---" * (len(FIG9_METRICS) + 1) + "|"]
    far = []
    for row in PAPER_ROWS:
        ours = [_mean(part, row, BINARY + m) for m in FIG9_METRICS]
        cells = []
        for metric, mine, theirs in zip(FIG9_METRICS, ours, paper[row]):
            cells.append(f"{mine:.3f} / {theirs:.3f}")
            if np.isfinite(mine) and abs(mine - theirs) > 0.03:
                far.append(f"{row} {metric}: {mine:.3f} against {theirs:.3f} ({100 * (mine - theirs):+.1f} points)")
        lines.append(f"| {row} | " + " | ".join(cells) + " |")
    text = "\n".join(lines)
    if far:
        gaps = [_mean(part, row, BINARY + m) - paper[row][i] for row in PAPER_ROWS
                for i, m in enumerate(FIG9_METRICS)]
        gaps = [g for g in gaps if np.isfinite(g)]
        by_row = {row: [_mean(part, row, BINARY + m) - paper[row][i] for i, m in enumerate(FIG9_METRICS)]
                  for row in PAPER_ROWS}
        by_row = {row: float(np.mean(g)) for row, g in by_row.items() if np.all(np.isfinite(g))}
        lo, hi = min(by_row, key=by_row.get), max(by_row, key=by_row.get)
        text += ("\n\nCells more than 3 points from the paper:\n\n" + "\n".join(f"- {f}" for f in far) +
                 f"\n\nOurs is lower in {sum(g < 0 for g in gaps)} of {len(gaps)} cells (mean "
                 f"{100 * np.mean(gaps):+.1f} points). By criterion the mean gap runs from {100 * by_row[lo]:+.1f} "
                 f"({lo}) to {100 * by_row[hi]:+.1f} ({hi}). The gap study below measures how much of it other "
                 "readings of Sec. 4.1, trec_eval's conventions and the choice of C explain. " + hypothesis(
                     "the rest comes from the data: the paper used LETOR's earlier OHSUMED release (25-45 features, "
                     "its own splits) and its own Java code, with C tuned by a procedure it does not state; McRank "
                     "here is LightGBM, not the paper's WEKA trees."))
    else:
        text += "\n\nEvery cell is within 3 points of the paper."
    return text


def gap_study(rows, dataset):
    """Markdown: how many points of the gap to the paper's Fig. 9 each reading closes (None without runs)."""
    paper = PAPER_FIG9.get(dataset)
    part = _select(rows, dataset=dataset, split="gap")
    if not paper or not part:
        return None
    ours_name = next(iter(GAP_VARIANTS))

    def gaps(variant, prefix=""):
        runs = [r for r in part if _param(r, {"variant": variant})]
        cells = {m: [_mean(runs, row, prefix + m) - paper[row][i] for row in GAP_ROWS]
                 for i, m in enumerate(FIG9_METRICS)}
        queries = _mean(runs, GAP_ROWS[0], "test_queries")
        return {m: float(np.mean(v)) for m, v in cells.items()}, queries

    readings = [(name, *gaps(name)) for name in GAP_VARIANTS]
    readings.append((f"{ours_name}, measured with trec_eval's conventions", *gaps(ours_name, GAP_TREC)))
    readings.append((f"{ours_name}, C chosen on the test file (upper bound)", *gaps(ours_name, GAP_BEST_C)))
    base = np.mean(list(readings[0][1].values()))
    lines = [f"Rows {', '.join(GAP_ROWS)} (the paper's values: {', '.join(f'{r} {paper[r]}' for r in GAP_ROWS)}); "
             "each cell is our binary-relevance test value minus the paper's, in points, averaged over the rows "
             "and the folds.", "",
             "| reading | test queries per fold | " + " | ".join(f"{m} gap" for m in FIG9_METRICS) +
             " | mean gap | closes |", "|---" * (len(FIG9_METRICS) + 4) + "|"]
    closes = []
    for name, cells, queries in readings:
        mean = float(np.mean(list(cells.values())))
        if not np.isfinite(mean):
            continue
        closes.append((abs(base) - abs(mean), mean, name))
        lines.append(f"| {name} | {queries:.1f} | " + " | ".join(f"{100 * cells[m]:+.1f}" for m in FIG9_METRICS) +
                     f" | {100 * mean:+.1f} | {100 * (abs(base) - abs(mean)):+.1f} |")
    best_close, best_mean, best_name = max(closes[1:], default=(0.0, base, "none"))
    lines += ["", "closes: how many points nearer the paper (in absolute value) the mean gap is than our reading's.",
              "", f"Our reading is {100 * base:+.1f} points from the paper on average. The reading that closes the "
              f"most is \"{best_name}\" ({100 * best_close:+.1f} points); with it the gap is {100 * best_mean:+.1f} "
              "points. " + hypothesis(
                  "what remains comes from the paper's older OHSUMED release (its features and splits), which "
                  "LETOR 3.0 does not hold, and from its Java implementation; no run here can test this.")]
    return "\n".join(lines)


def _line_figure(path, title, xlabel, ylabel, series, logx=False):
    fig = new_figure(figsize=(5, 3.5))
    ax = fig.add_subplot()
    for label, (xs, ys) in series.items():
        ax.plot(xs, ys, marker="o", label=label)
    if logx:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=7)
    save_figure(fig, path)
    return path.name


def report_sections(rows, out, link_prefix=""):
    """The report's sections (title, markdown); figures are written into ``out`` and linked as ``link_prefix + name``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    sections = []
    for dataset, convention in DATASETS.items():
        if not any(r["dataset"] == dataset for r in rows):
            continue
        sections += fig9_sections(rows, dataset, convention)
        comparison = paper_comparison(rows, dataset)
        if comparison:
            sections.append((f"{dataset}: binary-relevance Fig. 9 against the paper's", comparison))
        study = gap_study(rows, dataset)
        if study:
            sections.append((f"{dataset}: where the gap to the paper's Fig. 9 comes from (readings of Sec. 4.1, "
                             "metric conventions, C selection)", study))
        # Fig. 7
        test = _select(rows, dataset=dataset, split="test", params={"prep": "none"})
        series = {f"{label} ({'phi_po' if label == 'MRR-po' else 'phi_mrr'})":
                  (list(MRR_KS), [_mean(test, label, f"{BINARY}mrr@{k}") for k in MRR_KS])
                  for label in ("MRR", "MRR-po") if any(r["model"] == label for r in test)}
        if series:
            name = _line_figure(out / f"fig7-mrr-{dataset.lower()}.png", f"{dataset}: MRR@k, phi_mrr vs phi_po",
                                "k", "test MRR@k (binary)", series)
            table = [{"model": r["model"], "metric": r["metric"][len(BINARY):], "value": r["value"]} for r in test
                     if r["model"] in ("MRR", "MRR-po") and r["metric"].startswith(BINARY + "mrr@")]
            sections.append((f"{dataset}, Fig. 7: MRR@k of SVM-mrr with phi_mrr (MRR) and with phi_po (MRR-po)",
                             markdown_table(table, std=True, column_order=[f"mrr@{k}" for k in MRR_KS])
                             + f"\n\n![Fig. 7]({link_prefix}{name})"))
        # Figs. 4-6
        sweep = _select(rows, dataset=dataset, split="train-sweep")
        if sweep:
            for metric, ylabel in (("avg_slack", "average slack"), ("objective_ratio", "obj / obj(w=0)"),
                                   ("w_norm2", "|w|^2 (largest C = 1)")):
                series = {}
                for model in SWEEP:
                    points = sorted((json.loads(r["params"])["C"] if isinstance(r["params"], str) else r["params"]["C"],
                                     r["value"]) for r in sweep if r["model"] == model and r["metric"] == metric)
                    if points:
                        xs, ys = zip(*points)
                        ys = np.array(ys) / (ys[-1] if metric == "w_norm2" and ys[-1] > 0 else 1.0)
                        series[model] = (list(xs), list(ys))
                _line_figure(out / f"{FIGURE[metric]}-{dataset.lower()}.png", f"{dataset} Fold1 train", "C", ylabel,
                             series, logx=True)
            table = markdown_table(sweep, index=("model", "params"), columns="metric", fmt="{:.4g}",
                                   column_order=["avg_slack", "objective_ratio", "w_norm2", "iterations", "converged",
                                                 "seconds"])
            sections.append((f"{dataset}, Figs. 4-6: training at termination against C (Fold1 train)",
                             table + "".join(f"\n\n![{m}]({link_prefix}{FIGURE[m]}-{dataset.lower()}.png)"
                                             for m in ("avg_slack", "objective_ratio", "w_norm2"))))
        # Figs. 8 and 10
        timing = _select(rows, dataset=dataset, split="train-timing")
        if timing:
            sections.append((f"{dataset}, Figs. 8 and 10: training time on Fold1 train (seconds; C fixed: "
                             + ", ".join(f"{k} {v[1]}" for k, v in TIMING.items()) + ")",
                             markdown_table(timing, fmt="{:.3f}", row_order=list(TIMING),
                                            column_order=["seconds", "oracle_seconds", "qp_seconds", "iterations"])))
    return sections


# -- claims ---------------------------------------------------------------------------------

PAPER = "Chakrabarti et al. 2008"
CLAIM_MARGIN = 0.01  # "about even", "close", "comparable": within one point


def _fig9(rows, dataset):
    """{row: {metric: mean binary-relevance test value}} on the files as distributed."""
    part = _select(rows, dataset=dataset, split="test", params={"prep": "none"})
    models = {r["model"] for r in part}
    return {row: {m: _mean(part, row, BINARY + m) for m in FIG9_METRICS} for row in ROWS if row in models}


def _sweep_end(rows, dataset):
    """{model: (first C's value, last C's value)} of each Figs. 4-6 measure, by C."""
    sweep = _select(rows, dataset=dataset, split="train-sweep")
    out = {}
    for metric in ("avg_slack", "objective_ratio", "w_norm2"):
        for model in SWEEP:
            points = sorted((_param_value(r, "C"), r["value"]) for r in sweep if r["model"] == model and r["metric"] == metric)
            if points:
                out[(model, metric)] = (points[0], points[-1])
    return out


def _param_value(row, key):
    params = row["params"] if isinstance(row["params"], dict) else json.loads(row["params"])
    return params[key]


def _fmt(values: dict, metric=None) -> str:
    return ", ".join(f"{k} {v if metric is None else v[metric]:.3f}" for k, v in values.items())


def _beats(fig9, where, claim, evidence, metric, winner, loser, ablation=""):
    """The claim that row ``winner`` is above row ``loser`` on ``metric``."""
    a, b = fig9[winner][metric], fig9[loser][metric]
    return Claim(PAPER, where, claim, evidence, f"{metric}: {winner} {a:.3f}, {loser} {b:.3f}", verdict_of(a > b),
                 f"{winner} {100 * (a - b):+.1f} points over {loser}." + ablation)


def _latent_note(fig9, row, metric, against):
    """The ablation sentence of a latent-target row, or "" when it was not run."""
    if row not in fig9:
        return ""
    value = fig9[row][metric]
    return f" Ablation: {row} reaches {value:.3f} ({100 * (value - fig9[against][metric]):+.1f} points against {against})."


def claims(rows):
    """The claims of Chakrabarti et al. (2008) against this experiment's runs (``claims.Claim``)."""
    out = []
    datasets = [d for d in DATASETS if any(r["dataset"] == d for r in rows)]
    for dataset in datasets:
        fig9 = _fig9(rows, dataset)
        sweep = _sweep_end(rows, dataset)
        where = f"{dataset}, files as distributed, binary relevance, mean of 5 folds"

        def have(*names):
            return all(n in fig9 for n in names)

        # Figs. 4-6: which criteria adapt to C
        if all((m, "avg_slack") in sweep for m in ("AUC", "MAP", "NDCG", "MRR", "DORM")):
            drop = {m: sweep[(m, "avg_slack")][0][1] - sweep[(m, "avg_slack")][1][1] for m in ("AUC", "MAP", "NDCG", "MRR", "DORM")}
            top3 = sorted(drop, key=drop.get, reverse=True)[:3]
            latent = {m: drop_l for m in ("NDCG latent", "MRR latent", "DORM latent")
                      if (m, "avg_slack") in sweep
                      for drop_l in [sweep[(m, "avg_slack")][0][1] - sweep[(m, "avg_slack")][1][1]]}
            out.append(Claim(PAPER, f"Fig. 4 ({dataset} Fold1 train)",
                             "DORM, SVM-mrr and SVM-auc show the most robust reduction in average slack with increasing C",
                             "DORM, MRR, AUC fall most (OHSUMED, TD2003, TD2004)",
                             "slack drop from the smallest to the largest C: " +
                             ", ".join(f"{m} {v:.4f}" for m, v in drop.items()),
                             verdict_of(set(top3) == {"DORM", "MRR", "AUC"}),
                             f"the three largest drops: {', '.join(top3)}. Ablation, latent targets (structrank.oracles."
                             "latent): drop " + ", ".join(f"{m} {v:.4f}" for m, v in latent.items()) + "."))
            ratio = {m: sweep[(m, "objective_ratio")][1][1] for m in ("AUC", "MAP", "NDCG", "MRR", "DORM")}
            low3 = sorted(ratio, key=ratio.get)[:3]
            out.append(Claim(PAPER, f"Fig. 5 ({dataset} Fold1 train)",
                             "DORM, SVM-auc and SVM-mrr adapt best (obj/obj(w=0) falls), SVM-map and SVM-ndcg stay "
                             "close to w = 0", "DORM, AUC, MRR lowest ratio at the largest C",
                             "obj/obj(w=0) at the largest C: " + ", ".join(f"{m} {v:.4f}" for m, v in ratio.items()),
                             verdict_of(set(low3) == {"DORM", "MRR", "AUC"}), f"the three lowest: {', '.join(low3)}."))
            norm = {m: sweep[(m, "w_norm2")][1][1] for m in ("MAP", "NDCG")}
            out.append(Claim(PAPER, f"Fig. 6 ({dataset} Fold1 train)", "SVM-map and SVM-ndcg are not quite at w = 0",
                             "|w| > 0 at every C", "|w|^2 at the largest C: " + ", ".join(f"{m} {v:.3g}" for m, v in norm.items()),
                             verdict_of(all(v > 1e-8 for v in norm.values())), "|w|^2 > 1e-8 counts as not at w = 0."))
        else:
            out.append(not_run(PAPER, f"Figs. 4-6 ({dataset})", "which criteria adapt to C", "Figs. 4-6", "the C sweep"))
        # Fig. 7: phi_mrr against phi_po
        if have("MRR", "MRR-po"):
            out.append(_beats(fig9, f"Fig. 7 ({dataset})", "a consistent large gain in MRR when phi_mrr (MRR) is used, "
                              "compared to phi_po (MRR-po)", "phi_mrr above phi_po on every data set", "mrr@10", "MRR",
                              "MRR-po", _latent_note(fig9, "MRR latent", "mrr@10", "MRR-po")))
        # Sec. 4.5 on Fig. 9
        paper_rows = {r: fig9[r] for r in PAPER_ROWS if r in fig9}
        if have("MRR", "COMBO") and len(paper_rows) >= 4:
            best = max(paper_rows, key=lambda r: paper_rows[r]["mrr@10"])
            out.append(Claim(PAPER, f"Sec. 4.5, Fig. 9 ({dataset})", "Delta_MRR is never best for test MRR",
                             "another criterion is best for MRR@10 on every data set",
                             "MRR@10: " + _fmt(paper_rows, "mrr@10"), verdict_of(best != "MRR"), f"best: {best}."))
            out.append(_beats(fig9, f"Sec. 4.3, Fig. 9 ({dataset})", "SVM-combo almost always beats SVM-mrr (on MRR)",
                              "COMBO above MRR on MRR@10", "mrr@10", "COMBO", "MRR"))
        if have("NDCG", "NDCG-NC"):
            out.append(_beats(fig9, f"Sec. 4.5, Fig. 9 ({dataset})", "SVM-ndcg, which uses the true Delta_NDCG, "
                              "consistently loses to SVM-ndcg-nc", "NDCG-NC above NDCG on NDCG@10", "ndcg@10", "NDCG-NC",
                              "NDCG", _latent_note(fig9, "NDCG latent", "ndcg@10", "NDCG-NC")))
        if have("COMBO") and all(r in fig9 for r in ("MAP", "NDCG", "NDCG-NC", "MRR")):
            comps = ("MAP", "NDCG", "NDCG-NC", "MRR")
            near = {m: fig9["COMBO"][m] - max(fig9[c][m] for c in comps) for m in FIG9_METRICS}
            out.append(Claim(PAPER, f"Sec. 3.7, 4.5 ({dataset})", "SVM-combo's test performance on any criterion is "
                             "close to that of the best components", "COMBO among the top two of each column",
                             "COMBO minus the best component: " + ", ".join(f"{m} {100 * v:+.1f}" for m, v in near.items()),
                             verdict_of(all(v >= -CLAIM_MARGIN for v in near.values())),
                             f"close = within {100 * CLAIM_MARGIN:.0f} point of the best component."))
        if have("COMBO", "COMBO shared"):
            sep = float(np.mean([fig9["COMBO"][m] for m in FIG9_METRICS]))
            sha = float(np.mean([fig9["COMBO shared"][m] for m in FIG9_METRICS]))
            out.append(Claim(PAPER, f"Sec. 3.7 ({dataset})", "separate slacks may perform better than shared slacks, "
                             "which is indeed what we found", "not tabulated in the paper",
                             f"mean of MRR@10, NDCG@10, MAP: separate {sep:.3f}, shared {sha:.3f} (" +
                             ", ".join(f"{m} {fig9['COMBO'][m]:.3f}/{fig9['COMBO shared'][m]:.3f}" for m in FIG9_METRICS) + ")",
                             verdict_of(sep > sha), f"separate {100 * (sep - sha):+.1f} points over shared."))
        if have("COMBO", "COMBO phi_mrr"):
            a = float(np.mean([fig9["COMBO"][m] for m in FIG9_METRICS]))
            b = float(np.mean([fig9["COMBO phi_mrr"][m] for m in FIG9_METRICS]))
            out.append(Claim(PAPER, f"Sec. 3.7 ({dataset})", "SVM-combo combines the criteria's own losses (its MRR "
                             "component with phi_mrr, as SVM-mrr)", "not tabulated",
                             f"mean of the three metrics: MRR component phi_po (ours by default) {a:.3f}, phi_mrr {b:.3f}",
                             verdict_of(b >= a - CLAIM_MARGIN),
                             f"phi_mrr {100 * (b - a):+.1f} points against phi_po; holds if within "
                             f"{100 * CLAIM_MARGIN:.0f} point."))
        if have("NDCG", "DORM"):
            a, b = fig9["NDCG"]["ndcg@10"], fig9["DORM"]["ndcg@10"]
            out.append(Claim(PAPER, f"Sec. 4.4, Fig. 9 ({dataset})", "SVM-ndcg and DORM come out about even",
                             "NDCG@10 about equal", f"NDCG@10: NDCG {a:.3f}, DORM {b:.3f}",
                             verdict_of(abs(a - b) <= CLAIM_MARGIN), f"difference {100 * (a - b):+.1f} points; even = "
                             f"within {100 * CLAIM_MARGIN:.0f} point."))
        if have("NDCG-NC", "DORM"):
            out.append(_beats(fig9, f"Sec. 4.4, Fig. 9 ({dataset})", "SVM-ndcg-nc is consistently better than DORM",
                              "NDCG-NC above DORM", "ndcg@10", "NDCG-NC", "DORM"))
        if have("NDCG", "DORM sparse"):
            a, b = fig9["NDCG"]["ndcg@10"], fig9["DORM sparse"]["ndcg@10"]
            dense = fig9.get("DORM", {}).get("ndcg@10")
            out.append(Claim(PAPER, f"Sec. 4.4 ({dataset})", "DORM with A(.) cut to zero after rank 30 approaches or "
                             "matches the accuracy of SVM-ndcg", "sparse DORM used in Figs. 8-9",
                             f"NDCG@10: sparse DORM {b:.3f}, SVM-ndcg {a:.3f}" + (f", dense DORM {dense:.3f}" if dense else ""),
                             verdict_of(b >= a - CLAIM_MARGIN), f"sparse DORM {100 * (b - a):+.1f} points from SVM-ndcg."))
        if have("McRank") and len(paper_rows) >= 4:
            tops = [m for m in FIG9_METRICS if max(paper_rows, key=lambda r: paper_rows[r][m]) == "McRank"]
            out.append(Claim(PAPER, f"Sec. 4.6, Fig. 9 ({dataset})", "McRank never tops the chart in any column",
                             "no column topped by McRank", "columns McRank tops: " + (", ".join(tops) or "none"),
                             verdict_of(not tops), "among the paper's eight criteria."))
        if have("NDCG", "MRR", "AUC", "MAP"):
            gaps = {"NDCG": fig9["NDCG"]["ndcg@10"] - max(fig9["AUC"]["ndcg@10"], fig9["MAP"]["ndcg@10"]),
                    "MRR": fig9["MRR"]["mrr@10"] - max(fig9["AUC"]["mrr@10"], fig9["MAP"]["mrr@10"])}
            lat = {k: fig9[f"{k} latent"][m] - max(fig9["AUC"][m], fig9["MAP"][m])
                   for k, m in (("NDCG", "ndcg@10"), ("MRR", "mrr@10")) if have(f"{k} latent")}
            out.append(Claim(PAPER, f"Sec. 5 ({dataset})", "the new algorithms (SVM-mrr, SVM-ndcg) are comparable to "
                             "known techniques (SVM-auc, SVM-map) in accuracy", "Fig. 9",
                             "own metric minus the better of AUC and MAP: " + ", ".join(f"{k} {100 * v:+.1f}" for k, v in gaps.items())
                             + ("; latent targets: " + ", ".join(f"{k} {100 * v:+.1f}" for k, v in lat.items()) if lat else ""),
                             verdict_of(all(v >= -CLAIM_MARGIN for v in gaps.values())),
                             f"comparable = within {100 * CLAIM_MARGIN:.0f} point; docs: reproduce own-metric tests it "
                             "with paired tests."))
        # Figs. 8 and 10: time
        timing = _select(rows, dataset=dataset, split="train-timing")
        secs = {r["model"]: r["value"] for r in timing if r["metric"] == "seconds"}
        if {"SVM-ndcg", "DORM", "McRank"} <= set(secs):
            out.append(Claim(PAPER, f"Fig. 8 ({dataset} Fold1)", "DORM takes substantially more time than SVM-ndcg",
                             "DORM 283 s against SVM-ndcg 19 s (TD2004)",
                             f"DORM {secs['DORM']:.2f} s, SVM-ndcg {secs['SVM-ndcg']:.3f} s "
                             f"({secs['DORM'] / secs['SVM-ndcg']:.0f}x)", verdict_of(secs["DORM"] > 2 * secs["SVM-ndcg"]),
                             "substantially = more than twice."))
            ratio = secs["McRank"] / secs["SVM-ndcg"]
            out.append(Claim(PAPER, f"Fig. 10 ({dataset} Fold1)", "McRank can be more expensive than the structured "
                             "learners by two orders of magnitude", "Fig. 10 (WEKA, 30 rounds)",
                             f"McRank {secs['McRank']:.2f} s, SVM-ndcg {secs['SVM-ndcg']:.3f} s ({ratio:.0f}x)",
                             verdict_of(ratio >= 100), "McRank here is LightGBM, not WEKA's REPTree."))
    if "OHSUMED" in datasets:
        part = _select(rows, dataset="OHSUMED", split="test", params={"prep": "chakrabarti"})
        paper = PAPER_FIG9["OHSUMED"]
        gaps = [_mean(part, row, BINARY + m) - paper[row][i] for row in PAPER_ROWS for i, m in enumerate(FIG9_METRICS)]
        gaps = [g for g in gaps if np.isfinite(g)]
        if gaps:
            within = sum(abs(g) <= 0.03 for g in gaps)
            out.append(Claim(PAPER, "Fig. 9 (OHSUMED)", "the values of Fig. 9 (after the preparation of Sec. 4.1)",
                             "e.g. AUC 0.799 / 0.635 / 0.582", f"{within} of {len(gaps)} cells within 3 points; mean gap "
                             f"{100 * np.mean(gaps):+.1f} points", verdict_of(within == len(gaps)),
                             "see the gap study (OHSUMED: where the gap to the paper's Fig. 9 comes from)."))
    for name in ("TD2003", "TD2004"):
        if name not in datasets:
            out.append(Claim(PAPER, f"Figs. 8-9 ({name})", f"the {name} columns of Figs. 8-9", "Figs. 8-9", "—",
                             UNTESTABLE, f"LETOR 3.0 {name} is not in the data folder."))
    out.append(Claim(PAPER, "Fig. 9 (TREC 2000/2001)", "the TREC 2000/2001 columns (Yue et al.'s data)", "Fig. 9", "—",
                     UNTESTABLE, "Yue et al.'s TREC 2000/2001 files are not in the data folder."))
    return out
