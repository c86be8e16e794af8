"""Answer selection on held-out data sets, through the CLI with defaults: ``docs/HELDOUT_QA.md``.

    python -m structrank_lab.experiments.heldout_qa --out docs/HELDOUT_QA.md \\
        --heldout NAME=TRAIN,TEST [...] [--work DIR] [--models xenc-crf-kl,...]

What a user with a new answer-selection data set in the (question, candidate, label) TSV form runs, each step its
own ``structrank`` process with its defaults (no ``--vali``, no ``--set``): the feature-based LSP-AP
(``featurize qa`` fitted on the training file, ``train lsp-ap``) and each cross-encoder model (``train xenc-...`` on
the TSV itself), ranked by ``predict`` and measured by ``evaluate`` on the test file under trec_eval's rules over
the questions with a correct and an incorrect candidate. Every cross-encoder model is paired with LSP-AP over the
test questions. The files are the user's: none is kept in the repository.

A fine-tuning takes most of an hour on one core, so the steps are kept in ``--work``: a step whose output and its
timing file are there is not run again (delete them to rerun it).
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

import numpy as np

from structrank.data import read_letor
from structrank.errors import StructRankError
from structrank.metrics.compare import against_baseline
from structrank.qa import read_qa_tsv
from structrank_lab.experiments.cli_pages import heldout_spec, per_question, timed_step, write_page

FEATURES = "lsp-ap"
MODELS = ("xenc-crf-kl",)
METRICS = ("map", "mrr", "p@1")
#: "well above": the paired t-test's interval of (model - LSP-AP) MAP lies wholly above this many points. Fixed before
#: the first cross-encoder result on a held-out set was known.
WELL_ABOVE = 0.02


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


def _text_model(name: str, train: Path, test: Path, work: Path) -> dict:
    model, scores = work / name, work / f"{name}.scores"
    fit = timed_step(work, f"train-{name}", model, "train", name, "--train", str(train), "--out", str(model), "--quiet")
    predict = timed_step(work, f"predict-{name}", scores, "predict", "--model", str(model), "--data", str(test),
                         "--out", str(scores), "--quiet")
    return {"values": per_question(test, scores, METRICS), "train": fit, "predict": predict}


def run_dataset(train: Path, test: Path, work: Path, models=MODELS) -> dict:
    """{model: {"values": {metric: {qid: value}}, "train", "predict": each step's timing}} on one data set,
    LSP-AP first."""
    work.mkdir(parents=True, exist_ok=True)
    out = {f"{FEATURES} (features)": _features_model(train, test, work)}
    for name in models:
        out[name] = _text_model(name, train, test, work)
    for name, r in out.items():
        print(f"  {name}: MAP {_mean(r['values']['map']):.4f} (train {r['train']['seconds']:.0f} s)", file=sys.stderr)
    return out


def _timed(step: dict) -> str:
    cores = step.get("cores")
    return f"{step['seconds']:.0f}" + ("" if cores is None else f" ({cores} core{'' if cores == 1 else 's'})")


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


def dataset_section(name: str, train: Path, test: Path, results: dict) -> str:
    """Markdown: each model's test values and seconds, and each cross-encoder model against LSP-AP (paired)."""
    baseline = next(iter(results))
    lines = [f"## {name}", "", f"- train: `{train.name}`, {_size(train)}; test: `{test.name}`, {_size(test)}.", "",
             "| model | MAP | MRR | P@1 | train seconds (the whole process, its cores) | predict seconds |",
             "|---|---|---|---|---|---|"]
    for model, r in results.items():
        lines.append(f"| {model} | " + " | ".join(f"{_mean(r['values'][m]):.4f}" for m in METRICS)
                     + f" | {_timed(r['train'])} | {_timed(r['predict'])} |")
    lines += ["", f"| model | MAP - {baseline} (points) | 95% interval (points) | t-test p | randomisation p | "
              f"questions | well above (interval above +{100 * WELL_ABOVE:.0f}) |", "|---|---|---|---|---|---|---|"]
    for model in list(results)[1:]:
        row = against_baseline({baseline: results[baseline]["values"]["map"],
                                model: results[model]["values"]["map"]}, baseline, "map")[0]
        lines.append(f"| {model} | {100 * row.difference:+.2f} | [{100 * row.ci_low:+.2f}, {100 * row.ci_high:+.2f}] | "
                     f"{row.t_p:.2g} | {row.rand_p:.2g} | {row.queries} | **{verdict(row.ci_low, row.ci_high)}** |")
    return "\n".join(lines)


INTRO = ("Each data set is one this project was not developed on, in the (question, candidate, label) TSV form. "
         "Every step is a `structrank` command with its defaults, as a user runs it: `featurize qa` (fitted on the "
         "training file) and `train lsp-ap` for the feature-based LSP-AP; `train xenc-...` on the TSV for the "
         "cross-encoder (the encoder it ships with, no --vali: its last epoch); `predict` on the test file; `evaluate "
         "--convention trec --queries with-both` (trec_eval's rules, the questions with a correct and an incorrect "
         "candidate). Seconds are wall times of the whole process on this machine's threads. The interval is the "
         "paired t-test's 95% interval over the test questions; the randomisation test is `structrank compare`'s. "
         f"The verdict rule: *well above* holds when the whole interval lies above +{100 * WELL_ABOVE:.0f} points, "
         "does not hold when it lies wholly below, otherwise inconclusive.")


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
    args = parser.parse_args(argv)
    sets = [heldout_spec(spec, parser) for spec in args.heldout]
    models = [m for m in args.models.split(",") if m]
    sections = []
    with tempfile.TemporaryDirectory() as folder:
        work = Path(args.work or folder)
        for name, train, test in sets:
            print(f"{name}:", file=sys.stderr)
            results = run_dataset(train, test, work / name.replace("/", "_"), models)
            sections.append(dataset_section(name, train, test, results))
    return write_page(args.out, "structrank_lab.experiments.heldout_qa", argv, lambda command: page(sections, command))


if __name__ == "__main__":
    sys.exit(main())
