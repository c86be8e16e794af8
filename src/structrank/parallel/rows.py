"""Rows as the numba kernels read them, and products with a fixed summation order.

- ``row_arrays``, ``row_span``, ``row_column``: a row kernel reads dense rows (laid end to end)
  and CSR rows through one loop, so every learner's kernel serves both;
- ``matvec``, ``rmatvec``, ``dot`` (and ``dense_matvec``, callable from numba code): ``X @ w``,
  ``X.T @ c`` and ``a @ b`` with each row summed left to right. BLAS's summation order can depend on
  the kernel OpenBLAS picks for the processor, on a row's position and on the memory alignment of
  the arrays (an array read from a memory map and the
  same rows sliced in memory could differ in the last bit); these cannot, so a linear model's
  scores and a shard's products have the same bits on dense or CSR rows, wherever they sit;
- ``dense_view``: a CSR matrix that lists every column of every row in order (a LETOR file read
  as CSR) as the dense view of its values, no copy, so it trains at dense speed (the structural
  SVM's fit takes it before its input checks, and each of its shards takes it);
- ``csr_index_error``: what is wrong with a CSR matrix's column indices or row pointers, if
  anything. The kernels read CSR indices as unsigned (a view, no copy): numba checks a signed
  index for a negative value on every access, which kept the CSR loops from vectorising (the
  products cost well above their dense cost; unsigned, about the same: docs/BENCHMARKS.md,
  "Memory and sparse input", times a fit on dense and CSR rows). They trust the indices, so the
  learners check them at the door (``learners.base``): a bad index is an error naming the row,
  not a read outside the array.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from structrank.numba_cache import njit


@njit(cache=True, nogil=True)
def dense_matvec(X, w, out):
    """``out = X @ w`` with each row summed left to right (numba; callable from numba code)."""
    for i in range(X.shape[0]):
        total = 0.0
        for j in range(X.shape[1]):
            total += X[i, j] * w[j]
        out[i] = total


@njit(cache=True, nogil=True)
def dot(a, b):
    """``a @ b`` of two vectors summed left to right (numba; callable from numba code)."""
    total = 0.0
    for i in range(a.shape[0]):
        total += a[i] * b[i]
    return total


@njit(cache=True, nogil=True)
def _dense_rmatvec(X, c, out):
    for i in range(X.shape[0]):
        ci = c[i]
        if ci != 0.0:
            for j in range(X.shape[1]):
                out[j] += X[i, j] * ci


@njit(cache=True, nogil=True)
def _csr_matvec(data, indices, indptr, w, out):
    for i in range(indptr.shape[0] - 1):
        total = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            total += data[k] * w[indices[k]]
        out[i] = total


@njit(cache=True, nogil=True)
def _csr_rmatvec(data, indices, indptr, c, out):
    for i in range(indptr.shape[0] - 1):
        ci = c[i]
        if ci != 0.0:
            for k in range(indptr[i], indptr[i + 1]):
                out[indices[k]] += data[k] * ci


def _unsigned(index):
    """The same integers as an unsigned view (no copy): numba indexes with them without a sign check."""
    return index.view(np.dtype(index.dtype.str.replace("i", "u"))) if index.dtype.kind == "i" else index


@njit(cache=True, nogil=True)
def _first_bad_row(indices, indptr, n_columns):
    """(row, entry) of the first entry outside [0, n_columns), or of the first decreasing row
    pointer (entry -1), or (-1, -1)."""
    for i in range(indptr.shape[0] - 1):
        if indptr[i + 1] < indptr[i] or indptr[i + 1] > indices.shape[0]:
            return i, -1
        for k in range(indptr[i], indptr[i + 1]):
            if indices[k] < 0 or indices[k] >= n_columns:
                return i, k
    return -1, -1


def csr_index_error(X):
    """None when the CSR matrix X's row pointers and column indices are in range, else what is wrong
    (the first bad row): what the kernels, which trust them, need checked once."""
    X = X.tocsr()
    if X.indptr.size != X.shape[0] + 1 or (X.indptr.size and X.indptr[0] != 0):
        return f"its row pointers (indptr) have {X.indptr.size} entries starting at {X.indptr[:1].tolist()}, " \
               f"where {X.shape[0]} rows need {X.shape[0] + 1} starting at 0"
    row, k = _first_bad_row(X.indices, X.indptr, X.shape[1])
    if row < 0:
        return None
    if k < 0:
        return f"row {row}: its row pointers (indptr) decrease or run past the {X.indices.size} stored entries"
    return f"row {row}: column index {int(X.indices[k])} is outside 0..{X.shape[1] - 1}"


def _product(X, vector, dense_kernel, csr_kernel, out):
    vector = np.ascontiguousarray(vector, dtype=np.float64)
    if sp.issparse(X):
        X = X.tocsr()
        csr_kernel(X.data, _unsigned(X.indices), _unsigned(X.indptr), vector, out)
    else:
        dense_kernel(np.asarray(X), vector, out)
    return out


_NO_INDEX = np.empty(0, np.uint64)


@njit(cache=True, nogil=True)
def _lists_every_column(indices, indptr, n_columns):
    for i in range(indptr.shape[0]):
        if indptr[i] != i * n_columns:
            return False
    k = 0
    for _ in range(indptr.shape[0] - 1):  # row by row, no division per entry (a tenth of a 10^6-row fit)
        for j in range(n_columns):
            if indices[k] != j:
                return False
            k += 1
    return True


def dense_view(X):
    """X itself, or, for a CSR matrix whose every row lists every column in order (a LETOR file read
    as CSR), the dense (rows, columns) view of its values: no copy, and the dense kernels skip the
    column indices (docs/BENCHMARKS.md, "Memory and sparse input", sets a CSR fit beside a dense one).
    Sums keep their order, so the products
    have the same bits either way."""
    if not sp.issparse(X):
        return X
    X = X.tocsr()
    n, d = X.shape
    # sizes first: the kernel reads indptr and n * d indices unchecked (X may be malformed)
    if d == 0 or X.indptr.size != n + 1 or X.indices.size != n * d or X.data.size != n * d \
            or not X.data.flags.c_contiguous:
        return X
    if not _lists_every_column(X.indices, X.indptr, d):
        return X
    return X.data.reshape(n, d)


def row_arrays(X):
    """(data, indices, indptr) of X's rows for the numba row kernels: CSR as it is, or dense rows
    laid end to end in ``data`` with empty ``indices`` and ``indptr`` (no copy when contiguous)."""
    if sp.issparse(X):
        X = X.tocsr()
        return X.data, _unsigned(X.indices), _unsigned(X.indptr)
    return np.ascontiguousarray(X).reshape(-1), _NO_INDEX, _NO_INDEX


@njit(cache=True, nogil=True, inline="always")
def row_span(indptr, i, n_features):
    """Where row i's entries are in the ``data`` of ``row_arrays``: [lo, hi)."""
    if indptr.shape[0] == 0:
        return np.int64(i * n_features), np.int64((i + 1) * n_features)
    return np.int64(indptr[i]), np.int64(indptr[i + 1])


@njit(cache=True, nogil=True, inline="always")
def row_column(indices, k, lo):
    """The column of entry k of a row starting at ``lo`` (``row_arrays`` layout)."""
    return np.uint64(k - lo) if indices.shape[0] == 0 else np.uint64(indices[k])  # unsigned: no sign check


def matvec(X, w, out=None) -> np.ndarray:
    """``X @ w`` (dense or CSR X, any float dtype) in float64, rows summed left to right.

    ``out``: a float64 array of X's rows to fill (``scratch``) rather than a new one.
    """
    if out is None:
        out = np.empty(X.shape[0])
    elif out.shape != (X.shape[0],) or out.dtype != np.float64:
        raise ValueError(f"out must be a float64 array of {X.shape[0]} rows")
    return _product(X, w, dense_matvec, _csr_matvec, out)


def rmatvec(X, c) -> np.ndarray:
    """``X.T @ c`` in float64, rows added in order."""
    return _product(X, c, _dense_rmatvec, _csr_rmatvec, np.zeros(X.shape[1]))
