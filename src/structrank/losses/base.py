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

from typing import NamedTuple

import numpy as np

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
        return hinge_values(delta, scores, grad, offsets), grad

    def constant_on(self, longest: int):
        """Why every ranking of a list of at most ``longest`` documents has the same loss (a phrase naming the
        metric), or None when some ranking of such a list changes it. None here: for most losses a cut-off past
        the longest list only removes the cut (NDCG@k becomes NDCG, RR@k RR), which still orders the list."""
        return None

    def scoring(self) -> tuple:
        """``(metrics, convention, relevant_from)`` that ``score()`` uses: graded losses are judged
        on the labels as they are, binary ones on labels binarised at ``relevant_from``."""
        return tuple(self.metrics), self.convention, None if self.labels == "graded" else self.relevant_from


def hinge_values(delta, scores, grad, offsets) -> np.ndarray:
    """Each query's hinge ``Delta + s . (c_hat - c_star)`` from its loss and subgradient."""
    return delta + np.add.reduceat(scores * grad, offsets[:-1]) if scores.size else np.zeros(0)


def relevance(labels, relevant_from) -> np.ndarray:
    """Binary relevance of each row: label >= ``relevant_from``."""
    return (np.asarray(labels) >= relevant_from).astype(np.int8)


def longest_query(offsets) -> int:
    offsets = np.asarray(offsets)
    return int(np.max(np.diff(offsets))) if offsets.shape[0] > 1 else 1
