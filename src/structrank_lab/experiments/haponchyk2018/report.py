"""The report of haponchyk2018: Tables 1-4 beside the published rows, the margins over the SVM, Fig. 1 and the
grid study."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from structrank_lab.experiments.haponchyk2018.design import (CV_ROWS, EMBEDDING_SETS, FEATURE_TITLES, GRID_STUDY,
                                                         MAX_EFFECTIVE_C, MAX_EXTENSION, METRICS, ROWS, SUM_ROW,
                                                         TEXT_SETS)
from structrank_lab.experiments.haponchyk2018.published import PAPER, PAPER_C_GRID
from structrank_lab.experiments.haponchyk2018.recorded import (_curves, _cv_rows, _number, _official_map, _official_rows,
                                                           _study, _sum_queries)
from structrank_lab.experiments.report import markdown_table
from structrank.figures import new_figure, save_figure


def _official_table(rows, feature_set, split, paper_key=None):
    mine = _official_rows(rows, feature_set)
    part = [{"model": r["model"], "metric": r["metric"].split(":", 1)[1], "value": r["value"]} for r in mine
            if r["metric"].startswith(split + ":")]
    if not part:
        return None
    chosen = {r["model"]: r["value"] for r in mine if r["metric"] == "chosen:C"}
    epochs = {r["model"]: r["value"] for r in mine if r["metric"] == "chosen:epoch"}
    for model in {p["model"] for p in part}:
        if model in chosen:
            part.append({"model": model, "metric": "C", "value": chosen[model]})
        if model in epochs:
            part.append({"model": model, "metric": "T", "value": epochs[model]})
    for model, values in (PAPER.get(paper_key) or {}).items():
        for metric, value in zip(METRICS, values):
            part.append({"model": f"paper: {model}", "metric": metric, "value": value / 100})
    order = [m for m in ROWS if any(p["model"] == m for p in part)]
    order += [f"paper: {m}" for m in (PAPER.get(paper_key) or {})]
    return markdown_table(part, std=False, fmt="{:.4f}", row_order=order, column_order=[*METRICS, "C", "T"])


def _margin_section(rows, feature_set="sim"):
    """Each model's MAP margin over the SVM baseline, ours against the paper's, and what our
    features add to each model over the paper's: the feature gap."""
    part, lifts = [], {}
    for split in ("dev", "test"):
        ours, paper = _official_map(rows, feature_set, split), PAPER[("wikiqa", "sim", split)]
        if "SVM" not in ours:
            continue
        for model in ROWS:
            if model not in ours:
                continue
            cells = {"ours": ours[model], "ours - SVM": ours[model] - ours["SVM"]}
            if model in paper:
                cells.update({"paper": paper[model][0] / 100,
                              "paper - SVM": (paper[model][0] - paper["SVM"][0]) / 100,
                              "ours - paper": ours[model] - paper[model][0] / 100})
                lifts[(split, model)] = cells["ours - paper"]
            part += [{"model": f"{split}: {model}", "metric": k, "value": v} for k, v in cells.items()]
    if not part:
        return None
    order = [f"{split}: {m}" for split in ("dev", "test") for m in ROWS]
    order = [o for o in order if any(p["model"] == o for p in part)]
    table = markdown_table(part, std=False, fmt="{:.4f}", row_order=order,
                           column_order=["ours", "ours - SVM", "paper", "paper - SVM", "ours - paper"])
    test = {m: v for (split, m), v in lifts.items() if split == "test"}
    dev_margins = [p["value"] for p in part if p["model"].startswith("dev: ") and p["metric"] == "ours - SVM"
                   and p["model"] != "dev: SVM"]
    note = (f"MAP on WikiQA with {FEATURE_TITLES[feature_set]}. `ours - SVM` is a model's margin over the SVM "
            "baseline (polynomial kernel, first 10 candidates per training question), `paper - SVM` the paper's, "
            "`ours - paper` what our features and implementation add to the model over the published value.")
    if "SVM" in test and len(test) > 1:
        others = [v for m, v in test.items() if m != "SVM"]
        note += (f" On test these features lift the SVM baseline by {100 * test['SVM']:+.1f} points over the paper's, "
                 f"and the structured models by {100 * min(others):+.1f} to {100 * max(others):+.1f}: ")
        note += ("the pointwise classifier gains most from them, so the structured models' margin over it is "
                 "smaller than the paper's." if test["SVM"] > max(others) else
                 "the pointwise classifier does not gain most from them." if test["SVM"] < min(others) else
                 "the pointwise classifier gains more than some structured models and less than others.")
        note += " C and T were chosen on dev only."
    if dev_margins:
        note += (" On dev, where the hyper-parameters were chosen, the structured models are "
                 f"{100 * min(dev_margins):+.1f} to {100 * max(dev_margins):+.1f} points from the SVM.")
    return note + "\n\n" + table


def _grid_section(rows, feature_set):
    """The grid study: dev MAP (the selection value) at every C fitted, the choices, and where they sit."""
    study = _study(rows, feature_set)
    if not study:
        return None
    lines = ["| model | base grid | fitted | chosen in base grid | chosen overall | at an end | dev MAP | test MAP "
             "| not yet fitted |", "|---|---|---|---|---|---|---|---|---|"]
    for model in ROWS:
        if model not in study:
            continue
        s = study[model]
        best = s["choice"]
        lines.append(f"| {model} | {', '.join(_number(c) for c in GRID_STUDY[model])} | "
                     f"{_number(s['points'][0])} .. {_number(s['points'][-1])} ({len(s['points'])}) | "
                     f"{_number(s['base_choice']) if s['base_choice'] is not None else '—'} | {_number(best)} | "
                     f"{'yes' if s['at_edge'] else 'no'} | {s['select'][best]:.4f} | "
                     f"{s['test'].get(best, float('nan')):.4f} | "
                     f"{', '.join(_number(c) for c in s['missing']) or '—'} |")
    points = sorted({c for s in study.values() for c in s["points"]})
    per_point = ["| model | " + " | ".join(_number(c) for c in points) + " |", "|---|" + "---|" * len(points)]
    for model in ROWS:
        if model in study:
            s = study[model]
            per_point.append(f"| {model} | " + " | ".join(
                ("**{:.4f}**" if c == s["choice"] else "{:.4f}").format(s["select"][c]) if c in s["select"] else ""
                for c in points) + " |")
    note = (f"WikiQA, {FEATURE_TITLES[feature_set]}: one fit per C. The base grid is Table 1's, with the paper's "
            f"{{{', '.join(_number(c) for c in PAPER_C_GRID)}}} added for the models the paper tuned on it; while the "
            f"best dev MAP (letor4, the selection value; the smallest C on ties) sits at an end, the grid grows by one "
            f"1-2-5 step past it, at most {MAX_EXTENSION} on each side and never past an effective C of "
            f"{MAX_EFFECTIVE_C:g}. `at an end`: the choice is still at an end of what was fitted. "
            f"`{SUM_ROW}` is LSSVM-AP under Eq. 4 as printed (C on the sum of the slacks): its C times the "
            f"{_sum_queries(rows)} training questions is the C of our mean.")
    return note + "\n\n" + "\n".join(lines) + "\n\nDev MAP at each C (chosen in bold):\n\n" + "\n".join(per_point)


def _cv_table(rows, dataset, feature_set="sim"):
    part = [{"model": r["model"], "metric": r["metric"][len("test:"):], "value": r["value"]}
            for r in _cv_rows(rows, dataset, feature_set) if r["metric"].startswith("test:")]
    if not part:
        return None
    for model, values in PAPER[(dataset, "cv")].items():
        for metric, value in zip(METRICS, values):
            part.append({"model": f"paper: {model}", "metric": metric, "value": value / 100})
    order = [m for m in CV_ROWS] + [f"paper: {m}" for m in PAPER[(dataset, "cv")]]
    return markdown_table(part, std=True, fmt="{:.4f}", row_order=order, column_order=list(METRICS))


def _curve_figure(rows, out, link_prefix, feature_set="sim"):
    series = _curves(rows, feature_set)
    if not series:
        return None
    fig = new_figure(figsize=(5.5, 3.5))
    ax = fig.add_subplot()
    for model, values in series.items():
        ax.plot(np.arange(1, values.size + 1), values, label=model)
    ax.set_xlabel("epoch")
    ax.set_ylabel("dev MAP (averaged weights)")
    ax.set_title(f"WikiQA dev, {'similarity features' if feature_set == 'sim' else 'the paper feature list'}, "
                 "C chosen on dev", fontsize=9)
    ax.legend(fontsize=8)
    name = "fig1-lsp-dev-curves.png" if feature_set == "sim" else f"fig1-lsp-dev-curves-{feature_set}.png"
    save_figure(fig, Path(out) / name)
    return f"![Fig. 1]({link_prefix}{name})"


def report_sections(rows, out, link_prefix=""):
    """The report's sections (title, markdown); Fig. 1 is written into ``out``."""
    sections = []
    note = ("MAP, MRR and P@1 by trec_eval's rules (convention `trec`) over the questions with a correct and an "
            "incorrect candidate; C (and the perceptrons' epoch T) chosen on dev. Rows `paper:` are the published "
            "values, for comparison only.")
    paper_note = (" The features: the paper's list (Sec. 5.1, after Barrón-Cedeño et al. 2016) as far as it can be "
                  "rebuilt here: our cosine, Jaccard, containment, longest common substring/subsequence and greedy "
                  "string tiling columns (`qa.features.PAPER_FEATURES`) and the PTK similarity of the two texts' "
                  "shallow trees (`structrank_lab.nlp.syntax`); its ESA similarity needs a Wikipedia index and is left out. "
                  "SVM-map's C comes from the paper's grid {1, 10, 100, 1000, 2000, 5000} here (on our features from "
                  "{0.01, ..., 1000}).")
    for feature_set in TEXT_SETS:
        suffix = "" if feature_set == "sim" else f" ({FEATURE_TITLES[feature_set]})"
        for split in ("dev", "test"):
            table = _official_table(rows, feature_set, split, ("wikiqa", "sim", split))
            if table:
                title = (f"Table 1: WikiQA {split}, similarity features" if feature_set == "sim"
                         else f"Table 1: WikiQA {split}, {FEATURE_TITLES[feature_set]}")
                sections.append((title, note + (paper_note if feature_set == "paper" else "") + "\n\n" + table))
        margins = _margin_section(rows, feature_set)
        if margins:
            sections.append((f"Table 1: the margin over the SVM baseline, ours against the paper's{suffix}", margins))
    for feature_set in EMBEDDING_SETS:
        for split in ("dev", "test"):
            table = _official_table(rows, feature_set, split, ("wikiqa", "cnn", split) if feature_set == "emb-concat"
                                    else None)
            if table:
                what = {"emb-concat": "the paper's concatenation [phi(q), phi(d)]",
                        "emb-interaction": "interaction features [cos(phi(q), phi(d)), phi(q) * phi(d)]",
                        "sim+emb-interaction": "similarity and interaction features"}[feature_set]
                sections.append((f"Table 2: WikiQA {split}, all-MiniLM-L6-v2 embeddings: {what}",
                                 note + (" Paper rows: its CNN embeddings (concatenated); SVM-map's C from the "
                                         "paper's grid, as there.") * (feature_set == "emb-concat")
                                 + "\n\n" + table))
    for feature_set in TEXT_SETS:
        for dataset, number in (("wikiqa", 3), ("trec13", 4)):
            table = _cv_table(rows, dataset, feature_set)
            if table:
                suffix = "" if feature_set == "sim" else f", {FEATURE_TITLES[feature_set]}"
                sections.append((f"Table {number}: {dataset} disjoint 5-fold cross-validation (test folds, mean ± std)"
                                 + suffix,
                                 "Model i trains on the training questions outside fold i, is tuned on the i-th fifth of "
                                 "dev and tested on the i-th fifth of test (every 5th question, in file order). "
                                 + ("TREC13 training: TRAIN-ALL, first 10 candidates per question, then the questions "
                                    "with both labels (970, as in the paper)." if dataset == "trec13" else "")
                                 + "\n\n" + table))
    for feature_set in TEXT_SETS:
        figure = _curve_figure(rows, out, link_prefix, feature_set)
        if figure:
            suffix = "" if feature_set == "sim" else f", {FEATURE_TITLES[feature_set]}"
            sections.append((f"Fig. 1: dev MAP per epoch (LSP, LSP-AP, LSP-AP*){suffix}", figure))
    for feature_set in TEXT_SETS:
        grids = _grid_section(rows, feature_set)
        if grids:
            sections.append((f"The C grids and Eq. 4's sum: {FEATURE_TITLES[feature_set]}", grids))
    return sections
