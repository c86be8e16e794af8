"""The SQL schema of a result store (``structrank_lab.experiments.store``) and the migration of older files.

Version 1 had no ``runs.identity``; a store of that version opens, its runs with no identity (NULL), so that a
resumed experiment runs them again.
"""

from __future__ import annotations

import sqlite3

from structrank.errors import StructRankError

#: 2: ``runs.identity`` (a run's ``run_identity``; NULL in a run that version 1 recorded)
SCHEMA_VERSION = 2
SCHEMA = """
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


def ensure_schema(conn: sqlite3.Connection, path) -> None:
    """Create the tables of a new store, or bring an older one (``path``'s) to ``SCHEMA_VERSION``, inside the
    caller's transaction; a store of an unknown version is refused."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version not in (0, 1, SCHEMA_VERSION):
        raise StructRankError(
            f"{path}: result store schema version {version}, expected "
            f"{SCHEMA_VERSION}; move the old file away to start afresh")
    # One statement at a time: executescript() would COMMIT our transaction early.
    for statement in SCHEMA.split(";"):
        if statement.strip():
            conn.execute(statement)
    if version == 1:  # its runs have no identity (NULL): a resume runs them again
        conn.execute("ALTER TABLE runs ADD COLUMN identity TEXT")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


__all__ = ["SCHEMA", "SCHEMA_VERSION", "ensure_schema"]
