"""Choosing the epoch (or boosting round) on a dev set: the one loop the iterative learners share.

A learner that trains epoch by epoch offers each epoch's iterate to a ``BestEpoch``; with a dev
metric it keeps the iterate of the first epoch with the highest value (Collins & Koo's and
Haponchyk & Moschitti's number of iterations tuned on dev data), without one the last.
"""

from __future__ import annotations

import numpy as np


class BestEpoch:
    """The epoch kept so far, its iterate, and the dev metric of every epoch offered.

    Parameters
    ----------
    score : callable or None
        ``score(iterate) -> float``, the dev metric of an iterate (higher is better); None keeps
        the last epoch offered and records no curve.
    start : object, optional
        An iterate that stands as epoch 0, unscored and below any scored epoch: what is kept
        when no epoch scores above -inf (the zero weights of the linear learners). Without it
        the first epoch offered is kept until a later one scores higher.

    Attributes
    ----------
    epoch : int or None
        The epoch kept (None before any is offered, without ``start``).
    iterate : object
        Its iterate, as offered (not copied).
    curve : list of float
        The dev metric of each epoch offered, in order (empty without ``score``).
    epochs : list of int
        The epochs of ``curve``.

    Examples
    --------
    >>> best = BestEpoch(score=lambda w: -abs(w - 3))
    >>> for epoch in (1, 2, 3, 4):
    ...     best.offer(epoch, 2 * epoch)
    >>> best.epoch, best.iterate, best.curve
    (1, 2, [-1, -1, -3, -5])
    """

    def __init__(self, score=None, start=None):
        self.score = score
        self.epoch, self.iterate, self.value = (None, None, None) if start is None else (0, start, -np.inf)
        self.curve, self.epochs = [], []

    def offer(self, epoch, iterate):
        """Score ``iterate``, the model after ``epoch``, and keep it if it is the best so far (ties: the earlier)."""
        if self.score is None:
            self.epoch, self.iterate = epoch, iterate
            return
        value = self.score(iterate)
        self.curve.append(value)
        self.epochs.append(epoch)
        if self.epoch is None or value > self.value:
            self.epoch, self.iterate, self.value = epoch, iterate, value
