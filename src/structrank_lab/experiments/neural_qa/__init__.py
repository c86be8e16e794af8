"""``structrank reproduce neural-qa``: a cross-encoder fine-tuned on structured losses for answer selection.

On WikiQA and TREC QA (as haponchyk2018 prepares them, trec_eval's rules) and SemEval-2016 cQA subtask A (as
croce2016 reads it, the task scorer's rules): one transformer (all-MiniLM-L6-v2) fine-tuned as a cross-encoder
(``structrank.learners.CrossEncoderRanker``) on the MAP hinge of LSP-AP and SVM-map, the NDCG hinge and the
permutation CRF's KL objective, against pointwise BCE and pairwise RankNet in the same class and against
sentence-transformers' ``CrossEncoder`` with its default loss, all with the same budget, the epoch chosen on dev,
three seeds each; beside them the encoder's frozen cosine and haponchyk2018's feature-based LSP-AP, recomputed here.

The report: a table per data set (mean ± sd over the seeds), each structured loss against BCE and against ST's
CrossEncoder paired over test questions (the question's value the mean over the seeds; t-test and randomisation
test, Holm), the run times, a figure of dev MAP by epoch per loss, and its targets. ``claims(rows)``: the
targets, and haponchyk2018's claims on LSP-AP against the pointwise SVM asked again with a fine-tuned encoder
(``haponchyk2018.claims.neural_claims``).

The runs are resumable (the store skips the finished ones) and ordered so that WikiQA and TREC QA, where the
targets are judged, get seed 0 of every row, then seed 1, then seed 2, before SemEval's seeds. ``--quick``: the
first few questions of each split, one epoch, one seed; the environment variable ``STRUCTRANK_NEURAL_QA_ENCODER`` names another encoder folder (the tests' tiny
BERT).

The package, by concern: ``design`` (data sets, rows, seeds, budget, targets), ``data`` (the splits), ``runs`` (one
run and what it records), ``plan`` (the runs and ``reproduce``), ``recorded`` (the recorded values read back),
``report`` and ``claims``.
"""

from structrank_lab.experiments.neural_qa.claims import claims
from structrank_lab.experiments.neural_qa.design import EXPERIMENT
from structrank_lab.experiments.neural_qa.plan import reproduce
from structrank_lab.experiments.neural_qa.report import report_sections

__all__ = ["EXPERIMENT", "claims", "report_sections", "reproduce"]
