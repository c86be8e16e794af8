"""A reproduction stopped with SIGTERM ends its joblib workers and keeps its finished runs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from structrank_lab.experiments import ResultStore
from structrank_lab.experiments.termination import sigterm_as_exit

SRC = Path(__file__).resolve().parents[2] / "src"

SCRIPT = textwrap.dedent("""
    import os, sys, time
    from structrank_lab.experiments import ResultStore, RunSpec, run_all

    store_path, pids = sys.argv[1], sys.argv[2]
    specs = [RunSpec("term2026", "toy", seed=s, model="m") for s in range(5)]

    def run_fn(spec):
        if spec.seed > 0:  # seed 0 finishes at once; the others hold their worker until killed
            with open(os.path.join(pids, str(os.getpid())), "w"):
                pass
            time.sleep(120)
        return [("map", "trec", 0.5)]

    run_all(specs, run_fn, ResultStore(store_path), n_jobs=2, progress=False)
""")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (ended, not yet reaped by its parent) counts as gone
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] == "Z")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc to tell a worker ended: Linux only")
def test_sigterm_ends_a_parallel_reproduction_and_its_workers_and_keeps_finished_runs(tmp_path):
    script, pids = tmp_path / "experiment.py", tmp_path / "pids"
    script.write_text(SCRIPT)
    pids.mkdir()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen([sys.executable, str(script), str(tmp_path / "runs.sqlite"), str(pids)], env=env,
                            stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while len(os.listdir(pids)) < 2:  # both workers inside a long run
        assert proc.poll() is None, proc.stderr.read().decode()
        assert time.monotonic() < deadline, "the workers did not start their runs within 60 s"
        time.sleep(0.05)
    workers = [int(name) for name in os.listdir(pids)]
    time.sleep(0.5)  # the finished run is recorded by now
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    deadline = time.monotonic() + 20
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in workers if _alive(pid)], "a worker outlived the stopped reproduction"
    with ResultStore(tmp_path / "runs.sqlite") as store:
        assert [key.seed for key in store.completed_keys()] == [0]


def test_sigterm_raises_system_exit_inside_the_block_only():
    with pytest.raises(SystemExit) as stopped, sigterm_as_exit():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler runs at the next bytecode; never reached
    assert stopped.value.code == 128 + signal.SIGTERM
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_a_handler_the_caller_set_is_left_as_it_is():
    seen = []
    before = signal.signal(signal.SIGTERM, lambda signum, frame: seen.append(signum))
    try:
        with sigterm_as_exit():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.1)
        assert seen == [signal.SIGTERM]
    finally:
        signal.signal(signal.SIGTERM, before)
