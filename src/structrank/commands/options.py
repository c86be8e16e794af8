"""What several commands share: options, their checks, and progress messages.

- An option that does not apply to the input given (``evaluate --data ... --relevant-from``, ``predict --run-tag``
  without ``--format trec``, ``train --jobs`` without ``--vali``, ...) is a one-line error, never ignored
  (``refuse_inapplicable``); such options default to None so that naming one is seen.
- Standard input (``-``) can be read once (``check_one_stdin``).
- ``--queries with-both`` keeps the queries with a relevant and a non-relevant document (``kept_queries``).
- ``--jobs`` and ``--scheduler`` run work in parallel, on a dask cluster with the latter (``cluster``).
- Progress messages go to standard error, unless ``--quiet`` (``say``).
"""

# deferred imports: start-up time, `structrank --help` imports every command module and so this one
from __future__ import annotations

import contextlib
import sys

from structrank.errors import DataFormatError, StructRankError

#: ``--convention``'s help: what ``auto``, the default, resolves to
CONVENTION_HELP = ("the evaluation tool whose rules to follow; default: for question-candidate text its task's tool "
                   "(semeval for SemEval threads, else trec), else auto, the one the labels allow (letor4 for labels "
                   "0-2, mslr up to 4, trec above); named in the output")


def say(args, message) -> None:
    """A progress message on standard error, unless --quiet."""
    if not getattr(args, "quiet", False):
        print(message, file=sys.stderr)


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


def add_queries_option(p, default="all", what="with --data: the queries evaluated"):
    """``--queries all|with-both`` on parser ``p``."""
    p.add_argument("--queries", default=default, choices=("all", "with-both"),
                   help=f"{what}: all (default), or with-both, those with a relevant and a non-relevant document "
                        "(answer selection's clean questions, as WikiQA's and TREC QA's results are reported)")


def kept_queries(args, ds, scores, convention):
    """(y, scores, qid, docids) of the queries ``--queries`` keeps (relevance read through ``convention``)."""
    import numpy as np

    y, qid, docids = np.asarray(ds.y), np.asarray(ds.qid), ds.docids
    if args.queries == "all":
        return y, scores, qid, docids
    from structrank.data.dataset import rows_of_queries
    from structrank.labelled import queries_with_both

    rows = rows_of_queries(ds.offsets, queries_with_both(ds, args.data, convention))
    return y[rows], scores[rows], qid[rows], None if docids is None else [docids[i] for i in rows]


def scores_in_row_order(ds, path, data_path):
    """A scores file (one per line, in the data file's order) in the order of ``ds``'s rows."""
    from structrank.data import read_scores

    scores = read_scores(path, n_rows=ds.n_rows, data_path=data_path)
    # the dataset's rows were regrouped by qid when its queries were not contiguous; scores follow the file
    return scores if ds.row_order is None else scores[ds.row_order]


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


def kernels_alone() -> None:
    """This command's process runs structrank's kernels and no other numba code: numba starts without
    its probe for SciPy's BLAS (``numba_cache.without_blas_probe``), once the arguments are checked."""
    from structrank.numba_cache import without_blas_probe

    without_blas_probe()


def job_count(text) -> int:
    """``--jobs``'s value: joblib's n_jobs, a count of workers or, below 0, every core but ``-1 - n`` of them; 0
    counts nothing and is refused here, in the option's words rather than joblib's."""
    import argparse

    try:
        jobs = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if jobs == 0:
        raise argparse.ArgumentTypeError("0 jobs: give a number of workers (1, 2, ...), or -1 for one per core "
                                         "(joblib's n_jobs)")
    return jobs


def add_parallel_options(p, jobs_help):
    """``--jobs N`` (``jobs_help``: what runs in parallel) and ``--scheduler ADDRESS`` on parser ``p``."""
    p.add_argument("--jobs", type=job_count, default=None, help=jobs_help + "; -1: one per core (default 1)")
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="run on this dask.distributed scheduler (tcp://host:8786) instead of local workers; "
                        "data files must be at the same paths on every worker (docs/DISTRIBUTED.md)")


@contextlib.contextmanager
def cluster(address):
    """``parallel.workers.cluster(address)``, with a scheduler that cannot be reached named as --scheduler."""
    from structrank.parallel.workers import cluster as connected

    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(connected(address))
        except (OSError, ValueError) as exc:  # distributed: OSError/TimeoutError, ValueError for a bad address
            raise StructRankError(f"--scheduler {address}: cannot connect to the dask scheduler: {exc}") from exc
        yield
