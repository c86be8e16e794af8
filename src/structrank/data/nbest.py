"""N-best lists as ranking data with two views (Jagarlamudi & Daumé 2012; Collins & Koo 2005).

An n-best list is a query whose documents are the candidate outputs of a base model for one
input (a sentence's 10 best tag sequences). A reranker sees, per candidate row:

- ``x``: the input view (for tagging, the sentence's bag of suffixes), one CSR row per
  candidate -- identical rows within a list, repeated so that every array is row-aligned;
- ``y``: the output view (the candidate's bag of tag unigrams and bigrams), CSR;
- ``loss``: the candidate's loss (number of wrong tags), 0 for a correct one;
- ``base_score``: the base model's score (the Viterbi log-probability), higher is better;
- ``qid``: the list it belongs to, rows of one list contiguous, in the base model's order
  (best first).

``gold_x``/``gold_y`` optionally hold the views of each list's reference output (one row per
list), which generative training uses even when the reference is not in the n-best list.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from structrank.data.dataset import group_offsets
from structrank.errors import DataValidationError


@dataclass
class NBestData:
    """N-best lists: each list's candidates as rows, with an input view, an output view and a loss.

    Parameters
    ----------
    x : sparse matrix of shape (n_candidates, d1)
        The input view, one row per candidate (identical within a list).
    y : sparse matrix of shape (n_candidates, d2)
        The output view of each candidate.
    loss : array-like of shape (n_candidates,)
        Each candidate's loss (wrong units), 0 for a correct one.
    base_score : array-like of shape (n_candidates,)
        The base model's score, higher is better.
    qid : array-like of shape (n_candidates,)
        The list of each candidate; a list's rows are contiguous.
    gold_x, gold_y : sparse matrix with one row per list, optional
        The views of each list's reference output.
    size : array-like of shape (n_lists,), optional
        Units per list (a sentence's tokens), for ``accuracy_of``.

    Examples
    --------
    >>> import numpy as np
    >>> data = NBestData(x=np.ones((4, 2)), y=np.eye(4), loss=[1, 0, 0, 2],
    ...                  base_score=[-1.0, -1.5, -0.5, -2.0], qid=[0, 0, 1, 1], size=[3, 3])
    >>> data.n_lists
    2
    >>> data.chosen(data.base_score).tolist()  # the base model's choice in each list
    [0, 2]
    >>> round(data.accuracy_of(data.base_score), 4), data.oracle_accuracy()
    (0.8333, 1.0)
    """

    x: sp.csr_matrix
    y: sp.csr_matrix
    loss: np.ndarray
    base_score: np.ndarray
    qid: np.ndarray
    gold_x: sp.csr_matrix | None = None
    gold_y: sp.csr_matrix | None = None
    #: number of scored units per list (tokens of the sentence), for token accuracy
    size: np.ndarray | None = None

    def __post_init__(self):
        self.x = sp.csr_matrix(self.x)
        self.y = sp.csr_matrix(self.y)
        self.loss = np.asarray(self.loss, dtype=np.float64)
        self.base_score = np.asarray(self.base_score, dtype=np.float64)
        self.qid = np.asarray(self.qid)
        n = self.x.shape[0]
        for name in ("y", "loss", "base_score", "qid"):
            value = getattr(self, name)
            if value.shape[0] != n:
                raise DataValidationError(f"NBestData: x has {n} rows but {name} has {value.shape[0]}")
        self.offsets, self.list_ids = group_offsets(self.qid)
        n_lists = self.offsets.size - 1
        for name in ("gold_x", "gold_y"):
            value = getattr(self, name)
            if value is not None:
                value = sp.csr_matrix(value)
                setattr(self, name, value)
                if value.shape[0] != n_lists:
                    raise DataValidationError(f"NBestData: {n_lists} lists but {name} has {value.shape[0]} rows")
        if self.size is not None:
            self.size = np.asarray(self.size, dtype=np.int64)
            if self.size.shape[0] != n_lists:
                raise DataValidationError(f"NBestData: {n_lists} lists but size has {self.size.shape[0]} entries")

    @property
    def n_lists(self) -> int:
        return self.offsets.size - 1

    def chosen(self, scores) -> np.ndarray:
        """Row index of the highest-scoring candidate of each list (the first on ties)."""
        scores = np.asarray(scores, dtype=np.float64)
        if scores.shape[0] != self.x.shape[0]:
            raise DataValidationError(f"{scores.shape[0]} scores for {self.x.shape[0]} candidates")
        return np.array([a + int(np.argmax(scores[a:b])) for a, b in zip(self.offsets[:-1], self.offsets[1:])],
                        dtype=np.int64)

    def loss_of(self, scores) -> float:
        """Total loss of the candidates chosen by ``scores``."""
        return float(self.loss[self.chosen(scores)].sum())

    def accuracy_of(self, scores) -> float:
        """Unit accuracy (token accuracy for tagging) of the chosen candidates; needs ``size``.

        Losses count wrong units of the whole output, so for a list whose reference is not
        among its candidates the chosen candidate's loss is still its true number of errors.
        """
        if self.size is None:
            raise DataValidationError("accuracy needs the number of units per list (size)")
        return 1.0 - self.loss_of(scores) / float(self.size.sum())

    def oracle_accuracy(self) -> float:
        """Accuracy when each list's lowest-loss candidate is chosen."""
        return self.accuracy_of(-self.loss)

    def take_lists(self, lists) -> "NBestData":
        """The lists whose positions (0-based, in order) are ``lists``."""
        lists = np.asarray(lists, dtype=np.int64)
        rows = np.concatenate([np.arange(self.offsets[q], self.offsets[q + 1]) for q in lists]) if lists.size else \
            np.zeros(0, dtype=np.int64)
        pick = lambda m: None if m is None else m[lists]  # noqa: E731
        return NBestData(self.x[rows], self.y[rows], self.loss[rows], self.base_score[rows], self.qid[rows],
                         pick(self.gold_x), pick(self.gold_y), pick(self.size))
