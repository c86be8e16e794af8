"""Choosing the epoch (or boosting round) on a dev set: the one loop the iterative learners share.

A learner that trains epoch by epoch offers each epoch's iterate to a ``BestEpoch``; with a dev
metric it keeps the iterate of the first epoch with the highest value (Collins & Koo's and
Haponchyk & Moschitti's number of iterations tuned on dev data), without one the last.
``OneStandardErrorEpoch`` keeps instead the earliest epoch within one standard error of the best
(the "one-standard-error rule" of Breiman et al. 1984 and Hastie et al., ESL 7.10): where many
epochs are compared on a small dev set, the best of them wins partly by the dev set's noise.
``SignificantGainEpoch`` keeps the start (epoch 0) unless the best epoch beats it by a paired
test over the dev queries: a learner started at a simpler model (the MLP at the linear learner)
departs from it only on evidence.

Progress: every epoch offered (epoch >= 1) is also told to the listener of ``epoch_progress``, if
one is listening in this thread's context, as ``listener(epoch, total)``: the command line draws
its bar from it, and the learners know nothing of bars (they pass their epoch budget as ``total``).
"""

from __future__ import annotations

import contextlib
import contextvars

import numpy as np

_LISTENER = contextvars.ContextVar("structrank_epoch_listener", default=None)


@contextlib.contextmanager
def epoch_progress(listener):
    """Within this block, ``listener(epoch, total)`` is called after each epoch of any learner that
    trains epoch by epoch (``total``: its epoch budget, None when it has none)."""
    token = _LISTENER.set(listener)
    try:
        yield
    finally:
        _LISTENER.reset(token)


def _epoch_done(epoch, total):
    listener = _LISTENER.get()
    if listener is not None and epoch >= 1:  # epoch 0 is the start, trained by nobody
        listener(epoch, total)


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
    total : int, optional
        The learner's epoch budget, told to the ``epoch_progress`` listener with each epoch.

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

    def __init__(self, score=None, start=None, total=None):
        self.score = score
        self.total = total
        self.epoch, self.iterate, self.value = (None, None, None) if start is None else (0, start, -np.inf)
        self.curve, self.epochs = [], []

    def offer(self, epoch, iterate):
        """Score ``iterate``, the model after ``epoch``, and keep it if it is the best so far (ties: the earlier)."""
        _epoch_done(epoch, self.total)
        if self.score is None:
            self.epoch, self.iterate = epoch, iterate
            return
        value = self.score(iterate)
        self.curve.append(value)
        self.epochs.append(epoch)
        if self.epoch is None or value > self.value:
            self.epoch, self.iterate, self.value = epoch, iterate, value


class _ChosenAtTheEnd:
    """Offered iterates, each with its per-query dev values, kept until the choice (which needs the
    whole curve); subclasses say which epoch ``_choose`` keeps."""

    def __init__(self, score, start=None, total=None):
        self.score = score
        self.total = total
        self._offered = []  # (epoch, iterate, per-query values)
        self._choice = None  # (epoch, iterate, value) once chosen; an offer clears it
        self.curve, self.epochs = [], []
        if start is not None:
            self.offer(0, start)

    def offer(self, epoch, iterate):
        """Score ``iterate``, the model after ``epoch``, and record it."""
        _epoch_done(epoch, self.total)
        values = np.asarray(self.score(iterate), dtype=np.float64)
        self._offered.append((epoch, iterate, values))
        self._choice = None
        self.curve.append(float(values.mean()))
        self.epochs.append(epoch)

    def _kept(self):
        if self._choice is None:
            self._choice = self._choose() if self._offered else (None, None, None)
        return self._choice

    def _choose(self):
        raise NotImplementedError

    def _best(self):
        """(epoch, iterate, per-query values) of the first epoch with the highest mean."""
        return self._offered[int(np.argmax(self.curve))]

    @property
    def epoch(self):
        return self._kept()[0]

    @property
    def iterate(self):
        return self._kept()[1]

    @property
    def value(self):
        return self._kept()[2]


class OneStandardErrorEpoch(_ChosenAtTheEnd):
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
    total : int, optional
        The learner's epoch budget (as ``BestEpoch``'s).

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

    def _choose(self):
        means = np.array(self.curve)
        best = self._best()[2]
        for (epoch, iterate, values), mean in zip(self._offered, means):
            gap = best - values
            se = gap.std(ddof=1) / np.sqrt(gap.size) if gap.size > 1 else 0.0
            if mean >= means.max() - se:
                return epoch, iterate, float(mean)
        raise AssertionError("the best epoch is within 0 of itself")  # unreachable: the best qualifies


class SignificantGainEpoch(_ChosenAtTheEnd):
    """The best epoch if it beats the first offered (the start) by a one-sided paired t-test over the
    dev queries at level ``alpha`` divided by the number of epochs compared with the start
    (Bonferroni); the start otherwise.

    Why: a learner started at a simpler model that is already good (the MLP at the linear learner
    of its loss) should depart from it only where the dev set gives evidence that the departure
    helps; the best of many epochs beats the start on a small dev set by noise alone about as often
    as not. The best epoch is the largest of E gains, so it is tested at ``alpha / E``: the chance
    that noise alone moves the learner off its start is then at most ``alpha`` (the bound holds for
    any dependence between the epochs). It never keeps an epoch whose mean is below the start's.

    Parameters
    ----------
    score : callable
        ``score(iterate) -> ndarray`` of per-query dev values (higher is better).
    start : object, optional
        An iterate offered as epoch 0 before training; without it the first offered is the start.
    alpha : float, default 0.05

    Examples
    --------
    >>> curves = {0: [0.5, 0.5, 0.5, 0.5], 1: [0.6, 0.4, 0.6, 0.5], 2: [0.9, 0.8, 0.9, 0.9]}
    >>> best = SignificantGainEpoch(score=lambda e: curves[e], start=0)
    >>> for epoch in (1, 2):
    ...     best.offer(epoch, epoch)
    >>> best.epoch                     # epoch 2 beats the start on every query: p = 0.0006 < 0.05 / 2
    2
    >>> curves[2] = [0.7, 0.4, 0.5, 0.6]
    >>> best = SignificantGainEpoch(score=lambda e: curves[e], start=0)
    >>> for epoch in (1, 2):
    ...     best.offer(epoch, epoch)
    >>> best.epoch                     # a gain of 0.05 over 4 queries, p = 0.25 > 0.05 / 2: the start stays
    0
    """

    def __init__(self, score, start=None, alpha=0.05, total=None):
        self.alpha = alpha
        super().__init__(score, start, total)

    def _choose(self):
        # deferred: SciPy's t distribution, needed once per fit
        from scipy import stats

        epoch, iterate, values = self._best()
        first = self._offered[0]
        gain = values - first[2]
        if gain.size > 1 and gain.std() > 0:
            p = float(stats.ttest_1samp(gain, 0.0, alternative="greater").pvalue)
        else:  # one query, or the same gain on every query: a positive gain is certain, none is not a gain
            p = 0.0 if gain.mean() > 0 else 1.0
        compared = max(len(self._offered) - 1, 1)  # the epochs after the start, each a chance for noise
        kept = (epoch, iterate) if p < self.alpha / compared else first[:2]
        return (*kept, float(self.curve[self.epochs.index(kept[0])]))
