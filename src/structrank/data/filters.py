"""Query filters used by the papers' data preparation.

Each returns a new dataset and leaves the input untouched.
"""

from __future__ import annotations

import numpy as np

from structrank.data.dataset import RankingDataset


def _per_query_counts(ds: RankingDataset, mask):
    if ds.n_rows == 0:
        return np.zeros(0, dtype=np.int64)
    return np.add.reduceat(mask.astype(np.int64), ds.offsets[:-1])


def keep_queries(ds: RankingDataset, keep) -> RankingDataset:
    """The dataset restricted to the queries where the boolean ``keep`` (one per query) is true."""
    return ds.take_queries(np.flatnonzero(np.asarray(keep, dtype=bool)))


def drop_queries_without_relevant(ds: RankingDataset, relevant_from: int = 1) -> RankingDataset:
    """Drop queries that have no document with label >= ``relevant_from``."""
    return keep_queries(ds, _per_query_counts(ds, ds.y >= relevant_from) > 0)


def drop_queries_without_irrelevant(ds: RankingDataset, relevant_from: int = 1) -> RankingDataset:
    """Drop queries whose every document has label >= ``relevant_from``."""
    return keep_queries(ds, _per_query_counts(ds, ds.y < relevant_from) > 0)


def queries_with_both(labels, offsets, relevant_from: int = 1) -> np.ndarray:
    """Positions of the queries (bounded by ``offsets``) with a label >= ``relevant_from`` and one below it."""
    labels, offsets = np.asarray(labels), np.asarray(offsets, dtype=np.int64)
    if labels.size == 0:
        return np.zeros(0, dtype=np.int64)
    good = np.add.reduceat((labels >= relevant_from).astype(np.int64), offsets[:-1])
    return np.flatnonzero((good > 0) & (good < np.diff(offsets)))


def keep_queries_with_both(ds: RankingDataset, relevant_from: int = 1) -> RankingDataset:
    """Keep queries with at least one relevant and one irrelevant document (WikiQA's filter)."""
    return ds.take_queries(queries_with_both(ds.y, ds.offsets, relevant_from))


def cap_candidates(ds: RankingDataset, max_per_query: int, random_state=None) -> RankingDataset:
    """Keep at most ``max_per_query`` documents of each query.

    With ``random_state=None`` the first documents are kept (the order of the file, which for
    candidate lists is the retrieval order); otherwise a seeded uniform sample, in file order.
    """
    if max_per_query < 1:
        raise ValueError(f"max_per_query must be >= 1, got {max_per_query}")
    rng = None if random_state is None else np.random.default_rng(random_state)
    rows = []
    for piece in ds.query_slices():
        idx = np.arange(piece.start, piece.stop)
        if idx.size > max_per_query:
            idx = idx[:max_per_query] if rng is None else np.sort(rng.choice(idx, max_per_query, replace=False))
        rows.append(idx)
    return ds.take_rows(np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64))
