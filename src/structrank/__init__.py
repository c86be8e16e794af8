"""structrank: structured, loss-sensitive learning to rank and reranking.

The estimators and ``evaluate`` are importable from the top level (``structrank.StructSVMRanker``);
they are loaded on first use so that ``import structrank`` stays light.
"""

__version__ = "0.1.0"

from structrank.errors import DataFormatError, DataValidationError, StructRankError  # noqa: E402

_LAZY = {
    "evaluate": "structrank.metrics",
    "LinearRegressionRanker": "structrank.learners",
    "RankSVM": "structrank.learners",
    "StructSVMRanker": "structrank.learners",
    "McRank": "structrank.learners",
    "LambdaMARTRanker": "structrank.learners",
    "LatentPerceptronRanker": "structrank.learners",
    "LatentSSVMRanker": "structrank.learners",
    "PermutationCRFRanker": "structrank.learners",
    "StructuredBoostingRanker": "structrank.learners",
    "MLPRanker": "structrank.learners",
}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'structrank' has no attribute {name!r}")


__all__ = ["DataFormatError", "DataValidationError", "StructRankError", "__version__", *_LAZY]
