"""AUC (Joachims 2005): the fraction of misordered good/bad pairs, phi_po, pairs decided independently.

``AUCLoss`` runs ``structrank.oracles.po.auc_batch`` (each pair decides alone: the order by
``s - z/2``); its target is phi_po's ideal ranking.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from structrank.losses.base import OracleLoss, batch_outputs, chosen_feature_map
from structrank.losses.registry import register
from structrank.oracles.po import auc_batch
from structrank.feature_maps import po_star


@dataclass(frozen=True)
class AUCLoss(OracleLoss):
    """1 - AUC with phi_po on binary relevance (label >= ``relevant_from``).

    Examples
    --------
    >>> import numpy as np
    >>> v = AUCLoss().oracle(np.array([0.0, 1.0, 0.5, 0.2]), np.array([1, 0, 0, 1]))
    >>> round(v.loss, 4), v.order.tolist()
    (1.0, [1, 2, 3, 0])
    """

    relevant_from: int = 1

    name = "auc"
    feature_map = "po"
    metrics = ("auc",)

    def _run(self, scores, labels, offsets, out=None):
        offsets = np.asarray(offsets, dtype=np.int64)
        coef, order = batch_outputs(scores.shape[0], out)
        return coef, auc_batch(scores, self.relevance(labels), offsets, coef, order), order

    def star(self, scores, labels, offsets) -> np.ndarray:
        """phi_po gives every correct ranking (all good above all bad) the same coefficients."""
        return po_star(self.relevance(labels), np.asarray(offsets, dtype=np.int64))


@register("auc", "1 - AUC, the fraction of misordered good/bad pairs (SVM-auc, Joachims 2005)", paper="Joachims 2005")
def auc_loss(feature_map=None, relevant_from=1):
    chosen_feature_map("auc", feature_map, ("po",))
    return AUCLoss(relevant_from)
