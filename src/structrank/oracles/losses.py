"""Structured losses: an oracle with its feature map, seen by learners only through three calls.

A learner holds a ``StructuredLoss`` and asks it for

- ``batch(scores, labels, offsets)`` -> ``(c_hat, delta)``: the max-violating structure of every
  query (its coefficients, one per document) and each query's loss;
- ``star(scores, labels, offsets)`` -> ``c_star``: the coefficients of the correct structure;
- ``oracle(scores, labels)`` -> ``Violation`` for a single query (users and tests).

It never learns which loss it optimises. Relevance is binary (label >= ``relevant_from``), as in
Chakrabarti et al. (2008); NDCG@k also takes graded gains (``gain="exp2"``, ``2^label - 1``), with
phi_po over all pairs of different labels (``graded.py``) or with phi_dorm.

Edge cases, each tested in tests/test_oracles.py:

- a query with no good or no bad document (all relevant, all irrelevant, or a single
  document) has no violating structure: its ``c_hat`` is ``c_star`` and its loss 0, so it adds
  nothing to a constraint or an update (the metrics' own rule for such a query does not apply);
- equal scores are allowed: the score term cannot tell the tied rankings apart and the oracle
  returns one of maximal loss among them (with all scores equal, a ranking of maximal loss);
- ``k`` longer than the list: NDCG@k is computed over the n documents there are (NDCG@n), and
  MRR@k has no "missed" class.

``StructuredLoss`` (a loss, its feature map and options) is the ``RankingLoss`` of AUC, MAP, NDCG,
NDCG-nc, MRR and DORM: one numba loop (``_run_batch``) runs the paper kernels over all queries.
``ComboLoss`` gives SVM-combo's shared slacks (each query's most violated component), and
``make_loss`` is the registry's ``get_loss`` with the estimators' option names.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
import numpy as np

from structrank.errors import DataValidationError
from structrank.losses import get_loss
from structrank.losses.base import RankingLoss, Violation, longest_query
from structrank.losses.combo import DEFAULT_COMBO, component as _component
from structrank.discounts import discounts
from structrank.numba_cache import njit
from structrank.oracles.dorm import dorm_query, is_two_level, two_level_batch
from structrank.oracles.graded import graded_ndcg_batch, graded_po_star
from structrank.oracles.mrr import mrr_kernel
from structrank.oracles.po import auc_kernel, map_kernel, mrr_po_kernel, ndcg_kernel
from structrank.structures import dorm_decay, po_star

#: the loss names ``StructuredLoss`` and ``make_loss`` accept ("combo": ``ComboLoss``)
LOSSES = ("auc", "map", "ndcg", "ndcg-nc", "mrr", "combo")
DEFAULT_FEATURE_MAP = {"auc": "po", "map": "po", "ndcg": "po", "ndcg-nc": "po", "mrr": "mrr"}
# discount name -> (the convention of its metric, its table in structrank.discounts)
# ("auto": letor4 or mslr, which share the LETOR discount, as the labels allow)
DISCOUNTS = {"letor": ("auto", "letor"), "log2": ("trec", "log2_rank_plus_1")}
# SVM-combo's components: DEFAULT_COMBO (structrank.losses.combo). MRR enters with phi_po: phi_mrr
# is a count of documents, not scaled by 1/(n+ n-), and in a shared w it would outweigh the others.

# (loss, feature map) -> the kernel's number in _run_batch's switch
_KERNELS = {
    ("auc", "po"): 0,
    ("map", "po"): 1,
    ("ndcg", "po"): 2,
    ("ndcg-nc", "po"): 2,
    ("mrr", "po"): 3,
    ("mrr", "mrr"): 4,
}


@njit(cache=True, nogil=True)
def _run_batch(kernel, s, z, offsets, k, discount, coef, order):
    """Run oracle kernel number ``kernel`` over every query (``offsets`` bound the queries).

    A switch over plain numbers rather than a jitted function passed as an argument: numba's
    on-disk cache cannot always save functions that take other jitted functions as arguments
    ("underlying object has vanished"), and a switch compiles once for all kernels.
    """
    n_queries = offsets.shape[0] - 1
    delta = np.empty(n_queries)
    for q in range(n_queries):
        a, b = offsets[q], offsets[q + 1]
        if kernel == 0:
            delta[q] = auc_kernel(s[a:b], z[a:b], k, discount, coef[a:b], order[a:b])
        elif kernel == 1:
            delta[q] = map_kernel(s[a:b], z[a:b], k, discount, coef[a:b], order[a:b])
        elif kernel == 2:
            delta[q] = ndcg_kernel(s[a:b], z[a:b], k, discount, coef[a:b], order[a:b])
        elif kernel == 3:
            delta[q] = mrr_po_kernel(s[a:b], z[a:b], k, discount, coef[a:b], order[a:b])
        else:
            delta[q] = mrr_kernel(s[a:b], z[a:b], k, discount, coef[a:b], order[a:b])
    return delta


@lru_cache(maxsize=16)
def _discount_table(name: str, n: int) -> np.ndarray:
    table = discounts(DISCOUNTS[name][1], n)
    table.flags.writeable = False
    return table


def batch_outputs(n, out=None):
    """The ``(coef, order)`` arrays a batch oracle fills: the caller's ``out`` or new ones."""
    if out is None:
        return np.empty(n), np.empty(n, dtype=np.int64)
    coef, order = out
    if coef.shape != (n,) or order.shape != (n,) or coef.dtype != np.float64 or order.dtype != np.int64:
        raise ValueError(f"out must be (float64, int64) arrays of {n} rows")
    return coef, order


def _table_for(name: str, n: int) -> np.ndarray:
    # tables grow in powers of two so that a few cached ones serve every query length
    return _discount_table(name, max(64, 1 << max(int(n) - 1, 1).bit_length()))


# loss -> the metric it stands for (k: its cut-off)
LOSS_METRIC = {"auc": "auc", "map": "map", "ndcg": "ndcg@{k}", "ndcg-nc": "ndcg", "mrr": "mrr@{k}"}


@dataclass(frozen=True)
class StructuredLoss(RankingLoss):
    """One loss-augmented inference problem: a loss, a feature map and their options.

    Parameters
    ----------
    name : {"auc", "map", "ndcg", "ndcg-nc", "mrr"}
    feature_map : {"po", "mrr", "dorm"} or None
        None takes the paper's map for the loss (phi_mrr for MRR, phi_po otherwise). "dorm"
        goes with "ndcg" and "ndcg-nc" only: the assignment cannot count documents above a
        position, so it cannot express MAP or MRR (Sec. 3.5).
    k : int
        Cut-off of NDCG@k and MRR@k (ignored by "auc", "map", "ndcg-nc").
    discount : {"letor", "log2"}
        NDCG discount: "letor" (1 at ranks 1 and 2, then 1/log2(rank)), the paper's and the
        LETOR scripts'; "log2" (1/log2(rank + 1)), trec_eval's.
    relevant_from : int
        Labels >= this are good.
    dorm_cut : int or None
        DORM's decay ``A(r) = 1/sqrt(1 + r)`` is 0 from this rank on (the sparse variant).
    gain : {"binary", "exp2"}
        NDCG's gain: binary relevance (the paper), or ``2^label - 1`` (LETOR 4.0's and MSLR's
        NDCG). Graded with phi_po, the pairs of phi_po are all pairs of different labels and
        ``relevant_from`` is not used; it needs the cut-off of "ndcg" (the no-clip table would
        grow as n^G) and labels >= 0.

    Examples
    --------
    >>> import numpy as np
    >>> scores, labels = np.array([0.0, 1.0, 0.5, 0.2]), np.array([1, 0, 0, 1])
    >>> loss = StructuredLoss("mrr")  # phi_mrr, the paper's map for MRR
    >>> v = loss.oracle(scores, labels)
    >>> loss.label, round(v.loss, 4), v.order.tolist(), v.coef.tolist()
    ('mrr@10/mrr', 0.6667, [1, 2, 0, 3], [-2.0, 1.0, 1.0, 0.0])
    """

    name: str
    feature_map: str | None = None
    k: int = 10
    discount: str = "letor"
    relevant_from: int = 1
    dorm_cut: int | None = None
    gain: str = "binary"

    def __post_init__(self):
        if self.name not in DEFAULT_FEATURE_MAP:
            raise ValueError(f"unknown loss {self.name!r}; known: {', '.join(LOSSES)}")
        if self.feature_map is None:
            object.__setattr__(self, "feature_map", DEFAULT_FEATURE_MAP[self.name])
        if self.feature_map == "dorm":
            if self.name not in ("ndcg", "ndcg-nc"):
                raise ValueError(f"feature_map 'dorm' goes with the ndcg losses, not {self.name!r}")
        elif (self.name, self.feature_map) not in _KERNELS:
            raise ValueError(f"loss {self.name!r} has no oracle for feature_map {self.feature_map!r}")
        if self.discount not in DISCOUNTS:
            raise ValueError(f"discount must be one of {', '.join(DISCOUNTS)}, got {self.discount!r}")
        if self.gain not in ("binary", "exp2"):
            raise ValueError(f"gain must be 'binary' or 'exp2', got {self.gain!r}")
        if self.gain == "exp2" and not (self.feature_map == "dorm" or (self.name, self.feature_map) == ("ndcg", "po")):
            raise ValueError("gain 'exp2' (graded) is available for ndcg with feature_map 'po' or 'dorm', "
                             f"not {self.name!r} with {self.feature_map!r}")
        if int(self.k) != self.k or (self.k < 1 and self.name in ("ndcg", "mrr")):
            raise ValueError(f"k must be a positive integer, got {self.k!r}")

    @property
    def label(self) -> str:
        """Short readable name, e.g. ``ndcg@10/po``."""
        cut = f"@{self.k}" if self.name in ("ndcg", "mrr") else ""
        return f"{self.name}{cut}/{self.feature_map}"

    @property
    def metrics(self) -> tuple:
        return (LOSS_METRIC[self.name].format(k=self.k),)

    @property
    def labels(self) -> str:
        return "graded" if self.gain == "exp2" else "binary"

    @property
    def convention(self) -> str:
        # graded gains 2^label - 1: the MSLR script's on labels 0-4, letor4's on 0-2 (auto picks between
        # them); otherwise the discount names the convention
        return "auto" if self.gain == "exp2" else DISCOUNTS[self.discount][0]

    @property
    def _cut(self) -> int:
        return 0 if self.name == "ndcg-nc" else int(self.k)  # 0: no cut-off

    def relevance(self, labels) -> np.ndarray:
        return (np.asarray(labels) >= self.relevant_from).astype(np.int8)

    def gains(self, labels) -> np.ndarray:
        labels = np.asarray(labels, dtype=np.float64)
        if self.gain == "exp2":
            return np.exp2(labels) - 1.0
        return (labels >= self.relevant_from).astype(np.float64)

    def decay(self, n):
        """phi_dorm's A(rank) for a list of n documents (cut at ``dorm_cut``)."""
        return dorm_decay(n, self.dorm_cut)

    def oracle(self, scores, labels) -> Violation:
        """The max-violating structure of one query."""
        scores = np.ascontiguousarray(scores, dtype=np.float64)
        offsets = np.array([0, scores.shape[0]], dtype=np.int64)
        coef, delta, order = self._batch(scores, labels, offsets)
        return Violation(coef, float(delta[0]), order)

    def batch(self, scores, labels, offsets, out=None):
        """``(c_hat, delta)`` for every query at once.

        ``out``: optional ``(coef, order)`` arrays (float64, int64) of the rows' length to fill,
        so that a caller running many batches reuses its memory (``structrank.parallel.scratch.scratch``).
        """
        coef, delta, _ = self._batch(np.ascontiguousarray(scores, dtype=np.float64), labels, offsets, out)
        return coef, delta

    def _batch(self, scores, labels, offsets, out=None):
        offsets = np.asarray(offsets, dtype=np.int64)
        if self.feature_map == "dorm":
            return self._dorm_batch(scores, labels, offsets, out)
        if self._graded_po:
            return self._graded_batch(scores, labels, offsets, out)
        z = self.relevance(labels)
        longest = longest_query(offsets)
        coef, order = batch_outputs(scores.shape[0], out)
        kernel = _KERNELS[(self.name, self.feature_map)]
        delta = _run_batch(kernel, scores, z, offsets, self._cut, _table_for(self.discount, longest), coef, order)
        return coef, delta, order

    @property
    def _graded_po(self) -> bool:
        return self.gain == "exp2" and self.feature_map == "po"

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

    @property
    def star_varies(self) -> bool:
        """Whether ``c_star`` depends on the scores (phi_dorm: the order within a grade matters)."""
        return self.feature_map == "dorm"

    def star(self, scores, labels, offsets) -> np.ndarray:
        """Coefficients of the best correct structure of every query.

        phi_po gives every correct ranking (all good above all bad) the same coefficients, and
        phi_mrr gives them 0. phi_dorm tells the correct rankings apart by the order within a
        grade; the best one for the current scores sorts each grade by score, so no correct
        ranking ever violates a constraint (this is the imputation a latent SVM would make).
        """
        offsets = np.asarray(offsets, dtype=np.int64)
        out = np.zeros(offsets[-1])
        if self.feature_map == "mrr":
            return out
        if self.feature_map == "dorm":
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
    >>> from structrank.oracles import StructuredLoss
    >>> combo = ComboLoss(components=(StructuredLoss("map"), StructuredLoss("mrr")))
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
            coef, delta, order = component._batch(scores, labels, offsets)
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


def make_loss(name, feature_map=None, k=10, discount="letor", relevant_from=1, dorm_cut=None, gain="binary",
              components=DEFAULT_COMBO):
    """The registered loss ``name`` (structrank.losses) built from the estimator's options."""
    return get_loss(name, feature_map=feature_map, k=k, discount=discount, relevant_from=relevant_from,
                    dorm_cut=dorm_cut, gain=gain, components=components)
