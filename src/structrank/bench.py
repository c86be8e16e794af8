"""``structrank bench``: speed benchmarks that print their figures.

Evaluation: the ten LETOR test folds (MQ2008 and OHSUMED, 5 each), scored by a seeded random
model with many ties, evaluated for MAP, MRR, NDCG@1,3,5,10 and P@1,5,10 under the trec, letor4
and letor3 conventions, beside pytrec_eval (trec_eval's C code; the same measures) and ranx when
installed (test dependencies), in interleaved rounds. Reading the files is not timed; the numba
kernels are compiled (or loaded from the cache) before timing.

Structured learning (structrank.bench_structured): oracle calls on a query of 1,000 documents,
single-threaded ``StructSVMRanker`` training on LETOR Fold1, and training time against
replicated queries; measured in a child process with the thread variables set to 1.

Latent (structrank.bench_latent): the greedy MAP inference of the positional map on one query
of 10 to 1,000,000 candidates, with the exact search where it fits.

CRF (structrank.bench_crf): one SGD epoch of the permutation CRF on MQ2008 Fold1, per objective.

Start-up and reading (structrank.bench_startup): ``structrank --help``/``--version``, ``import
structrank.metrics``, ``structrank evaluate`` and ``structrank train`` as whole processes, and
``read_letor`` at 10^6 and 10^7 documents, each beside what a user would otherwise run.

Memory (structrank.bench_memory): the peak memory a fit adds on MQ2008 x100 beside LightGBM's
lambdarank, and a fit's time on dense, full CSR and sparse CSR rows.

Trees (structrank.bench_trees): boosted trees on the NDCG@10 hinge against LightGBM lambdarank on
MQ2008 Fold1, one thread, interleaved rounds: the fit and the whole ``structrank train`` command.

Tagger (structrank.bench_tagger): the trigram HMM's fit, Viterbi and 10-best throughput and
accuracy on UD English-EWT, and one fit of each n-best reranker on its jackknifed lists.

Kernels (structrank.bench_kernels): SST and PTK evaluations per second on SemEval-2016 shallow
trees, in one process and over 2 joblib workers.

Scale (structrank.bench_scale): loading, evaluating and training (SVM-map, SVM-ndcg, LSP-AP,
CRF-KL) on synthetic data of 10^4 to 10^7 documents, time and peak memory in fresh processes,
their slopes against size, and the speed-up of 2 workers and of a dask LocalCluster.
"""

from __future__ import annotations

import time

import numpy as np

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


def _best_of(fn, repeat):
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


#: pytrec_eval's names of BENCH_METRICS
TREC_NAMES = ("map", "recip_rank", "ndcg_cut_1", "ndcg_cut_3", "ndcg_cut_5", "ndcg_cut_10", "P_1", "P_5", "P_10")
#: issue 22: the trec convention at most 1x pytrec_eval's time, the others at least 3x faster
TREC_BAR, OTHERS_BAR = 1.0, 3.0


def _pytrec_runs(runs):
    """(evaluator, run dict) per file: pytrec_eval's input, built beforehand (not timed)."""
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
        ranx.evaluate(*pairs[0], ranx_metrics)  # compile

        def ranx_():
            for qrels, run in pairs:
                ranx.evaluate(qrels, run, ranx_metrics, make_comparable=True)

        contenders["ranx"] = ranx_
    times = {name: [] for name in contenders}
    for _ in range(repeat):
        for name, fn in contenders.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {"files": len(runs), "documents": sum(ds.n_rows for _, ds, _ in runs),
            "queries": sum(ds.n_queries for _, ds, _ in runs), "times": times}


BENCH_SECTIONS = ("startup", "evaluate", "memory", "structured", "latent", "crf", "trees", "tagger", "kernels", "scale")


def _evaluate_lines(figures, repeat):
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


def reproduction_parser(doc):
    """The command line of a benchmarks/ script that can also time its reproduction."""
    import argparse

    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reproduction", action="store_true", help="also time the whole reproduction")
    parser.add_argument("--jobs", type=int, default=2, help="workers of the reproduction")
    return parser


def timed_reproduction(experiment, n_jobs=2):
    """(rows, minutes): ``structrank reproduce EXPERIMENT`` into a fresh temporary folder, timed."""
    import tempfile

    from structrank.experiments.registry import EXPERIMENTS

    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        rows = EXPERIMENTS[experiment](out, n_jobs=n_jobs)
        return rows, (time.perf_counter() - start) / 60


def run_benchmarks(repeat=5, out=None, only=None, train_repeat=3, oracle_repeat=200, scale_sizes=None):
    """Run the benchmarks, print their figures, and write them to ``out`` (markdown) if given.

    ``only``: one of BENCH_SECTIONS runs just that section (default: all). ``repeat`` is
    the evaluation's; structured training takes the best of ``train_repeat`` fits and the
    oracles the median of up to ``oracle_repeat`` calls. Returns the evaluation's figures, with
    the structured ones under ``"structured"``.
    """
    if only is not None and only not in BENCH_SECTIONS:
        raise ValueError(f"only must be one of {', '.join(BENCH_SECTIONS)}, got {only!r}")
    figures, lines, sections = {}, [], []
    startup = None
    if only in (None, "startup"):
        from structrank import bench_startup

        startup = bench_startup.bench_commands()
        reading = bench_startup.bench_reading(sizes=scale_sizes or bench_startup.READ_SIZES)
        print("\n".join(bench_startup.format_startup(startup, reading)) + "\n")
        sections.append(bench_startup.markdown_section(startup, reading))
    if only in (None, "evaluate"):
        figures = bench_evaluate(repeat)
        lines = _evaluate_lines(figures, repeat)
        print("\n".join(lines))
        if lines:
            sections.append("```\n" + "\n".join(lines) + "\n```\n")
    if only in (None, "memory"):
        from structrank import bench_memory

        memory = bench_memory.bench_memory()
        print("\n" + "\n".join(bench_memory.format_memory(memory)))
        figures["memory"] = memory
        sections.append(bench_memory.markdown_section(memory))
    if only in (None, "structured"):
        from structrank.bench_structured import format_structured, markdown_section, structured_figures

        structured = structured_figures(oracle_repeat=oracle_repeat, train_repeat=train_repeat)
        if lines:
            print()
        print("\n".join(format_structured(structured)))
        figures["structured"] = structured
        sections.append(markdown_section(structured))
    if only in (None, "latent"):
        from structrank import bench_latent

        rows = bench_latent.bench_greedy()
        print("\n" + "\n".join(bench_latent.format_latent(rows)))
        figures["latent"] = rows
        sections.append(bench_latent.markdown_section(rows))
    if only in (None, "crf"):
        from structrank import bench_crf

        crf = bench_crf.bench_epochs()
        print("\n" + "\n".join(bench_crf.format_crf(crf)))
        figures["crf"] = crf
        sections.append(bench_crf.markdown_section(crf))
    if only in (None, "trees"):
        from structrank import bench_trees

        trees = bench_trees.bench_trees()
        print("\n" + "\n".join(bench_trees.format_trees(trees)))
        figures["trees"] = trees
        if trees:
            sections.append(bench_trees.markdown_section(trees))
    if only in (None, "tagger"):
        from structrank import bench_tagger
        from structrank.nlp.conllu import treebank_file

        try:
            treebank_file("en", "train")
        except FileNotFoundError as exc:
            print(f"\ntagger: skipped ({exc})")
        else:
            tagging = bench_tagger.bench_tagging("en")
            rerankers = bench_tagger.bench_rerankers("en")
            print("\n" + "\n".join(bench_tagger.format_tagging(tagging) + [""]
                                    + bench_tagger.format_rerankers(rerankers)))
            figures["tagger"] = dict(tagging=tagging, rerankers=rerankers)
            sections.append(bench_tagger.markdown_section(tagging, rerankers))
    if only in (None, "kernels"):
        from structrank import bench_kernels
        from structrank.nlp.conllu import treebank_file
        from structrank.qa.semeval import load_semeval

        try:
            treebank_file("en", "train")
            load_semeval("dev")
        except FileNotFoundError as exc:
            print(f"\nkernels: skipped ({exc})")
        else:
            kernels = bench_kernels.bench_tree_kernels()
            print("\n" + "\n".join(bench_kernels.format_kernels(kernels)))
            figures["kernels"] = kernels
            sections.append(bench_kernels.markdown_section(kernels))
    if only in (None, "scale"):
        import tempfile

        from structrank import bench_scale

        sizes = scale_sizes or bench_scale.SCALE_SIZES
        print(f"\nscale: synthetic data of {', '.join(f'{n:,}' for n in sizes)} documents")
        with tempfile.TemporaryDirectory(prefix="structrank-scale-") as folder:
            scale = bench_scale.bench_scale(folder, sizes=sizes, speedup_size=max(sizes))
        print("\n".join(bench_scale.format_scale(scale)))
        figures["scale"] = scale
        link = None
        if out is not None:
            from pathlib import Path

            picture = Path(out).parent / "figures" / "bench" / "scale-time.png"
            picture.parent.mkdir(parents=True, exist_ok=True)
            bench_scale.figure(scale, picture)
            link = str(picture.relative_to(Path(out).parent))
        sections.append(bench_scale.markdown_section(scale, link))
    if startup is not None:
        figures["startup"] = startup
    if out is not None:
        import os
        import platform

        from structrank.atomic import write_text_atomic

        flags = ("" if only is None else f" --only {only}") + (
            f" --scale-sizes {','.join(f'{n:g}' for n in scale_sizes)}" if scale_sizes and only in (None, "scale", "startup")
            else "")
        write_text_atomic(out, (
            "# Benchmarks\n\n"
            f"<!-- Generated by `structrank bench --out {out}`; do not edit by hand. -->\n\n"
            f"Generated by `structrank bench --repeat {repeat}{flags} --out {out}` on {platform.machine()} "
            f"with {os.cpu_count()} CPUs, Python {platform.python_version()}. "
            "Outside the startup section, reading the files is not timed; numba kernels are compiled before "
            "timing.\n\n"
            + "\n".join(sections)
        ))
    return figures
