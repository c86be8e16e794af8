"""MAP with the positional map of Haponchyk & Moschitti (2018): greedy, exact and plain inference.

The positional joint feature map (Eq. 1) weights the document at position j by ``v_j``
(non-increasing, ``v_j = 1/j`` by default): ``Psi(x, r) = sum_j v_j x_{r^j}``, so with the scores
``s = X w`` a ranking is worth ``w . Psi = sum_j v_j s_{r^j}`` and its coefficient vector gives each
document the weight of its position. The loss is ``Delta_ap = 1 - AP``, which Eq. 5 decomposes
over the bad documents: a bad document at position j costs ``l_j = (1/P) sum_{k > j, good} 1/k``.
Read over the good documents instead, the same sum says that a good document at position k
costs ``(#bad above k) / (P k)``.

Each kernel solves, for one query with binary relevance ``z``,

    max over rankings r of  sum_j v_j s_{r^j} + scale * Delta_ap(r)

(``scale`` is the perceptron's loss scaling C of Alg. 1 line 5; 1 for the latent SVM):

- ``greedy``, the paper's Sec. 4.2 (Eqs. 6-7): positions are filled from the bottom; at position
  j the item placed is the argmin over the remaining items of ``v_j s_d + scale * [d bad] l_j``.
  Within each class the argmin is the lowest-scoring remaining item, so only the heads of the
  ascending good and bad lists compete: O(N log N) for the sort, O(N) after it. Each item is
  optimal given the partial ranking below it; the whole ranking need not be (test_latent.py).
  Why argmin: at scale 0 this merge of the two ascending lists is exactly the sort by score,
  i.e. the argmax of ``w . Psi``; the loss term only pushes bad documents up.
- ``exact``, the "*" models: by the rearrangement inequality some maximiser keeps each class in
  decreasing score order, so the search is over interleavings of the two sorted lists. With the
  loss read over good documents the objective is a sum over positions of terms that depend only
  on how many good and bad documents are above, so a dynamic programme over (good placed, bad
  placed) finds the best interleaving exactly in O(P N-) time and memory, instead of
  enumerating the C(N, P) interleavings.
- ``none``: the argmax of ``w . Psi`` alone (plain LSP): the greedy at scale 0, which breaks
  score ties pessimistically (good below bad), so that a model with tied scores is updated.

``star`` gives the latent ground truth of Eq. 3: good documents on top by decreasing score, bad
below likewise. ``positions="positives"`` keeps only the top P positions in the coefficients
(the LSSVM variant of Sec. 4.1; inference still uses all N).

Queries without a good or without a bad document cannot be violated: their structure is the
latent ground truth and their loss 0.

``structrank.losses.map.PositionalAPLoss`` is the loss object that runs them (``run_positional``,
``latent_star``).
"""

from __future__ import annotations

import numpy as np

from structrank.errors import DataValidationError
from structrank.numba_cache import njit
from structrank.oracles.po import _split_sorted

INFERENCES = ("greedy", "exact", "none")
#: the exact DP fills (relevant + 1) x (others + 1) cells of 9 bytes per query: past 10^8 cells
#: (9 * 10^8 bytes; docs/BENCHMARKS.md, "Positional MAP inference", times the exact search) a query is
#: refused rather than left to exhaust memory or time
MAX_EXACT_CELLS = 10**8


@njit(cache=True, nogil=True)
def ap_loss_of_order(order, z):
    """``1 - AP`` of a ranking (document indices best first); 0 without good documents."""
    n_good = 0
    bad_above = 0
    total = 0.0
    for pos in range(order.shape[0]):
        if z[order[pos]]:
            n_good += 1
            total += bad_above / (pos + 1.0)
        else:
            bad_above += 1
    return total / n_good if n_good else 0.0


@njit(cache=True, nogil=True)
def latent_truth(s, z, order):
    """Eq. 3: good documents by decreasing score, then bad ones likewise."""
    good, bad = _split_sorted(s, z)
    order[: good.shape[0]] = good
    order[good.shape[0]:] = bad


@njit(cache=True, nogil=True)
def coef_of_order(order, v, top, coef):
    """Each document gets the weight of its position; positions from ``top`` on get 0."""
    for pos in range(order.shape[0]):
        coef[order[pos]] = v[pos] if pos < top else 0.0


@njit(cache=True, nogil=True)
def greedy_kernel(s, z, v, scale, order):
    """The bottom-up greedy of Eqs. 6-7 into ``order``; returns its ``1 - AP``."""
    good, bad = _split_sorted(s, z)  # each by decreasing score
    n_good = good.shape[0]
    n_bad = bad.shape[0]
    a = 0  # good documents placed so far; the lowest remaining one is good[n_good - 1 - a]
    b = 0  # bad ones likewise
    below = 0.0  # sum over good documents already placed at positions k of 1/k (1-based)
    for pos in range(s.shape[0] - 1, -1, -1):
        if a == n_good:
            pick_good = False
        elif b == n_bad:
            pick_good = True
        else:
            cost_bad = v[pos] * s[bad[n_bad - 1 - b]] + scale * below / n_good  # scale * l_j of a bad one here
            pick_good = v[pos] * s[good[n_good - 1 - a]] <= cost_bad  # ties: the good one goes down (more loss)
        if pick_good:
            order[pos] = good[n_good - 1 - a]
            a += 1
            below += 1.0 / (pos + 1.0)
        else:
            order[pos] = bad[n_bad - 1 - b]
            b += 1
    return ap_loss_of_order(order, z)


@njit(cache=True, nogil=True)
def exact_kernel(s, z, v, scale, order):
    """The best interleaving of the score-sorted classes, by dynamic programming; returns ``1 - AP``."""
    good, bad = _split_sorted(s, z)  # each by decreasing score
    n_good = good.shape[0]
    n_bad = bad.shape[0]
    # value[i, m]: best worth of the top i + m positions holding the i best good and m best bad
    value = np.full((n_good + 1, n_bad + 1), -np.inf)
    came_from_good = np.zeros((n_good + 1, n_bad + 1), np.bool_)
    value[0, 0] = 0.0
    for i in range(n_good + 1):
        for m in range(n_bad + 1):
            if i == 0 and m == 0:
                continue
            pos = i + m - 1  # 0-based position of the last of these documents
            best = -np.inf
            if i > 0:  # a good document at pos, with m bad ones above it
                best = value[i - 1, m] + v[pos] * s[good[i - 1]] + scale * m / (n_good * (pos + 1.0))
                came_from_good[i, m] = True
            if m > 0:
                cand = value[i, m - 1] + v[pos] * s[bad[m - 1]]
                if cand > best:  # ties keep the good one lower down: more loss for the same worth
                    best = cand
                    came_from_good[i, m] = False
            value[i, m] = best
    i, m = n_good, n_bad
    while i + m > 0:
        pos = i + m - 1
        if came_from_good[i, m]:
            order[pos] = good[i - 1]
            i -= 1
        else:
            order[pos] = bad[m - 1]
            m -= 1
    return ap_loss_of_order(order, z)


@njit(cache=True, nogil=True)
def run_positional(kernel, s, z, offsets, v, scale, positives_only, coef, order):
    """Run inference number ``kernel`` (0 greedy, 1 exact) over every query; returns the losses.

    ``coef`` gets the positional coefficients of each query's structure (only the top P
    positions when ``positives_only``); ``order`` the rankings (indices within the query).
    """
    n_queries = offsets.shape[0] - 1
    delta = np.zeros(n_queries)
    for q in range(n_queries):
        a, b = offsets[q], offsets[q + 1]
        n_good = 0
        for i in range(a, b):
            n_good += z[i]
        top = n_good if positives_only else b - a
        if n_good == 0 or n_good == b - a:
            latent_truth(s[a:b], z[a:b], order[a:b])
        elif kernel == 0:
            delta[q] = greedy_kernel(s[a:b], z[a:b], v, scale, order[a:b])
        else:
            delta[q] = exact_kernel(s[a:b], z[a:b], v, scale, order[a:b])
        coef_of_order(order[a:b], v, top, coef[a:b])
    return delta


@njit(cache=True, nogil=True)
def latent_star(s, z, offsets, v, positives_only, coef):
    """Coefficients of every query's latent ground truth (Eq. 3) for the scores ``s``."""
    order = np.empty(s.shape[0], np.int64)
    for q in range(offsets.shape[0] - 1):
        a, b = offsets[q], offsets[q + 1]
        n_good = 0
        for i in range(a, b):
            n_good += z[i]
        latent_truth(s[a:b], z[a:b], order[a:b])
        coef_of_order(order[a:b], v, n_good if positives_only else b - a, coef[a:b])


def check_exact_size(z, offsets) -> None:
    """Refuse a query whose exact DP would pass ``MAX_EXACT_CELLS``, naming it and the way out."""
    if offsets.shape[0] < 2 or z.shape[0] == 0:
        return
    n_good = np.add.reduceat(z.astype(np.int64), offsets[:-1]) * (np.diff(offsets) > 0)
    cells = (n_good + 1) * (np.diff(offsets) - n_good + 1)
    q = int(np.argmax(cells))
    if cells[q] > MAX_EXACT_CELLS:
        raise DataValidationError(
            f"query {q} (rows {offsets[q]}-{offsets[q + 1] - 1}) has {n_good[q]:,} relevant and "
            f"{offsets[q + 1] - offsets[q] - n_good[q]:,} other documents: exact inference would fill {cells[q]:,} DP "
            f"cells, past the limit of {MAX_EXACT_CELLS:,} (structrank.oracles.positional.MAX_EXACT_CELLS); use "
            "inference='greedy' (the paper's, O(n log n)) for lists this long")
