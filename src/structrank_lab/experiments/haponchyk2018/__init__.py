"""``structrank reproduce haponchyk2018``: answer reranking with latent structured rankers for MAP.

Haponchyk & Moschitti (2018) on WikiQA and TREC13 (Sec. 5):

- Table 1: WikiQA dev and test: SVM (polynomial kernel, first 10 candidates per question), LSP,
  SVM-map, LSP-AP, LSSVM-AP and the exact-inference LSP-AP* and LSSVM-AP*, on two feature sets:
  ours (``sim``, structrank.qa.features) and the paper's own list as far as it can be rebuilt
  offline (``paper``: its similarity measures among our columns and the PTK similarity of
  shallow trees, without ESA). Our features lift the pointwise SVM more than the structured
  models, so the paper's list is the setup every claim is judged on first.
- Table 2: the same models on sentence embeddings in place of the paper's CNN embeddings
  (structrank.qa.embeddings, all-MiniLM-L6-v2): the paper's bare concatenation [phi(q), phi(d)],
  the interaction features [cos, phi(q) * phi(d)], and the interaction features beside the
  similarity features. Skipped, with a note, when the embeddings extra is not installed.
- Tables 3 and 4: disjoint 5-fold cross-validation on WikiQA and TREC13 (both text feature sets):
  model i is trained on the training questions outside fold i, tuned on the i-th fifth of dev and
  tested on the i-th fifth of test; mean and standard deviation over the five.
- Fig. 1: dev MAP after each epoch for LSP, LSP-AP and LSP-AP* (WikiQA) at the C chosen on dev, and the same
  runs on ``N_SEEDS - 1`` other orders of the training questions (seed s permutes them once; seed 0 is the
  file's order, Alg. 1 as printed), the units Fig. 1's claims are paired over.
- The grid study: every model's dev and test MAP at each C of its grid, one run per C, the grid
  grown past an end where the choice sits (``grid_points``), and LSSVM-AP under Eq. 4 as printed
  (C on the sum of the slacks, ``LatentSSVMRanker(slack="sum")``) with the paper's grid.
- ``claims(rows)``: each claim of the paper judged by a paired test (``verdict_rules``) over the questions
  (each run records every test question's MAP, MRR and P@1 as ``q:<qid>:<metric>``, and dev's as
  ``dq:<qid>:<metric>``), the folds' test questions pooled, or the seeds; first on the paper's setup (its feature
  list as rebuilt and its C grid {1, ..., 5000} for SVM-map), then on ours (our features, SVM-map's grid
  {0.01, ..., 1000}); the grid's reach and the baseline's level are checks, counted apart.

Hyper-parameters are chosen on dev only: C from {1, 10, 100, 1000, 2000, 5000} for the latent
models (the paper's grid), the epoch T <= 100 on dev MAP for the perceptrons; SVM-map from the paper's grid on
the feature sets that stand for the paper's (its list, its embeddings: ``PAPER_GRID_SETS``) and from its own
{0.01, ..., 1000} on ours; the SVM over its own grid. Features are computed once per data set and feature set,
fitted on the training split, and kept in the output folder (features/*.npz) for the runs to load.

The grid study's fits run cheap ones first and the slow large-C ones (``SLOW_C``) one at a time,
after all the others; a grid grows one 1-2-5 step at a time past an end. Table 1 gives each
model's margin over the SVM baseline.

The package, by concern: ``design`` (the table rows, the feature sets and the grid study's bounds),
``published`` (the paper's tables and C grid), ``features`` (the feature matrices, computed once into
OUT/features), ``plan`` (the runs and ``reproduce``), ``grid`` (the grid study's points), ``recorded``
(the recorded values read back), ``report`` (the tables and Fig. 1), ``joint_rules`` (two rules built from
``verdict_rules``), ``judging`` (what the claims share), ``claims`` (Table 1, Fig. 1, Table 2), ``cv_claims``
(Tables 3 and 4), ``grid_claims`` (Eq. 4 and the checks) and ``neural`` (the claims neural-qa asks again).
"""

from structrank_lab.experiments.haponchyk2018.claims import claims
from structrank_lab.experiments.haponchyk2018.design import EXPERIMENT
from structrank_lab.experiments.haponchyk2018.plan import reproduce
from structrank_lab.experiments.haponchyk2018.report import report_sections

__all__ = ["EXPERIMENT", "claims", "report_sections", "reproduce"]
