"""``structrank reproduce volkovs2011``: loss-sensitive training of permutation CRFs (Volkovs et al. 2011).

On LETOR 4.0 MQ2008, five folds (MQ2007 too when the data folder has it), for every objective
(ML, LA, LS, EL, KL; and ML-sum, LA-sum, the paper's ML and LA with Eq. 10's sum over the
zero-loss rankings where ours take their mean) and every setting of the sweeps of Sec. 6.2 (learning rates
{0.5, 0.1, 0.01, 0.001}, alpha in {1, 10, 20, 50} for LA, T in {1, 10, 20, 50} for KL), and for
three seeds: one CRF is trained per (fold, seed, objective, setting) for at most 100 epochs, the
epoch chosen on the fold's vali file. The report then chooses, per fold and seed, the setting with
the best vali NDCG (the mean of NDCG@1..5, letor4 convention) and gives:

- Table 1: test NDCG@1..5, the mean over folds and seeds, ± the spread over seeds (the standard
  deviation of the three 5-fold means), beside the paper's published rows (marked as published);
- Fig. 2 as a figure, with the seed spread as error bars, and each objective's difference to ML
  (ours and the paper's sum), paired by fold and seed, with its seed spread, so that real
  differences can be told from noise;
- the sweeps: vali and test NDCG per setting;
- three studies the paper does not make: KL with T below the paper's grid ({0.03, 0.1, 0.3}); KL
  with the queries visited in a new random order each epoch (the others visit them in the order
  of the data, as "iterating over queries" reads); and the effect of keeping the training
  queries that have a single relevance level (skipped by default; ML, LA and KL get a non-zero
  gradient from them, ML-sum 720 times ours on a 6-document query);
- Fig. 1: the normalised negative derivative of each objective with respect to the energies of
  the caption's five configurations, computed exactly (structrank.oracles.crf.energy_gradient);
- Claims (:func:`claims`): every claim of the paper against these runs, for the Claims section of
  the results page (structrank.experiments.claims).
"""

from __future__ import annotations

import functools
import itertools
import json
import sys
import time
from pathlib import Path

import numpy as np

from structrank.data import letor_folds, read_letor
from structrank.experiments.report import new_figure, save_figure, write_report
from structrank.experiments.runner import Measurement, RunSpec, letor_roots, run_experiment, wall_time
from structrank.learners.crf import PermutationCRFRanker
from structrank.metrics import evaluate
from structrank.models import CRF_ALPHA_GRID, CRF_METRIC, CRF_RATE_GRID, CRF_T_GRID
from structrank.oracles.crf import energy_gradient

EXPERIMENT = "volkovs2011"
DATASETS = ("MQ2008", "MQ2007")
CONVENTION = "letor4"
SEEDS = (0, 1, 2)
MAX_EPOCHS = 100
NDCG = tuple(f"ndcg@{k}" for k in range(1, 6))
TEST_METRICS = (*NDCG, "ndcg@10", "map")
SELECT = "vali:ndcg@1-5"  # the measurement settings are chosen on
SMALL_T = [0.03, 0.1, 0.3]

# row -> (objective, grid besides the learning rate, skip single-level queries, shuffle the visiting order)
ROWS = {
    "ML": ("ml", {}, True, False),
    "LA": ("la", {"alpha": CRF_ALPHA_GRID}, True, False),
    "LS": ("ls", {}, True, False),
    "EL": ("el", {}, True, False),
    "KL": ("kl", {"T": CRF_T_GRID}, True, False),
    "KL, T < 1": ("kl", {"T": SMALL_T}, True, False),
    "KL, shuffled": ("kl", {"T": CRF_T_GRID}, True, True),
    "ML, single-level kept": ("ml", {}, False, False),
    "LA, single-level kept": ("la", {"alpha": CRF_ALPHA_GRID}, False, False),
    "KL, single-level kept": ("kl", {"T": CRF_T_GRID}, False, False),
    # the paper's ML and LA: Eq. 10's sum over the zero-loss rankings where ours take the mean
    "ML-sum": ("ml-sum", {}, True, False),
    "LA-sum": ("la-sum", {"alpha": CRF_ALPHA_GRID}, True, False),
    "ML-sum, single-level kept": ("ml-sum", {}, False, False),
}
OBJECTIVE_ROWS = ("ML", "LA", "LS", "EL", "KL")
#: our ML and LA -> the paper's (the sum over Y0)
SUM_ROWS = {"ML": "ML-sum", "LA": "LA-sum"}
#: Table 1 and Fig. 2: the five objectives, then the paper's ML and LA beside ours
TABLE1_ROWS = (*OBJECTIVE_ROWS, *SUM_ROWS.values())
#: Fig. 2's paired differences: each objective against our ML and the paper's, the sums against our means
FIG2_PAIRS = ([(m, "ML") for m in OBJECTIVE_ROWS[1:]] + [("LA-sum", "ML-sum")]
              + [(m, "ML-sum") for m in OBJECTIVE_ROWS[2:]] + [("ML-sum", "ML"), ("LA-sum", "LA")]
              + [("KL", "LA"), ("KL", "LA-sum"), ("KL", "EL")])
#: the studies beyond the paper, each against the row it ablates
STUDY_PAIRS = ([("KL, T < 1", "KL"), ("KL, shuffled", "KL")]
               + [(f"{m}, single-level kept", m) for m in ("ML", "LA", "KL", "ML-sum")])
QUICK_ROWS = {"ML": {"learning_rate": [0.1]}, "KL": {"learning_rate": [0.1], "T": [1.0]},
              "ML-sum": {"learning_rate": [0.1]}}

# Table 1 of the paper (NDCG@1..5, in %), published values shown beside ours, never computed with.
PAPER_TABLE1 = {
    "MQ2007": {
        "Regression": (38.94, 39.60, 39.86, 40.53, 41.11), "SVM-Struct": (40.96, 40.73, 40.62, 40.84, 41.42),
        "ListNet": (40.02, 40.63, 40.91, 41.44, 41.70), "AdaRank": (38.76, 39.67, 40.44, 40.67, 41.02),
        "KL": (41.06, 40.90, 40.93, 41.33, 41.75),  # published
    },
    "MQ2008": {
        "Regression": (36.67, 40.62, 42.89, 45.60, 47.73), "SVM-Struct": (36.26, 39.84, 42.85, 45.08, 46.95),
        "ListNet": (37.54, 41.12, 43.24, 45.68, 47.47), "AdaRank": (38.26, 42.11, 44.20, 46.53, 48.21),
        "KL": (39.47, 41.80, 43.74, 46.18, 47.84),  # published
    },
}

# Fig. 1's example: five configurations, the middle one the ground truth
FIG1_ENERGIES = (-1.0, -0.5, 0.0, 0.5, 1.0)
FIG1_LOSSES = (5.0, 1.0, 0.0, 1.0, 5.0)
#: Fig. 1's objectives (its example has one ground truth, where ml-sum and la-sum are ml and la)
FIG1_OBJECTIVES = ("ml", "la", "ls", "el", "kl")


def fig1_derivatives(alpha=1.0, T=1.0, objectives=FIG1_OBJECTIVES):
    """{objective: -dObjective/dE / |dObjective/dE|} on Fig. 1's five configurations (LA weight alpha, KL's T)."""
    out = {}
    for objective in objectives:
        param = {"la": alpha, "la-sum": alpha, "kl": T}.get(objective, 1.0)
        _, g = energy_gradient(objective, FIG1_ENERGIES, FIG1_LOSSES, param)
        out[objective] = -g / np.linalg.norm(g)
    return out


@functools.lru_cache(maxsize=16)
def _fold(root, name):
    fold = next(f for f in letor_folds(root) if f.name == name)
    train = read_letor(fold.train)
    return train, read_letor(fold.vali, n_features=train.n_features), read_letor(fold.test, n_features=train.n_features)


def grid_points(row, quick=False):
    """The settings of a row, in a fixed order: dicts of learning_rate and alpha or T."""
    extra = ROWS[row][1]
    grid = {"learning_rate": CRF_RATE_GRID, **extra}
    if quick:
        grid = {**grid, **QUICK_ROWS.get(row, {})}
    keys = sorted(grid)
    return [dict(zip(keys, values)) for values in itertools.product(*(grid[k] for k in keys))]


class _Runner:
    """Picklable run function bound to the data set roots."""

    def __init__(self, roots):
        self.roots = roots

    def __call__(self, spec):
        train, vali, test = _fold(self.roots[spec.dataset], spec.fold)
        objective, _, skip, shuffle = ROWS[spec.model]
        params = {k: v for k, v in spec.params.items() if k in ("learning_rate", "alpha", "T")}
        model = PermutationCRFRanker(objective=objective, max_epochs=spec.params["max_epochs"], skip_single_level=skip,
                                     shuffle=shuffle, random_state=spec.seed, dev_metric=",".join(CRF_METRIC),
                                     dev_convention=CONVENTION, **params)
        start = time.perf_counter()
        model.fit(train, eval_set=vali)
        seconds = time.perf_counter() - start
        out = [Measurement(SELECT, CONVENTION, float(model.dev_curve_.max())),
               Measurement("best_epoch", "train", model.best_epoch_),
               Measurement("train_seconds", "time", seconds),
               Measurement("queries_used", "train", model.n_queries_used_)]
        result = evaluate(test.y, model.predict(test.X), test.qid, TEST_METRICS, CONVENTION).metrics
        data = [Measurement(f"data:{split}_{name}", "data", value) for split, ds in (("train", train), ("vali", vali),
                                                                                      ("test", test))
                for name, value in data_counts(ds).items()]
        return out + [Measurement("test:" + m, CONVENTION, v) for m, v in result.items()] + data


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


def reproduce(out, data_dir=None, quick=False, n_jobs=1):
    """Run the sweeps (``quick``: MQ2008 Fold1, one seed, two settings) and write the report into ``out``."""
    roots = letor_roots(DATASETS, data_dir, only="MQ2008" if quick else None)
    rows = run_experiment(out, plan(roots, quick), _Runner(roots), n_jobs, EXPERIMENT)
    write_report(Path(out) / "report.md", report_sections(rows, out),
                 title="Volkovs, Larochelle & Zemel (2011), reproduced")
    print(f"wrote {Path(out) / 'results.csv'} and {Path(out) / 'report.md'}", file=sys.stderr)
    return rows


# -- report -----------------------------------------------------------------------------------------


def _params(row):
    return row["params"] if isinstance(row["params"], dict) else json.loads(row["params"])


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


def difference_table(chosen, pairs):
    """Paired test differences (points) of each (model, reference) pair; None if no pair ran."""
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
        lines.append([f"{model} − {reference}", *cells])
    return _table(["difference (points)", *NDCG], lines) if lines else None


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
    fig.tight_layout()
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
            "difference ± its spread over seeds, and in brackets how many seeds agree on the sign. "
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
