"""The experiments' caches in ``OUT/data``: archives of named arrays, one file or a folder of blocks.

One format serves every experiment that keeps prepared data between runs: an npz archive with a JSON
header ``{"format", "version", "meta"}`` (``archive.write_archive``: written atomically, read without
unpickling), whose members are dense arrays or CSR matrices, a matrix ``NAME`` kept as ``NAME|data``,
``NAME|indices``, ``NAME|indptr`` and ``NAME|shape``. A cache computed in parts keeps each part in its
own archive, ``block_NNN.npz`` in one folder, so that a stopped preparation resumes at the first
missing block. jagarlamudi2012 keeps each language's n-best lists so, croce2016 its pairs and the
blocks of its kernel columns; the format name and version of each say which experiment wrote it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp

from structrank.archive import read_archive, write_archive


def save_arrays(path, arrays: dict, meta: dict, format_name: str, version: int) -> None:
    """One npz of dense arrays and CSR matrices (as data/indices/indptr/shape), ``meta`` in its header."""
    flat = {}
    for name, value in arrays.items():
        if sp.issparse(value):
            value = value.tocsr()
            for part in ("data", "indices", "indptr"):
                flat[f"{name}|{part}"] = getattr(value, part)
            flat[f"{name}|shape"] = np.array(value.shape, dtype=np.int64)
        else:
            flat[name] = np.asarray(value)
    write_archive(path, {"format": format_name, "version": version, "meta": meta}, flat)


def load_arrays(path, format_name: str, version: int, what: str) -> tuple[dict, dict]:
    """(arrays, meta) of an archive written by :func:`save_arrays`; DataFormatError (naming ``what``) for a
    missing or damaged file, or one of another format or version."""
    header, flat = read_archive(path, format_name, version, what=what)
    arrays = {}
    for key, value in flat.items():
        name, _, part = key.partition("|")
        if not part:
            arrays[name] = value
        elif part == "shape":
            arrays[name] = sp.csr_matrix((flat[f"{name}|data"], flat[f"{name}|indices"], flat[f"{name}|indptr"]),
                                         shape=tuple(value))
    return arrays, header["meta"]


def block_path(folder, index: int) -> Path:
    """The archive of block ``index`` in a folder of blocks."""
    return Path(folder) / f"block_{index:03d}.npz"


def block_paths(folder, n_columns: int, size: int) -> list[Path]:
    """The archives of ``n_columns`` columns kept ``size`` to a block, in column order."""
    return [block_path(folder, start // size) for start in range(0, n_columns, size)]
