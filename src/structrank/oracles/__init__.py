"""Loss-augmented inference oracles: pure functions (scores, labels) -> max-violating structure.

Each returns a ``Violation(coef, loss, order)``: the feature-map coefficients of the structure
that maximises ``s . c + Delta``, its loss Delta, and the ranking itself. ``make_loss`` builds the
objects learners use (``batch`` over all queries, ``star`` for the correct structure).

>>> import numpy as np
>>> v = map_oracle(np.array([2.0, 1.0, 0.0]), np.array([0, 1, 1]))
>>> v.order.tolist(), round(v.loss, 4)
([0, 1, 2], 0.4167)
"""

from structrank.oracles.losses import (
    DEFAULT_COMBO,
    LOSSES,
    ComboLoss,
    StructuredLoss,
    Violation,
    make_loss,
)


def auc_oracle(scores, labels, relevant_from=1) -> Violation:
    """SVM-auc: pairs decided independently (Eq. 8), phi_po."""
    return StructuredLoss("auc", "po", relevant_from=relevant_from).oracle(scores, labels)


def map_oracle(scores, labels, relevant_from=1) -> Violation:
    """SVM-map: Yue et al.'s exact interleaving, phi_po."""
    return StructuredLoss("map", "po", relevant_from=relevant_from).oracle(scores, labels)


def ndcg_oracle(scores, labels, k=10, discount="letor", relevant_from=1, gain="binary") -> Violation:
    """SVM-ndcg: NDCG@k with phi_po; ``k=None`` is the no-clip variant (SVM-ndcg-nc).

    ``gain="exp2"``: graded gains ``2^label - 1`` and phi_po over all pairs of different labels.
    """
    if k is None:
        return StructuredLoss("ndcg-nc", "po", discount=discount, relevant_from=relevant_from,
                              gain=gain).oracle(scores, labels)
    return StructuredLoss("ndcg", "po", k, discount, relevant_from, gain=gain).oracle(scores, labels)


def mrr_oracle(scores, labels, k=10, feature_map="mrr", relevant_from=1) -> Violation:
    """SVM-mrr: MRR@k with phi_mrr (Fig. 3), or with phi_po (``feature_map="po"``)."""
    return StructuredLoss("mrr", feature_map, k, relevant_from=relevant_from).oracle(scores, labels)


def dorm_oracle(scores, labels, k=10, cut=None, gain="binary", discount="letor", relevant_from=1) -> Violation:
    """DORM: NDCG@k (``k=None``: whole list) with phi_dorm, an assignment problem."""
    name = "ndcg-nc" if k is None else "ndcg"
    return StructuredLoss(name, "dorm", 10 if k is None else k, discount, relevant_from, cut, gain).oracle(scores, labels)


__all__ = [
    "DEFAULT_COMBO",
    "LOSSES",
    "ComboLoss",
    "StructuredLoss",
    "Violation",
    "auc_oracle",
    "dorm_oracle",
    "make_loss",
    "map_oracle",
    "mrr_oracle",
    "ndcg_oracle",
]
