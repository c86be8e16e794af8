"""Answer selection on held-out data sets, through the CLI with defaults: ``docs/HELDOUT_QA.md``.

    python -m structrank_lab.experiments.heldout_qa --out docs/HELDOUT_QA.md \\
        --heldout NAME=TRAIN,TEST [...] [--work DIR] [--models xenc-crf-kl,...] [--variants head-mean,...] \\
        [--seeds 0,1] [--record results/heldout-qa.json]

What a user with a new answer-selection data set in the (question, candidate, label) TSV form runs, each step its
own ``structrank`` process with its defaults (no ``--vali``, no ``--set``): the feature-based LSP-AP
(``featurize qa`` fitted on the training file, ``train lsp-ap``) and each cross-encoder model (``train xenc-...`` on
the TSV itself), ranked by ``predict`` and measured by ``evaluate`` on the test file under trec_eval's rules over
the questions with a correct and an incorrect candidate. Every cross-encoder model is paired with LSP-AP over the
test questions. The files are the user's: none is kept in the repository.

Beside the defaults, the settings docs/XENC_WIKIQA_CLI.md tried on WikiQA (``VARIANTS``: the mean-pooled head, a
soup of fine-tunings) are run here with one ``--set`` each and paired with the defaults: a data set that played no
part in choosing them checks that choice. With ``--seeds``, every cross-encoder model is trained at each seed
(``--set random_state=S``; seed 0 is the default) and each test question's value is its mean over the seeds.

A fine-tuning takes most of an hour on one core, so the steps are kept in ``--work``: a step whose output and its
timing file are there is not run again (delete them to rerun it). What the page shows is kept in ``--record`` (each
model's per-question MAP in the test questions' sorted order, its means and its steps' seconds; no text of the data):
a data set in the record is not run again, so the page regenerates without the files.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

import numpy as np

from structrank.atomic import write_text_atomic
from structrank.data import read_letor
from structrank.errors import StructRankError
from structrank.metrics.compare import against_baseline
from structrank.qa import read_qa_tsv
from structrank_lab.experiments.cli_pages import heldout_spec, per_question, timed_step, write_page
from structrank_lab.experiments.wikiqa_cli import SOUP

FEATURES = "lsp-ap"
MODELS = ("xenc-crf-kl",)
METRICS = ("map", "mrr", "p@1")
#: "well above": the paired t-test's interval of (model - LSP-AP) MAP lies wholly above this many points. Fixed before
#: the first cross-encoder result on a held-out set was known.
WELL_ABOVE = 0.02
#: the model the variants change
CHECKED = "xenc-crf-kl"
#: settings tried on WikiQA (docs/XENC_WIKIQA_CLI.md), by the name their steps are kept under: what each adds to
#: ``train``'s command line. A soup's fine-tunings run one after the other (n_jobs is left at its default), so the
#: page runs on the cores it is given.
VARIANTS = {"head-mean": ("--set", "head=mean"),
            f"soup-{SOUP}": ("--set", f"soup={SOUP}"),
            f"soup-{SOUP}-mean": ("--set", f"soup={SOUP}", "--set", "head=mean")}


def _features_model(train: Path, test: Path, work: Path) -> dict:
    featurized = work / "train.svm", work / "test.svm"
    state = Path(f"{featurized[0]}.featurizer.json")
    timed_step(work, "featurize-train", state, "featurize", "qa", "--input", str(train), "--fit", str(train),
               "--out", str(featurized[0]), "--quiet")
    timed_step(work, "featurize-test", featurized[1], "featurize", "qa", "--input", str(test), "--state",
               str(state), "--out", str(featurized[1]), "--quiet")
    model, scores = work / f"{FEATURES}.npz", work / f"{FEATURES}.scores"
    fit = timed_step(work, f"train-{FEATURES}", model, "train", FEATURES, "--train", str(featurized[0]),
                     "--out", str(model), "--quiet")
    predict = timed_step(work, f"predict-{FEATURES}", scores, "predict", "--model", str(model),
                         "--data", str(featurized[1]), "--out", str(scores), "--quiet")
    values = by_tsv_question(per_question(featurized[1], scores, METRICS), featurized[1], test)
    return {"values": values, "train": fit, "predict": predict}


def by_tsv_question(values: dict, featurized: Path, tsv: Path) -> dict:
    """``values`` of a featurized file ({metric: {qid: value}}, featurize's integer qids) keyed by the questions' ids
    as the TSV's own evaluation names them, so that the two pair question by question. Each integer qid is named by
    the ``question = ID`` comment featurize writes on its rows (white space in an ID joined by ``_``)."""
    data = read_letor(featurized)
    named = {}
    for qid, comment in zip(data.qid.tolist(), data.comments):
        found = re.search(r"question = (\S+)", str(comment))
        if found is None:
            raise StructRankError(f"{featurized}: qid {qid} has no 'question = ID' comment (not written by "
                                  "structrank featurize qa)")
        named.setdefault(str(qid), found.group(1))
    by_name = {"_".join(q.split()): q for q in read_qa_tsv(tsv).qid.tolist()}
    missing = sorted(set(named.values()) - set(by_name))
    if missing:
        raise StructRankError(f"{featurized}: question {missing[0]!r} is not a question of {tsv}")
    return {m: {by_name[named[q]]: v for q, v in by_query.items()} for m, by_query in values.items()}


def _text_model(name: str, train: Path, test: Path, work: Path, settings=(), kept=None, seeds=(0,)) -> dict:
    """``train NAME [SETTINGS]`` on ``train`` at each of ``seeds``, ``predict`` and ``evaluate`` on ``test``; its
    steps kept in ``work`` under ``kept`` (default: NAME; seed S > 0: ``KEPT.seed-S``). Each question's values are
    their mean over the seeds; "seeds" holds each seed's mean MAP, "train" and "predict" each seed's step."""
    kept = kept or name
    runs = []
    for seed in seeds:
        under = kept if seed == 0 else f"{kept}.seed-{seed}"
        model, scores = work / under, work / f"{under}.scores"
        seeded = ("--set", f"random_state={seed}") if seed != 0 else ()
        fit = timed_step(work, f"train-{under}", model, "train", name, "--train", str(train), "--out", str(model),
                         *settings, *seeded, "--quiet")
        predict = timed_step(work, f"predict-{under}", scores, "predict", "--model", str(model), "--data",
                             str(test), "--out", str(scores), "--quiet")
        runs.append({"values": per_question(test, scores, METRICS), "train": fit, "predict": predict})
    return over_seeds(runs, seeds)


def over_seeds(runs: list, seeds) -> dict:
    """One model's runs at ``seeds`` as one: each question's values averaged over them, each seed's mean MAP, the
    steps of each."""
    questions = sorted(runs[0]["values"]["map"])
    if any(sorted(run["values"]["map"]) != questions for run in runs):
        raise StructRankError("the seeds' runs were measured on other questions")
    values = {m: {q: float(np.mean([run["values"][m][q] for run in runs])) for q in questions} for m in METRICS}
    return {"values": values, "seeds": {str(seed): _mean(run["values"]["map"]) for seed, run in zip(seeds, runs)},
            "train": [run["train"] for run in runs], "predict": [run["predict"] for run in runs]}


def variant_name(variant: str) -> str:
    """How the page names a variant's model: the checked model and its settings as typed."""
    return f"{CHECKED} {' '.join(VARIANTS[variant])}"


def run_dataset(train: Path, test: Path, work: Path, models=MODELS, variants=(), seeds=(0,)) -> dict:
    """{model: {"values": {metric: {qid: value}}, "train", "predict": each step's timing (a cross-encoder's: one per
    seed), "seeds": a cross-encoder's mean MAP at each seed}} on one data set, LSP-AP first, then ``models``, then
    the ``variants`` of CHECKED, each cross-encoder at every one of ``seeds``."""
    work.mkdir(parents=True, exist_ok=True)
    out = {f"{FEATURES} (features)": _features_model(train, test, work)}
    for name in models:
        out[name] = _text_model(name, train, test, work, seeds=seeds)
    for variant in variants:
        out[variant_name(variant)] = _text_model(CHECKED, train, test, work, VARIANTS[variant], f"{CHECKED}.{variant}",
                                                 seeds)
    for name, r in out.items():
        print(f"  {name}: MAP {_mean(r['values']['map']):.4f} (train seconds {_timed(r['train'])})", file=sys.stderr)
    return out


def to_record(results: dict, train: Path, test: Path, kept=None, work=None) -> dict:
    """What the page needs of one data set's ``results``, without the data's text: each model's per-question MAP in
    the sorted order of the test questions (the same questions for every model), its means, its steps (their
    commands with ``$WORK`` for ``work`` and ``$HELDOUT`` for the folder of the files); the files' names and sizes.
    The models of ``kept`` (a record of the same files) that ``results`` has not are kept."""
    def step(done):
        if isinstance(done, list):
            return [step(one) for one in done]
        command = done["command"].replace(str(work), "$WORK") if work is not None else done["command"]
        return {**done, "command": command.replace(str(train.parent), "$HELDOUT")}

    questions = sorted(next(iter(results.values()))["values"]["map"])
    models = {name: r for name, r in (kept or {}).get("models", {}).items()
              if name not in results and len(r["map"]) == len(questions)}
    for name, r in results.items():
        if sorted(r["values"]["map"]) != questions:
            raise StructRankError(f"{test}: {name} was measured on other questions than the rest")
        models[name] = {"map": [round(r["values"]["map"][q], 6) for q in questions],
                        "means": {m: round(_mean(r["values"][m]), 6) for m in METRICS},
                        "train": step(r["train"]), "predict": step(r["predict"])}
        if "seeds" in r:
            models[name]["seeds"] = {seed: round(value, 6) for seed, value in r["seeds"].items()}
    return {"train": {"name": train.name, "size": _size(train)}, "test": {"name": test.name, "size": _size(test)},
            "models": models}


def dumps(record: dict) -> str:
    """The record as JSON text, one line per list of numbers (sorted keys: a rerun writes the same text)."""
    text = json.dumps(record, indent=1, sort_keys=True)
    return re.sub(r"\[\s+([-0-9.,\s]*?)\s+\]", lambda found: "[" + re.sub(r"\s+", " ", found.group(1)) + "]",
                  text) + "\n"


def from_record(kept: dict) -> dict:
    """``run_dataset``'s form of a recorded data set (the questions numbered in their sorted order); its means are
    the recorded ones."""
    return {name: {"values": {"map": dict(enumerate(r["map"]))}, "means": r["means"], "train": r["train"],
                   "predict": r["predict"], **({"seeds": r["seeds"]} if "seeds" in r else {})}
            for name, r in kept["models"].items()}


def _timed(step) -> str:
    """A step's seconds and cores; a list of steps (one per seed): their seconds, ``/`` between them."""
    steps = step if isinstance(step, list) else [step]
    cores = {one.get("cores") for one in steps}
    said = "" if cores == {None} or len(cores) > 1 else f" ({cores.pop()} core{'' if steps[0]['cores'] == 1 else 's'})"
    return " / ".join(f"{one['seconds']:.0f}" for one in steps) + said


def _seeds(r: dict) -> str:
    """The seeds a cross-encoder's row averages, and its MAP at each ("-": one run, no seed drawn)."""
    if "seeds" not in r:
        return "-"
    return f"{', '.join(r['seeds'])} ({' / '.join(f'{v:.4f}' for v in r['seeds'].values())})"


def _mean(values: dict) -> float:
    return float(np.mean(list(values.values())))


def _size(path: Path) -> str:
    data = read_qa_tsv(path)
    return f"{len(np.unique(data.qid))} questions / {len(data.labels)} pairs"


def verdict(ci_low: float, ci_high: float) -> str:
    """'holds' when the whole interval lies above WELL_ABOVE, 'does not hold' when wholly below, else
    'inconclusive'."""
    if ci_low > WELL_ABOVE:
        return "holds"
    if ci_high < WELL_ABOVE:
        return "does not hold"
    return "inconclusive"


def better(ci_low: float, ci_high: float) -> str:
    """A variant against the defaults: 'better' when the whole interval lies above 0, 'worse' when wholly below,
    else 'inconclusive'."""
    return "better" if ci_low > 0 else "worse" if ci_high < 0 else "inconclusive"


def _paired(results: dict, baseline: str, model: str):
    return against_baseline({baseline: results[baseline]["values"]["map"], model: results[model]["values"]["map"]},
                            baseline, "map")[0]


def _interval(row) -> str:
    return (f"{100 * row.difference:+.2f} | [{100 * row.ci_low:+.2f}, {100 * row.ci_high:+.2f}] | {row.t_p:.2g} | "
            f"{row.rand_p:.2g} | {row.queries}")


def _means(r: dict) -> dict:
    return r.get("means") or {m: _mean(r["values"][m]) for m in METRICS}


def dataset_section(name: str, files: dict, results: dict) -> str:
    """Markdown: each model's test values and seconds, each cross-encoder model against LSP-AP (paired), and each
    variant against CHECKED with its defaults (paired). ``files``: the record's "train" and "test" (name, size)."""
    baseline = next(iter(results))
    train, test = files["train"], files["test"]
    lines = [f"## {name}", "", f"- train: `{train['name']}`, {train['size']}; test: `{test['name']}`, {test['size']}.",
             "", "| model | MAP | MRR | P@1 | seeds (MAP at each) | train seconds (the whole process, its cores; each "
             "seed's) | predict seconds |", "|---|---|---|---|---|---|---|"]
    for model, r in results.items():
        lines.append(f"| {model} | " + " | ".join(f"{_means(r)[m]:.4f}" for m in METRICS)
                     + f" | {_seeds(r)} | {_timed(r['train'])} | {_timed(r['predict'])} |")
    lines += ["", f"| model | MAP - {baseline} (points) | 95% interval (points) | t-test p | randomisation p | "
              f"questions | well above (interval above +{100 * WELL_ABOVE:.0f}) |", "|---|---|---|---|---|---|---|"]
    for model in list(results)[1:]:
        row = _paired(results, baseline, model)
        lines.append(f"| {model} | {_interval(row)} | **{verdict(row.ci_low, row.ci_high)}** |")
    variants = [model for model in results if model.startswith(f"{CHECKED} --set")]
    if CHECKED in results and variants:
        lines += ["", f"The settings tried on WikiQA, each against `{CHECKED}` with its defaults on this data set "
                  "(*better* when the whole interval lies above 0, *worse* when wholly below; the intervals are each "
                  f"one comparison's, the last p is the randomisation test's adjusted by Holm over the {len(variants)} "
                  "settings):", "",
                  f"| model | MAP - {CHECKED} (points) | 95% interval (points) | t-test p | randomisation p | questions "
                  "| Holm-adjusted randomisation p | verdict |", "|---|---|---|---|---|---|---|---|"]
        rows = against_baseline({m: results[m]["values"]["map"] for m in (CHECKED, *variants)}, CHECKED, "map")
        for model, row in ((row.system, row) for row in rows):
            lines.append(f"| {model} | {_interval(row)} | {row.rand_p_holm:.2g} | "
                         f"**{better(row.ci_low, row.ci_high)}** |")
    return "\n".join(lines)


INTRO = ("Each data set is one this project was not developed on, in the (question, candidate, label) TSV form. "
         "Every step is a `structrank` command with its defaults, as a user runs it: `featurize qa` (fitted on the "
         "training file) and `train lsp-ap` for the feature-based LSP-AP; `train xenc-...` on the TSV for the "
         "cross-encoder (the encoder it ships with, no --vali: its last epoch); `predict` on the test file; `evaluate "
         "--convention trec --queries with-both` (trec_eval's rules, the questions with a correct and an incorrect "
         "candidate). Seconds are wall times of the whole process on this machine's threads. The interval is the "
         "paired t-test's 95% interval over the test questions; the randomisation test is `structrank compare`'s. "
         f"The verdict rule: *well above* holds when the whole interval lies above +{100 * WELL_ABOVE:.0f} points, "
         "does not hold when it lies wholly below, otherwise inconclusive. Rows `xenc-crf-kl --set ...` are the "
         "settings docs/XENC_WIKIQA_CLI.md tried on WikiQA (the mean-pooled head; a soup of fine-tunings whose "
         "weights are averaged, here one after the other on the cores given), each otherwise with the defaults: "
         "the mean-pooled head was set there after a look at WikiQA's test, and this data set played no part in "
         "that choice. A cross-encoder row run at several seeds (`--set random_state=S`, 0 being the default; the "
         "seeds column) shows and pairs each test question's mean over them.")


def page(sections: list[str], command: str) -> str:
    """The whole page: the command that made it, what every section ran, the sections."""
    return "\n\n".join([f"<!-- Generated by `{command}`; do not edit by hand, run the command again. -->\n"
                         "# Answer selection on held-out data sets, with defaults", INTRO, *sections]) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m structrank_lab.experiments.heldout_qa",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="the markdown page to write")
    parser.add_argument("--heldout", action="append", required=True, metavar="NAME=TRAIN,TEST",
                        help="a held-out data set: its name, training TSV and test TSV (repeatable)")
    parser.add_argument("--work", help="folder keeping each step's output, so a rerun resumes (default: a "
                                       "temporary folder)")
    parser.add_argument("--models", default=",".join(MODELS),
                        help=f"the cross-encoder models, comma-separated (default {','.join(MODELS)})")
    parser.add_argument("--variants", default=",".join(VARIANTS),
                        help=f"settings of {CHECKED} tried on WikiQA, comma-separated, of {', '.join(VARIANTS)} "
                             "(default: all)")
    parser.add_argument("--seeds", default="0", help="the cross-encoders' seeds, comma-separated (default 0: "
                                                     "their default); each question's value is the mean over them")
    parser.add_argument("--record", help="JSON keeping what the page shows: a model of a data set in it is not run "
                                         "again (delete its entry to run it again)")
    args = parser.parse_args(argv)
    sets = [heldout_spec(spec, parser) for spec in args.heldout]
    models = [m for m in args.models.split(",") if m]
    variants = [v for v in args.variants.split(",") if v]
    try:
        seeds = [int(seed) for seed in args.seeds.split(",") if seed]
    except ValueError:
        parser.error(f"--seeds {args.seeds!r}: give whole numbers, comma-separated")
    if not seeds or min(seeds) < 0 or len(set(seeds)) < len(seeds):
        parser.error(f"--seeds {args.seeds!r}: give distinct seeds of 0 or more")
    unknown = sorted(set(variants) - set(VARIANTS))
    if unknown:
        parser.error(f"--variants: {unknown[0]!r} is not one of {', '.join(VARIANTS)}")
    record_path = Path(args.record) if args.record else None
    record = json.loads(record_path.read_text()) if record_path and record_path.exists() else {}
    sections = []
    with tempfile.TemporaryDirectory() as folder:
        work = Path(args.work or folder)
        for name, train, test in sets:
            print(f"{name}:", file=sys.stderr)
            kept = record.get(name)
            wanted = [f"{FEATURES} (features)", *models, *map(variant_name, variants)]
            if kept is None or not set(wanted) <= set(kept["models"]):
                folder = work / name.replace("/", "_")
                recorded = set(kept["models"]) if kept else set()  # run only what the record lacks (and LSP-AP)
                results = run_dataset(train, test, folder, [m for m in models if m not in recorded],
                                      [v for v in variants if variant_name(v) not in recorded], seeds)
                kept = record[name] = to_record(results, train, test, kept, folder)
                if record_path:
                    write_text_atomic(record_path, dumps(record))
            recorded = from_record(kept)
            results = {m: recorded[m] for m in wanted}
            sections.append(dataset_section(name, kept, results))
    return write_page(args.out, "structrank_lab.experiments.heldout_qa", argv, lambda command: page(sections, command))


if __name__ == "__main__":
    sys.exit(main())
