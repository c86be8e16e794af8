"""Ranking data: the RankingDataset container, readers and writers, folds, filters, synthetic data, n-best lists.

The names below are loaded on first use (PEP 562), so that ``import structrank.metrics`` (which
needs only ``data.labels`` and ``structrank.files``) does not import scikit-learn or SciPy.

tests/library/test_import_graph.py checks the graph in fresh interpreters: ``import structrank.metrics``
imports no scikit-learn, SciPy submodule or pandas, and the metrics' numba kernels load on the
first evaluation.
"""

import importlib

_LAZY = {
    "LetorCache": "cache", "build_letor_cache": "cache", "open_letor_cache": "cache",
    "RankingDataset": "dataset", "contiguous_order": "dataset", "group_offsets": "dataset",
    "cap_candidates": "filters", "drop_queries_without_irrelevant": "filters",
    "drop_queries_without_relevant": "filters", "keep_queries": "filters", "keep_queries_with_both": "filters",
    "LetorFold": "folds", "letor_folds": "folds", "letor_root": "folds",
    "read_letor": "letor", "read_scores": "letor", "write_letor": "letor", "write_scores": "letor",
    "make_ranking_dataset": "synthetic",
    "NBestData": "nbest",
    "widened_to": "widen",
}


def __getattr__(name):
    if name in _LAZY:
        return getattr(importlib.import_module(f"structrank.data.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'structrank.data' has no attribute {name!r}")


__all__ = sorted(_LAZY)


def __dir__():  # the lazy names too (PEP 562): tab completion and autodoc see them
    return sorted({*globals(), *__all__})
