"""RankingDataset: the rows of many queries, each query's rows contiguous.

A ranking data set is a feature matrix X (dense or CSR), relevance labels y and a query id per
row. Learners and metrics work query by query, so the rows of one query must be contiguous;
``offsets`` marks where each query starts (``offsets[i]:offsets[i+1]`` are the rows of query i),
the layout of LightGBM's ``group`` and of ranx's flat arrays.

A ``RankingDataset`` holds X (ndarray or CSR), integer labels, qid, document ids and comments,
``offsets``, and ``row_order`` when reading regrouped the rows (non-contiguous qids). The helpers
``group_offsets`` (query boundaries of contiguous qids) and ``contiguous_order`` (the stable order
that groups them) serve the readers and the learners.
"""

from __future__ import annotations

import sys
import warnings
from dataclasses import dataclass, field

import numpy as np

from structrank.data.labels import check_labels  # noqa: F401  (its home before; readers import it here)
from structrank.errors import DataValidationError


def issparse(X) -> bool:
    """``scipy.sparse.issparse`` without importing SciPy: a sparse matrix exists only once
    ``scipy.sparse`` has been imported (reading a dense file never imports it)."""
    sp = sys.modules.get("scipy.sparse")
    return sp is not None and sp.issparse(X)


def rows_of_queries(offsets, query_index) -> np.ndarray:
    """Row indices of the queries at positions ``query_index``, query after query."""
    offsets = np.asarray(offsets, dtype=np.int64)
    query_index = np.asarray(query_index, dtype=np.int64)
    sizes = offsets[query_index + 1] - offsets[query_index]
    # Position of each output row inside its query, then shifted to that query's start.
    within = np.arange(sizes.sum()) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    return np.repeat(offsets[query_index], sizes) + within


def group_offsets(qid) -> tuple[np.ndarray, np.ndarray]:
    """Query boundaries of a qid array whose queries are contiguous.

    Returns
    -------
    offsets : ndarray of int64, shape (n_queries + 1,)
    query_ids : ndarray, shape (n_queries,), each query's qid in order.

    Raises DataValidationError when a qid appears in two separate runs of rows.
    """
    qid = np.asarray(qid)
    n = qid.shape[0]
    if n == 0:
        return np.zeros(1, dtype=np.int64), qid[:0]
    starts = np.flatnonzero(np.concatenate(([True], qid[1:] != qid[:-1])))
    query_ids = qid[starts]
    if np.unique(query_ids).shape[0] != query_ids.shape[0]:
        raise DataValidationError("the rows of a query are not contiguous (a qid appears in two separate runs)")
    return np.append(starts, n).astype(np.int64), query_ids


def contiguous_order(qid) -> np.ndarray | None:
    """A stable permutation that makes each query's rows contiguous, or None if they already are.

    Queries keep the order of their first appearance and rows keep their order inside a query.
    """
    qid = np.asarray(qid)
    if qid.shape[0] == 0:
        return None
    _, first, codes = np.unique(qid, return_index=True, return_inverse=True)
    rank_of_code = np.argsort(np.argsort(first, kind="stable"), kind="stable")
    key = rank_of_code[codes.ravel()]
    if np.all(key[1:] >= key[:-1]):
        return None
    return np.argsort(key, kind="stable")


@dataclass
class RankingDataset:
    """Rows of many queries for learning to rank.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix, shape (n_rows, n_features)
    y : array of int, shape (n_rows,)
        Relevance labels (non-negative integers).
    qid : array, shape (n_rows,)
        Query id of each row; the rows of a query must be contiguous (see ``from_arrays`` to
        group them).
    docids : array of str, shape (n_rows,), optional
        Document ids (the ``#docid = ...`` comments of LETOR files).
    comments : array of str, shape (n_rows,), optional
        The whole trailing comment of each line (LETOR 4.0 keeps ``inc`` and ``prob`` there),
        written back unchanged by ``write_letor``.
    source : str, optional
        Where the rows came from (a file path), for messages.
    row_order : array of int, optional
        When the rows were regrouped on reading, ``row_order[i]`` is the position in the source
        file of row i; used to write scores back in the file's order.
    line_numbers : array of int, optional
        The line of the source file that held each row (1-based; read_letor sets it), so that rows
        without a document id can still be named (``predict --format trec``) and messages can point
        at a line.

    Examples
    --------
    >>> import numpy as np
    >>> ds = RankingDataset(np.eye(3), np.array([1, 0, 2]), np.array([7, 7, 9]))
    >>> ds.n_queries, ds.offsets.tolist()
    (2, [0, 2, 3])
    """

    X: object
    y: np.ndarray
    qid: np.ndarray
    docids: np.ndarray | None = None
    comments: np.ndarray | None = None
    source: str | None = None
    row_order: np.ndarray | None = None
    line_numbers: np.ndarray | None = None
    offsets: np.ndarray = field(init=False, repr=False)
    query_ids: np.ndarray = field(init=False, repr=False)

    def __post_init__(self):
        if issparse(self.X):
            self.X = sys.modules["scipy.sparse"].csr_matrix(self.X)
        else:
            self.X = np.asarray(self.X)
            if self.X.ndim != 2:
                raise DataValidationError(f"X must be 2-dimensional, got shape {self.X.shape}")
        n = self.X.shape[0]
        self.y = np.asarray(self.y)
        self.qid = np.asarray(self.qid)
        for name, arr in (("y", self.y), ("qid", self.qid)):
            if arr.ndim != 1 or arr.shape[0] != n:
                raise DataValidationError(f"{name} must have one entry per row of X ({n}), got shape {arr.shape}")
        for name in ("docids", "comments"):
            arr = getattr(self, name)
            if arr is not None:
                arr = np.asarray(arr, dtype=object)
                if arr.shape != (n,):
                    raise DataValidationError(f"{name} must have one entry per row of X ({n}), got shape {arr.shape}")
                setattr(self, name, arr)
        if self.line_numbers is not None:
            self.line_numbers = np.asarray(self.line_numbers, dtype=np.int64)
            if self.line_numbers.shape != (n,):
                raise DataValidationError(f"line_numbers must have one entry per row of X ({n}), got shape "
                                          f"{self.line_numbers.shape}")
        self.y = check_labels(self.y)
        values = self.X.data if issparse(self.X) else self.X
        if values.size and not np.all(np.isfinite(values)):
            raise DataValidationError("X holds NaN or infinite values")
        self.offsets, self.query_ids = group_offsets(self.qid)

    @classmethod
    def from_arrays(cls, X, y, qid, docids=None, comments=None, source=None, warn=True, line_numbers=None):
        """Build a dataset from rows in any order, grouping each query's rows stably.

        Queries keep the order of their first appearance; a warning says when rows moved.
        """
        order = contiguous_order(qid)
        if order is None:
            return cls(X, y, qid, docids=docids, comments=comments, source=source, line_numbers=line_numbers)
        if warn:
            warnings.warn(
                f"{source or 'data'}: the rows of some queries are not contiguous; "
                "they were grouped by qid (stable order; scores are written back in the file's order)",
                stacklevel=2,
            )
        def pick(a):
            return None if a is None else np.asarray(a, dtype=object)[order]

        return cls(X[order], np.asarray(y)[order], np.asarray(qid)[order], docids=pick(docids),
                   comments=pick(comments), source=source, row_order=order,
                   line_numbers=None if line_numbers is None else np.asarray(line_numbers)[order])

    # -- shape -------------------------------------------------------------------------------
    @property
    def n_rows(self) -> int:
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        return self.X.shape[1]

    @property
    def n_queries(self) -> int:
        return self.offsets.shape[0] - 1

    def __len__(self) -> int:
        return self.n_rows

    def query_sizes(self) -> np.ndarray:
        return np.diff(self.offsets)

    def query_slices(self):
        """Iterate over ``slice`` objects, one per query."""
        for a, b in zip(self.offsets[:-1], self.offsets[1:]):
            yield slice(int(a), int(b))

    # -- selection ---------------------------------------------------------------------------
    def take_rows(self, rows) -> "RankingDataset":
        """The dataset restricted to ``rows`` (indices in increasing order keep queries contiguous)."""
        rows = np.asarray(rows, dtype=np.int64)
        return RankingDataset(
            self.X[rows],
            self.y[rows],
            self.qid[rows],
            docids=None if self.docids is None else self.docids[rows],
            comments=None if self.comments is None else self.comments[rows],
            source=self.source,
            line_numbers=None if self.line_numbers is None else self.line_numbers[rows],
        )

    def take_queries(self, query_index) -> "RankingDataset":
        """The dataset restricted to the queries at positions ``query_index`` (0-based)."""
        query_index = np.asarray(query_index, dtype=np.int64)
        if query_index.size == 0:
            return self.take_rows(np.zeros(0, dtype=np.int64))
        return self.take_rows(rows_of_queries(self.offsets, query_index))

    def with_X(self, X) -> "RankingDataset":
        """The same rows with another feature matrix (after a transformer, say)."""
        return RankingDataset(X, self.y, self.qid, docids=self.docids, comments=self.comments,
                              source=self.source, row_order=self.row_order, line_numbers=self.line_numbers)

    def to_file_order(self, values) -> np.ndarray:
        """Per-row values (scores) put back in the order of the source file's rows."""
        values = np.asarray(values)
        if self.row_order is None:
            return values
        out = np.empty_like(values)
        out[self.row_order] = values
        return out

    def summary(self) -> dict:
        """Counts a user checks before trusting a metric."""
        sizes = self.query_sizes()
        relevant = np.add.reduceat(self.y >= 1, self.offsets[:-1]) if self.n_rows else np.zeros(0)
        labels, counts = np.unique(self.y, return_counts=True)
        return {
            "rows": self.n_rows,
            "queries": self.n_queries,
            "features": self.n_features,
            "labels": {int(k): int(v) for k, v in zip(labels, counts)},
            "docs_per_query": (int(sizes.min()), int(sizes.max())) if sizes.size else (0, 0),
            "queries_without_relevant": int(np.sum(relevant == 0)),
        }
