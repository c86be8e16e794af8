"""Speed of structured learning: oracle calls, single-threaded SVM training, linear growth.

Three parts, each printed as a table (and, through ``structrank bench --out``, written to
docs/BENCHMARKS.md):

1. oracles: one loss-augmented inference call on one query of 1,000 and of 10,000 documents
   (k = 10), beside numpy's argsort of the same scores, with seeded random N(0, 1) scores and
   binary labels at two relevance rates; median and best of many calls, after compilation. DORM
   solves an assignment problem per query and is expected to be far slower than the phi_po /
   phi_mrr oracles (its sparse variant much less so).
2. training: ``StructSVMRanker.fit`` on the Fold1 training files of MQ2008 and OHSUMED, best of
   a few fits after a warm-up fit (compilation), single-threaded; with the learner's own split
   of the time into oracle seconds (loss-augmented inference plus the X^T (c* - c_hat) product),
   QP seconds, and the rest (scores X @ w, the working set, input checks). Then (``bench_qp``) the
   QP's and the oracle's seconds against C for SVM-map and SVM-ndcg, and both at C = 100 beside
   RankSVM on MQ2008, in interleaved rounds.
3. scaling: MQ2008 Fold1 train replicated 1, 2, 4, 8 times with new query ids per copy; an exact
   copy keeps every query's subgradient, so the cutting plane takes the same iterations and the
   time should grow linearly with the number of queries.

Without the data folder, part 2 is skipped and part 3 uses ``make_ranking_dataset`` data.

Timings are single-threaded: the thread variables below must be set before numpy and numba are
imported, so ``structured_figures`` runs the measurements in a child process with them unless
this process already has them (``benchmarks/bench_structured.py`` sets them itself).
"""

# deferred imports: a single-threaded child measures (structured_figures); the parent loads no learner
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

from structrank_lab.bench.timing import clocked, interleaved, timings
from structrank.paths import data_dir

THREAD_VARS = ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")

#: (row label, get_loss arguments, target in ms or None)
ORACLES = (
    ("map/po", dict(name="map", feature_map="po"), 1.0),
    ("ndcg@10/po", dict(name="ndcg", feature_map="po"), 1.0),
    ("ndcg-nc/po", dict(name="ndcg-nc", feature_map="po"), None),
    # graded gains: relevant documents get grades 1..levels-1 (LETOR 4.0: 0-2, MSLR: 0-4)
    ("ndcg@10/po 0-2", dict(name="ndcg", feature_map="po", gain="exp2", levels=3), None),
    ("ndcg@10/po 0-4", dict(name="ndcg", feature_map="po", gain="exp2", levels=5), None),
    ("mrr@10/mrr", dict(name="mrr", feature_map="mrr"), 1.0),
    ("auc/po", dict(name="auc", feature_map="po"), None),
    ("dorm dense", dict(name="ndcg", feature_map="dorm"), None),
    ("dorm cut 30", dict(name="ndcg", feature_map="dorm", dorm_cut=30), None),
)

#: every oracle but DORM's assignment within this factor of the argsort of its scores
ARGSORT_BAR = 5.0

PO_C = (0.1, 1.0, 10.0)
DORM_C = (0.001, 0.01, 0.1)
#: (data set, row label, StructSVMRanker arguments, C values, target in seconds or None); NDCG with the papers'
#: binary gain, as measured before gain="auto" became the default
TRAINING = (
    ("MQ2008", "SVM-map", dict(loss="map"), PO_C, 0.5),
    ("MQ2008", "DORM dense", dict(loss="ndcg", loss_params={"feature_map": "dorm", "gain": "binary"}), DORM_C, None),
    ("MQ2008", "DORM cut 30", dict(loss="ndcg", loss_params={"feature_map": "dorm", "dorm_cut": 30, "gain": "binary"}), DORM_C, None),
    ("MQ2008", "SVM-auc", dict(loss="auc"), PO_C, None),
    ("MQ2008", "SVM-ndcg-nc", dict(loss="ndcg-nc"), PO_C, None),
    ("MQ2008", "SVM-mrr", dict(loss="mrr"), (0.001,), None),
    ("OHSUMED", "SVM-ndcg", dict(loss="ndcg", loss_params={"gain": "binary"}), PO_C, 1.0),
    ("OHSUMED", "DORM dense", dict(loss="ndcg", loss_params={"feature_map": "dorm", "gain": "binary"}), DORM_C, None),
    ("OHSUMED", "DORM cut 30", dict(loss="ndcg", loss_params={"feature_map": "dorm", "dorm_cut": 30, "gain": "binary"}), DORM_C, None),
)

SCALING = (("SVM-map", dict(loss="map", C=1.0)), ("SVM-ndcg", dict(loss="ndcg", C=1.0, loss_params={"gain": "binary"})))


def single_threaded() -> bool:
    """Whether this process was started with every thread variable set to 1."""
    return all(os.environ.get(v) == "1" for v in THREAD_VARS)


def _progress(message):
    print(message, file=sys.stderr, flush=True)


# -- 1. oracles --------------------------------------------------------------------------------


#: DORM dense solves an n x n assignment (O(n^3)): not timed above this many documents
DORM_DENSE_MAX_DOCS = 2000
ORACLE_SIZES = (1000, 10000)


def bench_oracles(n_docs=ORACLE_SIZES, k=10, rates=(0.1, 0.5), repeat=200, seed=0, oracles=ORACLES):
    """Time one oracle call on one query of each size, beside numpy's argsort of the same scores
    (timed right after it, so both see the same machine); a list of rows (dicts) in milliseconds."""
    from structrank.losses import get_loss

    rng = np.random.default_rng(seed)
    rows = []
    sizes = (n_docs,) if np.isscalar(n_docs) else tuple(n_docs)
    for n in sizes:
        for rate in rates:
            scores = rng.normal(size=n)
            labels = (rng.random(n) < rate).astype(np.int64)
            labels[0], labels[1] = 1, 0  # at least one good and one bad document
            grade = rng.integers(1, 5, size=n)
            for label, kwargs, target in oracles:
                if label == "dorm dense" and n > DORM_DENSE_MAX_DOCS:
                    continue
                kwargs = dict(kwargs)
                levels = kwargs.pop("levels", 2)
                y = labels * (1 + (grade - 1) % (levels - 1))
                loss = get_loss(kwargs.pop("name"), k=k, **kwargs)
                start = time.perf_counter()
                loss.oracle(scores, y)  # compile, or load the numba cache
                compile_s = time.perf_counter() - start
                times = timings(lambda: loss.oracle(scores, y), repeat)
                sort_times = timings(lambda: np.argsort(scores), repeat)
                rows.append(dict(oracle=label, rate=rate, relevant=int(labels.sum()), n_docs=n, k=k,
                                 median_ms=float(np.median(times) * 1e3), best_ms=float(times.min() * 1e3),
                                 repeats=int(times.size), first_call_s=compile_s,
                                 target_ms=target if n == sizes[0] else None,  # the targets are for 1,000
                                 argsort_ms=float(np.median(sort_times) * 1e3)))
                _progress(f"  oracle {label:<15} n={n} {rate:.0%} relevant: median {rows[-1]['median_ms']:.3f} ms")
    return rows


# -- 2. training -------------------------------------------------------------------------------


def _fold1_train(name):
    from structrank.data import letor_folds, letor_root, read_letor

    root = letor_root(name)
    if root is None:
        return None
    folds = letor_folds(root)
    return read_letor(folds[0].train) if folds else None


def _fit_figures(make, data, repeat):
    """Best of ``repeat`` fits (after a warm-up fit): wall seconds and the learner's own split."""
    make().fit(data)  # warm-up: compilation and caches
    best = None
    for _ in range(repeat):
        model = make()
        start = time.perf_counter()
        model.fit(data)
        seconds = time.perf_counter() - start
        if best is None or seconds < best["seconds"]:
            best = dict(seconds=seconds, n_iter=int(model.n_iter_), converged=bool(model.converged_),
                        oracle_s=float(model.oracle_seconds_), qp_s=float(model.qp_seconds_),
                        n_constraints=int(model.n_constraints_), queries_used=int(model.n_queries_used_))
    best["other_s"] = best["seconds"] - best["oracle_s"] - best["qp_s"]
    return best


def bench_training(repeat=3, configs=TRAINING):
    """Training times on the Fold1 training files; ``None`` when the data folder is absent."""
    from structrank.learners.ssvm import StructSVMRanker

    cache, rows = {}, []
    for name, label, kwargs, Cs, target in configs:
        if name not in cache:
            cache[name] = _fold1_train(name)
        data = cache[name]
        if data is None:
            continue
        for C in Cs:
            fig = _fit_figures(lambda: StructSVMRanker(C=C, **kwargs), data, repeat)
            rows.append(dict(data=f"{name}/Fold1 train", method=label, C=C, queries=int(data.n_queries),
                             rows=int(data.n_rows), target_s=target, **fig))
            _progress(f"  train {name} {label} C={C:g}: {fig['seconds']:.3f} s, {fig['n_iter']} iterations")
    return rows or None


# -- 2b. the QP against C, and the SVMs against RankSVM -------------------------------------------

QP_C = (0.01, 0.1, 1.0, 10.0, 100.0, 1000.0)
QP_LOSSES = ("map", "ndcg")


def bench_qp(repeat=3, Cs=QP_C, datasets=("MQ2008", "OHSUMED")):
    """For SVM-map and SVM-ndcg at every C of the grid (to 1,000) on Fold1 train: the seconds of the
    working-set QP and of the oracle batch over the fit (best fit of ``repeat``); then, on MQ2008,
    both at C = 100 against RankSVM (liblinear, pairwise: what this machine has of SVM-rank) at C = 1
    on the same rows, in interleaved rounds. None without the data."""
    from structrank.learners import RankSVM
    from structrank.learners.ssvm import StructSVMRanker

    rows = []
    for name in datasets:
        data = _fold1_train(name)
        if data is None:
            continue
        for loss in QP_LOSSES:
            for C in Cs:
                binary = {"gain": "binary"} if loss == "ndcg" else None  # the papers' binary NDCG gain
                fig = _fit_figures(lambda: StructSVMRanker(loss=loss, C=C, loss_params=binary, target="ideal"), data,
                                   repeat)
                rows.append(dict(data=name, loss=loss, C=C, qp_ms=1e3 * fig["qp_s"], oracle_ms=1e3 * fig["oracle_s"],
                                 n_iter=fig["n_iter"], seconds=fig["seconds"]))
                _progress(f"  qp {name} svm-{loss} C={C:g}: qp {fig['qp_s']:.3f} s, oracle {fig['oracle_s']:.3f} s")
    data = _fold1_train("MQ2008")
    versus = None
    if data is not None:
        fits = {"svm-map C=100": lambda: StructSVMRanker(loss="map", C=100.0),
                "svm-ndcg C=100": lambda: StructSVMRanker(loss="ndcg", C=100.0, loss_params={"gain": "binary"},
                                                          target="ideal"),
                "ranksvm C=1": lambda: RankSVM(C=1.0)}
        for make in fits.values():
            make().fit(data)  # warm-up
        versus = interleaved({label: clocked(lambda make=make: make().fit(data)) for label, make in fits.items()},
                             max(repeat, 5))
    return {"rows": rows, "versus": versus} if rows else None


def format_qp(figures) -> list:
    if not figures:
        return ["qp: no LETOR data found; skipped"]
    lines = ["qp: the working-set QP against the oracle batch, seconds summed over a fit (best of 3), Fold1 train, "
             "binary gains; bar: QP at most the oracles at every C",
             f"  {'data':<8} {'loss':<5} {'C':>7} {'qp ms':>9} {'oracle ms':>10} {'qp/oracle':>9} {'iters':>6}"]
    for r in figures["rows"]:
        ratio = r["qp_ms"] / r["oracle_ms"] if r["oracle_ms"] else float("nan")
        lines.append(f"  {r['data']:<8} {r['loss']:<5} {r['C']:>7g} {r['qp_ms']:>9.1f} {r['oracle_ms']:>10.1f} "
                     f"{ratio:>9.2f} {r['n_iter']:>6}  {'met' if ratio <= 1 else 'MISSED'}")
    versus = figures.get("versus")
    if versus:
        base = np.median(versus["ranksvm C=1"])
        lines.append(f"  MQ2008 Fold1 train, fit seconds, median of {len(versus['ranksvm C=1'])} interleaved rounds (range), "
                     "ratio to RankSVM at C = 1 (liblinear; svm_rank_learn, a whole process, is in the start-up section); "
                     "bar: at most 1x")
        for label, values in versus.items():
            ratio = np.median(values) / base
            lines.append(f"    {label:<15} {np.median(values):7.3f} s ({min(values):.3f}-{max(values):.3f})  {ratio:5.2f}x"
                         + ("" if label.startswith("ranksvm") else f"  {'met' if ratio <= 1 else 'MISSED'}"))
    return lines


# -- 3. scaling --------------------------------------------------------------------------------


def replicate(data, copies):
    """``data`` stacked ``copies`` times, each copy with its own query ids."""
    import scipy.sparse as sp

    from structrank.data import RankingDataset

    if copies == 1:
        return data
    X = sp.vstack([data.X] * copies, format="csr") if sp.issparse(data.X) else np.vstack([data.X] * copies)
    sizes = np.tile(np.diff(data.offsets), copies)
    qid = np.repeat(np.arange(sizes.size), sizes)
    return RankingDataset(X, np.tile(data.y, copies), qid)


def linear_fit(x, t):
    """Least-squares line ``t = slope * x + intercept`` and its R^2."""
    x, t = np.asarray(x, dtype=float), np.asarray(t, dtype=float)
    slope, intercept = np.polyfit(x, t, 1)
    resid = t - (slope * x + intercept)
    total = np.sum((t - t.mean()) ** 2)
    r2 = 1.0 - np.sum(resid**2) / total if total > 0 else 1.0
    return float(slope), float(intercept), float(r2)


def bench_scaling(factors=(1, 2, 4, 8), repeat=3, methods=SCALING, base=None):
    """Training time against the number of queries, on replicated data."""
    from structrank.learners.ssvm import StructSVMRanker

    source = "MQ2008/Fold1 train"
    if base is None:
        base = _fold1_train("MQ2008")
    if base is None:
        from structrank.data import make_ranking_dataset

        base = make_ranking_dataset(n_queries=500, docs_per_query=(5, 40), random_state=0)
        source = "synthetic make_ranking_dataset(n_queries=500, random_state=0) (no LETOR data)"
    copies = {f: replicate(base, f) for f in factors}
    out = dict(source=source, factors=list(factors), methods=[])
    for label, kwargs in methods:
        points = []
        for f in factors:
            fig = _fit_figures(lambda: StructSVMRanker(**kwargs), copies[f], repeat)
            points.append(dict(copies=f, queries=int(copies[f].n_queries), rows=int(copies[f].n_rows), **fig))
            _progress(f"  scale {label} x{f}: {fig['seconds']:.3f} s, {fig['n_iter']} iterations")
        slope, intercept, r2 = linear_fit([p["queries"] / 1000 for p in points], [p["seconds"] for p in points])
        out["methods"].append(dict(method=label, C=kwargs["C"], points=points, slope_s_per_1000q=slope,
                                   intercept_s=intercept, r2=r2,
                                   ratio=points[-1]["seconds"] / points[0]["seconds"],
                                   ratio_copies=factors[-1] // factors[0]))
    return out



# -- all three ---------------------------------------------------------------------------------


def run_structured(oracle_repeat=200, train_repeat=3, factors=(1, 2, 4, 8)):
    """Measure the three parts in this process; a dict of figures (JSON-ready)."""
    # deferred: numba reads the thread variables when imported: it loads in the single-threaded child that measures
    import numba

    _progress("bench structured: oracles")
    figures = dict(threads=dict({v: os.environ.get(v) for v in THREAD_VARS}, numba=numba.get_num_threads()),
                   data_dir=None if data_dir() is None else str(data_dir()),
                   oracle_repeat=oracle_repeat, train_repeat=train_repeat)
    figures["oracles"] = bench_oracles(repeat=oracle_repeat)
    _progress("bench structured: training")
    figures["training"] = bench_training(repeat=train_repeat)
    _progress("bench structured: the QP against C")
    figures["qp"] = bench_qp(repeat=train_repeat)
    _progress("bench structured: scaling")
    figures["scaling"] = bench_scaling(factors=factors, repeat=train_repeat)
    return figures


def structured_figures(oracle_repeat=200, train_repeat=3, factors=(1, 2, 4, 8)):
    """``run_structured``, in a single-threaded child process unless this one already is."""
    if single_threaded():
        return run_structured(oracle_repeat, train_repeat, factors)
    env = dict(os.environ, **{v: "1" for v in THREAD_VARS})
    cmd = [sys.executable, "-m", "structrank_lab.bench.structured", "--json", "--oracle-repeat", str(oracle_repeat),
           "--train-repeat", str(train_repeat), "--factors", ",".join(str(f) for f in factors)]
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True, check=True)  # progress on stderr
    return json.loads(proc.stdout)


# -- report ------------------------------------------------------------------------------------


def _verdict(value, target):
    if target is None:
        return ""
    return f"< {target:g}  {'met' if value < target else 'MISSED'}"


def format_structured(figures) -> list:
    """The figures as plain-text lines (a readable table)."""
    threads = figures["threads"]
    lines = [f"structured: single-threaded ({', '.join(f'{v}={threads.get(v)}' for v in THREAD_VARS)}; "
             f"numba threads {threads.get('numba')})", ""]
    oracles = figures["oracles"]
    if oracles:
        o = oracles[0]
        lines += [f"oracle: one call on one query, k={o['k']}, random N(0,1) scores, binary labels; median and best "
                  "after compilation (ms), beside numpy's argsort of the same scores (median, timed right after; "
                  f"bar: within {ARGSORT_BAR:g}x)",
                  f"  {'oracle':<15} {'docs':>6} {'relevant':>9} {'median ms':>10} {'best ms':>9} {'calls':>6} "
                  f"{'argsort ms':>10} {'x argsort':>9}  target ms"]
        for r in oracles:
            ratio = r["median_ms"] / r["argsort_ms"] if r.get("argsort_ms") else float("nan")
            lines.append(f"  {r['oracle']:<15} {r['n_docs']:>6} {r['rate']:>8.0%} {r['median_ms']:>10.3f} "
                         f"{r['best_ms']:>9.3f} {r['repeats']:>6} {r.get('argsort_ms', float('nan')):>10.3f} "
                         f"{ratio:>9.2f}  {_verdict(r['median_ms'], r['target_ms'])}".rstrip())
        lines.append("  DORM solves an n x n assignment per query (scipy linear_sum_assignment, O(n^3) dense; "
                     "cut at rank 30: n x 30): expected far slower than the phi_po / phi_mrr oracles, and "
                     f"not timed dense above {DORM_DENSE_MAX_DOCS} documents.")
        lines.append("")
    training = figures["training"]
    if training is None:
        lines += ["training: no LETOR data found (set STRUCTRANK_DATA); skipped", ""]
    else:
        lines += [f"training: StructSVMRanker.fit, wall seconds, best of {figures['train_repeat']} after a warm-up fit; "
                  "oracle s = loss-augmented inference + X^T(c*-c_hat), other = X@w, working set, input checks",
                  f"  {'data':<19} {'method':<12} {'C':>6} {'seconds':>8} {'iters':>5} {'oracle s':>8} "
                  f"{'qp s':>7} {'other s':>7}  target s"]
        for r in training:
            conv = "" if r["converged"] else " (not converged)"
            lines.append(f"  {r['data']:<19} {r['method']:<12} {r['C']:>6g} {r['seconds']:>8.3f} {r['n_iter']:>5} "
                         f"{r['oracle_s']:>8.3f} {r['qp_s']:>7.3f} {r['other_s']:>7.3f}  "
                         f"{_verdict(r['seconds'], r['target_s'])}{conv}".rstrip())
        sizes = {r["data"]: (r["queries"], r["queries_used"], r["rows"]) for r in training}
        for name, (q, used, n) in sizes.items():
            lines.append(f"  {name}: {q} queries ({used} with good and bad documents), {n} documents")
        lines.append("")
    if "qp" in figures:
        lines += format_qp(figures["qp"]) + [""]
    scaling = figures["scaling"]
    lines += [f"scaling: {scaling['source']} replicated {', '.join(map(str, scaling['factors']))} times "
              f"(new qids per copy), best of {figures['train_repeat']}",
              f"  {'method':<9} {'copies':>6} {'queries':>7} {'documents':>9} {'seconds':>8} {'iters':>5} "
              f"{'oracle s':>8} {'qp s':>7}"]
    for m in scaling["methods"]:
        for p in m["points"]:
            lines.append(f"  {m['method']:<9} {p['copies']:>6} {p['queries']:>7} {p['rows']:>9} {p['seconds']:>8.3f} "
                         f"{p['n_iter']:>5} {p['oracle_s']:>8.3f} {p['qp_s']:>7.3f}")
    for m in scaling["methods"]:
        lines.append(f"  {m['method']} (C={m['C']:g}): {m['slope_s_per_1000q']:.4f} s per 1000 queries "
                     f"(intercept {m['intercept_s']:.4f} s), R^2 {m['r2']:.4f}, "
                     f"time({m['ratio_copies']}x)/time(1x) = {m['ratio']:.2f}")
    return lines


def markdown_section(figures) -> str:
    """The figures as a markdown section for docs/BENCHMARKS.md."""
    return ("## Structured learning: oracles, training, scaling\n\n"
            "One oracle call on a query of 1,000 documents; `StructSVMRanker` training on LETOR Fold1 "
            "(single-threaded, after a warm-up fit); training time against replicated queries.\n\n"
            "```\n" + "\n".join(format_structured(figures)) + "\n```\n")


def main(argv=None) -> str:
    """Measure, print the table, and return it as a markdown section."""
    parser = argparse.ArgumentParser(prog="bench_structured", description=__doc__.splitlines()[0])
    parser.add_argument("--oracle-repeat", type=int, default=200, help="oracle calls timed (fewer for slow ones)")
    parser.add_argument("--train-repeat", type=int, default=3, help="timed fits (the best is reported)")
    parser.add_argument("--factors", default="1,2,4,8", help="replication factors of the scaling part")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON instead (measured here)")
    args = parser.parse_args(argv)
    factors = tuple(int(f) for f in args.factors.split(","))
    if args.json:
        figures = run_structured(args.oracle_repeat, args.train_repeat, factors)
        print(json.dumps(figures))
        return ""
    figures = structured_figures(args.oracle_repeat, args.train_repeat, factors)
    print("\n".join(format_structured(figures)))
    return markdown_section(figures)


if __name__ == "__main__":
    main()
