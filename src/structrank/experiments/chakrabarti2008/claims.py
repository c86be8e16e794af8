"""Every claim of Chakrabarti et al. (2008), judged from the recorded runs."""

from __future__ import annotations

import json

import numpy as np

from structrank.experiments.chakrabarti2008.design import BINARY, DATASETS, FIG9_METRICS, PAPER_ROWS, ROWS, SWEEP
from structrank.experiments.chakrabarti2008.published import PAPER, PAPER_FIG9
from structrank.experiments.chakrabarti2008.report import _mean, _select
from structrank.experiments.claims import UNTESTABLE, Claim, not_run, verdict_of

CLAIM_MARGIN = 0.01  # "about even", "close", "comparable": within one point


def _fig9(rows, dataset):
    """{row: {metric: mean binary-relevance test value}} on the files as distributed."""
    part = _select(rows, dataset=dataset, split="test", params={"prep": "none"})
    models = {r["model"] for r in part}
    return {row: {m: _mean(part, row, BINARY + m) for m in FIG9_METRICS} for row in ROWS if row in models}


def _sweep_end(rows, dataset):
    """{model: (first C's value, last C's value)} of each Figs. 4-6 measure, by C."""
    sweep = _select(rows, dataset=dataset, split="train-sweep")
    out = {}
    for metric in ("avg_slack", "objective_ratio", "w_norm2"):
        for model in SWEEP:
            points = sorted((_param_value(r, "C"), r["value"]) for r in sweep if r["model"] == model and r["metric"] == metric)
            if points:
                out[(model, metric)] = (points[0], points[-1])
    return out


def _param_value(row, key):
    params = row["params"] if isinstance(row["params"], dict) else json.loads(row["params"])
    return params[key]


def _fmt(values: dict, metric=None) -> str:
    return ", ".join(f"{k} {v if metric is None else v[metric]:.3f}" for k, v in values.items())


def _beats(fig9, where, claim, evidence, metric, winner, loser, ablation=""):
    """The claim that row ``winner`` is above row ``loser`` on ``metric``."""
    a, b = fig9[winner][metric], fig9[loser][metric]
    return Claim(PAPER, where, claim, evidence, f"{metric}: {winner} {a:.3f}, {loser} {b:.3f}", verdict_of(a > b),
                 f"{winner} {100 * (a - b):+.1f} points over {loser}." + ablation)


def _latent_note(fig9, row, metric, against):
    """The ablation sentence of a latent-target row, or "" when it was not run."""
    if row not in fig9:
        return ""
    value = fig9[row][metric]
    return f" Ablation: {row} reaches {value:.3f} ({100 * (value - fig9[against][metric]):+.1f} points against {against})."


def claims(rows):
    """The claims of Chakrabarti et al. (2008) against this experiment's runs (``claims.Claim``)."""
    out = []
    datasets = [d for d in DATASETS if any(r["dataset"] == d for r in rows)]
    for dataset in datasets:
        fig9 = _fig9(rows, dataset)
        sweep = _sweep_end(rows, dataset)
        where = f"{dataset}, files as distributed, binary relevance, mean of 5 folds"

        def have(*names):
            return all(n in fig9 for n in names)

        # Figs. 4-6: which criteria adapt to C
        if all((m, "avg_slack") in sweep for m in ("AUC", "MAP", "NDCG", "MRR", "DORM")):
            drop = {m: sweep[(m, "avg_slack")][0][1] - sweep[(m, "avg_slack")][1][1] for m in ("AUC", "MAP", "NDCG", "MRR", "DORM")}
            top3 = sorted(drop, key=drop.get, reverse=True)[:3]
            latent = {m: drop_l for m in ("NDCG latent", "MRR latent", "DORM latent")
                      if (m, "avg_slack") in sweep
                      for drop_l in [sweep[(m, "avg_slack")][0][1] - sweep[(m, "avg_slack")][1][1]]}
            out.append(Claim(PAPER, f"Fig. 4 ({dataset} Fold1 train)",
                             "DORM, SVM-mrr and SVM-auc show the most robust reduction in average slack with increasing C",
                             "DORM, MRR, AUC fall most (OHSUMED, TD2003, TD2004)",
                             "slack drop from the smallest to the largest C: " +
                             ", ".join(f"{m} {v:.4f}" for m, v in drop.items()),
                             verdict_of(set(top3) == {"DORM", "MRR", "AUC"}),
                             f"the three largest drops: {', '.join(top3)}. Ablation, latent targets (structrank.oracles."
                             "latent): drop " + ", ".join(f"{m} {v:.4f}" for m, v in latent.items()) + "."))
            ratio = {m: sweep[(m, "objective_ratio")][1][1] for m in ("AUC", "MAP", "NDCG", "MRR", "DORM")}
            low3 = sorted(ratio, key=ratio.get)[:3]
            out.append(Claim(PAPER, f"Fig. 5 ({dataset} Fold1 train)",
                             "DORM, SVM-auc and SVM-mrr adapt best (obj/obj(w=0) falls), SVM-map and SVM-ndcg stay "
                             "close to w = 0", "DORM, AUC, MRR lowest ratio at the largest C",
                             "obj/obj(w=0) at the largest C: " + ", ".join(f"{m} {v:.4f}" for m, v in ratio.items()),
                             verdict_of(set(low3) == {"DORM", "MRR", "AUC"}), f"the three lowest: {', '.join(low3)}."))
            norm = {m: sweep[(m, "w_norm2")][1][1] for m in ("MAP", "NDCG")}
            out.append(Claim(PAPER, f"Fig. 6 ({dataset} Fold1 train)", "SVM-map and SVM-ndcg are not quite at w = 0",
                             "|w| > 0 at every C", "|w|^2 at the largest C: " + ", ".join(f"{m} {v:.3g}" for m, v in norm.items()),
                             verdict_of(all(v > 1e-8 for v in norm.values())), "|w|^2 > 1e-8 counts as not at w = 0."))
        else:
            out.append(not_run(PAPER, f"Figs. 4-6 ({dataset})", "which criteria adapt to C", "Figs. 4-6", "the C sweep"))
        # Fig. 7: phi_mrr against phi_po
        if have("MRR", "MRR-po"):
            out.append(_beats(fig9, f"Fig. 7 ({dataset})", "a consistent large gain in MRR when phi_mrr (MRR) is used, "
                              "compared to phi_po (MRR-po)", "phi_mrr above phi_po on every data set", "mrr@10", "MRR",
                              "MRR-po", _latent_note(fig9, "MRR latent", "mrr@10", "MRR-po")))
        # Sec. 4.5 on Fig. 9
        paper_rows = {r: fig9[r] for r in PAPER_ROWS if r in fig9}
        if have("MRR", "COMBO") and len(paper_rows) >= 4:
            best = max(paper_rows, key=lambda r: paper_rows[r]["mrr@10"])
            out.append(Claim(PAPER, f"Sec. 4.5, Fig. 9 ({dataset})", "Delta_MRR is never best for test MRR",
                             "another criterion is best for MRR@10 on every data set",
                             "MRR@10: " + _fmt(paper_rows, "mrr@10"), verdict_of(best != "MRR"), f"best: {best}."))
            out.append(_beats(fig9, f"Sec. 4.3, Fig. 9 ({dataset})", "SVM-combo almost always beats SVM-mrr (on MRR)",
                              "COMBO above MRR on MRR@10", "mrr@10", "COMBO", "MRR"))
        if have("NDCG", "NDCG-NC"):
            out.append(_beats(fig9, f"Sec. 4.5, Fig. 9 ({dataset})", "SVM-ndcg, which uses the true Delta_NDCG, "
                              "consistently loses to SVM-ndcg-nc", "NDCG-NC above NDCG on NDCG@10", "ndcg@10", "NDCG-NC",
                              "NDCG", _latent_note(fig9, "NDCG latent", "ndcg@10", "NDCG-NC")))
        if have("COMBO") and all(r in fig9 for r in ("MAP", "NDCG", "NDCG-NC", "MRR")):
            comps = ("MAP", "NDCG", "NDCG-NC", "MRR")
            near = {m: fig9["COMBO"][m] - max(fig9[c][m] for c in comps) for m in FIG9_METRICS}
            out.append(Claim(PAPER, f"Sec. 3.7, 4.5 ({dataset})", "SVM-combo's test performance on any criterion is "
                             "close to that of the best components", "COMBO among the top two of each column",
                             "COMBO minus the best component: " + ", ".join(f"{m} {100 * v:+.1f}" for m, v in near.items()),
                             verdict_of(all(v >= -CLAIM_MARGIN for v in near.values())),
                             f"close = within {100 * CLAIM_MARGIN:.0f} point of the best component."))
        if have("COMBO", "COMBO shared"):
            sep = float(np.mean([fig9["COMBO"][m] for m in FIG9_METRICS]))
            sha = float(np.mean([fig9["COMBO shared"][m] for m in FIG9_METRICS]))
            out.append(Claim(PAPER, f"Sec. 3.7 ({dataset})", "separate slacks may perform better than shared slacks, "
                             "which is indeed what we found", "not tabulated in the paper",
                             f"mean of MRR@10, NDCG@10, MAP: separate {sep:.3f}, shared {sha:.3f} (" +
                             ", ".join(f"{m} {fig9['COMBO'][m]:.3f}/{fig9['COMBO shared'][m]:.3f}" for m in FIG9_METRICS) + ")",
                             verdict_of(sep > sha), f"separate {100 * (sep - sha):+.1f} points over shared."))
        if have("COMBO", "COMBO phi_mrr"):
            a = float(np.mean([fig9["COMBO"][m] for m in FIG9_METRICS]))
            b = float(np.mean([fig9["COMBO phi_mrr"][m] for m in FIG9_METRICS]))
            out.append(Claim(PAPER, f"Sec. 3.7 ({dataset})", "SVM-combo combines the criteria's own losses (its MRR "
                             "component with phi_mrr, as SVM-mrr)", "not tabulated",
                             f"mean of the three metrics: MRR component phi_po (ours by default) {a:.3f}, phi_mrr {b:.3f}",
                             verdict_of(b >= a - CLAIM_MARGIN),
                             f"phi_mrr {100 * (b - a):+.1f} points against phi_po; holds if within "
                             f"{100 * CLAIM_MARGIN:.0f} point."))
        if have("NDCG", "DORM"):
            a, b = fig9["NDCG"]["ndcg@10"], fig9["DORM"]["ndcg@10"]
            out.append(Claim(PAPER, f"Sec. 4.4, Fig. 9 ({dataset})", "SVM-ndcg and DORM come out about even",
                             "NDCG@10 about equal", f"NDCG@10: NDCG {a:.3f}, DORM {b:.3f}",
                             verdict_of(abs(a - b) <= CLAIM_MARGIN), f"difference {100 * (a - b):+.1f} points; even = "
                             f"within {100 * CLAIM_MARGIN:.0f} point."))
        if have("NDCG-NC", "DORM"):
            out.append(_beats(fig9, f"Sec. 4.4, Fig. 9 ({dataset})", "SVM-ndcg-nc is consistently better than DORM",
                              "NDCG-NC above DORM", "ndcg@10", "NDCG-NC", "DORM"))
        if have("NDCG", "DORM sparse"):
            a, b = fig9["NDCG"]["ndcg@10"], fig9["DORM sparse"]["ndcg@10"]
            dense = fig9.get("DORM", {}).get("ndcg@10")
            out.append(Claim(PAPER, f"Sec. 4.4 ({dataset})", "DORM with A(.) cut to zero after rank 30 approaches or "
                             "matches the accuracy of SVM-ndcg", "sparse DORM used in Figs. 8-9",
                             f"NDCG@10: sparse DORM {b:.3f}, SVM-ndcg {a:.3f}" + (f", dense DORM {dense:.3f}" if dense else ""),
                             verdict_of(b >= a - CLAIM_MARGIN), f"sparse DORM {100 * (b - a):+.1f} points from SVM-ndcg."))
        if have("McRank") and len(paper_rows) >= 4:
            tops = [m for m in FIG9_METRICS if max(paper_rows, key=lambda r: paper_rows[r][m]) == "McRank"]
            out.append(Claim(PAPER, f"Sec. 4.6, Fig. 9 ({dataset})", "McRank never tops the chart in any column",
                             "no column topped by McRank", "columns McRank tops: " + (", ".join(tops) or "none"),
                             verdict_of(not tops), "among the paper's eight criteria."))
        if have("NDCG", "MRR", "AUC", "MAP"):
            gaps = {"NDCG": fig9["NDCG"]["ndcg@10"] - max(fig9["AUC"]["ndcg@10"], fig9["MAP"]["ndcg@10"]),
                    "MRR": fig9["MRR"]["mrr@10"] - max(fig9["AUC"]["mrr@10"], fig9["MAP"]["mrr@10"])}
            lat = {k: fig9[f"{k} latent"][m] - max(fig9["AUC"][m], fig9["MAP"][m])
                   for k, m in (("NDCG", "ndcg@10"), ("MRR", "mrr@10")) if have(f"{k} latent")}
            out.append(Claim(PAPER, f"Sec. 5 ({dataset})", "the new algorithms (SVM-mrr, SVM-ndcg) are comparable to "
                             "known techniques (SVM-auc, SVM-map) in accuracy", "Fig. 9",
                             "own metric minus the better of AUC and MAP: " + ", ".join(f"{k} {100 * v:+.1f}" for k, v in gaps.items())
                             + ("; latent targets: " + ", ".join(f"{k} {100 * v:+.1f}" for k, v in lat.items()) if lat else ""),
                             verdict_of(all(v >= -CLAIM_MARGIN for v in gaps.values())),
                             f"comparable = within {100 * CLAIM_MARGIN:.0f} point; docs: reproduce own-metric tests it "
                             "with paired tests."))
        # Figs. 8 and 10: time
        timing = _select(rows, dataset=dataset, split="train-timing")
        secs = {r["model"]: r["value"] for r in timing if r["metric"] == "seconds"}
        if {"SVM-ndcg", "DORM", "McRank"} <= set(secs):
            out.append(Claim(PAPER, f"Fig. 8 ({dataset} Fold1)", "DORM takes substantially more time than SVM-ndcg",
                             "DORM 283 s against SVM-ndcg 19 s (TD2004)",
                             f"DORM {secs['DORM']:.2f} s, SVM-ndcg {secs['SVM-ndcg']:.3f} s "
                             f"({secs['DORM'] / secs['SVM-ndcg']:.0f}x)", verdict_of(secs["DORM"] > 2 * secs["SVM-ndcg"]),
                             "substantially = more than twice."))
            ratio = secs["McRank"] / secs["SVM-ndcg"]
            out.append(Claim(PAPER, f"Fig. 10 ({dataset} Fold1)", "McRank can be more expensive than the structured "
                             "learners by two orders of magnitude", "Fig. 10 (WEKA, 30 rounds)",
                             f"McRank {secs['McRank']:.2f} s, SVM-ndcg {secs['SVM-ndcg']:.3f} s ({ratio:.0f}x)",
                             verdict_of(ratio >= 100), "McRank here is LightGBM, not WEKA's REPTree."))
    if "OHSUMED" in datasets:
        part = _select(rows, dataset="OHSUMED", split="test", params={"prep": "chakrabarti"})
        paper = PAPER_FIG9["OHSUMED"]
        gaps = [_mean(part, row, BINARY + m) - paper[row][i] for row in PAPER_ROWS for i, m in enumerate(FIG9_METRICS)]
        gaps = [g for g in gaps if np.isfinite(g)]
        if gaps:
            within = sum(abs(g) <= 0.03 for g in gaps)
            out.append(Claim(PAPER, "Fig. 9 (OHSUMED)", "the values of Fig. 9 (after the preparation of Sec. 4.1)",
                             "e.g. AUC 0.799 / 0.635 / 0.582", f"{within} of {len(gaps)} cells within 3 points; mean gap "
                             f"{100 * np.mean(gaps):+.1f} points", verdict_of(within == len(gaps)),
                             "see the gap study (OHSUMED: where the gap to the paper's Fig. 9 comes from)."))
    for name in ("TD2003", "TD2004"):
        if name not in datasets:
            out.append(Claim(PAPER, f"Figs. 8-9 ({name})", f"the {name} columns of Figs. 8-9", "Figs. 8-9", "—",
                             UNTESTABLE, f"LETOR 3.0 {name} is not in the data folder."))
    out.append(Claim(PAPER, "Fig. 9 (TREC 2000/2001)", "the TREC 2000/2001 columns (Yue et al.'s data)", "Fig. 9", "—",
                     UNTESTABLE, "Yue et al.'s TREC 2000/2001 files are not in the data folder."))
    return out
