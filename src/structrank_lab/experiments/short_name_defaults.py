"""The short names' defaults on graded data sets no default was tuned on: ``docs/SHORT_NAME_DEFAULTS.md``.

    python -m structrank_lab.experiments.short_name_defaults --out docs/SHORT_NAME_DEFAULTS.md \\
        [--heldout NAME=TRAIN,TEST ...]

Every model is trained with its defaults (no ``--vali``: what a new user runs) by ``structrank train``, ranked by
``structrank predict`` and measured by ``structrank evaluate`` on the test file: svm-ndcg, svm-mrr and dorm, each
beside the two formulations it chooses between (``-ideal`` and ``-latent``), svm-auc, and LightGBM's lambdarank
with its defaults (``lightgbm.LGBMRanker``) trained in the same run. The data sets: a graded 0-4 set made here from
a fixed seed (``graded_set``), and each held-out set given (LETOR/SVMlight files, or LightGBM's with ``.query``
group files beside them). The per-query values of OHSUMED and MQ2008 with C chosen on vali are own-metric's.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from structrank.data import make_ranking_dataset, read_letor, write_letor
from structrank.metrics.compare import against_baseline
from structrank_lab.experiments.cli_pages import heldout_spec, structrank, write_page

#: short name -> (its metric, the two formulations it chooses between)
SHORT_NAMES = {"svm-ndcg": ("ndcg@10", ("svm-ndcg-ideal", "svm-ndcg-latent")),
               "svm-mrr": ("mrr@10", ("svm-mrr-ideal", "svm-mrr-latent")),
               "dorm": ("ndcg@10", ("dorm-ideal", "dorm-latent"))}
REFERENCE = "svm-auc"
LIGHTGBM = "LightGBM lambdarank"
METRICS = ("ndcg@10", "mrr@10")
MARGIN = 0.01  # "at least the better of its formulations minus one point"
LIGHTGBM_RATIO = 0.93  # svm-ndcg's NDCG@10 against LightGBM lambdarank's, both with defaults
GRADED_SEED = 0


def graded_set(folder: Path, seed: int = GRADED_SEED) -> tuple[Path, Path]:
    """(train, test): 300 queries of 10-60 documents graded 0-4 from a hidden linear model with noise
    (``make_ranking_dataset``), the first 240 queries for training and the last 60 for testing."""
    data = make_ranking_dataset(n_queries=300, docs_per_query=(10, 60), n_features=30, n_levels=5, noise=0.7,
                                random_state=seed)
    paths = folder / "graded-train.txt", folder / "graded-test.txt"
    write_letor(paths[0], data.take_queries(np.arange(240)))
    write_letor(paths[1], data.take_queries(np.arange(240, data.n_queries)))
    return paths


def _evaluate(test: Path, scores: Path) -> dict:
    """{metric: {qid: value}} of ``structrank evaluate --per-query --json`` on the test file."""
    done = structrank("evaluate", "--data", str(test), "--scores", str(scores), "--per-query", "--json", "--quiet",
                      *(a for m in METRICS for a in ("--metric", m)))
    out = json.loads(done.stdout)
    return {m: {q: v[m] for q, v in out["per_query"].items()} for m in METRICS}


def _cli_model(name: str, train: Path, test: Path, work: Path) -> tuple[dict, float, str]:
    """(per-query values, seconds, the formulation train printed) of one model trained with its defaults."""
    model, scores = work / name, work / f"{name}.scores"
    start = time.perf_counter()  # the whole process a user waits for (each its own: no JIT compiled by another)
    done = structrank("train", name, "--train", str(train), "--out", str(model))
    seconds = time.perf_counter() - start
    structrank("predict", "--model", str(model), "--data", str(test), "--out", str(scores), "--quiet")
    formulation = next((line.split("formulation: ", 1)[1] for line in done.stderr.splitlines()
                        if "formulation: " in line), "")
    return _evaluate(test, scores), seconds, formulation


def _lightgbm(train: Path, test: Path, work: Path) -> tuple[dict, float]:
    """LightGBM's LGBMRanker with its defaults (lambdarank), trained on the same file (its seconds: the fit alone)."""
    # deferred: lightgbm loads only for this peer
    import lightgbm

    tr = read_letor(train)
    te = read_letor(test, n_features=tr.n_features)
    start = time.perf_counter()
    ranker = lightgbm.LGBMRanker(verbose=-1).fit(tr.X, tr.y, group=np.diff(tr.offsets))
    seconds = time.perf_counter() - start
    scores = work / "lightgbm.scores"
    scores.write_text("".join(f"{s!r}\n" for s in ranker.predict(te.X).tolist()))
    return _evaluate(test, scores), seconds


def run_dataset(train: Path, test: Path) -> dict:
    """{model: {"values": {metric: {qid: value}}, "seconds": float, "formulation": str}} on one data set."""
    names = [REFERENCE] + [n for short, (_, pair) in SHORT_NAMES.items() for n in (short, *pair)]
    out = {}
    with tempfile.TemporaryDirectory() as folder:
        for name in names:
            values, seconds, formulation = _cli_model(name, train, test, Path(folder))
            out[name] = {"values": values, "seconds": seconds, "formulation": formulation}
            print(f"  {name}: NDCG@10 {np.mean(list(values['ndcg@10'].values())):.4f} ({seconds:.1f} s)", file=sys.stderr)
        values, seconds = _lightgbm(train, test, Path(folder))
        out[LIGHTGBM] = {"values": values, "seconds": seconds, "formulation": "lightgbm.LGBMRanker() defaults (seconds: its fit alone)"}
    return out


def _mean(values: dict) -> float:
    return float(np.mean(list(values.values())))


def dataset_section(name: str, results: dict) -> str:
    """Markdown: each model's test values, each default against its better formulation (paired interval), and
    svm-ndcg's NDCG@10 as a ratio of LightGBM lambdarank's."""
    lines = [f"## {name}", "", "| model | NDCG@10 | MRR@10 | train seconds (the whole process) | what it fitted |", "|---|---|---|---|---|"]
    for model, r in results.items():
        lines.append(f"| {model} | {_mean(r['values']['ndcg@10']):.4f} | {_mean(r['values']['mrr@10']):.4f} | "
                     f"{r['seconds']:.1f} | {r['formulation'] or '-'} |")
    lines += ["", "| default | metric | default | better formulation | its value | default - better (points) | "
              "95% interval (points) | within 1 point |", "|---|---|---|---|---|---|---|---|"]
    verdicts = []
    for short, (metric, pair) in SHORT_NAMES.items():
        better = max(pair, key=lambda m: _mean(results[m]["values"][metric]))
        row = against_baseline({better: results[better]["values"][metric], short: results[short]["values"][metric]},
                               better, metric)[0]
        holds = row.difference >= -MARGIN
        verdicts.append(holds)
        lines.append(f"| {short} | {metric} | {row.mean:.4f} | {better} | {row.baseline_mean:.4f} | "
                     f"{100 * row.difference:+.2f} | [{100 * row.ci_low:+.2f}, {100 * row.ci_high:+.2f}] | "
                     f"{'yes' if holds else 'no'} |")
    ratio = _mean(results["svm-ndcg"]["values"]["ndcg@10"]) / _mean(results[LIGHTGBM]["values"]["ndcg@10"])
    lines += ["", f"svm-ndcg's NDCG@10 is {ratio:.3f}x LightGBM lambdarank's ({'at least' if ratio >= LIGHTGBM_RATIO else 'below'} "
              f"the {LIGHTGBM_RATIO}x bar); {sum(verdicts)} of {len(verdicts)} defaults are within 1 point of the better "
              "of their formulations."]
    return "\n".join(lines)


def page(sections: list[str], command: str) -> str:
    head = (f"<!-- Generated by `{command}`; do not edit by hand, run the command again. -->\n"
            "# The short names' defaults on graded data sets\n\n"
            "Each model trained with its defaults (no --vali) through `structrank train`, ranked by `structrank "
            "predict` and measured by `structrank evaluate` (per query; the interval is the paired t-test's over the "
            "test queries). The rule the defaults follow is in docs/LOSSES.md; OHSUMED and MQ2008 with C chosen on "
            "vali are in own-metric's report (docs/RESULTS.md).\n")
    return head + "\n" + "\n\n".join(sections) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m structrank_lab.experiments.short_name_defaults",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="the markdown page to write")
    parser.add_argument("--heldout", action="append", default=[], metavar="NAME=TRAIN,TEST",
                        help="a held-out data set: its name, training file and test file (repeatable)")
    args = parser.parse_args(argv)
    sets = [heldout_spec(spec, parser) for spec in args.heldout]
    sections = []
    with tempfile.TemporaryDirectory() as folder:
        train, test = graded_set(Path(folder))
        for name, tr, te in [(f"graded 0-4, made here (make_ranking_dataset, seed {GRADED_SEED})", train, test), *sets]:
            print(f"{name}:", file=sys.stderr)
            sections.append(dataset_section(name, run_dataset(tr, te)))
    return write_page(args.out, "structrank_lab.experiments.short_name_defaults", argv,
                      lambda command: page(sections, command))


if __name__ == "__main__":
    sys.exit(main())
