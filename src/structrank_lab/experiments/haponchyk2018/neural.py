"""haponchyk2018's claims on LSP-AP against the pointwise SVM asked again with a fine-tuned encoder, judged from
another experiment's runs (neural-qa's ``claims`` calls ``neural_claims``) by the same ``verdict_rules`` as the
paper's own claims: paired over the test questions, each question's value the mean over the seeds."""

from __future__ import annotations

from structrank_lab.experiments.claims import judged_claim, not_run
from structrank_lab.experiments.haponchyk2018.design import METRICS
from structrank_lab.experiments.haponchyk2018.joint_rules import every, exceeds
from structrank_lab.experiments.haponchyk2018.judging import CITATION, _paper, _paper_margins, _pts
from structrank_lab.experiments.haponchyk2018.published import PAPER
from structrank_lab.experiments.verdict_rules import direction
from structrank.metrics.significance import paired_units

UNITS = "questions"


def neural_claims(measured, lsp_ap, svm, source) -> list:
    """The paper's claims on LSP-AP against the pointwise SVM, with the MAP hinge (row ``lsp_ap``) and pointwise
    BCE (row ``svm``) fine-tuning the same cross-encoder with the same budget and seeds in ``source``'s runs.
    ``measured``: {"wikiqa" | "trec13": {"means": {row: {metric: mean over seeds}}, "seeds": {row: count},
    "questions": {metric: {row: {question: the mean over the seeds}}}}}."""
    paper, trec = _paper(("wikiqa", "sim", "test")), PAPER[("trec13", "cv")]
    what = f"the {lsp_ap} and {svm} runs of {source}"
    where = f"fine-tuned encoder ({source})"

    def judged(dataset, place, wording, evidence, judge, rule):
        found = measured.get(dataset, {})
        questions = found.get("questions", {})
        result = judge(questions) if {lsp_ap, svm} <= set(questions.get("map", {})) else None
        if result is None:
            return not_run(CITATION, f"{place}, {where}", wording, evidence, what)
        seeds = ", ".join(f"{row} {n}" for row, n in found["seeds"].items() if row in (lsp_ap, svm))
        return judged_claim(CITATION, f"{place}, {where}", wording, evidence, result[1], result[0],
                            f"{lsp_ap} stands for LSP-AP's loss and {svm} for the pointwise SVM; paired over the test "
                            f"questions, each question's value the mean over the seeds ({seeds}). {rule}")

    def pair(questions, a, b, metric="map"):
        return paired_units(questions.get(metric, {}).get(a, {}), questions.get(metric, {}).get(b, {}))

    def beats(questions):
        found = pair(questions, lsp_ap, svm)
        if found is None:
            return None
        a, b = found
        return direction(a, b, units=UNITS), f"MAP {a.mean():.4f} - {b.mean():.4f} = {_pts(a.mean() - b.mean())} points"

    def seven_points(questions):
        found = {m: pair(questions, lsp_ap, svm, m) for m in METRICS}
        if None in found.values():
            return None
        parts = {m: exceeds(a, b, 0.07, units=UNITS) for m, (a, b) in found.items()}
        return every(parts), ", ".join(f"{m} {_pts(a.mean() - b.mean())}" for m, (a, b) in found.items())

    def best(questions):
        rows = questions["map"]
        others = {r: pair(questions, lsp_ap, r) for r in rows if r != lsp_ap}
        if not others or None in others.values():
            return None
        ranked = sorted(rows, key=lambda r: sum(rows[r].values()) / len(rows[r]), reverse=True)
        return (every({f"{lsp_ap} − {r}": direction(a, b, units=UNITS) for r, (a, b) in others.items()}),
                "test MAP, best first: " + ", ".join(f"{r} {sum(rows[r].values()) / len(rows[r]):.4f}"
                                                     for r in ranked))

    one = "Holds when the difference favours the MAP hinge and both paired tests reject no difference (direction)."
    return [
        judged("wikiqa", "Table 1 (test)", "LSP-AP beats the SVM classifier on WikiQA test (MAP): with a fine-tuned "
               "encoder, the MAP hinge beats pointwise BCE", f"features: LSP-AP {100 * paper['LSP-AP']:.2f}, SVM "
               f"{100 * paper['SVM']:.2f}", beats, one),
        judged("wikiqa", "Sec. 1, Table 1 (test)", "The structural approach improves over the pointwise baseline by "
               "more than 7 points in MAP, MRR and P@1 on WikiQA, with a fine-tuned encoder too",
               _paper_margins(("wikiqa", "sim", "test"), ("LSP-AP",)), seven_points,
               "Each of the three differences is judged 'above +7 points' (the whole interval above 7: holds; below: "
               "does not hold); the claim holds when all three do."),
        judged("wikiqa", "Table 1 (test)", "LSP-AP is the highest scoring model on WikiQA test: with a fine-tuned "
               "encoder, the MAP hinge has the best test MAP of the fine-tuned rows",
               f"features: LSP-AP {100 * paper['LSP-AP']:.2f}, next LSP {100 * paper['LSP']:.2f}", best,
               "Holds when the MAP hinge is above every other fine-tuned row (direction, each)."),
        judged("trec13", "Table 4, Sec. 5.3", "On TREC13, LSP-AP improves over the pointwise baseline in MAP: with a "
               "fine-tuned encoder, the MAP hinge over BCE", f"features, 5-fold CV: LSP-AP {trec['LSP-AP'][0]:.2f}, "
               f"SVM {trec['SVM'][0]:.2f}", beats, one),
    ]
