"""Latent targets of the clipped losses as loss objects: a loss held to its correct structure imputed at w.

The why is in ``structrank.oracles.latent`` (whose kernels impute it): for NDCG@k and MRR@k the ideal
ranking asks far more than the loss does, and the latent structural SVM (Yu & Joachims 2009) holds the
learner to the best loss-zero ranking under the current scores instead.

- ``has_latent_target(loss)`` and ``check_latent(loss)``: whether a loss has one (clipped, binary gains,
  phi_po, phi_mrr or phi_dorm), and the error naming why not;
- ``ImputedTarget``: the loss with its target imputed at some w, with ``batch``/``star``/``same_as`` and
  ``for_shard`` (a shard imputes its own rows).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from structrank.oracles.latent import first_good_kept, latent_dorm_star, latent_po_star

# loss name -> how many good documents a loss-zero ranking must put on top (None: the cut-off k)
LATENT_TOP = {"ndcg": None, "mrr": 1}


def has_latent_target(loss) -> bool:
    """Whether the loss is a clipped one with binary gains whose correct structure can be imputed."""
    name, feature_map = getattr(loss, "name", None), getattr(loss, "feature_map", None)
    return name in LATENT_TOP and feature_map in ("po", "mrr", "dorm") and getattr(loss, "gain", "binary") == "binary"


def check_latent(loss) -> None:
    """Refuse, with the reason, a loss that has no latent target."""
    if not has_latent_target(loss):
        name = getattr(loss, "name", None)
        raise ValueError(
            f"target='latent' needs a clipped loss with binary gains and phi_po, phi_mrr or phi_dorm (ndcg, mrr), got "
            f"{getattr(loss, 'label', name)!r}: for the other losses the ideal ranking is already the only "
            "loss-zero one up to ties")


def _top(loss) -> int:
    top = LATENT_TOP[loss.name]
    return int(loss.k) if top is None else top


@dataclass(frozen=True, eq=False)
class ImputedTarget:
    """A loss with its correct structure imputed at weights ``w``: the convex step of CCCP.

    ``batch`` and ``star`` are the loss's with the imputation of the rows they are given at
    construction (``impute``); a shard of the rows (structrank.parallel) imputes its own rows
    again at ``w`` through ``for_shard`` rather than receive them.
    """

    loss: object
    w: np.ndarray
    c_star: np.ndarray | None = None  # phi_po, phi_dorm: the imputed ranking's coefficients
    keep: np.ndarray | None = None  # phi_mrr: the rows the oracle sees
    star_varies = False

    @classmethod
    def impute(cls, loss, w, scores, labels, offsets) -> "ImputedTarget":
        check_latent(loss)
        offsets = np.asarray(offsets, dtype=np.int64)
        z = loss.relevance(labels)
        if loss.feature_map == "mrr":
            return cls(loss, w, keep=first_good_kept(scores, z, offsets))
        if loss.feature_map == "dorm":
            return cls(loss, w, c_star=latent_dorm_star(scores, z, offsets, _top(loss), loss.decay))
        return cls(loss, w, c_star=latent_po_star(scores, z, offsets, _top(loss)))

    @property
    def label(self) -> str:
        return f"{self.loss.label}/latent"

    def same_as(self, other: "ImputedTarget") -> bool:
        """Whether two imputations are equal (CCCP has then converged)."""
        mine = self.keep if self.c_star is None else self.c_star
        theirs = other.keep if other.c_star is None else other.c_star
        return np.array_equal(mine, theirs)

    def batch(self, scores, labels, offsets, out=None):
        if self.keep is None:
            return self.loss.batch(scores, labels, offsets, out)
        offsets = np.asarray(offsets, dtype=np.int64)
        kept_offsets = np.concatenate([[0], np.cumsum(np.add.reduceat(self.keep.astype(np.int64), offsets[:-1]))]) \
            if offsets.size > 1 else np.zeros(1, dtype=np.int64)
        scores = np.ascontiguousarray(scores, dtype=np.float64)
        c_kept, delta = self.loss.batch(scores[self.keep], np.asarray(labels)[self.keep], kept_offsets)
        coef = np.zeros(scores.shape[0]) if out is None else out[0]
        coef[:] = 0.0  # good documents left out sit below the first one: phi_mrr gives them 0
        coef[self.keep] = c_kept
        return coef, delta

    def star(self, scores, labels, offsets) -> np.ndarray:
        if self.c_star is None:
            return np.zeros(int(np.asarray(offsets)[-1]))  # phi_mrr of any correct ranking
        return self.c_star

    def for_shard(self, shard) -> "ImputedTarget":
        from structrank.parallel.rows import matvec  # deferred: numba, joblib and SciPy only where shards are

        return ImputedTarget.impute(self.loss, self.w, matvec(shard["X"], self.w), shard["y"], shard["offsets"])
