"""The structured-learning benchmark runs and reports; its timings are never asserted."""

import numpy as np
import pytest
import scipy.sparse as sp

from structrank_lab.bench import run_benchmarks
from structrank_lab.bench.structured import (
    bench_oracles,
    bench_scaling,
    bench_training,
    format_structured,
    linear_fit,
    markdown_section,
    replicate,
)
from structrank.data import make_ranking_dataset


def test_linear_fit_of_a_line():
    slope, intercept, r2 = linear_fit([1, 2, 4, 8], [0.5, 1.0, 2.0, 4.0])
    assert slope == pytest.approx(0.5) and intercept == pytest.approx(0.0, abs=1e-12) and r2 == pytest.approx(1.0)


@pytest.mark.parametrize("sparse", [False, True])
def test_replicate_gives_new_queries(sparse):
    ds = make_ranking_dataset(n_queries=4, docs_per_query=(2, 5), sparse=sparse, random_state=0)
    big = replicate(ds, 3)
    assert big.n_queries == 3 * ds.n_queries and big.n_rows == 3 * ds.n_rows
    assert sp.issparse(big.X) == sparse
    np.testing.assert_array_equal(np.diff(big.offsets), np.tile(np.diff(ds.offsets), 3))
    X = big.X.toarray() if sparse else big.X
    X0 = ds.X.toarray() if sparse else ds.X
    np.testing.assert_array_equal(X[ds.n_rows:2 * ds.n_rows], X0)
    np.testing.assert_array_equal(big.y[-ds.n_rows:], ds.y)


def test_bench_oracles_rows():
    rows = bench_oracles(n_docs=40, rates=(0.5,), repeat=3)
    assert [r["oracle"] for r in rows] == ["map/po", "ndcg@10/po", "ndcg-nc/po", "ndcg@10/po 0-2", "ndcg@10/po 0-4",
                                          "mrr@10/mrr", "auc/po",
                                          "dorm dense", "dorm cut 30"]
    for r in rows:
        assert 0 < r["best_ms"] <= r["median_ms"] and r["repeats"] >= 3


def test_training_is_skipped_without_data(monkeypatch, tmp_path):
    monkeypatch.setenv("STRUCTRANK_DATA", str(tmp_path / "absent"))
    assert bench_training(repeat=1) is None


def test_scaling_on_replicas_keeps_the_iterations():
    base = make_ranking_dataset(n_queries=30, random_state=0)
    out = bench_scaling(factors=(1, 2), repeat=1, base=base)
    for m in out["methods"]:
        a, b = m["points"]
        assert (a["queries"], b["queries"]) == (30, 60)
        assert a["n_iter"] == b["n_iter"]  # an exact copy adds nothing new to the cutting plane
        assert np.isfinite(m["slope_s_per_1000q"]) and np.isfinite(m["ratio"])


def test_report_says_training_was_skipped():
    base = make_ranking_dataset(n_queries=10, random_state=0)
    figures = dict(threads={"numba": 1}, train_repeat=1, oracles=bench_oracles(n_docs=20, rates=(0.5,), repeat=2),
                   training=None, scaling=bench_scaling(factors=(1, 2), repeat=1, base=base))
    text = "\n".join(format_structured(figures))
    assert "training: no LETOR data found" in text and "skipped" in text
    assert "map/po" in text and "R^2" in text and "time(2x)/time(1x)" in text
    assert markdown_section(figures).startswith("## Structured learning")


def test_run_benchmarks_rejects_an_unknown_section():
    with pytest.raises(ValueError, match="only must be one of"):
        run_benchmarks(only="nope")


def test_qp_lines_give_verdicts_from_the_figures():
    from structrank_lab.bench.structured import format_qp

    figures = {"rows": [dict(data="MQ2008", loss="map", C=1000.0, qp_ms=172.0, oracle_ms=228.0, n_iter=352, seconds=0.4),
                        dict(data="OHSUMED", loss="ndcg", C=1.0, qp_ms=3.0, oracle_ms=2.0, n_iter=5, seconds=0.1)],
               "versus": {"svm-map C=100": [0.10, 0.11], "svm-ndcg C=100": [0.30, 0.31], "ranksvm C=1": [0.2, 0.2]}}
    text = "\n".join(format_qp(figures))
    assert "0.75" in text and "met" in text and "1.50" in text and "MISSED" in text
    assert "0.53x  met" in text and "1.52x  MISSED" in text
    assert format_qp(None) == ["qp: no LETOR data found; skipped"]
