"""A durable record of finished experiment runs, in one SQLite file.

A *run* is one model trained and evaluated once: it is identified by a :class:`RunKey`
(experiment, dataset, split, fold, seed, model, params) and produces many measured values
(metric, convention, value). The store writes a run's values, its seconds and its finish time in
one transaction, so after a crash a run is either wholly recorded or not at all, and a resumed
experiment can skip exactly the runs that finished.

SQLite runs in WAL mode with a busy timeout, so several processes may open the same file and
record runs into it (readers never block the writer).

A store knows what it was made from (``structrank_lab.experiments.identity``): :meth:`ResultStore.claim`
records the experiment's name and each data file's identity and refuses a store whose data differ
from the files given now; :meth:`ResultStore.record` stores each run's identity, so that a resumed
experiment runs again every recorded run whose identity differs. SQLite's errors (not a database,
malformed, a folder) name the file.

Example
-------
>>> import tempfile, os
>>> from structrank_lab.experiments.store import ResultStore, RunKey
>>> path = os.path.join(tempfile.mkdtemp(), "runs.sqlite")
>>> key = RunKey("demo2024", "toy", model="svm-map", params={"C": 1.0})
>>> store = ResultStore(path)
>>> store.record(key, [("map", "letor4", 0.5), ("ndcg@10", "letor4", 0.75)], seconds=1.5)
True
>>> store.has(key), len(store.rows())
(True, 2)
>>> store.close()
"""

from __future__ import annotations

import csv
import functools
import json
import os
import sqlite3
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable, Mapping

from structrank.atomic import atomic_open
from structrank.errors import StructRankError
from structrank_lab.experiments.run_key import RunKey, _as_key, _measurement
from structrank_lab.experiments.store_schema import ensure_schema

#: Columns of ``results.csv`` and of every record :meth:`ResultStore.rows` returns, in order.
COLUMNS = (
    "experiment", "dataset", "split", "fold", "seed", "model", "params",
    "metric", "convention", "value", "seconds",
)

def _data_folder(name: str) -> str:
    """The folder (or the file given alone) a :func:`data_files` name belongs to."""
    return name.split("/", 1)[0]


def _named_errors(method):
    """A store method whose SQLite errors (not a database, malformed, a folder) name the store's file."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except sqlite3.DatabaseError as exc:
            raise StructRankError(f"{self.path}: not a readable result store ({exc})") from exc
        except (json.JSONDecodeError, RecursionError) as exc:  # a stored parameter or data record, damaged
            raise StructRankError(f"{self.path}: damaged result store (a stored JSON value: "
                                  f"{type(exc).__name__})") from exc

    return wrapper


class ResultStore:
    """Finished runs and their measured values, kept in a SQLite file.

    Parameters
    ----------
    path : str or Path
        The database file; created (with its folder) when missing.
    timeout : float, default 60
        Seconds to wait for another process's write lock before giving up.

    Notes
    -----
    The object may be pickled (to joblib workers, say): the connection is not, and is opened
    again in the process that uses it.

    Examples
    --------
    >>> import tempfile, os
    >>> store = ResultStore(os.path.join(tempfile.mkdtemp(), "r.sqlite"))
    >>> key = RunKey("e", "d", model="m")
    >>> store.record(key, [("map", "letor4", 0.25)], seconds=0.1)
    True
    >>> store.rows()[0]["value"]
    0.25
    >>> store.close()
    """

    def __init__(self, path, timeout: float = 60.0):
        self.path = Path(path)
        self.timeout = float(timeout)
        self._conn = None
        self._pid = None
        self._connect()

    # -- connection ---------------------------------------------------------------------------

    @_named_errors
    def _connect(self) -> sqlite3.Connection:
        # A connection must not cross a fork, so each process opens its own.
        if self._conn is not None and self._pid == os.getpid():
            return self._conn
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # isolation_level=None: we issue BEGIN ourselves, so a run's rows share one transaction.
        conn = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None,
                               check_same_thread=False)
        conn.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")
        self._enter_wal(conn)
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("BEGIN IMMEDIATE")
        try:
            ensure_schema(conn, self.path)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            conn.close()
            raise
        self._conn, self._pid = conn, os.getpid()
        return conn

    def _enter_wal(self, conn: sqlite3.Connection) -> None:
        # Two processes opening a new store at once may both try to switch it to WAL; SQLite then
        # answers "database is locked" at once, without waiting the busy timeout (it would deadlock),
        # so we wait and try again ourselves, up to the same timeout.
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                conn.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    conn.close()
                    raise
                time.sleep(0.02)

    def close(self) -> None:
        """Close the connection (it is opened again when the store is used)."""
        if self._conn is not None and self._pid == os.getpid():
            self._conn.close()
        self._conn = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __getstate__(self):
        return {"path": self.path, "timeout": self.timeout}

    def __setstate__(self, state):
        self.path, self.timeout = state["path"], state["timeout"]
        self._conn = self._pid = None

    def __repr__(self):
        return f"ResultStore({str(self.path)!r})"

    # -- ownership -----------------------------------------------------------------------------

    @_named_errors
    def recorded_data(self) -> dict[str, dict]:
        """The data identity recorded by :meth:`claim` ({} for a new store)."""
        row = self._connect().execute("SELECT value FROM meta WHERE name = 'data'").fetchone()
        return {} if row is None else json.loads(row[0])

    @_named_errors
    def claim(self, experiment: str, data: Mapping[str, Mapping] | None = None) -> None:
        """Tie the store to ``experiment`` and the files of ``data`` (``data_identity``).

        Raises StructRankError, recording nothing, when the store holds another experiment's runs,
        a file of the same name whose content (SHA-256) differs, or a file of a data folder given
        now that the folder no longer holds (renamed, decompressed or deleted). Files not seen
        before are added, so a quick run followed by the full one (more data sets) resumes.
        """
        data = dict(data or {})
        conn = self._connect()
        conn.execute("BEGIN IMMEDIATE")
        try:
            owner = conn.execute("SELECT value FROM meta WHERE name = 'experiment'").fetchone()
            # the owner, and whoever made its runs (a store written before ownership was recorded has only those)
            owners = {r[0] for r in conn.execute("SELECT DISTINCT experiment FROM runs")} | ({owner[0]} if owner else set())
            others = sorted(owners - {experiment, *experiment.split(",")})  # run_experiment's "a,b": both
            if others:
                raise StructRankError(f"{self.path}: holds the runs of experiment {', '.join(others)}, not "
                                      f"{experiment}; give another --out, or --fresh to discard them")
            row = conn.execute("SELECT value FROM meta WHERE name = 'data'").fetchone()
            recorded = json.loads(row[0]) if row else {}
            for name in sorted(set(recorded) & set(data)):
                old, new = recorded[name], data[name]
                if old["sha256"] != new["sha256"]:
                    raise StructRankError(
                        f"{self.path}: its runs were made from other data: {name} was {old['path']} "
                        f"(sha256 {old['sha256'][:12]}), now {new['path']} (sha256 {new['sha256'][:12]}); "
                        "give another --out, or --fresh to discard them")
            given = {_data_folder(name) for name in data}  # a folder given again must still hold what it held
            gone = sorted(name for name in set(recorded) - set(data) if _data_folder(name) in given)
            if gone:
                raise StructRankError(
                    f"{self.path}: its runs were made from other data: {gone[0]} (was {recorded[gone[0]]['path']}, "
                    f"sha256 {recorded[gone[0]]['sha256'][:12]}) is not in the {_data_folder(gone[0])} given now"
                    f"{f' (nor are {len(gone) - 1} more of its files)' if len(gone) > 1 else ''}; "
                    "give another --out, or --fresh to discard them")
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('experiment', ?)", (experiment,))
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('data', ?)",
                         (json.dumps({**recorded, **data}, sort_keys=True),))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    # -- writing -------------------------------------------------------------------------------

    @_named_errors
    def record(self, key, rows: Iterable, seconds: float, identity: str | None = None) -> bool:
        """Record one finished run: all its measured values, its seconds and the time, at once.

        Parameters
        ----------
        key : RunKey
            The run.
        rows : iterable
            Its measured values, each a ``(metric, convention, value)`` tuple, a mapping with
            those keys, or an object with those attributes. NaN values are kept as NaN.
        seconds : float
            Wall-clock seconds the run took.
        identity : str, optional
            What the run was made from (``run_identity``). A run recorded under the same key
            with another identity (or none) is replaced by this one, in the same transaction.

        Returns
        -------
        bool
            True when recorded; False when the run was already recorded with the same identity (by
            another process, say) -- the first finished result is kept, the new one dropped.

        Raises
        ------
        ValueError
            When ``rows`` is empty, malformed, or names a (metric, convention) twice; nothing is
            recorded then.
        """
        return self.record_runs([{"key": key, "rows": rows, "seconds": seconds, "identity": identity}]) == 1

    @_named_errors
    def record_runs(self, runs: Iterable) -> int:
        """Record several finished runs in one transaction: what reading a folder of kept runs back needs, where
        a transaction per run would cost a disk sync per run.

        Parameters
        ----------
        runs : iterable of mappings
            Each with ``key``, ``rows``, ``seconds`` and optionally ``identity`` and ``finished_at`` (an ISO time;
            by default now), as :meth:`record` takes them.

        Returns
        -------
        int
            How many were recorded; a run already recorded with the same identity is left as it is.

        Raises
        ------
        ValueError
            When a run's rows are empty, malformed, or name a (metric, convention) twice; nothing is
            recorded then.
        """
        now = datetime.now(timezone.utc).isoformat(timespec="seconds")
        checked = []
        for run in runs:
            key = _as_key(run["key"])
            measured = [_measurement(row) for row in run["rows"]]
            if not measured:
                raise ValueError(f"run {key.label()} measured nothing; a run needs at least one value")
            pairs = [(m, c) for m, c, _ in measured]
            if len(set(pairs)) != len(pairs):
                raise ValueError(f"run {key.label()} measured a (metric, convention) twice: {pairs}")
            checked.append((key, measured, float(run["seconds"]), run.get("identity"), run.get("finished_at") or now))
        conn = self._connect()
        # IMMEDIATE takes the write lock now, so the existence check and the insert cannot be
        # interleaved with another process's insert of the same key.
        conn.execute("BEGIN IMMEDIATE")
        recorded = 0
        try:
            for key, measured, seconds, identity, finished in checked:
                if identity is not None:  # a run made from something else is replaced (its values go by CASCADE)
                    conn.execute("DELETE FROM runs WHERE experiment=? AND dataset=? AND split=? AND fold=? AND seed=?"
                                 " AND model=? AND params=? AND identity IS NOT ?", (*key.as_tuple(), identity))
                cursor = conn.execute(
                    "INSERT OR IGNORE INTO runs (experiment, dataset, split, fold, seed, model, params,"
                    " seconds, finished_at, identity) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (*key.as_tuple(), seconds, finished, identity))
                if cursor.rowcount == 0:  # recorded before with this identity: the first finished result is kept
                    continue
                conn.executemany(
                    "INSERT INTO measurements (run_id, metric, convention, value) VALUES (?, ?, ?, ?)",
                    [(cursor.lastrowid, m, c, v) for m, c, v in measured])
                recorded += 1
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return recorded

    # -- reading -------------------------------------------------------------------------------

    @_named_errors
    def has(self, key) -> bool:
        """Whether the run ``key`` is recorded."""
        key = _as_key(key)
        row = self._connect().execute(
            "SELECT 1 FROM runs WHERE experiment=? AND dataset=? AND split=? AND fold=? AND seed=?"
            " AND model=? AND params=?", key.as_tuple()).fetchone()
        return row is not None

    @_named_errors
    def completed_keys(self) -> set[RunKey]:
        """The keys of every recorded run."""
        cursor = self._connect().execute(
            "SELECT experiment, dataset, split, fold, seed, model, params FROM runs")
        return {RunKey(*row) for row in cursor}

    @_named_errors
    def identities(self) -> dict[RunKey, str | None]:
        """{key: identity} of every recorded run (None: recorded without one)."""
        cursor = self._connect().execute(
            "SELECT experiment, dataset, split, fold, seed, model, params, identity FROM runs")
        return {RunKey(*row[:7]): row[7] for row in cursor}

    @_named_errors
    def finished_at(self, key) -> str | None:
        """When the run ``key`` was recorded (ISO time), None when it is not."""
        row = self._connect().execute(
            "SELECT finished_at FROM runs WHERE experiment=? AND dataset=? AND split=? AND fold=? AND seed=?"
            " AND model=? AND params=?", _as_key(key).as_tuple()).fetchone()
        return None if row is None else row[0]

    @_named_errors
    def __len__(self) -> int:
        """The number of recorded runs."""
        return self._connect().execute("SELECT COUNT(*) FROM runs").fetchone()[0]

    @_named_errors
    def rows(self, keys: Iterable | None = None) -> list[dict]:
        """Every measured value in long form, one dict per value with the :data:`~structrank_lab.experiments.COLUMNS`.

        Parameters
        ----------
        keys : iterable of RunKey, optional
            Only the values of these runs (those recorded); all runs when None.

        Returns
        -------
        list of dict
            Sorted by the key fields, then metric and convention, so the order never depends
            on the order the runs finished in. ``params`` is the canonical JSON text; a stored
            NaN comes back as ``float("nan")``.
        """
        cursor = self._connect().execute(
            "SELECT r.experiment, r.dataset, r.split, r.fold, r.seed, r.model, r.params,"
            " m.metric, m.convention, m.value, r.seconds"
            " FROM runs r JOIN measurements m ON m.run_id = r.run_id"
            " ORDER BY r.experiment, r.dataset, r.split, r.fold, r.seed, r.model, r.params,"
            " m.metric, m.convention")
        wanted = None if keys is None else {_as_key(k).as_tuple() for k in keys}
        records, checked = [], set()
        for row in cursor:
            if wanted is not None and row[:7] not in wanted:
                continue
            if row[6] not in checked:  # a damaged parameter text stops here, naming the store (_named_errors)
                if not isinstance(json.loads(row[6]), dict):
                    raise StructRankError(f"{self.path}: damaged result store (parameters {row[6][:40]!r} are not "
                                          "a JSON object)")
                checked.add(row[6])
            record = dict(zip(COLUMNS, row))
            if record["value"] is None:
                record["value"] = float("nan")
            records.append(record)
        return records

    def to_csv(self, path, keys: Iterable | None = None) -> Path:
        """Write :meth:`rows` to ``path`` as CSV (header :data:`~structrank_lab.experiments.COLUMNS`), atomically.

        Floats are written with ``repr``, so reading the file gives back the same numbers.
        """
        path = Path(path)
        with atomic_open(path, "w") as fh:
            writer = csv.writer(fh, lineterminator="\n")
            writer.writerow(COLUMNS)
            for record in self.rows(keys):
                writer.writerow([repr(v) if isinstance(v, float) else v
                                 for v in (record[c] for c in COLUMNS)])
        return path
