"""The scale benchmark's pieces on tiny sizes (the real figures come from `structrank bench --only scale`)."""

import numpy as np
import pytest

from structrank_lab.bench.scale import bench_scale, format_scale, slopes, write_synthetic_letor
from structrank.data import read_letor


def test_synthetic_letor_is_whole_queries_with_graded_labels(tmp_path):
    path = write_synthetic_letor(tmp_path / "s.txt", 1000, n_features=5, docs_per_query=50, chunk_rows=300)
    data = read_letor(path)
    assert data.n_rows == 1000 and data.n_queries == 20 and data.n_features == 5
    assert set(np.unique(data.y)) <= {0, 1, 2} and len(np.unique(data.y)) == 3
    assert np.all(np.diff(data.offsets) == 50)


def test_slopes_of_a_linear_and_a_constant_series():
    rows = [dict(size=n, task="linear", seconds=n / 1e5, peak_mb=100.0) for n in (10**5, 10**6, 10**7)]
    rows += [dict(size=n, task="flat", seconds=2.0, peak_mb=100.0) for n in (10**5, 10**6, 10**7)]
    assert abs(slopes(rows, "seconds")["linear"] - 1.0) < 1e-9 and abs(slopes(rows, "seconds")["flat"]) < 1e-9


def test_a_tiny_run_reports_every_task(tmp_path):
    figures = bench_scale(tmp_path, sizes=(2000, 4000), tasks=("load", "svm-map"), speedup_size=None,
                          progress=lambda line: None)
    assert [(r["size"], r["task"]) for r in figures["rows"]] == [(2000, "load"), (2000, "svm-map"),
                                                                 (4000, "load"), (4000, "svm-map")]
    assert all(r["seconds"] > 0 and r["peak_mb"] > 10 for r in figures["rows"])
    assert figures["rows"][1]["extra"]["iterations"] == 10  # tol = 0: every size does the same passes
    text = "\n".join(format_scale(figures))
    assert "svm-map" in text and "peak" in text


def test_machine_ceiling_times_the_shard_steps_in_one_and_two_processes(tmp_path):
    from structrank_lab.bench.scale import machine_ceiling
    from structrank.data.cache import build_letor_cache

    path = write_synthetic_letor(tmp_path / "s.txt", 3000, n_features=5, docs_per_query=50)
    build_letor_cache(path)
    one, two = machine_ceiling(path, 1, passes=2), machine_ceiling(path, 2, passes=2)
    assert one > 0 and two > 0
    figures = dict(rows=[dict(size=3000, task="svm-map", seconds=1.0, peak_mb=50.0, extra={})], speedup_size=3000,
                   speedup=[dict(task="ceiling", label="1 process", seconds=one, runs=[one]),
                            dict(task="ceiling", label="2 independent processes", seconds=two, runs=[two])])
    text = "\n".join(format_scale(figures))
    assert f"speed-up {one / two:.2f}" in text and "independent processes" in text


def test_every_speedup_configuration_and_the_ceiling_take_turns():
    """One round runs each task's pair of 1 and 2 workers (the base first), its LocalCluster run
    (the SVMs and LSP-AP), then the machine's ceiling; a pair's order alternates between rounds."""
    from structrank_lab.bench.scale import CLUSTER_TASKS, SPEEDUP_TASKS, _order, _speedup_configs

    configs = _speedup_configs("unused.txt")
    assert list(dict.fromkeys(task for task, _, _ in configs)) == [*SPEEDUP_TASKS, "ceiling"]
    for task in SPEEDUP_TASKS:
        labels = [label for t, group, _ in configs if t == task for label in group]
        assert labels[:2] == ["1 worker", "2 workers (threads)"]
        assert ("LocalCluster, 2 processes" in labels) == (task in CLUSTER_TASKS)
    assert [group for t, group, _ in configs if t == "ceiling"] == [("1 process", "2 independent processes")]
    assert [_order(r) for r in range(3)] == [(1, 2), (2, 1), (1, 2)]


def test_a_pair_times_one_and_two_workers_in_one_child(tmp_path):
    from structrank_lab.bench.scale import _paired_task
    from structrank.data.cache import build_letor_cache

    path = write_synthetic_letor(tmp_path / "s.txt", 3000, n_features=5, docs_per_query=50)
    build_letor_cache(path)
    one, two = _paired_task("lsp-ap", str(path), (2, 1), epochs=2)
    assert one > 0 and two > 0


def test_the_speedup_is_the_median_of_the_paired_ratios():
    from structrank_lab.bench.scale import paired_speedup

    base, two = [1.0, 2.0, 3.0], [0.4, 1.6, 1.0]  # ratios 2.5, 1.25, 3.0; medians 2.0 and 1.0
    assert paired_speedup(base, two) == 2.5
    figures = dict(rows=[dict(size=3000, task="svm-map", seconds=1.0, peak_mb=50.0, extra={})], speedup_size=3000,
                   speedup=[dict(task="lsp-ap", label="1 worker", seconds=2.0, runs=base),
                            dict(task="lsp-ap", label="2 workers (threads)", seconds=1.0, runs=two)])
    text = "\n".join(format_scale(figures))
    assert "speed-up 2.50   ratio of medians 2.00   best runs 2.50" in text


def test_the_cluster_run_trains_as_many_epochs_as_the_pairs(monkeypatch):
    """LSP-AP's cluster fit once ran the scale table's 2 epochs against the pairs' 10 (an 8x 'speed-up')."""
    from structrank_lab.bench import scale as bench_scale

    seen = {}

    def fake_run_in_child(*args, fn=None):
        seen["args"], seen["fn"] = args, fn
        return (1.0, 0.0, {})

    class FakeCluster:
        scheduler_address = "tcp://fake"

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(bench_scale, "run_in_child", fake_run_in_child)
    monkeypatch.setattr("distributed.LocalCluster", lambda *a, **k: FakeCluster())
    assert bench_scale._with_cluster("lsp-ap", "unused.txt", round_=1) == (1.0, 0.0, {})  # the fake child's answer
    assert seen["args"] == ("lsp-ap", "unused.txt", (2, 1), "tcp://fake", bench_scale.SPEEDUP_EPOCHS)
    assert seen["fn"] is bench_scale._paired_cluster_task


def test_the_cluster_pair_times_one_process_and_the_cluster_in_one_child(tmp_path):
    """A real LocalCluster of 2 single-threaded processes and a fit in this process, the same model."""
    pytest.importorskip("distributed", reason="the cluster pair needs dask.distributed (the distributed extra)")
    from distributed import LocalCluster

    from structrank_lab.bench.scale import _paired_cluster_task
    from structrank.data.cache import build_letor_cache

    path = write_synthetic_letor(tmp_path / "s.txt", 120_000, n_features=5, docs_per_query=50)  # 3 shards
    build_letor_cache(path)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as local:
        one, on_cluster, account = _paired_cluster_task("lsp-ap", str(path), (2, 1), local.scheduler_address,
                                                        epochs=2)
    assert one > 0 and on_cluster > 0
    # an epoch is one map, a call to each worker; one more map measures the kept weights' health (slack at w)
    assert account["iterations"] == 2 + 1 and account["calls"] == 2
    assert account["kb_out"] > 0 and account["kb_back"] > 0 and 0 < account["work_ms"] < 1e3 * on_cluster
    assert account["trip_ms"] >= 0 and account["skew_ms"] >= 0 and account["client_ms"] >= 0


def test_the_cluster_account_splits_each_iteration_into_work_round_trip_and_the_client():
    from structrank_lab.bench.scale import _account_lines, cluster_account
    from structrank.parallel.shards import Trip

    trips = [Trip(7, 1000, 500, 0.30, 0.25), Trip(7, 1000, 500, 0.32, 0.28),   # iteration 1: wall 0.32, work 0.28
             Trip(8, 3000, 700, 0.50, 0.45), Trip(8, 1000, 700, 0.46, 0.40)]   # iteration 2: wall 0.50, work 0.45
    account = cluster_account(trips, fit_seconds=1.0)
    assert account["iterations"] == 2 and account["calls"] == 2
    assert np.isclose(account["work_ms"], 365.0) and np.isclose(account["skew_ms"], 40.0)   # medians of 280, 450; 30, 50
    assert np.isclose(account["trip_ms"], 45.0) and np.isclose(account["client_ms"], 90.0)  # (40 + 50) / 2; (1 - 0.82) / 2
    assert np.isclose(account["kb_out"], 3.0) and np.isclose(account["kb_back"], 1.2)
    assert cluster_account([], 1.0) == {} and _account_lines([{}]) == []
    line = _account_lines([account])[0]
    assert "work 365 ms" in line and "round trip beyond it 45.0 ms" in line and "3 kB out" in line


def test_each_speedup_is_set_against_the_base_of_its_own_pair():
    figures = dict(rows=[dict(size=3000, task="svm-map", seconds=1.0, peak_mb=50.0, extra={})], speedup_size=3000,
                   speedup=[dict(task="lsp-ap", label="1 worker", seconds=2.0, runs=[2.0, 2.0], base="1 worker"),
                            dict(task="lsp-ap", label="2 workers (threads)", seconds=1.0, runs=[1.0, 1.0],
                                 base="1 worker"),
                            dict(task="lsp-ap", label="1 worker, beside the cluster", seconds=3.0, runs=[3.0, 3.0],
                                 base="1 worker, beside the cluster"),
                            dict(task="lsp-ap", label="LocalCluster, 2 processes", seconds=2.0, runs=[2.0, 2.0],
                                 base="1 worker, beside the cluster")])
    lines = format_scale(figures)
    assert any("LocalCluster" in line and "speed-up 1.50" in line for line in lines)  # 3 / 2, not 2 / 2
    assert any("threads" in line and "speed-up 2.00" in line for line in lines)
