"""NDCG@k (clipped) and NDCG without cut-off, with phi_po (Chakrabarti et al. 2008) or phi_dorm
(DORM, Le & Smola 2008); binary or graded (2^label - 1) gains."""

from structrank.losses.registry import register


@register("ndcg", "1 - NDCG@k: phi_po (SVM-ndcg) or phi_dorm (DORM, dorm_cut for the sparse A); gain 'binary' or "
          "'exp2' (graded)", feature_maps=("po", "dorm"), paper="Chakrabarti et al. 2008; Le & Smola 2008")
def ndcg_loss(feature_map=None, k=10, discount="letor", relevant_from=1, dorm_cut=None, gain="binary"):
    # deferred: start-up time, `structrank train` lists the losses; the oracles (numba) load to build one
    from structrank.oracles.losses import StructuredLoss

    return StructuredLoss("ndcg", feature_map, k, discount, relevant_from, dorm_cut, gain)


@register("ndcg-nc", "1 - NDCG over the whole list (SVM-ndcg-nc, no clip): phi_po or phi_dorm",
          feature_maps=("po", "dorm"), paper="Chakrabarti et al. 2008")
def ndcg_nc_loss(feature_map=None, discount="letor", relevant_from=1, dorm_cut=None, gain="binary"):
    # deferred: start-up time, `structrank train` lists the losses; the oracles (numba) load to build one
    from structrank.oracles.losses import StructuredLoss

    return StructuredLoss("ndcg-nc", feature_map, 10, discount, relevant_from, dorm_cut, gain)
