"""AUC (Joachims 2005): the fraction of misordered good/bad pairs, phi_po, pairs decided independently."""

from structrank.losses.registry import register


@register("auc", "1 - AUC, the fraction of misordered good/bad pairs (SVM-auc, Joachims 2005)", paper="Joachims 2005")
def auc_loss(feature_map=None, relevant_from=1):
    # deferred: start-up time, `structrank train` lists the losses; the oracles (numba) load to build one
    from structrank.oracles.losses import StructuredLoss

    return StructuredLoss("auc", feature_map, relevant_from=relevant_from)
