"""The CLI acceptance of the cross-encoder on WikiQA: `docs/XENC_WIKIQA_CLI.md`.

    python -m structrank_lab.experiments.wikiqa_cli --out docs/XENC_WIKIQA_CLI.md \\
        --record results/xenc-wikiqa-cli.json [--work DIR] [--recipes default,trec-first,...]

Each recipe is the ``structrank`` commands a user runs, each its own process: ``train xenc-crf-kl`` with
``--vali`` and ``--queries with-both``, ``predict`` on WikiQA test, ``evaluate`` under trec_eval's rules over the
questions with a correct and an incorrect candidate. ``default`` trains on WikiQA's training file from the encoder
structrank ships with. ``trec-first`` trains first on TREC QA TRAIN-ALL (its epoch on TREC QA dev), then on WikiQA
with ``--set encoder=`` that model (transfer, then adapt). ``default-torchrun`` is ``default`` trained by several
processes under torchrun. ``soup-3`` averages three fine-tunings' weights (``--set soup=3``), trained at once;
``soup-3-mean`` does so with the mean-pooled head, and ``soup-3-mean-seed-1`` repeats it at another seed. ``title``
and ``soup-3-title`` are ``default`` and ``soup-3`` reading each sentence with its Wikipedia page's title
(``--set titles=true``: WikiQA's DocumentTitle column, "title. sentence"); ``default-seed-1`` and
``title-seed-1`` repeat ``default`` and ``title`` at seed 1, ``default-seed-2`` and ``title-seed-2`` at seed 2, and
the page pairs the two settings over the seeds; ``soup-3-title-seed-1`` repeats ``soup-3-title`` so;
``soup-3-mean-title`` joins the mean head and the titles. The saved folder is loaded in
``sentence_transformers.CrossEncoder`` and its test scores set against ``structrank predict``'s.

A recipe's fine-tunings take most of an hour on one core: each step is kept in ``--work`` (a rerun resumes), and what
a recipe measured (its steps' seconds and commands, each test question's values, the CrossEncoder difference) in
``--record``, a small JSON file kept in the repository, so that the page is regenerated without a rerun (delete a
recipe's entry to run it again).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

from structrank.atomic import write_text_atomic
from structrank.cross_encoder_models import read_header
from structrank.learners.registry import get_model
from structrank.paths import data_dir
from structrank.qa.pairs_files import read_pairs_file
from structrank.qa.readers import qa_file
from structrank_lab.experiments.cli_pages import per_question, timed_step, write_page
from structrank_lab.experiments.neural_qa.design import MAX_RUN_SECONDS, TARGET_MAP
from structrank_lab.experiments.verdict_rules import direction, not_below
from structrank_lab.experiments.verdict_sets import constant
from structrank_lab.experiments.verdicts import FAILS, HOLDS, INCONCLUSIVE

MODEL = "xenc-crf-kl"
METRICS = ("map", "mrr")
RECIPES = ("default", "trec-first", "default-torchrun", "soup-3", "soup-3-mean", "soup-3-mean-seed-1", "title",
           "soup-3-title", "default-seed-1", "title-seed-1", "soup-3-title-seed-1", "default-seed-2", "title-seed-2",
           "soup-3-mean-title")
#: the fine-tunings a soup recipe averages, trained at once (one process each, the cores shared out among them)
SOUP = 3
#: what each recipe adds to `train`'s command line (trec-first's encoder is its first model, added when it runs)
SETTINGS = {"soup-3": ("--set", f"soup={SOUP}", "--set", f"n_jobs={SOUP}"),
            "soup-3-mean": ("--set", f"soup={SOUP}", "--set", f"n_jobs={SOUP}", "--set", "head=mean"),
            "soup-3-mean-seed-1": ("--set", f"soup={SOUP}", "--set", f"n_jobs={SOUP}", "--set", "head=mean",
                                   "--set", "random_state=1"),
            "title": ("--set", "titles=true"),
            "soup-3-title": ("--set", f"soup={SOUP}", "--set", f"n_jobs={SOUP}", "--set", "titles=true"),
            "default-seed-1": ("--set", "random_state=1"),
            "title-seed-1": ("--set", "titles=true", "--set", "random_state=1"),
            "soup-3-title-seed-1": ("--set", f"soup={SOUP}", "--set", f"n_jobs={SOUP}", "--set", "titles=true",
                                    "--set", "random_state=1"),
            "default-seed-2": ("--set", "random_state=2"),
            "title-seed-2": ("--set", "titles=true", "--set", "random_state=2"),
            "soup-3-mean-title": ("--set", f"soup={SOUP}", "--set", f"n_jobs={SOUP}", "--set", "head=mean", "--set",
                                  "titles=true")}
#: recipes that repeat another at another seed: shown, never chosen (vali choosing among seeds would pick a draw)
REPEATS = ("soup-3-mean-seed-1", "default-seed-1", "title-seed-1", "soup-3-title-seed-1", "default-seed-2",
           "title-seed-2")
#: a setting and the recipes that run it at seeds 0, 1 and 2, paired with the defaults' over the seeds
OVER_SEEDS = {"default": ("default", "default-seed-1", "default-seed-2"),
              "title": ("title", "title-seed-1", "title-seed-2")}
#: the processes torchrun starts in the default-torchrun recipe (gloo on the CPU, one torch thread each)
PROCESSES = 2
#: the model the trec-first recipe trains first (its own name: each step's output is kept in the work folder by name)
FIRST = "trec-train-all"
#: the CrossEncoder's scores against structrank's, as the issue asks
SAME_SCORES = 1e-5


def _files(data: Path) -> dict:
    return {**{split: qa_file("wikiqa", split, data) for split in ("train", "dev", "test")},
            "trec-train": qa_file("trec13", "train", data), "trec-dev": qa_file("trec13", "dev", data)}


def _train(work: Path, name: str, train: Path, vali: Path, *extra: str, processes: int = 1) -> tuple[Path, dict]:
    model = work / name
    step = timed_step(work, f"train-{name}", model, "train", MODEL, "--train", str(train), "--vali", str(vali),
                      "--queries", "with-both", *extra, "--out", str(model), "--quiet", processes=processes)
    return model, step


def run_recipe(recipe: str, data: Path, work: Path) -> dict:
    """What ``recipe`` measured: {"steps": [each step's timing], "values": {metric: {qid: value}},
    "crossencoder_difference": the largest |CrossEncoder's score - structrank's| over the test pairs}."""
    files = _files(data)
    work.mkdir(parents=True, exist_ok=True)
    steps = []
    extra = SETTINGS.get(recipe, ())
    if recipe == "trec-first":
        first, step = _train(work, FIRST, files["trec-train"], files["trec-dev"])
        steps.append(step)
        extra = ("--set", f"encoder={first}")
    model, step = _train(work, recipe, files["train"], files["dev"], *extra,
                         processes=PROCESSES if recipe == "default-torchrun" else 1)
    steps.append(step)
    scores = work / f"{recipe}.scores"
    steps.append(timed_step(work, f"predict-{recipe}", scores, "predict", "--model", str(model), "--data",
                            str(files["test"]), "--out", str(scores), "--quiet"))
    for step in steps:  # the commands as a user on any machine reads them
        step["command"] = step["command"].replace(str(data), "$STRUCTRANK_DATA").replace(str(work), "$WORK")
    return {"steps": steps, "values": per_question(files["test"], scores, METRICS),
            "crossencoder_difference": crossencoder_difference(model, files["test"], scores), "vali": vali_values(model)}


def vali_values(model: Path) -> dict:
    """What the saved model's header says it measured on --vali: {"each": each fine-tuning's value at its kept
    epoch, "epochs": those epochs, "model": the saved network's value}."""
    attributes = read_header(model)["attributes"]
    if "member_dev_" not in attributes:  # saved before soups: one fine-tuning, its value at its kept epoch
        kept = attributes["dev_curve_"][attributes["dev_epochs_"].index(attributes["best_epoch_"])]
        return {"each": [kept], "epochs": [attributes["best_epoch_"]], "model": kept}
    return {"each": attributes["member_dev_"], "epochs": attributes["member_epochs_"],
            "model": attributes["soup_dev_"]}


def crossencoder_difference(model: Path, test: Path, scores: Path) -> float:
    """The largest |score| difference over ``test``'s pairs between ``sentence_transformers.CrossEncoder(model)``
    and the scores ``structrank predict`` wrote."""
    from sentence_transformers import CrossEncoder  # deferred: the text extra, only when a recipe runs

    data = read_pairs_file(test)
    # a model that reads titles is served the candidates so joined
    candidates = data.titled_candidates() if read_header(model)["params"].get("titles") else data.candidates
    theirs = CrossEncoder(str(model)).predict(list(zip(data.pair_questions(), candidates)), batch_size=64)
    ours = np.loadtxt(scores, dtype=float, ndmin=1)
    return float(np.max(np.abs(np.asarray(theirs, dtype=float) - ours)))


def _seconds(record: dict, kind: str) -> float:
    """The seconds of a recipe's ``kind`` steps (``train``, ``predict``), launched under torchrun or not."""
    words = [step["command"].split() for step in record["steps"]]
    return sum(step["seconds"] for step, w in zip(record["steps"], words) if w[w.index("structrank") + 1] == kind)


def vali_cell(record: dict) -> str:
    """Each fine-tuning's value on --vali at its kept epoch and the saved network's ("-" where not recorded)."""
    vali = record.get("vali")
    if vali is None:
        return "-"
    each = " / ".join(f"{value:.4f}" for value in vali["each"])
    return each if len(vali["each"]) == 1 else f"{each}; averaged: {vali['model']:.4f}"


def recipe_row(recipe: str, record: dict) -> str:
    values = np.array([v for _, v in sorted(record["values"]["map"].items())])  # the randomisation test's draws
    # follow the order of its values: by question id, as the record keeps them, so that a regeneration is the same
    judged = not_below(values, constant(TARGET_MAP, values.size), margin=0.0, units="questions")
    train, difference = _seconds(record, "train"), record["crossencoder_difference"]
    cores = sorted({step["cores"] for step in record["steps"]})
    return (f"| {recipe} | {vali_cell(record)} | {values.mean():.4f} | "
            f"{np.mean(list(record['values']['mrr'].values())):.4f} | "
            f"**{judged.verdict}**: {judged.interval} | {train:.0f} ({'/'.join(map(str, cores))} core"
            f"{'' if cores == [1] else 's'}): **{'within' if train <= MAX_RUN_SECONDS else 'past'}** "
            f"{MAX_RUN_SECONDS // 60} min | {_seconds(record, 'predict'):.0f} | "
            f"{difference:.1e}: **{'same' if difference <= SAME_SCORES else 'differs'}** |")


def page(records: dict, command: str) -> str:
    lines = [f"<!-- Generated by `{command}`; do not edit by hand, run the command again. -->",
             f"# `structrank train {MODEL}` on WikiQA through the CLI: the acceptance of issue 61", "",
             "What each recipe runs, each step its own `structrank` process (the commands below, as run; `$WORK` is "
             "the work folder). `default` is the acceptance as the issue words it, WikiQA's files alone; `trec-first` "
             "also reads TREC QA's training and dev questions (transfer, then adapt); `default-torchrun` is `default` "
             f"trained by {PROCESSES} processes under torchrun (DDP over gloo on the CPU, one torch thread each, each "
             f"process a share of every step's questions). `soup-{SOUP}` is `default` with `--set soup={SOUP} --set "
             f"n_jobs={SOUP}`: {SOUP} fine-tunings from the same start network (the encoder and one new head), each "
             "with its own order of the questions, dropout and CRF subsets and its own epoch kept on dev, their "
             f"weights averaged into one network (a uniform model soup), the {SOUP} trained at once by processes "
             f"sharing the cores. `soup-{SOUP}-mean` is `soup-{SOUP}` with `--set head=mean` (a linear layer over the "
             "mean of the token vectors): a head set by hand, not chosen on dev by this page, and a recipe added after "
             "docs/XENC_CRF_KL_DEV.md had measured that head's test MAP (so its test MAP here is not free of that "
             "look; docs/HELDOUT_QA.md checks the head and the soups on a data set that played no part in the choice). "
             "`soup-3-mean-seed-1` repeats it with `--set random_state=1` (another head, fine-tunings from seeds 1 "
             "to 3): a second draw of the same recipe, shown beside it and not among vali's choices. `title` and "
             f"`soup-{SOUP}-title` are `default` and `soup-{SOUP}` with `--set titles=true`: each sentence read with "
             "the title of the Wikipedia page it comes from (WikiQA's DocumentTitle column, joined as \"title. "
             "sentence\"), as rerankers read a passage with its title; the CrossEncoder column serves the folder the "
             "sentences so joined. A question's candidates all come from one page, so the title tells them apart "
             "only through what it lets the network read in each sentence (a pronoun's referent, say: a "
             "hypothesis). `default-seed-1` and `title-seed-1` repeat `default` and `title` with `--set "
             "random_state=1`, `default-seed-2` and `title-seed-2` with `--set random_state=2`, shown and not among "
             "vali's choices; the sentence after the table pairs the two settings over the seeds. "
             f"`soup-{SOUP}-title-seed-1` repeats `soup-{SOUP}-title` so (fine-tunings from "
             f"seeds 1 to 3), also shown and not chosen. `soup-{SOUP}-mean-title` joins the mean-pooled head and the "
             f"titles in one soup (its head under the same look at the test as `soup-{SOUP}-mean`'s).", ""]
    for recipe, record in records.items():
        lines += [f"- {recipe}:"] + [f"  - `{step['command']}` ({step['seconds']:.0f} s)" for step in record["steps"]]
    lines += ["", "Test values are `structrank evaluate --convention trec --queries with-both` on WikiQA-test "
              f"({len(next(iter(records.values()))['values']['map'])} questions with a correct and an incorrect "
              f"candidate). The MAP target holds when the whole 95% interval of the test questions' mean AP lies at or "
              f"above {TARGET_MAP:.2f}, does not hold when it lies wholly below, else inconclusive (one run: a seed's "
              "spread is not in it; docs/NEURAL_QA.md has three seeds of each setting). Train seconds are the whole "
              "`train` processes' wall time, on the cores each could run on, beside whatever else the machine ran. "
              f"The CrossEncoder column is the largest difference over the test pairs between "
              f"`sentence_transformers.CrossEncoder(folder).predict` and `structrank predict`; same: at most "
              f"{SAME_SCORES:g}. The vali column is what `train` measured on WikiQA dev by the model's metric "
              f"({get_model(MODEL).metric_label}, which keeps each fine-tuning's epoch) at each fine-tuning's kept "
              "epoch, then the saved network's (- : not recorded by that recipe's run).", "",
              f"| recipe | vali {get_model(MODEL).metric_label} | test MAP | test MRR | MAP >= {TARGET_MAP:.2f} "
              "(interval, points) | train seconds | predict seconds | CrossEncoder |",
              "|---|---|---|---|---|---|---|---|"]
    lines += [recipe_row(recipe, record) for recipe, record in records.items()]
    return "\n".join(lines + chosen_on_vali(records) + vali_against_test(records) + titles_over_seeds(records)) + "\n"


def titles_over_seeds(records: dict) -> list:
    """The titles against the defaults over the seeds both have recorded (at least two; each test question's AP the
    mean over them), paired over the questions: the sentence saying so."""
    seeds = [i for i, pair in enumerate(zip(*OVER_SEEDS.values())) if all(recipe in records for recipe in pair)]
    if len(seeds) < 2:
        return []
    runs = {setting: [recipes[i] for i in seeds] for setting, recipes in OVER_SEEDS.items()}

    def mean_ap(setting):  # by question id, as the record keeps them
        return np.mean([[v for _, v in sorted(records[r]["values"]["map"].items())] for r in runs[setting]], axis=0)

    judged = direction(mean_ap("title"), mean_ap("default"), units="questions")
    vali = {setting: [records[r]["vali"]["model"] for r in runs[setting] if "vali" in records[r]] for setting in runs}
    words = {HOLDS: "better than", FAILS: "worse than", INCONCLUSIVE: "not told apart from"}
    named = " / ".join(str(i) for i in seeds)
    return ["", f"Over seeds {named} ({', '.join(f'`{r}`' for r in runs['title'])} against "
            f"{', '.join(f'`{r}`' for r in runs['default'])}), each test question's AP the mean over the seeds: the "
            f"titles are **{words[judged.verdict]}** the defaults ({judged.interval}; test MAP "
            f"{mean_ap('title').mean():.4f} against {mean_ap('default').mean():.4f}). On vali the titles measured "
            f"{' / '.join(f'{v:.4f}' for v in vali['title'])} against "
            f"{' / '.join(f'{v:.4f}' for v in vali['default'])} (seeds {named})."]


def chosen_on_vali(records: dict) -> list:
    """The sentence naming the recipe on WikiQA's files alone that vali ranks first, and its test MAP."""
    alone = {recipe: record for recipe, record in records.items()
             if recipe not in ("trec-first", *REPEATS) and "vali" in record}
    if not alone:
        return []
    best = max(alone, key=lambda recipe: alone[recipe]["vali"]["model"])  # ties: the first in the page's order
    value, test = alone[best]["vali"]["model"], np.mean(list(alone[best]["values"]["map"].values()))
    against = (f", {value - alone['default']['vali']['model']:+.4f} against default's"
               if "default" in alone and best != "default" else "")
    return ["", f"Chosen by vali among the recipes that read WikiQA's files alone ({', '.join(alone)}): **{best}** "
            f"(vali {value:.4f}{against}); its test MAP is {test:.4f}, "
            f"{'at or above' if test >= TARGET_MAP else 'below'} {TARGET_MAP:.2f} as a mean (its interval is the "
            "verdict in the table)."]


def vali_against_test(records: dict) -> list:
    """How far vali ranks the runs on WikiQA's files alone (repeats included: each run a draw) as test MAP ranks
    them: Spearman's rank correlation over the runs, the sentence saying so (from four runs)."""
    runs = {recipe: record for recipe, record in records.items() if recipe != "trec-first" and "vali" in record}
    if len(runs) < 4:
        return []
    vali = [record["vali"]["model"] for record in runs.values()]
    test = [np.mean(list(record["values"]["map"].values())) for record in runs.values()]
    rho, p = spearmanr(vali, test)
    reading = ("rank them alike" if p < 0.05 and rho > 0 else "rank them in opposite orders" if p < 0.05 else
               "are not seen to rank them alike, so vali's choice among these recipes says little of their test MAP")
    return ["", f"Over the {len(runs)} runs on WikiQA's files alone (the repeats included), vali and test MAP "
            f"{reading} (Spearman's rho {rho:+.2f}, p = {p:.2f})."]


def write_record(path: Path, records: dict) -> None:
    """The record of every recipe, written whole and atomically (sorted keys: a rerun writes the same text)."""
    write_text_atomic(path, json.dumps(records, indent=1, sort_keys=True) + "\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m structrank_lab.experiments.wikiqa_cli",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="the markdown page to write")
    parser.add_argument("--record", required=True, help="the JSON file of what each recipe measured (read, then "
                                                        "written with the recipes run)")
    parser.add_argument("--work", help="folder keeping each step's output, so a rerun resumes (default: temporary)")
    parser.add_argument("--recipes", default=",".join(RECIPES), help=f"comma-separated, of {', '.join(RECIPES)}")
    args = parser.parse_args(argv)
    recipes = [r for r in args.recipes.split(",") if r]
    unknown = sorted(set(recipes) - set(RECIPES))
    if unknown:
        parser.error(f"--recipes: {unknown[0]!r} is not one of {', '.join(RECIPES)}")
    record_path = Path(args.record)
    records = json.loads(record_path.read_text()) if record_path.exists() else {}
    with tempfile.TemporaryDirectory() as folder:
        for recipe in recipes:
            if recipe in records:
                continue
            print(f"{recipe}: running", file=sys.stderr)
            records[recipe] = run_recipe(recipe, data_dir(required=True), Path(args.work or folder))
            write_record(record_path, records)
    if args.work:  # a recipe recorded before its vali values were: read from its model folder, kept in --work
        found = {recipe: vali_values(Path(args.work) / recipe) for recipe, record in records.items()
                 if "vali" not in record and (Path(args.work) / recipe).is_dir()}
        if found:
            records = {recipe: {**record, **({"vali": found[recipe]} if recipe in found else {})}
                       for recipe, record in records.items()}
            write_record(record_path, records)
    kept = {recipe: records[recipe] for recipe in RECIPES if recipe in records}
    return write_page(args.out, "structrank_lab.experiments.wikiqa_cli", argv, lambda command: page(kept, command))


if __name__ == "__main__":
    sys.exit(main())
