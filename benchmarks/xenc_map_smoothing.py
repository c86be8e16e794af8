"""How xenc-map's hinge is set (issues 40 and 61): candidates of the MAP hinge for the cross-encoder on WikiQA, chosen
on dev.

Each candidate fine-tunes ``CrossEncoderRanker(loss="map")`` with the budget of ``structrank reproduce neural-qa``
(its ``BUDGET``, seed 0) on WikiQA train as neural-qa reads it (the questions with a correct and an incorrect
candidate), changed in one setting, keeps its epoch by dev MAP, and is measured on test (trec convention). The
settings tried: the smoothing of phi_po's hinge (``--values``; 0 is the exact subgradient, the first row every other
is compared with), LSP-AP's positional map at scales of its loss (``--positional``), AdamW's learning rate
(``--learning-rates``), the questions per optimiser step (``--questions-per-step``) and a pairwise term beside the
MAP hinge (``--mix``: SVM-combo of the MAP and AUC hinges, each question's more violated of the two). The choice reads
dev MAP only: a candidate replaces the exact hinge when its dev MAP is at least ``DEV_MARGIN`` above it (WikiQA dev's
questions are few: the paper's hinge stays unless dev shows a clear gain). Test MAP is printed beside it, with the
paired test of each candidate's test questions against the exact hinge's (paired by question id).

A candidate's result is kept in ``--state`` (a JSON file of aggregates) as soon as it is measured, so an interrupted
sweep resumes where it stopped.

With ``--store`` (the folder of ``structrank reproduce neural-qa``, or the folder its runs are kept in,
results/neural-qa), the exact hinge's WikiQA row is neural-qa's own seed-0 run of the MAP hinge when the store holds
it (the same fine-tuning: it is not run again), and the page also reads that store's seed-0 ``MAP hinge`` runs on
TREC QA and SemEval-2016 (the same budget; phi_po's exact hinge and any loss option neural-qa ran as its default) and
checks the WikiQA choice on their dev sets: the candidate stays chosen only if its dev MAP over the exact hinge's,
averaged over the data sets where both ran, is still ``DEV_MARGIN`` or more.

    python benchmarks/xenc_map_smoothing.py --out docs/XENC_MAP_DEV.md --state STATE [--values 0,0.3,1] \
        [--positional 1,4] [--learning-rates 1e-4] [--questions-per-step 2] [--mix] [--store STORE] [--threads 2]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import time
from pathlib import Path

from structrank.atomic import write_text_atomic
from structrank_lab.experiments.neural_qa.data import splits
from structrank_lab.experiments.neural_qa.design import BUDGET, DATASETS, DEV_METRIC, TARGET_MAP
from structrank.learners.registry import MODELS
from structrank.metrics import evaluate
from structrank.metrics.significance import paired_test, per_query_pairs

DATASET, SEED = "wikiqa", 0
#: the dev MAP gain over the exact hinge a candidate needs to replace it (the page states the rule)
DEV_MARGIN = 0.01
#: the pairwise term ``--mix`` puts beside the MAP hinge: SVM-combo's components (each question's more violated one)
MIX = {"loss": "combo", "loss_params": {"components": ["map", "auc"]}}


def candidates(values, positional=(), learning_rates=(), questions_per_step=(), mix=False) -> list:
    """[(label, setting)]: ``setting`` the CrossEncoderRanker options the candidate changes from neural-qa's MAP hinge
    ({} for the exact hinge). phi_po at each smoothing value; the positional map unsmoothed at each (inference, scale of
    its loss) in ``positional``: the paper's greedy (LSP-AP) or the exact search (LSP-AP*); phi_po's exact hinge at
    each learning rate and each number of questions per step; with ``mix``, SVM-combo of the MAP and AUC hinges."""
    out = [(f"phi_po, smoothing {v:g}", {"smoothing": float(v)} if v else {}) for v in values]
    for inference, c in positional:
        name = "positional (LSP-AP's map)" if inference == "greedy" else "positional, exact inference (LSP-AP*)"
        params = {"feature_map": "positional", "scale": c, **({"inference": "exact"} if inference == "exact" else {})}
        out.append((f"{name}, scale {c:g}", {"loss_params": params}))
    out += [(f"phi_po, learning rate {rate:g}", {"learning_rate": float(rate)}) for rate in learning_rates]
    out += [(f"phi_po, {n} questions per step", {"batch_size": int(n)}) for n in questions_per_step]
    if mix:
        out.append(("phi_po with a pairwise term (SVM-combo of the MAP and AUC hinges)", MIX))
    return out


def trained(setting) -> str:
    """What a setting trains, as one comparable text: the loss, its options, the smoothing, the learning rate and the
    questions per step, each of neural-qa's MAP hinge where the setting leaves it."""
    full = {"loss": "map", "loss_params": None, "smoothing": 0.0, "learning_rate": BUDGET["learning_rate"],
            "batch_size": BUDGET["batch_size"], **setting}
    full = {**full, "loss_params": full["loss_params"] or None, "smoothing": float(full["smoothing"]),
            "learning_rate": float(full["learning_rate"]), "batch_size": int(full["batch_size"])}
    return json.dumps(full, sort_keys=True)


def same_curves(rows, results) -> list:
    """[(row, the earlier row it repeats)]: rows whose dev curve and test MAP equal an earlier row's (the option
    that tells them apart changed nothing in these fine-tunings)."""
    out = []
    for i, label in enumerate(rows):
        for earlier in rows[:i]:
            a, b = results[label], results[earlier]
            if a["curve"] == b["curve"] and a["test"] == b["test"]:
                out.append((label, earlier))
                break
    return out


def from_store(folder, settings, row=None, seed=SEED) -> dict:
    """{data set: {candidate: measured}} of the unsmoothed candidates that neural-qa's store ran as its ``row`` (by
    default its ``MAP hinge``) at ``seed`` (the run's key holds the row's ``loss_params``; candidates that change
    anything else are not neural-qa's runs)."""
    import tempfile

    from structrank_lab.experiments.kept_runs import open_runs
    from structrank_lab.experiments.neural_qa.design import EXPERIMENT, MAP_HINGE
    from structrank_lab.experiments.run_key import RunKey

    runs = {}
    with tempfile.TemporaryDirectory() as scratch:
        keys = {RunKey(EXPERIMENT, dataset, "test", 0, seed, row or MAP_HINGE,
                       {"budget": "full", **({"loss_params": setting["loss_params"]} if setting else {})}):
                (dataset, label)
                for dataset in DATASETS
                for label, setting in settings.items() if set(setting) <= {"loss_params"}}
        try:
            store = open_runs(folder, scratch)
        except FileNotFoundError as exc:
            raise SystemExit(f"--store {exc} (the folder of structrank reproduce neural-qa, or results/neural-qa)")
        with store:
            for row in store.rows(keys):  # one pass over the store
                runs.setdefault(RunKey.from_record(row), []).append(row)
    out = {}
    for key, (dataset, label) in keys.items():
        if key in runs:
            out.setdefault(dataset, {})[label] = recorded(runs[key])
    return out


def recorded(rows) -> dict:
    """A neural-qa run's long rows as ``measure`` returns a fine-tuning (each test question's AP by its id)."""
    from structrank_lab.experiments.neural_qa.design import CURVE_PREFIX
    from structrank_lab.experiments.report import QUERY_PREFIX

    value = {r["metric"]: float(r["value"]) for r in rows}

    def starting(prefix, suffix=""):
        return [value[m] for m in sorted(m for m in value if m.startswith(prefix) and m.endswith(suffix))]

    suffix = f":{DEV_METRIC}"
    per_query = {m[len(QUERY_PREFIX):-len(suffix)]: v for m, v in value.items()
                 if m.startswith(QUERY_PREFIX) and m.endswith(suffix)}
    return {"curve": starting(CURVE_PREFIX), "epoch": int(value["chosen:epoch"]), "dev": value["dev:map"],
            "test": value["test:map"], "per_query": per_query,
            "epoch_seconds": starting("time:epoch:"), "seconds": value["time:wall"],
            "dev_questions": int(value["count:dev_questions"]), "test_questions": int(value["count:test_questions"]),
            "source": "store"}


def measure(setting, threads, dataset=DATASET) -> dict:
    """One fine-tuning's dev curve, chosen epoch, dev and test MAP, each test question's AP (by its id) and its
    seconds, on ``dataset`` as neural-qa reads it and under its convention."""
    # deferred: the text extra (torch, transformers) loads only to run
    from structrank.learners import CrossEncoderRanker

    tic = time.perf_counter()
    train, dev, test = splits(dataset)
    convention = DATASETS[dataset][1]
    model = CrossEncoderRanker(**{"loss": "map", "dev_metric": DEV_METRIC, "convention": convention,
                                  "n_threads": threads, "random_state": SEED, "progress": False, **BUDGET, **setting})
    model.fit(train, eval_set=dev)
    result = evaluate(test.labels, model.predict(test), test.qid, [DEV_METRIC], convention, docids=test.docids)
    per_query = {str(q): float(v) for q, v in zip(result.qids, result.per_query[DEV_METRIC])}
    return {"curve": [float(v) for v in model.dev_curve_], "epoch": int(model.best_epoch_),
            "dev": float(model.dev_curve_[list(model.dev_epochs_).index(model.best_epoch_)]),
            "test": float(result.metrics[DEV_METRIC]), "per_query": per_query,
            "epoch_seconds": [float(s) for s in model.epoch_seconds_], "seconds": time.perf_counter() - tic,
            "dev_questions": int(dev.n_queries), "test_questions": int(test.n_queries)}


def measure_missing(rows, results, state, threads, dataset=DATASET) -> None:
    """Fine-tune each of ``rows`` ([(label, setting)], in this order) that ``results`` lacks, on ``dataset``, writing
    ``results`` to the ``state`` file after each (a stopped sweep resumes from it)."""
    for label, setting in rows:
        if label not in results:
            results[label] = measure(setting, threads, dataset)
            write_text_atomic(state, json.dumps(results))
            print(f"{label}: dev {results[label]['dev']:.4f}, test {results[label]['test']:.4f}, "
                  f"{results[label]['seconds']:.0f} s", flush=True)


def paired(a, b):
    """The paired test of two rows' test questions, over the question ids both measured."""
    _, ours, theirs = per_query_pairs(a["per_query"], b["per_query"])
    return paired_test(ours, theirs)


def table(rows, results, exact, kept) -> list:
    """The rows' table: each one's dev curve, kept epoch, dev and test MAP, and its test questions paired with the
    exact hinge's (when the exact hinge is among them)."""
    lines = ["| candidate | dev MAP by epoch | epoch kept | dev MAP | test MAP | test vs first: diff (95% CI), t p "
             "| epoch seconds |", "|---|---|---|---|---|---|---|"]
    for label in rows:
        r = results[label]
        curve = " / ".join(f"{v:.4f}" for v in r["curve"])
        if label == exact or exact not in results:
            versus = "—"
        else:
            t = paired(r, results[exact])
            versus = f"{t.mean_diff:+.4f} ({t.ci_low:+.4f}, {t.ci_high:+.4f}), {t.t_p:.3f}"
        mark = " (kept)" if label == kept else ""
        times = " / ".join(f"{s:.0f}" for s in r["epoch_seconds"])
        lines.append(f"| {label}{mark} | {curve} | {r['epoch']} | {r['dev']:.4f} | {r['test']:.4f} | {versus} | "
                     f"{times} |")
    return lines


def checked_elsewhere(chosen, exact, results, others) -> tuple:
    """(the candidate kept after the other data sets' dev sets, {data set: chosen's dev MAP gain over the exact
    hinge}) over WikiQA and the data sets where both ran; the WikiQA choice and {} when none did."""
    where = [d for d, found in others.items() if chosen in found and exact in found] if chosen != exact else []
    if not where:
        return chosen, {}
    gains = {DATASET: results[chosen]["dev"] - results[exact]["dev"]}
    gains.update({d: others[d][chosen]["dev"] - others[d][exact]["dev"] for d in where})
    return (chosen if sum(gains.values()) / len(gains) >= DEV_MARGIN else exact), gains


def dev_rule(rows, results) -> tuple:
    """(the row with the best dev MAP, its dev gain over the first row, the row the rule keeps): the best replaces the
    first row only when its gain is at least ``DEV_MARGIN``."""
    best = max(rows, key=lambda label: results[label]["dev"])
    gain = results[best]["dev"] - results[rows[0]]["dev"]
    return best, gain, (best if gain >= DEV_MARGIN else rows[0])


def page(rows, results, command, seconds, settings, others=None) -> str:
    """The page; ``settings``: {row: the options it changes}; ``others``: {data set other than WikiQA: {row:
    measured}} of neural-qa's runs (``from_store``)."""
    others = others or {}
    exact = rows[0]
    best, gain, chosen = dev_rule(rows, results)
    kept, gains = checked_elsewhere(chosen, exact, results, others)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    first = results[exact]
    lines = ["# xenc-map: how the MAP hinge is set for a fine-tuned cross-encoder, chosen on dev", "",
             f"Generated by `{command}` at commit {commit} ({platform.python_version()}, {seconds / 60:.1f} min of "
             "fine-tuning over the candidates measured).", "",
             f"Each row fine-tunes all-MiniLM-L6-v2 on the MAP hinge with neural-qa's budget ({BUDGET}, seed {SEED}) "
             "changed in the one setting its label names, on WikiQA train, its epoch kept by dev MAP "
             f"({first['dev_questions']} dev questions), then measured on test ({first['test_questions']} questions, "
             "trec convention). The choice reads the dev column only. The paired test compares each row's test "
             f"questions with the first row's ({exact}), by question id.", "",
             *table(rows, results, exact, kept)]
    if first.get("source") == "store":
        lines += ["", f"The first row ({exact}) is neural-qa's own seed-0 run of its `SVM-map hinge` row, read from "
                  "its store (the same fine-tuning: not run again here). Its epoch seconds are the grid's, which at "
                  "times ran another fine-tuning beside it: compare the other rows' seconds with each other, not with "
                  "its."]
    for label, earlier in same_curves(rows, results):
        lines += ["", f"{label} repeats {earlier} epoch for epoch (dev MAP by epoch and test MAP equal): the option "
                  "that sets them apart changed nothing in these runs."]
    lines += ["", f"The rule: a candidate replaces the exact hinge (the paper's subgradient) only if its dev MAP is at "
              f"least {DEV_MARGIN} (a point of MAP) above the exact hinge's: with {first['dev_questions']} dev "
              "questions, the paper's hinge stays unless dev shows a clear gain."]
    if best == exact:
        lines.append("No candidate's dev MAP is above the exact hinge's: the exact hinge is kept.")
    else:
        lines.append(f"The best dev MAP is that of {best}, {gain:+.4f} against the exact hinge: "
                     + ("the rule picks it over the exact hinge on WikiQA." if chosen == best
                        else "under the rule's point, so the exact hinge is kept."))
    if others:
        lines += ["", "## The same fine-tuning on the other data sets (neural-qa's seed-0 runs)", "",
                  "neural-qa's `MAP hinge` row at seed 0 with the same budget, read from its store: each data set's "
                  "epoch kept by its dev MAP under its own convention (SemEval's: MAP@10, every question counted)."]
        for dataset, found in others.items():
            labels = [label for label in rows if label in found]
            lines += ["", f"{DATASETS[dataset][0]}:", "", *table(labels, found, exact, None)]
    if gains:
        said = ", ".join(f"{DATASETS[d][0]} {g:+.4f}" for d, g in gains.items())
        mean = sum(gains.values()) / len(gains)
        lines += ["", f"The rule across the data sets: {chosen} stays chosen only if its dev MAP gain over the exact "
                  f"hinge, averaged over the data sets where both ran, is still at least {DEV_MARGIN}. Its gains: "
                  f"{said}; mean {mean:+.4f}, " + ("so it stays chosen." if kept == chosen
                                                  else "under the point, so the exact hinge is kept.")]
    lines += ["", f"The kept candidate ({kept}) has WikiQA test MAP {results[kept]['test']:.4f}, "
              f"{'at least' if results[kept]['test'] >= TARGET_MAP else 'below'} neural-qa's target {TARGET_MAP:.2f}."]
    trained = default_candidate(settings)
    lines.append("`structrank train xenc-map` trains by default (`learners.registry.XENC_DEFAULTS`) "
                 + (f"the kept candidate ({kept})." if trained == kept
                    else f"{trained}, not the kept candidate." if trained else "none of these candidates."))
    return "\n".join(lines) + "\n"


def default_candidate(settings) -> str | None:
    """The candidate xenc-map's registry defaults train (``trained``), or None."""
    defaults = MODELS["xenc-map"].defaults
    trains = trained({k: v for k, v in defaults.items() if k in ("loss", "loss_params", "smoothing",
                                                                  "learning_rate", "batch_size")})
    return next((label for label, setting in settings.items() if trained(setting) == trains), None)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--state", required=True, help="JSON file of the candidates measured (resumes from it)")
    parser.add_argument("--values", default="0,0.3,1")
    parser.add_argument("--positional", nargs="?", const="1", default="",
                        help="the positional map at these scales of its loss (comma-separated; alone: 1), each "
                             "with the paper's greedy inference or, written exact:SCALE, the exact search")
    parser.add_argument("--learning-rates", default="", help="AdamW's learning rates to try (comma-separated)")
    parser.add_argument("--questions-per-step", default="",
                        help="questions per optimiser step to try (comma-separated)")
    parser.add_argument("--mix", action="store_true", help="try SVM-combo of the MAP and AUC hinges (a pairwise term)")
    parser.add_argument("--store", help="the folder of structrank reproduce neural-qa or of its kept runs: its seed-0 "
                                        "MAP hinge runs give the exact hinge's WikiQA row and check the WikiQA choice "
                                        "on the other data sets")
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    args = parser.parse_args(argv)
    values = [float(v) for v in args.values.split(",")]
    if not values or values[0] != 0.0:
        parser.error("--values must start with 0 (the exact hinge the others are compared with)")
    state = Path(args.state)
    results = json.loads(state.read_text()) if state.exists() else {}
    scales = [(c.partition(":")[0], float(c.partition(":")[2])) if ":" in c else ("greedy", float(c))
              for c in args.positional.split(",") if c]
    if any(c <= 0 or inference not in ("greedy", "exact") for inference, c in scales):
        parser.error(f"--positional: each entry is SCALE or exact:SCALE with SCALE > 0, got {args.positional!r}")
    rates = [float(v) for v in args.learning_rates.split(",") if v]
    steps = [int(v) for v in args.questions_per_step.split(",") if v]
    if any(v <= 0 for v in (*rates, *steps)):
        parser.error("--learning-rates and --questions-per-step take positive values")
    rows = candidates(values, scales, rates, steps, args.mix)
    command = (f"python benchmarks/xenc_map_smoothing.py --out {args.out} --state {args.state} --values {args.values}"
               + (f" --positional {args.positional}" if scales else "")
               + (f" --learning-rates {args.learning_rates}" if rates else "")
               + (f" --questions-per-step {args.questions_per_step}" if steps else "")
               + (" --mix" if args.mix else "") + (f" --store {args.store}" if args.store else ""))
    settings = dict(rows)
    others = from_store(args.store, settings) if args.store else {}
    exact = rows[0][0]
    if exact not in results and exact in others.get(DATASET, {}):
        results[exact] = others[DATASET][exact]  # neural-qa ran it: the same fine-tuning
    others.pop(DATASET, None)
    measure_missing([*rows[1:], rows[0]], results, state, args.threads)  # the exact hinge last: the candidates first
    labels = [label for label, _ in rows]
    text = page(labels, results, command, sum(results[label]["seconds"] for label in labels), settings, others)
    write_text_atomic(args.out, text)
    print(text)


if __name__ == "__main__":
    main()
