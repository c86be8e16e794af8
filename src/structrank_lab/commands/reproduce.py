"""``structrank reproduce``: a paper's experiments, resumably, and its tables and figures.

``--out`` must be a folder outside the data folder; ``--fresh`` discards a store made by another experiment or
from other data (which is otherwise refused).
"""

# deferred imports: start-up time, `structrank --help` imports every command module; a command loads what it runs
from __future__ import annotations

import os
from pathlib import Path

from structrank.commands.options import add_parallel_options, cluster
from structrank.paths import data_dir as default_data_dir

HELP = "run a paper's experiments and write its tables and figures"
INPUTS = ()


def add_parser(sub, details=None):
    from structrank_lab.experiments.registry import EXPERIMENTS

    p = sub.add_parser("reproduce", help=HELP)
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
    add_parallel_options(p, "runs in parallel (joblib)")
    return p


def run(args) -> int:
    from structrank_lab.experiments.registry import EXPERIMENTS
    from structrank_lab.experiments.runner import discard_results

    out = reproduce_folder(args.out, args.experiment, args.data_dir)
    if args.fresh:
        discard_results(out)
    reproduce = EXPERIMENTS[args.experiment]
    with cluster(args.scheduler):
        reproduce(out=out, data_dir=args.data_dir, quick=args.quick, n_jobs=1 if args.jobs is None else args.jobs,
                  keep=args.keep)
    return 0


def reproduce_folder(out, experiment, data_dir):
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
