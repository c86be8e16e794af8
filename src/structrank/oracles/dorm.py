"""Loss-augmented inference for DORM (Le & Smola 2008): phi_dorm with NDCG@k, as an assignment problem."""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment


def dorm_query(s, gains, k, discount, decay):
    """Best ranking for ``s . A(rank) + 1 - NDCG@k`` over all permutations of one query.

    Both terms are sums over (document, rank) cells, ``M[i, r] = s_i A(r) - gain_i D(r) / IDCG``,
    so the maximiser is an assignment of documents to ranks (Sec. 3.5), solved exactly by
    scipy's ``linear_sum_assignment``. Ranks where both ``A`` and ``D`` vanish add nothing; with
    the sparse decay (cut at rank c) only the first ``max(c, k)`` ranks are assigned, which is
    what makes sparse DORM cheaper than the O(n^3) dense problem.

    Returns ``(coef, delta, order)``.
    """
    n = s.shape[0]
    depth = n if k <= 0 else min(k, n)
    ideal = np.sort(gains)[::-1][:depth] @ discount[:depth]
    a = np.zeros(n)
    a[: min(n, decay.shape[0])] = decay[:n]
    if ideal <= 0 or np.all(gains == gains[0]):
        # every ranking has loss 0; the ideal one by grade, then score, is returned
        order = np.lexsort((-s, -gains))
        coef = np.empty(n)
        coef[order] = a
        return coef, 0.0, order
    width = max(depth, int(np.flatnonzero(a)[-1]) + 1 if np.any(a) else 0)
    d = np.zeros(width)
    d[:depth] = discount[:depth] / ideal
    cells = s[:, None] * a[None, :width] - gains[:, None] * d[None, :]
    rows, cols = linear_sum_assignment(cells, maximize=True)
    order = np.empty(n, np.int64)
    order[cols] = rows
    rest = np.setdiff1d(np.arange(n), rows, assume_unique=True)
    order[width:] = rest[np.argsort(-s[rest], kind="stable")]
    coef = np.empty(n)
    coef[order] = a
    delta = 1.0 - gains[order[:depth]] @ discount[:depth] / ideal
    return coef, float(delta), order
