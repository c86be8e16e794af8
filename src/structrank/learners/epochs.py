"""Choosing the epoch (or boosting round) on a dev set: the one loop the iterative learners share.

A learner that trains epoch by epoch offers each epoch's iterate to a ``BestEpoch``; with a dev
metric it keeps the iterate of the first epoch with the highest value (Collins & Koo's and
Haponchyk & Moschitti's number of iterations tuned on dev data), without one the last.
``OneStandardErrorEpoch`` keeps instead the earliest epoch within one standard error of the best
(the "one-standard-error rule" of Breiman et al. 1984 and Hastie et al., ESL 7.10): where many
epochs are compared on a small dev set, the best of them wins partly by the dev set's noise.
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


class OneStandardErrorEpoch:
    """The earliest epoch whose dev metric is within one standard error of the best epoch's.

    ``score(iterate)`` returns the metric of each dev query (an array); an epoch's value is their
    mean. The standard error is that of the mean per-query difference between the best epoch and
    the candidate (paired over the same queries). Earlier epochs are the simpler models (closer to
    the start), so the rule departs from the start only as far as the dev set gives evidence for.
    Every offered iterate is kept until the end (the choice needs the whole curve).

    Parameters
    ----------
    score : callable
        ``score(iterate) -> ndarray`` of per-query dev values (higher is better).
    start : object, optional
        An iterate offered as epoch 0 before training (scored like the others).

    Attributes
    ----------
    epoch, iterate, value : the kept epoch, its iterate and its mean dev value
    curve, epochs : as ``BestEpoch``'s (means per epoch)

    Examples
    --------
    >>> curves = {0: [0.5, 0.5, 0.5, 0.5], 1: [0.6, 0.4, 0.6, 0.5], 2: [0.9, 0.8, 0.9, 0.9]}
    >>> best = OneStandardErrorEpoch(score=lambda e: curves[e])
    >>> for epoch in (0, 1, 2):
    ...     best.offer(epoch, epoch)
    >>> best.epoch                     # epoch 2 is clearly better than 0 and 1
    2
    >>> curves[2] = [0.7, 0.4, 0.5, 0.6]
    >>> best = OneStandardErrorEpoch(score=lambda e: curves[e])
    >>> for epoch in (0, 1, 2):
    ...     best.offer(epoch, epoch)
    >>> best.epoch                     # its gain of 0.05 is within one standard error (0.065): the start stays
    0
    """

    def __init__(self, score, start=None):
        self.score = score
        self._offered = []  # (epoch, iterate, per-query values)
        self._choice = None  # (epoch, iterate, value) once chosen; an offer clears it
        self.curve, self.epochs = [], []
        if start is not None:
            self.offer(0, start)

    def offer(self, epoch, iterate):
        """Score ``iterate``, the model after ``epoch``, and record it."""
        values = np.asarray(self.score(iterate), dtype=np.float64)
        self._offered.append((epoch, iterate, values))
        self._choice = None
        self.curve.append(float(values.mean()))
        self.epochs.append(epoch)

    def _kept(self):
        if self._choice is None:
            self._choice = self._choose()
        return self._choice

    def _choose(self):
        if not self._offered:
            return None, None, None
        means = np.array(self.curve)
        best = self._offered[int(np.argmax(means))][2]  # the first best on ties
        for (epoch, iterate, values), mean in zip(self._offered, means):
            gap = best - values
            se = gap.std(ddof=1) / np.sqrt(gap.size) if gap.size > 1 else 0.0
            if mean >= means.max() - se:
                return epoch, iterate, float(mean)
        raise AssertionError("the best epoch is within 0 of itself")  # unreachable: the best qualifies

    @property
    def epoch(self):
        return self._kept()[0]

    @property
    def iterate(self):
        return self._kept()[1]

    @property
    def value(self):
        return self._kept()[2]
