"""The measures IR papers cite beyond trec_eval's defaults, named as ir_measures names them, each equal per
query to its reference tool: ERR@k, nDCG@k with exponential gain, RBP and its residual, infAP, Judged@k.

ir_measures computes a measure with the first provider of its default pipeline that supports it, and each
provider ranks a run its own way. structrank follows, measure by measure, the tool ir_measures uses
(``REFERENCES``). The graded ``RBP(p=P)`` is the exception: no provider of that pipeline computes it, and
ir_measures computes it only when asked for its trectools provider (``ir_measures.trectools``), which it
leaves out of the pipeline as buggy (its tie groups run on from one query into the next; here they stay
within the query):

==============================  =====================================  ============================================
name (canonical; ir_measures')  reference tool                         ranking of a run
==============================  =====================================  ============================================
``err@k`` (ERR@k)               gdeval (TREC Web track), R = (2^g -    scores as doubles, ties by docno descending
                                1)/2^4, grades 0-4
``ndcg(dcg='exp-log2')@k``      gdeval: gain 2^g - 1, discount         scores as doubles, ties by docno descending
(nDCG(dcg='exp-log2')@k;        1/log2(rank + 1), the ideal from the
ranx's ndcg_burges@k)           qrels
``rbp(p=P)`` (RBP(p=P))         trectools' get_rbp: gain = the label   ties share the mean of their weights (a
                                                                       tie across the cut-off cut in the run's
                                                                       order)
``rbp(p=P,rel=R)``              cwl_eval: gain 1 from label R on       scores as doubles, ties in the run's order
(RBP(p=P,rel=R))                (cwl_eval stops at rank 1000 and
                                spreads the weight over those ranks,
                                which moves RBP by p^1000 at most)
``rbp_residual(p=P)``           trectools' get_rbp residual, Moffat &  ties share the mean of their weights
                                Zobel's: the weight of the unjudged
                                documents and of the ranks past the
                                list
``infap`` (infAP)               trec_eval's infAP                      trec_eval's (single precision, docno
                                                                       descending)
``judged@k`` (Judged@k)         ir_measures' judged provider           scores as doubles, ties by docno ascending
==============================  =====================================  ============================================

A cut-off is optional (``err``, ``judged``, ``rbp(p=0.8)@10``); without one a measure takes the whole
list. gdeval prints five decimals, so ir_measures' ERR and nDCG(dcg='exp-log2') are these rounded there.
Relevance: ERR, nDCG and graded RBP use the labels as grades (a negative label as 0); infAP takes
labels from ``relevant_from`` (trec_eval -l) as relevant, binary RBP from its ``rel``. Judgement: infAP
and RBP's residual read a negative label as trec_eval does, pooled but not judged (unknown), and a
document the qrels do not name as unjudged; Judged@k counts every document the qrels name, whatever its
label, as ir_measures' provider does. ``evaluate()`` on arrays, where every row is judged, takes ERR,
nDCG(dcg='exp-log2'), RBP and its residual under the convention's ranking, and refuses infAP and Judged.
"""

from __future__ import annotations

import functools
import math
import re
from typing import NamedTuple

import numpy as np

from structrank.errors import DataValidationError

#: family -> (reference tool, its ranking: "trec", "docno_desc", "docno_asc", "input" or "tie_mean")
REFERENCES = {
    "err": ("gdeval", "docno_desc"),
    "ndcg_exp": ("gdeval", "docno_desc"),
    "rbp": ("trectools", "tie_mean"),
    "rbp_binary": ("cwl_eval", "input"),
    "rbp_residual": ("trectools", "tie_mean"),
    "infap": ("trec_eval", "trec"),
    "judged": ("ir_measures judged", "docno_asc"),
}

#: gdeval's MAX_JUDGMENT: ERR's stopping probability is (2^g - 1) / 2^4, and gdeval refuses a grade above it
ERR_MAX_GRADE = 4
#: the largest grade nDCG(dcg='exp-log2') takes: 2^g - 1 summed over any list stays finite below it
EXP_MAX_GRADE = 512
#: ir_measures' default persistence of RBP
RBP_DEFAULT_P = 0.8
_MAX_CUTOFF = 2**31 - 1

_NAME = re.compile(r"^([a-z_]+)(?:\(([^()]*)\))?(?:@(\d+))?$")
#: the names this module reads -> (family, the parameters it takes)
_FAMILIES = {"err": ("err", ()), "ndcg": ("ndcg_exp", ("dcg",)), "ndcg_burges": ("ndcg_exp", ()),
             "rbp": ("rbp", ("p", "rel")), "rbp_residual": ("rbp_residual", ("p",)), "infap": ("infap", ()),
             "judged": ("judged", ())}
#: the families where a lower value is the better run (RBP's residual: the weight left on unjudged documents, the
#: uncertainty of the score); every other measure is better higher
LOWER_IS_BETTER = ("rbp_residual",)


def higher_is_better(name: str) -> bool:
    """Whether a larger value of the measure ``name`` is the better run (``compare``'s direction)."""
    spec = parse(str(name).lower())
    return spec is None or spec.family not in LOWER_IS_BETTER


#: the families that measure unjudged documents, so need a TREC run
RUN_ONLY = ("infap", "judged")
FAMILIES = ("err", "ndcg_exp", "rbp", "rbp_residual", "infap", "judged")

#: what the error for an unknown name lists
NAMES_HELP = ("err@k, ndcg(dcg='exp-log2')@k, rbp(p=0.8), rbp(p=0.8,rel=1), rbp_residual(p=0.8), infap, judged@k "
              "(ir_measures: ERR@20, nDCG(dcg='exp-log2')@10, RBP(p=0.8), infAP, Judged@10; ranx: ndcg_burges@10)")


class MeasureSpec(NamedTuple):
    """A measure of this module: its family, cut-off (0: none), RBP's persistence ``p`` and relevance level
    ``rel`` (0: graded), and the name results are reported under."""

    family: str
    k: int
    p: float
    rel: int
    canonical: str


def parse(text: str) -> MeasureSpec | None:
    """The ``MeasureSpec`` of a lower-case measure name, None for a name this module does not read (the
    other measures of ``evaluate.parse_metric``), ValueError for one of its names with a wrong parameter.

    >>> parse("rbp(p=0.5,rel=1)@10").canonical, parse("ndcg_burges@10").canonical, parse("ndcg@10")
    ('rbp(p=0.5,rel=1)@10', "ndcg(dcg='exp-log2')@10", None)
    """
    match = _NAME.fullmatch(text.replace(" ", ""))
    if match is None or match.group(1) not in _FAMILIES:
        return None
    name, params, cutoff = match.groups()
    if name == "ndcg" and params is None:
        return None  # trec_eval's ndcg, read by parse_metric
    return _spec(name, params, cutoff)


@functools.lru_cache(maxsize=256)
def _spec(name, params, cutoff) -> MeasureSpec | None:
    family, allowed = _FAMILIES[name]
    values = _params(name, params, allowed)
    k = int(cutoff) if cutoff is not None else 0
    if cutoff is not None and not 1 <= k <= _MAX_CUTOFF:
        raise ValueError(f"metric {name}@{cutoff}: the cut-off must be in [1, {_MAX_CUTOFF}]")
    if family == "infap" and k:
        raise ValueError("infap takes no cut-off (trec_eval's infAP)")
    at = f"@{k}" if k else ""
    if family == "ndcg_exp":
        dcg = values.get("dcg", "exp-log2" if name == "ndcg_burges" else "log2")
        if dcg not in ("log2", "exp-log2"):
            raise ValueError(f"ndcg's dcg is 'log2' (trec_eval's, the label as gain) or 'exp-log2' (gain 2^label - 1), "
                             f"got {dcg!r}")
        if dcg == "log2":
            return MeasureSpec("ndcg", k, 0.0, 0, f"ndcg{at}")  # trec_eval's ndcg, by ir_measures' name
        return MeasureSpec("ndcg_exp", k, 0.0, 0, f"ndcg(dcg='exp-log2'){at}")
    p = _persistence(values.get("p", str(RBP_DEFAULT_P))) if family in ("rbp", "rbp_residual") else 0.0
    rel = _level(values["rel"]) if "rel" in values else 0
    if family == "rbp":
        inside = f"p={p!r}" + (f",rel={rel}" if rel else "")
        return MeasureSpec("rbp", k, p, rel, f"rbp({inside}){at}")
    if family == "rbp_residual":
        return MeasureSpec("rbp_residual", k, p, 0, f"rbp_residual(p={p!r}){at}")
    return MeasureSpec(family, k, 0.0, 0, f"{family}{at}")


def _params(name, params, allowed) -> dict:
    """``{key: value}`` of ``k1=v1,k2=v2`` (values unquoted), each key one of ``allowed``."""
    if params is None:
        return {}
    out = {}
    for item in filter(None, params.split(",")):
        key, sep, value = item.partition("=")
        if not sep or key not in allowed or key in out:
            takes = f"takes {', '.join(allowed)}" if allowed else "takes no parameter"
            raise ValueError(f"metric {name}({params}): {name} {takes}, each once as key=value")
        out[key] = value.strip("'\"")
    return out


def _persistence(text) -> float:
    try:
        p = float(text)
    except ValueError:
        p = math.nan
    if not 0.0 < p < 1.0:
        raise ValueError(f"RBP's persistence p must be a number in (0, 1), got {text!r}")
    return p


def _level(text) -> int:
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"RBP's rel must be an integer >= 1 (a lower level would make unjudged documents "
                         f"relevant), got {text!r}")
    return int(text)


def reference(spec: MeasureSpec) -> tuple:
    """(reference tool, its ranking) of a measure (``REFERENCES``)."""
    return REFERENCES["rbp_binary" if spec.family == "rbp" and spec.rel else spec.family]


class JudgedRun(NamedTuple):
    """A run joined with its qrels, each query's documents in trec_eval's ranking (query i's at
    ``offsets[i]:offsets[i + 1]``): ``labels`` (the qrels' label, any value where ``pooled`` is False),
    ``pooled`` (the qrels name the document), ``scores`` (double) and ``arrival`` (the entry's place in the
    run as given); each query's relevant judgements (``n_relevant``, from ``relevant_from``) and its judged
    gains sorted descending (``ideal``, negative labels as 0, at ``ideal_offsets``); the query ids."""

    labels: np.ndarray
    pooled: np.ndarray
    scores: np.ndarray
    arrival: np.ndarray
    offsets: np.ndarray
    n_relevant: np.ndarray
    ideal: np.ndarray
    ideal_offsets: np.ndarray
    relevant_from: int
    queries: list


def run_values(spec: MeasureSpec, run: JudgedRun, orders: dict) -> np.ndarray:
    """One value per query of a measure of this module on a TREC run, under its reference tool's ranking
    (``orders`` caches each ranking's positions across the measures of one evaluation)."""
    from structrank.metrics import query_loops, tool_loops  # deferred: numba, loaded on the first evaluation

    tool, ranking = reference(spec)
    if ranking not in orders:
        # trectools averages the weights of tied documents, but with a cut-off its top k holds those first in
        # its stable sort of the run, so a tie across the cut-off is cut in the run's order
        rule = {"docno_desc": tool_loops.DOCNO_DESC, "tie_mean": tool_loops.INPUT_ORDER,
                "docno_asc": tool_loops.DOCNO_ASC, "input": tool_loops.INPUT_ORDER}.get(ranking)
        orders[ranking] = None if rule is None else tool_loops.tool_order(run.scores, run.arrival, run.offsets, rule)
    order = orders[ranking]
    labels, pooled = run.labels, run.pooled
    scores = run.scores if order is None else run.scores[order]
    if order is not None:
        labels, pooled = labels[order], pooled[order]
    grades = np.where(pooled, np.maximum(labels, 0), 0).astype(np.float64)
    if spec.family == "infap":
        kind = np.where(~pooled, tool_loops.NONPOOL, np.where(labels < 0, tool_loops.UNJUDGED, np.where(
            labels < run.relevant_from, tool_loops.NONREL, tool_loops.REL))).astype(np.int8)
        return tool_loops.infap_kernel(kind, run.offsets, run.n_relevant)
    if spec.family == "judged":
        return tool_loops.judged_kernel(pooled.astype(np.int64), run.offsets, spec.k)
    if spec.family == "err":
        _check_grades(run.ideal, run.ideal_offsets, run.queries, spec.canonical, ERR_MAX_GRADE)
        return tool_loops.err_kernel(grades, run.offsets, spec.k, ERR_MAX_GRADE)
    if spec.family == "ndcg_exp":
        _check_grades(run.ideal, run.ideal_offsets, run.queries, spec.canonical, EXP_MAX_GRADE)
        longest = int(max(np.diff(run.offsets).max(initial=0), np.diff(run.ideal_offsets).max(initial=0)))
        return query_loops.ndcg_given_kernel(2.0**grades - 1.0, run.offsets, 2.0**run.ideal - 1.0, run.ideal_offsets,
                                             _log2_discount(longest), spec.k)
    unknown = ~pooled | (labels < 0)
    return _rbp(spec, grades, unknown, scores, run.offsets, ranking == "tie_mean")


def list_values(spec: MeasureSpec, labels, offsets, empty_value, queries) -> np.ndarray:
    """One value per query of a measure of this module on ranked lists whose every document is judged
    (``evaluate``: ``labels`` in each query's rank order under the convention, which gives the ranking; the
    measure's own definition gives the gains, whatever the convention's); ``empty_value`` is nDCG's for a
    query without gain; ``queries`` their ids, for errors."""
    from structrank.metrics import query_loops, tool_loops  # deferred: numba, loaded on the first evaluation

    if spec.family in RUN_ONLY:
        raise ValueError(f"{spec.canonical} measures a TREC run's unjudged documents, and evaluate() has a label for "
                         "every row: evaluate a run against qrels (evaluate_run, structrank evaluate --qrels --run)")
    grades = np.asarray(labels).astype(np.float64)
    if spec.family in ("err", "ndcg_exp"):
        by_family = ERR_MAX_GRADE if spec.family == "err" else EXP_MAX_GRADE
        _check_grades(grades, offsets, queries, spec.canonical, by_family)
    if spec.family == "err":
        return tool_loops.err_kernel(grades, offsets, spec.k, ERR_MAX_GRADE)
    if spec.family == "ndcg_exp":
        gains = 2.0**grades - 1.0
        ideal = query_loops.ideal_gains(gains, offsets)
        return query_loops.ndcg_kernel(gains, ideal, offsets, _log2_discount(int(np.diff(offsets).max(initial=0))),
                                       spec.k, False, empty_value)
    return _rbp(spec, grades, np.zeros(grades.shape[0], np.bool_), np.zeros(grades.shape[0]), offsets, False)


def _rbp(spec, grades, unknown, scores, offsets, average_ties) -> np.ndarray:
    from structrank.metrics import tool_loops  # deferred: numba, loaded on the first evaluation

    if spec.family == "rbp_residual":
        return tool_loops.rbp_kernel(unknown.astype(np.float64), scores, offsets, spec.k, spec.p, average_ties, True)
    gains = (grades >= spec.rel).astype(np.float64) if spec.rel else grades
    return tool_loops.rbp_kernel(gains, scores, offsets, spec.k, spec.p, average_ties, False)


def _log2_discount(n: int) -> np.ndarray:
    """1/log2(rank + 1) for ranks 1..n: gdeval divides by the natural log, which the ratio cancels."""
    return 1.0 / np.log2(np.arange(2, n + 2, dtype=np.float64))


def _check_grades(grades, offsets, queries, name, top) -> None:
    """Refuse a grade above ``top``, naming its query (``grades`` at ``offsets``): ERR's scale ends at 4, and
    gdeval refuses a qrels file with a grade above it (a larger one would stop the user with a probability
    above 1); the exponential gain of a grade past ``EXP_MAX_GRADE`` would overflow."""
    too_high = np.flatnonzero(grades > top)
    if too_high.size:
        q = int(np.searchsorted(offsets, too_high[0], side="right")) - 1
        why = (f"gdeval's scale: R = (2^g - 1)/2^{ERR_MAX_GRADE}" if top == ERR_MAX_GRADE else
               "above, 2^g - 1 overflows a double")
        raise DataValidationError(f"{name} takes grades 0-{top} ({why}), and query {queries[q]} has a label of "
                                  f"{int(grades[too_high[0]])}")
