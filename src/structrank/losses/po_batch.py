"""The losses whose oracle is one batch kernel of ``structrank.oracles.po`` over phi_po on binary relevance.

``PoBatchLoss`` runs its ``kernel`` (``auc_batch``, ``map_batch``) over every query at once and has phi_po's
target: every correct ranking (all good above all bad) gives the same coefficients. AUC and MAP are its two.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from structrank.feature_maps import po_star
from structrank.losses.base import OracleLoss, batch_outputs


@dataclass(frozen=True)
class PoBatchLoss(OracleLoss):
    """A loss with phi_po on binary relevance (label >= ``relevant_from``) whose oracle is ``kernel``: a batch
    kernel ``(scores, relevance, offsets, coef, order) -> delta`` of ``structrank.oracles.po``."""

    relevant_from: int = 1

    feature_map = "po"
    kernel = None  # a subclass's staticmethod

    def _run(self, scores, labels, offsets, out=None):
        offsets = np.asarray(offsets, dtype=np.int64)
        coef, order = batch_outputs(scores.shape[0], out)
        return coef, self.kernel(scores, self.relevance(labels), offsets, coef, order), order

    def star(self, scores, labels, offsets) -> np.ndarray:
        """phi_po gives every correct ranking (all good above all bad) the same coefficients."""
        return po_star(self.relevance(labels), np.asarray(offsets, dtype=np.int64))
