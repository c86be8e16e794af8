"""Ranking metrics under named conventions (letor4, letor3, mslr, trec, semeval; ``auto`` picks one from the labels).

See ``structrank.metrics.conventions`` for the rules of each; every function here takes the
convention by name and every result carries it.
"""

from structrank.metrics.conventions import (
    CONVENTION_NAMES,
    CONVENTIONS,
    Convention,
    auto_convention,
    get_convention,
    resolve_convention,
)
from structrank.metrics.evaluate import (
    DEFAULT_METRICS,
    EvaluationResult,
    canonical_name,
    evaluate,
    parse_metric,
    rank_order,
)
from structrank.metrics.trec import evaluate_run, read_qrels, read_run, write_run

__all__ = [
    "CONVENTION_NAMES",
    "CONVENTIONS",
    "DEFAULT_METRICS",
    "Convention",
    "auto_convention",
    "EvaluationResult",
    "canonical_name",
    "evaluate",
    "get_convention",
    "parse_metric",
    "evaluate_run",
    "rank_order",
    "resolve_convention",
    "read_qrels",
    "read_run",
    "write_run",
]
