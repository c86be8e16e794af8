"""``structrank evaluate``: metrics of a scores file against a LETOR/SVMlight file, or of a TREC run against qrels.

Either ``--data FILE --scores FILE`` (one score per row, in the data file's order) or ``--qrels FILE --run FILE``
(evaluated as trec_eval does); ``--json`` prints one JSON object, ``--per-query`` every query's values.
"""

# deferred imports: start-up time, `structrank --help` imports every command module; a command loads what it runs
from __future__ import annotations

import json

from structrank.commands.options import (CONVENTION_HELP, add_queries_option, check_docids_for, check_one_stdin,
                                         kept_queries, kernels_alone, refuse_inapplicable, relevance_level,
                                         scores_in_row_order)

HELP = ("metrics of a scores file against a LETOR/SVMlight file or question-candidate text, or of a TREC run "
        "against qrels")
INPUTS = ("--data", "--scores", "--qrels", "--run")


def add_parser(sub, details=None):
    from structrank.metrics import CONVENTION_NAMES, DEFAULT_METRICS

    p = sub.add_parser("evaluate", help=HELP,
                       description="Either --data FILE --scores FILE (a LETOR/SVMlight file and one score per row) "
                                   "or --qrels FILE --run FILE (TREC qrels and run, evaluated as trec_eval does: "
                                   "unjudged documents are non-relevant, relevant documents the run misses count in "
                                   "every denominator, ties broken by docno descending).")
    p.add_argument("--data", help="LETOR/SVMlight file (plain or .gz) with the labels")
    p.add_argument("--scores", help="one score per line, in the order of the data file's rows")
    p.add_argument("--qrels", help="TREC qrels file (qid iter docno rel; plain or .gz)")
    p.add_argument("--run", help="TREC run file (qid Q0 docno rank score tag; plain or .gz)")
    p.add_argument("--metric", action="append", metavar="NAME",
                   help="map, map@k, mrr, mrr@k, ndcg, ndcg@k, p@k, recall@k, rprec, success@k, bpref, auc, or the "
                        "ir_measures/trec_eval names (AP, nDCG@10, P_10, recall_100, ...); also err@k, "
                        "ndcg(dcg='exp-log2')@k, rbp(p=0.8), rbp(p=0.8,rel=1), rbp_residual(p=0.8) and, with --qrels, "
                        "infap and judged@k, each as its reference tool computes it (README, 'ERR, nDCG with "
                        "exponential gain, RBP, infAP, Judged') (repeatable; default: "
                        f"{' '.join(DEFAULT_METRICS)})")
    p.add_argument("--convention", default=None, choices=CONVENTION_NAMES,
                   help=CONVENTION_HELP + "; a TREC run (--qrels/--run): trec")
    p.add_argument("--complete", action="store_true",
                   help="with --qrels: a query of the qrels missing from the run scores 0 (trec_eval -c)")
    p.add_argument("--relevant-from", type=int, default=None, metavar="L",
                   help="with --qrels: labels >= L are relevant for the binary measures (trec_eval -l; default 1)")
    add_queries_option(p)
    p.add_argument("--per-query", action="store_true", help="also give every query's values")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    return p


def _evaluate_inputs(args):
    """(EvaluationResult, what was evaluated) of ``structrank evaluate``'s two forms."""
    from structrank.metrics import DEFAULT_METRICS, evaluate, evaluate_run

    metrics = args.metric or list(DEFAULT_METRICS)
    if args.qrels or args.run:
        if not (args.qrels and args.run) or args.data or args.scores:
            raise ValueError("give --qrels and --run together (or --data and --scores)")
        if args.convention not in (None, "trec"):
            raise ValueError(f"a TREC run is evaluated under trec_eval's rules (--convention "
                             f"trec), not {args.convention}")
        refuse_inapplicable([("--queries", args.queries != "all", False, "with --data and --scores")])
        check_one_stdin({"--qrels": args.qrels, "--run": args.run})
        level = relevance_level(args.relevant_from)
        kernels_alone()
        result = evaluate_run(args.qrels, args.run, metrics, relevant_from=level, complete=args.complete)
        return result, f"{args.run} against {args.qrels}"
    if not (args.data and args.scores):
        raise ValueError("give --data and --scores (or --qrels and --run)")
    check_one_stdin({"--data": args.data, "--scores": args.scores})
    refuse_inapplicable([("--relevant-from", args.relevant_from is not None, False, "with --qrels and --run"),
                         ("--complete", args.complete, False, "with --qrels and --run")])
    kernels_alone()
    from structrank.labelled import data_convention, read_labelled

    ds = read_labelled(args.data)
    convention = data_convention(args.convention, ds)
    check_docids_for(convention, ds, args.data)
    y, scores, qid, docids = kept_queries(args, ds, scores_in_row_order(ds, args.scores, args.data), convention)
    result = evaluate(y, scores, qid, metrics, convention, docids=docids)
    return result, f"{args.data}: {result.n_queries} queries, {len(y)} documents"


def run(args) -> int:
    from structrank.metrics import CONVENTIONS

    result, what = _evaluate_inputs(args)
    if args.json:
        out = result.to_dict(per_query=args.per_query)
        print(json.dumps(out, allow_nan=False))  # JSON has no NaN: an error rather than a file no parser reads
        return 0
    print(what)
    print(f"convention {CONVENTIONS[result.convention].describe(auto=result.auto)}")
    width = max(len(m) for m in result.metrics)
    for name, value in result.metrics.items():
        print(f"  {name:<{width}}  {value:.6f}")
    if args.per_query:
        names = list(result.per_query)
        print("\nqid\t" + "\t".join(names))
        for i, q in enumerate(result.qids):
            print(f"{q}\t" + "\t".join(f"{result.per_query[n][i]:.6f}" for n in names))
    return 0
