"""The report of jagarlamudi2012: the tagger table, Tables 2 and 3 with the published rows, the significance
tables and Fig. 1."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from structrank_lab.experiments.jagarlamudi2012.design import (ABLATION, BOOSTING, CENTRE, HMM, HMM_FIRST, LANGUAGE_NAMES,
                                                           LANGUAGES, ON_FIRST, RERANKERS, TABLE2_MODELS, TAGGERS)
from structrank_lab.experiments.jagarlamudi2012.published import PAPER_TABLE2, PAPER_TABLE3
from structrank_lab.experiments.jagarlamudi2012.recorded import (_p, accuracy, best, best_boosting, collect, compare,
                                                             improvements)
from structrank_lab.experiments.runner import wall_time
from structrank.figures import new_figure, save_figure
from structrank_lab.nlp.conllu import UD_TAG_KIND


def _pct(value):
    return "—" if value is None or not np.isfinite(value) else f"{100 * value:.2f}"


def _table(header, lines):
    return "\n".join(["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
                     + ["| " + " | ".join(line) + " |" for line in lines])


def table2(runs, langs):
    header = ["model", *(f"dev {l}" for l in langs), *(f"test {l}" for l in langs)]
    lines = []
    for tagger, label in ((HMM, "Baseline"), (HMM_FIRST, "Baseline, first-order emissions (ours before)")):
        values = {l: runs.get((l, tagger, ()), {}) for l in langs}
        for row, metric in ((label, "accuracy"), (label.replace("Baseline", "Oracle"), "oracle")):
            lines.append([row, *(_pct(values[l].get(f"{s}:{metric}")) for s in ("dev", "test") for l in langs)])
    for model in TABLE2_MODELS:
        chosen = {l: best(runs, l, model) for l in langs}
        lines.append([model, *(_pct(chosen[l][1][f"{s}:accuracy"]) if chosen[l] else "—"
                               for s in ("dev", "test") for l in langs)])
    order = {l: i for i, l in enumerate(LANGUAGES)}
    for model, values in PAPER_TABLE2.items():
        lines.append([f"published: {model}", *(f"{values[order[l]]:.2f}" for l in langs),
                      *(f"{values[4 + order[l]]:.2f}" for l in langs)])
    return _table(header, lines)


def table3(runs, langs):
    lines = []
    for model in RERANKERS:
        chosen = {l: best(runs, l, model, "dev:accuracy_no_viterbi") for l in langs}
        lines.append([model, *(_pct(chosen[l][1][f"{s}:accuracy_no_viterbi"]) if chosen[l] else "—"
                               for s in ("dev", "test") for l in langs)])
    order = {l: i for i, l in enumerate(LANGUAGES)}
    for model, values in PAPER_TABLE3.items():
        lines.append([f"published: {model} (test)", *("" for _ in langs), *(f"{values[order[l]]:.2f}" for l in langs)])
    return _table(["model", *(f"dev {l}" for l in langs), *(f"test {l}" for l in langs)], lines)


def significance_table(runs, langs, models, against):
    """One row per (model, language): difference and p-values against ``against(lang)``."""
    lines = []
    for model in models:
        for l in langs:
            other = against(l)
            c = compare(runs, l, model, other) if other else None
            if c is None or model == other:
                continue
            lines.append([model, l, other, f"{c.points:+.2f}", str(c.differing), _p(c.rand_p), _p(c.t_p), _p(c.sign_p)])
    return _table(["model", "lang", "against", "test difference (points)", "sentences that differ",
                   "p randomisation", "p paired t", "p sign test"], lines)


def tagger_table(runs, langs):
    lines = []
    for l in langs:
        for tagger, label in ((HMM, "second-order (paper)"), (HMM_FIRST, "first-order (ours before)")):
            m = runs.get((l, tagger, ()), {})
            lines.append([LANGUAGE_NAMES[l], UD_TAG_KIND[l].upper(), label, _pct(m.get("dev:accuracy")),
                          _pct(m.get("test:accuracy")), _pct(m.get("dev:oracle")), _pct(m.get("test:oracle")),
                          _pct(m.get("test:unknown_rate")), _pct(m.get("test:known_accuracy")),
                          _pct(m.get("test:unknown_accuracy")),
                          f"{m.get('dev:nbest_per_second', float('nan')):.0f}",
                          f"{m.get('train_seconds', float('nan')):.1f}"])
    return _table(["treebank", "tags", "emissions", "dev acc", "test acc", "dev 10-best oracle", "test 10-best oracle",
                   "test unknown tokens", "test acc known", "test acc unknown", "10-best sentences/s (dev, one thread)",
                   "train s"], lines)


def fig1(runs, path, model="Discriminative", lang="en"):
    """English dev accuracy against tau and against lambda, the other parameters at the grid's centre.

    (The paper fixes them at their optimum; our grid is two lines through CENTRE, so the centre
    is where both lines exist.)
    """
    if best(runs, lang, model) is None:
        return False
    fixed = dict(CENTRE)
    baseline = runs.get((lang, HMM, ()), {}).get("dev:accuracy")
    fig = new_figure(figsize=(8, 3))
    for j, name in enumerate(("tau", "lam")):
        points = fig1_points(runs, name, model, lang)
        ax = fig.add_subplot(1, 2, j + 1)
        if points:
            xs, ys = zip(*points)
            ax.plot(xs, [100 * y for y in ys], marker="o", label=model)
        if baseline is not None:
            ax.axhline(100 * baseline, color="grey", linestyle="--", label="HMM")
        ax.set_xlabel({"tau": "tau", "lam": "lambda"}[name])
        ax.set_ylabel("dev token accuracy (%)")
        ax.set_title(", ".join(f"{k}={v:g}" for k, v in fixed.items() if k != name), fontsize=8)
        ax.legend(fontsize=7)
    fig.suptitle(f"Fig. 1: {LANGUAGE_NAMES[lang]} dev accuracy of the {model} reranker", fontsize=9)
    save_figure(fig, path)
    return True


def fig1_points(runs, name, model="Discriminative", lang="en"):
    """(value of ``name``, dev accuracy) along Fig. 1's line through CENTRE, sorted."""
    return sorted((dict(s)[name], m["dev:accuracy"]) for (l, mo, s), m in runs.items()
                  if l == lang and mo == model and "dev:accuracy" in m
                  and all(dict(s).get(k) == v for k, v in CENTRE.items() if k != name))


def _kind_of(flags):
    if not flags:
        return "not recorded"
    return "exact" if all(flags) else "diagonal" if not any(flags) else "exact in some settings, diagonal in others"


def report_sections(rows, out, link_prefix=""):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    runs = collect(rows)
    langs = [l for l in LANGUAGES if any(k[0] == l for k in runs)]
    if not langs:
        return [("No runs", "No runs are recorded yet.")]
    sections = [("The HMM taggers and their 10-best lists",
                 "The paper's baseline has second-order (\"trigram\") emissions P(w_i | t_{i-1}, t_i), smoothed as "
                 "Thede & Harper do; it makes the 10-best lists of every table below. The first-order HMM is "
                 "shown beside it. Unknown tokens are those not in the training split.\n\n"
                 + tagger_table(runs, langs))]
    gains = improvements(runs, langs)
    sections.append(("Table 2: token accuracy (%) of the HMM, the 10-best oracle and every reranker",
                     "Each reranker's setting (k, tau, lambda; the boosting rounds) and the Viterbi weight w of "
                     "Eq. 13 are chosen on dev. Rows `published:` are the paper's Table 2 (its own treebanks and "
                     "tagger), not run here.\n\n" + table2(runs, langs)
                     + "\n\nDiscriminative minus the HMM on test, in points: "
                     + ", ".join(f"{l} {g:+.2f}" for l, g in gains.items())
                     + f" (better on {sum(g > 0 for g in gains.values())} of {len(gains)} languages)."))
    boosting = {l: best_boosting(runs, l) for l in langs}
    sections.append(("Table 2: significance over test sentences",
                     "The paper reports significance (p = 0.01 Chinese, p = 0.05 English) without naming its test. "
                     "Here each test sentence is a pair (its correct tokens under the two systems, both at their "
                     "dev-chosen settings): the paired randomisation test (sign flips), the paired t-test, and the "
                     "exact sign test over the sentences that differ, all two-sided.\n\n"
                     "Against the HMM:\n\n"
                     + significance_table(runs, langs, (HMM_FIRST, *TABLE2_MODELS), lambda l: HMM)
                     + "\n\nThe low-dimensional rerankers against the best boosting reranker (best dev accuracy of the "
                     "four; " + ", ".join(f"{l}: {boosting[l]}" for l in langs if boosting[l]) + "):\n\n"
                     + significance_table(runs, langs, tuple(RERANKERS), boosting.get)))
    ablation = [m + ON_FIRST for m in ABLATION]
    if any(mo in ablation for (_, mo, _) in runs):
        lines = [[label, *(_pct(accuracy(runs, l, model, s)) for s in ("dev", "test") for l in langs)]
                 for label, model in (("HMM, first-order emissions", HMM_FIRST),
                                      *((m, m + ON_FIRST) for m in ABLATION))]
        sections.append(("Ablation: the rerankers on the first-order HMM's lists",
                         "The emission order of the baseline, one step further: the discriminative reranker (at the "
                         "paper's English optimum, k = 75, tau = 0.95, lambda = 0.3) and the four boosting rerankers "
                         "trained and tested on the lists of the first-order HMM instead (its own jackknifed training "
                         "lists), against that HMM.\n\n"
                         + _table(["model", *(f"dev {l}" for l in langs), *(f"test {l}" for l in langs)], lines)
                         + "\n\n" + significance_table(runs, langs, ablation, lambda l: HMM_FIRST)))
    exact = {l: [m["exact_Cxx"] for (l2, mo, _), m in runs.items() if l2 == l and mo in RERANKERS and "exact_Cxx" in m]
             for l in langs}
    sections.append(("How C_xx was applied",
                     "The paper's C_xx = (1 - tau) X X^T + tau I exactly, or its diagonal when the smaller of the "
                     "input dimension and the number of lists exceeds 5,000 (docs/ARCHITECTURE.md): "
                     + ", ".join(f"{l} {_kind_of(v)}" for l, v in exact.items()) + "."))
    sections.append(("Table 3: the rerankers without the Viterbi score (projection score alone)",
                     "Settings chosen on dev by this accuracy.\n\n" + table3(runs, langs)))
    if fig1(runs, out / "fig1-tau-lambda-en.png"):
        sections.append(("Fig. 1: English dev accuracy against tau and lambda",
                         f"![Fig. 1]({link_prefix}fig1-tau-lambda-en.png)"))
    seconds = [(mo, m["train_seconds"]) for (l, mo, _), m in runs.items() if l == "en" and "train_seconds" in m
               and mo not in TAGGERS]
    if seconds:
        lines = [[mo, f"{np.mean([s for m2, s in seconds if m2 == mo]):.1f}",
                  str(sum(m2 == mo for m2, _ in seconds))] for mo in (*RERANKERS, *BOOSTING)
                 if any(m2 == mo for m2, _ in seconds)]
        timing = wall_time(out)
        sections.append(("Training time on English (seconds per fit)",
                         _table(["model", "seconds per fit", "fits"], lines)
                         + (f"\n\nThe {timing['runs']} runs took {timing['seconds'] / 60:.1f} minutes of wall time with "
                            f"--jobs {timing['jobs']}; tagging, jackknifing and featurising (once per language, cached "
                            "in OUT/data) are timed in the tagger table." if timing else "")))
    return sections
