"""The numba loops of the measures ``structrank.metrics.tool_measures`` adds: ERR@k, RBP and its residual,
infAP and Judged@k, and the rankings their reference tools make of a run.

As in ``query_loops``, every kernel takes each query's documents in rank order (query q's at
``offsets[q]:offsets[q + 1]``) and writes one value per query; the rules arrive as plain arguments.
Each loop transcribes its reference tool's arithmetic in the tool's order of operations (gdeval's ERR,
trec_eval's ``m_infap.c``, trectools' ``get_rbp``), so that the values agree to the last bits.
"""

from __future__ import annotations

import numpy as np

from structrank.metrics.query_loops import stable_sort_desc
from structrank.numba_cache import njit

#: how a tool orders documents of equal score (``tool_order``): docno descending (gdeval, as trec_eval),
#: docno ascending (ir_measures' judged provider sorts by (-score, docno)), or the run's own order (cwl_eval:
#: Python's stable sort of the run as given)
DOCNO_DESC, DOCNO_ASC, INPUT_ORDER = 0, 1, 2

#: infAP's four kinds of retrieved document (trec_eval's form_res_rels): not in the qrels, in them with a
#: negative label (pooled, not judged), judged below the relevance level, judged relevant
NONPOOL, UNJUDGED, NONREL, REL = 0, 1, 2, 3

#: trec_eval's INFAP_EPSILON (trec_eval.h), which keeps infAP's estimate defined with no judged document above
INFAP_EPSILON = 0.00001


@njit(cache=True, nogil=True)
def tool_order(scores, arrival, offsets, rule):
    """Positions of a run ranked as trec_eval ranks it (``scores``, double, and ``arrival``, each entry's
    place in the run as given, both in that ranking) reordered as a tool that compares scores as doubles
    ranks it: ``order[offsets[q]:offsets[q + 1]]`` are query q's positions, best first.

    trec_eval's ranking (single-precision scores, then docno descending) sorts any two documents of equal
    double score by docno descending, so a stable sort by double score from it gives ``DOCNO_DESC``, from
    its reverse ``DOCNO_ASC``, and from the run's own order ``INPUT_ORDER``."""
    n = scores.shape[0]
    order = np.arange(n)
    buffer = np.empty(n, np.int64)
    later = -arrival  # the earlier entry ranks above: a descending sort of the negated places
    for q in range(offsets.shape[0] - 1):
        a, b = offsets[q], offsets[q + 1]
        if rule == DOCNO_ASC:
            order[a:b] = order[a:b][::-1].copy()
        elif rule == INPUT_ORDER:
            stable_sort_desc(order, a, b, later, buffer)
        stable_sort_desc(order, a, b, scores, buffer)
    return order


@njit(cache=True, nogil=True)
def err_kernel(grades, offsets, k, max_grade):
    """ERR@k per query (k <= 0: the whole list; Chapelle et al. 2009) as gdeval computes it: a document of
    grade g stops the user with R = (2^g - 1) / 2^max_grade; ERR = sum_i R_i / i prod_{j<i} (1 - R_j)."""
    n_queries = offsets.shape[0] - 1
    out = np.zeros(n_queries)
    scale = 2.0 ** max_grade
    for q in range(n_queries):
        start, end = offsets[q], offsets[q + 1]
        depth = end - start if k <= 0 else min(k, end - start)
        score = 0.0
        decay = 1.0
        for i in range(depth):
            r = (2.0 ** grades[start + i] - 1.0) / scale
            score += r * decay / (i + 1.0)
            decay *= 1.0 - r
        out[q] = score
    return out


@njit(cache=True, nogil=True)
def rbp_kernel(gains, scores, offsets, k, p, average_ties, tail):
    """Rank-biased precision per query (Moffat & Zobel 2008) over the top k (k <= 0: the whole list):
    sum_i gain_i (1 - p) p^(i - 1). With ``average_ties``, the documents of a run of equal ``scores``
    within the top k share the mean of their weights (trectools' ``get_rbp``, ``average_ties=True``).
    With ``tail``, p^depth is added: the weight of the ranks past the list (or past k), which RBP's
    residual counts as unknown."""
    n_queries = offsets.shape[0] - 1
    out = np.zeros(n_queries)
    for q in range(n_queries):
        start, end = offsets[q], offsets[q + 1]
        depth = end - start if k <= 0 else min(k, end - start)
        total = 0.0
        i = 0
        while i < depth:
            j = i + 1
            if average_ties:
                while j < depth and scores[start + j] == scores[start + i]:
                    j += 1
            weight = 0.0
            for t in range(i, j):
                weight += (1.0 - p) * p ** t
            weight /= j - i
            for t in range(i, j):
                total += gains[start + t] * weight
            i = j
        out[q] = total + p ** depth if tail else total
    return out


@njit(cache=True, nogil=True)
def infap_kernel(kind, offsets, n_relevant):
    """Inferred AP per query (Yilmaz & Aslam 2006) as trec_eval's ``m_infap.c`` computes it: a relevant
    document at rank j + 1 adds 1/(j+1) + j/(j+1) * (pooled above / j) * (relevant above + eps) /
    (judged above + 2 eps), the documents above counted by ``kind`` (NONPOOL ones are skipped, UNJUDGED ones
    count as pooled but not as judged); the sum over the qrels' relevant documents ``n_relevant[q]``."""
    n_queries = offsets.shape[0] - 1
    out = np.zeros(n_queries)
    for q in range(n_queries):
        nonrel = 0
        rel = 0
        unjudged = 0
        total = 0.0
        for j in range(offsets[q + 1] - offsets[q]):
            c = kind[offsets[q] + j]
            if c == NONPOOL:
                continue
            if c == UNJUDGED:
                unjudged += 1
                continue
            if c == NONREL:
                nonrel += 1
                continue
            rel += 1
            if j == 0:
                total += 1.0
            else:
                fj = float(j)
                total += 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * ((rel - 1 + nonrel + unjudged) / fj) * (
                    (rel - 1 + INFAP_EPSILON) / (rel - 1 + nonrel + 2 * INFAP_EPSILON))
        out[q] = total / n_relevant[q] if n_relevant[q] else total
    return out


@njit(cache=True, nogil=True)
def judged_kernel(pooled, offsets, k):
    """Judged@k per query (k <= 0: the whole list): the share of the top min(k, n) documents that the qrels
    name, over min(k, n) (ir_measures' judged provider); 0 for an empty list."""
    n_queries = offsets.shape[0] - 1
    out = np.zeros(n_queries)
    for q in range(n_queries):
        start, end = offsets[q], offsets[q + 1]
        depth = end - start if k <= 0 else min(k, end - start)
        found = 0
        for i in range(depth):
            found += pooled[start + i]
        if depth:
            out[q] = found / depth
    return out
