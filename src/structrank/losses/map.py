"""MAP: Yue et al.'s exact interleaving with phi_po, or the positional map of Haponchyk & Moschitti
(2018) with its greedy, exact or no-loss inference (the latent perceptron's and latent SVM's)."""

from structrank.losses.registry import register


@register("map", "1 - AP: phi_po with Yue et al.'s exact oracle (SVM-map); feature_map='positional': the positional "
          "map with greedy, exact or no-loss inference (LSP-AP, LSSVM-AP)", feature_maps=("po", "positional"),
          paper="Yue et al. 2007; Haponchyk & Moschitti 2018")
def map_loss(feature_map=None, relevant_from=1, inference="greedy", weights="harmonic", scale=1.0, positions="all"):
    if feature_map == "positional":
        # deferred: start-up time, `structrank train` lists the losses; the oracles (numba) load to build one
        from structrank.oracles.positional import PositionalAPLoss

        return PositionalAPLoss(inference, weights, float(scale), positions, relevant_from)
    # deferred: start-up time, `structrank train` lists the losses; the oracles (numba) load to build one
    from structrank.oracles.losses import StructuredLoss

    return StructuredLoss("map", feature_map, relevant_from=relevant_from)
