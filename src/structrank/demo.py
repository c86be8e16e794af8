"""``structrank demo``: the baselines, the structural SVMs for MAP and NDCG, the latent perceptron for MAP (LSP-AP) and
the permutation CRF trained on the loss-inspired KL (CRF-KL) side by side on MQ2008 Fold1 (or synthetic data)."""

from __future__ import annotations

import sys
import time

import numpy as np

from structrank.data import letor_folds, letor_root, make_ranking_dataset, read_letor
from structrank.learners.registry import get_model, select_on_vali
from structrank.metrics import CONVENTIONS, evaluate
from structrank.metrics.compare import compare_results

DEMO_METRICS = ("map", "ndcg@1", "ndcg@2", "ndcg@3", "ndcg@4", "ndcg@5", "ndcg@10", "p@1", "mrr")
DEMO_MODELS = ("linreg", "ranksvm", "svm-map", "svm-ndcg", "lsp-ap", "crf-kl")  # the first is the baseline
ALPHA = 0.05
#: where to go from here, printed at the end
NEXT_STEPS = (
    "next: the 5-minute tutorial, docs/site/tutorial.md (every block runs as written);",
    "      `structrank reproduce chakrabarti2008 --quick --out out/c08` reruns a paper's experiment (names: "
    "`structrank reproduce --help`);",
    "      `structrank train svm-map --train TRAIN --vali VALI --out model.npz` trains on your own LETOR/SVMlight "
    "files, then `structrank predict` and `structrank evaluate` (models: `structrank train --help`).",
)


def _splits(data_dir, synthetic):
    root = None if synthetic else letor_root("MQ2008", data_dir)
    if root is not None:
        fold = letor_folds(root)[0]
        train = read_letor(fold.train)
        return ("MQ2008 Fold1", train, read_letor(fold.vali, train.n_features), read_letor(fold.test, train.n_features))
    why = "--synthetic was given" if synthetic else "MQ2008 is not in the data folder (set STRUCTRANK_DATA)"
    print(f"demo: {why}; using the seeded synthetic generator instead", file=sys.stderr)
    # One data set split by query: the three parts share the hidden model that made the labels.
    full = make_ranking_dataset(n_queries=784, n_features=46, no_relevant_fraction=0.28, random_state=1)
    train, vali, test = (full.take_queries(np.arange(a, b)) for a, b in ((0, 470), (470, 627), (627, 784)))
    return "synthetic (seeded, MQ2008-sized)", train, vali, test


def run_demo(data_dir=None, synthetic=False, convention="letor4"):
    """Train each demo model (parameters chosen on vali by its metric) and print its test metrics."""
    start = time.perf_counter()
    name, train, vali, test = _splits(data_dir, synthetic)
    print(f"{name}: train {train.n_queries} queries / {train.n_rows} docs, test {test.n_queries} / {test.n_rows}")
    results = {}
    for model_name in DEMO_MODELS:
        spec = get_model(model_name)
        t0 = time.perf_counter()
        model, params, _ = select_on_vali(spec, train, vali, convention=convention)
        results[model_name] = evaluate(test.y, model.predict(test.X), test.qid, DEMO_METRICS, convention)
        print(f"  {model_name}: chose {params} on vali in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    print(f"\ntest metrics, {CONVENTIONS[convention].name} convention")
    print(marked_table(results))
    print(f"\n{CONVENTIONS[convention].describe()}")
    print(f"finished in {time.perf_counter() - start:.1f} s")
    print("\n".join(NEXT_STEPS))
    return {name: result.metrics for name, result in results.items()}


def marked_table(results: dict) -> str:
    """The models' test metrics ({model: EvaluationResult}, the first the baseline) as a text table.

    ``^`` marks the best model of each metric; ``+`` / ``-`` a model significantly above / below the
    baseline there (structrank.metrics.compare: the paired t-test and randomisation test over the test
    queries, both Holm-adjusted across the models, below ALPHA). A legend follows the table.
    """
    models = list(results)
    comparison = compare_results(results, alpha=ALPHA)
    marks = {(r.system, r.metric): ("+" if r.difference > 0 else "-") for r in comparison.rows if r.significant(ALPHA)}
    width = max(len(m) for m in DEMO_METRICS)
    lines = [f"{'metric':<{width}}  " + "  ".join(f"{m:>10}" for m in models)]
    for metric in DEMO_METRICS:
        values = [round(float(results[m].metrics[metric]), 4) for m in models]  # best as printed: ties all marked
        best = max(values)
        cells = [f"{v:8.4f}" + f"{'^' if v == best else ''}{marks.get((m, metric), '')}".ljust(2)
                 for m, v in zip(models, values)]
        lines.append(f"{metric:<{width}}  " + "  ".join(cells))
    lines.append(f"^ best per metric; +/- significantly above/below {models[0]} (paired t-test and randomisation test "
                 f"over the {comparison.rows[0].queries} test queries, both p < {ALPHA:g} after Holm's correction "
                 f"across the {len(models) - 1} models)")
    return "\n".join(lines)
