"""croce2016's claims (issue 42): replications judged by paired tests over the test questions, the F1 claims in
the paper's setup (C and threshold by dev F1) with ours beside, the checks apart; and the per-question values
they read (the dev-F1 threshold, the Good class's counts, the linearised F1) against scikit-learn."""

import json
import zlib

import numpy as np
import pytest

from structrank_lab.experiments import croce2016
from structrank_lab.experiments.claims import CHECK, FAILS, HOLDS, INCONCLUSIVE, REPLICATION, UNTESTABLE, claims_section
from structrank_lab.experiments.croce2016.design import DATASET, FULL, IR, LINEAR, NYSTROEM, TUNED
from structrank_lab.experiments.croce2016.recorded import linearised_f1
from structrank_lab.experiments.croce2016.scoring import best_threshold, f1_of, question_counts

Q = 300  # test questions of the synthetic store
COMMENTS = 10
BASE_AP = np.random.default_rng(0).uniform(0.3, 0.9, Q)
GOOD = np.random.default_rng(1).integers(0, 8, Q)
# one draw per comment, shared by every system: a system's recall r marks its good comments with a draw below r,
# so two systems' counts differ only where their rates differ (common random numbers)
DRAWS = np.random.default_rng(2).uniform(size=(Q, COMMENTS))
FULL_MODEL = next(iter(FULL))


def _row(split, model, metric, value, landmarks=None, seed=0):
    params = {} if landmarks is None else {"landmarks": landmarks}
    return {"split": split, "model": model, "params": json.dumps(params), "seed": seed, "dataset": DATASET,
            "fold": "", "metric": metric, "value": float(value)}


def _counts(recall, false_rate):
    good = np.arange(COMMENTS)[None, :] < GOOD[:, None]
    predicted = np.where(good, DRAWS < recall, DRAWS < false_rate)
    return {"tp": (good & predicted).sum(1), "fp": (~good & predicted).sum(1), "fn": (good & ~predicted).sum(1)}


def _run(split, model, ap, f1_tuned, f1_zero, landmarks=None, seed=0, noise=0.05, **extra):
    """The rows of one run: each question's AP = BASE_AP + ``ap`` + noise; the Good class's counts at recall
    ``f1_*[0]`` and false-positive rate ``f1_*[1]`` in the two setups; aggregates that agree with them."""
    rng = np.random.default_rng(zlib.crc32(repr((split, model, landmarks, seed)).encode()))
    aps = np.clip(BASE_AP + ap + rng.normal(0.0, noise, Q), 0.0, 1.0)
    metrics = {"test:map": aps.mean(), "dev:map": aps.mean() - 0.1, **extra}
    rows = [_row(split, model, f"q:{q}:map", v, landmarks, seed) for q, v in enumerate(aps)]
    for suffix, rates in (("", f1_zero), ("." + TUNED, f1_tuned)):
        counts = _counts(*rates)
        metrics[f"test:f1{suffix}"] = f1_of(*(counts[c].sum() for c in ("tp", "fp", "fn")))
        rows += [_row(split, model, f"q:{q}:{c}{suffix}", counts[c][q], landmarks, seed)
                 for c in counts for q in range(Q)]
    return rows + [_row(split, model, k, v, landmarks, seed) for k, v in metrics.items()]


FULL_COSTS = {"C": 0.1, "support_vectors": 4000.0, "bounded_support_vectors": 3500.0, "n_train": 5266.0,
              "test_kernel_evaluations": 4000.0 * 3270, "kernel_train_seconds": 100.0, "svm_seconds": 5.0,
              "kernel_test_seconds": 50.0, "decide_seconds": 1.0}


def _store(full_ap=0.0, full_f1=((0.7, 0.2), (0.5, 0.1)), sweep=None, top_f1=None, noise=0.05):
    """A store: the full SVM, the references, and Nyström at 100..1000 landmarks (three seeds); ``sweep`` maps
    landmarks to the AP shift, F1 of both setups follows ``top_f1`` at 1,000 and the full SVM's elsewhere."""
    sweep = sweep or {m: -0.03 + 0.03 * (m - 100) / 900 for m in range(100, 1001, 100)}  # 100: -3.0, 1000: 0.0
    rows = _run("full", FULL_MODEL, full_ap, *full_f1, noise=noise, **FULL_COSTS)
    rows += [_row("linear", LINEAR, k, v) for k, v in {"test:map": 0.7, "dev:map": 0.6, "test:f1": 0.5, "C": 0.1,
                                                       "svm_seconds": 1.0}.items()]
    rows += [_row("ir", IR, k, v) for k, v in {"test:map": 0.5953, "dev:map": 0.52}.items()]
    rows += [_row("kernel", "kernel columns", k, v) for k, v in {"test:rows": 3270.0, "train:rows": 5266.0}.items()]
    for m, shift in sweep.items():
        f1 = top_f1 if top_f1 and m == 1000 else ((0.55 + 0.15 * m / 1000, 0.2), (0.5, 0.1))
        for seed in (0, 1, 2):
            times = dict(kernel_train_seconds=m / 10, kernel_test_seconds=m / 20) if seed == 0 else {}
            rows += _run("nystroem", NYSTROEM, shift, *f1, landmarks=m, seed=seed, noise=noise, C=0.1,
                         components=float(m), svm_seconds=1.0, projection_seconds=0.5, decide_seconds=0.1, **times)
    return rows


def _find(found, words):
    [claim] = [c for c in found if words in c.claim]
    return claim


# -- the per-question values --------------------------------------------------------------------------------


def test_best_threshold_is_the_best_cut_that_scikit_learn_scores():
    from sklearn.metrics import f1_score

    rng = np.random.default_rng(3)
    for _ in range(5):
        y = rng.integers(0, 2, 30)
        scores = np.round(rng.normal(size=30) + y, 1)  # rounded: ties to keep together
        threshold, f1 = best_threshold(y, scores)
        assert f1 == pytest.approx(f1_score(y, scores > threshold, zero_division=0.0))
        cuts = np.concatenate([np.unique(scores) - 1e-9, [scores.max() + 1]])
        assert f1 == pytest.approx(max(f1_score(y, scores > t, zero_division=0.0) for t in cuts))
    assert best_threshold(np.zeros(4), np.arange(4.0))[1] == 0.0  # nothing Good: predict none


def test_question_counts_and_the_linearised_f1_give_scikit_learns_f1():
    from sklearn.metrics import f1_score

    rng = np.random.default_rng(4)
    qid = np.repeat(np.array(["7", "3", "12", "5"]), 10)
    a, b, y = rng.integers(0, 2, 40), rng.integers(0, 2, 40), rng.integers(0, 2, 40)
    qids, counts = question_counts(y, a, qid)
    assert qids.tolist() == ["7", "3", "12", "5"]  # in order of appearance
    assert counts["tp"][1] == np.sum((y[10:20] == 1) & (a[10:20] == 1))
    values = {name: linearised_f1(*question_counts(y, p, qid)[1].values()) for name, p in (("a", a), ("b", b))}
    assert values["a"].mean() == pytest.approx(f1_score(y, a))
    # the paired differences' mean is the difference of the two F1s exactly
    assert (values["a"] - values["b"]).mean() == pytest.approx(f1_score(y, a) - f1_score(y, b))


def test_the_linearised_f1s_spread_is_the_jackknifes():
    counts = _counts(0.6, 0.2)
    values = linearised_f1(counts["tp"], counts["fp"], counts["fn"])
    leave_one_out = [f1_of(*(np.delete(counts[c], i).sum() for c in ("tp", "fp", "fn"))) for i in range(Q)]
    jackknife_se = np.sqrt((Q - 1) / Q * np.sum((leave_one_out - np.mean(leave_one_out)) ** 2))
    assert values.std(ddof=1) / np.sqrt(Q) == pytest.approx(jackknife_se, rel=0.02)


# -- the claims ------------------------------------------------------------------------------------------------


def test_every_claim_is_counted_whatever_ran_and_the_kinds_are_apart():
    found, empty = croce2016.claims(_store()), croce2016.claims([])
    assert [(c.where, c.claim) for c in found] == [(c.where, c.claim) for c in empty]
    assert len(found) == 18 and all(c.verdict == UNTESTABLE for c in empty)
    kinds = [c.kind for c in found]
    assert kinds == [REPLICATION] * 11 + [CHECK] * 7  # replications first, then the checks
    # every judged replication prints its interval
    assert all("[" in c.interval and "n = 300 questions" in c.interval for c in found
               if c.kind == REPLICATION and c.verdict != UNTESTABLE)
    text = claims_section(found)
    assert text.startswith("11 replications: ") and "7 checks: " in text


def test_a_store_without_per_question_values_leaves_the_replications_untestable():
    rows = [r for r in _store() if not r["metric"].startswith("q:")]  # an older store, without per-query values
    found = croce2016.claims(rows)
    replications = [c for c in found if c.kind == REPLICATION]
    assert len(replications) == 11 and all(c.verdict == UNTESTABLE and "per-question" in c.why for c in replications)
    assert _find(found, "test set has").verdict == HOLDS  # the checks still read their counts


@pytest.mark.parametrize("gain, noise, expected", [
    (0.03, 0.02, HOLDS),          # +3 points, paired noise 2 points per question
    (0.001, 0.2, INCONCLUSIVE),   # +0.1 with noise 20: the interval allows both
    (-0.03, 0.02, FAILS),          # a drop
])
def test_map_grows_is_a_paired_test_of_the_endpoints(gain, noise, expected):
    sweep = {100: 0.0, 500: -0.05, 1000: gain}  # a dip in between does not matter: only the endpoints are tested
    rises = _find(croce2016.claims(_store(sweep=sweep, noise=noise)), "MAP grows with the landmarks")
    assert rises.verdict == expected and "n = 300 questions" in rises.interval
    assert "1000 landmarks against 100" in rises.why and "Against the paper's gain of +2.2 ± 1 point" in rises.why
    assert rises.setup == "MAP: C chosen by dev MAP" and rises.ours_setup == ""


def test_f1_claims_take_the_papers_setup_first_and_ours_beside():
    # tuned: Nyström at 1,000 as good as the full SVM; at threshold 0 it beats it by far
    found = croce2016.claims(_store(full_f1=((0.7, 0.2), (0.4, 0.1)), top_f1=((0.7, 0.2), (0.7, 0.2))))
    same = _find(found, "same F1 score")
    assert same.verdict == HOLDS and same.interval.startswith("+0.00 [+0.00, +0.00]")
    assert same.setup == "F1: C and decision threshold chosen by dev F1"
    assert same.ours_setup.startswith(FAILS + ": +") and same.ours_setup.endswith("(C chosen by dev MAP, threshold 0)")
    upper = _find(found, "upper bound")
    assert upper.verdict == HOLDS and upper.ours_setup.startswith(FAILS)  # ours: Nyström far above the full SVM
    assert upper.interval.startswith("MAP: ") and "; F1: " in upper.interval
    rises = _find(found, "F1 grows with the landmarks")  # tuned recall 0.55 + 0.015 at 100, 0.7 at 1,000
    assert rises.verdict == HOLDS and rises.ours_setup.startswith(HOLDS)


def test_comparable_map_and_the_300_landmark_claim_are_not_below_rules():
    # the full SVM 2 points above Nyström at 1,000: not comparable (its whole interval below -1 point)
    found = croce2016.claims(_store(full_ap=0.02, noise=0.01))
    assert _find(found, "comparable MAP").verdict == FAILS
    # the paper's own gap at 300 landmarks is 1.7 points: a 1.3-point deficit (300: -2.3, the full SVM -1.0) is within it
    found = croce2016.claims(_store(full_ap=-0.01, noise=0.01))
    three = _find(found, "With 300 landmarks, 77.7 MAP")
    assert three.verdict == HOLDS and "1.7 points" in three.why and three.kind == REPLICATION
    assert _find(found, "more than 97% of kernel computations").kind == CHECK


def test_the_tradeoffs_judge_the_most_landmarks_that_give_the_reduction():
    found = croce2016.claims(_store(noise=0.01))  # 4,000 support vectors: > 10 times below 400, > 31.6 below 127
    tradeoff = _find(found, "cost reduction higher than 90%")
    assert tradeoff.ours.startswith("300 landmarks: 4000 / 300 = 13.3 times") and tradeoff.verdict == FAILS  # -2.3
    orders = _find(found, "two orders of magnitude")
    assert orders.ours.startswith("100 landmarks") and orders.verdict == FAILS  # -2.7 points
    flat = croce2016.claims(_store(sweep={m: 0.0 for m in range(100, 1001, 100)}, noise=0.01))
    assert _find(flat, "cost reduction higher than 90%").verdict == HOLDS


def test_published_values_are_judged_on_our_own_interval():
    # the full SVM's MAP near the published 79.2 and its F1 (64.1) near 64.4, but one-sample intervals over 300
    # questions are too wide to place them within +-1 point
    published = _find(croce2016.claims(_store(full_ap=0.792 - BASE_AP.mean(), full_f1=((0.6, 0.15), (0.5, 0.1)))),
                      "reaches test MAP 79.2")
    assert published.verdict == INCONCLUSIVE and "taken as fixed" in published.why
    assert published.interval.startswith("MAP: -") or published.interval.startswith("MAP: +0")  # ours − published
    assert published.ours_setup.startswith(FAILS)  # at threshold 0: F1 60.6, its interval wholly below 63.4
    far = _find(croce2016.claims(_store(full_ap=-0.3)), "reaches test MAP 79.2")
    assert far.verdict == FAILS and far.ours_setup.startswith(FAILS)
    # F1 68.5 in the paper's setup, 60.6 at threshold 0: the published 64.4 between them, said with a guess why
    assert "The published F1 lies between ours in the paper's setup (+4.1) and at threshold 0 (-3.8)" in far.why
    assert "Hypothesis: the published F1" in far.why
    challenge = _find(croce2016.claims(_store(sweep={1000: 0.6 - BASE_AP.mean()}, noise=0.01)), "other systems")
    assert challenge.verdict == FAILS and "ConvKN" in challenge.why  # 60 against 77.7


def test_the_checks_keep_their_counts():
    found = croce2016.claims(_store())
    saved = _find(found, "avoids more than 90%")
    assert saved.kind == CHECK and saved.verdict == FAILS and "At or below 90%: 400, 500" in saved.why
    assert _find(found, "training set has").kind == CHECK
    classify = _find(found, "extremely lower")
    assert classify.kind == CHECK and classify.verdict == FAILS and "100 10.00" in classify.ours
