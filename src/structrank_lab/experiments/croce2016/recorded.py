"""The recorded runs of croce2016 read back: the sweep by landmarks and seeds, the single runs, which landmark
counts come close to the full SVM, and each test question's values for the claims' paired tests."""

from __future__ import annotations

import numpy as np

from structrank_lab.experiments.croce2016.design import COUNTS, DATASET, FULL
from structrank_lab.experiments.report import QUERY_PREFIX
from structrank_lab.experiments.run_key import params_of
from structrank_lab.experiments.verdict_rules import MARGIN

QUESTIONS = "questions"  #: the key of a run's per-question values in ``collect``'s metrics
#: "the same", "comparable", "negligible drop": within one MAP or F1 point, the verdict rules' margin
CLOSE = MARGIN


def collect(rows):
    """{(split, model, landmarks or None, seed, dataset, fold): {metric: value}}; a run's per-question values
    (``q:<qid>:<name>``) are gathered under the key ``QUESTIONS``: {name: {qid: value}}."""
    runs = {}
    for r in rows:
        params = params_of(r)
        key = (r["split"], r["model"], params.get("landmarks"), int(r["seed"]), r["dataset"], r["fold"])
        metrics = runs.setdefault(key, {})
        if r["metric"].startswith(QUERY_PREFIX):
            qid, _, name = r["metric"][len(QUERY_PREFIX):].rpartition(":")
            metrics.setdefault(QUESTIONS, {}).setdefault(name, {})[qid] = r["value"]
        else:
            metrics[r["metric"]] = r["value"]
    return runs


def sweep(runs):
    """{landmarks: {seed: metrics}} of the Nyström runs."""
    out = {}
    for (split, model, m, seed, _, _), metrics in runs.items():
        if split == "nystroem":
            out.setdefault(m, {})[seed] = metrics
    return dict(sorted(out.items()))


def _single(runs, split, model):
    """The metrics of a run without landmarks or seeds (full SVM, linear SVM, IR, kernel columns), or None."""
    return runs.get((split, model, None, 0, DATASET, ""))


def _full(runs, model=next(iter(FULL))):
    return _single(runs, "full", model)


def _means(points, metric):
    """{landmarks: mean of ``metric`` over the landmark samples (seeds)} of a sweep."""
    return {m: float(np.mean([v[metric] for v in by_seed.values()])) for m, by_seed in points.items()}


def _close_counts(points, full):
    """The landmark counts whose mean test MAP is at most ``CLOSE`` below the full SVM's."""
    return [m for m, v in _means(points, "test:map").items() if v >= full["test:map"] - CLOSE]


def saving(landmarks, full):
    """Share of the full SVM's kernel evaluations per test pair (its support vectors) avoided."""
    return 1.0 - landmarks / full["support_vectors"]


def linearised_f1(tp, fp, fn):
    """Per-question values whose mean is the pooled F1 = 2 TP / (2 TP + FP + FN) of the Good class.

    F1 is a ratio of sums over questions, not a mean of per-question F1s. Its linearisation (the ratio
    estimator's influence values, as in survey sampling's delta method) gives question i the value
    F + n (2 tp_i - F d_i) / D, with d_i = 2 tp_i + fp_i + fn_i and D their sum: their mean is F exactly and
    their spread is the delta method's, so a paired test over questions on them tests a difference of F1s
    (the mean of the paired differences is exactly the difference of the two F1s).

    >>> v = linearised_f1(np.array([1.0, 0.0, 2.0]), np.array([0.0, 1.0, 1.0]), np.array([1.0, 0.0, 0.0]))
    >>> round(float(v.mean()), 10), round(2 * 3 / (2 * 3 + 2 + 1), 10)
    (0.6666666667, 0.6666666667)
    """
    tp, fp, fn = (np.asarray(v, dtype=np.float64) for v in (tp, fp, fn))
    d = 2 * tp + fp + fn
    total = d.sum()
    if total == 0:  # no Good comment and none predicted: F1 is 0 (scikit-learn's zero_division=0) everywhere
        return np.zeros(tp.size)
    f1 = 2 * tp.sum() / total
    return f1 + tp.size * (2 * tp - f1 * d) / total


def question_values(metrics, kind, suffix=""):
    """{qid: value} of one run's test questions: ``kind`` "map" gives each question's AP, "f1" its linearised F1
    (``linearised_f1``) from the counts recorded with ``suffix`` ("" at threshold 0, ".tuned" at the dev-F1
    threshold). Empty for a run recorded before the per-question values were (an older store)."""
    questions = metrics.get(QUESTIONS, {})
    if kind == "map":
        return dict(questions.get("map", {}))
    counts = [questions.get(c + suffix, {}) for c in COUNTS]
    qids = sorted(counts[0])
    if not qids or any(set(c) != set(qids) for c in counts):
        return {}
    return dict(zip(qids, linearised_f1(*([c[q] for q in qids] for c in counts)).tolist()))


def side(runs, split, model=None, landmarks=None, kind="map", suffix=""):
    """{qid: value} of one side of a comparison: a single run (``model`` of ``split``), or the Nyström runs at
    ``landmarks``, each question's value the mean over the landmark samples (seeds). Empty when not recorded."""
    if split == "nystroem":
        by_seed = [question_values(m, kind, suffix) for m in sweep(runs).get(landmarks, {}).values()]
        if not by_seed or not all(by_seed) or any(set(v) != set(by_seed[0]) for v in by_seed):
            return {}
        return {q: float(np.mean([v[q] for v in by_seed])) for q in by_seed[0]}
    run = _single(runs, split, model)
    return question_values(run, kind, suffix) if run else {}
