"""One grammar for every reader (docs/GRAMMAR.md): numbers, integers and line ends mean the same
in LETOR/SVMlight files (the numba kernel and its Python error path), the memory-mapped cache,
scores files, ``.query`` group files and TREC qrels and runs."""

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from structrank.data import grammar, numbers
from structrank.data.cache import build_letor_cache
from structrank.data.letor import read_letor, read_scores
from structrank.errors import DataFormatError
from structrank.metrics.trec import read_qrels, read_run

# Python's float() reads all of these; the grammar reads none of them.
REFUSED_NUMBERS = ["1_5", "0_5", "0x10", "1,5", "\uff11\uff15", "\u0661", "1d5", "1e", ".", "+", "--1", "1e+",
                   "infinit", "0x1p3", "1.5f"]
REFUSED_INTEGERS = ["1_5", "0x10", "\uff11", "1.0", "1e3", "+", ""]


@pytest.mark.parametrize("token", REFUSED_NUMBERS)
def test_numbers_outside_the_grammar_are_refused_in_every_reader(tmp_path, token):
    letor = tmp_path / "d.txt"
    letor.write_bytes(f"1 qid:1 1:0.5\n0 qid:1 1:{token}\n".encode())
    with pytest.raises(DataFormatError, match=r"d.txt, line 2, feature 1: .* is not a number"):
        read_letor(letor)
    label = tmp_path / "l.txt"
    label.write_bytes(f"1 qid:1 1:0.5\n{token} qid:1 1:1\n".encode())
    with pytest.raises(DataFormatError, match=r"l.txt, line 2, label: .* is not a number"):
        read_letor(label)
    with pytest.raises(DataFormatError, match=r"line 2, feature 1: .* is not a number"):
        build_letor_cache(letor, cache_dir=tmp_path / "cache")
    scores = tmp_path / "s.txt"
    scores.write_bytes(f"0.5\n{token}\n".encode())
    with pytest.raises(DataFormatError, match=r"s.txt, line 2, score: .* is not a number"):
        read_scores(scores)
    run = tmp_path / "r.txt"
    run.write_bytes(f"1 Q0 a 1 0.5 t\n1 Q0 b 2 {token} t\n".encode())
    with pytest.raises(DataFormatError, match=r"r.txt, line 2, score: .* is not a number"):
        read_run(run)


@pytest.mark.parametrize("token", REFUSED_INTEGERS)
def test_integers_outside_the_grammar_are_refused_in_every_reader(tmp_path, token):
    if token:  # an empty qid is the token 'qid:', which is not 'index:value'
        letor = tmp_path / "d.txt"
        letor.write_bytes(f"1 qid:1 1:0.5\n0 qid:{token} 1:1\n".encode())
        with pytest.raises(DataFormatError, match=r"d.txt, line 2, qid: .* is not an integer"):
            read_letor(letor)
        index = tmp_path / "i.txt"
        index.write_bytes(f"1 qid:1 1:0.5\n0 qid:1 {token}:1\n".encode())
        with pytest.raises(DataFormatError, match=r"i.txt, line 2, feature index .* is not an integer"):
            read_letor(index)
        qrels = tmp_path / "q.txt"
        qrels.write_bytes(f"1 0 a 1\n1 0 b {token}\n".encode())
        with pytest.raises(DataFormatError, match=r"q.txt, line 2, rel: .* is not an integer"):
            read_qrels(qrels)
    data = tmp_path / "g.txt"
    data.write_text("1 1:0.5\n0 1:0.1\n")
    (tmp_path / "g.txt.query").write_bytes(f"1\n{token or 'x'}\n".encode())
    with pytest.raises(DataFormatError, match=r"g.txt.query, line 2, group size: .* is not an integer"):
        read_letor(data)


@pytest.mark.parametrize("token, value", [("1", 1.0), ("-0.5", -0.5), ("+.5e-3", 0.0005), ("5.", 5.0),
                                          ("1E3", 1000.0), ("0.30000000000000004", 0.30000000000000004)])
def test_numbers_in_the_grammar_read_the_same_everywhere(tmp_path, token, value):
    letor = tmp_path / "d.txt"
    letor.write_bytes(f"1 qid:1 1:{token}\n0 qid:1 1:2\n".encode())
    assert read_letor(letor, sparse=False).X[0, 0] == value
    scores = tmp_path / "s.txt"
    scores.write_bytes(f"{token}\n".encode())
    assert read_scores(scores).tolist() == [value]
    run = tmp_path / "r.txt"
    run.write_bytes(f"1 Q0 a 1 {token} t\n".encode())
    assert read_run(run) == {"1": {"a": value}}


@pytest.mark.parametrize("token", ["nan", "-inf", "Infinity", "+NaN"])
def test_non_finite_numbers_are_read_and_then_refused(tmp_path, token):
    scores = tmp_path / "s.txt"
    scores.write_bytes(f"0.5\n{token}\n".encode())
    with pytest.raises(DataFormatError, match=r"s.txt, line 2, score: score .* is not finite"):
        read_scores(scores)
    letor = tmp_path / "d.txt"
    letor.write_bytes(f"1 qid:1 1:0.5\n0 qid:1 1:{token}\n".encode())
    with pytest.raises(DataFormatError, match=r"d.txt, line 2, feature 1: .* not finite"):
        read_letor(letor)


BARE_CR_FILES = {
    "old Mac line ends": b"2 qid:1 1:0.5 #docid = a\r0 qid:1 1:0.2 #docid = b\r1 qid:2 1:0.3 #docid = c\r",
    "a stray CR swallowing a row": b"2 qid:1 1:0.5 #docid = a\n0 qid:1 1:0.2 #docid = b\r1 qid:2 1:0.3\n",
    "a CR in a comment line": b"2 qid:1 1:0.5\n# note\rmore\n0 qid:1 1:0.2\n",
}


@pytest.mark.parametrize("name", sorted(BARE_CR_FILES))
def test_a_bare_cr_is_refused_naming_its_line_never_merged(tmp_path, name):
    raw = BARE_CR_FILES[name]
    line = raw.count(b"\n", 0, re.search(rb"\r(?!\n|\Z)", raw).start()) + 1
    path = tmp_path / "cr.txt"
    path.write_bytes(raw)
    expected = rf"cr.txt, line {line}, line end: a bare carriage return"
    with pytest.raises(DataFormatError, match=expected):
        read_letor(path)
    with pytest.raises(DataFormatError, match=expected):
        build_letor_cache(path, cache_dir=tmp_path / "cache")


def test_bare_cr_is_refused_by_scores_query_and_trec_readers(tmp_path):
    scores = tmp_path / "s.txt"
    scores.write_bytes(b"0.5\n0.1\r0.2\n")
    with pytest.raises(DataFormatError, match=r"s.txt, line 2, line end: a bare carriage return"):
        read_scores(scores, n_rows=3)
    data = tmp_path / "g.txt"
    data.write_text("1 1:0.5\n0 1:0.1\n")
    (tmp_path / "g.txt.query").write_bytes(b"1\r1\r")
    with pytest.raises(DataFormatError, match=r"g.txt.query, line 1, line end"):
        read_letor(data)
    run = tmp_path / "r.txt"
    run.write_bytes(b"1 Q0 a 1 0.5 t\r1 Q0 b 2 0.4 t\r\n")
    with pytest.raises(DataFormatError, match=r"r.txt, line 1, line end"):
        read_run(run)
    qrels = tmp_path / "q.txt"
    qrels.write_bytes(b"1 0 a 1\n1 0 b 0\r")  # a CR ending the file is a line end
    assert read_qrels(qrels) == {"1": {"a": 1, "b": 0}}


def test_crlf_reads_as_lf_in_every_reader(tmp_path):
    (tmp_path / "d.txt").write_bytes(b"1 1:0.5\r\n0 1:0.1\r\n")
    (tmp_path / "d.txt.query").write_bytes(b"2\r\n")
    assert read_letor(tmp_path / "d.txt").n_queries == 1
    (tmp_path / "s.txt").write_bytes(b"0.5\r\n0.25\r\n")
    assert read_scores(tmp_path / "s.txt", n_rows=2).tolist() == [0.5, 0.25]
    (tmp_path / "r.txt").write_bytes(b"1 Q0 a 1 0.5 t\r\n")
    assert read_run(tmp_path / "r.txt") == {"1": {"a": 0.5}}


def test_trec_fields_split_at_ascii_white_space_only(tmp_path):
    run = tmp_path / "r.txt"
    run.write_bytes("1 Q0 a\u00a0b 1 0.5 t\n".encode())  # a no-break space is part of the docno
    assert read_run(run) == {"1": {"a\u00a0b": 0.5}}


def test_scores_count_must_match_the_rows_naming_both(tmp_path):
    scores = tmp_path / "s.txt"
    scores.write_text("0.5\n0.1\n")
    with pytest.raises(DataFormatError, match=r"has 2 scores but d.txt has 3 rows"):
        read_scores(scores, n_rows=3, data_path="d.txt")


def _kernel_accepts(token: bytes) -> bool:
    buf = np.frombuffer(token, dtype=np.uint8)
    return bool(numbers.is_number(buf, 0, buf.size, numbers.WORDS))


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet="0123456789+-.eEinfatyINF_x, ", max_size=10))
def test_the_numba_kernel_and_grammar_NUMBER_agree(text):
    token = text.encode()
    assert _kernel_accepts(token) == (grammar.NUMBER.fullmatch(token) is not None), token


@pytest.mark.parametrize("token", ["1", "-0.5", "1e5", ".5", "5.", "inf", "INFINITY", "-nan", "+Inf"] + REFUSED_NUMBERS)
def test_the_numba_kernel_and_grammar_NUMBER_agree_on_the_documented_cases(token):
    raw = token.encode()
    assert _kernel_accepts(raw) == (grammar.NUMBER.fullmatch(raw) is not None)
