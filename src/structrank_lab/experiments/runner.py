"""Run a list of experiment runs once each, resumably, optionally in parallel.

Every ``structrank reproduce EXPERIMENT`` builds its list of :class:`RunSpec` and hands it to
:func:`run_all` with a function that performs one run. Finished runs go to a
:class:`~structrank_lab.experiments.store.ResultStore` as they finish, so an interrupted
reproduction started again does only the runs that had not finished.

``run_all(specs, run_fn, store, n_jobs)`` skips the recorded runs, times and records each run as it
finishes (over joblib for ``n_jobs > 1``, on all the cluster's cores inside
``parallel.workers.cluster``) and shows a tqdm bar (in a log, a line per run with the time left); a failed run is a one-line ``RunFailedError``
(the worker's traceback in ``.detail``). ``run_experiment(..., data=)`` and ``claim_folder`` claim
the store for the experiment's data files (experiments that cache features or kernels in OUT claim
before using the cache); ``discard_results`` is ``reproduce --fresh`` (the store, its tables and the
caches ``OUT/data`` and ``OUT/features``).

Example
-------
>>> import tempfile, os
>>> from structrank_lab.experiments import ResultStore, RunSpec, run_all
>>> store = ResultStore(os.path.join(tempfile.mkdtemp(), "runs.sqlite"))
>>> specs = [RunSpec("demo2024", "toy", fold=f, model="mean") for f in range(3)]
>>> def run_fn(spec):
...     return [("map", "letor4", 0.5 + 0.1 * spec.fold)]
>>> rows = run_all(specs, run_fn, store, progress=False)
>>> [round(r["value"], 2) for r in rows]
[0.5, 0.6, 0.7]
>>> store.close()
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import sys
import time
import traceback
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from tqdm.auto import tqdm

from structrank.atomic import write_bytes_atomic, write_text_atomic
from structrank.data import letor_folds, letor_root
from structrank.errors import StructRankError
from structrank_lab.experiments.report import write_report
from structrank_lab.experiments.identity import data_identity, identity_change, run_identity
from structrank_lab.experiments.run_key import RunKey, _measurement
from structrank_lab.experiments.kept_runs import WALL_TIME, export_run, import_runs
from structrank_lab.experiments.store import ResultStore
from structrank_lab.experiments.termination import sigterm_as_exit

#: A run to do is fully described by its key: the parameters say everything the run needs.
RunSpec = RunKey


@dataclass(frozen=True)
class Measurement:
    """One measured value of a run (what ``run_fn`` may return a list of).

    Examples
    --------
    >>> Measurement("ndcg@10", "letor4", 0.42)
    Measurement(metric='ndcg@10', convention='letor4', value=0.42)
    """

    metric: str
    convention: str
    value: float


class RunFailedError(StructRankError):
    """A run raised; nothing of it was recorded (the runs finished before it were).

    The original exception is the ``__cause__``; ``spec`` is the run that failed, ``detail`` the
    worker's traceback. The message is one line: the run and its error's first line.

    Examples
    --------
    >>> import os, tempfile
    >>> from structrank_lab.experiments import ResultStore, RunSpec, run_all
    >>> tmp = tempfile.TemporaryDirectory()
    >>> store = ResultStore(os.path.join(tmp.name, "runs.sqlite"))
    >>> def run_fn(spec):
    ...     return [("map", "trec", 1 / 0)]
    >>> try:
    ...     run_all([RunSpec("demo2024", "toy", model="broken")], run_fn, store, progress=False)
    ... except RunFailedError as error:
    ...     print(error)
    ...     print(type(error.__cause__).__name__, error.spec.model)
    run failed: demo2024/toy/test/fold=0/seed=0/broken{}: ZeroDivisionError: division by zero
    ZeroDivisionError broken
    >>> store.close(); tmp.cleanup()
    """

    def __init__(self, spec: RunKey, detail: str = "", error: BaseException | None = None):
        self.spec, self.detail = spec, detail
        cause = "" if error is None else f": {type(error).__name__}: {(str(error).strip().splitlines() or [''])[0]}"
        super().__init__(f"run failed: {spec.label()}{cause}")


@dataclass
class _Outcome:
    spec: RunKey
    rows: list | None
    seconds: float
    error: BaseException | None = None
    detail: str = ""


def _timed_call(run_fn: Callable[[RunKey], Any], spec: RunKey) -> _Outcome:
    """Perform one run, timing it; an error is returned (not raised) so we know whose it was."""
    start = time.perf_counter()
    try:
        # Checking the values here (in the worker) makes a malformed result a failure of this
        # run, reported with its spec, rather than an obscure error in the parent.
        rows = [_measurement(row) for row in run_fn(spec)]
        if not rows:
            raise ValueError("run_fn returned no measurements")
    except Exception as exc:  # noqa: BLE001 -- reported to the caller as RunFailedError
        return _Outcome(spec, None, time.perf_counter() - start, exc, traceback.format_exc())
    return _Outcome(spec, rows, time.perf_counter() - start)


def _unique(specs: Iterable[RunKey]) -> list[RunKey]:
    seen, unique = set(), []
    for spec in specs:
        if not isinstance(spec, RunKey):
            raise TypeError(f"specs must be RunSpec objects, got {type(spec).__name__}")
        if spec not in seen:
            seen.add(spec)
            unique.append(spec)
    return unique


def _outcomes(run_fn, todo, n_jobs, backend):
    """Yield each run's outcome as it finishes."""
    # deferred: start-up time (`reproduce --help` loads this module); numpy loads to run
    from structrank.parallel.workers import dask_client

    if dask_client() is not None:  # inside structrank.parallel.workers.cluster(): the cluster's cores
        n_jobs = -1
    if n_jobs in (None, 1) or len(todo) <= 1:
        # In-process: simplest to debug, and no pickling of run_fn.
        for spec in todo:
            yield _timed_call(run_fn, spec)
        return
    # deferred: start-up time (`reproduce --help` loads this module); joblib loads to run in parallel
    from joblib import Parallel, delayed

    parallel = Parallel(n_jobs=n_jobs, backend=backend, return_as="generator_unordered")
    results = parallel(delayed(_timed_call)(run_fn, spec) for spec in todo)
    try:
        yield from results
    finally:
        # Closing the generator cancels the runs still pending when we stop early (a run
        # failed); joblib warns about that, but here it is what we want.
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*cancelled", category=UserWarning)
            results.close()


def run_all(
    specs: Iterable[RunKey],
    run_fn: Callable[[RunKey], Iterable],
    store: ResultStore,
    n_jobs: int | None = 1,
    progress: bool = True,
    desc: str | None = None,
    backend: str | None = None,
    identity: Callable[[RunKey], str] | None = None,
    kept=None,
) -> list[dict]:
    """Run every spec not yet in ``store``, record each as it finishes, return all results.

    Parameters
    ----------
    specs : iterable of RunSpec
        The runs of the experiment; duplicates are run once.
    run_fn : callable
        ``run_fn(spec)`` performs one run and returns its measured values: an iterable of
        ``(metric, convention, value)`` tuples or :class:`Measurement` objects. With
        ``n_jobs != 1`` it must be picklable (a module-level function).
    store : ResultStore
        Where finished runs are recorded, and looked up to skip them.
    n_jobs : int, default 1
        Runs in parallel, through ``joblib.Parallel`` (``-1``: all cores). The parent process
        records each run as it finishes, whatever the order.
    progress : bool, default True
        Show a progress bar over the runs (tqdm) on a terminal; when stderr is not one (a log), a line per
        finished run instead (``run_line``: runs done, the run's seconds, the time left). ``TQDM_DISABLE``
        (``--quiet``) silences both.
    desc : str, optional
        The progress bar's label; the experiment name by default.
    backend : str, optional
        joblib backend (``"loky"`` by default, ``"threading"`` for run functions that release
        the GIL).
    identity : callable, optional
        ``identity(spec)``: what the run is made from (``store.run_identity``),
        stored with it. A recorded run whose identity differs (or that has none) is run again and
        replaced, and one line on stderr says how many and why. Without it a recorded key is done.
    kept : path, optional
        A folder of kept runs (``experiments.kept_runs``): each run is written there too as it finishes.

    Returns
    -------
    list of dict
        The long-form records (:data:`~structrank_lab.experiments.COLUMNS`) of all ``specs``,
        read back from the store in a fixed order, so the table is the same whether the runs
        happened now, earlier, in parallel or not.

    Raises
    ------
    RunFailedError
        When a run raises (its exception is the ``__cause__``). Nothing of that run is
        recorded; the runs that finished before it stay recorded, so calling ``run_all`` again
        resumes from there.

    Examples
    --------
    >>> import tempfile, os
    >>> store = ResultStore(os.path.join(tempfile.mkdtemp(), "runs.sqlite"))
    >>> specs = [RunSpec("e", "d", seed=s, model="m") for s in range(2)]
    >>> calls = []
    >>> def run_fn(spec):
    ...     calls.append(spec.seed)
    ...     return [Measurement("map", "trec", 1.0)]
    >>> len(run_all(specs, run_fn, store, progress=False))
    2
    >>> len(run_all(specs, run_fn, store, progress=False)), calls   # the second call runs nothing
    (2, [0, 1])
    """
    specs = _unique(specs)
    if desc is None:
        names = sorted({spec.experiment for spec in specs})
        desc = names[0] if len(names) == 1 else "runs"
    todo, identities = _to_do(specs, store, identity, desc)
    # disable=None lets tqdm switch itself off when stderr is not a terminal (logs, CI)
    bar = tqdm(total=len(specs), initial=len(specs) - len(todo), desc=desc, unit="run",
               disable=None if progress else True)
    # there, a reproduction left running in the background says in a line per run how far it is
    log = progress and not os.environ.get("TQDM_DISABLE") and not _is_terminal(sys.stderr)
    start, finished = time.perf_counter(), 0
    try:
        # closed on any way out (a failed run, Ctrl-C, SIGTERM): closing it ends joblib's workers
        with sigterm_as_exit(), contextlib.closing(_outcomes(run_fn, todo, n_jobs, backend)) as outcomes:
            for outcome in outcomes:
                if outcome.error is not None:
                    raise RunFailedError(outcome.spec, outcome.detail, outcome.error) from outcome.error
                store.record(outcome.spec, outcome.rows, outcome.seconds, identities.get(outcome.spec))
                if kept is not None:
                    export_run(store, kept, outcome.spec)
                bar.update(1)
                finished += 1
                if log:
                    print(run_line(desc, len(specs) - len(todo) + finished, len(specs), outcome.spec,
                                   outcome.seconds, (time.perf_counter() - start) / finished),
                          file=sys.stderr, flush=True)
    finally:
        bar.close()
    return store.rows(specs)


def _is_terminal(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or replaced stream
        return False


def run_line(desc, done, total, spec, seconds, wall_per_run) -> str:
    """The line a reproduction writes to a log as each run finishes: how many of its runs are done, the run
    and its time, and the time left at this call's wall time per run so far.

    >>> run_line("neural-qa", 13, 60, RunSpec("neural-qa", "trec13", seed=0, model="CRF-KL"), 812.4, 850.0)
    'neural-qa: 13/60 runs done (neural-qa/trec13/test/fold=0/seed=0/CRF-KL{}: 812 s); about 11 h 06 min left'
    """
    left = f"; about {_duration((total - done) * wall_per_run)} left" if done < total else ""
    return f"{desc}: {done}/{total} runs done ({spec.label()}: {seconds:.0f} s){left}"


def _duration(seconds) -> str:
    """A wait as a person reads it: seconds under a minute, minutes under an hour, else hours and minutes."""
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60:02d} min"


def _to_do(specs, store, identity, desc, say=True):
    """(the specs to run, {spec: its identity}): those not recorded, and those recorded from something else
    (said on stderr in one line when ``say``)."""
    recorded = store.identities()
    if identity is None:
        return [spec for spec in specs if spec not in recorded], {}
    identities = {spec: identity(spec) for spec in specs}
    stale = {spec: identity_change(recorded[spec], identities[spec]) for spec in specs
             if spec in recorded and recorded[spec] != identities[spec]}
    if stale and say:
        first = next(iter(stale))
        reasons = sorted(set(stale.values()))
        print(f"{desc}: {len(stale)} recorded run{'s' if len(stale) > 1 else ''} made from something else, run again "
              f"({'; '.join(reasons)}; the first: {first.label()})", file=sys.stderr)
    return [spec for spec in specs if spec not in recorded or spec in stale], identities


def letor_roots(names: Iterable[str], data_dir=None, only: str | None = None) -> dict:
    """{name: folder} of the named LETOR sets present in the data folder (``only``: just that one).

    Absent sets are named on stderr; none at all is a FileNotFoundError.
    """
    names = list(names)
    roots = {}
    for name in names:
        if only is not None and name != only:
            continue
        root = letor_root(name, data_dir)
        if root is None:
            print(f"{name}: not in the data folder, skipped", file=sys.stderr)
            continue
        roots[name] = str(root)
    if not roots:
        raise FileNotFoundError(f"no LETOR data set found (looked for {', '.join(names)} under the data folder)")
    return roots


#: what ``reproduce`` writes into its folder and ``--fresh`` discards: the store and the files made
#: from its runs, and the caches the experiments compute from the data (features, kernel columns)
RESULT_FILES = ("results.sqlite", "results.sqlite-wal", "results.sqlite-shm", "results.sqlite-journal",
                "results.csv", WALL_TIME, "prepare_time.json")
CACHE_FOLDERS = ("data", "features")


def discard_results(out) -> None:
    """Remove the store, its tables and the experiments' data caches from ``out`` (``reproduce --fresh``)."""
    out = Path(out)
    for name in RESULT_FILES:
        with contextlib.suppress(FileNotFoundError):
            (out / name).unlink()
    for name in CACHE_FOLDERS:
        if (out / name).is_dir() and not (out / name).is_symlink():
            shutil.rmtree(out / name)


def claim_folder(out, experiment: str, data=()) -> None:
    """Tie ``out/results.sqlite`` to ``experiment`` and the data files under ``data`` (files or
    folders), refusing a store made by another experiment or from other data (StructRankError).

    Experiments that cache what they compute from the data in ``out`` call it before using the cache.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    with ResultStore(out / "results.sqlite") as store:
        store.claim(experiment, data_identity(data, known=store.recorded_data()))


def run_experiment(out, specs, run_fn, n_jobs=1, desc=None, data=(), inputs=None, config=None,
                   kept=None) -> list[dict]:
    """``run_all`` into ``out/results.sqlite``, then ``out/results.csv``; returns the rows.

    ``data``: the files or folders the runs read; the store is claimed for them and the experiment
    (:func:`claim_folder`). Each run is recorded with its identity (``store.run_identity``): the content
    of what it read, ``inputs(spec)`` (files or folders; all of ``data`` by default), and the
    experiment's name and ``config`` (a JSON mapping of what changes values but not keys); a recorded run
    whose identity differs is run again. ``results.csv`` holds the values of ``specs`` only, never other
    runs the store keeps. When every run was done by this call, its wall time goes to
    ``out/wall_time.json`` ({"seconds", "runs", "jobs"}) for the report to quote. ``kept``: a folder of kept runs
    (``experiments.kept_runs``, the repository's copy of a costly experiment's runs), read into the store first
    and written as each run finishes; the wall time of a call that ran every run is kept there too, and copied
    to ``out`` by a call that did not.
    """
    out = Path(out)
    specs = _unique(specs)
    experiment = ",".join(sorted({spec.experiment for spec in specs})) or desc or "runs"
    claim_folder(out, experiment, data)
    sources = (lambda spec: data) if inputs is None else inputs
    known = {}

    def identity(spec):  # the folds' specs share their inputs: each set is hashed once
        paths = tuple(str(p) for p in sources(spec))
        if paths not in known:
            known[paths] = run_identity(experiment, paths, config)
        return known[paths]

    start = time.perf_counter()
    with ResultStore(out / "results.sqlite") as store:
        if kept is not None:
            added = import_runs(store, kept)
            if added:
                print(f"{desc or 'runs'}: {added} runs read from {kept}", file=sys.stderr)
        todo = len(_to_do(specs, store, identity, desc, say=False)[0])
        rows = run_all(specs, run_fn, store, n_jobs=n_jobs, desc=desc, identity=identity, kept=kept)
        store.to_csv(out / "results.csv", keys=specs)
    seconds = time.perf_counter() - start
    print(f"{desc or 'runs'}: {todo} runs done in {seconds:.0f} s", file=sys.stderr)
    if todo == len(specs):
        timing = json.dumps({"seconds": seconds, "runs": todo, "jobs": n_jobs})
        write_text_atomic(out / WALL_TIME, timing)
        if kept is not None:  # kept beside the runs, so a page made from the folder quotes it
            write_text_atomic(Path(kept) / WALL_TIME, timing)
    elif kept is not None and (Path(kept) / WALL_TIME).is_file():
        # the runs came from the kept folder: the wall time is that of the call that ran them all
        write_bytes_atomic(out / WALL_TIME, (Path(kept) / WALL_TIME).read_bytes())
    return rows


def wall_time(out) -> dict | None:
    """What :func:`run_experiment` wrote to ``out/wall_time.json``, or None."""
    try:
        return json.loads((Path(out) / WALL_TIME).read_text())
    except (OSError, ValueError):
        return None


class SpecRun:
    """The run function of a reproduction: ``SpecRun(run, *context)(spec)`` is ``run(spec, *context)``.

    Picklable, as joblib's workers need, when ``run`` is a module-level function and ``context`` (the
    data sets' roots, a cache folder, ...) pickles: each paper's module states only ``run``, how one
    spec runs, and what it reads.
    """

    def __init__(self, run, *context):
        self.run, self.context = run, context

    def __call__(self, spec):
        return self.run(spec, *self.context)

    @classmethod
    def per_dataset(cls, run, roots):
        """``run(spec, roots[spec.dataset])``: the LETOR shape, one root folder per data set."""
        return cls(_on_dataset_root, run, roots)


def dataset_inputs(roots, others=()):
    """``inputs(spec)`` for :func:`run_experiment` when a run reads one data set of ``roots`` ({name: folder}):
    the fold folder ``spec.fold`` names (a LETOR fold reads its train, vali and test files), else the data
    set's folder; ``others`` for a spec of no data set in ``roots``."""
    def inputs(spec):
        root = roots.get(spec.dataset)
        if root is None:
            return list(others)
        fold = Path(root) / str(spec.fold)
        return [fold if str(spec.fold) and fold.is_dir() else Path(root)]

    return inputs


def _on_dataset_root(spec, run, roots):
    return run(spec, roots[spec.dataset])


def paper_model(name):
    """The command-line model ``name`` as the reproductions train it: with the papers' binary NDCG gain
    (``loss_params={"gain": "binary"}`` where its loss has a gain, whose default "auto" picks it from the labels)."""
    # deferred: start-up time (`reproduce --help` loads this module); the learners and numba load to run
    from structrank.learners.registry import get_model

    spec = get_model(name)
    if "gain" in spec.loss_options():
        binary = {**(spec.defaults.get("loss_params") or {}), "gain": "binary"}
        spec = dataclasses.replace(spec, defaults={**spec.defaults, "loss_params": binary})
    return spec


def fold_plan(experiment, roots, models, quick=False):
    """One run per data set, fold and model (``quick``: the first fold), with the grid named in params."""
    grid = "quick" if quick else "full"
    return [RunSpec(experiment, dataset, "test", f.name, 0, model, {"grid": grid})
            for dataset, root in roots.items() for f in letor_folds(root)[: 1 if quick else None] for model in models]


def reproduce_letor_experiment(out, experiment, datasets, plan, run, report_sections, title, data_dir=None,
                               quick=False, n_jobs=1, keep=None) -> list[dict]:
    """The common shape of a LETOR reproduction: find the data sets (``quick``: MQ2008 alone), run
    ``plan(roots, quick)`` with ``SpecRun.per_dataset(run, roots)``, write ``report.md`` from ``report_sections``.
    ``keep``: a folder of kept runs (``run_experiment``'s ``kept``)."""
    out = Path(out)
    roots = letor_roots(datasets, data_dir, only="MQ2008" if quick else None)
    rows = run_experiment(out, plan(roots, quick), SpecRun.per_dataset(run, roots), n_jobs, experiment, data=roots.values(),
                          inputs=dataset_inputs(roots), kept=keep)
    write_report(out / "report.md", report_sections(rows, out), title=title)
    print(f"wrote {out / 'results.csv'} and {out / 'report.md'}", file=sys.stderr)
    return rows
