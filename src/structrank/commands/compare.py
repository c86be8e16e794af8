"""``structrank compare``: systems query by query against the first, the baseline: means, paired tests, Holm's
correction; text, markdown, JSON or a LaTeX table, and with ``--plot`` each system's per-query differences."""

# deferred imports: start-up time, `structrank --help` imports every command module; a command loads what it runs
from __future__ import annotations

from pathlib import Path

from structrank.atomic import check_output
from structrank.commands.options import (CONVENTION_HELP, add_queries_option, check_docids_for, check_one_stdin,
                                         kept_queries, kernels_alone, refuse_inapplicable, relevance_level, say,
                                         scores_in_row_order)

HELP = "compare systems query by query: means, paired tests, Holm's correction"
INPUTS = ("--qrels", "--data")

#: compare's randomisation samples: enough for a stable p-value, and a bound on the test's time
MIN_PERMUTATIONS, MAX_PERMUTATIONS = 10_000, 1_000_000


def add_parser(sub, details=None):
    from structrank.metrics import CONVENTION_NAMES

    p = sub.add_parser("compare", help=HELP,
                       description="Compare RUN files (with --qrels: TREC runs) or SCORES files (with --data: one "
                                   "score per row of the LETOR file) against the first one, the baseline: each "
                                   "measure's mean, the paired t-test and the seeded randomisation test over the "
                                   "queries both systems share, and Holm's correction across the systems.")
    p.add_argument("systems", nargs="+", metavar="RUN", help="runs (or scores files); the first is the baseline")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--qrels", help="TREC qrels file: the systems are TREC runs")
    source.add_argument("--data", help="LETOR/SVMlight file: the systems are scores files of its rows")
    p.add_argument("--metric", action="append", metavar="NAME",
                   help="measures (repeatable; default: map, ndcg@10, p@10); names as in structrank evaluate")
    p.add_argument("--names", help="comma-separated system names (default: the file names, with as many of their "
                                   "folders as it takes to tell them apart)")
    p.add_argument("--convention", default=None, choices=CONVENTION_NAMES,
                   help="with --data: " + CONVENTION_HELP.replace("the evaluation tool", "the tool"))
    p.add_argument("--complete", action="store_true", help="with --qrels: queries a run lacks score 0 (trec_eval -c)")
    p.add_argument("--relevant-from", type=int, default=None, metavar="L",
                   help="with --qrels: trec_eval -l (default 1)")
    add_queries_option(p)
    p.add_argument("--permutations", type=int, default=10_000, help="randomisation test samples (default 10000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the randomisation test (default 0)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    p.add_argument("--format", default="text", choices=("text", "markdown", "json", "latex"),
                   help="output (default text); latex: a booktabs table of the means, a dagger where a system is "
                        "significantly better than the baseline, a double dagger where worse (both Holm-adjusted tests)")
    p.add_argument("--plot", metavar="PNG", help="also draw each system's per-query differences from the baseline")
    return p


def run(args) -> int:
    from structrank.metrics import evaluate, evaluate_run
    from structrank.metrics.compare import compare_results

    if len(args.systems) < 2:
        raise ValueError("compare needs at least two systems")
    inputs = {"--qrels": args.qrels, "--data": args.data,
              **{f"system {i}": path for i, path in enumerate(args.systems, 1)}}
    check_output(args.plot, inputs, option="--plot")
    check_one_stdin(inputs)
    if not MIN_PERMUTATIONS <= args.permutations <= MAX_PERMUTATIONS:
        raise ValueError(f"--permutations must be from {MIN_PERMUTATIONS} (a stable p-value) to {MAX_PERMUTATIONS} (its "
                         f"time grows with it, and the p-value's resolution needs no more), got {args.permutations}")
    if not 0.0 < args.alpha < 1.0:  # NaN too
        raise ValueError(f"--alpha must be a significance level in (0, 1), got {args.alpha}")
    if args.seed < 0:
        raise ValueError(f"--seed must be >= 0, got {args.seed}")
    level = relevance_level(args.relevant_from)
    refuse_inapplicable([("--relevant-from", args.relevant_from is not None, args.qrels, "with --qrels"),
                         ("--complete", args.complete, args.qrels, "with --qrels"),
                         ("--convention", args.convention, args.data, "with --data"),
                         ("--queries", args.queries != "all", args.data, "with --data")])
    names = args.names.split(",") if args.names else distinct_names(args.systems)
    if len(names) != len(args.systems) or len(set(names)) != len(names):
        raise ValueError(f"--names must give {len(args.systems)} different names, got {args.names!r}")
    metrics = args.metric or ["map", "ndcg@10", "p@10"]
    kernels_alone()
    results = {}
    if args.qrels:
        from structrank.metrics import read_qrels

        qrels = read_qrels(args.qrels)
        for name, path in zip(names, args.systems):
            results[name] = evaluate_run(qrels, path, metrics, relevant_from=level,
                                         complete=args.complete)
    else:
        from structrank.labelled import data_convention, read_labelled

        ds = read_labelled(args.data)
        convention = data_convention(args.convention, ds)
        check_docids_for(convention, ds, args.data)
        for name, path in zip(names, args.systems):
            y, scores, qid, docids = kept_queries(args, ds, scores_in_row_order(ds, path, args.data), convention)
            results[name] = evaluate(y, scores, qid, metrics, convention, docids=docids)
    comparison = compare_results(results, n_resamples=args.permutations, seed=args.seed, alpha=args.alpha)
    print({"text": comparison.to_text, "markdown": comparison.to_markdown, "json": comparison.to_json,
           "latex": comparison.to_latex}[args.format](), end="" if args.format != "json" else "\n")
    if args.plot:
        comparison.plot(args.plot)
        say(args, f"wrote {args.plot}")
    return 0


def distinct_names(paths) -> list:
    """Names for files: the file name, with as many of its folders as it takes to tell them all apart
    (``a/run.txt``, ``b/run.txt``); the same file given twice is numbered (``run.txt``, ``run.txt#2``)."""
    parts = [Path(p).parts or (str(p),) for p in paths]
    for depth in range(1, max(map(len, parts)) + 1):
        names = ["/".join(p[-depth:]) for p in parts]
        if len(set(names)) == len(names):
            return names
    seen = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return out
