"""Rankers: one estimator class per method family."""

from structrank.learners.base import BaseRanker, LinearRankerMixin
from structrank.learners.baselines import LinearRegressionRanker, PolySVCRanker, RankSVM, preference_pairs
from structrank.learners.boosting import BoostingReranker
from structrank.learners.crf import PermutationCRFRanker
from structrank.learners.latent import LatentPerceptronRanker, LatentSSVMRanker
from structrank.learners.lowdim import LowDimReranker
from structrank.learners.mlp import MLPRanker
from structrank.learners.nystroem_ranker import NystroemRanker
from structrank.learners.ssvm import StructSVMRanker
from structrank.learners.structured_trees import StructuredBoostingRanker
from structrank.learners.trees import LambdaMARTRanker, McRank

# The n-best rerankers (LowDimReranker, BoostingReranker) take NBestData rather than (X, y, qid)
# and have no model files yet, so they are not in RANKER_CLASSES.
RANKER_CLASSES = {
    cls.__name__: cls
    for cls in (LinearRegressionRanker, RankSVM, PolySVCRanker, McRank, LambdaMARTRanker, StructSVMRanker,
                LatentPerceptronRanker, LatentSSVMRanker, PermutationCRFRanker, StructuredBoostingRanker,
                MLPRanker, NystroemRanker)
}

__all__ = [
    "RANKER_CLASSES",
    "BaseRanker",
    "BoostingReranker",
    "LambdaMARTRanker",
    "LatentPerceptronRanker",
    "LatentSSVMRanker",
    "LinearRankerMixin",
    "LowDimReranker",
    "MLPRanker",
    "NystroemRanker",
    "LinearRegressionRanker",
    "McRank",
    "PermutationCRFRanker",
    "PolySVCRanker",
    "RankSVM",
    "StructSVMRanker",
    "StructuredBoostingRanker",
    "preference_pairs",
]
