"""What the lab's pages made through the CLI share: ``structrank`` run as a user runs it (each step timed and kept,
so a rerun resumes), ``--heldout NAME=TRAIN,TEST`` read, and the page written with the command that made it
(short_name_defaults, heldout_qa, wikiqa_cli)."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from structrank.atomic import write_text_atomic


def launcher(processes: int) -> list:
    """The words before ``structrank``'s module: torchrun's, with ``processes`` copies on this machine (1: none)."""
    if processes == 1:
        return []
    return ["-m", "torch.distributed.run", "--nproc_per_node", str(processes), "--standalone"]


def structrank(*args: str, processes: int = 1, env=None) -> subprocess.CompletedProcess:
    """``structrank ARGS`` as a user runs it (its own process; ``processes`` > 1: that many under torchrun; ``env``:
    its environment, None: this one's); a failure names the command and its last words."""
    command = [sys.executable, *launcher(processes), "-m", "structrank", *args]
    # files, not pipes: a helper process of torchrun's may hold a pipe open after it ends
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        code = subprocess.run(command, stdout=out, stderr=err, env=env).returncode
        out.seek(0)
        err.seek(0)
        done = subprocess.CompletedProcess(command, code, out.read(), err.read())
    if done.returncode != 0:
        raise RuntimeError(f"structrank {' '.join(args[:2])} ended with exit {done.returncode}: {done.stderr[-500:]}")
    return done


def timed_step(work: Path, name: str, output: Path, *args: str, processes: int = 1) -> dict:
    """Run ``structrank ARGS`` (``processes`` > 1: under torchrun) unless ``output`` and its timing file are in
    ``work``: {"seconds": the whole process a user waits for, "cores": the cores it could run on, "command"},
    recorded in ``work/NAME.seconds.json``."""
    timing = work / f"{name}.seconds.json"
    if output.exists() and timing.exists():
        return json.loads(timing.read_text())
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    start = time.perf_counter()
    structrank(*args, processes=processes)
    words = ["structrank"] if processes == 1 else ["torchrun", "--nproc_per_node", str(processes), "-m", "structrank"]
    done = {"seconds": time.perf_counter() - start, "cores": cores, "command": shlex.join([*words, *args])}
    write_text_atomic(timing, json.dumps(done))
    return done


def per_question(data: Path, scores: Path, metrics) -> dict:
    """{metric: {qid: value}} of ``structrank evaluate`` on ``data`` (trec_eval's rules, the questions with a
    correct and an incorrect candidate)."""
    done = structrank("evaluate", "--data", str(data), "--scores", str(scores), "--convention", "trec",
                      "--queries", "with-both", "--per-query", "--json", "--quiet",
                      *(a for m in metrics for a in ("--metric", m)))
    out = json.loads(done.stdout)
    return {m: {q: v[m] for q, v in out["per_query"].items()} for m in metrics}


def heldout_spec(spec: str, parser: argparse.ArgumentParser) -> tuple[str, Path, Path]:
    """(name, train, test) of a ``--heldout NAME=TRAIN,TEST``; anything else ends the command with one line."""
    name, _, files = spec.partition("=")
    train, _, test = files.partition(",")
    if not (name and train and test):
        parser.error(f"--heldout {spec!r}: give NAME=TRAIN,TEST")
    return name, Path(train), Path(test)


def write_page(out: str, module: str, argv, text_of) -> int:
    """Write ``text_of(command)`` to ``out`` atomically, ``command`` being ``python -m MODULE ARGV`` as run."""
    command = shlex.join(["python", "-m", module, *(argv if argv is not None else sys.argv[1:])])
    write_text_atomic(out, text_of(command))
    print(f"wrote {out}", file=sys.stderr)
    return 0
