"""What the lab's pages made through the CLI share: ``structrank`` run as a user runs it, ``--heldout NAME=TRAIN,TEST``
read, and the page written with the command that made it (short_name_defaults, heldout_qa)."""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
from pathlib import Path

from structrank.atomic import write_text_atomic


def structrank(*args: str) -> subprocess.CompletedProcess:
    """``structrank ARGS`` as a user runs it (its own process); a failure names the command and its last words."""
    done = subprocess.run([sys.executable, "-m", "structrank", *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"structrank {' '.join(args[:2])} ended with exit {done.returncode}: {done.stderr[-500:]}")
    return done


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
