"""P@k with phi_po: the loss is the precision at k the ranking gives up against the ideal one.

With binary relevance, ``P@k = (good documents in the top min(k, n)) / k`` (LETOR 4.0's padded
P@k), and the loss of a ranking that holds j good documents in its top is

    Delta(j) = (min(n+, k') - j) / k,          k' = min(k, n),

0 for the ideal ranking. Loss-augmented inference with phi_po (Joachims 2005's argument for
multivariate P@k): the loss depends only on j, and for a fixed j the best ranking puts the j
best-scoring good and the k' - j best-scoring bad documents on top, each part sorted by score
(pairs within a part are free and take the orientation their scores prefer; pairs across the
cut are forced, and an exchange of a good document for a better-scoring one across the cut never
lowers ``s . c``). So the oracle tries every feasible j, in O(k' n) per query after the sorts.
Equal values keep the smaller j: among tied rankings the one of larger loss.

``ranked_loss_batch`` takes each query's normaliser as an argument (k here), so another regret in
the number of good documents in the top k is this oracle with other normalisers (a subclass of
``TopKLoss`` overriding ``normalisers``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from structrank.losses.base import RankingLoss, Violation, relevance, whole_number
from structrank.losses.registry import register
from structrank.numba_cache import njit
from structrank.feature_maps import po_coef_from_order, po_star


@njit(cache=True, nogil=True)
def _merge_by_score(s, first, second, out, at):
    """Write the rows ``first`` and ``second`` (each sorted by descending score) into ``out[at:]``
    merged by descending score; returns the next free position."""
    i = j = 0
    while i < first.shape[0] or j < second.shape[0]:
        if j == second.shape[0] or (i < first.shape[0] and s[first[i]] >= s[second[j]]):
            out[at] = first[i]
            i += 1
        else:
            out[at] = second[j]
            j += 1
        at += 1
    return at


@njit(cache=True, nogil=True)
def ranked_loss_query(s, z, k, loss_of_j, coef, order):
    """The max-violating ranking of one query for a loss ``loss_of_j[j]`` that depends only on the
    number j of good documents in the top min(k, n); fills ``coef`` and ``order``, returns its loss."""
    n = s.shape[0]
    by_score = np.argsort(-s, kind="mergesort")
    goods = by_score[z[by_score] == 1]
    bads = by_score[z[by_score] == 0]
    n_good, n_bad = goods.shape[0], bads.shape[0]
    if n_good == 0 or n_bad == 0:  # nothing can be misordered: the ideal ranking, loss 0
        _merge_by_score(s, goods, bads, order, 0)
        for i in range(n):
            coef[i] = 0.0
        return 0.0
    top = min(k, n)
    candidate = np.empty(n, np.int64)
    trial = np.empty(n)
    best, best_loss = -np.inf, 0.0
    for j in range(max(0, top - n_bad), min(n_good, top) + 1):
        at = _merge_by_score(s, goods[:j], bads[:top - j], candidate, 0)
        _merge_by_score(s, goods[j:], bads[top - j:], candidate, at)
        po_coef_from_order(candidate, z, trial)
        value = loss_of_j[j]
        for i in range(n):
            value += s[i] * trial[i]
        if value > best:
            best, best_loss = value, loss_of_j[j]
            order[:] = candidate
            coef[:] = trial
    return best_loss


@njit(cache=True, nogil=True)
def ranked_loss_batch(s, z, offsets, k, normalisers, coef, order):
    """``ranked_loss_query`` over every query with the loss ``(min(n+, k, n) - j) / normalisers[q]``."""
    n_queries = offsets.shape[0] - 1
    delta = np.empty(n_queries)
    for q in range(n_queries):
        a, b = offsets[q], offsets[q + 1]
        n_good = 0
        for i in range(a, b):
            n_good += z[i]
        best_j = min(n_good, k, b - a)
        loss_of_j = np.empty(best_j + 1)
        for j in range(best_j + 1):
            loss_of_j[j] = (best_j - j) / normalisers[q]
        delta[q] = ranked_loss_query(s[a:b], z[a:b], k, loss_of_j, coef[a:b], order[a:b])
    return delta


@dataclass(frozen=True)
class TopKLoss(RankingLoss):
    """P@k with phi_po on binary relevance: the regret in good documents in the top k, over k."""

    k: int = 10
    relevant_from: int = 1

    name = "precision"
    feature_map = "po"

    def __post_init__(self):
        if not whole_number(self.k) or self.k < 1:
            raise ValueError(f"k must be a positive integer, got {self.k!r}")

    @property
    def metrics(self) -> tuple:
        return (f"p@{self.k}",)

    def normalisers(self, z, offsets) -> np.ndarray:
        """Each query's divisor of the regret: k for P@k."""
        return np.full(len(offsets) - 1, float(self.k))

    @property
    def label(self) -> str:
        return f"{self.name}@{self.k}/po"

    def constant_on(self, longest: int):
        """A top min(k, n) that holds the whole list counts its good documents whatever their order."""
        if self.k < longest:
            return None
        return (f"{self.metrics[0]} counts the good documents in the top min(k, n), which is the whole list when it "
                "has at most k documents, whatever their order")

    def _run(self, scores, labels, offsets, out=None):
        scores = np.ascontiguousarray(scores, dtype=np.float64)
        offsets = np.asarray(offsets, dtype=np.int64)
        coef, order = out if out is not None else (np.empty(scores.shape[0]), np.empty(scores.shape[0], np.int64))
        z = relevance(labels, self.relevant_from)
        delta = ranked_loss_batch(scores, z, offsets, int(self.k), self.normalisers(z, offsets), coef, order)
        return coef, delta, order

    def batch(self, scores, labels, offsets, out=None):
        coef, delta, _ = self._run(scores, labels, offsets, out)
        return coef, delta

    def oracle(self, scores, labels) -> Violation:
        coef, delta, order = self._run(scores, labels, [0, len(scores)])
        return Violation(coef, float(delta[0]), order)

    def star(self, scores, labels, offsets) -> np.ndarray:
        """phi_po's ideal ranking (every good document above every bad one): its top holds min(n+, k') goods."""
        return po_star(relevance(labels, self.relevant_from), offsets)


@register("precision", "P@k regret (min(n+, k) - good in the top k) / k with phi_po (Joachims 2005's multivariate "
          "P@k); binary relevance", paper="Joachims 2005")
def precision_loss(k=10, relevant_from=1):
    return TopKLoss(k, relevant_from)
