"""The claims of Chakrabarti et al. (2008) on Fig. 9 and Fig. 7, each judged by a paired test over the test
queries of the five folds (``verdict_rules``), on the paper-faithful setup first (``judging.setups``).

A claim that a criterion does not top a column ("McRank never tops the chart", "Delta_MRR is never best")
is judged against the other criterion with the highest mean in that column: it holds when that one is
significantly above (``direction``), does not hold when the claimed loser is significantly above it (and so
above every other by mean), and is inconclusive otherwise; over several columns, every column must hold
(``all_hold``).
"""

from __future__ import annotations

from structrank_lab.experiments.chakrabarti2008.design import FIG9_METRICS, PAPER_ROWS
from structrank_lab.experiments.chakrabarti2008.judging import LITERAL, all_hold, compare, fig9_claim
from structrank_lab.experiments.verdict_rules import MARGIN, direction, even, not_below

COMPONENTS = ("MAP", "NDCG", "NDCG-NC", "MRR")  # SVM-combo's components (Sec. 4.5)
CLOSE = f"within {100 * MARGIN:g} point"


def _means(f, names, metric) -> str:
    return ", ".join(f"{f.row(n)} {f.mean(n, metric):.3f}" for n in names)


def _beats(winner, loser, metric, also=()):
    """``winner`` above ``loser`` on ``metric`` (``direction``); ``also``: rows whose means are shown beside."""
    def judge(f):
        if not f.has(winner, loser):
            return None
        shown = [winner, loser, *(n for n in also if f.has(n))]
        return compare(direction, f.q(winner, metric), f.q(loser, metric)), f"{metric}: {_means(f, shown, metric)}"
    return judge


def _not_topped(row, metrics):
    """``row`` is not the best in any of ``metrics``: the best other by mean significantly above it, each column."""
    def judge(f):
        others = [r for r in PAPER_ROWS if r != row and f.has(r)]
        if not f.has(row) or len(others) < 3:
            return None
        parts, said = [], []
        for metric in metrics:
            best = max(others, key=lambda r: f.mean(r, metric))
            parts.append((f"{metric} {f.row(best)} - {f.row(row)}",
                          compare(direction, f.q(best, metric), f.q(row, metric))))
            said.append(f"{metric}: {_means(f, [row] + others, metric)}")
        return all_hold(parts), "; ".join(said)
    return judge


def _combo_close(f):
    comps = [c for c in COMPONENTS if f.has(c)]
    if not f.has("COMBO") or len(comps) < 3:
        return None
    parts, said = [], []
    for metric in FIG9_METRICS:
        best = max(comps, key=lambda c: f.mean(c, metric))
        parts.append((f"{metric} COMBO - {f.row(best)}", compare(not_below, f.q("COMBO", metric), f.q(best, metric))))
        said.append(f"{metric}: COMBO {f.mean('COMBO', metric):.3f}, best component {f.row(best)} "
                    f"{f.mean(best, metric):.3f}")
    return all_hold(parts), "; ".join(said)


def _on_mean3(rule, a, b):
    """``rule`` over each query's mean of MRR@10, NDCG@10 and MAP."""
    def judge(f):
        if not f.has(a, b):
            return None
        x, y = f.mean3(a), f.mean3(b)
        return (compare(rule, x, y), f"mean of MRR@10, NDCG@10, MAP: {a} {sum(x.values()) / len(x):.3f}, "
                f"{b} {sum(y.values()) / len(y):.3f} (" + ", ".join(
                    f"{m} {f.mean(a, m):.3f}/{f.mean(b, m):.3f}" for m in FIG9_METRICS) + ")")
    return judge


def _on(rule, a, b, metric):
    def judge(f):
        if not f.has(a, b):
            return None
        return compare(rule, f.q(a, metric), f.q(b, metric)), f"{metric}: {_means(f, [a, b], metric)}"
    return judge


def _comparable(f):
    """SVM-ndcg on NDCG@10 and SVM-mrr on MRR@10, each against the better of SVM-auc and SVM-map."""
    if not f.has("NDCG", LITERAL, "AUC", "MAP"):
        return None
    parts, said = [], []
    for row, metric in (("NDCG", "ndcg@10"), (LITERAL, "mrr@10")):
        known = max(("AUC", "MAP"), key=lambda r: f.mean(r, metric))
        parts.append((f"{f.row(row)} - {known} on {metric}", compare(not_below, f.q(row, metric), f.q(known, metric))))
        said.append(f"{metric}: {_means(f, [row, 'AUC', 'MAP'], metric)}")
    return all_hold(parts), "; ".join(said)


def fig9_claims(recorded, dataset, reading) -> list:
    """The Fig. 7 and Fig. 9 claims of one data set (``reading``: ``judging.mrr_reading``'s)."""
    def claim(where, wording, evidence, judge, uses_mrr=False, why=""):
        return fig9_claim(recorded, dataset, reading, f"{where} ({dataset})", wording, evidence, judge, uses_mrr, why)

    return [
        claim("Fig. 7", "a consistent large gain in MRR when phi_mrr (MRR) is used, compared to phi_po (MRR-po)",
              "phi_mrr above phi_po on every data set", _beats(LITERAL, "MRR-po", "mrr@10"), True,
              "MRR@10 per test query (direction)."),
        claim("Sec. 4.5, Fig. 9", "Delta_MRR is never best for test MRR",
              "another criterion is best for MRR@10 on every data set", _not_topped(LITERAL, ["mrr@10"]), True,
              "The best other criterion by mean against SVM-mrr on MRR@10 (direction): holds when it is significantly "
              "above SVM-mrr."),
        claim("Sec. 4.3, Fig. 9", "SVM-combo almost always beats SVM-mrr (on MRR)", "COMBO above MRR on MRR@10",
              _beats("COMBO", LITERAL, "mrr@10"), True, "MRR@10 per test query (direction)."),
        claim("Sec. 4.5, Fig. 9", "SVM-ndcg, which uses the true Delta_NDCG, consistently loses to SVM-ndcg-nc",
              "NDCG-NC above NDCG on NDCG@10", _beats("NDCG-NC", "NDCG", "ndcg@10", also=("NDCG latent",)),
              why="NDCG@10 per test query (direction); NDCG latent (the latent target) is shown as an ablation."),
        claim("Sec. 3.7, 4.5", "SVM-combo's test performance on any criterion is close to that of the best components",
              "COMBO among the top two of each column", _combo_close, True,
              f"In each column COMBO against the component with the highest mean (not_below, close = {CLOSE}); "
              "holds when every column does."),
        claim("Sec. 3.7", "separate slacks may perform better than shared slacks, which is indeed what we found",
              "not tabulated in the paper", _on_mean3(direction, "COMBO", "COMBO shared"),
              why="Each query's mean of the three metrics, separate against shared slacks (direction)."),
        claim("Sec. 3.7", "SVM-combo combines the criteria's own losses (its MRR component with phi_mrr, as SVM-mrr)",
              "not tabulated", _on_mean3(not_below, "COMBO phi_mrr", "COMBO"),
              why=f"Each query's mean of the three metrics, the phi_mrr component against phi_po (ours by default; "
                  f"not_below, {CLOSE})."),
        claim("Sec. 4.4, Fig. 9", "SVM-ndcg and DORM come out about even", "NDCG@10 about equal",
              _on(even, "NDCG", "DORM", "ndcg@10"), why=f"NDCG@10 per test query (even: {CLOSE} either way)."),
        claim("Sec. 4.4, Fig. 9", "SVM-ndcg-nc is consistently better than DORM", "NDCG-NC above DORM",
              _on(direction, "NDCG-NC", "DORM", "ndcg@10"), why="NDCG@10 per test query (direction)."),
        claim("Sec. 4.4", "DORM with A(.) cut to zero after rank 30 approaches or matches the accuracy of SVM-ndcg",
              "sparse DORM used in Figs. 8-9", _on(not_below, "DORM sparse", "NDCG", "ndcg@10"),
              why=f"NDCG@10 per test query, sparse DORM against SVM-ndcg (not_below, {CLOSE})."),
        claim("Sec. 4.6, Fig. 9", "McRank never tops the chart in any column", "no column topped by McRank",
              _not_topped("McRank", list(FIG9_METRICS)),
              why="In each column the best other criterion by mean against McRank (direction); holds when it is "
                  "significantly above McRank in every column, does not hold when McRank is significantly above it "
                  "in one."),
        claim("Sec. 5", "the new algorithms (SVM-mrr, SVM-ndcg) are comparable to known techniques (SVM-auc, SVM-map) "
              "in accuracy", "Fig. 9", _comparable, True,
              f"Each on its own metric against the better of SVM-auc and SVM-map by mean (not_below, {CLOSE}); "
              "holds when both do."),
    ]
