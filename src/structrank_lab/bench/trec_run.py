"""The trec-run section of ``structrank bench``: a TREC run read and evaluated, beside pytrec_eval.

``write_synthetic_trec`` writes a seeded run of 1,000 queries of 1,000 retrieved documents each (1 M
run lines) and qrels of about 170 judgements a query (about 170,000: two thirds of them documents
the run retrieved, more of them near the top, the rest documents it missed; labels 0-2, most 0).
Scores are printed with four decimals, so some documents of a query tie.

What is timed, in interleaved rounds (median and range):

- the whole process: ``structrank evaluate --qrels Q --run R`` with map, ndcg@10, p@10 and
  recall@100 and ``--json``, against a Python script that reads the same files with
  ``pytrec_eval.parse_qrel``/``parse_run``, builds a ``RelevanceEvaluator``, evaluates and prints
  the means (what a pytrec_eval user runs); both from a fresh interpreter, imports included, the
  numba cache warm;
- the library call on dicts already in memory: ``evaluate_run(qrels, run, metrics)`` against
  ``RelevanceEvaluator(qrels, measures)`` followed by ``.evaluate(run)`` (the evaluator is built in
  every call: a pytrec_eval user pays for it once per qrels, and ``evaluate_run`` takes the qrels in
  the same call); ``.evaluate(run)`` of an evaluator built beforehand is timed beside them, and the
  ratio to it printed too.

The bars: each structrank figure at most ``BAR`` times pytrec_eval's.
"""

# deferred imports: pytrec_eval is an optional comparison (a test dependency), loaded when its contender runs
from __future__ import annotations

import compileall
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from structrank_lab.bench.timing import clocked, interleaved
from structrank.metrics.trec import evaluate_run, read_qrels, read_run

N_QUERIES, DOCS_PER_QUERY, JUDGED_PER_QUERY = 1000, 1000, 170
METRICS = ("map", "ndcg@10", "p@10", "recall@100")
#: pytrec_eval's names of METRICS
PYTREC_MEASURES = ("map", "ndcg_cut_10", "P_10", "recall_100")
#: the whole process and the library call each at most this ratio to pytrec_eval's time
BAR = 1.0
#: pytrec_eval's evaluate with the evaluator built beforehand: printed beside the bar's reference
EVALUATE_ALONE = "pytrec_eval evaluate (evaluator built before)"

#: the pytrec_eval user's script: read both files, evaluate, print the means (argv: qrels, run)
PYTREC_SCRIPT = """\
import json, sys
import pytrec_eval
with open(sys.argv[1]) as fh:
    qrels = pytrec_eval.parse_qrel(fh)
with open(sys.argv[2]) as fh:
    run = pytrec_eval.parse_run(fh)
measures = {MEASURES!r}
per_query = pytrec_eval.RelevanceEvaluator(qrels, set(measures)).evaluate(run)
print(json.dumps({{m: sum(v[m] for v in per_query.values()) / len(per_query) for m in measures}}))
""".format(MEASURES=PYTREC_MEASURES)


def write_synthetic_trec(folder, n_queries=N_QUERIES, docs_per_query=DOCS_PER_QUERY, judged=JUDGED_PER_QUERY,
                         seed=0):
    """Write ``qrels.txt`` and ``run.txt`` into ``folder``; returns (qrels path, run path, run lines,
    judgements). Seeded: the same arguments write the same bytes."""
    rng = np.random.default_rng(seed)
    from_run = min(docs_per_query, judged * 2 // 3)
    run_lines, qrels_lines = [], []
    for q in range(1, n_queries + 1):
        # distinct document numbers of a collection of 10^7 (a few draws more, the repeats dropped)
        ids = np.unique(rng.integers(0, 10**7, docs_per_query + judged + 64))
        ids = rng.permutation(ids)[:docs_per_query + judged - from_run]
        docnos = [f"D{i:07d}" for i in ids]
        scores = np.sort(rng.gamma(2.0, 3.0, docs_per_query))[::-1]
        run_lines += [f"{q} Q0 {d} {r} {s:.4f} synthetic\n"
                      for r, (d, s) in enumerate(zip(docnos[:docs_per_query], scores), 1)]
        # judged documents of the run, more of them near the top (pooled), then documents it missed
        weights = 1.0 / np.arange(1, docs_per_query + 1) ** 0.5
        pooled = rng.choice(docs_per_query, from_run, replace=False, p=weights / weights.sum())
        judged_docs = [docnos[i] for i in pooled] + docnos[docs_per_query:]
        labels = rng.choice(3, len(judged_docs), p=(0.7, 0.2, 0.1))
        qrels_lines += [f"{q} 0 {d} {label}\n" for d, label in zip(judged_docs, labels)]
    qrels_path, run_path = os.path.join(folder, "qrels.txt"), os.path.join(folder, "run.txt")
    with open(qrels_path, "w") as fh:
        fh.write("".join(qrels_lines))
    with open(run_path, "w") as fh:
        fh.write("".join(run_lines))
    return qrels_path, run_path, len(run_lines), len(qrels_lines)


def _wall(command, env) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, env=env)
    return time.perf_counter() - start


def _means(command, env) -> dict:
    """The means a command printed as JSON (structrank's under "metrics", pytrec_eval's script's bare)."""
    out = json.loads(subprocess.run(command, check=True, capture_output=True, text=True, env=env).stdout)
    return out.get("metrics", out)


def _has_pytrec_eval() -> bool:
    return importlib.util.find_spec("pytrec_eval") is not None


def bench_trec_run(rounds=5, n_queries=N_QUERIES, docs_per_query=DOCS_PER_QUERY, judged=JUDGED_PER_QUERY,
                   folder=None) -> dict:
    """Time a synthetic run read and evaluated, whole process and library call, beside pytrec_eval
    (when installed), in interleaved rounds; returns the sizes, the largest difference between the two
    tools' means, and {"process": {contender: [seconds]}, "library": {...}}."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # structrank/, above bench/
    compileall.compile_dir(package, quiet=1)  # the bytecode pip install writes
    env = dict(os.environ)
    figures = {"rounds": rounds}
    with tempfile.TemporaryDirectory(prefix="structrank-trec-", dir=folder) as tmp:
        qrels_path, run_path, figures["run lines"], figures["judgements"] = write_synthetic_trec(
            tmp, n_queries, docs_per_query, judged)
        figures["queries"] = n_queries
        ours = [sys.executable, "-m", "structrank", "evaluate", "--qrels", qrels_path, "--run", run_path,
                *(a for m in METRICS for a in ("--metric", m)), "--json"]
        process = {"structrank evaluate": lambda: _wall(ours, env)}
        means = {"structrank": _means(ours, env)}  # also fills numba's cache
        library = {}
        qrels, run = read_qrels(qrels_path), read_run(run_path)
        evaluate_run(qrels, run, METRICS)  # loads the kernels
        library["structrank evaluate_run"] = clocked(lambda: evaluate_run(qrels, run, METRICS))
        if _has_pytrec_eval():
            # deferred: pytrec_eval is an optional comparison (a test dependency), loaded when present
            import pytrec_eval

            script = os.path.join(tmp, "pytrec_eval_script.py")
            with open(script, "w") as fh:
                fh.write(PYTREC_SCRIPT)
            theirs = [sys.executable, script, qrels_path, run_path]
            process["pytrec_eval script"] = lambda: _wall(theirs, env)
            means["pytrec_eval"] = _means(theirs, env)
            measures = set(PYTREC_MEASURES)
            library["pytrec_eval RelevanceEvaluator + evaluate"] = clocked(
                lambda: pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run))
            evaluator = pytrec_eval.RelevanceEvaluator(qrels, measures)
            evaluator.evaluate(run)
            library[EVALUATE_ALONE] = clocked(lambda: evaluator.evaluate(run))
            figures["largest difference"] = max(abs(means["structrank"][ours_name] - means["pytrec_eval"][name])
                                                for ours_name, name in zip(METRICS, PYTREC_MEASURES))
        figures["process"] = interleaved(process, rounds)
        figures["library"] = interleaved(library, rounds)
    return figures


def _line(name, values, reference, scale, unit, alone=None) -> str:
    median, digits = float(np.median(values)), 3 if unit == "s" else 1
    text = (f"  {name:<46} {median * scale:8.{digits}f} {unit} (range {min(values) * scale:.{digits}f}-"
            f"{max(values) * scale:.{digits}f})")
    if reference is not None and name.startswith("structrank"):
        ratio = median / float(np.median(reference))
        text += f"  {ratio:.2f}x pytrec_eval (bar: at most {BAR:.1f}x, {'met' if ratio <= BAR else 'MISSED'})"
        if alone is not None:
            text += f"; {median / float(np.median(alone)):.2f}x its evaluate alone"
    return text


def format_trec_run(figures) -> list:
    lines = [f"trec-run: a synthetic run of {figures['queries']:,} queries, {figures['run lines']:,} run lines, "
             f"{figures['judgements']:,} judgements; map, ndcg@10, p@10, recall@100; median of {figures['rounds']} "
             "interleaved rounds (range)"]
    groups = {"process": ("whole process (imports, reading both files, evaluating, printing the means; numba's "
                          "cache warm):", "pytrec_eval script", 1, "s"),
              "library": ("library call on dicts in memory (pytrec_eval's evaluator built in every call):",
                          "pytrec_eval RelevanceEvaluator + evaluate", 1000, "ms")}
    for group, (title, reference_name, scale, unit) in groups.items():
        times = figures[group]
        lines.append(title)
        lines += [_line(name, values, times.get(reference_name), scale, unit, times.get(EVALUATE_ALONE))
                  for name, values in times.items()]
    if "largest difference" in figures:
        lines.append(f"  the means of both agree to {figures['largest difference']:.1e}")
    else:
        lines.append("  pytrec_eval: not installed (pip install pytrec_eval-terrier) - no comparison")
    return lines


def markdown_section(figures) -> str:
    return "## A TREC run\n\n```\n" + "\n".join(format_trec_run(figures)) + "\n```\n"
