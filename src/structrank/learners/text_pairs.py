"""(query, candidate) text pairs grouped by query, and how a text reranker batches them.

A text reranker takes its data as a ``QAData`` (``structrank.qa``: what the QA readers return, labels and
question ids inside) or as a sequence of (query, candidate) pairs with ``y`` and ``qid`` beside it, the
calling convention of the feature-based rankers. ``TextPairs`` is either, with each query's pairs
contiguous (a stable regrouping, as ``RankingDataset`` does). Told to read titles, the candidates are QA data's
``titled_candidates`` (each with its document's title before it); pairs carry no titles and are refused then.

Batches (no torch here):

- training, ``query_batches``: whole queries, so that a listwise loss sees every candidate of a query
  together. Queries are shuffled, then sorted by length within windows of ``SORT_WINDOW`` batches and
  cut into batches of about ``batch_size`` pairs, and the batches are shuffled: a batch holds pairs
  of similar length, so padding to its longest wastes little, and the order still varies per epoch;
- prediction, ``length_sorted_batches``: pairs sorted by length, cut every ``batch_size``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from structrank.data.dataset import contiguous_order, group_offsets
from structrank.data.labels import check_labels
from structrank.errors import DataValidationError

#: training batches are length-sorted within windows of this many batches (then shuffled)
SORT_WINDOW = 50


@dataclass
class TextPairs:
    """Text pairs with each query's rows contiguous; ``order`` maps them back to the caller's rows."""

    queries: list
    candidates: list
    y: np.ndarray | None
    qid: np.ndarray | None
    docids: list | None
    offsets: np.ndarray | None
    order: np.ndarray | None  # caller's row of each row here (None: the same order)

    @property
    def n_rows(self) -> int:
        return len(self.candidates)

    def informative(self) -> "TextPairs":
        """Only the queries with two different labels (the rest give a list or pair loss nothing to order)."""
        sizes = np.diff(self.offsets)
        starts = self.offsets[:-1]
        keep = np.flatnonzero(np.maximum.reduceat(self.y, starts) != np.minimum.reduceat(self.y, starts))
        if keep.size == sizes.size:
            return self
        rows = np.concatenate([np.arange(self.offsets[q], self.offsets[q + 1]) for q in keep])
        offsets = np.concatenate([[0], np.cumsum(sizes[keep])])
        pick = (lambda values: None if values is None else [values[i] for i in rows])
        return TextPairs(pick(self.queries), pick(self.candidates), self.y[rows], self.qid[rows], pick(self.docids),
                         offsets, None if self.order is None else self.order[rows])

    def in_caller_order(self, values):
        """``values`` (one per row here) in the caller's row order."""
        if self.order is None:
            return values
        out = np.empty_like(values)
        out[self.order] = values
        return out


def docids_of(pairs: TextPairs) -> list:
    """The pairs' document ids (trec_eval breaks ties by them): QA data's, else each row's number in the caller's
    order, zero-padded so that they sort as numbers."""
    if pairs.docids is not None:
        return pairs.docids
    rows = np.arange(pairs.n_rows) if pairs.order is None else pairs.order
    width = len(str(pairs.n_rows))
    return [f"{r:0{width}d}" for r in rows]


def _is_qa_data(X) -> bool:
    return hasattr(X, "candidates") and hasattr(X, "pair_questions") and hasattr(X, "labels")


def _pairs_of(X, where):
    """(queries, candidates) of a sequence of pairs (a list of 2-tuples, a 2-column array or DataFrame)."""
    if hasattr(X, "iloc") and hasattr(X, "columns"):  # a DataFrame: its first two columns
        if len(X.columns) != 2:
            raise DataValidationError(f"{where}: a DataFrame of pairs needs 2 columns (query, candidate), got "
                                      f"{len(X.columns)}")
        X = list(zip(X.iloc[:, 0], X.iloc[:, 1]))
    if isinstance(X, (str, bytes)) or not hasattr(X, "__len__"):
        raise DataValidationError(f"{where}: X must be (query, candidate) text pairs or QA data, got {type(X).__name__}")
    queries, candidates = [], []
    for i, pair in enumerate(X):
        if isinstance(pair, (str, bytes)) or len(pair) != 2:
            raise DataValidationError(f"{where}: row {i} of X is not a (query, candidate) pair: {pair!r:.80}")
        for text, field in zip(pair, ("query", "candidate")):
            if not isinstance(text, str):
                raise DataValidationError(f"{where}: row {i}'s {field} is {type(text).__name__}, not text")
        queries.append(pair[0])
        candidates.append(pair[1])
    return queries, candidates


def text_pairs(X, y=None, qid=None, where="fit", labelled=True, titles=False) -> TextPairs:
    """``TextPairs`` of a fit's or a predict's input (``labelled``: y and qid required, queries regrouped;
    ``titles``: each candidate read with its document's title, which only QA data gives)."""
    docids = None
    if _is_qa_data(X):
        if y is not None or qid is not None:
            raise DataValidationError(f"{where}: QA data carries its labels and question ids; give no y or qid")
        try:
            candidates = X.titled_candidates() if titles else list(X.candidates)
        except DataValidationError as exc:
            raise DataValidationError(f"{where}: titles=True: {exc}") from None
        queries, y, qid, docids = X.pair_questions(), X.labels, X.qid, list(X.docids)
    elif titles:
        raise DataValidationError(f"{where}: titles=True reads each candidate's document title from QA data "
                                  "(structrank.qa's readers); pairs carry none: give QA data, or pairs whose "
                                  "candidates hold their titles with titles=False")
    else:
        queries, candidates = _pairs_of(X, where)
    if not candidates:
        raise DataValidationError(f"{where}: no (query, candidate) pairs")
    if not labelled:
        return TextPairs(queries, candidates, None, None, docids, None, None)
    if y is None or qid is None:
        raise DataValidationError(f"{where} needs relevance labels y and qid (one query id per pair), or QA data")
    y = check_labels(np.asarray(y), where)
    qid = np.asarray(qid)
    if y.shape[0] != len(candidates) or qid.shape[0] != len(candidates):
        raise DataValidationError(f"{where}: {len(candidates)} pairs, {y.shape[0]} labels and {qid.shape[0]} qids")
    order = contiguous_order(qid)
    if order is not None:
        queries, candidates = [queries[i] for i in order], [candidates[i] for i in order]
        y, qid = y[order], qid[order]
        docids = None if docids is None else [docids[i] for i in order]
    offsets, _ = group_offsets(qid)
    return TextPairs(queries, candidates, y.astype(np.int64), qid, docids, offsets, order)


def query_batches(lengths, offsets, batch_size, rng) -> list:
    """An epoch's batches: arrays of query indices, whole queries of about ``batch_size`` pairs in all, queries of
    similar length together (see the module docstring); a query longer than ``batch_size`` is a batch alone."""
    lengths, offsets = np.asarray(lengths), np.asarray(offsets)
    n_queries = offsets.size - 1
    longest = np.maximum.reduceat(lengths, offsets[:-1]) if n_queries else np.zeros(0, dtype=np.int64)
    sizes = np.diff(offsets)
    shuffled = rng.permutation(n_queries)
    window = max(int(SORT_WINDOW * batch_size / max(float(sizes.mean()), 1.0)), 1) if n_queries else 1
    batches = []
    for start in range(0, n_queries, window):
        chunk = shuffled[start:start + window]
        chunk = chunk[np.argsort(longest[chunk], kind="stable")]
        batch, pairs = [], 0
        for q in chunk:
            if batch and pairs + sizes[q] > batch_size:
                batches.append(np.array(batch))
                batch, pairs = [], 0
            batch.append(q)
            pairs += sizes[q]
        if batch:
            batches.append(np.array(batch))
    return [batches[i] for i in rng.permutation(len(batches))]


def length_sorted_batches(lengths, batch_size) -> list:
    """Prediction batches: row indices sorted by decreasing length, cut every ``batch_size`` rows."""
    order = np.argsort(-np.asarray(lengths), kind="stable")
    return [order[i:i + batch_size] for i in range(0, order.size, batch_size)]
