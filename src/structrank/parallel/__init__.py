"""Per-query work spread over threads of this process or a dask.distributed cluster, with the same bits.

Every structured learner's expensive step is a set of independent per-query computations (one
cutting-plane iteration's oracle calls and feature sums, one perceptron epoch over a part of the
queries). The learners cut the training queries into shards of whole queries and map a function
over them; each module here holds one piece of that:

- ``rows``: how the numba kernels read rows (``row_arrays``, ``row_span``, ``row_column``: dense
  or CSR, one loop for both), ``dense_view``, and the products with a fixed summation order
  (``matvec``, ``rmatvec``);
- ``shards``: ``ShardedQueries`` (the shards and their ``map``), ``ShardGroup`` (a cluster
  worker's shards), the shards of a memory-mapped ``LetorCache``, and ``ordered_sum``, the one
  reduction of the shards' results;
- ``scratch``: what a shard step keeps from one call to the next: this thread's buffers
  (``scratch``) and values computed once per shard (``shard_memo``);
- ``workers``: where a map runs: this process's thread pools, the client of joblib's active
  dask backend (``dask_client``), and ``cluster(address)``, the context that activates it.

The shards depend on the data and ``shard_rows`` only, never on the number of workers, and the
learners add the shards' results up in shard order, so a model trained on 1 worker, 8 workers or
a cluster is the same to the last bit. docs/DISTRIBUTED.md is the user's guide.
"""
