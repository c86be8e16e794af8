"""The SVMlight/LETOR text parser: one numba pass over a file's bytes.

Why not scikit-learn's ``load_svmlight_file``: importing scikit-learn costs seconds (``structrank
evaluate`` must start in well under one), its parser with ``query_id=True`` is much slower than
without, which is itself slower than ours (docs/BENCHMARKS.md, "Start-up and reading", times
``read_letor`` beside it up to 10^7 rows), and it reports a bad line without its number.

Grammar of a line (docs/GRAMMAR.md; the reference is ``letor.line_problem``, which names the
field of a bad line): ``label [qid:Q] index:value ... [# comment]`` with ASCII whitespace
between tokens, blank lines and ``#`` lines skipped. Indices and qids are ``grammar.INTEGER``;
labels and values ``grammar.NUMBER``, which ``is_number`` mirrors here; a bare CR stops the
kernel at its line as ``grammar.check_line_ends`` would (in the kernel, so that the first problem
in file order is the one reported).

Numbers are exact. A decimal with at most 18 significant digits and a power of ten within
10^+-22 whose digits fit in 53 bits is one correctly rounded IEEE multiplication or division of
two exact doubles (Clinger's fast path), which is every number LETOR's files hold. Any other
token (17-digit ``repr`` floats, ``1e-300``, ``nan``) is marked *slow*: its value is NaN here and
its byte offset is recorded; ``parse`` then converts all slow tokens at once with NumPy's own
string-to-float conversion (correctly rounded, as ``float``) and writes them back.

Rows are sized by the data lines counted first (blank and comment lines allocate nothing).
"""

from __future__ import annotations

import numpy as np

from structrank.data.numbers import INT64_MAX, POW10, WORDS, decimal, integer, is_number, space
from structrank.numba_cache import njit

# Error codes of the kernel: the line is then re-read in Python for the message.
OK, BAD_TOKEN = 0, 1

@njit(cache=True, nogil=True)
def _grow(a, need):
    if need <= a.shape[0]:
        return a
    b = np.empty(max(need, 2 * a.shape[0]), dtype=a.dtype)
    b[:a.shape[0]] = a
    return b


@njit(cache=True, nogil=True)
def _docid(buf, start, end):
    """The span of ``docid\\s*=\\s*(\\S+)``'s group in buf[start:end], or (-1, -1)."""
    p = start
    while p + 5 <= end:
        if buf[p] == 100 and buf[p + 1] == 111 and buf[p + 2] == 99 and buf[p + 3] == 105 and buf[p + 4] == 100:
            q = p + 5
            while q < end and space(buf[q]):
                q += 1
            if q < end and buf[q] == 61:  # =
                q += 1
                while q < end and space(buf[q]):
                    q += 1
                if q < end:
                    r = q
                    while r < end and not space(buf[r]):
                        r += 1
                    return q, r
        p += 1
    return -1, -1


@njit(cache=True, nogil=True)
def _count_rows(buf):
    """(data rows, colons before '#', offset of the first bare CR or -1): the sizes to allocate, and
    where ``grammar.check_line_ends`` would stop. Blank and comment lines are not counted, so a file
    of newlines (a gzip of them expands 1000-fold) allocates nothing per line."""
    rows = 0
    colons = 0
    first_cr = -1  # a CR not before LF nor ending the file
    content = False  # the line has a character before '#' that is not white space
    comment = False
    n = buf.shape[0]
    for i in range(n):
        b = buf[i]
        if b == 13 and first_cr < 0 and i + 1 < n and buf[i + 1] != 10:
            first_cr = i
        if b == 10:
            rows += content
            content = False
            comment = False
        elif comment:
            continue
        elif b == 35:  # '#'
            comment = True
        elif b == 58:  # ':'
            colons += 1
            content = True
        elif not space(b):
            content = True
    return rows + content, colons, first_cr


@njit(cache=True, nogil=True)
def _parse(buf, max_index, pow10, words):
    n = buf.shape[0]
    n_rows, n_colons, first_cr = _count_rows(buf)
    labels = np.empty(n_rows, np.float64)
    qids = np.zeros(n_rows, np.int64)
    has_qid = np.zeros(n_rows, np.bool_)
    line_numbers = np.empty(n_rows, np.int64)
    line_starts = np.empty(n_rows, np.int64)
    spans = np.full((n_rows, 4), -1, np.int64)  # comment start, end; docid start, end
    indptr = np.zeros(n_rows + 1, np.int64)
    indices = np.empty(n_colons, np.int32)
    values = np.empty(n_colons, np.float64)
    slow = np.empty(64, np.int64)  # (entry or -1 - row, byte offset) pairs, flattened
    n_slow = 0
    row = 0
    nnz = 0
    lowest = max_index  # smallest feature index seen
    highest = -1
    pos = 0
    line = 0
    while pos < n:
        line += 1
        end = pos
        while end < n and buf[end] != 10:
            end += 1
        if pos <= first_cr < end:  # the line of the first bare CR: grammar.check_line_ends refuses it
            return BAD_TOKEN, line, row, nnz, n_slow, lowest, highest, labels, qids, has_qid, line_numbers, \
                line_starts, spans, indptr, indices, values, slow
        data_end = pos
        while data_end < end and buf[data_end] != 35:  # '#'
            data_end += 1
        p = pos
        while p < data_end and space(buf[p]):
            p += 1
        if p == data_end:  # blank, or a comment line
            pos = end + 1
            continue
        # the label
        t = p
        while t < data_end and not space(buf[t]):
            t += 1
        value, ok = decimal(buf, p, t, pow10)
        if not ok and not is_number(buf, p, t, words):
            return BAD_TOKEN, line, row, nnz, n_slow, lowest, highest, labels, qids, has_qid, line_numbers, \
                line_starts, spans, indptr, indices, values, slow
        if not ok:
            slow = _grow(slow, 2 * n_slow + 2)
            slow[2 * n_slow] = -1 - row
            slow[2 * n_slow + 1] = p
            n_slow += 1
            value = np.nan
        labels[row] = value
        line_numbers[row] = line
        line_starts[row] = pos
        position = 1  # tokens read on this line
        last = -1
        p = t
        while True:
            while p < data_end and space(buf[p]):
                p += 1
            if p == data_end:
                break
            t = p
            colon = -1
            while t < data_end and not space(buf[t]):
                if buf[t] == 58 and colon < 0:
                    colon = t
                t += 1
            position += 1
            if colon <= p or colon == t - 1:
                return BAD_TOKEN, line, row, nnz, n_slow, lowest, highest, labels, qids, has_qid, line_numbers, \
                    line_starts, spans, indptr, indices, values, slow
            if colon - p == 3 and buf[p] == 113 and buf[p + 1] == 105 and buf[p + 2] == 100:  # qid
                q, ok = integer(buf, colon + 1, t, INT64_MAX)
                if not ok or position != 2:
                    return BAD_TOKEN, line, row, nnz, n_slow, lowest, highest, labels, qids, has_qid, \
                        line_numbers, line_starts, spans, indptr, indices, values, slow
                qids[row] = q
                has_qid[row] = True
            else:
                index, ok = integer(buf, p, colon, max_index)
                if not ok or index < 0 or index <= last:
                    return BAD_TOKEN, line, row, nnz, n_slow, lowest, highest, labels, qids, has_qid, \
                        line_numbers, line_starts, spans, indptr, indices, values, slow
                last = index
                lowest = min(lowest, index)
                highest = max(highest, index)
                value, ok = decimal(buf, colon + 1, t, pow10)
                if not ok and not is_number(buf, colon + 1, t, words):
                    return BAD_TOKEN, line, row, nnz, n_slow, lowest, highest, labels, qids, has_qid, \
                        line_numbers, line_starts, spans, indptr, indices, values, slow
                if not ok:
                    slow = _grow(slow, 2 * n_slow + 2)
                    slow[2 * n_slow] = nnz
                    slow[2 * n_slow + 1] = colon + 1
                    n_slow += 1
                    value = np.nan
                indices[nnz] = index
                values[nnz] = value
                nnz += 1
            p = t
        if data_end < end:  # the comment, stripped
            c0, c1 = data_end + 1, end
            while c0 < c1 and space(buf[c0]):
                c0 += 1
            while c1 > c0 and space(buf[c1 - 1]):
                c1 -= 1
            spans[row, 0], spans[row, 1] = c0, c1
            spans[row, 2], spans[row, 3] = _docid(buf, c0, c1)
        row += 1
        indptr[row] = nnz
        pos = end + 1
    return OK, line, row, nnz, n_slow, lowest, highest, labels, qids, has_qid, line_numbers, line_starts, spans, \
        indptr, indices, values, slow


@njit(cache=True, nogil=True)
def _tokens(buf, starts, width):
    """The tokens starting at ``starts`` (up to whitespace, '#' or end), as rows of a byte matrix."""
    out = np.zeros((starts.shape[0], width), np.uint8)
    for i in range(starts.shape[0]):
        p = starts[i]
        j = 0
        while p < buf.shape[0] and not space(buf[p]) and buf[p] != 35 and j < width:
            out[i, j] = buf[p]
            p += 1
            j += 1
    return out


@njit(cache=True, nogil=True)
def _token_width(buf, starts):
    width = 1
    for i in range(starts.shape[0]):
        p = starts[i]
        while p < buf.shape[0] and not space(buf[p]) and buf[p] != 35:
            p += 1
        width = max(width, p - starts[i])
    return width


class ParseError(Exception):
    """The kernel stopped at ``line`` (1-based) on a token it does not accept."""

    def __init__(self, line, row):
        super().__init__(f"line {line}")
        self.line, self.row = line, row


def parse(raw: bytes, max_index: int):
    """Parse SVMlight/LETOR bytes.

    Returns a dict of arrays: ``labels`` (float64), ``qids`` (int64), ``has_qid``, ``line_numbers``,
    ``line_starts`` (byte offset of each row's line), ``spans`` (comment start/end, docid start/end;
    -1 when absent), ``indptr`` (int64), ``indices`` (int32, as written: not yet shifted to
    0-based), ``values`` (float64), ``lowest``/``highest`` index seen (-1 when none).

    Raises ParseError (line, row) for a token the grammar does not accept or a label or value
    that is not a number.
    """
    buf = np.frombuffer(raw, dtype=np.uint8)
    (status, line, rows, nnz, n_slow, lowest, highest, labels, qids, has_qid, line_numbers, line_starts, spans,
     indptr, indices, values, slow) = _parse(buf, max_index, POW10, WORDS)
    if status != OK:
        raise ParseError(int(line), int(rows))
    if n_slow:
        bad_row = _convert_slow(buf, slow[:2 * n_slow].reshape(-1, 2), labels, values, indptr[:rows + 1])
        if bad_row is not None:
            raise ParseError(int(line_numbers[bad_row]), bad_row)
    return {"labels": labels[:rows], "qids": qids[:rows], "has_qid": has_qid[:rows],
            "line_numbers": line_numbers[:rows], "line_starts": line_starts[:rows], "spans": spans[:rows],
            "indptr": indptr[:rows + 1], "indices": indices[:nnz], "values": values[:nnz],
            "lowest": int(lowest) if highest >= 0 else -1, "highest": int(highest)}


def _convert_slow(buf, slow, labels, values, indptr):
    """Convert the slow tokens with NumPy (correctly rounded, as ``float``) and write them back;
    the row of the first one that is not a number, else None."""
    starts = np.ascontiguousarray(slow[:, 1])
    width = _token_width(buf, starts)
    text = _tokens(buf, starts, width).view(f"S{width}").ravel()
    try:
        converted = text.astype(np.float64)
    except ValueError:  # find the first bad one for the message
        for i, token in enumerate(text):
            try:
                float(token)
            except ValueError:
                where = int(slow[i, 0])
                return -1 - where if where < 0 else int(np.searchsorted(indptr, where, side="right") - 1)
        raise
    where = slow[:, 0]
    is_label = where < 0
    labels[-1 - where[is_label]] = converted[is_label]
    values[where[~is_label]] = converted[~is_label]
    return None
