"""haponchyk2018's claims on LSP-AP against the pointwise SVM asked again with a fine-tuned encoder, judged from
another experiment's runs (neural-qa's ``claims`` calls ``neural_claims``)."""

from __future__ import annotations

from structrank.experiments.claims import Claim, not_run, verdict_of
from structrank.experiments.haponchyk2018.design import METRICS
from structrank.experiments.haponchyk2018.judging import CITATION, _paper, _paper_margins, _pts
from structrank.experiments.haponchyk2018.published import PAPER


def neural_claims(measured, lsp_ap, svm, source, alpha=0.05) -> list:
    """The paper's claims on LSP-AP against the pointwise SVM asked again with a fine-tuned encoder, from another
    experiment's runs (``source``: neural-qa, whose ``claims`` calls this) where the MAP hinge (row ``lsp_ap``) and
    pointwise BCE (row ``svm``) fine-tune the same cross-encoder with the same budget and seeds. ``measured``:
    {"wikiqa" | "trec13": {"means": {row: {metric: mean over seeds}}, "seeds": {row: count}, "paired": the
    ``PairedRow`` of ``lsp_ap`` against ``svm`` on test MAP, or None}}."""
    paper, trec = _paper(("wikiqa", "sim", "test")), PAPER[("trec13", "cv")]
    what = f"the {lsp_ap} and {svm} runs of {source}"
    where = f"fine-tuned encoder ({source})"

    def judged(dataset, place, wording, evidence, check):
        found = measured.get(dataset, {})
        if not {lsp_ap, svm} <= set(found.get("means", {})):
            return not_run(CITATION, f"{place}, {where}", wording, evidence, what)
        holds, ours = check(found["means"], found.get("paired"))
        seeds = ", ".join(f"{row} {n}" for row, n in found["seeds"].items() if row in (lsp_ap, svm))
        return Claim(CITATION, f"{place}, {where}", wording, evidence, ours, verdict_of(holds),
                     f"{lsp_ap} stands for LSP-AP's loss and {svm} for the pointwise SVM; means over the seeds "
                     f"({seeds}); the paired test over test questions, each question's value the mean over the seeds.")

    def paired_gap(significant):
        def check(values, row):
            gap = values[lsp_ap]["map"] - values[svm]["map"]
            if row is None:
                return gap > 0 and not significant, f"MAP {lsp_ap} - {svm} = {_pts(gap)} points (no paired test)"
            sure, rule = row.t_p < alpha and row.rand_p < alpha, f"; holds when both are below {alpha:g}"
            return gap > 0 and (sure or not significant), (
                f"MAP {values[lsp_ap]['map']:.4f} - {values[svm]['map']:.4f} = {_pts(gap)} points over {row.queries} "
                f"questions (95% CI {_pts(row.ci_low)} to {_pts(row.ci_high)}); t-test p {row.t_p:.3g}, "
                f"randomisation p {row.rand_p:.3g}" + (rule if significant else ""))
        return check

    def seven_points(values, row):
        gaps = {m: values[lsp_ap][m] - values[svm][m] for m in METRICS if m in values[lsp_ap] and m in values[svm]}
        return (len(gaps) == len(METRICS) and all(g > 0.07 for g in gaps.values()),
                ", ".join(f"{m} {_pts(g)}" for m, g in gaps.items()))

    def best(values, row):
        ranked = sorted(values, key=lambda r: values[r]["map"], reverse=True)
        return all(values[lsp_ap]["map"] > values[r]["map"] for r in ranked if r != lsp_ap), (
            "test MAP, best first: " + ", ".join(f"{r} {values[r]['map']:.4f}" for r in ranked))

    return [
        judged("wikiqa", "Table 1 (test)", "LSP-AP beats the SVM classifier on WikiQA test (MAP): with a fine-tuned "
               "encoder, the MAP hinge beats pointwise BCE", f"features: LSP-AP {100 * paper['LSP-AP']:.2f}, SVM "
               f"{100 * paper['SVM']:.2f}", paired_gap(True)),
        judged("wikiqa", "Sec. 1, Table 1 (test)", "The structural approach improves over the pointwise baseline by "
               "more than 7 points in MAP, MRR and P@1 on WikiQA, with a fine-tuned encoder too",
               _paper_margins(("wikiqa", "sim", "test"), ("LSP-AP",)), seven_points),
        judged("wikiqa", "Table 1 (test)", "LSP-AP is the highest scoring model on WikiQA test: with a fine-tuned "
               "encoder, the MAP hinge has the best test MAP of the fine-tuned rows",
               f"features: LSP-AP {100 * paper['LSP-AP']:.2f}, next LSP {100 * paper['LSP']:.2f}", best),
        judged("trec13", "Table 4, Sec. 5.3", "On TREC13, LSP-AP improves over the pointwise baseline in MAP: with a "
               "fine-tuned encoder, the MAP hinge over BCE", f"features, 5-fold CV: LSP-AP {trec['LSP-AP'][0]:.2f}, "
               f"SVM {trec['SVM'][0]:.2f}", paired_gap(False)),
    ]
