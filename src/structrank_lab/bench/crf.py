"""Speed of permutation CRF training (Volkovs et al. 2011): one SGD epoch on MQ2008 Fold1.

An epoch visits every training query once (single-level queries skipped, as by default), draws
its 6-document subset and computes the objective's exact gradient over the 720 rankings: one
numba loop, single-threaded. Timed per objective, the median of many epochs after compilation,
without the dev evaluation (timed apart: it runs once per epoch when ``eval_set`` is given).
Without MQ2008 in the data folder, a seeded synthetic set of MQ2008's size is used instead.
"""

from __future__ import annotations

import time

import numpy as np

from structrank.data import letor_folds, letor_root, make_ranking_dataset, read_letor
from structrank.learners.crf import PermutationCRFRanker
from structrank.learners.epochs import epoch_progress
from structrank_lab.bench.timing import reproduction_main

OBJECTIVE_PARAMS = {"ml": 0.0, "la": 10.0, "ls": 0.0, "el": 0.0, "kl": 1.0}


def _fold1(data_dir=None):
    root = letor_root("MQ2008", data_dir)
    if root is not None:
        fold = letor_folds(root)[0]
        train = read_letor(fold.train)
        return "MQ2008 Fold1", train, read_letor(fold.vali, n_features=train.n_features)
    full = make_ranking_dataset(n_queries=627, n_features=46, no_relevant_fraction=0.28, random_state=1)
    return "synthetic (MQ2008-sized)", full.take_queries(np.arange(470)), full.take_queries(np.arange(470, 627))


def _epoch_seconds(model, train, eval_set=None) -> list:
    """The seconds of each epoch of ``model.fit`` after the first (which compiles or loads the kernels), read from
    the times at which the fit offers its epochs (``epoch_progress``): the whole epoch a user waits for."""
    stamps = []
    with epoch_progress(lambda epoch, total: stamps.append(time.perf_counter())):
        model.fit(train.X, train.y, qid=train.qid, eval_set=eval_set)
    return list(np.diff(stamps))


def _visited(train) -> int:
    """The training queries an epoch visits: those with more than one label level (``skip_single_level``)."""
    offsets = train.offsets
    return sum(int(np.ptp(train.y[lo:hi]) > 0) for lo, hi in zip(offsets[:-1], offsets[1:]))


def bench_epochs(repeat=50, data_dir=None):
    """{"data": name, "queries": n, "rows": [{objective, epoch_ms}], "dev_eval_ms": ms}: the median epoch of a fit
    of ``repeat + 1`` epochs per objective, and what scoring the dev set adds to an epoch (the fit again with
    ``eval_set``, the difference of the medians)."""
    name, train, vali = _fold1(data_dir)
    rows = []
    for objective, param in OBJECTIVE_PARAMS.items():
        options = dict(objective=objective, max_epochs=repeat + 1, learning_rate=0.01)
        if objective in ("la", "kl"):  # the objective's own strength: la's loss scale, kl's temperature
            options["alpha" if objective == "la" else "T"] = param
        model = PermutationCRFRanker(**options)
        rows.append(dict(objective=objective, epoch_ms=1e3 * float(np.median(_epoch_seconds(model, train)))))
    model = PermutationCRFRanker(max_epochs=repeat + 1, learning_rate=0.01)
    with_dev = np.median(_epoch_seconds(model, train, eval_set=vali))
    dev_ms = 1e3 * float(with_dev - np.median(_epoch_seconds(model, train)))
    return dict(data=name, queries=_visited(train), rows=rows, dev_eval_ms=dev_ms)


def format_crf(figures) -> list:
    lines = [f"permutation CRF (Volkovs et al. 2011): one SGD epoch on {figures['data']} train, "
             f"{figures['queries']} queries visited, 6-document subsets (720 rankings), single thread, median",
             f"  {'objective':>9}  {'epoch ms':>9}  {'us / query':>10}"]
    for row in figures["rows"]:
        lines.append(f"  {row['objective']:>9}  {row['epoch_ms']:9.2f}  {1e3 * row['epoch_ms'] / figures['queries']:10.1f}")
    lines.append(f"  dev evaluation (mean NDCG@1-5 on vali), once per epoch with eval_set: {figures['dev_eval_ms']:.2f} ms")
    lines.append("  target: an epoch under 30 ms")
    return lines


def markdown_section(figures) -> str:
    return "## Permutation CRF: one training epoch\n\n```\n" + "\n".join(format_crf(figures)) + "\n```\n"


def main(argv=None, doc=None):
    """``python benchmarks/bench_crf.py [--repeat N] [--reproduction [--jobs 2]]``: the epoch times, and
    with --reproduction the wall time of the whole volkovs2011 reproduction."""
    def summary(rows, minutes, jobs):
        runs = len({(r["dataset"], r["fold"], r["seed"], r["model"], str(r["params"])) for r in rows})
        return (f"\nstructrank reproduce volkovs2011 --jobs {jobs}: {runs} CRFs trained in {minutes:.1f} minutes "
                "of wall time (target: under 20)")

    reproduction_main(doc or main.__doc__, "--repeat", 50, lambda repeat: format_crf(bench_epochs(repeat)),
                      "volkovs2011", summary, argv)
