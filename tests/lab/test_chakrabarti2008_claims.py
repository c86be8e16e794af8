"""The claims of chakrabarti2008 on synthetic stores whose answer is known: each rule's use (holds, does not
hold, inconclusive) over paired per-query values, the reading of Fact 3.5 chosen from the sweep, the timing
claims paired by fold, the OHSUMED gap judged per query, and the per-query slacks behind Figs. 4-5."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from structrank import StructSVMRanker
from structrank.data.synthetic import make_ranking_dataset
from structrank_lab.experiments.chakrabarti2008 import claims
from structrank_lab.experiments.chakrabarti2008.design import (FIG9_METRICS, GAP_EVERY_ROW, PAPER_ROWS, SWEEP_C,
                                                           TIMING)
from structrank_lab.experiments.chakrabarti2008.judging import LATENT, LITERAL, all_hold, mrr_reading
from structrank_lab.experiments.chakrabarti2008.published import PAPER_FIG9
from structrank_lab.experiments.chakrabarti2008.recorded import Recorded
from structrank_lab.experiments.chakrabarti2008.training import query_slacks
from structrank_lab.experiments.chakrabarti2008.training_claims import objective_shares
from structrank_lab.experiments.claims import CHECK, FAILS, HOLDS, INCONCLUSIVE, REPLICATION, UNTESTABLE
from structrank_lab.experiments.verdict_rules import direction

N = 150  # test queries pooled over the five folds
BASE = np.random.default_rng(0).uniform(0.2, 0.8, N)


def noisy(shift, noise, seed):
    return np.clip(BASE + shift + np.random.default_rng(seed).normal(0.0, noise, N), 0.0, 1.0)


def fig9_rows(values, dataset="MQ2008", preps=("chakrabarti", "none")):
    """Per-query binary test values of each row: ``values[row]`` is an array (every Fig. 9 metric alike)."""
    rows = []
    for prep in preps:
        for name, v in values.items():
            for i, x in enumerate(v):
                for metric in FIG9_METRICS:
                    rows.append({"dataset": dataset, "split": "test", "model": name, "fold": f"Fold{i % 5 + 1}",
                                 "params": json.dumps({"prep": prep, "grid": "full"}),
                                 "metric": f"q:{i}:binary:{metric}", "value": float(x)})
    return rows


def by_claim(rows, dataset="MQ2008"):
    return {(c.where.split(" (")[0], c.claim): c for c in claims(rows) if dataset in c.where or "TREC" in c.where}


def find(found, text):
    hits = [c for (_, claim), c in found.items() if text in claim]
    assert len(hits) == 1, text
    return hits[0]


CRITERIA = {row: noisy(0.0, 0.02, k) for k, row in enumerate(PAPER_ROWS)}


@pytest.mark.parametrize("shift, noise, expected", [(0.05, 0.05, HOLDS), (-0.05, 0.05, FAILS),
                                                    (0.002, 0.3, INCONCLUSIVE)])
def test_an_ordering_is_judged_by_direction_over_the_pooled_test_queries(shift, noise, expected):
    values = {**CRITERIA, "NDCG-NC": noisy(shift, noise, 99)}
    claim = find(by_claim(fig9_rows(values)), "consistently loses to SVM-ndcg-nc")
    assert claim.verdict == expected and claim.kind == REPLICATION
    assert f"n = {N} queries" in claim.interval
    assert claim.setup.startswith("Sec. 4.1's preparation") and "files as distributed" in claim.ours_setup


def test_about_even_and_approaches_use_their_bands():
    values = {**CRITERIA, "DORM": CRITERIA["NDCG"] + 0.001, "DORM sparse": CRITERIA["NDCG"] - 0.05}
    found = by_claim(fig9_rows(values))
    assert find(found, "come out about even").verdict == HOLDS  # inside +-1 point
    assert find(found, "approaches or matches").verdict == FAILS  # wholly below -1 point
    values["DORM"] = noisy(0.0, 0.4, 7)
    assert find(by_claim(fig9_rows(values)), "come out about even").verdict == INCONCLUSIVE


def test_mcrank_never_tops_is_judged_against_the_best_other_in_every_column():
    values = {**CRITERIA, "McRank": CRITERIA["MAP"] - 0.05}  # every other well above
    claim = find(by_claim(fig9_rows(values)), "McRank never tops")
    assert claim.verdict == HOLDS and claim.interval.count("n = ") == 3  # one test per column
    values["McRank"] = CRITERIA["MAP"] + 0.05  # above the best other in every column
    assert find(by_claim(fig9_rows(values)), "McRank never tops").verdict == FAILS
    values["McRank"] = max(CRITERIA.values(), key=np.mean) + np.random.default_rng(3).normal(0, 0.3, N)
    assert find(by_claim(fig9_rows(values)), "McRank never tops").verdict == INCONCLUSIVE


def sweep_rows(slacks, dataset="MQ2008", n=60):
    """Sweep runs with per-query training slacks: ``slacks[row](C, query) -> slack``."""
    rows = []
    for row, slack in slacks.items():
        scale = "latent" if "latent" in row else "scaled" if row == LITERAL else "po"
        for C in SWEEP_C[scale]:
            values = [slack(C, q) for q in range(n)]
            params = json.dumps({"C": C})
            base = {"dataset": dataset, "split": "train-sweep", "model": row, "fold": "Fold1", "params": params}
            rows += [{**base, "metric": f"q:{q}:slack", "value": v} for q, v in enumerate(values)]
            rows += [{**base, "metric": m, "value": v} for m, v in
                     (("avg_slack", float(np.mean(values))), ("w_norm2", 1e-3 * C), ("zero_objective", C * 1.0),
                      ("objective_ratio", (0.5e-3 * C + C * np.mean(values)) / C))]
    return rows


def falling(rate):
    """A slack that falls by ``rate`` per decade of C, query by query a little differently."""
    return lambda C, q: 1.0 - rate * (np.log10(C) + 4) * (1 + 0.1 * np.sin(q))


def test_the_reading_of_fact_3_5_is_the_one_whose_slack_falls_and_figs_4_5_use_it():
    flat = lambda C, q: 1.0  # noqa: E731 -- the literal reading stays at w = 0
    slacks = {"AUC": falling(0.05), "DORM": falling(0.05), LATENT: falling(0.05), LITERAL: flat,
              "MAP": falling(0.01), "NDCG": falling(0.01)}
    rows = sweep_rows(slacks)
    reading = mrr_reading(Recorded(rows), "MQ2008")
    assert (reading.primary, reading.other) == (LATENT, LITERAL) and "falls significantly more" in reading.note
    found = by_claim(rows)
    fig4, fig5 = find(found, "most robust reduction"), find(found, "adapt best")
    assert fig4.verdict == HOLDS and fig4.interval.count("n = 60 Fold1 training queries") == 6
    assert fig5.verdict == HOLDS and "svm-mrr-latent" in fig4.setup
    assert fig4.ours_setup.startswith(FAILS)  # the literal reading's SVM-mrr does not fall
    assert find(found, "not quite at w = 0").kind == CHECK
    # the literal reading when it is the one that falls
    slacks[LATENT], slacks[LITERAL] = flat, falling(0.05)
    assert mrr_reading(Recorded(sweep_rows(slacks)), "MQ2008").primary == LITERAL


def test_the_fig9_claims_on_svm_mrr_follow_the_reading():
    slacks = {LATENT: falling(0.05), LITERAL: lambda C, q: 1.0}
    values = {**CRITERIA, LATENT: CRITERIA["COMBO"] + 0.05, LITERAL: CRITERIA["COMBO"] - 0.05}
    found = by_claim(sweep_rows(slacks) + fig9_rows(values))
    combo = find(found, "SVM-combo almost always beats SVM-mrr")
    assert combo.verdict == FAILS and "svm-mrr-latent" in combo.setup  # the latent SVM-mrr is above COMBO
    assert combo.ours_setup.startswith(HOLDS)  # the literal one is below it
    assert find(found, "Delta_MRR is never best").verdict == FAILS


def timing_rows(ratio, dataset="MQ2008", folds=5, jitter=0.1):
    rows = []
    for k in range(folds):
        noise = np.exp(jitter * np.sin(k + 1))
        for name, seconds in (("SVM-ndcg", 0.04), ("DORM sparse A (cut 30)", 0.04 * ratio * noise),
                              ("DORM", 0.04 * ratio * noise), ("McRank", 0.04 * ratio * noise)):
            rows.append({"dataset": dataset, "split": "train-timing", "model": name, "fold": f"Fold{k + 1}",
                         "params": "{}", "metric": "seconds", "value": seconds})
    return rows


def test_time_ratios_are_judged_paired_by_fold():
    assert set(TIMING) >= {"SVM-ndcg", "DORM sparse A (cut 30)", "DORM", "McRank"}
    found = by_claim(timing_rows(10.0))
    fig8, fig10 = find(found, "substantially more time"), find(found, "two orders of magnitude")
    assert fig8.verdict == HOLDS and "n = 5 folds" in fig8.interval  # ten times: above twice
    assert fig10.verdict == FAILS  # ten times: below a hundred
    assert find(by_claim(timing_rows(2.0, jitter=1.0)), "substantially more time").verdict == INCONCLUSIVE
    one_fold = find(by_claim(timing_rows(10.0, folds=1)), "substantially more time")
    assert one_fold.verdict == UNTESTABLE and "two folds" in one_fold.why


def gap_rows(shifts):
    paper = PAPER_FIG9["OHSUMED"]
    rows = []
    for variant, shift in shifts.items():
        for row in PAPER_ROWS:
            for i, metric in enumerate(FIG9_METRICS):
                values = np.clip(paper[row][i] + shift + np.random.default_rng(i).normal(0, 0.05, 100), 0, 1)
                rows += [{"dataset": "OHSUMED", "split": "gap", "model": row, "fold": f"Fold{q % 5 + 1}",
                          "params": json.dumps({"variant": variant}), "metric": f"q:{q}:{metric}", "value": float(v)}
                         for q, v in enumerate(values)]
    return rows


def test_the_ohsumed_gap_is_judged_per_query_against_the_paper():
    ours, kept = GAP_EVERY_ROW
    claim = find(by_claim(gap_rows({ours: -0.09, kept: 0.0}), "OHSUMED"), "the values of Fig. 9")
    assert claim.verdict == FAILS and claim.interval.startswith("-9.")
    assert claim.ours_setup.startswith(HOLDS) and kept in claim.ours_setup
    assert find(by_claim(gap_rows({ours: 0.0}), "OHSUMED"), "the values of Fig. 9").verdict == HOLDS


def test_a_store_without_per_unit_values_gives_claims_that_cannot_be_tested():
    old = [{"dataset": "MQ2008", "split": "test", "model": row, "fold": "Fold1", "params": '{"prep": "none"}',
            "metric": "binary:" + m, "value": 0.5} for row in PAPER_ROWS for m in FIG9_METRICS]
    found = by_claim(old)
    claim = find(found, "consistently better than DORM")
    assert claim.verdict == UNTESTABLE and "run structrank reproduce chakrabarti2008 again" in claim.why
    assert find(found, "TREC 2000/2001").verdict == UNTESTABLE


def test_all_hold_needs_every_part():
    a, b = BASE + 0.05, BASE
    holds, fails = direction(a, b), direction(b, a)
    inconclusive = direction(noisy(0.0, 0.3, 5), b)
    assert all_hold([("x", holds), ("y", holds)]).verdict == HOLDS
    assert all_hold([("x", holds), ("y", inconclusive)]).verdict == INCONCLUSIVE
    assert all_hold([("x", inconclusive), ("y", fails)]).verdict == FAILS
    assert all_hold([("x", holds), ("y", None)]) is None


@pytest.mark.parametrize("params", [{"loss": "auc", "C": 1.0}, {"loss": "mrr", "target": "ideal", "C": 0.01},
                                    {"loss": "mrr", "target": "latent", "C": 1.0},
                                    {"loss": "mrr", "C": 0.01},  # target="auto": the latent fit it falls back to
                                    {"loss": "ndcg", "loss_params": {"feature_map": "dorm", "dorm_cut": 30}}])
def test_query_slacks_average_to_the_models_slack_and_objective_ratio(params):
    data = make_ranking_dataset(n_queries=30, random_state=0)
    with warnings.catch_warnings():  # the literal SVM-mrr stays at w = 0 and says so
        warnings.simplefilter("ignore")
        model = StructSVMRanker(**params).fit(data)
    qids, slacks = query_slacks(model, data)
    assert qids.size == slacks.size > 20 and np.all(slacks >= -1e-12)
    assert slacks.mean() == pytest.approx(model.slack_, rel=1e-9, abs=1e-12)
    # Fig. 5's ratio as the mean of the queries' shares
    _, zero = query_slacks(model, data, w=np.zeros_like(model.coef_))
    C = model.C
    rows = [{"dataset": "D", "split": "train-sweep", "model": "AUC", "fold": "Fold1", "params": json.dumps({"C": C}),
             "metric": m, "value": v} for m, v in (("avg_slack", model.slack_), ("zero_objective", C * zero.mean()),
                                                   ("w_norm2", float(model.coef_ @ model.coef_)))]
    rows += [{"dataset": "D", "split": "train-sweep", "model": "AUC", "fold": "Fold1", "params": json.dumps({"C": C}),
              "metric": f"q:{q}:slack", "value": float(v)} for q, v in zip(qids, slacks)]
    shares = objective_shares(Recorded(rows), "D", "AUC")
    assert np.mean(list(shares.values())) == pytest.approx(model.objective_ / model.zero_objective_, rel=1e-9)

