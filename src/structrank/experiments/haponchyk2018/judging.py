"""What the claims of haponchyk2018 share: the citation, the tolerances, and the checks that judge a claim on
our features with the same check on the paper's list beside it."""

from __future__ import annotations

import numpy as np

from structrank.experiments.claims import Claim, not_run, verdict_of
from structrank.experiments.haponchyk2018.design import METRICS, TABLE_ROWS
from structrank.experiments.haponchyk2018.published import PAPER
from structrank.experiments.haponchyk2018.recorded import _official

CITATION = "Haponchyk & Moschitti 2018"
#: "roughly 8 and 10 points": a margin within this many MAP points of the paper's counts as reproduced
MARGIN_TOL = 0.02
#: "stabilizing to its highest values" between two epochs: a mean there within this much of the curve's best
PLATEAU_TOL = 0.005
STRUCTURED = tuple(row for row in TABLE_ROWS if row != "SVM")
ABLATION = "Ablation, the paper's feature list (rebuilt; Table 1/3/4 'paper' runs)"


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


def _judged(where, wording, evidence, what, check, ablations=(("paper", ABLATION),), note=""):
    """A Claim whose verdict is ``check("sim")`` (holds, our text), None when its runs are missing;
    ``why`` gives the same check on each ablation's feature set, then ``note``."""
    result = check("sim")
    if result is None:
        return not_run(CITATION, where, wording, evidence, what)
    holds, ours = result
    why = []
    for feature_set, label in ablations:
        other = check(feature_set)
        if other is not None:
            why.append(f"{label}: {other[1]} ({'holds' if other[0] else 'does not hold'} there).")
    if note:
        why.append(note)
    return Claim(CITATION, where, wording, evidence, ours, verdict_of(holds), " ".join(why))


def _beats_svm(rows, split, models):
    def check(feature_set):
        values = _official(rows, feature_set, split)
        present = [m for m in models if m in values]
        if "SVM" not in values or not present:
            return None
        margins = {m: values[m] - values["SVM"] for m in present}
        below = [m for m, d in margins.items() if d <= 0]
        text = f"SVM {values['SVM']:.4f}; " + ", ".join(f"{m} {_pts(d)}" for m, d in margins.items())
        return not below, text + (f"; not above the SVM: {', '.join(below)}" if below else "")
    return check


def _margin_near(rows, model, paper_margin, split="test"):
    def check(feature_set):
        values = _official(rows, feature_set, split)
        if not {"SVM", model} <= set(values):
            return None
        margin = values[model] - values["SVM"]
        return (abs(margin - paper_margin) <= MARGIN_TOL,
                f"{model} {values[model]:.4f} - SVM {values['SVM']:.4f} = {_pts(margin)} points "
                f"(paper {_pts(paper_margin)}, tolerance {100 * MARGIN_TOL:.0f})")
    return check


def _above(rows, split, better, worse, at_least=0.0, metrics=("map",), at_most=np.inf):
    """``better`` above ``worse`` by more than ``at_least`` (and less than ``at_most``) on every metric."""
    def check(feature_set):
        parts, holds = [], True
        for metric in metrics:
            values = _official(rows, feature_set, split, metric)
            if not {better, worse} <= set(values):
                return None
            gap = values[better] - values[worse]
            holds &= at_least < gap < at_most
            parts.append(f"{metric}: {better} {values[better]:.4f}, {worse} {values[worse]:.4f} ({_pts(gap)})")
        return holds, "; ".join(parts)
    return check


def _best_of(rows, split, model, feature_set_of=lambda fs: fs):
    def check(feature_set):
        values = _official(rows, feature_set_of(feature_set), split)
        if model not in values or len(values) < 2:
            return None
        ranked = sorted(values, key=values.get, reverse=True)
        return ranked[0] == model, "best first: " + ", ".join(f"{m} {values[m]:.4f}" for m in ranked[:4])
    return check
