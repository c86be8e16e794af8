"""The evaluate section of ``structrank bench``: the ten LETOR test folds (MQ2008 and OHSUMED, 5
each), scored by a seeded random model with many ties, evaluated for MAP, MRR, NDCG@1,3,5,10 and
P@1,5,10 under the trec, letor4 and letor3 conventions, beside pytrec_eval (trec_eval's C code; the
same measures) and ranx when installed (test dependencies), in interleaved rounds. Reading the files
is not timed; the numba kernels are compiled (or loaded from the cache) before timing. Each figure
is the median with its range, and the ratio to pytrec_eval is held against its bars
(``TREC_BAR`` for the trec convention, ``OTHERS_BAR`` for the others).
"""

from __future__ import annotations

import warnings

import numpy as np

from structrank_lab.bench.timing import clocked, interleaved
from structrank.data import letor_folds, letor_root, read_letor
from structrank.metrics import evaluate

BENCH_METRICS = ("map", "mrr", "ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "p@1", "p@5", "p@10")


def _test_folds():
    folds = []
    for name in ("MQ2008", "OHSUMED"):
        root = letor_root(name)
        if root is not None:
            folds += [(f"{name}/{f.name}", read_letor(f.test)) for f in letor_folds(root)]
    return folds


#: pytrec_eval's names of BENCH_METRICS
TREC_NAMES = ("map", "recip_rank", "ndcg_cut_1", "ndcg_cut_3", "ndcg_cut_5", "ndcg_cut_10", "P_1", "P_5", "P_10")
#: the bars on pytrec_eval's time: the trec convention takes at most TREC_BAR times it, the others
#: are at least OTHERS_BAR times faster
TREC_BAR, OTHERS_BAR = 1.0, 3.0


def _pytrec_runs(runs):
    """(evaluator, run dict) per file: pytrec_eval's input, built beforehand (not timed)."""
    # deferred: pytrec_eval is an optional comparison (a test dependency), loaded when this contender runs
    import pytrec_eval

    out = []
    for _, ds, scores in runs:
        ids = ds.docids if ds.docids is not None else np.arange(ds.n_rows).astype(str)
        qrels, run = {}, {}
        for q, d, label, s in zip(ds.qid.astype(str), ids, ds.y, scores):
            qrels.setdefault(q, {})[str(d)] = int(label)
            run.setdefault(q, {})[str(d)] = float(s)
        out.append((pytrec_eval.RelevanceEvaluator(qrels, set(TREC_NAMES)), run))
    return out


def bench_evaluate(repeat=5, conventions=("trec", "letor4", "letor3")):
    """Time evaluating all LETOR test files under each convention, beside pytrec_eval (and ranx when
    installed), in interleaved rounds; returns a dict of figures (seconds per round)."""
    folds = _test_folds()
    if not folds:
        print("bench evaluate: no LETOR data found (set STRUCTRANK_DATA); skipped")
        return {}
    rng = np.random.default_rng(0)
    runs = [(name, ds, rng.integers(0, 4, ds.n_rows).astype(np.float64)) for name, ds in folds]
    contenders = {}
    for convention in conventions:
        def ours(convention=convention):
            for _, ds, scores in runs:
                evaluate(ds.y, scores, ds.qid, BENCH_METRICS, convention, docids=ds.docids)

        ours()  # compile / load the numba cache
        contenders[f"structrank {convention}"] = ours
    try:
        pytrec = _pytrec_runs(runs)
    except ImportError:
        pytrec = None
    if pytrec is not None:
        def pytrec_eval_():
            for evaluator, run in pytrec:
                evaluator.evaluate(run)

        contenders["pytrec_eval"] = pytrec_eval_
    try:
        # deferred: ranx is an optional comparison (a test dependency): skipped when not installed
        import ranx
    except ImportError:
        ranx = None
    if ranx is not None:
        ranx_metrics = ["map", "mrr", "ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "precision@1", "precision@5", "precision@10"]
        pairs = []
        for _, ds, scores in runs:
            ids = [str(i) for i in range(ds.n_rows)]
            qrels, run = {}, {}
            for q, d, label, s in zip(ds.qid.astype(str), ids, ds.y, scores):
                qrels.setdefault(q, {})[d] = int(label)
                run.setdefault(q, {})[d] = float(s)
            pairs.append((ranx.Qrels(qrels), ranx.Run(run)))
        with warnings.catch_warnings():  # ranx's own numba kernels warn of an unsafe cast as they compile
            warnings.filterwarnings("ignore", message="unsafe cast from uint64 to int64")
            ranx.evaluate(*pairs[0], ranx_metrics)  # compile

        def ranx_():
            for qrels, run in pairs:
                ranx.evaluate(qrels, run, ranx_metrics, make_comparable=True)

        contenders["ranx"] = ranx_
    times = interleaved({name: clocked(fn) for name, fn in contenders.items()}, repeat)
    return {"files": len(runs), "documents": sum(ds.n_rows for _, ds, _ in runs),
            "queries": sum(ds.n_queries for _, ds, _ in runs), "times": times}


def evaluate_lines(figures, repeat):
    if not figures:
        return []
    times = figures["times"]
    lines = [f"evaluate: {figures['files']} LETOR test files, {figures['queries']} queries, "
             f"{figures['documents']} documents, {len(BENCH_METRICS)} metrics ({', '.join(BENCH_METRICS)}); "
             f"median of {repeat} interleaved rounds (range); pytrec_eval's evaluators and runs and ranx's Qrels/Run "
             "built beforehand"]
    reference = np.median(times["pytrec_eval"]) if "pytrec_eval" in times else None
    for name, values in times.items():
        line = f"  {name:<20} {np.median(values) * 1000:8.1f} ms ({min(values) * 1000:.1f}-{max(values) * 1000:.1f})"
        if reference is not None and name.startswith("structrank"):
            ratio = np.median(values) / reference
            bar, met = (TREC_BAR, ratio <= TREC_BAR) if name.endswith("trec") else (1 / OTHERS_BAR, ratio <= 1 / OTHERS_BAR)
            line += f"  {ratio:.2f}x pytrec_eval (bar: at most {bar:.2f}x, {'met' if met else 'MISSED'})"
        lines.append(line)
    if reference is None:
        lines.append("  pytrec_eval: not installed (pip install pytrec_eval-terrier) - no comparison")
    return lines
