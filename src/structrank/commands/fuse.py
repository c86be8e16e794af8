"""``structrank fuse``: TREC runs fused into one by ranx's methods (``structrank.fusion``), the method's parameter
given or chosen on qrels (``--optimize-on``); every number checked before any run is read, and a fused run that
overflows or ranks nothing is refused rather than written."""

# deferred imports: start-up time, `structrank --help` imports every command module; a command loads what it runs
from __future__ import annotations

import math

from structrank.atomic import check_output
from structrank.commands.options import check_one_stdin, kernels_alone, refuse_inapplicable, say

HELP = "fuse TREC runs into one (rrf, combsum, combmnz, ...: ranx's methods), weights chosen on qrels if asked"
INPUTS = ("--optimize-on",)

#: fuse's option of each method parameter (``structrank.fusion.FUSION_METHODS`` says which method takes which)
FUSE_PARAMETERS = {"k": "rrf's k (default 60)", "weights": "one weight per RUN, in order, comma-separated",
                   "gamma": "combgmnz's exponent", "sigma": "logn_isr's sigma (default 0.01)",
                   "phi": "rbc's persistence, in (0, 1)"}


def add_parser(sub, details=None):
    from structrank.fusion import FUSION_METHODS, NORMALIZATIONS

    p = sub.add_parser("fuse", help=HELP,
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
    return p


def run(args) -> int:
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
    kernels_alone()
    if args.optimize_on:
        search = optimize_fusion(args.optimize_on, args.runs, args.method, args.norm, args.metric or "map",
                                 step=args.step)
        value = ",".join(map(repr, search.value)) if param == "weights" else repr(search.value)
        say(args, f"chose --{param} {value}: {search.metric} {search.score:.6f} on {args.optimize_on} (the last best "
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
        say(args, f"wrote {len(rows)} documents of {len(fused)} queries to {args.out}")
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
