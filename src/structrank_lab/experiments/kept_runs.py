"""Finished runs kept in the repository as text, one small file per run, which a result store reads back.

A costly experiment's SQLite store lives in its ``--out`` folder, which git ignores; a machine that starts from
the repository would start its grid from nothing. So every run such an experiment finishes is also written to a
folder of the repository (``results/<experiment>/``, ``reproduce --keep``), and a reproduction first reads that
folder into its store: the grid grows across machines and sessions, and ``structrank results`` regenerates the
page from the folder with no rerun.

One run is one file (``<dataset>-<seed>-<model>-<digest>.tsv``: two machines that finish different runs never
touch the same file), tab-separated lines:

    #structrank-kept-run	1
    key	{"dataset": ..., "experiment": ..., "fold": ..., "model": ..., "params": {...}, "seed": ..., "split": ...}
    identity	<run_identity's JSON, or "-">
    seconds	<float>
    finished_at	<ISO time>
    <metric>	<convention>	<value>        (one line per measured value; repr of the float, "nan" for NaN)

A file is written atomically; a damaged one is named (file, line, field) when read. Beside the runs,
``wall_time.json`` holds the wall time of the last ``reproduce --keep`` call that ran every run of the experiment.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path

from structrank.atomic import write_bytes_atomic, write_text_atomic
from structrank.errors import DataFormatError
from structrank_lab.experiments.run_key import RunKey, canonical_params
from structrank_lab.experiments.store import ResultStore

MAGIC = "#structrank-kept-run"
VERSION = 1
SUFFIX = ".tsv"
#: the whole reproduction's wall time, kept beside its runs (``runner.run_experiment``)
WALL_TIME = "wall_time.json"


def run_file_name(key: RunKey) -> str:
    """The file name of run ``key``: readable fields and a digest of the whole key."""
    digest = hashlib.sha256(json.dumps(key.as_tuple(), default=str).encode()).hexdigest()[:10]
    slug = re.sub(r"[^A-Za-z0-9.+-]+", "_", f"{key.dataset}-{key.split}-{key.fold}-s{key.seed}-{key.model}").strip("_")
    return f"{slug}-{digest}{SUFFIX}"


def _key_json(key: RunKey) -> str:
    return json.dumps({"experiment": key.experiment, "dataset": key.dataset, "split": key.split, "fold": key.fold,
                       "seed": key.seed, "model": key.model, "params": json.loads(canonical_params(key.params))},
                      sort_keys=True, separators=(",", ":"))


def write_run(folder, key: RunKey, rows, seconds: float, finished_at: str, identity: str | None) -> Path:
    """Write one finished run (its measured ``rows``: (metric, convention, value)) into ``folder``, atomically."""
    lines = [f"{MAGIC}\t{VERSION}", f"key\t{_key_json(key)}", f"identity\t{identity or '-'}",
             f"seconds\t{float(seconds)!r}", f"finished_at\t{finished_at}"]
    for metric, convention, value in sorted(rows, key=lambda r: (r[0], r[1])):
        if "\t" in metric or "\n" in metric or "\t" in convention or "\n" in convention:
            raise ValueError(f"a kept run's metric or convention holds a tab or a line end: {metric!r}")
        value = float(value)
        lines.append(f"{metric}\t{convention}\t{'nan' if math.isnan(value) else repr(value)}")
    path = Path(folder) / run_file_name(key)
    Path(folder).mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, "\n".join(lines) + "\n")
    return path


def read_run(path) -> dict:
    """One kept run: {"key": RunKey, "identity": str | None, "seconds": float, "finished_at": str, "rows": [...]}."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines or lines[0] != f"{MAGIC}\t{VERSION}":
        raise DataFormatError(path, 1, f"not a kept run of version {VERSION} (first line {lines[0][:40]!r})"
                              if lines else "empty file", "header")
    fields = {}
    for number, name in enumerate(("key", "identity", "seconds", "finished_at"), 2):
        if len(lines) < number or not lines[number - 1].startswith(name + "\t"):
            raise DataFormatError(path, number, f"expected the {name} line", name)
        fields[name] = lines[number - 1][len(name) + 1:]
    try:
        raw = json.loads(fields["key"])
        key = RunKey(raw["experiment"], raw["dataset"], raw["split"], raw["fold"], int(raw["seed"]), raw["model"],
                     raw["params"])
    except (ValueError, KeyError, TypeError) as exc:
        raise DataFormatError(path, 2, f"the run's key cannot be read ({exc})", "key") from None
    try:
        seconds = float(fields["seconds"])
    except ValueError:
        raise DataFormatError(path, 4, f"not a number: {fields['seconds']!r}", "seconds") from None
    rows = []
    for number, line in enumerate(lines[5:], 6):
        parts = line.split("\t")
        if len(parts) != 3:
            raise DataFormatError(path, number, f"expected metric, convention and value, got {len(parts)} fields",
                                  "measurement")
        try:
            value = float(parts[2])
        except ValueError:
            raise DataFormatError(path, number, f"not a number: {parts[2]!r}", "value") from None
        rows.append((parts[0], parts[1], value))
    if not rows:
        raise DataFormatError(path, 6, "the run measured nothing", "measurement")
    identity = None if fields["identity"] == "-" else fields["identity"]
    return {"key": key, "identity": identity, "seconds": seconds, "finished_at": fields["finished_at"], "rows": rows}


def read_runs(folder) -> list:
    """Every kept run of ``folder``, in file-name order ([] when the folder is not there)."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    return [read_run(path) for path in sorted(folder.glob(f"*{SUFFIX}"))]


def import_runs(store, folder) -> int:
    """Record into ``store`` the kept runs of ``folder`` it does not hold, each with the time it finished, in one
    transaction; how many were recorded."""
    held = store.completed_keys()
    return store.record_runs(run for run in read_runs(folder) if run["key"] not in held)


def export_run(store, folder, key: RunKey) -> Path:
    """Write the run ``key`` as ``store`` holds it into ``folder``."""
    records = store.rows([key])  # one read of the run's values; each record carries the run's seconds
    rows = [(r["metric"], r["convention"], r["value"]) for r in records]
    return write_run(folder, key, rows, records[0]["seconds"], store.finished_at(key), store.identities().get(key))


def folder_store(folder, path):
    """A result store at ``path`` (a new SQLite file) holding the kept runs of ``folder``: what ``structrank results``
    reads a kept folder through. The folder's ``wall_time.json`` (the wall time of the ``reproduce --keep`` call that
    ran all its runs) is copied beside the store, where the reports look for it."""
    store = ResultStore(path)
    import_runs(store, folder)
    timing = Path(folder) / WALL_TIME
    if timing.is_file():
        write_bytes_atomic(Path(path).parent / WALL_TIME, timing.read_bytes())
    return store


def open_runs(path, scratch) -> ResultStore:
    """The runs at ``path`` as a result store: a ``results.sqlite`` file, a ``reproduce`` out folder holding one, or a
    folder of kept runs (read into a new store in ``scratch``, an empty folder the caller removes afterwards)."""
    path = Path(path)
    if path.is_file():
        return ResultStore(path)
    if (path / "results.sqlite").is_file():
        return ResultStore(path / "results.sqlite")
    if path.is_dir() and any(path.glob(f"*{SUFFIX}")):
        return folder_store(path, Path(scratch) / "results.sqlite")
    raise FileNotFoundError(f"{path}: no result store (results.sqlite) and no kept runs (*{SUFFIX}) there")


__all__ = ["export_run", "folder_store", "import_runs", "open_runs", "read_run", "read_runs", "run_file_name",
           "write_run"]
