"""Recall@k with phi_po: the recall at k a ranking gives up against the ideal one.

With binary relevance, ``Recall@k = (good documents in the top k) / n+`` (trec_eval's recall_k over
a complete ranking), so a ranking that holds j good documents in its top has the loss

    Delta(j) = (min(n+, k, n) - j) / n+,

0 for the ideal ranking. Like P@k's, the loss depends only on j, so loss-augmented inference is
P@k's oracle (``structrank.losses.precision``: every feasible j, the best j goods and the best
bads on top) with the regret divided by n+ instead of k.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from structrank.losses.precision import TopKLoss
from structrank.losses.registry import register


@dataclass(frozen=True)
class RecallLoss(TopKLoss):
    """Recall@k with phi_po on binary relevance: the regret in good documents in the top k, over n+."""

    name = "recall"

    @property
    def metrics(self) -> tuple:
        return (f"recall@{self.k}",)

    def normalisers(self, z, offsets) -> np.ndarray:
        """Each query's n+ (1 for a query without good documents, whose regret is 0 anyway)."""
        good = np.add.reduceat(np.asarray(z, dtype=np.int64), np.asarray(offsets)[:-1]) if len(z) else np.zeros(0)
        return np.maximum(good, 1).astype(np.float64)


@register("recall", "Recall@k regret (min(n+, k) - good in the top k) / n+ with phi_po; binary relevance")
def recall_loss(k=10, relevant_from=1):
    return RecallLoss(k, relevant_from)
