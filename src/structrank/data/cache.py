"""A LETOR file converted once into memory-mapped .npy arrays, for files too big to read whole.

``read_letor`` holds the text, its parse and the dataset in memory at once, which does not
fit for the 10-million-row files of MSLR-WEB30K or Istella. ``build_letor_cache`` streams the
file ``chunk_rows`` lines at a time through the same parser and checks, appending each chunk to
on-disk arrays, so memory stays proportional to one chunk. ``open_letor_cache`` then maps the
arrays (``np.load(mmap_mode="r")``): opening is instant, and the operating system pages in only
the rows a learner touches.

The cache is a folder of 1-D .npy files and a ``manifest.json``::

    data.npy       float32  CSR values of X            (nnz,)
    indices.npy    int32    CSR column of each value   (nnz,)       0-based
    indptr.npy     int64    CSR row boundaries         (n_rows + 1,)
    y.npy          int32    relevance labels           (n_rows,)
    offsets.npy    int64    query boundaries           (n_queries + 1,)
    query_ids.npy  int64    qid of each query          (n_queries,)

Comments (``#docid = ...``) are not stored. The cache is built in a temporary sibling folder and renamed into place when complete, so an
interrupted build never leaves a folder that looks like a cache; the manifest records the
source's size and mtime, and a cache whose source changed is rebuilt.

The file is read in blocks of 2**16 bytes cut into chunks of lines, under ``read_bytes``'s limits
(``files.bounded_blocks``), and each chunk goes through ``letor.parse_rows``, the parser
``read_letor`` uses. ``LetorCache`` maps the arrays; the learners shard it
(``structrank.parallel.shards``).
"""

from __future__ import annotations

import codecs
import contextlib
import gzip
import hashlib
import io
import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from structrank.atomic import write_text_atomic
from structrank.data.dataset import RankingDataset
from structrank.files import bounded_blocks, open_regular
from structrank.data.letor import check_not_utf16, parse_rows
from structrank.errors import DataFormatError

FORMAT = "structrank-letor-cache"
VERSION = 1
SUFFIX = ".structrank-cache"
ARRAY_DTYPES = {
    "data": np.dtype("<f4"),
    "indices": np.dtype("<i4"),
    "indptr": np.dtype("<i8"),
    "y": np.dtype("<i4"),
    "offsets": np.dtype("<i8"),
    "query_ids": np.dtype("<i8"),
}


# -- public API ----------------------------------------------------------------------------------
def build_letor_cache(path, cache_dir=None, chunk_rows=200_000, n_features=None) -> Path:
    """Convert a LETOR/SVMlight file (plain or .gz) into a memory-mappable cache folder, once.

    Parameters
    ----------
    path : str or Path
        The LETOR file. Every row needs a ``qid`` and the rows of a query must be on
        consecutive lines (``read_letor`` also reads ``FILE.query`` group files and regroups
        scattered queries; the cache does neither, as both need the whole file in memory).
    cache_dir : str or Path, optional
        Put the cache in this folder, as ``<file name>-<sha1 of the path>.structrank-cache``.
        By default it goes beside the file as ``<file name>.structrank-cache``, or under
        ``$XDG_CACHE_HOME/structrank`` (``~/.cache/structrank``) when the file's folder is not
        writable (data folders often are read-only).
    chunk_rows : int
        Lines read and parsed at a time; memory is proportional to it: the chunk's text and the
        arrays parsed from it, a few times the bytes of its stored values.
    n_features : int, optional
        Number of columns (so that train and test caches agree); the largest index seen by
        default. A feature index above it is an error.

    Returns
    -------
    Path of the cache folder. An existing cache is returned as it is when its manifest matches
    the file's size and modification time (and ``n_features`` when given); otherwise it is
    rebuilt.

    Raises
    ------
    DataFormatError naming the file, the line (counted in the whole file) and the field of the
    first problem: a malformed token, a label that is not a non-negative integer, a value that
    is not finite, a row without qid, a qid that comes back after other queries.

    Notes
    -----
    Comments (``#docid = ...``, LETOR 4.0's ``inc`` and ``prob``) are not stored: they are text
    of unbounded size per row, and learners do not need them. Use ``read_letor`` when you do.
    Labels are stored as int32, qids as int64 (sklearn's parser reads qids as integers).
    """
    source = _existing_file(path)
    if chunk_rows < 1:
        raise ValueError(f"chunk_rows must be at least 1, got {chunk_rows}")
    stat = source.stat()
    origin = {"path": str(source), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    candidates = _candidate_folders(source, cache_dir)
    for folder in candidates:
        if _is_current(folder, origin, n_features):
            return folder
    folder = candidates[0]
    if cache_dir is None and not _can_write(source.parent):
        folder = candidates[1]
    _build(source, folder, origin, chunk_rows, n_features)
    return folder


def open_letor_cache(path, cache_dir=None, **build_kwargs) -> "LetorCache":
    """The cache of a LETOR file (built first if missing or stale), with its arrays memory-mapped.

    ``build_kwargs`` go to ``build_letor_cache`` (``chunk_rows``, ``n_features``).

    Examples
    --------
    ::

        cache = open_letor_cache("MSLR-WEB30K/Fold1/train.txt")
        for q in range(0, cache.n_queries, 1000):
            X, y, offsets = cache.rows(q, min(q + 1000, cache.n_queries))
    """
    return LetorCache.load(build_letor_cache(path, cache_dir=cache_dir, **build_kwargs))


def default_cache_dir() -> Path:
    """Where caches of files in read-only folders go: ``$XDG_CACHE_HOME/structrank``, ``~/.cache/structrank``."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "structrank"


@dataclass(eq=False)
class LetorCache:
    """The memory-mapped arrays of a cache folder (see ``open_letor_cache``).

    ``y``, ``offsets``, ``query_ids`` and the CSR arrays ``data``, ``indices``, ``indptr`` are
    read-only ``np.memmap``s; ``X`` is a CSR matrix over them, built on first use without
    copying ``data`` and ``indices`` (scipy keeps a small int32 copy of ``indptr`` when the row
    pointers fit; past 2**31 stored values it would widen ``indices`` to int64 in memory, so
    use ``rows`` on such files).

    Examples
    --------
    >>> import os, tempfile
    >>> from structrank.data import make_ranking_dataset, open_letor_cache, write_letor
    >>> tmp = tempfile.TemporaryDirectory()
    >>> path = os.path.join(tmp.name, "train.txt")
    >>> write_letor(path, make_ranking_dataset(n_queries=4, docs_per_query=5, n_features=3, random_state=0))
    >>> cache = open_letor_cache(path)
    >>> cache.n_queries, cache.n_rows, cache.n_features
    (4, 20, 3)
    >>> X, y, offsets = cache.rows(1, 3)  # the second and third queries, read from the memory maps
    >>> X.shape, offsets.tolist()
    ((10, 3), [0, 5, 10])
    >>> tmp.cleanup()
    """

    serves_shards = True  # parallel.shards.serves_shards: a learner trains on it shard by shard

    folder: Path
    manifest: dict = field(repr=False)
    data: np.ndarray = field(repr=False)
    indices: np.ndarray = field(repr=False)
    indptr: np.ndarray = field(repr=False)
    y: np.ndarray = field(repr=False)
    offsets: np.ndarray = field(repr=False)
    query_ids: np.ndarray = field(repr=False)

    @classmethod
    def load(cls, folder) -> "LetorCache":
        """Map the arrays of a complete cache folder."""
        folder = Path(folder)
        manifest = _read_manifest(folder)
        if manifest is None or not _arrays_match(folder, manifest):
            raise DataFormatError(folder, None, f"is not a complete {FORMAT} folder (build it with build_letor_cache)")
        arrays = {name: np.load(folder / f"{name}.npy", mmap_mode="r") for name in ARRAY_DTYPES}
        return cls(folder=folder, manifest=manifest, **arrays)

    @property
    def n_rows(self) -> int:
        return int(self.manifest["n_rows"])

    @property
    def n_features(self) -> int:
        return int(self.manifest["n_features"])

    @property
    def n_queries(self) -> int:
        return int(self.manifest["n_queries"])

    @property
    def source(self) -> str:
        return self.manifest["source"]["path"]

    @cached_property
    def X(self) -> sp.csr_matrix:
        """The whole feature matrix, CSR over the memory-mapped arrays (pages load on access)."""
        return sp.csr_matrix((self.data, self.indices, self.indptr), shape=(self.n_rows, self.n_features), copy=False)

    def query_range(self, q_lo: int, q_hi: int) -> tuple[int, int]:
        """The rows ``row_lo:row_hi`` of queries ``q_lo:q_hi`` (0-based positions, end excluded)."""
        q_lo, q_hi = int(q_lo), int(q_hi)
        if not 0 <= q_lo <= q_hi <= self.n_queries:
            raise IndexError(f"query range {q_lo}:{q_hi} is outside 0:{self.n_queries}")
        return int(self.offsets[q_lo]), int(self.offsets[q_hi])

    def rows(self, q_lo: int, q_hi: int, copy: bool = True):
        """The rows of queries ``q_lo:q_hi``: ``(X, y, offsets)``.

        ``X`` is a CSR matrix of just those rows, ``y`` int64 labels and ``offsets`` the query
        boundaries rebased to start at 0 (``offsets[i]:offsets[i+1]`` are the rows of query
        ``q_lo + i``). Only the slice is read from disk. With ``copy=False`` the CSR data and
        indices are views of the memory maps (only the row pointers are copied): what a
        training shard uses, so that memory stays bounded by the pages touched.
        """
        row_lo, row_hi = self.query_range(q_lo, q_hi)
        indptr = np.array(self.indptr[row_lo:row_hi + 1], dtype=np.int64)
        start, stop = int(indptr[0]), int(indptr[-1])
        data, indices = self.data[start:stop], self.indices[start:stop]
        if copy:
            data, indices = np.array(data), np.array(indices)
        X = sp.csr_matrix((data, indices, indptr - start), shape=(row_hi - row_lo, self.n_features), copy=False)
        y = np.array(self.y[row_lo:row_hi], dtype=np.int64)
        offsets = np.array(self.offsets[q_lo:q_hi + 1], dtype=np.int64) - row_lo
        return X, y, offsets

    def to_dataset(self) -> RankingDataset:
        """All rows as an in-memory RankingDataset (for small files and tests; no docids)."""
        X, y, offsets = self.rows(0, self.n_queries)
        qid = np.repeat(np.asarray(self.query_ids), np.diff(offsets))
        return RankingDataset(X, y, qid, source=self.source)


# -- where the cache lives -----------------------------------------------------------------------
def _existing_file(path) -> Path:
    path = Path(path)
    with open_regular(path):  # refuses a missing file, a folder, a FIFO or a device
        pass
    return path.resolve()


def _candidate_folders(source: Path, cache_dir) -> list[Path]:
    """Where a cache of ``source`` may be, in order of preference."""
    if cache_dir is not None:
        return [_hashed_folder(source, cache_dir)]
    return [source.parent / (source.name + SUFFIX), _hashed_folder(source, default_cache_dir())]


def _hashed_folder(source: Path, cache_dir) -> Path:
    # The hash of the full path keeps Fold1/train.txt and Fold2/train.txt apart in one folder.
    digest = hashlib.sha1(str(source).encode("utf-8")).hexdigest()[:12]
    return Path(cache_dir).expanduser() / f"{source.name}-{digest}{SUFFIX}"


def _can_write(folder: Path) -> bool:
    """Whether a cache can be built in ``folder`` (access() also sees read-only mounts)."""
    return os.access(folder, os.W_OK | os.X_OK)


def _read_manifest(folder: Path) -> dict | None:
    try:
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):  # unreadable, not JSON or nested too deeply: built again
        return None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT or manifest.get("version") != VERSION:
        return None
    return manifest


def _expected_lengths(manifest: dict) -> dict:
    nnz, n_rows, n_queries = manifest["nnz"], manifest["n_rows"], manifest["n_queries"]
    return {"data": nnz, "indices": nnz, "indptr": n_rows + 1, "y": n_rows,
            "offsets": n_queries + 1, "query_ids": n_queries}


def _arrays_match(folder: Path, manifest: dict) -> bool:
    """Every array is there, readable, of the manifest's length and dtype (headers only are read)."""
    try:
        lengths = _expected_lengths(manifest)
        for name, dtype in ARRAY_DTYPES.items():
            array = np.load(folder / f"{name}.npy", mmap_mode="r")
            if array.shape != (lengths[name],) or array.dtype != dtype:
                return False
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return True


def _is_current(folder: Path, origin: dict, n_features) -> bool:
    """A complete cache of the source as it is now (same size and mtime)."""
    manifest = _read_manifest(folder)
    if manifest is None:
        return False
    recorded = manifest.get("source") or {}
    if recorded.get("size") != origin["size"] or recorded.get("mtime_ns") != origin["mtime_ns"]:
        return False
    if n_features is not None and manifest.get("n_features") != n_features:
        return False
    return _arrays_match(folder, manifest)


# -- building ------------------------------------------------------------------------------------
def _build(source: Path, folder: Path, origin: dict, chunk_rows: int, n_features) -> None:
    """Convert into a temporary sibling folder, then rename it into place."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".tmp", dir=folder.parent))
    try:
        os.chmod(tmp, 0o777 & ~_umask())  # mkdtemp makes it private; a cache is shared like its data
        counts = _convert(source, tmp, chunk_rows, n_features)
        manifest = {"format": FORMAT, "version": VERSION, "source": origin, **counts,
                    "chunk_rows": chunk_rows, "built_at_ns": time.time_ns(),
                    "dtypes": {name: dtype.str for name, dtype in ARRAY_DTYPES.items()}}
        write_text_atomic(tmp / "manifest.json", json.dumps(manifest, indent=2) + "\n")
        _install(tmp, folder, origin, n_features)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # gone already after a successful rename


def _install(tmp: Path, folder: Path, origin: dict, n_features) -> None:
    """Rename the finished ``tmp`` to ``folder``, moving a stale cache out of the way first."""
    old = None
    if folder.exists():
        old = folder.with_name(f".{folder.name}.{os.getpid()}.{time.time_ns()}.old")
        with contextlib.suppress(FileNotFoundError):
            os.rename(folder, old)
    try:
        os.rename(tmp, folder)
    except OSError:
        # Another process installed its cache in between: keep it if it is current.
        if not _is_current(folder, origin, n_features):
            raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


def _convert(source: Path, folder: Path, chunk_rows: int, n_features) -> dict:
    """Stream ``source`` into the arrays of ``folder``; the counts for the manifest."""
    writer = _ArraysWriter(source, folder)
    with writer:
        for lines_before, raw in _read_chunks(source, chunk_rows):
            chunk = _parse_chunk(source, raw, lines_before, n_features)
            if chunk is not None:
                writer.add(*chunk)
            del raw, chunk  # else they live on while the next chunk is read: twice the memory
    if writer.n_rows == 0:
        raise DataFormatError(source, None, "holds no data rows (empty file)")
    return {"n_rows": writer.n_rows, "n_features": n_features if n_features is not None else writer.n_columns,
            "n_queries": writer.n_queries, "nnz": writer.nnz}


def _read_chunks(source: Path, chunk_rows: int):
    """``(lines before the chunk, the chunk's bytes)`` for successive blocks of ``chunk_rows`` lines.

    Gzip is recognised by its magic number and a UTF-8 byte order mark dropped, as ``read_bytes`` does;
    UTF-16 text is refused as ``read_letor`` refuses it. The limits of ``read_bytes`` hold here
    too (``files.bounded_blocks``: a regular file, a line at most ``STRUCTRANK_MAX_LINE_BYTES``
    plain or gzip, a gzip within its ratio), so a chunk's memory is bounded by ``chunk_rows``
    lines of bounded length. The file is read in blocks, not lines, so blank lines cost no
    Python call each.
    """
    with open_regular(source) as raw_fh:
        compressed = raw_fh.read(2) == b"\x1f\x8b"
        raw_fh.seek(0)
        fh = gzip.GzipFile(fileobj=raw_fh) if compressed else raw_fh
        # small blocks: a chunk of a few thousand short lines must not be outweighed by one block
        blocks = bounded_blocks(source, fh, os.fstat(raw_fh.fileno()).st_size, compressed, block_size=1 << 16)
        for number, raw in enumerate(_chunks_of_lines(blocks, chunk_rows)):
            if number == 0:
                check_not_utf16(source, raw)
                if raw.startswith(codecs.BOM_UTF8):
                    raw = raw[len(codecs.BOM_UTF8):]
            yield number * chunk_rows, raw
            del raw


def _chunks_of_lines(blocks, n: int):
    """Byte strings of ``n`` lines each (the last one fewer), cut from consecutive ``blocks``."""
    held, count = [], 0  # the pieces of the chunk being gathered, and their complete lines
    for block in blocks:
        ends = np.flatnonzero(np.frombuffer(block, dtype=np.uint8) == 10) + 1
        start = 0
        for cut in ends[n - count - 1::n].tolist():
            held.append(block[start:cut])
            yield b"".join(held)
            held, start = [], cut
        count = (count + ends.size) % n
        if start < len(block):
            held.append(block[start:])
    if held:
        yield b"".join(held)


def _parse_chunk(source: Path, raw: bytes, lines_before: int, n_features):
    """``(X, y, qid, line numbers)`` of one chunk's data rows, checked; None when it has none."""
    rows = parse_rows(source, raw, n_features, zero_based=False, dtype=np.float32, lines_before=lines_before)
    X, y, qid, line_numbers = rows["X"], rows["y"], rows["qid"], rows["line_numbers"]
    if line_numbers.size == 0:
        return None
    missing = np.flatnonzero(~rows["has_qid"])
    if missing.size:
        raise DataFormatError(source, int(line_numbers[missing[0]]), "no qid on this row: the cache needs one on "
                              "every row (read_letor also reads FILE.query group files)", "qid")
    return X, y, qid, line_numbers


class _ArraysWriter:
    """Appends parsed chunks to the cache's arrays and checks that queries are contiguous.

    Only per-query state is kept across chunks: the sorted qids of the queries already started
    (8 bytes a query) and the last qid, so that a query may continue into the next chunk.
    """

    def __init__(self, source: Path, folder: Path):
        self.source = source
        self.files = {name: _NpyAppender(folder / f"{name}.npy", dtype) for name, dtype in ARRAY_DTYPES.items()}
        self.files["indptr"].append(np.zeros(1))
        self.n_rows = self.nnz = self.n_columns = self.n_queries = 0
        self.seen = np.zeros(0, dtype=np.int64)
        self.last_qid = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.files["offsets"].append(np.array([self.n_rows]))
        for appender in self.files.values():
            appender.close(finish=exc_type is None)

    def add(self, X, y, qid, line_numbers):
        self._add_queries(qid, line_numbers)
        self.files["data"].append(X.data)
        self.files["indices"].append(X.indices)
        self.files["indptr"].append(X.indptr[1:] + self.nnz)
        self.files["y"].append(y)
        self.n_rows += X.shape[0]
        self.nnz += X.nnz
        self.n_columns = max(self.n_columns, X.shape[1])

    def _add_queries(self, qid, line_numbers):
        starts = np.flatnonzero(np.concatenate(([True], qid[1:] != qid[:-1])))
        run_qids = qid[starts]
        if self.last_qid is not None and run_qids[0] == self.last_qid:
            starts, run_qids = starts[1:], run_qids[1:]  # the previous chunk's last query goes on
        self.last_qid = qid[-1]
        if run_qids.size == 0:
            return
        repeated = _in_sorted(run_qids, self.seen) | _repeats_earlier(run_qids)
        if repeated.any():
            first = int(np.argmax(repeated))
            raise DataFormatError(
                self.source, int(line_numbers[starts[first]]),
                f"qid {run_qids[first]} appears again after other queries: the file must be grouped by query "
                "(each query's rows on consecutive lines), or read with read_letor, which regroups it",
                "qid",
            )
        self.files["offsets"].append(starts + self.n_rows)
        self.files["query_ids"].append(run_qids)
        self.n_queries += run_qids.size
        self.seen = np.sort(np.concatenate((self.seen, run_qids)), kind="stable")


def _in_sorted(values, sorted_values) -> np.ndarray:
    position = np.searchsorted(sorted_values, values)
    found = np.zeros(values.shape, dtype=bool)
    inside = position < sorted_values.size
    found[inside] = sorted_values[position[inside]] == values[inside]
    return found


def _repeats_earlier(values) -> np.ndarray:
    """Which entries equal an earlier entry."""
    _, first = np.unique(values, return_index=True)
    repeated = np.ones(values.shape, dtype=bool)
    repeated[first] = False
    return repeated


class _NpyAppender:
    """A 1-D .npy file written piece by piece, its length unknown until the end.

    The header is written first for length 0 and rewritten in place with the final length:
    numpy pads headers so that the length of a growing axis can change without moving the
    data (``format.GROWTH_AXIS_MAX_DIGITS``), so the data is written once and never copied
    (a numpy whose header grows instead gets the data moved once, block by block).
    """

    def __init__(self, path: Path, dtype: np.dtype):
        self.path, self.dtype, self.length = path, dtype, 0
        self._header_size = len(_npy_header(dtype, 0))
        self._fh = open(path, "wb")
        self._fh.write(_npy_header(dtype, 0))

    def append(self, values) -> None:
        values = np.ascontiguousarray(values, dtype=self.dtype)
        self._fh.write(memoryview(values).cast("B"))
        self.length += values.size

    def close(self, finish=True) -> None:
        with self._fh:
            if not finish:
                return
            header = _npy_header(self.dtype, self.length)
            if len(header) == self._header_size:
                self._fh.seek(0)
                self._fh.write(header)
                self._fh.flush()
                os.fsync(self._fh.fileno())
                return
        self._rewrite(header)  # a numpy without growth padding: move the data, block by block

    def _rewrite(self, header: bytes) -> None:
        moved = self.path.with_name(self.path.name + ".moving")
        with open(self.path, "rb") as old, open(moved, "wb") as new:
            old.seek(self._header_size)
            new.write(header)
            shutil.copyfileobj(old, new, 16 << 20)
            new.flush()
            os.fsync(new.fileno())
        os.replace(moved, self.path)


def _npy_header(dtype: np.dtype, length: int) -> bytes:
    buffer = io.BytesIO()
    header = {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": (length,)}
    np.lib.format.write_array_header_1_0(buffer, header)
    return buffer.getvalue()
