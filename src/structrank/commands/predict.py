"""``structrank predict``: score a LETOR/SVMlight file (or question-candidate text) with a trained model.

The scores are written one per line in the data file's order, or with ``--format trec [--run-tag]`` as a TREC
run (``metrics.trec.write_run``; docnos from ``#docid =``, else line numbers). A model on text reads pairs
(``learners.base.model_inputs``); a file of fewer features than a feature model's reads the rest as zeros
(``data.widen.widened_to``).
"""

# deferred imports: start-up time, `structrank --help` imports every command module; a command loads what it runs
from __future__ import annotations

from structrank.atomic import check_output
from structrank.commands.options import refuse_inapplicable, say

HELP = "score a LETOR/SVMlight file, or question-candidate text, with a trained model"
INPUTS = ("--model", "--data")


def add_parser(sub, details=None):
    p = sub.add_parser("predict", help=HELP)
    p.add_argument("--model", required=True, help="model file (a text reranker: folder) written by `structrank train`")
    p.add_argument("--data", required=True,
                   help="LETOR/SVMlight file (- reads standard input), or question-candidate text for a text reranker")
    p.add_argument("--out", required=True,
                   help="file to write (- writes standard output): one score per line in the data file's order, or "
                        "with --format trec a TREC run")
    p.add_argument("--format", default="scores", choices=("scores", "trec"),
                   help="scores (one float per line, default) or trec (qid Q0 docno rank score tag; docnos from the "
                        "#docid = comments, else the rows' line numbers)")
    p.add_argument("--run-tag", default=None, help="with --format trec: the tag column of the run (default structrank)")
    return p


def run(args) -> int:
    from structrank.data import read_letor, widened_to, write_scores
    from structrank.learners.base import model_inputs, warn_if_every_query_ties
    from structrank.model_io import load_model

    check_output(args.out, {"--model": args.model, "--data": args.data})
    refuse_inapplicable([("--run-tag", args.run_tag is not None, args.format == "trec", "with --format trec")])
    model = load_model(args.model)
    if model_inputs(model) == "text":  # a text reranker: question-candidate pairs
        from structrank.labelled import read_labelled

        ds = read_labelled(args.data, "text")
    else:
        ds = widened_to(read_letor(args.data), model.n_features_in_, args.data)
    scores = model.predict(ds if model_inputs(model) == "text" else ds.X)  # QA data: titles, where a model reads them
    warn_if_every_query_ties(model, scores, ds.qid)
    if args.format == "trec":
        from structrank.metrics import write_run

        line_numbers = getattr(ds, "line_numbers", None)
        docids = ds.docids if ds.docids is not None else line_numbers  # no #docid: the row's line in the file
        write_run(args.out, ds.qid, docids, scores, args.run_tag or "structrank", source=args.data, line_numbers=line_numbers)
    else:
        write_scores(args.out, scores if ds.row_order is None else ds.to_file_order(scores))
    say(args, f"wrote {ds.n_rows} {'scores' if args.format == 'scores' else 'ranked documents'} to {args.out}")
    return 0
