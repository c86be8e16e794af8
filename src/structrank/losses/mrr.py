"""MRR@k with phi_mrr (Chakrabarti et al. 2008, Fig. 3) or phi_po.

``MRRLoss`` runs ``structrank.oracles.mrr.mrr_batch`` (phi_mrr, Fact 3.5) or
``structrank.oracles.po.mrr_po_batch`` (phi_po). phi_mrr gives every correct ranking the
coefficients 0, phi_po its ideal ranking's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from structrank.losses.base import OracleLoss, batch_outputs, chosen_feature_map, whole_number
from structrank.losses.registry import register
from structrank.oracles.mrr import mrr_batch
from structrank.oracles.po import mrr_po_batch
from structrank.feature_maps import po_star


@dataclass(frozen=True)
class MRRLoss(OracleLoss):
    """1 - RR@k on binary relevance, with phi_mrr (the paper's map for MRR) or phi_po.

    Examples
    --------
    >>> import numpy as np
    >>> scores, labels = np.array([0.0, 1.0, 0.5, 0.2]), np.array([1, 0, 0, 1])
    >>> loss = MRRLoss()  # phi_mrr
    >>> v = loss.oracle(scores, labels)
    >>> loss.label, round(v.loss, 4), v.order.tolist(), v.coef.tolist()
    ('mrr@10/mrr', 0.6667, [1, 2, 0, 3], [-2.0, 1.0, 1.0, 0.0])
    """

    feature_map: str = "mrr"
    k: int = 10
    relevant_from: int = 1

    name = "mrr"

    def __post_init__(self):
        chosen_feature_map(self.name, self.feature_map, ("mrr", "po"))
        if not whole_number(self.k) or self.k < 1:
            raise ValueError(f"k must be a positive integer, got {self.k!r}")

    @property
    def label(self) -> str:
        return f"{self.name}@{self.k}/{self.feature_map}"

    @property
    def metrics(self) -> tuple:
        return (f"mrr@{self.k}",)

    def _run(self, scores, labels, offsets, out=None):
        offsets = np.asarray(offsets, dtype=np.int64)
        coef, order = batch_outputs(scores.shape[0], out)
        batch = mrr_batch if self.feature_map == "mrr" else mrr_po_batch
        return coef, batch(scores, self.relevance(labels), offsets, int(self.k), coef, order), order

    def star(self, scores, labels, offsets) -> np.ndarray:
        """phi_mrr gives every correct ranking 0; phi_po its ideal ranking's coefficients."""
        offsets = np.asarray(offsets, dtype=np.int64)
        if self.feature_map == "mrr":
            return np.zeros(offsets[-1])
        return po_star(self.relevance(labels), offsets)


@register("mrr", "1 - RR@k: phi_mrr (SVM-mrr) or phi_po", feature_maps=("mrr", "po"), paper="Chakrabarti et al. 2008")
def mrr_loss(feature_map=None, k=10, relevant_from=1):
    return MRRLoss(chosen_feature_map("mrr", feature_map, ("mrr", "po")), k, relevant_from)
