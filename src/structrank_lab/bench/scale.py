"""Scale: time and peak memory against data size, and the speed-up of more workers.

Synthetic LETOR-like data (``write_synthetic_letor``: queries of 100 documents, 20 dense
features in [0, 1), labels 0-2 from a noisy linear model) of 10^4 to 10^7 documents, written
as LETOR text. For each size, each task runs in a fresh child process that reports its wall
time and its peak resident memory (VmHWM, which counts the pages of memory-mapped files it
touched):

- ``load``: the streaming conversion of the text file to the memory-mapped cache
  (structrank.data.cache; 200,000 lines per chunk);
- ``read``: ``read_letor``, the whole file into memory (after a warm-up read of one row that
  loads the parser's numba kernels);
- ``evaluate``: scores of a random linear model over the cache, then NDCG@10 and MAP;
- ``svm-map``, ``svm-ndcg``: ``StructSVMRanker`` on the cache, shard by shard (50,000 rows per
  shard, in this process), ``SCALE_ITERATIONS`` cutting-plane iterations (tol = 0, so every
  size does the same number of oracle passes), after a warm-up fit on a tiny data set that
  loads the numba kernels (not timed);
- ``lsp-ap``: ``LatentPerceptronRanker`` (greedy), ``SCALE_EPOCHS`` epochs, on the cache shard by
  shard, like the SVMs;
- ``crf-kl``: ``PermutationCRFRanker`` (KL), ``SCALE_EPOCHS`` epochs, likewise.

The slope of log(time) and log(memory) against log(documents), fitted over the sizes from
10^5 up, says whether they grow linearly (slope 1). Speed-up on the largest size (10^7 by
default): SVM-map, SVM-ndcg, LSP-AP and CRF-KL with 1 and 2 workers (``n_jobs``, threads of the
child process; the latter two by parameter mixing), and SVM-map, SVM-ndcg and LSP-AP on a
dask.distributed LocalCluster of 2 single-threaded processes (their shards are references to the
cache, so no data is shipped; each worker keeps one actor with its shards, called directly by the
client: per pass, w and the losses go out and one sum per shard comes back). On this synthetic data SVM-ndcg's optimum at C = 1 is w = 0 (the
hinge bound of NDCG@10 is loose on noisy labels), so its iterates shrink towards 0; SVM-map's
do not, which makes it the more typical fit of the two. Each timed fit follows a warm-up fit that
loads the numba kernels and one over the cache that maps its pages.
Every configuration of every task, and the ceiling below, runs once in each of ``SPEEDUP_REPEATS``
rounds, taking turns. A task's fits on 1 and on 2 workers run in the same child process after one
warm-up, one right after the other, the first of them alternating between rounds: a *pair*. On
the virtual machine this was built on, the same single-process pass runs markedly slower in one
minute than in the next, and such a spell lasts seconds, so the two fits of a pair see the same
machine while runs in separate rounds need not. The speed-up is therefore the median over the
rounds of each pair's ratio; the ratio of the medians and the ratio of the best runs (the
machine undisturbed) are printed beside it. The LocalCluster run is likewise a pair with a 1-worker
fit in its own child process (the cluster started by the parent), so its speed-up is set against
the single process of the same minutes.
Beside them, ``machine_ceiling`` runs the SVM-map shard steps with no parallel machinery at all,
in one process and split between two independent processes: the most that two workers could
gain on this machine's cores.

``figure`` draws each task's time against the number of documents on log-log axes.
"""

# deferred imports: a task's child process counts in its peak memory only what the task loads (run_in_child)
from __future__ import annotations

import contextlib
import functools
import multiprocessing
import resource
import tempfile
import time
from pathlib import Path

import numpy as np

from structrank.figures import new_figure, save_figure

SCALE_SIZES = (10**4, 10**5, 10**6, 10**7)
SCALE_TASKS = ("load", "read", "evaluate", "svm-map", "svm-ndcg", "lsp-ap", "crf-kl")
N_FEATURES = 20
DOCS_PER_QUERY = 100
SCALE_ITERATIONS = 10
SCALE_EPOCHS = 2
SHARD_ROWS = 50_000
SPEEDUP_TASKS = ("svm-map", "svm-ndcg", "lsp-ap", "crf-kl")
CLUSTER_TASKS = ("svm-map", "svm-ndcg", "lsp-ap")  # these three on a LocalCluster at 10^7 rows
SPEEDUP_EPOCHS = 10
SPEEDUP_REPEATS = 5


def write_synthetic_letor(path, n_docs, n_features=N_FEATURES, docs_per_query=DOCS_PER_QUERY, seed=0,
                          chunk_rows=100_000):
    """Write ``n_docs`` LETOR lines (whole queries of ``docs_per_query``), chunk by chunk."""
    rng = np.random.default_rng(seed)
    w = rng.normal(size=n_features)
    columns = " ".join(f"{j + 1}:%.4f" for j in range(n_features))
    with open(path, "w") as fh:
        for start in range(0, n_docs, chunk_rows):
            n = min(chunk_rows, n_docs - start)
            X = rng.random((n, n_features))
            signal = (X - 0.5) @ w + rng.normal(scale=1.0, size=n)
            y = np.digitize(signal, [0.5, 1.5])
            qid = (start + np.arange(n)) // docs_per_query + 1
            fh.write("".join(f"{label} qid:{q} " + (columns % tuple(row)) + "\n" for label, q, row in zip(y, qid, X)))
    return Path(path)


def _peak_mb():
    """This process's peak resident memory in MB.

    Linux's VmHWM belongs to the process's own address space; ``ru_maxrss`` would also carry
    the RSS of the parent at the fork that started this (spawned) child.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0  # kB
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux and BSD: KiB


def _learner(name, n_jobs=None, epochs=None):
    """The estimator a training task times."""
    if name in ("svm-map", "svm-ndcg"):
        from structrank.learners.ssvm import StructSVMRanker

        return StructSVMRanker(loss=name[4:], C=1.0, tol=0.0, max_iter=SCALE_ITERATIONS, n_jobs=n_jobs,
                               shard_rows=SHARD_ROWS,
                               loss_params={"gain": "binary"} if name == "svm-ndcg" else None)  # the measured runs' gain
    if name == "lsp-ap":
        from structrank.learners.latent import LatentPerceptronRanker

        return LatentPerceptronRanker(C=1.0, max_epochs=epochs or SCALE_EPOCHS, n_jobs=n_jobs, shard_rows=SHARD_ROWS)
    from structrank.learners.crf import PermutationCRFRanker

    return PermutationCRFRanker(objective="kl", max_epochs=epochs or SCALE_EPOCHS, random_state=0, n_jobs=n_jobs,
                                shard_rows=SHARD_ROWS)


def _warm_up(model, cache):
    """Outside the clock: a short fit on a tiny data set loads the numba kernels (on a cluster, in
    its workers), and one over the cache maps its pages and starts the worker threads."""
    from sklearn.base import clone

    from structrank.data import make_ranking_dataset

    short = {"max_iter": 2} if "max_iter" in model.get_params() else {"max_epochs": 1}
    clone(model).set_params(**short).fit(make_ranking_dataset(n_queries=40, random_state=0))
    clone(model).set_params(**short).fit(cache)


def _timed_fit(model, cache):
    start = time.perf_counter()
    model.fit(cache)  # trains on the cache itself, shard by shard
    return time.perf_counter() - start


def _task(name, path, n_jobs=None, epochs=None):
    """Run one task in this (child) process; (seconds, peak MB, extra)."""
    from structrank.data.cache import open_letor_cache

    if name == "load":
        from structrank.data.cache import build_letor_cache

        start = time.perf_counter()
        build_letor_cache(path)
        return time.perf_counter() - start, _peak_mb(), {}
    if name == "read":
        return _timed_read(path)
    cache = open_letor_cache(path)
    if name == "evaluate":
        from structrank.metrics import evaluate
        from structrank.parallel.rows import matvec

        start = time.perf_counter()
        scores = matvec(cache.X, np.random.default_rng(1).normal(size=cache.n_features))
        qid = np.repeat(np.asarray(cache.query_ids), np.diff(np.asarray(cache.offsets)))
        extra = evaluate(np.asarray(cache.y), scores, qid, ["ndcg@10", "map"]).metrics
        return time.perf_counter() - start, _peak_mb(), extra

    model = _learner(name, n_jobs, epochs)
    _warm_up(model, cache)
    seconds = _timed_fit(model, cache)
    extra = {"iterations": model.n_iter_, "oracle_seconds": model.oracle_seconds_} if name.startswith("svm") else {}
    return seconds, _peak_mb(), extra


def _timed_read(path):
    """(seconds, peak MB, rows) of ``read_letor(path)``, after one warm-up read of a one-row file."""
    from structrank.data import read_letor

    with tempfile.TemporaryDirectory() as folder:
        warm = Path(folder) / "warm.txt"
        warm.write_text("1 qid:1 1:0.5\n")
        read_letor(warm)
    start = time.perf_counter()
    dataset = read_letor(path)
    return time.perf_counter() - start, _peak_mb(), {"rows": dataset.n_rows}


def _paired_task(name, path, order, epochs=None):
    """In a (child) process: the task's fit on 1 and on 2 workers, one after the other in ``order``,
    after one warm-up; (seconds of 1 worker, seconds of 2 workers)."""
    from structrank.data.cache import open_letor_cache

    cache = open_letor_cache(path)
    _warm_up(_learner(name, 2, epochs), cache)
    seconds = {n_jobs: _timed_fit(_learner(name, n_jobs, epochs), cache) for n_jobs in order}
    return seconds[1], seconds[2]


def _paired_cluster_task(name, path, order, scheduler, epochs=None):
    """In a (child) process: the task's fit in this process (1 worker) and on the cluster at
    ``scheduler``, one after the other in ``order`` (1: this process, 2: the cluster), after a
    warm-up of each; (seconds of 1 worker, seconds on the cluster). Why a pair: on the virtual
    machine this was built on, the same fit's time drifts from one minute to the next, so a
    cluster run set against a 1-worker run of another child process measured the machine's spells
    as much as the cluster (LSP-AP's cluster speed-up moved from one page of docs/BENCHMARKS.md to
    the next)."""
    from structrank.data.cache import open_letor_cache
    from structrank.parallel.shards import TRIPS
    from structrank.parallel.workers import cluster

    cache = open_letor_cache(path)
    model = _learner(name, None, epochs)
    _warm_up(model, cache)
    with cluster(scheduler):
        _warm_up(model, cache)  # the workers' kernels and pages
    seconds, account = {}, {}
    for where in order:
        with cluster(scheduler) if where == 2 else contextlib.nullcontext():
            TRIPS.clear()
            seconds[where] = _timed_fit(_learner(name, None, epochs), cache)
            if where == 2:
                account = cluster_account(list(TRIPS), seconds[2])
    return seconds[1], seconds[2], account


def cluster_account(trips, fit_seconds) -> dict:
    """Where a cluster fit's time went, from its calls on the workers' actors
    (``structrank.parallel.shards.TRIPS``), per iteration (one map: a call to each worker), medians:
    ``work_ms`` the slower worker's work, ``skew_ms`` how much sooner the faster one finished,
    ``trip_ms`` the rest of the map's time at the client (sending, queueing, answering),
    ``client_ms`` the fit's time outside the maps (its own steps between iterations), and the
    kilobytes sent out and back."""
    maps = {}
    for trip in trips:
        maps.setdefault(trip.map_id, []).append(trip)
    if not maps:
        return {}
    calls = list(maps.values())
    walls = [max(t.seconds for t in c) for c in calls]
    slower = [max(t.busy for t in c) for c in calls]
    return dict(iterations=len(calls), calls=int(np.median([len(c) for c in calls])),
                work_ms=1e3 * float(np.median(slower)),
                skew_ms=1e3 * float(np.median([max(t.busy for t in c) - min(t.busy for t in c) for c in calls])),
                trip_ms=1e3 * float(np.median(np.subtract(walls, slower))),
                client_ms=1e3 * max(fit_seconds - sum(walls), 0.0) / len(calls),
                kb_out=float(np.median([sum(t.bytes_out for t in c) for c in calls])) / 1e3,
                kb_back=float(np.median([sum(t.bytes_back for t in c) for c in calls])) / 1e3)


def _child(queue, fn, *args):
    try:
        queue.put(("ok", fn(*args)))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        queue.put(("error", f"{type(exc).__name__}: {exc}"))


def run_in_child(*args, fn=_task):
    """``fn(*args)`` (by default ``_task``) in a fresh process (its own peak memory); raises on failure."""
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    process = context.Process(target=_child, args=(queue, fn, *args))
    process.start()
    status, value = queue.get()
    process.join(timeout=60)
    if process.is_alive():  # the answer is in; do not wait on a child stuck in its exit handlers
        process.kill()
        process.join()
    if status != "ok":
        raise RuntimeError(f"benchmark task {args[0]} failed: {value}")
    return value


def _ceiling_child(queue, barrier, path, part, parts, passes):
    """In a fresh process: ``passes`` SVM-map shard steps over this process's share of the
    shards, timed from the moment every process is ready (``barrier``); no workers, no IPC."""
    try:
        from structrank.data.cache import open_letor_cache
        from structrank.learners.ssvm import shard_step
        from structrank.losses import get_loss
        from structrank.parallel.shards import ShardedQueries, cache_shard

        cache = open_letor_cache(path)
        shards = ShardedQueries.from_cache(cache, SHARD_ROWS)
        mine = [shards.handles[i] for i in np.array_split(np.arange(len(shards)), parts)[part]]
        losses = [get_loss("map")]
        w = np.random.default_rng(0).normal(size=cache.n_features)

        def one_pass():
            for handle in mine:
                shard_step(cache_shard(handle), w, losses)

        one_pass()  # kernels loaded, pages mapped
        barrier.wait(timeout=600)
        start = time.perf_counter()
        for _ in range(passes):
            one_pass()
        queue.put(("ok", time.perf_counter() - start))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        barrier.abort()
        queue.put(("error", f"{type(exc).__name__}: {exc}"))


def machine_ceiling(path, parts, passes=SCALE_ITERATIONS + 1):
    """Seconds for ``passes`` SVM-map shard steps over all shards of ``path``'s cache, split
    between ``parts`` independent processes running at once (the slowest one's time).

    The ratio for 1 and 2 parts is what the machine's cores give this work without any
    parallel machinery: the ceiling of the speed-up of 2 workers.
    """
    context = multiprocessing.get_context("spawn")
    queue, barrier = context.Queue(), context.Barrier(parts)
    processes = [context.Process(target=_ceiling_child, args=(queue, barrier, str(path), part, parts, passes))
                 for part in range(parts)]
    for process in processes:
        process.start()
    answers = [queue.get() for _ in processes]
    for process in processes:
        process.join()
    errors = [value for status, value in answers if status != "ok"]
    if errors:
        raise RuntimeError(f"machine ceiling measurement failed: {errors[0]}")
    return max(value for _, value in answers)


def bench_scale(folder, sizes=SCALE_SIZES, tasks=SCALE_TASKS, speedup_size=10**6, progress=print,
                repeats=SPEEDUP_REPEATS):
    """Figures of every task at every size, and the speed-up on ``speedup_size`` documents
    (each configuration ``repeats`` times, taking turns; medians)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for n in sizes:
        path = folder / f"synthetic-{n}.txt"
        if not path.is_file():
            start = time.perf_counter()
            write_synthetic_letor(path, n)
            progress(f"  wrote {path.name} ({path.stat().st_size / 1e6:.0f} MB) in {time.perf_counter() - start:.0f} s")
        for task in tasks:
            seconds, peak, extra = run_in_child(task, str(path))
            rows.append(dict(size=n, task=task, seconds=seconds, peak_mb=peak, extra=extra))
            progress(f"  {n:>10,} documents  {task:<9} {seconds:8.2f} s  peak {peak:8.0f} MB")
    speedup = []
    if speedup_size in sizes:
        path = str(folder / f"synthetic-{speedup_size}.txt")
        configs = _speedup_configs(path)
        times = {(task, label): [] for task, labels, _ in configs for label in labels}
        bases = {(task, label): labels[0] for task, labels, _ in configs for label in labels}
        # every task's configurations, and the machine's ceiling, take turns in each round, so that a
        # slow spell of the (virtual) machine falls on all of them; 1 and 2 workers run in the same
        # child, one after the other, in an order that alternates from round to round (pairs)
        accounts = {}  # (task, label) -> the cluster fit's account of each round
        for round_ in range(repeats):
            for task, labels, run in configs:
                out = run(round_)
                for label, seconds in zip(labels, out):
                    times[(task, label)].append(seconds)
                    progress(f"  {task} on {speedup_size:,}: {label:<26} {seconds:7.2f} s")
                if len(out) > len(labels):  # the cluster's pair: its fit's account comes last
                    accounts.setdefault((task, labels[-1]), []).append(out[-1])
        for (task, label), values in times.items():
            speedup.append(dict(task=task, label=label, seconds=float(np.median(values)), runs=values,
                                base=bases[(task, label)], **({"accounts": accounts[(task, label)]}
                                                                if (task, label) in accounts else {})))
    return dict(rows=rows, speedup=speedup, speedup_size=speedup_size)


WORKER_LABELS = ("1 worker", "2 workers (threads)")
CLUSTER_LABELS = ("1 worker, beside the cluster", "LocalCluster, 2 processes")
CEILING_LABELS = ("1 process", "2 independent processes")


def _speedup_configs(path):
    """[(task, labels, run)]: ``run(round)`` gives the seconds of each label; each configuration's first
    label is the base of its speed-ups (timed in the same child, in the same round)."""
    configs = []
    for task in SPEEDUP_TASKS:
        configs.append((task, WORKER_LABELS, functools.partial(_pair_in_child, task, path)))
        if task in CLUSTER_TASKS:
            configs.append((task, CLUSTER_LABELS, functools.partial(_with_cluster, task, path)))
    configs.append(("ceiling", CEILING_LABELS, functools.partial(_ceiling_pair, path)))
    return configs


def _order(round_):
    return (1, 2) if round_ % 2 == 0 else (2, 1)


def _pair_in_child(task, path, round_):
    return run_in_child(task, path, _order(round_), SPEEDUP_EPOCHS, fn=_paired_task)


def _ceiling_pair(path, round_):
    seconds = {parts: machine_ceiling(path, parts) for parts in _order(round_)}
    return seconds[1], seconds[2]


def _with_cluster(task, path, round_=0):
    """(seconds of 1 worker, seconds through a LocalCluster of 2 single-threaded worker processes,
    started before the clock, the cluster fit's account) of ``task``, timed in one child process as
    a pair (``_paired_cluster_task``), in the round's order. The workers' statistical profiler is
    off: it samples every thread's stack at a fixed interval, and while numba's kernels run without
    the GIL on both cores it takes its time from them (SVM-map's passes at 10^7 rows were measurably
    slower with it). docs/DISTRIBUTED.md says how to turn it off on a cluster."""
    # deferred: optional (dask extra), only for the LocalCluster speed-up
    import dask
    from distributed import LocalCluster

    with dask.config.set({"distributed.worker.profile.enabled": False}), \
            LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as local:
        # the same epochs as the pairs' fits (LSP-AP's default here would be SCALE_EPOCHS)
        return run_in_child(task, path, _order(round_), local.scheduler_address, SPEEDUP_EPOCHS,
                            fn=_paired_cluster_task)


def slopes(rows, key, smallest=10**5):
    """{task: slope of log(key) against log(size)} over the sizes >= ``smallest``."""
    out = {}
    for task in dict.fromkeys(r["task"] for r in rows):
        points = [(r["size"], r[key]) for r in rows if r["task"] == task and r["size"] >= smallest]
        if len(points) >= 2:
            x, y = np.log10([p[0] for p in points]), np.log10([p[1] for p in points])
            out[task] = float(np.polyfit(x, y, 1)[0])
    return out


def paired_speedup(base, values) -> float:
    """The median over rounds of ``base[i] / values[i]`` (runs of the same round are paired)."""
    return float(np.median(np.asarray(base) / np.asarray(values)))


def format_scale(figures) -> list:
    rows = figures["rows"]
    sizes = sorted({r["size"] for r in rows})
    tasks = list(dict.fromkeys(r["task"] for r in rows))
    cell = {(r["size"], r["task"]): r for r in rows}
    lines = [f"synthetic LETOR data, {N_FEATURES} features, {DOCS_PER_QUERY} documents per query; seconds "
             "(peak resident MB), each in a fresh process",
             f"  {'documents':>12} " + " ".join(f"{t:>19}" for t in tasks)]
    for n in sizes:
        lines.append(f"  {n:>12,} " + " ".join(
            f"{cell[(n, t)]['seconds']:>9.2f} ({cell[(n, t)]['peak_mb']:>6.0f})" if (n, t) in cell else f"{'—':>19}"
            for t in tasks))
    time_slopes, memory_slopes = slopes(rows, "seconds"), slopes(rows, "peak_mb")
    lines.append("  slope of log time against log documents (10^5 up): "
                 + ", ".join(f"{t} {s:.2f}" for t, s in time_slopes.items()))
    lines.append("  slope of log peak memory against log documents (10^5 up): "
                 + ", ".join(f"{t} {s:.2f}" for t, s in memory_slopes.items()))
    largest = max(sizes)
    if (largest, "svm-ndcg") in cell:
        peak = cell[(largest, "svm-ndcg")]["peak_mb"] / 1024
        lines.append(f"  svm-ndcg at {largest:,} documents: peak {peak:.2f} GB (target: under 8 GB)")
    if figures["speedup"]:
        lines.append(f"speed-up on {figures['speedup_size']:,} documents (shards of {SHARD_ROWS:,} rows; SVM "
                     f"{SCALE_ITERATIONS} iterations, LSP-AP and CRF-KL {SPEEDUP_EPOCHS} epochs; the same model on any "
                     "number of workers. Seconds: median of the rounds, in which all configurations took turns, "
                     "1 and 2 workers (threads), and 1 worker and the LocalCluster, each pair in one child process "
                     "one after the other. Speed-up: the median over the rounds of the pair's base (its first "
                     "line) over this one in the same round; beside it the ratio of the "
                     "medians and that of the best runs; target: at least 1.6 from 1 to 2 workers):")
        for task in dict.fromkeys(s["task"] for s in figures["speedup"]):
            runs = [s for s in figures["speedup"] if s["task"] == task]
            by_label = {s["label"]: s for s in runs}
            for s in runs:
                base_run = by_label.get(s.get("base"), runs[0])  # older figures name no base: the task's first
                base = base_run.get("runs", [base_run["seconds"]])
                values = s.get("runs", [s["seconds"]])
                each = ", ".join(f"{x:.2f}" for x in values)
                lines.append(f"  {task:<9} {s['label']:<27} {s['seconds']:7.2f} s   speed-up {paired_speedup(base, values):.2f}"
                             f"   ratio of medians {np.median(base) / np.median(values):.2f}"
                             f"   best runs {min(base) / min(values):.2f}   (runs: {each})")
                lines += _account_lines(s.get("accounts"))
        if any(s["task"] == "ceiling" for s in figures["speedup"]):
            lines.append(f"  ceiling: the SVM-map shard steps of {SCALE_ITERATIONS + 1} cutting-plane passes with no parallel "
                         "machinery, in one "
                         "process, then split between two independent processes started at once (the slower one's "
                         "time): what this machine's two cores give this work")
    return lines


def _account_lines(accounts) -> list:
    """Where the cluster fit's time went, per iteration: medians over the rounds of each round's medians."""
    accounts = [a for a in accounts or [] if a]
    if not accounts:
        return []

    def median(key):
        return float(np.median([a[key] for a in accounts]))

    return [f"{'':12}per iteration ({median('iterations'):.0f} a fit, {median('calls'):.0f} calls, one a worker): "
            f"the slower worker's work {median('work_ms'):.0f} ms (the other done {median('skew_ms'):.0f} ms sooner), "
            f"round trip beyond it {median('trip_ms'):.1f} ms, the client's own steps {median('client_ms'):.1f} ms; "
            f"moved {median('kb_out'):.0f} kB out, {median('kb_back'):.0f} kB back"]


def figure(figures, path):
    rows = figures["rows"]
    fig = new_figure(figsize=(6, 4))
    ax = fig.add_subplot(1, 1, 1)
    for task in dict.fromkeys(r["task"] for r in rows):
        points = sorted((r["size"], r["seconds"]) for r in rows if r["task"] == task)
        ax.loglog(*zip(*points), marker="o", label=task)
    ax.set_xlabel("documents")
    ax.set_ylabel("seconds")
    ax.set_title("time against data size (log-log)", fontsize=9)
    ax.legend(fontsize=7)
    save_figure(fig, path)


def markdown_section(figures, figure_link=None) -> str:
    text = "## Scale\n\n```\n" + "\n".join(format_scale(figures)) + "\n```\n"
    if figure_link:
        text += f"\n![time against size]({figure_link})\n"
    return text
