"""Loss-augmented inference for MRR@k with the map phi_mrr (Chakrabarti et al. 2008, Fig. 3)."""

from __future__ import annotations

import numpy as np

from structrank.numba_cache import njit
from structrank.oracles.po import _split_sorted
from structrank.feature_maps import mrr_coef_from_order


@njit(cache=True, nogil=True)
def mrr_kernel(s, z, k, discount, coef, order):
    """SVM-mrr (Fact 3.5): the best ranking in each class of equal loss, then the best class.

    MRR@k only sees the rank r of the top good document, so the rankings fall into k + 1
    classes. Within the class "top good document at rank r < k", ``s . c_mrr`` is largest when
    the r best-scoring bad documents come first and the lowest-scoring good document follows:
    value ``sum_{l<r} (s_l - s_gmin) + 1 - 1/(1 + r)``. In the class "no good document in the top
    k" (loss 1) the bad documents above gmin are the best ``max(k, nat)`` of them, nat being the
    number of bad documents scoring above gmin (the sum is concave in their count). The order
    below the top good document does not change ``phi_mrr``; it is kept by score.
    ``k <= 0`` means no cut-off. O(n log n + k).
    """
    good, bad = _split_sorted(s, z)
    n_good = good.shape[0]
    n_bad = bad.shape[0]
    n = s.shape[0]
    if n_good == 0 or n_bad == 0:
        order[:n_good] = good
        order[n_good:] = bad
        mrr_coef_from_order(order, z, coef)
        return 0.0
    cut = n if k <= 0 else k
    s_min = s[good[n_good - 1]]
    best = 0.0  # r = 0: the ideal class, value 0
    best_r = 0
    best_loss = 0.0
    above = 0.0  # sum of (s_l - s_min) over the top r bad documents
    for r in range(1, min(cut - 1, n_bad) + 1):
        above += s[bad[r - 1]] - s_min
        value = above + 1.0 - 1.0 / (1.0 + r)
        if value > best:
            best = value
            best_r = r
            best_loss = 1.0 - 1.0 / (1.0 + r)
    if cut <= n_bad:
        nat = 0
        while nat < n_bad and s[bad[nat]] > s_min:
            nat += 1
        r = max(cut, nat)
        total = 0.0
        for l in range(r):
            total += s[bad[l]] - s_min
        if total + 1.0 > best:
            best_r = r
            best_loss = 1.0
    # top best_r bad documents, the lowest good one, then the rest by score
    pos = 0
    for l in range(best_r):
        order[pos] = bad[l]
        pos += 1
    order[pos] = good[n_good - 1]
    pos += 1
    g = 0
    l = best_r
    while g < n_good - 1 or l < n_bad:
        if l >= n_bad or (g < n_good - 1 and s[good[g]] >= s[bad[l]]):
            order[pos] = good[g]
            g += 1
        else:
            order[pos] = bad[l]
            l += 1
        pos += 1
    mrr_coef_from_order(order, z, coef)
    return best_loss


_NO_DISCOUNT = np.zeros(0)  # MRR reads no discount table


@njit(cache=True, nogil=True)
def mrr_batch(s, z, offsets, k, coef, order):
    """``mrr_kernel`` over every query (``offsets`` bound the queries); returns each query's loss."""
    delta = np.empty(offsets.shape[0] - 1)
    for q in range(offsets.shape[0] - 1):
        a, b = offsets[q], offsets[q + 1]
        delta[q] = mrr_kernel(s[a:b], z[a:b], k, _NO_DISCOUNT, coef[a:b], order[a:b])
    return delta
