"""A durable record of finished experiment runs, in one SQLite file.

A *run* is one model trained and evaluated once: it is identified by a :class:`RunKey`
(experiment, dataset, split, fold, seed, model, params) and produces many measured values
(metric, convention, value). The store writes a run's values, its seconds and its finish time in
one transaction, so after a crash a run is either wholly recorded or not at all, and a resumed
experiment can skip exactly the runs that finished.

SQLite runs in WAL mode with a busy timeout, so several processes may open the same file and
record runs into it (readers never block the writer).

A store knows what it was made from, at two levels:

- the store: :meth:`ResultStore.claim` records the experiment's name and each data file's path,
  size, time stamp and SHA-256 (``data_identity``), and refuses a store that holds another
  experiment's runs, or whose data differ from the files given now: a file of the same name with
  other content, or a file gone from a data folder given again (renamed, decompressed, deleted).
  Files not seen before are added (a quick run, then the full one with more data sets, resumes).
  Refusing rather than rerunning keeps a wrong ``--data-dir`` from replacing hours of runs, and
  protects the caches some experiments compute from the data; ``reproduce --fresh`` starts afresh.
- each run: :meth:`ResultStore.record` stores the run's identity (``run_identity``): a digest of
  the content of the files the run read (SHA-256 of their bytes, with their names below the folder
  given; never the folder's own name or path) and a digest of the experiment (its name and
  configuration). A resumed experiment runs again every recorded run whose identity differs from
  the one it would have now, and a run recorded without one (a store written before run
  identities, schema version 1) counts as differing: it cannot be checked, so it is run again.

A file's SHA-256 is computed once per process for a given (path, size, mtime) (``content_digest``),
and a store's earlier record is trusted while path, size and mtime match, so a resume does not
reread large data. SQLite's errors (not a database, malformed, a folder) name the file.

Example
-------
>>> import tempfile, os
>>> from structrank.experiments.store import ResultStore, RunKey
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
import hashlib
import json
import math
import os
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Mapping

from structrank.atomic import atomic_open
from structrank.errors import StructRankError

#: Columns of ``results.csv`` and of every record :meth:`ResultStore.rows` returns, in order.
COLUMNS = (
    "experiment", "dataset", "split", "fold", "seed", "model", "params",
    "metric", "convention", "value", "seconds",
)
KEY_FIELDS = ("experiment", "dataset", "split", "fold", "seed", "model", "params")

#: 2: ``runs.identity`` (a run's ``run_identity``; NULL in a run that version 1 recorded)
_SCHEMA_VERSION = 2
_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id      INTEGER PRIMARY KEY,
    experiment  TEXT NOT NULL,
    dataset     TEXT NOT NULL,
    split       TEXT NOT NULL,
    fold        NOT NULL,            -- no type: an int fold stays an int, a named fold a str
    seed        INTEGER NOT NULL,
    model       TEXT NOT NULL,
    params      TEXT NOT NULL,       -- canonical JSON (sorted keys), part of the identity
    seconds     REAL NOT NULL,
    finished_at TEXT NOT NULL,
    identity    TEXT,                -- run_identity(): what the run read and which experiment made it
    UNIQUE (experiment, dataset, split, fold, seed, model, params)
);
CREATE TABLE IF NOT EXISTS meta (     -- the store's owner: experiment name, data identity (JSON)
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS measurements (
    run_id     INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    metric     TEXT NOT NULL,
    convention TEXT NOT NULL,
    value      REAL,                 -- NULL stands for NaN (SQLite stores no NaN)
    PRIMARY KEY (run_id, metric, convention)
);
"""


#: (real path, size, mtime_ns) -> SHA-256 of the file's bytes, for this process
_DIGESTS: dict[tuple, str] = {}


def _stat_key(path: Path) -> tuple:
    info = path.stat()
    return os.path.realpath(path), info.st_size, info.st_mtime_ns


def content_digest(path) -> str:
    """The SHA-256 (hex) of a file's bytes, computed once per process while its size and mtime stay."""
    key = _stat_key(Path(path))
    digest = _DIGESTS.get(key)
    if digest is None:
        with open(path, "rb") as fh:
            digest = hashlib.file_digest(fh, "sha256").hexdigest()
        _DIGESTS[key] = digest
    return digest


def file_identity(path, known: Mapping[str, Any] | None = None) -> dict:
    """{"path", "size", "mtime_ns", "sha256"} of one file.

    The hash is a full SHA-256 of the content (the benchmark data are tens of MB: a fraction of a
    second), but ``known`` (an earlier identity of the same file) is trusted when path, size and
    modification time all match, so resuming over large data does not read it all again.
    """
    path = Path(path)
    info = path.stat()
    identity = {"path": str(path.resolve()), "size": info.st_size, "mtime_ns": info.st_mtime_ns}
    if known and all(known.get(k) == v for k, v in identity.items()) and known.get("sha256"):
        _DIGESTS.setdefault((os.path.realpath(path), info.st_size, info.st_mtime_ns), known["sha256"])
    return {**identity, "sha256": content_digest(path)}


def data_files(sources: Iterable) -> dict[str, Path]:
    """{name: file} of the data files in ``sources`` (files, or folders walked recursively).

    A file is named by its folder's name and its path below it (``MQ2008/Fold1/train.txt.gz``), or
    by its own name when given alone, so the same data in another place has the same names. Hidden
    files and structrank's reading caches (``*.structrank-cache``) are not data.
    """
    files = {}
    for source in sources:
        source = Path(source)
        if source.is_file():
            files[source.name] = source
            continue
        for path in sorted(source.rglob("*")):
            rel = path.relative_to(source)
            if path.is_file() and not any(p.startswith(".") or p.endswith(".structrank-cache") for p in rel.parts):
                files[f"{source.name}/{rel.as_posix()}"] = path
    return files


def data_identity(sources: Iterable, known: Mapping[str, Mapping] | None = None) -> dict[str, dict]:
    """{name: file_identity} of every data file in ``sources`` (``known``: a store's earlier record)."""
    known = known or {}
    return {name: file_identity(path, known.get(name)) for name, path in data_files(sources).items()}


def inputs_digest(sources: Iterable) -> str:
    """A digest of the content of the files in ``sources`` (files, or folders walked as :func:`data_files`).

    What counts is each file's bytes and its name below the folder given (a file given alone: its own
    name), never the folder's name or where it is: the same files copied elsewhere give the same
    digest, other content under the same names another one.

    >>> import tempfile, pathlib
    >>> a, b = pathlib.Path(tempfile.mkdtemp()), pathlib.Path(tempfile.mkdtemp())
    >>> _ = (a / "train.txt").write_text("1 qid:1 1:0.5"), (b / "train.txt").write_text("1 qid:1 1:0.5")
    >>> inputs_digest([a]) == inputs_digest([b])
    True
    >>> _ = (b / "train.txt").write_text("0 qid:1 1:0.5")
    >>> inputs_digest([a]) == inputs_digest([b])
    False
    """
    items = []
    for source in sources:
        source = Path(source)
        files = data_files([source])
        prefix = "" if source.is_file() else source.name + "/"
        items += sorted((name[len(prefix):], content_digest(path)) for name, path in files.items())
    return hashlib.sha256(json.dumps(items, separators=(",", ":")).encode()).hexdigest()


def experiment_digest(experiment: str, config: Mapping[str, Any] | None = None) -> str:
    """A digest of an experiment's name and configuration (``config``: what changes its runs' values
    but not their keys; canonical JSON, so the order of its items does not matter)."""
    text = json.dumps({"experiment": experiment, "config": json.loads(canonical_params(config))},
                      sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def run_identity(experiment: str, sources: Iterable = (), config: Mapping[str, Any] | None = None) -> str:
    """What a run was made from, as stored with it: ``{"data": inputs_digest(sources), "experiment":
    experiment_digest(experiment, config)}`` as canonical JSON text.

    >>> import json
    >>> sorted(json.loads(run_identity("demo2024")))
    ['data', 'experiment']
    """
    return json.dumps({"data": inputs_digest(sources), "experiment": experiment_digest(experiment, config)},
                      sort_keys=True, separators=(",", ":"))


def identity_change(recorded: str | None, current: str) -> str:
    """Why a recorded run's identity differs from ``current``, in words ("" when it does not)."""
    if recorded == current:
        return ""
    if recorded is None:
        return "recorded without the identity of its data (a store older than run identities)"
    try:
        old, new = json.loads(recorded), json.loads(current)
    except ValueError:
        return "recorded with an identity that cannot be read"
    parts = [words for key, words in (("data", "the files it read differ"),
                                       ("experiment", "the experiment's configuration differs"))
             if old.get(key) != new.get(key)]
    return " and ".join(parts) or "recorded with another identity"


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


def _jsonable(obj):
    # numpy scalars and arrays show up in parameter grids; JSON knows neither.
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if isinstance(obj, (set, frozenset)):
        return sorted(obj)
    raise TypeError(f"parameter value {obj!r} of type {type(obj).__name__} is not JSON-serialisable")


def canonical_params(params: Mapping[str, Any] | str | None) -> str:
    """The canonical JSON text of a parameter dict: sorted keys, no spaces.

    Two dicts with the same items give the same text whatever their insertion order, so the text
    can be part of a run's identity. Note that ``1`` and ``1.0`` stay different.

    >>> canonical_params({"b": 2, "a": 1.0})
    '{"a":1.0,"b":2}'
    """
    if params is None:
        params = {}
    if isinstance(params, str):
        params = json.loads(params)
    if not isinstance(params, Mapping):
        raise TypeError(f"params must be a dict, got {type(params).__name__}")
    return json.dumps(dict(params), sort_keys=True, separators=(",", ":"), default=_jsonable,
                      allow_nan=True)


@dataclass(frozen=True, eq=False)
class RunKey:
    """The identity of one run: what was trained, on what, and how.

    Parameters
    ----------
    experiment : str
        Experiment name (``"chakrabarti2008"``).
    dataset : str
        Dataset name (``"MQ2008"``).
    split : str, default "test"
        Which part of the data the values were measured on.
    fold : int or str, default 0
        Cross-validation fold (an index or a name such as ``"Fold1"``).
    seed : int, default 0
        Random seed of the run.
    model : str
        Model short name (``"svm-map"``).
    params : dict
        Model and run parameters; compared through their canonical JSON text.

    Examples
    --------
    >>> RunKey("e", "d", model="m", params={"a": 1, "b": 2}) == RunKey(
    ...     "e", "d", model="m", params={"b": 2, "a": 1})
    True
    """

    experiment: str
    dataset: str
    split: str = "test"
    fold: int | str = 0
    seed: int = 0
    model: str = ""
    params: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        for name in ("experiment", "dataset", "split", "model"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value:
                raise ValueError(f"RunKey.{name} must be a non-empty string, got {value!r}")
        fold = self.fold
        if hasattr(fold, "item"):  # numpy integer
            fold = fold.item()
        if isinstance(fold, bool) or not isinstance(fold, (int, str)):
            raise ValueError(f"RunKey.fold must be an int or a str, got {self.fold!r}")
        object.__setattr__(self, "fold", fold)
        object.__setattr__(self, "seed", int(self.seed))
        params = json.loads(self.params) if isinstance(self.params, str) else dict(self.params)
        object.__setattr__(self, "params", params)
        # Computing it now also rejects parameters that cannot be stored.
        object.__setattr__(self, "_params_json", canonical_params(params))

    @property
    def params_json(self) -> str:
        """The canonical JSON text of ``params``."""
        return self._params_json

    def as_tuple(self) -> tuple:
        """The key as stored: the seven key fields, params as canonical JSON."""
        return (self.experiment, self.dataset, self.split, self.fold, self.seed, self.model,
                self._params_json)

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> "RunKey":
        """The key of a long-form record (a dict with the key columns)."""
        return cls(**{name: record[name] for name in KEY_FIELDS})

    def label(self) -> str:
        """A short human-readable name, for logs and progress bars."""
        return (f"{self.experiment}/{self.dataset}/{self.split}/fold={self.fold}/"
                f"seed={self.seed}/{self.model}{self._params_json}")

    # Equality and hashing go through the canonical tuple: params is a dict (unhashable), and
    # {"C": 1} must equal itself however it was built.
    def __eq__(self, other):
        if not isinstance(other, RunKey):
            return NotImplemented
        return self.as_tuple() == other.as_tuple()

    def __hash__(self):
        return hash(self.as_tuple())


def _as_key(key) -> RunKey:
    if isinstance(key, RunKey):
        return key
    if isinstance(key, Mapping):
        return RunKey.from_record(key)
    raise TypeError(f"expected a RunKey, got {type(key).__name__}")


def _measurement(row) -> tuple[str, str, float | None]:
    """(metric, convention, value) from a tuple, a mapping or an object with those attributes."""
    if isinstance(row, Mapping):
        metric, convention, value = row["metric"], row["convention"], row["value"]
    elif hasattr(row, "metric"):
        metric, convention, value = row.metric, row.convention, row.value
    else:
        metric, convention, value = row
    if not isinstance(metric, str) or not metric or not isinstance(convention, str):
        raise ValueError(f"a measurement needs a metric name and a convention, got {row!r}")
    value = float(value)
    return metric, convention, (None if math.isnan(value) else value)


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
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("BEGIN IMMEDIATE")
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version not in (0, 1, _SCHEMA_VERSION):
                raise StructRankError(
                    f"{self.path}: result store schema version {version}, expected "
                    f"{_SCHEMA_VERSION}; move the old file away to start afresh")
            # One statement at a time: executescript() would COMMIT our transaction early.
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    conn.execute(statement)
            if version == 1:  # its runs have no identity (NULL): a resume runs them again
                conn.execute("ALTER TABLE runs ADD COLUMN identity TEXT")
            conn.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            conn.close()
            raise
        self._conn, self._pid = conn, os.getpid()
        return conn

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
        key = _as_key(key)
        measured = [_measurement(row) for row in rows]
        if not measured:
            raise ValueError(f"run {key.label()} measured nothing; a run needs at least one value")
        pairs = [(m, c) for m, c, _ in measured]
        if len(set(pairs)) != len(pairs):
            raise ValueError(f"run {key.label()} measured a (metric, convention) twice: {pairs}")
        finished = datetime.now(timezone.utc).isoformat(timespec="seconds")
        conn = self._connect()
        # IMMEDIATE takes the write lock now, so the existence check and the insert cannot be
        # interleaved with another process's insert of the same key.
        conn.execute("BEGIN IMMEDIATE")
        try:
            if identity is not None:  # a run made from something else is replaced (its values go by CASCADE)
                conn.execute("DELETE FROM runs WHERE experiment=? AND dataset=? AND split=? AND fold=? AND seed=?"
                             " AND model=? AND params=? AND identity IS NOT ?", (*key.as_tuple(), identity))
            cursor = conn.execute(
                "INSERT OR IGNORE INTO runs (experiment, dataset, split, fold, seed, model, params,"
                " seconds, finished_at, identity) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (*key.as_tuple(), float(seconds), finished, identity))
            if cursor.rowcount == 0:
                conn.execute("ROLLBACK")
                return False
            run_id = cursor.lastrowid
            conn.executemany(
                "INSERT INTO measurements (run_id, metric, convention, value) VALUES (?, ?, ?, ?)",
                [(run_id, m, c, v) for m, c, v in measured])
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return True

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
    def __len__(self) -> int:
        """The number of recorded runs."""
        return self._connect().execute("SELECT COUNT(*) FROM runs").fetchone()[0]

    @_named_errors
    def rows(self, keys: Iterable | None = None) -> list[dict]:
        """Every measured value in long form, one dict per value with the :data:`~structrank.experiments.COLUMNS`.

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
        """Write :meth:`rows` to ``path`` as CSV (header :data:`~structrank.experiments.COLUMNS`), atomically.

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
