"""The loss contract: what every ranking loss gives a learner, seen from the scores alone.

A loss answers, for the scores of many queries (rows grouped by ``offsets``) and their labels:

- ``batch(scores, labels, offsets)`` -> ``(c_hat, delta)``: the structure it picks for each query
  (the max-violating one of a hinge, as feature-map coefficients, one per document) and its loss;
- ``star(scores, labels, offsets)`` -> ``c_star``: the target's coefficients (the ideal structure,
  or the best loss-zero one under the scores where ``star_varies``);
- ``value_and_grad(scores, labels, offsets)`` -> ``(values, grad)``: each query's loss value and
  the derivative of their sum with respect to every score (a hinge: ``Delta + s . (c_hat - c_star)``
  and its subgradient ``c_hat - c_star``; a CRF objective: its exact value and gradient);
- ``metrics`` and ``convention``: the metric it stands for (``score()`` measures it), and
  ``labels``: "binary" (relevance is label >= ``relevant_from``) or "graded".

``kind`` says what learners can do with it: a "hinge" has a max-violating structure (the
structural SVM, the perceptron and the latent SVM need one; any scorer can take its gradient), a
"probabilistic" objective has only a value and a gradient (the CRF learner, boosted trees, MLPs).
"""

from __future__ import annotations

import math
import numbers
from typing import NamedTuple

import numpy as np


def whole_number(value) -> bool:
    """Whether ``value`` is a finite whole real number (a cut-off ``k``): not None, text, a bool, NaN or inf."""
    return (isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
            and float(value).is_integer())


#: the two kinds of loss (``RankingLoss.kind``): a hinge has a max-violating structure, a probabilistic
#: objective only a value and a gradient
HINGE, PROBABILISTIC = "hinge", "probabilistic"


class Violation(NamedTuple):
    """The max-violating structure of one query.

    Examples
    --------
    >>> import numpy as np
    >>> from structrank.losses import get_loss
    >>> v = get_loss("map").oracle(np.array([0.0, 1.0, 0.5]), np.array([1, 0, 0]))
    >>> round(v.loss, 4), v.order.tolist(), v.coef.tolist()  # the good document ranked last
    (0.6667, [1, 2, 0], [-1.0, 0.5, 0.5])
    """

    coef: np.ndarray  #: its feature-map coefficients, one per document
    loss: float  #: its loss Delta
    order: np.ndarray  #: the ranking, document indices best first


class RankingLoss:
    """Base class of every registered loss (see the module docstring for the contract).

    Subclasses implement ``batch`` and ``star`` (hinges) or ``value_and_grad`` (probabilistic
    objectives), and set ``name``, ``feature_map``, ``metrics``, ``convention`` and ``labels``.

    Examples
    --------
    Registered losses are instances, built by ``get_loss``; a hinge gives its max-violating ranking
    and a (sub)gradient with respect to the scores:

    >>> import numpy as np
    >>> from structrank.losses import get_loss
    >>> loss = get_loss("map")
    >>> isinstance(loss, RankingLoss), loss.label, loss.kind, loss.metrics
    (True, 'map/po', 'hinge', ('map',))
    >>> values, grad = loss.value_and_grad(np.array([0.0, 1.0, 0.5]), np.array([1, 0, 0]), np.array([0, 3]))
    >>> values.round(4).tolist(), grad.tolist()  # c_hat - c_star
    ([2.1667], [-2.0, 1.0, 1.0])
    """

    name: str = ""
    feature_map: str = ""
    kind: str = HINGE
    labels: str = "binary"
    star_varies: bool = False  #: whether ``star`` depends on the scores
    metrics: tuple = ()
    convention: str = "auto"
    relevant_from: int = 1
    delta_scale: float = 1.0  #: how ``Delta`` enters the hinge value (a loss whose oracle scales it says so)

    @property
    def label(self) -> str:
        return f"{self.name}/{self.feature_map}"

    def batch(self, scores, labels, offsets, out=None):
        raise TypeError(f"{self.label} is a {self.kind} objective: it has no max-violating structure")

    def star(self, scores, labels, offsets) -> np.ndarray:
        raise TypeError(f"{self.label} is a {self.kind} objective: it has no target structure")

    def oracle(self, scores, labels) -> Violation:
        """The structure picked for one query. ``batch`` gives no ranking; subclasses that know
        theirs override this, others return the documents sorted by coefficient."""
        scores = np.ascontiguousarray(scores, dtype=np.float64)
        coef, delta = self.batch(scores, labels, np.array([0, scores.shape[0]], dtype=np.int64))
        return Violation(coef, float(delta[0]), np.argsort(-coef, kind="stable"))

    def value_and_grad(self, scores, labels, offsets):
        """Each query's hinge ``Delta + s . (c_hat - c_star)`` (>= 0) and its subgradient ``c_hat - c_star``."""
        scores = np.ascontiguousarray(scores, dtype=np.float64)
        offsets = np.asarray(offsets, dtype=np.int64)
        c_hat, delta = self.batch(scores, labels, offsets)
        grad = c_hat - self.star(scores, labels, offsets)
        return hinge_values(self.delta_scale * delta, scores, grad, offsets), grad

    def constant_on(self, longest: int):
        """Why every ranking of a list of at most ``longest`` documents has the same loss (a phrase naming the
        metric), or None when some ranking of such a list changes it. None here: for most losses a cut-off past
        the longest list only removes the cut (NDCG@k becomes NDCG, RR@k RR), which still orders the list."""
        return None

    def scoring(self) -> tuple:
        """``(metrics, convention, relevant_from)`` that ``score()`` uses: graded losses are judged
        on the labels as they are, binary ones on labels binarised at ``relevant_from``."""
        return tuple(self.metrics), self.convention, None if self.labels == "graded" else self.relevant_from


class OracleLoss(RankingLoss):
    """A hinge whose oracle also gives each query's ranking: subclasses implement
    ``_run(scores, labels, offsets, out=None) -> (coef, delta, order)`` over every query (their numba
    batch kernel, from ``structrank.oracles``), and ``star``; ``batch`` and ``oracle`` follow from it."""

    def relevance(self, labels) -> np.ndarray:
        """Binary relevance of each row: label >= ``relevant_from``."""
        return relevance(labels, self.relevant_from)

    def _run(self, scores, labels, offsets, out=None):
        raise NotImplementedError

    def oracle(self, scores, labels) -> Violation:
        """The max-violating structure of one query (its coefficients, its loss, its ranking)."""
        scores = np.ascontiguousarray(scores, dtype=np.float64)
        coef, delta, order = self._run(scores, labels, np.array([0, scores.shape[0]], dtype=np.int64))
        return Violation(coef, float(delta[0]), order)

    def batch(self, scores, labels, offsets, out=None):
        """``(c_hat, delta)`` for every query at once.

        ``out``: optional ``(coef, order)`` arrays (float64, int64) of the rows' length to fill,
        so that a caller running many batches reuses its memory (``structrank.parallel.scratch.scratch``).
        """
        coef, delta, _ = self._run(np.ascontiguousarray(scores, dtype=np.float64), labels, offsets, out)
        return coef, delta


def batch_outputs(n, out=None):
    """The ``(coef, order)`` arrays a batch oracle fills: the caller's ``out`` or new ones."""
    if out is None:
        return np.empty(n), np.empty(n, dtype=np.int64)
    coef, order = out
    if coef.shape != (n,) or order.shape != (n,) or coef.dtype != np.float64 or order.dtype != np.int64:
        raise ValueError(f"out must be (float64, int64) arrays of {n} rows")
    return coef, order


def chosen_feature_map(name: str, feature_map, offered: tuple) -> str:
    """The feature map a loss runs with: ``offered[0]`` (the paper's) for None; ValueError for one it has no
    oracle for."""
    if feature_map is None:
        return offered[0]
    if feature_map not in offered:
        if feature_map == "dorm":
            raise ValueError(f"feature_map 'dorm' goes with the ndcg losses, not {name!r}")
        raise ValueError(f"loss {name!r} has no oracle for feature_map {feature_map!r}")
    return feature_map


def hinge_values(delta, scores, grad, offsets) -> np.ndarray:
    """Each query's hinge ``Delta + s . (c_hat - c_star)`` from its loss and subgradient."""
    return delta + np.add.reduceat(scores * grad, offsets[:-1]) if scores.size else np.zeros(0)


def relevance(labels, relevant_from) -> np.ndarray:
    """Binary relevance of each row: label >= ``relevant_from``."""
    return (np.asarray(labels) >= relevant_from).astype(np.int8)


def longest_query(offsets) -> int:
    offsets = np.asarray(offsets)
    return int(np.max(np.diff(offsets))) if offsets.shape[0] > 1 else 1
