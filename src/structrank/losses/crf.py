"""The permutation CRF's objectives (Volkovs, Larochelle & Zemel 2011) as probabilistic losses.

Each query's value and exact gradient are computed over every ranking of a subset of at most
``SUBSET_SIZE`` (6) documents holding every relevance level of the query (the paper's training
subsets), drawn anew at each call from ``rng``. Queries whose documents share one label have no
gradient (every ranking is correct) and are left out.

The seven objectives (ML, LA, LS, EL, KL, and ML-sum, LA-sum) are ``CRFObjective`` losses of kind
"probabilistic": ``value_and_grad`` on per-call subsets, ``training_queries`` (the queries with a
gradient), and ``code``, the objective's number in the numba SGD of ``structrank.learners.crf``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from structrank.errors import DataValidationError
from structrank.losses.base import PROBABILISTIC, RankingLoss
from structrank.losses.registry import register
from structrank.oracles import crf as kernels
from structrank.oracles.crf import OBJECTIVES, SUBSET_SIZE, objective_code, query_objective

SUMMARIES = {
    "ml": "maximum likelihood over all zero-loss rankings (their mean)",
    "la": "loss-augmented likelihood, 1 - NDCG weighted by crf_param",
    "ls": "loss-scaled likelihood (slack-scaling analogue)",
    "el": "expected loss 1 - NDCG",
    "kl": "loss-inspired KL to q(y) ~ exp(-(1 - NDCG)/T), T = crf_param",
    "ml-sum": "ml with Eq. 10's sum over the zero-loss rankings",
    "la-sum": "la with Eq. 10's sum over the zero-loss rankings",
}


@dataclass(frozen=True)
class CRFObjective(RankingLoss):
    """One CRF objective with its parameter (LA's loss weight, KL's temperature)."""

    objective: str = "kl"
    param: float = 1.0
    random_state: int | None = 0

    kind = PROBABILISTIC
    labels = "graded"
    feature_map = "permutation"
    metrics = ("ndcg@5",)  # Volkovs et al. report NDCG@1-5; their SGD picks by NDCG@5 too
    #: the kernels the CRF learner's numba SGD calls itself: ``ndcg_losses``, ``objective_gradient`` (by
    #: ``code``) and ``stacked_tables`` (every ranking's position weights)
    kernels = SimpleNamespace(ndcg_losses=kernels.ndcg_losses, objective_gradient=kernels.objective_gradient,
                              stacked_tables=kernels.stacked_tables)

    def __post_init__(self):
        objective_code(self.objective, self.param)

    @property
    def name(self) -> str:
        return f"crf-{self.objective}"

    @property
    def code(self) -> int:
        """The objective's number in the numba kernels (structrank.oracles.crf)."""
        return objective_code(self.objective, self.param)

    def training_queries(self, labels, offsets) -> list:
        """The queries with a gradient (more than one label); a clear error for one a subset cannot hold."""
        labels = np.asarray(labels, dtype=np.float64)
        queries = [q for q in range(len(offsets) - 1) if np.ptp(labels[offsets[q]:offsets[q + 1]]) > 0]
        for q in queries:
            if np.unique(labels[offsets[q]:offsets[q + 1]]).size > SUBSET_SIZE:
                raise DataValidationError(f"query {q} has more than {SUBSET_SIZE} relevance levels: a CRF subset "
                                          f"of {SUBSET_SIZE} documents cannot hold each")
        return queries

    def value_and_grad(self, scores, labels, offsets, rng=None, queries=None):
        """Each query's objective on a subset drawn from ``rng`` (seeded by ``random_state`` when
        None) and its exact gradient; ``queries`` from ``training_queries`` saves re-checking."""
        scores = np.asarray(scores, dtype=np.float64)
        labels = np.asarray(labels, dtype=np.float64)
        values, grad = np.zeros(len(offsets) - 1), np.zeros(scores.shape[0])
        for q, rows in self.gradient_rows(labels, offsets, rng, queries).items():
            values[q], grad[rows] = query_objective(self.objective, scores[rows], labels[rows], float(self.param))
        return values, grad

    def gradient_rows(self, labels, offsets, rng=None, queries=None) -> dict:
        """{query: the rows of its subset}, drawn from ``rng`` as ``value_and_grad`` draws them: the only rows
        whose scores get a gradient (a text scorer scores only these)."""
        labels = np.asarray(labels, dtype=np.float64)
        offsets = np.asarray(offsets, dtype=np.int64)
        rng = np.random.default_rng(self.random_state) if rng is None else rng
        queries = self.training_queries(labels, offsets) if queries is None else queries
        chosen = {}
        for q in queries:
            rows = np.arange(offsets[q], offsets[q + 1])
            chosen[q] = crf_subset(labels[rows], rng) + offsets[q] if rows.size > SUBSET_SIZE else rows
        return chosen


def crf_subset(labels, rng):
    """At most SUBSET_SIZE rows of one query with every relevance level in it (the CRF's subsets)."""
    order = rng.permutation(labels.size)
    _, first = np.unique(labels[order], return_index=True)  # one document of each level, drawn at random
    chosen = order[np.sort(first)]
    rest = np.setdiff1d(order, chosen, assume_unique=True)
    rest = rest[rng.permutation(rest.size)][: SUBSET_SIZE - chosen.size]
    return np.concatenate([chosen, rest])


def _crf_factory(objective, crf_param=1.0, random_state=0):
    return CRFObjective(objective, float(crf_param), random_state)


for _objective in OBJECTIVES:
    register(f"crf-{_objective}", f"permutation CRF: {SUMMARIES[_objective]}", kind=PROBABILISTIC,
             feature_maps=("permutation",), paper="Volkovs et al. 2011")(functools.partial(_crf_factory, _objective))
