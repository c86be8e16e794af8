"""``structrank bench``: speed benchmarks that print their figures, one module per section.

``SECTIONS`` is the registry: each section's name, its one-line help (``structrank bench --only``
takes both from here) and the function that runs it. ``run_benchmarks`` runs them in order, prints
their figures and writes the markdown page. Nothing heavy is imported here: a section's module is
imported when it runs.

- startup (structrank_lab.bench.startup): ``structrank --help``/``--version``, ``import
  structrank.metrics``, ``structrank evaluate`` and ``structrank train`` as whole processes, and
  ``read_letor`` at 10^6 and 10^7 documents, each beside what a user would otherwise run.
- evaluate (structrank_lab.bench.evaluate): the ten LETOR test folds (MQ2008 and OHSUMED, 5 each),
  scored by a seeded random model with many ties, evaluated for MAP, MRR, NDCG@1,3,5,10 and
  P@1,5,10 under the trec, letor4 and letor3 conventions, beside pytrec_eval (trec_eval's C code;
  the same measures) and ranx when installed (test dependencies), in interleaved rounds. Reading
  the files is not timed; the numba kernels are compiled (or loaded from the cache) before timing.
- trec-run (structrank_lab.bench.trec_run): a seeded synthetic TREC run of 1,000 queries of 1,000
  documents (10^6 run lines, 170,000 judgements) evaluated for map, ndcg@10, p@10 and recall@100,
  as a whole ``structrank evaluate --qrels --run`` process beside a pytrec_eval script, and as the
  library call ``evaluate_run`` on dicts beside ``RelevanceEvaluator(...).evaluate``, in interleaved
  rounds.
- memory (structrank_lab.bench.memory): the peak memory a fit adds on MQ2008 x100 beside LightGBM's
  lambdarank, and a fit's time on dense, full CSR and sparse CSR rows.
- structured (structrank_lab.bench.structured): oracle calls on a query of 1,000 and of 10,000
  documents, single-threaded ``StructSVMRanker`` training on LETOR Fold1, the QP against C, and
  training time against replicated queries; measured in a child process with the thread variables set to 1.
- latent (structrank_lab.bench.latent): the greedy MAP inference of the positional map on one query
  of 10 to 1,000,000 candidates, with the exact search where it fits.
- crf (structrank_lab.bench.crf): one SGD epoch of the permutation CRF on MQ2008 Fold1, per objective.
- trees (structrank_lab.bench.trees): boosted trees on the NDCG@10 hinge against LightGBM lambdarank
  on MQ2008 Fold1, one thread, interleaved rounds: the fit and the whole ``structrank train`` command.
- cross-encoder (structrank_lab.bench.cross_encoder): ``CrossEncoderRanker`` on sentence-transformers'
  ``CrossEncoderTrainer``, one thread, in interleaved rounds on WikiQA train's first 200 questions: its
  epoch (loss="map") against the training loop it replaced (a checkout of commit 7c82150 named by
  ``STRUCTRANK_BENCH_OLD_LOOP``; skipped without one), the epochs of loss="map" and loss="crf-kl" against
  ListNetLoss's in the same trainer, its ``predict`` against ``CrossEncoder.predict`` of the same model on
  WikiQA test, and the whole ``structrank train xenc-map`` command beside a sentence-transformers
  script (CrossEncoderTrainer, ListNetLoss); the test MAP of each.
- processes (structrank_lab.bench.processes): the whole ``structrank train xenc-map`` process on WikiQA train's
  first 100 questions, by one process with 2 torch threads and by ``torchrun --nproc_per_node 2`` of one thread
  each (DDP over gloo), in interleaved rounds; each side's optimiser steps and test MAP.
- tagger (structrank_lab.bench.tagger): the trigram HMM's fit, Viterbi and 10-best throughput and
  accuracy on UD English-EWT, and one fit of each n-best reranker on its jackknifed lists.
- kernels (structrank_lab.bench.kernels): SST and PTK evaluations per second on SemEval-2016 shallow
  trees, in one process and over 2 joblib workers.
- scale (structrank_lab.bench.scale): loading, evaluating and training (SVM-map, SVM-ndcg, LSP-AP,
  CRF-KL) on synthetic data of 10^4 to 10^7 documents, time and peak memory in fresh processes,
  their slopes against size, and the speed-up of 2 workers and of a dask LocalCluster.

The shared timing helpers are in structrank_lab.bench.timing.
"""

# deferred imports: a section's module loads only when the section runs (the CLI reads SECTIONS alone)
from __future__ import annotations

import importlib
import os
import platform
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from structrank.atomic import write_text_atomic

#: a section's figures are left out of ``run_benchmarks``' result (it was skipped for want of data)
SKIPPED = object()


@dataclass(frozen=True)
class Section:
    """One section of ``structrank bench``: ``run(options)`` prints its figures and returns
    (figures, markdown section or None); ``options`` holds run_benchmarks' arguments."""
    name: str
    help: str
    run: Callable


def _startup(o):
    from structrank_lab.bench import startup

    commands = startup.bench_commands()
    reading = startup.bench_reading(sizes=o["scale_sizes"] or startup.READ_SIZES)
    print("\n".join(startup.format_startup(commands, reading)) + "\n")
    return commands, startup.markdown_section(commands, reading)


def _evaluate(o):
    from structrank_lab.bench.evaluate import bench_evaluate, evaluate_lines

    figures = bench_evaluate(o["repeat"])
    lines = evaluate_lines(figures, o["repeat"])
    print("\n".join(lines))
    o["evaluated"] = bool(lines)
    return figures, ("```\n" + "\n".join(lines) + "\n```\n") if lines else None


def _trec_run(o):
    from structrank_lab.bench import trec_run

    figures = trec_run.bench_trec_run(o["repeat"])
    print("\n" + "\n".join(trec_run.format_trec_run(figures)))
    return figures, trec_run.markdown_section(figures)


def _memory(o):
    from structrank_lab.bench import memory

    figures = memory.bench_memory()
    print("\n" + "\n".join(memory.format_memory(figures)))
    return figures, memory.markdown_section(figures)


def _structured(o):
    from structrank_lab.bench.structured import format_structured, markdown_section, structured_figures

    figures = structured_figures(oracle_repeat=o["oracle_repeat"], train_repeat=o["train_repeat"])
    if o.get("evaluated"):
        print()
    print("\n".join(format_structured(figures)))
    return figures, markdown_section(figures)


def _latent(o):
    from structrank_lab.bench import latent

    rows = latent.bench_greedy()
    print("\n" + "\n".join(latent.format_latent(rows)))
    return rows, latent.markdown_section(rows)


def _crf(o):
    from structrank_lab.bench import crf

    figures = crf.bench_epochs()
    print("\n" + "\n".join(crf.format_crf(figures)))
    return figures, crf.markdown_section(figures)


def _trees(o):
    from structrank_lab.bench import trees

    figures = trees.bench_trees()
    print("\n" + "\n".join(trees.format_trees(figures)))
    return figures, trees.markdown_section(figures) if figures else None


def _text_section(name):
    """A text reranker's section (its module ``name``, with ``bench_NAME`` and ``format_NAME``), skipped without its
    packages or WikiQA."""
    def run(o):
        module = importlib.import_module(f"structrank_lab.bench.{name}")  # deferred: torch and transformers load
        figures = getattr(module, f"bench_{name}")()  # only when the section runs
        print("\n" + "\n".join(getattr(module, f"format_{name}")(figures)))
        if "skipped" in figures:
            return SKIPPED, None
        return figures, module.markdown_section(figures)

    return run


def _tagger(o):
    # deferred: a section's module and its data's readers load only when the section runs (the CLI reads SECTIONS alone)
    from structrank_lab.bench import tagger
    from structrank_lab.nlp.conllu import treebank_file

    try:
        treebank_file("en", "train")
    except FileNotFoundError as exc:
        print(f"\ntagger: skipped ({exc})")
        return SKIPPED, None
    tagging = tagger.bench_tagging("en")
    rerankers = tagger.bench_rerankers("en")
    print("\n" + "\n".join(tagger.format_tagging(tagging) + [""] + tagger.format_rerankers(rerankers)))
    return dict(tagging=tagging, rerankers=rerankers), tagger.markdown_section(tagging, rerankers)


def _kernels(o):
    # deferred: a section's module and its data's readers load only when the section runs (the CLI reads SECTIONS alone)
    from structrank_lab.bench import kernels
    from structrank_lab.nlp.conllu import treebank_file
    from structrank.qa.semeval import load_semeval

    try:
        treebank_file("en", "train")
        load_semeval("dev")
    except FileNotFoundError as exc:
        print(f"\nkernels: skipped ({exc})")
        return SKIPPED, None
    figures = kernels.bench_tree_kernels()
    print("\n" + "\n".join(kernels.format_kernels(figures)))
    return figures, kernels.markdown_section(figures)


def _scale(o):
    from structrank_lab.bench import scale

    sizes = o["scale_sizes"] or scale.SCALE_SIZES
    print(f"\nscale: synthetic data of {', '.join(f'{n:,}' for n in sizes)} documents")
    with tempfile.TemporaryDirectory(prefix="structrank-scale-") as folder:
        figures = scale.bench_scale(folder, sizes=sizes, speedup_size=max(sizes))
    print("\n".join(scale.format_scale(figures)))
    link = None
    if o["out"] is not None:
        picture = Path(o["out"]).parent / "figures" / "bench" / "scale-time.png"
        picture.parent.mkdir(parents=True, exist_ok=True)
        scale.figure(figures, picture)
        link = str(picture.relative_to(Path(o["out"]).parent))
    return figures, scale.markdown_section(figures, link)


#: the sections in the order ``run_benchmarks`` runs them
SECTIONS = (
    Section("startup", "start-up and reading as whole processes", _startup),
    Section("evaluate", "metric evaluation", _evaluate),
    Section("trec-run", "a TREC run of 10^6 lines read and evaluated beside pytrec_eval", _trec_run),
    Section("memory", "memory and sparse input", _memory),
    Section("structured", "the structural SVM oracles and training", _structured),
    Section("latent", "the positional MAP inference", _latent),
    Section("crf", "a permutation CRF training epoch", _crf),
    Section("trees", "boosted trees on a structured loss against lambdarank", _trees),
    Section("cross-encoder", "the cross-encoder's trainer path against the old loop, ListNet and "
            "sentence-transformers' predict", _text_section("cross_encoder")),
    Section("processes", "a text reranker's fine-tuning by several processes under torchrun against one",
            _text_section("processes")),
    Section("tagger", "the HMM tagger and the n-best rerankers", _tagger),
    Section("kernels", "the tree kernels", _kernels),
    Section("scale", "time and memory against data size", _scale),
)
BENCH_SECTIONS = tuple(s.name for s in SECTIONS)


def run_benchmarks(repeat=5, out=None, only=None, train_repeat=3, oracle_repeat=200, scale_sizes=None):
    """Run the benchmarks, print their figures, and write them to ``out`` (markdown) if given.

    ``only``: one of BENCH_SECTIONS runs just that section (default: all). ``repeat`` is
    the evaluation's; structured training takes the best of ``train_repeat`` fits and the
    oracles the median of up to ``oracle_repeat`` calls. Returns the evaluation's figures, with
    each other section's under its name (``"structured"``, ...).
    """
    if only is not None and only not in BENCH_SECTIONS:
        raise ValueError(f"only must be one of {', '.join(BENCH_SECTIONS)}, got {only!r}")
    options = dict(repeat=repeat, out=out, only=only, train_repeat=train_repeat, oracle_repeat=oracle_repeat,
                   scale_sizes=scale_sizes)
    figures, sections = {}, []
    for section in SECTIONS:
        if only not in (None, section.name):
            continue
        result, markdown = section.run(options)
        if section.name == "evaluate":
            figures.update(result)
        elif result is not SKIPPED:
            figures[section.name] = result
        if markdown is not None:
            sections.append(markdown)
    if out is not None:
        _write_page(out, repeat, only, scale_sizes, sections)
    return figures


def _write_page(out, repeat, only, scale_sizes, sections):
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
