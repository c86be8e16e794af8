"""The loss names ``structrank.oracles`` gave before the losses moved here (issue 39): ``make_loss``,
``StructuredLoss`` and the one-query ``*_oracle`` functions, each built on ``get_loss``.

``structrank.oracles`` still serves them, with a FutureWarning naming ``structrank.losses.get_loss``;
they go with that warning. New code calls ``get_loss(name, **options)`` and the loss's ``oracle``.
"""

from __future__ import annotations

from structrank.losses.base import Violation
from structrank.losses.combo import DEFAULT_COMBO, ComboLoss
from structrank.losses.registry import get_loss

#: the loss names ``StructuredLoss`` and ``make_loss`` accepted ("combo": ``make_loss`` only)
LOSSES = ("auc", "map", "ndcg", "ndcg-nc", "mrr", "combo")


def make_loss(name, feature_map=None, k=10, discount="letor", relevant_from=1, dorm_cut=None, gain="binary",
              components=DEFAULT_COMBO):
    """The registered loss ``name`` built from the estimator's options (``get_loss``)."""
    return get_loss(name, feature_map=feature_map, k=k, discount=discount, relevant_from=relevant_from,
                    dorm_cut=dorm_cut, gain=gain, components=components)


def StructuredLoss(name, feature_map=None, k=10, discount="letor", relevant_from=1, dorm_cut=None,  # noqa: N802
                   gain="binary"):
    """The loss ``name`` (auc, map, ndcg, ndcg-nc, mrr) with a feature map and options (``get_loss``)."""
    if name not in LOSSES[:-1]:
        raise ValueError(f"unknown loss {name!r}; known: {', '.join(LOSSES)}")
    return get_loss(name, feature_map=feature_map, k=k, discount=discount, relevant_from=relevant_from,
                    dorm_cut=dorm_cut, gain=gain)


def auc_oracle(scores, labels, relevant_from=1) -> Violation:
    """SVM-auc: pairs decided independently (Eq. 8), phi_po."""
    return get_loss("auc", relevant_from=relevant_from).oracle(scores, labels)


def map_oracle(scores, labels, relevant_from=1) -> Violation:
    """SVM-map: Yue et al.'s exact interleaving, phi_po."""
    return get_loss("map", relevant_from=relevant_from).oracle(scores, labels)


def ndcg_oracle(scores, labels, k=10, discount="letor", relevant_from=1, gain="binary") -> Violation:
    """SVM-ndcg: NDCG@k with phi_po; ``k=None`` is the no-clip variant (SVM-ndcg-nc)."""
    if k is None:
        return get_loss("ndcg-nc", feature_map="po", discount=discount, relevant_from=relevant_from,
                        gain=gain).oracle(scores, labels)
    return get_loss("ndcg", feature_map="po", k=k, discount=discount, relevant_from=relevant_from,
                    gain=gain).oracle(scores, labels)


def mrr_oracle(scores, labels, k=10, feature_map="mrr", relevant_from=1) -> Violation:
    """SVM-mrr: MRR@k with phi_mrr (Fig. 3), or with phi_po (``feature_map="po"``)."""
    return get_loss("mrr", feature_map=feature_map, k=k, relevant_from=relevant_from).oracle(scores, labels)


def dorm_oracle(scores, labels, k=10, cut=None, gain="binary", discount="letor", relevant_from=1) -> Violation:
    """DORM: NDCG@k (``k=None``: whole list) with phi_dorm, an assignment problem."""
    name = "ndcg-nc" if k is None else "ndcg"
    return get_loss(name, feature_map="dorm", k=10 if k is None else k, discount=discount, relevant_from=relevant_from,
                    dorm_cut=cut, gain=gain).oracle(scores, labels)


#: the names ``structrank.oracles`` serves from here, with a FutureWarning
MOVED = {"DEFAULT_COMBO": DEFAULT_COMBO, "LOSSES": LOSSES, "ComboLoss": ComboLoss, "StructuredLoss": StructuredLoss,
         "Violation": Violation, "auc_oracle": auc_oracle, "dorm_oracle": dorm_oracle, "make_loss": make_loss,
         "map_oracle": map_oracle, "mrr_oracle": mrr_oracle, "ndcg_oracle": ndcg_oracle}
