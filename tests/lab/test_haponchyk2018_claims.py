"""haponchyk2018's claims on synthetic rows whose answer is known: each claim judged by its verdict_rules rule over
paired per-question (or per-seed, per-fold) values, holds / does not hold / inconclusive; the paper's setup first
and ours beside it; the grid's reach and the baseline's level as checks."""

import dataclasses
import json

import numpy as np
import pytest

from structrank_lab.experiments.claims import CHECK, FAILS, HOLDS, INCONCLUSIVE, REPLICATION, UNTESTABLE
from structrank_lab.experiments.haponchyk2018 import claims
from structrank_lab.experiments.haponchyk2018.design import (CURVE_ROWS, CV_ROWS, DEV_QUERY_PREFIX, N_SEEDS, SETUP_TITLES,
                                                         SUM_ROW, TABLE_ROWS)
from structrank_lab.experiments.haponchyk2018.joint_rules import every, exceeds
from structrank_lab.experiments.haponchyk2018.published import PAPER_C_GRID
from structrank_lab.experiments.haponchyk2018.recorded import counts
from structrank_lab.experiments.verdict_rules import CHANGES, direction

N_TEST, N_DEV = 237, 122
BASE = np.random.default_rng(0).uniform(0.3, 0.8, N_TEST)
DEV = np.random.default_rng(1).uniform(0.3, 0.8, N_DEV)


def noisy(base, shift, noise, seed):
    return base + shift + np.random.default_rng(seed).normal(0.0, noise, base.size)


def _row(model, metric, value, features, split="official", dataset="wikiqa", fold=0, seed=0, **params):
    grid = {"c_grid": "paper"} if model == "SVM-map" and features == "paper" and split != "grid" else {}
    return {"dataset": dataset, "split": split, "fold": fold, "seed": seed, "model": model, "metric": metric,
            "value": float(value), "params": json.dumps({"features": features, "grid": "full", **grid, **params})}


def questions(values, features="paper", which="test", metric="map", **where):
    """Rows of each model's per-question values ({model: array}) and their mean (``test:map``)."""
    prefix = "q:" if which == "test" else DEV_QUERY_PREFIX
    qids = where.pop("qids", None)
    rows = []
    for model, array in values.items():
        ids = range(len(array)) if qids is None else qids
        rows += [_row(model, f"{prefix}{q}:{metric}", v, features, **where) for q, v in zip(ids, array)]
        rows.append(_row(model, f"{which}:{metric}", np.mean(array), features, **where))
    return rows


def table1(shifts, features="paper", noise=0.01, which="test", metric="map"):
    """Every Table 1 model: the base plus its shift and paired noise."""
    base = BASE if which == "test" else DEV
    return questions({m: noisy(base, shifts.get(m, 0.0), noise if m != "SVM" else 0.0, i)
                      for i, m in enumerate(TABLE_ROWS)}, features, which, metric)


def found(rows, start):
    return next(c for c in claims(rows) if c.claim.startswith(start))


@pytest.mark.parametrize("shift, noise, expected", [
    (+0.05, 0.05, HOLDS),           # LSSVM-AP clearly above SVM-map
    (-0.05, 0.05, FAILS),           # clearly below
    (+0.003, 0.25, INCONCLUSIVE),   # inside the noise: the interval holds 0
])
def test_an_ordering_is_a_paired_direction_over_the_test_questions(shift, noise, expected):
    rows = questions({"LSSVM-AP": noisy(BASE, shift, noise, 5), "SVM-map": BASE})
    claim = found(rows, "LSSVM-AP outperforms the structural baseline SVM-map")
    assert claim.kind == REPLICATION and claim.verdict == expected
    assert f"n = {N_TEST} test questions" in claim.interval and claim.setup == SETUP_TITLES["paper"]
    assert claim.ours_setup == ""  # our setup was not run: no second column
    low, high = (float(x) for x in claim.interval.split("[")[1].split("]")[0].split(", "))
    assert (expected == INCONCLUSIVE) == (low < 0 < high)  # no verdict on an interval that holds 0


def test_our_setup_goes_beside_the_papers():
    rows = questions({"LSSVM-AP": noisy(BASE, 0.05, 0.05, 5), "SVM-map": BASE})
    rows += questions({"LSSVM-AP": noisy(BASE, -0.05, 0.05, 6), "SVM-map": BASE}, features="sim")
    claim = found(rows, "LSSVM-AP outperforms the structural baseline SVM-map")
    assert claim.verdict == HOLDS
    assert claim.ours_setup.startswith(f"{FAILS}: LSSVM-AP - SVM-map: -") and SETUP_TITLES["sim"] in claim.ours_setup


def test_svm_map_on_the_papers_list_counts_only_when_tuned_on_the_papers_grid():
    old = {"dataset": "wikiqa", "split": "official", "fold": 0, "seed": 0, "model": "SVM-map", "metric": "q:0:map",
           "value": 0.5, "params": json.dumps({"features": "paper", "grid": "full"})}
    assert not counts(old)  # a store from before: SVM-map on the paper's list tuned on our grid
    assert counts({**old, "params": json.dumps({"features": "paper", "grid": "full", "c_grid": "paper"})})
    assert counts({**old, "params": json.dumps({"features": "sim", "grid": "full"})})
    assert counts({**old, "model": "LSP", "params": json.dumps({"features": "paper", "grid": "full"})})
    rows = questions({"LSSVM-AP": noisy(BASE, 0.05, 0.05, 5)}) + [old]
    assert found(rows, "LSSVM-AP outperforms the structural baseline SVM-map").verdict == UNTESTABLE


@pytest.mark.parametrize("shift, noise, expected", [
    (0.013, 0.01, HOLDS),           # about 1.3 points, tight: inside 1.3 +- 1
    (0.0, 0.005, FAILS),            # no gain, tight: the interval excludes 0.3..2.3
    (0.013, 0.3, INCONCLUSIVE),     # too wide to tell
])
def test_adds_around_1_3_points_is_a_magnitude_with_a_one_point_band(shift, noise, expected):
    rows = questions({"LSSVM-AP*": noisy(BASE, shift, noise, 7), "LSSVM-AP": BASE})
    claim = found(rows, "Exact inference adds around 1.3 MAP points")
    assert claim.verdict == expected and "± 1 point" in claim.why


def test_more_than_7_points_needs_the_whole_interval_above_7_on_every_metric():
    def rows(shift):
        out = []
        for metric in ("map", "mrr", "p@1"):
            out += questions({"LSP-AP": noisy(BASE, shift, 0.01, 1), "LSSVM-AP": noisy(BASE, shift, 0.01, 2),
                              "SVM": BASE}, metric=metric)
        return out

    words = "The structural approaches improve over the SVM baseline by more than 7"
    assert found(rows(0.10), words).verdict == HOLDS
    assert found(rows(0.03), words).verdict == FAILS
    held = found(rows(0.10), words)
    assert held.interval.count("claimed above +7.00") == 6


def test_every_structured_model_on_dev_holds_only_when_each_does():
    up = {m: 0.05 for m in TABLE_ROWS if m != "SVM"}
    words = "Every structured model ranks WikiQA dev better than the SVM"
    assert found(table1(up, which="dev"), words).verdict == HOLDS
    assert found(table1({**up, "LSP": -0.05}, which="dev"), words).verdict == FAILS
    assert found(table1({**up, "LSP": 0.0}, which="dev", noise=0.2), words).verdict in (INCONCLUSIVE, FAILS)
    assert f"n = {N_DEV} dev questions" in found(table1(up, which="dev"), words).interval


def test_a_margin_of_roughly_10_points_has_a_2_point_band():
    rows = questions({"LSP-AP": noisy(BASE, 0.0983, 0.01, 3), "SVM": BASE})
    assert found(rows, "LSP-AP beats the SVM classifier by roughly 10").verdict == HOLDS
    rows = questions({"LSP-AP": noisy(BASE, 0.0674, 0.01, 3), "SVM": BASE})  # 6.7 points: below 7.8
    assert found(rows, "LSP-AP beats the SVM classifier by roughly 10").verdict == FAILS


def _curves(shape, features="paper", noise=0.002, seeds=N_SEEDS):
    """Dev curves of the Fig. 1 rows over ``seeds`` seeds: {model: function of epochs 1..100}."""
    epochs = np.arange(1, 101)
    rows = []
    for seed in range(seeds):
        rng = np.random.default_rng(100 + seed)
        for model in CURVE_ROWS:
            values = shape[model](epochs) + rng.normal(0.0, noise, epochs.size)
            rows += [_row(model, f"curve:{e:03d}", v, features, seed=seed) for e, v in zip(epochs, values)]
    return rows


def test_fig1_is_paired_over_seeds():
    good = {"LSP": lambda e: np.full(e.size, 0.68), "LSP-AP": lambda e: np.where(e <= 16, 0.69, 0.68),
            "LSP-AP*": lambda e: 0.70 + 0.01 * ((e >= 55) & (e <= 85))}
    plateau = found(_curves(good), "LSP-AP* stabilises to its highest dev values")
    assert plateau.verdict == HOLDS and f"n = {N_SEEDS} seeds" in plateau.interval
    assert "be8b7df" in plateau.why and CHANGES[0][0] in plateau.why  # the rule changed after its result
    assert found(_curves(good), "The LSP-AP dev curve is distinctly superior").verdict == HOLDS
    assert found(_curves(good), "Exact inference gives the best dev curve").verdict == HOLDS
    early = {**good, "LSP-AP*": lambda e: 0.70 + 0.02 * (e <= 20)}  # LSP-AP*'s best early: the window is below
    assert found(_curves(early), "LSP-AP* stabilises to its highest dev values").verdict == FAILS
    flat = {**good, "LSP-AP": lambda e: np.full(e.size, 0.68)}  # LSP-AP no better early: inside the noise
    assert found(_curves(flat), "The LSP-AP dev curve is distinctly superior").verdict == INCONCLUSIVE
    # one seed is no paired test, and a quick run's 20 epochs do not reach the claims' epochs: both wait
    assert found(_curves(good, seeds=1), "LSP-AP* stabilises").verdict == UNTESTABLE
    short = [r for r in _curves(good) if int(r["metric"][len("curve:"):]) <= 20]
    assert {c.verdict for c in claims(short) if c.where.startswith("Fig. 1")} == {UNTESTABLE}


def _cv(shifts, dataset="wikiqa", metrics=("map", "mrr", "p@1"), noise=0.01, fold_shift=None):
    """Cross-validation rows: five folds of about 47 test questions each, every model base + shift + noise."""
    rows = []
    for fold in range(5):
        qids = list(range(fold, N_TEST, 5))
        for i, model in enumerate(CV_ROWS):
            extra = (fold_shift or {}).get(model, [0.0] * 5)[fold]
            for metric in metrics:
                values = noisy(BASE[qids], shifts.get(model, 0.0) + extra, noise if model != "SVM" else 0.0,
                               10 * fold + i)
                rows += questions({model: values}, metric=metric, split="cv", dataset=dataset, fold=fold, qids=qids,
                                  cv=True)
    return rows


def test_cross_validation_pools_the_folds_test_questions():
    up = {m: 0.05 for m in CV_ROWS if m != "SVM"}
    claim = found(_cv(up), "In cross-validation on WikiQA every structured model beats the SVM")
    assert claim.verdict == HOLDS and f"n = {N_TEST} test questions" in claim.interval
    assert found(_cv({**up, "LSP": -0.05}), "In cross-validation on WikiQA").verdict == FAILS


def test_a_spread_over_five_folds_cannot_hold_so_the_claim_is_at_best_inconclusive():
    wide = {"LSSVM-AP": [0.08, -0.08, 0.06, -0.06, 0.0]}  # LSSVM-AP varies far more across the folds
    claim = found(_cv({"LSSVM-AP": 0.05}, fold_shift=wide), "LSSVM-AP outperforms SVM-map in MAP and MRR")
    assert claim.verdict == INCONCLUSIVE and "n = 5 folds" in claim.interval and "1/16" in claim.why
    below = found(_cv({"LSSVM-AP": -0.05}, fold_shift=wide), "LSSVM-AP outperforms SVM-map in MAP and MRR")
    assert below.verdict == FAILS  # an ordering that fails fails the claim


def test_the_trec13_order_judges_each_neighbouring_pair():
    claim = found(_cv({"LSP-AP": 0.08, "SVM-map": 0.06, "SVM": 0.0, "LSP": -0.04, "LSSVM-AP": -0.08},
                      dataset="trec13"), "The order of the models on TREC13 by MAP")
    assert claim.verdict == HOLDS and claim.interval.count("p = ") == 4  # four pairs, n said once
    assert claim.interval.endswith(f"(points; n = {N_TEST} test questions)")


def _grid(model, features, select, test_shift=0.0):
    rows = []
    for c, value in select.items():
        rows.append(_row(model, "select:map", value, features, split="grid", C=c))
        rows.append(_row(model, "test:map", BASE.mean() + test_shift, features, split="grid", C=c))
        rows += [_row(model, f"q:{q}:map", v, features, split="grid", C=c)
                 for q, v in enumerate(noisy(BASE, test_shift, 0.01, 9))]
    return rows


def test_grid_reach_and_the_baseline_level_are_checks_and_eq4_a_paired_magnitude():
    inside = {c: 0.7 - abs(np.log10(c) - 2) / 100 for c in PAPER_C_GRID}  # peaks at C = 100, inside
    rows = _grid("LSSVM-AP", "paper", inside) + _grid(SUM_ROW, "paper", inside, test_shift=0.0772)
    rows += questions({"SVM": BASE, "LSSVM-AP": noisy(BASE, 0.06, 0.01, 4)})
    found_ = {c.claim: c for c in claims(rows)}
    grid = found_["LSSVM-AP: the grid {1, 10, 100, 1000, 2000, 5000} holds the dev optimum of C"]
    assert grid.kind == CHECK and grid.verdict == HOLDS and "by construction" in grid.why
    eq4 = next(c for c in found_.values() if c.where.startswith("Eq. 4"))
    assert eq4.kind == REPLICATION and eq4.verdict == HOLDS and "sum C = 100" in eq4.ours
    level = next(c for c in found_.values() if c.claim.startswith("Setup: the SVM baseline"))
    assert level.kind == CHECK and level.verdict == HOLDS  # BASE's mean is within 2 points of the paper's 54.67
    high = questions({"SVM": BASE + 0.1})
    assert next(c for c in claims(high) if c.claim.startswith("Setup: the SVM baseline")).verdict == FAILS
    # a grid fitted in part cannot be checked yet and says what is missing
    part = {c: v for c, v in inside.items() if c <= 100}
    found_ = {c.claim: c for c in claims(_grid("LSP-AP", "paper", part))}
    partial = found_["LSP-AP: the grid {1, 10, 100, 1000, 2000, 5000} holds the dev optimum of C"]
    assert partial.verdict == UNTESTABLE and "has not fitted C = 1000, 2000, 5000" in partial.ours


def test_a_choice_at_the_grids_end_that_moves_on_fails_the_check():
    rising = {c: 0.6 + c / 1e6 for c in PAPER_C_GRID + [1e4]}  # best at 5000, then better still at 10^4
    check = found(_grid("LSSVM-AP", "paper", rising), "LSSVM-AP: the grid")
    assert check.verdict == FAILS and "paper grid: C = 5000 (at its end)" in check.ours and ": C = 10000" in check.ours


def test_every_claim_is_kept_and_typed_without_runs():
    from structrank_lab.experiments.registry import CLAIMS

    assert CLAIMS["haponchyk2018"] is claims
    empty = claims([])
    assert len(empty) == 32 and {c.verdict for c in empty} == {UNTESTABLE}
    assert sum(c.kind == CHECK for c in empty) == 7  # the six grid checks and the baseline's level


def test_the_joint_rules():
    up = direction(noisy(BASE, 0.05, 0.01, 1), BASE)
    down = direction(noisy(BASE, -0.05, 0.01, 1), BASE)
    unsure = direction(noisy(BASE, 0.0, 0.3, 1), BASE)
    assert every({"a": up, "b": up}).verdict == HOLDS
    assert every({"a": up, "b": unsure}).verdict == INCONCLUSIVE
    assert every({"a": unsure, "b": down}).verdict == FAILS and every({"a": unsure, "b": down}).high < 0
    assert "a: +" in every({"a": up, "b": down}).interval and "; b: -" in every({"a": up, "b": down}).interval
    with pytest.raises(ValueError):
        every({})
    assert exceeds(noisy(BASE, 0.02, 0.01, 1), BASE, 0.01).verdict == HOLDS
    assert exceeds(noisy(BASE, 0.005, 0.01, 1), BASE, 0.01).verdict == FAILS
    assert exceeds(noisy(BASE, 0.01, 0.3, 1), BASE, 0.01).verdict == INCONCLUSIVE
    text = exceeds(noisy(BASE, 0.02, 0.01, 1), BASE, 0.01).interval  # A - B's interval, the threshold beside
    assert text.startswith("+1.9") and text.endswith("claimed above +1.00")


def test_the_plan_tunes_svm_map_on_the_papers_grid_and_runs_the_perceptrons_seeds():
    from structrank_lab.experiments.haponchyk2018.plan import plan

    specs = plan(["sim", "paper"])
    svm_map = {(s.split, s.params["features"]): s.params.get("c_grid") for s in specs if s.model == "SVM-map"}
    assert svm_map[("official", "paper")] == "paper" and svm_map[("cv", "paper")] == "paper"
    assert svm_map[("official", "sim")] is None and svm_map[("cv", "sim")] is None
    seeds = {(s.model, s.params["features"], s.seed) for s in specs if s.seed}
    assert seeds == {(m, f, k) for m in CURVE_ROWS for f in ("sim", "paper") for k in range(1, N_SEEDS)}
    assert all(s.seed == 0 for s in plan(["sim"], quick=True))


def test_a_run_records_each_questions_values_and_a_seed_reorders_the_training_questions(tmp_path):
    from structrank.data import make_ranking_dataset
    from structrank_lab.experiments.haponchyk2018.features import _feature_path
    from structrank_lab.experiments.haponchyk2018.plan import _run, _splits
    from structrank_lab.experiments.runner import RunSpec

    data = make_ranking_dataset(n_queries=60, n_features=5, random_state=0)
    for split, part in (("train", range(0, 30)), ("dev", range(30, 45)), ("test", range(45, 60))):
        d = data.take_queries(list(part))  # labels 0-2 made binary, as a QA file's
        d = type(d)(d.X, (d.y > 0).astype(np.int64), d.qid)
        path = _feature_path(tmp_path, "wikiqa", "sim", split)
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(path, X=d.X, y=d.y, qid=d.qid, docids=np.array([f"d{i}" for i in range(d.n_rows)]))
    spec = RunSpec("haponchyk2018", "wikiqa", "official", 0, 0, "LSP-AP", {"features": "sim", "grid": "quick"})
    rows = {m.metric: m.value for m in _run(spec, str(tmp_path))}
    test_q = [k for k in rows if k.startswith("q:") and k.endswith(":map")]
    dev_q = [k for k in rows if k.startswith(DEV_QUERY_PREFIX) and k.endswith(":map")]
    assert len(test_q) > 5 and len(dev_q) > 5
    assert np.isclose(np.mean([rows[k] for k in test_q]), rows["test:map"])  # the questions make the mean
    first = _splits(str(tmp_path), spec)[0]
    again = _splits(str(tmp_path), dataclasses.replace(spec, seed=3))[0]
    assert sorted(first.qid.tolist()) == sorted(again.qid.tolist()) and first.qid.tolist() != again.qid.tolist()
