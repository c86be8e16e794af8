"""Boosted trees on a structured loss against LightGBM's lambdarank, side by side (the trees section).

On MQ2008 Fold1 (train, about 9,600 rows), one thread, the same number of trees and leaves:
``StructuredBoostingRanker(loss="ndcg")`` (the SVM-ndcg hinge's subgradient as LightGBM's custom
objective, graded gains) against ``LambdaMARTRanker`` (LightGBM's built-in lambdarank). Rounds
interleave the two, so both see the same machine; each figure is the median over rounds with its
range. Two measurements:

- the fit alone, in this process (the inner loop: boosting rounds and, for ours, the oracle);
- the whole command a user waits for, ``structrank train gbrt-ndcg`` against ``structrank train
  lambdamart`` in fresh processes (start-up, reading the file, the fit, writing the model).

Test NDCG@10 (letor4) of both models is reported beside the times.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from functools import partial

import numpy as np

from structrank_lab.bench.timing import clocked, interleaved
from structrank.data import letor_folds, letor_root, read_letor
from structrank.learners import LambdaMARTRanker, StructuredBoostingRanker
from structrank.learners.registry import get_model
from structrank.metrics import evaluate

MODELS = ("gbrt-ndcg", "lambdamart")
SETTINGS = {"learning_rate": 0.05, "num_leaves": 31, "n_jobs": 1}


def _make(name, trees):
    if name == "gbrt-ndcg":  # the command line's model (its defaults: the latent target), as the command times it
        return StructuredBoostingRanker(**{**get_model(name).defaults, "n_estimators": trees, **SETTINGS})
    return LambdaMARTRanker(n_estimators=trees, **SETTINGS)


def bench_trees(rounds=5, trees=100, data_dir=None):
    """{fit, command, ndcg, rows, queries, trees, rounds} (times in seconds per round), or {} without MQ2008."""
    root = letor_root("MQ2008", data_dir)
    if root is None:
        return {}
    fold = letor_folds(root)[0]
    train = read_letor(fold.train)
    test = read_letor(fold.test, n_features=train.n_features)
    for name in MODELS:  # compile the oracles, load LightGBM
        _make(name, 2).fit(train)
    ndcg = {}

    def fit_once(name):  # seconds of the fit; the test NDCG@10 (of the last round) is not timed
        start = time.perf_counter()
        model = _make(name, trees).fit(train)
        seconds = time.perf_counter() - start
        ndcg[name] = evaluate(test.y, model.predict(test.X), test.qid, ["ndcg@10"], "letor4").metrics["ndcg@10"]
        return seconds

    fit = interleaved({name: partial(fit_once, name) for name in MODELS}, rounds)
    env = {**os.environ, **{v: "1" for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                                             "NUMBA_NUM_THREADS")}}
    with tempfile.TemporaryDirectory() as folder:
        commands = {name: [sys.executable, "-m", "structrank", "train", name, "--train", str(fold.train),
                           "--set", f"n_estimators={trees}",
                           *(a for k, v in SETTINGS.items() for a in ("--set", f"{k}={v}")),
                           "--out", os.path.join(folder, f"{name}.npz")] for name in MODELS}
        command = interleaved({name: clocked(partial(subprocess.run, cmd, check=True, capture_output=True, env=env))
                               for name, cmd in commands.items()}, rounds)
    return {"fit": fit, "command": command, "ndcg": ndcg, "rows": train.n_rows, "queries": train.n_queries,
            "trees": trees, "rounds": rounds}


def _spread(values):
    return f"{np.median(values):.3f} s (range {min(values):.3f}-{max(values):.3f})"


def ratios(figures) -> dict:
    """gbrt-ndcg's median over lambdamart's, for the fit and the whole command."""
    return {kind: float(np.median(figures[kind]["gbrt-ndcg"]) / np.median(figures[kind]["lambdamart"]))
            for kind in ("fit", "command")}


def format_trees(figures) -> list:
    if not figures:
        return ["trees: MQ2008 not found (set STRUCTRANK_DATA); skipped"]
    lines = [f"boosted trees, MQ2008 Fold1 train ({figures['rows']} rows, {figures['queries']} queries), "
             f"{figures['trees']} trees of 31 leaves, learning rate 0.05, one thread, {figures['rounds']} interleaved "
             "rounds, median (range)",
             f"{'':12} {'fit':>34} {'structrank train (whole process)':>40} {'test NDCG@10':>14}"]
    for name in MODELS:
        lines.append(f"{name:12} {_spread(figures['fit'][name]):>34} {_spread(figures['command'][name]):>40} "
                     f"{figures['ndcg'][name]:>14.4f}")
    r = ratios(figures)
    lines.append(f"gbrt-ndcg / lambdamart: fit {r['fit']:.2f}x, whole command {r['command']:.2f}x "
                 f"({'within' if max(r.values()) <= 2.0 else 'beyond'} the 2x bar)")
    return lines


def markdown_section(figures) -> str:
    return "## Boosted trees on a structured loss against LightGBM lambdarank\n\n```\n" + "\n".join(
        format_trees(figures)) + "\n```\n"


def main(argv=None):
    """``python benchmarks/bench_trees.py [--rounds 5] [--trees 100]``: the trees section with other rounds or trees."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--trees", type=int, default=100)
    args = parser.parse_args(argv)
    print("\n".join(format_trees(bench_trees(args.rounds, args.trees))))
