"""A reproduction stopped with SIGTERM (``kill``, ``pkill``, a batch system's time limit) stops its workers too.

Python's default for SIGTERM ends the process at once: no ``finally`` runs, so joblib's worker processes are
never told and each goes on with its run to the end (a fine-tuning: an hour), holding a core with no one left to
record what it finds. Inside :func:`sigterm_as_exit`, SIGTERM raises ``SystemExit`` instead, as Ctrl-C raises
``KeyboardInterrupt``: ``run_all`` then closes joblib's generator of outcomes, which ends the workers, and the
store is closed as on any other error (the finished runs stay recorded).
"""

from __future__ import annotations

import contextlib
import signal
import threading


def _exit(signum, frame):
    raise SystemExit(128 + signum)  # a shell's status for a process ended by that signal


@contextlib.contextmanager
def sigterm_as_exit():
    """Inside the block, SIGTERM raises ``SystemExit(143)``; the default comes back after it.

    Only where SIGTERM has Python's default: a handler the caller set is left as it is, and so is everything
    outside the main thread (where Python cannot set one).
    """
    if threading.current_thread() is not threading.main_thread() \
            or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return
    signal.signal(signal.SIGTERM, _exit)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
