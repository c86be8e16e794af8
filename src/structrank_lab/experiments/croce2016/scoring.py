"""How a croce2016 run's scores become its measurements: MAP, F1 of the Good class in the claims' two setups,
and the per-question values that the claims' paired tests read.

An SVM is fitted once per C of the grid; from these fits ``choose`` takes two models: the paper's setup for
F1 (C and the decision threshold chosen together by dev F1, ``best_threshold``) and ours (C chosen by dev MAP,
the SVM's threshold 0; its MAP is every MAP claim's). ``ranked`` and ``classified`` turn their scores into
measurements; on test they add one value per question, ``q:<qid>:map`` (the question's AP under the official
scorer's convention) and ``q:<qid>:tp``, ``fp``, ``fn`` (the Good class's counts among its comments, at
threshold 0, and with the suffix ``.tuned`` at the dev-F1 threshold). F1 is a ratio of sums, not a mean over
questions; the counts let a claim rebuild it question by question (``recorded.linearised_f1``).
"""

from __future__ import annotations

import time

import numpy as np

from structrank_lab.experiments.croce2016.design import C_GRID, COUNTS, TUNED
from structrank_lab.experiments.report import QUERY_PREFIX
from structrank_lab.experiments.runner import Measurement
from structrank.metrics import evaluate


def f1_of(tp, fp, fn) -> float:
    """F1 = 2 tp / (2 tp + fp + fn); 0 when there is nothing to count (scikit-learn's zero_division=0)."""
    denominator = 2 * tp + fp + fn
    return float(2 * tp / denominator) if denominator else 0.0


def best_threshold(y, scores):
    """(threshold, F1): the threshold whose rule ``scores > threshold`` gives the Good class its best F1 on (y, scores).

    Every cut between two distinct scores is tried, and predicting none; on ties the highest threshold wins.
    The threshold is the midpoint between the scores either side of the cut.

    >>> best_threshold(np.array([1, 0, 1, 0]), np.array([0.9, 0.8, 0.7, -0.5]))
    (0.09999999999999998, 0.8)
    """
    scores = np.asarray(scores, dtype=np.float64)
    order = np.argsort(-scores, kind="stable")
    ranked, good = scores[order], np.asarray(y)[order] > 0
    tp = np.concatenate([[0], np.cumsum(good)])  # tp[k]: Good among the top k
    k = np.arange(ranked.size + 1)
    f1 = np.divide(2 * tp, k + good.sum(), out=np.zeros(k.size), where=(k + good.sum()) > 0)
    # a cut after k scores is realisable only where the k-th and (k+1)-th scores differ
    realisable = np.concatenate([[True], ranked[:-1] > ranked[1:], [True]])
    best = int(np.flatnonzero(realisable)[np.argmax(f1[realisable])])
    if best == 0:
        return float(ranked[0] + 1.0) if ranked.size else 0.0, 0.0
    if best == ranked.size:
        return float(ranked[-1] - 1.0), float(f1[best])
    return float((ranked[best - 1] + ranked[best]) / 2), float(f1[best])


def question_counts(y, predicted, qid):
    """(qids, {count: array}): the Good class's tp, fp and fn among each question's comments, in order of first
    appearance."""
    qids, first, inverse = np.unique(qid, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    good, predicted = np.asarray(y) > 0, np.asarray(predicted, dtype=bool)
    counts = {"tp": good & predicted, "fp": ~good & predicted, "fn": good & ~predicted}
    sums = {name: np.bincount(inverse, weights=hit, minlength=qids.size)[order] for name, hit in counts.items()}
    return qids[order], sums


def grid(fit):
    """{C: (model, seconds of its fit)} over ``C_GRID``."""
    out = {}
    for C in C_GRID:
        tic = time.perf_counter()
        model = fit(C)
        out[C] = (model, time.perf_counter() - tic)
    return out


def choose(fitted, arrays, features):
    """(C by dev MAP, (C, threshold) by dev F1) among ``fitted`` (``grid``'s): the first C of the grid on ties."""
    best_map, best_f1 = None, None
    for C, (model, _) in fitted.items():
        scores = model.decision_function(features["dev"])
        value = evaluate(arrays["dev.y"], scores, arrays["dev.qid"], ["map"], "semeval").metrics["map"]
        threshold, f1 = best_threshold(arrays["dev.y"], scores)
        if best_map is None or value > best_map[1]:
            best_map = (C, value)
        if best_f1 is None or f1 > best_f1[2]:
            best_f1 = (C, threshold, f1)
    return best_map[0], best_f1[:2]


def ranked(arrays, scores_of):
    """Dev and test MAP of ``scores_of(split)``, and each test question's AP."""
    result = {split: evaluate(arrays[f"{split}.y"], scores_of(split), arrays[f"{split}.qid"], ["map"], "semeval")
              for split in ("dev", "test")}
    out = [Measurement(f"{split}:map", "semeval", r.metrics["map"]) for split, r in result.items()]
    return out + [Measurement(f"{QUERY_PREFIX}{q}:map", "semeval", float(v))
                  for q, v in zip(result["test"].qids, result["test"].per_query["map"])]


def classified(arrays, scores_of, tuned_scores_of, threshold):
    """Dev and test F1 of the Good class in both setups (``scores_of`` at 0; ``tuned_scores_of`` at ``threshold``,
    suffix ``.tuned``), and each test question's counts in both."""
    out = []
    for split in ("dev", "test"):
        y, qid = arrays[f"{split}.y"], arrays[f"{split}.qid"]
        for suffix, predicted in (("", scores_of(split) > 0), ("." + TUNED, tuned_scores_of(split) > threshold)):
            qids, counts = question_counts(y, predicted, qid)
            out.append(Measurement(f"{split}:f1{suffix}", "good", f1_of(*(counts[c].sum() for c in COUNTS))))
            if split == "test":
                out += [Measurement(f"{QUERY_PREFIX}{q}:{c}{suffix}", "count", float(counts[c][i]))
                        for c in COUNTS for i, q in enumerate(qids)]
    return out


def svm_measurements(fitted, arrays, features):
    """Everything an SVM run of the grid ``fitted`` records but its costs: MAP, F1 both ways, the chosen Cs and
    threshold, per-question values. Returns (measurements, the model chosen by dev MAP, its C)."""
    C, (C_tuned, threshold) = choose(fitted, arrays, features)
    model, tuned = fitted[C][0], fitted[C_tuned][0]
    out = ranked(arrays, lambda s: model.decision_function(features[s]))
    out += classified(arrays, lambda s: model.decision_function(features[s]),
                      lambda s: tuned.decision_function(features[s]), threshold)
    out += [Measurement("C", "param", C), Measurement(f"C.{TUNED}", "param", C_tuned),
            Measurement(f"threshold.{TUNED}", "param", threshold)]
    return out, model, C
