"""`structrank reproduce any-scorer`: its plan, its report's paired comparison and acceptance bars, and a quick run."""

import csv

import pytest

from structrank_lab.experiments import any_scorer


def _rows(trees_shift, mlp_shift):
    """Per-query and fold-mean rows of lambdarank, the NDCG trees and the linear and MLP NDCG models."""
    shifts = {any_scorer.REFERENCE: 0.0, "trees · ndcg": trees_shift, "linear · ndcg": -0.01,
              "MLP · ndcg": -0.01 + mlp_shift}
    rows = []
    for model, shift in shifts.items():
        for q in range(40):
            rows.append({"dataset": "MQ2008", "model": model, "fold": "Fold1", "metric": f"q:{q}:ndcg@10",
                         "value": 0.3 + 0.01 * (q % 7) + shift})
        rows.append({"dataset": "MQ2008", "model": model, "fold": "Fold1", "metric": "ndcg@10", "value": 0.33 + shift})
    return rows


def test_every_scorer_meets_every_loss_beside_the_baselines():
    assert len(any_scorer.MODELS) == len(any_scorer.SCORERS) * len(any_scorer.LOSSES) + len(any_scorer.BASELINES)
    assert any_scorer.MODELS["trees · ndcg"] == "gbrt-ndcg" and any_scorer.MODELS["MLP · crf-kl"] == "mlp-crf-kl"
    assert any_scorer.MODELS["Nyström-RBF + linear · map"] == "svm-map"


def test_acceptance_verdicts_follow_the_recorded_means():
    passed = any_scorer.acceptance(_rows(-0.004, 0.0), "MQ2008")
    assert "NDCG@10 0.3260 against lambdarank's 0.3300 (-0.40 points; the bar is -0.5): **holds**" in passed
    assert "MLP on the ndcg loss" in passed and "(+0.00 points): **holds**" in passed
    failed = any_scorer.acceptance(_rows(-0.006, -0.002), "MQ2008")
    assert "(-0.60 points; the bar is -0.5): **does not hold**" in failed
    assert "Paired over 40 test queries, trees minus lambdarank -0.60 points (95% confidence interval" in failed
    assert "(-0.20 points): **does not hold**" in failed


def test_comparison_pairs_queries_and_names_the_better_system():
    table = any_scorer.comparison_table(_rows(-0.02, 0.0), "MQ2008", metrics=("ndcg@10",))
    line = next(l for l in table.splitlines() if l.startswith("| trees · ndcg |"))
    assert "| -2.00 |" in line and "| 40 |" in line and "LightGBM lambdarank better" in line


@pytest.mark.extra("torch")
def test_quick_reproduction_runs_every_row(tmp_path, data_root):
    rows = any_scorer.reproduce(tmp_path, data_dir=data_root, quick=True)
    models = {r["model"] for r in rows}
    assert models == set(any_scorer.MODELS)
    ndcg = {r["model"]: r["value"] for r in rows if r["metric"] == "ndcg@10"}
    assert all(0.0 < v < 1.0 for v in ndcg.values())
    with open(tmp_path / "results.csv") as f:
        assert sum(1 for _ in csv.DictReader(f)) == len(rows)
    assert "the acceptance bars" in (tmp_path / "report.md").read_text()


def test_mlp_against_linear_is_paired_and_reads_the_vali_lead():
    rows = _rows(0.0, -0.002)
    for model, value in (("linear · ndcg", 0.30), ("MLP · ndcg", 0.31)):  # the MLP ahead by 1 point on vali
        rows.append({"dataset": "MQ2008", "model": model, "fold": "Fold1", "metric": "vali:ndcg@10", "value": value})
    text = any_scorer.mlp_against_linear(rows, "MQ2008", "ndcg", "ndcg@10")
    # a constant shift on every query: no spread, so the interval is the shift itself
    assert "Paired over 40 test queries, MLP minus linear -0.20 points (95% confidence interval -0.20 to -0.20)" in text
    assert "a significant difference at 0.05." in text
    assert "On vali the MLP was ahead of the linear model by 1.00 points (mean over 1 folds, ndcg@10); on test -0.20." in text
    noisy = [dict(r, value=r["value"] + (0.05 if int(r["metric"].split(":")[1]) % 2 else -0.05))
             if r["model"] == "MLP · ndcg" and r["metric"].startswith("q:") else r for r in rows]
    noisy_text = any_scorer.mlp_against_linear(noisy, "MQ2008", "ndcg", "ndcg@10")
    assert "no significant difference at 0.05." in noisy_text
    # +/-5 points alternating around -0.2: s = 5.06, t(0.975, 39) = 2.023, half-width 1.62 points
    assert "MLP minus linear -0.20 points (95% confidence interval -1.82 to +1.42)" in noisy_text
    assert any_scorer.mlp_against_linear(rows, "MQ2008", "map", "map") == ""   # no per-query rows of that loss


def test_the_mlp_rows_run_with_several_seeds_and_the_others_with_one(data_root):
    from structrank.data import letor_root

    roots = {"MQ2008": letor_root("MQ2008", data_root)}
    runs = any_scorer.plan(roots)
    seeds = {}
    for r in runs:
        seeds.setdefault((r.model, r.fold), set()).add(r.seed)
    assert all(s == set(range(any_scorer.MLP_SEEDS)) for (m, _), s in seeds.items() if m.startswith("MLP"))
    assert all(s == {0} for (m, _), s in seeds.items() if not m.startswith("MLP"))
    assert len({(r.model, r.fold, r.seed) for r in runs}) == len(runs)
    quick = any_scorer.plan(roots, quick=True)
    assert {r.seed for r in quick if r.model == "MLP · map"} == {0, 1}


def _seeded(rows, model, shifts):
    """``rows`` with ``model``'s rows replaced by one copy per seed, shifted by that seed's amount."""
    out = [dict(r, seed=0) for r in rows if r["model"] != model]
    for seed, shift in enumerate(shifts):
        out += [dict(r, seed=seed, value=r["value"] + shift) for r in rows if r["model"] == model]
    return out


def test_a_model_with_several_seeds_is_its_mean_over_them_query_by_query():
    rows = _seeded(_rows(0.0, 0.0), "MLP · ndcg", (-0.004, 0.001, 0.006))   # mean +0.001
    from structrank_lab.experiments.report import per_query

    values = per_query(rows, "MQ2008", "MLP · ndcg", "ndcg@10")
    linear = per_query(rows, "MQ2008", "linear · ndcg", "ndcg@10")
    assert len(values) == 40 and all(abs(values[k] - linear[k] - 0.001) < 1e-12 for k in values)
    text = any_scorer.acceptance(rows, "MQ2008")
    assert "(+0.10 points): **holds**" in text
    assert ("The cell is the mean of 3 seeds; seed by seed the MLP's fold mean minus the linear model's was "
            "-0.40, +0.10, +0.60 points (at least the linear model for 2 of 3 seeds).") in text
    assert "Paired over 40 test queries, MLP minus linear +0.10 points" in text


def test_the_vali_lead_of_a_model_with_several_seeds_is_the_mean_over_them():
    rows = _seeded(_rows(0.0, 0.0), "MLP · ndcg", (0.0, 0.0))
    rows.append({"dataset": "MQ2008", "model": "linear · ndcg", "fold": "Fold1", "seed": 0,
                 "metric": "vali:ndcg@10", "value": 0.30})
    for seed, value in enumerate((0.30, 0.32)):
        rows.append({"dataset": "MQ2008", "model": "MLP · ndcg", "fold": "Fold1", "seed": seed,
                     "metric": "vali:ndcg@10", "value": value})
    text = any_scorer.mlp_against_linear(rows, "MQ2008", "ndcg", "ndcg@10")
    assert "On vali the MLP was ahead of the linear model by 1.00 points (mean over 1 folds" in text
    assert any_scorer.mlp_seed_spread(_rows(0.0, 0.0), "MQ2008", "ndcg", "ndcg@10", 0.32) == ""  # one seed
