"""The ecosystem's calling conventions (issue 41): LightGBM's ``group=``, ``eval_set=[(X, y)]`` with
``eval_group=``/``eval_qid=``, ``sample_weight`` as query weights, tree rankers' ``feature_importances_``,
LambdaMART's early stopping, and feature names kept through a model file."""

from __future__ import annotations

import importlib.util

import numpy as np
import pandas as pd
import pytest

from structrank.data import letor_folds, letor_root, make_ranking_dataset, read_letor
from structrank.errors import DataFormatError, DataValidationError
from structrank.learners import (LambdaMARTRanker, LatentPerceptronRanker, LatentSSVMRanker, LinearRegressionRanker,
                                 McRank, MLPRanker, NystroemRanker, PermutationCRFRanker, PolySVCRanker, RankSVM,
                                 StructSVMRanker, StructuredBoostingRanker)
from structrank.learners.fit_conventions import one_eval_set, qid_from_group, row_weights
from structrank.archive import read_archive, write_archive
from structrank.model_io import FORMAT_NAME, FORMAT_VERSION, load_model, save_model

TRAIN = make_ranking_dataset(n_queries=30, random_state=0)
DEV = make_ranking_dataset(n_queries=12, random_state=1)
SIZES, DEV_SIZES = np.diff(TRAIN.offsets), np.diff(DEV.offsets)

# small settings: every feature ranker, each fitted a few times
RANKERS = [LinearRegressionRanker(), RankSVM(), PolySVCRanker(), McRank(n_estimators=5),
           LambdaMARTRanker(n_estimators=5), StructSVMRanker(loss="map", max_iter=30),
           LatentPerceptronRanker(max_epochs=2), LatentSSVMRanker(max_iter=30, max_outer=2),
           PermutationCRFRanker(max_epochs=2), StructuredBoostingRanker(n_estimators=5, min_child_samples=2),
           NystroemRanker(ranker="RankSVM", n_landmarks=10),
           *([MLPRanker(epochs=2, hidden_layer_sizes=(4,))] if importlib.util.find_spec("torch") else [])]
# the rankers whose loss takes a weight per query (the others refuse unequal weights, saying why)
WEIGHTED = (LinearRegressionRanker, RankSVM, PolySVCRanker, McRank, LambdaMARTRanker, StructuredBoostingRanker,
            NystroemRanker)


def _fresh(model):
    return type(model)(**model.get_params(deep=False))


@pytest.mark.parametrize("model", RANKERS, ids=lambda m: type(m).__name__)
def test_lightgbm_call_is_the_qid_call(model):
    """fit(X, y, group=, eval_set=[(X, y)], eval_group=[]) runs the fit that fit(X, y, qid=, eval_set=(X, y, qid))
    runs: the same scores, bit for bit."""
    by_qid = _fresh(model).fit(TRAIN.X, TRAIN.y, qid=TRAIN.qid, eval_set=(DEV.X, DEV.y, DEV.qid))
    by_group = _fresh(model).fit(TRAIN.X, TRAIN.y, group=SIZES, eval_set=[(DEV.X, DEV.y)], eval_group=[DEV_SIZES])
    by_eval_qid = _fresh(model).fit(TRAIN.X, TRAIN.y, group=list(SIZES), eval_set=[(DEV.X, DEV.y)],
                                    eval_qid=[DEV.qid])
    expected = by_qid.predict(DEV.X)
    assert np.array_equal(by_group.predict(DEV.X), expected)
    assert np.array_equal(by_eval_qid.predict(DEV.X), expected)


@pytest.mark.parametrize("model", [m for m in RANKERS if not hasattr(m, "dev_metric") and not isinstance(
    m, NystroemRanker)], ids=lambda m: type(m).__name__)
def test_an_eval_set_that_chooses_nothing_is_scored(model):
    """A ranker that does not choose its epoch on the eval set reports its score there (not ignored)."""
    fitted = _fresh(model).fit(TRAIN.X, TRAIN.y, group=SIZES, eval_set=[(DEV.X, DEV.y)], eval_group=[DEV_SIZES])
    assert fitted.eval_score_ == pytest.approx(fitted.score(DEV.X, DEV.y, DEV.qid), abs=0)


@pytest.mark.parametrize("model", RANKERS, ids=lambda m: type(m).__name__)
def test_sample_weight(model):
    """Equal weights are the unweighted fit, bit for bit; unequal ones change the fit of a ranker whose loss
    takes them, and the others refuse them naming why."""
    plain = _fresh(model).fit(TRAIN.X, TRAIN.y, qid=TRAIN.qid).predict(DEV.X)
    equal = _fresh(model).fit(TRAIN.X, TRAIN.y, qid=TRAIN.qid, sample_weight=np.full(TRAIN.n_rows, 3.0))
    assert np.array_equal(equal.predict(DEV.X), plain)
    weights = np.random.default_rng(0).uniform(0.1, 3.0, SIZES.size)
    if isinstance(model, WEIGHTED):
        weighted = _fresh(model).fit(TRAIN.X, TRAIN.y, group=SIZES, sample_weight=weights).predict(DEV.X)
        assert not np.array_equal(weighted, plain)
        # one weight per query (XGBoost's) and one per row, equal within the query (LightGBM's), are the same
        per_row = _fresh(model).fit(TRAIN.X, TRAIN.y, qid=TRAIN.qid, sample_weight=np.repeat(weights, SIZES))
        assert np.array_equal(per_row.predict(DEV.X), weighted)
    else:
        with pytest.raises(DataValidationError, match="does not take unequal sample_weight: .+"):
            _fresh(model).fit(TRAIN.X, TRAIN.y, group=SIZES, sample_weight=weights)


def test_query_weights_are_the_repeated_query():
    """LambdaMART with an integer query weight equals... a weight of 2 on a query is LightGBM's own weighting: its
    lambdarank with the same weights gives the same trees."""
    lightgbm = pytest.importorskip("lightgbm")
    weights = np.random.default_rng(1).integers(1, 4, SIZES.size).astype(float)
    ours = LambdaMARTRanker(n_estimators=10).fit(TRAIN.X, TRAIN.y, group=SIZES, sample_weight=weights)
    theirs = lightgbm.LGBMRanker(n_estimators=10, learning_rate=0.05, num_leaves=31, min_child_samples=20,
                                 random_state=0, n_jobs=1, deterministic=True, force_row_wise=True, verbose=-1)
    theirs.fit(TRAIN.X, TRAIN.y, group=SIZES, sample_weight=np.repeat(weights / weights.mean(), SIZES))
    assert np.array_equal(ours.predict(DEV.X), theirs.predict(DEV.X))


def test_conventions_refuse_what_does_not_add_up():
    with pytest.raises(DataValidationError, match="sum to 29 rows, X has 30"):
        qid_from_group([10, 19], 30)
    with pytest.raises(DataValidationError, match=r"group\[1\] is 0"):
        qid_from_group([30, 0], 30)
    with pytest.raises(DataValidationError, match="not both"):
        LambdaMARTRanker().fit(TRAIN.X, TRAIN.y, qid=TRAIN.qid, group=SIZES)
    with pytest.raises(DataValidationError, match="lists 2 sets"):
        one_eval_set([(DEV.X, DEV.y), (DEV.X, DEV.y)], [DEV_SIZES, DEV_SIZES])
    with pytest.raises(DataValidationError, match="without an eval_set"):
        one_eval_set(None, [DEV_SIZES])
    with pytest.raises(DataValidationError, match="differs within query"):
        row_weights(np.arange(TRAIN.n_rows, dtype=float), TRAIN.qid)
    with pytest.raises(DataValidationError, match="one per row .* or one per query"):
        row_weights(np.ones(7), TRAIN.qid)
    with pytest.raises(DataValidationError, match="finite and >= 0"):
        row_weights(np.r_[-1.0, np.ones(SIZES.size - 1)], TRAIN.qid)
    assert row_weights(np.full(SIZES.size, 2.0), TRAIN.qid) is None  # equal weights: the unweighted fit


def test_regression_form_says_how_to_group():
    """PyTerrier's form='regression' calls fit(X, y): the error names qid, group and form='ltr'."""
    with pytest.raises(DataValidationError, match="needs qid .* or group .*form='ltr'"):
        RankSVM().fit(TRAIN.X, TRAIN.y)


def test_lambdamart_early_stopping():
    model = LambdaMARTRanker(n_estimators=300, learning_rate=0.3, early_stopping_rounds=5)
    model.fit(TRAIN.X, TRAIN.y, group=SIZES, eval_set=[(DEV.X, DEV.y)], eval_group=[DEV_SIZES])
    curve = model.dev_curve_
    assert model.best_iteration_ < 300 and curve.size == model.best_iteration_ + 5  # stopped 5 rounds after the best
    assert curve[model.best_iteration_ - 1] == curve.max()  # the first best round is kept
    assert model.score(DEV) == pytest.approx(curve.max(), abs=1e-12)  # dev_metric None: score's metric
    with pytest.raises(ValueError, match="needs an eval_set"):
        LambdaMARTRanker(early_stopping_rounds=5).fit(TRAIN)


@pytest.mark.parametrize("cls", [LambdaMARTRanker, McRank, StructuredBoostingRanker])
def test_feature_importances(cls):
    """LightGBM's two importances, as LGBMRanker's feature_importances_ gives them."""
    model = cls(n_estimators=10, min_child_samples=2).fit(TRAIN)
    booster = model._booster()
    assert np.array_equal(model.feature_importances_, booster.feature_importance("split"))
    assert model.feature_importances_.sum() > 0
    gain = cls(n_estimators=10, min_child_samples=2, importance_type="gain").fit(TRAIN).feature_importances_
    assert np.allclose(gain, booster.feature_importance("gain"))


def test_feature_names_survive_a_model_file(tmp_path):
    """A model fitted on a DataFrame keeps its column names through save/load and refuses reordered columns."""
    columns = [f"f{j}" for j in range(TRAIN.n_features)]
    frame = pd.DataFrame(TRAIN.X, columns=columns)
    for model in (RankSVM(), LambdaMARTRanker(n_estimators=5)):
        model.fit(frame, TRAIN.y, qid=TRAIN.qid)
        save_model(model, tmp_path / "m.npz")
        loaded = load_model(tmp_path / "m.npz")
        assert list(loaded.feature_names_in_) == columns
        assert np.array_equal(loaded.predict(frame), model.predict(frame))
        with pytest.raises(ValueError, match="feature names"):
            loaded.predict(frame[columns[::-1]])


def test_forged_feature_names_are_refused(tmp_path):
    model = RankSVM().fit(pd.DataFrame(TRAIN.X, columns=[f"f{j}" for j in range(TRAIN.n_features)]), TRAIN.y,
                          qid=TRAIN.qid)
    save_model(model, tmp_path / "m.npz")
    header, arrays = read_archive(tmp_path / "m.npz", FORMAT_NAME, FORMAT_VERSION)
    for forged in (header["feature_names"][:-1], ["f0"] * TRAIN.n_features, "f0", [0] * TRAIN.n_features):
        write_archive(tmp_path / "bad.npz", {**header, "feature_names": forged}, arrays)
        with pytest.raises(DataFormatError, match="feature_names"):
            load_model(tmp_path / "bad.npz")


@pytest.mark.usefixtures("data_root")
def test_acceptance_on_mq2008():
    """The issue's acceptance: LambdaMART with group=/eval_set/eval_group and StructSVMRanker with group= on
    MQ2008 Fold1 predict exactly as their qid= calls."""
    fold = letor_folds(letor_root("MQ2008"))[0]
    train, vali, test = (read_letor(path) for path in (fold.train, fold.vali, fold.test))
    g, gv = np.diff(train.offsets), np.diff(vali.offsets)
    a = LambdaMARTRanker().fit(train.X, train.y, group=g, eval_set=[(vali.X, vali.y)], eval_group=[gv])
    b = LambdaMARTRanker().fit(train.X, train.y, qid=train.qid, eval_set=(vali.X, vali.y, vali.qid))
    assert np.array_equal(a.predict(test.X), b.predict(test.X))
    a = StructSVMRanker().fit(train.X, train.y, group=g)
    b = StructSVMRanker().fit(train.X, train.y, qid=train.qid)
    assert np.array_equal(a.predict(test.X), b.predict(test.X))
