"""A seeded generator of LETOR-like ranking data, for tests, benchmarks and the demo."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from structrank.data.dataset import RankingDataset


def make_ranking_dataset(
    n_queries=100,
    docs_per_query=(5, 40),
    n_features=20,
    n_levels=3,
    noise=0.5,
    no_relevant_fraction=0.0,
    sparse=False,
    dtype=np.float64,
    random_state=None,
) -> RankingDataset:
    """Queries whose labels come from a hidden linear model plus noise.

    Parameters
    ----------
    n_queries : int
    docs_per_query : int or (low, high)
        Documents per query, drawn uniformly from ``[low, high]``.
    n_features : int
    n_levels : int
        Labels are 0 .. n_levels - 1; the documents above the 0.7 quantile of a hidden score are
        relevant (label >= 1).
    noise : float
        Standard deviation of the noise added to the hidden score (the signal's is about 0.9):
        larger values make the labels harder to predict from X.
    no_relevant_fraction : float
        Fraction of queries whose labels are all 0 (MQ2008 has 28%).
    sparse : bool
        Return CSR, each entry kept non-zero with probability 0.3.
    random_state : int or None

    Examples
    --------
    >>> ds = make_ranking_dataset(n_queries=3, docs_per_query=4, random_state=0)
    >>> ds.n_queries, ds.n_rows
    (3, 12)
    """
    rng = np.random.default_rng(random_state)
    if np.isscalar(docs_per_query):
        sizes = np.full(n_queries, int(docs_per_query))
    else:
        low, high = docs_per_query
        sizes = rng.integers(low, high + 1, size=n_queries)
    n = int(sizes.sum())
    w = rng.normal(size=n_features)
    X = rng.random((n, n_features))
    if sparse:
        X *= rng.random((n, n_features)) < 0.3
    query_shift = np.repeat(rng.normal(scale=0.5, size=n_queries), sizes)
    hidden = (X - X.mean(axis=0)) @ w / np.sqrt(n_features) * 3.0 + query_shift
    hidden += rng.normal(scale=noise, size=n)
    # Thresholds put the documents below the 0.7 quantile at label 0 and split the rest evenly over levels
    # 1..n_levels-1.
    cuts = np.quantile(hidden, np.linspace(0.7, 1.0, n_levels - 1, endpoint=False)[1:]) if n_levels > 2 else []
    y = np.zeros(n, dtype=np.int64)
    if n_levels >= 2:
        y[hidden >= np.quantile(hidden, 0.7)] = 1
        for level, cut in enumerate(cuts, start=2):
            y[hidden >= cut] = level
    qid = np.repeat(np.arange(1, n_queries + 1), sizes)
    if no_relevant_fraction > 0:
        empty = rng.random(n_queries) < no_relevant_fraction
        y[np.repeat(empty, sizes)] = 0
    docids = np.array([f"S{q}-{i}" for q, size in zip(range(1, n_queries + 1), sizes) for i in range(size)], dtype=object)
    X = X.astype(dtype)
    return RankingDataset(sp.csr_matrix(X) if sparse else X, y, qid, docids=docids, source="synthetic")
