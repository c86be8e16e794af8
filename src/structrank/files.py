"""Reading a file's bytes: standard input for "-", gzip by its magic number, no UTF-8 BOM, no UTF-16.

Bounded (docs/GRAMMAR.md, "Limits"): only regular files are read (a FIFO or /dev/zero would block
or never end), and a gzip may not expand past a ratio of its size or hold a line past a length.
Light on purpose (no NumPy, no scikit-learn): the TREC readers of ``structrank.metrics`` use it.

``read_bytes`` is the whole-file reader (``-`` is standard input; gzip by its magic number; a UTF-8
BOM dropped); ``open_regular`` opens without blocking and refuses what is not a regular file;
``bounded_blocks`` reads in blocks under the limits, a gzip bounded by ``STRUCTRANK_GZIP_MAX_RATIO``
and a line by ``STRUCTRANK_MAX_LINE_BYTES``; ``check_not_utf16`` refuses UTF-16 text.
"""

from __future__ import annotations

import codecs
import gzip
import io
import os
import stat
import sys
import zlib
from pathlib import Path

from structrank.errors import DataFormatError

_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
GZIP_ERRORS = (EOFError, OSError, zlib.error)

#: Decompression limits (docs/GRAMMAR.md): LETOR text compresses about 5-fold, a gzip bomb of
#: newlines or zeros about 1000-fold; below the floor any ratio is allowed (small repetitive files).
GZIP_RATIO_ENV, GZIP_MAX_RATIO, GZIP_FLOOR = "STRUCTRANK_GZIP_MAX_RATIO", 200, 64 << 20
LINE_BYTES_ENV, MAX_LINE_BYTES = "STRUCTRANK_MAX_LINE_BYTES", 64 << 20
#: Standard input has no size to check first: it is read in blocks up to this many bytes (the whole
#: input is held in memory, as a file's is), its lines under the line limit
STDIN_BYTES_ENV, MAX_STDIN_BYTES = "STRUCTRANK_MAX_STDIN_BYTES", 8 << 30
_BLOCK = 1 << 20

_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _limit(name: str, default: int) -> int:
    text = os.environ.get(name)
    if text is None:
        return default
    if not text.strip().isascii() or not text.strip().isdigit() or int(text) < 1:
        raise ValueError(f"{name} must be a positive integer, got {text!r}")
    return int(text)


def gzip_limits(compressed_size: int) -> tuple[int, int]:
    """(the most bytes a gzip of ``compressed_size`` bytes may expand to, the longest line)."""
    total = max(_limit(GZIP_RATIO_ENV, GZIP_MAX_RATIO) * compressed_size, GZIP_FLOOR)
    return total, _limit(LINE_BYTES_ENV, MAX_LINE_BYTES)


def _near_miss(path: Path) -> str:
    """The words after "file not found" when the file is there compressed or uncompressed (``train.txt`` given,
    ``train.txt.gz`` present, as LETOR's and WikiQA's files ship): which one to give instead."""
    other = path.with_suffix("") if path.suffix == ".gz" else path.with_name(path.name + ".gz")
    return f" (there is {other.name} beside it: give that)" if other.is_file() else ""


def open_regular(path: Path):
    """``path`` opened for binary reading, or DataFormatError when it is missing, a folder or not a
    regular file. It is opened without blocking (a FIFO with no writer would block ``open``) and
    checked on the open descriptor, so it cannot be swapped between the check and the read."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise DataFormatError(path, None, "file not found" + _near_miss(Path(path))) from None
    except IsADirectoryError:
        raise DataFormatError(path, None, "is a folder, not a file") from None
    mode = os.fstat(fd).st_mode
    if stat.S_ISDIR(mode):
        os.close(fd)
        raise DataFormatError(path, None, "is a folder, not a file")
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = next((what for test, what in _KINDS if test(mode)), "not a regular file")
        raise DataFormatError(path, None, f"is {kind}, not a regular file: save the data to a file first")
    return os.fdopen(fd, "rb")


def read_bytes(path) -> bytes:
    """The bytes of a file (``"-"``: standard input), decompressed when gzip (by magic number, not by name)."""
    if str(path) == "-":
        path = Path("<stdin>")
        raw = read_stdin(path, sys.stdin.buffer)
    else:
        path = Path(path)
        with open_regular(path) as fh:
            raw = fh.read()
    if raw[:2] == b"\x1f\x8b":
        raw = _gunzip(path, raw)
    if raw.startswith(codecs.BOM_UTF8):
        raw = raw[len(codecs.BOM_UTF8):]
    return raw


def read_stdin(path, stream) -> bytes:
    """The bytes of ``stream`` read in blocks, refused once past ``STRUCTRANK_MAX_STDIN_BYTES`` or,
    for text, when a line passes the line limit (``/dev/zero`` piped in ends at its first block)."""
    most, longest = _limit(STDIN_BYTES_ENV, MAX_STDIN_BYTES), _limit(LINE_BYTES_ENV, MAX_LINE_BYTES)
    lines = LineLimit(path, longest)
    blocks, total = [], 0
    while True:
        block = stream.read(min(_BLOCK, longest))
        if not block:
            return b"".join(blocks)
        total += len(block)
        if total > most:
            raise DataFormatError(path, None, f"more than {most:,} bytes on standard input ({STDIN_BYTES_ENV} raises "
                                  "the limit)")
        if not blocks and block[:2] == b"\x1f\x8b":
            lines = None  # gzip: its lines are checked as it is expanded
        if lines is not None:
            lines.check(block)
        blocks.append(block)


def _gunzip(path, raw: bytes) -> bytes:
    """``raw`` decompressed in blocks, refused as soon as it passes ``gzip_limits``."""
    return b"".join(bounded_blocks(path, gzip.GzipFile(fileobj=io.BytesIO(raw)), len(raw), compressed=True))


def bounded_blocks(path, fh, size: int, compressed: bool, block_size: int = _BLOCK):
    """The bytes of ``fh`` in blocks of ``block_size``, refused (DataFormatError) when a line passes
    its limit or, when ``compressed``, the total passes ``gzip_limits(size)`` (``size``: the
    compressed bytes)."""
    most, longest = gzip_limits(size)
    lines = LineLimit(path, longest)
    total = 0
    while True:
        try:
            block = fh.read(min(block_size, longest))
        except GZIP_ERRORS as exc:
            if not compressed:
                raise
            raise DataFormatError(path, None, f"corrupt or truncated gzip data ({exc})") from None
        if not block:
            return
        total += len(block)
        if compressed and total > most:
            raise too_large(path, most, size)
        lines.check(block)
        yield block


def too_large(path, most: int, compressed: int) -> DataFormatError:
    return DataFormatError(path, None, f"gzip data expands past {most:,} bytes from {compressed:,} (a gzip bomb? "
                           f"{GZIP_RATIO_ENV} raises the ratio, default {GZIP_MAX_RATIO})")


class LineLimit:
    """Checks, block by block, that no line of a stream is longer than ``longest`` bytes (a block
    is at most ``longest`` bytes, so only the line running across blocks needs counting)."""

    def __init__(self, path, longest: int):
        self.path, self.longest, self.run, self.lines = path, longest, 0, 0

    def check(self, block: bytes) -> None:
        first = block.find(b"\n")
        self.run += len(block) if first < 0 else first
        if self.run > self.longest:
            raise DataFormatError(self.path, self.lines + 1, f"a line longer than {self.longest:,} bytes "
                                  f"({LINE_BYTES_ENV} raises the limit)")
        if first >= 0:
            self.lines += block.count(b"\n")
            self.run = len(block) - block.rfind(b"\n") - 1


def check_not_utf16(path, head: bytes) -> None:
    """DataFormatError for text that starts with a UTF-16 byte-order mark.

    Spreadsheet programs on Windows save "Unicode text" as UTF-16; read as bytes, its first
    label would be reported as "'\\xff\\xfe2' is not a number", which does not say what to do.
    (XML readers do not call this: UTF-16 with a byte-order mark is valid XML.)
    """
    if head.startswith(_UTF16_BOMS):
        raise DataFormatError(path, None, "UTF-16 text (it starts with a UTF-16 byte-order mark); save it as UTF-8")


#: TREC QA TRAIN-ALL's files in Wang et al.'s POSInput form (``qa.readers.read_trec_train_all``); a folder holding
#: them is data to the commands. Here, not in ``qa``, so that the CLI's early check of its inputs stays light.
TRAIN_ALL_FILES = {
    "question": "Train1-2393.Question.POSInput.gz",
    "positive": "Train1-2393.Positive-M.POSInput.cleaned.gz",
    "negative": "Train1-2393.Negative-M.POSInput.gz",
}


def train_all_folder(path) -> bool:
    """Whether ``path`` is a folder holding TREC QA TRAIN-ALL's POSInput files: False for a file or a folder
    holding none of them, DataFormatError naming the first one missing for a folder holding some."""
    folder = Path(path)
    if not folder.is_dir():
        return False
    missing = [name for name in TRAIN_ALL_FILES.values() if not (folder / name).is_file()]
    if len(missing) == len(TRAIN_ALL_FILES):
        return False
    if missing:
        raise DataFormatError(folder, None, f"holds TREC QA TRAIN-ALL's POSInput files but not {missing[0]}")
    return True
