"""Reading a file's bytes: standard input for "-", gzip by its magic number, no UTF-8 BOM, no UTF-16.

Light on purpose (no NumPy, no scikit-learn): the TREC readers of ``structrank.metrics`` use it.
"""

from __future__ import annotations

import codecs
import gzip
import sys
import zlib
from pathlib import Path

from structrank.errors import DataFormatError

_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


def read_bytes(path) -> bytes:
    """The bytes of a file (``"-"``: standard input), decompressed when gzip (by magic number, not by name)."""
    if str(path) == "-":
        raw = sys.stdin.buffer.read()
        path = Path("<stdin>")
    else:
        path = Path(path)
    try:
        raw = raw if str(path) == "<stdin>" else path.read_bytes()
    except FileNotFoundError:
        raise DataFormatError(path, None, "file not found") from None
    except IsADirectoryError:
        raise DataFormatError(path, None, "is a folder, not a file") from None
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (EOFError, OSError, zlib.error) as exc:
            raise DataFormatError(path, None, f"corrupt or truncated gzip data ({exc})") from None
    if raw.startswith(codecs.BOM_UTF8):
        raw = raw[len(codecs.BOM_UTF8):]
    return raw


def check_not_utf16(path, head: bytes) -> None:
    """DataFormatError for text that starts with a UTF-16 byte-order mark.

    Spreadsheet programs on Windows save "Unicode text" as UTF-16; read as bytes, its first
    label would be reported as "'\\xff\\xfe2' is not a number", which does not say what to do.
    (XML readers do not call this: UTF-16 with a byte-order mark is valid XML.)
    """
    if head.startswith(_UTF16_BOMS):
        raise DataFormatError(path, None, "UTF-16 text (it starts with a UTF-16 byte-order mark); save it as UTF-8")
