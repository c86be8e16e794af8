"""The SVMlight/LETOR parser for small files: Python's C string methods and NumPy, no numba.

Why a second parser: numba costs about half a second before its first kernel runs (importing it,
then loading the cached machine code), while a LETOR test file of a few MB parses here in tens of
milliseconds. ``structrank evaluate`` and ``predict`` on such a file, whose other work takes a
tenth of a second, would spend most of their time waiting for numba (issue 22's 1 s bar).

It gives what ``svmlight.parse`` gives, array for array, and raises ``ParseError`` at the same
line: the grammar is ``grammar.NUMBER``/``INTEGER`` (docs/GRAMMAR.md), checked per line for the
label and qid, and for all ``index:value`` tokens at once by ``_convert``; values are converted by
``float`` (correctly rounded, as the kernel's fast path and its slow path are).
``tests/test_svmlight_small.py`` checks the two parsers agree on generated files and on the
LETOR files. ``letor.parse_rows`` picks this one below ``SMALL_BYTES``.
"""

from __future__ import annotations

import re

import numpy as np

from structrank.data.grammar import _BARE_CR, INTEGER, NUMBER

#: Below this many bytes ``letor.parse_rows`` parses in Python (about 40 MB/s here, against
#: numba's 0.5 s fixed cost and about 300 MB/s after it): the two meet near 20 MB, and a few MB
#: keeps a margin for files read after numba is already loaded (``train`` reads its vali file
#: after the oracles have loaded it).
SMALL_BYTES = 4 << 20

_INT64_MAX = 2**63 - 1
_FEATURE = rb"[+-]?[0-9]+:" + NUMBER.pattern
_PAIRS = re.compile(rb"[^: ]+:[^: ]+(?: [^: ]+:[^: ]+)*")  # tokens joined by spaces, each one colon inside
_ONE_FEATURE = re.compile(_FEATURE)
_SPACE = b" \t\n\v\f\r"  # bytes.split()'s white space, the kernel's _space
_DOCID = re.compile(rb"docid[ \t\n\v\f\r]*=[ \t\n\v\f\r]*([^ \t\n\v\f\r]+)")


class ParseError(Exception):
    """The parser stopped at ``line`` (1-based) on a token it does not accept."""

    def __init__(self, line, row):
        super().__init__(f"line {line}")
        self.line, self.row = line, row


def parse(raw: bytes, max_index: int):
    """Parse SVMlight/LETOR bytes: the dict of ``svmlight.parse`` (see there), or ParseError."""
    bad = []  # (line, row) of every problem found; the first in file order is raised
    cr = _BARE_CR.search(raw)
    cr_line = raw.count(b"\n", 0, cr.start()) + 1 if cr is not None else None
    labels, qids, has_qid, line_numbers, line_starts, spans, counts, tokens = [], [], [], [], [], [], [], []
    start = 0
    for number, line in enumerate(raw.split(b"\n"), start=1):
        line_start, start = start, start + len(line) + 1
        if number == cr_line:
            bad.append((number, len(labels)))
            break
        data, hash_, comment = line.partition(b"#")
        fields = data.split()
        if not fields:
            continue
        row = len(labels)
        label, rest = fields[0], fields[1:]
        if NUMBER.fullmatch(label) is None:
            bad.append((number, row))
            break
        qid = 0
        if rest and rest[0].startswith(b"qid:"):
            token = rest[0][4:]
            if INTEGER.fullmatch(token) is None or not _in_range(token, -_INT64_MAX - 1, _INT64_MAX):
                bad.append((number, row))
                break
            qid, rest = int(token), rest[1:]
        labels.append(float(label))
        qids.append(qid)
        has_qid.append(len(rest) < len(fields) - 1)
        line_numbers.append(number)
        line_starts.append(line_start)
        spans.append(_spans(comment, line_start + len(data) + 1) if hash_ else (-1, -1, -1, -1))
        counts.append(len(rest))
        tokens += rest
    n_rows = len(labels)
    indptr = np.zeros(n_rows + 1, np.int64)
    np.cumsum(counts, out=indptr[1:])
    line_numbers = np.array(line_numbers, dtype=np.int64)
    indices, values = _features(tokens, indptr, line_numbers, max_index, bad)
    if bad:
        line, row = min(bad)
        raise ParseError(line, row)
    highest = int(indices.max()) if indices.size else -1
    return {"labels": np.array(labels, dtype=np.float64), "qids": np.array(qids, dtype=np.int64),
            "has_qid": np.array(has_qid, dtype=np.bool_), "line_numbers": line_numbers,
            "line_starts": np.array(line_starts, dtype=np.int64),
            "spans": np.array(spans, dtype=np.int64).reshape(n_rows, 4), "indptr": indptr,
            "indices": indices.astype(np.int32), "values": values,
            "lowest": int(indices.min()) if indices.size else -1, "highest": highest}


def _in_range(integer: bytes, lowest, highest) -> bool:
    """Whether an ``INTEGER`` lies in [lowest, highest] (without ``int`` of thousands of digits,
    which Python refuses)."""
    return len(integer.lstrip(b"+-").lstrip(b"0")) <= 19 and lowest <= int(integer) <= highest


def _spans(comment: bytes, at: int):
    """(comment start, end, docid start, end) in the file's bytes: the comment stripped of white
    space, the docid ``docid = ID`` in it (-1, -1 without one)."""
    text = comment.lstrip(_SPACE)
    c0 = at + len(comment) - len(text)
    text = text.rstrip(_SPACE)
    docid = _DOCID.search(text)
    if docid is None:
        return c0, c0 + len(text), -1, -1
    return c0, c0 + len(text), c0 + docid.start(1), c0 + docid.end(1)


def _features(tokens, indptr, line_numbers, max_index, bad):
    """(indices as int64, values) of the ``index:value`` tokens; appends (line, row) to ``bad`` for
    the first malformed token, index out of [0, max_index] or index not above the one before."""
    converted, first_bad = _convert(tokens), len(tokens)
    if converted is None:  # a token outside the common alphabet, or malformed: the grammar, token by token
        first_bad = next((i for i, token in enumerate(tokens) if _ONE_FEATURE.fullmatch(token) is None
                          or not _in_range(token.partition(b":")[0], 0, max_index)), first_bad)
        pairs = [token.partition(b":") for token in tokens[:first_bad]]
        converted = (np.fromiter((int(name) for name, _, _ in pairs), dtype=np.int64, count=len(pairs)),
                     np.fromiter((float(value) for _, _, value in pairs), dtype=np.float64, count=len(pairs)))
    indices, values = converted
    first_of_row = np.zeros(len(tokens) + 1, dtype=bool)
    first_of_row[indptr] = True
    wrong = (indices < 0) | (indices > max_index)
    wrong[1:] |= ~first_of_row[1:indices.size] & (indices[1:] <= indices[:-1])
    if wrong.any() or first_bad < len(tokens):  # the first problem in file order
        entry = int(np.argmax(wrong)) if wrong.any() else first_bad
        row = int(np.searchsorted(indptr, entry, side="right") - 1)
        bad.append((int(line_numbers[row]), row))
    return indices, values


def _convert(tokens):
    """(indices, values) when every token is ``digits:number`` over the alphabet LETOR files use,
    else None. Why this is the grammar: ``int`` on ``[0-9+-]`` accepts exactly ``INTEGER``, and
    ``float`` on ``[0-9.eE+-]`` exactly ``NUMBER``'s numeric part (their other extensions, such as
    underscores, white space and ``inf``, need characters outside these alphabets), so converting
    checks the grammar in C, with no regular expression per token."""
    text = b" ".join(tokens)
    if not tokens:
        return np.zeros(0, np.int64), np.zeros(0, np.float64)
    if _PAIRS.fullmatch(text) is None:
        return None
    parts = text.replace(b":", b" ").split()
    names, values = parts[0::2], parts[1::2]
    if (max(map(len, names)) > 18 or b"".join(names).translate(None, b"0123456789+-")
            or b"".join(values).translate(None, b"0123456789.eE+-")):
        return None  # maybe past int64, or letters (inf, nan, 1_5, 0x10, ...)
    try:
        return (np.fromiter(map(int, names), dtype=np.int64, count=len(names)),
                np.fromiter(map(float, values), dtype=np.float64, count=len(values)))
    except ValueError:
        return None
