"""Ranking data: the RankingDataset container, readers and writers, folds, filters, synthetic data."""

from structrank.data.cache import LetorCache, build_letor_cache, open_letor_cache
from structrank.data.dataset import RankingDataset, contiguous_order, group_offsets
from structrank.data.filters import (
    cap_candidates,
    drop_queries_without_irrelevant,
    drop_queries_without_relevant,
    keep_queries,
    keep_queries_with_both,
)
from structrank.data.folds import LetorFold, letor_folds, letor_root
from structrank.data.letor import read_letor, read_scores, write_letor, write_scores
from structrank.data.synthetic import make_ranking_dataset

__all__ = [
    "LetorCache",
    "LetorFold",
    "RankingDataset",
    "build_letor_cache",
    "cap_candidates",
    "contiguous_order",
    "drop_queries_without_irrelevant",
    "drop_queries_without_relevant",
    "group_offsets",
    "keep_queries",
    "keep_queries_with_both",
    "letor_folds",
    "letor_root",
    "make_ranking_dataset",
    "open_letor_cache",
    "read_letor",
    "read_scores",
    "write_letor",
    "write_scores",
]
