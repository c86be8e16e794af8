"""Kernels on feature vectors: the rows of 2-d dense arrays or scipy sparse matrices.

Both wrap scikit-learn's pairwise functions, so they equal ``sklearn.metrics.pairwise``'s
kernels exactly; what they add is the ``Kernel`` interface (evaluation counting, ``+``/``*``).

>>> import numpy as np
>>> k = RBFKernel(gamma=0.5)
>>> k(np.zeros((2, 3)), np.ones((1, 3))).round(4).ravel().tolist(), k.n_evaluations
([0.2231, 0.2231], 2)
"""

from __future__ import annotations

import numpy as np
from sklearn.metrics.pairwise import polynomial_kernel, rbf_kernel, row_norms

from structrank.kernels.base import Kernel


def _rows(A):
    """2-d dense or sparse input (sparse stays sparse; lists of vectors become arrays)."""
    return A if hasattr(A, "shape") and len(A.shape) == 2 else np.asarray(A, dtype=np.float64)


class PolynomialKernel(Kernel):
    """``(gamma <a, b> + coef0) ** degree`` on rows (sklearn's ``polynomial_kernel``).

    Parameters
    ----------
    degree : int, default 2
    gamma : float or None, default 1.0
        None means sklearn's default ``1 / n_features``.
    coef0 : float, default 1.0
        Must be >= 0 for the kernel to be positive semi-definite at every degree.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [1.0, 1.0]])
    >>> PolynomialKernel(degree=2, gamma=1.0, coef0=1.0)(X).tolist()  # (<a, b> + 1) ** 2
    [[4.0, 4.0], [4.0, 9.0]]
    """

    def __init__(self, degree=2, gamma=1.0, coef0=1.0):
        super().__init__()
        self.degree, self.gamma, self.coef0 = degree, gamma, coef0

    def _gram(self, A, B):
        return polynomial_kernel(_rows(A), _rows(B), degree=self.degree, gamma=self.gamma, coef0=self.coef0)

    def _diag(self, A):
        A = _rows(A)
        gamma = 1.0 / A.shape[1] if self.gamma is None else self.gamma
        return (gamma * row_norms(A, squared=True) + self.coef0) ** self.degree

    def __repr__(self):
        return f"PolynomialKernel(degree={self.degree}, gamma={self.gamma}, coef0={self.coef0})"


class RBFKernel(Kernel):
    """``exp(-gamma ||a - b||^2)`` on rows (sklearn's ``rbf_kernel``).

    Parameters
    ----------
    gamma : float or None, default 1.0
        None means sklearn's default ``1 / n_features``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [1.0, 1.0]])
    >>> RBFKernel(gamma=0.5)(X).round(4).tolist()  # exp(-0.5 * 1) off the diagonal
    [[1.0, 0.6065], [0.6065, 1.0]]
    """

    def __init__(self, gamma=1.0):
        super().__init__()
        self.gamma = gamma

    def _gram(self, A, B):
        return rbf_kernel(_rows(A), _rows(B), gamma=self.gamma)

    def _diag(self, A):
        return np.ones(_rows(A).shape[0])

    def __repr__(self):
        return f"RBFKernel(gamma={self.gamma})"
