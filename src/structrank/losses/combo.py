"""SVM-combo (Chakrabarti et al. 2008, Sec. 3.7): several losses at once; with shared slacks each
query's most violated component, with separate slacks (a learner matter) one constraint set each.

``DEFAULT_COMBO`` names the components, each ``loss`` or ``loss/feature_map`` (MRR enters with
phi_po); the loss is a ``structrank.oracles.losses.ComboLoss``.
"""

from structrank.losses.registry import get_loss, register

#: the default components ("loss" or "loss/feature_map"); MRR enters with phi_po (see oracles.losses)
DEFAULT_COMBO = ("map", "ndcg", "ndcg-nc", "mrr/po")


def component(text):
    """``"mrr/po"`` -> ``("mrr", "po")``; ``"map"`` -> ``("map", None)``."""
    name, _, feature_map = str(text).partition("/")
    return name, feature_map or None


@register("combo", "the most violated of several losses (SVM-combo); components 'loss' or 'loss/feature_map'",
          feature_maps=("mixed",), paper="Chakrabarti et al. 2008")
def combo_loss(components=DEFAULT_COMBO, k=10, discount="letor", relevant_from=1):
    # deferred: start-up time, `structrank train` lists the losses; the oracles (numba) load to build one
    from structrank.oracles.losses import ComboLoss

    parts = []
    for text in components:
        name, feature_map = component(text)
        if name == "combo":
            raise ValueError("a combo cannot hold another combo")
        parts.append(get_loss(name, feature_map=feature_map, k=k, discount=discount, relevant_from=relevant_from))
    if not parts:
        raise ValueError("combo needs at least one component loss")
    return ComboLoss(tuple(parts))
