"""Permutation CRF objectives of Volkovs, Larochelle & Zemel (2011): values and exact gradients.

A query's m documents (m <= 6 in training, Sec. 6) have scores ``s = X theta``. A ranking y
gives document i the position ``y_i``; its energy is

    E(y) = - sum_i alpha_{y_i} s_i,   alpha_j = log 2 / log(j + 1)          (Eq. 13, sign fixed)

The printed Eq. 13 has no minus sign, but Eq. 14 (predict by sorting the scores, highest
first) needs it: low energy is high probability, ``p(y) = exp(-E(y)) / Z``. So a ranking's
structure enters only through its coefficient vector ``c(y) = (alpha_{y_1}, ..., alpha_{y_m})``
and ``E(y) = -s . c(y)``: the spine of structrank (DESIGN.md). All m! rankings are enumerated
once per m as the rows of the permutation-by-document matrix ``A`` (:func:`permutation_table`),
so for a query the energies are ``E = -A s``.

Each objective is a function of the vector of energies E over all m! rankings and of the
losses ``l(y) = 1 - NDCG(y)`` with the paper's NDCG of Eq. 12 (gain r, discount
``log 2 / log(1 + position)``, no cut-off). :func:`objective_gradient` returns its value and
``g = dObjective/dE``; the chain rule gives ``dObjective/ds = -A^T g`` and
``dObjective/dtheta = X^T (-A^T g)``. Y0 is the set of zero-loss rankings (every ordering that
sorts the documents by relevance; Sec. 4), ``u`` the uniform distribution over Y0.

- ``ml`` (Eq. 10): ``-mean_{y in Y0} log p(y)``, gradient ``u - p``. We take the mean over Y0
  where Eq. 10 writes the sum: it makes ML the T -> 0 limit of KL, as Sec. 3.3 says it is, and
  keeps a query's step from growing with |Y0| (up to 720 for a query whose documents all share
  one label).
- ``la`` (Eq. 4 with the weight a of Sec. 6.2): ML with energies ``E - a l``; gradient
  ``u - p_a`` with ``p_a`` the distribution of the augmented energies.
- ``ml-sum`` and ``la-sum``: ML and LA with Eq. 10's sum over Y0, as printed (Sec. 4: "the
  loss-augmented variant is similarly adjusted"). The value is |Y0| times the mean's and the
  gradient ``1[Y0] - |Y0| p`` (``p_a`` for LA) is |Y0| times ``u - p``: a query's step grows with
  its number of correct rankings. They let the reproduction test the paper's claims with the
  paper's ML beside ours.
- ``ls`` (Eqs. 5 and 11): ML with ``E_LS(y) = l(y) (E(y) - mean_{Y0} E) - l(y)``, which is 0 on
  Y0, so the objective is ``log sum_y exp(-E_LS(y))``; with ``q`` the distribution of E_LS,
  gradient ``-q l + (q . l) u``.
- ``el`` (Eq. 6): ``sum_y l(y) p(y)``; the exact gradient is ``p (E_p[l] - l)``. (Eq. 7 as printed
  writes ``E_p[l dE(y_t)/dtheta]`` in its second term where the derivative of Eq. 6 has
  ``E_p[l dE(y)/dtheta]``; tests check ours by finite differences.)
- ``kl`` (Eqs. 8-9): ``KL(q || p)`` with ``q(y) ~ exp(-l(y) / T)``, gradient ``q - p``. The value
  includes the entropy of q (the paper drops it as a constant), so it is a true KL, >= 0.

All of it is numba: the SGD epoch in structrank.learners.crf calls these functions per query.

Beside them: :func:`ndcg_losses` (``1 - NDCG`` of every ranking), ``stacked_tables`` (the tables for
m = 1..6 in one array, for numba), and :func:`energy_gradient` and :func:`query_objective`, wrappers
for users and tests.
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np

from structrank.numba_cache import njit

OBJECTIVES = ("ml", "la", "ls", "el", "kl", "ml-sum", "la-sum")
#: objectives summed over the zero-loss rankings (Eq. 10 as printed) -> the mean over them that we default to
SUMMED = {"ml-sum": "ml", "la-sum": "la"}
OBJECTIVE_CODES = {name: code for code, name in enumerate(OBJECTIVES)}
#: documents per training subset (Sec. 6): 6! = 720 rankings
SUBSET_SIZE = 6
#: a ranking whose loss is below this is a ground truth (losses of tied orderings differ by rounding)
ZERO_LOSS = 1e-10


def position_weights(m):
    """``alpha_j = log 2 / log(j + 1)`` for positions j = 1..m (Sec. 6)."""
    return np.log(2.0) / np.log(np.arange(2, m + 2, dtype=np.float64))


@functools.lru_cache(maxsize=None)
def permutation_table(m):
    """The (m!, m) matrix A with ``A[y, i] = alpha_{position of document i in ranking y}``.

    Rankings are enumerated in ``itertools.permutations`` order of the position vectors; row 0
    is the identity (document i at position i + 1). Read-only and cached: built once per m.
    """
    if not 1 <= m <= 9:
        raise ValueError(f"permutation_table enumerates at most 9 documents (9! rankings), got {m}")
    alpha = position_weights(m)
    positions = np.array(list(itertools.permutations(range(m))), dtype=np.int64).reshape(math.factorial(m), m)
    table = alpha[positions]
    table.setflags(write=False)
    return table


def stacked_tables(max_m=SUBSET_SIZE):
    """All tables for m = 1..max_m stacked into one (sum m!, max_m) array, and their row starts.

    ``tables[starts[m]:starts[m + 1], :m]`` is ``permutation_table(m)``; the numba epoch takes
    this single array rather than a list of arrays.
    """
    sizes = [math.factorial(m) for m in range(1, max_m + 1)]
    starts = np.zeros(max_m + 2, dtype=np.int64)
    starts[2:] = np.cumsum(sizes)
    tables = np.zeros((starts[-1], max_m))
    for m in range(1, max_m + 1):
        tables[starts[m]:starts[m + 1], :m] = permutation_table(m)
    return tables, starts


@njit(cache=True, nogil=True)
def ndcg_losses(A, r, out):
    """``1 - NDCG`` (Eq. 12, no cut-off) of every ranking (rows of A) for relevance ``r``, into ``out``.

    The ideal DCG is the largest row value (the rows include the sorted ranking); a query
    without any relevant document has loss 0 for every ranking.
    """
    P = A.shape[0]
    best = 0.0
    for y in range(P):
        dcg = 0.0
        for i in range(A.shape[1]):
            dcg += A[y, i] * r[i]
        out[y] = dcg
        if dcg > best:
            best = dcg
    for y in range(P):
        out[y] = 1.0 - out[y] / best if best > 0.0 else 0.0
        if out[y] < ZERO_LOSS:
            out[y] = 0.0


@njit(cache=True, nogil=True)
def _softmax_neg(F, out):
    """``out = softmax(-F)``; returns ``log sum exp(-F)``."""
    low = F[0]
    for y in range(F.shape[0]):
        if F[y] < low:
            low = F[y]
    total = 0.0
    for y in range(F.shape[0]):
        out[y] = math.exp(low - F[y])
        total += out[y]
    for y in range(F.shape[0]):
        out[y] /= total
    return math.log(total) - low


@njit(cache=True, nogil=True)
def objective_gradient(code, E, losses, param, g, work):
    """Value of objective ``code`` (see OBJECTIVE_CODES) for one query, ``g = d value / dE`` into g.

    ``param`` is a (for ``la`` and ``la-sum``) or T (for ``kl``), ignored otherwise. ``work`` is scratch of
    E's length.
    """
    P = E.shape[0]
    n_zero = 0
    zero_mean = 0.0
    for y in range(P):
        if losses[y] == 0.0:
            n_zero += 1
            zero_mean += E[y]
    zero_mean /= n_zero
    if code == 0 or code == 1 or code == 5 or code == 6:  # ml, la, ml-sum, la-sum
        shift = param if code == 1 or code == 6 else 0.0
        for y in range(P):
            work[y] = E[y] - shift * losses[y]
        log_z = _softmax_neg(work, g)  # g = p (of the augmented energies)
        if code >= 5:  # Eq. 10's sum over Y0: |Y0| times the mean
            for y in range(P):
                g[y] = (1.0 if losses[y] == 0.0 else 0.0) - n_zero * g[y]
            return n_zero * (zero_mean + log_z)
        for y in range(P):
            g[y] = (1.0 / n_zero if losses[y] == 0.0 else 0.0) - g[y]
        return zero_mean + log_z
    if code == 2:  # ls
        for y in range(P):
            work[y] = losses[y] * (E[y] - zero_mean) - losses[y]
        value = _softmax_neg(work, g)  # g = q
        expected = 0.0
        for y in range(P):
            expected += g[y] * losses[y]
        for y in range(P):
            g[y] = -g[y] * losses[y] + (expected / n_zero if losses[y] == 0.0 else 0.0)
        return value
    if code == 3:  # el
        _softmax_neg(E, g)  # g = p
        expected = 0.0
        for y in range(P):
            expected += g[y] * losses[y]
        for y in range(P):
            g[y] = g[y] * (expected - losses[y])
        return expected
    # kl
    for y in range(P):
        work[y] = losses[y] / param
    _softmax_neg(work, work)  # work = q
    log_z = _softmax_neg(E, g)  # g = p
    value = 0.0
    for y in range(P):
        if work[y] > 0.0:
            value += work[y] * (E[y] + log_z + math.log(work[y]))
        g[y] = work[y] - g[y]
    return value


def objective_code(objective, param):
    """The objective's number in the numba kernels, after checking its parameter."""
    if objective not in OBJECTIVE_CODES:
        raise ValueError(f"objective must be one of {', '.join(OBJECTIVES)}, got {objective!r}")
    if objective == "kl" and not param > 0:
        raise ValueError(f"the KL temperature T must be positive, got {param!r}")
    if objective in ("la", "la-sum") and not param >= 0:
        raise ValueError(f"the loss-augmentation weight must be >= 0, got {param!r}")
    return OBJECTIVE_CODES[objective]


def energy_gradient(objective, energies, losses, param=1.0):
    """(value, dObjective/dE) over an explicit list of configurations (e.g. the example of Fig. 1).

    ``losses`` must contain at least one 0 (a ground truth).

    >>> value, g = energy_gradient("ml", [0.0, 0.0], [0.0, 1.0])
    >>> round(value, 4), g.round(2).tolist()
    (0.6931, [0.5, -0.5])
    """
    code = objective_code(objective, param)
    E = np.asarray(energies, dtype=np.float64)
    losses = np.asarray(losses, dtype=np.float64)
    if E.shape != losses.shape or E.ndim != 1:
        raise ValueError("energies and losses must be 1-d arrays of one length")
    if not np.any(losses == 0.0):
        raise ValueError("at least one configuration must have loss 0 (a ground truth)")
    g = np.empty_like(E)
    value = objective_gradient(code, E, losses, float(param), g, np.empty_like(E))
    return float(value), g


def query_objective(objective, scores, labels, param=1.0):
    """(value, dObjective/dscores) of one query of at most 9 documents, every ranking enumerated.

    >>> value, grad = query_objective("kl", [1.0, 0.0], [0, 1], param=1.0)
    >>> bool(grad[1] < 0 < grad[0])   # descent raises the relevant document's score
    True
    """
    code = objective_code(objective, param)
    s = np.asarray(scores, dtype=np.float64)
    r = np.asarray(labels, dtype=np.float64)
    A = permutation_table(s.size)
    losses = np.empty(A.shape[0])
    ndcg_losses(A, r, losses)
    E = -(A @ s)
    g = np.empty_like(E)
    value = objective_gradient(code, E, losses, float(param), g, np.empty_like(E))
    return float(value), -(A.T @ g)
