"""TREC qrels and runs: read them, and evaluate a run the way trec_eval does.

A qrels file has lines ``qid iter docno rel``; a run file ``qid Q0 docno rank score tag`` (both
plain or .gz, whitespace-separated). ``evaluate_run`` also takes them as dicts (``{qid: {docno:
rel}}`` and ``{qid: {docno: score}}``, as pytrec_eval and ranx) or as pandas DataFrames (columns
``query_id``/``qid``, ``doc_id``/``docno``, and ``relevance``/``rel`` or ``score``).

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
  ``complete=True`` (trec_eval -c); a query of the run that the qrels lack is left out;
- a label counts as relevant from ``relevant_from`` on (trec_eval -l, default 1), for every
  measure but NDCG, which uses the labels as gains; a level below 1 would make unjudged documents
  relevant and is refused;
- a qrels file that judges a document twice is an error naming both lines (trec_eval stops on it too),
  and so is nothing to evaluate (an empty qrels or run, or no query in common): never a NaN.

Errors name the file, the line and the field; lines and numbers are read through
``structrank.data.grammar`` and fields are split at ASCII white space. ``write_run`` writes a run
(``structrank predict --format trec``). The results are tested against pytrec_eval on real
complete, truncated, tied and partly judged runs and on random ones.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from structrank.atomic import atomic_open
from structrank.data import grammar
from structrank.files import read_bytes
from structrank.errors import DataFormatError, DataValidationError
from structrank.metrics.conventions import get_convention
from structrank.metrics.evaluate import DEFAULT_METRICS, EvaluationResult, canonical_name, parse_metric

_QUERY_COLUMNS = ("query_id", "qid")
_DOC_COLUMNS = ("doc_id", "docno")


def _lines(path):
    """(line number, fields as bytes) of every non-blank line of a text file (plain or gzip;
    ``"-"``: stdin): UTF-8, lines and numbers as docs/GRAMMAR.md says (``structrank.data.grammar``),
    fields split at ASCII white space only."""
    raw = read_bytes(path)
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataFormatError(str(path), None, f"not UTF-8 text ({exc.reason})") from None
    for number, line in grammar.lines(str(path), raw):
        fields = line.split()
        if fields:
            yield number, fields


def _text(field: bytes) -> str:
    return field.decode("utf-8")


def read_qrels(path) -> dict:
    """``{qid: {docno: rel}}`` from a TREC qrels file (``qid iter docno rel``)."""
    qrels, first_line = {}, {}
    for line, fields in _lines(path):
        if len(fields) != 4:
            raise DataFormatError(str(path), line, f"a qrels line has 4 fields (qid iter docno rel), got {len(fields)}")
        qid, docno = _text(fields[0]), _text(fields[2])
        docs = qrels.setdefault(qid, {})
        if docno in docs:
            raise DataFormatError(str(path), line, f"document {docno!r} of query {qid} is judged twice (lines "
                                  f"{first_line[qid, docno]} and {line})", "docno")
        first_line[qid, docno] = line
        docs[docno] = grammar.integer(str(path), line, fields[3], "rel")
    return qrels


def read_run(path) -> dict:
    """``{qid: {docno: score}}`` from a TREC run file (``qid Q0 docno rank score tag``); the rank is ignored."""
    run, first_line = {}, {}
    for line, fields in _lines(path):
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


def _column(frame, names, what):
    for name in names:
        if name in frame.columns:
            return frame[name]
    raise DataValidationError(f"the {what} DataFrame needs a column {' or '.join(map(repr, names))}; it has "
                              f"{', '.join(map(str, frame.columns))}")


def _as_dict(source, value_columns, read, what) -> dict:
    """A dict ``{qid: {docno: value}}`` from a file path, a dict or a DataFrame; qids and docnos as strings.

    Dicts and DataFrames are held to the file readers' rules, with the same words: a qid or docno is a
    string or an integer (a whole float, as a DataFrame's numeric column holds one, reads as that
    integer), one word; a judgement is an integer, a score a finite number; a document appears once per
    query (a dict cannot repeat one, a DataFrame can: both rows are named).
    """
    if isinstance(source, (str, Path)):
        return read(source)
    kind = "rel" if what == "qrels" else "score"
    if hasattr(source, "columns"):  # a pandas DataFrame
        columns = [_column(source, names, what).to_numpy() for names in (_QUERY_COLUMNS, _DOC_COLUMNS, value_columns)]
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
    scores = np.array([docs[d] for d in docnos], dtype=np.float64).astype(np.float32)
    return [docnos[i] for i in np.argsort(-scores, kind="stable")]  # stable: equal scores keep docno descending


def evaluate_run(qrels, run, metrics=DEFAULT_METRICS, relevant_from=1, complete=False) -> EvaluationResult:
    """Evaluate a TREC run against qrels under trec_eval's rules (see the module docstring).

    Parameters
    ----------
    qrels, run : path, dict or DataFrame
    metrics : names (canonical or aliases: "AP", "nDCG@10", "P_10", "recall_100", ...)
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
    from structrank.metrics import kernels  # deferred: numba, loaded on the first evaluation, not on import

    if isinstance(relevant_from, bool) or not isinstance(relevant_from, (int, np.integer)) or relevant_from < 1:
        raise ValueError(f"relevant_from (trec_eval -l) must be an integer >= 1, got {relevant_from!r}: a lower level "
                         "would make every unjudged document relevant")
    names_of = {"qrels": _source_name(qrels, "qrels"), "run": _source_name(run, "run")}
    qrels = _as_dict(qrels, ("relevance", "rel"), read_qrels, "qrels")
    run = _as_dict(run, ("score",), read_run, "run")
    names = [canonical_name(m) for m in metrics]
    parsed = [parse_metric(n) for n in names]
    if any(family == "auc" for family, _ in parsed):
        raise ValueError("auc is not a trec_eval measure of a run (unjudged and missing documents have no pairs)")
    retrieved = sorted(set(qrels) & set(run), key=_qid_key)
    if not retrieved:
        why = (f"no judgement in {names_of['qrels']}" if not qrels else
               f"no retrieved document in {names_of['run']}" if not run else
               f"no query of {names_of['run']} is in {names_of['qrels']} (query ids compare as strings: 1 is not 001)")
        raise DataValidationError(f"nothing to evaluate: {why}")
    queries = sorted(set(qrels) | set(retrieved), key=_qid_key) if complete else retrieved
    rows = [_ranked(run[q]) if q in run else [] for q in queries]
    labels = np.array([qrels[q].get(d, 0) for q, docs in zip(queries, rows) for d in docs], dtype=np.int64)
    # a negative label is a pooled document left unjudged (trec_eval's RELVALUE_UNJUDGED): non-relevant, and
    # skipped by bpref like a document the qrels do not name
    judged = np.array([qrels[q].get(d, -1) >= 0 for q, docs in zip(queries, rows) for d in docs], dtype=np.bool_)
    offsets = np.concatenate([[0], np.cumsum([len(docs) for docs in rows])]).astype(np.int64)
    relevant = (labels >= relevant_from).astype(np.int8)
    judged_labels = [np.array(list(qrels[q].values()), dtype=np.int64) for q in queries]
    n_relevant = np.array([int(np.sum(j >= relevant_from)) for j in judged_labels], dtype=np.int64)
    n_nonrelevant = np.array([int(np.sum((j >= 0) & (j < relevant_from))) for j in judged_labels], dtype=np.int64)
    ideal = [np.sort(np.maximum(j, 0))[::-1].astype(np.float64) for j in judged_labels]
    ideal_offsets = np.concatenate([[0], np.cumsum([i.size for i in ideal])]).astype(np.int64)
    ideal = np.concatenate(ideal) if ideal else np.zeros(0)
    gains = np.maximum(labels, 0).astype(np.float64)
    longest = int(max(np.diff(offsets).max(initial=0), np.diff(ideal_offsets).max(initial=0)))
    discount = get_convention("trec").discounts(longest)
    per_query = {}
    for name, (family, k) in zip(names, parsed):
        if family == "ndcg":
            values = kernels.ndcg_given_kernel(gains, offsets, ideal, ideal_offsets, discount, k)
        elif family == "map":
            values = kernels.ap_given_kernel(relevant, offsets, n_relevant, k)
        elif family == "mrr":
            values = kernels.rr_kernel(relevant, offsets, k, 0.0)
        elif family == "p":
            values = kernels.precision_kernel(relevant, offsets, k, True, 0.0)
        elif family == "recall":
            values = kernels.recall_kernel(relevant, offsets, n_relevant, np.full(n_relevant.size, k), 0.0)
        elif family == "rprec":
            values = kernels.recall_kernel(relevant, offsets, n_relevant, n_relevant, 0.0)
        elif family == "success":
            values = kernels.success_kernel(relevant, offsets, k, 0.0)
        else:  # bpref
            values = kernels.bpref_kernel(relevant, judged, offsets, n_relevant, n_nonrelevant, 0.0)
        per_query[name] = values
    means = {name: float(np.mean(v)) if v.size else float("nan") for name, v in per_query.items()}
    return EvaluationResult(means, per_query, np.array(queries, dtype=object), "trec")


def _source_name(source, what: str) -> str:
    """How messages name an input: its path, else the Python object it is (the run dict, the qrels DataFrame)."""
    if isinstance(source, (str, Path)):
        return str(source)
    return f"the {what} {'DataFrame' if hasattr(source, 'columns') else type(source).__name__}"


def _qid_key(qid: str):
    """trec_eval's query order: numeric qids by value, then any others by string."""
    return (0, int(qid), "") if qid.isascii() and qid.isdigit() else (1, 0, qid)
