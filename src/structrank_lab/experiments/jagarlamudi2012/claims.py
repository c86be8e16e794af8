"""Every claim of Jagarlamudi & Daumé III (2012), judged from the recorded runs.

The replications (Table 2's comparisons of the rerankers, the caption's significance, Table 3, Fig. 1) are judged by
``verdict_rules`` over the sentences both sides tagged: each sentence's correct tokens over the split's mean sentence
length, so that the mean is the token accuracy and the interval is in points of it; a claim of several comparisons
combines their verdicts (``verdict_sets``). Each model's setting is chosen on dev. The setup and data checks are in
``checks``.
"""

from __future__ import annotations

import numpy as np

from structrank_lab.experiments.claims import FAILS, HOLDS, INCONCLUSIVE, judged_claim, not_run
from structrank_lab.experiments.jagarlamudi2012.checks import (_missing, _paper, _points, convergence_claim,
                                                           high_accuracy_claim, hmm_claim, optimum_claim, oracle_claim)
from structrank_lab.experiments.jagarlamudi2012.design import (CENTRE, DEV_SENTENCE, HMM, HMM_FIRST, LANGUAGES,
                                                           NGRAM_BOOSTING, NO_VITERBI_SENTENCE, ON_FIRST, RERANKERS,
                                                           SUFFIX_BOOSTING)
from structrank_lab.experiments.jagarlamudi2012.published import PAPER, PAPER_TABLE2, PAPER_TABLE3
from structrank_lab.experiments.jagarlamudi2012.recorded import accuracy, accuracy_units, best_boosting, collect
from structrank_lab.experiments.verdict_rules import Judged, direction
from structrank_lab.experiments.verdict_sets import all_of, at_least, at_level, separated

#: the setup every replication is judged on
SETUP = ("the paper's second-order HMM's 10-best lists, each model's setting chosen on dev; Universal Dependencies "
         "treebanks in place of the paper's CoNLL 2006 data")
BEATS = "A beats B holds when the difference favours A and both paired tests reject no difference"


def _on_first(runs, lang, models):
    """Test accuracy (points) on the first-order HMM's lists: of that HMM for ``HMM``, else of the ablation's run;
    the best of several models; None if one is missing."""
    models = (models,) if isinstance(models, str) else models
    values = [_points(runs, lang, HMM_FIRST if m == HMM else m + ON_FIRST) for m in models]
    return None if _missing(*values) else max(values)


def _ablation(runs, what, better, worse, langs=LANGUAGES):
    """The ablation's sentence for a claim: ``better`` minus ``worse`` on the first-order HMM's lists, per language."""
    diffs = {}
    for l in langs:
        a, b = _on_first(runs, l, better), _on_first(runs, l, worse)
        if not _missing(a, b):
            diffs[l] = a - b
    if not diffs:
        return ""
    return (f" Ablation (the rerankers on the first-order HMM's lists): {what} "
            + ", ".join(f"{l} {d:+.2f}" for l, d in diffs.items()) + ".")


def _units(runs, lang, model, **options):
    return accuracy_units(runs, lang, model, **options)


def _versus(runs, lang, a, b, rule=direction, **options):
    """``rule`` of the dev-chosen ``a`` against the dev-chosen ``b`` over ``lang``'s test sentences; None if either
    did not run."""
    ua, ub = _units(runs, lang, a), _units(runs, lang, b)
    return None if ua is None or ub is None else rule(ua, ub, units="sentences", **options)


def _parts(runs, comparisons):
    """[(label, Judged)] of ``comparisons`` [(lang, a, b)] (a beats b), or None if one did not run."""
    parts = [(f"{a} − {b}, {l}", _versus(runs, l, a, b)) for l, a, b in comparisons]
    return None if any(j is None for _, j in parts) else parts


def _suffix_rerankers_claim(runs):
    where = "Table 2; Sec. 4.2"
    wording = ("On test, the baseline rerankers (suffix features) beat the HMM in Chinese and Swedish but "
               "underperform it in English and French")
    evidence = "; ".join(f"{m}: " + ", ".join(f"{l} {_paper(m, l) - _paper('Baseline', l):+.2f}" for l in LANGUAGES)
                         for m in SUFFIX_BOOSTING)
    better = {"en": False, "zh": True, "fr": False, "sv": True}
    parts = _parts(runs, [(l, m, HMM) if better[l] else (l, HMM, m) for m in SUFFIX_BOOSTING for l in LANGUAGES])
    if parts is None:
        return not_run(PAPER, where, wording, evidence, "the suffix boosting runs of all four languages")
    ours = "; ".join(f"{m}: " + ", ".join(f"{l} {_points(runs, l, m) - _points(runs, l, HMM):+.2f}" for l in LANGUAGES)
                     for m in SUFFIX_BOOSTING)
    return judged_claim(PAPER, where, wording, evidence, ours, all_of(parts),
                        f"{BEATS}, for each reranker and language in the claimed direction."
                        + "".join(_ablation(runs, f"{m} minus the HMM:", m, HMM) for m in SUFFIX_BOOSTING), setup=SETUP)


def _ours_best_claim(runs):
    where = "Table 2, fourth block; Sec. 4.2"
    wording = ("Except in Swedish, one of our models outperforms the baseline decoder and the other reranking "
               "approaches (test; the rerankers of the blocks above, with suffix features)")
    evidence = "; ".join(f"{l}: best of ours {max(_paper(m, l) for m in RERANKERS):.2f}, best suffix reranker "
                         f"{max(_paper(m, l) for m in SUFFIX_BOOSTING):.2f}, HMM {_paper('Baseline', l):.2f}"
                         for l in ("en", "zh", "fr"))
    comparisons, texts = [], []
    for l in ("en", "zh", "fr"):
        dev = {m: accuracy(runs, l, m, "dev") for m in RERANKERS}
        if _missing(*dev.values()):
            return not_run(PAPER, where, wording, evidence, f"the reranker runs of {l}")
        ours = max(dev, key=dev.get)  # "one of our models": the one with the best dev accuracy
        comparisons += [(l, ours, rival) for rival in (HMM, *SUFFIX_BOOSTING)]
        texts.append(f"{l}: {ours} {_points(runs, l, ours):.2f}, "
                     + ", ".join(f"{m} {_points(runs, l, m):.2f}" for m in SUFFIX_BOOSTING if _points(runs, l, m))
                     + f", HMM {_points(runs, l, HMM):.2f}")
    parts = _parts(runs, comparisons)
    if parts is None:
        return not_run(PAPER, where, wording, evidence, "the HMM and suffix reranker runs of en, zh and fr")
    return judged_claim(PAPER, where, wording, evidence, "; ".join(texts), all_of(parts),
                        f"Of our three models, the one with the best dev accuracy in each language (the paper names the "
                        f"best on test); {BEATS}, against the HMM and both suffix rerankers."
                        + _ablation(runs, "Discriminative minus the better of the HMM and the suffix rerankers:",
                                    "Discriminative", (HMM, *SUFFIX_BOOSTING), ("en", "zh", "fr")), setup=SETUP)


def _significance_claim(runs):
    where = "Table 2 caption"
    wording = ("The improvements of the discriminative model over the baseline are statistically significant at "
               "p = 0.01 on Chinese and p = 0.05 on English")
    evidence = (f"Chinese {_paper('Discriminative', 'zh') - _paper('Baseline', 'zh'):+.2f}, English "
                f"{_paper('Discriminative', 'en') - _paper('Baseline', 'en'):+.2f} points (test); "
                "the test is not named")
    level = {"zh": 0.01, "en": 0.05}
    parts = [(f"{l} at p < {a:g}", _versus(runs, l, "Discriminative", HMM, at_level, alpha=a)) for l, a in level.items()]
    if any(j is None for _, j in parts):
        return not_run(PAPER, where, wording, evidence, "the Chinese and English discriminative runs")
    first = [(l, _versus(runs, l, "Discriminative" + ON_FIRST, HMM_FIRST)) for l in level]
    return judged_claim(PAPER, where, wording, evidence,
                        ", ".join(f"{l} {_points(runs, l, 'Discriminative') - _points(runs, l, HMM):+.2f}"
                                  for l in level) + " points", all_of(parts),
                        "Holds in a language when the difference favours the discriminative model and both paired tests "
                        "over test sentences reject no difference at the paper's level for it (the printed p is the "
                        "larger of the two)."
                        + ("" if any(j is None for _, j in first) else " Ablation (on the first-order HMM's lists, "
                           "against it): " + "; ".join(f"{l} {j.verdict} ({j.interval})" for l, j in first) + "."),
                        setup=SETUP)


def _gains_claim(runs):
    where = "Table 2; Sec. 4.2"
    wording = ("The discriminative model improves on the baseline decoder in every language, most in Chinese "
               "(0.6 points; 0.15, 0.12 and 0.13 in English, French and Swedish)")
    evidence = ", ".join(f"{l} {_paper('Discriminative', l) - _paper('Baseline', l):+.2f}" for l in LANGUAGES)
    gains = {l: _versus(runs, l, "Discriminative", HMM) for l in LANGUAGES}
    if _missing(*gains.values()):
        return not_run(PAPER, where, wording, evidence, "the discriminative runs of all four languages")
    # "most in Chinese": the other languages' test sets are other sentences, so their gains cannot be paired with
    # Chinese's; Chinese's is larger when its interval lies above each other's
    apart = {l: separated(gains["zh"], gains[l]) for l in LANGUAGES if l != "zh"}
    most = next((v for v in (FAILS, INCONCLUSIVE) if v in apart.values()), HOLDS)
    largest = Judged(most, "zh's interval against " + ", ".join(f"{l}'s: {v}" for l, v in apart.items()),
                     gains["zh"].mean_diff, gains["zh"].low, gains["zh"].high, gains["zh"].n)
    judged = all_of([(f"improves, {l}", j) for l, j in gains.items()] + [("most in Chinese", largest)])
    return judged_claim(PAPER, where, wording, evidence,
                        ", ".join(f"{l} {100 * j.mean_diff:+.2f}" for l, j in gains.items()), judged,
                        f"{BEATS}, in each language; 'most in Chinese' holds when Chinese's interval lies above each "
                        "other language's (the languages' test sets cannot be paired)."
                        + _ablation(runs, "Discriminative minus the HMM:", "Discriminative", HMM), setup=SETUP)


def _beats_suffix_claim(runs):
    where = "Table 2; Sec. 1, 4.2, 6"
    wording = ("Using only within-space features, the discriminative model beats the rerankers that use joint "
               "(suffix-tag) features")
    wins = [l for l in LANGUAGES if _paper("Discriminative", l) > max(_paper(m, l) for m in SUFFIX_BOOSTING)]
    evidence = f"higher than both suffix rerankers on test in {len(wins)} of 4 languages ({', '.join(wins)})"
    rivals = {l: best_boosting(runs, l, SUFFIX_BOOSTING) for l in LANGUAGES}
    parts = None if None in rivals.values() else _parts(runs, [(l, "Discriminative", r) for l, r in rivals.items()])
    if parts is None:
        return not_run(PAPER, where, wording, evidence, "the discriminative and suffix boosting runs of every language")
    return judged_claim(PAPER, where, wording + " (in at least 3 of 4 languages, as in the paper)", evidence,
                        "; ".join(f"{l} {_points(runs, l, 'Discriminative'):.2f} vs {r} {_points(runs, l, r):.2f}"
                                  for l, r in rivals.items()), at_least(parts, 3),
                        f"Against the dev-chosen suffix reranker of each language; {BEATS}; holds when it holds in 3 or "
                        "more languages, does not hold when it cannot."
                        + _ablation(runs, "Discriminative minus the better suffix reranker:", "Discriminative",
                                    SUFFIX_BOOSTING), setup=SETUP)


def _pairs_claim(runs, where, wording, evidence_words, better, worse, what):
    """"A beats B in most (reranker, language) pairs": ``better``[i] against ``worse``[i] in every language."""
    wins = sum(_paper(a, l) > _paper(b, l) for a, b in zip(better, worse) for l in LANGUAGES)
    evidence = f"{evidence_words} on test in {wins} of {len(better) * len(LANGUAGES)} (reranker, language) pairs"
    parts = _parts(runs, [(l, a, b) for a, b in zip(better, worse) for l in LANGUAGES])
    if parts is None:
        return not_run(PAPER, where, wording, evidence, what)
    ours = "; ".join(f"{a} − {b}: " + ", ".join(f"{l} {_points(runs, l, a) - _points(runs, l, b):+.2f}"
                                                 for l in LANGUAGES) for a, b in zip(better, worse))
    k = len(parts) // 2 + 1
    return judged_claim(PAPER, where, wording, evidence, ours, at_least(parts, k),
                        f"{BEATS}; 'most' holds when it holds in {k} or more of the {len(parts)} pairs, does not hold "
                        "when it cannot.", setup=SETUP)


def _ngram_helps_claim(runs):
    return _pairs_claim(runs, "Table 2, fifth block; Sec. 4.2", "The baseline rerankers improve when the n-gram "
                        "features are included (in most reranker-language pairs)", "n-gm above Sufx", NGRAM_BOOSTING,
                        SUFFIX_BOOSTING, "the boosting runs of all four languages")


def _ngram_below_claim(runs):
    return _pairs_claim(runs, "Table 2, fifth block; Sec. 4.2", "With n-gram features the baseline rerankers are still "
                        "below the discriminative model in most cases", "Discriminative above n-gm",
                        ("Discriminative",) * 2, NGRAM_BOOSTING, "the n-gm boosting and discriminative runs")


def _variants_claim(runs):
    where = "Table 2, fourth block; Sec. 4.2"
    wording = ("Softened-Disc (margin) does better than Generative, and Discriminative (margin proportional to the "
               "loss) better still")
    claimed = ["Discriminative", "Softened-Disc", "Generative"]
    paper = {m: np.mean([_paper(m, l) for l in LANGUAGES]) for m in claimed}
    evidence = "mean test accuracy over the four languages: " + ", ".join(f"{m} {v:.3f}" for m, v in paper.items())
    units = {m: [_units(runs, l, m) for l in LANGUAGES] for m in claimed}
    if any(u is None for us in units.values() for u in us):
        return not_run(PAPER, where, wording, evidence, "the low-dimensional reranker runs of all four languages")
    pooled = {m: np.concatenate(us) for m, us in units.items()}
    parts = [(f"{a} − {b}", direction(pooled[a], pooled[b], units="sentences")) for a, b in zip(claimed, claimed[1:])]
    means = {m: float(np.mean([_points(runs, l, m) for l in LANGUAGES])) for m in claimed}
    return judged_claim(PAPER, where, wording, evidence, "mean test accuracy over the four languages: "
                        + ", ".join(f"{m} {v:.3f}" for m, v in means.items()), all_of(parts),
                        f"Paired over the test sentences of the four languages pooled (each language's sentences "
                        f"weighing by their number); {BEATS}, for both steps.", setup=SETUP)


def _table3_claim(runs):
    where = "Table 3; Sec. 4.2"
    wording = "Without the Viterbi decoding score the rerankers' accuracy drops significantly (below the baseline)"
    drops = [PAPER_TABLE2[m][4 + i] - PAPER_TABLE3[m][i] for m in PAPER_TABLE3 for i in range(4)]
    evidence = f"test drops of {min(drops):.2f} to {max(drops):.2f} points; every Table 3 value below the baseline"
    parts, ours = [], []
    for m in RERANKERS:
        for l in LANGUAGES:
            joint, hmm = _units(runs, l, m), _units(runs, l, HMM)
            alone = _units(runs, l, m, prefix=NO_VITERBI_SENTENCE, select="dev:accuracy_no_viterbi")
            if joint is None or alone is None or hmm is None:
                return not_run(PAPER, where, wording, evidence, "the per-sentence test values without the decoder's "
                               "score (test:q_no_viterbi:<sentence>) of every low-dimensional reranker")
            parts += [(f"{m} − without it, {l}", direction(joint, alone, units="sentences")),
                      (f"HMM − {m} without it, {l}", direction(hmm, alone, units="sentences"))]
            ours.append(100 * (joint.mean() - alone.mean()))
    return judged_claim(PAPER, where, wording, evidence,
                        f"test drops of {min(ours):.2f} to {max(ours):.2f} points (mean {np.mean(ours):.2f})",
                        all_of(parts), f"{BEATS}: each reranker with the decoder's score beats itself without it, and "
                        "the HMM beats it without it, in every language (without the score, the setting chosen by dev "
                        "accuracy without it).", setup=SETUP)


def _fig1_claim(runs):
    where = "Fig. 1; Sec. 4.2"
    wording = ("On English dev, the discriminative model's accuracy varies with tau and lambda but is always above "
               "the baseline tagger's")
    evidence = f"every point of both curves above {PAPER_TABLE2['Baseline'][0]:.2f}"  # the baseline's English dev accuracy
    hmm = accuracy_units(runs, "en", HMM, prefix=DEV_SENTENCE)
    settings = [s for (l, m, s) in runs if l == "en" and m == "Discriminative"
                and sum(dict(s).get(k) != v for k, v in CENTRE.items()) <= 1 and dict(s).get("k") == CENTRE["k"]]
    units = {s: accuracy_units(runs, "en", "Discriminative", prefix=DEV_SENTENCE, setting=s) for s in settings}
    if hmm is None or not units or any(u is None for u in units.values()):
        return not_run(PAPER, where, wording, evidence, "the English discriminative grid with its dev sentences "
                       "(dev:q:<sentence>)")
    parts = [(", ".join(f"{k} = {dict(s)[k]:g}" for k in ("tau", "lam")), direction(u, hmm, units="dev sentences"))
             for s, u in sorted(units.items())]
    values = [100 * u.mean() for u in units.values()]
    return judged_claim(PAPER, where, wording, evidence,
                        f"{len(values)} points from {min(values):.2f} to {max(values):.2f}; HMM {100 * hmm.mean():.2f}",
                        all_of(parts), f"Each point of Fig. 1's two lines (k = {CENTRE['k']}) against the HMM over the "
                        f"dev sentences; {BEATS}, at every point.", setup=SETUP)


def claims(rows) -> list:
    """Every claim of Jagarlamudi & Daumé III (2012) against the recorded runs (the Claims section).

    Replications: Table 2 (the rerankers against the HMM and each other, the n-gram rows, the caption's
    significance), Table 3 and Fig. 1, each by paired tests over sentences. Checks (``checks``): the baseline per
    language, the languages' order, the oracle's room, the English optimum and Alg. 1's convergence. A claim whose runs
    are missing is "cannot be tested here".
    """
    runs = collect(rows)
    return [*(hmm_claim(runs, l) for l in LANGUAGES), high_accuracy_claim(runs), oracle_claim(runs),
            _suffix_rerankers_claim(runs), _ours_best_claim(runs), _significance_claim(runs), _gains_claim(runs),
            _beats_suffix_claim(runs), _ngram_helps_claim(runs), _ngram_below_claim(runs),
            _variants_claim(runs), _table3_claim(runs), _fig1_claim(runs), optimum_claim(runs), convergence_claim(runs)]
