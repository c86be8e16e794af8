"""Latent structured perceptron (Alg. 1) and latent structural SVM (CCCP) for MAP."""

from __future__ import annotations

import numpy as np
import pytest

from structrank.data import make_ranking_dataset
from structrank.data.dataset import group_offsets
from structrank.learners import LatentPerceptronRanker, LatentSSVMRanker
from structrank.learners.registry import get_model, select_on_vali
from structrank.model_io import load_model, save_model
from structrank.losses.map import PositionalAPLoss


@pytest.fixture(scope="module")
def splits():
    full = make_ranking_dataset(n_queries=160, random_state=0)  # one generating model for all three
    return full.take_queries(np.arange(80)), full.take_queries(np.arange(80, 120)), full.take_queries(np.arange(120, 160))


def reference_perceptron(X, y, qid, inference, C, epochs):
    """Alg. 1 written plainly with the oracle objects: the averaged weights after each epoch."""
    offsets, _ = group_offsets(qid)
    loss = PositionalAPLoss(inference, scale=C)
    w = np.zeros(X.shape[1])
    total = np.zeros(X.shape[1])
    t = 0
    out = []
    for _ in range(epochs):
        for q in range(len(offsets) - 1):
            a, b = offsets[q], offsets[q + 1]
            z = y[a:b] >= 1
            if z.all() or not z.any():
                continue  # not an example: it cannot be ranked wrongly
            s = X[a:b] @ w
            found = loss.oracle(s, y[a:b])
            if found.loss > 0:
                star = PositionalAPLoss(inference).star(s, y[a:b], [0, b - a])
                w = w + X[a:b].T @ (star - found.coef)
            total += w
            t += 1
        out.append(total / t)
    return out


@pytest.mark.parametrize("inference", ["none", "greedy", "exact"])
def test_perceptron_equals_a_plain_implementation_of_alg_1(splits, inference):
    train = splits[0]
    X = np.asarray(train.X.toarray() if hasattr(train.X, "toarray") else train.X, dtype=np.float64)
    expected = reference_perceptron(X, train.y, train.qid, inference, 5.0, 4)
    for epochs in (1, 4):
        model = LatentPerceptronRanker(inference=inference, C=5.0, max_epochs=epochs).fit(train)
        assert np.allclose(model.coef_, expected[epochs - 1], rtol=1e-10, atol=1e-12)
        assert model.best_epoch_ == epochs and model.train_loss_curve_.shape == (epochs,)


def test_perceptron_chooses_the_epoch_on_dev(splits):
    train, dev, _ = splits
    model = LatentPerceptronRanker(C=10.0, max_epochs=12).fit(train, eval_set=dev)
    assert model.dev_curve_.shape == (12,)
    assert model.best_epoch_ == int(np.argmax(model.dev_curve_)) + 1
    again = LatentPerceptronRanker(C=10.0, max_epochs=model.best_epoch_).fit(train)
    assert np.allclose(again.coef_, model.coef_)  # the kept weights are that epoch's average
    assert model.score(dev) == pytest.approx(model.dev_curve_.max())
    # eval_set also as a tuple
    tupled = LatentPerceptronRanker(C=10.0, max_epochs=12).fit(train, eval_set=(dev.X, dev.y, dev.qid))
    assert np.allclose(tupled.dev_curve_, model.dev_curve_)


def test_learners_rank_held_out_data_well(splits):
    train, dev, test = splits
    rng = np.random.default_rng(0)
    chance = np.mean([_score_of(rng.normal(size=test.n_rows), test) for _ in range(5)])
    for model in (LatentPerceptronRanker(C=10.0, max_epochs=20).fit(train, eval_set=dev),
                  LatentPerceptronRanker(inference="exact", C=10.0, max_epochs=20).fit(train, eval_set=dev),
                  LatentSSVMRanker(C=10.0).fit(train), LatentSSVMRanker(inference="exact", C=10.0).fit(train)):
        assert model.score(test) > chance + 0.05


def _score_of(scores, ds):
    from structrank.metrics import evaluate

    return evaluate(ds.y, scores, ds.qid, ["map"], "letor4").metrics["map"]


def test_cccp_with_exact_inference_and_all_positions_decreases_eq_4(splits):
    model = LatentSSVMRanker(inference="exact", C=10.0, positions="all", tol=1e-7, outer_tol=0.0, max_outer=8)
    model.fit(splits[0])
    history = model.objective_history_
    assert history.size >= 2
    # CCCP's monotone decrease (up to the inner solver's tolerance, scaled by C)
    assert np.all(np.diff(history) <= 10.0 * 1e-6)


def test_lssvm_stops_and_keeps_its_best_iterate(splits):
    model = LatentSSVMRanker(C=10.0).fit(splits[0])
    assert model.converged_ and 1 <= model.n_outer_ <= 30
    assert np.isfinite(model.coef_).all()


def test_models_save_and_load(tmp_path, splits):
    train, dev, test = splits
    for model in (LatentPerceptronRanker(max_epochs=3).fit(train, eval_set=dev), LatentSSVMRanker(C=1.0).fit(train)):
        path = tmp_path / f"{type(model).__name__}.npz"
        save_model(model, path)
        loaded = load_model(path)
        assert np.array_equal(loaded.predict(test.X), model.predict(test.X))
        assert loaded.get_params() == model.get_params()


def test_cli_models_choose_on_vali(splits):
    train, dev, _ = splits
    for name in ("lsp", "lsp-ap", "lsp-ap-exact", "lssvm-ap", "lssvm-ap-exact"):
        spec = get_model(name)
        grid = {"C": [1.0, 10.0]} if "C" in spec.grid else {}
        fixed = {"max_epochs": 5} if spec.fit_with_vali else {}
        model, params, value = select_on_vali(spec, train, dev, fixed, grid=grid)
        assert 0.0 < value <= 1.0
        if spec.fit_with_vali:
            assert model.dev_curve_.shape == (5,)


def test_bad_parameters_and_data(splits):
    train, dev, _ = splits
    with pytest.raises(ValueError, match="inference"):
        LatentPerceptronRanker(inference="beam").fit(train)
    with pytest.raises(ValueError, match="max_epochs"):
        LatentPerceptronRanker(max_epochs=0).fit(train)
    with pytest.raises(ValueError, match="inference"):
        LatentSSVMRanker(inference="none").fit(train)
    with pytest.raises(Exception, match="eval_set"):
        LatentPerceptronRanker(max_epochs=1).fit(train, eval_set=[1, 2])
    only_bad = make_ranking_dataset(n_queries=5, random_state=3)
    with pytest.raises(ValueError, match="nothing to learn"):
        LatentPerceptronRanker().fit(only_bad.X, np.zeros(only_bad.n_rows), qid=only_bad.qid)


def _eq4_by_brute_force(w, data, C, slack):
    """Eq. 4 at w from its definition: every permutation of each query, AP from its formula."""
    from test_positional import brute_values, permutations

    from structrank.feature_maps import positional_weights

    total, n = 0.0, 0
    for q in np.unique(data.qid):
        rows = data.qid == q
        s, z = np.asarray(data.X[rows] @ w, dtype=np.float64), (data.y[rows] >= 1).astype(np.int64)
        if z.all() or not z.any():
            continue  # not in Eq. 4's sum: no ranking of it is wrong
        v = positional_weights(len(s), "harmonic")
        worth = (s[permutations(len(s))] * v[None, :]).sum(axis=1)
        correct = np.all(np.diff(z[permutations(len(s))], axis=1) <= 0, axis=1)  # good ones above bad ones
        total += brute_values(s, z, v, 1.0).max() - worth[correct].max()
        n += 1
    return 0.5 * w @ w + C * (total if slack == "sum" else total / n)


def test_eq4_sum_is_the_mean_with_c_times_the_queries_and_matches_its_definition():
    """Eq. 4 as printed sums the slacks (``slack="sum"``); ours takes their mean. The same problem:
    the sum with C is the mean with C |Q|, and each one's objective is Eq. 4 computed by brute force."""
    data = make_ranking_dataset(n_queries=30, docs_per_query=(3, 6), random_state=4)
    common = {"inference": "exact", "positions": "all", "tol": 1e-8, "outer_tol": 0.0, "max_outer": 6}
    summed = LatentSSVMRanker(C=2.0, slack="sum", **common).fit(data)
    n_queries = summed.n_queries_used_
    assert 20 <= n_queries < 30  # some queries hold one relevance level only and are left out of |Q|
    mean = LatentSSVMRanker(C=2.0 * n_queries, slack="mean", **common).fit(data)
    np.testing.assert_allclose(summed.coef_, mean.coef_, atol=1e-6)
    np.testing.assert_allclose(summed.objective_history_, mean.objective_history_, atol=1e-6)
    for model, C, slack in ((summed, 2.0, "sum"), (mean, 2.0 * n_queries, "mean")):
        assert _eq4_by_brute_force(model.coef_, data, C, slack) == pytest.approx(model.objective_history_.min(), abs=1e-6)
    # and the conventions differ at one C: the sum weighs the slacks |Q| times more
    small = LatentSSVMRanker(C=2.0, slack="mean", **common).fit(data)
    assert small.coef_ @ small.coef_ < 0.5 * (summed.coef_ @ summed.coef_)
    with pytest.raises(ValueError, match="slack"):
        LatentSSVMRanker(slack="total").fit(data)
