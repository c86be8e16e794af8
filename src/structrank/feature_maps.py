"""Joint feature maps of a query's ranking, as one coefficient per document.

A structured ranker scores a structure r of query q's documents by ``w . Psi(x_q, r)``. Every
map used here is linear in the documents' feature vectors, ``Psi(x_q, r) = X_q^T c(r)``, so the
structure enters only through the coefficient vector ``c(r)`` and ``w . Psi = s . c(r)`` with the
document scores ``s = X_q w``. Learners need nothing else: a constraint or an update is
``X_q^T (c_star - c_hat)``.

The maps of Chakrabarti et al. (2008), with ``z`` the binary relevance (1 = good) and ranks
counted from 0:

- ``phi_po`` (Eq. 3): ``sum_{g good, b bad} y_gb (x_g - x_b) / (n+ n-)`` with ``y_gb = +1`` when g
  is ranked above b. A good document's coefficient is ``(#bad below - #bad above) / (n+ n-)``, a
  bad one's ``(#good below - #good above) / (n+ n-)``. The scaling by ``1/(n+ n-)`` is what makes
  queries of different sizes comparable; the paper calls it critical.
- ``phi_mrr`` (Eq. 5): ``sum_{b above g0} (x_b - x_g0)`` for the top good document g0: every bad
  document above g0 gets +1, g0 gets minus their count, all others 0 (so ``c_star = 0``).
- ``phi_dorm`` (Eq. 6): ``sum_i A(rank_i) x_i`` with the decay ``A(r) = 1/sqrt(1 + r)``, or its
  sparse variant, 0 from rank ``cut`` on.

The numba functions write into a caller's array, so oracles can fill one flat buffer for all
queries; the NumPy wrappers are for users and tests.

``dorm_decay(n, cut)`` gives phi_dorm's A (sparse with ``cut``); ``phi_po``, ``phi_mrr`` and
``phi_dorm`` are the NumPy wrappers of ``po_coef_from_order``, ``mrr_coef_from_order`` and
``dorm_coef_from_order``.
"""

from __future__ import annotations

import numpy as np

from structrank.numba_cache import njit


@njit(cache=True, nogil=True)
def po_coef_from_order(order, z, out):
    """phi_po coefficients of the total order ``order`` (document indices, best first) into ``out``."""
    n = order.shape[0]
    n_good = 0
    for i in range(n):
        n_good += z[i]
    n_bad = n - n_good
    if n_good == 0 or n_bad == 0:
        for i in range(n):
            out[i] = 0.0
        return
    scale = 1.0 / (n_good * n_bad)
    good_above = 0
    bad_above = 0
    for pos in range(n):
        i = order[pos]
        if z[i]:
            out[i] = ((n_bad - bad_above) - bad_above) * scale
            good_above += 1
        else:
            out[i] = (good_above - (n_good - good_above)) * -scale
            bad_above += 1


def po_star(z, offsets) -> np.ndarray:
    """phi_po coefficients of every query's ideal order: 1/n+ for good, -1/n- for bad documents.

    A query without good or without bad documents has no pairs: its coefficients are 0.
    """
    z = np.asarray(z, dtype=np.int64)
    offsets = np.asarray(offsets, dtype=np.int64)
    cumulative = np.concatenate([[0], np.cumsum(z)])
    sizes = np.diff(offsets)
    good = np.repeat(cumulative[offsets[1:]] - cumulative[offsets[:-1]], sizes)
    bad = np.repeat(sizes, sizes) - good
    with np.errstate(divide="ignore"):
        out = np.where(z == 1, 1.0 / good, -1.0 / bad)
    out[(good == 0) | (bad == 0)] = 0.0
    return out


@njit(cache=True, nogil=True)
def mrr_coef_from_order(order, z, out):
    """phi_mrr coefficients: +1 for each bad document above the top good one, which gets -count."""
    for i in range(order.shape[0]):
        out[i] = 0.0
    above = 0
    for pos in range(order.shape[0]):
        i = order[pos]
        if z[i]:
            out[i] = -above
            return
        out[i] = 1.0
        above += 1
    # no good document: phi_mrr is not defined; the map is zero
    for i in range(order.shape[0]):
        out[i] = 0.0


@njit(cache=True, nogil=True)
def dorm_coef_from_order(order, decay, out):
    """phi_dorm coefficients: ``A(rank)`` of each document (``decay[r]`` for r < len(decay), else 0)."""
    for pos in range(order.shape[0]):
        out[order[pos]] = decay[pos] if pos < decay.shape[0] else 0.0


def dorm_decay(n: int, cut: int | None = None) -> np.ndarray:
    """``A(r) = 1/sqrt(1 + r)`` for ranks 0..n-1; with ``cut``, 0 from rank ``cut`` on (sparse DORM)."""
    decay = 1.0 / np.sqrt(1.0 + np.arange(n, dtype=np.float64))
    if cut is not None:
        decay[cut:] = 0.0
    return decay


def _as_order(order, n):
    order = np.asarray(order, dtype=np.int64)
    if order.shape != (n,) or not np.array_equal(np.sort(order), np.arange(n)):
        raise ValueError(f"order must be a permutation of 0..{n - 1}")
    return order


def _from_order(kernel, order, z):
    z = np.asarray(z, dtype=np.int8)
    out = np.empty(z.shape[0])
    kernel(_as_order(order, z.shape[0]), z, out)
    return out


def phi_po(order, z) -> np.ndarray:
    """phi_po coefficients of a total order (``order``: document indices, best first)."""
    return _from_order(po_coef_from_order, order, z)


def phi_mrr(order, z) -> np.ndarray:
    """phi_mrr coefficients of a total order."""
    return _from_order(mrr_coef_from_order, order, z)


def phi_dorm(order, decay) -> np.ndarray:
    """phi_dorm coefficients of a total order under ``decay`` (see ``dorm_decay``)."""
    decay = np.asarray(decay, dtype=np.float64)
    out = np.empty(len(order))
    dorm_coef_from_order(_as_order(order, len(order)), decay, out)
    return out


POSITIONAL_WEIGHTS = ("harmonic", "log2", "linear")


def positional_weights(n: int, scheme: str = "harmonic") -> np.ndarray:
    """Weights v_1 >= ... >= v_n >= 0 of the positional map (Haponchyk & Moschitti 2018, Eq. 1).

    ``"harmonic"``: v_j = 1/j (the paper's); ``"log2"``: 1/log2(j + 1), NDCG's discount;
    ``"linear"``: (n - j + 1)/n. Non-increasing weights are what lets inference keep each
    relevance class in score order.
    """
    j = np.arange(1, max(int(n), 1) + 1, dtype=np.float64)
    if scheme == "harmonic":
        return 1.0 / j
    if scheme == "log2":
        return 1.0 / np.log2(j + 1.0)
    if scheme == "linear":
        return (j[-1] - j + 1.0) / j[-1]
    raise ValueError(f"positional weights must be one of {', '.join(POSITIONAL_WEIGHTS)}, got {scheme!r}")
