"""``structrank reproduce own-metric``: does each structured loss win on the metric it stands for?

On LETOR 3.0 OHSUMED (letor3) and LETOR 4.0 MQ2008 (letor4), all five folds: every structural SVM
of Chakrabarti et al. (2008) and the latent-target variants (structrank.oracles.latent), C chosen
on each fold's vali file by the loss's own metric (SVM-auc by AUC). Each test query's NDCG@10,
MRR@10 and MAP are recorded, so that the report compares, over the pooled test queries of the
five folds (each query is in one test fold), every NDCG loss with SVM-auc on NDCG@10 and every MRR
loss with SVM-auc on MRR@10: mean difference, paired t-test and paired randomisation test.

The losses include the latent-target SVM-ndcg and SVM-mrr and, as the feature-map ablation,
NDCG@10 with phi_dorm (sparse and latent); per-query test values are recorded as
``q:<qid>:<metric>``. The short names' defaults (svm-ndcg, svm-mrr, dorm: target="auto") are run too, and
each is set against the better of the two formulations it chooses between (``DEFAULTS``).
"""

from __future__ import annotations

import dataclasses
import functools


from structrank.data import letor_folds, read_letor
from structrank_lab.experiments.report import QUERY_PREFIX, dataset_parts, markdown_table, per_query
from structrank_lab.experiments.runner import Measurement, fold_plan, paper_model, reproduce_letor_experiment
from structrank.learners.registry import select_on_vali
from structrank.metrics import evaluate
from structrank.metrics.compare import against_baseline

EXPERIMENT = "own-metric"
DATASETS = {"OHSUMED": "letor3", "MQ2008": "letor4"}
# row -> (CLI model, the loss's own metric: C is chosen on vali by it[, fixed parameters]); the papers' rows name
# the literal formulations (-ideal): the short names svm-ndcg, svm-mrr and dorm choose their target (target="auto")
MODELS = {
    "SVM-auc": ("svm-auc", "auc"),
    "SVM-map": ("svm-map", "map"),
    "SVM-ndcg": ("svm-ndcg-ideal", "ndcg@10"),
    "SVM-ndcg latent": ("svm-ndcg-latent", "ndcg@10"),
    "SVM-ndcg-nc": ("svm-ndcg-nc", "ndcg@10"),
    "SVM-mrr": ("svm-mrr-ideal", "mrr@10"),
    "SVM-mrr latent": ("svm-mrr-latent", "mrr@10"),
    # NDCG@10 with phi_dorm (A(.) cut after rank 30, Sec. 4.4): the feature-map ablation of SVM-ndcg
    "DORM sparse": ("dorm-ideal", "ndcg@10", {"loss_params": {"dorm_cut": 30}}),
    "DORM latent": ("dorm-latent", "ndcg@10", {"loss_params": {"dorm_cut": 30}}),
    # the short names' defaults (target="auto": the ideal fit, the latent one where it stays at w = 0); DORM's with
    # the same cut as its two formulations above
    "SVM-ndcg default": ("svm-ndcg", "ndcg@10"),
    "SVM-mrr default": ("svm-mrr", "mrr@10"),
    "DORM default": ("dorm", "ndcg@10", {"loss_params": {"dorm_cut": 30}}),
}
REFERENCE = "SVM-auc"
# the comparisons the report makes: metric -> the rows trained for it
COMPARE = {"ndcg@10": ("SVM-ndcg", "SVM-ndcg latent", "SVM-ndcg-nc", "DORM sparse", "DORM latent", "SVM-ndcg default",
                       "DORM default"),
           "mrr@10": ("SVM-mrr", "SVM-mrr latent", "SVM-mrr default")}
# a short name's default against the formulations it chooses between: (metric, the ideal row, the latent row)
DEFAULTS = {"SVM-ndcg default": ("ndcg@10", "SVM-ndcg", "SVM-ndcg latent"),
            "SVM-mrr default": ("mrr@10", "SVM-mrr", "SVM-mrr latent"),
            "DORM default": ("ndcg@10", "DORM sparse", "DORM latent")}
METRICS = ("map", "mrr@10", "ndcg@10")
TRAIN_PREFIX = "train:"  # the chosen model's fit: its average slack and |w|^2 on the training file
QUICK_GRID = {"C": [0.1, 1.0]}
MARGIN = 0.01  # "at least SVM-auc's minus one point"


@functools.lru_cache(maxsize=6)
def _load(path: str, n_features: int | None):
    return read_letor(path, n_features=n_features, sparse=True)


def _run(spec, root):
    name, metric, *fixed = MODELS[spec.model]
    convention = DATASETS[spec.dataset]
    fold = next(f for f in letor_folds(root) if f.name == spec.fold)
    train = _load(str(fold.train), None)
    vali, test = _load(str(fold.vali), train.n_features), _load(str(fold.test), train.n_features)
    model_spec = dataclasses.replace(paper_model(name), metric=metric)
    grid = QUICK_GRID if spec.params.get("grid") == "quick" else None
    model, params, vali_value = select_on_vali(model_spec, train, vali, fixed[0] if fixed else None,
                                               convention=convention, grid=grid)
    result = evaluate(test.y, model.predict(test.X), test.qid, METRICS, convention, docids=test.docids)
    out = [Measurement(m, convention, v) for m, v in result.metrics.items()]
    out += [Measurement(f"{QUERY_PREFIX}{q}:{m}", convention, float(v))
            for m in METRICS for q, v in zip(result.qids, result.per_query[m])]
    out += [Measurement("chosen:C", "param", float(params["C"])), Measurement("vali:" + metric, convention, vali_value)]
    # the fit at the chosen C: an average slack near 1 with |w|^2 near 0 is a hinge that stays at its w = 0 value
    out += [Measurement(TRAIN_PREFIX + "slack", "fit", float(model.slack_)),
            Measurement(TRAIN_PREFIX + "w_norm2", "fit", float(model.coef_ @ model.coef_)),
            Measurement(TRAIN_PREFIX + "latent", "fit", float(model.fitted_target() == "latent"))]
    return out


def plan(roots, quick=False):
    return fold_plan(EXPERIMENT, roots, MODELS, quick)


def reproduce(out, data_dir=None, quick=False, n_jobs=1, keep=None):
    """Run every model on every fold (``quick``: MQ2008 Fold1, two values of C) and write the report. ``keep``: a
    folder of kept runs (``results/own-metric`` in a checkout), read first and written as each run finishes."""
    return reproduce_letor_experiment(out, EXPERIMENT, DATASETS, plan, _run, report_sections,
                                      "Does each loss win on its own metric?", data_dir, quick, n_jobs, keep)


def defaults_table(rows, dataset):
    """Markdown: each short name's default against the better of its two formulations (chosen by the pooled test
    mean) on its metric over the pooled test queries, with the paired t-test's confidence interval; and how many folds'
    defaults fitted the latent target."""
    lines = ["| default | metric | default | ideal target | latent target | the better | default - better (points) | "
             "95% interval (points) | within 1 point | folds on the latent target |", "|---" * 10 + "|"]
    for name, (metric, ideal, latent) in DEFAULTS.items():
        values = {m: per_query(rows, dataset, m, metric) for m in (name, ideal, latent)}
        if not all(values.values()):
            continue
        means = {m: sum(v.values()) / len(v) for m, v in values.items()}
        better = max((ideal, latent), key=means.get)
        paired = against_baseline({better: values[better], name: values[name]}, better, metric)
        if not paired:
            continue
        r = paired[0]
        on_latent = [v["value"] for v in rows if v["dataset"] == dataset and v["model"] == name
                     and v["metric"] == TRAIN_PREFIX + "latent"]
        lines.append(f"| {name} | {metric} | {means[name]:.4f} | {means[ideal]:.4f} | {means[latent]:.4f} | {better} | "
                     f"{100 * r.difference:+.2f} | [{100 * r.ci_low:+.2f}, {100 * r.ci_high:+.2f}] | "
                     f"{'yes' if r.difference >= -MARGIN else 'no'} | {int(sum(on_latent))} of {len(on_latent)} |")
    return "\n".join(lines)


def comparison_table(rows, dataset):
    """Markdown: each loss against SVM-auc on the loss's metric over the pooled test queries (p-values
    raw and Holm-adjusted across the losses of that metric; the verdict on the adjusted ones)."""
    lines = ["| metric | model | model | SVM-auc | difference (points) | t-test p (Holm) | randomisation p (Holm) | "
             "queries | within 1 point of SVM-auc | verdict (both tests, Holm, 0.05) |", "|---" * 10 + "|"]
    findings = []
    for metric, models in COMPARE.items():
        values = {m: per_query(rows, dataset, m, metric) for m in (REFERENCE, *models)}
        for r in against_baseline(values, REFERENCE, metric):
            holds = r.difference >= -MARGIN
            lines.append(f"| {metric} | {r.system} | {r.mean:.4f} | {r.baseline_mean:.4f} | {100 * r.difference:+.2f} | "
                         f"{r.t_p:.3g} ({r.t_p_holm:.3g}) | {r.rand_p:.3g} ({r.rand_p_holm:.3g}) | {r.queries} | "
                         f"{'yes' if holds else 'no'} | {r.verdict(REFERENCE)} |")
            findings.append((metric, r, holds))
    text = "\n".join(lines)
    if findings:
        text += "\n\n" + "\n".join(
            f"- {r.system} on {metric}: {100 * r.difference:+.2f} points against SVM-auc "
            f"({'meets' if holds else 'misses'} the one-point bar; {r.verdict(REFERENCE)})."
            + ("" if holds else fit_note(rows, dataset, r.system))
            for metric, r, holds in findings)
    return text


def fit_means(rows, dataset, model):
    """{slack, w_norm2}: the chosen fits' training values, means over folds (empty when not recorded)."""
    out = {}
    for name in ("slack", "w_norm2"):
        values = [r["value"] for r in rows if r["dataset"] == dataset and r["model"] == model
                  and r["metric"] == TRAIN_PREFIX + name]
        if values:
            out[name] = sum(values) / len(values)
    return out


def fit_note(rows, dataset, model):
    """A sentence from the recorded fits: the chosen model's training slack and |w|^2 against SVM-auc's."""
    mine, reference = fit_means(rows, dataset, model), fit_means(rows, dataset, REFERENCE)
    if not mine:
        return ""
    note = f" At its chosen C its average training slack is {mine['slack']:.4f} with |w|^2 {mine['w_norm2']:.3g}"
    if reference:
        note += f" (SVM-auc: {reference['slack']:.4f}, |w|^2 {reference['w_norm2']:.3g})"
    if mine["slack"] >= 0.99:
        note += ("; a slack this close to its value at w = 0 (1 for a loss in [0, 1]) says the hinge barely falls below "
                 "its w = 0 value for any w the regulariser allows")
    return note + "."


def report_sections(rows, out=None, link_prefix=""):
    sections = []
    for dataset, convention, part, folds in dataset_parts(rows, DATASETS):
        means = [r for r in part if r["metric"] in METRICS]
        sections.append((f"{dataset}: test metrics ({convention}), mean ± std over {folds} folds, C chosen on vali by "
                         "the loss's own metric", markdown_table(means, std=True, row_order=list(MODELS),
                                                                column_order=list(METRICS))))
        chosen = [r for r in part if r["metric"] == "chosen:C"]
        sections.append((f"{dataset}: the C chosen on each fold's vali file",
                         markdown_table(chosen, index="model", columns="fold", fmt="{:g}", row_order=list(MODELS))))
        fits = [{**r, "metric": r["metric"][len(TRAIN_PREFIX):]} for r in part if r["metric"].startswith(TRAIN_PREFIX)]
        if fits:
            sections.append((f"{dataset}: the chosen fits on the training file (average slack and |w|^2, mean ± std over "
                             f"{folds} folds)", markdown_table(fits, std=True, row_order=list(MODELS),
                                                               column_order=["slack", "w_norm2"])))
        sections.append((f"{dataset}: each loss against SVM-auc on its own metric, paired over the "
                         f"{folds} folds' pooled test queries", comparison_table(part, dataset)))
        sections.append((f"{dataset}: the short names' defaults (target='auto') against the better of their two "
                         f"formulations, paired over the {folds} folds' pooled test queries", defaults_table(part, dataset)))
    return sections
