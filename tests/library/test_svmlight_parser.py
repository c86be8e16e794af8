"""The numba SVMlight/LETOR parser against Python's own number parsing and scikit-learn's reader."""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_svmlight_file

from structrank.data import svmlight
from structrank.data.letor import read_letor
from structrank.errors import DataFormatError

finite = st.floats(allow_nan=False, allow_infinity=False, width=64)


@st.composite
def number_text(draw):
    """A finite float written as files write them: repr, %g/%e/%f at several precisions, odd signs."""
    x = draw(finite)
    style = draw(st.sampled_from(["repr", "g", "e", "f", "plus", "lead0", "trail0", "int"]))
    digits = draw(st.integers(1, 20))
    if style == "repr":
        return repr(x)
    if style == "g":
        return f"{x:.{digits}g}"
    if style == "e":
        return f"{x:.{digits}e}".replace("e", draw(st.sampled_from(["e", "E"])))
    if style == "f":
        return f"{max(min(x, 1e30), -1e30):.{min(digits, 12)}f}"
    if style == "plus":
        return f"+{abs(x):.{digits}g}"
    if style == "lead0":
        return f"000{abs(x):.{digits}g}"
    if style == "trail0":
        return f"{x:.{digits}g}" + ("" if "e" in f"{x:.{digits}g}" or "." not in f"{x:.{digits}g}" else "000")
    return str(draw(st.integers(-10**20, 10**20)))


def parse_one(token: str):
    rows = svmlight.parse(f"{token} qid:1 1:{token}\n".encode(), 2**31 - 1)
    return rows["labels"][0], rows["values"][0]


@settings(max_examples=2000, deadline=None)
@given(number_text())
def test_every_number_is_read_as_python_reads_it(token):
    expected = float(token)
    label, value = parse_one(token)
    assert label == expected and math.copysign(1, label) == math.copysign(1, expected), token
    assert value == expected and math.copysign(1, value) == math.copysign(1, expected), token


@pytest.mark.parametrize("token", ["0.30000000000000004", "1e-320", "4.9e-324", "1.7976931348623157e308", "-0.0",
                                   "9007199254740993", "123456789012345678901234567890", "0.1e-22", "1e23",
                                   "2.2250738585072011e-308", "nan", "inf", "-Infinity", ".5", "5.", "+.5e-3"])
def test_hard_numbers_are_read_as_python_reads_them(token):
    expected = float(token)
    label, value = parse_one(token)
    if math.isnan(expected):
        assert math.isnan(label) and math.isnan(value)
    else:
        assert label == expected and value == expected
        assert math.copysign(1, value) == math.copysign(1, expected)


@st.composite
def svmlight_file(draw):
    """Rows ``label qid:Q i:v ...`` with increasing 1-based indices, random whitespace, comments."""
    lines = []
    with_docids = draw(st.booleans())  # on every row or on none (read_letor refuses a mix)
    for _ in range(draw(st.integers(1, 12))):
        label = draw(st.integers(0, 4))
        qid = draw(st.integers(-(2**63), 2**63 - 1))
        indices = sorted(draw(st.sets(st.integers(1, 40), max_size=8)))
        space = draw(st.sampled_from([" ", "\t", "  ", " \t"]))
        values = [draw(number_text().filter(lambda t: math.isfinite(float(t)))) for _ in indices]
        tokens = [str(label), f"qid:{qid}"] + [f"{i}:{v}" for i, v in zip(indices, values)]
        line = space.join(tokens)
        if with_docids:
            line += f" #docid = D{draw(st.integers(0, 999))} extra=1"
        lines.append(line + draw(st.sampled_from(["", "\r", " "])))
        if draw(st.integers(0, 5)) == 0:
            lines.append(draw(st.sampled_from(["", "   ", "# a comment line"])))
    return "\n".join(lines) + draw(st.sampled_from(["", "\n"]))


@settings(max_examples=300, deadline=None)
@pytest.mark.filterwarnings("ignore:.*not contiguous")
@given(svmlight_file())
def test_files_read_as_scikit_learn_reads_them(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("svm") / "f.txt"
    path.write_text(text)
    X, y, qid = load_svmlight_file(str(path), query_id=True, zero_based=False, n_features=40)
    ds = read_letor(path, n_features=40, sparse=True)
    order = np.argsort(ds.row_order) if ds.row_order is not None else np.arange(ds.n_rows)
    assert np.array_equal(ds.y[order], y.astype(np.int64))
    assert np.array_equal(ds.qid[order], qid)
    assert np.array_equal(ds.X[order].toarray(), X.toarray())  # bit for bit (== on floats, -0.0 == 0.0)


@pytest.mark.parametrize("qid", [-(2**63), 2**63 - 1, 0, -1, 10**18])
def test_qids_cover_int64(qid):
    assert svmlight.parse(f"1 qid:{qid} 1:1\n".encode(), 2**31 - 1)["qids"].tolist() == [qid]


def test_comments_and_docids_come_from_their_spans(tmp_path):
    path = tmp_path / "c.txt"
    path.write_bytes(b"1 qid:1 1:0.5 #docid = GX1 inc = 1\n0 qid:1 1:0.2 #  docid=GX2\t\r\n2 qid:2 1:0.1 # docid = caf\xe9\n")
    ds = read_letor(path)
    # not UTF-8: the byte is held as a surrogate (surrogateescape), distinct from any other and written back as read
    assert ds.docids.tolist() == ["GX1", "GX2", "caf\udce9"]
    assert ds.comments.tolist() == ["docid = GX1 inc = 1", "docid=GX2", "docid = caf\udce9"]


def test_dense_when_mostly_filled_else_csr(tmp_path):
    full, sparse_ = tmp_path / "full.txt", tmp_path / "sparse.txt"
    full.write_text("1 qid:1 1:0.5 2:0.1\n0 qid:1 1:0.2 2:0.3\n")
    sparse_.write_text("1 qid:1 1:0.5\n0 qid:1 9:0.2\n")
    assert isinstance(read_letor(full).X, np.ndarray)
    assert sp.issparse(read_letor(sparse_).X)
    assert sp.issparse(read_letor(full, sparse=True).X)
    assert isinstance(read_letor(sparse_, sparse=False).X, np.ndarray)
    with pytest.raises(ValueError, match="sparse must be"):
        read_letor(full, sparse="yes")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.booleans(), min_size=4, max_size=4), min_size=1, max_size=6), st.sampled_from([4, 6]))
def test_the_dense_matrix_is_scipys_toarray_of_the_parsed_rows(tmp_path_factory, listed, n_features):
    """Dense X is filled without SciPy (``CSRRows.toarray``): it equals SciPy's densified CSR for
    files listing every cell (the values reshaped) and files listing some (filled by index)."""
    path = tmp_path_factory.mktemp("dense") / "f.txt"
    path.write_text("".join(f"{i % 3} qid:1" + "".join(f" {j + 1}:{i + j / 8}" for j in range(4) if row[j]) + "\n"
                            for i, row in enumerate(listed)))
    dense = read_letor(path, n_features=n_features, sparse=False).X
    csr = read_letor(path, n_features=n_features, sparse=True).X
    assert isinstance(dense, np.ndarray) and sp.issparse(csr)
    np.testing.assert_array_equal(dense, csr.toarray())
    assert dense.shape == (len(listed), n_features)


@pytest.mark.parametrize("line, problem", [
    ("1 qid:1 1:0.5 1:0.6", "indices must increase"),
    ("1 qid:1 1:0x10", "not a number"),
    ("1 qid:1 1:\x00", "not a number"),
    ("1 qid:1 2147483648:1", "largest supported index"),
    ("1 1:0.5 qid:1", "right after the label"),
    ("1 qid:1 :0.5", "index:value"),
    ("1 qid:1 a:0.5", "feature index a"),
    ("1 qid:99999999999999999999 1:0.5", "64 bits"),
    ("1 qid:9223372036854775808 1:0.5", "64 bits"),
    ("1 qid:-9223372036854775809 1:0.5", "64 bits"),
])
def test_bad_lines_name_their_line_and_field(tmp_path, line, problem):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"0 qid:1 1:0.1\n\n" + line.encode() + b"\n1 qid:1 1:0.2\n")
    with pytest.raises(DataFormatError, match=problem) as info:
        read_letor(path)
    assert info.value.line == 3
