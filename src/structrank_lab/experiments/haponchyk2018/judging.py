"""What the claims of haponchyk2018 share: the citation, the bands, the paired values of two models, and the
builders that judge a claim on the paper's setup first and on ours beside it."""

from __future__ import annotations

import dataclasses

from structrank_lab.experiments.claims import CHECK, UNTESTABLE, Claim, judged_claim, not_run, verdict_of
from structrank_lab.experiments.haponchyk2018.design import METRICS, OUR_SETUP, PAPER_SETUP, SETUP_TITLES, TABLE_ROWS
from structrank_lab.experiments.haponchyk2018.joint_rules import every
from structrank_lab.experiments.haponchyk2018.published import PAPER
from structrank_lab.experiments.verdict_rules import direction
from structrank.metrics.significance import paired_units

CITATION = "Haponchyk & Moschitti 2018"
#: "roughly 8 and 10 points", "beats the SVM by 7.7": the band of a margin claimed in whole points (± 2 points)
MARGIN_TOL = 0.02
#: "stabilizing to its highest values" between two epochs: a mean there within this much of the curve's best
PLATEAU_TOL = 0.005
STRUCTURED = tuple(row for row in TABLE_ROWS if row != "SVM")
SETUPS = (PAPER_SETUP, OUR_SETUP)
UNITS = {"test": "test questions", "dev": "dev questions"}


def _pts(x: float) -> str:
    """A difference of two values in [0, 1], in points."""
    return f"{100 * x:+.2f}"


def _paper(key, metric="map") -> dict:
    """{model: value in [0, 1]} of a published table."""
    index = METRICS.index(metric)
    return {m: v[index] / 100 for m, v in PAPER[key].items()}


def _paper_margins(key, models) -> str:
    paper = _paper(key)
    return f"SVM {100 * paper['SVM']:.2f}; " + ", ".join(f"{m} {_pts(paper[m] - paper['SVM'])}" for m in models
                                                         if m in paper)


def _second(result, title) -> str:
    return f"{result[0].verdict}: {result[0].interval} ({title})" if result is not None else ""


def judged(where, wording, evidence, what, judge, why="", setups=SETUPS, titles=SETUP_TITLES) -> Claim:
    """A replication: ``judge(setup)`` gives (``Judged``, our numbers) or None when its runs are missing; the
    verdict is the first setup's (the paper's), the second's goes beside it (``ours_setup``)."""
    first = judge(setups[0])
    second = _second(judge(setups[1]), titles[setups[1]]) if len(setups) > 1 else ""
    if first is None:
        return dataclasses.replace(not_run(CITATION, where, wording, evidence, f"{what} on {titles[setups[0]]}"),
                                   setup=titles[setups[0]], ours_setup=second)
    result, ours = first
    return judged_claim(CITATION, where, wording, evidence, ours, result, why, setup=titles[setups[0]],
                        ours_setup=second)


def checked(where, wording, evidence, what, check, why="", setups=SETUPS, titles=SETUP_TITLES) -> Claim:
    """A setup check: ``check(setup)`` gives (holds, our numbers), (None, our numbers) when it cannot be decided
    yet, or None when its runs are missing; the paper's setup first, ours beside it."""
    found = {s: check(s) for s in setups}
    second = ""
    if len(setups) > 1 and found[setups[1]] is not None:
        holds, text = found[setups[1]]
        second = f"{UNTESTABLE if holds is None else verdict_of(holds)}: {text} ({titles[setups[1]]})"
    if found[setups[0]] is None:
        return dataclasses.replace(not_run(CITATION, where, wording, evidence, f"{what} on {titles[setups[0]]}"),
                                   kind=CHECK, setup=titles[setups[0]], ours_setup=second)
    holds, text = found[setups[0]]
    return Claim(CITATION, where, wording, evidence, text, UNTESTABLE if holds is None else verdict_of(holds), why,
                 kind=CHECK, setup=titles[setups[0]], ours_setup=second)


def orderings(rec, pairs, split="test", metric="map", kind="official", dataset="wikiqa", feature_set_of=None):
    """A judge of "each (better, worse) of ``pairs`` is an ordering that holds" over questions (``every``); its
    text gives each pair's means. ``pairs`` may be a function of the setup (the models present)."""
    def judge(setup):
        fs = feature_set_of(setup) if feature_set_of else setup
        parts, texts = {}, []
        for better, worse in (pairs(fs) if callable(pairs) else pairs):
            found = paired_units(rec.questions(fs, better, split, metric, kind, dataset),
                         rec.questions(fs, worse, split, metric, kind, dataset))
            if found is None:
                return None
            parts[f"{better} - {worse}"] = direction(*found, units=UNITS[split])
            texts.append(f"{better} {found[0].mean():.4f} against {worse} {found[1].mean():.4f}")
        if not parts:
            return None
        return every(parts), f"{metric}: " + "; ".join(texts)
    return judge
