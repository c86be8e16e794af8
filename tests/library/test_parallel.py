"""Sharded training: the same model on 1 worker, 2 workers and a dask.distributed LocalCluster."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from structrank.data import make_ranking_dataset
from structrank.learners.latent import LatentPerceptronRanker
from structrank.learners.ssvm import StructSVMRanker
from structrank.parallel.rows import matvec, rmatvec
from structrank.parallel.shards import ShardedQueries, ordered_sum, shard_bounds


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(1, 30), min_size=1, max_size=40), st.integers(1, 60))
def test_shards_cover_the_queries_in_order_without_splitting_one(sizes, shard_rows):
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    bounds = shard_bounds(offsets, shard_rows)
    assert bounds[0][0] == 0 and bounds[-1][1] == len(sizes)
    assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:])) and all(lo < hi for lo, hi in bounds)
    for lo, hi in bounds:  # a shard is over shard_rows only when it is a single query
        assert offsets[hi] - offsets[lo] <= shard_rows or hi - lo == 1


def test_shard_bounds_rejects_bad_sizes():
    with pytest.raises(ValueError, match="shard_rows"):
        shard_bounds(np.array([0, 3]), 0)


@pytest.mark.parametrize("sparse", [False, True])
def test_fixed_order_products_equal_numpy(sparse):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 7)).astype(np.float32)
    X[X < 0.3] = 0.0
    A = sp.csr_matrix(X) if sparse else X
    w, c = rng.normal(size=7), rng.normal(size=40)
    np.testing.assert_allclose(matvec(A, w), X.astype(np.float64) @ w, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(rmatvec(A, c), X.astype(np.float64).T @ c, rtol=1e-12, atol=1e-12)
    assert ordered_sum([1.0, 2.0, 3.0]) == 6.0


def _row_sums(shard, scale, extra):
    return float(matvec(shard["X"], np.ones(shard["X"].shape[1])).sum()) * scale + extra


@pytest.mark.parametrize("sparse", [False, True])
def test_map_on_threads_equals_in_process(sparse):
    ds = make_ranking_dataset(n_queries=30, random_state=1)
    X = sp.csr_matrix(ds.X) if sparse else ds.X
    with ShardedQueries({"X": X, "y": ds.y}, ds.offsets, shard_rows=200) as shards:
        assert len(shards) > 2
        extra = list(range(len(shards)))
        here = shards.map(_row_sums, 2.0, per_shard=extra)
        there = shards.map(_row_sums, 2.0, per_shard=extra, n_jobs=2)
        assert here == there
        assert sum(here) == pytest.approx(2.0 * float(np.asarray(ds.X).sum()) + sum(extra))
        with pytest.raises(ValueError, match="per_shard"):
            shards.map(_row_sums, 2.0, per_shard=[1])


def _thread_of(shard, barrier=None):
    import threading

    if barrier is not None:  # every shard waits for one of the other group: both run at once
        barrier.wait(timeout=30)
    return threading.get_ident()


def test_two_workers_are_two_threads_of_this_process():
    """n_jobs=2 gives each of two pool threads one contiguous group of shards, at the same time;
    n_jobs=1 runs here."""
    import threading

    X = np.arange(80.0).reshape(40, 2)
    shards = ShardedQueries({"X": X}, np.arange(0, 41, 5), shard_rows=5)
    here = shards.map(_thread_of, n_jobs=1)
    assert set(here) == {threading.get_ident()}
    there = shards.map(_thread_of, threading.Barrier(2), n_jobs=2)  # a broken barrier raises here
    assert len(set(there)) == 2 and threading.get_ident() not in there
    assert there[:4] == [there[0]] * 4 and there[4:] == [there[4]] * 4  # groups of 4 shards each


class _WorkerClient:
    """A dask client as a worker's task sees it: ``scheduler_info`` may list no worker yet, and
    ``submit`` keeps dask's rule that ``allow_other_workers=`` needs ``workers=``."""

    def __init__(self, workers):
        self.workers, self.placements = workers, []

    def scheduler_info(self):
        return {"workers": self.workers}

    def submit(self, fn, *args, pure=True, workers=None, allow_other_workers=False):
        if allow_other_workers and workers is None:
            raise ValueError("Only use allow_other_workers= if using workers=")
        self.placements.append(workers)
        from concurrent.futures import Future

        future = Future()
        future.set_result(fn(*args))
        return future


@pytest.mark.parametrize("workers", [{}, {"tcp://a": {"nthreads": 1}, "tcp://b": {"nthreads": 1}}])
def test_a_map_inside_a_workers_task_pins_groups_only_to_known_workers(monkeypatch, workers):
    """Inside a grid point's task the worker's client may not know the workers yet (CI hit it):
    the shards then go unpinned, as one group, and the map still answers."""
    import structrank.parallel.shards as shards_module

    client = _WorkerClient(workers)
    monkeypatch.setattr(shards_module, "dask_client", lambda: client)
    monkeypatch.setattr(shards_module, "in_worker", lambda: True)
    monkeypatch.setattr(shards_module, "gather", lambda client, futures: [f.result() for f in futures])
    ds = make_ranking_dataset(n_queries=30, random_state=1)
    with ShardedQueries({"X": ds.X, "y": ds.y}, ds.offsets, shard_rows=200) as shards:
        monkeypatch.setattr(ShardedQueries, "_scattered", lambda self, client: self.shards)
        extra = list(range(len(shards)))
        got = shards.map(_row_sums, 2.0, per_shard=extra)
        assert got == [_row_sums(shard, 2.0, e) for shard, e in zip(shards.shards, extra)]
    assert client.placements == ([None] if not workers else [["tcp://a"], ["tcp://b"]])


@pytest.fixture(scope="module")
def data():
    return make_ranking_dataset(n_queries=120, random_state=0)


def test_svm_map_is_the_same_on_one_and_two_workers(data):
    one = StructSVMRanker(loss="map", C=10.0, n_jobs=1, shard_rows=300).fit(data)
    two = StructSVMRanker(loss="map", C=10.0, n_jobs=2, shard_rows=300).fit(data)
    classic = StructSVMRanker(loss="map", C=10.0).fit(data)
    assert np.array_equal(one.coef_, two.coef_) and one.n_iter_ == two.n_iter_
    np.testing.assert_allclose(one.coef_, classic.coef_, rtol=1e-9, atol=1e-12)  # rounding only


@pytest.mark.parametrize("loss", ["ndcg", "auc"])
def test_other_losses_shard_too(data, loss):
    one = StructSVMRanker(loss=loss, C=1.0, n_jobs=1, shard_rows=400).fit(data)
    two = StructSVMRanker(loss=loss, C=1.0, n_jobs=2, shard_rows=400).fit(data)
    classic = StructSVMRanker(loss=loss, C=1.0).fit(data)
    assert np.array_equal(one.coef_, two.coef_)
    np.testing.assert_allclose(one.coef_, classic.coef_, rtol=1e-8, atol=1e-12)


def test_lsp_ap_parameter_mixing(data):
    kw = dict(C=10.0, max_epochs=4, shuffle=True, random_state=0)
    alg1 = LatentPerceptronRanker(**kw).fit(data)
    one_shard = LatentPerceptronRanker(**kw, n_jobs=1, shard_rows=10**9).fit(data)
    np.testing.assert_allclose(one_shard.coef_, alg1.coef_, rtol=1e-10, atol=1e-10)  # one shard is Alg. 1
    one = LatentPerceptronRanker(**kw, n_jobs=1, shard_rows=300).fit(data)
    two = LatentPerceptronRanker(**kw, n_jobs=2, shard_rows=300).fit(data)
    assert np.array_equal(one.coef_, two.coef_) and one.best_epoch_ == two.best_epoch_
    assert not np.allclose(one.coef_, alg1.coef_)  # mixing is another algorithm than Alg. 1
    assert one.score(data) > 0.7


@pytest.mark.slow
def test_a_dask_local_cluster_trains_the_same_models(data):
    distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed (extra 'test')")
    from joblib import parallel_backend

    svm = StructSVMRanker(loss="map", C=10.0, n_jobs=1, shard_rows=300).fit(data)
    lsp = LatentPerceptronRanker(C=10.0, max_epochs=3, n_jobs=1, shard_rows=300).fit(data)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        with parallel_backend("dask"), distributed.get_task_stream(client=client) as stream:
            svm_dask = StructSVMRanker(loss="map", C=10.0, shard_rows=300).fit(data)
            lsp_dask = LatentPerceptronRanker(C=10.0, max_epochs=3, shard_rows=300).fit(data)
        workers = set(client.scheduler_info()["workers"])
        assert len(workers) == 2
        # the work ran on the cluster's worker processes (the scattered shards are released when
        # a fit ends, so the workers' memory cannot tell afterwards; the task stream can)
        ran_on = {task["worker"] for task in stream.data}
        assert stream.data and ran_on == workers  # one actor with its shards on each worker
    assert np.array_equal(svm.coef_, svm_dask.coef_)
    assert np.array_equal(lsp.coef_, lsp_dask.coef_)


def test_lssvm_shards_impute_their_own_truth(data):
    from structrank.learners.latent import LatentSSVMRanker

    kw = dict(C=10.0, max_outer=4)
    classic = LatentSSVMRanker(**kw).fit(data)
    one = LatentSSVMRanker(**kw, n_jobs=1, shard_rows=300).fit(data)
    two = LatentSSVMRanker(**kw, n_jobs=2, shard_rows=300).fit(data)
    assert np.array_equal(one.coef_, two.coef_) and one.n_outer_ == two.n_outer_
    np.testing.assert_allclose(one.coef_, classic.coef_, rtol=1e-7, atol=1e-10)  # the same CCCP, rounding only


def test_crf_parameter_mixing(data):
    from structrank.learners.crf import PermutationCRFRanker

    kw = dict(objective="kl", learning_rate=0.1, max_epochs=3, random_state=0, shuffle=True)
    sgd = PermutationCRFRanker(**kw).fit(data)
    one_shard = PermutationCRFRanker(**kw, n_jobs=1, shard_rows=10**9).fit(data)
    np.testing.assert_array_equal(one_shard.coef_, sgd.coef_)  # one shard: the same seeds, the same SGD
    one = PermutationCRFRanker(**kw, n_jobs=1, shard_rows=300).fit(data)
    two = PermutationCRFRanker(**kw, n_jobs=2, shard_rows=300).fit(data)
    assert np.array_equal(one.coef_, two.coef_)
    assert one.score(data) > 0.6


def test_grid_points_fitted_in_parallel_choose_the_same_model(data):
    from structrank.learners.registry import get_model, select_on_vali

    vali = make_ranking_dataset(n_queries=40, random_state=5)
    seen = []
    here = select_on_vali(get_model("svm-map"), data, vali, grid={"C": [0.1, 1.0, 10.0]})
    there = select_on_vali(get_model("svm-map"), data, vali, grid={"C": [0.1, 1.0, 10.0]}, n_jobs=2,
                           report=lambda p, v: seen.append(p["C"]))
    assert here[1] == there[1] and here[2] == there[2] and np.array_equal(here[0].coef_, there[0].coef_)
    assert seen == [0.1, 1.0, 10.0]  # reported in grid order


@pytest.mark.slow
def test_cli_scheduler_option_trains_on_a_cluster(data, tmp_path):
    distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed (extra 'test')")
    from structrank.cli import main
    from structrank.data import write_letor
    from structrank.model_io import load_model

    train = tmp_path / "train.txt"
    write_letor(train, data)
    args = ["train", "svm-map", "--train", str(train), "--vali", str(train)]  # the grid is fitted on the cluster
    assert main([*args, "--out", str(tmp_path / "local.npz")]) == 0
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        assert main([*args, "--out", str(tmp_path / "cluster.npz"), "--scheduler", cluster.scheduler_address]) == 0
    local, remote = load_model(tmp_path / "local.npz"), load_model(tmp_path / "cluster.npz")
    assert np.array_equal(local.coef_, remote.coef_)


@pytest.mark.parametrize("loss", ["map", "ndcg"])
def test_training_on_a_memory_mapped_cache(data, tmp_path, loss):
    from structrank.data import open_letor_cache, read_letor, write_letor
    from structrank.parallel.shards import CacheShard

    path = tmp_path / "train.txt"
    write_letor(path, data)
    cache = open_letor_cache(path)
    in_memory = StructSVMRanker(loss=loss, C=10.0, n_jobs=1, shard_rows=500).fit(read_letor(path, dtype=np.float32))
    mapped = StructSVMRanker(loss=loss, C=10.0, shard_rows=500).fit(cache)
    two = StructSVMRanker(loss=loss, C=10.0, n_jobs=2, shard_rows=500).fit(cache)
    assert mapped.n_queries_used_ == in_memory.n_queries_used_ and mapped.n_features_in_ == data.n_features
    # the same problem (uninformative queries add exact zeros); the shards differ, so rounding may
    np.testing.assert_allclose(mapped.coef_, in_memory.coef_, rtol=1e-9, atol=1e-12)
    assert np.array_equal(mapped.coef_, two.coef_)
    shards = ShardedQueries.from_cache(cache, shard_rows=500)
    assert all(isinstance(h, CacheShard) for h in shards.handles) and len(shards) > 2
    assert sum(s["X"].shape[0] for s in shards.shards) == cache.n_rows


def test_perceptron_on_a_memory_mapped_cache(tmp_path):
    """LSP-AP trains on a LetorCache shard by shard (CSR views, no dense copy, nothing written).

    With one shard the cache fit is Alg. 1 on the informative queries, as the in-memory fit;
    with several, the same model on any number of workers.
    """
    from structrank.data import open_letor_cache, read_letor, write_letor

    path = tmp_path / "train.txt"
    write_letor(path, make_ranking_dataset(n_queries=120, no_relevant_fraction=0.2, random_state=0))
    cache = open_letor_cache(path)
    kw = dict(C=10.0, max_epochs=3, shuffle=True, random_state=0)
    in_memory = LatentPerceptronRanker(**kw).fit(read_letor(path, dtype=np.float32))  # the float32 values of the cache
    one_shard = LatentPerceptronRanker(**kw, shard_rows=10**9).fit(cache)
    assert one_shard.n_queries_used_ == in_memory.n_queries_used_ < cache.n_queries  # some are skipped
    assert one_shard.n_updates_ == in_memory.n_updates_
    np.testing.assert_allclose(one_shard.coef_, in_memory.coef_, rtol=1e-9, atol=1e-12)  # BLAS against loops
    one = LatentPerceptronRanker(**kw, n_jobs=1, shard_rows=300).fit(cache)
    two = LatentPerceptronRanker(**kw, n_jobs=2, shard_rows=300).fit(cache)
    assert np.array_equal(one.coef_, two.coef_) and one.n_updates_ == two.n_updates_
    full = read_letor(path)
    assert abs(two.score(full) - in_memory.score(full)) < 0.03  # mixing over 9 shards ranks about as well


def test_every_numba_kernel_releases_the_gil():
    """Shard maps run on threads (structrank.parallel): a kernel that kept the GIL would make
    them take turns. Every jitted function in the package is compiled with nogil=True."""
    import importlib
    import pkgutil

    from numba.core.registry import CPUDispatcher

    import structrank

    kernels = {}
    for module in pkgutil.walk_packages(structrank.__path__, "structrank."):
        if module.name.endswith("__main__"):  # running it is the CLI
            continue
        try:
            loaded = importlib.import_module(module.name)
        except ImportError:  # an optional extra (embeddings, distributed) not installed
            continue
        for name, value in vars(loaded).items():
            if isinstance(value, CPUDispatcher) and value.__module__ == module.name:
                kernels[f"{module.name}.{name}"] = value.targetoptions.get("nogil", False)
    assert len(kernels) > 60  # all of them were found
    assert [name for name, nogil in kernels.items() if not nogil] == []


def test_crf_on_a_memory_mapped_cache(tmp_path):
    """CRF-KL trains on a LetorCache shard by shard; one shard is the in-memory SGD (same seeds)."""
    from structrank.data import open_letor_cache, read_letor, write_letor
    from structrank.learners.crf import PermutationCRFRanker

    path = tmp_path / "train.txt"
    write_letor(path, make_ranking_dataset(n_queries=80, random_state=3))
    cache = open_letor_cache(path)
    kw = dict(objective="kl", learning_rate=0.1, max_epochs=3, random_state=0, shuffle=True)
    in_memory = PermutationCRFRanker(**kw).fit(read_letor(path, dtype=np.float32))  # the float32 values of the cache
    one_shard = PermutationCRFRanker(**kw, shard_rows=10**9).fit(cache)
    assert one_shard.n_queries_used_ == in_memory.n_queries_used_
    np.testing.assert_allclose(one_shard.coef_, in_memory.coef_, rtol=1e-12, atol=1e-14)
    one = PermutationCRFRanker(**kw, n_jobs=1, shard_rows=300).fit(cache)
    two = PermutationCRFRanker(**kw, n_jobs=2, shard_rows=300).fit(cache)
    assert np.array_equal(one.coef_, two.coef_)


def test_scratch_buffers_are_reused_per_name_and_thread():
    """A shard step's temporaries come from one buffer per name and thread (parallel.scratch.scratch)."""
    import threading

    from structrank.parallel.scratch import scratch

    a = scratch("test-a", 100)
    assert a.shape == (100,) and a.dtype == np.float64
    a[:] = 1.0
    smaller = scratch("test-a", 40)
    assert np.shares_memory(a, smaller) and smaller.shape == (40,)  # the same memory, a shorter view
    assert not np.shares_memory(a, scratch("test-b", 100))  # another name
    assert not np.shares_memory(a, scratch("test-a", 100, np.int64))  # another dtype
    larger = scratch("test-a", 1000)
    assert larger.shape == (1000,) and np.shares_memory(larger, scratch("test-a", 10))  # grown, then reused
    other = []
    thread = threading.Thread(target=lambda: other.append(scratch("test-a", 1000)))
    thread.start()
    thread.join()
    assert not np.shares_memory(larger, other[0])  # threads never share one


def test_oracle_outputs_fill_the_given_buffers(data):
    """batch(out=...) and matvec(out=...) fill the caller's arrays with what they would return."""
    from structrank.learners.latent import _FixedTruth
    from structrank.losses import get_loss
    from structrank.losses.map import PositionalAPLoss

    X, y, offsets = data.X, data.y, data.offsets
    w = np.random.default_rng(3).normal(size=X.shape[1])
    n = X.shape[0]
    scores = matvec(X, w, out=np.full(n, np.nan))
    np.testing.assert_array_equal(scores, matvec(X, w))
    with pytest.raises(ValueError, match="float64 array of"):
        matvec(X, w, out=np.empty(n - 1))
    positional = PositionalAPLoss("greedy", "harmonic", 1.0, "all", 1)
    losses = [get_loss("map"), get_loss("ndcg"), get_loss("ndcg", feature_map="dorm"),
              get_loss("ndcg", gain="exp2"), positional, _FixedTruth(positional, np.zeros(n), w)]
    for loss in losses:
        coef, delta = loss.batch(scores, y, offsets)
        buffers = (np.full(n, np.nan), np.full(n, -1, dtype=np.int64))
        filled, filled_delta = loss.batch(scores, y, offsets, out=buffers)
        assert filled is buffers[0]
        np.testing.assert_array_equal(filled, coef)
        np.testing.assert_array_equal(filled_delta, delta)
    with pytest.raises(ValueError, match="out must be"):
        get_loss("map").batch(scores, y, offsets, out=(np.empty(n), np.empty(n)))  # order must be int64


def test_a_shard_computes_a_fixed_ideal_structure_once(data):
    """The cutting plane's shard step keeps a loss's fixed c_star in the shard (shard_memo),
    and the memo is never shipped to a cluster with the shard."""
    from structrank.learners.ssvm import shard_step
    from structrank.losses import get_loss
    from structrank.parallel.shards import shipped

    loss = get_loss("map")
    shards = ShardedQueries({"X": data.X, "y": data.y}, data.offsets, shard_rows=10**9)
    shard = shards.shards[0]
    w = np.random.default_rng(0).normal(size=data.X.shape[1])
    first = shard_step(shard, w, [loss])
    memo = shard["_memo"][("star", loss)]
    np.testing.assert_array_equal(memo, loss.star(np.zeros(data.X.shape[0]), data.y, data.offsets))
    again = shard_step(shard, w, [loss])
    assert shard["_memo"][("star", loss)] is memo
    np.testing.assert_array_equal(first[0][0], again[0][0])
    sent = shipped(shard)
    assert "_memo" not in sent and sent["X"] is shard["X"] and set(sent) == set(shard) - {"_memo"}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 6), min_size=1, max_size=8), st.randoms(use_true_random=False), st.booleans())
def test_visits_by_shard_is_each_shards_queries_in_visiting_order(sizes, rnd, shuffle):
    from structrank.learners.latent import visits_by_shard

    bounds = list(zip(np.cumsum([0, *sizes[:-1]]).tolist(), np.cumsum(sizes).tolist()))
    visit = [q for q in range(sum(sizes)) if rnd.random() < 0.8]  # informative queries only: a subset
    if shuffle:
        rnd.shuffle(visit)
    visit = np.array(visit, dtype=np.int64)
    expected = [visit[(visit >= lo) & (visit < hi)] - lo for lo, hi in bounds]  # a mask per shard
    got = visits_by_shard(visit, bounds)
    assert len(got) == len(bounds) and all(np.array_equal(a, b) for a, b in zip(got, expected))
