"""Latent targets for clipped losses: the correct structure imputed by the current scores.

Why. The paper's structural SVMs compare every ranking with one ideal ranking r* (every good
document above every bad one). For a clipped loss that ideal asks for far more than the loss
does: NDCG@k is 0 as soon as the top min(k, n+) places hold good documents, MRR@k as soon as
the top place does. On long lists with many good documents (LETOR 3.0 OHSUMED: 148 documents and
51 good ones per training query) the hinge against r* is then lowest at w = 0, measured along the
SVM-auc direction (tests/library/test_ssvm_latent.py): the margin term pays for every misordered pair
of the list while the loss only sees the top k. SVM-mrr with phi_mrr fails for a sibling reason:
its oracle may choose *which* good document comes first, and it takes the lowest-scoring one
(Fig. 3), so the hinge asks every good document to beat the best bad ones.

The fix is the latent structural SVM of Yu & Joachims (2009), as in Haponchyk & Moschitti's
Eq. 3: the loss-zero rankings are all correct, and the one the learner is held to is the best
of them under the current scores. The objective

    1/2 |w|^2 + C/|Q| sum_q [max_r (Delta(r) + w.Psi(r)) - max_{h correct} w.Psi(h)]

is a difference of convex functions and CCCP solves it: impute h with the current w, solve the
convex structural SVM with h fixed, repeat (``structrank.learners.ssvm.cccp``). Each slack still
bounds the loss of the ranking by score, since that ranking maximises w.Psi.

- phi_po (NDCG@k, MRR@k): h puts the min(k, n+) (MRR: 1) best-scoring good documents on top,
  then every other document by score; misordered pairs below the top cancel between r and h.
- phi_dorm (DORM, NDCG@k): the same ranking, its coefficients A(rank); the paper's DORM already
  sorts each grade by score (``NDCGLoss.star``), the latent one frees the goods below k.
- phi_mrr: every correct ranking has Psi = 0, so the latent part is the oracle's: the first good
  document is the best-scoring one at the imputation (the tight bound's gmax, linearised), and the
  other good documents, which phi_mrr and Delta_MRR never see below it, are left out.

What it holds: ``latent_orders`` (the best loss-zero ranking of each query) and its coefficients
``latent_po_star``, ``latent_dorm_star`` and ``latent_graded_po_star`` (graded gains, for boosted
trees), and ``first_good_kept`` (phi_mrr). ``structrank.losses.latent.ImputedTarget`` is the loss held
to the correct structure they impute at some w.
"""

from __future__ import annotations

import numpy as np

from structrank.numba_cache import njit
from structrank.oracles.graded import _grades, graded_po_coef_from_order
from structrank.sorting import order_desc
from structrank.feature_maps import po_coef_from_order

def latent_orders(scores, z, offsets, top):
    """The best loss-zero ranking of every query, as one array of within-query orders.

    The ``min(top, n+)`` best-scoring good documents first, then all the others by score
    (ties in input order, as ``np.argsort(kind="stable")``). With ``top >= n+`` it is the ideal
    ranking with each kind sorted by score. It maximises w.Psi among the loss-zero rankings for
    phi_po (pairs below the head keep the score order) and for phi_dorm (a decreasing A(rank)
    pairs the best scores with the best ranks: the rearrangement inequality).
    """
    scores = np.asarray(scores, dtype=np.float64)
    z = np.asarray(z, dtype=np.int8)
    out = np.empty(scores.shape[0], dtype=np.int64)
    for q in range(offsets.shape[0] - 1):
        a, b = offsets[q], offsets[q + 1]
        by_score = np.argsort(-scores[a:b], kind="stable")
        goods = by_score[z[a:b][by_score] == 1]
        head = goods[: min(top, goods.size)]
        is_head = np.zeros(b - a, dtype=bool)
        is_head[head] = True
        out[a:b] = np.concatenate([head, by_score[~is_head[by_score]]])
    return out


def latent_po_star(scores, z, offsets, top) -> np.ndarray:
    """phi_po coefficients of the best loss-zero ranking of every query (``latent_orders``)."""
    z = np.asarray(z, dtype=np.int8)
    orders = latent_orders(scores, z, offsets, top)
    out = np.zeros(z.shape[0])
    for q in range(offsets.shape[0] - 1):
        a, b = offsets[q], offsets[q + 1]
        po_coef_from_order(orders[a:b], z[a:b], out[a:b])
    return out


def latent_graded_po_star(scores, grades, offsets, k) -> np.ndarray:
    """phi_po coefficients (graded: pairs of different grades) of each query's best loss-zero
    ranking of NDCG@k under ``scores``.

    A ranking has loss 0 when its top ``min(k, n)`` places hold the ideal grades in order; the best
    one under the scores puts there the documents of the ideal head (within the boundary grade, the
    best-scoring ones), each grade by score, then every other document by score, so that the pairs
    below the head take the scores' order and cancel against the max-violating ranking's (with
    binary grades this is ``latent_po_star``'s ranking). One numba pass over the queries: boosted
    trees impute it every round.
    """
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    grades = np.ascontiguousarray(grades, dtype=np.float64)
    out = np.zeros(scores.shape[0])
    _latent_graded_batch(scores, grades, np.asarray(offsets, dtype=np.int64), int(k), out)
    return out


@njit(cache=True, nogil=True)
def _latent_graded_batch(scores, grades, offsets, k, out):
    for q in range(offsets.shape[0] - 1):
        a, b = offsets[q], offsets[q + 1]
        grade, levels = _grades(grades[a:b])
        by_score = order_desc(scores[a:b])
        n = b - a
        order = np.empty(n, np.int64)
        in_head = np.zeros(n, np.bool_)
        placed = 0
        for level in range(levels.shape[0] - 1, -1, -1):  # the ideal order: grades down, each by score
            for i in by_score:
                if placed == min(k, n):
                    break
                if grade[i] == level:
                    order[placed] = i
                    in_head[i] = True
                    placed += 1
        for i in by_score:
            if not in_head[i]:
                order[placed] = i
                placed += 1
        graded_po_coef_from_order(order, grade, levels.shape[0], out[a:b])


def latent_dorm_star(scores, z, offsets, top, decay) -> np.ndarray:
    """phi_dorm coefficients (``decay(n)`` is A(rank)) of the best loss-zero ranking of every query."""
    orders = latent_orders(scores, z, offsets, top)
    out = np.zeros(orders.shape[0])
    for q in range(offsets.shape[0] - 1):
        a, b = offsets[q], offsets[q + 1]
        out[a + orders[a:b]] = decay(b - a)
    return out


def first_good_kept(scores, z, offsets) -> np.ndarray:
    """Rows an imputed SVM-mrr query keeps: its bad documents and its best-scoring good one."""
    scores = np.asarray(scores, dtype=np.float64)
    keep = np.asarray(z) == 0
    for q in range(offsets.shape[0] - 1):
        a, b = offsets[q], offsets[q + 1]
        goods = np.flatnonzero(z[a:b])
        if goods.size:
            keep[a + goods[np.argmax(scores[a:b][goods])]] = True  # first of equals: the input order
    return keep
