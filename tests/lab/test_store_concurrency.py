"""Several processes opening one new result store at once (a resumed reproduction and its reader, or joblib
workers) all get it: none fails with "database is locked". The race shows only when the processes run on
separate cores (CI's do); on one core they rarely meet."""
import multiprocessing
import sqlite3

import pytest

from structrank_lab.experiments import ResultStore

pytestmark = pytest.mark.lab

_ROUNDS = 300
_PROCESSES = 4


def _open_each(paths, barrier, failures):
    for path in paths:
        barrier.wait()  # all processes open the same new file at the same moment
        try:
            ResultStore(path).close()
        except Exception as exc:  # noqa: BLE001 - counted and shown by the test
            failures.put(f"{path}: {exc}")


def test_processes_opening_a_new_store_at_once_all_get_it(tmp_path):
    context = multiprocessing.get_context("spawn")
    barrier, failures = context.Barrier(_PROCESSES), context.Queue()
    paths = [str(tmp_path / f"{i}" / "runs.sqlite") for i in range(_ROUNDS)]
    workers = [context.Process(target=_open_each, args=(paths, barrier, failures)) for _ in range(_PROCESSES)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
    assert [worker.exitcode for worker in workers] == [0] * _PROCESSES
    seen = []
    while not failures.empty():
        seen.append(failures.get())
    assert seen == []
    with ResultStore(paths[-1]) as store:
        assert len(store) == 0


class _LockedTwice:
    """A connection whose switch to WAL is refused twice, as SQLite refuses it while another
    connection is switching the same new file."""

    def __init__(self):
        self.tries = 0
        self.closed = False

    def execute(self, statement):
        assert statement == "PRAGMA journal_mode = WAL"
        self.tries += 1
        if self.tries <= 2:
            raise sqlite3.OperationalError("database is locked")

    def close(self):
        self.closed = True


def test_a_refused_switch_to_wal_is_tried_again_and_gives_up_after_the_timeout(tmp_path):
    store = ResultStore(tmp_path / "runs.sqlite", timeout=5)
    conn = _LockedTwice()
    store._enter_wal(conn)
    assert conn.tries == 3 and not conn.closed
    store.timeout = 0.05
    always = _LockedTwice()
    always.execute = lambda statement: (_ for _ in ()).throw(sqlite3.OperationalError("database is locked"))
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        store._enter_wal(always)
    assert always.closed
    store.close()
