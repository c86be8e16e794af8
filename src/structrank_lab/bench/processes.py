"""A text reranker's fine-tuning by several processes under torchrun against one process with as many torch threads.

    python -m structrank_lab.bench.processes [--quick] [--questions N] [--rounds N] [--processes P] [--out FILE]

Both sides are the whole ``structrank train xenc-map`` process a user waits for (start-up, reading the TSV, the
fine-tuning, writing the model folder) on WikiQA train's first questions, in interleaved rounds on the same cores:
one process with P torch threads, and ``torchrun --nproc_per_node P`` of one torch thread each (DDP over gloo on the
CPU, each process a share of every step's questions). Each side's last folder is read back for its optimiser steps
and scored on WikiQA test (trec MAP), so that the two are seen to do the same work.
"""

# deferred imports: torch and sentence-transformers (optional extras) load when the section runs, the atomic write
# when a page is written

from __future__ import annotations

import json
import os
import shlex
import sys
import tempfile
from pathlib import Path

import numpy as np

from structrank_lab.bench.cross_encoder import (BATCH_SIZE, EPOCHS, LEARNING_RATE, MAX_LENGTH, MINI_BATCH_SIZE,
                                                PREDICT_BATCH_SIZE, SEED, _cores, _encoder_name, _env, _load, _spread,
                                                _test_map, missing_peer, write_pairs_tsv)
from structrank_lab.bench.timing import clocked, code_section, interleaved, section_page, sized_parser
from structrank_lab.experiments.cli_pages import structrank
from structrank.learners.encoders import encoder_folder, quiet_transformers
from structrank.qa.readers import load_qa

#: WikiQA train's first questions, the rounds, the processes (and the one process's threads)
QUESTIONS, ROUNDS, PROCESSES = 100, 3, 2
#: ``--quick``: a handful of questions, one round (a test's run, seconds with a tiny encoder)
QUICK = {"questions": 4, "test_questions": 4, "rounds": 1}
ONE, SEVERAL = "one process", "torchrun"


def bench_processes(questions=QUESTIONS, rounds=ROUNDS, processes=PROCESSES, encoder=None, test_questions=None,
                    data_dir=None, folder=None) -> dict:
    """{"settings", "train", "test", "seconds": {side: [each round's wall seconds]}, "steps": {side: optimiser
    steps}, "test_map": {side: its last model's test MAP}}, or {"skipped": why} without the packages or WikiQA."""
    missing = missing_peer()
    if missing is not None:
        return {"skipped": missing}
    try:
        train_all, test_all = load_qa("wikiqa", "train", data_dir), load_qa("wikiqa", "test", data_dir)
    except FileNotFoundError as exc:
        return {"skipped": f"WikiQA not found ({exc}; set STRUCTRANK_DATA)"}
    if BATCH_SIZE % processes:
        raise ValueError(f"processes={processes}: a step's {BATCH_SIZE} questions must be shared evenly")
    train = train_all.take_queries(np.arange(min(questions, train_all.n_queries)))
    test = test_all if test_questions is None else test_all.take_queries(np.arange(min(test_questions,
                                                                                          test_all.n_queries)))
    settings = {"encoder": str(encoder_folder(encoder)), "processes": processes, "max_length": MAX_LENGTH,
                "epochs": EPOCHS, "batch_size": BATCH_SIZE, "mini_batch_size": MINI_BATCH_SIZE,
                "learning_rate": LEARNING_RATE, "seed": SEED, "cores": sorted(_cores()), "load": [_load()]}
    figures = {"settings": settings, "rounds": rounds,
               "train": {"questions": train.n_queries, "pairs": train.n_candidates, "of": train_all.n_queries},
               "test": {"questions": test.n_queries, "pairs": test.n_candidates}}
    with tempfile.TemporaryDirectory(prefix="structrank-processes-bench-", dir=folder) as tmp:
        tsv = write_pairs_tsv(train, os.path.join(tmp, "train.tsv"))
        outs = {ONE: os.path.join(tmp, "one"), SEVERAL: os.path.join(tmp, "several")}
        options = [a for k, v in (("encoder", settings["encoder"]), ("max_length", MAX_LENGTH), ("epochs", EPOCHS),
                                  ("batch_size", BATCH_SIZE), ("mini_batch_size", MINI_BATCH_SIZE),
                                  ("learning_rate", LEARNING_RATE), ("random_state", SEED))
                   for a in ("--set", f"{k}={v}")]
        arguments = {side: ["train", "xenc-map", "--train", tsv, "--quiet", "--out", out, *options]
                     for side, out in outs.items()}
        launched = {ONE: 1, SEVERAL: processes}
        threads = {ONE: processes, SEVERAL: 1}  # every core busy on both sides
        envs = {side: {**_env(), **{v: str(threads[side]) for v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}}
                for side in outs}
        figures["seconds"] = interleaved(
            {side: clocked(lambda s=side: structrank(*arguments[s], processes=launched[s], env=envs[s]))
             for side in outs}, rounds)
        figures["steps"] = {side: json.loads(Path(out, "structrank.json").read_text())["attributes"]["n_steps_"]
                            for side, out in outs.items()}
        figures["test_map"] = {side: _scored(out, test, processes) for side, out in outs.items()}
    settings["load"].append(_load())
    return figures


def _scored(folder, test, threads) -> float:
    """The test MAP of the model folder ``folder`` as sentence-transformers loads it."""
    import torch
    from sentence_transformers.cross_encoder import CrossEncoder

    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        with quiet_transformers():  # the weights' loading bar
            model = CrossEncoder(folder, device="cpu", local_files_only=True)
        scores = model.predict([[q, c] for q, c in zip(test.pair_questions(), test.candidates)],
                               batch_size=PREDICT_BATCH_SIZE, show_progress_bar=False, convert_to_numpy=True)
    finally:
        torch.set_num_threads(before)
    return _test_map(test, np.asarray(scores, dtype=np.float64))


def format_processes(figures) -> list:
    """The figures as the lines ``structrank bench`` prints."""
    if "skipped" in figures:
        return [f"processes: skipped ({figures['skipped']})"]
    s, train, test = figures["settings"], figures["train"], figures["test"]
    p, seconds = s["processes"], figures["seconds"]
    ratio = np.median(seconds[SEVERAL]) / np.median(seconds[ONE])
    load = ", ".join("n/a" if v is None else f"{v:.1f}" for v in s["load"])
    return [f"processes: WikiQA train's first {train['questions']} of {train['of']} questions ({train['pairs']:,} "
            f"pairs), test {test['questions']} questions ({test['pairs']:,} pairs); encoder "
            f"{_encoder_name(s['encoder'])}; max length {s['max_length']}, {s['epochs']} epoch, {s['batch_size']} "
            f"questions a step, {s['mini_batch_size']} pairs a forward, AdamW lr {s['learning_rate']:g}, seed "
            f"{s['seed']}; median of {figures['rounds']} interleaved rounds",
            f"cores: {','.join(map(str, s['cores']))}; the machine's load average {load} at the start and the end",
            "the whole `structrank train xenc-map --train TSV --out DIR` process (start-up, reading, the fine-tuning, "
            "writing the folder):",
            f"  {ONE}, {p} torch threads".ljust(52) + _spread(seconds[ONE]),
            f"  torchrun, {p} processes of 1 thread".ljust(52) + _spread(seconds[SEVERAL]) + f"  {ratio:.2f}x",
            f"optimiser steps: {ONE} {figures['steps'][ONE]}, torchrun {figures['steps'][SEVERAL]}; test MAP (trec), "
            f"last round: {ONE} {figures['test_map'][ONE]:.4f}, torchrun {figures['test_map'][SEVERAL]:.4f}"]


def markdown_section(figures) -> str:
    return code_section("A text reranker's fine-tuning: several processes under torchrun against one",
                        format_processes(figures))


def page(figures, command) -> str:
    """The markdown page of the section, generated by ``command``."""
    return section_page(command, "Reading the files is timed inside the whole processes only.",
                        markdown_section(figures))


def main(argv=None):
    """``python -m structrank_lab.bench.processes``: the section with other sizes (``--quick``: ``QUICK``)."""
    from structrank.atomic import write_text_atomic

    argv = sys.argv[1:] if argv is None else list(argv)
    parser = sized_parser(__doc__, QUESTIONS, ROUNDS)
    parser.add_argument("--processes", type=int, default=PROCESSES, help=f"torchrun's processes (default {PROCESSES})")
    args = parser.parse_args(argv)
    options = dict(QUICK) if args.quick else {}
    options.update({k: v for k, v in (("questions", args.questions), ("rounds", args.rounds)) if v is not None})
    figures = bench_processes(encoder=args.encoder, processes=args.processes, **options)
    print("\n".join(format_processes(figures)))
    if args.out is not None and "skipped" not in figures:
        command = f"python -m structrank_lab.bench.processes {shlex.join(argv)}".rstrip()
        write_text_atomic(args.out, page(figures, command))
    return figures


if __name__ == "__main__":
    main()
