"""The Python parser for small files (``data.svmlight_small``) against the numba kernel
(``data.svmlight``): the same arrays for every file, the same line for every refused one."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from structrank.data import svmlight, svmlight_small
from structrank.data.folds import letor_folds, letor_root
from structrank.data.letor import read_bytes
from test_svmlight_parser import svmlight_file

LIMIT = 2**20

# Bytes that make or break tokens: separators, signs, exponents, words, a long index, a bare CR.
PIECES = [b":", b"#", b" ", b"\t", b"\r", b"\n", b"\r\n", b"e", b"E", b"-", b"+", b".", b"_", b"x", b"qid:",
          b"qid:7", b"inf", b"nan", b"\x00", b"\xa0", b"0", b"7", b"1e400", b"99999999999999999999", b"2147483648",
          b"docid = Z", b"\x0b", b"\x0c"]


def outcome(parse, raw):
    """The parser's arrays, or ("error", line) when it refuses the bytes."""
    try:
        return parse(raw, LIMIT)
    except svmlight_small.ParseError as exc:
        return ("error", exc.line, exc.row)


def assert_same(raw):
    small, kernel = outcome(svmlight_small.parse, raw), outcome(svmlight.parse, raw)
    if isinstance(kernel, tuple) or isinstance(small, tuple):
        assert small == kernel, raw
        return
    assert small.keys() == kernel.keys()
    for key, value in kernel.items():
        if isinstance(value, np.ndarray):
            assert small[key].dtype == value.dtype and small[key].shape == value.shape, (key, raw)
            assert np.array_equal(small[key], value, equal_nan=True), (key, raw)
            signs = np.signbit(small[key]) == np.signbit(value) if value.dtype.kind == "f" else True
            assert np.all(signs | np.isnan(value)), (key, raw)  # -0.0 stays -0.0
        else:
            assert small[key] == value, (key, raw)


@settings(max_examples=300, deadline=None)
@given(svmlight_file())
def test_well_formed_files_parse_alike(text):
    assert_same(text.encode())


@st.composite
def damaged(draw):
    """A generated file with a few pieces inserted or bytes deleted at random places."""
    raw = bytearray(draw(svmlight_file()).encode())
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(raw)))
        if draw(st.booleans()) and at < len(raw):
            del raw[at:at + draw(st.integers(1, 3))]
        else:
            raw[at:at] = draw(st.sampled_from(PIECES))
    return bytes(raw)


@settings(max_examples=1000, deadline=None)
@given(damaged())
def test_damaged_files_parse_or_fail_alike(raw):
    assert_same(raw)


@pytest.mark.parametrize("raw", [b"", b"\n\n", b"# only a comment\n", b"1\n", b"1 qid:3\n", b"0 qid:1 1:1e400\n",
                                 b"0 qid:1 1:-0.0 2:+.5e-3 #docid=\n", b"0 qid:1 00000000000000000000001:1\n",
                                 b"0 qid:1 -0:1\n", b"0 qid:1 0:1 1:2\n", b"1 qid:1 1:0.5\r", b"1 qid:1 1:0.5\rx\n",
                                 b"2 qid:1 1:1 # docid docid = D1\n", b"1e0 qid:+5 1:NaN\n", b"1 qid:1 1:1:1\n"])
def test_edge_cases_parse_or_fail_alike(raw):
    assert_same(raw)


def test_letor_files_parse_alike():
    """Every file of Fold1 of MQ2008 and OHSUMED, the size that takes the Python path."""
    roots = [letor_root(name) for name in ("MQ2008", "OHSUMED")]
    if any(root is None for root in roots):
        pytest.skip("the LETOR folder is absent ($STRUCTRANK_DATA or ../shared/data)")
    for root in roots:
        fold = letor_folds(root)[0]
        for path in (fold.train, fold.vali, fold.test):
            raw = read_bytes(path)
            assert_same(raw)
