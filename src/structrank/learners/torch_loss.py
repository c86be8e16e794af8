"""Structured ranking losses for PyTorch models (optional: ``pip install "structrank[torch]"``).

``StructuredRankingLoss(loss="map")`` is a ``torch.nn.Module`` whose forward takes a tensor of scores
(one per document, the queries' rows contiguous), the labels and the query offsets, and returns the
mean over queries of the loss's value (``structrank.learners.score_loss``: a structural hinge, or a
permutation CRF objective on 6-document subsets); its backward is the loss's (sub)gradient with
respect to the scores, ``(c_hat - c_star) / n_queries`` for a hinge. The oracles run on CPU NumPy
arrays: the scores are copied from their device and the gradient is sent back to it, so the module
works with CPU and GPU tensors alike.

Without torch this module is not collected as doctests (the root ``conftest.py``), and its doctests
are marked as needing the ``torch`` extra.

>>> import torch
>>> scores = torch.zeros(3, requires_grad=True)
>>> value = StructuredRankingLoss("map")(scores, [1, 0, 0], [0, 3])
>>> value.backward()
>>> round(value.item(), 4), bool(scores.grad[0] < 0 < scores.grad[1])
(0.6667, True)
"""

from __future__ import annotations

import dataclasses

import numpy as np
import torch

from structrank.learners.score_loss import ScoreLoss
from structrank.losses import PROBABILISTIC

__all__ = ["StructuredRankingLoss", "mean_loss"]

#: the optional extra this module needs (the test configuration skips its doctests without it)
_requires_extra = "torch"


class _LossFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, scores, bound, n_queries=None):
        values, grad = bound(scores.detach().to("cpu", torch.float64).numpy())
        n = max(len(values) if n_queries is None else int(n_queries), 1)
        ctx.save_for_backward(torch.from_numpy(grad / n).to(scores.device, scores.dtype))
        return torch.tensor(float(np.sum(values)) / n, dtype=scores.dtype, device=scores.device)

    @staticmethod
    def backward(ctx, grad_output):
        (grad,) = ctx.saved_tensors
        return grad_output * grad, None, None


class StructuredRankingLoss(torch.nn.Module):
    """The mean over queries of a structured ranking loss, differentiable in the scores.

    Parameters
    ----------
    loss : str or ScoreLoss
        Any registered loss (``structrank.losses.loss_names()`` lists them, docs/LOSSES.md with
        their options), or a built one (``ScoreLoss``, a fitted learner's).
    random_state : int or None
        Seeds the CRF objectives' subsets and a smoothed hinge's noise (a new draw at every call).
    **options
        The loss's options, those it declares (docs/LOSSES.md; ``gain`` "binary" or "exp2"); another
        is a ValueError.

    Examples
    --------
    A linear scorer trained by gradient descent on the NDCG@5 hinge:

    >>> import torch
    >>> from structrank.data import make_ranking_dataset
    >>> ds = make_ranking_dataset(n_queries=20, random_state=0)
    >>> X = torch.tensor(ds.X)
    >>> scorer = torch.nn.Linear(ds.n_features, 1, bias=False, dtype=torch.float64)
    >>> _ = torch.nn.init.zeros_(scorer.weight)
    >>> criterion = StructuredRankingLoss("ndcg", k=5)
    >>> optimizer = torch.optim.SGD(scorer.parameters(), lr=0.1)
    >>> values = []
    >>> for step in range(20):
    ...     optimizer.zero_grad()
    ...     value = criterion(scorer(X).squeeze(1), ds.y, ds.offsets)
    ...     value.backward()
    ...     optimizer.step()
    ...     values.append(value.item())
    >>> values[-1] < values[0]
    True
    """

    def __init__(self, loss="map", random_state=0, **options):
        super().__init__()
        # the loss is built here, once: every call binds it to its batch's labels
        self.spec = loss if isinstance(loss, ScoreLoss) else ScoreLoss.named(loss, **options)
        self._rng = np.random.default_rng(random_state)

    @classmethod
    def from_spec(cls, spec: ScoreLoss) -> "StructuredRankingLoss":
        """The module of a ``ScoreLoss`` (a fitted learner's loss; its ``random_state`` seeds the CRF subsets' draws)."""
        return cls(spec, spec.random_state)

    def forward(self, scores, labels, offsets):
        """The mean over queries of the loss of ``scores``.

        Parameters
        ----------
        scores : torch.Tensor of shape (n_documents,)
            One score per document, each query's documents contiguous; on any device.
        labels : array-like or torch.Tensor of shape (n_documents,)
            The relevance labels.
        offsets : array-like or torch.Tensor of shape (n_queries + 1,)
            Query boundaries: the documents of query i are ``offsets[i]:offsets[i + 1]``.

        Returns
        -------
        torch.Tensor
            A scalar, on the device and of the dtype of ``scores``; its backward is the loss's
            (sub)gradient divided by the number of queries.
        """
        if scores.ndim != 1:
            raise ValueError(f"scores must be a 1-d tensor (one per document), got shape {tuple(scores.shape)}")
        labels = labels.detach().cpu().numpy() if isinstance(labels, torch.Tensor) else np.asarray(labels)
        offsets = offsets.detach().cpu().numpy() if isinstance(offsets, torch.Tensor) else np.asarray(offsets)
        if offsets[0] != 0 or offsets[-1] != scores.shape[0] or np.any(np.diff(offsets) < 0):
            raise ValueError(f"offsets must rise from 0 to the number of scores ({scores.shape[0]})")
        return mean_loss(scores, self.call_spec().bind(labels, offsets))

    def call_spec(self) -> ScoreLoss:
        """The loss of this call: a CRF objective's subsets and a smoothed hinge's noise drawn afresh at every call
        from the module's seeded stream (``structrank.learners.cross_encoder_losses`` draws as this does)."""
        spec = self.spec
        if spec.loss.kind == PROBABILISTIC or spec.smoothing:
            spec = dataclasses.replace(spec, random_state=int(self._rng.integers(2**31)))
        return spec


def mean_loss(scores, bound, n_queries=None):
    """The sum of ``bound(scores)``'s per-query values divided by ``n_queries`` (None: the queries it returns), a
    scalar on the device of ``scores`` whose backward is the bound loss's gradient divided alike; only the oracle
    runs on the CPU."""
    return _LossFunction.apply(scores, bound, n_queries)
