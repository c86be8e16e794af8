"""Start-up and reading, the whole process a user waits for (the ``startup`` section of ``structrank bench``).

Every figure is measured side by side with what a user would otherwise run, in interleaved
rounds (each round runs every contender once, in turn), and reported as the median over rounds
with the range:

- ``python -c pass`` against ``structrank --version`` and ``structrank --help`` (fresh processes);
- ``import structrank.metrics`` against ``import pytrec_eval`` (the time of the import statement,
  in a fresh interpreter);
- ``structrank evaluate`` of a scores file on MQ2008 Fold1's test file (the whole process, warm
  numba cache) against ``python -c pass``, which is the floor of any Python command, and against
  the floor of any command that runs a numba kernel: ``import numpy`` alone, and importing numba
  (without its BLAS probe, as ``structrank evaluate`` starts it) and calling one cached kernel (one
  line through the parser), which sets up numba's compiler, then ending as structrank's commands end
  (``gc.freeze``: no collections at shut-down);
- ``structrank train svm-auc`` on MQ2008 Fold1 (the whole process) against ``svm_rank_learn``
  (Joachims' SVM-rank, when it is on the PATH; the same C = 1 on the same file) and against
  ``svm_learn -z p`` (Joachims' SVMlight in ranking mode, the C ranker a package registry holds:
  ``tools/build_svmlight.sh`` builds it from PyPI's ``svmlight`` sdist), when on the PATH;
- reading synthetic LETOR text (``structrank_lab.bench.scale.write_synthetic_letor``: 20 features, 100
  documents a query) of 10^6 and 10^7 documents with ``read_letor`` against scikit-learn's
  ``load_svmlight_file`` without query ids (its compiled parser: the floor), in this process.

structrank's modules are compiled to bytecode first, as ``pip install`` does: a machine that sets
PYTHONDONTWRITEBYTECODE (this one does) would otherwise compile them from source in every process.
"""

from __future__ import annotations

import compileall
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

from structrank_lab.bench.scale import write_synthetic_letor
from structrank_lab.bench.timing import interleaved
from structrank.data import letor_folds, letor_root, read_letor
from structrank.files import read_bytes

READ_SIZES = (10**6, 10**7)
NUMBA_FLOOR = "import numba, one cached kernel"
# starts numba as structrank evaluate does (structrank.commands.options.kernels_alone) and ends as structrank's commands do
# (cli._spare_the_last_collections)
_ONE_KERNEL = ("import gc; from structrank.numba_cache import without_blas_probe; without_blas_probe(); "
               "from structrank.data import svmlight; svmlight.parse(b'1 qid:1 1:0.5\\n', 10); gc.freeze()")
_ONE_THREAD = {v: "1" for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")}


def _wall(cmd, env=None) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, env=env)
    return time.perf_counter() - start


def _import_seconds(module) -> float:
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    return float(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout)


def _structrank(*args):
    return [sys.executable, "-m", "structrank", *args]


def bench_commands(rounds=7, data_dir=None) -> dict:
    """Start-up, import, evaluate and train figures ({group: {contender: [seconds]}})."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # structrank/, above bench/
    compileall.compile_dir(package, quiet=1)  # the bytecode pip install writes
    env = {**os.environ, **_ONE_THREAD}
    figures = {
        "startup": interleaved({
            "python -c pass": lambda: _wall([sys.executable, "-c", "pass"], env),
            "structrank --version": lambda: _wall(_structrank("--version"), env),
            "structrank --help": lambda: _wall(_structrank("--help"), env),
        }, rounds),
        "import": interleaved({
            "import pytrec_eval": lambda: _import_seconds("pytrec_eval"),
            "import structrank.metrics": lambda: _import_seconds("structrank.metrics"),
        }, rounds) if _has("pytrec_eval") else {},
    }
    root = letor_root("MQ2008", data_dir)
    if root is None:
        return figures
    fold = letor_folds(root)[0]
    with tempfile.TemporaryDirectory() as folder:
        scores = os.path.join(folder, "scores.txt")
        model = os.path.join(folder, "m.npz")
        subprocess.run(_structrank("train", "svm-auc", "--train", str(fold.train), "--out", model), check=True,
                       capture_output=True, env=env)  # also fills numba's cache
        subprocess.run(_structrank("predict", "--model", model, "--data", str(fold.test), "--out", scores),
                       check=True, capture_output=True, env=env)
        figures["evaluate"] = interleaved({
            "python -c pass": lambda: _wall([sys.executable, "-c", "pass"], env),
            "import numpy": lambda: _wall([sys.executable, "-c", "import numpy"], env),
            NUMBA_FLOOR: lambda: _wall([sys.executable, "-c", _ONE_KERNEL], env),
            "structrank evaluate": lambda: _wall(_structrank("evaluate", "--data", str(fold.test), "--scores", scores,
                                                             "--metric", "map", "--metric", "ndcg@10"), env),
        }, rounds)
        train = {"structrank train svm-auc": lambda: _wall(_structrank("train", "svm-auc", "--train", str(fold.train),
                                                                        "--set", "C=1", "--out", model), env)}
        plain = os.path.join(folder, "train.txt")
        # svm_rank_learn's default (-l 1: swapped pairs summed over queries) as a user runs it, and the problem
        # closest to svm-auc at C = 1 (-l 2: the fraction of swapped pairs averaged over queries, C scaled by 4;
        # ../shared/peers/README.md)
        for tool, options in (("svm_rank_learn", ["-c", "1"]), ("svm_rank_learn", ["-l", "2", "-c", "4"]),
                              ("svm_learn", ["-z", "p", "-c", "1"])):
            learn = shutil.which(tool)
            if learn is None:
                continue
            if not os.path.exists(plain):
                with open(plain, "wb") as fh:  # the C tools read no gzip, and SVM-rank needs increasing qids
                    fh.write(increasing_qids(read_bytes(fold.train)))
            command = [learn, *options, plain, os.path.join(folder, f"{tool}.model")]
            train[" ".join([tool, *options])] = lambda command=command: _wall(command, env)
        figures["train"] = interleaved(train, max(3, rounds // 2))
    return figures


def increasing_qids(text: bytes) -> bytes:
    """LETOR text with its queries numbered 1, 2, ... in the order they first appear (SVM-rank refuses a qid lower
    than the one before it); a query's rows must be contiguous, as in LETOR's files.

    >>> increasing_qids(b"2 qid:30 1:1\\n0 qid:30 1:0\\n1 qid:7 1:2 #c\\n")
    b'2 qid:1 1:1\\n0 qid:1 1:0\\n1 qid:2 1:2 #c\\n'
    """
    numbers, last, out = {}, None, []
    for line in text.splitlines(keepends=True):
        label, sep, rest = line.partition(b" qid:")
        if not sep:
            out.append(line)
            continue
        qid, space, tail = rest.partition(b" ")
        if qid != last and qid in numbers:
            raise ValueError(f"the rows of query {qid.decode()!r} are not contiguous")
        last = qid
        number = numbers.setdefault(qid, len(numbers) + 1)
        out.append(b"%s qid:%d%s%s" % (label, number, space, tail))
    return b"".join(out)


def _has(module) -> bool:
    return importlib.util.find_spec(module) is not None


def bench_reading(sizes=READ_SIZES, rounds=3, folder=None) -> dict:
    """{n_docs: {contender: [seconds]}}: read_letor against load_svmlight_file (no qids) on the same file."""
    # deferred: scikit-learn only for the comparison reader
    from sklearn.datasets import load_svmlight_file

    out = {}
    with tempfile.TemporaryDirectory(prefix="structrank-read-", dir=folder) as tmp:
        read_letor(write_synthetic_letor(os.path.join(tmp, "warm.txt"), 1000))  # load the parser's numba cache
        for n in sizes:
            path = write_synthetic_letor(os.path.join(tmp, f"{n}.txt"), n)

            def ours():
                start = time.perf_counter()
                read_letor(path)
                return time.perf_counter() - start

            def sklearn():
                start = time.perf_counter()
                load_svmlight_file(str(path), zero_based=False)
                return time.perf_counter() - start

            out[n] = interleaved({"read_letor": ours, "load_svmlight_file (no qid)": sklearn}, rounds)
            os.remove(path)
    return out


def _median(values) -> float:
    return float(np.median(values))


def _line(name, values, base=None):
    text = f"  {name:<34} {_median(values):8.3f} s (range {min(values):.3f}-{max(values):.3f})"
    if base is not None:
        text += f"  {_median(values) / _median(base):5.2f}x"
    return text


def format_startup(figures, reading) -> list:
    lines = []
    titles = {"startup": "start-up, whole process (ratio to python -c pass)",
              "import": "import statement in a fresh interpreter (ratio to import pytrec_eval)",
              "evaluate": "structrank evaluate on MQ2008 Fold1 test (map, ndcg@10), whole process",
              "train": "training on MQ2008 Fold1 train, whole process (ratio to structrank)"}
    for group, title in titles.items():
        times = figures.get(group)
        if not times:
            continue
        lines.append(f"{title}, {len(next(iter(times.values())))} interleaved rounds:")
        base = next(iter(times.values()))
        for name, values in times.items():
            lines.append(_line(name, values, base))
        if group == "startup":
            floor = _median(times["python -c pass"])
            for name in ("structrank --version", "structrank --help"):
                lines.append(f"  {name}: {_median(times[name]) - floor:+.3f} s over python -c pass (bar: 0.3 s)")
        if group == "evaluate":
            lines.append(f"  structrank evaluate: {_median(times['structrank evaluate']):.3f} s wall (bar: 1 s), of "
                         f"which {_median(times[NUMBA_FLOOR]):.3f} s is the floor of any command that runs a numba "
                         "kernel")
        if group == "train":
            for tool in ("svm_rank_learn", "svm_learn"):
                if not any(name.startswith(tool + " ") for name in times):
                    lines.append(f"  {tool}: not on the PATH, no comparison")
    for n, times in reading.items():
        lines.append(f"reading {n:,} synthetic LETOR documents, {len(next(iter(times.values())))} interleaved rounds "
                     "(ratio to load_svmlight_file):")
        base = times["load_svmlight_file (no qid)"]
        for name, values in times.items():
            lines.append(_line(name, values, base))
    return lines


def markdown_section(figures, reading) -> str:
    return "## Start-up and reading\n\n```\n" + "\n".join(format_startup(figures, reading)) + "\n```\n"
