"""The report of croce2016: Table 1 beside the published one, the reference models, the figure of MAP and
saving against landmarks, the kernel's cost and the MQ2008 table."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from structrank_lab.experiments.croce2016.design import (C_GRID, FULL, IR, LETOR_LANDMARKS, LINEAR, PART_NAMES, PARTS, SPLITS,
                                                     TUNED)
from structrank_lab.experiments.croce2016.published import PAPER_FULL, PAPER_TABLE1
from structrank_lab.experiments.croce2016.recorded import _close_counts, _full, _means, _single, collect, saving, sweep
from structrank_lab.experiments.runner import wall_time
from structrank.figures import new_figure, save_figure


def _table(header, lines):
    return "\n".join(["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
                      + ["| " + " | ".join(line) + " |" for line in lines])


def _pct(value, digits=1):
    return "—" if value is None or not np.isfinite(value) else f"{100 * value:.{digits}f}"


def _seconds(*values):
    return "—" if any(v is None for v in values) else f"{sum(values):.1f}"


def table1(runs):
    full = _full(runs)
    lines = []
    for m, by_seed in sweep(runs).items():
        first = by_seed.get(0, {})
        maps = [v["test:map"] for v in by_seed.values()]
        spread = f"{100 * np.mean(maps):.1f} ± {100 * np.std(maps, ddof=1):.1f} ({len(maps)})" if len(maps) > 1 else "—"
        paper = PAPER_TABLE1.get(m)
        lines.append([
            str(m), _pct(first.get("test:map")), spread, _pct(first.get(f"test:f1.{TUNED}")), _pct(first.get("test:f1")),
            _pct(first.get("dev:map")),
            _pct(saving(m, full)) if full else "—", f"{first.get('components', float('nan')):.0f}",
            f"{first.get('C', float('nan')):g}",
            _seconds(first.get("kernel_train_seconds"), first.get("projection_seconds"), first.get("svm_seconds")),
            _seconds(first.get("kernel_test_seconds"), first.get("decide_seconds")),
            *(("%.1f" % paper[0], "%.1f" % paper[1], "%.1f" % paper[2]) if paper else ("", "", "")),
        ])
    return _table(["landmarks", "test MAP", "test MAP, mean ± sd (seeds)", "test F1 (dev-F1 C and threshold)",
                   "test F1 (threshold 0)", "dev MAP", "saving %",
                   "dimensions", "C", "train s", "classify s", "published: MAP", "published: F1",
                   "published: saving %"], lines)


def _f1_cells(r):
    """"69.0 (C 1) / 56.3": F1 with C and threshold chosen by dev F1 (an older store has only the other)."""
    tuned = f"{_pct(r[f'test:f1.{TUNED}'])} (C {r[f'C.{TUNED}']:g})" if f"test:f1.{TUNED}" in r else "—"
    return f"{tuned} / {_pct(r['test:f1'])}"


def reference_table(runs):
    lines = []
    for model in FULL:
        r = _full(runs, model)
        if r:
            lines.append([model, _pct(r["test:map"]), _f1_cells(r), _pct(r["dev:map"]), f"{r['C']:g}",
                          f"{r['support_vectors']:.0f} of {r['n_train']:.0f} ({r['bounded_support_vectors']:.0f} at C)",
                          f"{r['test_kernel_evaluations'] / 1e6:.1f} M",
                          _seconds(r["kernel_train_seconds"], r["svm_seconds"]),
                          _seconds(r["kernel_test_seconds"], r["decide_seconds"])])
    linear = _single(runs, "linear", LINEAR)
    if linear:
        lines.append([LINEAR, _pct(linear["test:map"]), _f1_cells(linear), _pct(linear["dev:map"]),
                      f"{linear['C']:g}", "—", "0", _seconds(linear["svm_seconds"]), "—"])
    ir = _single(runs, "ir", IR)
    if ir:
        lines.append([IR, _pct(ir["test:map"]), "—", _pct(ir["dev:map"]), "—", "—", "0", "—", "—"])
    lines.append(["published: standard SVM (KeLP, full training data)", f"{PAPER_FULL[0]:.1f}", f"{PAPER_FULL[1]:.1f}",
                  "", "", f"{PAPER_FULL[2]:,}", "", "", ""])
    return _table(["model", "test MAP", "test F1: dev-F1 C and threshold (C) / threshold 0", "dev MAP", "C",
                   "support vectors", "test kernel evaluations",
                   "train s", "classify s"], lines)


def findings(runs):
    """Sentences computed from the runs: the targets of the issue, good news or bad."""
    full, points = _full(runs), sweep(runs)
    if not full or not points:
        return ""
    means = _means(points, "test:map")
    out = []
    top = max(points)
    out.append(f"With {top} landmarks the Nyström model reaches test MAP {_pct(means[top])} (mean over "
               f"{len(points[top])} landmark samples), {100 * (full['test:map'] - means[top]):+.1f} points from the "
               f"full kernel SVM's {_pct(full['test:map'])} (seed 0: {_pct(points[top][0]['test:map'])}).")
    close = _close_counts(points, full)
    if close:
        m = min(close)
        out.append(f"The smallest landmark count whose mean test MAP is within 1 point of the full SVM is {m}: "
                   f"it saves {_pct(saving(m, full))}% of the kernel evaluations per test pair ({m} against "
                   f"{full['support_vectors']:.0f} support vectors).")
    else:
        out.append("No landmark count comes within 1 point of the full SVM's test MAP.")
    tuned = f"test:f1.{TUNED}"
    if tuned in full and all(tuned in v for v in points[top].values()):
        at_top = {top: points[top]}
        out.append(f"Test F1 with C and the threshold chosen by dev F1 (the paper's setup): full SVM {_pct(full[tuned])}, "
                   f"{top} landmarks {_pct(_means(at_top, tuned)[top])}; at threshold 0 with C chosen by dev MAP: "
                   f"{_pct(full['test:f1'])} and {_pct(_means(at_top, 'test:f1')[top])}.")
    linear = _single(runs, "linear", LINEAR)
    rbf = _full(runs, "SVM (RBF on dense)")
    if linear and rbf:
        out.append(f"What the tree kernels add: the full SVM with trees minus the linear SVM on the same dense "
                   f"features is {100 * (full['test:map'] - linear['test:map']):+.1f} MAP points on test "
                   f"({100 * (full['dev:map'] - linear['dev:map']):+.1f} on dev); minus the full RBF SVM on the dense "
                   f"features alone, {100 * (full['test:map'] - rbf['test:map']):+.1f} "
                   f"({100 * (full['dev:map'] - rbf['dev:map']):+.1f} on dev).")
    return " ".join(out)


def kernel_table(runs):
    r = _single(runs, "kernel", "kernel columns")
    if not r:
        return None
    lines = []
    for part in PARTS:
        seconds = sum(r[f"{part}.{s}:seconds"] for s in SPLITS)
        evaluations = sum(r[f"{part}.{s}:evaluations"] for s in SPLITS)
        lines.append([PART_NAMES[part], f"{evaluations / 1e6:.1f} M", f"{seconds:.0f}", f"{evaluations / seconds:,.0f}"])
    rows = ", ".join(f"{s} {r[f'{s}:rows']:.0f}" for s in SPLITS)
    total = sum(r[f"{p}.{s}:seconds"] for p in PARTS for s in SPLITS)
    return (f"Every pair ({rows}) against every training pair, once, over {r['n_jobs']:.0f} joblib workers "
            f"(wall seconds). All the columns took {total / 60:.1f} minutes; the sweep's own columns (1,000 "
            f"landmarks, all three splits) {r['sweep_kernel_seconds'] / 60:.1f} minutes.\n\n"
            + _table(["kernel part", "evaluations", "seconds", "evaluations/s"], lines))


def figure(runs, path):
    full, points = _full(runs), sweep(runs)
    if not points:
        return False
    xs = list(points)
    means = [100 * v for v in _means(points, "test:map").values()]
    sds = [100 * np.std([v["test:map"] for v in points[m].values()], ddof=1) if len(points[m]) > 1 else 0.0 for m in xs]
    fig = new_figure(figsize=(6, 3.5))
    ax = fig.add_subplot(1, 1, 1)
    ax.errorbar(xs, means, yerr=sds, marker="o", capsize=3, label="Nyström test MAP")
    if full:
        ax.axhline(100 * full["test:map"], color="black", linestyle="--", label="full kernel SVM")
    linear = _single(runs, "linear", LINEAR)
    if linear:
        ax.axhline(100 * linear["test:map"], color="grey", linestyle=":", label="linear SVM, dense features")
    ax.set_xlabel("landmarks")
    ax.set_ylabel("test MAP (%)")
    if full:
        ax2 = ax.twinx()
        ax2.plot(xs, [100 * saving(m, full) for m in xs], color="tab:red", marker="s", label="saving")
        ax2.set_ylabel("saving (%)", color="tab:red")
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title("SemEval-2016 test: MAP and saving against landmarks", fontsize=9)
    save_figure(fig, path)
    return True


def letor_table(runs):
    keys = [k for k in runs if k[0] == "letor"]
    if not keys:
        return None
    lines = []
    for dataset in sorted({k[4] for k in keys}):
        for model in dict.fromkeys(k[1] for k in keys if k[4] == dataset):
            folds = [runs[k] for k in keys if k[4] == dataset and k[1] == model]
            cell = lambda name: f"{np.mean([f[name] for f in folds]):.4f}"  # noqa: E731
            lines.append([dataset, model, cell("ndcg@10"), cell("map"), cell("mrr@10"), str(len(folds)),
                          ", ".join(f"{c:g}" for c in sorted({f["C"] for f in folds})),
                          f"{np.mean([f['seconds'] for f in folds]):.1f}"])
    return _table(["data", "model", "NDCG@10", "MAP", "MRR@10", "folds", "C chosen", "s per fold (grid)"], lines)


def report_sections(rows, out, link_prefix=""):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    runs = collect(rows)
    if not runs:
        return [("No runs", "No runs are recorded yet.")]
    sections = [("Setup",
                 "SemEval-2016 Task 3 subtask A. Training data: train-part2 plus the reformatted 2015 dev set (the two "
                 "threads duplicating 2016 test questions dropped); the official train-part1 is not in the data folder, "
                 "so we train on about a third of the paper's data. C is chosen on the 2016 dev set from "
                 f"{', '.join(f'{c:g}' for c in C_GRID)} by MAP; all numbers below are on the 2016 test set unless marked "
                 "dev. MAP is the official scorer's (MAP@10); F1 is of the Good class, two ways: with C and the decision "
                 "threshold chosen together by dev F1 (the paper's setup, the primary one of the F1 claims), and at the "
                 "SVM's threshold 0 of the model chosen by dev MAP (what older stores hold). The "
                 "kernel of two pairs is the sum of an RBF on the dense features (text-pair similarities and task "
                 "features), PTK on the question trees and PTK on the comment trees (module docstring of "
                 "structrank_lab.experiments.croce2016). Saving = 1 - landmarks / (support vectors of the full SVM): the "
                 "kernel evaluations per test pair avoided. Seed 0's landmarks are the first columns of the kernel "
                 "blocks, so its times are measured; train s = kernel columns of the training pairs + projection + "
                 "one LinearSVC fit at the chosen C; classify s = kernel columns of the test pairs + projection + "
                 "decision. The full SVM's classify s prorates the measured time of the test pairs against all "
                 "training pairs to its support vectors.")]
    sections.append(("Table 1: Nyström landmarks against MAP, F1 and saving (SemEval-2016 test)", table1(runs)
                     + "\n\nRows `published:` are the paper's Table 1 (KeLP, its own features, the full training data), "
                       "not run here."))
    sections.append(("The full kernel SVM and the linear models", reference_table(runs) + "\n\n" + findings(runs)))
    if figure(runs, out / "map-saving-landmarks.png"):
        sections.append(("Figure: MAP and saving against landmarks", f"![MAP and saving]({link_prefix}map-saving-landmarks.png)"))
    kernels = kernel_table(runs)
    if kernels:
        timing = wall_time(out)
        sections.append(("Kernel evaluations and the sweep's time", kernels + (
            f"\n\nThe {timing['runs']} runs after the kernel columns (sweep, full SVMs, MQ2008) took "
            f"{timing['seconds'] / 60:.1f} minutes with --jobs {timing['jobs']}." if timing else "")))
    letor = letor_table(runs)
    if letor:
        sections.append(("A kernelised structured ranker: Nyström RBF in front of SVM-map and SVM-ndcg",
                         f"{LETOR_LANDMARKS} landmarks, RBF gamma = 1 / (number of features), on each fold's training "
                         "set; C chosen on vali by the ranker's own metric; LETOR 4.0 evaluation; means over folds.\n\n"
                         + letor))
    return sections
