"""``structrank reproduce volkovs2011``: loss-sensitive training of permutation CRFs (Volkovs et al. 2011).

On LETOR 4.0 MQ2008, five folds (MQ2007 too when the data folder has it), for every objective
(ML, LA, LS, EL, KL; and ML-sum, LA-sum, the paper's ML and LA with Eq. 10's sum over the
zero-loss rankings where ours take their mean) and every setting of the sweeps of Sec. 6.2 (learning rates
{0.5, 0.1, 0.01, 0.001}, alpha in {1, 10, 20, 50} for LA, T in {1, 10, 20, 50} for KL), and for
three seeds: one CRF is trained per (fold, seed, objective, setting) for at most 100 epochs, the
epoch chosen on the fold's vali file. The report then chooses, per fold and seed, the setting with
the best vali NDCG (the mean of NDCG@1..5, letor4 convention) and gives:

- Table 1: test NDCG@1..5, the mean over folds and seeds, ± the spread over seeds (the standard
  deviation of the three 5-fold means), beside the paper's published rows (marked as published);
- Fig. 2 as a figure, with the seed spread as error bars, and each objective's difference to ML
  (ours and the paper's sum), paired by fold and seed, with its seed spread, so that real
  differences can be told from noise;
- the sweeps: vali and test NDCG per setting;
- three studies the paper does not make: KL with T below the paper's grid ({0.03, 0.1, 0.3}); KL
  with the queries visited in a new random order each epoch (the others visit them in the order
  of the data, as "iterating over queries" reads); and the effect of keeping the training
  queries that have a single relevance level (skipped by default; ML, LA and KL get a non-zero
  gradient from them, ML-sum 720 times ours on a 6-document query);
- Fig. 1: the normalised negative derivative of each objective with respect to the energies of
  the caption's five configurations, computed exactly (structrank.oracles.crf.energy_gradient);
- Claims (:func:`claims`): every claim of the paper against these runs, for the Claims section of
  the results page (structrank_lab.experiments.claims).

Each run also records Sec. 6.1's counts of its fold's files (metrics ``data:*``).

The package, by concern: ``design`` (the objectives' rows, their grids and the studies),
``published`` (the paper's Table 1, Fig. 1's example and the counts it quotes), ``plan`` (the runs
and ``reproduce``), ``recorded`` (the recorded values read back: the setting chosen on vali, the
seed means and the paired differences), ``report`` (the tables and figures), ``objectives`` (Fig. 1
and the claims about the objectives themselves, computed exactly without runs) and ``claims``.
"""

from structrank_lab.experiments.volkovs2011.claims import claims
from structrank_lab.experiments.volkovs2011.design import EXPERIMENT
from structrank_lab.experiments.volkovs2011.plan import reproduce
from structrank_lab.experiments.volkovs2011.report import report_sections

__all__ = ["EXPERIMENT", "claims", "report_sections", "reproduce"]
