"""BestEpoch: the dev-set choice of epoch (or round) the iterative learners share."""

import numpy as np
import pytest

from structrank.learners.epochs import BestEpoch, OneStandardErrorEpoch


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


def test_one_standard_error_keeps_the_earliest_epoch_close_to_the_best():
    rng = np.random.default_rng(0)
    base = rng.random(200)
    noise = rng.normal(size=200)
    noise = (noise - noise.mean()) / noise.std(ddof=1)
    curves = {0: base, 1: base + 0.001 * noise, 2: base + 0.05, 3: base + 0.051 + 0.03 * noise}  # 3 - 2: SE 0.0021
    best = OneStandardErrorEpoch(score=lambda e: curves[e], start=0)
    for epoch in (1, 2, 3):
        best.offer(epoch, epoch)
    assert best.epochs == [0, 1, 2, 3] and np.allclose(best.curve, [curves[e].mean() for e in range(4)])
    assert (best.epoch, best.iterate) == (2, 2)    # 3 is the best; 2 is 0.001 below it, within one SE
    assert best.value == best.curve[2]
    noisy = {0: base, 1: base + rng.normal(scale=0.3, size=200)}  # a gain well inside the noise
    noisy[1] += 0.5 * noisy[1].std() / np.sqrt(200)
    kept = OneStandardErrorEpoch(score=lambda e: noisy[e], start=0)
    kept.offer(1, 1)
    assert kept.curve[1] > kept.curve[0] and kept.epoch == 0  # the best by mean, but not by one standard error


def test_one_standard_error_epoch_of_an_mlp_is_on_its_curve():
    pytest.importorskip("torch", reason="MLPRanker trains with the optional torch extra, not installed here")
    from structrank.data import make_ranking_dataset
    from structrank.learners import MLPRanker

    ds = make_ranking_dataset(n_queries=60, random_state=1)
    train, vali = ds.take_queries(range(40)), ds.take_queries(range(40, 60))
    fits = {rule: MLPRanker(loss="map", hidden_layer_sizes=(8,), epochs=6, epoch_rule=rule, random_state=0)
            .fit(train, eval_set=vali) for rule in ("best", "one-se")}
    best, one_se = fits["best"], fits["one-se"]
    assert np.allclose(best.dev_curve_, one_se.dev_curve_)      # the same training, two choices
    assert one_se.best_epoch_ <= best.best_epoch_
    assert np.isclose(one_se.score(vali), one_se.dev_curve_[one_se.best_epoch_ - 1])
