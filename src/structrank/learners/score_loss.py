"""A registered loss seen from the scores: each query's value and its gradient, for any scorer.

The spine of structrank (DESIGN.md) makes every loss a function of the scores alone, so any
scorer that takes a gradient on its scores trains on any loss of the registry
(``structrank.losses``): boosted trees (``structured_trees``), neural networks
(``structrank.torch``), and the linear learners. ``ScoreLoss`` holds a loss's name and options as
an estimator's parameters do, and binds them to the training labels.

``ScoreLoss`` gives ``f(scores) -> (values, gradient)`` through the loss's ``value_and_grad`` (a
CRF objective draws its subsets from one seeded stream). ``smoothing`` > 0 replaces a hinge by its
perturbed smoothing (Berthet et al. 2020): the mean of the hinge and of its subgradient at the
scores plus Gaussian noise, from ``smoothing_samples`` draws of one seeded stream (refused for a CRF
objective, which is smooth already). ``ScoreLossScorerMixin``: ``score`` is the loss's metric.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from structrank.losses import HINGE, PROBABILISTIC, get_loss, loss_names
from structrank.losses.combo import DEFAULT_COMBO


@dataclass(frozen=True)
class ScoreLoss:
    """A loss by name with its options; ``bind(y, offsets)`` gives ``f(scores) -> (values, gradient)``.

    ``values`` holds one value per query, ``gradient`` the derivative of their sum with respect to
    each row's score. ``gain`` must be resolved ("binary" or "exp2"; see ``losses.resolve_gain``).

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
    smoothing: float = 0.0
    smoothing_samples: int = 1  # one draw: unbiased, as StructuredBoostingRanker's default (its docstring says why)

    def __post_init__(self):
        if self.loss not in loss_names():
            raise ValueError(f"loss must be one of {', '.join(loss_names())}, got {self.loss!r}")
        if self.smoothing and self.build().kind != HINGE:
            raise ValueError(f"smoothing={self.smoothing} applies to a hinge; {self.loss!r} is a probabilistic "
                             "objective, smooth already (use smoothing=0)")

    def options(self) -> dict:
        return {"feature_map": self.feature_map, "k": self.k, "discount": self.discount, "dorm_cut": self.dorm_cut,
                "components": tuple(self.components), "relevant_from": self.relevant_from,
                "crf_param": self.crf_param, "random_state": self.random_state}

    def build(self):
        """The registered loss with these options."""
        return get_loss(self.loss, **self.options(), gain=self.gain)

    def bind(self, y, offsets):
        y, offsets = np.asarray(y), np.asarray(offsets, dtype=np.int64)
        loss = self.build()
        if loss.kind != PROBABILISTIC:
            return self.smoothed(lambda scores: loss.value_and_grad(scores, y, offsets))
        rng = np.random.default_rng(self.random_state)  # fresh subsets at each call, from one seeded stream
        queries = loss.training_queries(y, offsets)
        return lambda scores: loss.value_and_grad(scores, y, offsets, rng=rng, queries=queries)

    def smoothed(self, value_and_grad):
        """``value_and_grad`` of a hinge, or with ``smoothing`` > 0 its perturbed smoothing (Berthet et
        al. 2020, "Learning with differentiable perturbed optimizers"): the expected hinge at the scores
        plus ``smoothing`` times standard normal noise, and its gradient, the expected subgradient, both
        estimated from ``smoothing_samples`` draws (one seeded stream, fresh draws at every call).

        Why: a hinge's subgradient ``c_hat - c_star`` jumps as the max-violating ranking changes and is
        zero on queries the scores already rank with a margin; the expectation is a smooth function of
        the scores whose gradient weighs every ranking near the max-violating one, as lambdarank's
        logistic weights do pairs near a swap. A scorer that follows the gradient over many small steps
        (boosted trees) is pushed by it on more queries and more consistently."""
        if not self.smoothing:
            return value_and_grad
        rng = np.random.default_rng(self.random_state)
        scale, samples = float(self.smoothing), int(self.smoothing_samples)

        def expected(scores):
            scores = np.asarray(scores, dtype=np.float64)
            values, grad = value_and_grad(scores + scale * rng.standard_normal(scores.shape))
            for _ in range(samples - 1):
                more_values, more_grad = value_and_grad(scores + scale * rng.standard_normal(scores.shape))
                values, grad = values + more_values, grad + more_grad
            return values / samples, grad / samples

        return expected


class ScoreLossScorerMixin:
    """For a ranker with a registered ``loss`` and the loss options as parameters (trees, MLP):
    ``score`` measures the loss's own metric, and ``score_loss`` is the fitted loss."""

    def _objective_scoring(self):
        return self.score_loss().build().scoring()

    def _dev_scored(self, y, scores, qid, per_query=False):
        """What ``eval_set`` chooses the epoch or round by: the mean of ``dev_metric`` (None: ``score``'s
        metric) under the loss's convention and relevance; ``per_query``: each query's mean."""
        # deferred: learners.base loads scikit-learn; structrank.torch imports this module alone
        from structrank.learners.base import metric_list

        result = self._evaluated(y, scores, qid, metrics=None if self.dev_metric is None else metric_list(self.dev_metric))
        if per_query:
            return np.mean(list(result.per_query.values()), axis=0)
        return result.mean_of()

    def _fit_loss(self, y):
        """Check ``loss`` and resolve ``gain_`` on the training labels (as ``StructSVMRanker``)."""
        # deferred: the losses load their oracles (numba) only to fit; structrank.torch imports this module alone
        from structrank.losses import resolve_gain

        spec = self.score_loss()  # checks the name
        self.gain_ = resolve_gain(self.gain, self.loss, spec.options(), "ideal", y)
        self.score_loss().build()  # checks the options (a feature map the loss lacks, ...) before any work

    def score_loss(self, random_state=None):
        """The fitted loss as a ``ScoreLoss`` (its gain resolved; "auto" reads as binary before fit)."""
        gain = getattr(self, "gain_", "binary" if self.gain == "auto" else self.gain)
        return ScoreLoss(self.loss, self.k, self.feature_map, str(gain), self.discount, self.dorm_cut,
                         tuple(self.components), self.relevant_from, self.crf_param,
                         self.random_state if random_state is None else random_state,
                         getattr(self, "smoothing", 0.0), getattr(self, "smoothing_samples", 1))
