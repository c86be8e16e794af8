"""Nyström features: explicit low-dimensional vectors for any ``Kernel`` (Croce et al. 2016, Eqs. 1-4).

With l landmarks L sampled from the training objects, W = K(L, L) (l x l) and C = K(X, L)
(n x l), the Gram matrix is approximated by ``G ~ C W^+ C^T`` (Eq. 2). From the symmetric
eigendecomposition ``W = U S U^T``, keeping only eigenvalues > ``tol * max(S)`` (the others are
null up to rounding; dropping them makes ``U S^-1 U^T`` the pseudo-inverse W^+),

    Z = C U S^(-1/2)                                                    (Eqs. 3-4)

so ``Z Z^T = C W^+ C^T``. Each object becomes a dense vector of ``n_components_ <= l``
dimensions, which any linear learner (LinearSVC, RankSVM, ...) can use. Landmarks are drawn
uniformly without replacement (Kumar et al. 2012); with ``n_landmarks >= n`` every training
object is a landmark and ``Z Z^T`` reproduces the exact training Gram matrix.

Objects are whatever the kernel takes: the rows of a 2-d array (dense or sparse; indexed by row)
or a list of Python objects (token lists, trees, dicts for ``PartKernel`` sums; indexed without
converting them to an array).

Kernel evaluations are read from the kernel's counter: ``n_kernel_evaluations_fit_`` is
``l * l`` after ``fit`` (W only) and ``n * l`` after ``fit_transform`` (C, of which W is the
landmarks' rows), and every ``transform`` of n objects adds ``n * l`` to
``n_kernel_evaluations_transform_`` -- the cost of classifying n objects.

``nystroem_normalization(W)`` is the pure map W -> U S^(-1/2), by ``eigh``.

>>> import numpy as np
>>> from structrank.kernels.vector import RBFKernel
>>> X = np.random.default_rng(0).normal(size=(30, 2))
>>> nys = NystroemFeatures(RBFKernel(gamma=0.5), n_landmarks=10, random_state=0).fit(X)
>>> Z = nys.transform(X)
>>> Z.shape[0], nys.n_kernel_evaluations_fit_, nys.n_kernel_evaluations_transform_
(30, 100, 300)
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils.extmath import svd_flip
from sklearn.utils.validation import check_is_fitted

from structrank.kernels.base import n_objects, parallel_gram, take
from structrank.kernels.vector import RBFKernel


def nystroem_normalization(W, tol=1e-10):
    """(kept eigenvalues, ``U S^(-1/2)``) of the landmark Gram matrix W (Eqs. 3-4).

    Eigenvalues <= ``tol * max eigenvalue`` are dropped as null, which makes the map exact on
    rank-deficient W: ``C @ normalization`` has Gram matrix ``C W^+ C^T``.
    """
    W = 0.5 * (np.asarray(W, dtype=np.float64) + np.asarray(W, dtype=np.float64).T)
    if not np.all(np.isfinite(W)):
        raise ValueError("the landmark Gram matrix has NaN or infinite entries")
    evals, evecs = scipy.linalg.eigh(W)
    evals, evecs = evals[::-1], evecs[:, ::-1]
    # an eigenvector's sign is LAPACK's arbitrary choice and flips with rounding (W from K(L, L) in fit, from the
    # rows of K(X, L) in fit_transform): scikit-learn's svd_flip turns each so that its largest entry is positive
    if evecs.size:
        evecs, _ = svd_flip(np.array(evecs), None)
    top = evals[0] if evals.size else 0.0
    if not top > 0:
        raise ValueError("the landmark Gram matrix has no positive eigenvalue (all-zero kernel?)")
    keep = evals > tol * top
    return evals[keep], evecs[:, keep] / np.sqrt(evals[keep])


class NystroemFeatures(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Nyström projection of arbitrary objects through a structrank ``Kernel``.

    Parameters
    ----------
    kernel : Kernel or None, default None
        Any ``structrank.kernels`` kernel (also sums, products, ``PartKernel``). None means
        ``RBFKernel(gamma=1.0)``. Its ``n_evaluations`` counter grows with fit and transform.
    n_landmarks : int, default 100
        Number of landmarks l (all training objects if l >= n).
    random_state : int, RandomState or None
        Seeds the uniform landmark sampling.
    tol : float, default 1e-10
        Eigenvalues of W that are <= ``tol * max eigenvalue`` are dropped as null.
    n_jobs : int or None, default None
        Kernel matrices computed in row tiles by this many joblib workers (``parallel_gram``;
        None or 1: in this process). The counter of ``kernel`` still grows by every evaluation,
        those of its parts only when computed in this process.

    Attributes
    ----------
    kernel_ : Kernel
        The kernel used (``kernel`` itself, not a copy, so its counter reflects the work done).
    landmark_indices_ : ndarray of shape (l,)
        Indices of the landmarks in the training objects (sorted).
    landmarks_ : array or list
        The landmark objects.
    eigenvalues_ : ndarray of shape (``n_components_``,)
        The kept eigenvalues of W (descending).
    normalization_ : ndarray of shape (l, ``n_components_``)
        ``U S^(-1/2)`` on the kept eigenpairs; ``transform(X) = K(X, landmarks_) @ normalization_``.
    n_components_ : int
        Number of kept eigenvalues: the dimension of the projected vectors.
    n_kernel_evaluations_fit_ : int
        Kernel evaluations made by fit (``l * l``) or fit_transform (``n * l``).
    n_kernel_evaluations_transform_ : int
        Kernel evaluations made by the transform calls since fitting (``n * l`` per call).

    Examples
    --------
    With every training object as a landmark, the features reproduce the Gram matrix:

    >>> import numpy as np
    >>> from structrank.kernels import RBFKernel
    >>> X = np.random.default_rng(0).normal(size=(20, 3))
    >>> nys = NystroemFeatures(RBFKernel(gamma=0.5), n_landmarks=20, random_state=0)
    >>> Z = nys.fit_transform(X)
    >>> Z.shape, bool(np.allclose(Z @ Z.T, RBFKernel(gamma=0.5)(X)))
    ((20, 20), True)
    >>> nys.n_kernel_evaluations_fit_  # n * l
    400
    """

    def __init__(self, kernel=None, n_landmarks=100, random_state=None, tol=1e-10, n_jobs=None):
        self.kernel = kernel
        self.n_landmarks = n_landmarks
        self.random_state = random_state
        self.tol = tol
        self.n_jobs = n_jobs

    def _gram(self, A, B=None):
        if self.n_jobs in (None, 1):
            return self.kernel_(A, B)
        return parallel_gram(self.kernel_, A, B, n_jobs=self.n_jobs)

    def _select(self, X):
        n = n_objects(X)
        if n == 0:
            raise ValueError("NystroemFeatures.fit needs at least one object")
        if self.n_landmarks < 1:
            raise ValueError(f"n_landmarks must be >= 1, got {self.n_landmarks}")
        if self.n_landmarks >= n:
            return np.arange(n)
        rng = check_random_state(self.random_state)
        return np.sort(rng.choice(n, size=self.n_landmarks, replace=False))

    def _set_normalization(self, W):
        self.eigenvalues_, self.normalization_ = nystroem_normalization(W, self.tol)
        self.n_components_ = self._n_features_out = len(self.eigenvalues_)

    def _start(self, X):
        self.kernel_ = RBFKernel() if self.kernel is None else self.kernel
        self.landmark_indices_ = self._select(X)
        self.landmarks_ = take(X, self.landmark_indices_)
        self.n_kernel_evaluations_transform_ = 0

    def fit(self, X, y=None):
        """Sample the landmarks and factor their Gram matrix W (``l * l`` kernel evaluations)."""
        self._start(X)
        before = self.kernel_.n_evaluations
        W = self._gram(self.landmarks_)
        self.n_kernel_evaluations_fit_ = self.kernel_.n_evaluations - before
        self._set_normalization(W)
        return self

    def fit_transform(self, X, y=None, **fit_params):
        """fit then transform X with one kernel matrix C = K(X, L) (``n * l`` evaluations, W = C[L])."""
        self._start(X)
        before = self.kernel_.n_evaluations
        C = self._gram(X, self.landmarks_)
        self.n_kernel_evaluations_fit_ = self.kernel_.n_evaluations - before
        self._set_normalization(C[self.landmark_indices_])
        return C @ self.normalization_

    def transform(self, X):
        """``K(X, landmarks_) @ normalization_``: shape (n, ``n_components_``), ``n * l`` kernel evaluations."""
        check_is_fitted(self, "normalization_")
        before = self.kernel_.n_evaluations
        C = self._gram(X, self.landmarks_)
        self.n_kernel_evaluations_transform_ += self.kernel_.n_evaluations - before
        return C @ self.normalization_
