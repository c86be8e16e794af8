"""npz archives that reading cannot turn into code execution: a JSON header beside plain arrays.

``write_archive`` writes one ``.npz`` atomically: the entry ``__header__`` holds UTF-8 JSON, the others are NumPy
arrays. ``read_archive`` reads it with ``allow_pickle=False`` after checking, before any array is read, the
header's size and type, the zip members (stored or deflated, no compression bombs) and every ``.npy`` member's
shape and dtype (no Python objects); a damaged or doctored file is a ``DataFormatError`` naming it. Model files
(``structrank.model_io``), the tagger's files and the experiments' caches are such archives.
"""

from __future__ import annotations

import io
import json
import math
import os
import struct
import zipfile
import zlib
from pathlib import Path

import numpy as np

from structrank.atomic import atomic_open
from structrank.errors import DataFormatError
from structrank.files import open_regular

#: what reading a damaged or doctored zip or .npy member can raise (flipped bytes reach corners of
#: zipfile and numpy that raise more than BadZipFile: an unknown compression method is a
#: NotImplementedError, an "encrypted" flag a RuntimeError, a deeply nested JSON header a
#: RecursionError, a forged length an OverflowError or struct.error)
_DAMAGED = (OSError, ValueError, EOFError, zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, RuntimeError,
            struct.error, zlib.error, OverflowError, MemoryError)

#: other archives (a tagger's header holds its vocabulary) get more room
MAX_HEADER_BYTES = 1 << 26
#: a stored member may be compressed (np.savez_compressed) by at most this ratio
MAX_COMPRESSION_RATIO = 1000


def write_archive(path, header: dict, arrays: dict) -> None:
    """Write ``arrays`` and a JSON ``header`` into one npz at ``path``, atomically (read by ``read_archive``)."""
    buffer = io.BytesIO()
    np.savez(buffer, __header__=np.frombuffer(json.dumps(header, ensure_ascii=False).encode("utf-8"), dtype=np.uint8),
             **arrays)
    with atomic_open(path, "wb") as fh:
        fh.write(buffer.getvalue())


def _check_members(path, archive, what, max_header_bytes):
    """Refuse, before reading any array, members that could not be read without unpickling or huge allocations.

    Every member must be a ``.npy`` array (version 1 or 2) of a dtype without Python objects
    whose declared shape fits in the bytes the member holds, and compressed members must not
    expand more than MAX_COMPRESSION_RATIO times: numpy allocates the declared shape before
    reading, so a forged shape would otherwise ask for terabytes.
    """
    for info in archive.zip.infolist():
        name = info.filename
        if not name.endswith(".npy"):
            raise DataFormatError(path, None, f"damaged {what} file (member {name!r} is not a .npy array)")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):  # numpy writes no other
            raise DataFormatError(path, None, f"damaged {what} file (member {name!r} has compression method "
                                  f"{info.compress_type})")
        if info.compress_type != zipfile.ZIP_STORED and info.file_size > MAX_COMPRESSION_RATIO * max(
                info.compress_size, 1):
            raise DataFormatError(path, None, f"damaged {what} file (member {name!r} would expand from "
                                  f"{info.compress_size} to {info.file_size} bytes)")
        with archive.zip.open(info) as member:
            version = np.lib.format.read_magic(member)
            if version not in ((1, 0), (2, 0)):
                raise DataFormatError(path, None, f"damaged {what} file (member {name!r} is .npy version {version})")
            read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                           else np.lib.format.read_array_header_2_0)
            shape, _, dtype = read_header(member)
            offset = member.tell()
        if dtype.hasobject:
            raise DataFormatError(path, None, f"not a structrank {what} file (member {name!r} holds Python objects, "
                                  "a pickle, which structrank never loads)", name[:-4])
        nbytes = math.prod(shape) * dtype.itemsize
        if nbytes != info.file_size - offset:
            raise DataFormatError(path, None, f"damaged {what} file (member {name!r} declares shape {list(shape)} "
                                  f"of {dtype}, {nbytes} bytes, but holds {info.file_size - offset})")
        if name == "__header__.npy" and (dtype != np.uint8 or len(shape) != 1 or nbytes > max_header_bytes):
            raise DataFormatError(path, None, f"damaged {what} file (the header must be at most {max_header_bytes} "
                                  f"bytes of UTF-8 JSON; it is {dtype} of shape {list(shape)})", "__header__")


def _read_open_archive(path, fh, what, max_header_bytes):
    """(header, arrays) of the npz open as ``fh`` (``read_archive``'s reading; ``path`` names it in errors)."""
    try:
        magic = fh.read(6)
        fh.seek(0)
    except OSError as exc:
        raise DataFormatError(path, None, f"not a structrank {what} file ({exc})") from None
    # Only a zip archive goes to numpy: a bare .npy or a pickle is refused unread.
    if magic.startswith(b"\x93NUMPY"):
        raise DataFormatError(path, None, f"not a structrank {what} file (a bare array, not an archive; structrank "
                              "never reads bare .npy files, which may hold pickles)")
    if not magic.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        raise DataFormatError(path, None, f"not a structrank {what} file (not an npz archive)")
    try:
        archive = np.load(fh, allow_pickle=False)
    except _DAMAGED as exc:
        raise DataFormatError(path, None, f"not a structrank {what} file ({exc})") from None
    if not isinstance(archive, np.lib.npyio.NpzFile):  # np.load decides by the same magic: cannot happen
        raise DataFormatError(path, None, f"not a structrank {what} file (a bare array, not an archive)")
    with archive:
        if "__header__" not in archive.files:
            raise DataFormatError(path, None, f"not a structrank {what} file (no header)")
        try:
            _check_members(path, archive, what, max_header_bytes)
            header = json.loads(bytes(archive["__header__"]).decode("utf-8"))
            listed = header.get("arrays") if isinstance(header, dict) else None
            members = set(archive.files) - {"__header__"}
            if isinstance(listed, dict) and members != set(listed):  # before any array is read: an extra
                # member (as large as the compression limit lets it be) would otherwise be loaded, then refused
                raise DataFormatError(path, None, f"damaged {what} file (its arrays {sorted(members)} are not the "
                                      f"header's {sorted(listed)})", "arrays")
            arrays = {key: archive[key] for key in archive.files if key != "__header__"}
        except DataFormatError:
            raise
        except _DAMAGED as exc:  # UnicodeDecodeError and json's errors are ValueErrors, deep nesting a RecursionError
            raise DataFormatError(path, None, f"damaged {what} file ({type(exc).__name__}: {exc})") from None
    return header, arrays


def read_archive(path, format_name, version, what="model", max_header_bytes=MAX_HEADER_BYTES):
    """(header, arrays) of an npz written with a JSON ``__header__``, never unpickling anything.

    DataFormatError (naming ``what``) for a missing, damaged or foreign file, or one whose
    header has another format name or version.
    """
    if not os.path.lexists(path):
        raise DataFormatError(path, None, f"{what} file not found")
    try:
        fh = open_regular(Path(path))  # a FIFO or a device is refused, never waited on
    except DataFormatError as exc:  # a folder, a FIFO, a device: say which, as this file kind's error
        raise DataFormatError(path, None, f"not a structrank {what} file ({exc.problem})") from None
    except OSError as exc:
        raise DataFormatError(path, None, f"not a structrank {what} file ({exc})") from None
    # numpy reads the archive from this one open file, which closes here whatever happens (np.load given a
    # path leaves its file open when the archive turns out damaged: a ResourceWarning after the error)
    with fh:
        header, arrays = _read_open_archive(path, fh, what, max_header_bytes)
    if not isinstance(header, dict) or header.get("format") != format_name:
        raise DataFormatError(path, None, f"not a structrank {what} file (wrong format name)", "format")
    if type(header.get("version")) is not int or header.get("version") != version:  # not 1.0 or true either
        raise DataFormatError(path, None, f"{what} format version {header.get('version')!r}; this structrank "
                              f"reads version {version}", "version")
    return header, arrays


__all__ = ["MAX_HEADER_BYTES", "read_archive", "write_archive"]
