"""BestEpoch: the dev-set choice of epoch (or round) the iterative learners share."""

import numpy as np

from structrank.learners.epochs import BestEpoch


def test_the_first_best_epoch_is_kept_and_every_epoch_is_on_the_curve():
    best = BestEpoch(score=lambda w: [0.2, 0.5, 0.5, 0.1][w])
    for epoch in range(4):
        best.offer(epoch + 1, epoch)
    assert (best.epoch, best.iterate) == (2, 1)            # ties keep the earlier epoch
    assert best.curve == [0.2, 0.5, 0.5, 0.1] and best.epochs == [1, 2, 3, 4]


def test_without_a_score_the_last_epoch_is_kept():
    best = BestEpoch()
    for epoch in (1, 2, 3):
        best.offer(epoch, epoch * 10)
    assert (best.epoch, best.iterate, best.curve) == (3, 30, [])


def test_a_start_stands_as_epoch_0_below_any_scored_epoch():
    start = np.zeros(2)
    best = BestEpoch(score=lambda w: -np.inf if w is None else float(w.sum()), start=start)
    assert (best.epoch, best.iterate) == (0, start)
    best.offer(1, None)                                      # scores -inf: the start stays
    assert best.epoch == 0 and best.curve == [-np.inf]
    best.offer(2, np.array([-5.0, 0.0]))                     # any finite value beats it
    assert best.epoch == 2
    first = BestEpoch(score=lambda w: -np.inf)              # without a start the first epoch is kept
    first.offer(1, "a")
    first.offer(2, "b")
    assert (first.epoch, first.iterate) == (1, "a")
