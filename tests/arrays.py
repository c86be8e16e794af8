"""Test helpers for matrices that may be dense or CSR (``read_letor`` returns either, by density)."""

import numpy as np
import scipy.sparse as sp


def dense(X) -> np.ndarray:
    """X as a dense ndarray."""
    return X.toarray() if sp.issparse(X) else np.asarray(X)
