"""MAP: Yue et al.'s exact interleaving with phi_po, or the positional map of Haponchyk & Moschitti
(2018) with its greedy, exact or no-loss inference (the latent perceptron's and latent SVM's).

``APLoss`` runs ``structrank.oracles.po.map_batch``; ``PositionalAPLoss`` runs the kernels of
``structrank.oracles.positional`` (``run_positional`` and, for its latent ground truth, ``latent_star``)
and hands a numba epoch that calls them itself its kernels (``kernels``).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from structrank.losses.base import OracleLoss, batch_outputs, chosen_feature_map, longest_query
from structrank.losses.po_batch import PoBatchLoss
from structrank.losses.registry import register
from structrank.oracles import positional
from structrank.oracles.po import map_batch
from structrank.oracles.positional import INFERENCES, check_exact_size, latent_star, run_positional
from structrank.feature_maps import positional_weights

_KERNEL_IDS = {"greedy": 0, "exact": 1, "none": 0}  # "none" is the greedy at scale 0


@dataclass(frozen=True)
class APLoss(PoBatchLoss):
    """1 - AP with phi_po on binary relevance: Yue et al.'s (2007) exact oracle (SVM-map).

    Examples
    --------
    >>> import numpy as np
    >>> v = APLoss().oracle(np.array([2.0, 1.0, 0.0]), np.array([0, 1, 1]))
    >>> v.order.tolist(), round(v.loss, 4)
    ([0, 1, 2], 0.4167)
    """

    name = "map"
    metrics = ("map",)
    kernel = staticmethod(map_batch)


@dataclass(frozen=True)
class PositionalAPLoss(OracleLoss):
    """Delta_ap with the positional map: the loss object of the latent perceptron and latent SVM.

    Parameters
    ----------
    inference : {"greedy", "exact", "none"}
        The paper's greedy (LSP-AP, LSSVM-AP), the exact interleaving search (LSP-AP*,
        LSSVM-AP*), or no loss at all (plain LSP).
    weights : str
        Positional weights v_j (structrank.feature_maps.positional_weights): "harmonic" (1/j, the
        paper's), "log2" (1/log2(j + 1)) or "linear" ((N - j + 1)/N).
    scale : float
        Loss scaling C of Alg. 1 (the latent SVM uses 1: its C is the regulariser).
    positions : {"all", "positives"}
        Coefficients at all N positions, or only at the top P (the LSSVM update of Sec. 4.1).
    relevant_from : int
        Labels >= this are good.
    """

    inference: str = "greedy"
    weights: str = "harmonic"
    scale: float = 1.0
    positions: str = "all"
    relevant_from: int = 1

    name = "map"
    feature_map = "positional"
    star_varies = True  # the latent ground truth follows the scores
    metrics = ("map",)

    def __post_init__(self):
        if self.inference not in INFERENCES:
            raise ValueError(f"inference must be one of {', '.join(INFERENCES)}, got {self.inference!r}")
        if self.positions not in ("all", "positives"):
            raise ValueError(f"positions must be 'all' or 'positives', got {self.positions!r}")
        if not np.isfinite(self.scale) or self.scale < 0:
            raise ValueError(f"the loss scale must be a finite number >= 0, got {self.scale!r}")
        positional_weights(1, self.weights)  # validates the name

    @property
    def label(self) -> str:
        return {"greedy": "ap/pos", "exact": "ap*/pos", "none": "argmax/pos"}[self.inference]

    #: the kernels a learner's own numba epoch calls (the latent perceptron's Alg. 1 step): ``greedy`` and
    #: ``exact`` inference, ``truth`` (Eq. 3's ground truth), ``coef_of_order``; and ``check_exact_size``
    kernels = SimpleNamespace(greedy=positional.greedy_kernel, exact=positional.exact_kernel,
                              truth=positional.latent_truth, coef_of_order=positional.coef_of_order,
                              check_exact_size=check_exact_size)

    def _run(self, scores, labels, offsets, out=None):
        scores = np.ascontiguousarray(scores, dtype=np.float64)
        offsets = np.asarray(offsets, dtype=np.int64)
        longest = longest_query(offsets)
        if self.inference == "exact":
            check_exact_size(self.relevance(labels), offsets)
        coef, order = batch_outputs(scores.shape[0], out)
        scale = 0.0 if self.inference == "none" else float(self.scale)
        delta = run_positional(_KERNEL_IDS[self.inference], scores, self.relevance(labels), offsets,
                               positional_weights(longest, self.weights), scale, self.positions == "positives",
                               coef, order)
        return coef, delta, order

    @property
    def delta_scale(self) -> float:
        """The hinge value holds the loss as the oracle maximises it, ``scale * Delta`` (none without loss);
        ``batch`` reports ``Delta`` alone, as Alg. 1 records it."""
        return 0.0 if self.inference == "none" else float(self.scale)

    def star(self, scores, labels, offsets) -> np.ndarray:
        """Coefficients of the latent ground truth (Eq. 3) of every query for the scores."""
        scores = np.ascontiguousarray(scores, dtype=np.float64)
        offsets = np.asarray(offsets, dtype=np.int64)
        longest = longest_query(offsets)
        coef = np.empty(scores.shape[0])
        latent_star(scores, self.relevance(labels), offsets, positional_weights(longest, self.weights),
                    self.positions == "positives", coef)
        return coef


@register("map", "1 - AP: phi_po with Yue et al.'s exact oracle (SVM-map); feature_map='positional': the positional "
          "map with greedy, exact or no-loss inference (LSP-AP, LSSVM-AP)", feature_maps=("po", "positional"),
          paper="Yue et al. 2007; Haponchyk & Moschitti 2018",
          map_options=dict.fromkeys(("inference", "weights", "scale", "positions"), ("positional",)))
def map_loss(feature_map=None, relevant_from=1, inference="greedy", weights="harmonic", scale=1.0, positions="all"):
    if chosen_feature_map("map", feature_map, ("po", "positional")) == "positional":
        return PositionalAPLoss(inference, weights, float(scale), positions, relevant_from)
    return APLoss(relevant_from)
