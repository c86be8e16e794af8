"""``structrank demo``: the baselines trained on MQ2008 Fold1 (or synthetic data) and compared
(``structrank.demo.run_demo``)."""

# deferred imports: start-up time, `structrank --help` imports every command module; a command loads what it runs
from __future__ import annotations

from structrank.commands.options import refuse_inapplicable

HELP = "train the baselines on MQ2008 Fold1 (or synthetic data) and compare them"
INPUTS = ()


def add_parser(sub, details=None):
    p = sub.add_parser("demo", help=HELP)
    p.add_argument("--data-dir", help="data folder (default: STRUCTRANK_DATA or ../shared/data)")
    p.add_argument("--synthetic", action="store_true", help="use the synthetic generator even when data are present")
    return p


def run(args) -> int:
    from structrank.demo import run_demo

    refuse_inapplicable([("--data-dir", args.data_dir is not None, not args.synthetic,
                          "without --synthetic (the synthetic data are generated, not read)")])
    run_demo(data_dir=args.data_dir, synthetic=args.synthetic)
    return 0
