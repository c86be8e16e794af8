"""Property-based fuzzing (hypothesis) of the LETOR reader and of evaluate().

- ``read_letor`` on arbitrary bytes, and on "almost LETOR" files (random labels, qids,
  index:value pairs with odd numbers, comments, blank lines, CRLF and CR, unicode, gzip,
  a fuzzed FILE.query beside rows without qid) either returns a RankingDataset or raises a
  StructRankError; any other exception is a bug.
- ``evaluate`` on arbitrary labels, scores and qids (NaN and inf scores, negative and huge
  labels, empty and mismatched arrays, mixed-type qids), every convention and metric names
  valid or malformed either returns values in [0, 1] (NaN means only for no queries at all:
  documented) or raises a ValueError (DataValidationError for arrays) with a message.

Examples are bounded (``max_examples``) so that the file runs in well under a minute; for a
longer run multiply them with ``STRUCTRANK_FUZZ_SCALE=20``. The long coverage-guided run of the
reader is benchmarks/fuzz_letor.py (atheris).
"""

import gzip
import os
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from structrank.data.dataset import RankingDataset
from structrank.data.letor import read_letor
from structrank.errors import StructRankError
from structrank.metrics import CONVENTIONS, evaluate

SCALE = float(os.environ.get("STRUCTRANK_FUZZ_SCALE", "1"))


def bounded(n):
    return settings(max_examples=max(1, int(n * SCALE)), deadline=None, suppress_health_check=[HealthCheck.too_slow])


FUZZ = bounded(300)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


def read_or_refuse(path, **kwargs):
    """read_letor's dataset (checked for consistency), or None when it raised a StructRankError."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # non-contiguous queries are regrouped with a warning
            ds = read_letor(path, **kwargs)
    except StructRankError as exc:
        assert str(exc), "an error without a message"
        return None
    assert isinstance(ds, RankingDataset)
    n = ds.X.shape[0]
    assert n > 0 and ds.y.shape == (n,) and ds.qid.shape == (n,)
    assert np.all(np.isfinite(ds.X.data)) and np.all(ds.y >= 0)
    assert ds.offsets[0] == 0 and ds.offsets[-1] == n and np.all(np.diff(ds.offsets) > 0)
    return ds


# -- almost-LETOR text -------------------------------------------------------------------------

ODD_NUMBERS = ["nan", "NaN", "inf", "-inf", "Infinity", "1e400", "-1e400", "1e-400", "-0", "+1", ".5", "5.", "0x10",
               "1_000", "1e5", "\u0661\u0662", "\u06f3", "9" * 30, "9" * 5000, "", "-", "e", "1e", "٫5", "1,5"]
number = st.one_of(
    st.integers(-5, 5).map(str),
    st.integers(-2**70, 2**70).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(ODD_NUMBERS),
    st.text(max_size=4),
)
label = st.one_of(st.integers(0, 4).map(str), number)
qid_token = st.one_of(
    st.integers(0, 5).map(lambda q: f"qid:{q}"),
    number.map(lambda q: f"qid:{q}"),
    st.sampled_from(["qid:", "qid", "QID:1", "qid:1:2", "qid::", "qidx:3", ":3", "qid:\u0661"]),
)
index = st.one_of(st.integers(1, 12), st.integers(-3, 0), st.integers(-2**70, 2**70), number)
pair = st.one_of(
    st.builds(lambda i, v: f"{i}:{v}", index, number),
    st.builds(lambda i, v: f"{i}:{v}", st.integers(1, 12), st.floats(-1e6, 1e6).map(repr)),
    st.sampled_from([":", "1:", ":1", "1", "1::2", "a:b", "1:2:3"]),
)
comment = st.one_of(
    st.none(),
    st.text(max_size=8).map(lambda d: f"#docid = {d}"),
    st.text(max_size=12).map(lambda t: "#" + t),
    st.sampled_from(["#", "#docid =", "#docid = GX001 inc = 1 prob = 0.5", "# docid=x"]),
)
separator = st.sampled_from([" ", " ", " ", "\t", "  ", "\x0b", "\x0c", "\xa0", "\u3000", "\x00"])


@st.composite
def letor_line(draw):
    tokens = [draw(label)]
    if draw(st.booleans()):
        tokens.append(draw(qid_token))
    if draw(st.booleans()):  # mostly well-formed pairs: increasing indices
        start = draw(st.integers(1, 4))
        tokens += [f"{start + i}:{draw(number)}" for i in range(draw(st.integers(0, 4)))]
    else:
        tokens += draw(st.lists(pair, max_size=5))
    sep = draw(separator)
    text = sep.join(tokens)
    note = draw(comment)
    if note is not None:
        text += draw(st.sampled_from([" ", "", "\t"])) + note
    return text


line = st.one_of(letor_line(), letor_line(), st.sampled_from(["", "   ", "#only a comment", "\t", "\r"]),
                 st.text(max_size=20))


@st.composite
def letor_bytes(draw):
    lines = draw(st.lists(line, max_size=8))
    eol = draw(st.sampled_from(["\n", "\r\n", "\r", "\n\n", ""]))
    text = eol.join(lines) + draw(st.sampled_from(["", "\n", "\r\n"]))
    encoding = draw(st.sampled_from(["utf-8", "utf-8", "utf-8-sig", "utf-16", "latin-1"]))
    raw = text.encode(encoding, errors="replace")
    how = draw(st.sampled_from(["plain", "plain", "plain", "gzip", "gzip-truncated"]))
    if how != "plain":
        raw = gzip.compress(raw, mtime=0)
        if how == "gzip-truncated":
            raw = raw[: draw(st.integers(0, len(raw) - 1))]
    return raw


reader_options = st.fixed_dictionaries(
    {},
    optional={"n_features": st.one_of(st.none(), st.integers(1, 20)), "dtype": st.sampled_from([np.float64, np.float32])},
)


@FUZZ
@given(raw=st.binary(max_size=400), options=reader_options)
@example(raw=b"", options={})
@example(raw=b"\x1f\x8b", options={})
@example(raw=b"\xef\xbb\xbf", options={})
@example(raw=b"0 qid:1 1:0.5\x00 2:1\n", options={})
def test_read_letor_on_arbitrary_bytes(workdir, raw, options):
    path = workdir / "bytes.txt"
    path.write_bytes(raw)
    read_or_refuse(path, **options)


@FUZZ
@given(raw=letor_bytes(), options=reader_options)
@example(raw=b"2 qid:1 1:0.5 2:0.1 #docid = a\r\n0 qid:1 1:0.2 2:0.9 #docid = b\r\n", options={})
@example(raw=b"1e18 qid:1 1:1\n", options={})
@example(raw=b"0\n0 qid:" + b"9" * 5000 + b" 1:1\n", options={})  # past Python's limit of digits for int()
@example(raw=b"1e300 qid:1 1:1\n", options={})
@example(raw=b"0 qid:1 1:1\n0 qid:2 1:1\n0 qid:1 1:1\n", options={})
@example(raw=b"0 qid:1 5:1\n", options={"n_features": 2})
def test_read_letor_on_almost_letor_text(workdir, raw, options):
    path = workdir / "almost.txt"
    path.write_bytes(raw)
    read_or_refuse(path, **options)


@bounded(150)
@given(rows=st.lists(st.tuples(st.integers(0, 3), st.floats(-10, 10)), min_size=1, max_size=6),
       groups=st.one_of(st.text(max_size=30), st.lists(st.integers(-2, 7), max_size=5).map(
           lambda sizes: "\n".join(map(str, sizes)))))
@example(rows=[(1, 0.5), (0, 0.1)], groups="2")
@example(rows=[(1, 0.5), (0, 0.1)], groups="1\n1\n")
@example(rows=[(1, 0.5)], groups="99999999999999999999999")
def test_read_letor_with_a_fuzzed_query_file(workdir, rows, groups):
    data = workdir / "noqid.txt"
    data.write_text("".join(f"{y} 1:{x!r}\n" for y, x in rows))
    (workdir / "noqid.txt.query").write_text(groups)
    ds = read_or_refuse(data)
    if ds is not None:
        assert ds.n_rows == len(rows)


# -- evaluate ------------------------------------------------------------------------------

METRIC_NAMES = ["map", "ap", "mrr", "rr", "ndcg", "auc", "map@1", "mrr@10", "ndcg@1", "ndcg@3", "ndcg@10", "p@1",
                "p@5", "precision@3", "NDCG@5", " map ", "ndcg@\u0661\u0660", "err@3", "ERR", "ndcg_burges@5",
                "nDCG(dcg='exp-log2')@3", "rbp(p=0.5,rel=1)", "RBP(p=0.9)@3", "rbp_residual(p=0.9)@3"]
MALFORMED_NAMES = ["", "p", "precision", "ndcg@0", "ndcg@-1", "ndcg@", "auc@3", "map@1.5", "ndcg@10x", "ndcg@@1",
                   "map\nmrr", "ndcg@99999999999999999999", "err@0", "ndcg@2147483648", "rbp(p=1)", "rbp(p=nan)",
                   "rbp(rel=0)", "infap@3", "judged(p=1)", "nDCG(dcg='exp')@3", "rbp(p=0.5,p=0.6)"]
metric_name = st.one_of(st.sampled_from(METRIC_NAMES), st.sampled_from(MALFORMED_NAMES),
                        st.builds(lambda f, k: f"{f}@{k}", st.sampled_from(["map", "mrr", "ndcg", "p", "auc"]),
                                  st.integers(-3, 2**40)),
                        st.text(max_size=8))
convention = st.one_of(st.sampled_from(sorted(CONVENTIONS)), st.sampled_from(["LETOR4", "letor5", "", "trec "]))

label_values = st.one_of(
    st.lists(st.integers(0, 4), max_size=12),
    st.lists(st.integers(-2, 2**63 - 1), max_size=12),
    st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=12),
    st.lists(st.sampled_from([0.0, 1.0, 2.0, 1e300, 2.0**63, 2.0**62, 0.5]), max_size=12),
    st.lists(st.booleans(), max_size=12),
    st.lists(st.sampled_from(["1", "a", None]), max_size=4),
)
score_values = st.one_of(
    st.lists(st.floats(-10, 10), max_size=12),
    st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=12),
    st.lists(st.sampled_from([0.0, 1e308, -1e308, 5e-324, 1.0]), max_size=12),
    st.lists(st.sampled_from(["1.5", "x"]), max_size=3),
)
qid_values = st.one_of(
    st.lists(st.integers(0, 3), max_size=12),
    st.lists(st.sampled_from(["q1", "q2", ""]), max_size=12),
    st.lists(st.sampled_from([1.0, np.nan, 2.0]), max_size=12),
    st.lists(st.sampled_from([1, "1", 2.5]), max_size=6),
    st.lists(st.sampled_from([1, "1", 2.5, None]), max_size=6).map(lambda v: np.array(v, dtype=object)),
)


def as_array(values, kind):
    if kind == "uint64" and all(isinstance(v, int) and v >= 0 for v in values):
        return np.array(values, dtype=np.uint64)
    if kind == "object":
        return np.array(values, dtype=object)
    return np.array(values)


def call(y, scores, qid, metrics="map", conv="letor4", y_kind="plain", docid_count="aligned", same_length=True):
    if same_length:  # most examples have aligned arrays, so that the metrics are reached
        n = min(len(y), len(scores), len(qid))
        y, scores, qid = y[:n], scores[:n], qid[:n]
    y = as_array(y, y_kind)
    count = len(y) if docid_count == "aligned" else docid_count
    docids = None if count is None else np.array([f"d{i % 3}" for i in range(count)])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # overflow or invalid casts are bugs too
        return evaluate(y, scores, qid, metrics, conv, docids=docids)


@bounded(400)
@given(
    y=label_values,
    scores=score_values,
    qid=qid_values,
    metrics=st.one_of(st.lists(metric_name, max_size=4), metric_name),
    conv=convention,
    y_kind=st.sampled_from(["plain", "uint64", "object"]),
    docid_count=st.one_of(st.just("aligned"), st.none(), st.integers(0, 13)),
    same_length=st.booleans(),
)
@example(y=[], scores=[], qid=[], metrics=["map"], conv="letor4", y_kind="plain", docid_count=None, same_length=True)
@example(y=[2**63 - 1, 0], scores=[1.0, 2.0], qid=[1, 1], metrics=["ndcg"], conv="trec", y_kind="plain",
         docid_count="aligned", same_length=True)
@example(y=[1e300, 0.0], scores=[1.0, 2.0], qid=[1, 1], metrics=["ndcg"], conv="trec", y_kind="plain",
         docid_count="aligned", same_length=True)
@example(y=[1, 0], scores=[1.0, 2.0], qid=[1, "1"], metrics=["map"], conv="letor4", y_kind="plain",
         docid_count=None, same_length=True)
@example(y=[1, 0], scores=[1.0, 2.0], qid=[1, 1], metrics="ndcg@99999999999999999999", conv="letor4",
         y_kind="plain", docid_count=None, same_length=True)
@example(y=[1, 0], scores=[1.0, 2.0], qid=[1, 1], metrics=[5], conv="letor4", y_kind="plain", docid_count=None,
         same_length=True)
@example(y=[2**62, 1, 0], scores=[0.0, 1.0, 2.0], qid=[1, 1, 1], metrics=["ndcg"], conv="trec", y_kind="plain",
         docid_count="aligned", same_length=True)
def test_evaluate_returns_metrics_in_unit_interval_or_raises_value_error(y, scores, qid, metrics, conv, y_kind,
                                                                         docid_count, same_length):
    try:
        result = call(y, scores, qid, metrics, conv, y_kind, docid_count, same_length)
    except ValueError as exc:  # the API's errors: DataValidationError, unknown metric or convention
        assert str(exc), "an error without a message"
        return
    for name, value in result.metrics.items():
        # the graded RBP's gain is the label itself (trectools'), so it lies in [0, the largest label]
        graded_rbp = name.startswith("rbp(") and ",rel=" not in name
        # (the labels evaluate was given: call cuts the lists to one length when same_length)
        given = y[:min(len(y), len(scores), len(qid))] if same_length else y
        top = max(1.0, float(np.max(np.asarray(given, dtype=np.float64)))) if graded_rbp and len(given) else 1.0
        if result.n_queries == 0:
            assert np.isnan(value), (name, value)
        else:
            assert 0.0 <= value <= top, (name, value)
        per_query = result.per_query[name]
        assert per_query.shape == (result.n_queries,)
        assert np.all((per_query >= 0.0) & (per_query <= top)), (name, per_query)


@pytest.mark.parametrize("name", ["ndcg@99999999999999999999", "ndcg@2147483648", "p@0"])
def test_evaluate_refuses_cutoffs_out_of_range(name):
    with pytest.raises(ValueError, match="cut-off"):
        evaluate([1, 0], [1.0, 0.0], [1, 1], [name])


def test_evaluate_takes_one_metric_name_as_a_string():
    assert evaluate([1, 0], [1.0, 0.0], [1, 1], "ndcg@1").metrics == {"ndcg@1": 1.0}


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"metrics": [5]}, "metric name must be a string"),
        ({"qid": np.array([1, "1"], dtype=object)}, "query ids must be all numbers or all strings"),
        ({"scores": ["1", "x"]}, "scores must be real numbers"),
        ({"convention": "trec", "docids": "ab"}, "docids must have one entry per row"),
        ({"y": np.array([2**63, 0], dtype=np.uint64)}, "row 0: label 9223372036854775808 is too large \\(at most "
                                                        "2147483647\\)"),
        ({"y": [1e300, 0.0]}, "row 0: label 1e\\+300 is too large"),
    ],
)
def test_evaluate_names_what_is_wrong(kwargs, message):
    args = {"y": [1, 0], "scores": [1.0, 0.0], "qid": [1, 1], "metrics": ["map"], **kwargs}
    with pytest.raises(ValueError, match=message):
        evaluate(args["y"], args["scores"], args["qid"], args["metrics"], args.get("convention", "letor4"),
                 docids=args.get("docids"))
