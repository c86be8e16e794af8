"""BestEpoch: the dev-set choice of epoch (or round) the iterative learners share."""

import numpy as np
import pytest

from structrank.learners.epochs import BestEpoch, OneStandardErrorEpoch, SignificantGainEpoch


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


def _paired_curves(gain_in_se, n=200, seed=0):
    """A start and one trained epoch whose per-query gain over it has mean ``gain_in_se`` standard errors."""
    rng = np.random.default_rng(seed)
    base = rng.random(n)
    noise = rng.normal(size=n)
    noise = (noise - noise.mean()) / noise.std(ddof=1)  # mean 0, standard error exactly 1 / sqrt(n)
    return {0: base, 1: base + 0.1 * (noise + gain_in_se / np.sqrt(n))}


@pytest.mark.parametrize("gain_in_se, kept", [(1.0, 0), (1.5, 0), (1.7, 1), (3.0, 1), (-2.0, 0)])  # one epoch: alpha
def test_significant_gain_departs_from_the_start_only_on_a_one_sided_paired_test(gain_in_se, kept):
    # t = gain_in_se exactly; one-sided p < 0.05 needs t > 1.653 at 199 degrees of freedom
    curves = _paired_curves(gain_in_se)
    best = SignificantGainEpoch(score=lambda e: curves[e], start=0)
    best.offer(1, 1)
    assert best.curve == [curves[0].mean(), curves[1].mean()] and best.epochs == [0, 1]
    assert (best.epoch, best.iterate) == (kept, kept) and best.value == best.curve[kept]


def test_significant_gain_tests_the_best_epoch_at_alpha_over_the_epochs_compared():
    curves = _paired_curves(2.4)           # t = 2.4 at 199 degrees of freedom: one-sided p = 0.0087
    below = {1: curves[1] - 0.001, 2: curves[0] + 0.0005}  # below the best: never chosen
    for n_others, alpha, kept in [(0, 0.05, 1), (4, 0.05, 1), (5, 0.05, 0), (0, 0.005, 0)]:
        best = SignificantGainEpoch(score=lambda e: curves[e] if e < 2 else below[e % 2 + 1], start=0, alpha=alpha)
        best.offer(1, 1)                   # the best epoch, then the others: 0.0087 against alpha / (1 + others)
        for epoch in range(2, 2 + n_others):
            best.offer(epoch, epoch)
        assert best.epoch == kept, (n_others, alpha)
    flat = SignificantGainEpoch(score=lambda e: np.full(5, 0.5 + 0.1 * e), start=0)  # the same gain everywhere
    flat.offer(1, 1)
    assert flat.epoch == 1
    even = SignificantGainEpoch(score=lambda e: np.full(5, 0.5), start=0)  # no gain at all
    even.offer(1, 1)
    assert even.epoch == 0


@pytest.mark.extra("torch")
def test_one_standard_error_epoch_of_an_mlp_is_on_its_curve():
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


@pytest.mark.extra("torch")
def test_an_mlp_started_at_the_linear_model_keeps_it_without_a_significant_gain():
    from structrank.data import make_ranking_dataset
    from structrank.learners import MLPRanker

    ds = make_ranking_dataset(n_queries=60, random_state=1)
    train, vali = ds.take_queries(range(40)), ds.take_queries(range(40, 60))
    fits = {rule: MLPRanker(loss="map", hidden_layer_sizes=(8,), init="linear", epochs=6, epoch_rule=rule,
                            random_state=0).fit(train, eval_set=vali) for rule in ("best", "significant")}
    start = MLPRanker(loss="map", hidden_layer_sizes=(8,), init="linear", epochs=0).fit(train, eval_set=vali)
    assert np.allclose(fits["best"].dev_curve_, fits["significant"].dev_curve_)  # the same training
    best, kept = fits["best"], fits["significant"]
    gain = best.dev_curve_[best.best_epoch_] - best.dev_curve_[0]
    assert best.best_epoch_ > 0 and 0 < gain < 0.01  # "best" leaves the start for a small gain on 20 queries
    assert kept.best_epoch_ == 0                       # which is no evidence: the linear start stays
    np.testing.assert_array_equal(kept.predict(vali.X), start.predict(vali.X))


def test_the_epoch_listener_hears_every_epoch_of_the_learners_that_train_by_epochs():
    """``epoch_progress`` (the command line's bar) hears each trained epoch with the learner's budget;
    the start (epoch 0) is not one, and outside the block nothing is told."""
    from structrank.data import make_ranking_dataset
    from structrank.learners import LatentPerceptronRanker, PermutationCRFRanker
    from structrank.learners.epochs import epoch_progress

    ds = make_ranking_dataset(n_queries=6, n_features=4, random_state=2)
    for model, budget in ((LatentPerceptronRanker(max_epochs=3), 3), (PermutationCRFRanker(max_epochs=2), 2)):
        heard = []
        with epoch_progress(lambda epoch, total: heard.append((epoch, total))):
            model.fit(ds, eval_set=ds)
        assert heard == [(e, budget) for e in range(1, budget + 1)], type(model).__name__
        model.fit(ds)
        assert len(heard) == budget  # no listener outside the block
    heard = []
    with epoch_progress(lambda epoch, total: heard.append((epoch, total))):
        for rule in (OneStandardErrorEpoch(score=lambda e: [e, 1.0], start=0, total=2),
                     SignificantGainEpoch(score=lambda e: [e, 1.0], start=0, total=2)):
            for epoch in (1, 2):
                rule.offer(epoch, epoch)
    assert heard == [(1, 2), (2, 2)] * 2
