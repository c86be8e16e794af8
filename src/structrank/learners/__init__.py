"""Rankers: one estimator class per method family."""

from structrank.learners.base import BaseRanker, LinearRankerMixin
from structrank.learners.baselines import LinearRegressionRanker, PolySVCRanker, RankSVM, preference_pairs
from structrank.learners.crf import PermutationCRFRanker
from structrank.learners.latent import LatentPerceptronRanker, LatentSSVMRanker
from structrank.learners.ssvm import StructSVMRanker
from structrank.learners.trees import LambdaMARTRanker, McRank

RANKER_CLASSES = {
    cls.__name__: cls
    for cls in (LinearRegressionRanker, RankSVM, PolySVCRanker, McRank, LambdaMARTRanker, StructSVMRanker,
                LatentPerceptronRanker, LatentSSVMRanker, PermutationCRFRanker)
}

__all__ = [
    "RANKER_CLASSES",
    "BaseRanker",
    "LambdaMARTRanker",
    "LatentPerceptronRanker",
    "LatentSSVMRanker",
    "LinearRankerMixin",
    "LinearRegressionRanker",
    "McRank",
    "PermutationCRFRanker",
    "PolySVCRanker",
    "RankSVM",
    "StructSVMRanker",
    "preference_pairs",
]
