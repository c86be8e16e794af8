"""AUC (Joachims 2005): the fraction of misordered good/bad pairs, phi_po, pairs decided independently.

``AUCLoss`` runs ``structrank.oracles.po.auc_batch`` (each pair decides alone: the order by
``s - z/2``); its target is phi_po's ideal ranking.
"""

from __future__ import annotations

from dataclasses import dataclass

from structrank.losses.base import chosen_feature_map
from structrank.losses.po_batch import PoBatchLoss
from structrank.losses.registry import register
from structrank.oracles.po import auc_batch


@dataclass(frozen=True)
class AUCLoss(PoBatchLoss):
    """1 - AUC with phi_po on binary relevance (label >= ``relevant_from``).

    Examples
    --------
    >>> import numpy as np
    >>> v = AUCLoss().oracle(np.array([0.0, 1.0, 0.5, 0.2]), np.array([1, 0, 0, 1]))
    >>> round(v.loss, 4), v.order.tolist()
    (1.0, [1, 2, 3, 0])
    """

    name = "auc"
    metrics = ("auc",)
    kernel = staticmethod(auc_batch)


@register("auc", "1 - AUC, the fraction of misordered good/bad pairs (SVM-auc, Joachims 2005)", paper="Joachims 2005")
def auc_loss(feature_map=None, relevant_from=1):
    chosen_feature_map("auc", feature_map, ("po",))
    return AUCLoss(relevant_from)
