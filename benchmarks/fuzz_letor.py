"""Coverage-guided fuzzing of the LETOR reader with atheris (libFuzzer for Python).

Every input is written to a temporary file and read with ``structrank.data.letor.read_letor``.
A structrank error (``StructRankError``) is the reader doing its job; any other exception is a
finding. Findings do not stop the run: each distinct one (exception type, message shape and the
innermost frame) is kept with the smallest input that raised it, written to the findings folder
and listed in the summary at the end.

    python benchmarks/fuzz_letor.py -max_total_time=600            # libFuzzer flags pass through
    python benchmarks/fuzz_letor.py CORPUS_DIR -max_total_time=60  # with a corpus folder of your own

Without a corpus folder a temporary one is seeded with a few valid and nearly valid LETOR files,
and without ``-dict=`` a dictionary of LETOR's tokens is given to the mutator.
The last line printed is the summary: ``executions=N seconds=S distinct_findings=K``.
Needs ``pip install atheris`` (wheels for CPython 3.8-3.11 on Linux x86-64).
"""

from __future__ import annotations

import ctypes
import importlib
import os
import re
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path

import atheris

# The heavy dependencies are imported uninstrumented; only structrank's reading code is instrumented.
for _module in ("numpy", "scipy.sparse", "sklearn.datasets"):
    importlib.import_module(_module)

with atheris.instrument_imports(include=["structrank"]):
    from structrank.data.letor import read_letor
    from structrank.errors import StructRankError

SEEDS = [
    b"2 qid:10 1:0.5 2:0.1 3:1 #docid = GX004-93 inc = 1 prob = 0.34\n0 qid:10 1:0.2 2:0.9 3:0 #docid = GX010\n",
    b"1 qid:1 1:1 2:0\n0 qid:1 1:0 2:1\n1 qid:2 1:0.3 2:-0.5\n",
    b"0 qid:3 1:1e-3 5:7\r\n2 qid:3 2:3.25\r\n",
    b"3 qid:7 1:NaN\n",
    b"1 1:0.5\n0 2:0.25\n",
    b"# a comment line\n\n1 qid:1 1:1 # trailing\n",
]


#: libFuzzer dictionary entries (its syntax escapes bytes only as \\xAB)
TOKENS = ["qid:", "#docid = ", "# ", " inc = ", " prob = ", ":", " ", "\\x09", "\\x0d\\x0a", "\\x0a", "nan", "inf", "-inf",
          "1e308", "1e-320", "-0", "0x1p3", "2147483647", "2147483648", "9223372036854775808", "\\x00",
          "\\xef\\xbb\\xbf", "\\x1f\\x8b\\x08"]


class Findings:
    """Distinct non-structrank exceptions and the smallest input for each."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.inputs: dict[tuple, bytes] = {}
        self.messages: dict[tuple, str] = {}
        self.executions = 0
        self.start = time.monotonic()
        self.reported = False

    def add(self, data: bytes, exc: BaseException) -> None:
        frames = traceback.extract_tb(exc.__traceback__)
        where = f"{Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else "?"
        shape = re.sub(r"\d+", "N", str(exc))[:80]  # the message without its numbers
        key = (type(exc).__name__, shape, where)
        new = key not in self.inputs
        if new:
            print(f"\n== new finding: {type(exc).__name__} at {where}: {exc!s:.200}", flush=True)
        if new or len(data) < len(self.inputs[key]):
            self.inputs[key] = data  # a known key keeps its place (dicts keep insertion order)
            self.messages[key] = f"{type(exc).__name__}: {exc!s:.300}"
            self.folder.mkdir(parents=True, exist_ok=True)
            (self.folder / f"finding-{list(self.inputs).index(key) + 1}").write_bytes(data)
            self._write_index()

    def _write_index(self) -> None:
        lines = []
        for i, (key, data) in enumerate(self.inputs.items(), start=1):
            lines.append(f"finding-{i}\t{key[0]} at {key[2]}\t{self.messages[key]}\tinput={data!r}")
        (self.folder / "INDEX.txt").write_text("\n".join(lines) + "\n")

    def summary(self) -> None:
        if self.reported:
            return
        self.reported = True
        seconds = time.monotonic() - self.start
        print("", flush=True)
        for i, (key, data) in enumerate(self.inputs.items(), start=1):
            print(f"finding {i}: {self.messages[key]} [{key[2]}]")
            print(f"  smallest input ({len(data)} bytes): {data!r}")
        if self.inputs:
            print(f"findings written to {self.folder}")
        print(f"fuzz_letor summary: executions={self.executions} seconds={seconds:.1f} "
              f"distinct_findings={len(self.inputs)}", flush=True)


def main(argv: list[str]) -> None:
    work = Path(tempfile.mkdtemp(prefix="fuzz_letor_"))
    target = work / "input.txt"
    findings = Findings(Path(os.environ.get("FUZZ_LETOR_FINDINGS", work / "findings")))

    def test_one_input(data: bytes) -> None:
        findings.executions += 1
        target.write_bytes(data)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                read_letor(target)
        except StructRankError:
            pass
        except Exception as exc:  # noqa: BLE001 - anything else is what we are looking for
            findings.add(data, exc)

    # libFuzzer ends the process with exit() when -max_total_time or -runs is reached, which
    # skips Python's atexit: print the summary from a C-level exit handler as well.
    exit_handler = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(lambda _: findings.summary())
    ctypes.CDLL(None).__cxa_atexit(exit_handler, None, None)  # glibc's atexit() is not an exported symbol
    main.exit_handler = exit_handler  # keep the callback alive

    args = list(argv)
    if not any(not a.startswith("-") for a in args[1:]):  # no corpus folder given: seed one
        corpus = work / "corpus"
        corpus.mkdir()
        for i, seed in enumerate(SEEDS):
            (corpus / f"seed-{i}").write_bytes(seed)
        args.append(str(corpus))
    if not any(a.startswith("-dict=") for a in args):  # LETOR's tokens, for the mutator to splice in
        words = work / "letor.dict"
        words.write_text("".join(f'"{w}"\n' for w in TOKENS))
        args.append(f"-dict={words}")
    atheris.Setup(args, test_one_input)
    try:
        atheris.Fuzz()
    finally:
        findings.summary()


if __name__ == "__main__":
    main(sys.argv)
