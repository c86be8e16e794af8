"""The grid study's claims: Eq. 4's margin (a replication, paired over the test questions) and the checks of the
setup (the paper's C grid holds each model's dev optimum; the rebuilt feature list puts the SVM baseline where the
paper's is). A grid check passes by construction when the choice is inside the grid (the grid is extended only
past an end), so it is a check, never a replication."""

from __future__ import annotations

from structrank_lab.experiments.haponchyk2018.design import SUM_ROW
from structrank_lab.experiments.haponchyk2018.judging import (MARGIN_TOL, UNITS, _paper, _paper_margins, _pts, checked,
                                                          judged)
from structrank_lab.experiments.haponchyk2018.published import PAPER_C_GRID
from structrank_lab.experiments.haponchyk2018.recorded import _number, _official, _study, _sum_queries
from structrank_lab.experiments.verdict_rules import magnitude
from structrank.metrics.significance import paired_units

GRID_WORDS = "{" + ", ".join(_number(c) for c in PAPER_C_GRID) + "}"


def _missing(s) -> str:
    return ("the grid study has not fitted C = " + ", ".join(_number(c) for c in s["missing"])
            + " yet (the slowest fits: `reproduce` runs them last, one at a time, and resumes)")


def grid_claims(rec) -> list:
    paper = _paper(("wikiqa", "sim", "test"))
    margin = paper["LSSVM-AP"] - paper["SVM"]
    n = _sum_queries(rec.rows)

    def sum_margin(setup):
        s = _study(rec.rows, setup).get(SUM_ROW)
        if s is None or not s["paper_complete"]:
            return None
        c = s["paper_choice"]
        found = paired_units(rec.grid_questions(setup, SUM_ROW, c), rec.questions(setup, "SVM"))
        if found is None:
            return None
        mean = _official(rec.rows, setup, "test").get("LSSVM-AP")
        return (magnitude(*found, margin, MARGIN_TOL, units=UNITS["test"]),
                f"sum C = {_number(c)} (the mean's C = {_number(c)} x {n}): dev MAP {s['select'][c]:.4f}, test "
                f"{found[0].mean():.4f}, {_pts(found[0].mean() - found[1].mean())} over the SVM"
                + (f" (our mean, Table 1: {_pts(mean - found[1].mean())})" if mean is not None else ""))

    def grid_holds(model):
        def check(setup):
            s = _study(rec.rows, setup).get(model)
            if s is None:
                return None
            if not s["paper_complete"]:
                return None, _missing(s)
            p, e = s["paper_choice"], s["choice"]
            ends = (PAPER_C_GRID[0], PAPER_C_GRID[-1])
            return e == p, (f"paper grid: C = {_number(p)}{' (at its end)' if p in ends else ''}, dev "
                            f"{s['select'][p]:.4f}, test {s['test'][p]:.4f}; fitted {_number(s['points'][0])}.."
                            f"{_number(s['points'][-1])}: C = {_number(e)}, dev {s['select'][e]:.4f}, test "
                            f"{s['test'][e]:.4f}" + ("; still at an end of what was fitted" if s["at_edge"] else ""))
        return check

    def svm_level(setup):
        svm = _official(rec.rows, setup, "test").get("SVM")
        if svm is None:
            return None
        return (abs(svm - paper["SVM"]) <= MARGIN_TOL,
                f"SVM test MAP {svm:.4f} against the paper's {100 * paper['SVM']:.2f} ({_pts(svm - paper['SVM'])})")

    claims = [
        judged("Eq. 4, Sec. 5.1", f"Eq. 4: the latent SSVM weighs the sum of the queries' slacks by C, C chosen on dev "
               f"from {GRID_WORDS}; so trained, LSSVM-AP beats the SVM by 7.7 test MAP points",
               _paper_margins(("wikiqa", "sim", "test"), ("LSSVM-AP",)),
               f"the grid study's {SUM_ROW} runs at every C of {GRID_WORDS} with each question's values",
               sum_margin, "Paired over the test questions. Magnitude: holds when the interval lies inside the "
               f"paper's margin ± {100 * MARGIN_TOL:g} points. Sum and mean are one problem (C on the sum = C x |Q| "
               "on the mean); tests/library/test_latent.py checks both against Eq. 4 computed by brute force, to 1e-6."),
        checked("Table 1 (test), Sec. 5.1 Features", "Setup: the SVM baseline on the paper's feature list (as rebuilt) "
                "scores where the paper's does on WikiQA test", f"SVM {100 * paper['SVM']:.2f}",
                "the Table 1 SVM run", svm_level,
                f"Holds when our SVM's test MAP is within {100 * MARGIN_TOL:g} points of the paper's: a check that the "
                "rebuilt list stands for the paper's, not a finding. The rebuilt list lacks the paper's ESA similarity "
                "(no Wikipedia index here) and its PTK runs on shallow trees from our HMM tagger, not on full parses."),
    ]
    for model in ("SVM-map", "LSP-AP", "LSSVM-AP", SUM_ROW, "LSP-AP*", "LSSVM-AP*"):
        name = "LSSVM-AP under Eq. 4's sum" if model == SUM_ROW else model
        claims.append(checked("Sec. 5.1 (C grid)", f"{name}: the grid {GRID_WORDS} holds the dev optimum of C",
                              "C chosen on dev from the grid; the chosen values are not published",
                              f"the grid study's {model} runs", grid_holds(model),
                              "Holds when a grid extended past its ends (1-2-5 steps) chooses the same C on dev: the "
                              "grid grows only where the choice sits at an end, so an inside choice passes by "
                              "construction."))
    return claims
