"""Boosted trees on a structured loss against LightGBM's lambdarank, side by side (issue 20, point 8).

On MQ2008 Fold1 (train, about 9,600 rows), single thread, the same number of trees and leaves:
``StructuredBoostingRanker(loss="ndcg")`` (the SVM-ndcg hinge's subgradient as LightGBM's custom
objective, graded gains) against ``LambdaMARTRanker`` (LightGBM's built-in lambdarank). Rounds
interleave the two, so both see the same machine; each figure is the median over rounds with its
range. Two measurements:

- the fit alone, in this process (the inner loop: boosting rounds and, for ours, the oracle);
- the whole command a user waits for, ``structrank train gbrt-ndcg`` against ``structrank train
  lambdamart`` in fresh processes (start-up, reading the file, the fit, writing the model).

Test NDCG@10 (letor4) of both models is printed beside the times.

    python benchmarks/bench_trees.py [--rounds 5] [--trees 100]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_var] = "1"

import numpy as np  # noqa: E402

from structrank.data import letor_folds, letor_root, read_letor  # noqa: E402
from structrank.learners import LambdaMARTRanker, StructuredBoostingRanker  # noqa: E402
from structrank.metrics import evaluate  # noqa: E402


def _models(trees):
    common = dict(n_estimators=trees, learning_rate=0.05, num_leaves=31, n_jobs=1)
    return {"gbrt-ndcg": lambda: StructuredBoostingRanker(loss="ndcg", **common),
            "lambdamart": lambda: LambdaMARTRanker(**common)}


def _spread(values):
    return f"{np.median(values):.3f} s (range {min(values):.3f}-{max(values):.3f})"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--trees", type=int, default=100)
    args = parser.parse_args(argv)
    root = letor_root("MQ2008")
    if root is None:
        print("bench trees: MQ2008 not found (set STRUCTRANK_DATA); skipped")
        return 0
    fold = letor_folds(root)[0]
    train = read_letor(fold.train)
    test = read_letor(fold.test, n_features=train.n_features)
    models = _models(args.trees)
    for make in models.values():  # compile the oracles, load LightGBM
        make().set_params(n_estimators=2).fit(train)

    fit_times = {name: [] for name in models}
    ndcg = {}
    for _ in range(args.rounds):
        for name, make in models.items():
            start = time.perf_counter()
            model = make().fit(train)
            fit_times[name].append(time.perf_counter() - start)
            ndcg[name] = evaluate(test.y, model.predict(test.X), test.qid, ["ndcg@10"], "letor4").metrics["ndcg@10"]

    command_times = {name: [] for name in models}
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(args.rounds):
            for name in models:
                cmd = [sys.executable, "-m", "structrank", "train", name, "--train", str(fold.train), "--set",
                       f"n_estimators={args.trees}", "--set", "learning_rate=0.05", "--set", "num_leaves=31",
                       "--set", "n_jobs=1", "--out", os.path.join(folder, f"{name}.npz")]
                start = time.perf_counter()
                subprocess.run(cmd, check=True, capture_output=True)
                command_times[name].append(time.perf_counter() - start)

    print(f"boosted trees, MQ2008 Fold1 train ({train.n_rows} rows, {train.n_queries} queries), {args.trees} trees of "
          f"31 leaves, learning rate 0.05, one thread, {args.rounds} interleaved rounds, median (range)")
    print(f"{'':12} {'fit':>34} {'structrank train (whole process)':>40} {'test NDCG@10':>14}")
    for name in models:
        print(f"{name:12} {_spread(fit_times[name]):>34} {_spread(command_times[name]):>40} {ndcg[name]:>14.4f}")
    fit_ratio = np.median(fit_times["gbrt-ndcg"]) / np.median(fit_times["lambdamart"])
    command_ratio = np.median(command_times["gbrt-ndcg"]) / np.median(command_times["lambdamart"])
    print(f"gbrt-ndcg / lambdamart: fit {fit_ratio:.2f}x, whole command {command_ratio:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
