"""Per-query metric kernels: numba loops over flat arrays.

Every kernel takes the query's documents already in rank order (``offsets[q]:offsets[q+1]``
are query q's documents, best-ranked first) and writes one value per query. The Python layer
(``evaluate``) only sorts and arranges; the rules of each convention arrive as plain arguments.
Compiled with ``cache=True`` so that a second process does not compile again.

The kernels:

- the ranking itself: ``rank_segments`` orders each query's rows by score with a stable
  insertion-and-merge sort and no allocation per query, ties in input order (one radix sort of the
  whole file, ``structrank.sorting``, then a counting sort by query) or by document id compared on
  code points, as trec_eval's strcmp;
- each query's ideal gains, once for every NDCG cut-off;
- NDCG@k, AP (with cut-off), P@k, RR@k and AUC;
- with each query's totals given (the list's, or the qrels' for a run): Recall@k, R-precision,
  Success@k, bpref, AP with R as denominator, and NDCG with a given ideal.
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload

from structrank.numba_cache import njit
from structrank.sorting import order_desc


@njit(cache=True, nogil=True)
def _dcg(gains, start, depth, discount):
    total = 0.0
    for i in range(depth):
        total += gains[start + i] * discount[i]
    return total


@njit(cache=True, nogil=True)
def _key_greater(keys, x, y):
    """Whether row x of ``keys`` (code points of a document id, 0-padded) sorts after row y, as
    strcmp on the ids' UTF-8 bytes would (code point order is UTF-8 byte order)."""
    for c in range(keys.shape[1]):
        if keys[x, c] != keys[y, c]:
            return keys[x, c] > keys[y, c]
    return False


def ranks_above(x, y, data):
    """Whether row x ranks strictly above row y, by what ``data`` holds: the rows' values (1-D: the larger
    value), their document ids (2-D code points: the larger id, ``_key_greater``), or a TREC run's
    ``(scores, docno starts, docno ends, bytes)`` (the larger score, then the larger docno bytes).
    Typed by ``data``'s type, so that one sort serves them all."""


@overload(ranks_above, inline="always")
def _ranks_above(x, y, data):
    if isinstance(data, types.Array) and data.ndim == 1:
        def by_value(x, y, data):
            return data[x] > data[y]
        return by_value
    if isinstance(data, types.Array) and data.ndim == 2:
        def by_id(x, y, data):
            return _key_greater(data, x, y)
        return by_id
    if isinstance(data, types.BaseTuple) and len(data) == 4:
        def by_score_then_docno(x, y, data):
            scores, start, end, buf = data
            if scores[x] != scores[y]:
                return scores[x] > scores[y]
            a, b = start[x], start[y]
            for i in range(min(end[x] - a, end[y] - b)):
                if buf[a + i] != buf[b + i]:
                    return buf[a + i] > buf[b + i]
            return end[x] - a > end[y] - b
        return by_score_then_docno
    return None


_RUN = 16  # insertion-sorted runs, then merged: no allocation per query, fast on short lists


@njit(cache=True, nogil=True)
def stable_sort_desc(order, lo, hi, data, buffer):
    """Stable sort of order[lo:hi] from the top row down (``ranks_above`` by ``data``), in place;
    ``buffer`` holds at least hi - lo entries. A list already in order costs one comparison per row."""
    for a in range(lo, hi, _RUN):
        b = min(a + _RUN, hi)
        for i in range(a + 1, b):
            x = order[i]
            j = i - 1
            while j >= a and ranks_above(x, order[j], data):
                order[j + 1] = order[j]
                j -= 1
            order[j + 1] = x
    width = _RUN
    while width < hi - lo:
        for left in range(lo, hi, 2 * width):
            mid = min(left + width, hi)
            right = min(left + 2 * width, hi)
            if mid >= right or not ranks_above(order[mid], order[mid - 1], data):
                continue  # already in order
            i, j, k = left, mid, 0
            while i < mid and j < right:
                if ranks_above(order[j], order[i], data):  # the left one wins ties: stable
                    buffer[k] = order[j]
                    j += 1
                else:
                    buffer[k] = order[i]
                    i += 1
                k += 1
            while i < mid:
                buffer[k] = order[i]
                i += 1
                k += 1
            for t in range(k):
                order[left + t] = buffer[t]
        width *= 2


@njit(cache=True, nogil=True)
def rank_segments(scores, offsets, keys, by_docid):
    """Row order ranking each query's rows (``offsets``: contiguous queries) by decreasing score,
    ties in input order, or (``by_docid``) by decreasing document id (``keys``), as trec_eval."""
    if not by_docid:
        return _rank_by_score(scores, offsets)
    n = scores.shape[0]
    order = np.arange(n)
    buffer = np.empty(n, np.int64)
    for q in range(offsets.shape[0] - 1):
        a, b = offsets[q], offsets[q + 1]
        stable_sort_desc(order, a, b, scores, buffer)
        if by_docid:
            i = a
            while i < b:
                j = i + 1
                while j < b and scores[order[j]] == scores[order[i]]:
                    j += 1
                if j - i > 1:
                    stable_sort_desc(order, i, j, keys, buffer)
                i = j
    return order


@njit(cache=True, nogil=True)
def _rank_by_score(scores, offsets):
    """``rank_segments`` with ties in input order, in O(rows): one stable radix sort of the whole
    file by decreasing score, then a stable counting sort of that order by query. A merge sort per
    query was a quarter of ``evaluate``'s time on the LETOR test files."""
    by_score = order_desc(scores)
    query = np.empty(scores.shape[0], np.int64)
    for q in range(offsets.shape[0] - 1):
        query[offsets[q]:offsets[q + 1]] = q
    fill = offsets[:-1].copy()
    order = np.empty(scores.shape[0], np.int64)
    for i in by_score:
        order[fill[query[i]]] = i
        fill[query[i]] += 1
    return order


@njit(cache=True, nogil=True)
def ideal_gains(gains, offsets):
    """Each query's gains sorted in decreasing order (the ideal ranking's), computed once for
    every NDCG cut-off."""
    n = gains.shape[0]
    order = np.arange(n)
    buffer = np.empty(n, np.int64)
    for q in range(offsets.shape[0] - 1):
        stable_sort_desc(order, offsets[q], offsets[q + 1], gains, buffer)
    return gains[order]


@njit(cache=True, nogil=True)
def ideal_gains_by_level(codes, level_gains, offsets):
    """``ideal_gains`` when the gains take a few values: row i has level ``codes[i]`` and the
    levels' gains are ``level_gains``, largest first. A counting sort, O(documents + levels) per
    query where the sort is O(documents log documents): a third of ``evaluate``'s time on LETOR."""
    out = np.empty(codes.shape[0])
    counts = np.zeros(level_gains.shape[0], np.int64)
    for q in range(offsets.shape[0] - 1):
        counts[:] = 0
        for i in range(offsets[q], offsets[q + 1]):
            counts[codes[i]] += 1
        i = offsets[q]
        for level in range(level_gains.shape[0]):
            for _ in range(counts[level]):
                out[i] = level_gains[level]
                i += 1
    return out


@njit(cache=True, nogil=True)
def ndcg_kernel(gains, ideal, offsets, discount, k, short_zero, empty_value):
    """NDCG@k per query (k <= 0: the whole list). ``gains`` are in rank order, ``ideal`` the same
    gains in decreasing order within each query (``ideal_gains``)."""
    n_queries = offsets.shape[0] - 1
    out = np.empty(n_queries)
    for q in range(n_queries):
        start, end = offsets[q], offsets[q + 1]
        n = end - start
        depth = n if k <= 0 else min(k, n)
        idcg = _dcg(ideal, start, depth, discount)
        if idcg <= 0.0:
            out[q] = empty_value
            continue
        if short_zero and k > 0 and n < k:
            out[q] = 0.0
            continue
        out[q] = _dcg(gains, start, depth, discount) / idcg
    return out


@njit(cache=True, nogil=True)
def ap_kernel(relevant, offsets, cutoff, denominator_in_cutoff, empty_value):
    """Average precision per query; ``cutoff`` <= 0 means the whole list."""
    n_queries = offsets.shape[0] - 1
    out = np.empty(n_queries)
    for q in range(n_queries):
        start, end = offsets[q], offsets[q + 1]
        n = end - start
        depth = n if cutoff <= 0 else min(cutoff, n)
        total = 0
        for i in range(start, end):
            total += relevant[i]
        found = 0
        precision_sum = 0.0
        for i in range(depth):
            if relevant[start + i]:
                found += 1
                precision_sum += found / (i + 1.0)
        denominator = found if denominator_in_cutoff else total
        out[q] = empty_value if total == 0 or denominator == 0 else precision_sum / denominator
    return out


@njit(cache=True, nogil=True)
def _hits_in_top(relevant, start, end, k):
    """(relevant documents in the top k, relevant documents) of one query's ranked rows."""
    hits = 0
    total = 0
    for i in range(end - start):
        total += relevant[start + i]
        if i < k:
            hits += relevant[start + i]
    return hits, total


@njit(cache=True, nogil=True)
def precision_kernel(relevant, offsets, k, pad, empty_value):
    """P@k per query: relevant in the top min(k, n) over k (``pad``), or 0 when n < k."""
    n_queries = offsets.shape[0] - 1
    out = np.empty(n_queries)
    for q in range(n_queries):
        n = offsets[q + 1] - offsets[q]
        hits, total = _hits_in_top(relevant, offsets[q], offsets[q + 1], k)
        if total == 0:
            out[q] = empty_value
        elif n < k and not pad:
            out[q] = 0.0
        else:
            out[q] = hits / k
    return out


@njit(cache=True, nogil=True)
def recall_kernel(relevant, offsets, n_relevant, cutoffs, empty_value):
    """Relevant documents in the top ``cutoffs[q]`` over ``n_relevant[q]``, the query's relevant
    documents (those of the list, or of the qrels for a run). Recall@k: every cut-off k (trec_eval's
    recall_k); R-precision: the cut-off R = ``n_relevant`` (trec_eval's Rprec)."""
    n_queries = offsets.shape[0] - 1
    out = np.empty(n_queries)
    for q in range(n_queries):
        hits, _ = _hits_in_top(relevant, offsets[q], offsets[q + 1], cutoffs[q])
        out[q] = empty_value if n_relevant[q] == 0 else hits / n_relevant[q]
    return out


@njit(cache=True, nogil=True)
def success_kernel(relevant, offsets, k, empty_value):
    """Success@k per query: 1 when a relevant document is in the top k (trec_eval's success_k)."""
    n_queries = offsets.shape[0] - 1
    out = np.empty(n_queries)
    for q in range(n_queries):
        hits, total = _hits_in_top(relevant, offsets[q], offsets[q + 1], k)
        out[q] = 1.0 if hits > 0 else (empty_value if total == 0 else 0.0)
    return out


@njit(cache=True, nogil=True)
def ap_given_kernel(relevant, offsets, n_relevant, cutoff):
    """AP per query over the top ``cutoff`` (<= 0: all) with R = ``n_relevant[q]`` as denominator,
    the relevant documents of the qrels, retrieved or not (trec_eval's map and map_cut); 0 when R = 0."""
    n_queries = offsets.shape[0] - 1
    out = np.zeros(n_queries)
    for q in range(n_queries):
        start, end = offsets[q], offsets[q + 1]
        depth = end - start if cutoff <= 0 else min(cutoff, end - start)
        found = 0
        total = 0.0
        for i in range(depth):
            if relevant[start + i]:
                found += 1
                total += found / (i + 1.0)
        if n_relevant[q] > 0:
            out[q] = total / n_relevant[q]
    return out


@njit(cache=True, nogil=True)
def ndcg_given_kernel(gains, offsets, ideal, ideal_offsets, discount, k):
    """NDCG@k per query (k <= 0: all) with the ideal DCG from ``ideal`` (each query's judged gains,
    sorted descending: the qrels' for a run, as trec_eval); 0 when the ideal DCG is 0."""
    n_queries = offsets.shape[0] - 1
    out = np.zeros(n_queries)
    for q in range(n_queries):
        a, b = ideal_offsets[q], ideal_offsets[q + 1]
        idcg = _dcg(ideal, a, b - a if k <= 0 else min(k, b - a), discount)
        if idcg <= 0.0:
            continue
        start, end = offsets[q], offsets[q + 1]
        out[q] = _dcg(gains, start, end - start if k <= 0 else min(k, end - start), discount) / idcg
    return out


@njit(cache=True, nogil=True)
def bpref_kernel(relevant, judged, offsets, n_relevant, n_nonrelevant, empty_value):
    """bpref per query (Buckley & Voorhees 2004, trec_eval's m_bpref): each retrieved relevant
    document scores 1 - min(judged non-relevant above it, R) / min(R, N), the mean over R; unjudged
    documents are skipped. R, N: the query's judged relevant and non-relevant documents."""
    n_queries = offsets.shape[0] - 1
    out = np.empty(n_queries)
    for q in range(n_queries):
        r, n_bad = n_relevant[q], n_nonrelevant[q]
        if r == 0:
            out[q] = empty_value
            continue
        above = 0
        total = 0.0
        for i in range(offsets[q], offsets[q + 1]):
            if not judged[i]:
                continue
            if relevant[i]:
                total += 1.0 if above == 0 else 1.0 - min(above, r) / min(r, n_bad)
            else:
                above += 1
        out[q] = total / r
    return out


@njit(cache=True, nogil=True)
def rr_kernel(relevant, offsets, k, empty_value):
    """Reciprocal rank of the first relevant document within the top k (k <= 0: anywhere)."""
    n_queries = offsets.shape[0] - 1
    out = np.empty(n_queries)
    for q in range(n_queries):
        start, end = offsets[q], offsets[q + 1]
        n = end - start
        depth = n if k <= 0 else min(k, n)
        out[q] = 0.0
        total = 0
        for i in range(n):
            total += relevant[start + i]
        if total == 0:
            out[q] = empty_value
            continue
        for i in range(depth):
            if relevant[start + i]:
                out[q] = 1.0 / (i + 1.0)
                break
    return out


@njit(cache=True, nogil=True)
def auc_kernel(relevant, offsets, empty_value):
    """Fraction of (relevant, irrelevant) pairs ranked in the right order.

    A query without a relevant document scores ``empty_value``; one without an irrelevant
    document is ranked perfectly whatever the order, and scores 1.
    """
    n_queries = offsets.shape[0] - 1
    out = np.empty(n_queries)
    for q in range(n_queries):
        start, end = offsets[q], offsets[q + 1]
        positives = 0
        correct = 0
        for i in range(start, end):
            if relevant[i]:
                positives += 1
            else:
                correct += positives  # every relevant document seen so far is above this one
        negatives = (end - start) - positives
        if positives == 0:
            out[q] = empty_value
        elif negatives == 0:
            out[q] = 1.0
        else:
            out[q] = correct / (positives * negatives)
    return out
