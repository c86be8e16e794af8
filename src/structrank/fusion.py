"""Run fusion: several TREC runs of the same queries combined into one, as ranx's ``fuse`` does.

A run is ``{qid: {docno: score}}`` (what ``structrank.metrics.read_run`` returns), or the path of a TREC
run file, or a DataFrame (columns as ``evaluate_run`` reads them). ``fuse(runs, method, norm, **params)``
returns the fused run as such a dict, each query's documents best first; ``optimize_fusion`` chooses a
method's parameter (the weights of a weighted method, rrf's ``k``, ...) on dev qrels by a metric of
``evaluate_run``, over ranx's grids; ``structrank fuse`` runs both and writes the fused run.

The definitions are ranx's (``ranx.fusion``, ``ranx.normalization``; tests/library/test_fusion.py checks every
method and normalisation against ``ranx.fuse``), with these rules made explicit:

- a run's ranking is the one trec_eval and ``evaluate_run`` give it: by score as a C float, ties by docno
  descending. ranx ranks by its own sort, which leaves the order of tied documents to the sort (NumPy's
  quicksort under numba: stable up to 15 documents, not past them), so rank-based methods (rrf, isr,
  bordafuse, condorcet, rank normalisation) agree with ranx wherever its ranking is defined;
- the queries fused are those of any run; a run that lacks a query, or a document, contributes nothing
  for it (score 0 after normalisation for the sums; combmax, combmin, combmed, combanz and the MNZ
  family look only at the runs that retrieved the document). ranx refuses runs whose queries differ;
  a run that shares no query with the others is refused here, naming it;
- the normalisations act on each run's query alone: ``minmax`` (s - min) / (max - min), ``zscore``
  (s - mean) / std (population), ``sum`` (s - min) / (sum - n min), ``max`` s / max, each denominator
  floored at 1e-9 as ranx does (so a query whose scores are all equal becomes all 0); ``rank`` 1 - i / n
  for the document at 0-based rank i of n; ``borda`` 1 - i / c over the c documents any run retrieved
  for the query, and 0.5 - (n - 1) / (2c) for those this run lacks (which it thereby retrieves);
  ``none`` leaves the scores. A score-based method normalises by ``minmax`` unless told (ranx's default);
  a rank-based method reads only the rankings, which no normalisation changes, and refuses one;
- combmax and combmin take the largest and smallest score among the runs that retrieved the document
  (ranx reads a missing one as -1e9 and 1e9: the same unless a score passes them unnormalised);
- condorcet sorts the documents with ranx's comparison (d before e when at least half the runs'
  weight ranks d above e, a run lacking both counting for e), starting from the documents in order of
  first appearance (the first run's ranking, then what the next adds, ...): where the majorities are
  a total order the result is that order, as ranx's; where they cycle it depends on the starting order,
  which ranx takes from a Python set (so its result changes between processes) and this module fixes.

Methods and their names in ranx (``ranx.fuse(method=...)``): rrf (``k``, default 60), combsum (sum),
combmnz (mnz), combmax (max), combmin (min), combmed (med), combanz (anz), combgmnz (gmnz; ``gamma``),
wsum, wmnz and mixed (``weights``), isr, log_isr, logn_isr (``sigma``, default 0.01), rbc (``phi``),
bordafuse, w_bordafuse (``weights``), condorcet and w_condorcet (``weights``). ranx's trained methods
(bayesfuse, mapfuse, posfuse, probfuse, segfuse, slidefuse) are not here.

``optimize_fusion`` tries ranx's grids: weights in steps of ``step`` (0.1) that sum to 1 (every such
weighting: ranx compares float sums with 1.0 and so skips some, (0.1, 0.2, 0.7) among them), k from 10
to 100 by 10, gamma, sigma and phi from 0.01 to 1 by 0.01; it keeps the last of the best values in the
grid's order, as ranx does, so that both choose alike.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from functools import cmp_to_key
from pathlib import Path

import numpy as np

from structrank.errors import DataValidationError
from structrank.metrics.evaluate import canonical_name, parse_metric
from structrank.metrics.trec import _as_dict, _ranked, evaluate_run, read_qrels, read_run

__all__ = ["FUSION_METHODS", "NORMALIZATIONS", "FusionSearch", "fuse", "normalize", "optimize_fusion"]

#: the normalisations, applied to each run's query before a score-based method combines them
NORMALIZATIONS = ("minmax", "zscore", "sum", "max", "rank", "borda", "none")

#: ranx's floor of every normalisation's denominator
_FLOOR = 1e-9


@dataclass(frozen=True)
class _Method:
    """How a method fuses: ``kind`` "score" (normalised scores) or "rank" (rankings), the per-run values it
    adds up (``values``, for a rank method), how it combines them (``combine``), and the one parameter it
    takes (``param``: its default, None when it must be given)."""

    kind: str
    combine: str
    values: str | None = None
    param: str | None = None
    default: object = None


_METHODS = {
    "rrf": _Method("rank", "sum", "reciprocal", "k", 60),
    "combsum": _Method("score", "sum"),
    "combmnz": _Method("score", "mnz"),
    "combmax": _Method("score", "max"),
    "combmin": _Method("score", "min"),
    "combmed": _Method("score", "med"),
    "combanz": _Method("score", "anz"),
    "combgmnz": _Method("score", "gmnz", param="gamma"),
    "wsum": _Method("score", "wsum", param="weights"),
    "wmnz": _Method("score", "wmnz", param="weights"),
    "mixed": _Method("score", "mixed", param="weights"),
    "isr": _Method("rank", "mnz", "inverse_square"),
    "log_isr": _Method("rank", "log", "inverse_square"),
    "logn_isr": _Method("rank", "logn", "inverse_square", "sigma", 0.01),
    "rbc": _Method("rank", "sum", "rank_biased", "phi"),
    "bordafuse": _Method("rank", "sum", "borda"),
    "w_bordafuse": _Method("rank", "wsum", "borda", "weights"),
    "condorcet": _Method("rank", "condorcet"),
    "w_condorcet": _Method("rank", "condorcet", param="weights"),
}

#: every fusion method: its name and the parameter it takes (None: none)
FUSION_METHODS = {name: method.param for name, method in _METHODS.items()}


@dataclass
class _Query:
    """One query as every run sees it: the documents any run retrieved (``docnos``, in order of first
    appearance), each run's 0-based rank of each (``rank``, -1 where the run lacks it) and its score (0
    where it lacks it), as arrays of shape (runs, documents)."""

    docnos: list
    rank: np.ndarray
    score: np.ndarray

    @property
    def present(self) -> np.ndarray:
        return self.rank >= 0


@dataclass(frozen=True)
class FusionSearch:
    """What ``optimize_fusion`` tried and chose.

    Attributes
    ----------
    method, norm, metric : str
        The fusion, the normalisation it was given, and the measure (canonical name) it was chosen by.
    param : str
        The parameter searched: ``"weights"``, ``"k"``, ``"gamma"``, ``"sigma"`` or ``"phi"``.
    value : float or tuple
        The chosen value (weights as a tuple, one per run).
    score : float
        The chosen value's mean ``metric`` on the qrels.
    trials : list of (value, score)
        Every value tried, in the grid's order, with its score.
    fused : dict
        The runs fused with the chosen value, as ``fuse`` returns them.

    Examples
    --------
    >>> from structrank.fusion import optimize_fusion
    >>> qrels = {"1": {"a": 1, "b": 0, "c": 0}, "2": {"d": 1, "e": 0}}
    >>> good = {"1": {"a": 3.0, "b": 2.0, "c": 1.0}, "2": {"d": 2.0, "e": 1.0}}
    >>> bad = {"1": {"a": 1.0, "b": 2.0, "c": 3.0}, "2": {"d": 1.0, "e": 2.0}}
    >>> search = optimize_fusion(qrels, [good, bad], "wsum", metric="map")
    >>> search.param, search.score, len(search.trials)
    ('weights', 1.0, 11)
    >>> [w for w, score in search.trials if score == 1.0]
    [(0.6, 0.4), (0.7, 0.3), (0.8, 0.2), (0.9, 0.1), (1.0, 0.0)]
    >>> search.value  # the last of the best, as ranx chooses
    (1.0, 0.0)
    """

    method: str
    norm: str
    metric: str
    param: str
    value: object
    score: float
    trials: list = field(repr=False)
    fused: dict = field(repr=False)


def fuse(runs, method: str = "rrf", norm: str | None = None, **params) -> dict:
    """Fuse runs of the same queries into one (ranx's definitions; see the module docstring).

    Parameters
    ----------
    runs : list of dict, path or DataFrame
        Two runs or more, each ``{qid: {docno: score}}`` or a TREC run file (errors name the file, or
        "run i" for the i-th object given).
    method : str
        One of ``FUSION_METHODS`` (default rrf).
    norm : str or None
        One of ``NORMALIZATIONS`` for a score-based method (None: minmax); a rank-based method takes none.
    **params
        The method's parameter: ``k`` (rrf, default 60), ``weights`` (one per run: wsum, wmnz, mixed,
        w_bordafuse, w_condorcet), ``gamma`` (combgmnz), ``sigma`` (logn_isr, default 0.01), ``phi`` (rbc).

    Returns
    -------
    dict
        ``{qid: {docno: fused score}}``, queries in order of first appearance, each query's documents
        ranked (score, then docno descending, as ``write_run`` writes them).

    Examples
    --------
    >>> bm25 = {"q1": {"a": 12.0, "b": 9.5, "c": 3.0}}
    >>> dense = {"q1": {"c": 0.9, "a": 0.8, "d": 0.1}}
    >>> fuse([bm25, dense], "rrf")
    {'q1': {'a': 0.03252247488101534, 'c': 0.032266458495966696, 'b': 0.016129032258064516, 'd': 0.015873015873015872}}
    >>> fuse([bm25, dense], "combsum", norm="minmax")  # each run's scores min-max normalised, then added
    {'q1': {'a': 1.875, 'c': 1.0, 'b': 0.7222222222222222, 'd': 0.0}}
    """
    spec = _method(method)
    runs, names = _read_runs(runs)
    value = _param(method, spec, params, len(runs))
    queries = _prepared(runs, names, _norm(method, spec, norm))
    return _fused(queries, spec, value, len(runs))


def normalize(runs, norm: str) -> list:
    """Each run's scores normalised query by query, as ``fuse`` normalises them (ranx's definitions).

    ``borda`` gives every run a score for each document any run retrieved for the query; the others keep
    the documents they had. Returns the runs as dicts, each query's documents in the run's ranking.

    Examples
    --------
    >>> normalize([{"1": {"a": 4.0, "b": 2.0, "c": 1.0}}], "minmax")
    [{'1': {'a': 1.0, 'b': 0.3333333333333333, 'c': 0.0}}]
    """
    runs, names = _read_runs(runs, at_least=1)
    queries = _prepared(runs, names, _checked_norm(norm))
    out = [{} for _ in runs]
    for qid, query in queries.items():
        for j, run in enumerate(out):
            kept = np.flatnonzero(query.present[j])
            kept = kept[np.argsort(query.rank[j, kept], kind="stable")]
            if kept.size:
                run[qid] = {query.docnos[i]: float(query.score[j, i]) for i in kept}
    return out


def optimize_fusion(qrels, runs, method: str, norm: str | None = None, metric: str = "map", step: float | None = None,
                    grid=None, relevant_from: int = 1) -> FusionSearch:
    """Choose a method's parameter on dev qrels by a measure of ``evaluate_run`` (ranx's ``optimize_fusion``).

    Parameters
    ----------
    qrels : dict, path or DataFrame
        The dev judgements.
    runs, method, norm
        As for ``fuse``; the method must take a parameter.
    metric : str
        One measure ``evaluate_run`` knows ("map", "ndcg@10", ...).
    step : float or None
        The weights' grid step (default 0.1; 1 / step a whole number): every weighting in steps of
        ``step`` that sums to 1. Only for the weighted methods.
    grid : sequence or None
        The values to try instead of the default grid (weights: a sequence of weightings).
    relevant_from : int
        trec_eval's -l, as ``evaluate_run`` takes it.

    Returns
    -------
    FusionSearch
        The last of the best values in the grid's order (ranx's rule), its score, every trial, and the runs
        fused with it.
    """
    spec = _method(method)
    if spec.param is None:
        tunable = ", ".join(name for name, param in FUSION_METHODS.items() if param)
        raise ValueError(f"{method} has no parameter to choose; the methods that have one: {tunable}")
    if step is not None and spec.param != "weights":
        raise ValueError(f"step is the weights' grid step, and {method} takes {spec.param}, not weights")
    name = canonical_name(metric)
    parse_metric(name)  # an unknown measure is refused before any fusion
    runs, names = _read_runs(runs)
    norm = _norm(method, spec, norm)
    values = list(grid) if grid is not None else _grid(spec.param, len(runs), 0.1 if step is None else step)
    if not values:
        raise ValueError("the grid to search is empty")
    values = [_param(method, spec, {spec.param: v}, len(runs)) for v in values]
    queries = _prepared(runs, names, norm)
    qrels_name = str(qrels) if isinstance(qrels, (str, Path)) else "the qrels"
    qrels = read_qrels(qrels) if isinstance(qrels, (str, Path)) else _as_dict(qrels, "qrels")
    if not set(qrels) & set(queries):
        raise DataValidationError(f"{qrels_name}: no query in common with the runs (query ids compare as strings: 1 is "
                                  "not 001)")
    trials, best = [], None
    for value in values:
        fused = _fused(queries, spec, value, len(runs))
        score = evaluate_run(qrels, fused, [name], relevant_from=relevant_from).metrics[name]
        trials.append((value, score))
        if best is None or score >= best[1]:  # >=: the last best, ranx's rule
            best = (value, score, fused)
    return FusionSearch(method, norm, name, spec.param, *best[:2], trials, best[2])


# -- inputs ------------------------------------------------------------------------------------------


def _method(method) -> _Method:
    if method not in _METHODS:
        raise ValueError(f"unknown fusion method {method!r}; one of: {', '.join(_METHODS)}")
    return _METHODS[method]


def _checked_norm(norm) -> str:
    if norm not in NORMALIZATIONS:
        raise ValueError(f"unknown normalisation {norm!r}; one of: {', '.join(NORMALIZATIONS)}")
    return norm


def _norm(method, spec, norm) -> str:
    """The normalisation a method applies: minmax by default for a score method; none for a rank method,
    which refuses one (its rankings are the same under any)."""
    if spec.kind == "rank":
        if norm not in (None, "none"):
            raise ValueError(f"{method} fuses rankings, which normalising the scores does not change: give no "
                             f"normalisation (got {norm!r})")
        return "none"
    return "minmax" if norm is None else _checked_norm(norm)


def _read_runs(runs, at_least=2):
    """(runs as dicts, their names): files read by ``read_run``, objects held to its rules."""
    if isinstance(runs, (str, Path, dict)) or not hasattr(runs, "__len__"):
        raise ValueError("runs must be a list of runs (dicts {qid: {docno: score}} or TREC run files)")
    if len(runs) < at_least:
        raise ValueError(f"fusion needs at least {at_least} runs, got {len(runs)}")
    out, names = [], []
    for i, run in enumerate(runs, 1):
        if isinstance(run, (str, Path)):
            names.append(str(run))
            out.append(read_run(run))
        else:
            names.append(f"run {i}")
            out.append(_as_dict(run, "run"))
    return out, names


def _number(method, name, value, low, high=math.inf) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not low <= value <= high:  # NaN fails
        bounds = f">= {low}" if high == math.inf else f"in [{low}, {high}]"
        raise ValueError(f"{method}: {name} must be a number {bounds}, got {value!r}")
    return value


def _param(method, spec, params, n_runs):
    """The method's parameter from ``params``, checked (its default when not given and it has one)."""
    extra = sorted(set(params) - {spec.param})
    if extra:
        takes = f"takes {spec.param}" if spec.param else "takes no parameter"
        raise ValueError(f"{method} {takes}, not {', '.join(extra)}")
    if spec.param is None:
        return None
    value = params.get(spec.param, spec.default)
    if value is None:
        hint = "one per run" if spec.param == "weights" else "a number"
        raise ValueError(f"{method} needs {spec.param} ({hint}), or {spec.param} chosen on qrels (optimize_fusion; "
                         "structrank fuse --optimize-on)")
    if spec.param == "weights":
        if isinstance(value, (str, bytes)) or not hasattr(value, "__len__") or len(value) != n_runs:
            raise ValueError(f"{method}: weights must give one number per run ({n_runs}), got {value!r}")
        weights = tuple(float(_number(method, "each weight", w, 0.0)) for w in value)
        if not any(weights):
            raise ValueError(f"{method}: at least one weight must be above 0, got {value!r}")
        return weights
    bounds = {"k": (0, math.inf), "gamma": (-math.inf, math.inf), "sigma": (0, math.inf), "phi": (0, 1)}
    return _number(method, spec.param, value, *bounds[spec.param])


def _grid(param, n_runs, step) -> list:
    """ranx's grid of ``param`` (the module docstring), with exact values."""
    if param == "weights":
        steps = 1 / step if isinstance(step, (int, float)) and not isinstance(step, bool) and step > 0 else 0
        if not (steps >= 1 and abs(steps - round(steps)) < 1e-9):
            raise ValueError(f"step must divide 1 into a whole number of steps (0.1, 0.05, 0.25, ...), got {step!r}")
        m = round(steps)
        # itertools.product's order, ranx's: the choice among equal scores follows it
        return [tuple(i / m for i in c) for c in itertools.product(range(m + 1), repeat=n_runs) if sum(c) == m]
    if param == "k":
        return list(range(10, 101, 10))
    return [i / 100 for i in range(1, 101)]


# -- preparation -------------------------------------------------------------------------------------


def _prepared(runs, names, norm) -> dict:
    """{qid: _Query} over the queries of any run (first appearance), each run's scores normalised."""
    qids = {}
    for run, name in zip(runs, names):
        if not any(run.values()):
            raise DataValidationError(f"{name}: no retrieved document to fuse")
        qids.update(dict.fromkeys(q for q, docs in run.items() if docs))
    if len(runs) > 1:
        for j, (run, name) in enumerate(zip(runs, names)):
            others = {q for i, r in enumerate(runs) if i != j for q, docs in r.items() if docs}
            if not any(docs and q in others for q, docs in run.items()):
                raise DataValidationError(f"{name}: no query in common with the other runs (query ids compare as "
                                          "strings: 1 is not 001)")
    return {q: _normalised(_query([run.get(q, {}) for run in runs]), norm) for q in qids}


def _query(lists) -> _Query:
    """A query's documents, ranks and scores over the runs (``lists``: each run's {docno: score})."""
    ranked = [_ranked(docs) for docs in lists]  # trec_eval's ranking: C-float score, ties by docno descending
    index = {}
    for docnos in ranked:
        for d in docnos:
            index.setdefault(d, len(index))
    rank = np.full((len(lists), len(index)), -1, np.int64)
    score = np.zeros((len(lists), len(index)))
    for j, (docnos, docs) in enumerate(zip(ranked, lists)):
        columns = np.fromiter((index[d] for d in docnos), np.int64, len(docnos))
        rank[j, columns] = np.arange(len(docnos))
        score[j, columns] = [docs[d] for d in docnos]
    return _Query(list(index), rank, score)


def _normalised(query, norm) -> _Query:
    """``query`` with each run's scores normalised (ranx's formulas, term for term)."""
    if norm == "none":
        return query
    score = np.zeros_like(query.score)
    rank = query.rank.copy()
    c = len(query.docnos)
    for j in range(rank.shape[0]):
        present = rank[j] >= 0
        s, n = query.score[j, present], int(present.sum())
        if norm == "borda":  # every document of the query gets a score, and the run retrieves it
            score[j, present] = 1 - (rank[j, present] / c)
            score[j, ~present] = 0.5 - ((n - 1) / (2 * c))
            rank[j, ~present] = n  # below the run's own documents (no rank method reads it: they take no norm)
        elif n == 0:
            continue
        elif norm == "rank":
            score[j, present] = 1 - (rank[j, present] / n)
        else:
            try:
                with np.errstate(over="raise", invalid="raise"):
                    normed = _normed(s, n, norm)
            except FloatingPointError:
                # extreme finite scores overflow the sums: these normalisations do not change when the scores are
                # divided by a positive number, so they are taken on the scores over their largest magnitude
                normed = _normed(s / np.abs(s).max(), n, norm)
            score[j, present] = normed
    return _Query(query.docnos, rank, score)


def _normed(s, n, norm):
    """One run's scores of one query under a score normalisation (ranx's formulas)."""
    if norm == "minmax":
        return (s - s.min()) / max(s.max() - s.min(), _FLOOR)
    if norm == "zscore":
        return (s - s.mean()) / max(s.std(), _FLOOR)
    if norm == "sum":
        return (s - s.min()) / max(s.sum() - s.min() * n, _FLOOR)
    return s / max(s.max(), _FLOOR)  # max


# -- fusion ------------------------------------------------------------------------------------------


def _fused(queries, spec, param, n_runs) -> dict:
    weights = np.asarray(param if spec.param == "weights" else np.ones(n_runs), dtype=np.float64)
    out = {}
    for qid, query in queries.items():
        if spec.combine == "condorcet":
            fused = _condorcet(query, weights)
        else:
            values = query.score if spec.kind == "score" else _rank_values(query, spec.values, param)
            fused = _combine(spec.combine, values, query.present, weights, param)
        order = _ranked(dict(zip(query.docnos, fused.tolist())))
        position = {d: i for i, d in enumerate(query.docnos)}
        out[qid] = {d: float(fused[position[d]]) for d in order}
    return out


def _rank_values(query, kind, param) -> np.ndarray:
    """What each run gives each document for its rank i (0-based; 0 where the run lacks it, but borda)."""
    present = query.present
    i = np.where(present, query.rank, 0).astype(np.float64)  # 0 where absent: no 1 / 0 for rrf's k = 0
    if kind == "reciprocal":  # rrf: 1 / (k + rank), ranx's k + i + 1
        values = 1 / (param + i + 1)
    elif kind == "inverse_square":  # isr
        values = 1 / ((i + 1) ** 2)
    elif kind == "rank_biased":  # rbc
        values = (1 - param) * param ** i
    else:  # borda: c - i points, and the mean of the points left for the documents the run lacks
        c = len(query.docnos)
        lengths = present.sum(axis=1, keepdims=True)
        return np.where(present, c - i, (c - lengths + 1) / 2)
    return np.where(present, values, 0.0)


def _running_sum(rows) -> np.ndarray:
    """The rows added one after another (ranx's order, so that sums agree to the bit)."""
    total = np.zeros(rows.shape[1])
    for row in rows:
        total = total + row
    return total


def _combine(how, values, present, weights, param) -> np.ndarray:
    """Each document's fused score from every run's value (``present``: which runs retrieved it)."""
    count = present.sum(axis=0).astype(np.float64)
    if how == "max":
        return np.where(present, values, -np.inf).max(axis=0)
    if how == "min":
        return np.where(present, values, np.inf).min(axis=0)
    if how == "med":
        ordered = np.sort(np.where(present, values, np.nan), axis=0)  # NaN, the runs that lack it, sort last
        n = count.astype(np.int64)
        columns = np.arange(values.shape[1])
        return (ordered[(n - 1) // 2, columns] + ordered[n // 2, columns]) / 2
    if how in ("wsum", "wmnz", "mixed"):
        weighted = _running_sum(weights[:, None] * values)
        if how == "wsum":
            return weighted
        if how == "wmnz":
            return _running_sum(values) * _running_sum(np.where(present, weights[:, None], 0.0))
        return weighted * np.sqrt(count)
    total = _running_sum(values)
    if how == "sum":
        return total
    if how == "mnz":
        return total * count
    if how == "anz":
        return total / count
    if how == "gmnz":
        return total * count ** param
    if how == "log":
        return total * np.log(count)
    return total * np.log(count + param)  # logn


def _condorcet(query, weights) -> np.ndarray:
    """ranx's (weighted) Condorcet fusion: the documents sorted by majority, scored c, c - 1, ..., 1."""
    c = len(query.docnos)
    rank = np.where(query.present, query.rank, c)  # a document a run lacks: below all it retrieved
    w = weights.tolist()

    def first(x, y):
        ahead = rank[:, x] < rank[:, y]
        x_votes = sum(wi for wi, a in zip(w, ahead) if a)
        y_votes = sum(wi for wi, a in zip(w, ahead) if not a)  # ties, a run lacking both, count for y: ranx's rule
        return -1 if x_votes >= y_votes else 1

    order = sorted(range(c), key=cmp_to_key(first))
    fused = np.empty(c)
    fused[order] = c - np.arange(c, dtype=np.float64)
    return fused
