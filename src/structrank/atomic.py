"""Atomic file writes: a crash never leaves a half-written file where a good one was.

The content goes to a temporary file in the same folder, is flushed to disk, and is then
renamed over the target (rename is atomic on POSIX and on Windows within one volume). A symlink is
followed: its target is replaced and the link stays. :func:`check_output` refuses, before any work,
an output that is one of the command's inputs.

``atomic_open``, ``write_text_atomic`` and ``write_bytes_atomic`` write this way. ``"-"`` is
standard output; a path that exists and is not a regular file (/dev/stdout, a FIFO) is written in
place and never replaced; a folder is an ``IsADirectoryError``. ``check_output(out, {option:
input})`` is every command's one check, before any work, that an output is not one of its inputs:
paths are compared as files (``os.path.samefile``: symlinks, hard links and ``..`` resolve), and
the error names both options.

An error of a write names the path the user gave, never the temporary file or a resolved link: a
folder that takes no new file (``--out /proc/x``: "/proc/x: No such file or directory (cannot create a
file in /proc)"), a full disk, a failed rename. An OSError of the caller's own inside the block
(reading an input) passes as it is.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
import tempfile
from pathlib import Path


@contextlib.contextmanager
def atomic_open(path, mode="w", encoding="utf-8"):
    """Open ``path`` for writing through a temporary file that replaces it on success.

    On an exception inside the block the temporary file is removed and ``path`` is untouched.
    ``"-"`` writes to standard output; a path that exists and is not a regular file (/dev/stdout,
    a FIFO, a terminal) is written in place and never replaced; a symlink to a regular file (or a
    dangling one) has its target replaced atomically and stays a symlink; a folder is an error.
    """
    binary = "b" in mode
    if str(path) == "-":
        stream = sys.stdout.buffer if binary else sys.stdout
        yield stream
        stream.flush()
        return
    if str(path) == "":
        raise FileNotFoundError("an empty file name: give a file to write")
    path = Path(path)
    kind = _existing_kind(path)
    if kind == "folder":
        raise IsADirectoryError(f"{path}: is a folder; give a file name to write")
    if kind == "special":  # a device or a pipe: renaming over it would replace it
        with open(path, mode, **({} if binary else {"encoding": encoding, "newline": ""})) as fh:
            yield fh
        return
    given = path
    # a symlink's target is replaced, never the link (renaming over it would cut it off)
    path = Path(os.path.realpath(path))
    # every error of our own steps names the path the user gave, never the folder or the temporary file
    with _naming(given, f"cannot create a file in {path.parent}"):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with _naming(given):
            # mkstemp makes the file private (0600); give it the mode an ordinary open() would
            os.chmod(tmp, _file_mode(path))
            fh = os.fdopen(fd, mode, **({} if binary else {"encoding": encoding, "newline": ""}))
        with fh:
            try:
                yield fh
            except OSError as exc:  # a write of the caller's that failed (a full disk) names the user's path too
                if exc.filename == tmp or (exc.filename is None and exc.errno in _WRITE_ERRORS):
                    raise _named(exc, given) from exc
                raise  # the caller's own (an input it reads), as it is
            with _naming(given):
                fh.flush()
                os.fsync(fh.fileno())
        with _naming(given, "cannot replace it"):
            os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


#: errno values of a write that could not be done (the disk, the quota, the file size limit, the device)
_WRITE_ERRORS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO}


def _named(exc: OSError, given, why=None) -> OSError:
    """An OSError of ``exc``'s type and errno naming ``given``, the path the user gave, with ``why`` after its reason."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    return type(exc)(exc.errno, f"{reason} ({why})" if why else reason, str(given))


@contextlib.contextmanager
def _naming(given, why=None):
    """OSErrors inside the block re-raised by ``_named``."""
    try:
        yield
    except OSError as exc:
        raise _named(exc, given, why) from exc


def _existing_kind(path: Path) -> str | None:
    """"folder", "special" (a device, a FIFO, a socket), "file", or None when nothing is there.

    ``os.stat`` follows symlinks, so a link is judged by its target; a symlink loop or a path under
    a file raises the OSError that names it (a dangling link is None: its target gets written).
    """
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None
    if stat.S_ISDIR(mode):
        return "folder"
    return "file" if stat.S_ISREG(mode) else "special"


def check_output(out, inputs, option="--out", folder=False) -> None:
    """Refuse an output path that is one of the inputs, before anything is read or written.

    ``inputs`` maps each input's option (``"--data"``) to its path (None and ``"-"`` are skipped).
    Paths are compared as files (``os.path.samefile``: symlinks, hard links, ``./`` and ``..`` all
    resolve), so writing the output can never destroy an input. An empty name or an existing folder
    is refused too, naming ``option``.
    """
    if out is None or str(out) == "-":
        return
    if str(out) == "":
        raise ValueError(f"{option} is empty: give a file to write")
    kind = _existing_kind(Path(out))
    if folder:
        if kind == "folder" and not (Path(out) / "structrank.json").is_file():
            raise IsADirectoryError(f"{option} {out}: is a folder that holds no structrank model; give a new name")
        if kind == "file":
            raise FileExistsError(f"{option} {out}: is a file; a text model is saved as a folder, give a new name")
        return
    if kind == "folder":
        raise IsADirectoryError(f"{option} {out}: is a folder; give a file name to write")
    if kind != "file":  # a new file, or a device or FIFO, written in place: no input is lost
        return
    for name, path in inputs.items():
        if path is None or str(path) in ("", "-"):
            continue
        with contextlib.suppress(OSError):  # an input that is not there is the reader's error
            if os.path.samefile(out, path):
                raise ValueError(f"{option} {out} is the same file as {name} {path}: writing it would "
                                 f"destroy the input; give another {option}")


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
