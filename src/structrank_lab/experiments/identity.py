"""What an experiment's store and runs were made from: the identity of data files, inputs and runs.

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
reread large data.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Iterable, Mapping

from structrank_lab.experiments.run_key import canonical_params


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
