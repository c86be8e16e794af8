"""What every structrank kernel shares: a Gram matrix over sequences of objects, counted.

A kernel here is a callable object ``k(A, B) -> ndarray of shape (len(A), len(B))`` over any
objects it knows (vectors as rows of an array, token lists, trees). Croce et al. (2016) measure a
Nyström model by the kernel evaluations it avoids, so every kernel counts the object pairs it
has evaluated in ``n_evaluations`` (``reset()`` sets it to 0). ``diag(A)`` gives ``k(a, a)`` for
each object, counted too. Kernels combine with ``+`` (SumKernel) and ``*`` (ProductKernel),
optionally weighted: ``0.5 * k1 + k2``.

Also here: ``ScaledKernel`` (a weight), ``PartKernel`` (a kernel on one field of composite
objects), ``LinearKernel``, and ``parallel_gram``, which computes a Gram matrix in row tiles over
joblib workers (the symmetric case only on and above the diagonal).

>>> import numpy as np
>>> k = LinearKernel()
>>> k(np.eye(2), np.ones((3, 2))).shape, k.n_evaluations
((2, 3), 6)
"""

from __future__ import annotations

import numpy as np
import scipy.sparse
from joblib import Parallel, delayed


def n_objects(A) -> int:
    """How many objects ``A`` holds: rows of an array (dense or scipy sparse), items of a list."""
    shape = getattr(A, "shape", None)
    return int(shape[0]) if shape is not None and len(shape) >= 1 else len(A)


def take(X, indices):
    """The objects ``X[i] for i in indices``: row indexing for arrays, a list for other sequences."""
    if isinstance(X, np.ndarray) or scipy.sparse.issparse(X):
        return X[np.asarray(indices, dtype=np.intp)]
    return [X[int(i)] for i in indices]


def _tile(kernel, A, B):
    return kernel(A) if B is None else kernel(A, B)


def parallel_gram(kernel, A, B=None, n_jobs=None, block_size=512):
    """``kernel(A, B)`` computed in tiles of ``block_size`` rows by joblib workers.

    The expensive kernels (trees, strings) are single-threaded numba loops, so a Gram matrix is
    spread over processes tile by tile; under ``joblib.parallel_backend("dask")`` the tiles go
    to a dask.distributed cluster. ``B=None`` means ``K(A, A)``: only the tiles on and above the
    diagonal are computed and the rest mirrored. Each tile is evaluated by a copy of ``kernel``
    in its worker, so the counter of ``kernel`` grows by ``len(A) * len(B)`` here (as one call
    would) while the counters of its parts stay where they were. The result equals
    ``kernel(A, B)`` whatever the tiling.

    >>> import numpy as np
    >>> from structrank.kernels.vector import RBFKernel
    >>> X = np.random.default_rng(0).normal(size=(7, 3))
    >>> k = RBFKernel(gamma=0.5)
    >>> bool(np.allclose(parallel_gram(k, X, block_size=3, n_jobs=1), RBFKernel(gamma=0.5)(X)))
    True
    >>> k.n_evaluations
    49
    """
    n_a = n_objects(A)
    n_b = n_a if B is None else n_objects(B)
    starts = range(0, n_a, block_size)
    if B is None:
        tiles = [(i, j) for i in starts for j in starts if j >= i]
        parts = [(take(A, range(i, min(i + block_size, n_a))),
                  None if i == j else take(A, range(j, min(j + block_size, n_a)))) for i, j in tiles]
    else:
        tiles = [(i, 0) for i in starts]
        parts = [(take(A, range(i, min(i + block_size, n_a))), B) for i, _ in tiles]
    ship = getattr(kernel, "shippable", None)
    if ship is not None:  # e.g. trees encoded once here rather than once per tile in the workers
        parts = [(ship(a), None if b is None else ship(b)) for a, b in parts]
    saved = kernel.n_evaluations
    grams = Parallel(n_jobs=n_jobs)(delayed(_tile)(kernel, a, b) for a, b in parts)
    kernel.n_evaluations = saved + n_a * n_b  # workers counted on their copies (or, with n_jobs=1, here)
    out = np.empty((n_a, n_b))
    for (i, j), gram in zip(tiles, grams):
        out[i:i + gram.shape[0], j:j + gram.shape[1]] = gram
        if B is None and i != j:
            out[j:j + gram.shape[1], i:i + gram.shape[0]] = gram.T
    return out


class Kernel:
    """Base class: subclasses implement ``_gram(A, B)`` (and may override ``_diag``).

    Examples
    --------
    A kernel over any objects: implement ``_gram``; calls are counted, ``+`` and ``*`` combine.

    >>> class SharedLetters(Kernel):
    ...     def _gram(self, A, B):
    ...         return [[len(set(a) & set(b)) for b in B] for a in A]
    >>> k = SharedLetters()
    >>> k(["cat", "dog"], ["act", "god", "cog"]).tolist(), k.n_evaluations
    ([[3.0, 0.0, 1.0], [0.0, 3.0, 2.0]], 6)
    """

    def __init__(self):
        self.n_evaluations = 0

    def reset(self):
        """Set the evaluation counter (and those of the parts of a combination) to 0."""
        self.n_evaluations = 0

    def __call__(self, A, B=None):
        B = A if B is None else B
        gram = np.asarray(self._gram(A, B), dtype=np.float64)
        n_a, n_b = n_objects(A), n_objects(B)
        if gram.shape != (n_a, n_b):
            raise ValueError(f"{type(self).__name__} returned shape {gram.shape} for {n_a} x {n_b} objects")
        self.n_evaluations += n_a * n_b
        return gram

    def diag(self, A):
        values = np.asarray(self._diag(A), dtype=np.float64)
        self.n_evaluations += n_objects(A)
        return values

    def _gram(self, A, B):
        raise NotImplementedError

    def _diag(self, A):
        return np.array([self._gram(A[i:i + 1], A[i:i + 1])[0, 0] for i in range(n_objects(A))])

    def __add__(self, other):
        return SumKernel([self, other])

    def __mul__(self, other):
        if isinstance(other, (int, float)):
            return ScaledKernel(self, float(other))
        return ProductKernel([self, other])

    __rmul__ = __mul__

    def __repr__(self):
        return f"{type(self).__name__}()"


class ScaledKernel(Kernel):
    """``weight * k``: a weighted part of a sum (the weights of Filice et al.'s kernel sums).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [1.0, 1.0]])
    >>> k = 2 * LinearKernel()
    >>> type(k).__name__, k(X).tolist()
    ('ScaledKernel', [[2.0, 2.0], [2.0, 4.0]])
    """

    def __init__(self, kernel, weight):
        super().__init__()
        if not weight >= 0:
            raise ValueError(f"a kernel weight must be >= 0 (else the kernel is not positive semi-definite), got {weight}")
        self.kernel, self.weight = kernel, weight

    def _gram(self, A, B):
        return self.weight * self.kernel(A, B)

    def _diag(self, A):
        return self.weight * self.kernel.diag(A)

    def reset(self):
        super().reset()
        self.kernel.reset()


class _Combination(Kernel):
    def __init__(self, kernels):
        super().__init__()
        flat = []
        for k in kernels:  # (k1 + k2) + k3 is one sum of three
            flat.extend(k.kernels if type(k) is type(self) else [k])
        self.kernels = flat

    def reset(self):
        super().reset()
        for k in self.kernels:
            k.reset()

    def __repr__(self):
        op = " + " if isinstance(self, SumKernel) else " * "
        return "(" + op.join(map(repr, self.kernels)) + ")"


class SumKernel(_Combination):
    """The sum of kernels over the same objects (or over parts of one object, see ``PartKernel``).

    Examples
    --------
    >>> import numpy as np
    >>> from structrank.kernels import RBFKernel
    >>> X = np.array([[1.0, 0.0], [1.0, 1.0]])
    >>> k = LinearKernel() + 2 * RBFKernel(gamma=0.5)
    >>> k(X).round(4).tolist()
    [[3.0, 2.2131], [2.2131, 4.0]]
    >>> k.kernels[0].n_evaluations  # each part counts its own evaluations
    4
    """

    def _gram(self, A, B):
        return sum(k(A, B) for k in self.kernels)

    def _diag(self, A):
        return sum(k.diag(A) for k in self.kernels)


class ProductKernel(_Combination):
    """The element-wise product of kernels (a kernel by the Schur product theorem).

    Examples
    --------
    >>> import numpy as np
    >>> from structrank.kernels import PolynomialKernel
    >>> X = np.array([[1.0, 0.0], [1.0, 1.0]])
    >>> k = LinearKernel() * PolynomialKernel(degree=1, gamma=1.0, coef0=0.0)
    >>> k
    (LinearKernel() * PolynomialKernel(degree=1, gamma=1.0, coef0=0.0))
    >>> k(X).tolist()
    [[1.0, 1.0], [1.0, 4.0]]
    """

    def _gram(self, A, B):
        out = np.ones((n_objects(A), n_objects(B)))
        for k in self.kernels:
            out *= k(A, B)
        return out

    def _diag(self, A):
        out = np.ones(n_objects(A))
        for k in self.kernels:
            out *= k.diag(A)
        return out


class PartKernel(Kernel):
    """A kernel on one field of composite objects: ``PartKernel(k, "tree")`` applies k to ``obj["tree"]``.

    The objects of a question-comment pair (vectors, token lists, trees) are dicts or tuples; a
    sum of PartKernels is the sum of kernels on their representations (Filice et al. 2016).

    Examples
    --------
    >>> import numpy as np
    >>> from structrank.kernels import WordSequenceKernel
    >>> pairs = [{"v": np.array([1.0, 0.0]), "words": ["the", "cat"]},
    ...          {"v": np.array([1.0, 1.0]), "words": ["the", "dog"]}]
    >>> k = PartKernel(LinearKernel(), "v") + PartKernel(WordSequenceKernel(n=1), "words")
    >>> k
    (LinearKernel()['v'] + WordSequenceKernel(n=1, lam=0.5, normalize=True, exact=False)['words'])
    >>> k(pairs).round(4).tolist()
    [[2.0, 1.5], [1.5, 3.0]]
    """

    def __init__(self, kernel, key):
        super().__init__()
        self.kernel, self.key = kernel, key

    def _part(self, A):
        part = [a[self.key] for a in A]
        return np.asarray(part) if part and isinstance(part[0], np.ndarray) else part

    def _gram(self, A, B):
        return self.kernel(self._part(A), self._part(B))

    def _diag(self, A):
        return self.kernel.diag(self._part(A))

    def reset(self):
        super().reset()
        self.kernel.reset()

    def __repr__(self):
        return f"{self.kernel!r}[{self.key!r}]"


class LinearKernel(Kernel):
    """``<a, b>`` on the rows of 2-d arrays (dense or scipy sparse).

    Examples
    --------
    >>> import numpy as np
    >>> k = LinearKernel()
    >>> X = np.array([[1.0, 0.0], [1.0, 1.0]])
    >>> k(X).tolist(), k.diag(X).tolist(), k.n_evaluations
    ([[1.0, 1.0], [1.0, 2.0]], [1.0, 2.0], 6)
    """

    def _gram(self, A, B):
        gram = A @ B.T
        return gram.toarray() if hasattr(gram, "toarray") else gram

    def _diag(self, A):
        sq = A.multiply(A).sum(axis=1) if hasattr(A, "multiply") else np.einsum("ij,ij->i", A, A)
        return np.asarray(sq).ravel()
