"""Boosting rerankers for n-best lists: Collins & Koo (2005) and a regularised variant.

These are the baseline rerankers of Jagarlamudi & Daumé III (2012, Sec. 4.1, Table 2):
"Collins" (the ExpLoss boosting of Collins & Koo 2005) and "Regularized" (the regularised
version of Huang, Harper & Wang 2007), trained on joint input-output features such as
structrank_lab.nlp.pair_features.suffix_tag_pair_features.

Model and objective (Collins & Koo 2005)
----------------------------------------
A candidate x is scored ``F(x) = a0 * L(x) + sum_k a_k h_k(x)`` where ``L`` is the base model's
log score (``NBestData.base_score``) and ``h_k`` the features. In list i the reference x_i1 is
its lowest-loss candidate (ties: the higher base score, then the earlier row) and every other
candidate j gives a margin ``M_ij = F(x_i1) - F(x_ij)``. The loss is

    ExpLoss(a) = sum_i sum_{j != 1} exp(-M_ij)

(here reported divided by the number of pairs P, as ``train_loss_``). With ``ties="skip"``
candidates whose loss equals the reference's make no pair (Collins & Koo pair the reference
with every other candidate, the default ``ties="include"``).

1. ``a0`` is chosen first and then held fixed: it minimises ExpLoss with every other weight 0
   (a one-dimensional convex problem, solved by bounded Brent search on ``[-B, B]``,
   ``B = 50 / mean |L(x_i1) - L(x_ij)|``), unless ``base_weight`` fixes it.
2. Each round computes, for every feature k, ``W+_k`` and ``W-_k``: the sums of the pair weights
   ``D_ij = exp(-M_ij)`` over the pairs where ``h_k(x_i1) - h_k(x_ij)`` is +1 and -1, picks the
   k maximising ``|sqrt(W+_k) - sqrt(W-_k)|`` (the largest exact decrease of ExpLoss,
   ``Z - (sqrt(W+) - sqrt(W-))^2``) and adds to ``a_k`` the smoothed step
   ``delta = 0.5 * log((W+_k + eps Z) / (W-_k + eps Z))`` with ``Z = sum D`` and
   ``eps = smoothing``. A feature may be chosen in several rounds.
3. The update is Collins & Koo's sparse one: only the pairs where the chosen feature differs
   change their weight, and only the W+/W- of the features of those pairs are updated (one
   numba loop over the chosen column of the pair-difference matrix and those pairs' rows);
   the choice criterion is cached per feature and recomputed only for the features touched.
   Every ``refresh_every`` rounds W+/W- are recomputed from scratch and the pair weights D
   rescaled (largest 1; the scale is kept apart, in log form), so rounding errors do not
   accumulate and D neither overflows nor underflows. Features that never differ between a
   reference and another candidate cannot move any margin and keep weight 0. On 12,500 lists
   of 10 candidates and ~700,000 features, 1,000 rounds with dev tracking take a few seconds.

Feature values (``feature_values``)
-----------------------------------
- ``"binary"`` (default): features are binarised (any non-zero value counts as 1), so a
  difference ``h_k(x_i1) - h_k(x_ij)`` is in {-1, 0, +1} and the algorithm above is Collins &
  Koo's exactly.
- ``"real"``: counts/real values are kept. Each feature's differences are divided by their
  largest magnitude ``c_k`` (so they lie in [-1, 1]), ``W+_k = sum D_p max(d_pk, 0)``,
  ``W-_k = sum D_p max(-d_pk, 0)`` and the step above is taken on the scaled feature (the weight
  of the unscaled feature grows by ``delta / c_k``). By convexity of exp,
  ``exp(-delta d) <= 1 - |d| + |d| exp(-delta sign d)`` for ``|d| <= 1``, so along feature k
  ExpLoss is at most ``Z - W+ - W- + W+ e^-delta + W- e^delta``, Collins & Koo's expression: the
  choice and the step minimise this upper bound (exact for {-1, 0, +1} differences), and ExpLoss
  still never increases. (Collins & Koo present the binary case.)

Regularised version (``regularization="l1"`` or ``"l2"``; Huang, Harper & Wang 2007)
------------------------------------------------------------------------------------
Huang et al. regularise the exponential-loss objective of Collins's boosting reranker to
improve its generalisation. Their exact formulation could not be checked when this was
written, so this is a reconstruction, stated precisely. The objective is

    J(a) = ExpLoss(a) / P + reg_strength * R(a),   R = sum_k |a_k|  ("l1")  or  0.5 * sum_k a_k^2  ("l2"),

over the feature weights (``a0`` is chosen as in step 1 and not penalised). It is minimised by
the same greedy coordinate scheme, mirroring Collins & Koo's (choose by the exact decrease,
move by a smoothed step):

- choice: for every feature, the exact decrease of J that the best change of its weight alone
  gives, i.e. ``f(0) - min_delta f(delta)`` with
  ``f(delta) = W+ e^-delta + W- e^delta + reg_strength * R(a_k + delta)`` (closed form for l1,
  a safeguarded Newton solve for l2); the feature with the largest decrease is chosen;
- step: the minimiser of the same f with ``W+``/``W-`` replaced by ``W+ + eps Z`` and
  ``W- + eps Z`` (``eps = smoothing``; with ``smoothing=0`` the exact minimiser).

Since ``f_smoothed(delta) = f(delta) + eps Z (e^-delta + e^delta)`` and the smoothing term is
smallest at 0, every step decreases J: J never increases (``objective_curve_``). For
``"real"`` features W+/W- are the bound above and the penalty is on the unscaled weight. l1 can
move a weight back to exactly 0; if a smoothed l1 step is nil the feature is set aside until
its W+/W- change. Nothing else (margin-based regularisation, feature count cut-offs) is
implemented.

Number of rounds
----------------
With a dev set (``eval_set``), the dev accuracy of the model after rounds 0, e, 2e, ... (``e = eval_every``;
round 0 is the base score times ``a0`` alone) is recorded in ``dev_curve_`` (rounds in
``dev_rounds_``), and the model keeps the weights of the first round with the best dev accuracy
(``n_rounds_``); the number of rounds is the hyper-parameter Collins & Koo tune on development
data. Without a dev set all ``n_rounds`` rounds are kept, or
fewer if no feature can decrease the objective any more.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize_scalar
from sklearn.base import BaseEstimator

from structrank.data.nbest import NBestData
from structrank.errors import DataValidationError
from structrank.learners.epochs import BestEpoch
from structrank.numba_cache import njit

__all__ = ["BoostingReranker", "reference_pairs"]

_MODES = {None: 0, "l1": 1, "l2": 2}


# ---------------------------------------------------------------------------------------------
# pairs and their feature differences
# ---------------------------------------------------------------------------------------------

def reference_pairs(data: NBestData, ties: str = "include"):
    """(reference row, other row) of every training pair: each list's lowest-loss candidate
    (ties: highest base score, then first) against each other candidate of its list.

    With ``ties="skip"`` a candidate whose loss equals the reference's makes no pair.
    """
    if ties not in ("include", "skip"):
        raise ValueError(f"ties must be 'include' or 'skip', got {ties!r}")
    offsets = data.offsets
    n = data.loss.shape[0]
    sizes = np.diff(offsets)
    list_of_row = np.repeat(np.arange(sizes.size), sizes)
    # lexicographic: loss ascending, base score descending, row ascending
    order = np.lexsort((np.arange(n), -data.base_score, data.loss, list_of_row))
    ref = order[offsets[:-1]]
    ref_of_row = np.repeat(ref, sizes)
    keep = np.arange(n) != ref_of_row
    if ties == "skip":
        keep &= data.loss > data.loss[ref_of_row]
    other = np.flatnonzero(keep)
    return ref_of_row[other].astype(np.int64), other.astype(np.int64)


@njit(cache=True, nogil=True)
def _diff_counts(indptr, indices, data, best, other):
    counts = np.zeros(best.size + 1, np.int64)
    for p in range(best.size):
        a, ae = indptr[best[p]], indptr[best[p] + 1]
        b, be = indptr[other[p]], indptr[other[p] + 1]
        c = 0
        while a < ae or b < be:
            if b >= be or (a < ae and indices[a] < indices[b]):
                v = data[a]
                a += 1
            elif a >= ae or indices[b] < indices[a]:
                v = -data[b]
                b += 1
            else:
                v = data[a] - data[b]
                a += 1
                b += 1
            if v != 0.0:
                c += 1
        counts[p + 1] = c
    return counts


@njit(cache=True, nogil=True)
def _diff_fill(indptr, indices, data, best, other, out_ptr, out_idx, out_val):
    for p in range(best.size):
        a, ae = indptr[best[p]], indptr[best[p] + 1]
        b, be = indptr[other[p]], indptr[other[p] + 1]
        o = out_ptr[p]
        while a < ae or b < be:
            if b >= be or (a < ae and indices[a] < indices[b]):
                j = indices[a]
                v = data[a]
                a += 1
            elif a >= ae or indices[b] < indices[a]:
                j = indices[b]
                v = -data[b]
                b += 1
            else:
                j = indices[a]
                v = data[a] - data[b]
                a += 1
                b += 1
            if v != 0.0:
                out_idx[o] = j
                out_val[o] = v
                o += 1


def _pair_differences(X: sp.csr_matrix, best, other) -> sp.csr_matrix:
    """CSR (n_pairs x d) of ``X[best] - X[other]`` without explicit zeros (X: canonical CSR)."""
    counts = _diff_counts(X.indptr, X.indices, X.data, best, other)
    ptr = np.cumsum(counts)
    idx = np.empty(ptr[-1], np.int32)
    val = np.empty(ptr[-1], np.float64)
    _diff_fill(X.indptr, X.indices, X.data, best, other, ptr, idx, val)
    return sp.csr_matrix((val, idx, ptr), shape=(best.size, X.shape[1]))


# ---------------------------------------------------------------------------------------------
# the boosting kernels
# ---------------------------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def _recompute_w(ptr, idx, val, D, Wp, Wm):
    Wp[:] = 0.0
    Wm[:] = 0.0
    for p in range(D.size):
        dp = D[p]
        for q in range(ptr[p], ptr[p + 1]):
            v = val[q] * dp
            if v > 0.0:
                Wp[idx[q]] += v
            else:
                Wm[idx[q]] -= v


@njit(cache=True, nogil=True)
def _update(k, step, cptr, crow, cval, ptr, idx, val, D, Wp, Wm, dirty, n_dirty, is_dirty):
    """Add ``step`` to scaled feature k: reweight its pairs and their features' W+/W-."""
    for q in range(cptr[k], cptr[k + 1]):
        p = crow[q]
        old = D[p]
        new = old * math.exp(-step * cval[q])
        D[p] = new
        dd = new - old
        for r in range(ptr[p], ptr[p + 1]):
            j = idx[r]
            v = val[r]
            if v > 0.0:
                Wp[j] += dd * v
            else:
                Wm[j] -= dd * v
            if not is_dirty[j]:
                is_dirty[j] = True
                dirty[n_dirty] = j
                n_dirty += 1
    if not is_dirty[k]:
        is_dirty[k] = True
        dirty[n_dirty] = k
        n_dirty += 1
    return n_dirty


@njit(cache=True, nogil=True)
def _l1_step(wp, wm, a, lam):
    """argmin_delta wp e^-delta + wm e^delta + lam |a + delta| (lam > 0), and its decrease."""
    f0 = wp + wm + lam * abs(a)
    # weight > 0: wm u^2 + lam u - wp = 0 (u = e^delta)
    if wp > 0.0:
        if wm > 0.0:
            u = 2.0 * wp / (lam + math.sqrt(lam * lam + 4.0 * wm * wp))   # the positive root, stably
        else:
            u = wp / lam
        d = math.log(u)
        if a + d > 0.0:
            return d, f0 - (wp / u + wm * u + lam * (a + d))
    # weight < 0: wm u^2 - lam u - wp = 0
    if wm > 0.0:
        u = (lam + math.sqrt(lam * lam + 4.0 * wm * wp)) / (2.0 * wm)
        d = math.log(u)
        if a + d < 0.0:
            return d, f0 - (wp / u + wm * u - lam * (a + d))
    # weight exactly 0
    u = math.exp(-a)
    return -a, f0 - (wp / u + wm * u)


@njit(cache=True, nogil=True)
def _l2_step(wp, wm, a, mu):
    """argmin_delta wp e^-delta + wm e^delta + mu/2 (a + delta)^2 (mu > 0), and its decrease."""
    g0 = wm - wp + mu * a
    f0 = wp + wm + 0.5 * mu * a * a
    if g0 == 0.0:
        return 0.0, 0.0
    # the root of g lies between the root of the loss part and -a, and inside the linear bounds
    if g0 < 0.0:
        lo = 0.0
        hi = wp / mu - a
        if wm > 0.0 and wp > 0.0:
            hi = min(hi, max(0.5 * math.log(wp / wm), -a))
    else:
        hi = 0.0
        lo = -wm / mu - a
        if wm > 0.0 and wp > 0.0:
            lo = max(lo, min(0.5 * math.log(wp / wm), -a))
    d = 0.0                                    # Newton from 0, kept inside the bracket
    for _ in range(200):
        e = math.exp(d)
        g = -wp / e + wm * e + mu * (a + d)
        if g == 0.0:
            break
        if g > 0.0:
            hi = d
        else:
            lo = d
        h = wp / e + wm * e + mu
        nd = d - g / h
        if not (lo <= nd <= hi):
            nd = 0.5 * (lo + hi)
        if abs(nd - d) <= 1e-12 * (1.0 + abs(d)) or hi - lo <= 1e-14 * (1.0 + abs(d)):
            d = nd
            break
        d = nd
    f1 = wp * math.exp(-d) + wm * math.exp(d) + 0.5 * mu * (a + d) * (a + d)
    return d, f0 - f1


@njit(cache=True, nogil=True)
def _gains(feats, Wp, Wm, w, reg, mode, gain, step):
    """The decrease each feature's best step gives (mode 0: Collins & Koo's criterion)."""
    for t in range(feats.size):
        k = feats[t]
        wp = max(Wp[k], 0.0)
        wm = max(Wm[k], 0.0)
        if mode == 0:
            s = math.sqrt(wp) - math.sqrt(wm)
            gain[k] = s * s
        elif mode == 1:
            step[k], gain[k] = _l1_step(wp, wm, w[k], reg[k])
        else:
            step[k], gain[k] = _l2_step(wp, wm, w[k], reg[k])


@njit(cache=True, nogil=True)
def _dev_add(k, delta, cptr, crow, cval, scores):
    for q in range(cptr[k], cptr[k + 1]):
        scores[crow[q]] += delta * cval[q]


@njit(cache=True, nogil=True)
def _chosen_loss(scores, offsets, loss):
    """Total loss of each list's highest-scoring candidate (the first on ties)."""
    total = 0.0
    for i in range(offsets.size - 1):
        a = offsets[i]
        best = a
        for r in range(a + 1, offsets[i + 1]):
            if scores[r] > scores[best]:
                best = r
        total += loss[best]
    return total


# ---------------------------------------------------------------------------------------------
# the steps of fit
# ---------------------------------------------------------------------------------------------

def _training_pairs(X: sp.csr_matrix, data: NBestData, ties: str):
    """(pair differences ``X[reference] - X[other]``, their base-score differences) of every training pair."""
    best, other = reference_pairs(data, ties)
    if best.size == 0:
        raise DataValidationError(
            "no training pairs: every list has a single candidate"
            + (" or only candidates as good as its best (ties='skip')" if ties == "skip" else ""))
    return _pair_differences(X, best, other), data.base_score[best] - data.base_score[other]


def _active_scaled(A: sp.csr_matrix):
    """(A', active, scale): the columns of A that ever differ from 0, each divided by its largest
    magnitude c_k so that its entries lie in [-1, 1]; their indices in A; the c_k."""
    P, d = A.shape
    absmax = np.zeros(d)
    if A.nnz:
        np.maximum.at(absmax, A.indices, np.abs(A.data))
    active = np.flatnonzero(absmax > 0)
    col_map = -np.ones(d, dtype=np.int64)
    col_map[active] = np.arange(active.size)
    scaled = sp.csr_matrix((A.data / absmax[A.indices], col_map[A.indices].astype(np.int32), A.indptr),
                           shape=(P, active.size))
    return scaled, active, absmax[active]


class _ExpLoss:
    """ExpLoss / P (and the penalty) over the scaled active features, as rounds move their weights.

    It holds the pair weights D, rescaled to a largest 1 with the scale kept apart in log form (the
    true ``D_p = D[p] * exp(log_scale)``, summing to ExpLoss / P), each feature's W+/W-, its weight
    ``w`` (of the scaled feature), and the cached choice criterion ``gain`` and exact step ``step``
    (module docstring, steps 2-3).
    """

    def __init__(self, A, scale, margins0, regularization, reg_strength):
        P, m = A.shape
        self.A, self.Ac, self.scale = A, A.tocsc(), scale
        self.mode = _MODES[regularization]
        self.lam = float(reg_strength) if self.mode else 0.0
        self.reg_unit = (1.0 / scale) if self.mode == 1 else (1.0 / scale ** 2)   # penalty per scaled unit
        logD = -margins0 - math.log(P)
        self.log_scale = float(logD.max())
        self.D = np.exp(logD - self.log_scale)
        self.Wp, self.Wm, self.w = np.zeros(m), np.zeros(m), np.zeros(m)
        self.reg, self.gain, self.step = np.zeros(m), np.zeros(m), np.zeros(m)
        self.dirty, self.is_dirty = np.empty(m, dtype=np.int64), np.zeros(m, dtype=np.bool_)
        self.penalty = 0.0
        self.refresh()
        _gains(np.arange(m, dtype=np.int64), self.Wp, self.Wm, self.w, self.reg, self.mode, self.gain, self.step)
        self.Z = float(self.D.sum())

    @property
    def value(self) -> float:
        """ExpLoss / P."""
        return self.Z * math.exp(self.log_scale)

    def refresh(self):
        """Rescale D (largest 1) and recompute W+/W- exactly. Rescaling multiplies every feature's gain by
        the same factor and leaves its step unchanged, so the cached gains are rescaled rather than
        recomputed (they are exact up to rounding)."""
        top = self.D.max()
        if top > 0:
            self.D[:] /= top
            self.log_scale += math.log(top)
            self.gain[:] /= top
        _recompute_w(self.A.indptr, self.A.indices, self.A.data, self.D, self.Wp, self.Wm)
        if self.mode:
            self.reg[:] = self.lam * math.exp(-self.log_scale) * self.reg_unit

    def best_step(self, eps: float):
        """(k, delta): the feature whose step decreases the objective most and its smoothed step; None when
        none can. A feature whose smoothed step is nil (possible with l1) is set aside until its W+/W-
        change or the next refresh."""
        while True:
            k = int(np.argmax(self.gain))
            if not self.gain[k] > 1e-13 * self.Z:
                return None
            wp, wm = max(self.Wp[k], 0.0) + eps * self.Z, max(self.Wm[k], 0.0) + eps * self.Z
            if self.mode == 0:
                delta = 0.5 * math.log(wp / wm)
            elif eps == 0.0:
                delta = self.step[k]
            elif self.mode == 1:
                delta = _l1_step(wp, wm, self.w[k], self.reg[k])[0]
            else:
                delta = _l2_step(wp, wm, self.w[k], self.reg[k])[0]
            if delta != 0.0:
                return k, delta
            self.gain[k] = 0.0

    def _penalty_of(self, k) -> float:
        """The penalty on feature k's (unscaled) weight."""
        if self.mode == 1:
            return self.lam * abs(self.w[k]) / self.scale[k]
        if self.mode == 2:
            return 0.5 * self.lam * (self.w[k] / self.scale[k]) ** 2
        return 0.0

    def take_step(self, k: int, delta: float, refresh: bool):
        """Add ``delta`` to scaled feature k: reweight its pairs, update W+/W- and the gains of the
        features they touch, and refresh when asked or when D nears the ends of float64."""
        self.penalty -= self._penalty_of(k)
        self.w[k] += delta
        self.penalty += self._penalty_of(k)
        n_dirty = _update(k, delta, self.Ac.indptr, self.Ac.indices, self.Ac.data, self.A.indptr, self.A.indices,
                          self.A.data, self.D, self.Wp, self.Wm, self.dirty, 0, self.is_dirty)
        touched = self.dirty[:n_dirty]
        self.is_dirty[touched] = False
        self.Z = float(self.D.sum())
        _gains(touched, self.Wp, self.Wm, self.w, self.reg, self.mode, self.gain, self.step)
        if refresh or not (1e-150 < self.Z < 1e150):
            self.refresh()
            self.Z = float(self.D.sum())


class _DevAccuracy:
    """The dev lists' scores as the rounds add to the weights, and the accuracy of the candidates chosen."""

    def __init__(self, X, data: NBestData, active, a0: float):
        self.X = X[:, active].tocsc() if active.size else sp.csc_matrix((X.shape[0], 0))
        self.data = data
        self.scores = a0 * data.base_score
        self.loss = data.loss.astype(np.float64)
        self.units = float(data.size.sum()) if data.size is not None else None

    def take_step(self, k: int, delta: float):
        _dev_add(k, delta, self.X.indptr, self.X.indices, self.X.data, self.scores)

    def accuracy(self, _=None) -> float:
        """Token accuracy of the chosen candidates (without token counts, minus the mean loss per list)."""
        total = _chosen_loss(self.scores, self.data.offsets, self.loss)
        return 1.0 - total / self.units if self.units else -total / self.data.n_lists


# ---------------------------------------------------------------------------------------------
# the estimator
# ---------------------------------------------------------------------------------------------

def _as_features(features, name, n_rows=None, n_cols=None, binary=True):
    if features is None:
        raise DataValidationError(f"{name} is missing")
    if sp.issparse(features):
        X = sp.csr_matrix(features, dtype=np.float64, copy=True)
    else:
        arr = np.asarray(features, dtype=np.float64)
        if arr.ndim != 2:
            raise DataValidationError(f"{name} must be a 2-d (n_candidates x n_features) matrix, got shape {arr.shape}")
        X = sp.csr_matrix(arr)
    X.sum_duplicates()
    if not np.all(np.isfinite(X.data)):
        raise DataValidationError(f"{name} holds NaN or infinite values")
    if n_rows is not None and X.shape[0] != n_rows:
        raise DataValidationError(f"{name} has {X.shape[0]} rows but the n-best data has {n_rows} candidates")
    if n_cols is not None and X.shape[1] != n_cols:
        raise DataValidationError(f"{name} has {X.shape[1]} columns but the model was fitted on {n_cols}")
    X.eliminate_zeros()
    if binary:
        X.data[:] = 1.0
    return X


def _check_data(data, name):
    if not isinstance(data, NBestData):
        raise DataValidationError(f"{name} must be an NBestData, got {type(data).__name__}")
    if data.loss.shape[0] == 0:
        raise DataValidationError(f"{name} has no candidates")
    if not np.all(np.isfinite(data.base_score)):
        raise DataValidationError(f"{name}.base_score holds NaN or infinite values")
    if not np.all(np.isfinite(data.loss)):
        raise DataValidationError(f"{name}.loss holds NaN or infinite values")


class BoostingReranker(BaseEstimator):
    """Collins & Koo (2005) ExpLoss boosting reranker for n-best lists, optionally regularised.

    See the module docstring for exactly what is optimised and how.

    Parameters
    ----------
    n_rounds : int, default 1000
        Boosting rounds (feature updates) at most; with ``eval_set``, the best prefix is kept.
    regularization : {None, "l1", "l2"}, default None
        None: Collins & Koo's boosting with smoothed updates. "l1"/"l2": the regularised
        objective ``ExpLoss/P + reg_strength * R(a)`` minimised greedily (module docstring).
    reg_strength : float, default 1e-4
        The penalty's weight (only with ``regularization``); tune it on dev data.
    smoothing : float, default 0.0025
        Collins & Koo's epsilon in ``0.5 log((W+ + eps Z)/(W- + eps Z))``; must be > 0 without
        regularization (otherwise a feature seen only on one side would get an infinite step);
        with regularization it smooths the penalised step the same way and may be 0. Tune it
        on dev data.
    feature_values : {"binary", "real"}, default "binary"
        "binary": features binarised, Collins & Koo's exact update. "real": values kept, the
        bound-minimising generalisation (module docstring).
    base_weight : float or None, default None
        Weight of the base score; None chooses it by minimising ExpLoss alone, then fixes it.
    ties : {"include", "skip"}, default "include"
        Whether candidates as good as the reference make pairs.
    eval_every : int, default 1
        With ``eval_set``, evaluate dev accuracy every this many rounds.
    refresh_every : int, default 100
        Recompute W+/W- from scratch every this many rounds.

    Attributes
    ----------
    weights_ : ndarray, shape (n_features,)
        Feature weights of the kept model (for "real", weights of the unscaled features).
    base_weight_ : float
        Weight of the base score.
    n_rounds_ : int
        Rounds kept.
    n_rounds_run_ : int
        Rounds run (fewer than n_rounds when nothing could decrease the objective any more).
    selected_features_, steps_ : ndarray, shape (``n_rounds_run_``,)
        The feature updated at each round and the amount added to its (unscaled) weight.
    train_loss_ : ndarray, shape (``n_rounds_run_ + 1``,)
        ExpLoss / P after rounds 0 (base score only), 1, 2, ...
    objective_curve_ : ndarray, shape (``n_rounds_run_ + 1``,)
        The objective minimised: ``train_loss_``, plus the penalty when regularised.
    dev_rounds_, dev_curve_ : ndarray or None
        Evaluated rounds and the dev accuracy after each (token accuracy, ``accuracy_of`` of the
        dev data; if its ``size`` is None, minus the mean loss per list). None without ``eval_set``.
    n_pairs_ : int
        Training pairs.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from structrank.data.nbest import NBestData
    >>> X = sp.csr_matrix(np.array([[1, 0], [0, 1], [1, 0], [0, 1]], dtype=float))
    >>> data = NBestData(x=X, y=X, loss=[1, 0, 0, 2], base_score=[0.0, -0.1, 0.0, -0.1],
    ...                  qid=[0, 0, 1, 1], size=[3, 3])
    >>> model = BoostingReranker(n_rounds=5).fit(X, data)
    >>> model.predict(X, data).shape
    (4,)
    """

    def __init__(self, n_rounds=1000, regularization=None, reg_strength=1e-4, smoothing=0.0025,
                 feature_values="binary", base_weight=None, ties="include", eval_every=1, refresh_every=100):
        self.n_rounds = n_rounds
        self.regularization = regularization
        self.reg_strength = reg_strength
        self.smoothing = smoothing
        self.feature_values = feature_values
        self.base_weight = base_weight
        self.ties = ties
        self.eval_every = eval_every
        self.refresh_every = refresh_every

    # -- parameters -----------------------------------------------------------------------------
    def _check_params(self):
        if self.regularization not in _MODES:
            raise ValueError(f"regularization must be None, 'l1' or 'l2', got {self.regularization!r}")
        if self.feature_values not in ("binary", "real"):
            raise ValueError(f"feature_values must be 'binary' or 'real', got {self.feature_values!r}")
        if self.ties not in ("include", "skip"):
            raise ValueError(f"ties must be 'include' or 'skip', got {self.ties!r}")
        if int(self.n_rounds) != self.n_rounds or self.n_rounds < 0:
            raise ValueError(f"n_rounds must be a non-negative integer, got {self.n_rounds!r}")
        if self.regularization is None and not self.smoothing > 0:
            raise ValueError(f"smoothing must be > 0 without regularization, got {self.smoothing!r}")
        if not (self.smoothing >= 0 and np.isfinite(self.smoothing)):
            raise ValueError(f"smoothing must be a finite number >= 0, got {self.smoothing!r}")
        if self.regularization is not None and not self.reg_strength > 0:
            raise ValueError(f"reg_strength must be > 0 with regularization, got {self.reg_strength!r}")
        for name in ("eval_every", "refresh_every"):
            v = getattr(self, name)
            if int(v) != v or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if self.base_weight is not None and not np.isfinite(self.base_weight):
            raise ValueError(f"base_weight must be finite or None, got {self.base_weight!r}")

    # -- training -------------------------------------------------------------------------------
    def fit(self, features, data: NBestData, eval_set=None):
        """Train on the n-best lists of ``data`` (features: one row per candidate); ``eval_set``, the
        dev lists as a tuple ``(dev_features, dev_data)``, chooses the number of rounds."""
        self._check_params()
        X, dev_X, dev_data = self._fit_inputs(features, data, eval_set)
        A, base_diff = _training_pairs(X, data, self.ties)
        # step 1: the base weight, then held fixed
        a0 = float(self.base_weight) if self.base_weight is not None else _fit_base_weight(base_diff)
        A, active, scale = _active_scaled(A)
        loss = _ExpLoss(A, scale, a0 * base_diff, self.regularization, self.reg_strength)
        dev = None if dev_data is None else _DevAccuracy(dev_X, dev_data, active, a0)
        chosen, deltas, losses, objective, rounds = self._boost(loss, dev)
        return self._keep(X.shape[1], A.shape[0], a0, active, scale, chosen, deltas, losses, objective, rounds)

    def _fit_inputs(self, features, data, eval_set):
        """(X, dev X, dev NBestData) checked, binarised for ``feature_values="binary"`` (dev: None, None)."""
        _check_data(data, "data")
        binary = self.feature_values == "binary"
        X = _as_features(features, "features", n_rows=data.loss.shape[0], binary=binary)
        if eval_set is None:
            return X, None, None
        if not (isinstance(eval_set, tuple) and len(eval_set) == 2):
            raise DataValidationError("eval_set must be a tuple (dev_features, dev_data) of the dev lists' "
                                      f"features and NBestData, got {type(eval_set).__name__}")
        dev_features, dev = eval_set
        _check_data(dev, "eval_set's data")
        return X, _as_features(dev_features, "eval_set's features", n_rows=dev.loss.shape[0], n_cols=X.shape[1],
                               binary=binary), dev

    def _boost(self, loss: _ExpLoss, dev: _DevAccuracy | None):
        """Steps 2-3, round after round: (features chosen, their steps on the scaled features, ExpLoss / P
        and the objective after rounds 0, 1, ..., and the rounds evaluated on dev as a BestEpoch, or None)."""
        chosen, deltas = [], []
        losses, objective = [loss.value], [loss.value]
        rounds = None
        if dev is not None:
            rounds = BestEpoch(score=dev.accuracy)
            rounds.offer(0, None)
        eps = float(self.smoothing)
        while len(chosen) < int(self.n_rounds) and loss.w.size:
            found = loss.best_step(eps)
            if found is None:                       # no feature can decrease the objective any more
                break
            k, delta = found
            chosen.append(k)
            deltas.append(delta)
            t = len(chosen)
            loss.take_step(k, delta, refresh=t % int(self.refresh_every) == 0)
            losses.append(loss.value)
            objective.append(losses[-1] + loss.penalty)
            if dev is not None:
                dev.take_step(k, delta)
                if t % int(self.eval_every) == 0:
                    rounds.offer(t, None)
        if dev is not None and rounds.epochs[-1] != len(chosen):   # the last round run is always evaluated
            rounds.offer(len(chosen), None)
        return chosen, deltas, losses, objective, rounds

    def _keep(self, d, n_pairs, a0, active, scale, chosen, deltas, losses, objective, rounds):
        """``self`` with the learned attributes: the weights of the rounds kept (the best on dev, else all run)."""
        n_run = len(chosen)
        chosen = np.asarray(chosen, dtype=np.int64)
        deltas = np.asarray(deltas, dtype=np.float64)
        if rounds is not None:
            self.dev_rounds_ = np.asarray(rounds.epochs, dtype=np.int64)
            self.dev_curve_ = np.asarray(rounds.curve, dtype=np.float64)
            self.n_rounds_ = int(rounds.epoch)
        else:
            self.dev_rounds_ = None
            self.dev_curve_ = None
            self.n_rounds_ = n_run
        self.base_weight_ = a0
        self.selected_features_ = active[chosen] if n_run else np.zeros(0, dtype=np.int64)
        self.steps_ = deltas / scale[chosen] if n_run else np.zeros(0)
        self.weights_ = np.bincount(self.selected_features_[:self.n_rounds_], weights=self.steps_[:self.n_rounds_],
                                    minlength=d).astype(np.float64)
        self.n_rounds_run_ = n_run
        self.train_loss_ = np.asarray(losses)
        self.objective_curve_ = np.asarray(objective)
        self.n_pairs_ = n_pairs
        self.n_features_in_ = d
        return self

    # -- prediction -----------------------------------------------------------------------------
    def predict(self, features, data):
        """Scores of the candidates: ``base_weight_ * base_score + features @ weights_``.

        ``data`` is the NBestData the rows belong to (or an array of base scores).
        """
        if not hasattr(self, "weights_"):
            raise DataValidationError("BoostingReranker is not fitted yet: call fit first")
        base = data.base_score if isinstance(data, NBestData) else np.asarray(data, dtype=np.float64)
        if base.ndim != 1:
            raise DataValidationError(f"base scores must be 1-d, got shape {base.shape}")
        X = _as_features(features, "features", n_rows=base.shape[0], n_cols=self.n_features_in_,
                         binary=self.feature_values == "binary")
        return self.base_weight_ * base + X @ self.weights_

    def score(self, features, data: NBestData):
        """Token accuracy (``data.nbest.NBestData.accuracy_of``) of the candidates the model chooses."""
        return data.accuracy_of(self.predict(features, data))


def _fit_base_weight(base_diff: np.ndarray) -> float:
    """argmin_a0 sum_p exp(-a0 * base_diff_p) on [-B, B], B = 50 / mean |base_diff| (nonzero)."""
    nz = np.abs(base_diff[base_diff != 0])
    if nz.size == 0:
        return 0.0
    bound = 50.0 / float(nz.mean())

    def log_loss(a):
        z = -a * base_diff
        top = z.max()
        return top + math.log(float(np.exp(z - top).sum()))

    res = minimize_scalar(log_loss, bounds=(-bound, bound), method="bounded", options={"xatol": 1e-8 * bound})
    return float(res.x)
