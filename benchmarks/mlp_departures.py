"""Where the MLP leaves its linear start, does vali tell a good departure from a bad one? (issue 20)

``mlp-<loss>`` starts at the linear learner of its loss (epoch 0) and keeps the grid point and epoch
with the best vali metric. docs/ANY_SCORER.md finds it ahead of the linear model on vali and behind
it on test on MQ2008. This study looks at every candidate the choice sees: for each data set, loss,
fold, seed and grid point of ``mlp-<loss>`` (its own grid and defaults, as ``structrank reproduce
any-scorer`` fits them), the network after each epoch, measured on vali and on test against its
linear start by the loss's metric. It reports

- the candidate vali chooses (as ``select_on_vali`` and the epoch rule do): its gain on vali and on test;
- every trained candidate: the mean gain on vali and on test, and the share that gain on test;
- how well vali ranks the candidates by their test gain (Spearman's rho over the candidates of each
  fold, seed and grid point, then averaged): near 0, vali cannot tell a good departure from a bad one.

Test values play no part in any choice; they are measured beside it.

    python benchmarks/mlp_departures.py --out docs/MLP_DEPARTURES.md [--seeds 0,1] [--jobs 2]
"""

from __future__ import annotations

import argparse
import platform
import subprocess
import time

import numpy as np
from joblib import Parallel, delayed
from scipy.stats import spearmanr

from structrank.atomic import write_text_atomic
from structrank.data import letor_folds, letor_root
from structrank_lab.experiments import any_scorer
from structrank.learners import epochs as epoch_rules
from structrank.learners import mlp as mlp_module
from structrank.learners.registry import get_model
from structrank.metrics import evaluate

class _RecordingEpoch(epoch_rules.BestEpoch):
    """``BestEpoch`` that also keeps every epoch's parameters (the MLP's choice is unchanged). The
    record is a class attribute, not a module global: joblib ships this script's functions by value."""

    offered: list = []  # (epoch, parameters) of every epoch the fit in progress offered

    def offer(self, epoch, iterate):
        type(self).offered.append((epoch, iterate))
        return super().offer(epoch, iterate)


def _value(data, scores, metrics, convention):
    return evaluate(data.y, scores, data.qid, metrics, convention).mean_of(metrics)


def fold_curves(dataset, fold_name, loss, seed):
    """[(grid point, [(epoch, vali choice metric, vali metric, test metric)])] of ``mlp-<loss>`` on one fold."""
    plain, mlp_module.BestEpoch = mlp_module.BestEpoch, _RecordingEpoch  # these fits record their epochs
    try:
        return _fold_curves(dataset, fold_name, loss, seed)
    finally:
        mlp_module.BestEpoch = plain


def _fold_curves(dataset, fold_name, loss, seed):
    spec = get_model(f"mlp-{loss}")
    fold = next(f for f in letor_folds(letor_root(dataset)) if f.name == fold_name)
    convention = any_scorer.DATASETS[dataset]
    train = any_scorer._load(str(fold.train), None)
    vali, test = (any_scorer._load(str(p), train.n_features) for p in (fold.vali, fold.test))
    choice = [spec.metric] if isinstance(spec.metric, str) else list(spec.metric)
    metric = [any_scorer.LOSS_METRIC[loss]]
    out = []
    for params in spec.candidates({"random_state": seed}):
        _RecordingEpoch.offered.clear()
        model = spec.make(**params).fit(train, eval_set=vali)
        curve = []
        for epoch, weights in list(_RecordingEpoch.offered):
            model.params_ = weights
            v, t = model.predict(vali.X), model.predict(test.X)
            curve.append((epoch, _value(vali, v, choice, convention), _value(vali, v, metric, convention),
                          _value(test, t, metric, convention)))
        out.append(({k: params[k] for k in spec.grid}, curve))
    return out


def summarise(curves):
    """The chosen candidate's gains, every trained candidate's mean gains, and vali's rank agreement with test."""
    chosen, vali_gain, test_gain, rhos = [], [], [], []
    for fits in curves:  # one fold and seed: its grid points' curves
        best = None
        for _, curve in fits:
            start = curve[0]
            for epoch, choice, v, t in curve:
                if best is None or choice > best[0]:  # grid order, then epoch order: first on ties
                    best = (choice, v - start[2], t - start[3], epoch)
            trained = [(v - start[2], t - start[3]) for epoch, _, v, t in curve if epoch > 0]
            vali_gain += [g[0] for g in trained]
            test_gain += [g[1] for g in trained]
            if len({g[0] for g in trained}) > 1 and len({g[1] for g in trained}) > 1:
                rhos.append(spearmanr(*zip(*trained)).statistic)
        chosen.append(best[1:])
    chosen = np.array(chosen)
    return {"chosen_vali": 100 * chosen[:, 0].mean(), "chosen_test": 100 * chosen[:, 1].mean(),
            "chosen_left": float(np.mean(chosen[:, 2] > 0)),
            "vali": 100 * np.mean(vali_gain), "test": 100 * np.mean(test_gain),
            "test_up": float(np.mean(np.array(test_gain) > 0)), "rho": float(np.mean(rhos)) if rhos else float("nan"),
            "candidates": len(test_gain), "fits": len(curves)}


def verdict(s) -> str:
    """A sentence read from the figures (no fixed claim): does vali's lead carry, and could vali tell?"""
    carried = ("carried to test" if s["chosen_test"] >= 0 else "did not carry to test")
    tell = ("vali ranks the departures much as test does" if s["rho"] >= 0.5 else
            "vali ranks the departures only loosely as test does" if s["rho"] >= 0.2 else
            "vali hardly ranks the departures as test does")
    on_average = "gain" if s["test"] > 0 else "lose"
    return (f"the chosen candidate's vali lead ({s['chosen_vali']:+.2f}) {carried} ({s['chosen_test']:+.2f}); "
            f"trained candidates {on_average} on test on average ({s['test']:+.2f}, {100 * s['test_up']:.0f}% above "
            f"the start); {tell} (rho {s['rho']:.2f})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--seeds", default="0,1")
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    tic = time.perf_counter()
    jobs = [(d, f.name, loss, seed) for d in any_scorer.DATASETS for f in letor_folds(letor_root(d))
            for loss in any_scorer.LOSSES for seed in seeds]
    results = Parallel(n_jobs=args.jobs)(delayed(fold_curves)(*job) for job in jobs)
    seconds = time.perf_counter() - tic
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    command = f"python benchmarks/mlp_departures.py --out {args.out} --seeds {args.seeds} --jobs {args.jobs}"
    lines = ["# Where the MLP leaves its linear start (issue 20)\n",
             f"<!-- Generated by `{command}` at {commit}; do not edit by hand, run the command again. -->\n",
             f"Made by `{command}` at commit {commit} in {seconds:.0f} s ({platform.python_version()}, "
             f"{len(jobs)} fold-loss-seed jobs). Each `mlp-<loss>` fit (its grid, defaults and vali choice as in "
             "`structrank reproduce any-scorer`) is measured after every epoch on vali and on test. A gain is "
             "the candidate's metric minus its linear start's (epoch 0, the linear learner of the loss), in points "
             "of the loss's metric (map: MAP, ndcg: NDCG@10, crf-kl: NDCG@5). Test values play no part in any "
             "choice.\n",
             "| data | loss | fits | chosen: vali gain | chosen: test gain | chosen left the start | "
             "trained candidates | their vali gain | their test gain | share above the start on test | "
             "Spearman rho, vali vs test gain |", "|---" * 11 + "|"]
    by_key = {}
    for job, result in zip(jobs, results):
        by_key.setdefault((job[0], job[2]), []).append(result)
    readings = []
    for (dataset, loss), curves in by_key.items():
        s = summarise(curves)
        lines.append(f"| {dataset} | {loss} | {s['fits']} | {s['chosen_vali']:+.2f} | {s['chosen_test']:+.2f} | "
                     f"{100 * s['chosen_left']:.0f}% | {s['candidates']} | {s['vali']:+.2f} | {s['test']:+.2f} | "
                     f"{100 * s['test_up']:.0f}% | {s['rho']:.2f} |")
        readings.append(f"- {dataset}, {loss}: {verdict(s)}.")
    lines += ["", "Read from the figures above:", "", *readings, ""]
    write_text_atomic(args.out, "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
