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
