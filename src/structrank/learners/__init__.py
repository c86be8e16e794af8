"""Rankers: one estimator class per method family."""

from structrank.learners.base import BaseRanker, LinearRankerMixin
from structrank.learners.baselines import LinearRegressionRanker, RankSVM, preference_pairs

RANKER_CLASSES = {cls.__name__: cls for cls in (LinearRegressionRanker, RankSVM)}

__all__ = ["RANKER_CLASSES", "BaseRanker", "LinearRankerMixin", "LinearRegressionRanker", "RankSVM", "preference_pairs"]
