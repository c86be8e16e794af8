"""``structrank reproduce jagarlamudi2012``: low-dimensional reranking of POS-tag n-best lists.

Jagarlamudi & Daumé III (2012) on the four languages of the paper, with the Universal
Dependencies treebanks that the data folder holds complete (docs/ARCHITECTURE.md says why these):
English-EWT, Chinese-GSD (r1.4), French-Sequoia and Swedish-LinES (r2.4).

1. Per language (``prepare``, cached in ``OUT/data/LANG.npz``): the paper's baseline, a trigram
   HMM with second-order ("trigram") emissions as Thede & Harper (1999) estimate them
   (structrank_lab.nlp.hmm, ``emission_order=2``), trained on train, tags dev and test with its exact
   10-best Viterbi; the training sentences get their 10-best lists by 10-fold jackknifing over
   contiguous blocks; the two views of every candidate (structrank_lab.nlp.tagging), the suffix-tag
   pair features of the boosting baselines and the word-tag n-gram features of their "n-gm" rows
   (structrank_lab.nlp.pair_features). Our earlier HMM, with first-order emissions, is trained and
   decoded beside it, for the tagger table and the significance of the emission order.
2. Runs: every reranker at every setting of its grid, and the four boosting baselines (Collins &
   Koo and the regularised version, with suffix pairs and with suffix pairs plus n-grams), each
   trained on the jackknifed training lists; the Viterbi weight w of Eq. 13 (and the boosting
   rounds) chosen on dev. The report chooses each model's setting on dev accuracy. Each run also
   records the correct tokens of every test sentence where its choice differs from the HMM's
   (the HMM run records them all), so that paired tests over sentences can be computed from the
   store.
3. Report: the taggers (both emission orders, with their known/unknown-word accuracies), Table 2
   (baseline, 10-best oracle, every reranker; dev and test token accuracy), the significance of
   each Table 2 row against the HMM and of the low-dimensional rerankers against the best boosting
   reranker (paired randomisation, paired t and sign tests over test sentences), Table 3 (the
   rerankers without the Viterbi score), Fig. 1 (English dev accuracy against tau and against
   lambda), and the paper's published rows beside ours (marked as published). ``claims(rows)``
   states every claim of the paper against these runs (the Claims section).

The ablation on the emission order runs the discriminative reranker (at the paper's English
optimum) and the four boosting rerankers again on the first-order HMM's own jackknifed lists
(``OUT/data/LANG-first-order-lists.npz``; model names end in ``ON_FIRST``); the first-order HMM's
run records its test sentences where it differs from the paper's HMM, and each of these reranker
runs where it differs from the first-order HMM. The paired tests are computed from the store
(``compare``).

The package, by concern: ``design`` (the languages, the taggers, the rerankers and their grid),
``published`` (the paper's tables), ``data`` (tagging, jackknifing and featurising, kept in the shared
cache format of ``experiments.cache``), ``plan`` (the runs and ``reproduce``), ``recorded`` (the
recorded values read back: the dev choice and the paired tests over test sentences), ``report`` (the
tables and Fig. 1) and ``claims``.
"""

from structrank_lab.experiments.jagarlamudi2012.claims import claims
from structrank_lab.experiments.jagarlamudi2012.design import EXPERIMENT
from structrank_lab.experiments.jagarlamudi2012.plan import reproduce
from structrank_lab.experiments.jagarlamudi2012.report import report_sections

__all__ = ["EXPERIMENT", "claims", "report_sections", "reproduce"]
