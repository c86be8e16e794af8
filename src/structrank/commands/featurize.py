"""``structrank featurize``: question-candidate pairs into a LETOR/SVMlight file of similarity features."""

# deferred imports: start-up time, `structrank --help` imports every command module; a command loads what it runs
from __future__ import annotations

from structrank.atomic import check_output
from structrank.errors import StructRankError

HELP = "turn question-candidate pairs into a LETOR/SVMlight file of similarity features"
INPUTS = ("--input", "--fit", "--state")


def add_parser(sub, details=None):
    p = sub.add_parser(
        "featurize", help=HELP,
        description="Featurize question-candidate text (a QA TSV: rows of question, candidate, label, with an "
                    "optional leading question id; a WikiQA TSV with its header; TREC QA's jacana XML or TRAIN-ALL "
                    "folder; SemEval-2016 XML: what train and predict read) into a LETOR/SVMlight file: one row per "
                    "candidate, integer qids in question order, '#docid = ... question = ...' comments. The "
                    "features are listed in docs/QA_FEATURES.md.",
    )
    p.add_argument("kind", choices=("qa",), metavar="KIND", help="what to featurize: qa (question answering)")
    p.add_argument("--input", required=True, help="question-candidate file to featurize (plain or .gz)")
    p.add_argument("--out", required=True, help="LETOR/SVMlight file to write (.gz to compress)")
    state = p.add_mutually_exclusive_group()
    state.add_argument("--fit", metavar="FILE",
                       help="training file to fit the featurizer (idf) on; its state is saved as OUT.featurizer.json")
    state.add_argument("--state", metavar="FILE", help="a saved OUT.featurizer.json to reuse (for test files)")
    p.add_argument("--query-file", action="store_true",
                   help="also write OUT.query: each question's row count, one per line (LightGBM's and RankLib's groups)")
    p.add_argument("--embeddings", action="store_true",
                   help='append sentence-embedding columns (needs pip install "structrank[embeddings]")')
    return p


def run(args) -> int:
    from structrank.qa.featurize import featurize_file, state_path_for

    inputs = {"--input": args.input, "--fit": args.fit, "--state": args.state}
    check_output(args.out, inputs)
    if args.query_file:
        check_output(args.out + ".query", inputs, option="--out's .query file")
    if args.state is None:  # the fitted state is written beside --out
        check_output(state_path_for(args.out), inputs, option="--out's featurizer state")
    try:
        featurize_file(args.input, args.out, fit=args.fit, state=args.state, embeddings=args.embeddings,
                       query_file=args.query_file)
    except RecursionError:  # json.loads recurses per nesting level; only the state file is JSON
        raise StructRankError(f"--state {args.state}: JSON nested too deeply to be a featurizer state") from None
    return 0
