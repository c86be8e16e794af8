"""The numba kernels of the TREC path's fast lane (``structrank.metrics.trec``): qrels and run lines
read from their bytes, a query's documents checked for repeats, the run joined with the qrels and
ranked as trec_eval ranks it.

A kernel never explains a problem: it answers ``IRREGULAR`` (or False) and ``trec`` hands the input
to its strict reader, which names the file, the line and the field. So the kernels accept only what
they can prove the strict reader reads to the same values: fields split at ``bytes.split()``'s white
space, CRLF line ends (a bare CR is irregular), a rel that is ``grammar.INTEGER`` within int64, a
score that is ``grammar.NUMBER`` (read exactly by ``numbers.decimal``, or marked *slow* for ``float``).

Documents are spans of a byte buffer (a file's bytes, or the docnos of a dict joined by LF), compared
as bytes: for UTF-8 text that is code point order, the order of Python's ``str`` and of trec_eval's
``strcmp``. Each query's documents are found by an open-addressing hash table of its own, sized to
the query, so that the table stays in cache.
"""

from __future__ import annotations

import numpy as np

from structrank.data.numbers import INT64_MAX, decimal, integer, is_number, space
from structrank.metrics.query_loops import stable_sort_desc
from structrank.numba_cache import njit

OK, IRREGULAR = 0, 1


@njit(cache=True, nogil=True)
def _same_bytes(buf_a, a0, a1, buf_b, b0, b1):
    if a1 - a0 != b1 - b0:
        return False
    for i in range(a1 - a0):
        if buf_a[a0 + i] != buf_b[b0 + i]:
            return False
    return True


@njit(cache=True, nogil=True)
def _grown(a, n):
    """``a`` with room for twice its rows, its first ``n`` rows kept."""
    b = np.empty((2 * a.shape[0],) + a.shape[1:], a.dtype)
    b[:n] = a[:n]
    return b


@njit(cache=True, nogil=True)
def read_lines(buf, capacity, n_fields, value_field, integers, pow10, words):
    """The fields of every line of ``buf`` that holds one: ``(status, rows, docno start, docno end,
    integers, floats, slow numbers, segments)``, in one pass over the bytes.

    Field 2 (the docno) is a span of ``buf``; field ``value_field`` is read as an integer (``integers``:
    a qrels rel) or a number (a run score; ``slow`` holds the row and span of each number the exact fast
    path leaves to ``float``, its value NaN until then). ``segments`` holds the first row and the qid's
    span of each run of rows with the same qid bytes. ``capacity`` bounds the rows (the caller's count
    of lines). ``IRREGULAR`` (and nothing else of use) for a bare CR, a line of another field count, a
    rel outside INTEGER or int64, or a score outside NUMBER."""
    n = buf.shape[0]
    doc_start = np.empty(capacity, np.int64)
    doc_end = np.empty(capacity, np.int64)
    ints = np.zeros(capacity if integers else 0, np.int64)
    floats = np.zeros(0 if integers else capacity, np.float64)
    slow = np.empty((16, 3), np.int64)  # (row, start, end)
    segments = np.empty((16, 3), np.int64)  # (first row, qid start, qid end)
    row = n_slow = n_segments = 0
    pos = 0
    while pos < n:
        field = 0
        q0 = q1 = v0 = v1 = 0
        while True:  # the fields of one line
            while pos < n:
                b = buf[pos]
                if b == 10 or not space(b):
                    break
                if b == 13 and pos + 1 < n and buf[pos + 1] != 10:  # a bare CR (grammar.check_line_ends)
                    return IRREGULAR, row, doc_start, doc_end, ints, floats, slow[:0], segments[:0]
                pos += 1
            if pos == n or buf[pos] == 10:
                break
            t = pos
            while t < n and not space(buf[t]):
                t += 1
            if field == 0:
                q0, q1 = pos, t
            elif field == 2:
                doc_start[row], doc_end[row] = pos, t
            elif field == value_field:
                v0, v1 = pos, t
            elif field == n_fields:
                return IRREGULAR, row, doc_start, doc_end, ints, floats, slow[:0], segments[:0]
            field += 1
            pos = t
        pos += 1  # past the LF
        if field == 0:
            continue
        if field != n_fields or row == capacity:
            return IRREGULAR, row, doc_start, doc_end, ints, floats, slow[:0], segments[:0]
        if integers:
            value, ok = integer(buf, v0, v1, INT64_MAX)
            if not ok:
                return IRREGULAR, row, doc_start, doc_end, ints, floats, slow[:0], segments[:0]
            ints[row] = value
        else:
            number, ok = decimal(buf, v0, v1, pow10)
            if not ok:
                if not is_number(buf, v0, v1, words):
                    return IRREGULAR, row, doc_start, doc_end, ints, floats, slow[:0], segments[:0]
                if n_slow == slow.shape[0]:
                    slow = _grown(slow, n_slow)
                slow[n_slow, 0], slow[n_slow, 1], slow[n_slow, 2] = row, v0, v1
                n_slow += 1
                number = np.nan
            floats[row] = number
        if n_segments == 0 or not _same_bytes(buf, segments[n_segments - 1, 1], segments[n_segments - 1, 2], buf, q0,
                                              q1):
            if n_segments == segments.shape[0]:
                segments = _grown(segments, n_segments)
            segments[n_segments, 0], segments[n_segments, 1], segments[n_segments, 2] = row, q0, q1
            n_segments += 1
        row += 1
    return OK, row, doc_start[:row], doc_end[:row], ints[:row], floats[:row], slow[:n_slow], segments[:n_segments]


@njit(cache=True, nogil=True)
def pack(buf, start, end):
    """The spans of ``buf`` copied one after the other, each followed by LF."""
    size = 0
    for i in range(start.shape[0]):
        size += end[i] - start[i] + 1
    out = np.empty(size, np.uint8)
    p = 0
    for i in range(start.shape[0]):
        for j in range(start[i], end[i]):
            out[p] = buf[j]
            p += 1
        out[p] = 10
        p += 1
    return out


@njit(cache=True, nogil=True)
def group(q, n_queries):
    """(order, offsets): the entries sorted by query, stably (a counting sort); query i's entries are
    ``order[offsets[i]:offsets[i + 1]]``."""
    offsets = np.zeros(n_queries + 1, np.int64)
    for i in range(q.shape[0]):
        offsets[q[i] + 1] += 1
    for i in range(n_queries):
        offsets[i + 1] += offsets[i]
    fill = offsets[:-1].copy()
    order = np.empty(q.shape[0], np.int64)
    for i in range(q.shape[0]):
        order[fill[q[i]]] = i
        fill[q[i]] += 1
    return order, offsets


@njit(cache=True, nogil=True, inline="always")
def _hash(buf, start, end):
    h = np.uint64(14695981039346656037)  # FNV-1a
    for i in range(start, end):
        h = (h ^ np.uint64(buf[i])) * np.uint64(1099511628211)
    return h


@njit(cache=True, nogil=True)
def _slots(n):
    """A hash table's slots for n entries: a power of two, at least 2n (so that probes stay short)."""
    size = 2
    while size < 2 * n:
        size *= 2
    return size


@njit(cache=True, nogil=True)
def _table_size(offsets):
    """The slots of the largest query of ``group``'s offsets."""
    most = 0
    for i in range(offsets.shape[0] - 1):
        most = max(most, offsets[i + 1] - offsets[i])
    return _slots(most)


@njit(cache=True, nogil=True)
def _fill(table, order, a, b, start, end, buf):
    """Put the entries order[a:b] into ``table``, cleared first (its first ``_slots(b - a)`` slots).
    Returns the mask of the slots used, or -1 when two of the entries have the same bytes."""
    mask = _slots(b - a) - 1
    table[:mask + 1] = -1
    for i in range(a, b):
        e = order[i]
        slot = np.int64(_hash(buf, start[e], end[e]) & np.uint64(mask))
        while table[slot] >= 0:
            if _same_bytes(buf, start[table[slot]], end[table[slot]], buf, start[e], end[e]):
                return -1
            slot = (slot + 1) & mask
        table[slot] = e
    return mask


@njit(cache=True, nogil=True)
def _find(table, mask, start, end, buf, key_buf, key_start, key_end):
    """The entry of ``table`` (``_fill``) whose bytes are key_buf[key_start:key_end], or -1."""
    slot = np.int64(_hash(key_buf, key_start, key_end) & np.uint64(mask))
    while table[slot] >= 0:
        e = table[slot]
        if _same_bytes(buf, start[e], end[e], key_buf, key_start, key_end):
            return e
        slot = (slot + 1) & mask
    return -1


@njit(cache=True, nogil=True)
def all_distinct(order, offsets, start, end, buf):
    """Whether each query names each document once (``group``'s order and offsets)."""
    table = np.empty(_table_size(offsets), np.int64)
    for q in range(offsets.shape[0] - 1):
        if _fill(table, order, offsets[q], offsets[q + 1], start, end, buf) < 0:
            return False
    return True


@njit(cache=True, nogil=True)
def rank_run(queries, n_queries, run_q, run_start, run_end, run_buf, scores, qrels_q, qrels_start, qrels_end,
             qrels_buf, qrels_labels):
    """A run judged by qrels and ranked as trec_eval ranks it: ``(status, entries, offsets, labels, pooled)``.

    ``run_q`` and ``qrels_q`` number each entry's query (0 to ``n_queries`` - 1, the same numbers on both
    sides); the qrels name each document of a query once (``all_distinct``). ``labels`` holds each run
    entry's label in the qrels, -1 where they do not judge it, and ``pooled`` whether they name it (a
    label of -1 in the qrels is pooled, unlike a document they lack: infAP and Judged@k tell them apart);
    ``entries`` the run entries of ``queries``
    (query numbers, in the order wanted), each query's ranked by ``scores`` (C floats), ties by docno
    descending, query i's at ``offsets[i]:offsets[i + 1]``. ``IRREGULAR`` when a query of the run names
    a document twice."""
    run_order, run_offsets = group(run_q, n_queries)
    qrels_order, qrels_offsets = group(qrels_q, n_queries)
    labels = np.full(run_q.shape[0], -1, np.int64)
    pooled = np.zeros(run_q.shape[0], np.bool_)
    run_table = np.empty(_table_size(run_offsets), np.int64)
    for q in range(n_queries):
        mask = _fill(run_table, run_order, run_offsets[q], run_offsets[q + 1], run_start, run_end, run_buf)
        if mask < 0:
            return IRREGULAR, run_order[:0], run_offsets[:1], labels, pooled
        if run_offsets[q] == run_offsets[q + 1]:
            continue
        for i in range(qrels_offsets[q], qrels_offsets[q + 1]):
            j = qrels_order[i]
            e = _find(run_table, mask, run_start, run_end, run_buf, qrels_buf, qrels_start[j], qrels_end[j])
            if e >= 0:
                labels[e] = qrels_labels[j]
                pooled[e] = True
    offsets = np.zeros(queries.shape[0] + 1, np.int64)
    for i in range(queries.shape[0]):
        q = queries[i]
        offsets[i + 1] = offsets[i] + run_offsets[q + 1] - run_offsets[q]
    entries = np.empty(offsets[-1], np.int64)
    buffer = np.empty(offsets[-1], np.int64)
    for i in range(queries.shape[0]):
        q = queries[i]
        entries[offsets[i]:offsets[i + 1]] = run_order[run_offsets[q]:run_offsets[q + 1]]
        stable_sort_desc(entries, offsets[i], offsets[i + 1], (scores, run_start, run_end, run_buf), buffer)
    return OK, entries, offsets, labels, pooled
