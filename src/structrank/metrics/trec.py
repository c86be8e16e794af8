"""TREC qrels and runs: read them, and evaluate a run the way trec_eval does.

A qrels file has lines ``qid iter docno rel``; a run file ``qid Q0 docno rank score tag`` (both
plain or .gz, whitespace-separated). ``evaluate_run`` also takes them as dicts (``{qid: {docno:
rel}}`` and ``{qid: {docno: score}}``, as pytrec_eval and ranx) or as pandas DataFrames under
PyTerrier's column names (qrels ``qid, docno, label``; a run ``qid, docno, score``) or ir_datasets' (``query_id,
doc_id, relevance``; ``query_id, doc_id, score``), ``FRAME_COLUMNS``; other columns (a rank, ir_datasets'
``iteration``) are ignored.

trec_eval's rules, which ``evaluate_run`` follows:

- each query's documents are ranked by score, ties by docno in descending string order; the rank
  column is ignored; a score is compared as trec_eval holds it, a C ``float`` (read as a double, then
  rounded to single precision), so scores that differ only beyond single precision tie;
- a document of the run that the qrels do not judge, or judge with a negative label (pooled but not
  judged), is non-relevant, and bpref skips it;
- the relevant documents of the qrels count in every denominator whether the run retrieved them
  or not: AP, map@k, recall@k and R-precision divide by R, the query's relevant documents in the
  qrels, and NDCG's ideal DCG is that of the qrels' gains (the label, as trec_eval's ndcg);
- a query of the qrels that the run lacks is left out, or scores 0 in every measure with
  ``complete=True`` (trec_eval -c; RBP's residual, what is unknown, is then 1); a query of the run that the
  qrels lack is left out;
- ERR@k, nDCG(dcg='exp-log2')@k, RBP and its residual, infAP and Judged@k are the measures of
  ``structrank.metrics.tool_measures``: each follows the tool ir_measures computes it with (gdeval,
  trectools, cwl_eval, trec_eval, its judged provider), and ranks the run as that tool does;
- a label counts as relevant from ``relevant_from`` on (trec_eval -l, default 1), for every
  measure but NDCG, which uses the labels as gains; a level below 1 would make unjudged documents
  relevant and is refused;
- a qrels file that judges a document twice is an error naming both lines (trec_eval stops on it too),
  and so is nothing to evaluate (an empty qrels or run, or no query in common): never a NaN.

Errors name the file, the line and the field; lines and numbers are read through
``structrank.data.grammar`` and fields are split at ASCII white space.

Two lanes give the same values to the bit. The fast lane holds a file or a dict as arrays (``_Entries``:
each entry's query number, its docno as a span of bytes, its value), read from a file's bytes in one
numba pass or checked in a dict as a whole, and judges and ranks every query at once
(``structrank.metrics.trec_loops``). It accepts only what it can prove the strict lane reads alike;
anything else (a token outside the grammar, a bare CR, a document twice, a boolean, a DataFrame...)
goes to the strict lane: the line-by-line readers (``_strict_qrels``, ``_strict_run``) and ``_as_dict``,
which name what is wrong, and ``_ranked``, query by query, for what the arrays cannot hold. ``write_run`` writes a run
(``structrank predict --format trec``). The results are tested against pytrec_eval on real
complete, truncated, tied and partly judged runs and on random ones.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np

from structrank.atomic import atomic_open
from structrank.data import grammar
from structrank.files import read_bytes
from structrank.errors import DataFormatError, DataValidationError
from structrank.metrics.conventions import get_convention
from structrank.metrics.evaluate import DEFAULT_METRICS, EvaluationResult, canonical_name, parse_metric
from structrank.metrics.tool_measures import FAMILIES as TOOL_FAMILIES
from structrank.metrics.tool_measures import JudgedRun, parse as parse_tool_measure, run_values

#: the column names of a qrels or a run DataFrame, by the library that makes such frames (trec_eval's short
#: ``rel`` too); each field may take any of its names, and one only
FRAME_COLUMNS = {
    "qrels": {"PyTerrier": ("qid", "docno", "label"), "ir_datasets": ("query_id", "doc_id", "relevance"),
              "trec_eval": ("qid", "docno", "rel")},
    "run": {"PyTerrier": ("qid", "docno", "score"), "ir_datasets": ("query_id", "doc_id", "score")},
}
_FIELDS = {"qrels": ("query id", "document id", "relevance label"), "run": ("query id", "document id", "score")}


def _lines(path, raw):
    """(line number, fields as bytes) of every non-blank line of ``raw``, the bytes of ``path`` (plain or
    gzip; ``"-"``: stdin): UTF-8, lines and numbers as docs/GRAMMAR.md says (``structrank.data.grammar``),
    fields split at ASCII white space only."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataFormatError(str(path), None, f"not UTF-8 text ({exc.reason})") from None
    for number, line in grammar.lines(str(path), raw):
        fields = line.split()
        if fields:
            yield number, fields


#: the range of a relevance label (trec_eval's C long)
INT64_MIN, INT64_MAX = -2**63, 2**63 - 1


def _text(field: bytes) -> str:
    return field.decode("utf-8")


def read_qrels(path) -> dict:
    """``{qid: {docno: rel}}`` from a TREC qrels file (``qid iter docno rel``)."""
    raw = read_bytes(path)
    entries = _distinct(_file_entries(raw, "qrels"))
    return entries.as_dict() if entries is not None else _strict_qrels(path, raw)


def read_run(path) -> dict:
    """``{qid: {docno: score}}`` from a TREC run file (``qid Q0 docno rank score tag``); the rank is ignored."""
    raw = read_bytes(path)
    entries = _distinct(_file_entries(raw, "run"))
    return entries.as_dict() if entries is not None else _strict_run(path, raw)


def _strict_qrels(path, raw) -> dict:
    """``read_qrels`` line by line: the judge of what a qrels file holds, and the words of its errors."""
    qrels, first_line = {}, {}
    for line, fields in _lines(path, raw):
        if len(fields) != 4:
            raise DataFormatError(str(path), line, f"a qrels line has 4 fields (qid iter docno rel), got {len(fields)}")
        qid, docno = _text(fields[0]), _text(fields[2])
        docs = qrels.setdefault(qid, {})
        if docno in docs:
            raise DataFormatError(str(path), line, f"document {docno!r} of query {qid} is judged twice (lines "
                                  f"{first_line[qid, docno]} and {line})", "docno")
        first_line[qid, docno] = line
        docs[docno] = grammar.integer(str(path), line, fields[3], "rel")
        if not INT64_MIN <= docs[docno] <= INT64_MAX:  # trec_eval reads a relevance into a C long
            raise DataFormatError(str(path), line, f"relevance {_text(fields[3])[:40]} is outside the 64-bit "
                                  "integers trec_eval reads", "rel")
    return qrels


def _strict_run(path, raw) -> dict:
    """``read_run`` line by line: the judge of what a run file holds, and the words of its errors."""
    run, first_line = {}, {}
    for line, fields in _lines(path, raw):
        if len(fields) != 6:
            raise DataFormatError(str(path), line, "a run line has 6 fields (qid Q0 docno rank score tag), got "
                                  f"{len(fields)}")
        qid, docno = _text(fields[0]), _text(fields[2])
        docs = run.setdefault(qid, {})
        if docno in docs:
            raise DataFormatError(str(path), line, f"document {docno!r} of query {qid} is retrieved twice (lines "
                                  f"{first_line[qid, docno]} and {line})", "docno")
        first_line[qid, docno] = line
        docs[docno] = grammar.finite(str(path), line, fields[4], "score")
    return run


def write_run(path, qid, docids, scores, tag="structrank", source=None, line_numbers=None) -> None:
    """Write a TREC run (``qid Q0 docno rank score tag``), each query's documents ranked as trec_eval
    ranks them (score, then docno descending), atomically (``"-"``: standard output).

    Every row is written: two rows of a query with the same docno (which a run cannot tell apart) are an
    error naming both rows (1-based, in the order given), or their lines when ``line_numbers`` gives
    each row's line in ``source``, the file they came from.
    """
    if not str(tag) or any(c.isspace() for c in str(tag)):
        raise ValueError(f"a run tag is one word without spaces, got {tag!r}")
    rows = "lines" if line_numbers is not None else "rows"
    numbers = np.asarray(line_numbers) if line_numbers is not None else range(1, len(np.asarray(qid)) + 1)
    queries, first_row = {}, {}
    scores = np.asarray(scores, dtype=np.float64)
    for row, q, d, s in zip(numbers, np.asarray(qid), np.asarray(docids), scores):
        q, d = str(q), str(d)
        if not d or any(c.isspace() for c in d):
            raise DataValidationError(f"{source or 'the rows'}: {rows[:-1]} {row}: docno {d!r} is not one word, as a "
                                      "TREC run line needs")
        docs = queries.setdefault(q, {})
        if d in docs:
            raise DataValidationError(f"{source or 'the rows'}: {rows} {first_row[q, d]} and {row} of query {q} have "
                                      f"the same docno {d!r}: a TREC run names each document of a query once")
        first_row[q, d] = row
        docs[d] = float(s)
    # surrogateescape: a docid read from bytes that were not UTF-8 is written back as those bytes
    with atomic_open(path, "wb") as fh:
        for q in sorted(queries, key=_qid_key):
            docs = queries[q]
            text = "".join(f"{q} Q0 {d} {rank} {docs[d]!r} {tag}\n" for rank, d in enumerate(_ranked(docs), 1))
            fh.write(text.encode("utf-8", errors="surrogateescape"))


def frame_columns(frame, what) -> list:
    """The query id, document id and value columns (pandas Series) of a qrels or run DataFrame (``what``),
    under any of the names of ``FRAME_COLUMNS``; DataValidationError listing the accepted names when a
    field has none of them, or naming both when it has two.

    >>> import pandas as pd
    >>> qrels = pd.DataFrame({"query_id": ["1"], "doc_id": ["d1"], "relevance": [2], "iteration": ["0"]})
    >>> [column.name for column in frame_columns(qrels, "qrels")]
    ['query_id', 'doc_id', 'relevance']
    """
    columns = []
    for i, field in enumerate(_FIELDS[what]):
        names = list(dict.fromkeys(library_names[i] for library_names in FRAME_COLUMNS[what].values()))
        present = [name for name in names if name in frame.columns]
        if len(present) > 1:
            raise DataValidationError(f"the {what} DataFrame has {len(present)} {field} columns, "
                                      f"{' and '.join(map(repr, present))}: keep one")
        if not present:
            accepted = "; ".join(f"{library}'{'' if library.endswith('s') else 's'} {', '.join(library_names)}"
                                 for library, library_names in FRAME_COLUMNS[what].items())
            raise DataValidationError(f"the {what} DataFrame has no {field} column ({' or '.join(map(repr, names))}): "
                                      f"a {what} DataFrame takes the columns of {accepted}; it has "
                                      f"{', '.join(map(str, frame.columns)) or 'no column'}")
        columns.append(frame[present[0]])
    return columns


def _as_dict(source, what) -> dict:
    """A dict ``{qid: {docno: value}}`` from a dict or a DataFrame, entry by entry; qids and docnos as strings.

    Dicts and DataFrames are held to the file readers' rules, with the same words: a qid or docno is a
    string or an integer (a whole float, as a DataFrame's numeric column holds one, reads as that
    integer), one word; a judgement is an integer, a score a finite number; a document appears once per
    query (a dict cannot repeat one, a DataFrame can: both rows are named).
    """
    kind = "rel" if what == "qrels" else "score"
    if hasattr(source, "columns"):  # a pandas DataFrame
        columns = [column.to_numpy() for column in frame_columns(source, what)]
        entries = ((f"the {what} DataFrame, row {i}", q, d, v) for i, (q, d, v) in enumerate(zip(*columns)))
    elif isinstance(source, dict):
        entries = ((f"the {what} dict", q, d, v) for q, docs in source.items() for d, v in _items(docs, what, q))
    else:
        raise DataValidationError(f"{what} must be a file path, a dict {{qid: {{docno: value}}}} or a DataFrame, got "
                                  f"{type(source).__name__}")
    out, first = {}, {}
    for where, q, d, v in entries:
        q, d = _identifier(q, where, "qid"), _identifier(d, where, "docno")
        docs = out.setdefault(q, {})
        if d in docs:
            verb = "judged" if kind == "rel" else "retrieved"
            raise DataValidationError(f"{where}: document {d!r} of query {q} is {verb} twice (also {first[q, d]})")
        first[q, d] = where
        docs[d] = _value(v, f"{where}, query {q}, document {d!r}", kind)
    return out


def _items(docs, what, qid):
    if not isinstance(docs, dict):
        raise DataValidationError(f"the {what} dict: query {qid!r} maps to a {type(docs).__name__}, not a dict "
                                  "{docno: value}")
    return docs.items()


def _identifier(value, where, field) -> str:
    """A qid or docno of a dict or DataFrame as the file readers hold it: its text, one word."""
    if isinstance(value, (str, np.str_)):
        text = str(value)
    elif isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        text = str(int(value))
    elif isinstance(value, (float, np.floating)) and math.isfinite(value) and float(value).is_integer():
        text = str(int(value))  # a numeric DataFrame column holds integers as floats
    else:
        raise DataValidationError(f"{where}: {field} {value!r} is neither a string nor an integer")
    if not text or any(c.isspace() for c in text):
        raise DataValidationError(f"{where}: {field} {text!r} is not one word, as a TREC file holds it")
    return text


def _value(value, where, kind):
    """A judgement (an integer) or a score (a finite number), as the file readers take them."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise DataValidationError(f"{where}: {kind} {value!r} is not a number")
    if not math.isfinite(value):
        raise DataValidationError(f"{where}: {kind} {value} is not finite")
    if kind == "rel":
        if not float(value).is_integer():
            raise DataValidationError(f"{where}: rel {value!r} is not an integer")
        return int(value)
    return float(value)


def _ranked(docs: dict) -> list:
    """The docnos of one query ranked as trec_eval does: by score as a C float, ties by docno descending."""
    docnos = sorted(docs, reverse=True)
    # trec_eval reads a score with atof and keeps it in a float: compare in single precision
    with np.errstate(over="ignore"):  # a score beyond float's range is inf in C too
        scores = np.array([docs[d] for d in docnos], dtype=np.float64).astype(np.float32)
    return [docnos[i] for i in np.argsort(-scores, kind="stable")]  # stable: equal scores keep docno descending


def evaluate_run(qrels, run, metrics=DEFAULT_METRICS, relevant_from=1, complete=False) -> EvaluationResult:
    """Evaluate a TREC run against qrels under trec_eval's rules (see the module docstring).

    Parameters
    ----------
    qrels, run : path, dict or DataFrame
        A DataFrame under PyTerrier's column names (qid, docno, label; a run's score) or ir_datasets'
        (query_id, doc_id, relevance; score): ``FRAME_COLUMNS``.
    metrics : names (canonical or aliases: "AP", "nDCG@10", "P_10", "recall_100", ...; and ir_measures'
        "ERR@20", "nDCG(dcg='exp-log2')@10", "RBP(p=0.8)", "RBP(p=0.8,rel=1)", "infAP", "Judged@10", with
        "rbp_residual(p=0.8)": ``structrank.metrics.tool_measures``)
    relevant_from : int
        Labels >= this are relevant for the binary measures (trec_eval -l).
    complete : bool
        Queries of the qrels missing from the run score 0 and count in the means (trec_eval -c).

    Returns
    -------
    EvaluationResult (convention "trec"), results keyed by canonical names, queries in qid order.

    >>> qrels = {"1": {"a": 1, "b": 0, "c": 2}}
    >>> run = {"1": {"a": 0.5, "b": 0.9, "x": 0.1}}
    >>> result = evaluate_run(qrels, run, ["AP", "P@2", "R@1"])
    >>> result.metrics
    {'map': 0.25, 'p@2': 0.5, 'recall@1': 0.0}
    """
    if isinstance(relevant_from, bool) or not isinstance(relevant_from, (int, np.integer)) or relevant_from < 1:
        raise ValueError(f"relevant_from (trec_eval -l) must be an integer >= 1, got {relevant_from!r}: a lower level "
                         "would make every unjudged document relevant")
    names_of = {"qrels": _source_name(qrels, "qrels"), "run": _source_name(run, "run")}
    qrels = _Source(qrels, "qrels", distinct=True)
    run = _Source(run, "run")
    ranked = None
    if qrels.entries is not None and run.entries is not None:
        ranked = _ranked_entries(qrels.entries, run.entries, relevant_from, complete)
    if ranked is None:  # a document twice in the run (its strict reader says where), or a dict the arrays cannot hold
        ranked = _ranked_dicts(qrels.strict(), run.strict(), relevant_from, complete)
    queries, arrays, qrels_qids, run_qids = ranked
    judged_run = JudgedRun(*arrays[-1], arrays[3], arrays[4], arrays[6], arrays[7], relevant_from, queries)
    names = [canonical_name(m) for m in metrics]
    parsed = [parse_metric(n) for n in names]
    if any(family == "auc" for family, _ in parsed):
        raise ValueError("auc is not a trec_eval measure of a run (unjudged and missing documents have no pairs)")
    if not queries:
        why = (f"no judgement in {names_of['qrels']}" if not qrels_qids else
               f"no retrieved document in {names_of['run']}" if not run_qids else
               f"no query of {names_of['run']} is in {names_of['qrels']} (query ids compare as strings: 1 is not 001)")
        raise DataValidationError(f"nothing to evaluate: {why}")
    return _measure(names, parsed, queries, *arrays[:-1], judged_run)


def _queries(qrels_qids, run_qids, complete) -> list:
    """The queries evaluated, in trec_eval's order: those of both (none: nothing to evaluate), or with
    ``complete`` all of the qrels."""
    retrieved = sorted(set(qrels_qids) & set(run_qids), key=_qid_key)
    return sorted(qrels_qids, key=_qid_key) if complete and retrieved else retrieved


def _ranked_dicts(qrels, run, relevant_from, complete):
    """(queries, the arrays of ``_measure``, the qids of the qrels, the run's) from dicts, query by query
    (the strict path)."""
    queries = _queries(qrels, run, complete)
    rows = [_ranked(run[q]) if q in run else [] for q in queries]
    labels = np.array([qrels[q].get(d, 0) for q, docs in zip(queries, rows) for d in docs], dtype=np.int64)
    # a negative label is a pooled document left unjudged (trec_eval's RELVALUE_UNJUDGED): non-relevant, and
    # skipped by bpref like a document the qrels do not name
    judged = np.array([qrels[q].get(d, -1) >= 0 for q, docs in zip(queries, rows) for d in docs], dtype=np.bool_)
    offsets = np.concatenate([[0], np.cumsum([len(docs) for docs in rows])]).astype(np.int64)
    judged_labels = [np.array(list(qrels[q].values()), dtype=np.int64) for q in queries]
    n_relevant = np.array([int(np.sum(j >= relevant_from)) for j in judged_labels], dtype=np.int64)
    n_nonrelevant = np.array([int(np.sum((j >= 0) & (j < relevant_from))) for j in judged_labels], dtype=np.int64)
    ideal = [np.sort(np.maximum(j, 0))[::-1].astype(np.float64) for j in judged_labels]
    ideal_offsets = np.concatenate([[0], np.cumsum([i.size for i in ideal])]).astype(np.int64)
    ideal = np.concatenate(ideal) if ideal else np.zeros(0)
    relevant = (labels >= relevant_from).astype(np.int8)
    # what tool_measures needs beyond: whether the qrels name each document, its score and place in the run
    pooled = np.array([d in qrels[q] for q, docs in zip(queries, rows) for d in docs], dtype=np.bool_)
    scores = np.array([run[q][d] for q, docs in zip(queries, rows) for d in docs], dtype=np.float64)
    place = [{d: i for i, d in enumerate(run.get(q, ()))} for q in queries]
    arrival = np.array([p[d] for p, docs in zip(place, rows) for d in docs], dtype=np.int64)
    return queries, (relevant, judged, np.maximum(labels, 0).astype(np.float64), offsets, n_relevant, n_nonrelevant,
                     ideal, ideal_offsets, (labels, pooled, scores, arrival)), list(qrels), list(run)


def _ranked_entries(qrels, run, relevant_from, complete):
    """``_ranked_dicts`` from entries (the qrels' documents distinct), every query at once in one kernel;
    None when a query of the run names a document twice."""
    from structrank.metrics import trec_loops  # deferred: numba, loaded on the first evaluation, not on import

    queries = _queries(qrels.qids, run.qids, complete)
    number = {q: i for i, q in enumerate(qrels.qids)}
    for q in run.qids:
        number.setdefault(q, len(number))
    wanted = np.array([number[q] for q in queries], dtype=np.int64)
    run_q = np.array([number[q] for q in run.qids], dtype=np.int64)[run.q]
    # trec_eval reads a score with atof and keeps it in a float: compare in single precision
    status, ranked, offsets, run_labels, run_pooled = trec_loops.rank_run(
        wanted, len(number), run_q, run.start, run.end, run.buf, run.values.astype(np.float32), qrels.q, qrels.start,
        qrels.end, qrels.buf, qrels.values)
    if status != trec_loops.OK:
        return None
    labels = run_labels[ranked]  # -1 where the qrels do not judge the document: as a negative label, unjudged
    position = np.full(len(number), -1, np.int64)
    position[wanted] = np.arange(wanted.size)
    where = position[qrels.q]
    kept = where >= 0
    where, judged_labels = where[kept], qrels.values[kept]
    n = wanted.size
    n_relevant = np.bincount(where[judged_labels >= relevant_from], minlength=n).astype(np.int64)
    n_nonrelevant = np.bincount(where[(judged_labels >= 0) & (judged_labels < relevant_from)], minlength=n)
    gains = np.maximum(judged_labels, 0)
    ideal = gains[np.lexsort((-gains, where))].astype(np.float64)
    ideal_offsets = np.concatenate([[0], np.cumsum(np.bincount(where, minlength=n))]).astype(np.int64)
    relevant = (labels >= relevant_from).astype(np.int8)
    extras = (labels, run_pooled[ranked], run.values[ranked], ranked)  # an entry's number is its place in the run
    return queries, (relevant, labels >= 0, np.maximum(labels, 0).astype(np.float64), offsets, n_relevant,
                     n_nonrelevant.astype(np.int64), ideal, ideal_offsets, extras), qrels.qids, run.qids


def _measure(names, parsed, queries, relevant, judged, gains, offsets, n_relevant, n_nonrelevant, ideal,
             ideal_offsets, judged_run) -> EvaluationResult:
    """The measures of ranked queries: ``relevant``, ``judged`` and ``gains`` of each query's documents in
    rank order (query i's at ``offsets[i]:offsets[i + 1]``); each query's relevant and non-relevant
    judgements and its ideal gains (``ideal_offsets``), all of the qrels; ``judged_run`` the same run for
    the measures of ``tool_measures`` (ERR, RBP, infAP, Judged...), which rank it as their tools do."""
    from structrank.metrics import query_loops  # deferred: numba, loaded on the first evaluation, not on import

    longest = int(max(np.diff(offsets).max(initial=0), np.diff(ideal_offsets).max(initial=0)))
    discount = get_convention("trec").discounts(longest)
    per_query, orders = {}, {}
    for name, (family, k) in zip(names, parsed):
        if family in TOOL_FAMILIES:
            values = run_values(parse_tool_measure(name), judged_run, orders)
        elif family == "ndcg":
            values = query_loops.ndcg_given_kernel(gains, offsets, ideal, ideal_offsets, discount, k)
        elif family == "map":
            values = query_loops.ap_given_kernel(relevant, offsets, n_relevant, k)
        elif family == "mrr":
            values = query_loops.rr_kernel(relevant, offsets, k, 0.0)
        elif family == "p":
            values = query_loops.precision_kernel(relevant, offsets, k, True, 0.0)
        elif family == "recall":
            values = query_loops.recall_kernel(relevant, offsets, n_relevant, np.full(n_relevant.size, k), 0.0)
        elif family == "rprec":
            values = query_loops.recall_kernel(relevant, offsets, n_relevant, n_relevant, 0.0)
        elif family == "success":
            values = query_loops.success_kernel(relevant, offsets, k, 0.0)
        else:  # bpref
            values = query_loops.bpref_kernel(relevant, judged, offsets, n_relevant, n_nonrelevant, 0.0)
        per_query[name] = values
    means = {name: float(np.mean(v)) if v.size else float("nan") for name, v in per_query.items()}
    return EvaluationResult(means, per_query, np.array(queries, dtype=object), "trec")


class _Entries:
    """Qrels or a run as arrays, entry for entry what the strict reader's dict holds (every query's
    documents distinct): ``qids`` (each query once, in order of appearance), ``q`` (each entry's
    index into ``qids``), its docno as the span ``start:end`` of the bytes ``buf``, and ``values``
    (int64 labels or float64 scores)."""

    __slots__ = ("qids", "q", "buf", "start", "end", "values")

    def __init__(self, qids, q, buf, start, end, values):
        self.qids, self.q, self.buf, self.start, self.end, self.values = qids, q, buf, start, end, values

    def as_dict(self) -> dict:
        """``{qid: {docno: value}}``, queries and documents in the order of the entries."""
        from structrank.metrics import trec_loops  # deferred: numba, loaded on the first read, not on import

        if not self.q.size:
            return {}
        docnos = trec_loops.pack(self.buf, self.start, self.end).tobytes().decode("utf-8").split("\n")
        values = self.values.tolist()
        bounds = np.concatenate([[0], np.flatnonzero(np.diff(self.q)) + 1, [self.q.size]]).tolist()
        out = {}
        for a, b in zip(bounds[:-1], bounds[1:]):
            out.setdefault(self.qids[self.q[a]], {}).update(zip(docnos[a:b], values[a:b]))
        return out


#: the fast lane's reading of a file: (fields, the value's field, whether it is an integer)
_LAYOUT = {"qrels": (4, 3, True), "run": (6, 4, False)}


def _file_entries(raw: bytes, what: str):
    """The ``_Entries`` of a qrels or run file's bytes, or None where the strict reader must look (for
    anything irregular; see ``trec_loops``)."""
    # deferred: numba, loaded on the first read, not on import
    from structrank.data.numbers import POW10, WORDS
    from structrank.metrics import trec_loops

    if not raw.isascii():
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            return None
    buf = np.frombuffer(raw, np.uint8)
    n_fields, value_field, integers = _LAYOUT[what]
    # a line of n fields takes 2n bytes at least (one of white space after each): a file of blank lines
    # allocates nothing per line
    capacity = min(raw.count(b"\n") + 1, (len(raw) + 1) // (2 * n_fields))
    status, rows, start, end, ints, floats, slow, segments = trec_loops.read_lines(
        buf, capacity, n_fields, value_field, integers, POW10, WORDS)
    if status != trec_loops.OK:
        return None
    values = ints if integers else floats
    if slow.size:  # numbers past the exact fast path: NumPy's conversion, correctly rounded as float's
        tokens = trec_loops.pack(buf, slow[:, 1], slow[:, 2]).tobytes().split(b"\n")[:-1]
        converted = np.array(tokens).astype(np.float64)
        if not np.isfinite(converted).all():
            return None
        values[slow[:, 0]] = converted
    number, segment_q = {}, []
    for q0, q1 in segments[:, 1:].tolist():
        segment_q.append(number.setdefault(raw[q0:q1].decode("utf-8"), len(number)))
    q = np.repeat(np.array(segment_q, dtype=np.int64), np.diff(np.append(segments[:, 0], rows)))
    return _Entries(list(number), q, buf, start, end, values)


def _distinct(entries):
    """``entries``, or None when a query names a document twice (the strict reader says where) or
    ``entries`` is None."""
    from structrank.metrics import trec_loops  # deferred: numba, loaded on the first read, not on import

    if entries is None:
        return None
    order, offsets = trec_loops.group(entries.q, len(entries.qids))
    return entries if trec_loops.all_distinct(order, offsets, entries.start, entries.end, entries.buf) else None


#: white space within a docno of a dict: what ``str.isspace`` calls white space but LF, the separator here
_SPACE_BUT_LF = re.compile(r"[^\S\n]")
#: the ASCII characters ``str.isspace`` calls white space
_ASCII_SPACE = b"\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f "
#: value types read as the strict path reads them (NumPy's unsigned 64-bit integers are not: they could wrap)
_INTEGER_TYPES = {int, np.int64, np.int32, np.int16, np.int8, np.uint32, np.uint16, np.uint8}
_NUMBER_TYPES = _INTEGER_TYPES | {float, np.float64, np.float32, np.float16}


def _dict_entries(source: dict, what: str):
    """The ``_Entries`` of a dict ``{qid: {docno: value}}``, checked as wholes (the types present, white
    space in the joined docnos, the values as arrays), or None where the strict path must look."""
    number, query_of, sizes, docnos, values = {}, [], [], [], []
    for q, docs in source.items():
        if not isinstance(docs, dict):
            return None
        if not docs:
            continue
        try:
            text = _identifier(q, "", "qid")
        except DataValidationError:
            return None
        query_of.append(number.setdefault(text, len(number)))
        sizes.append(len(docs))
        docnos.extend(docs)
        values.extend(docs.values())
    if not set(map(type, docnos)) <= {str, np.str_}:
        return None
    value_types = set(map(type, values))
    try:
        if what == "run" and value_types <= _NUMBER_TYPES:
            values = np.array(values, dtype=np.float64)
            if not np.isfinite(values).all():
                return None
        elif what == "qrels" and value_types <= _INTEGER_TYPES:
            values = np.array(values, dtype=np.int64)
        elif what == "qrels" and value_types <= _NUMBER_TYPES:
            whole = np.array(values, dtype=np.float64)
            if not (np.abs(whole) <= 2.0**53).all() or not (whole == np.floor(whole)).all():
                return None  # NaN fails the first test
            values = whole.astype(np.int64)
        else:
            return None
    except (OverflowError, ValueError, TypeError):
        return None
    joined = "\n".join(docnos)
    if not joined.isascii() and _SPACE_BUT_LF.search(joined):
        return None
    try:
        raw = joined.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: no UTF-8 bytes to compare
        return None
    if len(raw) - len(raw.translate(None, _ASCII_SPACE)) != max(len(docnos) - 1, 0):
        return None  # white space inside a docno: more than the LF between each two
    buf = np.frombuffer(raw, np.uint8)
    ends = np.flatnonzero(buf == 10)
    start = np.concatenate([[0], ends + 1]).astype(np.int64) if docnos else np.zeros(0, np.int64)
    end = np.append(ends, buf.size).astype(np.int64) if docnos else np.zeros(0, np.int64)
    if (end == start).any():
        return None  # an empty docno
    q = np.repeat(np.array(query_of, dtype=np.int64), sizes)
    return _Entries(list(number), q, buf, start, end, values)


class _Source:
    """A qrels or run argument: its ``entries`` (None where the fast lane cannot hold it) and, on demand,
    the strict reader's dict (``strict``), which names any problem. A file is read once (standard input
    cannot be read twice); what the fast lane leaves, and a DataFrame, goes through the strict reader.

    The qrels (``distinct``) are checked for a document judged twice here, before the run is read, as
    the strict reader finds it; the run's repeats are found as it is ranked (``trec_loops.rank_run``),
    its own problems being the last the strict path would name."""

    def __init__(self, source, what, distinct=False):
        self.source, self.what = source, what
        self.raw, self._strict = None, None
        if isinstance(source, (str, Path)):
            self.raw = read_bytes(source)
            self.entries = _file_entries(self.raw, what)
        else:
            self.entries = _dict_entries(source, what) if isinstance(source, dict) else None
        if distinct:
            self.entries = _distinct(self.entries)
        if self.entries is None:
            self.entries = _dict_entries(self.strict(), what)

    def strict(self) -> dict:
        if self._strict is None:
            if self.raw is not None:
                self._strict = (_strict_qrels if self.what == "qrels" else _strict_run)(self.source, self.raw)
            else:
                self._strict = _as_dict(self.source, self.what)
        return self._strict


def _source_name(source, what: str) -> str:
    """How messages name an input: its path, else the Python object it is (the run dict, the qrels DataFrame)."""
    if isinstance(source, (str, Path)):
        return str(source)
    return f"the {what} {'DataFrame' if hasattr(source, 'columns') else type(source).__name__}"


def _qid_key(qid: str):
    """trec_eval's query order: numeric qids by value, then any others by string."""
    return (0, int(qid), "") if qid.isascii() and qid.isdigit() else (1, 0, qid)
