"""Relevance labels checked once, for the readers, the learners and the metrics (NumPy only)."""

from __future__ import annotations

import numpy as np

from structrank.errors import DataValidationError


def check_labels(y) -> np.ndarray:
    """Relevance labels as int64, or DataValidationError if any is negative, fractional, not finite or too large.

    Too large: 2**63 and above, which int64 cannot hold (the cast would wrap them to negative numbers).
    """
    y = np.asarray(y)
    if y.dtype.kind == "i":
        bad = np.flatnonzero(y < 0)
    elif y.dtype.kind == "u":
        bad = np.flatnonzero(y > np.iinfo(np.int64).max)
    elif y.dtype.kind == "f":
        bad = np.flatnonzero(~np.isfinite(y) | (y < 0) | (y != np.round(y)) | (y >= 2.0**63))
    elif y.dtype.kind == "b":
        return y.astype(np.int64)
    else:
        raise DataValidationError(f"labels must be numbers, got dtype {y.dtype}")
    if bad.size:
        raise DataValidationError(
            f"relevance labels must be non-negative integers below 2**63; row {int(bad[0])} has {y[bad[0]].item()!r}"
        )
    return y.astype(np.int64)


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
