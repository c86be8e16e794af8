"""Rankers: one estimator class per method family.

The names below are loaded on first use (PEP 562): ``structrank train svm-auc`` imports the
structural SVM's module only, not LightGBM's, PyTorch's or scikit-learn's linear models.
"""

_LAZY = {
    "BaseRanker": "base", "LinearRankerMixin": "base",
    "LinearRegressionRanker": "baselines", "PolySVCRanker": "baselines", "RankSVM": "baselines",
    "preference_pairs": "baselines",
    "BoostingReranker": "boosting",
    "PermutationCRFRanker": "crf",
    "LatentPerceptronRanker": "latent", "LatentSSVMRanker": "latent",
    "LowDimReranker": "lowdim",
    "MLPRanker": "mlp",
    "NystroemRanker": "nystroem_ranker",
    "StructSVMRanker": "ssvm",
    "StructuredBoostingRanker": "structured_trees",
    "LambdaMARTRanker": "trees", "McRank": "trees",
}

# The n-best rerankers (LowDimReranker, BoostingReranker) take NBestData rather than (X, y, qid)
# and have no model files yet, so they are not in RANKER_CLASSES.
_RANKERS = ("LinearRegressionRanker", "RankSVM", "PolySVCRanker", "McRank", "LambdaMARTRanker", "StructSVMRanker",
            "LatentPerceptronRanker", "LatentSSVMRanker", "PermutationCRFRanker", "StructuredBoostingRanker",
            "MLPRanker", "NystroemRanker")


def __getattr__(name):
    import importlib

    if name in _LAZY:
        return getattr(importlib.import_module(f"structrank.learners.{_LAZY[name]}"), name)
    if name == "RANKER_CLASSES":  # {class name: class} of the rankers a model file may hold
        return {ranker: __getattr__(ranker) for ranker in _RANKERS}
    raise AttributeError(f"module 'structrank.learners' has no attribute {name!r}")


__all__ = sorted([*_LAZY, "RANKER_CLASSES"])


def __dir__():  # the lazy names too (PEP 562): tab completion and autodoc see them
    return sorted({*globals(), *__all__})
