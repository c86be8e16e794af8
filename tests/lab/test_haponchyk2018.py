"""`structrank reproduce haponchyk2018`: the cross-validation split and the quick run on real data."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from structrank.data import make_ranking_dataset
from structrank_lab.experiments.haponchyk2018 import report_sections
from structrank_lab.experiments.haponchyk2018.design import ROWS
from structrank_lab.experiments.haponchyk2018.features import cv_parts


def test_cv_parts_are_disjoint_and_cover_every_question():
    data = make_ranking_dataset(n_queries=23, random_state=0)
    inside = [set(cv_parts(data, f).qid.tolist()) for f in range(5)]
    assert set().union(*inside) == set(data.qid.tolist())
    assert sum(len(s) for s in inside) == data.n_queries  # disjoint
    for f in range(5):
        outside = set(cv_parts(data, f, inside=False).qid.tolist())
        assert outside.isdisjoint(inside[f]) and outside | inside[f] == set(data.qid.tolist())


def test_report_puts_our_rows_beside_the_papers(tmp_path):
    rows = []
    for model in ("SVM", "LSP-AP"):
        for split, value in (("dev", 0.6), ("test", 0.65)):
            for metric in ("map", "mrr", "p@1"):
                rows.append({"dataset": "wikiqa", "split": "official", "fold": 0, "model": model,
                             "params": '{"features": "sim", "grid": "full"}', "metric": f"{split}:{metric}",
                             "value": value})
        rows.append({"dataset": "wikiqa", "split": "official", "fold": 0, "model": model,
                     "params": '{"features": "sim", "grid": "full"}', "metric": "chosen:C", "value": 10.0})
    for epoch in range(1, 4):
        rows.append({"dataset": "wikiqa", "split": "official", "fold": 0, "model": "LSP-AP",
                     "params": '{"features": "sim", "grid": "full"}', "metric": f"curve:{epoch:03d}", "value": 0.6})
    sections = dict(report_sections(rows, tmp_path))
    test_table = sections["Table 1: WikiQA test, similarity features"]
    assert "| LSP-AP | 0.6500" in test_table and "| paper: LSP-AP | 0.6450" in test_table
    assert (tmp_path / "fig1-lsp-dev-curves.png").stat().st_size > 1000


def test_margin_table_compares_our_margins_over_the_svm_with_the_papers(tmp_path):
    """The generated margin section: each model's MAP over the SVM baseline, ours and the paper's,
    and what our features add to each model over its published value (the feature gap)."""
    rows = []
    for model, dev, test in (("SVM", 0.70, 0.60), ("LSP-AP", 0.72, 0.65), ("LSSVM-AP", 0.69, 0.66)):
        for split, value in (("dev", dev), ("test", test)):
            rows.append({"dataset": "wikiqa", "split": "official", "fold": 0, "model": model,
                         "params": '{"features": "sim", "grid": "full"}', "metric": f"{split}:map", "value": value})
    section = dict(report_sections(rows, tmp_path))["Table 1: the margin over the SVM baseline, ours against the paper's"]
    lines = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]] for line in section.splitlines()
             if line.startswith("| ") and ":" in line.split("|")[1]}
    # columns: ours, ours - SVM, paper, paper - SVM, ours - paper (paper: LSP-AP 64.50, LSSVM-AP 62.39, SVM 54.67)
    assert lines["test: LSP-AP"] == ["0.6500", "0.0500", "0.6450", "0.0983", "0.0050"]
    assert lines["test: LSSVM-AP"] == ["0.6600", "0.0600", "0.6239", "0.0772", "0.0361"]
    assert lines["test: SVM"][:2] == ["0.6000", "0.0000"] and lines["test: SVM"][4] == "0.0533"
    assert lines["dev: LSP-AP"][1] == "0.0200" and lines["dev: LSSVM-AP"][1] == "-0.0100"
    assert "lift the SVM baseline by +5.3 points" in section and "by +0.5 to +3.6" in section
    assert "structured models are -1.0 to +2.0 points from the SVM" in section


@pytest.mark.data
def test_quick_reproduction_on_wikiqa(tmp_path, data_root):
    env = {**os.environ, "STRUCTRANK_DATA": str(data_root)}
    done = subprocess.run([sys.executable, "-m", "structrank", "reproduce", "haponchyk2018", "--quick", "--out",
                           str(tmp_path)], env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    report = (tmp_path / "report.md").read_text()
    assert "Table 1: WikiQA test" in report and "Fig. 1" in report
    test = report.split("## Table 1: WikiQA test")[1]
    values = {line.split("|")[1].strip(): float(line.split("|")[2]) for line in test.splitlines()
              if line.startswith("| ") and line.split("|")[1].strip() in ROWS}
    assert set(values) == {"SVM", "LSP-AP", "LSSVM-AP"}
    # far above ranking by chance (about 0.5 on these questions)
    assert min(values.values()) > 0.58, values
    assert np.isfinite(list(values.values())).all()


# -- the grid study ---------------------------------------------------------------------------------


def test_step_125_walks_the_1_2_5_series_both_ways():
    from structrank_lab.experiments.haponchyk2018.grid import step_125

    assert [step_125(c, True) for c in (1.0, 2.0, 5.0, 5000.0, 0.01)] == [2.0, 5.0, 10.0, 10000.0, 0.02]
    assert [step_125(c, False) for c in (1.0, 0.01, 1000.0, 3.0)] == [0.5, 0.005, 500.0, 2.0]


def test_grid_points_extend_past_an_end_until_the_choice_is_inside():
    from structrank_lab.experiments.haponchyk2018.grid import grid_points

    base = [1.0, 10.0, 100.0]
    assert grid_points(base, {}) == base  # nothing fitted yet: the base grid
    assert grid_points(base, {1.0: 0.5, 10.0: 0.6}) == base  # waits for every point
    assert grid_points(base, {1.0: 0.5, 10.0: 0.6, 100.0: 0.55}) == base  # inside: nothing added
    # best at the top: one step past it; then, still the best there, one more
    assert grid_points(base, {1.0: 0.5, 10.0: 0.6, 100.0: 0.7}) == base + [200.0]
    assert grid_points(base, {1.0: 0.5, 10.0: 0.6, 100.0: 0.7, 200.0: 0.8}) == base + [200.0, 500.0]
    # at the bottom: steps down; a tie keeps the smaller C (select_on_vali's rule), which is then inside
    assert grid_points(base, {1.0: 0.9, 10.0: 0.6, 100.0: 0.5}) == [0.5] + base
    assert grid_points(base, {0.5: 0.9, 1.0: 0.9, 10.0: 0.6, 100.0: 0.5}) == [0.2, 0.5] + base
    rising = {c: c for c in (1.0, 10.0, 100.0, 200.0, 500.0, 1000.0, 2000.0)}
    assert grid_points(base, rising, max_extension=4) == base + [200.0, 500.0, 1000.0, 2000.0]  # at most 4 past an end
    assert grid_points(base, rising, ceiling=300.0) == base + [200.0]  # never above the ceiling


def _grid_row(model, c, value, features="sim", metric="select:map"):
    return {"dataset": "wikiqa", "split": "grid", "fold": 0, "model": model, "metric": metric, "value": value,
            "params": json.dumps({"features": features, "C": c})}


def test_grid_plan_asks_for_an_extension_where_the_choice_sits_at_an_end():
    from structrank_lab.experiments.haponchyk2018.design import GRID_STUDY, MAX_EFFECTIVE_C, SUM_ROW
    from structrank_lab.experiments.haponchyk2018.grid import grid_plan
    from structrank_lab.experiments.haponchyk2018.published import PAPER_C_GRID

    first = grid_plan([], 857)
    wanted = {(s.model, s.params["features"], s.params["C"]) for s in first}
    assert ("LSSVM-AP", "paper", 5000.0) in wanted and (SUM_ROW, "sim", 5000.0) in wanted
    assert (SUM_ROW, "paper", 1.0) in wanted  # Eq. 4's sum on the paper's list too: its claim is judged there first
    assert {c for m, f, c in wanted if m == "SVM-map" and f == "sim"} == set(GRID_STUDY["SVM-map"])
    assert set(PAPER_C_GRID) < set(GRID_STUDY["SVM-map"]) and 0.01 in GRID_STUDY["SVM-map"]
    rows = [_grid_row("LSSVM-AP", c, c / 1e4) for c in PAPER_C_GRID]  # rising: best at 5000
    rows += [_grid_row(SUM_ROW, c, c / 1e4) for c in PAPER_C_GRID]
    again = {(s.model, s.params["features"], s.params["C"]) for s in grid_plan(rows, 857)}
    assert ("LSSVM-AP", "sim", 10000.0) in again
    # the sum's next step (10^4 x 857) would pass the largest effective C: it stays at its end
    assert 10000.0 * 857 > MAX_EFFECTIVE_C and not any(m == SUM_ROW and c > 5000 for m, f, c in again)


def _table_rows(values, features="sim", split="official", dataset="wikiqa", fold=0):
    """Rows of Table 1 (or a cross-validation fold): {model: {metric: value}}."""
    return [{"dataset": dataset, "split": split, "fold": fold, "model": model, "metric": metric, "value": value,
             "params": json.dumps({"features": features, "grid": "full", **({"cv": True} if split == "cv" else {})})}
            for model, metrics in values.items() for metric, value in metrics.items()]


def _uniform(dev, test, mrr_p1=None):
    return {"dev:map": dev, "test:map": test, "dev:mrr": dev, "test:mrr": test, "dev:p@1": dev, "test:p@1": test}


def test_the_report_lays_out_the_papers_feature_list_and_the_grid_study(tmp_path):
    from structrank_lab.experiments.haponchyk2018.design import SUM_ROW
    from structrank_lab.experiments.haponchyk2018.published import PAPER_C_GRID

    rows = _table_rows({"SVM": _uniform(0.59, 0.55), "LSP-AP": _uniform(0.66, 0.62)}, features="paper")
    for c in PAPER_C_GRID:
        rows += [_grid_row(SUM_ROW, c, 0.7 - c / 1e5), _grid_row(SUM_ROW, c, 0.69, metric="test:map")]
    rows.append({**_grid_row(SUM_ROW, 1.0, 857.0, metric="train:queries")})
    sections = dict(report_sections(rows, tmp_path))
    paper = [t for t in sections if t.startswith("Table 1: WikiQA test, the paper's feature list")]
    assert paper and "| LSP-AP | 0.6200" in sections[paper[0]] and "ESA" in sections[paper[0]]
    margin = [t for t in sections if t.startswith("Table 1: the margin over the SVM baseline, ours against the paper's (the paper's")][0]
    assert "the pointwise classifier does not gain most from them" not in sections[margin]
    grid = sections["The C grids and Eq. 4's sum: similarity features"]
    assert f"| {SUM_ROW} | 1, 10, 100, 1000, 2000, 5000 | 1 .. 5000 (6) | 1 | 1 | yes | 0.7000 | 0.6900 | — |" in grid
    assert "857 training questions" in grid and "**0.7000**" in grid
