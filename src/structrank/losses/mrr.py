"""MRR@k with phi_mrr (Chakrabarti et al. 2008, Fig. 3) or phi_po."""

from structrank.losses.registry import register


@register("mrr", "1 - RR@k: phi_mrr (SVM-mrr) or phi_po", feature_maps=("mrr", "po"), paper="Chakrabarti et al. 2008")
def mrr_loss(feature_map=None, k=10, relevant_from=1):
    # deferred: start-up time, `structrank train` lists the losses; the oracles (numba) load to build one
    from structrank.oracles.losses import StructuredLoss

    return StructuredLoss("mrr", feature_map, k, relevant_from=relevant_from)
