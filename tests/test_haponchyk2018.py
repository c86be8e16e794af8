"""`structrank reproduce haponchyk2018`: the cross-validation split and the quick run on real data."""

import os
import subprocess
import sys

import numpy as np
import pytest

from structrank.data import make_ranking_dataset
from structrank.experiments.haponchyk2018 import ROWS, cv_parts, report_sections


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
