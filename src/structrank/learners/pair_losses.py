"""The pointwise and pairwise losses text rerankers are trained with by default, as baselines.

``bce``: binary cross-entropy of each pair's score as a logit against its label (relevant at label >= 1),
the mean over pairs: sentence-transformers' ``CrossEncoder`` default for one output
(``BCEWithLogitsLoss``). ``ranknet``: RankNet's pairwise logistic loss (Burges et al. 2005), the mean
over the pairs of one query's candidates with different labels of ``log(1 + exp(-(s_i - s_j)))``,
``y_i > y_j``. Both take a batch as ``structrank.torch.StructuredRankingLoss`` does (scores, labels,
query offsets), so a text reranker swaps them for a structured loss without other change.
"""

# deferred imports: torch is the optional text extra, loaded when a baseline loss is computed

from __future__ import annotations

import numpy as np

#: the losses here, by the name ``loss=`` takes (they are not in the structured-loss registry)
BASELINE_LOSSES = ("bce", "ranknet")


def bce(scores, labels, offsets):
    """Mean binary cross-entropy with logits over the batch's pairs."""
    import torch

    target = torch.as_tensor(np.asarray(labels) >= 1, dtype=scores.dtype, device=scores.device)
    return torch.nn.functional.binary_cross_entropy_with_logits(scores, target)


def ranknet(scores, labels, offsets):
    """Mean over the batch's preference pairs (same query, different labels) of the pairwise logistic loss."""
    import torch

    labels, offsets = np.asarray(labels), np.asarray(offsets)
    better, worse = [], []
    for q in range(offsets.size - 1):
        rows = np.arange(offsets[q], offsets[q + 1])
        i, j = np.nonzero(labels[rows][:, None] > labels[rows][None, :])
        better.append(rows[i])
        worse.append(rows[j])
    better, worse = np.concatenate(better or [[]]).astype(np.int64), np.concatenate(worse or [[]]).astype(np.int64)
    if better.size == 0:
        return scores.sum() * 0.0  # no pair to order: a zero that keeps the graph
    margin = scores[torch.from_numpy(better)] - scores[torch.from_numpy(worse)]
    return torch.nn.functional.softplus(-margin).mean()


def baseline_loss(name):
    """The loss function ``name`` of ``BASELINE_LOSSES``."""
    return {"bce": bce, "ranknet": ranknet}[name]
