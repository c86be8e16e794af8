"""`structrank reproduce chakrabarti2008 --quick` on the real data: every part of the report is there."""

import os
import subprocess
import sys

import pytest

import json

from structrank_lab.experiments.chakrabarti2008 import claims
from structrank_lab.experiments.chakrabarti2008.design import (FIG9_METRICS, GAP_BEST_C, GAP_EVERY_ROW, GAP_ROWS, GAP_TREC,
                                                           GAP_VARIANTS, PAPER_ROWS, ROWS)
from structrank_lab.experiments.chakrabarti2008.published import PAPER_FIG9
from structrank_lab.experiments.chakrabarti2008.report import both_preparations, gap_study, paper_comparison
from structrank_lab.experiments.claims import UNTESTABLE, VERDICTS


@pytest.mark.data
def test_quick_reproduction_writes_every_table_and_figure(tmp_path, data_root):
    env = {**os.environ, "STRUCTRANK_DATA": str(data_root)}
    done = subprocess.run([sys.executable, "-m", "structrank", "reproduce", "chakrabarti2008", "--quick", "--out",
                           str(tmp_path)], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    report = (tmp_path / "report.md").read_text()
    for heading in ("Fig. 9", "binary relevance", "Fig. 7", "Figs. 4-6", "Figs. 8 and 10"):
        assert heading in report
    for figure in ("fig7-mrr-mq2008.png", "fig4-avg-slack-mq2008.png", "fig5-objective-ratio-mq2008.png",
                   "fig6-w-norm-mq2008.png"):
        assert (tmp_path / figure).stat().st_size > 1000
    # the structural SVMs learn: far above the MAP of random scores on MQ2008 (about 0.3)
    table = {line.split("|")[1].strip(): line.split("|")[2].strip() for line in report.splitlines()
             if line.startswith("| ") and line.split("|")[1].strip() in ROWS}
    assert float(table["MAP"].split()[0]) > 0.4
    # `structrank results` lays the experiment out the same way, figures beside the page
    page = tmp_path / "docs" / "RESULTS.md"
    done = subprocess.run([sys.executable, "-m", "structrank", "results", str(tmp_path / "results.sqlite"), "--out",
                           str(page)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    text = page.read_text()
    assert "chakrabarti2008 — MQ2008, Fig. 9" in text
    assert "## Claims" in text and "| Chakrabarti et al. 2008 | Fig. 4 (MQ2008 Fold1 train) |" in text
    assert (page.parent / "figures" / "chakrabarti2008" / "fig7-mrr-mq2008.png").is_file()


def test_paper_comparison_names_cells_off_by_more_than_three_points():
    paper = PAPER_FIG9["OHSUMED"]
    rows = []
    for row, (mrr, ndcg, map_) in paper.items():
        shift = 0.05 if row == "MAP" else 0.0  # one row 5 points above the paper in every column
        for metric, value in (("mrr@10", mrr), ("ndcg@10", ndcg), ("map", map_)):
            rows.append({"dataset": "OHSUMED", "split": "test", "model": row, "params": '{"prep": "chakrabarti"}',
                         "metric": "binary:" + metric, "value": value + shift})
    text = paper_comparison(rows, "OHSUMED")
    named = [line for line in text.splitlines() if line.startswith("- ")]
    assert len(named) == 3 and all(line.startswith("- MAP ") for line in named)
    assert paper_comparison(rows, "MQ2008") is None


def test_claims_name_what_the_store_lacks():
    """A store of means only (written before the per-query values): every claim is there, none judged on means."""
    rows = [{"dataset": "OHSUMED", "split": "test", "model": row, "params": '{"prep": "none", "grid": "full"}',
             "metric": "binary:" + metric, "value": 0.5, "fold": "Fold1"} for row in ROWS for metric in FIG9_METRICS]
    found = {c.claim: c for c in claims(rows)}
    assert all(c.verdict in VERDICTS for c in found.values())
    assert found["SVM-ndcg-nc is consistently better than DORM"].verdict == UNTESTABLE
    # data the folder lacks is a claim that cannot be tested, never a dropped row
    assert "the TD2003 columns of Figs. 8-9" in found and "not in the data folder" in found["the TD2003 columns of Figs. 8-9"].why


def test_gap_study_says_how_many_points_each_reading_closes():
    paper = PAPER_FIG9["OHSUMED"]
    ours, distributed = list(GAP_VARIANTS)[:2]
    rows = []
    for variant, shift in ((ours, -0.09), (distributed, -0.03)):
        for row in GAP_ROWS:
            for i, metric in enumerate(("mrr@10", "ndcg@10", "map")):
                for prefix, extra in (("", 0.0), (GAP_TREC, 0.01), (GAP_BEST_C, 0.02)):
                    rows.append({"dataset": "OHSUMED", "split": "gap", "model": row, "fold": "Fold1",
                                 "params": json.dumps({"variant": variant}), "metric": prefix + metric,
                                 "value": paper[row][i] + shift + extra})
            rows.append({"dataset": "OHSUMED", "split": "gap", "model": row, "fold": "Fold1",
                         "params": json.dumps({"variant": variant}), "metric": "test_queries", "value": 20.0})
    text = gap_study(rows, "OHSUMED")
    assert f"| {distributed} | 20.0 | -3.0 | -3.0 | -3.0 | -3.0 | +6.0 |" in text
    assert "measured with trec_eval's conventions | 20.0 | -8.0 | -8.0 | -8.0 | -8.0 | +1.0 |" in text
    assert "C chosen on the test file (upper bound) | 20.0 | -7.0 | -7.0 | -7.0 | -7.0 | +2.0 |" in text
    assert f'closes the most is "{distributed}" (+6.0 points)' in text
    assert "Hypothesis:" in text
    assert gap_study(rows, "MQ2008") is None


def test_both_preparations_table_gives_every_criterion_beside_the_paper():
    paper = PAPER_FIG9["OHSUMED"]
    ours, kept = GAP_EVERY_ROW
    rows = [{"dataset": "OHSUMED", "split": "gap", "model": row, "fold": "Fold1", "params": json.dumps({"variant": v}),
             "metric": metric, "value": paper[row][i] + shift}
            for v, shift in ((ours, -0.09), (kept, -0.01)) for row in PAPER_ROWS
            for i, metric in enumerate(FIG9_METRICS)]
    text = both_preparations(rows, "OHSUMED")
    for row in PAPER_ROWS:
        assert f"| {row} | {ours} | {paper[row][0] - 0.09:.3f} / {paper[row][0]:.3f} (-9.0) |" in text
        assert f"| {row} | {kept} |" in text
    assert f"(SVM-mrr: MRR): {ours} -9.0 points (24 cells); {kept} -1.0 points (24 cells)" in text
    assert "closes +8.0 of our reading's 9.0 points" in text
    assert both_preparations(rows, "MQ2008") is None


def test_the_plan_labels_every_test_run_with_its_grid(tmp_path):
    """Each data set's test runs say which grids they ran (the sweep's C lists once leaked into the label)."""
    from structrank_lab.experiments.chakrabarti2008.plan import plan

    roots = {}
    for name in ("OHSUMED", "MQ2008"):
        for k in range(1, 3):
            folder = tmp_path / name / f"Fold{k}"
            folder.mkdir(parents=True)
            for split in ("train", "vali", "test"):
                (folder / f"{split}.txt").write_text("")
        roots[name] = tmp_path / name
    specs = plan(roots)
    assert {s.params["grid"] for s in specs if s.split == "test"} == {"full"}
    assert {s.fold for s in specs if s.split == "train-timing"} == {"Fold1", "Fold2"}  # every fold timed
