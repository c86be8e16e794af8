"""structrank's losses as sentence-transformers cross-encoder losses, for ``CrossEncoderTrainer``.

``StructuredCrossEncoderLoss(model, loss="crf-kl")`` takes the listwise rows of sentence-transformers'
``ListNetLoss`` and ``LambdaLoss``, ``(query, [docs], [labels])``, with the same ``mini_batch_size``, so any
registered loss of ``structrank.losses`` (the MAP and NDCG hinges, the permutation-CRF objectives, ...) trains
a ``CrossEncoder`` in the trainer its users run: any device, bf16/fp16, gradient accumulation, DDP under
torchrun or accelerate, callbacks, ``save_pretrained``.

The logits stay on the model's device; only the oracle's call crosses to the CPU (``structrank.learners.torch_loss.mean_loss``):
the scores go there as float64 and the gradient comes back in the logits' dtype. The value is the mean over the
step's queries, as ``ListNetLoss``'s, so a query weighs the same in every step and under DDP the mean of the
processes' gradients is the gradient of the whole step (each process holds as many queries).

A CRF objective's gradient reaches only its subsets (``CRFObjective.gradient_rows``: at most 6 documents per
query, every relevance level in each), so only those pairs are forwarded; they are drawn as
``structrank.learners.torch_loss.StructuredRankingLoss`` draws them, so both give the same gradient on the same logits. Each
mini-batch holds pairs of similar length (the step's pairs sorted by their characters, as
``CrossEncoder.predict`` sorts), so that padding to a mini-batch's longest pair wastes little.

>>> import torch
>>> from sentence_transformers import CrossEncoder   # doctest: +SKIP
>>> loss = StructuredCrossEncoderLoss(CrossEncoder("a-local-model-folder"), "crf-kl")   # doctest: +SKIP
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from structrank.learners.score_loss import ScoreLoss
from structrank.losses import PROBABILISTIC
from structrank.learners.torch_loss import StructuredRankingLoss, mean_loss

__all__ = ["StructuredCrossEncoderLoss"]

#: the optional extra this module needs (the test configuration skips its doctests without it)
_requires_extra = "text"


class StructuredCrossEncoderLoss(nn.Module):
    """A registered structrank loss over a cross-encoder's listwise rows ``(query, [docs], [labels])``.

    Parameters
    ----------
    model : sentence_transformers.CrossEncoder
        The cross-encoder to train (one output).
    loss : str or ScoreLoss, default "crf-kl"
        A registered loss (``structrank.losses.loss_names()``; docs/LOSSES.md) or a built one.
    loss_params : dict or None
        The loss's options, those it declares.
    mini_batch_size : int or None
        Pairs per forward pass, as ``ListNetLoss``'s: None, the step's queries in one pass; <= 0, every pair at once.
    random_state : int or None, default 0
        Seeds the CRF subsets and a smoothed hinge's noise (fresh draws at every call from one stream).
    smoothing, smoothing_samples
        A hinge's perturbed smoothing (``ScoreLoss.smoothed``); 0, the exact subgradient.
    """

    def __init__(self, model, loss="crf-kl", loss_params=None, mini_batch_size=None, random_state=0, smoothing=0.0,
                 smoothing_samples=1):
        super().__init__()
        self.model = model
        if isinstance(loss, ScoreLoss):
            spec = loss
        else:
            spec = ScoreLoss.named(loss, random_state=random_state, smoothing=smoothing,
                                   smoothing_samples=smoothing_samples, **dict(loss_params or {}))
        self.criterion = StructuredRankingLoss(spec, random_state)
        self.mini_batch_size = mini_batch_size
        if getattr(model, "num_labels", 1) != 1:
            raise ValueError(f"{type(self).__name__} trains a model with 1 output label, got {model.num_labels}")

    @property
    def spec(self) -> ScoreLoss:
        return self.criterion.spec

    def scored_rows(self, labels, offsets, spec) -> np.ndarray:
        """The rows whose scores get a gradient this call (every row, but a CRF objective's subsets)."""
        if spec.loss.kind != PROBABILISTIC:
            return np.arange(offsets[-1])
        chosen = spec.loss.gradient_rows(labels, offsets, np.random.default_rng(spec.random_state))
        return np.concatenate([np.zeros(0, dtype=np.int64), *chosen.values()]).astype(np.int64)

    def forward(self, inputs, labels, prompt=None, task=None):
        """The mean over the step's queries of the loss of their logits."""
        if isinstance(labels, torch.Tensor):
            raise ValueError(f"{type(self).__name__} takes a list of labels per query (listwise rows), got one "
                             "value per row")
        if len(inputs) != 2:
            raise ValueError(f"{type(self).__name__} takes two inputs (queries, documents lists), got {len(inputs)}")
        queries, docs_list = inputs
        sizes = [len(docs) for docs in docs_list]
        if sizes != [len(values) for values in labels]:
            raise ValueError(f"documents per query {sizes} differ from labels per query "
                             f"{[len(values) for values in labels]}")
        y = np.concatenate([np.zeros(0), *[np.asarray(v.detach().cpu() if isinstance(v, torch.Tensor) else v,
                                                       dtype=np.float64) for v in labels]])
        if np.any(y != np.round(y)) or np.any(y < 0):
            raise ValueError(f"{type(self).__name__} takes relevance labels (non-negative integers)")
        y = y.astype(np.int64)
        offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        spec = self.criterion.call_spec()
        rows = self.scored_rows(y, offsets, spec)
        pairs = [(query, doc) for query, docs in zip(queries, docs_list) for doc in docs]
        logits = self._logits([pairs[r] for r in rows], prompt, task)
        # the kept rows, each query's contiguous: their own offsets
        owner = np.repeat(np.arange(len(sizes)), sizes)[rows]
        kept_offsets = np.concatenate([[0], np.cumsum(np.bincount(owner, minlength=len(sizes)))]).astype(np.int64)
        return mean_loss(logits, spec.bind(y[rows], kept_offsets), n_queries=len(sizes))

    def _logits(self, pairs, prompt, task):
        """The model's logit of each pair, in order, on the model's device."""
        if not pairs:
            return torch.zeros(0, device=self.model.device, requires_grad=True)
        size = self.mini_batch_size or len(pairs)
        size = len(pairs) if size <= 0 else int(size)
        order = np.argsort([-(len(q) + len(d)) for q, d in pairs], kind="stable") if size < len(pairs) \
            else np.arange(len(pairs))
        parts = []
        for start in range(0, len(pairs), size):
            chunk = [pairs[i] for i in order[start:start + size]]
            features = self.model.preprocess(chunk, prompt=prompt, task=task)
            features = {k: v.to(self.model.device) if isinstance(v, torch.Tensor) else v for k, v in features.items()}
            parts.append(self.model(features)["scores"].view(-1))
        logits = torch.cat(parts)
        if size < len(pairs):
            logits = logits[torch.from_numpy(np.argsort(order, kind="stable")).to(logits.device)]
        return logits

    def get_config_dict(self) -> dict:
        """What the model card records of the loss."""
        loss = self.spec.loss
        return {"loss": loss.name, "loss_params": {k: v for k, v in vars(loss).items() if not k.startswith("_")}
                if hasattr(loss, "__dict__") else {}, "mini_batch_size": self.mini_batch_size,
                "smoothing": self.spec.smoothing}

    @property
    def citation(self) -> str:
        return ("@misc{structrank, title={structrank: structured, loss-sensitive learning to rank}, "
                "note={losses of Chakrabarti et al. 2008, Haponchyk and Moschitti 2018, Volkovs et al. 2011}}")
