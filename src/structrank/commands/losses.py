"""``structrank losses``: the registered ranking losses, the markdown of docs/LOSSES.md
(``learners.registry.losses_page``)."""

# deferred imports: start-up time, `structrank --help` imports every command module; a command loads what it runs
from __future__ import annotations

from pathlib import Path

from structrank.atomic import check_output, write_text_atomic
from structrank.commands.options import say

HELP = "list the registered ranking losses (the markdown of docs/LOSSES.md)"
INPUTS = ()


def add_parser(sub, details=None):
    p = sub.add_parser("losses", help=HELP)
    p.add_argument("--out", default=None, help="write the page to this file (default: print it)")
    return p


def run(args) -> int:
    from structrank.learners.registry import losses_page

    check_output(args.out, {})
    page = losses_page()
    if args.out is None:
        print(page, end="")
    else:
        write_text_atomic(Path(args.out), page)
        say(args, f"wrote {args.out}")
    return 0
