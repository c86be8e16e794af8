"""Quick any-scorer fits: python benchmarks/any_scorer_fits.py MODEL [--data MQ2008,OHSUMED] [--folds 1,2] [--set k=v ...] [--grid JSON]
Mirrors experiments.any_scorer._run: select_on_vali over the ModelSpec grid, then test metrics."""
import argparse, json, time, dataclasses
import numpy as np
from structrank_lab.experiments import any_scorer as A
from structrank.data import letor_folds, letor_root
from structrank.metrics import evaluate
from structrank.cli import parse_assignments
from structrank.learners.registry import get_model, select_on_vali

p = argparse.ArgumentParser()
p.add_argument("model")
p.add_argument("--data", default="MQ2008,OHSUMED")
p.add_argument("--folds", default="1,2,3,4,5")
p.add_argument("--set", nargs="*", default=[])
p.add_argument("--grid", default=None)
p.add_argument("--metric", default=None)
a = p.parse_args()
spec = get_model(a.model)
spec = dataclasses.replace(spec, defaults={**spec.defaults, **parse_assignments(a.set)})
grid = json.loads(a.grid) if a.grid else None
if grid:
    grid = {k: [tuple(x) if isinstance(x, list) else x for x in v] for k, v in grid.items()}
metric = a.metric or (spec.metric if isinstance(spec.metric, str) else "ndcg@5")
for ds in a.data.split(","):
    conv = A.DATASETS[ds]
    root = letor_root(ds)
    vals = []
    for f in letor_folds(root):
        if f.name[-1] not in a.folds.split(","):
            continue
        train = A._load(str(f.train), None)
        vali, test = A._load(str(f.vali), train.n_features), A._load(str(f.test), train.n_features)
        tic = time.perf_counter()
        model, params, v = select_on_vali(spec, train, vali, convention=conv, grid=grid)
        r = evaluate(test.y, model.predict(test.X), test.qid, [metric], conv, docids=test.docids).metrics[metric]
        vals.append(r)
        extra = {k: getattr(model, k) for k in ("best_iteration_", "best_epoch_") if hasattr(model, k)}
        print(f"{ds} {f.name} vali={v:.4f} test {metric}={r:.4f} params={params} {extra} {time.perf_counter()-tic:.1f}s", flush=True)
    print(f"{ds} {a.model} {a.set} MEAN test {metric} = {np.mean(vals):.4f}", flush=True)
