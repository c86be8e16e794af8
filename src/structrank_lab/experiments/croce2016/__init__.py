"""``structrank reproduce croce2016``: Nyström embeddings of tree kernels for SemEval-2016 cQA.

Croce, Filice & Basili (2016), Table 1, on the data this folder holds (docs/ARCHITECTURE.md):
SemEval-2016 Task 3 subtask A, trained on train-part2 plus the reformatted 2015 dev set (two
threads that duplicate 2016 test questions dropped; the official train-part1 is not in the
data folder), C chosen on the 2016 dev set, tested on the 2016 test set.

1. ``prepare`` (cached in ``OUT/data``): every (question, comment) pair becomes an object of
   three parts, as in Filice et al. (2016)'s kernel sum:

   - ``x``: the dense text-pair similarity features of structrank.qa.features plus the task
     features of structrank.qa.semeval, standardised on train; kernel RBF(gamma = 1 / dim);
   - ``q`` and ``c``: shallow trees of question and comment (structrank_lab.nlp.shallow, tags from
     structrank's HMM tagger trained on UD English-EWT, texts cut at ``MAX_WORDS`` words);
     kernel PTK (lam = mu = 0.4, child subsequences up to ``PTK_MAX_LENGTH``), normalised.
     (REL marks of the words question and comment share, ``mark_related``, gave the same dev
     MAP in a 300-landmark trial and would make every question tree distinct, multiplying the
     question kernel's cost; they are not used.)

   The kernel of two pairs is the sum of the three. Its columns against every training pair
   are computed once, in blocks of ``BLOCK`` columns in the order of a random permutation of
   the training pairs (seed 0), each block timed, over joblib workers. Every landmark set of
   the sweep and the full kernel SVM read their columns from these blocks, so the kernel is
   evaluated once per (row, training pair). With seed 0 the first l columns *are* the l
   landmarks, and the measured block times are the kernel time of that Nyström model; other
   seeds draw their landmarks elsewhere in the permutation (MAP spread only, times not
   attributed).
2. Runs: Nyström with 100..1000 landmarks and three seeds (LinearSVC, liblinear's dual
   coordinate descent); the full kernel SVM (sklearn SVC on the precomputed Gram matrix) with
   the tree kernels and with the RBF part alone; a linear SVM on the same dense (non-tree)
   features; the IR baseline (thread order). Each SVM is fitted once per C of the grid: C chosen
   by dev MAP gives MAP and F1 at threshold 0; C and the decision threshold chosen together by
   dev F1 (the paper's setup for F1) give F1 ``.tuned``; each test question's AP and Good-class
   counts are recorded for the claims' paired tests. And on LETOR 4.0 MQ2008: SVM-map and
   SVM-ndcg on the raw features against the same rankers behind a Nyström RBF embedding (a
   kernelised structured ranker).
3. Report: Table 1 (landmarks, MAP, F1, saving against the full SVM's support vectors, times),
   the reference rows with C, support vectors and training size, a figure of MAP and saving
   against landmarks, the published Table 1 beside ours (marked), the kernel throughput of the
   blocks, and the MQ2008 table.

The package, by concern: ``design`` (the data set, the kernel parts, the landmark sweep and the
reference rows), ``published`` (the paper's Table 1 and the numbers its text quotes), ``data`` (the
pair objects and the kernel cache, in the shared format of ``experiments.cache``), ``scoring`` (a run's
scores to its measurements: the two choices of C, the dev-F1 threshold, the per-question values),
``plan`` (the runs and ``reproduce``), ``recorded`` (the recorded runs read back, which the report and the
claims share, and the linearised F1), ``report`` (the tables and the figure), ``claims`` (the replications,
judged by paired tests over the test questions) and ``checks`` (counts, sizes and costs).
"""

from structrank_lab.experiments.croce2016.claims import claims
from structrank_lab.experiments.croce2016.design import EXPERIMENT, MAX_WORDS, PTK_MAX_LENGTH
from structrank_lab.experiments.croce2016.plan import reproduce
from structrank_lab.experiments.croce2016.report import report_sections

__all__ = ["EXPERIMENT", "MAX_WORDS", "PTK_MAX_LENGTH", "claims", "report_sections", "reproduce"]
