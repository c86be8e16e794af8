"""Long runs (issue 38.6): an iterative learner stops when an epoch (or a boosting round) leaves its model as it
found it, says so (``stop_reason_``, and ``structrank train``'s output), and keeps memory that does not grow with
its epochs (``learners.epochs.Curve``)."""

import warnings

import numpy as np
import pytest

from cli_checks import NO_OPEN_FILES
from structrank.cli import main
from structrank.data import make_ranking_dataset, write_letor
from structrank.data.dataset import RankingDataset
from structrank.errors import DegenerateDataWarning
from structrank.learners import (LambdaMARTRanker, LatentPerceptronRanker, McRank, PermutationCRFRanker,
                                 StructuredBoostingRanker)
from structrank.learners.epochs import Curve, SignificantGainEpoch, repeated_epochs

pytestmark = NO_OPEN_FILES


@pytest.fixture(scope="module")
def separable():
    """4 queries of 30 features: the perceptron stops updating after 172 epochs in order, 135 shuffled."""
    return make_ranking_dataset(n_queries=4, n_features=30, random_state=1)


@pytest.fixture(scope="module")
def dev():
    return make_ranking_dataset(n_queries=6, n_features=30, random_state=2)


# -- the perceptron ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("shuffle", [False, True])
def test_the_plain_perceptron_stops_at_the_epoch_that_changes_nothing_with_the_same_model(separable, dev, shuffle):
    long = LatentPerceptronRanker(max_epochs=10**8, average=False, shuffle=shuffle, random_state=0)
    long.fit(separable, eval_set=dev)
    stop = long.n_epochs_
    assert stop < 1000 and long.stop_reason_ == (f"stopped after epoch {stop} of 100000000: it left the weights as it "
                                                 "found them, so every later epoch would repeat it")
    # every later epoch repeats that one: the model, and the dev choice, of a fit that ends there
    short = LatentPerceptronRanker(max_epochs=stop, average=False, shuffle=shuffle, random_state=0)
    short.fit(separable, eval_set=dev)
    np.testing.assert_array_equal(long.coef_, short.coef_)
    assert long.best_epoch_ == short.best_epoch_ and short.stop_reason_ is None


@pytest.mark.parametrize("shuffle", [False, True])
def test_the_averaged_perceptron_computes_the_later_averages_in_closed_form(separable, shuffle):
    # after epoch t every epoch adds n copies of the last w (no update): the average after T epochs is
    # (t n avg_t + (T - t) n w) / (T n), which a fit of max_epochs = t gives both terms of
    stop = LatentPerceptronRanker(max_epochs=10**8, shuffle=shuffle, random_state=0).fit(separable).n_epochs_
    at_stop = LatentPerceptronRanker(max_epochs=stop, shuffle=shuffle, random_state=0).fit(separable).coef_
    last_w = LatentPerceptronRanker(max_epochs=stop, average=False, shuffle=shuffle, random_state=0).fit(separable).coef_
    for total in (stop + 1, 3 * stop, 10**8):
        model = LatentPerceptronRanker(max_epochs=total, shuffle=shuffle, random_state=0).fit(separable)
        assert model.n_epochs_ == stop and model.best_epoch_ == total
        expected = (stop * at_stop + (total - stop) * last_w) / total
        np.testing.assert_allclose(model.coef_, expected, rtol=1e-9, atol=1e-12 * np.abs(expected).max())


def test_with_a_dev_set_the_later_averages_are_scored_at_doubling_epochs(separable, dev):
    model = LatentPerceptronRanker(max_epochs=10**6, random_state=0).fit(separable, eval_set=dev)
    stop = model.n_epochs_
    assert model.dev_epochs_.tolist() == [*range(1, stop + 1), *repeated_epochs(stop, 10**6)]
    assert model.dev_curve_.shape == model.dev_epochs_.shape and model.best_epoch_ in model.dev_epochs_
    assert model.train_loss_epochs_.tolist() == model.dev_epochs_.tolist()


def test_a_perceptron_that_keeps_learning_runs_every_epoch_and_keeps_bounded_curves(monkeypatch):
    ds = make_ranking_dataset(n_queries=10, random_state=0)  # not separable: every epoch updates
    monkeypatch.setattr(Curve.__init__, "__defaults__", (16,))  # a curve of 16 points, not CURVE_POINTS
    model = LatentPerceptronRanker(max_epochs=300, random_state=0).fit(ds, eval_set=ds)
    assert model.n_epochs_ == 300 and model.stop_reason_ is None
    assert len(model.train_loss_curve_) <= 17 and len(model.dev_curve_) <= 17
    assert model.train_loss_epochs_[0] == 1 and model.train_loss_epochs_[-1] == 300
    assert model.best_epoch_ in range(1, 301)


# -- the permutation CRF, the network, boosted trees ---------------------------------------------------------


@pytest.mark.parametrize("objective", ["ml", "kl", "el"])
def test_the_crf_stops_at_an_epoch_that_moves_nothing(objective):
    ds = make_ranking_dataset(n_queries=6, random_state=0)
    flat = RankingDataset(ds.X, np.ones_like(ds.y), ds.qid)  # one level per query: every gradient at theta = 0 is 0
    with pytest.warns(DegenerateDataWarning, match="all-zero weights"):
        model = PermutationCRFRanker(objective=objective, max_epochs=10**8, skip_single_level=False).fit(flat)
    assert model.n_epochs_ == 1 and not np.any(model.coef_)
    assert model.stop_reason_ == ("stopped after epoch 1 of 100000000: no step of it moved the weights (every gradient "
                                  "it met was 0 or below the weights' precision)")
    learning = PermutationCRFRanker(objective=objective, max_epochs=3).fit(ds)  # a query that teaches: all epochs
    assert learning.n_epochs_ == 3 and learning.stop_reason_ is None and learning.objective_epochs_.tolist() == [1, 2, 3]


@pytest.mark.extra("torch")
def test_the_network_stops_at_an_epoch_whose_gradients_are_all_zero():
    from structrank.learners import MLPRanker

    ds = make_ranking_dataset(n_queries=6, random_state=0)
    longest = int(np.max(np.unique(ds.qid, return_counts=True)[1]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        # P@k with k past every list has no loss left, only the hinge's s . (c_hat - c_star), which is 0 once the
        # scores put every good document above every bad one: then the gradients are 0 and Adam's steps die out
        model = MLPRanker(loss="precision", epochs=10**6, loss_params={"k": longest}).fit(ds)
    stop = model.n_epochs_
    assert stop < 10**4 and model.stop_reason_ == (f"stopped after epoch {stop} of 1000000: no step of it moved the "
                                                   "network's parameters (the gradients were 0, or Adam's steps below "
                                                   "their precision)")


@pytest.mark.parametrize("make", [
    lambda: LambdaMARTRanker(n_estimators=10**6, min_child_samples=1000),
    lambda: McRank(n_estimators=10**6, min_child_samples=1000),
    lambda: StructuredBoostingRanker(loss="ndcg", n_estimators=10**6, min_child_samples=40),
], ids=["lambdamart", "mcrank", "gbrt-ndcg"])
def test_boosting_stops_at_the_first_round_that_adds_no_tree(make):
    ds = make_ranking_dataset(n_queries=10, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        model = make().fit(ds)
    rounds = model.n_epochs_
    assert rounds < 10**4 and model.stop_reason_ == (f"stopped after round {rounds} of 1000000: it added no tree "
                                                     "(LightGBM found no split), so every later round would do the same")
    assert model._booster().current_iteration() == rounds - 1  # the round that added nothing added no tree


def test_early_stopping_keeps_its_best_round_when_a_round_adds_nothing():
    ds = make_ranking_dataset(n_queries=10, random_state=0)
    vali = make_ranking_dataset(n_queries=5, random_state=3)
    model = StructuredBoostingRanker(loss="ndcg", n_estimators=10**6, min_child_samples=40,
                                     early_stopping_rounds=10**6).fit(ds, eval_set=vali)
    assert model.stop_reason_ is not None
    assert model.best_iteration_ == int(np.argmax(model.dev_curve_)) + 1  # the first best round on vali


# -- the pieces --------------------------------------------------------------------------------------------


def test_a_curve_keeps_at_most_its_limit_of_evenly_spaced_points_and_the_latest():
    curve = Curve(limit=8)
    for epoch in range(1, 10**5 + 1):
        curve.append(epoch, -epoch)
    assert len(curve) <= 9 and curve.epochs[0] == 1 and curve.epochs[-1] == 10**5
    assert np.unique(np.diff(curve.epochs[:-1])).size == 1  # every 2^j-th epoch
    assert curve.values == [-e for e in curve.epochs] and curve.last == -10**5


def test_repeated_epochs_double_their_distance_and_end_at_the_budget():
    assert repeated_epochs(10, 10) == [] and repeated_epochs(10, 11) == [11]
    later = repeated_epochs(3, 10**8)
    assert later[:4] == [4, 5, 7, 11] and later[-1] == 10**8 and len(later) == 28


def test_the_significance_rule_keeps_the_start_and_the_best_only():
    spread = 1 + 0.1 * np.arange(10)  # a gain on every one of 10 queries, growing with the epoch
    values = {0: np.full(10, 0.1), **{e: 0.1 + 0.01 * e * spread for e in range(1, 50)}}
    best = SignificantGainEpoch(score=lambda e: values[e], start=0)
    for epoch in range(1, 50):
        best.offer(epoch, epoch)
    assert best.epoch == 49 and best._first[0] == 0 and best._top[0] == 49 and not hasattr(best, "_offered")


# -- the command line ----------------------------------------------------------------------------------------


def test_train_says_why_it_stopped_before_max_epochs(separable, tmp_path, capsys):
    data = tmp_path / "sep.txt"
    write_letor(data, separable)
    assert main(["train", "lsp-ap", "--train", str(data), "--set", "max_epochs=100000000", "--set", "C=1",
                 "--out", str(tmp_path / "m.npz")]) == 0
    err = capsys.readouterr().err
    assert "stopped after epoch 172 of 100000000: it left the weights as it found them" in err, err
