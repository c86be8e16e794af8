"""Rankers: one estimator class per method family.

The names below are loaded on first use (PEP 562): ``structrank train svm-auc`` imports the
structural SVM's module only, not LightGBM's, PyTorch's or scikit-learn's linear models. The
models built from these classes (short names, defaults, grids) and the classes a model file may
hold are in ``structrank.learners.registry``.
"""

import importlib

_LAZY = {
    "BaseRanker": "base", "LinearRankerMixin": "base", "OptimiserHealth": "base", "StayedAtZeroWarning": "base",
    "LinearRegressionRanker": "baselines", "PolySVCRanker": "baselines", "RankSVM": "baselines",
    "preference_pairs": "baselines",
    "BoostingReranker": "nbest_boosting",
    "PermutationCRFRanker": "crf",
    "LatentPerceptronRanker": "latent", "LatentSSVMRanker": "latent",
    "LowDimReranker": "lowdim",
    "MLPRanker": "mlp",
    "CrossEncoderRanker": "cross_encoder",
    "NystroemRanker": "nystroem_ranker",
    "StructSVMRanker": "ssvm",
    "StructuredBoostingRanker": "structured_boosting",
    "LambdaMARTRanker": "lightgbm_rankers", "McRank": "lightgbm_rankers",
}


def module_of(name: str) -> str:
    """The module that defines ``name`` (nothing is imported)."""
    return f"structrank.learners.{_LAZY[name]}"


def __getattr__(name):
    if name in _LAZY:
        return getattr(importlib.import_module(module_of(name)), name)
    raise AttributeError(f"module 'structrank.learners' has no attribute {name!r}")


__all__ = sorted(_LAZY)


def __dir__():  # the lazy names too (PEP 562): tab completion and autodoc see them
    return sorted({*globals(), *__all__})
