"""What a shard step keeps from one call to the next: this thread's buffers and the shard's own values.

- ``scratch``: a reusable per-row temporary, one buffer per name, dtype and thread;
- ``shard_memo``: a value that depends on the shard's data only (a loss's fixed ideal structure,
  a dense view of its rows), kept in the shard dict under a private key that ``shards.shipped``
  never sends to a cluster.
"""

from __future__ import annotations

import threading

import numpy as np

_SCRATCH = threading.local()


def scratch(name, n, dtype=np.float64) -> np.ndarray:
    """This thread's reusable array ``name`` of ``n`` elements (contents undefined).

    Why: a shard's per-row temporaries (scores, coefficients, orders: 8 bytes a row each, a
    shard's rows) are large enough for glibc to serve each from a fresh mmap whose pages fault in
    again at every call, or to trim its heap after each free. In a young worker process that
    made a cutting-plane shard step markedly slower than the same step in a long-lived main
    process (docs/BENCHMARKS.md, "Scale", times shard steps in worker processes). A shard
    function asks for its temporaries here instead; one buffer per name and thread grows to the
    largest shard and is reused, and nothing it returns may alias one.
    """
    pool = _SCRATCH.__dict__.setdefault("pool", {})
    key = (name, np.dtype(dtype).str)
    buffer = pool.get(key)
    if buffer is None or buffer.size < n:
        buffer = pool[key] = np.empty(max(int(n), 1), dtype=dtype)
    return buffer[:n]


def shard_memo(shard, key, compute):
    """``compute()``, kept in the shard for its next use (a value that depends on the shard's
    rows and labels only, such as a loss's fixed ideal structure). The shard dict lives as long
    as its data in this process (a cache shard's views are kept per process), so the memo
    does too; its private key is never written out with the shard."""
    memo = shard.setdefault("_memo", {})
    if key not in memo:
        memo[key] = compute()
    return memo[key]
