"""``structrank export``: a trained model for another tool (``structrank.export.export_model``)."""

# deferred imports: start-up time, `structrank --help` imports every command module; a command loads what it runs
from __future__ import annotations

from structrank.atomic import check_output, write_bytes_atomic, write_text_atomic
from structrank.commands.options import refuse_inapplicable, say

HELP = "write a model for another tool (JSON, OpenSearch/Elasticsearch LTR, SVM-rank, LightGBM, ONNX)"
INPUTS = ("--feature-names",)


def add_parser(sub, details=None):
    p = sub.add_parser("export", help=HELP)
    p.add_argument("model", metavar="MODEL_FILE", help="model file written by `structrank train` (a linear ranker, "
                                                       "or LightGBM trees: lambdamart, mcrank, gbrt-<loss>)")
    p.add_argument("--format", required=True, choices=("json", "opensearch-ltr", "svmrank", "lightgbm", "onnx"),
                   help="json (weights by feature), opensearch-ltr (the LTR plugin's _createmodel body: model/linear, "
                        "or model/xgboost+json for trees), svmrank (a model file svm_rank_classify reads), lightgbm "
                        "(the booster's model text, trees only) or onnx (a graph from X to score; the onnx extra)")
    p.add_argument("--out", default="-", help="file to write (default: standard output)")
    p.add_argument("--feature-names", metavar="FILE",
                   help="with --format json or opensearch-ltr: one feature name per line, in feature order (default: "
                        "the LETOR indices 1, 2, ...)")
    p.add_argument("--name", default=None,
                   help="with --format opensearch-ltr: the model's name in the LTR plugin (default structrank)")
    return p


def run(args) -> int:
    from structrank.export import export_model, read_feature_names
    from structrank.model_io import load_model

    check_output(args.out, {"MODEL_FILE": args.model, "--feature-names": args.feature_names})
    refuse_inapplicable([("--name", args.name is not None, args.format == "opensearch-ltr", "with --format opensearch-ltr"),
                         ("--feature-names", args.feature_names is not None, args.format in ("json", "opensearch-ltr"),
                          "with --format json or opensearch-ltr (the other formats take features by position)")])
    names = read_feature_names(args.feature_names) if args.feature_names else None
    model = load_model(args.model)
    exported = export_model(model, args.format, names, args.name or "structrank")
    if isinstance(exported, bytes):
        write_bytes_atomic(args.out, exported)
    else:
        write_text_atomic(args.out, exported)
    if args.out != "-":
        say(args, f"wrote {args.out}")
    if args.format == "lightgbm" and getattr(model, "classes_", None) is not None:
        say(args, f"the booster predicts P(grade) for the grades {', '.join(map(str, model.classes_))}; the model's "
                  "score is their expectation")
    return 0
