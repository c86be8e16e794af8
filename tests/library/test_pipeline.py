"""Rankers inside scikit-learn's Pipeline and GridSearchCV, with qid routed as metadata."""

from __future__ import annotations

import numpy as np
import pytest
import sklearn
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from structrank.data import make_ranking_dataset
from structrank.errors import DataValidationError
from structrank.learners import RankSVM, StructSVMRanker
from structrank.model_selection import QueryKFold


@pytest.fixture(scope="module")
def data():
    ds = make_ranking_dataset(n_queries=24, random_state=0)
    return ds.X, ds.y, ds.qid


@pytest.fixture
def routing():
    with sklearn.config_context(enable_metadata_routing=True):
        yield


def scaled(ranker):
    return Pipeline([("scale", StandardScaler()), ("rank", ranker)])


@pytest.mark.parametrize("ranker", [RankSVM(), StructSVMRanker(loss="map", max_outer=3)], ids=["ranksvm", "ssvm"])
def test_pipeline_score_is_the_rankers_score_on_scaled_rows(routing, data, ranker):
    X, y, qid = data
    pipe = scaled(ranker).fit(X, y, qid=qid)
    Xs = StandardScaler().fit_transform(X)
    expected = sklearn.clone(ranker).fit(Xs, y, qid=qid).score(Xs, y, qid=qid)
    assert pipe.score(X, y, qid=qid) == pytest.approx(expected, abs=1e-12)


def test_score_refuses_row_weights(data):
    X, y, qid = data
    model = RankSVM().fit(X, y, qid=qid)
    assert model.score(X, y, qid=qid, sample_weight=None) == model.score(X, y, qid=qid)
    with pytest.raises(DataValidationError, match="RankSVM.score: sample_weight must be None"):
        model.score(X, y, qid=qid, sample_weight=np.ones(len(y)))


def test_pipeline_without_routing_says_how_to_pass_qid(data):
    X, y, qid = data
    with sklearn.config_context(enable_metadata_routing=False):
        pipe = scaled(RankSVM()).fit(X, y, rank__qid=qid)
        with pytest.raises(DataValidationError, match="Pipeline.*enable_metadata_routing=True"):
            pipe.score(X, y)


def test_grid_search_over_a_pipeline_with_qid(routing, data):
    X, y, qid = data
    search = GridSearchCV(scaled(RankSVM()), {"rank__C": [0.01, 1.0]}, cv=QueryKFold(3)).fit(X, y, qid=qid)
    assert search.best_params_["rank__C"] in (0.01, 1.0)
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))
    # the refitted pipeline scores as a pipeline fitted by hand with the chosen C
    by_hand = scaled(RankSVM(C=search.best_params_["rank__C"])).fit(X, y, qid=qid)
    assert search.score(X, y, qid=qid) == pytest.approx(by_hand.score(X, y, qid=qid), abs=1e-12)
