"""LETOR / SVMlight text files (plain or .gz), their ``.query`` group files, and scores files.

A line is ``label qid:Q idx:value ... # comment``; LETOR puts ``docid = ID`` (and for LETOR 4.0
``inc`` and ``prob``) in the comment. Parsing is ``structrank.data.svmlight``'s numba kernel
(no scikit-learn: it costs seconds to import); this module turns its arrays into a dataset,
with document ids from the comments, group sizes from a LightGBM-style ``FILE.query`` file when
rows carry no qid, and checks that name the file, the line and the field of a problem (NaN,
fractional labels, lines without a qid among lines with one).

- ``read_letor``/``write_letor``: plain or .gz, ``-`` reads standard input; ``.query`` files are
  read beside a file without qids and written beside one with ``write_letor(..., query_file=True)``;
  ``read_scores``/``write_scores`` for scores files;
- ``zero_based="auto"`` follows scikit-learn's rule (an index 0 anywhere makes the file
  zero-based), or True/False;
- ``sparse="auto"``: a dense ``X`` when the file lists at least half of all cells (LETOR files
  list all), CSR otherwise;
- ``parse_rows`` (shared with ``cache``) turns the parser's arrays into checked ``CSRRows``, and
  ``line_problem`` re-reads one bad line to name its field;
- feature indices are accepted up to ``MAX_FEATURE_INDEX`` = 2^20 (``max_feature_index=`` or
  ``STRUCTRANK_MAX_FEATURE_INDEX`` raise it, up to 2^31 - 1); a larger one is refused with its
  line.
"""

from __future__ import annotations

import gzip
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from structrank.atomic import atomic_open
from structrank.data import grammar
from structrank.data.dataset import RankingDataset
from structrank.data.labels import MAX_LABEL, first_non_finite, label_problem  # noqa: F401  (MAX_LABEL: qa.readers)
from structrank.files import check_not_utf16, read_bytes  # noqa: F401  (imported from here by others)
from structrank.errors import DataFormatError

#: Largest feature index accepted by default. A dataset is as wide as its largest index and a
#: learner keeps a weight (or a dense column) per index, so the limit is what bounds a model
#: and the memory of training: 2**20 float64 weights are 8 MiB, where one stray index of 10**8
#: in a 68-byte file made a 762 MB model. LETOR sets use at most a few hundred; a larger index
#: is a corrupt line or a hashed id, refused with its line. ``max_feature_index=`` or the
#: environment variable below raise it, up to ``INDEX_CEILING``.
MAX_FEATURE_INDEX = 2**20
MAX_FEATURE_INDEX_ENV = "STRUCTRANK_MAX_FEATURE_INDEX"
#: The most any setting allows: indices are held as int32 by the parser and the cache.
INDEX_CEILING = 2**31 - 1




def _decode_comment(comment: bytes) -> str:
    """A comment's text: UTF-8, a byte that is not UTF-8 held as a lone surrogate (Python's
    ``surrogateescape``, as ``os.fsdecode``): distinct bytes stay distinct (U+FFFD would make docids
    such as 'caf\\xe9' and 'caf\\xe8' equal) and writing with ``surrogateescape`` gives back the
    file's very bytes (``write_run``, ``write_letor``)."""
    return comment.decode("utf-8", errors="surrogateescape")


def feature_index_limit(value=None) -> int:
    """The largest feature index to accept: ``value``, else ``$STRUCTRANK_MAX_FEATURE_INDEX``,
    else ``MAX_FEATURE_INDEX``; ValueError naming the setting when it is not in 1..INDEX_CEILING."""
    name, text = "max_feature_index", value
    if value is None:
        name, text = MAX_FEATURE_INDEX_ENV, os.environ.get(MAX_FEATURE_INDEX_ENV)
        if text is None:
            return MAX_FEATURE_INDEX
    text = str(text).strip()
    if grammar.INTEGER.fullmatch(text.encode()) is None or not 1 <= int(text) <= INDEX_CEILING:
        raise ValueError(f"{name} must be an integer from 1 to {INDEX_CEILING}, got {text!r}")
    return int(text)


def line_problem(path, number, line: bytes, n_features=None, zero_based=False, max_index=MAX_FEATURE_INDEX):
    """Raise the DataFormatError that names the field of a bad line (the reference of the grammar).

    Besides a bare CR and malformed tokens (``grammar.NUMBER``, ``grammar.INTEGER``) this finds a qid outside
    64 bits, a feature index above ``max_index`` or above ``n_features``, and indices that do
    not increase. Returns when the line is well formed.
    """
    grammar.check_line_ends(path, line, number - 1)
    tokens = line.partition(b"#")[0].split()
    if not tokens:
        return
    grammar.number(path, number, tokens[0], "label")
    last = -1
    for position, token in enumerate(tokens[1:], start=2):
        name, colon, value = token.partition(b":")
        if not colon or not name or not value:
            raise DataFormatError(
                path, number, f"token {position} {token.decode(errors='replace')!r} is not 'index:value'"
            )
        if name == b"qid":
            if position != 2:
                raise DataFormatError(path, number, "qid must come right after the label", "qid")
            qid = grammar.integer(path, number, value, "qid")
            if not -(2**63) <= qid < 2**63:
                raise DataFormatError(path, number, f"qid {qid} does not fit in 64 bits", "qid")
            continue
        index = grammar.integer(path, number, name, f"feature index {name.decode(errors='replace')}")
        grammar.number(path, number, value, f"feature {index}")
        lowest = 1 if zero_based is False else 0
        if index < lowest:
            raise DataFormatError(path, number, f"feature index {index} < {lowest} (indices are {lowest}-based)",
                                  f"feature {index}")
        if index > max_index:
            raise DataFormatError(path, number, f"feature index {index} exceeds the largest supported index "
                                  f"{max_index} (a corrupt line? max_feature_index= or {MAX_FEATURE_INDEX_ENV} "
                                  f"raises the limit, up to {INDEX_CEILING})", f"feature {index}")
        if n_features is not None and index > n_features - lowest:
            raise DataFormatError(path, number, f"feature index {index} > n_features={n_features}",
                                  f"feature {index}")
        if index <= last:
            raise DataFormatError(
                path, number, f"feature index {index} after {last}: indices must increase", f"feature {index}"
            )
        last = index


def _line(raw: bytes, number: int) -> bytes:
    """Line ``number`` (1-based) of ``raw``."""
    newlines = np.flatnonzero(np.frombuffer(raw, dtype=np.uint8) == 10)
    start = 0 if number == 1 else int(newlines[number - 2]) + 1
    end = int(newlines[number - 1]) if number - 1 < newlines.size else len(raw)
    return raw[start:end]


def _bad_line(path, raw, number, n_features, zero_based, lines_before, max_index):
    """The DataFormatError of line ``number`` of ``raw`` (counted from ``lines_before`` in the file)."""
    try:
        line_problem(path, lines_before + number, _line(raw, number), n_features, zero_based, max_index)
    except DataFormatError as exc:
        return exc
    return DataFormatError(path, lines_before + number, "cannot be parsed as SVMlight/LETOR")


@dataclass(frozen=True)
class CSRRows:
    """Parsed rows as CSR arrays, before any SciPy matrix is built.

    Reading a dense file (every LETOR file) never needs ``scipy.sparse`` (its import is part of
    every command's start-up otherwise): ``toarray`` fills the matrix with NumPy alone, ``tocsr``
    imports SciPy when the matrix stays sparse. A file that lists every cell becomes its parsed
    values reshaped, with no copy; the buffer may hold a few unused entries past them (one per
    ``qid:``), as the parser sizes it by the colons it counts.
    """

    data: np.ndarray
    indices: np.ndarray
    indptr: np.ndarray
    shape: tuple

    @property
    def nnz(self) -> int:
        return int(self.indptr[-1])

    @property
    def dtype(self):
        return self.data.dtype

    def mostly_filled(self) -> bool:
        """The rule of ``sparse="auto"``: dense when the file lists at least half of all cells.

        A dense float64 matrix takes 8 bytes a cell, CSR 12 (float64 and int32 index) a listed
        cell, so from half full on the dense matrix is smaller, and dense rows train faster (no
        index indirection). LETOR files list every feature of every row (density 1).
        """
        cells = self.shape[0] * self.shape[1]
        return cells > 0 and self.nnz >= 0.5 * cells

    def toarray(self) -> np.ndarray:
        n, width = self.shape
        # Indices increase strictly within a row (the grammar): a file that lists every cell lists
        # 0..width-1 on each row, so its values already are the matrix, row after row (LETOR's case).
        if self.nnz == n * width:
            return self.data.reshape(n, width)
        X = np.zeros(self.shape, dtype=self.dtype)
        row_type = np.int32 if n < 2**31 else np.int64
        X[np.repeat(np.arange(n, dtype=row_type), np.diff(self.indptr)), self.indices] = self.data
        return X

    def tocsr(self):
        import scipy.sparse as sp  # deferred: SciPy, imported only when the matrix stays sparse

        return sp.csr_matrix((self.data, self.indices, self.indptr), shape=self.shape)


def parse_rows(path, raw: bytes, n_features=None, zero_based="auto", dtype=np.float64, lines_before=0,
               max_feature_index=None):
    """The data rows of SVMlight/LETOR bytes, checked: a dict with ``X`` (``CSRRows``), ``y`` (float
    labels), ``qid``, ``has_qid``, ``line_numbers`` (in the file: ``lines_before`` + the line in
    ``raw``) and ``spans`` (each row's comment and docid byte spans, -1 when absent).

    Parsing is ``structrank.data.svmlight``'s kernel; every problem is a DataFormatError naming
    the file, the line and the field. ``max_feature_index``: see ``feature_index_limit``.
    """
    from structrank.data import svmlight  # deferred: numba, loaded by the first read, not on import

    max_index = feature_index_limit(max_feature_index)
    try:
        rows = svmlight.parse(raw, max_index)
    except svmlight.ParseError as exc:
        raise _bad_line(path, raw, exc.line, n_features, zero_based, lines_before, max_index) from None
    line_numbers = rows["line_numbers"] + lines_before
    indices, indptr = rows["indices"], rows["indptr"]
    lowest, highest = rows["lowest"], rows["highest"]
    if zero_based == "auto":
        zero_based = lowest == 0
    if not zero_based and lowest == 0:
        _raise_at_entry(path, indptr, line_numbers, np.flatnonzero(indices == 0)[0], "feature index 0 < 1 "
                        "(indices are 1-based)", "feature 0")
    shift = 0 if zero_based else 1
    width = highest + 1 - shift if highest >= 0 else 0
    if n_features is not None:
        if width > n_features:
            entry = np.flatnonzero(indices >= n_features + shift)[0]
            index = int(indices[entry])
            _raise_at_entry(path, indptr, line_numbers, entry, f"feature index {index} > n_features={n_features}",
                            f"feature {index}")
        width = n_features
    if shift:
        indices -= 1
    index_type = np.int32 if indices.size < 2**31 else np.int64
    X = CSRRows(rows["values"].astype(dtype, copy=False), indices.astype(index_type, copy=False),
                indptr.astype(index_type, copy=False), (indptr.size - 1, width))
    _check_labels(path, rows["labels"], line_numbers)
    _check_finite(path, X, line_numbers)
    return {"X": X, "y": rows["labels"], "qid": rows["qids"], "has_qid": rows["has_qid"],
            "line_numbers": line_numbers, "spans": rows["spans"]}


def _raise_at_entry(path, indptr, line_numbers, entry, problem, field):
    row = int(np.searchsorted(indptr, entry, side="right") - 1)
    raise DataFormatError(path, int(line_numbers[row]), problem, field)


def _read_group_sizes(path, n_rows) -> np.ndarray:
    raw = read_bytes(path)
    check_not_utf16(path, raw)
    sizes = []
    for number, line in grammar.lines(path, raw):
        token = line.strip()
        if not token:
            continue
        size = grammar.integer(path, number, token, "group size")
        if size <= 0:
            raise DataFormatError(path, number, f"group size {size} is not positive", "group size")
        sizes.append(size)
    total = int(np.sum(sizes)) if sizes else 0
    if total != n_rows:
        raise DataFormatError(path, None, f"group sizes add up to {total}, but the data file has {n_rows} rows")
    return np.asarray(sizes, dtype=np.int64)


def query_file_for(path) -> Path | None:
    """The LightGBM-style group file beside ``path`` (``train.txt.query``; for ``train.txt.gz``
    also ``train.txt.gz.query``), if there is one. A folder of that name counts, so that reading
    it says "is a folder" rather than that there is no group file."""
    path = Path(path)
    candidates = [Path(str(path) + ".query")]
    if path.suffix == ".gz":
        candidates.append(path.with_suffix(".query"))  # train.txt.gz -> train.txt.query
    return next((c for c in candidates if c.exists()), None)


def read_letor(path, n_features=None, dtype=np.float64, query_file=None, zero_based="auto",
               sparse="auto", max_feature_index=None) -> RankingDataset:
    """Read a LETOR/SVMlight file (plain or .gz) into a RankingDataset.

    Parameters
    ----------
    path : str or Path
    n_features : int, optional
        Number of columns (so that train and test files agree); the largest index seen by default.
    dtype : numpy dtype of X (float64 by default, float32 to halve memory).
    query_file : str or Path, optional
        Group sizes, one per line (LightGBM's ``.query`` format). Used when the rows carry no
        qid; found beside ``path`` automatically when not given.
    zero_based : {"auto", True, False}
        Whether feature index 0 is the first column. "auto" (scikit-learn's rule): zero-based when
        some row uses index 0, else one-based as LETOR. A zero-based file whose rows never use 0
        reads one-based under "auto": give True to read train and test files alike.
    sparse : {"auto", True, False}
        The type of ``X``: "auto" gives a dense ndarray when the file lists at least half of all
        (row, column) cells, as LETOR files do (smaller than CSR from there on, and faster to
        train on), else CSR; True always CSR, False always dense.
    max_feature_index : int, optional
        The largest feature index accepted (``MAX_FEATURE_INDEX`` by default, or
        ``$STRUCTRANK_MAX_FEATURE_INDEX``); a larger one is refused with its line.

    Returns
    -------
    RankingDataset with ``X`` (see ``sparse``), int labels, qids, docids (from ``#docid = ...``; None when
    the file has none) and the comments.

    Raises
    ------
    DataFormatError naming the file, the line and the field of the first problem.

    Notes
    -----
    Rows whose query's rows are not contiguous are grouped stably by qid with a warning; the
    dataset's ``row_order`` then maps rows back to the file so scores are written in file order.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "test.txt")
    >>> with open(path, "w") as fh:
    ...     _ = fh.write("2 qid:7 1:0.5 2:0.1 #docid = GX004\\n0 qid:7 1:0.2 2:0.9 #docid = GX010\\n")
    >>> ds = read_letor(path)
    >>> ds.n_queries, ds.y.tolist(), ds.docids.tolist()
    (1, [2, 0], ['GX004', 'GX010'])
    """
    path = Path(path)
    raw = read_bytes(path)
    check_not_utf16(path, raw)
    rows = parse_rows(path, raw, n_features, zero_based, dtype, max_feature_index=max_feature_index)
    X, y, qid, has_qid, line_numbers, spans = (rows[k] for k in ("X", "y", "qid", "has_qid", "line_numbers", "spans"))
    if line_numbers.size == 0:
        raise DataFormatError(path, None, "holds no data rows (empty file)")
    if has_qid.any() and not has_qid.all():
        bad = int(np.flatnonzero(~has_qid)[0])
        raise DataFormatError(path, int(line_numbers[bad]), "no qid on this row while other rows have one", "qid")
    if not has_qid.any():
        group_path = Path(query_file) if query_file is not None else query_file_for(path)
        if group_path is None:
            raise DataFormatError(
                path, int(line_numbers[0]), "rows carry no qid and there is no FILE.query with group sizes beside it",
                "qid",
            )
        sizes = _read_group_sizes(group_path, X.shape[0])
        qid = np.repeat(np.arange(1, sizes.size + 1), sizes)

    docids = None
    if spans[0, 2] >= 0 or spans[-1, 2] >= 0:  # the first or the last row names its document
        missing = np.flatnonzero(spans[:, 2] < 0)
        if missing.size:
            raise DataFormatError(path, int(line_numbers[missing[0]]),
                                  "no '#docid = ...' comment while other rows have one", "docid")
        docids = _decode_spans(raw, spans[:, 2], spans[:, 3])
    comments = _decode_spans(raw, spans[:, 0], spans[:, 1])
    if sparse not in (True, False, "auto"):
        raise ValueError(f"sparse must be 'auto', True or False, got {sparse!r}")
    X = X.toarray() if sparse is False or (sparse == "auto" and X.mostly_filled()) else X.tocsr()
    return RankingDataset.from_arrays(X, y, qid, docids=docids, comments=comments, source=str(path),
                                      line_numbers=line_numbers)


def _decode_spans(raw: bytes, starts, ends) -> np.ndarray:
    """The text of byte spans (-1: empty) as an object array of str: UTF-8, else Latin-1 per span.

    When the file is ASCII (the common case) it is decoded once and sliced, which is several
    times faster than decoding each span.
    """
    out = np.empty(starts.size, dtype=object)
    starts, ends = starts.tolist(), ends.tolist()
    if raw.isascii():
        text = raw.decode("ascii")
        out[:] = [text[a:b] if a >= 0 else "" for a, b in zip(starts, ends)]
    else:
        out[:] = [_decode_comment(raw[a:b]) if a >= 0 else "" for a, b in zip(starts, ends)]
    return out


def _check_labels(path, y, line_numbers):
    problem = label_problem(y)
    if problem is not None:
        raise DataFormatError(path, int(line_numbers[problem[0]]), problem[1], "label")


def _check_finite(path, X, line_numbers):
    found = first_non_finite(X)
    if found is not None:
        row, column, value = found
        problem = f"value {float(value)} is not finite"
        if X.dtype == np.float32 and np.isinf(value):  # 1e300 in the file reads as inf in float32
            problem += " as float32, which holds at most 3.4e38"
        raise DataFormatError(path, int(line_numbers[row]), problem, f"feature {column + 1}")


def _format_value(value: float) -> str:
    # Shortest text that reads back to the same float; integers without a trailing '.0'.
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return repr(float(value))


def write_letor(path, dataset: RankingDataset, zero_features=None, query_file=False) -> None:
    """Write a dataset as a LETOR/SVMlight file (gzip when the name ends in .gz), atomically.

    Rows are written in the dataset's order with ``qid:`` and, when the dataset has them, the
    original comments (or ``#docid = ...``). Dense matrices are written with every feature, as
    LETOR does; sparse ones with their stored entries only (``zero_features=True`` forces all).
    ``query_file``: also write each query's row count, one per line, to ``PATH.query`` (True)
    or to the path given (LightGBM's and RankLib's group files).
    """
    import scipy.sparse as sp  # deferred: SciPy, not needed to read a dense file

    X = dataset.X
    dense = not sp.issparse(X) if zero_features is None else zero_features
    X = sp.csr_matrix(X)
    path = Path(path)
    lines = []
    for row in range(X.shape[0]):
        start, end = X.indptr[row], X.indptr[row + 1]
        if dense:
            values = np.zeros(X.shape[1])
            values[X.indices[start:end]] = X.data[start:end]
            pairs = enumerate(values, start=1)
        else:
            pairs = zip(X.indices[start:end] + 1, X.data[start:end])
        parts = [str(int(dataset.y[row])), f"qid:{dataset.qid[row]}"]
        parts += [f"{i}:{_format_value(v)}" for i, v in pairs]
        if dataset.comments is not None and dataset.comments[row]:
            parts.append("#" + str(dataset.comments[row]))
        elif dataset.docids is not None:
            parts.append(f"#docid = {dataset.docids[row]}")
        lines.append(" ".join(parts))
    # surrogateescape: a comment's bytes that were not UTF-8 are written back as they were read
    text = ("\n".join(lines) + "\n").encode("utf-8", errors="surrogateescape")
    if path.name.endswith(".gz"):
        text = gzip.compress(text, mtime=0)
    with atomic_open(path, "wb") as fh:
        fh.write(text)
    if query_file:
        sizes = np.diff(dataset.offsets)
        with atomic_open(Path(str(path) + ".query") if query_file is True else Path(query_file), "w") as fh:
            fh.write("".join(f"{int(n)}\n" for n in sizes))


def parse_score(path, number, text, field="score") -> float:
    """``text`` (str or bytes) as a finite float under ``grammar.NUMBER``, or DataFormatError
    naming the file, the line and the field."""
    token = text.encode("utf-8", errors="surrogateescape") if isinstance(text, str) else text
    return grammar.finite(path, number, token, field)


def read_scores(path, n_rows=None, data_path=None) -> np.ndarray:
    """Read a scores file: one float per line, in the order of the data file's rows.

    Blank lines at the end are ignored; a blank line between scores is an error (a score is
    missing, and every later score would be paired with the wrong row). Raises DataFormatError
    for such a line, a line that is not a finite number, an empty or UTF-16 file, or when
    ``n_rows`` is given and the count differs (naming ``data_path`` in the message).
    """
    raw = read_bytes(path)
    check_not_utf16(path, raw)
    lines = [line for _, line in grammar.lines(path, raw)]
    while lines and lines[-1].strip() == b"":
        lines = lines[:-1]  # the final newline, and blank lines an editor left at the end
    if not lines:
        raise DataFormatError(path, None, "holds no scores (empty file)")
    scores = np.empty(len(lines), dtype=np.float64)
    for number, line in enumerate(lines, start=1):
        token = line.strip()
        if not token:
            raise DataFormatError(path, number, "empty line where a score was expected", "score")
        scores[number - 1] = parse_score(path, number, token)
    if n_rows is not None and scores.shape[0] != n_rows:
        against = f" {data_path}" if data_path is not None else " the data"
        raise DataFormatError(path, None, f"has {scores.shape[0]} scores but{against} has {n_rows} rows")
    return scores


def write_scores(path, scores) -> None:
    """Write one score per line (shortest round-trip text), atomically."""
    scores = np.asarray(scores, dtype=np.float64).ravel()
    with atomic_open(path, "w") as fh:
        fh.write("".join(f"{float(s)!r}\n" for s in scores))
