"""The experiment runner: results are recorded whole, finished work is never redone, and the
final table does not depend on interruptions, parallelism or the order runs finish in."""

from __future__ import annotations

import csv
import math
import os
import pickle
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from structrank_lab.experiments import (
    COLUMNS,
    Measurement,
    ResultStore,
    RunFailedError,
    RunKey,
    RunSpec,
    markdown_table,
    new_figure,
    run_all,
    save_figure,
    write_report,
    write_results_markdown,
)

SRC = Path(__file__).resolve().parents[2] / "src"


def make_specs(n_folds=3, seeds=(0, 1), models=("svm-map", "crf-kl")):
    return [RunSpec("test2024", "toy", fold=f, seed=s, model=m, params={"C": 1.0, "k": 10})
            for m in models for f in range(n_folds) for s in seeds]


def fake_run(spec):
    """A deterministic 'run': its values depend only on the spec (module level: picklable)."""
    base = 0.1 * spec.fold + 0.01 * spec.seed + (0.5 if spec.model == "svm-map" else 0.3)
    return [("map", "letor4", base), Measurement("ndcg@10", "letor4", base / 2)]


def failing_run(spec):
    if spec.fold == 1 and spec.seed == 1:
        raise ZeroDivisionError("boom")
    return fake_run(spec)


def without_seconds(rows):
    return [{k: v for k, v in r.items() if k != "seconds"} for r in rows]


class CallCounter:
    def __init__(self, fn=fake_run):
        self.fn, self.calls = fn, []

    def __call__(self, spec):
        self.calls.append(spec)
        return self.fn(spec)


@pytest.fixture
def store(tmp_path):
    with ResultStore(tmp_path / "runs.sqlite") as s:
        yield s


# -- the store --------------------------------------------------------------------------------


def test_run_key_identity_ignores_param_order_and_numpy_types():
    a = RunKey("e", "d", fold=np.int64(2), model="m", params={"C": 1.0, "loss": "map"})
    b = RunKey("e", "d", fold=2, model="m", params={"loss": "map", "C": np.float64(1.0)})
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a.params_json == '{"C":1.0,"loss":"map"}'
    assert RunKey("e", "d", fold="Fold1", model="m") != RunKey("e", "d", fold=1, model="m")
    with pytest.raises(ValueError):
        RunKey("e", "d")  # no model


def test_params_of_a_stored_row_is_a_fresh_dict_each_call(store):
    # the parsed text is cached (a report reads it row by row): a caller's change must not reach the next call
    from structrank_lab.experiments.run_key import params_of
    store.record(RunKey("e", "d", model="m", params={"C": 1.0, "loss": "map"}), [("map", "trec", 0.5)], seconds=1)
    row = next(iter(store.rows()))
    assert isinstance(row["params"], str)
    first = params_of(row)
    first["C"] = 99.0
    del first["loss"]
    assert params_of(row) == {"C": 1.0, "loss": "map"}
    assert params_of({"params": {"C": 2}}) == {"C": 2}


def test_store_round_trip_survives_reopening(tmp_path, store):
    key = RunKey("e", "MQ2008", fold="Fold1", seed=3, model="svm-map", params={"C": 0.5})
    other = RunKey("e", "MQ2008", fold=0, model="svm-map")
    assert not store.has(key)
    assert store.record(key, [("map", "letor4", 0.25), ("ndcg@10", "trec", float("nan"))], 1.5)
    assert store.record(other, [Measurement("map", "letor4", 0.75)], seconds=2.0)
    assert store.has(key) and store.completed_keys() == {key, other}

    with ResultStore(tmp_path / "runs.sqlite") as again:
        rows = again.rows()
        assert len(again) == 2 and again.completed_keys() == {key, other}
    assert [list(r) for r in rows] == [list(COLUMNS)] * 3
    by_metric = {(r["fold"], r["metric"]): r for r in rows}
    first = by_metric[("Fold1", "map")]
    assert first["value"] == 0.25 and first["seconds"] == 1.5 and first["seed"] == 3
    assert first["params"] == '{"C":0.5}' and first["convention"] == "letor4"
    assert math.isnan(by_metric[("Fold1", "ndcg@10")]["value"])  # NaN survives the round trip
    assert by_metric[(0, "map")]["value"] == 0.75  # an int fold stays an int
    assert store.rows(keys=[other]) == [by_metric[(0, "map")]]


def test_store_keeps_the_first_result_and_rejects_bad_rows_whole(store):
    key = RunKey("e", "d", model="m")
    with pytest.raises(ValueError):  # the same metric twice: nothing at all is recorded
        store.record(key, [("map", "trec", 0.1), ("map", "trec", 0.2)], seconds=1)
    with pytest.raises(ValueError):
        store.record(key, [], seconds=1)
    assert not store.has(key) and store.rows() == []
    assert store.record(key, [("map", "trec", 0.1)], seconds=1)
    assert not store.record(key, [("map", "trec", 0.9)], seconds=1)
    assert [r["value"] for r in store.rows()] == [0.1]


def test_store_pickles_without_its_connection(store):
    store.record(RunKey("e", "d", model="m"), [("map", "trec", 0.1)], seconds=1)
    clone = pickle.loads(pickle.dumps(store))
    assert clone.rows() == store.rows()
    clone.close()


def test_csv_has_the_contract_columns_and_the_stored_values(tmp_path, store):
    rows = run_all(make_specs(), fake_run, store, progress=False)
    path = store.to_csv(tmp_path / "out" / "results.csv")
    with open(path, newline="") as fh:
        reader = csv.DictReader(fh)
        assert tuple(reader.fieldnames) == COLUMNS
        read = list(reader)
    assert len(read) == len(rows) == 2 * len(make_specs())
    for got, want in zip(read, rows):
        assert float(got["value"]) == want["value"]  # repr: exact round trip
        assert float(got["seconds"]) == want["seconds"]
        assert int(got["fold"]) == want["fold"] and got["params"] == want["params"]
        assert (got["experiment"], got["model"], got["metric"]) == (
            want["experiment"], want["model"], want["metric"])
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]


# -- the runner -------------------------------------------------------------------------------


def test_run_all_records_every_run_with_its_time(store):
    specs = make_specs()
    rows = run_all(specs, fake_run, store, progress=False)
    assert store.completed_keys() == set(specs)
    assert len(rows) == 2 * len(specs)
    assert all(r["seconds"] >= 0 for r in rows)
    (_, _, map_value), ndcg = fake_run(specs[0])
    want = {("map", map_value), (ndcg.metric, ndcg.value)}
    assert {(r["metric"], r["value"]) for r in rows if RunKey.from_record(r) == specs[0]} == want
    want = {(s.model, s.fold, s.seed): fake_run(s)[0][2] for s in specs}
    assert {(r["model"], r["fold"], r["seed"]): r["value"]
            for r in rows if r["metric"] == "map"} == want


def test_a_run_in_a_log_says_a_line_per_run_with_the_time_left(store, capsys, monkeypatch):
    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    specs = make_specs()
    run_all(specs[:4], fake_run, store)  # resumed below: the count goes on from the recorded runs
    capsys.readouterr()
    run_all(specs, fake_run, store, desc="test2024")
    lines = capsys.readouterr().err.strip().splitlines()
    assert [line.split(" runs done")[0] for line in lines] == [f"test2024: {n}/{len(specs)}"
                                                              for n in range(5, len(specs) + 1)]
    assert all(spec.label() in line for spec, line in zip(specs[4:], lines))
    assert all("left" in line for line in lines[:-1]) and "left" not in lines[-1]
    monkeypatch.setenv("TQDM_DISABLE", "1")  # what --quiet sets
    with ResultStore(store.path.parent / "quiet.sqlite") as quiet:
        run_all(specs, fake_run, quiet)
    assert capsys.readouterr().err == ""


def test_resume_skips_finished_runs(store):
    specs = make_specs()
    first = CallCounter()
    run_all(specs[:5], first, store, progress=False)
    assert len(first.calls) == 5
    second = CallCounter()
    rows = run_all(specs + specs[:2], second, store, progress=False)  # duplicates run once
    assert second.calls == specs[5:]
    third = CallCounter()
    assert run_all(specs, third, store, progress=False) == rows and third.calls == []


def test_a_failing_run_records_nothing_and_keeps_earlier_runs(store):
    specs = make_specs(models=("svm-map",))  # fold-major: (0,0) (0,1) (1,0) (1,1) ...
    bad = RunSpec("test2024", "toy", fold=1, seed=1, model="svm-map", params={"C": 1.0, "k": 10})
    with pytest.raises(RunFailedError) as info:
        run_all(specs, failing_run, store, progress=False)
    assert isinstance(info.value.__cause__, ZeroDivisionError)
    assert info.value.spec == bad and "boom" in str(info.value)
    assert store.completed_keys() == set(specs[:3])
    # Fixed, the experiment resumes after the runs that finished.
    counter = CallCounter()
    run_all(specs, counter, store, progress=False)
    assert counter.calls == specs[3:]


def test_a_failing_parallel_run_is_not_recorded(store):
    specs = make_specs(models=("svm-map",))
    bad = RunSpec("test2024", "toy", fold=1, seed=1, model="svm-map", params={"C": 1.0, "k": 10})
    with pytest.raises(RunFailedError):
        run_all(specs, failing_run, store, n_jobs=2, progress=False)
    assert not store.has(bad)
    for key in store.completed_keys():  # whatever finished is recorded whole
        assert len(store.rows(keys=[key])) == 2


def test_parallel_gives_the_same_table_as_serial(tmp_path):
    specs = make_specs()
    with ResultStore(tmp_path / "serial.sqlite") as serial, \
            ResultStore(tmp_path / "parallel.sqlite") as parallel:
        one = run_all(specs, fake_run, serial, n_jobs=1, progress=False)
        two = run_all(specs, fake_run, parallel, n_jobs=2, progress=False)
    assert without_seconds(one) == without_seconds(two)


# -- reports ----------------------------------------------------------------------------------


def _parse_markdown(table):
    lines = [[c.strip() for c in line.strip("|").split("|")] for line in table.splitlines()]
    header, body = lines[0], lines[2:]
    return {(row[0], col): cell for row in body for col, cell in zip(header[1:], row[1:])}


def test_markdown_table_shows_the_stores_means_and_stds(store):
    rows = run_all(make_specs(), fake_run, store, progress=False)
    cells = _parse_markdown(markdown_table(rows, index="model", columns="metric", std=True))
    assert len(cells) == 4
    for (model, metric), text in cells.items():
        values = np.array([r["value"] for r in store.rows()
                           if r["model"] == model and r["metric"] == metric])
        assert len(values) == 6  # 3 folds x 2 seeds averaged
        assert text == f"{values.mean():.4f} ± {values.std(ddof=1):.4f}"


def test_markdown_table_marks_missing_cells_and_keeps_requested_order():
    rows = [{"model": "a", "metric": "map", "value": 1.0},
            {"model": "b", "metric": "mrr", "value": 0.5}]
    table = markdown_table(rows, fmt="{:.1f}", row_order=["b"], column_order=["mrr"])
    assert table.splitlines() == ["| model | mrr | map |", "|---|---|---|",
                                  "| b | 0.5 | — |", "| a | — | 1.0 |"]


def test_reports_and_figures_are_written(tmp_path, store):
    run_all(make_specs(), fake_run, store, progress=False)
    command = "structrank reproduce test2024 --quick"
    page = write_results_markdown(store, tmp_path / "docs" / "RESULTS.md", "Results", command)
    text = page.read_text()
    assert text.startswith("# Results") and command in text and "generated" in text.lower()
    assert "test2024 — toy (test)" in text and "| svm-map |" in text

    report = write_report(tmp_path / "report.md", [("Table 1", "body")], title="T")
    assert report.read_text() == "# T\n\n## Table 1\n\nbody\n"

    fig = new_figure(figsize=(2, 2))
    fig.add_subplot().plot([0, 1], [0, 1])
    png = save_figure(fig, tmp_path / "fig.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# -- kill and resume --------------------------------------------------------------------------

SCRIPT = textwrap.dedent("""
    import sys, time
    from structrank_lab.experiments import ResultStore, RunSpec, run_all

    store_path, log_path, pause = sys.argv[1], sys.argv[2], float(sys.argv[3])
    specs = [RunSpec("kill2024", "toy", fold=f, seed=s, model="m", params={"C": 1.0})
             for f in range(4) for s in range(2)]

    def run_fn(spec):
        with open(log_path, "a") as fh:   # logged when the run starts
            fh.write(spec.label() + "\\n")
        time.sleep(pause)
        value = 0.1 * spec.fold + 0.01 * spec.seed
        return [("map", "trec", value), ("mrr", "trec", value / 3)]

    run_all(specs, run_fn, ResultStore(store_path), progress=False)
""")


def _start(tmp_path, folder, pause):
    folder = tmp_path / folder
    folder.mkdir()
    script = tmp_path / "experiment.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]))
    args = [sys.executable, str(script), str(folder / "runs.sqlite"), str(folder / "log.txt"),
            str(pause)]
    return folder, lambda: subprocess.Popen(args, env=env)


def test_killed_experiment_resumes_without_redoing_finished_runs(tmp_path):
    folder, start = _start(tmp_path, "killed", pause=0.3)
    proc = start()
    deadline = time.monotonic() + 20
    while not (folder / "runs.sqlite").exists():
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.01)
    with ResultStore(folder / "runs.sqlite") as store:
        while len(store) < 2:
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        recorded = store.completed_keys()
        assert 2 <= len(recorded) < 8
        for key in recorded:  # a run is recorded whole or not at all
            assert {r["metric"] for r in store.rows(keys=[key])} == {"map", "mrr"}
    log = folder / "log.txt"
    started_before = log.read_text().splitlines()

    assert start().wait(timeout=30) == 0  # resume to completion
    started_after = log.read_text().splitlines()[len(started_before):]
    assert not {k.label() for k in recorded} & set(started_after)
    assert len(set(started_before) | set(started_after)) == 8

    clean, start_clean = _start(tmp_path, "clean", pause=0.0)
    assert start_clean().wait(timeout=30) == 0
    with ResultStore(folder / "runs.sqlite") as resumed, \
            ResultStore(clean / "runs.sqlite") as uninterrupted:
        assert len(resumed) == 8
        assert without_seconds(resumed.rows()) == without_seconds(uninterrupted.rows())


def test_the_wall_time_of_a_call_that_ran_every_run_is_kept_beside_the_runs_and_read_back(tmp_path):
    """reproduce --keep: the call that runs everything keeps its wall time in the kept folder; a call into a fresh
    folder that reads every run from it quotes that time, and so does a page made from the folder alone."""
    from structrank_lab.experiments.kept_runs import folder_store
    from structrank_lab.experiments.runner import run_experiment, wall_time

    kept, specs = tmp_path / "kept", make_specs(n_folds=2, seeds=(0,))
    run_experiment(tmp_path / "a", specs, fake_run, kept=kept)
    first = wall_time(tmp_path / "a")
    assert first["runs"] == len(specs) and first["seconds"] > 0
    assert wall_time(kept) == first
    counter = CallCounter()
    run_experiment(tmp_path / "b", specs, counter, kept=kept)
    assert counter.calls == [] and wall_time(tmp_path / "b") == first
    store = folder_store(kept, tmp_path / "page" / "results.sqlite")
    assert len(store) == len(specs) and wall_time(tmp_path / "page") == first
    store.close()
    run_experiment(tmp_path / "c", specs, fake_run)  # without a kept folder nothing is copied anywhere
    assert wall_time(kept) == first


def test_runs_open_from_a_store_file_an_out_folder_or_a_kept_folder_and_nothing_else(tmp_path):
    from structrank_lab.experiments.kept_runs import open_runs
    from structrank_lab.experiments.runner import run_experiment

    specs = make_specs(n_folds=1, seeds=(0,))
    run_experiment(tmp_path / "out", specs, fake_run, kept=tmp_path / "kept")
    places = [tmp_path / "out" / "results.sqlite", tmp_path / "out", tmp_path / "kept"]
    for number, place in enumerate(places):
        with open_runs(place, tmp_path / f"scratch-{number}") as store:
            assert without_seconds(store.rows()) == without_seconds(ResultStore(places[0]).rows()), place
    assert not (tmp_path / "scratch-0").exists() and (tmp_path / "scratch-2" / "results.sqlite").is_file()
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="empty: no result store"):
        open_runs(tmp_path / "empty", tmp_path / "scratch-3")


def test_kept_runs_read_back_in_one_transaction_keep_the_time_each_finished(tmp_path):
    from structrank_lab.experiments.kept_runs import import_runs, write_run
    from structrank_lab.experiments.run_key import RunKey

    kept = tmp_path / "kept"
    keys = [RunKey("e", "d", model=f"m{i}") for i in range(3)]
    for i, key in enumerate(keys):
        write_run(kept, key, [("map", "trec", 0.5 + i / 10)], seconds=1.0 + i,
                  finished_at=f"2026-01-0{i + 1}T00:00:00+00:00", identity="abc")
    store = ResultStore(tmp_path / "r.sqlite")
    assert store.record(keys[0], [("map", "trec", 0.5)], seconds=1.0, identity="abc")  # already held: not read again
    assert import_runs(store, kept) == 2 and store.completed_keys() == set(keys)
    assert [store.finished_at(key) for key in keys[1:]] == ["2026-01-02T00:00:00+00:00", "2026-01-03T00:00:00+00:00"]
    assert sorted(r["value"] for r in store.rows()) == [0.5, 0.6, 0.7]
    # one malformed run among several: nothing of the batch is recorded
    other = ResultStore(tmp_path / "s.sqlite")
    with pytest.raises(ValueError, match="measured nothing"):
        other.record_runs([{"key": keys[0], "rows": [("map", "trec", 0.5)], "seconds": 1.0},
                           {"key": keys[1], "rows": [], "seconds": 1.0}])
    assert other.completed_keys() == set()
    # a run recorded before with the same identity stays as it was; another identity replaces it
    assert other.record_runs([{"key": keys[0], "rows": [("map", "trec", 0.5)], "seconds": 1.0, "identity": "x"}]) == 1
    assert other.record_runs([{"key": keys[0], "rows": [("map", "trec", 0.9)], "seconds": 1.0, "identity": "x"},
                              {"key": keys[1], "rows": [("map", "trec", 0.1)], "seconds": 1.0, "identity": "x"}]) == 1
    assert other.record_runs([{"key": keys[0], "rows": [("map", "trec", 0.8)], "seconds": 1.0, "identity": "y"}]) == 1
    assert sorted(r["value"] for r in other.rows()) == [0.1, 0.8]
