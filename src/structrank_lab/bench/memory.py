"""Memory and sparse input (the ``memory`` section of ``structrank bench``).

MQ2008 Fold1 train stacked ``COPIES`` times (new query ids per copy; about a quarter of its
queries have no good or no bad document, so a learner that copies the informative rows copies
most of X). Each fit runs in a fresh process, after a warm-up fit on a tiny data set (numba,
LightGBM loaded), with the peak-memory mark reset (``/proc/self/clear_refs``) once the data are
in memory: the figure is the peak resident memory the fit adds to the process. Beside
``StructSVMRanker`` (SVM-map, SVM-ndcg; 10 cutting-plane iterations), LightGBM's lambdarank
(``LambdaMARTRanker``, 10 trees, one thread) on the same rows: the tool a user would otherwise
run. Then the time of the same SVM-map fit on the dense rows, on CSR as ``read_letor(...,
sparse=True)`` gives it (every column listed), and on CSR without the zero values (rows of
different lengths), in interleaved rounds.
"""

from __future__ import annotations

import gc
import time
from functools import partial
from pathlib import Path

import numpy as np

from structrank_lab.bench.scale import run_in_child
from structrank_lab.bench.timing import interleaved
from structrank.data import letor_root

COPIES = 100
MODELS = ("svm-map", "svm-ndcg", "lambdamart")
FORMS = ("dense", "csr (every column listed)", "csr (zeros dropped)")
TIME_FITS = 3  # fits timed in each child of the sparse-input figure (their median)
# the bars: at most these ratios to LightGBM's added memory and to the dense fit's time
MEMORY_BAR, CSR_BAR = 1.2, 1.15


def _make(name):
    # deferred: runs in the spawned child (run_in_child) that measures the fit; the parent loads no learner
    from structrank.learners import LambdaMARTRanker, StructSVMRanker

    if name == "lambdamart":
        return LambdaMARTRanker(n_estimators=10, n_jobs=1)
    return StructSVMRanker(loss=name.split("-")[1], C=1.0, max_iter=10, tol=0)


def _data(form, copies, data_dir):
    # deferred: runs in the spawned child (run_in_child) that measures the fit; the parent loads no learner
    import scipy.sparse as sp

    from structrank_lab.bench.structured import replicate
    from structrank.data import letor_folds, letor_root, read_letor

    fold = letor_folds(letor_root("MQ2008", data_dir))[0]
    data = replicate(read_letor(fold.train, sparse=form != "dense"), copies)
    if form == "csr (zeros dropped)":
        data = data.with_X(sp.csr_matrix(data.X.toarray()))
    return data


def _rss_mb(field):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024.0
    raise OSError(f"no {field} in /proc/self/status")


def _fit_child(name, form, copies, data_dir, fits=1):
    """(added peak MB, seconds, X MB) of a fit, in this (fresh) process: the peak of the first fit,
    the median time of ``fits`` fits (one fit's time in a fresh process swings by a third)."""
    # deferred: runs in the spawned child (run_in_child) that measures the fit; the parent loads no learner
    import scipy.sparse as sp

    from structrank.data import make_ranking_dataset

    data = _data(form, copies, data_dir)
    tiny = make_ranking_dataset(n_queries=30, random_state=0)
    _make(name).fit(sp.csr_matrix(tiny.X) if sp.issparse(data.X) else tiny.X, tiny.y, qid=tiny.qid)  # warm up
    gc.collect()
    Path("/proc/self/clear_refs").write_text("5")  # VmHWM := VmRSS
    base = _rss_mb("VmRSS")
    seconds = []
    for fit in range(fits):
        start = time.perf_counter()
        _make(name).fit(data.X, data.y, qid=data.qid)
        seconds.append(time.perf_counter() - start)
        if fit == 0:
            added = _rss_mb("VmHWM") - base  # the peak the first fit added
    X = data.X
    size = (X.data.nbytes + X.indices.nbytes + X.indptr.nbytes) if sp.issparse(X) else X.nbytes
    return added, float(np.median(seconds)), size / 2**20


def bench_memory(rounds=3, copies=COPIES, data_dir=None) -> dict:
    """{"memory": {model: [MB]}, "time": {form: [s]}, "x_mb": MB}, or {} without MQ2008 (or /proc)."""
    if letor_root("MQ2008", data_dir) is None or not Path("/proc/self/clear_refs").exists():
        return {}
    runs = interleaved({**{("memory", name): partial(run_in_child, name, "dense", copies, data_dir, fn=_fit_child)
                           for name in MODELS},
                        **{("time", form): partial(run_in_child, "svm-map", form, copies, data_dir, TIME_FITS,
                                                   fn=_fit_child)
                           for form in FORMS}}, rounds)
    memory = {name: [added for added, _, _ in runs["memory", name]] for name in MODELS}
    times = {form: [seconds for _, seconds, _ in runs["time", form]] for form in FORMS}
    x_mb = runs["memory", MODELS[-1]][-1][2] if rounds else None
    return {"memory": memory, "time": times, "x_mb": x_mb, "copies": copies, "rounds": rounds}


def format_memory(figures) -> list:
    if not figures:
        return ["memory: no MQ2008 data (or no /proc/self/clear_refs); skipped"]
    lines = [f"memory: MQ2008 Fold1 train x{figures['copies']} (dense X {figures['x_mb']:.0f} MB), peak memory a fit "
             f"adds, fresh process each, median of {figures['rounds']} interleaved rounds (range); ratio to LightGBM "
             f"lambdarank (bar: at most {MEMORY_BAR:g}x)"]
    reference = np.median(figures["memory"]["lambdamart"])
    for name, values in figures["memory"].items():
        ratio = np.median(values) / reference
        lines.append(f"  {name:<12} {np.median(values):8.1f} MB ({min(values):.1f}-{max(values):.1f})  {ratio:5.2f}x"
                     + ("" if name == "lambdamart" else f"  {'met' if ratio <= MEMORY_BAR else 'MISSED'}"))
    lines.append(f"sparse input: the same SVM-map fit (10 iterations), seconds (each round: a fresh process, the "
                 f"median of {TIME_FITS} fits); ratio to dense (bar: at most {CSR_BAR:g}x)")
    dense = np.median(figures["time"]["dense"])
    for form, values in figures["time"].items():
        ratio = np.median(values) / dense
        lines.append(f"  {form:<26} {np.median(values):7.3f} s ({min(values):.3f}-{max(values):.3f})  {ratio:5.2f}x"
                     + ("" if form == "dense" else f"  {'met' if ratio <= CSR_BAR else 'MISSED'}"))
    return lines


def markdown_section(figures) -> str:
    return "## Memory and sparse input\n\n```\n" + "\n".join(format_memory(figures)) + "\n```\n"
