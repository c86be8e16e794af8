"""Atomic file writes: a crash never leaves a half-written file where a good one was.

The content goes to a temporary file in the same folder, is flushed to disk, and is then
renamed over the target (rename is atomic on POSIX and on Windows within one volume).
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from pathlib import Path


@contextlib.contextmanager
def atomic_open(path, mode="w", encoding="utf-8"):
    """Open ``path`` for writing through a temporary file that replaces it on success.

    On an exception inside the block the temporary file is removed and ``path`` is untouched.
    ``"-"`` writes to standard output; a path that exists and is not a regular file (/dev/stdout,
    a FIFO, a terminal) is written in place and never replaced; a folder is an error.
    """
    binary = "b" in mode
    if str(path) == "-":
        stream = sys.stdout.buffer if binary else sys.stdout
        yield stream
        stream.flush()
        return
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{path}: is a folder; give a file name to write")
    if path.exists() and not path.is_file():  # a device or a pipe: renaming over it would replace it
        with open(path, mode, **({} if binary else {"encoding": encoding, "newline": ""})) as fh:
            yield fh
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        # mkstemp makes the file private (0600); give it the mode an ordinary open() would
        os.chmod(tmp, _file_mode(path))
        with os.fdopen(fd, mode, **({} if binary else {"encoding": encoding, "newline": ""})) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _file_mode(path: Path) -> int:
    """The replaced file's permissions, or 0666 less the umask for a new file."""
    try:
        return os.stat(path).st_mode & 0o777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_text_atomic(path, text: str) -> None:
    """Write ``text`` to ``path`` atomically."""
    with atomic_open(path, "w") as fh:
        fh.write(text)


def write_bytes_atomic(path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_open(path, "wb") as fh:
        fh.write(data)
