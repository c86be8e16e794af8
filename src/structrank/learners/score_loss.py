"""A registered loss seen from the scores: each query's value and its gradient, for any scorer.

The spine of structrank (DESIGN.md) makes every loss a function of the scores alone, so any
scorer that takes a gradient on its scores trains on any loss of the registry
(``structrank.losses``): boosted trees (``structured_boosting``), neural networks
(``structrank.learners.torch_loss``), and the linear learners. ``ScoreLoss`` holds a built loss (a fitted
estimator's ``loss_``, or one ``ScoreLoss.named`` builds) and binds it to the training labels.

``ScoreLoss`` gives ``f(scores) -> (values, gradient)`` through the loss's ``value_and_grad`` (a
CRF objective draws its subsets from one seeded stream). ``smoothing`` > 0 replaces a hinge by its
perturbed smoothing (Berthet et al. 2020): the mean of the hinge and of its subgradient at the
scores plus Gaussian noise, from ``smoothing_samples`` draws of one seeded stream (refused for a CRF
objective, which is smooth already). ``ScoreLossScorerMixin``: ``score`` is the loss's metric.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from structrank.learners.loss_params import LossParamsMixin
from structrank.losses import HINGE, PROBABILISTIC, RankingLoss, resolve_loss


def smoothing_problem(smoothing, loss) -> str | None:
    """Why ``smoothing`` cannot go with the built ``loss`` (a CRF objective is smooth already), or None."""
    if smoothing and loss.kind != HINGE:
        return (f"smoothing={smoothing} applies to a structural hinge; {loss.label!r} is a probabilistic objective, "
                "smooth already (use smoothing=0)")
    return None


@dataclass(frozen=True)
class ScoreLoss:
    """A built loss and how a scorer trains on it; ``bind(y, offsets)`` gives ``f(scores) -> (values, gradient)``.

    ``values`` holds one value per query, ``gradient`` the derivative of their sum with respect to
    each row's score. ``named`` builds the loss from a registered name and its options (``gain``
    resolved: "binary" or "exp2"); a learner passes the loss it built once (``loss_``).

    >>> f = ScoreLoss.named("map").bind(np.array([1, 0, 0]), np.array([0, 3]))
    >>> values, grad = f(np.zeros(3))     # at w = 0 the hinge is the loss of the worst ranking
    >>> round(float(values[0]), 4), bool(grad[0] < 0 < grad[1])
    (0.6667, True)
    """

    loss: RankingLoss
    random_state: int | None = 0
    smoothing: float = 0.0
    smoothing_samples: int = 1  # one draw: unbiased, as StructuredBoostingRanker's default (its docstring says why)

    def __post_init__(self):
        problem = smoothing_problem(self.smoothing, self.loss)
        if problem:
            raise ValueError(problem)

    @classmethod
    def named(cls, name, random_state=0, smoothing=0.0, smoothing_samples=1, **options) -> "ScoreLoss":
        """The registered loss ``name`` built with ``options``, each one the loss declares (ValueError otherwise:
        ``resolve_loss``'s first problem)."""
        resolved = resolve_loss(name, options, owner="options")
        if resolved.problems:
            raise ValueError(next(iter(resolved.problems.values())))
        return cls(resolved.loss, random_state, smoothing, smoothing_samples)

    def bind(self, y, offsets):
        y, offsets = np.asarray(y), np.asarray(offsets, dtype=np.int64)
        loss = self.loss
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


class ScoreLossScorerMixin(LossParamsMixin):
    """For a ranker with a registered ``loss`` and its ``loss_params`` (trees, MLP): ``score`` measures the
    loss's own metric, and ``score_loss`` is the fitted loss as the scorer trains on it."""

    _loss_set_by = {"random_state": "its parameter random_state"}

    def _loss_context(self) -> dict:
        """A sampling loss (a CRF objective) draws with the learner's seed."""
        return {"random_state": self.random_state}

    def _objective_scoring(self):
        return self._trained_loss().scoring()

    def _loss_problems(self, loss) -> dict:
        """A learner with a ``smoothing`` parameter refuses it with a CRF objective (smooth already)."""
        problem = smoothing_problem(self._smoothing(), loss)
        return {"smoothing": problem} if problem else {}

    def _smoothing(self) -> float:
        """The smoothing a fit uses: the ``smoothing`` parameter (a learner may default it by its loss)."""
        return getattr(self, "smoothing", 0.0)

    def score_loss(self, random_state=None):
        """The fitted loss as a ``ScoreLoss`` (before fit or after a load, the loss its parameters build)."""
        return ScoreLoss(self._trained_loss(), self.random_state if random_state is None else random_state,
                         self._smoothing(), getattr(self, "smoothing_samples", 1))
