"""The oracles' sort: a stable argsort by decreasing score, as a radix sort on the scores' bits.

Every oracle starts by ordering a query's documents by score (Fact 3.2: each kind, or each grade,
stays in score order), and at 10,000 documents that sort was most of an oracle's time: numba's
``np.argsort(kind="mergesort")`` was much slower than numpy's (unstable) quicksort
(docs/BENCHMARKS.md, "Structured learning", sets each oracle call beside numpy's argsort).
A least-significant-digit radix sort is stable, linear in the documents, and gives the same
permutation as ``np.argsort(-s, kind="stable")`` (ties in input order, -0.0 tied with 0.0) for
finite scores.

``order_desc`` sorts from ``RADIX_MIN`` (1,024) documents by radix, below it by numba's merge sort.
Every numba oracle uses it, and so does ``evaluate`` when ties keep input order
(``metrics.query_loops.rank_segments``: the whole file by score, then a counting sort by query).
"""

from __future__ import annotations

import numpy as np

from structrank.numba_cache import njit

#: Below this many documents numba's merge sort is used: a radix pass clears and sums 2^11
#: buckets, more than a short list's whole sort costs.
RADIX_MIN = 1024
_DIGIT = 11
_BUCKETS = 1 << _DIGIT
_SIGN = np.uint64(1) << np.uint64(63)


@njit(cache=True, nogil=True)
def _ascending_keys(s):
    """Unsigned keys whose ascending order is the decreasing order of ``s``: the bits of ``-s``
    (sign flipped for positives, all bits for negatives, the usual float-to-integer map)."""
    keys = (-s + 0.0).view(np.uint64)  # + 0.0 turns -0.0 into 0.0, which argsort ties with it
    out = np.empty(keys.shape[0], np.uint64)
    for i in range(keys.shape[0]):
        u = keys[i]
        out[i] = ~u if u & _SIGN else u | _SIGN
    return out


@njit(cache=True, nogil=True)
def order_desc(s):
    """Indices of ``s`` by decreasing value, ties in input order (``np.argsort(-s, kind="stable")``)."""
    n = s.shape[0]
    if n < RADIX_MIN:
        return np.argsort(-s, kind="mergesort")
    keys = _ascending_keys(np.ascontiguousarray(s))
    order = np.arange(n)
    keys_out = np.empty(n, np.uint64)
    order_out = np.empty(n, np.int64)
    count = np.empty(_BUCKETS, np.int64)
    mask = np.uint64(_BUCKETS - 1)
    for shift in range(0, 64, _DIGIT):
        count[:] = 0
        for i in range(n):
            count[(keys[i] >> np.uint64(shift)) & mask] += 1
        if count.max() == n:  # every key has this digit: the pass would not move anything
            continue
        total = 0
        for d in range(_BUCKETS):
            total, count[d] = total + count[d], total
        for i in range(n):
            d = (keys[i] >> np.uint64(shift)) & mask
            keys_out[count[d]] = keys[i]
            order_out[count[d]] = order[i]
            count[d] += 1
        keys, keys_out = keys_out, keys
        order, order_out = order_out, order
    return order
