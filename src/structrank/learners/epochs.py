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

A curve (``Curve``) holds at most ``CURVE_POINTS`` points: past that it keeps every second epoch, then
every fourth, ..., and always the latest, so that a run of 10^8 epochs does not grow with its epochs.
``repeated_epochs`` lists the epochs at which a learner whose epoch came back to its start (so that
every later epoch repeats it) still offers its averaged iterate.

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


#: the most points a ``Curve`` holds (a learner's dev and training curves: 16 bytes a point, its epoch and value)
CURVE_POINTS = 10_000


class Curve:
    """(epoch, value) points of a learning curve, at most ``limit`` of them: when full, every second point
    is dropped and from then on only every second epoch offered is recorded (then every fourth, ...); the
    latest point offered is always there. So a curve costs the same memory after 10^8 epochs as after
    ``limit``, and reads as a plot of the whole run.

    Examples
    --------
    >>> curve = Curve(limit=4)
    >>> for epoch in range(1, 11):
    ...     curve.append(epoch, 10 * epoch)
    >>> curve.epochs, curve.values     # epochs 1, 5, 9 (every fourth) and the latest, 10
    ([1, 5, 9, 10], [10, 50, 90, 100])
    """

    def __init__(self, limit=CURVE_POINTS):
        self.limit = max(int(limit), 2)
        self._epochs, self._values = [], []
        self._stride, self._offered, self._last = 1, 0, None

    def append(self, epoch, value):
        if self._offered % self._stride == 0:
            if len(self._epochs) == self.limit:  # thin: keep the points at even multiples of the stride
                del self._epochs[1::2], self._values[1::2]
                self._stride *= 2
            if self._offered % self._stride == 0:
                self._epochs.append(epoch)
                self._values.append(value)
        self._offered += 1
        self._last = (epoch, value)

    def _with_last(self, i):
        points = [self._epochs, self._values][i]
        if self._last is not None and (not self._epochs or self._epochs[-1] != self._last[0]):
            return [*points, self._last[i]]
        return list(points)

    @property
    def epochs(self) -> list:
        return self._with_last(0)

    @property
    def values(self) -> list:
        return self._with_last(1)

    @property
    def last(self):
        """The latest value appended (None before any)."""
        return None if self._last is None else self._last[1]

    def __len__(self):
        return len(self.epochs)


def repeated_epochs(epoch, total):
    """The epochs after ``epoch`` (up to ``total``) at which a learner whose ``epoch`` ended where it began
    still offers an iterate: every later epoch repeats it, so its plain iterate stays the same and its
    average moves along a straight line towards the repeated epoch's mean, ever more slowly. Offered:
    ``epoch + 1, epoch + 2, epoch + 4, ...`` and ``total`` (about log2 of the remaining epochs).

    >>> repeated_epochs(3, 20)
    [4, 5, 7, 11, 19, 20]
    >>> repeated_epochs(5, 5)
    []
    """
    out, step = [], 1
    while epoch + step < total:
        out.append(epoch + step)
        step *= 2
    return out + ([total] if total > epoch else [])


class _Scored:
    """``curve`` and ``epochs`` of the dev values offered (``self._curve``, a ``Curve``)."""

    @property
    def curve(self) -> list:
        return self._curve.values

    @property
    def epochs(self) -> list:
        return self._curve.epochs

    def keep(self, estimator) -> None:
        """Set the fitted ``estimator``'s ``best_epoch_`` (the epoch kept), ``dev_curve_`` and ``dev_epochs_``."""
        estimator.best_epoch_ = None if self.epoch is None else int(self.epoch)
        estimator.dev_curve_, estimator.dev_epochs_ = np.array(self.curve), np.array(self.epochs, dtype=np.int64)


class BestEpoch(_Scored):
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
        The dev metric of each epoch offered, in order (empty without ``score``; a ``Curve``'s points:
        thinned past ``CURVE_POINTS`` epochs).
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
        self._curve = Curve()

    def offer(self, epoch, iterate):
        """Score ``iterate``, the model after ``epoch``, and keep it if it is the best so far (ties: the earlier)."""
        _epoch_done(epoch, self.total)
        if self.score is None:
            self.epoch, self.iterate = epoch, iterate
            return
        value = self.score(iterate)
        self._curve.append(epoch, value)
        if self.epoch is None or value > self.value:
            self.epoch, self.iterate, self.value = epoch, iterate, value


class _ChosenAtTheEnd(_Scored):
    """Offered iterates, each with its per-query dev values, recorded (``_record``) until the choice, which
    needs the whole curve; subclasses say what they keep and which epoch ``_choose`` keeps."""

    def __init__(self, score, start=None, total=None):
        self.score = score
        self.total = total
        self._choice = None  # (epoch, iterate, value) once chosen; an offer clears it
        self._curve = Curve()
        if start is not None:
            self.offer(0, start)

    def offer(self, epoch, iterate):
        """Score ``iterate``, the model after ``epoch``, and record it."""
        _epoch_done(epoch, self.total)
        values = np.asarray(self.score(iterate), dtype=np.float64)
        self._record(epoch, iterate, values)
        self._choice = None
        self._curve.append(epoch, float(values.mean()))

    def _record(self, epoch, iterate, values):
        raise NotImplementedError

    @property
    def _any(self) -> bool:
        raise NotImplementedError

    def _kept(self):
        if self._choice is None:
            self._choice = self._choose() if self._any else (None, None, None)
        return self._choice

    def _choose(self):
        raise NotImplementedError

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

    def __init__(self, score, start=None, total=None):
        self._offered = []  # (epoch, iterate, per-query values): the choice compares every epoch with the best
        super().__init__(score, start, total)

    def _record(self, epoch, iterate, values):
        self._offered.append((epoch, iterate, values))

    @property
    def _any(self):
        return bool(self._offered)

    def _choose(self):
        means = np.array([values.mean() for _, _, values in self._offered])
        best = self._offered[int(np.argmax(means))][2]
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
        # the start and the first epoch with the highest mean, (epoch, iterate, per-query values), and how many
        # epochs were offered: all the choice needs, so memory does not grow with the epochs
        self._first = self._top = None
        self._count = 0
        super().__init__(score, start, total)

    def _record(self, epoch, iterate, values):
        self._count += 1
        if self._first is None:
            self._first = (epoch, iterate, values)
        if self._top is None or values.mean() > self._top[2].mean():
            self._top = (epoch, iterate, values)

    @property
    def _any(self):
        return self._count > 0

    def _choose(self):
        # deferred: SciPy's t distribution, needed once per fit
        from scipy import stats

        epoch, iterate, values = self._top
        first = self._first
        gain = values - first[2]
        if gain.size > 1 and gain.std() > 0:
            p = float(stats.ttest_1samp(gain, 0.0, alternative="greater").pvalue)
        else:  # one query, or the same gain on every query: a positive gain is certain, none is not a gain
            p = 0.0 if gain.mean() > 0 else 1.0
        compared = max(self._count - 1, 1)  # the epochs after the start, each a chance for noise
        kept = (epoch, iterate, values) if p < self.alpha / compared else first
        return kept[0], kept[1], float(kept[2].mean())
