"""Kill `structrank reproduce` with SIGKILL at random moments, resume it, compare the tables.

Used by tests/lab/test_reproduce.py (a few kills) and runnable for the record in docs/RELIABILITY.md:

    STRUCTRANK_DATA=../shared/data python tests/kill_resume.py --kills 10 --seed 0 --out /tmp/kills.md

One clean run of ``structrank reproduce letor-baselines --quick`` gives the reference table and
its duration T. Then, as many times as asked, the same reproduction is started in a fresh
folder and killed with SIGKILL after a delay drawn uniformly from [0, T] (seeded). After the
kill the folder must be consistent: the SQLite store passes ``PRAGMA integrity_check``, and
results.csv and report.md are either absent or complete (they are written atomically). Then it
is started again and must run to the end without redoing the recorded runs, with the results
table (without the run times) and the report's tables equal to the clean run's.
"""

from __future__ import annotations

import argparse
import csv
import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EXPERIMENT = "letor-baselines"


def start(out, data_root):
    env = {**os.environ, "STRUCTRANK_DATA": str(data_root)}
    return subprocess.Popen([sys.executable, "-m", "structrank", "reproduce", EXPERIMENT, "--quick", "--out", str(out)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def finished_runs(store) -> dict:
    """{run identity: (seconds, finished_at)} of the runs recorded so far."""
    if not Path(store).exists():
        return {}
    try:
        with sqlite3.connect(store, timeout=5) as db:
            rows = db.execute("select experiment, dataset, split, fold, seed, model, params, seconds, finished_at "
                              "from runs").fetchall()
    except sqlite3.OperationalError:  # the schema is not written yet
        return {}
    return {row[:7]: row[7:] for row in rows}


def table(path) -> list:
    """The rows of results.csv without the run times (they differ between runs)."""
    with open(path, newline="") as fh:
        return sorted(tuple(v for k, v in row.items() if k != "seconds") for row in csv.DictReader(fh)
                      if row.get("convention") != "time")


def report_tables(path) -> list:
    """The table lines of report.md whose cells are not times."""
    lines = Path(path).read_text().splitlines()
    return [line for line in lines if line.startswith("|") and not re.search(r"second|wall|time", line, re.I)]


def consistent(out) -> list:
    """Problems of the folder after a kill (empty: consistent)."""
    problems = []
    store = Path(out) / "results.sqlite"
    if store.exists():
        with sqlite3.connect(store, timeout=5) as db:
            status = db.execute("pragma integrity_check").fetchone()[0]
        if status != "ok":
            problems.append(f"results.sqlite: integrity_check says {status}")
    csv_path = Path(out) / "results.csv"
    if csv_path.exists():
        try:
            table(csv_path)
        except (csv.Error, UnicodeDecodeError) as exc:
            problems.append(f"results.csv unreadable: {exc}")
    report = Path(out) / "report.md"
    if report.exists() and not report.read_text().endswith("\n"):
        problems.append("report.md is cut short")
    return problems


def kill_and_resume(folder, data_root, kills=3, seed=0, timeout=600) -> dict:
    """Run the protocol of the module docstring in ``folder``; returns what happened."""
    folder = Path(folder)
    clean = folder / "clean"
    tic = time.perf_counter()
    process = start(clean, data_root)
    if process.wait(timeout=timeout) != 0:
        raise RuntimeError(process.stderr.read().decode())
    duration = time.perf_counter() - tic
    reference, reference_report = table(clean / "results.csv"), report_tables(clean / "report.md")
    rng = random.Random(seed)
    attempts = []
    for attempt in range(kills):  # each attempt: a fresh folder, one kill, one resume
        killed = folder / f"killed{attempt}"
        delay = rng.uniform(0.0, duration)
        process = start(killed, data_root)
        time.sleep(delay)
        ended_by_itself = process.poll() is not None
        if not ended_by_itself:
            process.send_signal(signal.SIGKILL)
        process.wait()
        before = finished_runs(killed / "results.sqlite")
        problems = consistent(killed)
        process = start(killed, data_root)
        if process.wait(timeout=timeout) != 0:
            raise RuntimeError(process.stderr.read().decode())
        after = finished_runs(killed / "results.sqlite")
        attempts.append(dict(delay=delay, runs_recorded=len(before), ended_by_itself=ended_by_itself,
                             problems=problems, runs=len(after),
                             untouched=all(after.get(key) == row for key, row in before.items()),
                             same_table=table(killed / "results.csv") == reference,
                             same_report=report_tables(killed / "report.md") == reference_report))
    return dict(duration=duration, runs=len(finished_runs(clean / "results.sqlite")), attempts=attempts,
                untouched=all(a["untouched"] for a in attempts), same_table=all(a["same_table"] for a in attempts),
                same_report=all(a["same_report"] for a in attempts))


def markdown(result, kills, seed) -> str:
    lines = [f"`structrank reproduce {EXPERIMENT} --quick` (clean run: {result['duration']:.1f} s, {result['runs']} runs). "
             f"{kills} times: started in a fresh folder, killed with SIGKILL after a delay drawn uniformly from "
             f"[0, {result['duration']:.1f}] s (seed {seed}), checked, then started again and run to the end:", "",
             "| attempt | killed after (s) | runs recorded at the kill | ended before the kill | problems after the kill "
             "| recorded runs kept | table equal to the clean run's | report tables equal |",
             "|---|---|---|---|---|---|---|---|"]
    yes = lambda flag: "yes" if flag else "NO"  # noqa: E731
    for i, a in enumerate(result["attempts"], 1):
        lines.append(f"| {i} | {a['delay']:.2f} | {a['runs_recorded']} | {'yes' if a['ended_by_itself'] else 'no'} | "
                     f"{'; '.join(a['problems']) or 'none'} | {yes(a['untouched'])} | {yes(a['same_table'])} | "
                     f"{yes(a['same_report'])} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True, help="markdown fragment to write")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from structrank.paths import data_dir

    with tempfile.TemporaryDirectory() as folder:
        result = kill_and_resume(folder, data_dir(required=True), args.kills, args.seed)
    Path(args.out).write_text(markdown(result, args.kills, args.seed))
    print(Path(args.out).read_text())
    ok = result["untouched"] and result["same_table"] and result["same_report"] and not any(
        a["problems"] for a in result["attempts"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
