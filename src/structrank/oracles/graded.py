"""Loss-augmented inference for NDCG@k with graded gains (``2^label - 1``) and phi_po.

The binary oracles of ``po.py`` follow the paper: relevance is good or bad. LETOR 4.0 and MSLR
grade relevance (0-2, 0-4) and their NDCG credits a grade-2 document three times a grade-1 one;
this kernel optimises that NDCG directly. phi_po extends to grades in the usual way
(Joachims 2002): its pairs are all pairs of documents with different labels,

    s . c_po(r) = (1/Z) sum over (i, j) with label_i > label_j of y_ij (s_i - s_j),

``y_ij = +1`` if r ranks i above j, and ``Z`` the number of such pairs. With two grades this is
the binary phi_po exactly.

Structure of a maximiser (the graded form of Fact 3.2): swapping two documents of one grade
leaves the loss unchanged and, by the rearrangement inequality, the score term prefers the
higher-scoring one higher, so each grade stays in decreasing score order and a ranking is an
interleaving of G sorted lists. Write the score term as a constant minus ``2/Z`` times the
inversion cost: the sum of ``s_i - s_j`` over pairs whose lower-graded j is ranked above i.

- The top ``K = min(k, n)`` places are filled by a dynamic programme whose state is how many
  documents of each grade are placed (a prefix of each sorted list). Placing the next document
  of grade a adds its NDCG credit and its inversions with the lower-graded documents above it,
  both known from the state.
- Below the cut the loss no longer changes, so the remaining documents are best ordered by
  score alone, which is right for every pair at once (and keeps each grade sorted). Their
  inversion cost (with the top and among themselves) depends only on the final state and is
  tabulated per pair of grades.

The table has one cell per state with ``K`` or fewer documents, C(K + G, G) of them (indexed by
the combinatorial number system): O(G^2) work per cell, plus O(G^2 K n) for the tail tables,
after the O(n log n) sort. G = 3 (LETOR 4.0) with K = 10 is 286 cells, G = 5 (MSLR) 3,003.
"""

from __future__ import annotations

import numpy as np

from structrank.numba_cache import njit
from structrank.sorting import order_desc

NEG_INF = -np.inf


@njit(cache=True, nogil=True)
def _grades(labels):
    """(grade index of each document, distinct labels ascending)."""
    levels = np.unique(labels)
    grade = np.empty(labels.shape[0], np.int64)
    for i in range(labels.shape[0]):
        grade[i] = np.searchsorted(levels, labels[i])
    return grade, levels


@njit(cache=True, nogil=True)
def _grade_counts(grade, n_grades):
    """(documents per grade, Z = number of pairs with different grades)."""
    count = np.zeros(n_grades, np.int64)
    for i in range(grade.shape[0]):
        count[grade[i]] += 1
    pairs = 0
    for a in range(n_grades):
        for b in range(a):
            pairs += count[a] * count[b]
    return count, pairs


@njit(cache=True, nogil=True)
def graded_po_coef_from_order(order, grade, n_grades, out):
    """phi_po coefficients of ``order`` for graded labels: (different-grade documents below - above) / Z."""
    n = order.shape[0]
    count, pairs = _grade_counts(grade, n_grades)
    if pairs == 0:
        out[:] = 0.0
        return
    seen = np.zeros(n_grades, np.int64)
    for pos in range(n):
        i = order[pos]
        a = grade[i]
        above = pos - seen[a]
        below = (n - pos - 1) - (count[a] - 1 - seen[a])
        out[i] = (below - above) / pairs
        seen[a] += 1


@njit(cache=True, nogil=True)
def graded_po_star_query(labels, out):
    """phi_po coefficients of the ideal order: (lower-graded - higher-graded documents) / Z."""
    grade, levels = _grades(labels)
    n_grades = levels.shape[0]
    count, pairs = _grade_counts(grade, n_grades)
    lower = np.zeros(n_grades + 1, np.int64)
    for a in range(n_grades):
        lower[a + 1] = lower[a] + count[a]
    n = labels.shape[0]
    for i in range(n):
        a = grade[i]
        out[i] = 0.0 if pairs == 0 else (lower[a] - (n - lower[a + 1])) / pairs


@njit(cache=True, nogil=True)
def _tail_tables(sv, start, count, dims, pre):
    """``M[a, b, x, y]``: sum of min(0, s_i - s_j) over i >= x of grade a and j >= y of grade b.

    That is the inversion cost of the score-ordered tail between the two grades (a > b) once
    the first x of grade a and the first y of grade b are ranked above the cut.
    """
    n_grades = start.shape[0]
    width = 0
    for g in range(n_grades):
        width = max(width, dims[g])
    M = np.zeros((n_grades, n_grades, width, width))
    for a in range(n_grades):
        for b in range(a):
            na, nb = count[a], count[b]
            sa, sb = start[a], start[b]
            above = np.empty(na, np.int64)  # grade-b documents scoring above each grade-a one
            p = 0
            for i in range(na):
                while p < nb and sv[sb + p] > sv[sa + i]:
                    p += 1
                above[i] = p
            for y in range(dims[b]):
                acc = 0.0
                for i in range(na - 1, -1, -1):
                    p = above[i]
                    if p > y:
                        acc += (p - y) * sv[sa + i] - (pre[sb + b + p] - pre[sb + b + y])
                    if i < dims[a]:
                        M[a, b, i, y] = acc
    return M


@njit(cache=True, nogil=True)
def _next_state(digits, dims, cut, placed):
    """Advance the counter ``digits`` (documents placed per grade, digit g below ``dims[g]``) to
    the next state with at most ``cut`` documents; returns its number of documents, or -1 after
    the last.

    Every predecessor of a state (one document fewer) comes before it. Past the cut a whole run
    of states is skipped by carrying at once.
    """
    n_grades = digits.shape[0]
    while True:
        a = 0
        while a < n_grades and digits[a] == dims[a] - 1:
            placed -= digits[a]
            digits[a] = 0
            a += 1
        if a == n_grades:
            return -1
        digits[a] += 1
        placed += 1
        if placed <= cut:
            return placed
        # lower digits are 0 here; raising digit a (or any below) only adds documents: carry past them
        for b in range(a + 1):
            placed += dims[b] - 1 - digits[b]
            digits[b] = dims[b] - 1


@njit(cache=True, nogil=True)
def _binomials(n, k):
    """``C[i, j]`` = i choose j for i <= n, j <= k."""
    C = np.zeros((n + 1, k + 1), np.int64)
    for i in range(n + 1):
        C[i, 0] = 1
        for j in range(1, min(i, k) + 1):
            C[i, j] = C[i - 1, j - 1] + (C[i - 1, j] if j <= i - 1 else 0)
    return C


@njit(cache=True, nogil=True)
def _state_rank(digits, C, without=-1):
    """Index of the state ``digits`` (minus one document of grade ``without``, if >= 0) among all
    states with at most k documents: the combinatorial number system of the strictly increasing
    ``b_j = digits[0] + ... + digits[j] + j``. Only these C(k + G, G) states get a table cell
    (rather than the prod_g (k + 1) of a mixed radix: 3,003 against 161,051 for 5 grades), and a
    predecessor, whose b are smaller, always has a smaller index."""
    rank = 0
    total = 0
    for j in range(digits.shape[0]):
        total += digits[j]
        b = total + j - (1 if 0 <= without <= j else 0)
        rank += C[b, j + 1]
    return rank


@njit(cache=True, nogil=True)
def graded_ndcg_kernel(s, labels, k, discount, coef, order):
    """Max over rankings of ``s . c_po + 1 - NDCG@k`` with gains ``2^label - 1``; returns the loss.

    ``k <= 0`` or ``k > n``: NDCG over the whole list. Labels must be >= 0.
    """
    n = s.shape[0]
    grade, levels = _grades(labels)
    n_grades = levels.shape[0]
    by_score = order_desc(s)
    count, pairs = _grade_counts(grade, n_grades)
    gain = np.exp2(levels.astype(np.float64)) - 1.0
    cut = n if k <= 0 else min(k, n)
    ideal = 0.0
    r = 0
    for a in range(n_grades - 1, -1, -1):
        for _ in range(count[a]):
            if r < cut:
                ideal += gain[a] * discount[r]
            r += 1
    if pairs == 0 or ideal <= 0.0:
        # one grade only (or no gain anywhere): every ranking is correct and nothing is violated
        order[:] = by_score
        graded_po_coef_from_order(order, grade, n_grades, coef)
        return 0.0

    # each grade's documents in decreasing score order, stored one grade after another
    start = np.zeros(n_grades, np.int64)
    for a in range(1, n_grades):
        start[a] = start[a - 1] + count[a - 1]
    members = np.empty(n, np.int64)
    fill = start.copy()
    for i in by_score:
        members[fill[grade[i]]] = i
        fill[grade[i]] += 1
    sv = np.empty(n)
    for t in range(n):
        sv[t] = s[members[t]]
    pre = np.zeros(n + n_grades)  # grade a's prefix sums live at pre[start[a] + a : ...]
    for a in range(n_grades):
        base = start[a] + a
        for t in range(count[a]):
            pre[base + t + 1] = pre[base + t] + sv[start[a] + t]

    dims = np.empty(n_grades, np.int64)
    for a in range(n_grades):
        dims[a] = min(count[a], cut) + 1
    C = _binomials(cut + n_grades, n_grades)
    inv_scale = 2.0 / pairs
    value = np.empty(C[cut + n_grades, n_grades])  # every cell is written before it is read
    choice = np.empty(value.shape[0], np.int64)
    value[0] = 0.0
    digits = np.zeros(n_grades, np.int64)
    placed = 0
    while True:
        placed = _next_state(digits, dims, cut, placed)
        if placed < 0:
            break
        best = NEG_INF
        best_a = -1
        for a in range(n_grades):
            if digits[a] == 0:
                continue
            before = value[_state_rank(digits, C, a)]
            sd = sv[start[a] + digits[a] - 1]  # the document placed last, at rank placed - 1
            inversions = 0.0
            for b in range(a):
                inversions += digits[b] * sd - pre[start[b] + b + digits[b]]
            step = before - gain[a] * discount[placed - 1] / ideal - inv_scale * inversions
            if step > best:
                best = step
                best_a = a
        cell = _state_rank(digits, C)
        value[cell] = best
        choice[cell] = best_a

    # the cut: add the inversion cost of the score-ordered tail and pick the best final state
    M = _tail_tables(sv, start, count, dims, pre)
    digits[:] = 0
    placed = 0
    best = NEG_INF
    best_digits = digits.copy()
    while True:
        placed = _next_state(digits, dims, cut, placed)
        if placed < 0:
            break
        if placed != cut:
            continue
        tail = 0.0
        for a in range(n_grades):
            rest_a = count[a] - digits[a]
            rest_sum_a = pre[start[a] + a + count[a]] - pre[start[a] + a + digits[a]]
            for b in range(a):
                tail += digits[b] * rest_sum_a - rest_a * pre[start[b] + b + digits[b]] + M[a, b, digits[a], digits[b]]
        total = value[_state_rank(digits, C)] - inv_scale * tail
        if total > best:
            best = total
            best_digits[:] = digits

    # read the top off the table, then the rest by score
    top = np.empty(cut, np.int64)
    taken = np.zeros(n_grades, np.int64)
    for pos in range(cut - 1, -1, -1):
        a = choice[_state_rank(best_digits, C)]
        top[pos] = a
        best_digits[a] -= 1
    for pos in range(cut):
        a = top[pos]
        order[pos] = members[start[a] + taken[a]]
        taken[a] += 1
    rank_in_grade = np.empty(n, np.int64)
    for t in range(n):
        rank_in_grade[members[t]] = t
    pos = cut
    for i in by_score:
        a = grade[i]
        if rank_in_grade[i] - start[a] >= taken[a]:
            order[pos] = i
            pos += 1
    graded_po_coef_from_order(order, grade, n_grades, coef)
    credit = 0.0
    for pos in range(cut):
        credit += gain[grade[order[pos]]] * discount[pos]
    return 1.0 - credit / ideal


@njit(cache=True, nogil=True)
def graded_ndcg_batch(s, labels, offsets, k, discount, coef, order):
    """``graded_ndcg_kernel`` over every query (``offsets`` bound the queries); order is per query."""
    n_queries = offsets.shape[0] - 1
    delta = np.empty(n_queries)
    for q in range(n_queries):
        a, b = offsets[q], offsets[q + 1]
        delta[q] = graded_ndcg_kernel(s[a:b], labels[a:b], k, discount, coef[a:b], order[a:b])
    return delta


@njit(cache=True, nogil=True)
def graded_po_star(labels, offsets):
    out = np.empty(labels.shape[0])
    for q in range(offsets.shape[0] - 1):
        a, b = offsets[q], offsets[q + 1]
        graded_po_star_query(labels[a:b], out[a:b])
    return out
