"""``structrank reproduce any-scorer``: every structured loss on every scorer, against LightGBM lambdarank.

On LETOR 4.0 MQ2008 (letor4) and LETOR 3.0 OHSUMED (letor3), all five folds: the MAP hinge, the
NDCG@10 hinge and the permutation CRF's KL objective (Volkovs et al. 2011) train four scorers --
a linear model (StructSVMRanker, PermutationCRFRanker), the same linear learners behind a Nyström
RBF embedding (500 landmarks, gamma = 1 / number of features, fitted on the training file), boosted
trees (StructuredBoostingRanker) and a ReLU network (MLPRanker) -- beside LightGBM's lambdarank
and RankSVM. Every model takes its defaults as a user would (``gain="auto"``: graded NDCG gains on
these three-level labels) and has its grid chosen on each fold's vali file by the metric its
``structrank train`` entry names. Each test query's values are recorded, so the report compares
every model with lambdarank over the pooled test queries of the five folds (paired t-test and
randomisation test), and checks the two acceptance bars (TREES_MARGIN, MLP_MARGIN) from the recorded values.

Every model runs at its default seed (0) -- the hinge losses' linear learners and trees and
lambdarank do not use it; the CRF objectives draw their subsets from it; the Nyström landmarks are
drawn from seed 0 -- but the network, which its bar compares with the linear model of its
loss: each MLP row is run with ``MLP_SEEDS`` seeds (its weights and query order), each choosing its
own grid point and epoch on vali and each starting at the same linear model (the linear learner at
its default seed), so that the bar compares what the method does rather than what one draw of it
did. Its cells and per-query values are means over the seeds, and the bars say how the MLP's
shortfall or lead varied from seed to seed.
"""

from __future__ import annotations

import dataclasses
import functools
import time

import numpy as np

from structrank.data import letor_folds, read_letor
from structrank_lab.experiments.report import QUERY_PREFIX, dataset_parts, markdown_table, per_query
from structrank_lab.experiments.runner import Measurement, fold_plan, reproduce_letor_experiment
from structrank.learners.registry import get_model, select_on_vali
from structrank.metrics import evaluate
from structrank.metrics.compare import against_baseline

EXPERIMENT = "any-scorer"
DATASETS = {"MQ2008": "letor4", "OHSUMED": "letor3"}
SCORERS = {"linear": "", "Nyström-RBF + linear": "", "trees": "gbrt-", "MLP": "mlp-"}
NYSTROEM = "Nyström-RBF + linear"
LOSSES = ("map", "ndcg", "crf-kl")
# the linear learner of each loss (the Nyström scorer uses it too): SVM-ndcg as the paper has it, phi_po and the
# ideal target (the short name svm-ndcg trains phi_dorm with the latent target)
LINEAR = {"map": "svm-map", "ndcg": "svm-ndcg-ideal", "crf-kl": "crf-kl"}
# the metric each loss stands for (the CRF's: Volkovs et al. tune and report NDCG@1-5)
LOSS_METRIC = {"map": "map", "ndcg": "ndcg@10", "crf-kl": "ndcg@5"}
BASELINES = {"LightGBM lambdarank": "lambdamart", "RankSVM": "ranksvm"}
REFERENCE = "LightGBM lambdarank"
LANDMARKS = 500
METRICS = ("map", "mrr@10", "ndcg@5", "ndcg@10")
TREES_MARGIN = 0.005  # trees on the NDCG@10 loss at least lambdarank's NDCG@10 minus 0.5 points
MLP_SEEDS = 5  # seeds of each MLP row (a quick run: 2, so that it still averages over seeds)


def row_name(scorer, loss):
    return f"{scorer} · {loss}"


def models() -> dict:
    """{row: CLI model}: every scorer with every loss, then the baselines."""
    rows = {}
    for scorer, prefix in SCORERS.items():
        for loss in LOSSES:
            rows[row_name(scorer, loss)] = LINEAR[loss] if scorer in ("linear", NYSTROEM) else prefix + loss
    return {**rows, **BASELINES}


MODELS = models()


@functools.lru_cache(maxsize=6)
def _load(path: str, n_features: int | None):
    return read_letor(path, n_features=n_features, sparse=True)


def _dense(X):
    return X.toarray() if hasattr(X, "toarray") else np.asarray(X)


def _quick_grid(spec):
    """The first value of each grid parameter: a quick run fits one model per row."""
    return {name: values[:1] for name, values in spec.grid.items()}


def _run(spec, root):
    # deferred: `results` imports every experiment module; the kernels (scikit-learn) load only to run
    from structrank.kernels import NystroemFeatures, RBFKernel

    convention = DATASETS[spec.dataset]
    fold = next(f for f in letor_folds(root) if f.name == spec.fold)
    train = _load(str(fold.train), None)
    vali, test = _load(str(fold.vali), train.n_features), _load(str(fold.test), train.n_features)
    tic = time.perf_counter()
    if spec.model.startswith(NYSTROEM):
        nys = NystroemFeatures(RBFKernel(gamma=1.0 / train.n_features), n_landmarks=LANDMARKS, random_state=0)
        train = train.with_X(nys.fit_transform(_dense(train.X)))
        vali, test = (d.with_X(nys.transform(_dense(d.X))) for d in (vali, test))
    model_spec = get_model(MODELS[spec.model])
    grid = _quick_grid(model_spec) if spec.params.get("grid") == "quick" else None
    fixed = {"random_state": spec.seed} if spec.model.startswith("MLP") else None
    model, _, vali_value = select_on_vali(model_spec, train, vali, fixed=fixed, convention=convention, grid=grid)
    seconds = time.perf_counter() - tic
    result = evaluate(test.y, model.predict(test.X), test.qid, METRICS, convention, docids=test.docids)
    out = [Measurement(m, convention, v) for m, v in result.metrics.items()]
    out += [Measurement(f"{QUERY_PREFIX}{q}:{m}", convention, float(v))
            for m in METRICS for q, v in zip(result.qids, result.per_query[m])]
    out += [Measurement("vali:" + model_spec.metric_label, convention, vali_value),
            Measurement("seconds", "time", seconds)]
    return out


def plan(roots, quick=False):
    """``fold_plan``'s runs, each MLP run repeated with seeds 1 .. ``MLP_SEEDS`` - 1 (a quick run: seed 1)."""
    runs = fold_plan(EXPERIMENT, roots, MODELS, quick)
    seeds = range(1, 2 if quick else MLP_SEEDS)
    return runs + [dataclasses.replace(r, seed=s) for s in seeds for r in runs if r.model.startswith("MLP")]


def reproduce(out, data_dir=None, quick=False, n_jobs=1, keep=None):
    """Run every scorer and loss on every fold (``quick``: MQ2008 Fold1, one grid point each) and write the report."""
    return reproduce_letor_experiment(out, EXPERIMENT, DATASETS, plan, _run, report_sections,
                                      "Any structured loss on any scorer", data_dir, quick, n_jobs, keep)


def fold_mean(rows, dataset, model, metric):
    """The mean over folds of one model's test metric (None when not run)."""
    values = [r["value"] for r in rows if r["dataset"] == dataset and r["model"] == model and r["metric"] == metric]
    return sum(values) / len(values) if values else None


def comparison_table(rows, dataset, metrics=("ndcg@10", "map")):
    """Markdown: every model against lambdarank on each metric over the pooled test queries (p-values
    raw and Holm-adjusted across the models; the verdict on the adjusted ones)."""
    lines = [f"| model | metric | model | {REFERENCE} | difference (points) | t-test p (Holm) | randomisation p (Holm) | "
             "queries | verdict (both tests, Holm, 0.05) |", "|---" * 9 + "|"]
    for metric in metrics:
        values = {m: per_query(rows, dataset, m, metric) for m in MODELS}
        for r in against_baseline(values, REFERENCE, metric):
            lines.append(f"| {r.system} | {metric} | {r.mean:.4f} | {r.baseline_mean:.4f} | {100 * r.difference:+.2f} | "
                         f"{r.t_p:.3g} ({r.t_p_holm:.3g}) | {r.rand_p:.3g} ({r.rand_p_holm:.3g}) | {r.queries} | "
                         f"{r.verdict(REFERENCE)} |")
    return "\n".join(lines)


def acceptance(rows, dataset):
    """The acceptance bars, each a sentence with its verdict computed from the fold means."""
    lines = []
    trees, reference = (fold_mean(rows, dataset, m, "ndcg@10") for m in (row_name("trees", "ndcg"), REFERENCE))
    if trees is not None and reference is not None:
        holds = trees >= reference - TREES_MARGIN
        paired = paired_gap(rows, dataset, row_name("trees", "ndcg"), REFERENCE, "ndcg@10")
        lines.append(f"- Boosted trees on the NDCG@10 loss: NDCG@10 {trees:.4f} against lambdarank's {reference:.4f} "
                     f"({100 * (trees - reference):+.2f} points; the bar is -{100 * TREES_MARGIN:.1f}): "
                     f"**{'holds' if holds else 'does not hold'}**."
                     + (f" Paired over {paired.queries} test queries, trees minus lambdarank {gap_interval(paired)}."
                        if paired else ""))
    for loss in LOSSES:
        metric = LOSS_METRIC[loss]
        mlp, linear = (fold_mean(rows, dataset, row_name(s, loss), metric) for s in ("MLP", "linear"))
        if mlp is None or linear is None:
            continue
        lines.append(f"- MLP on the {loss} loss against the linear model with the same loss, on {metric}: {mlp:.4f} "
                     f"against {linear:.4f} ({100 * (mlp - linear):+.2f} points): "
                     f"**{'holds' if mlp >= linear else 'does not hold'}**."
                     + mlp_seed_spread(rows, dataset, loss, metric, linear)
                     + mlp_against_linear(rows, dataset, loss, metric))
    return "\n".join(lines)


def mlp_seed_spread(rows, dataset, loss, metric, linear) -> str:
    """How the MLP's fold mean against the linear model's varied over its seeds ("" for one seed)."""
    by_seed: dict = {}
    for r in rows:
        if r["dataset"] == dataset and r["model"] == row_name("MLP", loss) and r["metric"] == metric:
            by_seed.setdefault(int(r.get("seed", 0)), []).append(r["value"])
    if len(by_seed) < 2:
        return ""
    gaps = [100 * (np.mean(v) - linear) for _, v in sorted(by_seed.items())]
    return (f" The cell is the mean of {len(gaps)} seeds; seed by seed the MLP's fold mean minus the linear model's "
            f"was {', '.join(f'{g:+.2f}' for g in gaps)} points (at least the linear model for "
            f"{sum(g >= 0 for g in gaps)} of {len(gaps)} seeds).")


def paired_gap(rows, dataset, a, b, metric):
    """Model ``a`` against model ``b`` over the test queries both were measured on (each a mean over
    its seeds): the comparison table's ``PairedRow`` of the two alone, or None with fewer than two
    such queries."""
    found = against_baseline({name: per_query(rows, dataset, name, metric) for name in (b, a)}, b, metric)
    return found[0] if found else None


def gap_interval(row) -> str:
    """The mean paired difference in points with its 95% confidence interval: how far below and how
    far above the queries still allow the difference to be, where a p-value says only whether it is 0."""
    return (f"{100 * row.difference:+.2f} points (95% confidence interval {100 * row.ci_low:+.2f} to "
            f"{100 * row.ci_high:+.2f})")


def mlp_against_linear(rows, dataset, loss, metric) -> str:
    """The MLP against the linear model of one loss, paired over the pooled test queries, and how
    far the MLP's lead on vali (where its grid point and epoch were chosen) carried to test:
    what says whether a shortfall on test is more than the data can tell apart."""
    names = row_name("MLP", loss), row_name("linear", loss)
    test = paired_gap(rows, dataset, *names, metric)
    if test is None:
        return ""
    text = (f" Paired over {test.queries} test queries, MLP minus linear {gap_interval(test)}: t-test "
            f"p = {test.t_p:.3g}, randomisation p = {test.rand_p:.3g}, "
            + ("a significant difference at 0.05." if max(test.t_p, test.rand_p) < 0.05
               else "no significant difference at 0.05."))
    vali, labels = {name: {} for name in names}, {name: set() for name in names}
    for r in rows:  # each fold's vali value, the mean over the seeds of a model run with several
        if r["dataset"] == dataset and r["model"] in vali and r["metric"].startswith("vali:"):
            vali[r["model"]].setdefault(r["fold"], []).append(r["value"])
            labels[r["model"]].add(r["metric"])
    folds = sorted(set(vali[names[0]]) & set(vali[names[1]]))
    if folds and labels[names[0]] == labels[names[1]]:  # both chosen by the same vali metric
        lead = np.mean([np.mean(vali[names[0]][f]) - np.mean(vali[names[1]][f]) for f in folds])
        text += (f" On vali the MLP was {'ahead of' if lead > 0 else 'behind'} the linear model by "
                 f"{100 * abs(lead):.2f} points (mean over {len(folds)} folds, "
                 f"{' '.join(sorted(labels[names[0]]))[len('vali:'):]}); on test {100 * test.difference:+.2f}.")
    return text


def report_sections(rows, out=None, link_prefix=""):
    sections = []
    for dataset, convention, part, folds in dataset_parts(rows, DATASETS):
        means = [r for r in part if r["metric"] in METRICS]
        seeds = len({r.get("seed", 0) for r in part if r["model"].startswith("MLP")})
        sections.append((f"{dataset}: test metrics ({convention}), mean ± std over {folds} folds"
                         + (f" (the MLP rows: and {seeds} seeds each)" if seeds > 1 else "") + ", every grid chosen "
                         "on vali", markdown_table(means, std=True, row_order=list(MODELS), column_order=list(METRICS))))
        # one run per fold, as for every other model: the MLP's seed 0 (a later seed may find its linear
        # start cached by an earlier run in the same process, and so take less time)
        seconds = [r for r in part if r["metric"] == "seconds" and int(r.get("seed", 0)) == 0]
        sections.append((f"{dataset}: seconds per run (the embedding and the whole grid on train and vali"
                         + ("; the MLP's first seed" if seeds > 1 else "") + ")",
                         markdown_table(seconds, index="model", columns="fold", fmt="{:.1f}",
                                        row_order=list(MODELS))))
        sections.append((f"{dataset}: every model against {REFERENCE}, paired over the {folds} folds' pooled test "
                         "queries", comparison_table(part, dataset)))
        bars = acceptance(part, dataset)
        if bars:
            sections.append((f"{dataset}: the acceptance bars (fold means)", bars))
    return sections
