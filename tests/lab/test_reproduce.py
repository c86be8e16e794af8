"""`structrank reproduce` killed in the middle resumes without redoing finished runs."""

import csv
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest


def _reproduce(out, data_root):
    env = {**os.environ, "STRUCTRANK_DATA": str(data_root)}
    return subprocess.Popen(
        [sys.executable, "-m", "structrank", "reproduce", "letor-baselines", "--quick", "--out", str(out)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )


def _finished_runs(store):
    """{run identity: (seconds, finished_at)} of the runs recorded in the store so far."""
    if not store.exists():
        return {}
    try:
        with sqlite3.connect(store, timeout=5) as db:
            rows = db.execute("select experiment, dataset, split, fold, seed, model, params, seconds, finished_at "
                              "from runs").fetchall()
    except sqlite3.OperationalError:  # the schema is not written yet
        return {}
    return {row[:7]: row[7:] for row in rows}


def _table(path):
    with open(path, newline="") as fh:
        return sorted(tuple(v for k, v in row.items() if k != "seconds") for row in csv.DictReader(fh))


@pytest.mark.data
def test_reproduce_killed_and_restarted_finishes_with_the_same_table(tmp_path, data_root):
    clean, killed = tmp_path / "clean", tmp_path / "killed"
    assert _reproduce(clean, data_root).wait(timeout=300) == 0

    process = _reproduce(killed, data_root)
    store = killed / "results.sqlite"
    deadline = time.time() + 240
    while len(_finished_runs(store)) < 1 and process.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    assert process.poll() is None, "the run finished before it could be killed; make it longer"
    process.send_signal(signal.SIGKILL)
    process.wait()
    before = _finished_runs(store)
    assert 0 < len(before) < 4, "the kill should land after some runs and before the last"
    assert not (killed / "results.csv").exists()

    restarted = _reproduce(killed, data_root)
    assert restarted.wait(timeout=300) == 0, restarted.stderr.read().decode()
    after = _finished_runs(store)
    assert len(after) == 4
    for key, row in before.items():  # finished runs were not redone: their rows are untouched
        assert after[key] == row
    assert _table(killed / "results.csv") == _table(clean / "results.csv")


@pytest.mark.data
def test_reproduce_killed_at_random_moments_several_times_ends_with_the_same_table(tmp_path, data_root):
    from kill_resume import kill_and_resume

    result = kill_and_resume(tmp_path, data_root, kills=3, seed=1)
    assert [a["problems"] for a in result["attempts"]] == [[], [], []]  # consistent after every kill
    assert result["untouched"] and result["same_table"] and result["same_report"]
    assert result["runs"] == 4 and all(a["runs"] == 4 for a in result["attempts"])
    assert any(not a["ended_by_itself"] for a in result["attempts"])  # at least one kill landed mid-run


@pytest.mark.data
def test_every_reproduction_keeps_its_runs_and_a_fresh_folder_reruns_none(tmp_path, data_root):
    """--keep works for any reproduction (here letor-baselines): each finished run is a file in the folder, and a
    reproduction into a fresh --out reads them back, runs nothing and writes the same table."""
    kept = tmp_path / "kept"
    env = {**os.environ, "STRUCTRANK_DATA": str(data_root)}
    first = subprocess.run([sys.executable, "-m", "structrank", "reproduce", "letor-baselines", "--quick", "--out",
                            str(tmp_path / "a"), "--keep", str(kept)], env=env, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    assert len(list(kept.glob("*.tsv"))) == 4
    again = subprocess.run([sys.executable, "-m", "structrank", "reproduce", "letor-baselines", "--quick", "--out",
                            str(tmp_path / "b"), "--keep", str(kept)], env=env, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert "4 runs read from" in again.stderr and "0 runs done" in again.stderr
    assert _table(tmp_path / "a" / "results.csv") == _table(tmp_path / "b" / "results.csv")
