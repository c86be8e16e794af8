"""``structrank reproduce chakrabarti2008``: the experiments of Chakrabarti et al. (2008), KDD.

On LETOR 3.0 OHSUMED and LETOR 4.0 MQ2008, five folds each (TD2003/TD2004 too when the data folder
has them; they are not in ours, nor are the paper's TREC 2000/2001, whose SVMlight files the reader
accepts):

- Fig. 9: test MRR@10, NDCG@10 and MAP for each training criterion (AUC, MAP, NDCG, NDCG-NC,
  MRR, COMBO, DORM, McRank), C chosen on vali from ``ROWS``' grid (by the criterion's own
  metric); RankSVM and LambdaMART beside them. Measured on the official test files under the
  data set's convention, and with binary relevance (the paper's G = z; prefix ``binary:``), both
  on the files as distributed and after the data preparation of Sec. 4.1 (``prep``).
- Fig. 7: test MRR@k, k = 1..10, of SVM-mrr with phi_mrr against phi_po.
- Figs. 4-6: average slack, objective / objective(w = 0) and |w|^2 at termination against C,
  on Fold1's training file.
- Figs. 8 and 10: time in the oracle and in the QP, DORM (dense and sparse A) against SVM-ndcg,
  and McRank's training time beside SVM-ndcg's and SVM-mrr's, on every fold's training file.
- The OHSUMED gap study (split ``gap``): SVM-auc, SVM-map and SVM-ndcg-nc under other readings of
  Sec. 4.1 and of "good" (``GAP_VARIANTS``), each measured also under trec_eval's conventions and
  with C chosen on the test file (an upper bound of what C selection can explain); the report
  says how many of the points between our Fig. 9 and the paper's each reading closes. Our reading
  and the one that keeps the good documents run for every criterion of Fig. 9 (``GAP_EVERY_ROW``).

The report puts the paper's OHSUMED cells beside ours in Fig. 9 and the latent targets beside the
paper's in Figs. 4-6, gives the rows the text describes (sparse DORM, SVM-combo with shared slacks
and with phi_mrr, the latent targets), and ``claims`` judges each claim of the paper.

Every claim is judged by a paired test over its natural units (``verdict_rules``): each test query's Fig. 9
metrics are recorded (``q:<qid>:binary:<metric>``), each training query's slack at termination in the C sweep
(``q:<qid>:slack``), and the timed fits run on every fold. The claims are judged first on the paper's setup
(the data prepared as in Sec. 4.1; SVM-mrr in the reading of Fact 3.5 whose training slack falls with C, as in
the paper's Figs. 4-5), with our other setups beside.

The package, by concern: ``design`` (the rows and their grids, the C sweep, the timed fits and the
gap study's readings), ``published`` (the paper's Fig. 9 on OHSUMED), ``plan`` (the runs and
``reproduce``), ``training`` (the per-query training slacks), ``report`` (the tables and figures),
``recorded`` and ``judging`` (the store read for the claims, the setups, the reading of Fact 3.5),
``fig9_claims``, ``training_claims`` and ``claims``.
"""

from structrank_lab.experiments.chakrabarti2008.claims import claims
from structrank_lab.experiments.chakrabarti2008.design import EXPERIMENT
from structrank_lab.experiments.chakrabarti2008.plan import reproduce
from structrank_lab.experiments.chakrabarti2008.report import report_sections

__all__ = ["EXPERIMENT", "claims", "report_sections", "reproduce"]
