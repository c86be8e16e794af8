"""The TREC path's fast lane equals its strict one (issue 38.7).

``structrank.metrics.trec`` reads files and dicts through arrays and numba kernels, and hands anything
it cannot prove regular to the strict line-by-line reader. These tests generate inputs full of the
irregular (numbers the grammar refuses or reads unlike Python's float, white space of every kind,
bare CRs, repeated documents, lone surrogates, booleans, NaN) and check that what comes out is what
the strict path alone gives: the same dicts, in the same order, to the bit; the same measures; or
the same error, word for word.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from structrank.errors import StructRankError
from structrank.files import read_bytes
from structrank.metrics import trec
from structrank.metrics.trec import evaluate_run, read_qrels, read_run

MEASURES = ["map", "ndcg", "ndcg@10", "p@5", "recall@10", "mrr", "rprec", "success@1", "bpref", "map@5"]

QIDS = ["1", "2", "10", "01", "q1", "\u00e9", "7"]
DOCNOS = ["a", "b", "A", "ab", "a\u00a0b", "\u00e9", "\u00e9t\u00e9", "d\x00", "d", "dd", "z" * 12, "\U0001f600"]
SCORES = ["1", "0.5", "-0", "0", "+.5", "5.", "1E3", "1e-3", "0.30000000000000004", "1.00000001", "16777216",
          "16777217", "-3e-9", "-3.00000001e-9", "123456789012345678901", "1e400", "1e-400", "nan", "-inf",
          "Infinity", "1_0", "0x10", "1e", ".", "+", "1,5", "\uff11", "2.5f"]
RELS = ["0", "1", "2", "-1", "+2", "-0", "007", "99999999999999999999", "1.5", "x", "1e1"]
SPACES = [" ", " ", " ", "\t", "  ", "\x0b", "\x0c", " \r"]
ENDS = ["\n", "\n", "\n", "\r\n", "\r", ""]


def _line(draw, fields):
    sep = draw(st.sampled_from(SPACES))
    lead = draw(st.sampled_from(["", "", " ", "\t"]))
    return lead + sep.join(fields) + draw(st.sampled_from(ENDS))


@st.composite
def trec_files(draw):
    """(qrels text, run text): mostly regular lines, some of them not."""
    n_queries = draw(st.integers(1, 3))
    qids = draw(st.lists(st.sampled_from(QIDS), min_size=n_queries, max_size=n_queries))
    run, qrels = [], []
    for _ in range(draw(st.integers(0, 14))):
        kind = draw(st.integers(0, 19))
        fields = [draw(st.sampled_from(qids)), "Q0", draw(st.sampled_from(DOCNOS)), str(draw(st.integers(1, 9))),
                  draw(st.sampled_from(SCORES[:13] if kind else SCORES)), "tag"]
        if kind == 1:
            fields = fields[:draw(st.integers(1, 5))] or fields  # a field short
        elif kind == 2:
            fields.append("extra")
        run.append(_line(draw, fields))
        if draw(st.integers(0, 9)) == 0:
            run.append(draw(st.sampled_from(["\n", "  \n", "\t\r\n"])))  # blank lines
    for _ in range(draw(st.integers(0, 10))):
        kind = draw(st.integers(0, 19))
        fields = [draw(st.sampled_from(qids)), "0", draw(st.sampled_from(DOCNOS)),
                  draw(st.sampled_from(RELS[:7] if kind else RELS))]
        if kind == 1:
            fields = fields[:3]
        qrels.append(_line(draw, fields))
    return "".join(qrels), "".join(run)


def _strict(monkeypatch):
    """Turn the fast lane off: every input goes through the strict readers and the per-query ranking."""
    monkeypatch.setattr(trec, "_file_entries", lambda raw, what: None)
    monkeypatch.setattr(trec, "_dict_entries", lambda source, what: None)


def _outcome(fn, *args, **kwargs):
    """What a call gives: its value, or its error's type and words."""
    try:
        return "value", fn(*args, **kwargs)
    except (StructRankError, ValueError, OverflowError, TypeError) as exc:
        return "error", (type(exc).__name__, str(exc))


def _same_dicts(a, b):
    """Equal dicts in the same order, values of the same type and bits (repr tells -0.0 from 0.0)."""
    assert repr(a) == repr(b)
    assert [(q, list(d)) for q, d in a.items()] == [(q, list(d)) for q, d in b.items()]


def _same_results(a, b):
    assert a[0] == b[0], (a, b)
    if a[0] == "error":
        assert a[1] == b[1]
        return
    fast, strict = a[1], b[1]
    assert list(fast.qids) == list(strict.qids)
    assert fast.metrics.keys() == strict.metrics.keys()
    for name in fast.per_query:
        assert np.array_equal(fast.per_query[name], strict.per_query[name]), name  # the same bits
        assert fast.metrics[name] == strict.metrics[name] or (np.isnan(fast.metrics[name]) and
                                                              np.isnan(strict.metrics[name]))


@settings(max_examples=300, deadline=None)
@given(trec_files())
def test_files_read_as_the_strict_reader_reads_them(tmp_path_factory, files):
    folder = tmp_path_factory.mktemp("files")
    for name, text in zip(("q", "r"), files):
        (folder / name).write_bytes(text.encode("utf-8"))
    readers = ((folder / "q", read_qrels, trec._strict_qrels), (folder / "r", read_run, trec._strict_run))
    for path, read, strict in readers:
        fast = _outcome(read, path)
        reference = _outcome(strict, path, read_bytes(path))
        assert fast[0] == reference[0], (fast, reference)
        if fast[0] == "value":
            _same_dicts(fast[1], reference[1])
        else:
            assert fast[1] == reference[1]


@settings(max_examples=200, deadline=None)
@given(trec_files(), st.integers(1, 2), st.booleans())
def test_files_evaluate_as_the_strict_path_evaluates_them(tmp_path_factory, files, relevant_from, complete):
    folder = tmp_path_factory.mktemp("files")
    for name, text in zip(("q", "r"), files):
        (folder / name).write_bytes(text.encode("utf-8"))
    args = (folder / "q", folder / "r", MEASURES)
    fast = _outcome(evaluate_run, *args, relevant_from=relevant_from, complete=complete)
    with pytest.MonkeyPatch.context() as monkeypatch:
        _strict(monkeypatch)
        strict = _outcome(evaluate_run, *args, relevant_from=relevant_from, complete=complete)
    _same_results(fast, strict)


KEYS = st.one_of(st.sampled_from(QIDS + DOCNOS + ["", "a b", "a\tb", "a\nb", "\x1c", "\u2003", "\ud800", "x\x85"]),
                 st.integers(-3, 12), st.sampled_from([1.0, 2.0, 1.5, float("nan"), True, None, np.int64(3),
                                                       np.float64(4.0), np.str_("n")]))
VALUES = st.one_of(st.integers(-2, 3), st.sampled_from([0.5, 1.00000001, 16777217.0, -0.0, 2.0, float("nan"),
                                                       float("inf"), True, None, "1", np.float32(0.1), np.int64(2),
                                                       np.float64(1.5), np.uint64(3), 10**30, 2.0**60]))


def _dicts(keys, values, size):
    inner = st.dictionaries(keys, values, max_size=size)
    return st.dictionaries(keys, st.one_of(inner, inner, inner, st.just([("a", 1)])), max_size=3)


@settings(max_examples=300, deadline=None)
@given(_dicts(KEYS, VALUES, 6), _dicts(KEYS, VALUES, 8), st.integers(1, 2), st.booleans())
def test_dicts_evaluate_as_the_strict_path_evaluates_them(qrels, run, relevant_from, complete):
    fast = _outcome(evaluate_run, qrels, run, MEASURES, relevant_from=relevant_from, complete=complete)
    with pytest.MonkeyPatch.context() as monkeypatch:
        _strict(monkeypatch)
        strict = _outcome(evaluate_run, qrels, run, MEASURES, relevant_from=relevant_from, complete=complete)
    _same_results(fast, strict)


GOOD_QIDS = st.sampled_from(QIDS + [3, np.int64(4), 10])
GOOD_DOCNOS = st.sampled_from(DOCNOS[:4] + DOCNOS[5:])
#: scores that tie only in single precision, as trec_eval holds them
TIED = st.sampled_from([0.5, 1.0, 1.00000001, 1.0000001, 16777216.0, 16777217.0, np.float32(0.5), 2])


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(GOOD_QIDS, st.dictionaries(GOOD_DOCNOS, st.tuples(TIED, st.integers(-1, 2)), min_size=1),
                       min_size=1, max_size=3), st.integers(0, 3), st.booleans())
def test_regular_dicts_evaluate_as_the_strict_path_evaluates_them(queries, unjudged, complete):
    """The fast lane's own cases: ties in single precision broken by docno, qids as integers and strings."""
    run = {q: {d: score for d, (score, _) in docs.items()} for q, docs in queries.items()}
    qrels = {q: {d: label for i, (d, (_, label)) in enumerate(docs.items()) if i >= unjudged}
             for q, docs in queries.items()}
    fast = _outcome(evaluate_run, qrels, run, MEASURES, complete=complete)
    with pytest.MonkeyPatch.context() as monkeypatch:
        _strict(monkeypatch)
        strict = _outcome(evaluate_run, qrels, run, MEASURES, complete=complete)
    _same_results(fast, strict)


def test_the_fast_lane_takes_regular_files_and_dicts():
    """What a fast lane is for: CRLF, tabs, numbers past the exact fast path, NumPy values, non-ASCII."""
    run = "1 Q0 a 1 0.30000000000000004 t\r\n1\tQ0\t\u00e9 2 -1e-3 t\n\n2 Q0 b 1 +.5 t"
    entries = trec._file_entries(run.encode(), "run")
    assert entries is not None and entries.qids == ["1", "2"]
    assert entries.as_dict() == {"1": {"a": 0.30000000000000004, "\u00e9": -0.001}, "2": {"b": 0.5}}
    assert trec._file_entries(b"1 0 a -1\n1 0 b +2\n", "qrels").values.tolist() == [-1, 2]
    assert trec._dict_entries({1: {"a": np.float64(0.5), "b": 2}, "2": {"c": np.float32(1.5)}}, "run") is not None
    assert trec._dict_entries({"1": {"a": 1, "b": 2.0}}, "qrels").values.tolist() == [1, 2]


@pytest.mark.parametrize("raw", [b"1 Q0 a 1 0.5 t\r1 Q0 b 2 0.4 t\n", b"1 Q0 a 1 0x1 t\n", b"1 Q0 a 1 nan t\n",
                                 b"1 Q0 a 1 1e999 t\n", b"1 Q0 a 1 0.5\n", b"1 Q0 \xff 1 0.5 t\n"])
def test_the_fast_lane_leaves_the_irregular_to_the_strict_reader(raw):
    assert trec._file_entries(raw, "run") is None


@pytest.mark.parametrize("run", [{"1": {"a b": 1.0}}, {"1": {"": 1.0}}, {"1": {"a": True}}, {"1": {"\ud800": 1.0}},
                                 {"1": {"a": float("nan")}}, {"1": {"a\u2003": 1.0}}, {"1": {1: 1.0}}])
def test_the_fast_lane_leaves_irregular_dicts_to_the_strict_path(run):
    assert trec._dict_entries(run, "run") is None


def test_a_document_twice_across_equal_qids_of_a_dict_is_named_by_the_strict_path():
    with pytest.raises(StructRankError, match=r"document 'a' of query 1 is retrieved twice"):
        evaluate_run({"1": {"a": 1}}, {1: {"a": 1.0}, "1": {"a": 2.0}}, ["map"])
