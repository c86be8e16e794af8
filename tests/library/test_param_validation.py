"""Parameters are data: each ranker declares every parameter's type and range once (scikit-learn's
``_parameter_constraints``), and the same declaration is checked by ``fit``, by ``structrank train --set``
(``ModelSpec.make``) and by ``load_model`` (tests/library/test_model_tamper.py); fits that end in non-finite or
all-zero weights say so; predict never returns NaN or infinity silently.
"""

import warnings
from numbers import Real

import numpy as np
import pytest
from structrank.constraints import InvalidParameterError, Interval

from cli_checks import NO_OPEN_FILES
from structrank import learners
from structrank.cli import main
from structrank.commands.train import parse_assignments
from structrank.data import make_ranking_dataset
from structrank.errors import DataValidationError, DegenerateDataWarning
from structrank.learners import (LatentPerceptronRanker, LinearRegressionRanker, NystroemRanker, PermutationCRFRanker,
                                 PolySVCRanker, RankSVM)
from structrank.learners.base import MAX_COUNT, LinearRankerMixin, parameter_problems
from structrank.learners.registry import MODELS, RANKERS, ranker_class

pytestmark = NO_OPEN_FILES


@pytest.mark.parametrize("name", sorted(RANKERS))
def test_every_parameter_of_every_ranker_is_declared_once(name):
    cls = ranker_class(name)
    assert set(cls._parameter_constraints) == set(cls().get_params(deep=False))
    assert parameter_problems(cls()) == {}  # the defaults obey their own declaration


@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_command_line_model_s_defaults_and_grid_points_are_valid(name):
    spec = MODELS[name]
    for params in spec.candidates({}):
        spec.make(**params)  # raises InvalidParameterError on a grid point outside the declared ranges


# (model, --set text, the parameter named, the value as the message shows it): the cases and kin
BAD_SETS = [
    ("svm-map", "C=Infinity", "C", "inf"), ("svm-map", "C=NaN", "C", "nan"), ("svm-map", "tol=NaN", "tol", "nan"),
    ("svm-map", "max_iter=0", "max_iter", "0"), ("svm-map", "max_iter=-1", "max_iter", "-1"),
    ("svm-map", "C=abc", "C", "'abc'"), ("svm-map", "C=[1]", "C", "[1]"), ("svm-map", "C=-0.5", "C", "-0.5"),
    ("svm-map", "C=true", "C", "True"), ("svm-map", "max_iter=2.5", "max_iter", "2.5"),
    ("svm-map", "slacks=both", "slacks", "'both'"), ("ranksvm", "tol=0", "tol", "0"),
    ("lambdamart", "learning_rate=0", "learning_rate", "0"), ("lambdamart", "n_estimators=0", "n_estimators", "0"),
    ("lambdamart", "num_leaves=1", "num_leaves", "1"), ("svc-poly", "degree=1000", "degree", "1000"),
    ("crf-kl", "T=-Infinity", "T", "-inf"), ("crf-kl", "subset_size=10", "subset_size", "10"),
    ("lsp-ap", "max_epochs=0", "max_epochs", "0"), ("lsp-ap", "average=1", "average", "1"),
    ("gbrt-ndcg", 'loss_params={"k": 0}', "loss_params['k']", "0"), ("linreg", "alpha=-1", "alpha", "-1"),
    # issue 38.6: counts beyond C's int (k=10^20 failed inside numba), names no metric or convention knows, LightGBM's
    # own limits, and a nested dict's values
    ("svm-ndcg", 'loss_params={"k": 100000000000000000000}', "loss_params['k']", "100000000000000000000"),
    ("lsp-ndcg", 'loss_params={"k": 100000000000000000000}', "loss_params['k']", "100000000000000000000"),
    ("gbrt-ndcg", 'loss_params={"k": 1e20}', "loss_params['k']", "1e+20"), ("ranksvm", "max_iter=1099511627776", "max_iter", "1099511627776"),
    ("lsp-ap", "max_epochs=100000000000000000000", "max_epochs", "100000000000000000000"),
    ("crf-kl", "dev_metric=ndcg@x", "dev_metric", "'ndcg@x'"), ("lsp-ap", "dev_convention=letor5", "dev_convention",
                                                                "'letor5'"),
    ("svm-map", "metric=bogus", "metric", "'bogus'"), ("lambdamart", "n_jobs=0", "n_jobs", "0"),
    ("lambdamart", "num_leaves=200000", "num_leaves", "200000"), ("mcrank", "random_state=4294967295", "random_state",
                                                                  "4294967295"),
    ("nystroem-svm-map", 'ranker_params={"loss": "map", "C": -1}', "ranker_params['C'] of StructSVMRanker", "-1"),
    ("nystroem-svm-ndcg", 'ranker_params={"loss": "ndcg", "loss_params": {"k": 100000000000000000000}}',
     "ranker_params['loss_params']['k'] of StructSVMRanker", "100000000000000000000"),
]


@pytest.mark.parametrize("model, text, param, shown", BAD_SETS)
def test_bad_set_values_are_refused_naming_the_parameter_and_value(model, text, param, shown):
    with pytest.raises(InvalidParameterError) as info:
        MODELS[model].make(**parse_assignments([text]))
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{model}: {param} must be ") and message.endswith(f", got {shown}"), message


def test_the_command_refuses_a_bad_set_in_one_line_before_reading_data(tmp_path, capsys):
    out = tmp_path / "m.npz"
    unreadable = tmp_path / "train.txt"  # there (its path is checked first), but never read: not LETOR at all
    unreadable.write_bytes(b"\x00 not a LETOR file")
    code = main(["train", "svm-map", "--train", str(unreadable), "--set", "C=Infinity", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and not out.exists()
    assert err.strip() == "structrank train: error: svm-map: C must be a float in the range (0.0, inf), got inf"


def test_the_command_refuses_an_unknown_nested_key_naming_it_and_the_keys_it_could_be(tmp_path, capsys):
    unreadable = tmp_path / "train.txt"  # never read: the nested dict is checked first
    unreadable.write_bytes(b"\x00 not a LETOR file")
    code = main(["train", "nystroem-svm-map", "--train", str(unreadable), "--set",
                 'ranker_params={"loss": "map", "bogus": 1}', "--out", str(tmp_path / "m.npz")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    keys = ", ".join(sorted(ranker_class("StructSVMRanker")().get_params(deep=False)))
    assert err.strip() == (f"structrank train: error: nystroem-svm-map: ranker_params has no key 'bogus': StructSVMRanker's "
                           f"parameters are {keys}")


#: values no parameter of any ranker takes (a huge int is a fine float: real-valued parameters take it)
WRONG = {"an object": object(), "a huge int": 10**20, "NaN": float("nan"), "an unknown name": "no-such-value",
         "a dict with an unknown key": {"no_such_key": 1}}


def real_valued(cls, param):
    """Whether ``param`` of ``cls`` takes real numbers (10^20 is then a value like any other)."""
    return any(isinstance(c, Interval) and c.type is Real for c in cls._parameter_constraints[param])


def refusals(make, cls):
    """The problems of every wrong value of every parameter of ``cls`` (``make(param, value)`` builds the estimator
    to fit): each must be an InvalidParameterError from ``fit(None, None)`` (so before the data is looked at) naming
    the parameter in one line; returns what is not."""
    wrong = []
    for param in sorted(cls().get_params(deep=False)):
        for label, value in WRONG.items():
            if label == "a huge int" and real_valued(cls, param):
                continue
            estimator = make(param, value)
            try:
                estimator.fit(None, None, qid=None)
            except InvalidParameterError as exc:
                message = str(exc)
                if "\n" in message or param not in message or not message.startswith(f"{type(estimator).__name__}: "):
                    wrong.append(f"{param} = {label}: {message}")
            except Exception as exc:  # noqa: BLE001 -- any other outcome is the finding
                wrong.append(f"{param} = {label}: {type(exc).__name__}: {exc}")
            else:
                wrong.append(f"{param} = {label}: fitted")
    return wrong


@pytest.mark.parametrize("name", sorted(RANKERS))
def test_every_parameter_refuses_wrong_values_before_any_work_naming_itself(name):
    cls = ranker_class(name)
    assert refusals(lambda param, value: cls(**{param: value}), cls) == []


LINEAR = sorted(n for n in RANKERS if issubclass(ranker_class(n), LinearRankerMixin))


@pytest.mark.parametrize("inner", LINEAR)
def test_every_nested_parameter_refuses_wrong_values_naming_the_dict_and_the_key(inner):
    cls = ranker_class(inner)
    assert refusals(lambda param, value: NystroemRanker(ranker=inner, ranker_params={param: value}), cls) == []
    with pytest.raises(InvalidParameterError) as info:
        NystroemRanker(ranker=inner, ranker_params={"no_such_key": 1}).fit(None, None, qid=None)
    keys = ", ".join(sorted(cls().get_params(deep=False)))
    assert str(info.value) == f"NystroemRanker: ranker_params has no key 'no_such_key': {inner}'s parameters are {keys}"


def test_a_nested_value_names_the_dict_the_key_and_the_inner_ranker():
    with pytest.raises(InvalidParameterError) as info:
        NystroemRanker(ranker_params={"C": -1}).fit(None, None, qid=None)
    assert str(info.value) == ("NystroemRanker: ranker_params['C'] of StructSVMRanker must be a float in the range "
                               "(0.0, inf), got -1")


@pytest.mark.parametrize("model", ["svm-ndcg", "lsp-mrr", "gbrt-precision",
                                   pytest.param("mlp-recall", marks=pytest.mark.extra("torch"))])
def test_the_largest_k_trains(model, tmp_path, capsys):
    # k = 2^31 - 1 is inside the range: the kernels take it (k = 10^20 is refused above)
    ds = make_ranking_dataset(n_queries=6, n_features=4, random_state=0)
    params = {"loss_params": {"k": MAX_COUNT}, **({"max_epochs": 2} if model.startswith("lsp") else {}),
              **({"n_estimators": 2} if model.startswith("gbrt") else {}), **({"epochs": 1} if model.startswith("mlp")
                                                                               else {})}
    with warnings.catch_warnings():  # P@k and Recall@k at this k are constant (below): the model ranks nothing
        warnings.simplefilter("ignore")
        model = MODELS[model].make(**params).fit(ds)
        assert np.all(np.isfinite(model.predict(ds.X)))


def longest_list(ds):
    return int(np.max(np.unique(ds.qid, return_counts=True)[1]))


@pytest.mark.parametrize("cls, options", [
    ("StructSVMRanker", {}), ("LatentPerceptronRanker", {"max_epochs": 2}), ("LatentSSVMRanker", {}),
    ("StructuredBoostingRanker", {"n_estimators": 2}),
    pytest.param("MLPRanker", {"epochs": 1}, marks=pytest.mark.extra("torch")),
])
@pytest.mark.parametrize("loss, metric", [("precision", "p"), ("recall", "recall")])
def test_a_k_that_covers_every_list_warns_that_p_and_recall_at_k_are_constant(ds, cls, options, loss, metric):
    longest = longest_list(ds)
    with pytest.warns(DegenerateDataWarning) as caught:
        getattr(learners, cls)(loss=loss, loss_params={"k": longest}, **options).fit(ds)
    said = [str(w.message) for w in caught if w.category is DegenerateDataWarning and "longest" in str(w.message)]
    assert said == [f"{cls}: k={longest} is at least the longest training list ({longest} documents): {metric}@{longest} "
                    "counts the good documents in the top min(k, n), which is the whole list when it has at most k "
                    "documents, whatever their order, so every ranking has the same loss and training optimises "
                    f"nothing of that metric; choose k below {longest}"]
    assert [w.filename for w in caught if "longest" in str(w.message)] == [__file__]  # the caller's fit


@pytest.mark.parametrize("loss", ["precision", "ndcg", "mrr", "combo"])
def test_no_warning_where_the_loss_still_orders_the_lists(ds, loss):
    # P@k below the longest list counts a top that the list overflows; NDCG@k and RR@k past every list lose only
    # their cut (NDCG, RR), which still orders the documents
    k = 3 if loss == "precision" else 10 * longest_list(ds)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateDataWarning)
        assert np.any(learners.StructSVMRanker(loss=loss, loss_params={"k": k}).fit(ds).coef_)


@pytest.mark.parametrize("cls, params, param", [
    (RankSVM, {"C": float("inf")}, "C"), (RankSVM, {"max_iter": 0}, "max_iter"),
    (PolySVCRanker, {"degree": 1000}, "degree"), (LatentPerceptronRanker, {"max_epochs": -1}, "max_epochs"),
])
def test_fit_checks_the_same_declaration_before_touching_the_data(cls, params, param):
    # X=None: the parameters are refused before the data is looked at
    with pytest.raises(InvalidParameterError, match=rf"^{cls.__name__}: {param} must be "):
        cls(**params).fit(None, None, qid=None)


@pytest.fixture(scope="module")
def ds():
    return make_ranking_dataset(n_queries=8, n_features=4, random_state=0)


def huge(ds):
    """The data with feature 0 near 1e307: finite, but sums and squares of it overflow float64 (the issue's case)."""
    X = ds.X.copy()
    X[:, 0] = np.abs(X[:, 0]) * 1e307 + 1e307
    return X


def test_features_that_overflow_give_a_clear_error_not_a_nan_model(ds):
    with pytest.raises(DataValidationError, match=r"LatentPerceptronRanker: training gave non-finite coef_"):
        LatentPerceptronRanker(max_epochs=3).fit(huge(ds), ds.y, qid=ds.qid)


def test_an_all_zero_model_warns(ds):
    # liblinear on the overflowing differences ends at w = 0 although the features and the labels vary
    with pytest.warns(DegenerateDataWarning, match=r"RankSVM: training gave all-zero weights") as caught:
        model = RankSVM().fit(huge(ds), ds.y, qid=ds.qid)
    assert not np.any(model.coef_)
    assert [w.filename for w in caught if w.category is DegenerateDataWarning] == [__file__]  # the caller's fit


def test_a_useful_model_does_not_warn(ds):
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateDataWarning)
        RankSVM(C=1.0).fit(ds)


def test_predict_refuses_to_return_non_finite_scores(ds):
    model = PolySVCRanker(degree=10).fit(ds)
    X = ds.X.copy()
    X[3] = 1e300  # standardised, raised to the 10th power: infinity
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(DataValidationError, match=r"PolySVCRanker.predict: 1 of \d+ scores are NaN or infinite "
                                                      r"\(the first at row index 3 of X\)"):
            model.predict(X)


def test_predict_on_another_number_of_features_names_both_counts(ds):
    model = RankSVM().fit(ds)
    with pytest.raises(ValueError, match=r"X has 2 features, but RankSVM is expecting 4 features"):
        model.predict(ds.X[:, :2])


def write_letor(path, X, y, qid):
    """A LETOR file listing the columns of X (all of them, zeros too)."""
    path.write_text("".join(f"{label} qid:{q} " + " ".join(f"{j + 1}:{v:.17g}" for j, v in enumerate(row)) + "\n"
                            for row, label, q in zip(X, y, qid)))
    return path


@pytest.fixture()
def model_file(ds, tmp_path):
    from structrank.model_io import save_model

    model = RankSVM().fit(ds)
    save_model(model, tmp_path / "m.npz")
    return model, tmp_path / "m.npz"


def test_predict_on_a_file_with_fewer_features_warns_and_reads_them_as_zero(ds, model_file, tmp_path, capsys):
    model, path = model_file
    data = write_letor(tmp_path / "narrow.txt", ds.X[:, :2], ds.y, ds.qid)
    with pytest.warns(UserWarning, match=r"narrow.txt: the data lists 2 features, the model has 4: features 3-4 "
                                         r"are read as 0"):
        assert main(["predict", "--model", str(path), "--data", str(data), "--out", str(tmp_path / "s.txt")]) == 0
    padded = np.hstack([ds.X[:, :2], np.zeros((ds.n_rows, 2))])
    np.testing.assert_allclose(np.loadtxt(tmp_path / "s.txt"), model.predict(padded), rtol=1e-12)


def test_predict_on_a_file_with_more_features_is_refused_naming_both_counts(ds, model_file, tmp_path, capsys):
    _, path = model_file
    data = write_letor(tmp_path / "wide.txt", np.hstack([ds.X, ds.X]), ds.y, ds.qid)
    out = tmp_path / "s.txt"
    assert main(["predict", "--model", str(path), "--data", str(data), "--out", str(out)]) == 2
    assert capsys.readouterr().err.strip() == (f"structrank predict: error: {data}, features: the data has 8 features, "
                                               "the model 4: a model has no weights for features it was not trained on")
    assert not out.exists()


def test_predict_on_a_file_with_the_model_s_features_says_nothing(ds, model_file, tmp_path):
    _, path = model_file
    data = write_letor(tmp_path / "same.txt", ds.X, ds.y, ds.qid)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main(["predict", "--model", str(path), "--data", str(data), "--out", str(tmp_path / "s.txt")]) == 0


def test_save_model_never_writes_non_finite_arrays(ds, tmp_path):
    from structrank.model_io import save_model

    model = RankSVM().fit(ds)
    model.coef_[1] = np.inf
    with pytest.raises(DataValidationError, match=r"RankSVM: attribute coef_ holds NaN or infinite values; not writing"):
        save_model(model, tmp_path / "m.npz")
    assert not (tmp_path / "m.npz").exists()


def test_train_that_overflows_exits_2_in_one_line_and_writes_no_model(ds, tmp_path, capsys):
    data = write_letor(tmp_path / "huge.txt", huge(ds), ds.y, ds.qid)
    out = tmp_path / "m.npz"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        code = main(["train", "lsp-ap", "--train", str(data), "--set", "max_epochs=3", "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and not out.exists()
    assert err == ("structrank train: error: LatentPerceptronRanker: training gave non-finite coef_ (NaN or infinity): "
                   "the features or the step size are too large for float64; scale the features")


@pytest.mark.parametrize("cls, what", [(LinearRegressionRanker, "centred features"),
                                       (PolySVCRanker, "standardised features"),
                                       (PermutationCRFRanker, None)])
def test_overflowing_features_give_one_line_errors_in_every_learner_that_overflows(ds, cls, what):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # numpy's overflow warnings are not the message
        with pytest.raises(DataValidationError) as info:
            cls().fit(huge(ds), ds.y, qid=ds.qid)
    message = str(info.value)
    assert "\n" not in message
    if what is not None:
        assert message.startswith(f"{cls.__name__}: training gave non-finite {what}"), message
    else:  # the CRF's own message, a FloatingPointError as it always was
        assert isinstance(info.value, FloatingPointError) and "the weights diverged in epoch 1" in message


@pytest.mark.extra("torch")
def test_mlp_without_epochs_needs_the_linear_start(ds):
    from structrank.learners import MLPRanker

    with pytest.raises(ValueError, match=r"epochs=0 keeps the linear start: it needs init='linear'"):
        MLPRanker(loss="map", epochs=0).fit(ds)
