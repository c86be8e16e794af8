"""The timing helpers every benchmark section shares: repeated calls (``timings``, ``best_of``),
contenders in interleaved rounds (``interleaved``), and the timed reproductions of benchmarks/.

``clocked(fn)`` makes a contender of ``interleaved`` whose call returns its seconds.
"""

from __future__ import annotations

import argparse
import gc
import tempfile
import time

import numpy as np


def timings(fn, repeat, min_repeat=5, budget=2.0):
    """Seconds of each call of ``fn`` (compiled beforehand): ``repeat`` calls, fewer for slow ones."""
    first = time.perf_counter()
    fn()
    first = time.perf_counter() - first
    n = max(min_repeat, min(repeat, int(budget / max(first, 1e-9))))
    times = np.empty(n)
    enabled = gc.isenabled()
    gc.disable()
    try:
        for i in range(n):
            start = time.perf_counter()
            fn()
            times[i] = time.perf_counter() - start
    finally:
        if enabled:
            gc.enable()
    return times


def best_of(fn, repeat):
    """The fastest of ``repeat`` calls of ``fn``, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def clocked(fn):
    """``fn`` as a contender of ``interleaved``: a call returns its seconds."""
    def run():
        start = time.perf_counter()
        fn()
        return time.perf_counter() - start

    return run


def interleaved(contenders: dict, rounds: int) -> dict:
    """{name: [what each call returned]}: every contender once per round, in turn (``clocked`` ones
    return their seconds), so all see the same machine."""
    results = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, run in contenders.items():
            results[name].append(run())
    return results


def reproduction_parser(doc):
    """The command line of a benchmarks/ script that can also time its reproduction."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reproduction", action="store_true", help="also time the whole reproduction")
    parser.add_argument("--jobs", type=int, default=2, help="workers of the reproduction")
    return parser


def reproduction_main(doc, option, default, lines, experiment, summary, argv=None):
    """A benchmarks/ script: print ``lines(value of the integer OPTION)``; with --reproduction also time
    ``structrank reproduce EXPERIMENT`` and print ``summary(rows, minutes, jobs)``."""
    parser = reproduction_parser(doc)
    parser.add_argument(option, type=int, default=default)
    args = parser.parse_args(argv)
    print("\n".join(lines(getattr(args, option.lstrip("-")))))
    if args.reproduction:
        rows, minutes = timed_reproduction(experiment, args.jobs)
        print(summary(rows, minutes, args.jobs))


def timed_reproduction(experiment, n_jobs=2):
    """(rows, minutes): ``structrank reproduce EXPERIMENT`` into a fresh temporary folder, timed."""
    # deferred: the experiments (tqdm) only for --reproduction
    from structrank_lab.experiments.registry import EXPERIMENTS

    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        rows = EXPERIMENTS[experiment](out, n_jobs=n_jobs)
        return rows, (time.perf_counter() - start) / 60
