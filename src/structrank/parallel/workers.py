"""Where a shard map runs: this process's threads, or the workers of a dask.distributed cluster.

- ``thread_pool``: this process's pool of ``n`` threads, kept for the next map. Threads, not
  processes: every shard function spends its time in numba kernels compiled with ``nogil=True``
  (all of structrank's are), so the threads run at once on the shards in place, with nothing
  written, shipped or mapped again per worker (sklearn's forests use joblib's threads for the same
  reason). loky's worker processes, used before, paid an IPC round trip, a wake-up and a shard's
  move to another process's cache at every map, which kept LSP-AP's short epochs well below the
  speed-up threads reach (docs/BENCHMARKS.md, "Scale", sets 2 threads beside the machine's ceiling);
- ``dask_client``: the client of joblib's active dask backend (``joblib.parallel_backend("dask")``
  or ``parallel_config(backend="dask")`` with a ``distributed.Client``), else None;
  ``cluster(address)`` is the context that connects one and activates the backend
  (``--scheduler``);
- ``in_worker`` and ``gather``: a fit that is itself a task on the cluster (a grid point of
  ``--scheduler``) waits for its own tasks without holding its worker's thread;
- ``contiguous_groups``: one contiguous group of shards per worker.
"""

from __future__ import annotations

import contextlib
import functools
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from joblib import parallel_backend
from joblib.parallel import get_active_backend


def in_worker() -> bool:
    # deferred: optional extra (distributed), used only with a dask cluster
    from distributed.worker import get_worker

    try:
        get_worker()
    except ValueError:
        return False
    return True


def gather(client, futures):
    """``client.gather(futures)``; inside a dask worker's task (a fit that is one point of a grid
    spread over the cluster), the task secedes from the worker's thread pool while it waits, as
    dask's tasks that launch tasks must, or its own tasks would wait for its thread forever."""
    # deferred: optional extra (distributed), used only with a dask cluster
    from distributed import rejoin, secede
    from distributed.worker import get_worker

    try:
        get_worker()
    except ValueError:  # not in a worker
        return client.gather(futures)
    secede()
    try:
        return client.gather(futures)
    finally:
        rejoin()


def cluster(address=None):
    """A context in which joblib (and so every structrank learner and runner) uses the dask cluster.

    ``address`` is the scheduler's (``tcp://host:8786``); None is no cluster (a null context).
    The client is closed on exit.
    """
    if address is None:
        return contextlib.nullcontext()

    @contextlib.contextmanager
    def connected():
        try:
            # deferred: optional extra (distributed), used only with a dask cluster
            from distributed import Client
        except ImportError as exc:
            raise ImportError("--scheduler needs dask.distributed: pip install 'structrank[distributed]'") from exc

        with Client(address) as client, parallel_backend("dask"):
            yield client

    return connected()


def dask_client():
    """The distributed Client of an active joblib dask backend, else None."""
    backend, _ = get_active_backend()
    return getattr(backend, "client", None) if type(backend).__name__ == "DaskDistributedBackend" else None


def contiguous_groups(n_shards, workers):
    """Contiguous groups of shard indices, one per worker.

    One task per worker: on a cluster a task costs a network round trip. Smaller groups (4 per
    worker, so that a faster core could take more) were measured with worker processes at 10^6 rows
    and were no faster, and on a LocalCluster they were slower than one group a worker.
    """
    return np.array_split(np.arange(n_shards), min(n_shards, max(1, workers)))


@functools.lru_cache(maxsize=4)
def thread_pool(workers) -> ThreadPoolExecutor:
    """This process's pool of ``workers`` threads for shard maps, kept for the next map."""
    return ThreadPoolExecutor(workers, thread_name_prefix="structrank-shards")
