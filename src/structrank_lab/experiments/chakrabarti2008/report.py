"""The report of chakrabarti2008: Fig. 9 under each convention and beside the paper's, the gap study, and
Figs. 4-8 and 10."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from structrank_lab.experiments.chakrabarti2008.design import (BINARY, DATASETS, FIG9_METRICS, FIGURE, GAP_ALL_ROWS,
                                                           GAP_BEST_C, GAP_EVERY_ROW, GAP_ROWS, GAP_TREC, GAP_VARIANTS,
                                                           METRICS, MRR_KS, PAPER_ROWS, QUERY_PREFIX, ROWS, SWEEP,
                                                           TIMING, TIMING_ROUNDS)
from structrank_lab.experiments.chakrabarti2008.judging import mrr_reading
from structrank_lab.experiments.chakrabarti2008.published import PAPER_FIG9
from structrank_lab.experiments.chakrabarti2008.recorded import Recorded
from structrank_lab.experiments.claims import hypothesis
from structrank_lab.experiments.report import markdown_table
from structrank_lab.experiments.run_key import params_of
from structrank.figures import new_figure, save_figure


def _select(rows, **fields):
    return [r for r in rows if all(r.get(k) == v or (k == "params" and _param(r, v)) for k, v in fields.items())]


def _param(row, wanted):
    params = params_of(row)
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


def both_preparations(rows, dataset):
    """Markdown: every criterion of Fig. 9 after our reading of Sec. 4.1 and with the good documents kept, ours
    beside the paper's (None without those runs)."""
    paper = PAPER_FIG9.get(dataset)
    part = _select(rows, dataset=dataset, split="gap")
    if not paper or not part:
        return None
    # the paper's eight rows in the mean, SVM-mrr in the reading of Fact 3.5 the claims judge first
    mrr = mrr_reading(Recorded(_select(rows, dataset=dataset, split="train-sweep")), dataset).primary
    counted = [mrr if row == "MRR" else row for row in PAPER_ROWS]
    lines = ["| criterion | preparation | " + " | ".join(f"{m} ours / paper (gap)" for m in FIG9_METRICS) +
             " | mean gap |", "|---" * (len(FIG9_METRICS) + 3) + "|"]
    totals = {}
    for row in GAP_ALL_ROWS:
        theirs_row = paper.get(row, paper["MRR"])  # SVM-mrr under either reading of Fact 3.5
        for variant in GAP_EVERY_ROW:
            runs = [r for r in part if _param(r, {"variant": variant})]
            ours = [_mean(runs, row, m) for m in FIG9_METRICS]
            if not all(np.isfinite(ours)):
                continue
            gaps = [mine - theirs for mine, theirs in zip(ours, theirs_row)]
            if row in counted:
                totals.setdefault(variant, []).extend(gaps)
            lines.append(f"| {row} | {variant} | " + " | ".join(
                f"{mine:.3f} / {theirs:.3f} ({100 * gap:+.1f})" for mine, theirs, gap in zip(ours, theirs_row, gaps))
                + f" | {100 * np.mean(gaps):+.1f} |")
    if not totals:
        return None
    text = "\n".join(lines) + "\n\nGaps in points (ours minus the paper's), binary relevance, C chosen on vali, mean " \
        "over the folds; MRR latent (SVM-mrr with the best-scoring good document) is set beside the paper's SVM-mrr. " \
        f"Mean gap over every cell of the paper's eight criteria (SVM-mrr: {mrr}): " + "; ".join(
            f"{variant} {100 * np.mean(g):+.1f} points ({len(g)} cells)" for variant, g in totals.items()) + "."
    if len(totals) == 2:
        ours, kept = (abs(np.mean(totals[v])) for v in GAP_EVERY_ROW)
        text += (f" Keeping the good documents closes {100 * (ours - kept):+.1f} of our reading's "
                 f"{100 * ours:.1f} points. The claims table judges the gap per test query.")
    return text


def reading_section(rows, dataset):
    """Markdown: the reading of Fact 3.5 whose slack falls with C on the sweep, which the claims judge first."""
    reading = mrr_reading(Recorded(_select(rows, dataset=dataset, split="train-sweep")), dataset)
    return (f"{reading.note} {reading.detail}" +
            " Each Fold1 training query's slack at the smallest C minus at the largest, paired over the queries; the "
            "literal reading is kept unless the latent one falls significantly more. The claims that involve SVM-mrr "
            "are judged first with this reading, with the other beside.")


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


def _flat(params):
    """A row's fixed parameters as the page names them: the loss's options beside the learner's."""
    return {**{k: v for k, v in params.items() if k != "loss_params"}, **params.get("loss_params", {})}


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
        both = both_preparations(rows, dataset)
        if both:
            sections.append((f"{dataset}: every criterion of Fig. 9 under both preparations (our reading of Sec. 4.1, "
                             "and the good documents kept) against the paper's", both))
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
        sweep = [r for r in _select(rows, dataset=dataset, split="train-sweep")
                 if not r["metric"].startswith(QUERY_PREFIX)]
        if sweep:
            for metric, ylabel in (("avg_slack", "average slack"), ("objective_ratio", "obj / obj(w=0)"),
                                   ("w_norm2", "|w|^2 (largest C = 1)")):
                series = {}
                for model in SWEEP:
                    points = sorted((params_of(r)["C"], r["value"])
                                    for r in sweep if r["model"] == model and r["metric"] == metric)
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
            sections.append((f"{dataset}: which reading of Fact 3.5 (SVM-mrr) reproduces the paper's training "
                             "behaviour", reading_section(rows, dataset)))
        # Figs. 8 and 10
        timing = _select(rows, dataset=dataset, split="train-timing")
        if timing:
            folds = len({r["fold"] for r in timing})
            sections.append((f"{dataset}, Figs. 8 and 10: training time on each fold's training file (seconds, the "
                             f"least of {TIMING_ROUNDS} rounds; mean ± std over {folds} fold{'s' * (folds > 1)}; C "
                             "fixed: " + ", ".join(f"{k} {_flat(v[1])}" for k, v in TIMING.items()) + ")",
                             markdown_table(timing, fmt="{:.3f}", std=True, row_order=list(TIMING),
                                            column_order=["seconds", "oracle_seconds", "qp_seconds", "iterations"])))
    return sections
