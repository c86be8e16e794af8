"""Low-dimensional rerankers of n-best lists (Jagarlamudi & Daumé III 2012).

An input ``x`` (a sentence's bag of suffixes) and a candidate output ``y`` (a tag sequence's bag
of tag unigrams and bigrams) are projected to k dimensions by A (d1 x k) and B (d2 x k); a
candidate's projection score is their cosine (Eq. 1),

    p = x^T A B^T y / (||A^T x|| ||B^T y||),

and the reranker picks, in each list, the candidate with the highest ``s + w p`` (Eq. 13), s the
base model's (Viterbi) score and w chosen on dev from the grid 0, 1, ..., 100.

The three models differ only in the cross-covariance of one generalized eigenproblem (Eq. 11),
with C_xx = (1 - tau) X X^T + tau I and C_yy = (1 - tau) Y Y^T + tau I, Y the references:

- ``"generative"``: CCA of inputs and references, C_xy = X Y^T (Sec. 2.3, 3.1);
- ``"softened"``: C_xy = X ((1 - lam) Y + lam R)^T, R's column i the loss-weighted mean residual
  (1/m_i) sum_j L_ij (y_i - yhat_ij) (Eqs. 9-10, Sec. 3.2);
- ``"discriminative"``: Alg. 1, alternating between the eigenproblem with R weighted by Lagrange
  multipliers alpha (Eq. 12) and a gradient step on alpha from the slacks; alpha starts at the
  losses, so the first iterate *is* the softened solution (kept in ``init_A_``/``init_B_``).

The eigenproblem is solved on the output side (Eqs. 14-15): the top-k b of
C_yy^{-1} C_xy^T C_xx^{-1} C_xy b = omega b (a d2 x d2 problem, d2 << d1), then
a = C_xx^{-1} C_xy b / sqrt(omega), which makes a^T C_xx a = 1 whenever b^T C_yy b = 1.

How C_xx^{-1} is applied (``covariance``). The paper inverts C_xx as it stands (d1 x d1). With
d1 ~ 60,000 sparse suffixes that is a dense 60,000^2 factorization, out of reach in a minute, so:

- ``"full"``, the paper's C_xx exactly, factored in the smaller of d1 and n (lists): directly
  when d1 <= n ("primal"), else through the push-through identity
  C_xx^{-1} X = X ((1 - tau) X^T X + tau I_n)^{-1}, an n x n Cholesky ("dual");
- ``"diagonal"``, C_xx ~ (1 - tau) diag(X X^T) + tau I (and likewise C_yy), the usual
  approximation of CCA on high-dimensional sparse text: it keeps each feature's own variance
  and drops the correlations between features; its inverse is free, and C_xy^T C_xx^{-1} C_xy
  is a weighted Gram matrix of the sparse C_xy (``weighted_gram``);
- ``"auto"`` (default): on the input side "full" when min(d1, n) <= ``max_dense``, "diagonal"
  otherwise (so at the paper's scale, 12,500 sentences and ~60,000 suffixes, C_xx is
  diagonal); on the output side the paper's full C_yy (a d2 x d2 Cholesky inside
  ``scipy.linalg.eigh``) when d2 <= max_dense, else a diagonal C_yy with the top-k
  eigenvectors from ``scipy.sparse.linalg.eigsh`` on an operator that never forms a d2 x d2
  matrix. ``covariance_`` records what was used. (Keeping C_yy full matters: on tagging-like
  synthetic data the softened model was clearly less accurate with a diagonal one.)

Choices where the paper is ambiguous or silent (all deliberate, each marked in the code):

1. No centering: the paper's covariances are X X^T, not centered ones; centering would also
   densify sparse views. On centered data the generative model is exactly (regularized) CCA.
2. The reference y_i is ``gold_y`` when given, else the lowest-loss candidate of the list (the
   first on ties): Sec. 2.3 speaks of "its correct (or minimal-loss) output". x_i is the list's
   input row (the candidates' rows must be identical; ``gold_x`` is the same input and unused).
3. Eq. 1 is the cosine as printed (not the bare bilinear form); a zero projection has cosine 0.
4. Eq. 13 is ``s + w p`` exactly, so w = 0 is the base model's choice and large w the projection
   alone. The dev criterion is the total loss of the chosen candidates (token accuracy is one
   minus it over the token count, so both pick the same w); ties go to the smallest w. Without a
   dev set (``eval_set``) w is chosen the same way on the training lists (optimistic; pass one).
5. The discriminative model uses C_xy = X ((1 - lam) Y + lam R_alpha)^T, which is lam times
   Eq. 12's X ((1 - lam)/lam Y + R_alpha)^T: same eigenvectors, eigenvalues scaled by lam^2, and
   lam = 0 stays defined. With alpha = L it is the softened model's matrix (Alg. 1, step 1).
6. Alg. 1 step 11 prints xi_i = min{0, psi_ij | psi_ij > 0}, which is always 0; the text says
   "the minimum of the positive psi_ij values", used here (xi_i = 0 when none is positive).
7. Steps 13-14 update alpha_ij for the list's candidates with L_ij > 0 (for L_ij = 0 the
   constraint's right-hand side 1 - xi_i / L_ij is -inf: always satisfied); alpha is kept >= 0
   (they are multipliers of inequality constraints). The step size gamma is not given: ``step``,
   default 1.0.
8. Step 8 normalizes A and B to the length constraints of Eq. 4 as printed (unregularized:
   ||X a|| = ||Y b|| = 1) before computing margins; the returned A, B satisfy the regularized
   ones (a^T C_xx a = b^T C_yy b = 1).
9. "until slack values doesn't change" and "five iterations": at most ``n_iter`` eigen-solves,
   fewer if the slacks of two consecutive iterations are equal.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sl
import scipy.sparse as sp
from scipy.linalg import blas
from scipy.sparse.linalg import LinearOperator, eigsh
from sklearn.base import BaseEstimator
from sklearn.utils.extmath import svd_flip
from sklearn.utils.validation import check_is_fitted

from structrank.data.nbest import NBestData
from structrank.errors import DataValidationError

MODELS = ("generative", "softened", "discriminative")
COVARIANCES = ("auto", "full", "diagonal")
#: eigenvalues below this fraction of the largest count as zero when checking k against the rank
RANK_RTOL = 1e-9


# ----------------------------------------------------------------------------------------------
# Views and the residual matrix
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ListViews:
    """The training lists as the paper's matrices (one row per list, transposed w.r.t. the paper)."""

    X: sp.csr_matrix          # n x d1, x_i
    Y: sp.csr_matrix          # n x d2, reference y_i
    Yhat: sp.csr_matrix       # N x d2, candidates yhat_ij (rows of the NBestData)
    loss: np.ndarray          # N, L_ij
    owner: np.ndarray         # N, list index i of each candidate row
    offsets: np.ndarray       # n + 1, candidate rows of list i are offsets[i]:offsets[i + 1]


def list_views(data: NBestData) -> ListViews:
    """The input row of each list, its reference output (gold, else the lowest-loss candidate)."""
    offsets = data.offsets
    n = data.n_lists
    if n == 0:
        raise DataValidationError("LowDimReranker: the n-best data has no lists")
    owner = np.repeat(np.arange(n), np.diff(offsets))
    X = data.x[offsets[:-1]]
    # x_i belongs to the list: every candidate row must repeat it (NBestData's convention).
    diff = (data.x - X[owner]).tocsr()
    diff.eliminate_zeros()
    if diff.nnz:
        bad = owner[np.flatnonzero(np.diff(diff.indptr))[0]]
        raise DataValidationError(
            f"LowDimReranker: the input view x differs between the candidates of list qid={data.list_ids[bad]}; "
            "x must be the list's input, repeated on each candidate row")
    if data.gold_y is not None:
        if data.gold_y.shape[1] != data.y.shape[1]:
            raise DataValidationError(
                f"LowDimReranker: mismatched output views: gold_y has {data.gold_y.shape[1]} features, "
                f"y has {data.y.shape[1]}")
        Y = data.gold_y
    else:  # choice 2: the lowest-loss candidate stands in for the reference
        Y = data.y[first_argmax(-data.loss, offsets)]
    if not (np.all(np.isfinite(data.loss)) and np.all(data.loss >= 0)):
        raise DataValidationError("LowDimReranker: losses must be finite and non-negative")
    return ListViews(sp.csr_matrix(X, dtype=np.float64), sp.csr_matrix(Y, dtype=np.float64),
                     sp.csr_matrix(data.y, dtype=np.float64), data.loss, owner, offsets)


def residual_matrix(views: ListViews, weights) -> sp.csr_matrix:
    """R of Eq. 9 (weights = losses) or of Alg. 1 step 4 (weights = alpha), one row per list.

    Row i is (1/m_i) sum_j w_ij r_ij with r_ij = y_i - yhat_ij (Eq. 7). The residuals are formed
    first, so the features a candidate shares with its reference cancel exactly (they would leave
    rounding noise, and density, in rho_i y_i - (1/m_i) sum_j w_ij yhat_ij); the weighted sum
    over candidates is then one sparse product.
    """
    n, N = views.X.shape[0], views.Yhat.shape[0]
    m = np.diff(views.offsets).astype(np.float64)
    residuals = (views.Y[views.owner] - views.Yhat).tocsr()
    P = sp.csr_matrix((np.asarray(weights, dtype=np.float64) / m[views.owner], (views.owner, np.arange(N))),
                      shape=(n, N))
    return (P @ residuals).tocsr()


# ----------------------------------------------------------------------------------------------
# Regularized covariances and the eigenproblem of Eqs. 14-15
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Covariance:
    """C = (1 - tau) Z^T Z + tau I for a view Z (n x d, one row per list), ready to be inverted.

    kind "diagonal": ``diag`` holds the diagonal approximation; "primal": ``matrix`` is the
    d x d C and ``factor`` its Cholesky factor; "dual": ``factor`` is the Cholesky factor of
    H = (1 - tau) Z Z^T + tau I_n and ``gram`` holds Z Z^T (n x n), for C^{-1} Z^T = Z^T H^{-1}.
    """

    kind: str
    tau: float
    diag: np.ndarray | None = None
    matrix: np.ndarray | None = None
    factor: tuple | None = None
    gram: np.ndarray | None = None


def regularized_covariance(Z: sp.csr_matrix, tau: float, kind: str, name: str = "C",
                           factorize: bool = True) -> Covariance:
    """The regularized covariance of Eq. 11 in the form ``kind`` ("diagonal", "primal" or "dual").

    ``factorize=False`` skips the Cholesky factor of a primal C (C_yy only enters
    ``scipy.linalg.eigh``, which factors it itself).
    """
    if kind == "diagonal":
        d = (1.0 - tau) * np.asarray(Z.multiply(Z).sum(axis=0)).ravel() + tau
        return Covariance("diagonal", tau, diag=d)
    gram = ((Z.T @ Z) if kind == "primal" else (Z @ Z.T)).toarray()
    matrix = (1.0 - tau) * gram + tau * np.eye(gram.shape[0])
    if kind == "primal" and not factorize:
        return Covariance(kind, tau, matrix=matrix)
    try:
        factor = sl.cho_factor(matrix, lower=True)
    except np.linalg.LinAlgError:
        raise DataValidationError(f"LowDimReranker: {name} is singular (tau={tau}); use tau > 0") from None
    if kind == "primal":
        return Covariance(kind, tau, matrix=matrix, factor=factor)
    return Covariance(kind, tau, factor=factor, gram=gram)


def _inverse_diagonal(cov: Covariance) -> np.ndarray:
    # A feature absent from training has diag = tau, 0 when tau = 0, and only zeros in Z^T V:
    # its inverse is taken as 0 (a pseudo-inverse) instead of failing.
    with np.errstate(divide="ignore"):
        return np.where(cov.diag > 0, 1.0 / cov.diag, 0.0)


def inverse_times_view(cov: Covariance, Z: sp.csr_matrix, V: np.ndarray) -> np.ndarray:
    """C^{-1} Z^T V (d x p) for V with one row per list: Eq. 15 when V = M B."""
    if cov.kind == "diagonal":
        inv = _inverse_diagonal(cov)
        return (Z.T @ V) * (inv if V.ndim == 1 else inv[:, None])
    if cov.kind == "primal":
        return sl.cho_solve(cov.factor, Z.T @ V)
    return Z.T @ sl.cho_solve(cov.factor, V)


def weighted_gram(Q: sp.csr_matrix, w: np.ndarray, block_rows: int | None = None) -> np.ndarray:
    """Q^T diag(w) Q as a dense array, w >= 0.

    The rows of Q = X^T M for frequent input features are nearly dense, and a sparse product
    spends almost all its time on them; those rows go through BLAS ``dsyrk`` (in blocks, to bound
    memory), the sparse remainder through scipy.sparse.
    """
    d = Q.shape[1]
    scaled = (sp.diags(np.sqrt(w)) @ sp.csr_matrix(Q)).tocsr()
    row_nnz = np.diff(scaled.indptr)
    # Cost model: a dense row costs ~d^2/2 fast multiply-adds (BLAS), a sparse one ~nnz^2/2
    # slow, scattered ones; the break-even measured at d ~ 3000 lies between d/16 and d/10.
    cut = max(d // 16, 32)
    light = scaled[np.flatnonzero((row_nnz > 0) & (row_nnz <= cut))]
    K = (light.T.tocsr() @ light).toarray()
    heavy = np.flatnonzero(row_nnz > cut)
    if heavy.size:
        upper = np.zeros((d, d), order="F")    # dsyrk fills the upper triangle only
        block = block_rows or max(1, (64 << 20) // (8 * d))  # 64 << 20 bytes of dense rows at a time
        for start in range(0, heavy.size, block):
            dense = scaled[heavy[start:start + block]].toarray(order="F")
            upper = blas.dsyrk(1.0, dense, beta=1.0, c=upper, trans=1, lower=0, overwrite_c=1)
        K += upper
        K += upper.T
        K[np.diag_indices(d)] -= np.diag(upper)
    return K


def cross_gram(cov_x: Covariance, X: sp.csr_matrix, M: sp.csr_matrix) -> np.ndarray:
    """K = C_xy^T C_xx^{-1} C_xy (d2 x d2, dense) with C_xy = X^T M (the paper's X M^T)."""
    if cov_x.kind == "diagonal":
        # CSR @ CSR, so that the large product needs no format conversion
        return weighted_gram(X.T.tocsr() @ M, _inverse_diagonal(cov_x))
    if cov_x.kind == "primal":
        Q = (X.T @ M).toarray()
        K = Q.T @ sl.cho_solve(cov_x.factor, Q)
    else:  # dual: X C_xx^{-1} X^T = G H^{-1} with G = X X^T (G and H commute)
        Md = M.toarray()
        K = Md.T @ (cov_x.gram @ sl.cho_solve(cov_x.factor, Md))
    return (K + K.T) / 2.0


def uses_lanczos(cov_y: Covariance, d2: int, k: int, max_dense: int) -> bool:
    """Whether Eq. 14 is solved matrix-free (d2 too large for a dense d2 x d2 problem)."""
    return cov_y.kind == "diagonal" and d2 > max_dense and k < d2


def solve_projections(X, M, cov_x: Covariance, cov_y: Covariance, k: int, max_dense: int = 5000):
    """Top-k solutions of Eq. 11 with C_xy = X^T M, through the d2-side problem of Eqs. 14-15.

    Returns (A, B, omega): B's columns satisfy b^T C_yy b = 1, A's a^T C_xx a = 1, omega (the
    eigenvalues of Eq. 14, squared canonical correlations for the generative model) descending.
    Raises DataValidationError when k exceeds the rank of the cross-covariance.
    """
    d2 = M.shape[1]
    if uses_lanczos(cov_y, d2, k, max_dense):
        # Too large to form K: Lanczos on D^{-1/2} K D^{-1/2}, K applied as M^T X C_xx^{-1} X^T M.
        scale = 1.0 / np.sqrt(cov_y.diag)

        def matmat(V):
            V = np.asarray(V).reshape(d2, -1) * scale[:, None]
            return (M.T @ (X @ inverse_times_view(cov_x, X, M @ V))) * scale[:, None]

        op = LinearOperator((d2, d2), matvec=matmat, matmat=matmat, dtype=np.float64)
        v0 = np.random.default_rng(0).standard_normal(d2)  # deterministic start
        omega, U = eigsh(op, k=k, which="LA", v0=v0)
        B = U * scale[:, None]
    else:
        K = cross_gram(cov_x, X, M)
        Cyy = np.diag(cov_y.diag) if cov_y.kind == "diagonal" else cov_y.matrix
        try:
            omega, B = sl.eigh(K, Cyy, subset_by_index=[d2 - k, d2 - 1])
        except np.linalg.LinAlgError:
            raise DataValidationError("LowDimReranker: C_yy is singular; use tau > 0") from None
    order = np.argsort(omega)[::-1]
    omega, B = omega[order], B[:, order]
    top = max(float(omega[0]), np.finfo(float).tiny)
    rank = int(np.sum(omega > RANK_RTOL * top))
    if rank < k:
        raise DataValidationError(
            f"LowDimReranker: k={k} is larger than the rank of the cross-covariance C_xy "
            f"(only {rank} non-zero eigenvalues); use k <= {rank}")
    # Fix the sign of each pair (a, b) for reproducibility: b's largest entry positive (scikit-learn's svd_flip).
    B, _ = svd_flip(np.array(B), None)
    A = inverse_times_view(cov_x, X, M @ B) / np.sqrt(omega)  # Eq. 15
    return A, B, omega


# ----------------------------------------------------------------------------------------------
# Alg. 1: one update of the Lagrange multipliers
# ----------------------------------------------------------------------------------------------

def multiplier_step(views: ListViews, A, B, alpha, lam: float, step: float):
    """Alg. 1 steps 8-16: slacks from the normalized projections, then a gradient step on alpha.

    Returns (new alpha, slack per list, objective of Eq. 6 times lam).
    """
    U = views.X @ A                                   # x_i^T a per list
    Vref = views.Y @ B
    # Step 8 (choice 8): scale columns to the length constraints of Eq. 4, ||X a|| = ||Y b|| = 1.
    norm = np.linalg.norm(U, axis=0) * np.linalg.norm(Vref, axis=0)
    norm[norm == 0] = 1.0
    # margin_ij = x_i^T A_n B_n^T (y_i - yhat_ij)
    margin = np.sum(U[views.owner] * (Vref[views.owner] - views.Yhat @ B) / norm, axis=1)
    loss = views.loss
    psi = (1.0 - margin) * loss                       # step 10
    # Step 11 (choice 6): the smallest positive psi of the list, 0 if none is positive.
    positive = np.where(psi > 0, psi, np.inf)
    slack = np.minimum.reduceat(positive, views.offsets[:-1])
    slack[~np.isfinite(slack)] = 0.0
    # Steps 12-14 (choice 7): lists with a positive slack, candidates with a positive loss.
    xi = slack[views.owner]
    update = (xi > 0) & (loss > 0)
    d = margin[update] - (1.0 - xi[update] / loss[update])
    alpha = alpha.copy()
    alpha[update] = np.maximum(alpha[update] - step * d, 0.0)
    objective = (1.0 - lam) * float(np.sum(np.sum(U * Vref, axis=0) / norm)) - lam * float(slack.sum())
    return alpha, slack, objective


# ----------------------------------------------------------------------------------------------
# Choosing candidates
# ----------------------------------------------------------------------------------------------

def first_argmax(scores, offsets) -> np.ndarray:
    """Row of the highest score in each list, the first on ties (as NBestData.chosen), vectorized."""
    scores = np.asarray(scores, dtype=np.float64)
    owner = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
    best = np.maximum.reduceat(scores, offsets[:-1])
    hits = np.flatnonzero(scores == best[owner])
    return hits[np.searchsorted(hits, offsets[:-1])]


def cosine_scores(data: NBestData, A, B) -> np.ndarray:
    """Eq. 1 for each candidate row: cos(A^T x, B^T y), 0 when either projection is 0."""
    U = data.x @ A
    V = data.y @ B
    denom = np.linalg.norm(U, axis=1) * np.linalg.norm(V, axis=1)
    dots = np.sum(U * V, axis=1)
    return np.divide(dots, denom, out=np.zeros_like(dots), where=denom > 0)


# ----------------------------------------------------------------------------------------------
# The estimator
# ----------------------------------------------------------------------------------------------

class LowDimReranker(BaseEstimator):
    """Low-dimensional reranker of n-best lists (Jagarlamudi & Daumé III 2012).

    Parameters
    ----------
    model : {"generative", "softened", "discriminative"}
    k : int
        Dimension of the common subspace (the paper's English optimum is 75).
    tau : float in [0, 1]
        Regularization of the covariances, C = (1 - tau) Z^T Z + tau I (English optimum 0.95).
    lam : float in [0, 1]
        Weight of the residual term in the softened and discriminative models (English 0.3).
    n_iter : int
        Eigen-solves of Alg. 1 (the paper runs five); ignored by the closed-form models.
    step : float
        Step size gamma of Alg. 1 step 14 (the paper does not give it).
    weights : sequence of float or None
        Grid of w for Eq. 13; None is the paper's 0, 1, ..., 100.
    covariance : {"auto", "full", "diagonal"}
        How C_xx (and C_yy) are inverted; see the module docstring.
    max_dense : int
        Largest dimension factored densely under ``covariance="auto"``, and largest d2 for which
        the d2 x d2 matrix of Eq. 14 is formed (beyond it, a Lanczos solve with diagonal C_yy).

    Attributes
    ----------
    A_ : ndarray of shape (d1, k)
    B_ : ndarray of shape (d2, k)
    eigenvalues_ : ndarray of shape (k,)
        omega of Eq. 14, descending.
    w_ : float
        The weight of Eq. 13.
    weights_ : ndarray
        The grid searched.
    dev_curve_ : ndarray
        The dev accuracy (or, without ``size``, total loss) at each grid point.
    dev_metric_ : {"accuracy", "loss"}
    w_selected_on_ : {"dev", "train"}
    covariance_ : dict
        The kinds used for C_xx and C_yy and the eigen-solver.
    init_A_, init_B_ : ndarray
        The first iterate (the softened solution, Alg. 1 step 1); for the closed-form models the
        same as ``A_``, ``B_``.
    alpha_ : ndarray or None
        The Lagrange multipliers of the returned ``A_``, ``B_`` (discriminative; else None).
    history_ : list of dict
        Per eigen-solve: eigenvalues, and for the discriminative model the objective of Eq. 6
        (times lam), the total slack and the number of lists with a slack.

    Examples
    --------
    Two kinds of input, each with its own right output; the base model always prefers candidate 0,
    and the reranker learns which output goes with which input:

    >>> import numpy as np
    >>> from structrank.data import NBestData
    >>> kind = np.random.default_rng(0).integers(0, 2, 40)    # each list's input: one of two kinds
    >>> x = np.repeat(np.eye(2)[kind], 2, axis=0)              # the input view, once per candidate
    >>> y = np.tile(np.eye(2), (40, 1))                        # candidate j outputs j
    >>> loss = (np.tile([0, 1], 40) != np.repeat(kind, 2)).astype(float)
    >>> data = NBestData(x, y, loss, base_score=np.tile([0.0, -0.1], 40), qid=np.repeat(np.arange(40), 2),
    ...                  size=np.ones(40))
    >>> round(data.accuracy_of(data.base_score), 3)
    0.425
    >>> model = LowDimReranker(model="softened", k=2).fit(data)
    >>> data.accuracy_of(model.predict(data))
    1.0
    """

    def __init__(self, model="discriminative", k=75, tau=0.95, lam=0.3, n_iter=5, step=1.0, weights=None,
                 covariance="auto", max_dense=5000):
        self.model = model
        self.k = k
        self.tau = tau
        self.lam = lam
        self.n_iter = n_iter
        self.step = step
        self.weights = weights
        self.covariance = covariance
        self.max_dense = max_dense

    # -- parameters -------------------------------------------------------------------------

    def _check_params(self):
        if self.model not in MODELS:
            raise DataValidationError(f"LowDimReranker: model must be one of {MODELS}, got {self.model!r}")
        if self.covariance not in COVARIANCES:
            raise DataValidationError(
                f"LowDimReranker: covariance must be one of {COVARIANCES}, got {self.covariance!r}")
        if not (isinstance(self.k, (int, np.integer)) and self.k >= 1):
            raise DataValidationError(f"LowDimReranker: k must be a positive integer, got {self.k!r}")
        for name in ("tau", "lam"):
            value = getattr(self, name)
            if not (np.isscalar(value) and 0.0 <= float(value) <= 1.0):
                raise DataValidationError(f"LowDimReranker: {name} must be in [0, 1], got {value!r}")
        if not (isinstance(self.n_iter, (int, np.integer)) and self.n_iter >= 1):
            raise DataValidationError(f"LowDimReranker: n_iter must be a positive integer, got {self.n_iter!r}")
        if not (np.isscalar(self.step) and np.isfinite(self.step) and self.step >= 0):
            raise DataValidationError(f"LowDimReranker: step must be finite and >= 0, got {self.step!r}")
        grid = np.arange(101, dtype=np.float64) if self.weights is None else \
            np.asarray(self.weights, dtype=np.float64).ravel()
        if grid.size == 0 or not np.all(np.isfinite(grid)):
            raise DataValidationError("LowDimReranker: weights must be a non-empty grid of finite numbers")
        return np.sort(grid)

    def _kinds(self, views: ListViews):
        """Covariance kinds for the input and output sides."""
        n, d1 = views.X.shape
        d2 = views.Y.shape[1]
        full_x = "primal" if d1 <= n else "dual"
        if self.covariance == "full":
            return full_x, "primal"
        if self.covariance == "diagonal":
            return "diagonal", "diagonal"
        return (full_x if min(d1, n) <= self.max_dense else "diagonal",
                "primal" if d2 <= self.max_dense else "diagonal")

    # -- fitting ----------------------------------------------------------------------------

    def fit(self, train: NBestData, eval_set: NBestData | None = None):
        """Learn A, B on ``train``; choose w of Eq. 13 on ``eval_set``, the dev lists (on ``train``
        without them)."""
        grid = self._check_params()
        _check_nbest(train, "train")
        views = list_views(train)
        n, d1 = views.X.shape
        d2 = views.Y.shape[1]
        if self.k > min(n, d1, d2):
            raise DataValidationError(
                f"LowDimReranker: k={self.k} is larger than the rank bound min(lists, d1, d2) = "
                f"min({n}, {d1}, {d2}) = {min(n, d1, d2)}")
        if eval_set is not None:
            _check_nbest(eval_set, "eval_set")
            _check_dims(eval_set, d1, d2, "eval_set")
        self.n_features_in_ = (d1, d2)

        x_kind, y_kind = self._kinds(views)
        tau = float(self.tau)
        cov_x = regularized_covariance(views.X, tau, x_kind, "C_xx")
        cov_y = regularized_covariance(views.Y, tau, y_kind, "C_yy", factorize=False)
        if y_kind == "diagonal" and np.any(cov_y.diag <= 0):
            raise DataValidationError("LowDimReranker: C_yy is singular (an output feature never occurs in the "
                                      "references and tau = 0); use tau > 0")
        self.covariance_ = {"x": x_kind, "y": y_kind,
                            "eigensolver": "eigsh" if uses_lanczos(cov_y, d2, self.k, self.max_dense) else "eigh"}
        solve = lambda M: solve_projections(views.X, M, cov_x, cov_y, int(self.k), self.max_dense)  # noqa: E731
        lam = float(self.lam)

        self.history_ = []
        self.alpha_ = None
        if self.model == "generative":
            A, B, omega = solve(views.Y)
            self.history_.append({"eigenvalues": omega})
            self.init_A_, self.init_B_ = A, B
        elif self.model == "softened":
            A, B, omega = solve(_cross_target(views, views.loss, lam))
            self.history_.append({"eigenvalues": omega})
            self.init_A_, self.init_B_ = A, B
        else:
            A, B, omega = self._fit_discriminative(views, solve, lam)
        self.A_, self.B_, self.eigenvalues_ = A, B, omega

        # Eq. 13: w on the dev lists (choice 4).
        tune = eval_set if eval_set is not None else train
        self.w_selected_on_ = "dev" if eval_set is not None else "train"
        p = cosine_scores(tune, A, B)
        losses = np.array([tune.loss[first_argmax(tune.base_score + w * p, tune.offsets)].sum() for w in grid])
        best = int(np.flatnonzero(losses == losses.min())[0])  # grid ascending: ties -> smallest w
        self.weights_ = grid
        self.w_ = float(grid[best])
        if tune.size is not None:
            self.dev_metric_ = "accuracy"
            self.dev_curve_ = 1.0 - losses / float(tune.size.sum())
        else:
            self.dev_metric_ = "loss"
            self.dev_curve_ = losses
        return self

    def _fit_discriminative(self, views: ListViews, solve, lam: float):
        """Alg. 1: alternate the eigenproblem of Eq. 12 and a gradient step on alpha."""
        alpha = views.loss.copy()                     # step 1: alpha = L, i.e. the softened model
        previous = None
        for it in range(int(self.n_iter)):
            A, B, omega = solve(_cross_target(views, alpha, lam))   # steps 4-7
            if it == 0:
                self.init_A_, self.init_B_ = A, B
            self.alpha_ = alpha                       # the multipliers behind the current A, B
            new_alpha, slack, objective = multiplier_step(views, A, B, alpha, lam, float(self.step))
            self.history_.append({"eigenvalues": omega, "objective": objective, "slack": float(slack.sum()),
                                  "n_violated": int(np.sum(slack > 0))})
            if previous is not None and np.array_equal(slack, previous):
                break                                 # step 17: the slacks no longer change
            previous, alpha = slack, new_alpha
        return A, B, omega

    # -- prediction -------------------------------------------------------------------------

    def projection_scores(self, data: NBestData) -> np.ndarray:
        """Eq. 1, the cosine of A^T x and B^T y, for each candidate row."""
        check_is_fitted(self, "A_")
        _check_nbest(data, "data")
        _check_dims(data, *self.n_features_in_, "data")
        return cosine_scores(data, self.A_, self.B_)

    def predict(self, data: NBestData) -> np.ndarray:
        """Eq. 13, s + w p, for each candidate row."""
        return data.base_score + self.w_ * self.projection_scores(data)

    def rerank(self, data: NBestData) -> np.ndarray:
        """Row index of the chosen candidate of each list."""
        return first_argmax(self.predict(data), data.offsets)


def _cross_target(views: ListViews, weights, lam: float) -> sp.csr_matrix:
    """M with C_xy = X^T M: (1 - lam) Y + lam R_w (Eq. 10; Eq. 12 up to the factor lam, choice 5)."""
    return ((1.0 - lam) * views.Y + lam * residual_matrix(views, weights)).tocsr()


def _check_nbest(data, name):
    if not isinstance(data, NBestData):
        raise DataValidationError(f"LowDimReranker: {name} must be an NBestData, got {type(data).__name__}")
    if not np.all(np.isfinite(data.base_score)):
        raise DataValidationError(f"LowDimReranker: {name} has non-finite base scores")


def _check_dims(data: NBestData, d1: int, d2: int, name: str):
    if data.x.shape[1] != d1 or data.y.shape[1] != d2:
        raise DataValidationError(
            f"LowDimReranker: mismatched views: the model was fitted on x with {d1} and y with {d2} features, "
            f"{name} has x with {data.x.shape[1]} and y with {data.y.shape[1]}")
