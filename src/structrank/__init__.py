"""structrank: structured, loss-sensitive learning to rank and reranking.

The estimators and ``evaluate`` are importable from the top level (``structrank.StructSVMRanker``);
they are loaded on first use so that ``import structrank`` stays light.

Importing it also sets numba's cache folder: ``NUMBA_CACHE_DIR``, unless the user set it, becomes
``~/.cache/structrank/numba/VERSION-HASH`` (``$XDG_CACHE_HOME`` in place of ``~/.cache`` when
set), the hash taken over every module's path, time stamp and size. Why: numba keys a cached
function by its own file only, so a cached caller (``oracles.losses._run_batch``) kept running an
old callee after only the callee's module changed (seen in a checkout after an edit of
``oracles/po.py``; an upgrade that leaves ``__pycache__`` behind could do the same).
"""

import hashlib
import importlib
import os
import shutil
import sys
import time
from pathlib import Path

__version__ = "0.1.0"

from structrank.errors import DataFormatError, DataValidationError, StructRankError  # noqa: E402


def _numba_cache_dir():
    """Put numba's on-disk cache in a folder named after this version and the state of the sources.

    numba keys a cached function by its own file's time stamp only: a cached caller (the oracles'
    batch switch, say) would keep running the machine code of a callee in another module after that
    module changed, by an edit or an upgrade that leaves ``__pycache__`` behind. A folder per state
    of the sources (a hash of every module's path, time stamp and size) makes every change start
    from a clean cache. A NUMBA_CACHE_DIR the user set is kept; the stats cost a few milliseconds.
    """
    if "NUMBA_CACHE_DIR" in os.environ:
        return None
    stamps, folders = [], [os.path.dirname(os.path.abspath(__file__))]
    while folders:  # the package's .py files, __pycache__ left out
        with os.scandir(folders.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != "__pycache__":
                        folders.append(entry.path)
                elif entry.name.endswith(".py"):
                    stat = entry.stat()
                    stamps.append(f"{entry.path}:{stat.st_mtime_ns}:{stat.st_size}")
    key = hashlib.blake2b("\n".join(sorted(stamps)).encode(), digest_size=8).hexdigest()
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    folder = base / "structrank" / "numba" / f"{__version__}-{key}"
    try:
        if not folder.is_dir():
            folder.mkdir(parents=True, exist_ok=True)
            _prune(folder.parent, keep=8)  # a folder per state of the sources: keep the recent ones
    except OSError:  # no writable home: numba's own default (beside the sources)
        return None
    os.environ["NUMBA_CACHE_DIR"] = str(folder)
    if "numba" in sys.modules:  # imported before structrank: its configuration was read already
        sys.modules["numba"].config.CACHE_DIR = str(folder)
    return folder


def _prune(parent, keep, idle_days=1.0):
    """Remove the cache folders under ``parent`` beyond the ``keep`` most recently modified ones that
    have not been touched for ``idle_days`` (another checkout's process may be using a recent one)."""
    folders = sorted((p for p in parent.iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in folders[keep:]:
        if time.time() - old.stat().st_mtime > idle_days * 86400:
            shutil.rmtree(old, ignore_errors=True)


_numba_cache_dir()

_LAZY = {
    "evaluate": "structrank.metrics",
    "LinearRegressionRanker": "structrank.learners",
    "RankSVM": "structrank.learners",
    "StructSVMRanker": "structrank.learners",
    "McRank": "structrank.learners",
    "LambdaMARTRanker": "structrank.learners",
    "LatentPerceptronRanker": "structrank.learners",
    "LatentSSVMRanker": "structrank.learners",
    "PermutationCRFRanker": "structrank.learners",
    "StructuredBoostingRanker": "structrank.learners",
    "MLPRanker": "structrank.learners",
}


def __getattr__(name):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'structrank' has no attribute {name!r}")


__all__ = ["DataFormatError", "DataValidationError", "StructRankError", "__version__", *_LAZY]


def __dir__():  # the lazy names too (PEP 562): tab completion and autodoc see them
    return sorted({*globals(), *__all__})
