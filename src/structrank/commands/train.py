"""``structrank train``: a registered model on a LETOR/SVMlight file (or question-candidate text), chosen on --vali.

The workflow is the library's (``structrank.model_training.train_model``); here are its options: ``--set NAME=VALUE``
(``parse_assignments``), the options that apply only with ``--vali``, and the help, built only for ``--help``
(``details``: every model on one line, or with a model named, that model's parameters, defaults and grid; read
from the sources, no learner imported).
"""

# deferred imports: start-up time, `structrank --help` imports every command module; a command loads what it runs
from __future__ import annotations

import argparse
import functools
import json
import math
import textwrap

from structrank.atomic import check_output
from structrank.commands.options import add_parallel_options, add_queries_option, cluster, refuse_inapplicable, say
from structrank.launch import is_main_process

HELP = "train a model on a LETOR/SVMlight file or on question-candidate text"
INPUTS = ("--train", "--vali")


def add_parser(sub, details=True):
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
    p = sub.add_parser("train", help=HELP, description=description,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", metavar="MODEL", choices=sorted(MODELS),
                   help="the model to train (`structrank train --help` lists them)")
    p.add_argument("--train", required=True, help="training file")
    p.add_argument("--vali", help="validation file for choosing parameters from the grid")
    p.add_argument("--set", action="append", metavar="NAME=VALUE", help="fix a parameter (repeatable)")
    p.add_argument("--convention", default=None, choices=CONVENTION_NAMES,
                   help="the vali metric's convention (default: for a text reranker the vali file's task's tool, "
                        "semeval for SemEval threads, else trec; else auto, from the labels); --set convention=X "
                        "is the same")
    add_queries_option(p, default=None, what="with --vali: the vali queries chosen on (as `evaluate --queries` "
                                             "scores them)")
    p.add_argument("--out", required=True, help="model file to write (npz, no pickle; a text model: a folder)")
    p.add_argument("--progress", action="store_true",
                   help="progress bars (grid points, epochs; with ETA) on standard error even when it is not a "
                        "terminal (on a terminal they show anyway; --quiet hides them)")
    add_parallel_options(p, "grid points fitted in parallel (joblib)")
    return p


def run(args) -> int:
    from structrank.learners.registry import get_model
    from structrank.model_training import train_model

    spec = get_model(args.model)
    check_output(args.out, {"--train": args.train, "--vali": args.vali}, folder=spec.inputs == "text")
    refuse_inapplicable([("--jobs", args.jobs is not None, args.vali, "with --vali (it fits the grid's points in "
                                                                       "parallel)"),
                         ("--queries", args.queries is not None, args.vali, "with --vali (it keeps vali queries)")])
    # --quiet hides the bars even with --progress; without either, they show on a terminal. Of the copies a launcher
    # (torchrun) started, only the first reports
    quiet = args.quiet or not is_main_process()
    progress = False if quiet else (True if args.progress else None)
    train_model(spec, args.train, args.out, fixed=parse_assignments(args.set), vali=args.vali or None,
                convention=args.convention, queries=args.queries, jobs=args.jobs, workers=cluster(args.scheduler),
                progress=progress, say=None if quiet else functools.partial(say, args))
    if not quiet:
        say(args, f"wrote {args.out}")
    return 0


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
