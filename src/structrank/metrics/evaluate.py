"""evaluate(): per-query and mean metrics of scored documents under a named convention.

``evaluate`` checks its inputs (lengths, dtypes, metric names and cut-offs; names are parsed once
and cached; only structrank's errors escape, fuzzed in tests/library/test_fuzz.py), groups the rows by
query (contiguous queries, as in LETOR and TREC files, need no sort), ranks each query with
``query_loops.rank_segments`` under the convention's tie rule (document ids as a code-point matrix: a
view of a str array), runs the per-query loops (``query_loops``) and returns an ``EvaluationResult``. They are
imported at the first evaluation, so importing the metrics loads no numba.
"""

from __future__ import annotations

import functools
import re
import warnings
from dataclasses import dataclass, field

import numpy as np

from structrank.data.labels import check_labels, check_qid
from structrank.errors import ConventionWarning, DataValidationError
from structrank.metrics.tool_measures import FAMILIES as TOOL_FAMILIES
from structrank.metrics.tool_measures import NAMES_HELP, list_values, parse as parse_tool_measure
from structrank.metrics.conventions import AUTO, Convention, auto_convention, get_convention, is_auto

_METRIC = re.compile(r"^(map|ap|mrr|rr|ndcg|p|precision|recall|r|success|rprec|bpref|auc)(?:@(\d+))?$")
# trec_eval's names with a cut-off (ndcg_cut_10, map_cut_10, P_10, recall_100, success_1) and without
_TREC_CUT = re.compile(r"^(ndcg_cut|map_cut|p|recall|success)_(\d+)$")
_TREC_NAMES = {"recip_rank": "mrr"}
_ALIASES = {"ap": "map", "rr": "mrr", "precision": "p", "r": "recall", "ndcg_cut": "ndcg", "map_cut": "map"}
_NEEDS_CUTOFF = ("p", "precision", "recall", "r", "success")
_NO_CUTOFF = ("auc", "rprec", "bpref")
_MAX_CUTOFF = 2**31 - 1  # the loops take the cut-off as a 64-bit int

#: what ``evaluate`` (and ``structrank evaluate``) measures when no metric is named
DEFAULT_METRICS = ("map", "mrr", "ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "p@1", "p@5", "p@10")


def parse_metric(name: str) -> tuple[str, int]:
    """Split a metric name into its family and cut-off (0 for none): ``"ndcg@10" -> ("ndcg", 10)``."""
    if not isinstance(name, str):
        raise ValueError(f"a metric name must be a string such as 'map' or 'ndcg@10', got {name!r}")
    return _parse_metric(name)


@functools.lru_cache(maxsize=1024)
def _parse_metric(name: str) -> tuple[str, int]:
    # cached: an evaluation of nine metrics spent a fifth of its time matching their names
    text = name.strip().lower()
    spec = parse_tool_measure(text)  # ERR, nDCG(dcg='exp-log2'), RBP, infAP, Judged: names with parameters
    if spec is not None:
        return spec.family, spec.k
    text = _TREC_NAMES.get(text, text)
    trec = _TREC_CUT.fullmatch(text)
    match = _METRIC.fullmatch(f"{trec.group(1)}@{trec.group(2)}" if trec else text)
    if trec and match is None:  # ndcg_cut / map_cut are not names of their own
        match = _METRIC.fullmatch(f"{_ALIASES[trec.group(1)]}@{trec.group(2)}")
    if match is None or (match.group(1) in _NEEDS_CUTOFF and match.group(2) is None):
        raise ValueError(
            f"unknown metric {name!r}; use map, map@k, mrr, mrr@k, ndcg, ndcg@k, p@k, recall@k, rprec, success@k, "
            "bpref or auc (or the ir_measures and trec_eval names: AP, nDCG@10, RR, P@10, R@100, Rprec, Success@1, "
            f"ndcg_cut_10, recip_rank, P_10, recall_100, map_cut_10, success_1), or {NAMES_HELP}"
        )
    family = _ALIASES.get(match.group(1), match.group(1))
    k = int(match.group(2) or 0)
    if match.group(2) is not None and k < 1:
        raise ValueError(f"metric {name!r}: the cut-off must be >= 1")
    if k > _MAX_CUTOFF:
        raise ValueError(f"metric {name!r}: the cut-off must be at most {_MAX_CUTOFF}")
    if family in _NO_CUTOFF and k:
        raise ValueError(f"{family} takes no cut-off")
    return family, k


def canonical_name(name: str) -> str:
    """The name a metric is reported under: lower case, the cut-off after ``@``.

    >>> canonical_name("NDCG@10"), canonical_name("P@5"), canonical_name("map")
    ('ndcg@10', 'p@5', 'map')

    The measures of ``tool_measures`` keep their parameters, written out in full:

    >>> canonical_name("RBP(rel=1)"), canonical_name("ERR@20"), canonical_name("ndcg_burges@10")
    ('rbp(p=0.8,rel=1)', 'err@20', "ndcg(dcg='exp-log2')@10")
    """
    family, k = parse_metric(name)
    if family in TOOL_FAMILIES or "(" in name:
        return parse_tool_measure(name.strip().lower()).canonical  # its parameters belong to its name
    return f"{family}@{k}" if k else family


@dataclass
class EvaluationResult:
    """Per-query and mean values of some metrics under one convention.

    Attributes
    ----------
    metrics : dict {name: mean over queries}
    per_query : dict {name: ndarray, aligned with ``qids``}
    qids : ndarray, each query's id in order of first appearance
    convention : str
        The convention the values were computed under (what ``auto`` resolved to, when it did).
    auto : bool
        Whether ``auto`` chose the convention from the labels; ``convention_label`` says so
        ("mslr (auto)").

    Examples
    --------
    >>> from structrank.metrics import evaluate
    >>> result = evaluate([1, 0, 0, 1, 1, 0], [0.9, 0.8, 0.1, 0.2, 0.7, 0.3], qid=[1, 1, 1, 2, 2, 2],
    ...                   metrics=["map", "p@1"], convention="letor4")
    >>> {name: round(value, 4) for name, value in result.metrics.items()}
    {'map': 0.9167, 'p@1': 1.0}
    >>> result.qids.tolist(), result.per_query["map"].round(4).tolist()
    ([1, 2], [1.0, 0.8333])
    >>> result.to_dict(per_query=False)["queries"]
    2
    """

    metrics: dict
    per_query: dict
    qids: np.ndarray
    convention: str
    auto: bool = False
    n_queries: int = field(init=False)

    def __post_init__(self):
        self.n_queries = int(self.qids.shape[0])

    @property
    def convention_label(self) -> str:
        """The convention as reports print it: its name, and "(auto)" when ``auto`` chose it."""
        return f"{self.convention} (auto)" if self.auto else self.convention

    def mean_of(self, metrics=None) -> float:
        """The mean of some of the metrics (each a mean over queries; all of them by default): what a
        learner, a grid search or an epoch choice ranks by when it names several metrics (NDCG@1-5).

        >>> from structrank.metrics import evaluate
        >>> evaluate([1, 0, 1, 0], [0.9, 0.1, 0.2, 0.8], qid=[1, 1, 2, 2], metrics=["p@1", "map"]).mean_of(["p@1"])
        0.5
        """
        return float(np.mean([self.metrics[m] for m in (self.metrics if metrics is None else metrics)]))

    def to_dict(self, per_query: bool = True) -> dict:
        """The JSON form of ``structrank evaluate --json``."""
        out = {"convention": self.convention, "convention_auto": self.auto, "queries": self.n_queries,
               "metrics": dict(self.metrics)}
        if per_query:
            names = list(self.per_query)
            out["per_query"] = {
                str(q): {name: float(self.per_query[name][i]) for name in names} for i, q in enumerate(self.qids)
            }
        return out

    def __getitem__(self, name):
        return self.metrics[canonical_name(name)]


def rank_order(scores, qid, docids=None, ties: str = "input"):
    """Row order that ranks every query's documents, queries in order of first appearance.

    Returns ``(order, offsets, query_ids)``: ``order[offsets[q]:offsets[q+1]]`` are the rows of
    query q from best to worst.
    """
    # deferred: numba, loaded on the first evaluation, not on import (tests/library/test_import_graph.py)
    from structrank.metrics import query_loops

    scores = np.asarray(scores, dtype=np.float64)
    qid = np.asarray(qid)
    if ties not in ("input", "docid_desc"):
        raise ValueError(f"unknown tie rule {ties!r}")
    if ties == "docid_desc" and docids is None:
        raise DataValidationError("this convention breaks ties by document id (trec_eval); pass docids")
    rows, offsets, query_ids = _group_rows(qid)
    by_docid = ties == "docid_desc"
    keys = _docid_keys(docids) if by_docid else _NO_KEYS
    if rows is not None:  # queries interleaved: rank the grouped rows, then map back
        scores = scores[rows]
        keys = keys[rows] if by_docid else keys
    order = query_loops.rank_segments(scores, offsets, keys, by_docid)
    return (order if rows is None else rows[order]), offsets, query_ids


_NO_KEYS = np.zeros((0, 0), np.uint32)


def _group_rows(qid):
    """``(rows, offsets, query_ids)``: ``rows`` the stable permutation that makes each query's rows
    contiguous, queries in order of first appearance (None when they already are, as in LETOR and
    TREC files); ``offsets`` the query boundaries after it."""
    n = qid.shape[0]
    if n:
        starts = np.flatnonzero(qid[1:] != qid[:-1]) + 1
        first = np.concatenate([[0], starts])
        query_ids = qid[first]
        if np.unique(query_ids).shape[0] == query_ids.shape[0]:  # every query in one block
            return None, np.append(first, n).astype(np.int64), query_ids
    uniques, first, codes = np.unique(qid, return_index=True, return_inverse=True)
    # queries are numbered by first appearance so that results follow the input's order
    appearance = np.empty(uniques.shape[0], dtype=np.int64)
    appearance[np.argsort(first, kind="stable")] = np.arange(uniques.shape[0])
    query_code = appearance[codes.ravel()]
    rows = np.argsort(query_code, kind="stable")
    counts = np.bincount(query_code, minlength=uniques.shape[0])
    offsets = np.zeros(uniques.shape[0] + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return rows, offsets, qid[np.sort(first)]


def _docid_keys(docids) -> np.ndarray:
    """The document ids as a (rows, characters) matrix of code points, 0-padded: a view of a NumPy
    str array, else one conversion of the objects (no sort of strings, no Python comparison)."""
    ids = np.asarray(docids)
    if ids.dtype.kind != "U":
        ids = ids.astype(str)
    ids = np.ascontiguousarray(ids)
    width = max(ids.dtype.itemsize // 4, 1)
    if ids.dtype.itemsize == 0:
        return np.zeros((ids.shape[0], 1), np.uint32)
    points = ids.view(np.uint32).reshape(ids.shape[0], width)
    if points.size and points.max() < 128:  # ASCII: code points are the bytes
        return points
    # trec_eval compares docnos with strcmp, byte by byte: code point order is UTF-8's byte order, but not
    # for a byte that was not UTF-8 (held as a surrogate by the readers), so compare the bytes themselves
    raw = np.array([d.encode("utf-8", errors="surrogateescape") for d in ids.tolist()], dtype=np.bytes_)
    return raw.view(np.uint8).reshape(ids.shape[0], max(raw.dtype.itemsize, 1)).astype(np.uint32)


def _check_inputs(y, scores, qid, docids):
    y = np.asarray(y)
    try:
        scores = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise DataValidationError(f"scores must be real numbers ({exc})") from None
    qid = np.asarray(qid)
    if y.ndim != 1 or scores.ndim != 1 or qid.ndim != 1:
        raise DataValidationError("y, scores and qid must be 1-dimensional")
    check_qid(qid)
    if not (y.shape[0] == scores.shape[0] == qid.shape[0]):
        raise DataValidationError(
            f"y, scores and qid must have the same length, got {y.shape[0]}, {scores.shape[0]}, {qid.shape[0]}"
        )
    if docids is not None:
        docids = np.asarray(docids)
        if docids.ndim != 1 or docids.shape[0] != y.shape[0]:
            raise DataValidationError(f"docids must have one entry per row ({y.shape[0]}), got shape {docids.shape}")
    bad = np.flatnonzero(~np.isfinite(scores))
    if bad.size:
        raise DataValidationError(f"score of row {int(bad[0])} is {scores[bad[0]]}: scores must be finite")
    return check_labels(y), scores, qid


def _warn_uncredited(conv, labels):
    """Say when labels lie above what the convention credits (gain 0, not relevant), as LETOR 4.0's
    script does silently: data graded 0-4 evaluated under letor4 would lose its best documents."""
    if conv.label_max is None or not labels.size:
        return
    above = int(np.count_nonzero(labels > conv.label_max))
    if above:
        warnings.warn(f"{above} documents have labels above {conv.label_max}, which the {conv.name} convention "
                      f"counts as gain 0 and not relevant (as its official script does); for labels up to 4 use "
                      "convention='mslr', for any label 'trec', or 'auto' (the default) to follow the labels",
                      ConventionWarning, stacklevel=3)


# Labels up to this take the counting sort of the ideal gains (a table of one gain per level)
_MAX_LEVEL_TABLE = 64


def _ideal_gains(query_loops, conv, labels, gains, offsets):
    """Each query's gains in decreasing order: counted per label level when the labels are small
    integers (the LETOR and TREC judgements), else sorted."""
    top = int(labels.max()) if labels.size else 0
    if top > _MAX_LEVEL_TABLE:
        return query_loops.ideal_gains(gains, offsets)
    table = conv.gains(np.arange(top + 1))
    by_gain = np.argsort(-table, kind="stable")  # levels, largest gain first
    rank = np.empty(top + 1, np.int64)
    rank[by_gain] = np.arange(top + 1)
    return query_loops.ideal_gains_by_level(rank[labels.astype(np.int64)], table[by_gain], offsets)


def evaluate(y, scores, qid, metrics=DEFAULT_METRICS, convention=AUTO, docids=None) -> EvaluationResult:
    """Per-query and mean ranking metrics of ``scores`` under a named convention.

    Parameters
    ----------
    y : array of int, shape (n_rows,)
        Relevance labels.
    scores : array of float, shape (n_rows,)
        Higher is better.
    qid : array, shape (n_rows,)
        Query of each row; rows of a query need not be contiguous.
    metrics : iterable of str
        Names such as ``"map"``, ``"mrr"``, ``"mrr@10"``, ``"ndcg@10"``, ``"ndcg"``, ``"p@5"``, ``"recall@10"``, ``"auc"``.
    convention : str or Convention, default "auto"
        ``"letor4"``, ``"letor3"``, ``"mslr"``, ``"trec"`` or ``"semeval"`` (see
        ``structrank.metrics.CONVENTIONS``), or ``"auto"``: the one the labels allow
        (``conventions.auto_convention``: letor4 for labels 0-2, mslr up to 4, trec above), so that a
        perfect ranking scores 1 on any label range. The result names what was used.
    docids : array of str, optional
        Needed by conventions that break ties by document id ("trec"); when ``auto`` picks trec
        without them, the rows' numbers from 1, in the order given, stand in (for a file whose
        queries are contiguous, the line numbers ``structrank predict --format trec`` writes).

    Returns
    -------
    EvaluationResult
        Every value is in [0, 1] but the graded RBP's (``rbp(p=0.8)``: the label is its gain, as trectools',
        so its values lie in [0, the largest label]). With no rows there are no queries, and each mean is NaN.

    Raises
    ------
    ValueError
        An unknown metric name or convention.
    DataValidationError (a ValueError)
        Arrays that do not fit: other lengths or dimensions, labels that are not non-negative
        integers, scores that are not finite numbers, query ids of mixed types, missing docids
        for a convention that needs them.

    Examples
    --------
    >>> r = evaluate([2, 0, 1, 0, 0], [5, 4, 3, 2, 1], [1] * 5, ["ndcg@3"], "letor4")
    >>> round(r.metrics["ndcg@3"], 4)
    0.9077
    >>> r = evaluate([2, 0, 1, 0, 0], [5, 4, 3, 2, 1], [1] * 5, ["ndcg@3"], "trec", docids=list("abcde"))
    >>> round(r.metrics["ndcg@3"], 4)
    0.9502
    >>> r = evaluate([4, 3, 0, 1], [4, 3, 0, 1], [1] * 4, ["ndcg@3", "map"])  # auto: labels 0-4 -> mslr
    >>> r.convention_label, r.metrics
    ('mslr (auto)', {'ndcg@3': 1.0, 'map': 1.0})
    """
    auto = is_auto(convention)
    conv: Convention | None = None if auto else get_convention(convention)
    if isinstance(metrics, str):  # one name, not its letters
        metrics = [metrics]
    names = [canonical_name(m) for m in metrics]
    from structrank.metrics import query_loops  # deferred: numba, loaded on the first evaluation, not on import

    y, scores, qid = _check_inputs(y, scores, qid, docids)
    if auto:
        conv = auto_convention(y)
        if conv.ties == "docid_desc" and docids is None:
            docids = np.arange(1, y.shape[0] + 1)
    order, offsets, query_ids = rank_order(scores, qid, docids, conv.ties)
    labels = y[order]
    _warn_uncredited(conv, labels)
    relevant = conv.relevant(labels)
    gains = conv.gains(labels)
    sizes = np.diff(offsets)
    discount = conv.discounts(int(sizes.max()) if sizes.size else 0)
    ideal = None
    per_query = {}
    cumulative = np.concatenate([[0], np.cumsum(relevant, dtype=np.int64)])
    n_relevant = cumulative[offsets[1:]] - cumulative[offsets[:-1]]  # every document of the list is judged
    for name in dict.fromkeys(names):
        family, k = parse_metric(name)
        if family == "ndcg":
            if ideal is None:
                ideal = _ideal_gains(query_loops, conv, labels, gains, offsets)
            values = query_loops.ndcg_kernel(gains, ideal, offsets, discount, k, conv.ndcg_short_zero, conv.empty_value)
        elif family == "map":
            cutoff = k or (conv.ap_cutoff or 0)
            in_cutoff = conv.ap_denominator == "relevant_in_cutoff"
            values = query_loops.ap_kernel(relevant, offsets, cutoff, in_cutoff, conv.empty_value)
        elif family == "mrr":
            values = query_loops.rr_kernel(relevant, offsets, k, conv.empty_value)
        elif family == "p":
            values = query_loops.precision_kernel(relevant, offsets, k, conv.precision_short == "pad", conv.empty_value)
        elif family == "recall":
            values = query_loops.recall_kernel(relevant, offsets, n_relevant, np.full(n_relevant.size, k), conv.empty_value)
        elif family == "rprec":
            values = query_loops.recall_kernel(relevant, offsets, n_relevant, n_relevant, conv.empty_value)
        elif family == "success":
            values = query_loops.success_kernel(relevant, offsets, k, conv.empty_value)
        elif family in TOOL_FAMILIES:  # ERR, nDCG with exponential gain, RBP: their tools' definitions
            values = list_values(parse_tool_measure(name), labels, offsets, conv.empty_value, query_ids)
        elif family == "bpref":
            values = query_loops.bpref_kernel(relevant, np.ones(relevant.shape[0], np.bool_), offsets, n_relevant,
                                          np.diff(offsets) - n_relevant, conv.empty_value)
        else:
            values = query_loops.auc_kernel(relevant, offsets, conv.empty_value)
        per_query[name] = values
    means = {name: float(v.sum() / v.size) if v.size else float("nan") for name, v in per_query.items()}  # np.mean
    return EvaluationResult(means, per_query, query_ids, conv.name, auto)
