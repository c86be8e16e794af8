"""`structrank reproduce volkovs2011`: selection on vali, the report's tables and figures, the quick run, and
the claims of the paper (verdicts and explanations follow the recorded values, never fixed prose)."""

import csv
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from structrank.experiments.claims import FAILS, HOLDS, UNTESTABLE
from structrank.experiments.volkovs2011 import claims, report_sections
from structrank.experiments.volkovs2011.design import NDCG, ROWS, SELECT, TABLE1_ROWS
from structrank.experiments.volkovs2011.objectives import fig1_derivatives
from structrank.experiments.volkovs2011.plan import grid_points, plan
from structrank.experiments.volkovs2011.published import PAPER_TABLE1


def _rows(values, data=None):
    """Long-form rows from {(model, fold, seed, rate or params): (vali, test)}; test is NDCG@1..5 or one value for all;
    params are pairs ((name, value), ...).

    ``data``: {metric: value} of Sec. 6.1's counts, recorded with every run as ``data:<metric>``.
    """
    rows = []
    for (model, fold, seed, setting), (vali, test) in values.items():
        params = json.dumps({**(dict(setting) if isinstance(setting, tuple) else {"learning_rate": setting}),
                             "max_epochs": 5})
        base = {"dataset": "MQ2008", "split": "test", "fold": fold, "seed": seed, "model": model, "params": params}
        rows.append({**base, "metric": SELECT, "value": vali})
        rows.append({**base, "metric": "best_epoch", "value": 3.0})
        rows.append({**base, "metric": "train_seconds", "value": 0.5})
        tests = test if isinstance(test, tuple) else (test,) * len(NDCG)
        rows += [{**base, "metric": "test:" + m, "value": v} for m, v in zip(NDCG, tests)]
        rows += [{**base, "metric": "data:" + m, "value": v} for m, v in (data or {}).items()]
    return rows


def _runs(tests, folds=("Fold1", "Fold2"), seeds=(0, 1), data=None):
    """Rows of every model in ``tests`` ({model: test}) at one setting, the same in each fold and seed."""
    return _rows({(model, fold, seed, 0.1): (0.5, test) for model, test in tests.items() for fold in folds
                  for seed in seeds}, data)


def _by_claim(found):
    return {(c.where, c.claim): c for c in found}


def _find(found, words):
    hits = [c for c in found if words in c.claim]
    assert len(hits) == 1, (words, [c.claim for c in found])
    return hits[0]


def test_the_setting_is_chosen_on_vali_and_the_spread_is_over_seeds(tmp_path):
    values = {}
    for model in ("ML", "LA", "LS", "EL", "KL"):
        for fold in ("Fold1", "Fold2"):
            for seed in (0, 1):
                # the setting with the better vali has test 0.4 + 0.01 * seed; the other a test of 0.9
                values[(model, fold, seed, 0.1)] = (0.5, 0.4 + 0.01 * seed + (0.02 if model == "KL" else 0.0))
                values[(model, fold, seed, 0.01)] = (0.3, 0.9)
    sections = dict(report_sections(_rows(values), tmp_path))
    table = sections["MQ2008, Table 1: test NDCG@1-5 (letor4 convention)"]
    # mean of the per-seed means 0.40 and 0.41; spread = their standard deviation
    assert f"| ML | 0.4050 ± {np.std([0.40, 0.41], ddof=1):.4f} |" in table
    assert "| KL | 0.4250" in table
    assert "| published: KL | 0.3947 | 0.4180 | 0.4374 | 0.4618 | 0.4784 |" in table
    differences = sections["MQ2008, Fig. 2: each objective against ML"]
    assert "| KL − ML | +2.00 ± 0.00 (2/2)" in differences
    assert (tmp_path / "fig2-mq2008.png").stat().st_size > 1000
    assert (tmp_path / "fig1-derivatives.png").stat().st_size > 1000
    chosen = sections["MQ2008: settings chosen on vali"]
    assert "learning_rate=0.1 ×4" in chosen and "learning_rate=0.01" not in chosen


def test_fig1_table_is_the_exact_normalised_derivative(tmp_path):
    derivatives = fig1_derivatives()
    for values in derivatives.values():
        assert np.linalg.norm(values) == pytest.approx(1.0)
    # ML at the caption's example: -(u - p) / |u - p| with p = softmax(-E), u on the middle one
    p = np.exp([1.0, 0.5, 0.0, -0.5, -1.0])
    p /= p.sum()
    g = np.array([0, 0, 1.0, 0, 0]) - p
    np.testing.assert_allclose(derivatives["ml"], -g / np.linalg.norm(g))
    text = dict(report_sections([], tmp_path))["Fig. 1: negative derivatives of each objective with respect to the energies"]
    assert "| LS |" in text and "fig1-derivatives.png" in text


def test_plan_covers_every_row_setting_fold_and_seed(tmp_path):
    for fold in ("Fold1", "Fold2"):
        (tmp_path / fold).mkdir()
        for split in ("train", "vali", "test"):
            (tmp_path / fold / f"{split}.txt").write_text("0 qid:1 1:0.5\n")
    specs = plan({"MQ2008": str(tmp_path)})
    expected = sum(len(grid_points(row)) for row in ROWS) * 2 * 3
    assert len(specs) == expected == len(set(specs))
    assert len(grid_points("LA")) == 16 and len(grid_points("ML")) == 4
    assert {s.params["max_epochs"] for s in specs} == {100}


@pytest.mark.data
def test_quick_reproduction_on_mq2008(tmp_path, data_root):
    env = {**os.environ, "STRUCTRANK_DATA": str(data_root)}
    done = subprocess.run([sys.executable, "-m", "structrank", "reproduce", "volkovs2011", "--quick", "--out",
                           str(tmp_path)], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    report = (tmp_path / "report.md").read_text()
    table = report.split("## MQ2008, Table 1")[1].split("##")[0]
    values = {line.split("|")[1].strip(): float(line.split("|")[2].split("±")[0]) for line in table.splitlines()
              if line.startswith("| ") and line.split("|")[1].strip() in ("ML", "KL", "ML-sum")}
    # MQ2008 Fold1 test NDCG@1 of a trained CRF; random scores give about 0.17 there
    assert set(values) == {"ML", "KL", "ML-sum"}
    assert min(values.values()) > 0.30, values
    assert "| ML-sum − ML |" in report  # the paper's ML beside ours in Fig. 2's differences
    # Sec. 6.1's counts are recorded with every run: MQ2008 Fold1's three files hold all 784 queries
    rows = list(csv.DictReader(open(tmp_path / "results.csv")))
    counts = {r["metric"]: float(r["value"]) for r in rows if r["model"] == "ML" and r["metric"].startswith("data:")}
    assert sum(counts[f"data:{split}_queries"] for split in ("train", "vali", "test")) == 784
    assert counts["data:train_min_label"] == 0 and counts["data:train_max_label"] == 2
    assert 0 < counts["data:train_single_level_queries"] < counts["data:train_queries"]
    assert "Fig. 1" in report and (tmp_path / "fig1-derivatives.png").exists()


def test_mq2007_is_used_when_the_data_folder_has_it(tmp_path):
    from structrank.experiments.runner import letor_roots

    for name in ("MQ2008", "MQ2007"):
        for fold in ("Fold1", "Fold2"):
            folder = tmp_path / "letor" / name / fold
            folder.mkdir(parents=True)
            for split in ("train", "vali", "test"):
                (folder / f"{split}.txt").write_text("2 qid:10 1:0.5 2:1\n0 qid:10 1:0.1 2:0\n")
    roots = letor_roots(("MQ2008", "MQ2007"), tmp_path)
    assert set(roots) == {"MQ2008", "MQ2007"}
    specs = plan(roots)
    assert {s.dataset for s in specs} == {"MQ2008", "MQ2007"}
    assert letor_roots(("MQ2008", "MQ2007"), tmp_path, only="MQ2008").keys() == {"MQ2008"}
    with pytest.raises(FileNotFoundError, match="MQ2007"):
        letor_roots(("MQ2007",), tmp_path / "elsewhere")


# ----------------------------------------------------------------------------------------------
# the report beside the paper's ML, and the claims


def test_table1_and_fig2_show_the_papers_ml_beside_ours(tmp_path):
    tests = {"ML": 0.40, "LA": 0.41, "LS": 0.42, "EL": 0.42, "KL": 0.43, "ML-sum": 0.37, "LA-sum": 0.39,
             "ML-sum, single-level kept": 0.30}
    sections = dict(report_sections(_runs(tests), tmp_path))
    table = sections["MQ2008, Table 1: test NDCG@1-5 (letor4 convention)"]
    assert "| ML-sum | 0.3700 ± 0.0000 |" in table and "| LA-sum | 0.3900" in table
    differences = sections["MQ2008, Fig. 2: each objective against ML"]
    assert "| ML-sum − ML | -3.00 ± 0.00 (2/2)" in differences
    assert "| KL − ML-sum | +6.00 ± 0.00 (2/2)" in differences and "| LA-sum − ML-sum | +2.00" in differences
    studies = sections["MQ2008: studies beyond the paper (KL with T < 1, shuffled visits; single-level queries kept)"]
    assert "| ML-sum, single-level kept − ML-sum | -7.00" in studies
    assert "ML-sum" in TABLE1_ROWS and "ML-sum" in ROWS and ROWS["ML-sum"][0] == "ml-sum"


def test_the_claims_are_counted_whatever_ran_and_missing_runs_are_untestable():
    everything = {model: 0.4 for model in ROWS}
    full, empty = claims(_runs(everything)), claims([])
    assert [(c.where, c.claim) for c in full] == [(c.where, c.claim) for c in empty]
    assert len(full) >= 20 and len(set((c.where, c.claim) for c in full)) == len(full)
    run_based = [c for c in empty if c.where.startswith(("Table 1", "Sec. 6.1", "Sec. 6.2", "Fig. 2", "Abstract"))]
    assert run_based and all(c.verdict == UNTESTABLE for c in run_based)
    assert all(c.why.startswith("not in the result store") for c in run_based if "bars" not in c.paper_evidence)
    # a quick store (ML, KL, ML-sum only) tests what it can and says what is missing for the rest
    quick = _by_claim(claims(_runs({"ML": 0.4, "KL": 0.45, "ML-sum": 0.3})))
    best = _find(quick.values(), "KL consistently produces the best")
    assert best.verdict == UNTESTABLE and "LA-sum" in best.why


def test_fig2_claims_follow_the_measured_order_and_name_the_ablations():
    tests = {"ML": 0.35, "LA": 0.36, "LS": 0.40, "EL": 0.402, "KL": 0.45, "ML-sum": 0.30, "LA-sum": 0.38,
             "KL, shuffled": 0.47, "ML, single-level kept": 0.36, "LA, single-level kept": 0.33}
    found = claims(_runs(tests))
    for words in ("loss-augmentation produces better", "Loss-scaling further improves", "similar performance",
                  "KL consistently produces the best", "loss-sensitive objectives"):
        assert _find(found, words).verdict == HOLDS, words
    # the ablation with single-level queries kept reverses LA against ML: said in `why`, from the values
    la = _find(found, "loss-augmentation produces better")
    assert "LA-sum − ML-sum = +8.00, +8.00, +8.00, +8.00, +8.00 (5/5 above 0)" in la.ours
    assert ("Ablation, single-level queries kept (MQ2008): LA, single-level kept − ML, single-level kept = -3.00"
            in la.why and "the claim does not hold there" in la.why)
    # KL below LA-sum: the claim fails, names the broken pair and what the shuffled ablation showed
    found = claims(_runs({**tests, "KL": 0.37}))
    best = _find(found, "KL consistently produces the best")
    assert best.verdict == FAILS
    assert ("Breaks: KL − LA-sum on MQ2008 (lowest -1.00 ± 0.00 over 2 seeds at ndcg@1); KL − LS on MQ2008 "
            "(lowest -3.00 ± 0.00 over 2 seeds at ndcg@1); KL − EL on MQ2008" in best.why)
    assert "Ablation, KL, shuffled (MQ2008): KL, shuffled − ML-sum = +17.00" in best.why
    assert "KL, shuffled − EL = +6.80, +6.80, +6.80, +6.80, +6.80 (5/5 above 0); the claim holds there." in best.why
    assert "MQ2007: not in the result store." in best.why
    # LS and EL 1 point apart are not "similar"; the break is named by the cutoff furthest from 0
    apart = _find(claims(_runs({**tests, "EL": (0.40, 0.41, 0.40, 0.40, 0.40)})), "similar performance")
    assert apart.verdict == FAILS and "furthest from 0 -1.00 ± 0.00 over 2 seeds at ndcg@2" in apart.why


def test_table1_claims_compare_kl_with_the_published_values():
    published = tuple(v / 100 for v in PAPER_TABLE1["MQ2008"]["KL"])
    same = _find(claims(_runs({"KL": published, "ML": 0.3})), "CRF trained on KL: NDCG@1-5 on MQ2008")
    assert same.verdict == HOLDS and "the gaps are +0.00, +0.00, +0.00, +0.00, +0.00" in same.why
    lower = tuple(v - 0.015 for v in published)
    found = claims(_runs({"KL": lower, "KL, shuffled": published, "ML": 0.3}))
    below = _find(found, "CRF trained on KL: NDCG@1-5 on MQ2008")
    assert below.verdict == FAILS and "-1.50, -1.50, -1.50, -1.50, -1.50" in below.why
    assert "the closest is 'KL, shuffled', gaps +0.00" in below.why
    assert _find(found, "NDCG@1-5 on MQ2007").verdict == UNTESTABLE
    # the paper's own numbers pass its own claims on the baselines; ours, 1.5 points lower, do not
    found = claims(_runs({"KL": published}))
    assert _find(found, "SVM-Struct").verdict == HOLDS and _find(found, "AdaRank").verdict == HOLDS
    found = claims(_runs({"KL": lower}))
    assert _find(found, "SVM-Struct").verdict == FAILS and _find(found, "AdaRank").verdict == FAILS


def test_the_objective_claims_are_computed_exactly():
    found = claims([])
    fig1 = [c for c in found if c.where == "Fig. 1, Sec. 3.4"]
    assert len(fig1) == 5 and all(c.verdict == HOLDS for c in fig1)
    assert _find(found, "upper-bound the loss").verdict == HOLDS
    assert _find(found, "closer to the loss").verdict == HOLDS
    limit = _find(found, "recovered as T approaches 0")
    assert limit.verdict == HOLDS and "is not Eq. 10's sum" in limit.why
    # Eq. 13 as printed sorts by increasing score; Sec. 4's 1 - sum q is the complement of the optimum's mass
    eq14 = _find(found, "sorts the documents by decreasing score")
    assert eq14.verdict == FAILS and "for 0 with Eq. 13 as printed" in eq14.ours
    mass = _find(found, "KL requires the probability mass")
    assert mass.verdict == FAILS and mass.why.startswith("Hypothesis: ")
    assert np.allclose(fig1_derivatives()["ml"], fig1_derivatives(objectives=("ml-sum",))["ml-sum"])


def test_the_data_claim_reads_the_counts_recorded_with_the_runs():
    good = {"train_queries": 470, "vali_queries": 157, "test_queries": 157, "train_documents": 9000,
            "vali_documents": 3111, "test_documents": 3100, "train_min_label": 0, "vali_min_label": 0,
            "test_min_label": 0, "train_max_label": 2, "vali_max_label": 2, "test_max_label": 2,
            "train_single_level_queries": 94}
    claim = _find(claims(_runs({"KL": 0.4}, data=good)), "MQ2008 has 784 queries")
    assert claim.verdict == HOLDS and "per fold 784 queries and 15211 documents" in claim.ours
    assert "20.00% by fold" in claim.why
    moved = _find(claims(_runs({"KL": 0.4}, data={**good, "test_documents": 3000})), "MQ2008 has 784 queries")
    assert moved.verdict == FAILS and "15111 documents" in moved.ours


def test_the_settings_claims_report_the_printed_grid_and_t_below_it():
    values = {}
    for fold in ("Fold1", "Fold2"):
        for seed in (0, 1):
            # 0.1 (our reading of the repeated 0.01) wins on vali; the printed grid would take 0.01
            values[("KL", fold, seed, (("learning_rate", 0.1), ("T", 1.0)))] = (0.50, 0.45)
            values[("KL", fold, seed, (("learning_rate", 0.01), ("T", 1.0)))] = (0.48, 0.40)
            values[("KL, T < 1", fold, seed, (("learning_rate", 0.1), ("T", 0.1)))] = (0.52, 0.41)
    found = claims(_rows(values))
    rates = _find(found, "Learning rates swept")
    assert rates.verdict == UNTESTABLE and "0.1 chosen in 4 of 4 selections" in rates.ours
    assert "with the printed grid {0.5, 0.01, 0.001} 40.00, 40.00" in rates.ours
    grid = _find(found, "alpha and T swept")
    assert grid.verdict == FAILS and "52.00 against 50.00" in grid.ours and "KL: T chosen 1 ×4" in grid.ours
    values = {k: (0.45, v[1]) if k[0] == "KL, T < 1" else v for k, v in values.items()}
    assert _find(claims(_rows(values)), "alpha and T swept").verdict == HOLDS


def test_volkovs2011_claims_are_registered():
    from structrank.experiments import registry, volkovs2011

    assert registry.CLAIMS[volkovs2011.EXPERIMENT] is volkovs2011.claims
