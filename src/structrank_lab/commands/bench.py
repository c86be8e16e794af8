"""``structrank bench``: the speed benchmarks (``structrank_lab.bench``), printed and, with ``--out``, written."""

# deferred imports: start-up time, `structrank --help` imports every command module; a command loads what it runs
from __future__ import annotations

from structrank.atomic import check_output
from structrank.commands.options import refuse_inapplicable

HELP = "speed benchmarks (prints its figures)"
INPUTS = ()

#: ``bench --scale-sizes`` when not given
DEFAULT_SCALE_SIZES = "1e4,1e5,1e6,1e7"


def add_parser(sub, details=None):
    from structrank_lab.bench import BENCH_SECTIONS, SECTIONS

    p = sub.add_parser("bench", help=HELP)
    p.add_argument("--repeat", type=int, default=None,
                   help="timed repetitions of the evaluate section (the best is reported; default 5)")
    p.add_argument("--out", help="also write the figures to this markdown file (docs/BENCHMARKS.md)")
    p.add_argument("--only", choices=BENCH_SECTIONS,
                   help="run one section: " + "; ".join(f"{s.name}: {s.help}" for s in SECTIONS))
    p.add_argument("--scale-sizes", default=None, metavar="N,N,...",
                   help=f"document counts of the scale and reading sections (default: {DEFAULT_SCALE_SIZES}; 10^7 "
                        "takes about 4 GB of temporary disk)")
    return p


def run(args) -> int:
    from structrank_lab.bench import run_benchmarks

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
