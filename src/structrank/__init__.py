"""structrank: structured, loss-sensitive learning to rank and reranking.

The estimators and ``evaluate`` are importable from the top level (``structrank.StructSVMRanker``);
they are loaded on first use so that ``import structrank`` stays light.

Importing it leaves numba's configuration alone: structrank's kernels cache to a folder of their own
through ``structrank.numba_cache``, which their modules import.
"""

import importlib

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
    "CrossEncoderRanker": "structrank.learners",
}


def __getattr__(name):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'structrank' has no attribute {name!r}")


__all__ = ["DataFormatError", "DataValidationError", "StructRankError", "__version__", *_LAZY]


def __dir__():  # the lazy names too (PEP 562): tab completion and autodoc see them
    return sorted({*globals(), *__all__})
