"""A corpus of bad input files for every structrank reader, kept as data.

structrank reads files users download from many places, so every reader must survive files
that are cut short, in another encoding, empty, a folder, or full of odd values. Each ``Case``
here writes one such file (made by this code, never copied from the data folder), names the
reader it targets and says what is correct:

- ``LOADS``: the input is valid though unusual (CRLF line ends, a byte-order mark, blank lines,
  duplicated rows, conflicting labels for identical vectors, a single or a giant query ...); it
  must load, and the case's ``check`` says it loaded *right*, not just without an exception;
- ``ERROR``: the input is invalid; the reader must raise structrank's own error
  (``StructRankError``, in practice ``DataFormatError``) whose message names the file, the line
  when the problem has one, and the problem (``words``).

Anything else is a failure: a traceback from numpy, sklearn, expat or zipfile ("CRASH"), garbage
loaded silently (a failed ``check``), or an error that does not say where or what.

``run_corpus(folder)`` writes every case into ``folder`` and runs it. It is used by
``tests/library/test_bad_inputs.py`` (one test per case) and ``tests/reliability_corpus.py`` (the
table of docs/RELIABILITY.md).
"""

from __future__ import annotations

import functools
import gzip
import io
import tempfile
import warnings
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from structrank.data.cache import open_letor_cache
from structrank.data.letor import MAX_FEATURE_INDEX, read_letor, read_scores
from structrank.errors import StructRankError
from structrank.learners import LinearRegressionRanker
from structrank.model_io import load_model, save_model
from structrank_lab.nlp.conllu import read_conllu
from structrank.qa.featurize import featurize_file
from structrank.qa.readers import TRAIN_ALL_FILES, read_jacana, read_qa_tsv, read_trec_train_all, read_wikiqa
from structrank.qa.semeval import read_semeval
from arrays import dense

LOADS = "loads"
ERROR = "error"


# -- the data structures -------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One bad input and what a reader must do with it.

    ``write(folder) -> Path`` writes the input into ``folder`` and returns what to hand the
    reader (a file, or a folder for the readers of several files). For ``LOADS``,
    ``check(value)`` asserts the loaded value is right and ``warns`` is a word a warning must
    contain. For ``ERROR``, the message must contain ``file`` (default: the name of the written
    path), ``line N`` when ``line`` is given, and every one of ``words`` (case-insensitive).
    ``options`` are keyword arguments for the reader; ``why`` documents the decision.
    """

    reader: str
    name: str
    write: Callable
    expect: str
    why: str
    check: Callable | None = None
    warns: str | None = None
    line: int | None = None
    words: tuple = ()
    file: str | None = None
    options: dict = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.reader}/{self.name}"

    def expectation(self) -> str:
        """The expectation in a few words, for reports."""
        if self.expect == LOADS:
            return LOADS
        where = f"line {self.line}" if self.line is not None else "no line"
        return f"error ({where}; {', '.join(self.words)})" if self.words else f"error ({where})"


@dataclass
class Result:
    """What a reader did with a case: ``outcome`` is "loaded", "error: <first line of the
    message>" or "CRASH: <exception type>"; ``detail`` says why a case did not match."""

    reader: str
    case: str
    expected: str
    outcome: str
    matched: bool
    detail: str = ""


def loads(reader, name, write, check, why, warns=None, **options) -> Case:
    return Case(reader, name, write, LOADS, why, check=check, warns=warns, options=options)


def error(reader, name, write, why, line=None, words=(), file=None, **options) -> Case:
    return Case(reader, name, write, ERROR, why, line=line, words=tuple(words), file=file, options=options)


# -- writing files -------------------------------------------------------------------------------


def _as_bytes(content, encoding="utf-8") -> bytes:
    """``content`` as bytes: a callable is called first (big contents are made at write time)."""
    if callable(content):
        content = content()
    return content.encode(encoding) if isinstance(content, str) else content


def file(name, content, encoding="utf-8") -> Callable:
    """A writer of one file ``name`` holding ``content`` (str encoded with ``encoding``, or bytes)."""
    def write(folder: Path) -> Path:
        path = folder / name
        path.write_bytes(_as_bytes(content, encoding))
        return path
    return write


def gz(name, content, cut=False) -> Callable:
    """A writer of a gzip file; ``cut`` keeps only the first half of the compressed bytes."""
    def write(folder: Path) -> Path:
        data = gzip.compress(_as_bytes(content), mtime=0)
        path = folder / name
        path.write_bytes(data[: len(data) // 2] if cut else data)
        return path
    return write


def folder_named(name) -> Callable:
    """A writer of an empty folder where the reader expects a file."""
    def write(folder: Path) -> Path:
        path = folder / name
        path.mkdir(exist_ok=True)
        return path
    return write


def nothing(name) -> Callable:
    """A "writer" of no file at all: the path does not exist."""
    def write(folder: Path) -> Path:
        path = folder / name
        if path.is_file():
            path.unlink()
        return path
    return write


def files(main, others) -> Callable:
    """A writer of several files: ``main`` and the writers ``others`` (a data file and its
    companions); returns the path written by ``main``."""
    def write(folder: Path) -> Path:
        for other in others:
            other(folder)
        return main(folder)
    return write


def subfolder(name, writers) -> Callable:
    """A writer of a folder ``name`` filled by ``writers``; returns the folder."""
    def write(folder: Path) -> Path:
        path = folder / name
        path.mkdir(exist_ok=True)
        for path_writer in writers:
            path_writer(path)
        return path
    return write


def cut_after(text: str, marker: str, occurrence: int = 1) -> str:
    """``text`` up to and including the ``occurrence``-th ``marker``: a file cut short there."""
    position = -1
    for _ in range(occurrence):
        position = text.index(marker, position + 1)
    return text[: position + len(marker)]


def replace_line(text: str, number: int, line: str) -> str:
    """``text`` with its line ``number`` (1-based) replaced by ``line``."""
    lines = text.split("\n")
    lines[number - 1] = line
    return "\n".join(lines)


def crlf(text: str) -> str:
    return text.replace("\n", "\r\n")


BOM = "\ufeff"


# -- LETOR / SVMlight ----------------------------------------------------------------------------

LETOR = (
    "2 qid:1 1:0.5 2:0.1 #docid = d1\n"
    "0 qid:1 1:0.2 2:0.9 #docid = d2\n"
    "1 qid:2 1:0.3 2:0.4 #docid = d3\n"
    "0 qid:2 1:0.1 2:0.2 #docid = d4\n"
)
LETOR_X = [[0.5, 0.1], [0.2, 0.9], [0.3, 0.4], [0.1, 0.2]]
LETOR_NO_QID = "".join(line.replace(f" qid:{q}", "") + "\n" for line, q in zip(LETOR.splitlines(), (1, 1, 2, 2)))
GIANT_ROWS = 100_000


def giant_letor() -> str:
    return "".join(f"{i % 3} qid:1 1:{i % 7} 2:0.5\n" for i in range(GIANT_ROWS))


def check_letor(ds, docids=True):
    """The four rows of ``LETOR``, whatever their line ends or blank lines."""
    assert ds.y.tolist() == [2, 0, 1, 0], ds.y
    assert ds.qid.tolist() == [1, 1, 2, 2], ds.qid
    assert np.allclose(dense(ds.X), LETOR_X), dense(ds.X)
    if docids:
        assert ds.docids.tolist() == ["d1", "d2", "d3", "d4"], ds.docids


def check_letor_no_docids(ds):
    check_letor(ds, docids=False)


def check_duplicates(ds):
    assert ds.n_rows == 5 and ds.n_queries == 2
    assert ds.docids.tolist() == ["d1", "d2", "d2", "d3", "d4"]
    assert np.allclose(dense(ds.X)[1], dense(ds.X)[2])


def check_conflict(ds):
    X = dense(ds.X)
    assert np.allclose(X[0], X[1]) and ds.y.tolist()[:2] == [2, 0]


def check_single_query(ds):
    assert ds.n_queries == 1 and ds.n_rows == 2


def check_giant(ds):
    assert ds.n_rows == GIANT_ROWS and ds.n_queries == 1
    assert ds.y[:4].tolist() == [0, 1, 2, 0]


def check_latin1_docids(ds):
    # the bytes that are not UTF-8 are held as surrogates (surrogateescape): distinct, and written back as read
    assert [d.encode("utf-8", "surrogateescape") for d in ds.docids] == [b"caf\xe9", b"caf\xe8"], ds.docids


def check_empty_row(ds):
    assert ds.n_rows == 2 and not dense(ds.X)[1].any()


def check_scattered(ds):
    assert ds.qid.tolist() == [1, 1, 2] and ds.docids.tolist() == ["d1", "d3", "d2"]
    assert ds.row_order.tolist() == [0, 2, 1]


def check_huge_value(ds):
    assert ds.X[2, 0] == 1e300, ds.X[2, 0]


def check_widest(ds):
    assert ds.X.shape == (1, MAX_FEATURE_INDEX) and ds.X[0, MAX_FEATURE_INDEX - 1] == 1.0


def check_cut_at_token(ds):
    assert ds.n_rows == 2 and dense(ds.X)[1].tolist() == [0.2, 0.0]


def letor_cases(reader, cache=False) -> list:
    """Cases for ``read_letor`` (``cache=False``) or the chunked cache (``cache=True``).

    The two readers must agree on every file; only their checks differ (the cache keeps no
    docids and needs each query's rows on consecutive lines).
    """
    def ok(check):
        """A check of a dataset; the cache's through ``to_dataset``, which has no docids."""
        if not cache:
            return check
        check = check_letor_no_docids if check is check_letor else check
        return lambda cache_: check(cache_.to_dataset())

    # The cache and read_letor share one parser (structrank.data.svmlight), so they report alike.
    cut_qid_words = ["index:value"]
    garbage_words = ["not a number"]
    no_comments = "2 qid:1 1:0.5 2:0.1\n0 qid:1 1:0.2 2:0.9\n"
    cases = [
        loads(reader, "crlf", file("crlf.txt", crlf(LETOR)), ok(check_letor),
              "Windows line ends are valid: '\\r' must not stick to the last value or the docid."),
        loads(reader, "utf8_bom", file("bom.txt", BOM + LETOR), ok(check_letor),
              "A UTF-8 byte-order mark (Notepad) is not part of the first label."),
        loads(reader, "blank_lines", file("blank.txt", "\n" + LETOR.replace("\n", "\n  \n# a comment line\n\n", 2)),
              ok(check_letor), "Blank, white-space-only and comment-only lines are skipped."),
        loads(reader, "gzip", gz("ok.txt.gz", LETOR), ok(check_letor), "Gzip is found by its magic number."),
        loads(reader, "single_query", file("single.txt", "".join(LETOR.splitlines(True)[:2])), ok(check_single_query),
              "One query is a data set."),
        loads(reader, "giant_query", file("giant.txt", giant_letor), ok(check_giant),
              f"A query of {GIANT_ROWS:,} documents is large, not wrong."),
        loads(reader, "widest_index", file("widest.txt", f"1 qid:1 {MAX_FEATURE_INDEX}:1\n"), ok(check_widest),
              "The largest supported feature index loads as a sparse column, nothing dense is allocated."),
        error(reader, "truncated_gzip", gz("cut.txt.gz", LETOR, cut=True), "A cut download must not load half a file.",
              words=["gzip"]),
        error(reader, "truncated_mid_token", file("cut_token.txt", cut_after(LETOR, "0 qid:2 1:")),
              "The last line was cut inside 'index:value'.", line=4, words=["index:value"]),
        error(reader, "truncated_mid_qid", file("cut_qid.txt", cut_after(LETOR, "0 q", 2)),
              "The last line was cut inside 'qid:'.", line=4, words=cut_qid_words),
        error(reader, "utf16_bom", file("utf16.txt", LETOR, "utf-16"),
              "UTF-16 (Windows 'Unicode text') is not read as bytes of garbage labels.", words=["UTF-16"]),
        error(reader, "latin1_nbsp_separator", file("latin1.txt", replace_line(LETOR, 2, "0 qid:1 1:0.2\xa02:0.9"), "latin-1"),
              "A Latin-1 no-break space is not white space: the value '0.2\\xa02:0.9' is not a number.",
              line=2, words=["not a number"]),
        error(reader, "nan_value", file("nan.txt", replace_line(LETOR, 3, "1 qid:2 1:nan 2:0.4")),
              "NaN features poison every learner.", line=3, words=["not finite", "feature 1"]),
        error(reader, "inf_value", file("inf.txt", replace_line(LETOR, 2, "0 qid:1 1:0.2 2:-inf")),
              "Infinite features poison every learner.", line=2, words=["not finite", "feature 2"]),
        error(reader, "nan_label", file("nan_label.txt", replace_line(LETOR, 2, "nan qid:1 1:0.2 2:0.9")),
              "Labels are relevance grades.", line=2, words=["label"]),
        error(reader, "negative_label", file("neg_label.txt", replace_line(LETOR, 3, "-1 qid:2 1:0.3 2:0.4")),
              "Relevance grades are non-negative.", line=3, words=["label", "-1"]),
        error(reader, "fractional_label", file("frac_label.txt", replace_line(LETOR, 4, "0.5 qid:2 1:0.1 2:0.2")),
              "Relevance grades are integers (gains 2**label - 1 need it).", line=4, words=["label", "0.5"]),
        error(reader, "huge_label", file("huge_label.txt", replace_line(LETOR, 1, "1e20 qid:1 1:0.5 2:0.1")),
              "A label beyond int32 would wrap around when cast to integers.", line=1, words=["label", "too large"]),
        error(reader, "feature_index_1e12", file("index_1e12.txt", replace_line(LETOR, 2, "0 qid:1 1:0.2 1000000000000:0.9")),
              "An index of 10**12 is a corrupt line; it must not become 10**12 columns.",
              line=2, words=["1000000000000"]),
        error(reader, "feature_index_beyond_int32", file("index_2e31.txt", replace_line(LETOR, 3, "1 qid:2 2147483648:1")),
              "One past the largest supported index (int32).", line=3, words=["2147483648"]),
        error(reader, "feature_index_beyond_int64", file("index_1e30.txt", replace_line(LETOR, 4, f"0 qid:2 {10**30}:1")),
              "An index no integer type holds.", line=4, words=[str(10**30)]),
        error(reader, "feature_index_above_n_features", file("wide.txt", replace_line(LETOR, 3, "1 qid:2 1:0.3 5:0.4")),
              "Train and test files must agree on n_features; a wider row must say where it is.",
              line=3, words=["feature index 5", "n_features=3"], n_features=3),
        error(reader, "feature_index_zero", file("index0.txt", replace_line(LETOR, 2, "0 qid:1 0:0.2 2:0.9")),
              "LETOR indices are 1-based: read with zero_based=False (and by the cache, which is 1-based), an "
              "index 0 is refused; read_letor's default makes such a file zero-based, scikit-learn's rule.",
              line=2, words=["< 1"], **({} if cache else {"zero_based": False})),
        error(reader, "feature_index_negative", file("index_neg.txt", replace_line(LETOR, 2, "0 qid:1 -1:0.2 2:0.9")),
              "No SVMlight file has a negative index.", line=2, words=["feature index -1 <"]),
        error(reader, "decreasing_indices", file("decreasing.txt", replace_line(LETOR, 3, "1 qid:2 2:0.4 1:0.3")),
              "Unsorted indices are an SVMlight error.", line=3, words=["increase"]),
        error(reader, "duplicate_index", file("dup_index.txt", replace_line(LETOR, 4, "0 qid:2 1:0.1 1:0.2")),
              "A feature given twice has no single value.", line=4, words=["increase"]),
        error(reader, "qid_not_second", file("qid_late.txt", replace_line(LETOR, 2, "0 1:0.2 qid:1 2:0.9")),
              "SVMlight puts the qid right after the label.", line=2, words=["right after the label"]),
        error(reader, "missing_label", file("no_label.txt", replace_line(LETOR, 4, "qid:2 1:0.1 2:0.2")),
              "A row must start with its label.", line=4, words=["label"]),
        error(reader, "value_without_index", file("no_colon.txt", replace_line(LETOR, 3, "1 qid:2 0.3 2:0.4")),
              "Dense rows without 'index:' are not SVMlight.", line=3, words=["index:value"]),
        error(reader, "binary_garbage", file("garbage.bin", bytes(range(256)) * 4),
              "A binary file given by mistake.", line=1, words=garbage_words),
        error(reader, "empty_file", file("empty.txt", ""), "An empty file is a failed download.", words=["empty"]),
        error(reader, "comments_only", file("comments.txt", "# nothing but a comment\n\n"),
              "No data rows at all.", words=["empty"]),
        error(reader, "directory", folder_named("folder.txt"), "A folder given for a file.", words=["folder"]),
        error(reader, "missing_file", nothing("absent.txt"), "A wrong path.", words=["not found"]),
    ]
    if cache:
        cases += [
            error(reader, "value_beyond_float32", file("float32.txt", replace_line(LETOR, 3, "1 qid:2 1:1e300 2:0.4")),
                  "The cache stores float32, where 1e300 is infinite: refused, naming the line and why.",
                  line=3, words=["float32", "feature 1"]),
            loads(reader, "query_across_chunks", file("chunks.txt", "\n" + LETOR), ok(check_letor),
                  "A query continuing into the next chunk is one query.", chunk_rows=2),
            error(reader, "error_line_in_later_chunk", file("chunk_nan.txt", "\n\n" + replace_line(LETOR, 4, "0 qid:2 1:nan")),
                  "Line numbers count the whole file, not the chunk.", line=6, words=["not finite"], chunk_rows=2),
            error(reader, "scattered_query", file("scattered.txt", LETOR + "1 qid:1 1:0.7 2:0.7\n"),
                  "The cache needs each query on consecutive lines (read_letor regroups; the cache cannot "
                  "without holding the file): refused, naming the line.", line=5, words=["qid 1", "again"]),
            error(reader, "no_qid", files(file("noqid.txt", LETOR_NO_QID), [file("noqid.txt.query", "2\n2\n")]),
                  "The cache needs a qid on every row (it does not read .query files).", line=1, words=["qid"]),
        ]
    else:
        cases += [
            loads(reader, "value_beyond_float32", file("float64.txt", replace_line(LETOR, 3, "1 qid:2 1:1e300 2:0.4 #docid = d3")),
                  check_huge_value,
                  "1e300 is a finite float64: read_letor (float64 by default) keeps it."),
            loads(reader, "duplicated_rows", file("dup.txt", LETOR.replace("d2\n", "d2\n0 qid:1 1:0.2 2:0.9 #docid = d2\n")),
                  check_duplicates, "A document listed twice is legal data (LETOR 4.0 has some)."),
            loads(reader, "conflicting_labels", file("conflict.txt", replace_line(LETOR, 2, "0 qid:1 1:0.5 2:0.1 #docid = d2")),
                  check_conflict, "Identical features with different labels are label noise, legal data."),
            loads(reader, "latin1_docids", file("latin1_docid.txt", "1 qid:1 1:1 #docid = caf\xe9\n0 qid:1 1:0 #docid = caf\xe8\n",
                                                "latin-1"),
                  check_latin1_docids, "Comments are text for people: Latin-1 docids load, stay distinct and write back byte for byte."),
            loads(reader, "row_without_features", file("nofeat.txt", "1 qid:1 1:0.5\n0 qid:1\n"), check_empty_row,
                  "A row whose features are all zero may list none."),
            loads(reader, "scattered_query", file("scattered.txt", "1 qid:1 1:1 #docid = d1\n0 qid:2 1:2 #docid = d2\n"
                                                                   "0 qid:1 1:3 #docid = d3\n"),
                  check_scattered, "Rows of a query on separate lines are regrouped stably, with a warning.",
                  warns="not contiguous"),
            loads(reader, "cut_at_token_boundary", file("cut_boundary.txt", cut_after(no_comments, "1:0.2")),
                  check_cut_at_token,
                  "A file without comments cut between tokens is a valid sparse row (missing = 0): no reader "
                  "can tell; with docids the cut is caught (next case)."),
            error(reader, "cut_at_token_boundary_with_docids", file("cut_docid.txt", cut_after(LETOR, "1:0.1")),
                  "A cut that loses the last docid is caught by the docid check.", line=4, words=["docid"]),
            error(reader, "qid_beyond_int64", file("big_qid.txt", replace_line(LETOR, 3, f"1 qid:{10**25} 1:0.3")),
                  "A qid no 64-bit integer holds.", line=3, words=["qid", "64 bits"]),
            error(reader, "qid_not_integer", file("qid_text.txt", replace_line(LETOR, 2, "0 qid:abc 1:0.2")),
                  "qids are integers in SVMlight.", line=2, words=["qid", "not an integer"]),
            error(reader, "qid_missing_on_a_row", file("qid_missing.txt", replace_line(LETOR, 3, "1 1:0.3 2:0.4 #docid = d3")),
                  "A row without qid among rows with one has no query.", line=3, words=["no qid"]),
            error(reader, "no_qid_no_query_file", file("noqid.txt", LETOR_NO_QID),
                  "Without qids the groups must come from FILE.query.", line=1, words=["FILE.query"]),
        ]
    return cases


def query_file_cases(reader) -> list:
    """``read_letor`` on a qid-less file with its LightGBM ``.query`` group file beside it."""
    def data_and(name, query_writer):
        return files(file(name, LETOR_NO_QID), [query_writer])

    def qfile(name, content, encoding="utf-8"):
        return file(name + ".query", content, encoding)

    return [
        loads(reader, "query_file", data_and("q.txt", qfile("q.txt", "2\n2\n")), check_letor,
              "Group sizes beside a qid-less file make the queries."),
        loads(reader, "query_file_crlf_bom", data_and("qcrlf.txt", qfile("qcrlf.txt", BOM + "2\r\n2\r\n")), check_letor,
              "CRLF and a byte-order mark in the group file."),
        loads(reader, "query_file_blank_lines", data_and("qblank.txt", qfile("qblank.txt", "\n2\n\n2\n\n")), check_letor,
              "Blank lines in the group file are skipped."),
        error(reader, "sizes_do_not_add_up", data_and("qsum.txt", qfile("qsum.txt", "2\n3\n")),
              "Sizes must cover the rows exactly, else every query is shifted.", words=["add up to 5", "4 rows"],
              file="qsum.txt.query"),
        error(reader, "size_not_integer", data_and("qfrac.txt", qfile("qfrac.txt", "2\n1.5\n")),
              "A group size counts rows.", line=2, words=["not an integer"], file="qfrac.txt.query"),
        error(reader, "size_zero", data_and("qzero.txt", qfile("qzero.txt", "2\n0\n2\n")),
              "An empty group is a mistake.", line=2, words=["not positive"], file="qzero.txt.query"),
        error(reader, "size_negative", data_and("qneg.txt", qfile("qneg.txt", "-2\n6\n")),
              "A negative group is a mistake.", line=1, words=["not positive"], file="qneg.txt.query"),
        error(reader, "size_huge", data_and("qhuge.txt", qfile("qhuge.txt", f"{10**30}\n")),
              "A size beyond any integer type must not overflow.", words=["add up"], file="qhuge.txt.query"),
        error(reader, "query_file_empty", data_and("qempty.txt", qfile("qempty.txt", "")),
              "An empty group file gives no queries.", words=["add up to 0"], file="qempty.txt.query"),
        error(reader, "query_file_utf16", data_and("q16.txt", qfile("q16.txt", "2\n2\n", "utf-16")),
              "UTF-16 group file.", words=["UTF-16"], file="q16.txt.query"),
        error(reader, "query_file_is_a_folder", data_and("qdir.txt", folder_named("qdir.txt.query")),
              "A folder named FILE.query.", words=["folder"], file="qdir.txt.query"),
    ]


# -- scores files --------------------------------------------------------------------------------

SCORES = "1.5\n-2\n3e-1\n"


def check_scores(scores):
    assert scores.tolist() == [1.5, -2.0, 0.3], scores


def scores_cases(reader) -> list:
    def check_one(scores):
        assert scores.tolist() == [0.25]

    return [
        loads(reader, "plain", file("s.txt", SCORES), check_scores, "Control: one float per line."),
        loads(reader, "crlf", file("crlf.txt", crlf(SCORES)), check_scores, "Windows line ends."),
        loads(reader, "utf8_bom", file("bom.txt", BOM + SCORES), check_scores, "A UTF-8 byte-order mark."),
        loads(reader, "trailing_blank_lines", file("trailing.txt", SCORES + "\n\n  \n"), check_scores,
              "Blank lines an editor left at the end pair with no row: ignored."),
        loads(reader, "spaces_around", file("spaces.txt", " 1.5 \n\t-2\n3e-1  \n"), check_scores,
              "White space around a number."),
        loads(reader, "single_score", file("one.txt", "0.25"), check_one, "One score, no final newline."),
        loads(reader, "gzip", gz("s.txt.gz", SCORES), check_scores, "Gzip by magic number."),
        error(reader, "nan", file("nan.txt", "1\nnan\n"), "A NaN score has no rank.", line=2, words=["not finite"]),
        error(reader, "inf", file("inf.txt", "inf\n1\n"), "An infinite score ties with every other.", line=1,
              words=["not finite"]),
        error(reader, "blank_line_between", file("gap.txt", "1\n\n2\n"),
              "A blank line between scores means a missing score: every later score would pair with the "
              "wrong row.", line=2, words=["empty line"]),
        error(reader, "not_a_number", file("text.txt", "1\nabc\n"), "Text is not a score.", line=2,
              words=["not a number"]),
        error(reader, "truncated_mid_token", file("cut.txt", "1.5\n2.25e"), "Cut inside the exponent.", line=2,
              words=["not a number"]),
        error(reader, "two_columns", file("cols.txt", "1 0.5\n"), "A scores file has one column.", line=1,
              words=["not a number"]),
        error(reader, "decimal_comma", file("comma.txt", "1,5\n"), "Decimal commas are not numbers here.", line=1,
              words=["not a number"]),
        error(reader, "latin1_byte", file("latin1.txt", "1.5\xa0\n", "latin-1"), "A Latin-1 no-break space.",
              line=1, words=["not a number"]),
        error(reader, "count_mismatch", file("count.txt", SCORES),
              "Scores must pair one to one with the data rows.", words=["3 scores", "4 rows"], n_rows=4),
        error(reader, "empty_file", file("empty.txt", ""), "An empty file holds no scores.", words=["empty"]),
        error(reader, "blank_lines_only", file("blank.txt", "\n\n"), "Only blank lines: no scores.", words=["empty"]),
        error(reader, "utf16_bom", file("utf16.txt", SCORES, "utf-16"), "UTF-16 text.", words=["UTF-16"]),
        error(reader, "truncated_gzip", gz("cut.txt.gz", SCORES * 50, cut=True), "A cut download.", words=["gzip"]),
        error(reader, "directory", folder_named("folder.txt"), "A folder given for a file.", words=["folder"]),
    ]


# -- question-answer TSV (the user TSV of `structrank featurize qa`, WikiQA) -------------------------

QA = (
    "who wrote it?\tAnn wrote it.\t1\n"
    "who wrote it?\tIt rained.\t0\n"
    "where is it?\tIn Paris.\t1\n"
    "where is it?\tNowhere.\t0\n"
)
QA_GIANT = 100_000


def check_qa(data):
    assert data.questions == ["who wrote it?", "where is it?"], data.questions
    assert data.candidates == ["Ann wrote it.", "It rained.", "In Paris.", "Nowhere."], data.candidates
    assert data.labels.tolist() == [1, 0, 1, 0]


def qa_tsv_cases(reader) -> list:
    def check_dup(data):
        assert data.n_queries == 2 and data.candidates[:3] == ["Ann wrote it.", "It rained.", "It rained."]

    def check_conflict(data):
        assert data.candidates[:2] == ["Ann wrote it.", "Ann wrote it."] and data.labels.tolist()[:2] == [1, 0]

    def check_single(data):
        assert data.n_queries == 1 and data.n_candidates == 2

    def check_giant(data):
        assert data.n_queries == 1 and data.n_candidates == QA_GIANT

    def check_ids(data):
        assert data.query_ids == ["Q7", "Q9"] and data.labels.tolist() == [1, 0, 1, 0]

    def check_regrouped(data):
        assert data.query_ids == ["Q7", "Q9"] and data.candidates == ["Ann wrote it.", "It rained.", "In Paris."]

    def check_unicode(data):
        assert data.questions == ["谁写的？"] and data.candidates == ["安写的。🙂"]

    ids = "Q7\t" + QA.replace("\nwhere", "\nQ9\twhere").replace("\nwho", "\nQ7\twho")
    return [
        loads(reader, "plain", file("qa.tsv", QA), check_qa, "Control: question, candidate, label."),
        loads(reader, "crlf", file("crlf.tsv", crlf(QA)), check_qa, "Windows line ends: '\\r' is not in the label."),
        loads(reader, "utf8_bom", file("bom.tsv", BOM + QA), check_qa, "A UTF-8 byte-order mark (Excel's 'UTF-8 CSV')."),
        loads(reader, "blank_lines", file("blank.tsv", "\n" + QA.replace("\n", "\n\n  \n", 2)), check_qa,
              "Blank lines are skipped."),
        loads(reader, "gzip", gz("qa.tsv.gz", QA), check_qa, "Gzip by magic number."),
        loads(reader, "duplicated_rows", file("dup.tsv", QA.replace("who wrote it?\tIt rained.\t0\n",
                                                                  "who wrote it?\tIt rained.\t0\n" * 2)), check_dup,
              "A candidate listed twice is legal data."),
        loads(reader, "conflicting_labels", file("conflict.tsv", QA.replace("It rained.\t0", "Ann wrote it.\t0")),
              check_conflict, "The same candidate marked right and wrong is label noise, legal data."),
        loads(reader, "single_question", file("single.tsv", "".join(QA.splitlines(True)[:2])), check_single,
              "One question is a data set."),
        loads(reader, "giant_question", file("giant.tsv", lambda: "".join(f"q?\tcandidate {i}.\t{i % 2}\n"
                                                                            for i in range(QA_GIANT))),
              check_giant, f"A question with {QA_GIANT:,} candidates is large, not wrong."),
        loads(reader, "question_ids", file("ids.tsv", ids), check_ids, "Four columns: question id first."),
        loads(reader, "scattered_question", file("scattered.tsv", "Q7\twho wrote it?\tAnn wrote it.\t1\n"
                                                 "Q9\twhere is it?\tIn Paris.\t1\nQ7\twho wrote it?\tIt rained.\t0\n"),
              check_regrouped, "A question's rows on separate lines are regrouped stably, with a warning.",
              warns="not contiguous"),
        loads(reader, "non_latin_text", file("unicode.tsv", "谁写的？\t安写的。🙂\t1\n"), check_unicode,
              "Any Unicode text in UTF-8."),
        error(reader, "latin1", file("latin1.tsv", QA.replace("Nowhere", "Jos\xe9"), "latin-1"),
              "Latin-1 bytes are not UTF-8: say which line, do not guess.", line=4, words=["UTF-8"]),
        error(reader, "utf16_bom", file("utf16.tsv", QA, "utf-16"), "UTF-16 text.", words=["UTF-16"]),
        error(reader, "truncated_mid_line", file("cut.tsv", cut_after(QA, "where is it?\tNow")),
              "The last row lost its label column.", line=4, words=["columns", "found 2"]),
        error(reader, "truncated_mid_character", file("cut_char.tsv", QA.encode("utf-8") + "où\t".encode("utf-8")[:2]),
              "Cut inside a multi-byte character.", line=5, words=["UTF-8"]),
        error(reader, "truncated_gzip", gz("cut.tsv.gz", QA * 50, cut=True), "A cut download.", words=["gzip"]),
        error(reader, "empty_question", file("noq.tsv", QA.replace("where is it?\tIn", "\tIn")),
              "A candidate needs a question to be ranked for.", line=3, words=["empty question"]),
        error(reader, "empty_candidate", file("nocand.tsv", QA.replace("\tIt rained.\t", "\t\t")),
              "An empty candidate has nothing to rank.", line=2, words=["empty candidate"]),
        error(reader, "blank_candidate", file("blankcand.tsv", QA.replace("\tNowhere.\t", "\t   \t")),
              "White space only is empty.", line=4, words=["empty candidate"]),
        error(reader, "negative_label", file("neg.tsv", QA.replace("Nowhere.\t0", "Nowhere.\t-1")),
              "Labels are non-negative integers.", line=4, words=["label"]),
        error(reader, "fractional_label", file("frac.tsv", QA.replace("Paris.\t1", "Paris.\t0.5")),
              "Labels are integers.", line=3, words=["label"]),
        error(reader, "nan_label", file("nan.tsv", QA.replace("rained.\t0", "rained.\tnan")),
              "NaN is not a label.", line=2, words=["label"]),
        error(reader, "huge_label", file("huge.tsv", QA.replace("rained.\t0", f"rained.\t{10**20}")),
              "A label beyond int64 must not overflow.", line=2, words=["label", "too large"]),
        error(reader, "two_columns", file("two.tsv", "who?\tAnn.\nwho?\tRain.\n"),
              "The label column is required.", line=1, words=["3 tab-separated columns"]),
        error(reader, "five_columns", file("five.tsv", QA.replace("\n", "\textra\tmore\n")),
              "Unknown extra columns are not guessed at.", line=1, words=["found 5"]),
        error(reader, "ragged_rows", file("ragged.tsv", QA.replace("where is it?\tIn Paris.\t1", "In Paris.\t1")),
              "A row with a column fewer than the first.", line=3, words=["found 2"]),
        error(reader, "same_id_two_questions", file("clash.tsv", ids.replace("Q9\twhere is it?\tNowhere", "Q7\telse?\tNowhere")),
              "One question id with two texts: which is it?", line=4, words=["question id 'Q7'"]),
        loads(reader, "label_header", file("header.tsv", "Question\tAnswer\tLabel\n" + QA), check_qa,
              "A header row whose last column is named 'label' is a header, whatever the others are named."),
        error(reader, "unknown_header", file("unknown_header.tsv", "question\tanswer\trelevant\n" + QA),
              "Any other header is read as data; the error says how a header is recognised.", line=1,
              words=["'relevant'", "named 'label'"]),
        error(reader, "header_only", file("header_only.tsv", "question\tanswer\tlabel\n"),
              "A header and no rows holds nothing to rank.", words=["no question-candidate pairs"]),
        error(reader, "empty_file", file("empty.tsv", ""), "An empty file.", words=["empty"]),
        error(reader, "blank_lines_only", file("blanks.tsv", "\n \n\n"), "Only blank lines.", words=["empty"]),
        error(reader, "directory", folder_named("folder.tsv"), "A folder given for a file.", words=["folder"]),
    ]


WIKIQA_HEADER = "QuestionID\tQuestion\tDocumentID\tDocumentTitle\tSentenceID\tSentence\tLabel\n"
WIKIQA = WIKIQA_HEADER + (
    "Q1\thow are glacier caves formed?\tD1\tGlacier cave\tD1-0\tA glacier cave is a cave in ice.\t0\n"
    "Q1\thow are glacier caves formed?\tD1\tGlacier cave\tD1-1\tMelt water forms them.\t1\n"
    "Q2\thow much is a ton?\tD2\tTon\tD2-3\tA ton is 1000 kg.\t1\n"
)


def check_wikiqa(data):
    assert data.questions == ["how are glacier caves formed?", "how much is a ton?"]
    assert data.labels.tolist() == [0, 1, 1] and data.docids == ["D1-0", "D1-1", "D2-3"]
    assert data.position.tolist() == [0, 1, 3]


def wikiqa_cases(reader) -> list:
    def reorder(text):
        """Columns in another order after QuestionID (which identifies the header): Label second,
        Question last."""
        rows = [line.split("\t") for line in text.splitlines()]
        return "".join("\t".join([r[0], r[6], r[5], r[4], r[3], r[2], r[1]]) + "\n" for r in rows)

    def check_minimal(data):
        assert data.docids == ["Q1-0", "Q1-1", "Q2-0"] and data.labels.tolist() == [0, 1, 1]

    minimal = "".join("\t".join(f for i, f in enumerate(line.split("\t")) if i in (0, 1, 5, 6)) + "\n"
                      for line in WIKIQA.splitlines())
    return [
        loads(reader, "plain", file("w.tsv", WIKIQA), check_wikiqa, "Control: WikiQA's own layout."),
        loads(reader, "crlf", file("crlf.tsv", crlf(WIKIQA)), check_wikiqa, "Windows line ends."),
        loads(reader, "utf8_bom", file("bom.tsv", BOM + WIKIQA), check_wikiqa,
              "A byte-order mark must not hide the QuestionID header."),
        loads(reader, "blank_lines", file("blank.tsv", "\n" + WIKIQA.replace("\n", "\n\n", 2)), check_wikiqa,
              "Blank lines, also before the header."),
        loads(reader, "columns_reordered", file("order.tsv", reorder(WIKIQA)), check_wikiqa,
              "Columns after QuestionID are found by name."),
        loads(reader, "optional_columns_missing", file("minimal.tsv", minimal), check_minimal,
              "Only QuestionID, Question, Sentence and Label are required."),
        error(reader, "no_header", file("nohead.tsv", WIKIQA[len(WIKIQA_HEADER):]),
              "read_wikiqa needs the header to find its columns.", line=1, words=["header"]),
        error(reader, "header_without_label", file("nolabel.tsv", WIKIQA.replace("\tLabel\n", "\tScore\n", 1)),
              "A required column is missing from the header.", line=1, words=["'Label'"]),
        error(reader, "truncated_row", file("cut.tsv", cut_after(WIKIQA, "D2-3\tA ton")),
              "The last row lost its columns.", line=4, words=["found 6"]),
        error(reader, "empty_sentence", file("nosent.tsv", WIKIQA.replace("\tMelt water forms them.\t", "\t\t")),
              "An empty candidate sentence.", line=3, words=["empty Sentence"]),
        error(reader, "empty_question", file("noq.tsv", WIKIQA.replace("Q2\thow much is a ton?\t", "Q2\t \t")),
              "An empty question.", line=4, words=["empty Question"]),
        error(reader, "fractional_label", file("frac.tsv", WIKIQA.replace("kg.\t1", "kg.\t1.0")),
              "Labels are integers.", line=4, words=["label"]),
        error(reader, "latin1", file("latin1.tsv", WIKIQA.replace("ice.", "glaci\xe8re."), "latin-1"),
              "Latin-1 bytes.", line=2, words=["UTF-8"]),
        error(reader, "utf16_bom", file("utf16.tsv", WIKIQA, "utf-16"), "UTF-16 text.", words=["UTF-16"]),
        error(reader, "truncated_gzip", gz("cut.tsv.gz", WIKIQA * 20, cut=True), "A cut download.", words=["gzip"]),
        error(reader, "empty_file", file("empty.tsv", ""), "An empty file has no header.", line=1, words=["header"]),
        error(reader, "directory", folder_named("folder.tsv"), "A folder given for a file.", words=["folder"]),
    ]


# -- TREC QA: jacana pseudo-XML and Wang et al.'s POSInput files --------------------------------------


def jacana_block(tag, tokens, extra=0):
    n = len(tokens.split())
    lines = ["\t".join(tokens.split()), "\t".join(["X"] * n), "\t".join(["dep"] * n),
             "\t".join(["0"] * n), "\t".join(["O"] * n)] + ["x"] * extra
    return f"<{tag}>\n" + "\n".join(lines) + f"\n</{tag}>\n"


def jacana_question(qid, question, positives=(), negatives=()):
    blocks = [jacana_block("question", question)]
    blocks += [jacana_block("positive", p) for p in positives] + [jacana_block("negative", n) for n in negatives]
    return f"<QApairs id='{qid}'>\n" + "".join(blocks) + "</QApairs>\n"


JACANA = (jacana_question("1", "who wrote it ?", ["Ann wrote it ."], ["It rained ."])
          + jacana_question("2", "where is it ?", ["In Paris ."], ["Nowhere ."]))


def check_jacana(data):
    assert data.questions == ["who wrote it ?", "where is it ?"], data.questions
    assert data.candidates == ["Ann wrote it .", "It rained .", "In Paris .", "Nowhere ."]
    assert data.labels.tolist() == [1, 0, 1, 0]


def jacana_cases(reader) -> list:
    def check_dup(data):
        assert data.n_candidates == 5 and data.candidates[1:3] == ["It rained .", "It rained ."]

    def check_first_only(data):
        assert data.query_ids == ["1"] and data.n_candidates == 2

    short = JACANA.split("\n")
    del short[17]  # the POS-tag line of question 1's <negative> block (lines 16-22)
    seven = JACANA.replace(jacana_block("positive", "In Paris ."), jacana_block("positive", "In Paris .", extra=2))
    # Lines of JACANA: question 1 is lines 1-23 (<question> 2-8, <positive> 9-15, <negative>
    # 16-22), question 2 lines 24-46 (its <positive> 32-38, tokens on 33).
    return [
        loads(reader, "plain", file("j.xml", JACANA), check_jacana, "Control."),
        loads(reader, "crlf", file("crlf.xml", crlf(JACANA)), check_jacana, "Windows line ends."),
        loads(reader, "utf8_bom", file("bom.xml", BOM + JACANA), check_jacana, "A byte-order mark before <QApairs>."),
        loads(reader, "blank_lines", file("blank.xml", JACANA.replace("</question>\n", "</question>\n\n\n")), check_jacana,
              "Blank lines between blocks."),
        loads(reader, "answer_lines", file("seven.xml", seven), check_jacana,
              "A <positive> block may carry the answer's tokens and indices (7 lines)."),
        loads(reader, "duplicated_candidate", file("dup.xml", JACANA.replace(jacana_block("negative", "It rained ."),
                                                                            jacana_block("negative", "It rained .") * 2)),
              check_dup, "A candidate listed twice is legal data."),
        loads(reader, "question_without_candidates", file("nocand.xml", JACANA.split("<QApairs id='2'>")[0]
                                                          + jacana_question("2", "where is it ?")),
              check_first_only, "A question without candidates has nothing to rank and is left out."),
        error(reader, "truncated_mid_block", file("cut_block.xml", cut_after(JACANA, "In\tParis\t.")),
              "The file ends inside a block.", line=33, words=["truncated block", "not closed"]),
        error(reader, "block_missing_a_line", file("short.xml", "\n".join(short)),
              "A block that lost a line (POS tags) would shift every later annotation.",
              line=21, words=["truncated block", "4 lines"]),
        error(reader, "qapairs_not_closed", file("unclosed.xml", JACANA.replace("</QApairs>\n", "", 1)),
              "A question's pairs run into the next question.", line=23, words=["not closed"]),
        error(reader, "empty_question", file("noq.xml", JACANA.replace("who\twrote\tit\t?", "\t", 1)),
              "A question without tokens.", line=3, words=["empty question"]),
        error(reader, "candidate_before_question", file("order.xml", "<QApairs id='1'>\n" + jacana_block("positive", "A .")
                                                        + "</QApairs>\n"),
              "A candidate before its question has no question.", line=2, words=["before the <question>"]),
        error(reader, "text_outside_tags", file("stray.xml", JACANA + "stray text\n"),
              "Text outside the blocks.", line=47, words=["unexpected line"]),
        error(reader, "latin1", file("latin1.xml", JACANA.replace("Paris", "Par\xeds"), "latin-1"),
              "Latin-1 bytes.", line=33, words=["UTF-8"]),
        error(reader, "utf16_bom", file("utf16.xml", JACANA, "utf-16"), "UTF-16 text.", words=["UTF-16"]),
        error(reader, "empty_file", file("empty.xml", ""), "No questions at all.", words=["no question"]),
        error(reader, "directory", folder_named("folder.xml"), "A folder given for a file.", words=["folder"]),
    ]


POS_QUESTIONS = "<Q 1 >\nwho wrote it ?\n</Q>\n<Q 2 >\nwhere is it ?\n</Q>\n"
POS_POSITIVE = "<A 1 >\nAnn wrote it .\n</A>\n<A 2 >\nIn Paris .\n</A>\n"
POS_NEGATIVE = "<A 1 >\nIt rained .\nNobody knows .\n</A>\n<A 2 >\nNowhere .\n</A>\n"


def train_all(name, question=POS_QUESTIONS, positive=POS_POSITIVE, negative=POS_NEGATIVE, transform=None,
              negative_writer=None):
    """A folder with the three POSInput files (gzip, as distributed); ``transform`` edits their texts."""
    transform = transform or (lambda text: text)
    writers = [gz(TRAIN_ALL_FILES["question"], transform(question)),
               gz(TRAIN_ALL_FILES["positive"], transform(positive))]
    if negative_writer is not None:
        writers.append(negative_writer)
    elif negative is not None:
        writers.append(gz(TRAIN_ALL_FILES["negative"], transform(negative)))
    return subfolder(name, writers)


def check_train_all(data):
    assert data.questions == ["who wrote it ?", "where is it ?"], data.questions
    assert data.candidates == ["Ann wrote it .", "It rained .", "Nobody knows .", "In Paris .", "Nowhere ."]
    assert data.labels.tolist() == [1, 0, 0, 1, 0]


def train_all_cases(reader) -> list:
    negative = TRAIN_ALL_FILES["negative"]
    positive = TRAIN_ALL_FILES["positive"]
    return [
        loads(reader, "plain", train_all("plain"), check_train_all, "Control: the three gzip files."),
        loads(reader, "crlf", train_all("crlf", transform=crlf), check_train_all, "Windows line ends."),
        loads(reader, "lone_cr", train_all("cr", transform=lambda t: t.replace("\n", "\r")), check_train_all,
              "Old Mac line ends (the real TRAIN-ALL files mix them)."),
        loads(reader, "utf8_bom", train_all("bom", transform=lambda t: BOM + t), check_train_all, "Byte-order marks."),
        loads(reader, "blank_lines", train_all("blank", transform=lambda t: t.replace("</A>\n", "</A>\n\n")
                                               .replace("</Q>\n", "</Q>\n\n")),
              check_train_all, "Blank lines between blocks."),
        loads(reader, "paragraph_marker", train_all("para", positive=POS_POSITIVE.replace("In Paris", "<P> In Paris")),
              check_train_all, "A '<P>' glued to a sentence's start is dropped (three real sentences have one)."),
        error(reader, "truncated_block", train_all("cut", positive=cut_after(POS_POSITIVE, "In Paris")),
              "The positive file ends inside a block.", words=["truncated block"], file=positive),
        error(reader, "truncated_gzip", train_all("cutgz", negative_writer=gz(negative, POS_NEGATIVE * 20, cut=True)),
              "A cut download of one of the three files.", words=["gzip"], file=negative),
        error(reader, "missing_file", train_all("missing", negative=None),
              "One of the three files is absent.", words=["not found"], file=negative),
        error(reader, "answers_for_unknown_question", train_all("unknown", negative=POS_NEGATIVE + "<A 3 >\nNo .\n</A>\n"),
              "Answers without their question.", words=["question 3"], file=negative),
        error(reader, "question_of_two_lines", train_all("twolines", question=POS_QUESTIONS.replace("it ?\n", "it ?\nmore\n", 1)),
              "A question must be one line.", line=2, words=["2 lines"], file=TRAIN_ALL_FILES["question"]),
        error(reader, "wrong_block_kind", train_all("kind", positive=POS_POSITIVE.replace("<A 2 >", "<Q 2 >")),
              "A question block in an answer file: files swapped?", line=4, words=["<Q"], file=positive),
        error(reader, "latin1", train_all("latin1", negative_writer=gz(negative, POS_NEGATIVE.replace("Nowhere", "N\xf3where")
                                                                       .encode("latin-1"))),
              "Latin-1 bytes in one file.", line=6, words=["UTF-8"], file=negative),
        error(reader, "empty_question_file", train_all("emptyq", question=""),
              "No questions: the answers have nothing to belong to.", words=["question 1"], file=positive),
    ]


# -- SemEval-2016 Task 3 XML -------------------------------------------------------------------------


def semeval_comment(cid, text="Two weeks.", label="Good", user="U2", attributes=None):
    attributes = attributes if attributes is not None else (
        f'RELC_ID="{cid}" RELC_USERID="{user}" RELC_USERNAME="bob" RELC_RELEVANCE2RELQ="{label}"')
    return f"<RelComment {attributes}>\n<RelCText>{text}</RelCText>\n</RelComment>\n"


def semeval_thread(tid, comments, subject="Visa", body="How long does it take?"):
    return (f'<Thread THREAD_SEQUENCE="{tid}">\n'
            f'<RelQuestion RELQ_ID="{tid}" RELQ_USERID="U1" RELQ_USERNAME="ann">\n'
            f"<RelQSubject>{subject}</RelQSubject>\n<RelQBody>{body}</RelQBody>\n</RelQuestion>\n"
            + "".join(comments) + "</Thread>\n")


SEMEVAL = ("<xml>\n"
           + semeval_thread("Q1_R1", [semeval_comment("Q1_R1_C1"), semeval_comment("Q1_R1_C2", "No idea.", "Bad")])
           + semeval_thread("Q2_R1", [semeval_comment("Q2_R1_C1", "Ask at the caf\xe9.", "PotentiallyUseful")],
                            subject="Caf\xe9")
           + "</xml>\n")
SEMEVAL_GIANT = 10_000


def check_semeval(threads):
    assert [t.thread_id for t in threads] == ["Q1_R1", "Q2_R1"]
    assert [c.label for c in threads[0].comments] == ["Good", "Bad"]
    assert threads[1].subject == "Caf\xe9" and threads[1].comments[0].text == "Ask at the caf\xe9."
    assert threads[0].comments[1].rank == 2


def entity_bomb() -> str:
    """An XML file whose entities nest ten deep, ten copies a level ('billion laughs')."""
    entities = ['<!ENTITY e0 "' + "lol" * 10 + '">']
    entities += [f'<!ENTITY e{i} "' + f"&e{i - 1};" * 10 + '">' for i in range(1, 10)]
    thread = semeval_thread("Q1_R1", [semeval_comment("Q1_R1_C1", "&e9;")])
    return '<?xml version="1.0"?>\n<!DOCTYPE xml [\n' + "\n".join(entities) + "\n]>\n<xml>\n" + thread + "</xml>\n"


def external_entity() -> str:
    """An XML file with an external entity pointing at a local file (XXE)."""
    return ('<?xml version="1.0"?>\n<!DOCTYPE xml [<!ENTITY secret SYSTEM "file:///etc/hostname">]>\n'
            "<xml>" + semeval_thread("Q1_R1", [semeval_comment("Q1_R1_C1", "&secret;")]).replace("\n", "")
            + "</xml>\n")


def semeval_cases(reader) -> list:
    def check_empty_comment(threads):
        assert threads[0].comments[1].text == "" and len(threads[0].comments) == 2

    def check_empty_body(threads):
        assert threads[0].body == "" and threads[0].question_text == "Visa"

    def check_giant(threads):
        assert len(threads) == 1 and len(threads[0].comments) == SEMEVAL_GIANT
        assert threads[0].comments[-1].rank == SEMEVAL_GIANT

    def check_single(threads):
        assert len(threads) == 1 and len(threads[0].comments) == 2

    def check_same_text(threads):
        assert [c.text for c in threads[0].comments] == ["Two weeks.", "Two weeks."]

    def check_no_comments(threads):
        assert len(threads) == 2 and threads[1].comments == []

    def giant():
        comments = [semeval_comment(f"Q1_R1_C{i}", f"comment {i}", ("Good", "Bad")[i % 2]) for i in range(SEMEVAL_GIANT)]
        return "<xml>\n" + semeval_thread("Q1_R1", comments) + "</xml>\n"

    single = "<xml>\n" + semeval_thread("Q1_R1", [semeval_comment("Q1_R1_C1"), semeval_comment("Q1_R1_C2")]) + "</xml>\n"
    declared = '<?xml version="1.0" encoding="ISO-8859-1"?>\n' + SEMEVAL
    missing_id = SEMEVAL.replace('RELC_ID="Q1_R1_C2" ', "")
    # Lines of SEMEVAL: 1 <xml>, 2 <Thread Q1_R1>, 3 <RelQuestion>, 7 and 10 its <RelComment>s,
    # 13 </Thread>, 14 <Thread Q2_R1>, 16 its subject "Caf\xe9", 19 its <RelComment>.
    return [
        loads(reader, "plain", file("s.xml", SEMEVAL), check_semeval, "Control (UTF-8, no declaration)."),
        loads(reader, "crlf", file("crlf.xml", crlf(SEMEVAL)), check_semeval, "Windows line ends."),
        loads(reader, "utf8_bom", file("bom.xml", BOM + SEMEVAL), check_semeval, "A UTF-8 byte-order mark."),
        loads(reader, "utf16_bom", file("utf16.xml", SEMEVAL, "utf-16"), check_semeval,
              "UTF-16 with a byte-order mark is valid XML (unlike in the line-based formats): it loads."),
        loads(reader, "latin1_declared", file("declared.xml", declared, "latin-1"), check_semeval,
              "Latin-1 with an encoding declaration is valid XML."),
        loads(reader, "gzip", gz("s.xml.gz", SEMEVAL), check_semeval, "Gzip by magic number."),
        loads(reader, "blank_lines", file("blank.xml", SEMEVAL.replace("</Thread>\n", "</Thread>\n\n\n")), check_semeval,
              "White space between elements."),
        loads(reader, "empty_comment_body", file("empty_comment.xml", SEMEVAL.replace("No idea.", "")),
              check_empty_comment, "Qatar Living has empty comments; the file format allows them, the pair "
                                   "gets empty text (features handle zero tokens)."),
        loads(reader, "self_closing_comment_body", file("selfclosed.xml", SEMEVAL.replace("<RelCText>No idea.</RelCText>",
                                                                                          "<RelCText/>")),
              check_empty_comment, "<RelCText/> is the same empty body."),
        loads(reader, "empty_question_body", file("empty_body.xml", SEMEVAL.replace("How long does it take?", "", 1)),
              check_empty_body, "A question may be its subject alone."),
        loads(reader, "single_thread", file("single.xml", single), check_single, "One thread is a data set."),
        loads(reader, "giant_thread", file("giant.xml", giant), check_giant,
              f"A thread of {SEMEVAL_GIANT:,} comments is large, not wrong."),
        loads(reader, "duplicated_comment_text", file("same_text.xml", single), check_same_text,
              "Two comments with the same text and their own ids are legal data."),
        loads(reader, "thread_without_comments", file("nocomments.xml", SEMEVAL.replace(
            semeval_comment("Q2_R1_C1", "Ask at the caf\xe9.", "PotentiallyUseful"), "")), check_no_comments,
            "A thread may have no comment (one 2015 thread has none)."),
        error(reader, "truncated_mid_element", file("cut.xml", cut_after(SEMEVAL, 'RELC_USERID="U2"', 2)),
              "Cut inside a start tag.", line=10, words=["malformed XML"]),
        error(reader, "truncated_after_thread", file("cut_thread.xml", cut_after(SEMEVAL, "</Thread>\n")),
              "Cut between threads: the root is not closed, the file is incomplete.", words=["malformed XML"]),
        error(reader, "latin1_undeclared", file("latin1.xml", SEMEVAL, "latin-1"),
              "Latin-1 bytes without a declaration are not well-formed XML.", line=16, words=["malformed XML"]),
        error(reader, "missing_comment_id", file("noid.xml", missing_id),
              "Comment ids key the scorer's files.", line=10, words=["RELC_ID"]),
        error(reader, "missing_label", file("nolabel.xml", SEMEVAL.replace(' RELC_RELEVANCE2RELQ="Bad"', "")),
              "Training needs every label.", line=10, words=["no label"]),
        error(reader, "unknown_label", file("badlabel.xml", SEMEVAL.replace('"Bad"', '"bad"')),
              "Labels are Good, PotentiallyUseful or Bad, case and all.", line=10, words=["'bad'", "not one of"]),
        error(reader, "duplicated_comment_id", file("dupid.xml", SEMEVAL.replace('"Q1_R1_C2"', '"Q1_R1_C1"')),
              "Two comments with one id cannot both be scored (the scorer keys on ids): refused.",
              line=10, words=["already at line 7"]),
        error(reader, "duplicated_thread", file("dupthread.xml", SEMEVAL.replace('"Q2_R1"', '"Q1_R1"', 1)),
              "A thread given twice.", line=14, words=["already at line 2"]),
        error(reader, "comment_without_text", file("notext.xml", SEMEVAL.replace("<RelCText>No idea.</RelCText>\n", "")),
              "A comment without <RelCText> is not the format (an empty body is <RelCText/>).",
              line=10, words=["no <RelCText>"]),
        error(reader, "thread_without_question", file("noquestion.xml", SEMEVAL.replace(
            SEMEVAL[SEMEVAL.index('<RelQuestion RELQ_ID="Q2_R1"'):SEMEVAL.index("</RelQuestion>", SEMEVAL.index(
                '<RelQuestion RELQ_ID="Q2_R1"')) + len("</RelQuestion>\n")], "")),
            "A thread without question has nothing to rank for.", line=14, words=["no <RelQuestion>"]),
        error(reader, "entity_expansion_bomb", file("bomb.xml", entity_bomb),
              "'Billion laughs': ten levels of entities that would expand to 10**10 characters are refused by "
              "expat's amplification limit, not expanded.", words=["malformed XML", "amplification"]),
        error(reader, "external_entity", file("xxe.xml", external_entity),
              "An entity naming a local file is not resolved (no file is read into a comment).",
              line=3, words=["malformed XML", "undefined entity"]),
        error(reader, "tsv_not_xml", file("data.xml", QA), "A TSV file given for XML.", line=1, words=["malformed XML"]),
        error(reader, "truncated_gzip", gz("cut.xml.gz", SEMEVAL * 5, cut=True), "A cut download.", words=["gzip"]),
        error(reader, "empty_file", file("empty.xml", ""), "An empty file.", words=["empty"]),
        error(reader, "directory", folder_named("folder.xml"), "A folder given for a file.", words=["folder"]),
    ]


# -- CoNLL-U -------------------------------------------------------------------------------------

CONLLU = (
    "# sent_id = s1\n# text = The cat sat.\n"
    "1\tThe\tthe\tDET\tDT\t_\t2\tdet\t_\t_\n"
    "2\tcat\tcat\tNOUN\tNN\t_\t3\tnsubj\t_\t_\n"
    "3\tsat\tsit\tVERB\tVBD\t_\t0\troot\t_\t_\n"
    "4\t.\t.\tPUNCT\t.\t_\t3\tpunct\t_\t_\n"
    "\n"
    "# sent_id = s2\n"
    "1\tDogs\tdog\tNOUN\tNNS\t_\t2\tnsubj\t_\t_\n"
    "2\tbark\tbark\tVERB\tVBP\t_\t0\troot\t_\t_\n"
    "\n"
)
CONLLU_GIANT = 100_000


def check_conllu(sentences):
    assert [s.words for s in sentences] == [["The", "cat", "sat", "."], ["Dogs", "bark"]]
    assert [s.sent_id for s in sentences] == ["s1", "s2"] and sentences[1].xpos == ["NNS", "VBP"]


def conllu_cases(reader) -> list:
    def check_dup(sentences):
        assert len(sentences) == 3 and sentences[1].words == sentences[2].words

    def check_giant(sentences):
        assert len(sentences) == 1 and len(sentences[0]) == CONLLU_GIANT

    def check_single(sentences):
        assert len(sentences) == 1 and sentences[0].words == ["The", "cat", "sat", "."]

    def check_ranges(sentences):
        assert sentences[0].words == ["de", "le", "chat"]

    def giant():
        return "".join(f"{i}\tw{i}\tw\tX\tX\t_\t0\tdep\t_\t_\n" for i in range(1, CONLLU_GIANT + 1))

    first = "".join(CONLLU.splitlines(True)[:7])
    ranges = ("1-2\tdu\t_\t_\t_\t_\t_\t_\t_\t_\n1\tde\tde\tADP\t_\t_\t3\tcase\t_\t_\n"
              "2\tle\tle\tDET\t_\t_\t3\tdet\t_\t_\n2.1\tx\tx\tX\t_\t_\t_\t_\t_\t_\n3\tchat\tchat\tNOUN\t_\t_\t0\troot\t_\t_\n")
    # Line numbers in CONLLU: 3-6 the words of s1, 9-10 those of s2.
    return [
        loads(reader, "plain", file("c.conllu", CONLLU), check_conllu, "Control."),
        loads(reader, "crlf", file("crlf.conllu", crlf(CONLLU)), check_conllu, "Windows line ends."),
        loads(reader, "utf8_bom", file("bom.conllu", BOM + CONLLU), check_conllu,
              "A byte-order mark before the first comment."),
        loads(reader, "many_blank_lines", file("blank.conllu", "\n\n" + CONLLU.replace("\n\n", "\n\n\n\n")), check_conllu,
              "Several blank lines between sentences are one boundary."),
        loads(reader, "no_final_blank_line", file("nofinal.conllu", CONLLU.rstrip("\n")), check_conllu,
              "The last sentence may lack its closing blank line and newline."),
        loads(reader, "gzip", gz("c.conllu.gz", CONLLU), check_conllu, "Gzip by magic number."),
        loads(reader, "duplicated_sentence", file("dup.conllu", CONLLU + CONLLU.split("\n\n")[1] + "\n\n"), check_dup,
              "A sentence given twice is legal data."),
        loads(reader, "single_sentence", file("single.conllu", first), check_single, "One sentence."),
        loads(reader, "giant_sentence", file("giant.conllu", giant), check_giant,
              f"A sentence of {CONLLU_GIANT:,} words is large, not wrong."),
        loads(reader, "ranges_and_empty_nodes", file("ranges.conllu", ranges), check_ranges,
              "Multiword ranges and empty nodes are skipped, not errors."),
        error(reader, "latin1", file("latin1.conllu", CONLLU.replace("cat\tcat", "chat\u00e9\tchat"), "latin-1"),
              "Latin-1 bytes.", line=4, words=["UTF-8"]),
        error(reader, "utf16_bom", file("utf16.conllu", CONLLU, "utf-16"), "UTF-16 text.", words=["UTF-16"]),
        error(reader, "truncated_mid_line", file("cut.conllu", cut_after(CONLLU, "2\tbark\tbark\tVE")),
              "The last line lost its columns.", line=10, words=["4 tab-separated fields"]),
        error(reader, "truncated_gzip", gz("cut.conllu.gz", CONLLU * 20, cut=True), "A cut download.", words=["gzip"]),
        error(reader, "empty_form", file("noform.conllu", CONLLU.replace("2\tcat\t", "2\t\t")),
              "An empty FORM (unspecified is '_').", line=4, words=["empty FORM"]),
        error(reader, "duplicated_word_line", file("dupline.conllu", CONLLU.replace("2\tcat", "2\tcat\tcat\tNOUN\tNN\t_\t3"
                                                                                      "\tnsubj\t_\t_\n2\tcat", 1)),
              "A word line given twice breaks the ID sequence.", line=5, words=["word ID 2", "1, 2, 3"]),
        error(reader, "nine_columns", file("nine.conllu", CONLLU.replace("\tnsubj\t_\t_\n", "\tnsubj\t_\n", 1)),
              "A missing column shifts every later one.", line=4, words=["9 tab-separated fields"]),
        error(reader, "spaces_for_tabs", file("spaces.conllu", CONLLU.replace("\t", " ")),
              "CoNLL-U separates columns by tabs (FORMs may contain spaces).", line=3, words=["1 tab-separated"]),
        error(reader, "id_zero", file("id0.conllu", CONLLU.replace("1\tDogs", "0\tDogs")),
              "Word IDs start at 1.", line=9, words=["ID '0'"]),
        error(reader, "empty_file", file("empty.conllu", ""), "An empty treebank file.", words=["no sentences"]),
        error(reader, "comments_only", file("comments.conllu", "# sent_id = s1\n# text = nothing\n\n"),
              "Comments without words: no sentence.", words=["no sentences"]),
        error(reader, "directory", folder_named("folder.conllu"), "A folder given for a file.", words=["folder"]),
    ]


# -- model files ---------------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def model_bytes() -> bytes:
    """A valid model file: a LinearRegressionRanker with set weights (no fitting needed)."""
    model = LinearRegressionRanker()
    model.coef_ = np.array([0.5, -1.0, 0.25])
    model.intercept_ = 0.0
    model.n_features_in_ = 3
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "model.npz"
        save_model(model, path)
        return path.read_bytes()


def npz_bytes(**arrays) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def zip_bytes(name, text) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(name, text)
    return buffer.getvalue()


def npy_bytes() -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, np.arange(3.0))
    return buffer.getvalue()


def flipped_bytes() -> bytes:
    """The valid model with a run of bytes inside the archive's data inverted (bit rot)."""
    data = bytearray(model_bytes())
    middle = len(data) // 2
    data[middle:middle + 8] = bytes(b ^ 0xFF for b in data[middle:middle + 8])
    return bytes(data)


def model_cases(reader) -> list:
    def check_model(model):
        assert type(model).__name__ == "LinearRegressionRanker" and model.coef_.tolist() == [0.5, -1.0, 0.25]

    header_not_json = np.frombuffer(b"{not json", dtype=np.uint8)
    return [
        loads(reader, "valid", file("valid.npz", model_bytes), check_model, "Control: a saved model loads."),
        error(reader, "truncated_half", file("half.npz", lambda: model_bytes()[: len(model_bytes()) // 2]),
              "A cut download or copy.", words=["model file"]),
        error(reader, "truncated_to_100_bytes", file("tiny.npz", lambda: model_bytes()[:100]),
              "Only the first bytes arrived.", words=["model file"]),
        error(reader, "bytes_flipped", file("flipped.npz", flipped_bytes),
              "Bit rot inside the archive (CRC mismatch).", words=["model file"]),
        error(reader, "empty_file", file("empty.npz", b""), "An empty file.", words=["model file"]),
        error(reader, "garbage", file("garbage.npz", bytes(range(256)) * 8), "Random bytes.", words=["model file"]),
        error(reader, "letor_text", file("letor.npz", LETOR), "A data file given for the model.", words=["model file"]),
        error(reader, "gzipped_model", gz("model.npz.gz", model_bytes), "A gzip of a model is not a model file.",
              words=["model file"]),
        error(reader, "bare_npy", file("array.npy", npy_bytes), "A .npy array, not an archive.", words=["bare array"]),
        error(reader, "npz_without_header", file("noheader.npz", lambda: npz_bytes(coef_=np.zeros(3))),
              "Some other program's npz.", words=["no header"]),
        error(reader, "header_not_json", file("badjson.npz", lambda: npz_bytes(__header__=header_not_json)),
              "A header that is not JSON.", words=["damaged"]),
        error(reader, "zip_of_text", file("text.zip", lambda: zip_bytes("readme.txt", "hello")),
              "A zip archive of something else.", words=["model file"]),
        error(reader, "directory", folder_named("folder.npz"), "A folder given for a file.", words=["folder"]),
        error(reader, "missing_file", nothing("absent.npz"), "A wrong path.", words=["not found"]),
    ]


# -- `structrank featurize qa` end to end --------------------------------------------------------------


def featurize_cases(reader) -> list:
    def rows(n):
        def check(ds):
            assert ds.n_rows == n and np.all(np.isfinite(dense(ds.X)))
        return check

    return [
        loads(reader, "punctuation_only_candidate", file("punct.tsv", QA.replace("Nowhere.", "?!").replace("It rained.", "...")),
              rows(4), "Text that tokenizes to nothing gives finite features (no division by zero)."),
        loads(reader, "non_latin_text", file("unicode.tsv", "谁写的？\t安写的。\t1\n谁写的？\t下雨了。\t0\n"), rows(2),
              "Text outside ASCII gives finite features."),
        loads(reader, "single_candidate", file("one.tsv", "who?\tAnn.\t1\n"), rows(1),
              "One question with one candidate can be featurized (idf of one document)."),
        loads(reader, "duplicated_rows", file("dup.tsv", QA + QA), rows(8), "Duplicated rows are featurized alike."),
        loads(reader, "crlf_bom", file("crlf.tsv", BOM + crlf(QA)), rows(4), "Windows line ends and a byte-order mark."),
        error(reader, "latin1_input", file("latin1.tsv", QA.replace("Paris", "P\xe0ris"), "latin-1"),
              "The reader's error reaches the command unchanged.", line=3, words=["UTF-8"]),
        error(reader, "empty_candidate", file("nocand.tsv", QA.replace("\tNowhere.\t", "\t\t")),
              "An empty candidate.", line=4, words=["empty candidate"]),
        error(reader, "directory", folder_named("folder.tsv"), "A folder given for the input.", words=["folder"]),
    ]


# -- readers and the corpus ----------------------------------------------------------------------


def _cache(path, workdir, **options):
    """The cache of ``path`` in the case folder (not in ~/.cache), opened."""
    return open_letor_cache(path, cache_dir=workdir / "_caches", **options)


def _featurize(path, workdir, **options):
    """``structrank featurize qa``'s work: featurize the TSV, then read the LETOR file it wrote."""
    out = workdir / (path.name + ".letor")
    featurize_file(path, out, log=lambda message: None, **options)
    return read_letor(out)


READERS = {
    "read_letor": lambda path, workdir, **options: read_letor(path, **options),
    "read_letor .query": lambda path, workdir, **options: read_letor(path, **options),
    "read_scores": lambda path, workdir, **options: read_scores(path, **options),
    "open_letor_cache": _cache,
    "read_qa_tsv": lambda path, workdir, **options: read_qa_tsv(path, **options),
    "read_wikiqa": lambda path, workdir, **options: read_wikiqa(path, **options),
    "read_jacana": lambda path, workdir, **options: read_jacana(path, **options),
    "read_trec_train_all": lambda path, workdir, **options: read_trec_train_all(path, **options),
    "read_semeval": lambda path, workdir, **options: read_semeval(path, **options),
    "read_conllu": lambda path, workdir, **options: read_conllu(path, **options),
    "load_model": lambda path, workdir, **options: load_model(path, **options),
    "featurize qa": _featurize,
}


def corpus() -> list:
    """Every case, reader by reader."""
    cases = (letor_cases("read_letor") + query_file_cases("read_letor .query") + scores_cases("read_scores")
             + letor_cases("open_letor_cache", cache=True) + qa_tsv_cases("read_qa_tsv") + wikiqa_cases("read_wikiqa")
             + jacana_cases("read_jacana") + train_all_cases("read_trec_train_all") + semeval_cases("read_semeval")
             + conllu_cases("read_conllu") + model_cases("load_model") + featurize_cases("featurize qa"))
    # deferred: that module builds on this one's cases; its readers join READERS here
    from bad_inputs_cli import CLI_READERS, cli_cases
    from bad_inputs_routes import ROUTE_READERS, route_cases

    READERS.update(ROUTE_READERS)
    READERS.update(CLI_READERS)
    cases += route_cases() + cli_cases()
    ids = [case.id for case in cases]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    assert not duplicates, f"duplicate case ids: {duplicates}"
    return cases


def _folder_of(case: Case, folder: Path) -> Path:
    workdir = Path(folder) / case.reader.replace(" ", "_").replace(".", "")
    workdir.mkdir(parents=True, exist_ok=True)
    return workdir


def _short(message: str, folder: Path) -> str:
    """The first line of a message, with the corpus folder left out of paths."""
    first = (message.splitlines() or [""])[0]
    return first.replace(str(Path(folder).resolve()) + "/", "").replace(str(folder) + "/", "")


def run_case(case: Case, folder) -> Result:
    """Write ``case`` into ``folder``, run its reader and judge what happened."""
    workdir = _folder_of(case, folder)
    path = case.write(workdir)
    result = Result(case.reader, case.name, case.expectation(), "", False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = READERS[case.reader](path, workdir, **case.options)
        except StructRankError as exc:
            result.outcome = f"error: {_short(str(exc), folder)}"
            result.matched, result.detail = _judge_error(case, path, str(exc))
            return result
        except Exception as exc:  # noqa: BLE001 -- catching what must not escape is the point here
            result.outcome = f"CRASH: {type(exc).__name__}"
            result.detail = f"{type(exc).__name__}: {_short(str(exc), folder)}"
            return result
    result.outcome = "loaded"
    result.matched, result.detail = _judge_load(case, value, [str(w.message) for w in caught])
    return result


def _judge_error(case: Case, path: Path, message: str):
    """(matched, why not) of an error message against the case's expectation."""
    if case.expect != ERROR:
        return False, "expected to load"
    wanted = [case.file or path.name] + ([f"line {case.line}"] if case.line is not None else []) + list(case.words)
    missing = [w for w in wanted if w.lower() not in message.lower()]
    return (False, f"message lacks {missing}") if missing else (True, "")


def _judge_load(case: Case, value, warned: list):
    """(matched, why not) of a loaded value: the case's check, and its warning if it wants one."""
    if case.expect != LOADS:
        return False, "loaded, but the input is invalid"
    try:
        case.check(value)
    except AssertionError as exc:
        return False, f"loaded wrong: {exc}"
    except Exception as exc:  # noqa: BLE001 -- a check that cannot even look at the value
        return False, f"check crashed: {type(exc).__name__}: {exc}"
    if case.warns is not None and not any(case.warns in w for w in warned):
        return False, f"no warning containing {case.warns!r} (warnings: {warned})"
    return True, ""


def run_corpus(folder) -> list:
    """Write every case into ``folder`` (one sub-folder per reader), run it, and return the results."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    return [run_case(case, folder) for case in corpus()]
