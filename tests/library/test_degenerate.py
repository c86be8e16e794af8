"""Every ranker on degenerate training data: finite weights (with a warning when they mean nothing) or a clear error.

Each command-line model (structrank.learners.registry.MODELS, which covers every class a model file
may hold) is fitted on small data of each degenerate kind below, with
few iterations. It must either

- fit, with finite weights (``coef_``, where the class has them) and finite predictions, and
  warn ``structrank.errors.DegenerateDataWarning`` exactly when the result means nothing
  ("warn" below: the model cannot order the documents of any training query), or
- raise a ``DataValidationError`` (a StructRankError and a ValueError) that says what is wrong
  with the data ("raise").

Never NaN weights and never a foreign exception (ZeroDivisionError, LinAlgError, numba, LightGBM).

======================  =====  =====  ========  =======  =========  ======  ======  ======  ======
model                   all 0  all 2  constant  one      duplicated  zero   zero    one     labels
                                      features  feature  query       dense  sparse  query   0, 5000
======================  =====  =====  ========  =======  =========  ======  ======  ======  ======
linreg                  warn   warn   warn      ok       ok          warn   warn    ok      ok
ranksvm                 raise  raise  warn      ok       ok          warn   warn    ok      ok
svc-poly                raise  raise  warn      ok       ok          warn   warn    ok      ok
mcrank                  raise  raise  warn      ok       ok          warn   warn    ok      ok
lambdamart              raise  raise  warn      ok       ok          warn   warn    ok      raise
svm-* and dorm (SSVM)   raise  raise  warn      ok       ok          warn   warn    ok      ok
lsp, lsp-ap[-exact]     raise  raise  warn      ok       ok          warn   warn    ok      ok
lssvm-ap[-exact]        raise  raise  warn      ok       ok          warn   warn    ok      ok
crf-* (all seven)       raise  raise  warn      ok       ok          warn   warn    ok      ok
gbrt-* (every loss)     raise  raise  warn      ok       ok          warn   warn    ok      ok
mlp-* (torch extra)     raise  raise  warn      ok       ok          warn   warn    ok      ok
======================  =====  =====  ========  =======  =========  ======  ======  ======  ======

- all 0 / all 2: every label the same. LinearRegressionRanker fits the constant (weights 0,
  intercept the label) and warns; every other learner has nothing to learn from and raises
  ("no training query has two documents with different labels", "all good or all bad",
  "McRank needs at least two grades", ...).
- constant features, all-zero features: no feature varies within any query (for the pointwise
  linreg, svc-poly and mcrank: over the training rows), so every document of a query gets the
  same score; the fit finishes (weights 0 or of the order of rounding) and warns. Constant
  columns get weight exactly 0 in linreg (before, the rounding of their mean could give them
  arbitrary weights) and scale 1 in svc-poly (before, a std of ~1e-17 blew them up).
- one feature, duplicated query (one query's rows twice, under two qids), one query only: fit.
- labels 0 and 5000: LambdaMART's gain 2^label - 1 overflows past label 1023, so it raises;
  the others fit (their gains are linear or binary).
- every model whose loss is constant on the training lists warns on every case it fits: the loss's own
  ``RankingLoss.constant_on(6)`` decides, read from the registries (the model's loss,
  ``learners.registry.trained_loss``, built with the model's options), so a new loss needs no line here. Among
  them are the models on precision and recall: P@10 and R@10 take one value over all rankings of a query of 6
  documents, which the fit says once (k=10 is at least the longest training list,
  ``BaseRanker._warn_if_loss_is_constant``, issue 38). The hinge is then 0 at w = 0 and the weights of the
  structural SVM and the perceptron stay all zero; the learners that take the loss's gradient on the scores
  (``ScoreLossScorerMixin``: boosted trees and networks) still follow the hinge's ordering term
  s . (c_hat - c_star) until the good documents score above the bad ones.

The baselines' rows are their classes' (``FITS_CONSTANT_LABELS``, ``EXPONENTIAL_GAIN``), so every model a class
trains follows its row.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from structrank.errors import DataValidationError, DegenerateDataWarning, StructRankError
import structrank.learners
from structrank.learners.registry import FEATURE_MODELS, MODELS, RANKERS, ranker_class, trained_loss
from structrank.learners.score_loss import ScoreLossScorerMixin
from structrank.losses import entries, get_loss

N_QUERIES, DOCS, N_FEATURES = 5, 6, 4

# few iterations: the cases are about what the data does to a learner, not about convergence
FAST = {
    "max_iter": 30,  # structural SVMs (also each CCCP step of the latent SSVM)
    "max_outer": 3,
    "max_epochs": 3,  # perceptron, CRF
    "n_estimators": 5,  # LightGBM
    "epochs": 2,  # MLP
    "min_child_samples": 2,
    "random_state": 0,
}


def base_data():
    """(X, y, qid): N_QUERIES queries of DOCS documents, labels 0-2 with every query holding 0 and 2."""
    rng = np.random.default_rng(0)
    qid = np.repeat(np.arange(N_QUERIES), DOCS)
    y = rng.integers(0, 3, size=qid.size)
    y[::DOCS] = 0
    y[1::DOCS] = 2
    X = rng.normal(size=(qid.size, N_FEATURES))
    X[:, 0] += y
    return X, y, qid


def make_case(case):
    X, y, qid = base_data()
    if case == "all 0":
        return X, np.zeros_like(y), qid
    if case == "all 2":
        return X, np.full_like(y, 2), qid
    if case == "constant features":  # every column constant, values whose mean rounds
        return np.tile([0.1, -7.3, 3.0, 1e3], (qid.size, 1)), y, qid
    if case == "one feature":
        return X[:, :1].copy(), y, qid
    if case == "duplicated query":  # query 0's rows under qids 0 and 1
        rows = slice(0, DOCS)
        return np.vstack([X[rows], X[rows]]), np.concatenate([y[rows], y[rows]]), np.repeat([0, 1], DOCS)
    if case == "zero dense":
        return np.zeros_like(X), y, qid
    if case == "zero sparse":
        return sp.csr_matrix(X.shape), y, qid
    if case == "one query":
        return X[:DOCS], y[:DOCS], qid[:DOCS]
    if case == "labels 0, 5000":
        return X, np.where(y > 0, 5000, 0), qid
    raise AssertionError(case)


CASES = ["all 0", "all 2", "constant features", "one feature", "duplicated query", "zero dense", "zero sparse",
         "one query", "labels 0, 5000"]


#: the class that fits labels that are all the same (the constant: weights 0, intercept the label) and warns
FITS_CONSTANT_LABELS = ("LinearRegressionRanker",)
#: the class whose gain 2^label - 1 overflows past label 1023 (LightGBM's lambdarank)
EXPONENTIAL_GAIN = ("LambdaMARTRanker",)


def constant_loss(spec, longest=DOCS):
    """Why the model's loss gives every ranking of a list of ``longest`` documents the same value (its
    ``RankingLoss.constant_on``, the loss built from the registry with the model's options), or None."""
    name = trained_loss(spec)
    if name is None:
        return None
    inner = spec.defaults.get("ranker_params") or {}  # nystroem-svm-*: its inner ranker's
    # an "auto" gain is settled by the labels at fit; built without them it is the binary one
    return get_loss(name, **{**spec.loss_options(), **(inner.get("loss_params") or {})}).constant_on(longest)


def expected(spec, case):
    """The documented behaviour (module docstring): "ok", "warn" or "raise"."""
    if case in ("all 0", "all 2"):
        return "warn" if spec.estimator in FITS_CONSTANT_LABELS else "raise"
    if case in ("constant features", "zero dense", "zero sparse"):
        return "warn"
    if case == "labels 0, 5000" and spec.estimator in EXPONENTIAL_GAIN:
        return "raise"
    if constant_loss(spec) is not None:
        return "warn"  # e.g. P@10 and R@10 are alike for every ranking of DOCS < 10 documents: k warns (issue 38)
    return "ok"


def learns_from_the_bare_hinge(spec):
    """Whether the model, on a loss that is alike for every ranking, still learns an order: a learner that takes
    the loss's gradient on the scores follows the hinge's term s . (c_hat - c_star) until the good documents score
    above the bad ones (the structural SVM and the perceptron stay at w = 0)."""
    return issubclass(spec.cls, ScoreLossScorerMixin) and constant_loss(spec) is not None


def test_the_expectations_come_from_the_losses_not_from_model_names():
    """Which models warn on every case is the losses' own property: the models of exactly the losses whose
    constant_on(6) speaks at their default options (precision and recall among them), and no other model is excused."""
    warned = {name for name, spec in FEATURE_MODELS.items() if constant_loss(spec) is not None}
    speaking = {name for name, entry in entries().items() if entry.build().constant_on(DOCS) is not None}
    assert {"precision", "recall"} <= speaking
    assert warned == {name for name, spec in FEATURE_MODELS.items() if trained_loss(spec) in speaking}
    assert {n for n in warned if learns_from_the_bare_hinge(MODELS[n])} == {
        n for n in warned if n.startswith(("gbrt-", "mlp-"))}
    assert constant_loss(MODELS["svm-precision"], longest=11) is None  # k=10 below the longest list: it orders


def make_model(spec):
    params = set(spec.cls().get_params(deep=False))
    if spec.cls is ranker_class("RankSVM"):
        params.discard("max_iter")  # liblinear's: its default converges on these small problems
    return spec.make(**{k: v for k, v in FAST.items() if k in params})


def test_the_cli_models_cover_every_ranker_class():
    """Every class of structrank.learners that saves its learned arrays is one a registered model trains."""
    saved = {name for name in structrank.learners.__all__
             if hasattr(getattr(structrank.learners, name), "_saved_attributes")}
    assert saved == set(RANKERS) == {spec.estimator for spec in MODELS.values()}


def _with_extras(names):
    """Each model name, marked with the optional extra its class needs to train (MLPRanker: torch)."""
    return [pytest.param(n, marks=pytest.mark.extra(extra)) if (extra := getattr(MODELS[n].cls, "_requires_extra", None))
            else n for n in names]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("name", _with_extras(FEATURE_MODELS))  # text models: tests/library/test_cross_encoder.py
def test_degenerate_training_data(name, case):
    spec = MODELS[name]
    X, y, qid = make_case(case)
    model = make_model(spec)
    outcome = expected(spec, case)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if outcome == "raise":
            with pytest.raises(DataValidationError) as info:
                model.fit(X, y, qid=qid)
            assert isinstance(info.value, StructRankError) and isinstance(info.value, ValueError)
            assert "nothing to learn" in str(info.value) or "label" in str(info.value), str(info.value)
            return
        model.fit(X, y, qid=qid)
    degenerate = [w for w in caught if issubclass(w.category, DegenerateDataWarning)]
    foreign = [w for w in caught if issubclass(w.category, RuntimeWarning)]
    assert not foreign, [str(w.message) for w in foreign]  # no overflow, division by zero, invalid value
    if outcome == "warn":
        assert len(degenerate) == 1, [str(w.message) for w in caught]
        assert degenerate[0].filename == __file__  # points at the caller's fit
    else:
        assert not degenerate, [str(w.message) for w in degenerate]
    coef = getattr(model, "coef_", None)
    if coef is not None:
        assert coef.shape == (X.shape[1],) and np.all(np.isfinite(coef)), coef
    scores = model.predict(X)
    assert scores.shape == (X.shape[0],) and np.all(np.isfinite(scores)), scores
    if outcome == "warn" and not learns_from_the_bare_hinge(spec):  # nothing learned: each query's documents alike
        for q in np.unique(qid):
            mine = scores[qid == q]  # alike up to BLAS rounding (identical rows can take other kernels)
            assert np.ptp(mine) <= 1e-9 * (1 + np.abs(mine).max()), (q, mine)
    # the fitted model scores fresh data finitely too
    fresh = np.random.default_rng(1).normal(size=(7, X.shape[1])) * 100
    assert np.all(np.isfinite(model.predict(fresh)))


@pytest.mark.parametrize("case", ["constant features", "zero dense"])
def test_constant_columns_get_weight_zero_in_linear_regression(case):
    X, y, qid = make_case(case)
    with pytest.warns(DegenerateDataWarning, match="constant"):
        model = MODELS["linreg"].make().fit(X, y, qid=qid)
    np.testing.assert_array_equal(model.coef_, 0.0)
    assert model.intercept_ == pytest.approx(y.mean())


def test_constant_column_among_varying_ones_gets_weight_zero():
    X, y, qid = base_data()
    X[:, 2] = 0.1  # its mean is not exactly 0.1: fitted as it is, it could take any weight
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateDataWarning)
        model = MODELS["linreg"].make().fit(X, y, qid=qid)
    assert model.coef_[2] == 0.0
    reference = MODELS["linreg"].make().fit(np.delete(X, 2, axis=1), y, qid=qid)
    np.testing.assert_allclose(np.delete(model.coef_, 2), reference.coef_, rtol=1e-10)
    np.testing.assert_allclose(model.predict(X), reference.predict(np.delete(X, 2, axis=1)), rtol=1e-10)


def test_features_constant_within_queries_but_not_across_warn_ranking_learners_only():
    X, y, qid = base_data()
    X = np.repeat(np.arange(N_QUERIES, dtype=float)[:, None], DOCS, axis=0) * np.ones((1, N_FEATURES))
    with pytest.warns(DegenerateDataWarning, match="within any training query"):
        MODELS["ranksvm"].make().fit(X, y, qid=qid)
    with warnings.catch_warnings():  # a pointwise learner can still learn labels across queries
        warnings.simplefilter("error", DegenerateDataWarning)
        MODELS["linreg"].make().fit(X, y, qid=qid)


@pytest.mark.parametrize("sparse", [False, True])
def test_variation_in_the_last_row_of_a_long_query_is_found(sparse):
    from structrank.learners.base import features_vary_within_queries

    X = np.ones((5000, 3))
    offsets = np.array([0, 10, 5000])
    as_input = sp.csr_matrix if sparse else np.asarray
    assert not features_vary_within_queries(as_input(X), offsets)
    X[-1, 2] = 2.0
    assert features_vary_within_queries(as_input(X), offsets)
    assert not features_vary_within_queries(as_input(X), np.array([0, 10, 4999, 5000]))  # alone in its query


@pytest.mark.parametrize("qid", [[1.0, float("nan"), 1.0, 2.0], np.array([1, float("nan"), 1, 2], dtype=object)])
def test_a_nan_qid_is_named_by_fit_and_evaluate(qid):
    """A missing query id (NaN equals no other, so its rows were split or called "not contiguous")."""
    from structrank.data.labels import check_qid
    from structrank.errors import DataValidationError
    from structrank.learners import StructSVMRanker
    from structrank.metrics import evaluate

    with pytest.raises(DataValidationError, match="qid of row 1 is NaN"):
        evaluate([1, 0, 1, 0], [1.0, 2.0, 3.0, 4.0], qid, ["map"])
    with pytest.raises(DataValidationError, match="qid of row 1 is NaN"):
        StructSVMRanker().fit(np.random.default_rng(0).random((4, 3)), [1, 0, 1, 0], qid=qid)
    with pytest.raises(DataValidationError, match="do not sort together"):
        check_qid(np.array([1, None, 2], dtype=object))

