"""Queries cut into shards of whole queries, and a function mapped over them wherever joblib says.

``ShardedQueries`` cuts the training queries into *shards*, contiguous ranges of whole queries
of about ``shard_rows`` rows each (``shard_bounds``), and ``map`` applies a function to every
shard, giving each worker one contiguous group of shards:

- ``n_jobs=None`` or 1 and no dask backend active: in this process, shard after shard;
- ``n_jobs > 1``: on that many threads of this process (``workers.thread_pool``), used through
  the executor directly rather than ``joblib.Parallel``, whose result loop sleeps between polls
  whenever no task is done (a wait as long as a good part of a short perceptron epoch);
- inside ``joblib.parallel_backend("dask")`` with a ``distributed.Client``: one ``ShardGroup``
  actor per worker, created at the first map, holds a contiguous group of shards in proportion
  to the worker's threads for the whole fit and is called by the client directly, with no
  scheduler round trip per iteration (which had held a 2-process LocalCluster to about the speed
  of one process at 10^6 rows), and a call's arguments and results travel as one pickle each (``packed``);
- inside a worker's task (a grid point fitted on the cluster): the shards are scattered once
  (``client.scatter``), and each map submits one task per worker thread, each pinned to its
  worker, through that backend's client, for the same reason.

``ShardedQueries.from_cache`` makes the shards of a memory-mapped ``LetorCache`` references
(``CacheShard``: folder, query range, the manifest's time stamp) that each process maps itself:
nothing is shipped, and memory stays proportional to a shard. A process keeps its shard dicts,
memo included, for up to 4,096 shards (with 64, a 10^7-row cache's 200 shards, walked in a
cycle, missed every time), keyed by the time stamp so a rebuilt cache is never served stale.

The shards depend on the data and ``shard_rows`` only, never on the number of workers, and the
learners add the shards' results up in shard order (``ordered_sum``), with the fixed-order
products of ``rows``, so a model trained on 1 worker, 8 workers or a cluster is the same to the
last bit.

>>> import numpy as np
>>> X = np.arange(12.0).reshape(6, 2)
>>> shards = ShardedQueries({"X": X}, np.array([0, 2, 3, 6]), shard_rows=3)
>>> [(s["q_lo"], s["q_hi"]) for s in shards.shards]
[(0, 2), (2, 3)]
>>> [float(s["X"].sum()) for s in shards.shards]
[15.0, 51.0]
"""

from __future__ import annotations

import collections
import functools
import itertools
import pickle
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np
from joblib import effective_n_jobs

from structrank.parallel.workers import contiguous_groups, dask_client, gather, in_worker, thread_pool

DEFAULT_SHARD_ROWS = 100_000


class Trip(NamedTuple):
    """One call of a map on a cluster's ``ShardGroup`` actors, as the client saw it."""

    map_id: int  # the calls of one map (one iteration's) share it
    bytes_out: int  # the packed arguments
    bytes_back: int  # the packed results
    seconds: float  # from the map's calls to this call's result, at the client
    busy: float  # the worker's work on it (its apply, start to end)


#: The latest calls on actors, in this process: what ``structrank bench`` reports of where a cluster
#: fit's time goes (the workers' work, the round trips beyond it, the bytes moved). Durations only,
#: as the clocks of a cluster's machines need not agree.
TRIPS: collections.deque = collections.deque(maxlen=100_000)
_MAP_IDS = itertools.count()


def shard_bounds(offsets, shard_rows=DEFAULT_SHARD_ROWS) -> list:
    """[(q_lo, q_hi)]: contiguous query ranges of at most ``shard_rows`` rows, never splitting a query.

    A query longer than ``shard_rows`` is a shard of its own.

    >>> shard_bounds(np.array([0, 4, 5, 9, 10]), shard_rows=5)
    [(0, 2), (2, 4)]
    """
    if int(shard_rows) != shard_rows or shard_rows < 1:
        raise ValueError(f"shard_rows must be a positive integer, got {shard_rows!r}")
    offsets = np.asarray(offsets, dtype=np.int64)
    n_queries = offsets.size - 1
    bounds, q = [], 0
    while q < n_queries:
        # the last query boundary at or before offsets[q] + shard_rows (at least one query)
        end = int(np.searchsorted(offsets, offsets[q] + shard_rows, side="right")) - 1
        end = min(max(end, q + 1), n_queries)
        bounds.append((q, end))
        q = end
    return bounds


class ShardedQueries:
    """Per-row arrays of many queries, cut into shards of whole queries (module docstring).

    Parameters
    ----------
    arrays : dict of str -> ndarray or CSR matrix
        Row-aligned arrays (X, y, relevance, ...); sliced by rows, so a shard holds views.
    offsets : ndarray of int
        Query boundaries (``offsets[q]:offsets[q+1]`` are the rows of query q).
    shard_rows : int
        At most how many rows a shard holds (unless one query is longer).

    Each shard is a dict of the arrays' slices plus ``offsets`` (rebased to the shard's first
    row), ``q_lo``, ``q_hi`` (its queries) and ``row_lo``, ``row_hi``.
    """

    def __init__(self, arrays, offsets, shard_rows=DEFAULT_SHARD_ROWS):
        offsets = np.asarray(offsets, dtype=np.int64)
        self.offsets = offsets
        self.bounds = shard_bounds(offsets, shard_rows)
        self.shards = []
        for q_lo, q_hi in self.bounds:
            lo, hi = int(offsets[q_lo]), int(offsets[q_hi])
            shard = {name: array[lo:hi] for name, array in arrays.items()}
            shard.update(offsets=offsets[q_lo:q_hi + 1] - lo, q_lo=q_lo, q_hi=q_hi, row_lo=lo, row_hi=hi)
            self.shards.append(shard)
        self._futures = self._client = self._actor_futures = self._group_actors = None

    @classmethod
    def from_cache(cls, cache, shard_rows=DEFAULT_SHARD_ROWS):
        """Shards of a memory-mapped LETOR cache (structrank.data.cache), never copied in full.

        A shard is only a reference (cache folder, query range): wherever it is used (this
        process and its threads, a dask worker that sees the same storage) it maps the cache and
        reads views of its rows, so memory stays proportional to a shard, and nothing is shipped.
        """
        self = cls.__new__(cls)
        self.offsets = np.asarray(cache.offsets, dtype=np.int64)
        self.bounds = shard_bounds(self.offsets, shard_rows)
        stamp = cache_stamp(cache.folder)
        self.handles = [CacheShard(str(cache.folder), int(lo), int(hi), stamp) for lo, hi in self.bounds]
        self._futures = self._client = self._actor_futures = self._group_actors = None
        return self

    @property
    def shards(self):
        if getattr(self, "handles", None) is None:
            return self._shards
        return [cache_shard(h) for h in self.handles]

    @shards.setter
    def shards(self, value):
        self._shards = value
        self.handles = None

    def __len__(self):
        return len(self.bounds)

    def map(self, fn, *args, n_jobs=None, per_shard=None) -> list:
        """``[fn(shard, *args) for shard in shards]``, computed where the joblib backend says.

        ``per_shard``: a list with one more argument for each shard (passed last).
        """
        extra = [()] * len(self) if per_shard is None else [(a,) for a in per_shard]
        if len(extra) != len(self):
            raise ValueError(f"per_shard has {len(extra)} entries for {len(self)} shards")
        client = dask_client()
        if client is None:
            items = self.handles if self.handles is not None else self.shards
            workers = 1 if n_jobs is None else effective_n_jobs(n_jobs)
            return _apply_on_threads(fn, list(zip(items, extra)), args, workers)
        if not in_worker():
            return self._map_on_actors(client, fn, args, extra)
        handles = self.handles if self.handles is not None else self._scattered(client)
        # inside a worker's task (a grid point fitted on the cluster): the client of the active joblib
        # dask backend, used directly for the same reason: a task per worker thread and one gather,
        # without joblib's polling loop
        # one slot per worker thread, and each group pinned to its slot's worker: left to itself the
        # scheduler may start both groups on the worker that answered first (a LocalCluster of 2 then
        # ran hardly faster than one process), and a shard that stays on one process keeps its mapped pages and
        # its memo there from one iteration to the next
        info = client.scheduler_info()["workers"]  # may be empty in a worker's client: then unpinned
        slots = [address for address in sorted(info) for _ in range(info[address].get("nthreads", 1))]
        groups = contiguous_groups(len(handles), len(slots))
        # dask refuses allow_other_workers= without workers=: an unpinned group passes neither
        placement = [dict(workers=[slots[g]], allow_other_workers=False) if slots else {} for g in range(len(groups))]
        futures = [client.submit(_apply_group, fn, [(handles[i], extra[i]) for i in group], args, pure=False,
                                 **placement[g])
                   for g, group in enumerate(groups)]
        return [r for group in gather(client, futures) for r in group]

    def _map_on_actors(self, client, fn, args, extra):
        """The map on the cluster's workers through one ``ShardGroup`` actor each: the client calls
        them directly, one round trip per worker and no scheduler in between (a task through the
        scheduler added its own round trip to every map, which at 10^6 rows held a LocalCluster of 2
        processes to about the speed of one; docs/BENCHMARKS.md, "Scale", gives the cluster's
        speed-up and the round trip beyond the workers' work per iteration)."""
        actors, map_id = self._actors(client), next(_MAP_IDS)
        payloads = [packed((fn, args, [extra[i] for i in group])) for _, group in actors]
        start = time.perf_counter()
        calls = [actor.apply(payload) for (actor, _), payload in zip(actors, payloads)]
        results = []
        for call, payload in zip(calls, payloads):
            data = call.result()
            busy, part = unpacked(data)
            TRIPS.append(Trip(map_id, len(payload), len(data), time.perf_counter() - start, busy))
            results += part
        return results

    def _actors(self, client):
        """[(actor, shard indices)]: one ``ShardGroup`` per worker, created on the first map, holding
        a contiguous group of shards in proportion to its threads, pinned there for the fit."""
        if self._actor_futures is None or self._client is not client:
            info = client.scheduler_info()["workers"]
            if not info:  # a cluster that has just started: its workers are still registering
                client.wait_for_workers(1)
                info = client.scheduler_info()["workers"]
            addresses = sorted(info)
            threads = [int(info[a].get("nthreads", 1)) for a in addresses]
            items = self.handles if self.handles is not None else [shipped(shard) for shard in self.shards]
            groups = contiguous_groups(len(items), sum(threads))
            placed, first = [], 0
            for address, n in zip(addresses, threads):
                mine = groups[first:first + n]
                first += n
                if mine:
                    placed.append((address, n, np.concatenate(mine)))
            self._actor_futures = [client.submit(ShardGroup, [items[i] for i in index], n, actor=True,
                                                 workers=[address], allow_other_workers=False)
                                   for address, n, index in placed]
            self._group_actors = [(future.result(), index) for future, (_, _, index) in
                                  zip(self._actor_futures, placed)]
            self._client = client
        return self._group_actors

    def _scattered(self, client):
        if self._futures is None or self._client is not client:
            self._futures = client.scatter([shipped(shard) for shard in self.shards], hash=False)
            self._client = client
        return self._futures

    def close(self):
        """Release the shards scattered to a cluster, and the actors that hold them."""
        self._futures = self._client = self._actor_futures = self._group_actors = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


class ShardGroup:
    """A dask actor: a group of shards (cache references, or shard dicts shipped once) that one
    worker keeps for a fit, with their memo (``scratch.shard_memo``), and maps over on its own threads."""

    def __init__(self, items, threads=1):
        self.items, self.threads = items, threads

    def apply(self, call):
        """``packed((fn, args, extra))`` -> ``packed((seconds of work, [fn(shard, *args, *more) for each shard]))``."""
        start = time.perf_counter()
        fn, args, extra = unpacked(call)
        results = _apply_on_threads(fn, list(zip(self.items, extra)), args, self.threads)
        return packed((time.perf_counter() - start, results))


def packed(value) -> bytes:
    """One pickle (protocol 5) of a call's arguments or results. Why: dask serialises every NumPy array
    of a message as frames of its own, and a call of 100 shards moves a few hundred small arrays
    (the shards' visiting orders out, their weights back), each with its own overhead; packed, the
    round trips of LSP-AP's epochs at 10^7 rows on a LocalCluster of 2 fell severalfold
    (docs/BENCHMARKS.md, "Scale", gives each cluster fit's round trip and bytes moved per iteration)."""
    return pickle.dumps(value, protocol=5)


def unpacked(data: bytes):
    return pickle.loads(data)


def shipped(shard) -> dict:
    """The shard as sent to a cluster: its data, without this process's memo (``scratch.shard_memo``)."""
    return {name: value for name, value in shard.items() if not name.startswith("_")}


class CacheShard(NamedTuple):
    """(cache folder, q_lo, q_hi, stamp): a shard of a LETOR cache, opened where it is used.

    ``stamp`` (the manifest's modification time) tells a rebuilt cache from the one a process
    has mapped already, since both the opened caches and the shards' views are kept per process.
    """

    folder: str
    q_lo: int
    q_hi: int
    stamp: int = 0


def serves_shards(X) -> bool:
    """Whether ``X`` supplies its own shards (a memory-mapped ``LetorCache``) rather than being rows.
    The cache says so itself (a class attribute ``serves_shards = True``), so a learner asks this
    instead of importing the reader that made it (the layers: learners know no file format)."""
    return getattr(type(X), "serves_shards", False) is True


def cache_stamp(folder) -> int:
    return Path(folder, "manifest.json").stat().st_mtime_ns


@functools.lru_cache(maxsize=8)
def _open_cache(folder, stamp=0):
    # deferred: the cache's reader (SciPy) loads only to serve shards from a cache folder
    from structrank.data.cache import LetorCache

    return LetorCache.load(folder)


# A worker serves the same shards at every iteration: keep them all (10^7 rows in shards of 50,000
# are 200; with 64 kept, an LRU cache walked in a cycle missed every time and lost each shard's memo)
@functools.lru_cache(maxsize=4096)
def cache_shard(handle) -> dict:
    """The shard dict of a ``CacheShard``: CSR views of the mapped arrays (only indptr is copied)."""
    folder, q_lo, q_hi, stamp = handle
    cache = _open_cache(folder, stamp)
    lo, hi = cache.query_range(q_lo, q_hi)
    X, y, offsets = cache.rows(q_lo, q_hi, copy=False)
    return {"X": X, "y": y, "offsets": offsets, "q_lo": q_lo, "q_hi": q_hi, "row_lo": lo, "row_hi": hi}


def _apply_on_threads(fn, pairs, args, threads) -> list:
    """``[fn(shard, *args, *more) for (shard or handle, more) in pairs]``, in order, on ``threads``
    threads of this process: one task per thread over a contiguous group of pairs, through the
    executor directly rather than joblib.Parallel, whose result loop sleeps between polls whenever no
    task is done (the module's docstring says why that matters)."""
    if threads == 1:
        return _apply_group(fn, pairs, args)
    executor = thread_pool(threads)
    futures = [executor.submit(_apply_group, fn, [pairs[i] for i in group], args)
               for group in contiguous_groups(len(pairs), threads)]
    return [r for future in futures for r in future.result()]


def _apply_group(fn, items, args):
    return [_apply(fn, handle, *args, *more) for handle, more in items]


def _apply(fn, handle, *args):
    shard = cache_shard(handle) if isinstance(handle, CacheShard) else handle
    return fn(shard, *args)


def ordered_sum(parts):
    """Sum of arrays (or numbers) in the given order: the one reduction every learner uses."""
    total = None
    for part in parts:
        total = part if total is None else total + part
    return total
