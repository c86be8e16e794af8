"""The ``structrank`` command: train, predict, evaluate, featurize, reproduce, demo, bench.

Other tools and scripts depend on these names and formats (see DESIGN.md); keep them stable.
Every input problem ends in one line naming the file, the line and the problem, and exit code 2
(set STRUCTRANK_DEBUG=1 for the whole traceback).

- Start-up: only the command named on the line is built in full (``build_parser(only=...)``), and
  ``train``'s help only for ``--help`` (``details``: every model on one line, or with a model named,
  that model's parameters, defaults and grid; read from the sources, under 8,000 characters);
  the others are one-line stubs from ``HELP``, so ``--help`` and ``--version``
  import no model or experiment (docs/BENCHMARKS.md, "Start-up and reading", times them beside
  ``python -c pass``).
- Errors: every exception ends in one line on stderr (``error_line``; an OSError as ``FILE:
  reason``). Exit code 2 for input and system errors (``StructRankError``, ``ValueError``,
  ``OSError`` (dask's connection errors included, named as ``--scheduler``), SQLite errors,
  ``RecursionError``, ``MemoryError``), 1 and "internal error" for anything else; Ctrl-C exits 130
  with one line. Warnings print as one line (``_one_line_warning``). A reader that closes standard
  output early (``structrank evaluate --json | head``) ends the command quietly, exit 141 (128 +
  SIGPIPE, as ``cat`` and ``grep`` end; ``BROKEN_PIPE_EXIT``).
- Options: an option that does not apply to the input given (``evaluate --data ... --relevant-from``,
  ``predict --run-tag`` without ``--format trec``, ``train --jobs`` without ``--vali``, ...) is a one-line
  error, never ignored (``refuse_inapplicable``); their defaults are None so that naming one is seen.
- Inputs: each command's input files (``INPUT_OPTIONS``) are checked to exist before the command is
  built, so a missing ``--train`` is reported in a fraction of a second, not after the models'
  imports, in the words its reader would use (``check_input_paths``).
- Outputs: every ``--out`` (and ``compare --plot``) goes through ``atomic.check_output`` first;
  ``reproduce --out`` must be a folder outside the data folder, and ``reproduce --fresh`` discards a
  store made by another experiment or from other data (which is otherwise refused). ``-`` reads
  standard input (``--data``, ``--scores``, ``--run``, ``--qrels``: ``structrank.files.read_bytes``) and
  writes standard output (``--out``).
- ``--quiet`` (before or after the command) silences progress messages and tqdm bars
  (``TQDM_DISABLE``); ``train`` draws bars over the grid's fits and each fit's epochs on a
  terminal, or with ``--progress`` (``_training_progress``); ``predict --format trec [--run-tag]``
  writes a TREC run (``metrics.trec.write_run``; docnos from ``#docid =``, else line numbers).
"""

# deferred imports: start-up time, a command loads only what it runs (numpy's import alone: docs/BENCHMARKS.md)
from __future__ import annotations

import argparse
import contextlib
import functools
import gc
import json
import math
import os
import sys
import tempfile
import textwrap
import warnings
from pathlib import Path

from structrank import __version__
from structrank.atomic import check_output, write_bytes_atomic, write_text_atomic
from structrank.errors import DataFormatError, StructRankError
from structrank.paths import data_dir as default_data_dir

#: each command's one-line help: the top-level parser lists these without building the commands
HELP = {
    "train": "train a model on a LETOR/SVMlight file",
    "predict": "score a LETOR/SVMlight file with a trained model",
    "evaluate": "metrics of a scores file against a LETOR/SVMlight file, or of a TREC run against qrels",
    "compare": "compare systems query by query: means, paired tests, Holm's correction",
    "featurize": "turn question-candidate pairs into a LETOR/SVMlight file of similarity features",
    "reproduce": "run a paper's experiments and write its tables and figures",
    "results": "write a markdown page (docs/RESULTS.md) from result stores",
    "demo": "train the baselines on MQ2008 Fold1 (or synthetic data) and compare them",
    "bench": "speed benchmarks (prints its figures)",
    "losses": "list the registered ranking losses (the markdown of docs/LOSSES.md)",
    "export": "write a model for another tool (JSON, OpenSearch/Elasticsearch LTR, SVM-rank, LightGBM, ONNX)",
    "fuse": "fuse TREC runs into one (rrf, combsum, combmnz, ...: ranx's methods), weights chosen on qrels if asked",
}


#: ``--convention``'s help: what ``auto``, the default, resolves to
CONVENTION_HELP = ("the evaluation tool whose rules to follow; default auto: the one the labels allow (letor4 for "
                   "labels 0-2, mslr up to 4, trec above), named in the output")


def _add_evaluate(sub):
    from structrank.metrics import CONVENTION_NAMES, DEFAULT_METRICS

    p = sub.add_parser("evaluate", help=HELP["evaluate"],
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
    _add_queries_option(p)
    p.add_argument("--per-query", action="store_true", help="also give every query's values")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    p.set_defaults(func=cmd_evaluate)


def _add_queries_option(p, default="all", what="with --data: the queries evaluated"):
    p.add_argument("--queries", default=default, choices=("all", "with-both"),
                   help=f"{what}: all (default), or with-both, those with a relevant and a non-relevant document "
                        "(answer selection's clean questions, as WikiQA's and TREC QA's results are reported)")


def kept_queries(args, ds, scores):
    """(y, scores, qid, docids) of the queries ``--queries`` keeps (relevance read through ``--convention``)."""
    import numpy as np

    y, qid, docids = np.asarray(ds.y), np.asarray(ds.qid), ds.docids
    if args.queries == "all":
        return y, scores, qid, docids
    from structrank.data.dataset import rows_of_queries

    rows = rows_of_queries(ds.offsets, _queries_with_both(ds, args.data, getattr(args, "convention", None)))
    return y[rows], scores[rows], qid[rows], None if docids is None else [docids[i] for i in rows]


def _queries_with_both(ds, path, convention=None):
    """``--queries with-both``: the positions of ``ds``'s queries with a relevant and a non-relevant document, what is
    relevant read through ``convention`` (None: auto, from the labels; mslr counts labels >= 2); none is an error
    naming ``path``."""
    from structrank.data.filters import queries_with_both
    from structrank.metrics import resolve_convention

    chosen, _ = resolve_convention(convention or "auto", ds.y)
    queries = queries_with_both(chosen.relevant(ds.y), ds.offsets)
    if queries.size == 0:
        raise ValueError(f"--queries with-both: no query of {path} has both a relevant and a non-relevant document")
    return queries


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
        _kernels_alone()
        result = evaluate_run(args.qrels, args.run, metrics, relevant_from=level, complete=args.complete)
        return result, f"{args.run} against {args.qrels}"
    if not (args.data and args.scores):
        raise ValueError("give --data and --scores (or --qrels and --run)")
    check_one_stdin({"--data": args.data, "--scores": args.scores})
    refuse_inapplicable([("--relevant-from", args.relevant_from is not None, False, "with --qrels and --run"),
                         ("--complete", args.complete, False, "with --qrels and --run")])
    _kernels_alone()
    ds = read_labelled(args.data)
    check_docids_for(args.convention, ds, args.data)
    y, scores, qid, docids = kept_queries(args, ds, _scores_in_row_order(ds, args.scores, args.data))
    result = evaluate(y, scores, qid, metrics, args.convention or "auto", docids=docids)
    return result, f"{args.data}: {result.n_queries} queries, {len(y)} documents"


def read_labelled(path, inputs=None):
    """The labelled rows of a data file: a LETOR/SVMlight file (``RankingDataset``), or question-candidate text
    (``QAData``: a QA TSV, WikiQA, TREC QA's jacana or SemEval XML; ``structrank.qa.pairs_files.read_pairs_file``).
    ``inputs`` ("features" or "text") says which a model needs; None tells them apart by the first line."""
    from structrank.qa.pairs_files import is_pairs_file, read_pairs_file

    if inputs == "text" or (inputs is None and path != "-" and is_pairs_file(path)):
        return read_pairs_file(path)
    from structrank.data import read_letor

    return read_letor(path)


def _kernels_alone() -> None:
    """This command's process runs structrank's kernels and no other numba code: numba starts without
    its probe for SciPy's BLAS (``numba_cache.without_blas_probe``), once the arguments are checked."""
    from structrank.numba_cache import without_blas_probe

    without_blas_probe()


def check_docids_for(convention, ds, path) -> None:
    """``--convention trec`` breaks ties by document id: a data file without them is named in the error."""
    if convention == "trec" and ds.docids is None:
        raise DataFormatError(path, None, "--convention trec breaks ties by document id (trec_eval's rule), and "
                              "this file's rows carry no '#docid = ...' comment", "docid")


def relevance_level(level) -> int:
    """``--relevant-from``'s level (1 when not given), refused below 1."""
    level = 1 if level is None else level
    if level < 1:
        raise ValueError(f"--relevant-from must be >= 1 (trec_eval -l), got {level}: a lower level would make every "
                         "unjudged document relevant")
    return level


def refuse_inapplicable(options) -> None:
    """ValueError for the first option the user gave where it does not apply (an error, never
    ignored): ``options`` holds (option, given, applies, where it applies) for each."""
    for option, given, applies, where in options:
        if given and not applies:
            raise ValueError(f"{option} applies only {where}: it would be ignored here")


def check_one_stdin(inputs: dict) -> None:
    """Standard input can be read once: refuse ``-`` given to two of ``inputs`` ({option: path})."""
    reading = [option for option, path in inputs.items() if path == "-"]
    if len(reading) > 1:
        raise ValueError(f"{' and '.join(reading)} both read standard input ('-'), which can be read once: "
                         "give all but one of them a file")


def _scores_in_row_order(ds, path, data_path):
    """A scores file (one per line, in the data file's order) in the order of ``ds``'s rows."""
    from structrank.data import read_scores

    scores = read_scores(path, n_rows=ds.n_rows, data_path=data_path)
    # the dataset's rows were regrouped by qid when its queries were not contiguous; scores follow the file
    return scores if ds.row_order is None else scores[ds.row_order]


def cmd_evaluate(args):
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


def _add_compare(sub):
    from structrank.metrics import CONVENTION_NAMES

    p = sub.add_parser("compare", help=HELP["compare"],
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
    _add_queries_option(p)
    p.add_argument("--permutations", type=int, default=10_000, help="randomisation test samples (default 10000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the randomisation test (default 0)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    p.add_argument("--format", default="text", choices=("text", "markdown", "json", "latex"),
                   help="output (default text); latex: a booktabs table of the means, a dagger where a system is "
                        "significantly better than the baseline, a double dagger where worse (both Holm-adjusted tests)")
    p.add_argument("--plot", metavar="PNG", help="also draw each system's per-query differences from the baseline")
    p.set_defaults(func=cmd_compare)


def cmd_compare(args):
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
    _kernels_alone()
    results = {}
    if args.qrels:
        from structrank.metrics import read_qrels

        qrels = read_qrels(args.qrels)
        for name, path in zip(names, args.systems):
            results[name] = evaluate_run(qrels, path, metrics, relevant_from=level,
                                         complete=args.complete)
    else:
        ds = read_labelled(args.data)
        check_docids_for(args.convention, ds, args.data)
        for name, path in zip(names, args.systems):
            y, scores, qid, docids = kept_queries(args, ds, _scores_in_row_order(ds, path, args.data))
            results[name] = evaluate(y, scores, qid, metrics, args.convention or "auto", docids=docids)
    comparison = compare_results(results, n_resamples=args.permutations, seed=args.seed, alpha=args.alpha)
    print({"text": comparison.to_text, "markdown": comparison.to_markdown, "json": comparison.to_json,
           "latex": comparison.to_latex}[args.format](), end="" if args.format != "json" else "\n")
    if args.plot:
        comparison.plot(args.plot)
        _say(args, f"wrote {args.plot}")
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


def _add_train(sub, details=True):
    """``details``: the help asked for, built only then (read from the classes' sources, no learner is
    imported): True, or a command line naming no model, lists every model on one line; a command line
    naming a model (``train svm-mrr --help``) gives that model's parameters, defaults and grid."""
    from structrank.learners.registry import MODELS, model_details, models_overview
    from structrank.metrics.conventions import CONVENTION_NAMES

    model = None if isinstance(details, bool) else next((a for a in details if a in MODELS), None)
    if model is not None:
        description = model_details(model)
    elif details:
        description = (textwrap.fill("Train MODEL. With --vali, parameters not fixed by --set are chosen on that "
                                     "file from the model's grid; without it, the defaults are used. `structrank "
                                     "train MODEL --help` gives a model's parameters, defaults and grid.", 79)
                       + "\n\nmodels, by the class that trains them:\n" + models_overview())
    else:
        description = None
    p = sub.add_parser("train", help=HELP["train"], description=description,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", metavar="MODEL", choices=sorted(MODELS),
                   help="the model to train (`structrank train --help` lists them)")
    p.add_argument("--train", required=True, help="training file")
    p.add_argument("--vali", help="validation file for choosing parameters from the grid")
    p.add_argument("--set", action="append", metavar="NAME=VALUE", help="fix a parameter (repeatable)")
    p.add_argument("--convention", default=None, choices=CONVENTION_NAMES,
                   help="the vali metric's convention (default auto: from the labels); --set convention=X "
                        "is the same")
    _add_queries_option(p, default=None, what="with --vali: the vali queries chosen on (as `evaluate --queries` "
                                              "scores them)")
    p.add_argument("--out", required=True, help="model file to write (npz, no pickle; a text model: a folder)")
    p.add_argument("--progress", action="store_true",
                   help="progress bars (grid points, epochs; with ETA) on standard error even when it is not a "
                        "terminal (on a terminal they show anyway; --quiet hides them)")
    _add_parallel_options(p, "grid points fitted in parallel (joblib)")
    p.set_defaults(func=cmd_train)


def _add_parallel_options(p, jobs_help):
    p.add_argument("--jobs", type=int, default=None, help=jobs_help + " (default 1)")
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="run on this dask.distributed scheduler (tcp://host:8786) instead of local workers; "
                        "data files must be at the same paths on every worker (docs/DISTRIBUTED.md)")


@contextlib.contextmanager
def _cluster(address):
    """``parallel.workers.cluster(address)``, with a scheduler that cannot be reached named as --scheduler."""
    from structrank.parallel.workers import cluster

    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(cluster(address))
        except (OSError, ValueError) as exc:  # distributed: OSError/TimeoutError, ValueError for a bad address
            raise StructRankError(f"--scheduler {address}: cannot connect to the dask scheduler: {exc}") from exc
        yield


def cmd_train(args):
    from structrank.data import read_letor
    from structrank.learners.registry import get_model, ignored_parameters, select_on_vali
    from structrank.model_io import save_model

    spec = get_model(args.model)
    check_output(args.out, {"--train": args.train, "--vali": args.vali}, folder=spec.inputs == "text")
    refuse_inapplicable([("--jobs", args.jobs is not None, args.vali, "with --vali (it fits the grid's points in "
                                                                       "parallel)"),
                         ("--queries", args.queries is not None, args.vali, "with --vali (it keeps vali queries)")])
    fixed = spec.with_loss_params(parse_assignments(args.set))  # --set k=5 refused: a loss's options go in loss_params
    spec = spec.chosen_with(fixed)
    convention = _train_convention(args, fixed, spec)
    spec.make(**fixed)  # unknown names and bad values fail here, before any work
    ignored = ignored_parameters(spec, fixed)
    if ignored is not None:
        raise ValueError(ignored)
    if spec.inputs == "text" and (args.quiet or args.progress):  # a fine-tuning run's bar over its steps
        fixed.setdefault("progress", bool(args.progress and not args.quiet))
    train = read_labelled(args.train, spec.inputs)
    n_fits = len(list(spec.candidates(fixed))) if args.vali else 1
    with _cluster(args.scheduler), _training_progress(args, n_fits) as say:
        if args.vali:
            from structrank.metrics import resolve_convention

            vali = (read_labelled(args.vali, spec.inputs) if spec.inputs == "text"
                    else read_letor(args.vali, n_features=train.n_features))
            if args.queries == "with-both":
                vali = vali.take_queries(_queries_with_both(vali, args.vali, convention))
            chosen, auto = resolve_convention(convention, vali.y)
            label = f"{chosen.name} (auto)" if auto else chosen.name
            _say(args, f"choosing on {args.vali} by {spec.metric_label} under {label}")
            model, params, value = select_on_vali(
                spec, train, vali, fixed, convention=convention, n_jobs=args.jobs or 1,
                report=lambda p, v: say(f"  {p}  vali {spec.metric_label} = {v:.4f}", fitted=True),
            )
            # as many digits as `structrank evaluate` prints, so that the two can be compared
            say(f"chose {params}: vali {spec.metric_label} {value:.6f} under {label}")
        else:
            model = spec.make(**fixed).fit(train)
    if getattr(model, "formulation_", None):  # what target="auto" chose, and why
        _say(args, f"formulation: {model.formulation_}")
    if hasattr(model, "health_"):  # structural and perceptron fits: how far the optimiser moved from w = 0
        _say(args, f"optimiser health: {model.health_}")
    if getattr(model, "stop_reason_", None):  # an iterative learner whose epochs stopped changing the model
        _say(args, model.stop_reason_)
    save_model(model, args.out)
    _say(args, f"wrote {args.out}")
    return 0


@contextlib.contextmanager
def _training_progress(args, n_fits):
    """``train``'s progress: a bar over the grid's fits and one over each fit's epochs (tqdm, with
    ETA, on standard error), drawn when standard error is a terminal or with --progress, never with
    --quiet. Yields ``say(message, fitted=False)``: a progress message written above the bars
    (``fitted``: one more grid point is done). The epochs come from ``learners.epochs.epoch_progress``,
    so that no learner knows of bars."""
    from tqdm.auto import tqdm  # deferred: start-up time, only a training run draws bars

    from structrank.learners.epochs import epoch_progress

    disable = True if args.quiet else (False if args.progress else None)  # None: tqdm draws on a terminal only
    grid = tqdm(total=n_fits, desc="grid", unit="fit", disable=True if n_fits < 2 else disable, file=sys.stderr)
    bars = [grid]

    def on_epoch(epoch, total):
        if len(bars) == 1:  # made at the first epoch: a learner without epochs gets no bar
            # below a grid's bar, each fit's epochs clear when it ends
            bars.append(tqdm(total=total, desc="epochs", unit="epoch", disable=disable, leave=grid.disable,
                             file=sys.stderr, position=0 if grid.disable else 1))
        elif epoch == 1:  # the next fit's first epoch
            bars[1].reset(total=total)
        bars[1].update(epoch - bars[1].n)

    def say(message, fitted=False):
        if fitted:
            grid.update(1)
        if not args.quiet:
            tqdm.write(message, file=sys.stderr)

    try:
        with epoch_progress(on_epoch):
            yield say
    finally:
        for bar in reversed(bars):
            bar.close()


def _train_convention(args, fixed, spec) -> str:
    """The convention ``train`` selects on vali under: ``--convention``, or ``--set convention=X`` which
    means the same (both given, they must agree), else ``auto``. A model with a ``convention``
    parameter (``score()``'s) gets the one named; without --vali and without that parameter,
    naming one would change nothing, which is an error rather than a silent no-op."""
    from structrank.metrics.conventions import CONVENTION_NAMES

    given = fixed.pop("convention", None)
    if given is not None and args.convention is not None and given != args.convention:
        raise ValueError(f"--set convention={given} and --convention {args.convention} disagree: give the "
                         "convention once, as --convention")
    named = args.convention or given
    if named is None:
        return "trec" if spec.inputs == "text" else "auto"  # text rerankers are judged by trec_eval's rules
    if named not in CONVENTION_NAMES:
        raise ValueError(f"--set convention={named!r}: not a convention; --convention takes one of "
                         f"{', '.join(CONVENTION_NAMES)}")
    has_parameter = "convention" in spec.cls().get_params(deep=False)
    if has_parameter:
        fixed["convention"] = named
    elif not args.vali:
        raise ValueError(f"--convention {named}: {spec.name} has no convention parameter, and without --vali "
                         "there is no selection for it to apply to")
    return named


def parse_assignments(items) -> dict:
    """``["C=0.1", "loss=hinge"]`` -> ``{"C": 0.1, "loss": "hinge"}`` (values read as JSON when they can be)."""
    params = {}
    for item in items or ():
        name, eq, text = item.partition("=")
        name = name.strip()
        if not eq or not name:
            raise ValueError(f"--set expects NAME=VALUE, got {item!r}")
        if name in params:
            raise ValueError(f"--set {name} is given twice ({params[name]!r} and {text!r}); give it once")
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            if text.lstrip()[:1] in ("{", "["):  # meant as JSON: a plain string would be refused later, less clearly
                raise ValueError(f"--set {name}: not valid JSON ({exc.msg} at character {exc.pos})") from None
            value = text
        except RecursionError:  # json.loads recurses per nesting level
            raise ValueError(f"--set {name}: the value is nested too deeply") from None
        if isinstance(value, (dict, list)) and not _finite_numbers(value):  # a top-level number: its class's check
            raise ValueError(f"--set {name}: a number in {text[:60]!r} is not finite (it overflows a float)")
        params[name] = value
    return params


def _finite_numbers(value) -> bool:
    """Whether every number inside a parsed JSON value is finite (JSON's 1e999 reads as inf)."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite_numbers(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite_numbers(v) for v in value)
    return True


def _add_predict(sub):
    p = sub.add_parser("predict", help=HELP["predict"])
    p.add_argument("--model", required=True, help="model file written by `structrank train`")
    p.add_argument("--data", required=True, help="LETOR/SVMlight file (- reads standard input)")
    p.add_argument("--out", required=True,
                   help="file to write (- writes standard output): one score per line in the data file's order, or "
                        "with --format trec a TREC run")
    p.add_argument("--format", default="scores", choices=("scores", "trec"),
                   help="scores (one float per line, default) or trec (qid Q0 docno rank score tag; docnos from the "
                        "#docid = comments, else the rows' line numbers)")
    p.add_argument("--run-tag", default=None, help="with --format trec: the tag column of the run (default structrank)")
    p.set_defaults(func=cmd_predict)


def cmd_predict(args):
    from structrank.data import read_letor, write_scores
    from structrank.learners.base import warn_if_every_query_ties
    from structrank.model_io import load_model, model_inputs

    check_output(args.out, {"--model": args.model, "--data": args.data})
    refuse_inapplicable([("--run-tag", args.run_tag is not None, args.format == "trec", "with --format trec")])
    model = load_model(args.model)
    if model_inputs(model) == "text":  # a text reranker: question-candidate pairs
        ds = read_labelled(args.data, "text")
    else:
        ds = widened_to_model(read_letor(args.data), model.n_features_in_, args.data)
    scores = model.predict(ds.X)
    warn_if_every_query_ties(model, scores, ds.qid)
    if args.format == "trec":
        from structrank.metrics import write_run

        line_numbers = getattr(ds, "line_numbers", None)
        docids = ds.docids if ds.docids is not None else line_numbers  # no #docid: the row's line in the file
        write_run(args.out, ds.qid, docids, scores, args.run_tag or "structrank", source=args.data, line_numbers=line_numbers)
    else:
        write_scores(args.out, scores if ds.row_order is None else ds.to_file_order(scores))
    _say(args, f"wrote {ds.n_rows} {'scores' if args.format == 'scores' else 'ranked documents'} to {args.out}")
    return 0


def widened_to_model(ds, n_model: int, path):
    """``ds`` read from ``path`` with the model's ``n_model`` feature columns: the rule of ``structrank predict``.

    A file whose highest feature index is below the model's gets the missing trailing columns as
    zeros, as SVMlight's sparse rows read every unlisted feature (a warning names both counts: a
    file of another feature set reads the same way, and only the counts tell them apart). A file
    that lists features past the model's is refused naming both counts: no weight exists for them.
    Python's ``predict`` is stricter: an array of another width is refused (scikit-learn's check).
    """
    import numpy as np
    import scipy.sparse as sp

    n_data = ds.n_features
    if n_data > n_model:
        raise DataFormatError(path, None, f"the data has {n_data} features, the model {n_model}: a model has no "
                              "weights for features it was not trained on", "features")
    if n_data == n_model:
        return ds
    warnings.warn(f"{path}: the data lists {n_data} features, the model has {n_model}: features {n_data + 1}-"
                  f"{n_model} are read as 0 (SVMlight's unlisted features)", UserWarning, stacklevel=2)
    X = ds.X
    X = (sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], n_model)) if sp.issparse(X)
         else np.pad(X, ((0, 0), (0, n_model - n_data))))
    return ds.with_X(X)


def _say(args, message):
    """A progress message on standard error, unless --quiet."""
    if not getattr(args, "quiet", False):
        print(message, file=sys.stderr)


def _add_demo(sub):
    p = sub.add_parser("demo", help=HELP["demo"])
    p.add_argument("--data-dir", help="data folder (default: STRUCTRANK_DATA or ../shared/data)")
    p.add_argument("--synthetic", action="store_true", help="use the synthetic generator even when data are present")
    p.set_defaults(func=cmd_demo)


def cmd_demo(args):
    from structrank.demo import run_demo

    refuse_inapplicable([("--data-dir", args.data_dir is not None, not args.synthetic,
                          "without --synthetic (the synthetic data are generated, not read)")])
    run_demo(data_dir=args.data_dir, synthetic=args.synthetic)
    return 0


def _add_reproduce(sub):
    from structrank.experiments.registry import EXPERIMENTS

    p = sub.add_parser("reproduce", help=HELP["reproduce"])
    p.add_argument("experiment", choices=sorted(EXPERIMENTS), metavar="EXPERIMENT",
                   help="one of: " + ", ".join(sorted(EXPERIMENTS)))
    p.add_argument("--data-dir", help="data folder (default: STRUCTRANK_DATA or ../shared/data)")
    p.add_argument("--quick", action="store_true", help="a small version that finishes in minutes")
    p.add_argument("--out", default=None, help="output folder (default: out/EXPERIMENT)")
    p.add_argument("--fresh", action="store_true",
                   help="discard the runs recorded in OUT/results.sqlite and start afresh (needed when the store "
                        "was made from other data or by another experiment)")
    p.add_argument("--keep", default=None, metavar="DIR",
                   help="a folder of kept runs (one text file per run), read into the store first and written as each "
                        "run finishes (results/<experiment> in a checkout); neural-qa keeps its full runs there by "
                        "default, the others when given")
    _add_parallel_options(p, "runs in parallel (joblib)")
    p.set_defaults(func=cmd_reproduce)


def cmd_reproduce(args):
    from structrank.experiments.registry import EXPERIMENTS
    from structrank.experiments.runner import discard_results

    out = _reproduce_folder(args.out, args.experiment, args.data_dir)
    if args.fresh:
        discard_results(out)
    reproduce = EXPERIMENTS[args.experiment]
    with _cluster(args.scheduler):
        reproduce(out=out, data_dir=args.data_dir, quick=args.quick, n_jobs=1 if args.jobs is None else args.jobs,
                  keep=args.keep)
    return 0


def _reproduce_folder(out, experiment, data_dir):
    """``reproduce``'s --out as a Path, refused when it is a file or lies in the data folder it reads."""
    if out == "":
        raise ValueError("--out is empty: give a folder for the results")
    out = Path(out or Path("out") / experiment)
    if out.exists() and not out.is_dir():
        raise NotADirectoryError(f"--out {out}: is a file; reproduce writes a folder (results.sqlite, report.md, ...)")
    data = Path(data_dir) if data_dir else default_data_dir()
    if data is not None and data.is_dir():
        real_out, real_data = Path(os.path.realpath(out)), Path(os.path.realpath(data))
        if real_out == real_data or real_data in real_out.parents:
            raise ValueError(f"--out {out} is inside the data folder {data}: the data must stay as they are; "
                             "give another --out")
    return out


#: compare's randomisation samples: enough for a stable p-value, and a bound on the test's time
MIN_PERMUTATIONS, MAX_PERMUTATIONS = 10_000, 1_000_000


def _add_results(sub):
    p = sub.add_parser("results", help=HELP["results"])
    p.add_argument("stores", nargs="+", metavar="STORE",
                   help="results.sqlite files written by `structrank reproduce`, or folders of kept runs (reproduce "
                        "--keep; the repository's results/EXPERIMENT)")
    p.add_argument("--out", required=True, help="markdown file to write")
    p.add_argument("--command", default=None, help="the command that made the stores (written in the header)")
    p.set_defaults(func=cmd_results)


def cmd_results(args):
    from structrank.experiments import ResultStore, write_results_markdown

    from structrank.experiments.kept_runs import folder_store

    for path in args.stores:
        if not Path(path).is_file() and not Path(path).is_dir():
            raise FileNotFoundError(f"{path}: no such result store or folder of kept runs")
    check_output(args.out, {f"STORE {i}": path for i, path in enumerate(args.stores, 1)})
    command = args.command or "structrank results " + " ".join(args.stores) + f" --out {args.out}"
    with tempfile.TemporaryDirectory(prefix="structrank-results-") as tmp:
        # a folder of kept runs is read into a store of its own (nothing is run again)
        stores = [folder_store(p, Path(tmp) / f"kept-{i}" / "results.sqlite") if Path(p).is_dir() else ResultStore(p)
                  for i, p in enumerate(args.stores)]
        write_results_markdown(stores, args.out, "structrank results", command)
        for store in stores:
            store.close()
    _say(args, f"wrote {args.out}")
    return 0


def _add_export(sub):
    p = sub.add_parser("export", help=HELP["export"])
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
    p.set_defaults(func=cmd_export)


def cmd_export(args):
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
        _say(args, f"wrote {args.out}")
    if args.format == "lightgbm" and getattr(model, "classes_", None) is not None:
        _say(args, f"the booster predicts P(grade) for the grades {', '.join(map(str, model.classes_))}; the model's "
                   "score is their expectation")
    return 0


def _add_losses(sub):
    p = sub.add_parser("losses", help=HELP["losses"])
    p.add_argument("--out", default=None, help="write the page to this file (default: print it)")
    p.set_defaults(func=cmd_losses)


def cmd_losses(args):
    from structrank.learners.registry import losses_page

    check_output(args.out, {})
    page = losses_page()
    if args.out is None:
        print(page, end="")
    else:
        write_text_atomic(Path(args.out), page)
        _say(args, f"wrote {args.out}")
    return 0


def _add_featurize(sub):
    p = sub.add_parser(
        "featurize", help=HELP["featurize"],
        description="Featurize a QA TSV (rows of question, candidate, label, with an optional leading question id, "
                    "or a WikiQA TSV with its header) into a LETOR/SVMlight file: one row per candidate, integer "
                    "qids in question order, '#docid = ... question = ...' comments. The features are listed in "
                    "docs/QA_FEATURES.md.",
    )
    p.add_argument("kind", choices=("qa",), metavar="KIND", help="what to featurize: qa (question answering)")
    p.add_argument("--input", required=True, help="TSV file to featurize (plain or .gz)")
    p.add_argument("--out", required=True, help="LETOR/SVMlight file to write (.gz to compress)")
    state = p.add_mutually_exclusive_group()
    state.add_argument("--fit", metavar="FILE",
                       help="training TSV to fit the featurizer (idf) on; its state is saved as OUT.featurizer.json")
    state.add_argument("--state", metavar="FILE", help="a saved OUT.featurizer.json to reuse (for test files)")
    p.add_argument("--query-file", action="store_true",
                   help="also write OUT.query: each question's row count, one per line (LightGBM's and RankLib's groups)")
    p.add_argument("--embeddings", action="store_true",
                   help='append sentence-embedding columns (needs pip install "structrank[embeddings]")')
    p.set_defaults(func=cmd_featurize)


def cmd_featurize(args):
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


#: ``bench --scale-sizes`` when not given
DEFAULT_SCALE_SIZES = "1e4,1e5,1e6,1e7"


def _add_bench(sub):
    from structrank.bench import BENCH_SECTIONS, SECTIONS

    p = sub.add_parser("bench", help=HELP["bench"])
    p.add_argument("--repeat", type=int, default=None,
                   help="timed repetitions of the evaluate section (the best is reported; default 5)")
    p.add_argument("--out", help="also write the figures to this markdown file (docs/BENCHMARKS.md)")
    p.add_argument("--only", choices=BENCH_SECTIONS,
                   help="run one section: " + "; ".join(f"{s.name}: {s.help}" for s in SECTIONS))
    p.add_argument("--scale-sizes", default=None, metavar="N,N,...",
                   help=f"document counts of the scale and reading sections (default: {DEFAULT_SCALE_SIZES}; 10^7 "
                        "takes about 4 GB of temporary disk)")
    p.set_defaults(func=cmd_bench)


def cmd_bench(args):
    from structrank.bench import run_benchmarks

    check_output(args.out, {})
    refuse_inapplicable([("--repeat", args.repeat is not None, args.only in (None, "evaluate"),
                          "to the evaluate section (without --only, or --only evaluate)"),
                         ("--scale-sizes", args.scale_sizes is not None, args.only in (None, "scale", "startup"),
                          "to the scale and startup sections (without --only, or --only scale or startup)")])
    repeat = 5 if args.repeat is None else args.repeat
    if repeat < 1:
        raise ValueError(f"--repeat must be at least 1, got {repeat}")
    sizes = tuple(_size(n) for n in (args.scale_sizes or DEFAULT_SCALE_SIZES).split(","))
    run_benchmarks(repeat=repeat, out=args.out, only=args.only, scale_sizes=sizes)
    return 0


def _size(text):
    """One of --scale-sizes' document counts: a positive whole number (``1e6`` allowed)."""
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"--scale-sizes: {text!r} is not a number") from None
    if not value >= 1 or value != int(value):
        raise ValueError(f"--scale-sizes: {text!r} must be a positive whole number of documents")
    return int(value)


# -- fuse ----------------------------------------------------------------------------------------

#: fuse's option of each method parameter (``structrank.fusion.FUSION_METHODS`` says which method takes which)
FUSE_PARAMETERS = {"k": "rrf's k (default 60)", "weights": "one weight per RUN, in order, comma-separated",
                   "gamma": "combgmnz's exponent", "sigma": "logn_isr's sigma (default 0.01)",
                   "phi": "rbc's persistence, in (0, 1)"}


def _add_fuse(sub):
    from structrank.fusion import FUSION_METHODS, NORMALIZATIONS

    p = sub.add_parser("fuse", help=HELP["fuse"],
                       description="Fuse TREC runs of the same queries into one, by ranx's definitions "
                                   "(structrank.fusion): each run ranked as trec_eval ranks it (ties by docno "
                                   "descending); a run that lacks a query or a document adds nothing for it. "
                                   "With --optimize-on, the method's parameter is chosen on those qrels (ranx's "
                                   "grid, by --metric) and the runs are fused with it; apply the printed choice "
                                   "to other runs of the same systems with its option.")
    p.add_argument("runs", nargs="+", metavar="RUN", help="TREC runs (qid Q0 docno rank score tag; plain or .gz), "
                                                          "two or more")
    p.add_argument("--method", required=True, choices=FUSION_METHODS, metavar="METHOD",
                   help="one of: " + ", ".join(FUSION_METHODS))
    p.add_argument("--norm", default=None, choices=NORMALIZATIONS,
                   help="how a score-based method normalises each run's query first (default minmax, as ranx); "
                        "the rank-based methods (rrf, isr, log_isr, logn_isr, rbc, bordafuse, w_bordafuse, "
                        "condorcet, w_condorcet) take none")
    for name, text in FUSE_PARAMETERS.items():
        methods = ", ".join(m for m, param in FUSION_METHODS.items() if param == name)
        p.add_argument(f"--{name}", default=None, metavar="W,W,..." if name == "weights" else name.upper(),
                       type=None if name == "weights" else float, help=f"with --method {methods}: {text}")
    p.add_argument("--optimize-on", metavar="QRELS",
                   help="choose the method's parameter on these qrels (of the RUNs' queries) instead of giving it")
    p.add_argument("--metric", default=None, metavar="NAME",
                   help="with --optimize-on: the measure to choose by (default map; names as in structrank evaluate)")
    p.add_argument("--step", type=float, default=None,
                   help="with --optimize-on and a weighted method: the weights' grid step (default 0.1)")
    p.add_argument("--tag", default=None, help="the fused run's tag column (default: the method's name)")
    p.add_argument("--out", required=True, help="TREC run to write (- writes standard output)")
    p.set_defaults(func=cmd_fuse)


def cmd_fuse(args):
    from structrank.fusion import FUSION_METHODS, fuse, optimize_fusion
    from structrank.metrics import write_run

    inputs = {"--optimize-on": args.optimize_on, **{f"RUN {i}": path for i, path in enumerate(args.runs, 1)}}
    check_output(args.out, inputs)
    check_one_stdin(inputs)
    if args.tag is not None and (not args.tag or any(c.isspace() for c in args.tag)):
        raise ValueError(f"--tag {args.tag!r}: a run tag is one word without spaces")
    param = FUSION_METHODS[args.method]
    given = {name: getattr(args, name) for name in FUSE_PARAMETERS}
    refuse_inapplicable([(f"--{name}", value is not None, name == param, "with --method " + ", ".join(
        m for m, p in FUSION_METHODS.items() if p == name)) for name, value in given.items()])
    refuse_inapplicable([("--metric", args.metric is not None, args.optimize_on, "with --optimize-on"),
                         ("--step", args.step is not None, args.optimize_on and param == "weights",
                          "with --optimize-on and a weighted method")])
    if args.optimize_on and param and given[param] is not None:
        raise ValueError(f"--optimize-on chooses {param}: give --{param} or --optimize-on, not both")
    if given["weights"] is not None:
        given["weights"] = _weights(given["weights"])
    _check_fuse_numbers(given, args.step, len(args.runs))
    _kernels_alone()
    if args.optimize_on:
        search = optimize_fusion(args.optimize_on, args.runs, args.method, args.norm, args.metric or "map",
                                 step=args.step)
        value = ",".join(map(repr, search.value)) if param == "weights" else repr(search.value)
        _say(args, f"chose --{param} {value}: {search.metric} {search.score:.6f} on {args.optimize_on} (the last best "
                   f"of {len(search.trials)} in ranx's grid)")
        fused = search.fused
    else:
        fused = fuse(args.runs, args.method, args.norm, **{name: v for name, v in given.items() if v is not None})
    rows = [(q, d, s) for q, docs in fused.items() for d, s in docs.items()]
    bad = next(((q, d, s) for q, d, s in rows if not math.isfinite(s)), None)
    if bad is not None:
        raise ValueError(f"--method {args.method}{f' --norm {args.norm}' if args.norm else ''}: the fused score of "
                         f"document {bad[1]} of query {bad[0]} is {bad[2]} (the runs' scores overflow this "
                         "normalisation or method); nothing written")
    if _ties_everything(fused):
        chosen = ", ".join(f"--{n} {v}" for n, v in given.items() if v is not None) or "its defaults"
        raise ValueError(f"--method {args.method} with {chosen}: the fused scores tie every document of every query "
                         "(the parameter leaves no difference a float64 holds, or weighs every run 0); nothing written")
    qid, docids, scores = zip(*rows)
    write_run(args.out, qid, docids, scores, tag=args.tag or args.method)
    if args.out != "-":
        _say(args, f"wrote {len(rows)} documents of {len(fused)} queries to {args.out}")
    return 0


def _ties_everything(fused) -> bool:
    """Whether every query of a fused run with two or more documents gives them all one score (a run that ranks
    nothing)."""
    ranked = [docs for docs in fused.values() if len(docs) > 1]
    return bool(ranked) and all(len(set(docs.values())) == 1 for docs in ranked)


#: --optimize-on's weight grid: at most this many points (a tiny --step over several runs would enumerate for ever)
MAX_GRID_POINTS = 100_000


def _check_fuse_numbers(given, step, n_runs) -> None:
    """Every numeric option of ``fuse`` finite and in its range, before any run is read."""
    rules = {"k": (lambda v: v >= 0, "a number >= 0"), "gamma": (lambda v: True, "a finite number"),
             "sigma": (lambda v: v > 0, "a number > 0"), "phi": (lambda v: 0 < v < 1, "a persistence in (0, 1)")}
    for name, (ok, what) in rules.items():
        value = given.get(name)
        if value is not None and not (math.isfinite(value) and ok(value)):
            raise ValueError(f"--{name} must be {what}, got {value}")
    weights = given.get("weights")
    if weights is not None:
        if not all(math.isfinite(w) for w in weights):
            raise ValueError(f"--weights must be finite numbers, got {','.join(map(repr, weights))}")
    if step is not None:
        if not (math.isfinite(step) and 0 < step <= 1):
            raise ValueError(f"--step must be in (0, 1], got {step}")
        # in logarithms: a tiny step's count of points overflows a float (1 / step itself is inf below 1e-308)
        per_run = 1 / step
        log_points = n_runs * (math.log10(math.floor(per_run) + 1) if math.isfinite(per_run) else math.inf)
        if log_points > math.log10(MAX_GRID_POINTS):
            raise ValueError(f"--step {step}: about 10^{log_points:.1f} grid points for {n_runs} runs, more than "
                             f"{MAX_GRID_POINTS}; give a larger --step")


def _weights(text) -> list:
    """``--weights 0.5,0.3,0.2`` as numbers."""
    weights = []
    for item in text.split(","):
        try:
            weights.append(float(item))
        except ValueError:
            raise ValueError(f"--weights: {item.strip()!r} is not a number (give one weight per RUN, "
                             "comma-separated)") from None
    return weights


def build_parser(only=None, details=True):
    """The parser; ``only``: build that command in full and the others as one-line stubs, so that
    ``structrank --help`` and a command's start-up do not import every model and experiment;
    ``details``: the long descriptions that only ``--help`` prints (``_add_train``'s: True, or the
    command line, whose model name, if any, asks for that model's help)."""
    parser = argparse.ArgumentParser(
        prog="structrank", description="Structured, loss-sensitive learning to rank and reranking."
    )
    parser.add_argument("--version", action="version", version=f"structrank {__version__}")
    parser.add_argument("--quiet", action="store_true", help="no progress bars or progress messages")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    adders = {"train": functools.partial(_add_train, details=details), "predict": _add_predict, "evaluate": _add_evaluate, "compare": _add_compare,
              "featurize": _add_featurize, "reproduce": _add_reproduce, "results": _add_results, "demo": _add_demo,
              "bench": _add_bench, "losses": _add_losses, "export": _add_export,
              "fuse": _add_fuse}
    for name, add in adders.items():
        if only in (None, name):
            add(sub)
        else:
            sub.add_parser(name, help=HELP[name])
    for command in sub.choices.values():  # --quiet after the command too (SUPPRESS keeps one given before it)
        command.add_argument("--quiet", action="store_true", default=argparse.SUPPRESS,
                             help="no progress bars or progress messages")
    return parser


def _one_line_warning(message, category, filename, lineno, line=None):
    """Warnings as one line (no source line): ``structrank: CategoryName: message``."""
    return f"structrank: {category.__name__}: {str(message).splitlines()[0] if str(message) else ''}\n"


def main(argv=None):
    """The ``structrank`` command. ``argv`` None: the process's own arguments, and the process ends
    after it (the console script, ``python -m structrank``)."""
    try:
        code = _main(argv)
        if argv is None:
            sys.stdout.flush()  # a reader that closed the pipe early is seen here, not at the interpreter's exit
        return code
    except KeyboardInterrupt:  # Ctrl-C, even while the parser imports the models: the shell's code, no traceback
        print("structrank: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return _reader_went_away(argv)
    finally:
        if argv is None:
            _spare_the_last_collections()


#: the exit code of a command whose reader closed standard output early (``structrank evaluate | head``):
#: 128 + SIGPIPE, as the shell reports a program that SIGPIPE ended (``cat``, ``grep``)
BROKEN_PIPE_EXIT = 141


def _reader_went_away(argv):
    """The end of a command whose standard output was closed before it finished writing: no message
    (the reader chose to stop reading), exit 141. A process that ends here points its standard
    output at the null device first, so that Python's own flush at exit finds no broken pipe."""
    if argv is None:
        with contextlib.suppress(OSError, ValueError):  # no file descriptor (a replaced sys.stdout)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
    return BROKEN_PIPE_EXIT


def _spare_the_last_collections():
    """Keep the ending interpreter's garbage collections from walking every object alive.

    numba and LLVM leave hundreds of thousands of objects behind, and the collections Python runs
    as it shuts down walk them all: when this was written, a fifth of ``structrank evaluate``'s wall
    time (docs/ARCHITECTURE.md). ``gc.freeze`` puts the live objects out of the collector's reach;
    the memory goes back to the system with the process. Nothing is lost: every output was written
    and closed (atomically) before this, objects still die when their last reference goes, atexit
    handlers still run, and the standard streams are still flushed. Only for a process that ends
    here (``argv`` None), never for a caller that goes on (the tests call ``main(argv)``).
    """
    gc.freeze()


def _show_warnings():
    """Show every warning once per place (Python hides ResourceWarning and DeprecationWarning by default), but
    keep the caller's "error" filters above that (``python -W error::ResourceWarning -m structrank``, or a test's
    ``filterwarnings("error::ResourceWarning")`` around ``main(argv)``): a stricter caller stays strict."""
    errors = [f for f in warnings.filters if f[0] == "error"]
    warnings.simplefilter("default")
    for action, message, category, module, lineno in reversed(errors):
        warnings.filterwarnings(action, message.pattern if message else "", category, module.pattern if module else "",
                                lineno)


def _command_of(argv):
    """The command named in ``argv`` ("" for none: top-level --help or --version), without parsing it."""
    return next((a for a in argv if not a.startswith("-")), "")


#: each command's input files that must exist, checked before the command's imports (the models' registry
#: takes seconds to import): a missing one is reported at once, in the words its reader uses
INPUT_OPTIONS = {
    "train": ("--train", "--vali"),
    "predict": ("--model", "--data"),
    "evaluate": ("--data", "--scores", "--qrels", "--run"),
    "compare": ("--qrels", "--data"),
    "featurize": ("--input", "--fit", "--state"),
    "export": ("--feature-names",),
    "fuse": ("--optimize-on",),
}


class _ArgumentProblem(Exception):
    """A line the input check cannot read: the command's own parser reports it."""


class _InputOptionsParser(argparse.ArgumentParser):
    def error(self, message):
        raise _ArgumentProblem(message)


def check_input_paths(command, argv) -> None:
    """DataFormatError for the first input file of ``command`` in ``argv`` that is missing, a folder or
    not a regular file (a model file: missing), as its reader would say; ``-`` (standard input) and
    abbreviated option names are left to the command. Nothing but the standard library is imported."""
    options = INPUT_OPTIONS.get(command, ())
    if not options or "-h" in argv or "--help" in argv:
        return
    from structrank.files import open_regular  # deferred: start-up time, only the commands that read files

    parser = _InputOptionsParser(add_help=False, allow_abbrev=False)
    for option in options:
        parser.add_argument(option, action="append", default=[])
    try:
        known, _ = parser.parse_known_args(argv)
    except _ArgumentProblem:
        return
    for option in options:
        for path in getattr(known, option[2:].replace("-", "_")):
            if path == "-" or not path:
                continue
            if option == "--model":  # model_io's words; what a model file holds is read with numpy
                if not os.path.lexists(path):
                    raise DataFormatError(path, None, "model file not found")
                continue
            open_regular(Path(path)).close()


def _main(argv):
    argv = sys.argv[1:] if argv is None else list(argv)
    command = _command_of(argv)
    try:
        check_input_paths(command, argv)
    except (DataFormatError, OSError) as exc:  # OSError: a path under a file, too long, a loop, no permission
        print(f"structrank {command}: {error_line(exc)}", file=sys.stderr)
        return 2
    # "" or an unknown name: every command a stub
    parser = build_parser(only=command, details=("-h" in argv or "--help" in argv) and argv)
    args = parser.parse_args(argv)
    _show_warnings()
    warnings.formatwarning = _one_line_warning
    if args.quiet:
        os.environ["TQDM_DISABLE"] = "1"  # tqdm reads its options from TQDM_* variables
    try:
        return args.func(args)
    except BrokenPipeError:
        raise  # not an error of the command's: main ends it quietly
    except Exception as exc:  # noqa: BLE001 -- every error ends in one line (STRUCTRANK_DEBUG=1: the traceback)
        if os.environ.get("STRUCTRANK_DEBUG"):  # the whole traceback, for reporting a bug
            raise
        print(f"structrank {args.command}: {error_line(exc)}", file=sys.stderr)
        return 2 if _is_input_error(exc) else 1


def _is_input_error(exc) -> bool:
    """Whether ``exc`` is about the user's inputs or the system (exit 2) rather than a bug (exit 1)."""
    sqlite3 = sys.modules.get("sqlite3")  # imported only by the commands that open a store
    return (isinstance(exc, (StructRankError, ValueError, OSError, RecursionError, MemoryError))
            or (sqlite3 is not None and isinstance(exc, sqlite3.Error)))


def error_line(exc) -> str:
    """One line for ``exc``, naming the file when the error carries one.

    An OSError's own text is ``[Errno 2] No such file or directory: 'x'``; this gives ``x: No such
    file or directory``. A message of several lines keeps its first (the rest is a traceback or
    detail that STRUCTRANK_DEBUG=1 shows).
    """
    if isinstance(exc, OSError) and exc.strerror and exc.filename is not None:
        where = f"{exc.filename} -> {exc.filename2}" if exc.filename2 is not None else f"{exc.filename}"
        text = f"{where or repr(where)}: {exc.strerror}"
    elif isinstance(exc, RecursionError):
        text = f"an input nested too deeply to read ({exc})"
    else:
        text = str(exc) or type(exc).__name__
    text = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    kind = "error" if _is_input_error(exc) else f"internal error ({type(exc).__name__}; STRUCTRANK_DEBUG=1 shows " \
                                                  "the traceback)"
    return f"{kind}: {text}"


if __name__ == "__main__":
    sys.exit(main())
