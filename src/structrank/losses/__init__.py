"""Ranking losses: one typed contract (``RankingLoss``) and one registry.

>>> from structrank.losses import get_loss, loss_names
>>> loss = get_loss("map")
>>> loss.metrics, loss.kind
(('map',), 'hinge')
>>> "crf-kl" in loss_names("probabilistic")
True
"""

from structrank.losses.base import HINGE, PROBABILISTIC, RankingLoss, Violation
from structrank.losses.registry import (Resolved, build_for_labels, build_loss, declaration_problems, entries,
                                       get_entry, get_loss, loss_names, register, require, resolve_gain, resolve_loss)

__all__ = ["HINGE", "PROBABILISTIC", "RankingLoss", "Resolved", "Violation", "build_for_labels", "build_loss",
           "declaration_problems", "entries", "get_entry", "get_loss", "loss_names", "register", "require",
           "resolve_gain", "resolve_loss"]
