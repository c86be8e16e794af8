"""Loss-augmented inference with the partial-order map phi_po: AUC, MAP, NDCG@k, NDCG-nc, MRR@k.

Each kernel solves, for one query with scores ``s`` and binary relevance ``z``,

    max over rankings r of  s . c_po(r) + Delta(r)

and writes the coefficients of the maximiser into ``coef`` and the ranking (document indices,
best first) into ``order``; it returns Delta. All kernels share one signature,
``kernel(s, z, k, discount, coef, order) -> delta``, so one batch loop runs any of them.

For every loss here except AUC, Fact 3.2 of Chakrabarti et al. (2008) holds: some maximiser
keeps the good documents in decreasing score order and the bad ones likewise, so a ranking is
an interleaving, described by ``j[g]``, the number of bad documents above the g-th good one
(non-decreasing in g). With ``P`` good and ``N`` bad documents, good g placed below the top
``j`` bad ones adds ``f(g, j) = (2 B[j] - B[N] + s_g (N - 2 j)) / (P N)`` to ``s . c_po``
(``B`` are the prefix sums of the sorted bad scores). ``f(g, .)`` is concave and peaks at
``nat[g]``, the number of bad documents scoring above good g.

The kernels:

- AUC: each pair decides alone (Joachims 2005), which is the order by ``s - z/2``;
- MAP: Yue et al.'s greedy, in O(n log n): the bad documents' monotone choices are found by
  divide and conquer (Mohapatra et al. 2014);
- NDCG@k and NDCG without cut-off (no-clip): the DP of Fig. 2 with Facts 3.3/3.4, a k x k table
  whose rows below the cut are summed in O(log P); a no-clip list of more than 2^20 (good, bad)
  pairs is solved by pooling adjacent violators over the goods' concave objectives, in
  O((P + N) log N); the LETOR discount's flat top is handled by pooling twice, once with the first
  good at j = 0 and once with every j >= 1, and keeping the better;
- MRR@k with phi_po.
"""

from __future__ import annotations

import numpy as np

from structrank.numba_cache import njit
from structrank.sorting import order_desc

from structrank.feature_maps import po_coef_from_order

NEG_INF = -np.inf


@njit(cache=True, nogil=True)
def _split_sorted(s, z):
    """Indices of good and bad documents, each in decreasing score order (stable)."""
    order = order_desc(s)
    n_good = 0
    for i in range(s.shape[0]):
        n_good += z[i]
    good = np.empty(n_good, np.int64)
    bad = np.empty(s.shape[0] - n_good, np.int64)
    a = 0
    b = 0
    for i in order:
        if z[i]:
            good[a] = i
            a += 1
        else:
            bad[b] = i
            b += 1
    return good, bad


@njit(cache=True, nogil=True)
def _ideal(s, z, coef, order):
    """The answer for a query without good or without bad documents: nothing can be violated."""
    good, bad = _split_sorted(s, z)
    order[: good.shape[0]] = good
    order[good.shape[0]:] = bad
    po_coef_from_order(order, z, coef)
    return 0.0


@njit(cache=True, nogil=True)
def _merge(good, bad, j, order):
    """The ranking that puts ``j[g]`` bad documents above the g-th good one."""
    pos = 0
    b = 0
    for g in range(good.shape[0]):
        while b < j[g]:
            order[pos] = bad[b]
            pos += 1
            b += 1
        order[pos] = good[g]
        pos += 1
    while b < bad.shape[0]:
        order[pos] = bad[b]
        pos += 1
        b += 1


@njit(cache=True, nogil=True)
def auc_kernel(s, z, k, discount, coef, order):
    """SVM-auc (Joachims 2005, Eq. 8): each pair decides alone, ``y_gb = sign(s_g - s_b - 1/2)``.

    The pair decisions are those of the total order by ``s - z/2`` (good g stays above bad b
    exactly when ``s_g - 1/2 > s_b``), so the structure is returned as that order.
    """
    n = s.shape[0]
    n_good = 0
    for i in range(n):
        n_good += z[i]
    n_bad = n - n_good
    if n_good == 0 or n_bad == 0:
        return _ideal(s, z, coef, order)
    shifted = s - 0.5 * z
    order[:] = order_desc(shifted)
    po_coef_from_order(order, z, coef)
    swapped = 0  # bad-above-good pairs
    bad_above = 0
    for pos in range(n):
        if z[order[pos]]:
            swapped += bad_above
        else:
            bad_above += 1
    return swapped / (n_good * n_bad)


@njit(cache=True, nogil=True, inline="always")
def _map_delta(g, l, sg, sl, n_good, scale):
    # (g+1)/(g+l+1) - (g+1)/(g+l+2) in one division, minus the score term
    return (g + 1.0) / ((g + l + 1.0) * (g + l + 2.0) * n_good) - (sg[g] - sl) * scale


@njit(cache=True, nogil=True)
def _best_goods_above(sg, sl, l, lo, hi, n_good, scale):
    """The number m in [lo, hi] of good documents to keep above bad l that maximises the sum of
    ``delta(g, l)`` for g >= m (the largest such m on ties). The sum over g > hi is the same for
    every m in range, so the scan starts at hi: O(hi - lo)."""
    if hi == n_good:
        best, best_m, start = 0.0, n_good, n_good - 1
    else:
        best, best_m, start = NEG_INF, hi, hi
    total = 0.0
    for g in range(start, lo - 1, -1):
        total += _map_delta(g, l, sg, sl, n_good, scale)
        if total > best:
            best = total
            best_m = g
    return best_m


@njit(cache=True, nogil=True)
def map_kernel(s, z, k, discount, coef, order):
    """SVM-map: Yue et al.'s (2007) exact greedy, in O(n log n) by divide and conquer.

    Bad document l (l-th by score) placed above good g (g-th by score), with bad documents
    0..l-1 above g already, changes the objective by

        delta(g, l) = [(g+1)/(g+l+1) - (g+1)/(g+l+2)] / P - 2 (s_g - s_l) / (P N)

    (AP loss up, score term down). Each bad document independently takes the number m_l of good
    documents above it that maximises the sum of its deltas; Yue et al. prove these choices are
    non-decreasing in l, so together they form the optimal interleaving. Yue et al. scan every m
    for every l, O(P N). Monotone choices allow the divide and conquer of Mohapatra et al. (2014,
    "Efficient optimization for average precision SVM"): solve the middle bad document over the
    whole range, then the ones above it only over m <= its choice and the ones below over
    m >= it. Each level of the recursion scans O(P + N) positions, so the whole is O((P + N) log N)
    after the O(n log n) sort. Ties go to the lower position; a running maximum guards the order
    against rounding.
    """
    good, bad = _split_sorted(s, z)
    n_good = good.shape[0]
    n_bad = bad.shape[0]
    if n_good == 0 or n_bad == 0:
        return _ideal(s, z, coef, order)
    scale = 2.0 / (n_good * n_bad)
    sg = np.empty(n_good)  # contiguous good scores: the scans read them in order
    for g in range(n_good):
        sg[g] = s[good[g]]
    goods_above = np.empty(n_bad, np.int64)  # m_l: good documents above bad l
    # explicit stack of (first bad, last bad, lowest m, highest m)
    stack = np.empty((2 * (int(np.log2(n_bad)) + 2), 4), np.int64)
    stack[0, 0], stack[0, 1], stack[0, 2], stack[0, 3] = 0, n_bad - 1, 0, n_good
    top = 1
    while top > 0:
        top -= 1
        l_lo, l_hi, m_lo, m_hi = stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3]
        mid = (l_lo + l_hi) // 2
        m = _best_goods_above(sg, s[bad[mid]], mid, m_lo, m_hi, n_good, scale)
        goods_above[mid] = m
        if mid + 1 <= l_hi:
            stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3] = mid + 1, l_hi, m, m_hi
            top += 1
        if l_lo <= mid - 1:
            stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3] = l_lo, mid - 1, m_lo, m
            top += 1
    last = 0
    for l in range(n_bad):
        last = max(last, goods_above[l])
        goods_above[l] = last
    j = np.zeros(n_good, np.int64)  # bad documents above each good one
    for l in range(n_bad):
        if goods_above[l] < n_good:
            j[goods_above[l]] += 1
    for g in range(1, n_good):
        j[g] += j[g - 1]
    _merge(good, bad, j, order)
    po_coef_from_order(order, z, coef)
    ap = 0.0
    for g in range(n_good):
        ap += (g + 1.0) / (g + j[g] + 1.0)
    return 1.0 - ap / n_good


@njit(cache=True, nogil=True)
def _interleave(sg, sb, weight, gain_discount, cut):
    """Best interleaving for ``Delta = 1 - sum_g weight[g] * gain_discount[g + j[g]]``.

    ``gain_discount[r]`` is the credit of a good document at rank r (zero from rank ``cut`` on).
    This is the dynamic programme of Fig. 2 with Facts 3.3 and 3.4: the table keeps only
    cells whose rank ``g + j`` is above the cut (at most k x k of them), each cell takes the
    best of the previous row through a running prefix maximum, and the first row placed below
    the cut ends the programme, since from there on the loss is fixed and every later good
    document takes ``max(column, nat[h])`` (f is concave and nat non-decreasing). The rest of a
    row below the cut is summed in O(log P) from prefix sums. Without a cut (``cut >= P + N``)
    this is the full P x (N + 1) table: the no-clip variant in O(P N).
    Returns ``j``.
    """
    n_good = sg.shape[0]
    n_bad = sb.shape[0]
    scale = 1.0 / (n_good * n_bad)
    pre_bad = np.zeros(n_bad + 1)
    for l in range(n_bad):
        pre_bad[l + 1] = pre_bad[l] + sb[l]
    total_bad = pre_bad[n_bad]
    pre_good = np.zeros(n_good + 1)
    for g in range(n_good):
        pre_good[g + 1] = pre_good[g] + sg[g]
    nat = np.empty(n_good, np.int64)
    l = 0
    for g in range(n_good):  # sg decreasing -> nat non-decreasing
        while l < n_bad and sb[l] > sg[g]:
            l += 1
        nat[g] = l
    best_from = np.zeros(n_good + 1)  # sum over h >= g of f(h, nat[h])
    for g in range(n_good - 1, -1, -1):
        best_from[g] = best_from[g + 1] + (2.0 * pre_bad[nat[g]] - total_bad + sg[g] * (n_bad - 2.0 * nat[g])) * scale

    rows = min(n_good, cut)
    width = min(n_bad, cut - 1) + 1
    back = np.zeros((max(rows, 1), width), np.int64)  # column of row g-1 that cell (g, j) extends
    prev_max = np.zeros(width)  # prefix maxima of row g-1 (zeros before row 0)
    prev_arg = np.zeros(width, np.int64)
    prev_width = width
    row = np.empty(width)
    best = NEG_INF
    exit_row = -1
    exit_col = 0
    exit_from = 0
    for g in range(rows + 1):
        # option 1: good g is the first one ranked at or below the cut
        if g < n_good and cut - g <= n_bad:
            c = max(cut - g, nat[g])
            before = prev_max[prev_width - 1]
            h = max(g + 1, np.searchsorted(nat, c, side="right"))
            tail = ((h - g - 1) * (2.0 * pre_bad[c] - total_bad) + (n_bad - 2.0 * c) * (pre_good[h] - pre_good[g + 1])) * scale
            value = before + (2.0 * pre_bad[c] - total_bad + sg[g] * (n_bad - 2.0 * c)) * scale + tail + best_from[h]
            if value > best:
                best = value
                exit_row = g
                exit_col = c
                exit_from = prev_arg[prev_width - 1]
        if g == rows:
            break
        # option 2: good g above the cut, j bad documents above it
        cols = min(n_bad, cut - 1 - g) + 1
        for j in range(cols):
            cell = (2.0 * pre_bad[j] - total_bad + sg[g] * (n_bad - 2.0 * j)) * scale - weight[g] * gain_discount[g + j]
            row[j] = prev_max[j] + cell
            back[g, j] = prev_arg[j]
        for j in range(cols):
            if j == 0 or row[j] > prev_max[j - 1]:
                prev_max[j] = row[j]
                prev_arg[j] = j
            else:
                prev_max[j] = prev_max[j - 1]
                prev_arg[j] = prev_arg[j - 1]
        prev_width = cols
    j_of = np.empty(n_good, np.int64)
    if rows == n_good and prev_max[prev_width - 1] >= best:
        # every good document above the cut
        g = n_good - 1
        col = prev_arg[prev_width - 1]
    else:
        for h in range(exit_row, n_good):
            j_of[h] = max(exit_col, nat[h]) if h > exit_row else exit_col
        g = exit_row - 1
        col = exit_from
    while g >= 0:
        j_of[g] = col
        col = back[g, col]
        g -= 1
    return j_of


#: Above this many (good, bad) pairs a no-clip list (NDCG-nc) is solved by pooling adjacent
#: violators rather than by the P x (N + 1) table, whose time and memory grow with P x N
#: (docs/BENCHMARKS.md, "Structured learning", times ndcg-nc/po at 1,000 and 10,000 documents).
#: Below it the table stays: both are exact, but on tied objectives (w = 0) they may
#: pick different maximisers, and LETOR's lists (at most about 10^5 pairs) keep their fits' bits.
PAVA_MIN_PAIRS = 2**20


@njit(cache=True, nogil=True)
def _block_rise(a, b, j, sg_sum, sb, weight, gain_discount, scale):
    """H(j + 1) - H(j) for the goods a..b held together at j bad documents above each: the score
    term 2 (|B| s_b[j] - sum s_g) / (P N) and the loss term, whose discounts telescope
    (``weight`` equal for every good)."""
    return 2.0 * scale * ((b - a + 1) * sb[j] - sg_sum) - weight * (gain_discount[b + j + 1] - gain_discount[a + j])


@njit(cache=True, nogil=True)
def _block_best(a, b, sg_sum, sb, weight, gain_discount, scale, lo):
    """The smallest j >= lo maximising the block's concave objective: past lo, how many steps still
    rise (a prefix, the rises falling)."""
    hi = sb.shape[0]  # the answer is in [lo, hi]
    while lo < hi:
        mid = (lo + hi) // 2
        if _block_rise(a, b, mid, sg_sum, sb, weight, gain_discount, scale) > 0.0:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, nogil=True)
def _pool(sg, sb, weight, gain_discount, first, lo, j):
    """Pool adjacent violators over the goods ``first``.. with every j >= ``lo``; fills ``j[first:]``."""
    n_good = sg.shape[0]
    scale = 1.0 / (n_good * sb.shape[0])
    start = np.empty(n_good, np.int64)  # the blocks on the stack: first good, sum of scores, best j
    total = np.empty(n_good)
    level = np.empty(n_good, np.int64)
    top = 0
    for g in range(first, n_good):
        start[top], total[top] = g, sg[g]
        level[top] = _block_best(g, g, sg[g], sb, weight, gain_discount, scale, lo)
        top += 1
        while top > 1 and level[top - 1] < level[top - 2]:  # merge: the block now ends at g
            total[top - 2] += total[top - 1]
            top -= 1
            level[top - 1] = _block_best(start[top - 1], g, total[top - 1], sb, weight, gain_discount, scale, lo)
    for t in range(top):
        last = start[t + 1] if t + 1 < top else n_good
        for g in range(start[t], last):
            j[g] = level[t]


@njit(cache=True, nogil=True)
def _objective(sg, sb, weight, gain_discount, j):
    """sum over goods of f(g, j[g]) - w D[g + j[g]] (the maximised objective, up to a constant)."""
    n_good, n_bad = sg.shape[0], sb.shape[0]
    pre = 0.0
    total = 0.0
    l = 0
    for g in range(n_good):
        while l < j[g]:
            pre += sb[l]
            l += 1
        total += (2.0 * pre + sg[g] * (n_bad - 2.0 * j[g])) / (n_good * n_bad) - weight * gain_discount[g + j[g]]
    return total


@njit(cache=True, nogil=True)
def convex_from_second_rank(gain_discount) -> bool:
    """Whether the discount is convex from rank 2 on (LETOR's, 1 at ranks 1 and 2, and 1/log2(p + 1))."""
    for r in range(1, gain_discount.shape[0] - 2):
        if gain_discount[r + 1] - gain_discount[r] > gain_discount[r + 2] - gain_discount[r + 1]:
            return False
    return True


@njit(cache=True, nogil=True)
def pava_interleave(sg, sb, weight, gain_discount):
    """Best interleaving for no-clip NDCG (equal weights, a discount convex from rank 2 on), in
    O((P + N) log N) after the sort.

    Each good document g taking j bad documents above it adds ``h_g(j) = f(g, j) - w D[g + j]``,
    concave in j (f is, and -D is where D is convex), and the j must not decrease with g. A
    separable concave objective under a chain order is maximised by pooling adjacent violators (as
    isotonic regression): take each good's own best j; while one is below its predecessor's, hold
    the two blocks together at the best j of their summed objective, which is concave too. A
    block's rise from j to j + 1 costs O(1) (the discounts telescope), so its best j is a binary
    search. LETOR's discount is flat from rank 1 to rank 2, which only the first good document
    sees (at j = 0 to 1): so the first good is tried at j = 0 (the others pooled freely) and
    every j is held >= 1 (all concave there), and the better of the two is kept. Returns ``j``.
    """
    n_good = sg.shape[0]
    w = weight[0]
    at_top = np.empty(n_good, np.int64)
    at_top[0] = 0
    _pool(sg, sb, w, gain_discount, 1, 0, at_top)
    below = np.empty(n_good, np.int64)
    _pool(sg, sb, w, gain_discount, 0, min(1, sb.shape[0]), below)
    if _objective(sg, sb, w, gain_discount, below) > _objective(sg, sb, w, gain_discount, at_top):
        return below
    return at_top


@njit(cache=True, nogil=True)
def _interleave_kernel(s, z, weight_of, gain_discount, cut, coef, order):
    good, bad = _split_sorted(s, z)
    n_good = good.shape[0]
    if n_good == 0 or bad.shape[0] == 0:
        return _ideal(s, z, coef, order)
    sg = np.empty(n_good)
    for g in range(n_good):
        sg[g] = s[good[g]]
    sb = np.empty(bad.shape[0])
    for l in range(bad.shape[0]):
        sb[l] = s[bad[l]]
    weight = weight_of[:n_good]
    if (cut >= n_good + bad.shape[0] and n_good * bad.shape[0] > PAVA_MIN_PAIRS and np.all(weight == weight[0])
            and convex_from_second_rank(gain_discount)):
        j = pava_interleave(sg, sb, weight, gain_discount)  # no clip, a long list
    else:
        j = _interleave(sg, sb, weight, gain_discount, cut)
    _merge(good, bad, j, order)
    po_coef_from_order(order, z, coef)
    credit = 0.0
    for g in range(n_good):
        if g + j[g] < cut:
            credit += weight[g] * gain_discount[g + j[g]]
    return 1.0 - credit


@njit(cache=True, nogil=True)
def ndcg_kernel(s, z, k, discount, coef, order):
    """SVM-ndcg: NDCG@k with binary gain (``k <= 0``: no clip, SVM-ndcg-nc), O(n log n + k^2)."""
    n = s.shape[0]
    n_good = 0
    for i in range(n):
        n_good += z[i]
    cut = n if k <= 0 else min(k, n)
    ideal = 0.0
    for r in range(min(n_good, cut)):
        ideal += discount[r]
    weight = np.full(max(n_good, 1), 1.0 / ideal if ideal > 0 else 0.0)
    return _interleave_kernel(s, z, weight, discount[:n], cut, coef, order)


@njit(cache=True, nogil=True)
def mrr_po_kernel(s, z, k, discount, coef, order):
    """MRR@k with phi_po (the map Fig. 7 compares phi_mrr against): only the top good document counts."""
    n = s.shape[0]
    cut = n if k <= 0 else min(k, n)
    weight = np.zeros(max(n, 1))
    weight[0] = 1.0
    reciprocal = 1.0 / (1.0 + np.arange(n))
    return _interleave_kernel(s, z, weight, reciprocal, cut, coef, order)


# The batch loops: each runs its kernel over every query (``offsets`` bound the queries). One loop per
# kernel, not a jitted function passed as an argument: numba's on-disk cache cannot always save
# functions that take other jitted functions as arguments ("underlying object has vanished").

_NO_DISCOUNT = np.zeros(0)  # the kernels that read no discount table take this one


@njit(cache=True, nogil=True)
def auc_batch(s, z, offsets, coef, order):
    """``auc_kernel`` over every query; returns each query's loss."""
    delta = np.empty(offsets.shape[0] - 1)
    for q in range(offsets.shape[0] - 1):
        a, b = offsets[q], offsets[q + 1]
        delta[q] = auc_kernel(s[a:b], z[a:b], 0, _NO_DISCOUNT, coef[a:b], order[a:b])
    return delta


@njit(cache=True, nogil=True)
def map_batch(s, z, offsets, coef, order):
    """``map_kernel`` over every query; returns each query's loss."""
    delta = np.empty(offsets.shape[0] - 1)
    for q in range(offsets.shape[0] - 1):
        a, b = offsets[q], offsets[q + 1]
        delta[q] = map_kernel(s[a:b], z[a:b], 0, _NO_DISCOUNT, coef[a:b], order[a:b])
    return delta


@njit(cache=True, nogil=True)
def ndcg_batch(s, z, offsets, k, discount, coef, order):
    """``ndcg_kernel`` over every query (``k <= 0``: no cut-off); returns each query's loss."""
    delta = np.empty(offsets.shape[0] - 1)
    for q in range(offsets.shape[0] - 1):
        a, b = offsets[q], offsets[q + 1]
        delta[q] = ndcg_kernel(s[a:b], z[a:b], k, discount, coef[a:b], order[a:b])
    return delta


@njit(cache=True, nogil=True)
def mrr_po_batch(s, z, offsets, k, coef, order):
    """``mrr_po_kernel`` over every query; returns each query's loss."""
    delta = np.empty(offsets.shape[0] - 1)
    for q in range(offsets.shape[0] - 1):
        a, b = offsets[q], offsets[q + 1]
        delta[q] = mrr_po_kernel(s[a:b], z[a:b], k, _NO_DISCOUNT, coef[a:b], order[a:b])
    return delta
