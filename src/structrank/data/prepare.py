"""The LETOR clean-up of Chakrabarti et al. (2008), Section 4.1.

"LETOR has many queries for which the same feature vector is marked as both good and bad. In
addition there are feature vectors with all elements exactly equal to zero ... we eliminated all
zero feature vectors and good and bad vectors whose cosine similarity was above 0.99. Although
this further reduced the number of queries, the comparisons became much more reliable."

Such rows force a linear scorer to tie a good and a bad document, so test metrics end up
depending on how ties are broken rather than on the model.

``prepare_like_chakrabarti`` applies it and reports what was dropped; ``drop="bad"`` is a reading
that keeps the good document of a near-identical good/bad pair.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import scipy.sparse as sp

from structrank.data.dataset import RankingDataset


@dataclass(frozen=True)
class PreparationReport:
    """What ``prepare_like_chakrabarti`` removed, for logs and for checking the arithmetic.

    Attributes
    ----------
    rows_in, queries_in : int
        Size of the input.
    zero_rows_dropped : int
        Rows whose feature vector is all zeros (step 1).
    pairs_over_threshold : int
        Good/bad pairs of the same query, among the non-zero rows, with cosine > ``threshold``.
    docs_dropped_for_pairs : int
        Distinct documents in those pairs (step 2); a document in several pairs counts once.
    queries_dropped : int
        Queries left without a good or without a bad document (step 3), including queries
        that lost every row in steps 1 and 2 and queries that never had both.
    dropped_query_ids : tuple
        The qids of those queries, in dataset order.
    rows_dropped_with_queries : int
        Rows that survived steps 1 and 2 but belonged to a dropped query.
    rows_out, queries_out : int
        Size of the output; ``rows_in - zero_rows_dropped - docs_dropped_for_pairs -
        rows_dropped_with_queries == rows_out``.
    threshold : float
    relevant_from : int
        The parameters used, so a logged report is reproducible.
    """

    rows_in: int
    zero_rows_dropped: int
    pairs_over_threshold: int
    docs_dropped_for_pairs: int
    queries_in: int
    queries_dropped: int
    dropped_query_ids: tuple
    rows_dropped_with_queries: int
    rows_out: int
    queries_out: int
    threshold: float
    relevant_from: int

    def describe(self) -> str:
        """One line for a log."""
        return (
            f"prepare (cosine > {self.threshold}, good = label >= {self.relevant_from}): "
            f"{self.rows_in} rows / {self.queries_in} queries in; "
            f"dropped {self.zero_rows_dropped} zero rows, "
            f"{self.docs_dropped_for_pairs} docs in {self.pairs_over_threshold} near-duplicate good/bad pairs, "
            f"{self.queries_dropped} queries without both good and bad ({self.rows_dropped_with_queries} rows); "
            f"{self.rows_out} rows / {self.queries_out} queries out"
        )

    __str__ = describe

    def to_dict(self) -> dict:
        """Plain types only (ids as a list), ready for JSON."""
        out = asdict(self)
        out["dropped_query_ids"] = [_plain(q) for q in self.dropped_query_ids]
        return out


def _plain(value):
    # qids are numpy scalars; json.dumps refuses np.int64.
    return value.item() if isinstance(value, np.generic) else value


def _nonzero_rows(X) -> np.ndarray:
    """Boolean mask of rows with at least one non-zero entry."""
    if sp.issparse(X):
        # ``X != 0`` drops explicitly stored zeros, which getnnz alone would count.
        return (X != 0).getnnz(axis=1) > 0
    return np.any(X != 0, axis=1)


def _unit_rows(X):
    """X with each non-zero row scaled to unit Euclidean norm (zero rows stay zero)."""
    if sp.issparse(X):
        norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    else:
        norms = np.linalg.norm(X, axis=1)
    scale = np.divide(1.0, norms, out=np.zeros_like(norms, dtype=np.float64), where=norms > 0)
    if sp.issparse(X):
        return sp.csr_matrix(sp.diags(scale) @ X)
    return X * scale[:, None]


def prepare_like_chakrabarti(dataset: RankingDataset, threshold: float = 0.99, relevant_from: int = 1,
                             drop: str = "both"):
    """Remove zero rows, near-identical good/bad pairs and then queries without both labels.

    Parameters
    ----------
    dataset : RankingDataset
        Dense or CSR features; it is not modified.
    threshold : float, default 0.99
        A good and a bad document of the same query whose cosine similarity exceeds this are
        both removed. Must lie in [-1, 1]; cosines are clipped to [-1, 1], so 1 removes no pair.
    relevant_from : int, default 1
        Rows with label >= ``relevant_from`` are good, the others bad.
    drop : {"both", "bad"}, default "both"
        Which documents of a near-identical good/bad pair go: both (our reading of Sec. 4.1),
        or only the bad one (the good documents kept; a reading the OHSUMED gap study tries).

    Returns
    -------
    prepared : RankingDataset
        The kept rows in their original order, with their docids, comments and source.
    report : PreparationReport

    Notes
    -----
    The steps run in the paper's order:

    1. drop every row whose features are all exactly zero;
    2. within each query, drop *both* documents of every good/bad pair with cosine above
       ``threshold`` -- a listwise learner sees documents, not pairs, so a pair can only be
       removed with its documents; all pairs are found before anything is removed, so a
       document that is in several pairs is removed once;
    3. drop queries left without a good or without a bad document: they carry no ranking
       signal and AP or NDCG is undefined (or trivially perfect) on them.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [1.0, 0.001], [0.0, 1.0], [0.0, 0.0]])
    >>> ds = RankingDataset(X, np.array([1, 0, 0, 1]), np.array([5, 5, 5, 5]))
    >>> out, report = prepare_like_chakrabarti(ds)
    >>> out.n_rows, report.zero_rows_dropped, report.pairs_over_threshold, report.dropped_query_ids
    (0, 1, 1, (5,))
    """
    threshold = float(threshold)
    if drop not in ("both", "bad"):
        raise ValueError(f"drop must be 'both' or 'bad', got {drop!r}")
    if not -1.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be a cosine in [-1, 1], got {threshold}")
    if int(relevant_from) != relevant_from or relevant_from < 1:
        raise ValueError(f"relevant_from must be an integer >= 1 (labels are >= 0), got {relevant_from}")

    X = dataset.X
    good = dataset.y >= relevant_from
    keep = _nonzero_rows(X)
    zero_rows = int(np.sum(~keep))

    # Normalise once for the whole matrix; each query then needs one product good x bad.
    unit = _unit_rows(X)
    n_pairs = 0
    for piece in dataset.query_slices():
        rows = np.arange(piece.start, piece.stop)[keep[piece]]
        g, b = rows[good[rows]], rows[~good[rows]]
        if g.size == 0 or b.size == 0:
            continue
        cos = unit[g] @ unit[b].T
        cos = np.clip(cos.toarray() if sp.issparse(cos) else cos, -1.0, 1.0)
        close = cos > threshold
        n_pairs += int(close.sum())
        if drop == "both":
            keep[g[close.any(axis=1)]] = False
        keep[b[close.any(axis=0)]] = False
    docs_for_pairs = int(dataset.n_rows - zero_rows - keep.sum())

    # Step 3 on the original query boundaries, so queries that lost every row are reported too.
    starts = dataset.offsets[:-1]
    # reduceat is safe: a RankingDataset has no empty query, and no query when it has no rows.
    if dataset.n_rows:
        n_good = np.add.reduceat((keep & good).astype(np.int64), starts)
        n_bad = np.add.reduceat((keep & ~good).astype(np.int64), starts)
    else:
        n_good = n_bad = np.zeros(0, dtype=np.int64)
    query_ok = (n_good > 0) & (n_bad > 0)
    row_query_ok = np.repeat(query_ok, dataset.query_sizes())
    rows_with_queries = int(np.sum(keep & ~row_query_ok))
    keep &= row_query_ok

    prepared = dataset.take_rows(np.flatnonzero(keep))
    report = PreparationReport(
        rows_in=dataset.n_rows,
        zero_rows_dropped=zero_rows,
        pairs_over_threshold=n_pairs,
        docs_dropped_for_pairs=docs_for_pairs,
        queries_in=dataset.n_queries,
        queries_dropped=int(np.sum(~query_ok)),
        dropped_query_ids=tuple(_plain(q) for q in dataset.query_ids[~query_ok]),
        rows_dropped_with_queries=rows_with_queries,
        rows_out=prepared.n_rows,
        queries_out=prepared.n_queries,
        threshold=threshold,
        relevant_from=int(relevant_from),
    )
    return prepared, report
