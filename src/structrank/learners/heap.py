"""glibc's heap kept for reuse while torch runs a fit or a prediction on CPU.

A fine-tuning step frees activations far above glibc's mmap threshold and allocates them again in the
next step. With glibc's defaults each such block is an ``mmap`` of its own, handed back to the kernel on
``free``, so every step page-faults and zeroes its activations anew: system time on every step, which grows
with the tokens per pair (``/usr/bin/time`` shows it as system seconds and minor page faults).
Inside ``kept_heap()`` large blocks come from the heap and freed memory stays there for the next step; on
leaving, glibc's defaults come back and the freed memory goes back to the system (``malloc_trim``).

Only where memory is allocated changes, never a value. Elsewhere than glibc (macOS, musl) it does nothing.
"""

from __future__ import annotations

import contextlib
import ctypes
import sys
import threading

M_TRIM_THRESHOLD, M_MMAP_MAX = -1, -4  # mallopt's parameters (malloc.h)
#: glibc's defaults (malloc.h: DEFAULT_MMAP_MAX, DEFAULT_TRIM_THRESHOLD), restored on leaving
DEFAULT_MMAP_MAX, DEFAULT_TRIM_THRESHOLD = 65536, 128 * 1024
#: freed memory kept in the heap up to this much while inside (a fit's activations)
KEPT_TRIM_THRESHOLD = 2 ** 30

_lock = threading.Lock()
_depth = 0


def _glibc():
    """glibc's ``mallopt`` and ``malloc_trim``, or None off glibc."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)
        return libc.mallopt, libc.malloc_trim
    except (OSError, AttributeError):  # a libc without them (musl has no mallopt)
        return None


_FUNCTIONS = _glibc()


def _set(mmap_max, trim_threshold) -> None:
    mallopt, _ = _FUNCTIONS
    mallopt(M_MMAP_MAX, mmap_max)
    mallopt(M_TRIM_THRESHOLD, trim_threshold)


@contextlib.contextmanager
def kept_heap():
    """Inside the block, freed memory stays in glibc's heap for reuse (nested and threaded uses count once)."""
    global _depth
    if _FUNCTIONS is None:
        yield
        return
    with _lock:
        _depth += 1
        if _depth == 1:
            _set(0, KEPT_TRIM_THRESHOLD)
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                _set(DEFAULT_MMAP_MAX, DEFAULT_TRIM_THRESHOLD)
                _FUNCTIONS[1](0)


def keeping() -> bool:
    """Whether a ``kept_heap()`` block is open."""
    return _depth > 0
