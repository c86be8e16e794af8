"""SVM-combo (Chakrabarti et al. 2008, Sec. 3.7): several losses at once; with shared slacks each
query's most violated component, with separate slacks (a learner matter) one constraint set each.

``DEFAULT_COMBO`` names the components, each ``loss`` or ``loss/feature_map`` (MRR enters with
phi_po); the loss is a ``ComboLoss`` over the components' own loss objects.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from structrank.losses.base import RankingLoss, Violation
from structrank.losses.registry import get_loss, register

#: the default components ("loss" or "loss/feature_map"); MRR enters with phi_po (phi_mrr
#: is a count of documents, not scaled by 1/(n+ n-), and in a shared w it would outweigh the others)
DEFAULT_COMBO = ("map", "ndcg", "ndcg-nc", "mrr/po")


def component(text):
    """``"mrr/po"`` -> ``("mrr", "po")``; ``"map"`` -> ``("map", None)``."""
    name, _, feature_map = str(text).partition("/")
    return name, feature_map or None


@dataclass(frozen=True)
class ComboLoss(RankingLoss):
    """SVM-combo with shared slacks (Sec. 3.7): each query's most violated of several losses.

    With one slack per query shared by all losses, the constraints of every loss hold at once;
    the most violated one of a query is the component whose ``Delta + s . (c_hat - c_star)`` is
    largest. Its coefficients are returned as the difference ``c_hat - c_star`` with a zero
    ``c_star``, since the components' maps need not agree on ``c_star``.
    (Separate slacks are a learner matter: one constraint set per component.)

    Examples
    --------
    >>> import numpy as np
    >>> from structrank.losses import get_loss
    >>> combo = ComboLoss(components=(get_loss("map"), get_loss("mrr")))
    >>> s, z, offsets = np.array([0.0, 1.0, 0.5, 0.2]), np.array([1, 0, 0, 1]), np.array([0, 4])
    >>> [round(float(part.value_and_grad(s, z, offsets)[0][0]), 4) for part in combo.components]
    [1.8833, 2.1667]
    >>> combo.label, round(float(combo.value_and_grad(s, z, offsets)[0][0]), 4)  # the larger violation
    ('combo(map/po+mrr@10/mrr)', 2.1667)
    """

    components: tuple

    name = "combo"
    feature_map = "mixed"
    star_varies = False

    @property
    def label(self) -> str:
        return "combo(" + "+".join(c.label for c in self.components) + ")"

    @property
    def metrics(self) -> tuple:
        return tuple(dict.fromkeys(m for c in self.components for m in c.metrics))

    @property
    def convention(self) -> str:
        return self.components[0].convention

    @property
    def relevant_from(self) -> int:
        return self.components[0].relevant_from

    def _choose(self, scores, labels, offsets, single=False):
        offsets = np.asarray(offsets, dtype=np.int64)
        best = None
        for component in self.components:
            coef, delta, order = component._run(scores, labels, offsets)
            diff = coef - component.star(scores, labels, offsets)
            value = delta + np.add.reduceat(scores * diff, offsets[:-1]) if scores.shape[0] else delta
            if best is None:
                best = [value, diff, delta, order]
                continue
            better = value > best[0]
            rows = np.repeat(better, np.diff(offsets))
            best[0] = np.where(better, value, best[0])
            best[1] = np.where(rows, diff, best[1])
            best[2] = np.where(better, delta, best[2])
            best[3] = np.where(rows, order, best[3])
        return best[1], best[2], best[3]

    def oracle(self, scores, labels) -> Violation:
        scores = np.ascontiguousarray(scores, dtype=np.float64)
        coef, delta, order = self._choose(scores, labels, [0, scores.shape[0]])
        return Violation(coef, float(delta[0]), order)

    def batch(self, scores, labels, offsets, out=None):
        """``(c_hat, delta)``; ``out`` is accepted for the common interface and not used (the
        choice between components needs every component's arrays)."""
        coef, delta, _ = self._choose(np.ascontiguousarray(scores, dtype=np.float64), labels, offsets)
        return coef, delta

    def star(self, scores, labels, offsets) -> np.ndarray:
        return np.zeros(int(np.asarray(offsets)[-1]))


@register("combo", "the most violated of several losses (SVM-combo); components 'loss' or 'loss/feature_map'",
          feature_maps=("mixed",), paper="Chakrabarti et al. 2008")
def combo_loss(components=DEFAULT_COMBO, k=10, discount="letor", relevant_from=1):
    parts = []
    for text in components:
        name, feature_map = component(text)
        if name == "combo":
            raise ValueError("a combo cannot hold another combo")
        parts.append(get_loss(name, feature_map=feature_map, k=k, discount=discount, relevant_from=relevant_from))
    if not parts:
        raise ValueError("combo needs at least one component loss")
    return ComboLoss(tuple(parts))
