"""The positional-inference benchmark runs and reports what it claims (no timing asserted)."""

import numpy as np

from structrank_lab.bench.latent import bench_greedy, format_latent, loglog_slope


def test_bench_greedy_rows_and_table():
    rows = bench_greedy(sizes=(10, 1000, 2000), repeat=3, exact_max_cells=1e4)
    assert [r["n"] for r in rows] == [10, 1000, 2000]
    assert all(r["greedy_ms"] > 0 and r["argsort_ms"] > 0 for r in rows)
    assert "exact_ms" in rows[0] and "exact_ms" not in rows[2]  # skipped beyond the cell budget
    text = "\n".join(format_latent(rows))
    assert "log-log slope" in text and "(skipped)" in text


def test_loglog_slope_recovers_a_power_law():
    rows = [dict(n=n, greedy_ms=3e-6 * n**1.5) for n in (10, 100, 1000, 10000)]
    assert np.isclose(loglog_slope(rows), 1.5)
