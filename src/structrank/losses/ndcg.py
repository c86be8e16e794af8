"""NDCG@k (clipped) and NDCG without cut-off, with phi_po (Chakrabarti et al. 2008) or phi_dorm
(DORM, Le & Smola 2008); binary or graded (2^label - 1) gains.

``NDCGLoss`` (and ``NDCGNoClipLoss``, its variant over the whole list) runs, by feature map and
gain, ``structrank.oracles.po.ndcg_batch`` (phi_po, binary gains: the DP of Fig. 2),
``structrank.oracles.graded.graded_ndcg_batch`` (phi_po over all pairs of different labels, graded
gains) or the assignment oracles of ``structrank.oracles.dorm`` (phi_dorm). The discount tables
come from ``structrank.discounts``, shared bit for bit with the metrics.

Edge cases (tests/library/test_oracles.py): a query with no good or no bad document has no violating
structure (its ``c_hat`` is ``c_star``, its loss 0); equal scores are allowed (the oracle returns
one tied ranking of maximal loss); ``k`` longer than the list is NDCG@n.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from structrank.discounts import discounts
from structrank.errors import DataValidationError
from structrank.losses.base import OracleLoss, batch_outputs, chosen_feature_map, longest_query, whole_number
from structrank.losses.registry import register
from structrank.oracles.dorm import dorm_query, is_two_level, two_level_batch
from structrank.oracles.graded import graded_ndcg_batch, graded_po_star
from structrank.oracles.latent import latent_graded_po_star
from structrank.oracles.po import ndcg_batch
from structrank.feature_maps import dorm_decay, po_star

# discount name -> (the convention of its metric, its table in structrank.discounts)
# ("auto": letor4 or mslr, which share the LETOR discount, as the labels allow)
DISCOUNTS = {"letor": ("auto", "letor"), "log2": ("trec", "log2_rank_plus_1")}


@lru_cache(maxsize=16)
def _discount_table(name: str, n: int) -> np.ndarray:
    table = discounts(DISCOUNTS[name][1], n)
    table.flags.writeable = False
    return table


def _table_for(name: str, n: int) -> np.ndarray:
    # tables grow in powers of two so that a few cached ones serve every query length
    return _discount_table(name, max(64, 1 << max(int(n) - 1, 1).bit_length()))


@dataclass(frozen=True)
class NDCGLoss(OracleLoss):
    """1 - NDCG@k with phi_po or phi_dorm.

    Parameters
    ----------
    feature_map : {"po", "dorm"}
        phi_po (SVM-ndcg) or phi_dorm (DORM, an assignment problem; it cannot count documents
        above a position, so it cannot express MAP or MRR, Sec. 3.5).
    k : int
        The cut-off.
    discount : {"letor", "log2"}
        "letor" (1 at ranks 1 and 2, then 1/log2(rank)), the paper's and the LETOR scripts';
        "log2" (1/log2(rank + 1)), trec_eval's.
    relevant_from : int
        Labels >= this are good (binary gains).
    dorm_cut : int or None
        DORM's decay ``A(r) = 1/sqrt(1 + r)`` is 0 from this rank on (the sparse variant).
    gain : {"binary", "exp2"}
        Binary relevance (the paper), or ``2^label - 1`` (LETOR 4.0's and MSLR's NDCG). Graded with
        phi_po, the pairs of phi_po are all pairs of different labels and ``relevant_from`` is not
        used; it needs the cut-off (the no-clip table would grow as n^G) and labels >= 0.

    Examples
    --------
    >>> import numpy as np
    >>> loss = NDCGLoss(k=3)
    >>> v = loss.oracle(np.array([0.0, 1.0, 0.5, 0.2]), np.array([1, 0, 0, 1]))
    >>> loss.label, round(v.loss, 4), v.order.tolist()
    ('ndcg@3/po', 0.6845, [1, 2, 3, 0])
    """

    feature_map: str = "po"
    k: int = 10
    discount: str = "letor"
    relevant_from: int = 1
    dorm_cut: int | None = None
    gain: str = "binary"

    name = "ndcg"
    clipped = True  # NDCG@k; NDCGNoClipLoss: the whole list

    def __post_init__(self):
        chosen_feature_map(self.name, self.feature_map, ("po", "dorm"))
        if self.discount not in DISCOUNTS:
            raise ValueError(f"discount must be one of {', '.join(DISCOUNTS)}, got {self.discount!r}")
        if self.gain not in ("binary", "exp2"):
            raise ValueError(f"gain must be 'binary' or 'exp2', got {self.gain!r}")
        if self.gain == "exp2" and self.feature_map == "po" and not self.clipped:
            raise ValueError("gain 'exp2' (graded) is available for ndcg with feature_map 'po' or 'dorm', "
                             f"not {self.name!r} with {self.feature_map!r}")
        if not whole_number(self.k) or (self.k < 1 and self.clipped):
            raise ValueError(f"k must be a positive integer, got {self.k!r}")

    @property
    def label(self) -> str:
        """Short readable name, e.g. ``ndcg@10/po``."""
        return f"{self.name}@{self.k}/{self.feature_map}"

    @property
    def metrics(self) -> tuple:
        return (f"ndcg@{self.k}",)

    @property
    def labels(self) -> str:
        return "graded" if self.gain == "exp2" else "binary"

    @property
    def convention(self) -> str:
        # graded gains 2^label - 1: the MSLR script's on labels 0-4, letor4's on 0-2 (auto picks between
        # them); otherwise the discount names the convention
        return "auto" if self.gain == "exp2" else DISCOUNTS[self.discount][0]

    @property
    def star_varies(self) -> bool:
        """Whether ``c_star`` depends on the scores (phi_dorm: the order within a grade matters)."""
        return self.feature_map == "dorm"

    @property
    def _cut(self) -> int:
        return int(self.k)  # 0: no cut-off (NDCGNoClipLoss)

    @property
    def _graded_po(self) -> bool:
        return self.gain == "exp2" and self.feature_map == "po"

    def gains(self, labels) -> np.ndarray:
        labels = np.asarray(labels, dtype=np.float64)
        if self.gain == "exp2":
            return np.exp2(labels) - 1.0
        return (labels >= self.relevant_from).astype(np.float64)

    def decay(self, n):
        """phi_dorm's A(rank) for a list of n documents (cut at ``dorm_cut``)."""
        return dorm_decay(n, self.dorm_cut)

    def _run(self, scores, labels, offsets, out=None):
        offsets = np.asarray(offsets, dtype=np.int64)
        if self.feature_map == "dorm":
            return self._dorm_batch(scores, labels, offsets, out)
        if self._graded_po:
            return self._graded_batch(scores, labels, offsets, out)
        z = self.relevance(labels)
        longest = longest_query(offsets)
        coef, order = batch_outputs(scores.shape[0], out)
        delta = ndcg_batch(scores, z, offsets, self._cut, _table_for(self.discount, longest), coef, order)
        return coef, delta, order

    @staticmethod
    def _grade_labels(labels) -> np.ndarray:
        labels = np.ascontiguousarray(labels, dtype=np.int64)
        if labels.size and labels.min() < 0:
            raise ValueError(f"graded gains 2^label - 1 need labels >= 0, got {labels.min()}")
        return labels

    def _graded_batch(self, scores, labels, offsets, out=None):
        labels = self._grade_labels(labels)
        longest = longest_query(offsets)
        coef, order = batch_outputs(scores.shape[0], out)
        delta = graded_ndcg_batch(scores, labels, offsets, self._cut, _table_for(self.discount, longest), coef, order)
        return coef, delta, order

    def _dorm_batch(self, scores, labels, offsets, out=None):
        gains = self.gains(labels)
        coef, order = batch_outputs(scores.shape[0], out)
        longest = longest_query(offsets)
        decay = self.decay(longest)
        if is_two_level(gains, decay):  # binary relevance: one numba pass over the queries
            level = float(gains.max())
            return coef, two_level_batch(np.ascontiguousarray(scores, dtype=np.float64), gains > 0,
                                         level if level > 0 else 1.0, np.asarray(offsets, dtype=np.int64), self._cut,
                                         _table_for(self.discount, longest), decay, coef, order), order
        delta = np.empty(offsets.shape[0] - 1)
        for q in range(offsets.shape[0] - 1):
            a, b = offsets[q], offsets[q + 1]
            discount = _table_for(self.discount, b - a)
            try:
                coef[a:b], delta[q], order[a:b] = dorm_query(scores[a:b], gains[a:b], self._cut, discount,
                                                             self.decay(b - a))
            except DataValidationError as error:  # name the query
                raise DataValidationError(f"query {q} (rows {a}-{b - 1}): {error}") from None
        return coef, delta, order

    def latent_graded_star(self, scores, labels, offsets) -> np.ndarray:
        """phi_po coefficients (over all pairs of different grades) of each query's best loss-zero ranking of
        NDCG@k under ``scores``, on the gains (graded) or the relevance (binary): boosted trees' latent target."""
        grades = self.gains(labels) if self.gain == "exp2" else self.relevance(labels)
        return latent_graded_po_star(scores, grades, offsets, int(self.k))

    def star(self, scores, labels, offsets) -> np.ndarray:
        """Coefficients of the best correct structure of every query.

        phi_po gives every correct ranking (all good above all bad) the same coefficients. phi_dorm
        tells the correct rankings apart by the order within a grade; the best one for the current
        scores sorts each grade by score, so no correct ranking ever violates a constraint (this is
        the imputation a latent SVM would make).
        """
        offsets = np.asarray(offsets, dtype=np.int64)
        if self.feature_map == "dorm":
            out = np.zeros(offsets[-1])
            gains = self.gains(labels)
            scores = np.asarray(scores, dtype=np.float64)
            for q in range(offsets.shape[0] - 1):
                a, b = offsets[q], offsets[q + 1]
                order = np.lexsort((-scores[a:b], -gains[a:b]))
                out[a + order] = self.decay(b - a)
            return out
        if self._graded_po:
            return graded_po_star(self._grade_labels(labels), offsets)
        return po_star(self.relevance(labels), offsets)


@dataclass(frozen=True)
class NDCGNoClipLoss(NDCGLoss):
    """1 - NDCG over the whole list (SVM-ndcg-nc): ``NDCGLoss`` without the cut-off (``k`` unused)."""

    name = "ndcg-nc"
    clipped = False

    @property
    def label(self) -> str:
        return f"{self.name}/{self.feature_map}"

    @property
    def metrics(self) -> tuple:
        return ("ndcg",)

    @property
    def _cut(self) -> int:
        return 0


@register("ndcg", "1 - NDCG@k: phi_po (SVM-ndcg) or phi_dorm (DORM, dorm_cut for the sparse A); gain 'binary' or "
          "'exp2' (graded)", feature_maps=("po", "dorm"), paper="Chakrabarti et al. 2008; Le & Smola 2008",
          map_options={"dorm_cut": ("dorm",)})
def ndcg_loss(feature_map=None, k=10, discount="letor", relevant_from=1, dorm_cut=None, gain="auto"):
    return NDCGLoss(chosen_feature_map("ndcg", feature_map, ("po", "dorm")), k, discount, relevant_from, dorm_cut,
                    settled_gain(gain))


@register("ndcg-nc", "1 - NDCG over the whole list (SVM-ndcg-nc, no clip): phi_po or phi_dorm",
          feature_maps=("po", "dorm"), paper="Chakrabarti et al. 2008", map_options={"dorm_cut": ("dorm",)})
def ndcg_nc_loss(feature_map=None, discount="letor", relevant_from=1, dorm_cut=None, gain="auto"):
    return NDCGNoClipLoss(chosen_feature_map("ndcg-nc", feature_map, ("po", "dorm")), 10, discount, relevant_from,
                          dorm_cut, settled_gain(gain))


def settled_gain(gain):
    """The gain a loss is built with: "auto" is settled on the training labels by the learner
    (``registry.build_for_labels``); built without labels, it is binary."""
    return "binary" if gain == "auto" else gain
