"""A structured ranking loss seen from the scores: each query's value and its gradient.

The spine of structrank (DESIGN.md) makes every loss a function of the scores alone, so any
scorer that takes a gradient on its scores trains on any loss: boosted trees
(``structured_trees``), neural networks (``structrank.torch``), and the linear learners. For a
structural loss the value of a query is the hinge ``Delta(r_hat) + s . (c_hat - c_star)`` of its
max-violating structure against the ideal one (>= 0; 0 when nothing violates the margin) and its
subgradient ``c_hat - c_star``; for a permutation CRF objective (Volkovs et al. 2011) the value and
exact gradient of ``structrank.oracles.crf`` on a subset of at most 6 documents per query holding
every relevance level (the paper's training subsets), drawn anew at each call.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from structrank.errors import DataValidationError
from structrank.oracles import DEFAULT_COMBO, make_loss
from structrank.oracles.crf import OBJECTIVES, SUBSET_SIZE, query_objective

#: the structural losses (their feature map, gain and k as in StructSVMRanker)
STRUCTURAL = ("auc", "map", "ndcg", "ndcg-nc", "mrr", "combo")
#: the permutation CRF objectives, as "crf-<objective>"
CRF = tuple(f"crf-{name}" for name in OBJECTIVES)
LOSSES = STRUCTURAL + CRF


@dataclass(frozen=True)
class ScoreLoss:
    """A loss by name with its options; ``bind(y, offsets)`` gives ``f(scores) -> (values, gradient)``.

    ``values`` holds one value per query, ``gradient`` the derivative of their sum with respect to
    each row's score. ``gain`` must be resolved ("binary" or "exp2"; see ``ssvm.resolve_gain``).

    >>> f = ScoreLoss("map").bind(np.array([1, 0, 0]), np.array([0, 3]))
    >>> values, grad = f(np.zeros(3))     # at w = 0 the hinge is the loss of the worst ranking
    >>> round(float(values[0]), 4), bool(grad[0] < 0 < grad[1])
    (0.6667, True)
    """

    loss: str = "ndcg"
    k: int = 10
    feature_map: str | None = None
    gain: str = "binary"
    discount: str = "letor"
    dorm_cut: int | None = None
    components: tuple = DEFAULT_COMBO
    relevant_from: int = 1
    crf_param: float = 1.0
    random_state: int | None = 0

    def __post_init__(self):
        if self.loss not in LOSSES:
            raise ValueError(f"loss must be one of {', '.join(LOSSES)}, got {self.loss!r}")

    def bind(self, y, offsets):
        y, offsets = np.asarray(y), np.asarray(offsets, dtype=np.int64)
        return self._crf(y, offsets) if self.loss in CRF else self._structural(y, offsets)

    def _structural(self, y, offsets):
        loss = make_loss(self.loss, self.feature_map, self.k, self.discount, self.relevant_from, self.dorm_cut,
                         self.gain, tuple(self.components))

        def f(scores):
            scores = np.ascontiguousarray(scores, dtype=np.float64)
            c_hat, delta = loss.batch(scores, y, offsets)
            grad = c_hat - loss.star(scores, y, offsets)
            values = delta + np.add.reduceat(scores * grad, offsets[:-1]) if scores.size else np.zeros(0)
            return values, grad

        return f

    def _crf(self, y, offsets):
        objective = self.loss[len("crf-"):]
        rng = np.random.default_rng(self.random_state)
        labels = y.astype(np.float64)
        # queries whose documents share one label have no gradient (every ranking is correct)
        queries = [q for q in range(offsets.size - 1) if np.ptp(labels[offsets[q]:offsets[q + 1]]) > 0]
        for q in queries:
            if np.unique(labels[offsets[q]:offsets[q + 1]]).size > SUBSET_SIZE:
                raise DataValidationError(f"query {q} has more than {SUBSET_SIZE} relevance levels: a CRF subset "
                                          f"of {SUBSET_SIZE} documents cannot hold each")

        def f(scores):
            scores = np.asarray(scores, dtype=np.float64)
            values, grad = np.zeros(offsets.size - 1), np.zeros(scores.shape[0])
            for q in queries:
                rows = np.arange(offsets[q], offsets[q + 1])
                if rows.size > SUBSET_SIZE:
                    rows = crf_subset(labels[rows], rng) + offsets[q]
                values[q], grad[rows] = query_objective(objective, scores[rows], labels[rows], float(self.crf_param))
            return values, grad

        return f


def crf_subset(labels, rng):
    """At most SUBSET_SIZE rows of one query with every relevance level in it (the CRF's subsets)."""
    order = rng.permutation(labels.size)
    _, first = np.unique(labels[order], return_index=True)  # one document of each level, drawn at random
    chosen = order[np.sort(first)]
    rest = np.setdiff1d(order, chosen, assume_unique=True)
    rest = rest[rng.permutation(rest.size)][: SUBSET_SIZE - chosen.size]
    return np.concatenate([chosen, rest])


class ScoreLossScorerMixin:
    """For a ranker with a ``loss`` of ``LOSSES`` and the loss options as parameters (trees, MLP):
    ``score`` measures the loss's own metric, and ``score_loss`` is the fitted loss."""

    def _scoring(self):
        from structrank.learners.ssvm import loss_scoring

        if self.loss in CRF:
            return ("ndcg@5",), "letor4", None  # Volkovs et al. report NDCG@1-5; their SGD picks by NDCG@5 too
        return loss_scoring(self.loss, self.k, self.components, getattr(self, "gain_", self.gain), self.discount,
                            self.relevant_from)

    def _fit_loss(self, y):
        """Check ``loss`` and resolve ``gain_`` on the training labels (as ``StructSVMRanker``)."""
        from structrank.learners.ssvm import resolve_gain

        if self.loss not in LOSSES:
            raise ValueError(f"loss must be one of {', '.join(LOSSES)}, got {self.loss!r}")
        self.gain_ = resolve_gain(self.gain, self.loss if self.loss in STRUCTURAL else "crf", self.feature_map,
                                  "ideal", y)

    def score_loss(self, random_state=None):
        """The fitted loss as a ``ScoreLoss`` (its gain resolved)."""
        return ScoreLoss(self.loss, self.k, self.feature_map, str(getattr(self, "gain_", self.gain)), self.discount,
                         self.dorm_cut, tuple(self.components), self.relevant_from, self.crf_param,
                         self.random_state if random_state is None else random_state)
