"""Loss-augmented inference for DORM (Le & Smola 2008): phi_dorm with NDCG@k, as an assignment problem.

With two gain levels (binary relevance, the paper's) ``two_level_batch`` solves it in numba, one
pass over the queries: within a level the places taken go to its best-scoring documents in score
order (A(rank) >= 0 and non-increasing), so a DP over (place, good documents placed), O(width^2)
per query, replaces the assignment (many times faster on OHSUMED's latent DORM; docs/BENCHMARKS.md,
"Structured learning", times the DORM oracle and fits). Graded gains
use ``scipy.optimize.linear_sum_assignment``, on a rectangular problem when A is sparse (only the
first ``max(cut, k)`` ranks are assigned).
"""

from __future__ import annotations

import numpy as np

from structrank.errors import DataValidationError
from structrank.numba_cache import njit
from structrank.sorting import order_desc

#: graded DORM solves a (documents x assigned ranks) assignment, cubic in its smaller side (scipy's
#: linear_sum_assignment: seconds a call at this size, a cube's growth beyond): past this many documents on
#: both sides a query is refused rather than left to run for hours; sparse DORM (dorm_cut)
#: assigns only the first max(cut, k) ranks and stays cheap
MAX_ASSIGNMENT_SIDE = 2000


@njit(cache=True, nogil=True)
def two_level_head(s, good, a, d):
    """The first ``len(a)`` places of the best ranking when gains take two values (good, other).

    Cells ``s_i A(r) - gain_i D(r)`` with A >= 0 and non-increasing: within one gain level the
    places taken go to the level's best-scoring documents in score order (exchange argument),
    so only the interleaving of the two levels is free, a DP over (place, goods placed) in
    O(width^2) instead of an O(n width^2) assignment. Ties keep the input order, goods first.
    """
    by_score = order_desc(s)
    goods = by_score[good[by_score]]
    bads = by_score[~good[by_score]]
    ng, nb, width = goods.shape[0], bads.shape[0], a.shape[0]
    value = np.full((width + 1, ng + 1), -np.inf)
    took_good = np.zeros((width + 1, ng + 1), dtype=np.bool_)
    value[0, 0] = 0.0
    for j in range(width):
        for g in range(max(0, j - nb), min(j, ng) + 1):
            here = value[j, g]
            if here == -np.inf:
                continue
            if g < ng:  # the next good document at place j
                v = here + s[goods[g]] * a[j] - d[j]
                if v > value[j + 1, g + 1]:  # first to reach this cell: ties go to the good document
                    value[j + 1, g + 1] = v
                    took_good[j + 1, g + 1] = True
            if j - g < nb:  # the next other document at place j
                v = here + s[bads[j - g]] * a[j]
                if v > value[j + 1, g]:
                    value[j + 1, g] = v
                    took_good[j + 1, g] = False
    best = max(0, width - nb)
    for g in range(best, min(width, ng) + 1):
        if value[width, g] > value[width, best]:
            best = g
    head = np.empty(width, np.int64)
    g = best
    for j in range(width - 1, -1, -1):
        if took_good[j + 1, g]:
            g -= 1
            head[j] = goods[g]
        else:
            head[j] = bads[j - g]
    return head


@njit(cache=True, nogil=True)
def two_level_query(s, good, level, k, discount, a, coef, order):
    """``dorm_query`` for gains ``level * good`` (binary relevance when level = 1), all in numba:
    fills ``coef`` and ``order`` (of this query's rows) and returns the loss."""
    n = s.shape[0]
    depth = n if k <= 0 else min(k, n)
    n_good = 0
    for i in range(n):
        n_good += good[i]
    ideal = 0.0
    for j in range(min(depth, n_good)):
        ideal += level * discount[j]
    if ideal <= 0.0 or n_good == 0 or n_good == n:
        # every ranking has loss 0; the ideal one by grade, then score, is returned
        order[:] = _by_score_within(s, np.concatenate((np.flatnonzero(good), np.flatnonzero(~good))), n_good)
        for pos in range(n):
            coef[order[pos]] = a[pos]
        return 0.0
    width = depth
    for r in range(n - 1, -1, -1):
        if a[r] != 0.0:
            width = max(depth, r + 1)
            break
    d = np.zeros(width)
    for j in range(depth):
        d[j] = level * discount[j] / ideal
    order[:width] = two_level_head(s, good, a[:width], d)
    placed = np.zeros(n, dtype=np.bool_)
    for j in range(width):
        placed[order[j]] = True
    by_score = order_desc(s)
    order[width:] = by_score[~placed[by_score]]
    found = 0.0
    for pos in range(n):
        coef[order[pos]] = a[pos]
        if pos < depth and good[order[pos]]:
            found += level * discount[pos]
    return 1.0 - found / ideal


@njit(cache=True, nogil=True)
def _by_score_within(s, head, n_good):
    """``head`` (good rows, then the others) with each part sorted by descending score, stably."""
    out = head.copy()
    goods, others = head[:n_good], head[n_good:]
    out[:n_good] = goods[order_desc(s[goods])]
    out[n_good:] = others[order_desc(s[others])]
    return out


@njit(cache=True, nogil=True)
def two_level_batch(scores, good, level, offsets, k, discount, decay, coef, order):
    """``two_level_query`` for every query (``decay``: A(rank) for the longest list); returns the losses."""
    delta = np.empty(offsets.shape[0] - 1)
    for q in range(offsets.shape[0] - 1):
        lo, hi = offsets[q], offsets[q + 1]
        delta[q] = two_level_query(scores[lo:hi], good[lo:hi], level, k, discount, decay[:hi - lo], coef[lo:hi],
                                   order[lo:hi])
    return delta


def is_two_level(gains, decay) -> bool:
    """Whether ``two_level_query`` applies: gains 0 and one positive value, A >= 0 non-increasing."""
    levels = np.unique(gains)
    return levels.size <= 2 and levels[0] == 0.0 and decay[-1] >= 0.0 and bool(np.all(np.diff(decay) <= 0.0))


def dorm_query(s, gains, k, discount, decay):
    """Best ranking for ``s . A(rank) + 1 - NDCG@k`` over all permutations of one query.

    Both terms are sums over (document, rank) cells, ``M[i, r] = s_i A(r) - gain_i D(r) / IDCG``,
    so the maximiser is an assignment of documents to ranks (Sec. 3.5). Ranks where both ``A``
    and ``D`` vanish add nothing; with the sparse decay (cut at rank c) only the first
    ``max(c, k)`` ranks are assigned, which is what makes sparse DORM cheaper than the O(n^3)
    dense problem. With two gain levels (binary relevance, the paper's) the assignment is the
    DP of ``two_level_head``; with more, scipy's ``linear_sum_assignment`` solves it.

    Returns ``(coef, delta, order)``.
    """
    n = s.shape[0]
    a = np.zeros(n)
    a[: min(n, decay.shape[0])] = decay[:n]
    coef, order = np.empty(n), np.empty(n, np.int64)
    if is_two_level(gains, a):
        level = float(gains.max())
        delta = two_level_query(np.ascontiguousarray(s, dtype=np.float64), gains > 0, level if level > 0 else 1.0,
                                k, discount, a, coef, order)
        return coef, float(delta), order
    depth = n if k <= 0 else min(k, n)
    ideal = np.sort(gains)[::-1][:depth] @ discount[:depth]
    if ideal <= 0 or np.all(gains == gains[0]):
        # every ranking has loss 0; the ideal one by grade, then score, is returned
        order = np.lexsort((-s, -gains))
        coef[order] = a
        return coef, 0.0, order
    width = max(depth, int(np.flatnonzero(a)[-1]) + 1 if np.any(a) else 0)
    if min(n, width) > MAX_ASSIGNMENT_SIDE:
        raise DataValidationError(
            f"a query of {n:,} documents with graded gains: dense DORM would solve a {n:,} x {width:,} assignment "
            f"(cubic), past the limit of {MAX_ASSIGNMENT_SIDE:,} a side (structrank.oracles.dorm.MAX_ASSIGNMENT_SIDE); "
            "use dorm_cut (sparse DORM) or binary labels for lists this long")
    d = np.zeros(width)
    d[:depth] = discount[:depth] / ideal
    cells = s[:, None] * a[None, :width] - gains[:, None] * d[None, :]
    from scipy.optimize import linear_sum_assignment  # deferred: SciPy, graded gains only

    rows, cols = linear_sum_assignment(cells, maximize=True)
    order[cols] = rows
    rest = np.setdiff1d(np.arange(n), rows, assume_unique=True)
    order[width:] = rest[np.argsort(-s[rest], kind="stable")]
    coef[order] = a
    delta = 1.0 - gains[order[:depth]] @ discount[:depth] / ideal
    return coef, float(delta), order
