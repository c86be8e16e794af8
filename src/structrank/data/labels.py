"""Relevance labels checked once, for the readers, the learners and the metrics (NumPy only)."""

from __future__ import annotations

import numpy as np

from structrank.errors import DataValidationError


#: Largest relevance label accepted, by the file readers and the estimators alike: labels are stored as
#: int32 (the cache) or int64, and a larger value (1e20) would wrap around silently when cast.
MAX_LABEL = 2**31 - 1


def label_text(value) -> str:
    """A label as the messages print it, alike from a file and from an array: 3 (not 3.0 or 3e+00), 0.5, nan,
    1e+300 (a whole number past 1e15 keeps its exponent rather than 301 digits)."""
    value = value.item() if hasattr(value, "item") else value
    if isinstance(value, float) and abs(value) < 1e15 and value.is_integer():  # NaN and inf are not below 1e15
        return str(int(value))
    return str(value)


def label_problem(y):
    """``(row, problem)`` of the first label that is negative, fractional, not finite or above
    ``MAX_LABEL`` (``problem`` in the words every route prints: "label 0.5 is not a non-negative
    integer"), or None. The one rule of the file readers and the estimators; ``y`` is numeric."""
    bad = np.flatnonzero(y < 0) if y.dtype.kind == "i" else np.zeros(0, dtype=np.int64)
    if y.dtype.kind == "f":
        bad = np.flatnonzero(~np.isfinite(y) | (y < 0) | (y != np.round(y)))
    if bad.size:
        return int(bad[0]), f"label {label_text(y[bad[0]])} is not a non-negative integer"
    big = np.flatnonzero(y > MAX_LABEL)
    if big.size:
        return int(big[0]), f"label {label_text(y[big[0]])} is too large (at most {MAX_LABEL})"
    return None


def check_labels(y, where: str | None = None) -> np.ndarray:
    """Relevance labels as int64, or DataValidationError naming the row of ``label_problem``'s first
    problem (``where``: who checks, for the message)."""
    at = f"{where}: " if where else ""
    y = np.asarray(y)
    if y.dtype.kind == "b":
        return y.astype(np.int64)
    if y.dtype.kind not in "iuf":
        raise DataValidationError(f"{at}labels must be numbers, got dtype {y.dtype}")
    problem = label_problem(y)
    if problem is not None:
        raise DataValidationError(f"{at}row {problem[0]}: {problem[1]}")
    return y.astype(np.int64)


def first_non_finite(X):
    """``(row, column, value)`` of the first NaN or infinite value of X (an ndarray, or CSR arrays with
    ``data``, ``indices`` and ``indptr``; column 0-based), or None."""
    values = X.data if hasattr(X, "indptr") else np.asarray(X)
    if values.dtype.kind not in "fc" or np.isfinite(values).all():
        return None
    if hasattr(X, "indptr"):
        position = int(np.flatnonzero(~np.isfinite(values))[0])
        row = int(np.searchsorted(X.indptr, position, side="right") - 1)
        return row, int(X.indices[position]), values[position]
    row, column = (int(i) for i in np.argwhere(~np.isfinite(values))[0])
    return row, column, values[row, column]


def check_finite_features(X, where: str) -> None:
    """DataValidationError naming the row and the feature (1-based, as in LETOR files) of X's first NaN
    or infinite value, in the words of the file readers' message."""
    found = first_non_finite(X)
    if found is not None:
        row, column, value = found
        kind = "NaN" if value != value else "inf"
        raise DataValidationError(f"{where}: X holds {kind} at row {row}, feature {column + 1}: value {float(value)} "
                                  "is not finite")


def check_qid(qid, n_rows=None) -> np.ndarray:
    """Query ids as a 1-d array, or DataValidationError: another length than ``n_rows``, a NaN (a
    float qid column with a missing value, which no other qid equals), or strings mixed with numbers."""
    qid = np.asarray(qid)
    if qid.ndim != 1 or (n_rows is not None and qid.shape[0] != n_rows):
        raise DataValidationError(f"qid must have one entry per row ({n_rows}), got shape {qid.shape}")
    if qid.dtype.kind == "f":
        bad = np.flatnonzero(np.isnan(qid))
        if bad.size:
            raise DataValidationError(f"qid of row {int(bad[0])} is NaN: every row needs a query id")
    elif qid.dtype.kind == "O":
        strings = sum(isinstance(q, str) for q in qid)
        if 0 < strings < len(qid):  # 1 and "a" do not sort into queries
            raise DataValidationError("qid mixes strings and numbers: query ids must be all numbers or all strings")
        bad = [i for i, q in enumerate(qid) if isinstance(q, float) and q != q]
        if bad:
            raise DataValidationError(f"qid of row {bad[0]} is NaN: every row needs a query id")
        try:
            np.unique(qid)
        except TypeError:
            raise DataValidationError("qid holds values that do not sort together (e.g. None beside numbers): "
                                      "query ids must be all numbers or all strings") from None
    return qid
