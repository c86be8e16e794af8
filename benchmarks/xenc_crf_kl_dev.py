"""How xenc-crf-kl is set (issue 61): candidates of the CRF-KL objective for the cross-encoder on WikiQA, chosen on dev.

Each candidate fine-tunes ``CrossEncoderRanker(loss="crf-kl")`` with the budget of ``structrank reproduce neural-qa``
(its ``BUDGET``, seed 0) on WikiQA train as neural-qa reads it, changed in one setting, keeps its epoch by dev MAP and
is measured on test (trec convention), as ``xenc_map_smoothing.py`` does for the MAP hinge (its ``measure``, ``table``
and ``DEV_MARGIN`` rule). The settings tried: the KL target's temperature T (``--temperatures``: q(y) ~ exp(-(1 -
NDCG(y)) / T) over each 6-document subset's rankings; the first value is neural-qa's, the row every other is compared
with), AdamW's learning rate (``--learning-rates``), the questions per optimiser step (``--questions-per-step``) and the
epochs (``--epochs``; the learning-rate schedule spans them, the epoch kept by dev MAP as ever), the head over the
encoder (``--mean-head``: a linear layer over the mean of the token vectors instead of the pooler's first token), and
with ``--transfer`` neural-qa's transfer row (TREC QA's training questions first, then WikiQA's: TANDA), read from
``--store``. With ``--seeds`` the mean-pooled head is also fine-tuned at those seeds and set beside neural-qa's CRF-KL
at the same seeds (read from ``--store``): a section of its own, which the choice does not read. With ``--elsewhere``
the mean-pooled head is fine-tuned at seed 0 on TREC QA and SemEval-2016 as neural-qa reads them and set beside
neural-qa's seed-0 CRF-KL there: the head is kept only if its dev MAP gain, averaged over WikiQA and those, is at
least ``DEV_MARGIN``.
The choice reads dev MAP only: a candidate replaces the first row when its dev MAP is at least ``DEV_MARGIN`` above it.

Each candidate's result is kept in ``--state`` (a JSON file of aggregates, results/xenc-crf-kl-dev.json in a
checkout) as soon as it is measured, so an interrupted sweep resumes and the page regenerates without a rerun. With
``--store`` (neural-qa's store or its kept runs, results/neural-qa) the first row is neural-qa's own seed-0 CRF-KL run
on WikiQA (the same fine-tuning: not run again).

    python benchmarks/xenc_crf_kl_dev.py --out docs/XENC_CRF_KL_DEV.md --state results/xenc-crf-kl-dev.json \
        --temperatures 1,0.3,0.1 [--learning-rates 1e-4] [--questions-per-step 8] [--epochs 5] \
        [--mean-head [--seeds 1,2] [--elsewhere]] [--store results/neural-qa [--transfer]]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
from pathlib import Path

from xenc_map_smoothing import (DATASET, DEV_MARGIN, SEED, checked_elsewhere, dev_rule, from_store,
                                measure_missing, paired, same_curves, table)

from structrank.atomic import write_text_atomic
from structrank.learners.registry import MODELS
from structrank.losses import get_loss
from structrank.metrics.significance import paired_test, per_query_pairs
from structrank_lab.experiments.neural_qa.design import (BUDGET, CRF_KL, DATASETS, TARGET_MAP, TRANSFER_FROM,
                                                     TRANSFERRED)

LOSS = "crf-kl"
#: neural-qa's transfer row of CRF-KL (TREC QA first, then WikiQA), read from the store only (``--transfer``)
TRANSFER_ROW = next(row for row, base in TRANSFERRED.items() if base == CRF_KL)
TRANSFER_LABEL = f"KL, {DATASETS[TRANSFER_FROM][0]} first, neural-qa's transfer row"
MEAN_HEAD_LABEL = "KL, mean-pooled head"
#: the other data sets ``--elsewhere`` fine-tunes the mean-pooled head on
ELSEWHERE = ("trec13", "semeval2016")


def candidates(temperatures, learning_rates=(), questions_per_step=(), epochs=(), transfer=False,
               mean_head=False) -> list:
    """[(label, setting)]: ``setting`` the CrossEncoderRanker options of the candidate (the loss and the options it
    changes from neural-qa's CRF-KL row; the first temperature's row is that row itself). ``transfer``: last, neural-qa's
    transfer row (``setting["transfer"]`` names its first data set; it is read from the store, never run here)."""
    first = temperatures[0]

    def at(t):
        return {"loss": LOSS, **({"loss_params": {"crf_param": float(t)}} if t != first else {})}

    out = [(f"KL, temperature {t:g}" + (", neural-qa's CRF-KL" if t == first else ""), at(t)) for t in temperatures]
    out += [(f"KL, learning rate {rate:g}", {**at(first), "learning_rate": float(rate)}) for rate in learning_rates]
    out += [(f"KL, {n} questions per step", {**at(first), "batch_size": int(n)}) for n in questions_per_step]
    out += [(f"KL, {n} epochs", {**at(first), "epochs": int(n)}) for n in epochs]
    out += [(MEAN_HEAD_LABEL, {**at(first), "head": "mean"})] * bool(mean_head)
    return out + [(TRANSFER_LABEL, {**at(first), "transfer": TRANSFER_FROM})] * bool(transfer)


def default_temperature() -> float:
    """CRF-KL's temperature when no option names one: what neural-qa's CRF-KL row trains."""
    return get_loss(LOSS).param


def default_candidate(settings) -> str | None:
    """The candidate whose options ``structrank train xenc-crf-kl`` trains by default, or None."""
    defaults = MODELS[f"xenc-{LOSS}"].defaults
    keys = ("loss_params", "learning_rate", "batch_size", "epochs", "head", "transfer")
    wanted = {k: defaults[k] for k in keys if k in defaults and defaults[k] not in (None, BUDGET.get(k))}
    return next((label for label, setting in settings.items()
                 if {k: v for k, v in setting.items() if k in keys} == wanted), None)


def seeded(label, seed) -> str:
    """A candidate's key in the state at ``seed``: its label at the sweep's seed, else the label and the seed."""
    return label if seed == SEED else f"{label}, seed {seed}"


def read_from_store(store, results, rows, seed=SEED) -> None:
    """Add to ``results`` each candidate of ``rows`` ({label: neural-qa's row}) it lacks that ``store`` holds, from
    that row's WikiQA run at ``seed``."""
    for label, row in rows.items():
        if seeded(label, seed) not in results:
            found = from_store(store, {label: {}}, row=row, seed=seed).get(DATASET, {})
            if label in found:
                results[seeded(label, seed)] = found[label]


def seeds_section(first, results, seeds) -> list:
    """The mean-pooled head against neural-qa's CRF-KL (``first``) at the sweep's seed and ``seeds``: each seed's dev
    and test MAP, their means, and the test questions paired, each question's AP the mean over the seeds."""
    every = (SEED, *seeds)
    lines = ["", f"## The mean-pooled head over seeds {', '.join(map(str, every))}", "",
             f"neural-qa's `{CRF_KL}` row as its kept runs hold it at each seed; the mean-pooled head fine-tuned "
             "here at each seed, the rest of its setting unchanged. Not read by the choice above (its rule reads one "
             "seed's dev MAP).", "",
             "| candidate | dev MAP by seed | test MAP by seed | dev MAP, mean | test MAP, mean |", "|---|---|---|---|---|"]
    means = {}
    for label in (first, MEAN_HEAD_LABEL):
        runs = [results[seeded(label, s)] for s in every]
        means[label] = {q: statistics.fmean(r["per_query"][q] for r in runs)
                        for q in set.intersection(*(set(r["per_query"]) for r in runs))}
        dev, test = ([r[key] for r in runs] for key in ("dev", "test"))
        lines.append(f"| {label} | {' / '.join(f'{v:.4f}' for v in dev)} | {' / '.join(f'{v:.4f}' for v in test)} | "
                     f"{statistics.fmean(dev):.4f} | {statistics.fmean(test):.4f} |")
    _, ours, theirs = per_query_pairs(means[MEAN_HEAD_LABEL], means[first])
    t = paired_test(ours, theirs)
    dev_gain = statistics.fmean(results[seeded(MEAN_HEAD_LABEL, s)]["dev"] - results[seeded(first, s)]["dev"]
                                for s in every)
    lines += ["", f"Over the seeds, the mean-pooled head against neural-qa's CRF-KL: dev MAP {dev_gain:+.4f}; test MAP "
              f"{t.mean_diff:+.4f} (95% CI {t.ci_low:+.4f} to {t.ci_high:+.4f}, t-test p {t.t_p:.3f}, {t.n} questions "
              "paired, each question's AP the mean over the seeds)."]
    return lines


def elsewhere_key(label, dataset) -> str:
    """A candidate's key in the state for its run on another data set than WikiQA."""
    return f"{label} on {DATASETS[dataset][0]}"


def elsewhere_section(first, results, others) -> list:
    """The mean-pooled head against neural-qa's CRF-KL (``first``) at seed 0 on the data sets of ``others``
    ({data set: neural-qa's run}), and the head the dev MAP gain averaged with WikiQA's keeps."""
    lines = ["", "## The mean-pooled head on the other data sets (seed 0)", "",
             "Fine-tuned as on WikiQA, on each data set as neural-qa reads it (its convention, its dev MAP keeping "
             f"the epoch), beside neural-qa's own seed-0 `{CRF_KL}` run there.", "",
             "| data set | dev MAP: CRF-KL | dev MAP: mean-pooled head | dev gain | test MAP: CRF-KL "
             "| test MAP: mean-pooled head | test: diff (95% CI), t p |", "|---|---|---|---|---|---|---|"]
    for dataset, theirs in {DATASET: results[first], **others}.items():
        ours = results[MEAN_HEAD_LABEL if dataset == DATASET else elsewhere_key(MEAN_HEAD_LABEL, dataset)]
        t = paired(ours, theirs)
        lines.append(f"| {DATASETS[dataset][0]} | {theirs['dev']:.4f} | {ours['dev']:.4f} | "
                     f"{ours['dev'] - theirs['dev']:+.4f} | {theirs['test']:.4f} | {ours['test']:.4f} | "
                     f"{t.mean_diff:+.4f} ({t.ci_low:+.4f}, {t.ci_high:+.4f}), {t.t_p:.3f} |")
    both = {d: {first: run, MEAN_HEAD_LABEL: results[elsewhere_key(MEAN_HEAD_LABEL, d)]} for d, run in others.items()}
    kept, gains = checked_elsewhere(MEAN_HEAD_LABEL, first, results, both)
    mean_gain = sum(gains.values()) / len(gains)
    lines += ["", f"The mean-pooled head's dev MAP gain averaged over the {len(gains)} data sets: {mean_gain:+.4f}; "
              + ("at least" if kept == MEAN_HEAD_LABEL else "under") + f" the rule's {DEV_MARGIN}, so "
              + ("the mean-pooled head is the better choice by dev." if kept == MEAN_HEAD_LABEL
                 else "dev does not choose it over the classification head.")]
    return lines


def page(rows, results, command, seconds, settings, seeds=(), others=None) -> str:
    first_label = rows[0]
    first = results[first_label]
    best, gain, kept = dev_rule(rows, results)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    lines = ["# xenc-crf-kl: how the CRF-KL objective is set for a fine-tuned cross-encoder, chosen on dev", "",
             f"Generated by `{command}` at commit {commit} ({platform.python_version()}, {seconds / 60:.1f} min of "
             "fine-tuning over the candidates measured).", "",
             f"Each row fine-tunes all-MiniLM-L6-v2 on CRF-KL with neural-qa's budget ({BUDGET}, seed {SEED}) changed "
             "in the one setting its label names, on WikiQA train, its epoch kept by dev MAP "
             f"({first['dev_questions']} dev questions), then measured on test ({first['test_questions']} questions, "
             "trec convention). The temperature T sets the target q(y) ~ exp(-(1 - NDCG(y)) / T) over the rankings of "
             "each 6-document subset (smaller: a sharper target). The choice reads the dev column only. The paired "
             f"test compares each row's test questions with the first row's ({first_label}), by question id.", "",
             *table(rows, results, first_label, kept)]
    if first.get("source") == "store":
        lines += ["", f"The first row is neural-qa's own seed-0 run of its `{CRF_KL}` row, read from its kept runs "
                  "(the same fine-tuning: not run again here)."]
    if TRANSFER_LABEL in rows:
        lines += ["", f"The last row is neural-qa's seed-0 run of its `{TRANSFER_ROW}` row, read from its kept runs: "
                  f"the same fine-tuning first on {DATASETS[TRANSFER_FROM][0]}'s training questions (its epoch kept by "
                  f"{DATASETS[TRANSFER_FROM][0]}'s dev MAP), then on WikiQA's from that model (transfer, then adapt: "
                  "TANDA). Its minutes are both fine-tunings'."]
    if MEAN_HEAD_LABEL in rows:
        mean = results[MEAN_HEAD_LABEL]
        lines += ["", f"{MEAN_HEAD_LABEL} (`head=\"mean\"`) scores a pair by a linear layer over the mean of its "
                  "token vectors, the pooling all-MiniLM-L6-v2 was trained with, instead of transformers' "
                  "classification head over the first token through the encoder's pooler. Against the first row (one "
                  f"seed): dev MAP {mean['dev'] - first['dev']:+.4f}, test MAP {mean['test'] - first['test']:+.4f}; "
                  "the rule reads dev only."]
    lines += ["", "Epoch seconds are as each fine-tuning measured them, on the torch threads the sweep was given and beside "
              "whatever else the machine ran: they are not a benchmark (docs/BENCH_CROSS_ENCODER.md is)."]
    for label, earlier in same_curves(rows, results):
        lines += ["", f"{label} repeats {earlier} epoch for epoch: the option that sets them apart changed nothing."]
    lines += ["", f"The rule: a candidate replaces neural-qa's setting only if its dev MAP is at least {DEV_MARGIN} (a "
              f"point of MAP) above it: with {first['dev_questions']} dev questions, a smaller gain is within noise."]
    if best == first_label:
        lines.append("No candidate's dev MAP is above neural-qa's setting's: it is kept.")
    else:
        lines.append(f"The best dev MAP is that of {best}, {gain:+.4f} against neural-qa's setting: "
                     + ("the rule picks it." if kept == best else "under the rule's point, so neural-qa's is kept."))
    lines += ["", f"The kept candidate ({kept}) has WikiQA test MAP {results[kept]['test']:.4f}, "
              f"{'at least' if results[kept]['test'] >= TARGET_MAP else 'below'} neural-qa's target {TARGET_MAP:.2f} "
              "(one seed)."]
    trained = default_candidate(settings)
    lines.append(f"`structrank train xenc-{LOSS}` trains by default (`learners.registry.XENC_DEFAULTS`) "
                 + (f"the kept candidate ({kept})." if trained == kept
                    else f"{trained}, not the kept candidate." if trained else "none of these candidates."))
    if seeds:
        lines += seeds_section(first_label, results, seeds)
    if others:
        lines += elsewhere_section(first_label, results, others)
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--state", required=True, help="JSON file of the candidates measured (resumes from it)")
    parser.add_argument("--temperatures", default="1,0.3,0.1", help="KL temperatures; the first is neural-qa's")
    parser.add_argument("--learning-rates", default="", help="AdamW's learning rates to try (comma-separated)")
    parser.add_argument("--questions-per-step", default="", help="questions per optimiser step (comma-separated)")
    parser.add_argument("--epochs", default="", help="epochs to try (comma-separated; the schedule spans them)")
    parser.add_argument("--mean-head", action="store_true",
                        help="add a candidate whose head is a linear layer over the mean of the token vectors")
    parser.add_argument("--seeds", default="",
                        help="more seeds of the mean-pooled head beside neural-qa's CRF-KL (comma-separated; needs "
                             "--mean-head and --store)")
    parser.add_argument("--elsewhere", action="store_true",
                        help="fine-tune the mean-pooled head on TREC QA and SemEval-2016 too, beside neural-qa's "
                             "CRF-KL there (needs --mean-head and --store)")
    parser.add_argument("--store", help="neural-qa's store or kept runs: its seed-0 CRF-KL run is the first row")
    parser.add_argument("--transfer", action="store_true",
                        help=f"add neural-qa's seed-0 {TRANSFER_ROW!r} run as the last row (read from --store)")
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    args = parser.parse_args(argv)
    temperatures = [float(v) for v in args.temperatures.split(",") if v]
    rates = [float(v) for v in args.learning_rates.split(",") if v]
    steps = [int(v) for v in args.questions_per_step.split(",") if v]
    epochs = [int(v) for v in args.epochs.split(",") if v]
    seeds = [int(v) for v in args.seeds.split(",") if v]
    if seeds and not (args.mean_head and args.store):
        parser.error("--seeds runs more seeds of the mean-pooled head beside neural-qa's CRF-KL read from --store: "
                     "give --mean-head and --store")
    if args.elsewhere and not (args.mean_head and args.store):
        parser.error("--elsewhere sets the mean-pooled head beside neural-qa's CRF-KL read from --store: give "
                     "--mean-head and --store")
    if SEED in seeds or any(v < 0 for v in seeds):
        parser.error(f"--seeds takes seeds other than the sweep's own, {SEED}")
    if not temperatures or any(v <= 0 for v in (*temperatures, *rates, *steps, *epochs)):
        parser.error("--temperatures (at least one), --learning-rates, --questions-per-step and --epochs take "
                     "positive values")
    if temperatures[0] != default_temperature():
        parser.error(f"--temperatures must start with {default_temperature():g}, CRF-KL's default (neural-qa's row, the "
                     "first row the others are compared with)")
    if args.transfer and not args.store:
        parser.error("--transfer reads neural-qa's transfer run from --store: give --store")
    rows = candidates(temperatures, rates, steps, epochs, args.transfer, args.mean_head)
    settings = dict(rows)
    command = (f"python benchmarks/xenc_crf_kl_dev.py --out {args.out} --state {args.state} "
               f"--temperatures {args.temperatures}" + (f" --learning-rates {args.learning_rates}" if rates else "")
               + (f" --questions-per-step {args.questions_per_step}" if steps else "")
               + (f" --epochs {args.epochs}" if epochs else "") + (" --mean-head" if args.mean_head else "")
               + (f" --seeds {args.seeds}" if seeds else "") + (" --elsewhere" if args.elsewhere else "")
               + (f" --store {args.store}" if args.store else "") + (" --transfer" if args.transfer else ""))
    state = Path(args.state)
    results = json.loads(state.read_text()) if state.exists() else {}
    first = rows[0][0]
    if args.store:  # neural-qa ran them: the same fine-tunings, read rather than run again
        read_from_store(args.store, results, {first: CRF_KL, **({TRANSFER_LABEL: TRANSFER_ROW} if args.transfer else {})})
    if args.transfer and TRANSFER_LABEL not in results:  # not run here: its two fine-tunings are neural-qa's
        print(f"{args.store} holds no seed-0 {TRANSFER_ROW!r} run yet: the page leaves it out", flush=True)
        rows = [row for row in rows if row[0] != TRANSFER_LABEL]
    measure_missing(rows, results, state, args.threads)
    more = [(seeded(MEAN_HEAD_LABEL, s), {**settings.get(MEAN_HEAD_LABEL, {}), "random_state": s}) for s in seeds]
    for seed in seeds:
        read_from_store(args.store, results, {first: CRF_KL}, seed=seed)
        if seeded(first, seed) not in results:
            raise SystemExit(f"{args.store} holds no seed-{seed} {CRF_KL!r} run on WikiQA: --seeds {args.seeds} "
                             "needs it")
    measure_missing(more, results, state, args.threads)
    others = {}
    if args.elsewhere:
        found = from_store(args.store, {first: {}}, row=CRF_KL)
        for dataset in ELSEWHERE:
            if first not in found.get(dataset, {}):
                raise SystemExit(f"{args.store} holds no seed-0 {CRF_KL!r} run on {dataset}: --elsewhere needs it")
            others[dataset] = found[dataset][first]
            measure_missing([(elsewhere_key(MEAN_HEAD_LABEL, dataset), settings[MEAN_HEAD_LABEL])], results, state,
                            args.threads, dataset)
        more += [(elsewhere_key(MEAN_HEAD_LABEL, d), None) for d in ELSEWHERE]
    labels = [label for label, _ in rows]
    seconds = sum(results[label]["seconds"] for label in (*labels, *(label for label, _ in more)))
    text = page(labels, results, command, seconds, settings, seeds, others)
    write_text_atomic(args.out, text)
    print(text)


if __name__ == "__main__":
    main()
