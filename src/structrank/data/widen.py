"""A data file read for a model of more features: the file's missing trailing features read as zeros."""

from __future__ import annotations

import sys
import warnings

import numpy as np

from structrank.data.dataset import issparse
from structrank.errors import DataFormatError


def widened_to(ds, n_features: int, path):
    """``ds``, read from ``path``, with ``n_features`` feature columns (a model's): ``structrank predict``'s rule.

    A file whose highest feature index is below the model's gets the missing trailing columns as
    zeros, as SVMlight's sparse rows read every unlisted feature (a warning names both counts: a
    file of another feature set reads the same way, and only the counts tell them apart). A file
    that lists features past the model's is refused naming both counts: no weight exists for them.
    Python's ``predict`` is stricter: an array of another width is refused (scikit-learn's check).
    """
    n_data = ds.n_features
    if n_data > n_features:
        raise DataFormatError(path, None, f"the data has {n_data} features, the model {n_features}: a model has no "
                              "weights for features it was not trained on", "features")
    if n_data == n_features:
        return ds
    warnings.warn(f"{path}: the data lists {n_data} features, the model has {n_features}: features {n_data + 1}-"
                  f"{n_features} are read as 0 (SVMlight's unlisted features)", UserWarning, stacklevel=2)
    X = ds.X
    if issparse(X):  # CSR: the same rows, a wider shape (SciPy is loaded: it made X)
        csr = sys.modules["scipy.sparse"].csr_matrix
        return ds.with_X(csr((X.data, X.indices, X.indptr), shape=(X.shape[0], n_features)))
    return ds.with_X(np.pad(X, ((0, 0), (0, n_features - n_data))))
