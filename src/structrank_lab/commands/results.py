"""``structrank results``: a markdown page (docs/RESULTS.md) from result stores or folders of kept runs."""

# deferred imports: start-up time, `structrank --help` imports every command module; a command loads what it runs
from __future__ import annotations

import tempfile
from pathlib import Path

from structrank.atomic import check_output
from structrank.commands.options import say

HELP = "write a markdown page (docs/RESULTS.md) from result stores"
INPUTS = ()


def add_parser(sub, details=None):
    p = sub.add_parser("results", help=HELP)
    p.add_argument("stores", nargs="+", metavar="STORE",
                   help="results.sqlite files written by `structrank reproduce` (or its out folders), or folders of "
                        "kept runs (reproduce --keep; the repository's results/EXPERIMENT)")
    p.add_argument("--out", required=True, help="markdown file to write")
    p.add_argument("--command", default=None, help="the command that made the stores (written in the header)")
    return p


def run(args) -> int:
    from structrank_lab.experiments import write_results_markdown
    from structrank_lab.experiments.kept_runs import open_runs

    for path in args.stores:
        if not Path(path).is_file() and not Path(path).is_dir():
            raise FileNotFoundError(f"{path}: no such result store or folder of kept runs")
    check_output(args.out, {f"STORE {i}": path for i, path in enumerate(args.stores, 1)})
    command = args.command or "structrank results " + " ".join(args.stores) + f" --out {args.out}"
    with tempfile.TemporaryDirectory(prefix="structrank-results-") as tmp:
        # a folder of kept runs is read into a store of its own (nothing is run again)
        stores = [open_runs(p, Path(tmp) / f"kept-{i}") for i, p in enumerate(args.stores)]
        write_results_markdown(stores, args.out, "structrank results", command)
        for store in stores:
            store.close()
    say(args, f"wrote {args.out}")
    return 0
