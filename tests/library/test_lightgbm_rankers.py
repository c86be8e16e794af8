"""LightGBM tree rankers: McRank (expected relevance of a multiclass model) and LambdaMART."""

import json

import lightgbm
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from structrank.cli import main
from structrank.data import make_ranking_dataset, read_letor, write_letor
from structrank.errors import DataFormatError, DataValidationError
from structrank.learners import LambdaMARTRanker, McRank
from structrank.learners.registry import MODELS, ranker_class
from structrank.metrics import evaluate
from structrank.model_io import load_model, save_model

TREES = [McRank, LambdaMARTRanker]
FAST = {"n_estimators": 10}  # enough rounds for the checks that do not measure quality


@pytest.fixture(scope="module")
def split():
    """Train and held-out queries of one seeded dataset (one hidden model), split by query."""
    full = make_ranking_dataset(n_queries=120, n_features=10, random_state=11)
    return full.take_queries(np.arange(80)), full.take_queries(np.arange(80, 120))


@pytest.fixture(scope="module")
def ds():
    return make_ranking_dataset(n_queries=30, n_features=6, random_state=4)


@pytest.fixture(scope="module")
def fitted(ds):
    return {cls: cls(**FAST).fit(ds) for cls in TREES}


# -- quality -----------------------------------------------------------------------------------


@pytest.mark.parametrize("cls", TREES)
def test_trees_beat_random_scores_on_held_out_queries(cls, split):
    train, test = split
    model = cls().fit(train)  # the default number of rounds
    learned = evaluate(test.y, model.predict(test.X), test.qid, ["ndcg@10"], "letor4").metrics["ndcg@10"]
    rng = np.random.default_rng(0)
    random_runs = [evaluate(test.y, rng.random(test.n_rows), test.qid, ["ndcg@10"], "letor4").metrics["ndcg@10"]
                   for _ in range(20)]
    assert learned > np.mean(random_runs) + 0.12, (learned, np.mean(random_runs))
    assert learned > max(random_runs) + 0.05, (learned, max(random_runs))
    assert model.score(test) == pytest.approx(learned, abs=1e-15)


# -- McRank: expected relevance ----------------------------------------------------------------


def test_mcrank_score_is_the_expected_grade_under_lightgbms_class_probabilities(ds):
    model = McRank(**FAST).fit(ds)
    np.testing.assert_array_equal(model.classes_, [0, 1, 2])
    proba = model.predict_proba(ds.X)
    assert proba.shape == (ds.n_rows, 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-12)
    # the probabilities are those of an independent LGBMClassifier with the same settings
    reference = lightgbm.LGBMClassifier(
        n_estimators=10, learning_rate=0.1, num_leaves=31, min_child_samples=20, random_state=0, n_jobs=1,
        deterministic=True, force_row_wise=True, verbose=-1,
    ).fit(ds.X, ds.y)
    np.testing.assert_allclose(proba, reference.predict_proba(ds.X), rtol=0, atol=1e-12)
    expected = (reference.predict_proba(ds.X) * reference.classes_[None, :]).sum(axis=1)
    np.testing.assert_allclose(model.predict(ds.X), expected, rtol=0, atol=1e-12)


def test_mcrank_uses_the_grade_values_when_grades_are_missing(ds):
    """Grades 0, 2, 5 (1, 3, 4 absent): three classes, and scores weigh them by 0, 2 and 5."""
    sparse_grades = np.array([0, 2, 5])[ds.y]
    model = McRank(**FAST).fit(ds.X, sparse_grades, qid=ds.qid)
    np.testing.assert_array_equal(model.classes_, [0, 2, 5])
    proba = model.predict_proba(ds.X)
    # the same classes in the same order as with grades 0, 1, 2: the same probabilities
    np.testing.assert_allclose(proba, McRank(**FAST).fit(ds).predict_proba(ds.X), rtol=0, atol=1e-12)
    manual = proba[:, 0] * 0 + proba[:, 1] * 2 + proba[:, 2] * 5
    np.testing.assert_allclose(model.predict(ds.X), manual, rtol=0, atol=1e-12)
    assert np.all((model.predict(ds.X) >= 0) & (model.predict(ds.X) <= 5))


def test_mcrank_with_two_grades_and_with_one():
    X = np.random.default_rng(0).random((40, 3))
    qid = np.repeat([1, 2, 3, 4], 10)
    y = (X[:, 0] > 0.5).astype(int) * 3
    model = McRank(**FAST, min_child_samples=2).fit(X, y, qid=qid)
    np.testing.assert_array_equal(model.classes_, [0, 3])
    np.testing.assert_allclose(model.predict(X), 3 * model.predict_proba(X)[:, 1], rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="at least two grades"):
        McRank().fit(X, np.full(40, 2), qid=qid)


# -- LambdaMART --------------------------------------------------------------------------------


def test_lambdamart_groups_rows_by_qid_wherever_they_are(ds):
    """Interleaved queries give the same model as the same rows grouped by first appearance."""
    rng = np.random.default_rng(1)
    order = rng.permutation(ds.n_rows)
    X, y, qid = ds.X[order], ds.y[order], ds.qid[order]
    first = {}
    for i, q in enumerate(qid):
        first.setdefault(q, i)
    grouped = np.array(sorted(range(len(qid)), key=lambda i: (first[qid[i]], i)))
    a = LambdaMARTRanker(**FAST).fit(X, y, qid=qid)
    b = LambdaMARTRanker(**FAST).fit(X[grouped], y[grouped], qid=qid[grouped])
    np.testing.assert_array_equal(a.predict(ds.X), b.predict(ds.X))
    # and the grouping matters: all rows as one query is another model
    c = LambdaMARTRanker(**FAST).fit(X, y, qid=np.zeros(len(y)))
    assert not np.array_equal(a.predict(ds.X), c.predict(ds.X))


def test_lambdamart_accepts_labels_above_lightgbms_default_gain_table():
    X = np.random.default_rng(0).random((60, 3))
    y = np.round(X[:, 0] * 40).astype(int)  # labels up to 40
    model = LambdaMARTRanker(**FAST, min_child_samples=2).fit(X, y, qid=np.repeat([1, 2, 3], 20))
    assert np.all(np.isfinite(model.predict(X)))


# -- shared: input forms, determinism, sklearn conventions -----------------------------------------


@pytest.mark.parametrize("cls", TREES)
def test_fit_on_arrays_dataset_and_csr_give_identical_predictions(cls, ds, fitted):
    reference = fitted[cls].predict(ds.X)
    assert reference.shape == (ds.n_rows,) and reference.dtype == np.float64
    np.testing.assert_array_equal(cls(**FAST).fit(ds.X, ds.y, qid=ds.qid).predict(ds.X), reference)
    csr = cls(**FAST).fit(sp.csr_matrix(ds.X), ds.y, qid=ds.qid)
    np.testing.assert_array_equal(csr.predict(sp.csr_matrix(ds.X)), reference)
    np.testing.assert_array_equal(fitted[cls].predict(sp.csr_matrix(ds.X)), reference)
    np.testing.assert_array_equal(fitted[cls].decision_function(ds.X), reference)
    assert fitted[cls].n_features_in_ == ds.n_features


@pytest.mark.parametrize("cls", TREES)
def test_two_fits_give_identical_models(cls, ds, fitted):
    again = cls(**FAST).fit(ds)
    assert str(again.booster_text_) == str(fitted[cls].booster_text_)
    np.testing.assert_array_equal(again.predict(ds.X), fitted[cls].predict(ds.X))


@pytest.mark.parametrize("cls", TREES)
def test_clone_get_params_and_set_params(cls, ds, fitted):
    params = {"n_estimators": 7, "learning_rate": 0.2, "num_leaves": 5, "min_child_samples": 3,
              "random_state": 4, "n_jobs": 1}
    model = cls(**params)
    # the parameters given, and the others at their defaults
    defaults = {"importance_type": "split"} | ({"early_stopping_rounds": None, "dev_metric": None}
                                               if cls is LambdaMARTRanker else {})
    assert model.get_params() == params | defaults
    copy = clone(fitted[cls])
    assert copy.get_params() == fitted[cls].get_params()
    assert not hasattr(copy, "booster_text_")
    copy.set_params(num_leaves=4)
    assert copy.num_leaves == 4 and fitted[cls].num_leaves == 31
    refit = copy.fit(ds)
    assert not np.array_equal(refit.predict(ds.X), fitted[cls].predict(ds.X))
    assert ranker_class(cls.__name__) is cls


@pytest.mark.parametrize("cls", TREES)
def test_bad_input_is_refused(cls, ds, fitted):
    with pytest.raises(DataValidationError, match="needs qid"):
        cls().fit(ds.X, ds.y)
    with pytest.raises(DataValidationError, match="needs relevance labels"):
        cls().fit(ds.X, qid=ds.qid)
    with pytest.raises(DataValidationError, match="one entry per row"):
        cls().fit(ds.X, ds.y, qid=ds.qid[:-1])
    with pytest.raises(DataValidationError, match="not a non-negative integer"):
        cls().fit(ds.X, ds.y - 1, qid=ds.qid)
    with pytest.raises(ValueError, match="features"):
        fitted[cls].predict(ds.X[:, :-1])
    with pytest.raises(DataValidationError, match="metadata routing"):
        fitted[cls].score(ds.X, ds.y)


# -- model files -------------------------------------------------------------------------------


@pytest.mark.parametrize("cls", TREES)
def test_model_file_round_trip_gives_identical_predictions(cls, ds, fitted, tmp_path):
    model = fitted[cls]
    path = tmp_path / "model.npz"
    save_model(model, path)
    loaded = load_model(path)
    assert type(loaded) is cls and loaded.get_params() == model.get_params()
    assert loaded._booster_cache[0] is loaded.booster_text_  # the booster is rebuilt and checked on loading
    assert loaded.booster_text_.dtype.kind == "U" and loaded.booster_text_.ndim == 0
    for attr in model._saved_attributes:
        np.testing.assert_array_equal(getattr(loaded, attr), getattr(model, attr))
    np.testing.assert_array_equal(loaded.predict(ds.X), model.predict(ds.X))
    other = make_ranking_dataset(n_queries=4, n_features=ds.n_features, random_state=9)
    np.testing.assert_array_equal(loaded.predict(other.X), model.predict(other.X))
    # a loaded model saves again, unchanged
    save_model(loaded, tmp_path / "again.npz")
    np.testing.assert_array_equal(load_model(tmp_path / "again.npz").predict(ds.X), model.predict(ds.X))
    with np.load(path, allow_pickle=False) as archive:
        assert all(archive[k].dtype != object for k in archive.files)


def _tamper(path, tmp_path, key, value):
    with np.load(path, allow_pickle=False) as archive:
        header = json.loads(bytes(archive["__header__"]).decode("utf-8"))
        arrays = {k: archive[k] for k in archive.files if k != "__header__"}
    arrays[key] = value
    header["arrays"][key] = {"dtype": value.dtype.str, "shape": list(value.shape)}
    out = tmp_path / "tampered.npz"
    np.savez(out, __header__=np.frombuffer(json.dumps(header).encode("utf-8"), dtype=np.uint8), **arrays)
    return out


@pytest.mark.parametrize(
    "key, value, when, message",
    [
        ("booster_text_", np.zeros(3), "load", "must be one unicode string"),
        ("booster_text_", np.array(["tree", "tree"]), "load", "must be one unicode string"),
        ("classes_", np.array(["0", "1", "2"]), "load", "not an integer type"),
        # the booster is checked on loading, so that the error names the file
        ("booster_text_", np.array("not a model at all"), "load", "not a LightGBM model"),
        ("classes_", np.array([0, 1]), "load", "the booster has 3 classes"),
        ("n_features_in_", np.array(5), "load", "features"),
    ],
)
def test_tampered_mcrank_file_gives_data_format_error(key, value, when, message, ds, fitted, tmp_path):
    path = tmp_path / "model.npz"
    save_model(fitted[McRank], path)
    bad = _tamper(path, tmp_path, key, value)
    if when == "load":
        with pytest.raises(DataFormatError, match=message):
            load_model(bad)
    else:
        model = load_model(bad)
        with pytest.raises((DataFormatError, ValueError), match=message):
            model.predict(ds.X[:, :5] if key == "n_features_in_" else ds.X)


# -- command line ------------------------------------------------------------------------------


def test_cli_trains_and_predicts_with_the_tree_models(split, tmp_path, capsys):
    train, test = split
    write_letor(tmp_path / "train.txt", train)
    write_letor(tmp_path / "test.txt", test)
    assert MODELS["mcrank"].metric == MODELS["lambdamart"].metric == "ndcg@10"
    for name, cls in (("mcrank", McRank), ("lambdamart", LambdaMARTRanker)):
        out = tmp_path / f"{name}.npz"
        assert main(["train", name, "--train", str(tmp_path / "train.txt"), "--set", "n_estimators=5",
                     "--out", str(out)]) == 0
        model = load_model(out)
        assert type(model) is cls and model.n_estimators == 5
        scores = tmp_path / f"{name}.scores"
        assert main(["predict", "--model", str(out), "--data", str(tmp_path / "test.txt"), "--out", str(scores)]) == 0
        expected = cls(n_estimators=5).fit(read_letor(tmp_path / "train.txt"))
        test_file = read_letor(tmp_path / "test.txt", n_features=train.n_features)
        np.testing.assert_allclose(np.loadtxt(scores), test_file.to_file_order(expected.predict(test_file.X)),
                                   rtol=1e-6, atol=1e-6)
    capsys.readouterr()
