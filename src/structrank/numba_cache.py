"""structrank's numba kernels cache in structrank's own folder, and no other library's do.

Every module of structrank with a cached kernel takes ``njit`` from here (``from
structrank.numba_cache import njit``), so that importing it first puts a cache locator in front of
numba's own: a function whose source lies in structrank's package caches to
``~/.cache/structrank/numba/VERSION-HASH/`` (``$XDG_CACHE_HOME`` in place of ``~/.cache`` when set),
the hash taken over every module's path, time stamp and size; any other function is left to numba's
locators. Why a folder per state of the sources: numba keys a cached function by its own file
only, so a cached caller would keep running an old callee after only the callee's module changed
(an edit in a checkout, or an upgrade that leaves ``__pycache__`` behind).

Why a locator rather than ``NUMBA_CACHE_DIR``: that variable (and ``numba.config.CACHE_DIR``) is the
whole process's, so setting it sent every other library's kernels (ranx's) into structrank's folder,
where they compiled again from nothing. The process's setting is never touched here; a
NUMBA_CACHE_DIR the user set wins over this folder, as numba's own locators honour it.

The locator is numba's documented extension point in practice (``_CacheLocator`` subclasses, tried
in the order of ``CacheImpl._locator_classes``) but not a public API: when numba's internals move
(a name gone), structrank's kernels fall back to numba's default places (``__pycache__`` beside the
sources, or numba's user-wide folder), and everything still runs.

``without_blas_probe`` starts numba without importing SciPy's linear algebra, for a command whose
process runs structrank's kernels alone (``structrank evaluate``, ``compare``).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import time
from pathlib import Path

from numba import njit  # noqa: F401 -- re-exported: a kernel's module imports it from here, after the locator
from numba.core import caching, config

from structrank import __version__

#: structrank's package folder: the functions whose source lies under it cache to ``FOLDER``
PACKAGE = os.path.dirname(os.path.realpath(__file__))


def source_state_folder(package=PACKAGE, version=__version__, base=None) -> Path:
    """``BASE/structrank/numba/VERSION-HASH``: the hash over every module's path, time stamp and size
    (``__pycache__`` left out), so that a change to any module starts from a clean cache."""
    stamps, folders = [], [package]
    while folders:
        with os.scandir(folders.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != "__pycache__":
                        folders.append(entry.path)
                elif entry.name.endswith(".py"):
                    stat = entry.stat()
                    stamps.append(f"{entry.path}:{stat.st_mtime_ns}:{stat.st_size}")
    key = hashlib.blake2b("\n".join(sorted(stamps)).encode(), digest_size=8).hexdigest()
    base = Path(base or os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "structrank" / "numba" / f"{version}-{key}"


def prune(parent, keep, idle_days=1.0):
    """Remove the cache folders under ``parent`` beyond the ``keep`` most recently modified ones that
    have not been touched for ``idle_days`` (another checkout's process may be using a recent one)."""
    folders = sorted((p for p in parent.iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in folders[keep:]:
        if time.time() - old.stat().st_mtime > idle_days * 86400:
            shutil.rmtree(old, ignore_errors=True)


def _make_folder():
    """The folder of this state of the sources, made (and the old ones pruned); None when the user chose
    numba's folder (NUMBA_CACHE_DIR) or it cannot be made."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return None
    folder = source_state_folder()
    try:
        if not folder.is_dir():
            folder.mkdir(parents=True, exist_ok=True)
            prune(folder.parent, keep=8)  # a folder per state of the sources: keep the recent ones
    except OSError:  # no writable home: numba's own default (beside the sources)
        return None
    return folder


def _install_locator(folder):
    """Put a locator for structrank's functions first in numba's list; the locator class, or None
    when numba's internals are not where this expects them (numba's own locators then serve)."""
    try:
        impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl  # its older name: _CacheImpl
        locators = impl._locator_classes
        base = caching._CacheLocator
    except AttributeError:
        return None
    for cls in locators:
        if getattr(cls, "structrank_folder", None) is not None:  # this module imported twice (a reload)
            return cls

    class StructrankCacheLocator(base):
        """Caches a function of structrank's package in ``structrank_folder``, mirroring the package's
        sub-folders; the source stamp is the file's time stamp and size, as numba's was (the folder
        already changes with any module's)."""

        structrank_folder = str(folder)

        def __init__(self, py_func, py_file):
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            where = os.path.relpath(os.path.dirname(os.path.realpath(py_file)), os.path.dirname(PACKAGE))
            self._cache_path = os.path.join(self.structrank_folder, where)

        def get_cache_path(self):
            return self._cache_path

        def get_source_stamp(self):
            stat = os.stat(self._py_file)
            return stat.st_mtime, stat.st_size

        def get_disambiguator(self):
            return str(self._lineno)

        @classmethod
        def from_function(cls, py_func, py_file):
            # a folder the user chose for numba (NUMBA_CACHE_DIR) wins; other libraries' functions are not ours
            if config.CACHE_DIR or not os.path.realpath(py_file).startswith(PACKAGE + os.sep):
                return None
            self = cls(py_func, py_file)
            try:
                self.ensure_cache_path()
            except OSError:
                return None
            return self

    locators.insert(0, StructrankCacheLocator)
    return StructrankCacheLocator


FOLDER = _make_folder()
LOCATOR = None if FOLDER is None else _install_locator(FOLDER)


#: the module ``numba.np.arraymath`` imports, when it is itself imported, to probe for BLAS
_BLAS_PROBE = "scipy.linalg.cython_blas"


def without_blas_probe() -> None:
    """Import numba's array functions (``numba.np.arraymath``, which numba loads before it runs its first
    kernel) without their probe for BLAS.

    The probe imports SciPy's linear algebra (about a tenth of a second of every ``structrank evaluate``)
    only to choose how a kernel's ``np.convolve`` and ``np.correlate`` multiply, and no structrank kernel
    calls them. So a command whose process runs structrank's kernels alone (``evaluate``, ``compare``)
    calls this first; a library user's process keeps numba's own start. ``np.dot`` and ``np.linalg``
    still import SciPy when a kernel that uses them compiles. When numba moves the probe, this is only
    the import numba would have made anyway.
    """
    if "numba.np.arraymath" in sys.modules or _BLAS_PROBE in sys.modules:
        return
    sys.modules[_BLAS_PROBE] = None  # an import of it now fails at once, loading no SciPy
    try:
        import numba.np.arraymath  # noqa: F401  # deferred: the point of the function, with the probe blocked
    finally:
        if _BLAS_PROBE in sys.modules and sys.modules[_BLAS_PROBE] is None:
            del sys.modules[_BLAS_PROBE]
