"""The report of volkovs2011: Table 1 beside the published rows, Fig. 2 and the paired differences, the
studies beyond the paper, the sweeps and Fig. 1."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from structrank_lab.experiments.runner import wall_time
from structrank_lab.experiments.volkovs2011.design import (CONVENTION, DATASETS, FIG2_PAIRS, NDCG, OBJECTIVE_ROWS, ROWS,
                                                       SELECT, STUDY_PAIRS, SUM_ROWS, TABLE1_ROWS)
from structrank_lab.experiments.volkovs2011.objectives import fig1_derivatives
from structrank_lab.experiments.volkovs2011.published import FIG1_ENERGIES, FIG1_LOSSES, PAPER_TABLE1
from structrank_lab.experiments.verdict_rules import ALPHA, direction
from structrank_lab.experiments.volkovs2011.recorded import (_order_key, paired_differences, paired_queries, runs_by_setting,
                                                         seed_means, selected)
from structrank.figures import new_figure, save_figure


def _cell(values):
    values = list(values)
    if not values:
        return "—"
    spread = np.std(values, ddof=1) if len(values) > 1 else 0.0
    return f"{np.mean(values):.4f} ± {spread:.4f}"


def _table(header, lines):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(line) + " |" for line in lines]
    return "\n".join(out)


def table1(chosen, dataset, rows_shown):
    """Test NDCG@1..5 of ``rows_shown`` (mean ± seed spread) and the published rows; None if empty."""
    lines = []
    for model in rows_shown:
        cells = [_cell(seed_means(chosen, model, "test:" + m).values()) for m in NDCG]
        if any(c != "—" for c in cells):
            lines.append([model, *cells])
    for name, values in PAPER_TABLE1.get(dataset, {}).items():
        lines.append([f"published: {name}", *(f"{v / 100:.4f}" for v in values)])
    return _table(["model", *NDCG], lines) if lines else None


def difference_table(chosen, pairs):
    """Paired test differences (points) of each (model, reference) pair: by seed for each cut-off, and over the test
    queries for their mean (the claims' unit: ``verdict_rules.direction``'s interval); None if no pair ran."""
    lines = []
    for model, reference in pairs:
        diffs = paired_differences(chosen, model, reference)
        if not diffs[NDCG[0]]:
            continue
        cells = []
        for metric in NDCG:
            values = diffs[metric]
            same = max(sum(v > 0 for v in values), sum(v < 0 for v in values))
            cells.append(f"{100 * np.mean(values):+.2f} ± {100 * np.std(values, ddof=1) if len(values) > 1 else 0:.2f}"
                         f" ({same}/{len(values)})")
        queries = paired_queries(chosen, model, reference)
        cells.append(direction(*queries, units="queries").interval if queries is not None else "—")
        lines.append([f"{model} − {reference}", *cells])
    return _table(["difference (points)", *NDCG, "NDCG@1-5 over test queries"], lines) if lines else None


def chosen_settings(chosen, rows_shown):
    lines = []
    for model in rows_shown:
        counts = {}
        epochs = []
        for (m, _, _), (setting, metrics) in chosen.items():
            if m == model:
                label = ", ".join(f"{k}={v:g}" for k, v in setting)
                counts[label] = counts.get(label, 0) + 1
                epochs.append(metrics["best_epoch"])
        if counts:
            text = "; ".join(f"{label} ×{n}" for label, n in sorted(counts.items(), key=lambda kv: -kv[1]))
            lines.append([model, text, f"{np.mean(epochs):.1f}"])
    return _table(["model", "setting chosen on vali (times, over folds × seeds)", "mean best epoch"], lines)


def sweep_table(runs, model):
    by_setting = {}
    for (m, _, _, setting), metrics in runs.items():
        if m == model:
            by_setting.setdefault(setting, []).append(metrics)
    lines = []
    for setting, items in sorted(by_setting.items(), key=lambda kv: _order_key((model, "", 0, kv[0]))):
        vali = np.mean([x[SELECT] for x in items])
        test = [np.mean([x["test:" + m] for x in items]) for m in NDCG]
        lines.append([", ".join(f"{k}={v:g}" for k, v in setting), f"{vali:.4f}", *(f"{v:.4f}" for v in test),
                      f"{np.mean([x['best_epoch'] for x in items]):.1f}", str(len(items))])
    return _table(["setting", "vali NDCG@1-5", *(f"test {m}" for m in NDCG), "best epoch", "runs"], lines)


def fig2(chosen, dataset, path):
    """Bars of test NDCG@1..5 per objective; the paper's ML and LA (sums over Y0) hatched beside ours."""
    shown = [model for model in TABLE1_ROWS if seed_means(chosen, model, "test:ndcg@1")]
    fig = new_figure(figsize=(8, 3.5))
    ax = fig.add_subplot()
    width = 0.8 / len(shown)
    for j, model in enumerate(shown):
        means, spreads = [], []
        for metric in NDCG:
            values = list(seed_means(chosen, model, "test:" + metric).values())
            means.append(np.mean(values) if values else np.nan)
            spreads.append(np.std(values, ddof=1) if len(values) > 1 else 0.0)
        ax.bar(np.arange(len(NDCG)) + (j - (len(shown) - 1) / 2) * width, means, width, yerr=spreads, capsize=2,
               label=model, hatch="//" if model in SUM_ROWS.values() else None)
    ax.set_xticks(np.arange(len(NDCG)), [m.upper() for m in NDCG])
    low = min(v for model in shown for v in seed_means(chosen, model, "test:ndcg@1").values())
    ax.set_ylim(max(0.0, low - 0.03), None)
    ax.set_ylabel("test NDCG (mean over folds)")
    ax.set_title(f"{dataset}: NDCG@1-5 by objective (error bars: spread over seeds)")
    ax.legend(fontsize=7, ncol=len(shown))
    save_figure(fig, path)


def fig1(path):
    derivatives = fig1_derivatives()
    fig = new_figure(figsize=(10, 3.0))
    for j, (objective, values) in enumerate(derivatives.items()):
        ax = fig.add_subplot(1, len(derivatives), j + 1)
        ax.bar(range(5), values, color=["C3" if loss else "C2" for loss in FIG1_LOSSES])
        ax.axhline(0, color="black", linewidth=0.6)
        ax.set_xticks(range(5), [f"({e:g}, {l:g})" for e, l in zip(FIG1_ENERGIES, FIG1_LOSSES)], fontsize=6,
                      rotation=45)
        if j == 0:
            ax.set_xlabel("(energy, loss)", fontsize=7)
        ax.set_ylim(-1.05, 1.05)
        ax.set_title(objective.upper(), fontsize=9)
    fig.suptitle("Fig. 1: -dObjective/dE, normalised (green: the ground truth; alpha = 1 for LA, T = 1 for KL)",
                 fontsize=9)
    save_figure(fig, path)


def _wall_time(out):
    timing = wall_time(out)
    if timing is None:
        return ""
    return (f" The whole reproduction ({timing['runs']} runs, every data set) took {timing['seconds'] / 60:.1f} "
            f"minutes of wall time with --jobs {timing['jobs']}.")


def fig1_table():
    lines = [[o.upper(), *(f"{v:+.3f}" for v in values)] for o, values in fig1_derivatives().items()]
    return _table(["objective", *(f"E={e:g}, l={l:g}" for e, l in zip(FIG1_ENERGIES, FIG1_LOSSES))], lines)


def report_sections(rows, out, link_prefix=""):
    """The report's sections (title, markdown); figures are written into ``out`` and linked as ``link_prefix + name``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    sections = []
    for dataset in DATASETS:
        runs = runs_by_setting(rows, dataset)
        if not runs:
            continue
        chosen = selected(runs)
        n_folds = len({fold for (_, fold, _) in chosen})
        n_seeds = len({seed for (_, _, seed) in chosen})
        sections.append((
            f"{dataset}, Table 1: test NDCG@1-5 ({CONVENTION} convention)",
            f"Mean over {n_folds} folds and {n_seeds} seeds of the CRF whose setting had the best vali NDCG@1-5 "
            "in each fold and seed; ± is the spread over seeds (standard deviation of the per-seed 5-fold means). "
            "Rows `published:` are the paper's Table 1, not run here.\n\n"
            + table1(chosen, dataset, TABLE1_ROWS)))
        name = f"fig2-{dataset.lower()}.png"
        if all(seed_means(chosen, m, "test:ndcg@1") for m in OBJECTIVE_ROWS):
            fig2(chosen, dataset, out / name)
            figure = f"\n\n![Fig. 2]({link_prefix}{name})"
        else:
            figure = ""
        sections.append((
            f"{dataset}, Fig. 2: each objective against ML",
            "Test NDCG differences in points, paired by fold and seed: mean over seeds of the 5-fold mean "
            "difference ± its spread over seeds, and in brackets how many seeds agree on the sign. The last column "
            "is the unit the claims are judged on: the mean of NDCG@1-5 paired over the test queries (each query's "
            "value the mean over the seeds), the difference with its "
            f"{100 * (1 - ALPHA):.0f}% interval and the larger p of the paired t-test and randomisation test. "
            "`ML` and `LA` take the mean over the zero-loss rankings; `ML-sum` and `LA-sum` are the paper's "
            "(Eq. 10's sum).\n\n"
            + (difference_table(chosen, FIG2_PAIRS) or "")
            + figure))
        extra = table1(chosen, "", [r for r in ROWS if r not in TABLE1_ROWS])
        if extra:
            differences = difference_table(chosen, STUDY_PAIRS)
            sections.append((f"{dataset}: studies beyond the paper (KL with T < 1, shuffled visits; single-level "
                             "queries kept)",
                             "Training visits the queries in the order of the data; `shuffled` draws a new order "
                             "each epoch. Single-level training queries (all documents of one relevance level) are "
                             "skipped by default; the rows `kept` train on them too. Differences are paired by fold and seed "
                             "as above.\n\n" + extra + "\n\n" + (differences or "")))
        sections.append((f"{dataset}: settings chosen on vali", chosen_settings(chosen, list(ROWS))))
        sweeps = "\n\n".join(f"**{model}**\n\n{sweep_table(runs, model)}" for model in ROWS
                             if any(k[0] == model for k in runs))
        seconds = [m["train_seconds"] for m in runs.values() if "train_seconds" in m]
        sections.append((f"{dataset}: the sweeps of Sec. 6.2 (means over folds and seeds)",
                         sweeps + f"\n\n{len(seconds)} CRFs trained, {np.mean(seconds):.2f} s each on average "
                                  f"({np.sum(seconds) / 60:.1f} CPU-minutes in all)." + _wall_time(out)))
    fig1(out / "fig1-derivatives.png")
    sections.append(("Fig. 1: negative derivatives of each objective with respect to the energies",
                     "Energies [-1, -0.5, 0, 0.5, 1], losses [5, 1, 0, 1, 5] (the middle one is the ground truth); "
                     "-dObjective/dE normalised by its l2 norm. A positive value raises the configuration's energy "
                     "(lowers its probability).\n\n" + fig1_table()
                     + f"\n\n![Fig. 1]({link_prefix}fig1-derivatives.png)"))
    return sections
