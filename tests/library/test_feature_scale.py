"""A feature too large for float64 is an error or a warning at fit, never a model that scores garbage (issue 38.8).

One value of 1e300 (its square overflows float64): every learner of the registry either fits to finite scores
(the trees: they split on thresholds), or warns naming the feature and its row (FeatureScaleWarning), or
raises a one-line error naming them. The learners' own overflow errors (tests/library/test_param_validation.py) still
come first.
"""

import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from structrank.cli import main
from structrank.data import make_ranking_dataset, write_letor
from structrank.errors import DataValidationError, DegenerateDataWarning, FeatureScaleWarning
from structrank.learners.base import LARGEST_FEATURE, too_large_values
from structrank.learners.registry import FEATURE_RANKERS, MODELS

#: what each learner does with the data below: "warns" (finite scores, FeatureScaleWarning), "refuses"
#: (DataValidationError naming the value, or its own overflow error), "fits" (finite scores, nothing to say)
OUTCOMES = {
    "LinearRegressionRanker": "warns",  # least squares kept nothing but the huge feature: every other score tied
    "RankSVM": "warns",
    "PolySVCRanker": "refuses",  # its own error: the standardisation's scale_ is infinite
    "McRank": "fits", "LambdaMARTRanker": "fits", "StructuredBoostingRanker": "fits",
    "StructSVMRanker": "warns",  # all-zero weights too
    "LatentPerceptronRanker": "refuses",  # its weights are finite, its score of row 8 is not
    "LatentSSVMRanker": "warns",
    "PermutationCRFRanker": "refuses",  # diverged: said with the feature
    "MLPRanker": "warns",
    "NystroemRanker": "refuses",  # the landmarks' kernel values are NaN
}
WHERE = "feature 3 of row 8 is 1e+300, past 1e+154, where squares overflow float64"


@pytest.fixture(scope="module")
def ds():
    data = make_ranking_dataset(n_queries=12, n_features=5, random_state=0)
    X = data.X.copy()
    X[7, 2] = 1e300
    return X, data.y, data.qid


def first_model(cls_name):
    spec = next(spec for spec in MODELS.values() if spec.estimator == cls_name)
    quick = {name: 3 for name in ("max_epochs", "epochs", "n_estimators") if name in spec.cls().get_params()}
    return spec.make(**quick)


def test_every_learner_of_the_registry_has_an_outcome():
    # the text rerankers read no features (tests/library/test_cross_encoder.py)
    assert set(OUTCOMES) == set(FEATURE_RANKERS)


@pytest.mark.parametrize("name", sorted(FEATURE_RANKERS))
def test_a_feature_whose_square_overflows_is_refused_or_warned_of_never_silent(name, ds):
    if name == "MLPRanker":
        pytest.importorskip("torch")
    X, y, qid = ds
    model = first_model(name)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            model.fit(X, y, qid=qid)
        except DataValidationError as error:
            outcome, message = "refuses", str(error)
        except FloatingPointError as error:  # the CRF's divergence, as it always was
            outcome, message = "refuses", str(error)
        else:
            scale = [w for w in caught if w.category is FeatureScaleWarning]
            outcome, message = ("warns", str(scale[0].message)) if scale else ("fits", "")
            assert len(scale) <= 1, [str(w.message) for w in scale]  # the MLP's linear start says nothing more
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", DegenerateDataWarning)
                assert np.all(np.isfinite(model.predict(X)))
    assert outcome == OUTCOMES[name], message
    assert "\n" not in message
    if outcome == "warns":
        assert message.startswith(f"{name}: {WHERE}: ") and "scale the features" in message
        assert [w.filename for w in caught if w.category is FeatureScaleWarning] == [__file__]  # the caller's fit
    elif outcome == "refuses" and name != "PolySVCRanker":
        assert message.startswith(f"{name}: {WHERE}: ") and "scale the features" in message, message


def test_linreg_on_the_issue_s_data_warned_where_it_tied_every_score(ds):
    from structrank.learners import LinearRegressionRanker

    X, y, qid = ds
    with pytest.warns(FeatureScaleWarning, match=re.escape(WHERE)):
        model = LinearRegressionRanker().fit(X, y, qid=qid)
    with pytest.warns(DegenerateDataWarning, match="all 242 scores are equal"):  # the issue's garbage: the other
        model.predict(np.delete(X, 7, axis=0))                                   # features were lost, hence the warning


def test_sparse_rows_and_regrouped_queries_name_the_user_s_row():
    from structrank.learners import RankSVM

    data = make_ranking_dataset(n_queries=6, n_features=4, random_state=1)
    order = np.random.default_rng(0).permutation(data.n_rows)  # queries scattered: fit regroups the rows
    X, y, qid = data.X[order].copy(), data.y[order], data.qid[order]
    X[5, 1] = -3e200
    for rows in (X, sp.csr_matrix(X)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # the regrouping's own warning
            warnings.simplefilter("error", FeatureScaleWarning)
            with pytest.raises(FeatureScaleWarning, match=r"RankSVM: feature 2 of row 6 is -3e\+200, past 1e\+154"):
                RankSVM().fit(rows, y, qid=qid)


def test_values_up_to_the_limit_are_not_looked_at_again():
    X = np.full((3, 2), LARGEST_FEATURE)
    assert too_large_values(X) is None and too_large_values(sp.csr_matrix(X)) is None
    X[2, 0] = -np.nextafter(LARGEST_FEATURE, np.inf)
    rows, where = too_large_values(X)
    assert where == (2, 0, X[2, 0]) and rows.shape == (1, 2)


def write(path, X, y, qid):
    from structrank.data import RankingDataset

    write_letor(path, RankingDataset(X, y, qid))
    return path


def test_train_on_such_a_file_warns_in_one_line_or_exits_2_in_one_line(ds, tmp_path, capsys):
    data = write(tmp_path / "huge.txt", *ds)
    out = tmp_path / "m.npz"
    with pytest.warns(FeatureScaleWarning) as caught:  # the command prints it as one line (_one_line_warning)
        assert main(["train", "linreg", "--train", str(data), "--out", str(out)]) == 0
    assert [str(w.message) for w in caught if w.category is FeatureScaleWarning] == [
        f"LinearRegressionRanker: {WHERE}: sums of squares, norms and standardisation that touch it overflow or see "
        "nothing beside it, so the model may have lost the other features; scale the features (a log, or a division "
        "by a constant)"]
    assert capsys.readouterr().err.splitlines() == [f"wrote {out}"]
    for model, extra in (("lsp", ["--set", "max_epochs=3"]), ("nystroem-svm-map", []), ("crf-ml", [])):
        with warnings.catch_warnings(record=True) as caught:
            assert main(["train", model, "--train", str(data), "--out", str(tmp_path / "x.npz"), *extra]) == 2
        assert [str(w.message) for w in caught] == []  # nothing but the error: no numpy overflow warning before it
        err = capsys.readouterr().err.splitlines()
        assert len(err) == 1 and err[0].startswith("structrank train: error: ") and WHERE in err[0], err
        assert not (tmp_path / "x.npz").exists()
