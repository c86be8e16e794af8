"""The baseline rankers and their scikit-learn integration (metadata routing, QueryKFold, scorers)."""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, cross_val_score

from structrank.data import RankingDataset, make_ranking_dataset
from structrank.errors import DataValidationError
from structrank.learners import LinearRegressionRanker, PolySVCRanker, RankSVM, preference_pairs
from structrank.learners.registry import ranker_class, ranker_classes
from structrank.metrics import evaluate
from structrank.model_selection import QueryKFold, ranking_scorer

RANKERS = [LinearRegressionRanker, RankSVM]


@pytest.fixture(scope="module")
def ds():
    return make_ranking_dataset(n_queries=45, n_features=8, random_state=0)


@pytest.fixture(scope="module")
def split():
    """Train and held-out queries drawn from one hidden model (one seed, split by query).

    Two calls of make_ranking_dataset with different seeds draw different hidden weight
    vectors, so a model fitted on one cannot rank the other: held-out data must come from
    the same call.
    """
    full = make_ranking_dataset(n_queries=120, n_features=10, random_state=11)
    return full.take_queries(np.arange(80)), full.take_queries(np.arange(80, 120))


def grouped_by_first_appearance(qid):
    """Row order that groups queries (by first appearance) and keeps each query's rows in order."""
    first = {}
    for i, q in enumerate(qid):
        first.setdefault(q, i)
    return np.array(sorted(range(len(qid)), key=lambda i: (first[qid[i]], i)))


# -- fitting and predicting ------------------------------------------------------------------


@pytest.mark.parametrize("cls", RANKERS)
def test_fit_on_arrays_and_on_dataset_give_identical_coef(cls, ds):
    a = cls().fit(ds.X, ds.y, qid=ds.qid)
    b = cls().fit(ds)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.coef_.shape == (ds.n_features,)
    assert a.n_features_in_ == ds.n_features
    assert np.all(np.isfinite(a.coef_)) and np.any(a.coef_ != 0)


@pytest.mark.parametrize("cls", RANKERS)
def test_fit_with_dataset_and_arrays_together_is_refused(cls, ds):
    with pytest.raises(DataValidationError, match="either a RankingDataset or"):
        cls().fit(ds, ds.y)


@pytest.mark.parametrize("cls", RANKERS)
def test_predict_gives_one_score_per_row(cls, ds, split):
    model = cls().fit(ds)
    scores = model.predict(ds.X)
    assert scores.shape == (ds.n_rows,)
    assert scores.dtype == np.float64 and np.all(np.isfinite(scores))
    np.testing.assert_allclose(scores, ds.X @ model.coef_ + model.intercept_)
    np.testing.assert_array_equal(model.predict(ds), scores)
    np.testing.assert_array_equal(model.decision_function(ds.X), scores)
    # other rows, another count
    other = make_ranking_dataset(n_queries=3, docs_per_query=4, n_features=8, random_state=3)
    assert model.predict(other.X).shape == (12,)


@pytest.mark.parametrize("cls", RANKERS)
def test_predict_checks_the_feature_count(cls, ds):
    model = cls().fit(ds)
    with pytest.raises(ValueError, match="features"):
        model.predict(np.zeros((3, ds.n_features + 1)))


@pytest.mark.parametrize("cls", RANKERS)
def test_predict_before_fit_raises_not_fitted(cls, ds):
    with pytest.raises(sklearn.exceptions.NotFittedError):
        cls().predict(ds.X)


@pytest.mark.parametrize("cls", RANKERS)
def test_noncontiguous_qids_give_the_same_model_as_the_grouped_rows(cls, ds):
    rng = np.random.default_rng(4)
    shuffled = rng.permutation(ds.n_rows)
    X, y, qid = ds.X[shuffled], ds.y[shuffled], ds.qid[shuffled]
    assert np.any(qid[1:] != qid[:-1])  # really interleaved: some query appears in several runs
    runs = qid[np.r_[True, qid[1:] != qid[:-1]]]
    assert len(runs) > len(set(runs))
    order = grouped_by_first_appearance(qid)
    a = cls().fit(X, y, qid=qid)
    b = cls().fit(X[order], y[order], qid=qid[order])
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.intercept_ == b.intercept_


@pytest.mark.parametrize("cls", RANKERS)
def test_sparse_csr_input_gives_the_same_coef_as_dense(cls):
    data = make_ranking_dataset(n_queries=40, n_features=12, sparse=True, random_state=5)
    assert sp.issparse(data.X)
    a = cls().fit(data.X, data.y, qid=data.qid)
    b = cls().fit(data.X.toarray(), data.y, qid=data.qid)
    scale = np.max(np.abs(b.coef_))
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-6, atol=1e-5 * scale)
    np.testing.assert_allclose(a.predict(data.X), b.predict(data.X.toarray()), rtol=1e-6, atol=1e-5 * scale)


@pytest.mark.parametrize("cls", RANKERS)
def test_fit_without_qid_names_metadata_routing(cls, ds):
    with pytest.raises(DataValidationError, match="metadata routing") as info:
        cls().fit(ds.X, ds.y)
    assert "qid" in str(info.value)
    assert "enable_metadata_routing=True" in str(info.value)


@pytest.mark.parametrize("cls", RANKERS)
def test_fit_without_labels_is_refused(cls, ds):
    with pytest.raises(DataValidationError, match="labels"):
        cls().fit(ds.X, qid=ds.qid)


@pytest.mark.parametrize("cls", RANKERS)
def test_fit_with_misaligned_qid_is_refused(cls, ds):
    with pytest.raises(DataValidationError, match="one entry per row"):
        cls().fit(ds.X, ds.y, qid=ds.qid[:-1])


def test_ranksvm_without_any_preference_pair_says_so():
    with pytest.raises(ValueError, match="nothing to learn"):
        RankSVM().fit(np.eye(4), np.array([1, 1, 0, 0]), qid=np.array([1, 1, 2, 2]))


@pytest.mark.parametrize("cls", RANKERS)
def test_rankers_beat_random_scores_on_held_out_queries(cls, split):
    train, test = split
    model = cls().fit(train)
    learned = evaluate(test.y, model.predict(test.X), test.qid, ["map", "ndcg@10"], "letor4").metrics
    rng = np.random.default_rng(0)
    random_runs = [
        evaluate(test.y, rng.random(test.n_rows), test.qid, ["map", "ndcg@10"], "letor4").metrics for _ in range(20)
    ]
    for metric in ("map", "ndcg@10"):
        random_mean = np.mean([r[metric] for r in random_runs])
        random_best = max(r[metric] for r in random_runs)
        assert learned[metric] > random_mean + 0.15, (metric, learned[metric], random_mean)
        assert learned[metric] > random_best + 0.05, (metric, learned[metric], random_best)


# -- preference pairs --------------------------------------------------------------------------


def brute_force_pairs(y, qid):
    return {
        (i, j)
        for i, j in itertools.product(range(len(y)), repeat=2)
        if qid[i] == qid[j] and y[i] > y[j]
    }


TINY_Y = np.array([2, 0, 1, 1, 0, 3, 3, 0, 0, 0, 1])
TINY_QID = np.array([1, 1, 1, 1, 2, 2, 2, 3, 3, 4, 4])


def test_preference_pairs_are_exactly_the_better_worse_pairs_of_each_query():
    ds = RankingDataset(np.zeros((len(TINY_Y), 1)), TINY_Y, TINY_QID)
    better, worse = preference_pairs(ds.y, ds.offsets)
    got = list(zip(better.tolist(), worse.tolist()))
    assert len(got) == len(set(got))  # no duplicates
    assert set(got) == brute_force_pairs(TINY_Y, TINY_QID)
    assert better.dtype == worse.dtype == np.int64


def test_preference_pairs_sampling_keeps_a_seeded_subset():
    y = np.array([0, 1, 2, 3, 4, 0, 1, 2])
    qid = np.array([1, 1, 1, 1, 1, 2, 2, 2])
    offsets = RankingDataset(np.zeros((8, 1)), y, qid).offsets
    everything = brute_force_pairs(y, qid)
    b1, w1 = preference_pairs(y, offsets, max_pairs_per_query=4, random_state=1)
    b2, w2 = preference_pairs(y, offsets, max_pairs_per_query=4, random_state=1)
    np.testing.assert_array_equal(b1, b2)
    np.testing.assert_array_equal(w1, w2)
    sampled = set(zip(b1.tolist(), w1.tolist()))
    assert sampled <= everything
    # query 1 has 10 pairs (sampled down to 4), query 2 has 3 (all kept)
    assert len(b1) == 4 + 3
    assert {(i, j) for i, j in everything if i >= 5} <= sampled


def test_ranksvm_orders_every_brute_force_pair_on_a_tiny_separable_example():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(len(TINY_Y), 3))
    # features that make the labels exactly linearly rankable: column 0 is the label itself
    X[:, 0] = TINY_Y + 0.1 * rng.random(len(TINY_Y))
    model = RankSVM(C=10.0).fit(X, TINY_Y, qid=TINY_QID)
    pairs = brute_force_pairs(TINY_Y, TINY_QID)
    assert model.n_pairs_ == len(pairs)
    scores = model.predict(X)
    wrong = [(i, j) for i, j in pairs if not scores[i] > scores[j]]
    assert wrong == []


# -- score ----------------------------------------------------------------------------------


@pytest.mark.parametrize("cls", RANKERS)
def test_score_is_ndcg10_letor4_over_the_given_queries(cls, ds):
    model = cls().fit(ds)
    expected = evaluate(ds.y, model.predict(ds.X), ds.qid, ["ndcg@10"], "letor4").metrics["ndcg@10"]
    assert model.score(ds.X, ds.y, qid=ds.qid) == pytest.approx(expected, abs=1e-15)
    assert model.score(ds) == pytest.approx(expected, abs=1e-15)
    # the value depends on the grouping: all rows as one query score differently
    as_one_query = model.score(ds.X, ds.y, qid=np.zeros(ds.n_rows, dtype=int))
    assert as_one_query != pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize("cls", RANKERS)
def test_score_without_qid_names_metadata_routing(cls, ds):
    model = cls().fit(ds)
    with pytest.raises(DataValidationError, match="metadata routing"):
        model.score(ds.X, ds.y)


# -- scikit-learn estimator conventions --------------------------------------------------------


def test_ranker_registry_maps_class_names_to_estimators():
    assert ranker_class("LinearRegressionRanker") is LinearRegressionRanker
    assert ranker_class("RankSVM") is RankSVM
    for name, cls in ranker_classes().items():
        assert cls.__name__ == name and hasattr(cls, "_saved_attributes")


@pytest.mark.parametrize(
    "model, new_params",
    [
        (LinearRegressionRanker(alpha=0.5), {"alpha": 2.0}),
        (RankSVM(C=0.3, loss="squared_hinge", max_pairs_per_query=50, max_iter=500, tol=1e-3, random_state=7),
         {"C": 3.0, "loss": "hinge", "max_pairs_per_query": None, "random_state": 1}),
    ],
)
def test_clone_and_get_set_params_round_trip(model, new_params, ds):
    params = model.get_params()
    copy = clone(model)
    assert copy is not model and type(copy) is type(model)
    assert copy.get_params() == params
    rebuilt = type(model)(**params)
    assert rebuilt.get_params() == params
    assert copy.set_params(**new_params) is copy
    assert copy.get_params() == {**params, **new_params}
    assert model.get_params() == params  # the original is untouched
    # clone of a fitted model is unfitted
    fitted = type(model)().fit(ds)
    with pytest.raises(sklearn.exceptions.NotFittedError):
        clone(fitted).predict(ds.X)


def test_set_params_rejects_unknown_names():
    with pytest.raises(ValueError, match="nope"):
        RankSVM().set_params(nope=1)


@pytest.mark.parametrize("cls", RANKERS)
def test_ranker_classes_have_their_docstrings(cls):
    assert cls.__doc__ is not None and "Parameters" in cls.__doc__


# -- QueryKFold and model selection with metadata routing --------------------------------------


def interleaved(ds, seed=0):
    """The dataset's rows in a random order (each query's rows scattered)."""
    order = np.random.default_rng(seed).permutation(ds.n_rows)
    return ds.X[order], ds.y[order], ds.qid[order]


@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("contiguous", [True, False])
def test_query_kfold_never_splits_a_query(ds, shuffle, contiguous):
    X, y, qid = (ds.X, ds.y, ds.qid) if contiguous else interleaved(ds)
    cv = QueryKFold(3, shuffle=shuffle, random_state=0 if shuffle else None)
    folds = list(cv.split(X, y, qid=qid))
    assert len(folds) == cv.get_n_splits(X, y, qid=qid) == 3
    seen_test = []
    for train, test in folds:
        assert len(test) > 0 and len(train) > 0
        assert set(qid[train]).isdisjoint(set(qid[test]))
        assert sorted(np.r_[train, test].tolist()) == list(range(len(qid)))
        # every query of the test fold has all of its rows there
        for q in set(qid[test]):
            assert set(np.flatnonzero(qid == q)) <= set(test.tolist())
        seen_test.extend(test.tolist())
    assert sorted(seen_test) == list(range(len(qid)))  # the test folds partition the rows
    # groups= is accepted in place of qid, with the same folds
    for (a_train, a_test), (b_train, b_test) in zip(folds, cv.split(X, y, groups=qid)):
        np.testing.assert_array_equal(a_test, b_test)


def test_query_kfold_inside_cross_val_score_never_splits_a_query(ds):
    """The splitter gets qid through routing: a ranker that records what it was fitted on sees whole queries."""
    seen = []

    class Recording(LinearRegressionRanker):
        def fit(self, X, y=None, qid=None):
            seen.append(("fit", set(np.asarray(qid).tolist())))
            return super().fit(X, y, qid=qid)

        def score(self, X, y=None, qid=None):
            seen.append(("score", set(np.asarray(qid).tolist())))
            return super().score(X, y, qid=qid)

    X, y, qid = interleaved(ds, seed=3)
    with sklearn.config_context(enable_metadata_routing=True):
        cross_val_score(Recording(), X, y, params={"qid": qid}, cv=QueryKFold(3), error_score="raise")
    fits = [s for kind, s in seen if kind == "fit"]
    scores = [s for kind, s in seen if kind == "score"]
    assert len(fits) == len(scores) == 3
    for train_q, test_q in zip(fits, scores):
        assert train_q.isdisjoint(test_q)
        assert train_q | test_q == set(qid.tolist())


def manual_fold_scores(make, X, y, qid, cv, score):
    values = []
    for train, test in cv.split(X, y, qid=qid):
        model = make().fit(X[train], y[train], qid=qid[train])
        values.append(score(model, X[test], y[test], qid[test]))
    return np.array(values)


def test_cross_val_score_equals_a_manual_loop_over_query_folds(ds):
    with sklearn.config_context(enable_metadata_routing=True):
        got = cross_val_score(RankSVM(), ds.X, ds.y, params={"qid": ds.qid}, cv=QueryKFold(3), error_score="raise")
    expected = manual_fold_scores(RankSVM, ds.X, ds.y, ds.qid, QueryKFold(3),
                                  lambda m, X, y, q: m.score(X, y, qid=q))
    assert got.shape == (3,)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    assert len(set(np.round(got, 10))) > 1  # the folds really differ


def test_cross_val_score_with_ranking_scorer_equals_evaluate(ds):
    with sklearn.config_context(enable_metadata_routing=True):
        scorer = ranking_scorer("map", "letor4")
        got = cross_val_score(RankSVM(), ds.X, ds.y, params={"qid": ds.qid}, cv=QueryKFold(3), scoring=scorer,
                              error_score="raise")
    expected = manual_fold_scores(
        RankSVM, ds.X, ds.y, ds.qid, QueryKFold(3),
        lambda m, X, y, q: evaluate(y, m.predict(X), q, ["map"], "letor4").metrics["map"],
    )
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    # MAP, not the estimator's own NDCG@10
    ndcg = manual_fold_scores(RankSVM, ds.X, ds.y, ds.qid, QueryKFold(3), lambda m, X, y, q: m.score(X, y, qid=q))
    assert not np.allclose(got, ndcg)


def test_cross_val_score_on_interleaved_rows_matches_the_manual_loop(ds):
    X, y, qid = interleaved(ds, seed=5)
    with sklearn.config_context(enable_metadata_routing=True):
        scorer = ranking_scorer("ndcg@5", "letor4")
        got = cross_val_score(LinearRegressionRanker(), X, y, params={"qid": qid}, cv=QueryKFold(3),
                              scoring=scorer, error_score="raise")
    expected = manual_fold_scores(
        LinearRegressionRanker, X, y, qid, QueryKFold(3),
        lambda m, X, y, q: evaluate(y, m.predict(X), q, ["ndcg@5"], "letor4").metrics["ndcg@5"],
    )
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def test_ranking_scorer_without_qid_names_metadata_routing(ds):
    model = RankSVM().fit(ds)
    with sklearn.config_context(enable_metadata_routing=True):
        scorer = ranking_scorer("map")
        with pytest.raises(DataValidationError, match="metadata routing"):
            scorer(model, ds.X, ds.y)
        with pytest.raises(ValueError, match="unknown metric"):
            ranking_scorer("nope")
        # called directly with qid, it is evaluate()
        expected = evaluate(ds.y, model.predict(ds.X), ds.qid, ["map"]).metrics["map"]
        assert scorer(model, ds.X, ds.y, qid=ds.qid) == pytest.approx(expected, abs=1e-15)


def test_ranking_scorer_can_be_built_before_routing_is_enabled(ds):
    scorer = ranking_scorer("map", "letor4")  # e.g. a module-level constant
    with sklearn.config_context(enable_metadata_routing=True):
        got = cross_val_score(RankSVM(), ds.X, ds.y, params={"qid": ds.qid}, cv=QueryKFold(3), scoring=scorer,
                              error_score="raise")
    assert got.shape == (3,)


def test_grid_search_picks_the_best_mean_fold_score(ds):
    grid = [0.01, 0.1, 1.0]
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(RankSVM(), {"C": grid}, cv=QueryKFold(3), error_score="raise")
        search.fit(ds.X, ds.y, qid=ds.qid)
    means = {
        C: manual_fold_scores(lambda C=C: RankSVM(C=C), ds.X, ds.y, ds.qid, QueryKFold(3),
                              lambda m, X, y, q: m.score(X, y, qid=q)).mean()
        for C in grid
    }
    best_C = max(grid, key=lambda C: means[C])  # first of equal maxima, like GridSearchCV
    assert search.best_params_ == {"C": best_C}
    assert search.best_score_ == pytest.approx(means[best_C], abs=1e-12)
    np.testing.assert_allclose(search.cv_results_["mean_test_score"], [means[C] for C in grid], atol=1e-12)
    # the refitted model is the best C fitted on all rows
    refit = RankSVM(C=best_C).fit(ds.X, ds.y, qid=ds.qid)
    np.testing.assert_array_equal(search.best_estimator_.coef_, refit.coef_)


def test_grid_search_with_a_ranking_scorer(ds):
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(LinearRegressionRanker(), {"alpha": [0.0, 10.0]}, cv=QueryKFold(3),
                              scoring=ranking_scorer("map"), error_score="raise")
        search.fit(ds.X, ds.y, qid=ds.qid)
    means = {
        a: manual_fold_scores(lambda a=a: LinearRegressionRanker(alpha=a), ds.X, ds.y, ds.qid, QueryKFold(3),
                              lambda m, X, y, q: evaluate(y, m.predict(X), q, ["map"]).metrics["map"]).mean()
        for a in (0.0, 10.0)
    }
    assert search.best_score_ == pytest.approx(max(means.values()), abs=1e-12)


def test_query_kfold_without_qid_raises_a_clear_error(ds):
    with pytest.raises(DataValidationError, match="QueryKFold needs the query ids") as info:
        list(QueryKFold(3).split(ds.X, ds.y))
    assert "qid" in str(info.value) and "enable_metadata_routing" in str(info.value)
    with sklearn.config_context(enable_metadata_routing=True):
        with pytest.raises(DataValidationError, match="QueryKFold needs the query ids"):
            cross_val_score(RankSVM(), ds.X, ds.y, cv=QueryKFold(3))


# -- the polynomial-kernel SVM classifier baseline ------------------------------------------------


def test_poly_svc_decision_values_are_libsvm_s(ds):
    from sklearn.svm import SVC

    model = PolySVCRanker(C=0.5, max_per_query=None).fit(ds)
    Z = (ds.X - model.mean_) / model.scale_
    reference = SVC(C=0.5, kernel="poly", degree=3, coef0=1.0).fit(Z, (ds.y >= 1).astype(int))
    np.testing.assert_allclose(model.predict(ds.X), reference.decision_function(Z), rtol=1e-9, atol=1e-9)


def test_poly_svc_trains_on_the_first_documents_of_each_query_only(ds):
    model = PolySVCRanker(max_per_query=3).fit(ds)
    offsets = np.flatnonzero(np.r_[True, ds.qid[1:] != ds.qid[:-1], True])
    first = np.concatenate([np.arange(a, min(a + 3, b)) for a, b in zip(offsets[:-1], offsets[1:])])
    Z_first = (ds.X[first] - model.mean_) / model.scale_
    for sv in model.support_vectors_:  # every support vector is one of those rows
        assert np.isclose(Z_first, sv).all(axis=1).any()
    np.testing.assert_allclose(model.mean_, ds.X[first].mean(axis=0))


def test_poly_svc_beats_random_and_round_trips(split, tmp_path):
    from structrank.model_io import load_model, save_model

    train, test = split
    model = PolySVCRanker().fit(train)
    rng = np.random.default_rng(0)
    chance = np.mean([evaluate(test.y, rng.random(test.n_rows), test.qid, ["map"], "letor4").metrics["map"]
                      for _ in range(10)])
    assert evaluate(test.y, model.predict(test.X), test.qid, ["map"], "letor4").metrics["map"] > chance + 0.1
    save_model(model, tmp_path / "svc.npz")
    np.testing.assert_array_equal(load_model(tmp_path / "svc.npz").predict(test.X), model.predict(test.X))
