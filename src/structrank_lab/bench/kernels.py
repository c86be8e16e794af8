"""Speed of the tree kernels on SemEval-2016 shallow trees (Croce et al. 2016).

The trees are those of ``structrank reproduce croce2016``: shallow trees (words under HMM tags
under chunks, cut at 40 words) of the first questions and comments of the 2016 dev set.
Evaluations per second of the normalised SST and PTK (exact, and with child subsequences up to
3 as the reproduction uses), each ``kernel(trees, trees)`` in one process after numba
compilation (the best of ``repeat`` calls), and of PTK over 2 joblib workers
(``parallel_gram``), the way the reproduction computes its kernel columns.
"""

from __future__ import annotations

import time
from functools import partial

from structrank_lab.bench.timing import best_of, reproduction_main
from structrank_lab.experiments.croce2016 import MAX_WORDS, PTK_MAX_LENGTH
from structrank.kernels import PartialTreeKernel, SubsetTreeKernel, parallel_gram
from structrank.kernels.trees import tree_kernel_throughput
from structrank_lab.nlp.shallow import ShallowParser
from structrank.qa.features import tokenize
from structrank.qa.semeval import load_semeval, to_pairs


def semeval_trees(n=200, data_dir=None):
    """({"question": trees, "comment": trees}, tagger fit seconds) of the first ``n`` dev pairs."""
    pairs = to_pairs(load_semeval("dev", data_dir=data_dir))
    start = time.perf_counter()
    parser = ShallowParser(max_words=MAX_WORDS, data_dir=data_dir)
    fit_s = time.perf_counter() - start
    questions = list(dict.fromkeys(pairs.questions))[:n]  # distinct questions (pairs repeat them)
    return {"question": parser.parse([tokenize(q) for q in questions]),
            "comment": parser.parse([tokenize(c) for c in pairs.candidates[:n]])}, fit_s


def bench_tree_kernels(n=200, repeat=3, data_dir=None):
    """Figures of SST and PTK on SemEval trees, as a dict."""
    trees, fit_s = semeval_trees(n, data_dir)
    kernels = {"SST": SubsetTreeKernel(), "PTK": PartialTreeKernel(),
               f"PTK, subsequences <= {PTK_MAX_LENGTH}": PartialTreeKernel(max_length=PTK_MAX_LENGTH)}
    rows = []
    for kind, forest in trees.items():
        nodes = sum(len(t) for t in forest) / len(forest)
        for name, kernel in kernels.items():
            rate = max(tree_kernel_throughput(forest, kernel) for _ in range(repeat))
            rows.append(dict(trees=kind, kernel=name, nodes=nodes, per_second=rate, workers=1))
        kernel = PartialTreeKernel(max_length=PTK_MAX_LENGTH)
        parallel_gram(kernel, forest[:50], n_jobs=2, block_size=25)  # start the workers, compile there
        best = best_of(partial(parallel_gram, kernel, forest, n_jobs=2, block_size=max(1, len(forest) // 4)), repeat)
        rows.append(dict(trees=kind, kernel=f"PTK, subsequences <= {PTK_MAX_LENGTH}", nodes=nodes,
                         per_second=len(forest) ** 2 / best, workers=2))
    return dict(n=n, fit_s=fit_s, rows=rows)


def format_kernels(figures) -> list:
    lines = [f"tree kernels on SemEval-2016 dev shallow trees ({figures['n']} questions, {figures['n']} comments; "
             f"tagger fit {figures['fit_s']:.1f} s), normalised, the Gram matrix K(trees, trees): n^2 entries "
             "per call, the symmetric half computed; best of the calls:"]
    for r in figures["rows"]:
        lines.append(f"  {r['trees']:<8} ({r['nodes']:5.1f} nodes)  {r['kernel']:<26} {r['workers']} worker"
                     f"{'s' if r['workers'] > 1 else ' '}  {r['per_second']:>10,.0f} evaluations/s")
    return lines


def markdown_section(figures) -> str:
    return ("## Tree kernels (Croce et al. 2016)\n\n```\n" + "\n".join(format_kernels(figures)) + "\n```\n\n"
            "The times of the whole landmark sweep (kernel columns, Nyström fits, the full SVM) are in "
            "docs/RESULTS.md, section croce2016, from `structrank reproduce croce2016 --jobs 2`; "
            "`python benchmarks/bench_kernels.py --reproduction` runs it afresh and prints its wall time.\n")


def main(argv=None, doc=None):
    """``python benchmarks/bench_kernels.py [--trees N] [--reproduction [--jobs 2]]``: the kernel figures,
    and with --reproduction the wall time of the whole croce2016 reproduction."""
    def summary(rows, minutes, jobs):
        return (f"\nstructrank reproduce croce2016 --jobs {jobs}: {minutes:.1f} minutes of wall time "
                "(kernel columns, landmark sweep, full SVMs and MQ2008; target for the sweep: under 30)")

    reproduction_main(doc or main.__doc__, "--trees", 200, lambda trees: format_kernels(bench_tree_kernels(trees)),
                      "croce2016", summary, argv)
