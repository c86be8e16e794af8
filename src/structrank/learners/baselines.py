"""Baseline rankers: pointwise linear regression, pairwise RankSVM (liblinear) and a polynomial SVM.

- ``LinearRegressionRanker``: scikit-learn's LinearRegression (Ridge with ``alpha``);
- ``RankSVM``: the pairwise differences built as one sparse product, liblinear's ``LinearSVC``;
- ``PolySVCRanker``: libsvm's ``SVC`` with a degree-3 polynomial kernel on the first 10 documents
  of each query; the kernel expansion is evaluated by hand, so model files hold only numbers.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LinearRegression, Ridge
from sklearn.svm import SVC, LinearSVC
from structrank.constraints import StrOptions

from structrank.errors import DataValidationError
from structrank.learners.base import (COUNT, NON_NEGATIVE, POSITIVE, BaseRanker, LinearRankerMixin, Number,
                                      overflow_error)
from structrank.parallel.rows import dense_view


def varying_columns(X) -> np.ndarray:
    """Boolean mask of the columns of X (dense or sparse) that take more than one value.

    Exact (max != min): a constant column's mean can differ from its value in the last bit, so a
    test on the standard deviation would keep it.
    """
    if sp.issparse(X):
        return X.max(axis=0).toarray().ravel() != X.min(axis=0).toarray().ravel()
    return X.max(axis=0) != X.min(axis=0) if X.shape[0] else np.zeros(X.shape[1], dtype=bool)


class LinearRegressionRanker(LinearRankerMixin, BaseRanker):

    """Pointwise baseline: least-squares regression of the labels, ranking by the prediction.

    Parameters
    ----------
    alpha : float, default 0.0
        Ridge penalty; 0 is ordinary least squares.

    Examples
    --------
    >>> from structrank.data import make_ranking_dataset
    >>> ds = make_ranking_dataset(n_queries=20, random_state=0)
    >>> model = LinearRegressionRanker().fit(ds.X, ds.y, qid=ds.qid)
    >>> model.predict(ds.X).shape == (ds.n_rows,)
    True
    """

    _saved_attributes = ("coef_", "intercept_", "n_features_in_")

    _parameter_constraints = {"alpha": NON_NEGATIVE}

    def __init__(self, alpha=0.0):
        self.alpha = alpha

    _learns_within_queries = False

    def fit(self, X, y=None, qid=None, *, group=None, sample_weight=None, eval_set=None, eval_group=None,
            eval_qid=None):
        """Fit on rows X with labels y grouped by qid (or a RankingDataset as X): the least-squares
        regression of the labels (ridge when ``alpha > 0``), constant columns at weight 0. The rows may be grouped by LightGBM's ``group`` (rows per query) instead of qid;
        ``sample_weight`` weighs the queries (``fit_conventions.row_weights``); an ``eval_set`` (LightGBM's
        ``[(X, y)]`` with ``eval_group`` too) is scored into ``eval_score_``. Returns self."""
        self._start_fit()
        qid, eval_set = self._fit_call(X, qid, group, eval_set, eval_group, eval_qid)
        X, y, qid, offsets = self._validate_fit_data(X, y, qid, sample_weight=sample_weight)
        weight = self._row_weights(offsets)
        if np.all(y == y[0]):
            self._warn_degenerate(f"every training label is {int(y[0])}: the model predicts that constant for every "
                                  "document and ranks nothing", 2)
        # A CSR matrix that lists every column (a LETOR file) is its dense values: scikit-learn solves
        # sparse input iteratively (lsqr, sparse_cg), whose stopping point follows the BLAS kernel
        # (MAP moved in the fourth decimal between processors), dense input directly.
        X = dense_view(X)
        # Constant columns get weight 0 (they only shift the intercept); fitted as they are, the
        # rounding of their mean leaves tiny non-zero centred values that lstsq turns into
        # arbitrary weights.
        varies = varying_columns(X)
        self.coef_ = np.zeros(X.shape[1])
        if varies.any():
            model = LinearRegression() if self.alpha == 0 else Ridge(alpha=self.alpha)
            try:
                with np.errstate(over="ignore", invalid="ignore"):  # the error below says it in one line
                    model.fit(X[:, varies] if not varies.all() else X, y.astype(np.float64), sample_weight=weight)
            except ValueError:  # the solver refuses the inf/NaN that centring features near 1e308 gives
                raise overflow_error(self, "centred features") from None
            self.coef_[varies] = np.asarray(model.coef_, dtype=np.float64).ravel()
            self.intercept_ = float(model.intercept_)
        else:
            self.intercept_ = float(np.average(y, weights=weight))
        return self._finish_fit(eval_set)


def preference_pairs(y, offsets, max_pairs_per_query=None, random_state=None):
    """All (better, worse) row pairs of each query: rows i, j of one query with y[i] > y[j].

    With ``max_pairs_per_query`` a seeded uniform sample of each query's pairs is kept.
    """
    rng = np.random.default_rng(random_state)
    better, worse = [], []
    for start, end in zip(offsets[:-1], offsets[1:]):
        labels = y[start:end]
        i, j = np.nonzero(labels[:, None] > labels[None, :])
        if max_pairs_per_query is not None and i.size > max_pairs_per_query:
            keep = np.sort(rng.choice(i.size, max_pairs_per_query, replace=False))
            i, j = i[keep], j[keep]
        better.append(i + start)
        worse.append(j + start)
    if not better:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(better).astype(np.int64), np.concatenate(worse).astype(np.int64)


class RankSVM(LinearRankerMixin, BaseRanker):

    """Pairwise RankSVM (Joachims 2002) trained with liblinear on difference vectors.

    Each pair of documents of one query with different labels gives the difference
    x_better - x_worse; a linear SVM without intercept separates those differences from their
    negations. Half of the differences are negated (deterministically) so that liblinear sees
    two balanced classes.

    Parameters
    ----------
    C : float, default 1.0
        liblinear's C, per pair.
    loss : {"hinge", "squared_hinge"}, default "hinge"
    max_pairs_per_query : int or None
        Sample at most this many pairs per query (all by default).
    max_iter : int, default 1000000
        liblinear's limit on its coordinate-descent passes: high enough that the grid's largest C converges
        on the LETOR sets (a smaller limit stops there with a ConvergenceWarning).
    tol : float, default 1e-4
    random_state : int, default 0
        Seeds pair sampling and liblinear's coordinate order.

    Examples
    --------
    >>> from structrank.data import make_ranking_dataset
    >>> ds = make_ranking_dataset(n_queries=20, random_state=0)
    >>> RankSVM(C=0.1).fit(ds).score(ds) > 0.5
    True
    """

    _saved_attributes = ("coef_", "intercept_", "n_features_in_", "n_pairs_", "n_iter_")

    _parameter_constraints = {"C": POSITIVE, "loss": [StrOptions({"hinge", "squared_hinge"})],
                              "max_pairs_per_query": [*COUNT, None], "max_iter": COUNT, "tol": POSITIVE,
                              "random_state": ["random_state"]}

    def __init__(self, C=1.0, loss="hinge", max_pairs_per_query=None, max_iter=1_000_000, tol=1e-4, random_state=0):
        self.C = C
        self.loss = loss
        self.max_pairs_per_query = max_pairs_per_query
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def fit(self, X, y=None, qid=None, *, group=None, sample_weight=None, eval_set=None, eval_group=None,
            eval_qid=None):
        """Fit on rows X with labels y grouped by qid (or a RankingDataset as X): the linear SVM on the
        difference vectors of each query's pairs of different labels (a query's weight on each of its
        pairs). The rows may be grouped by LightGBM's ``group`` (rows per query) instead of qid;
        ``sample_weight`` weighs the queries (``fit_conventions.row_weights``); an ``eval_set`` (LightGBM's
        ``[(X, y)]`` with ``eval_group`` too) is scored into ``eval_score_``. Returns self."""
        self._start_fit()
        qid, eval_set = self._fit_call(X, qid, group, eval_set, eval_group, eval_qid)
        X, y, qid, offsets = self._validate_fit_data(X, y, qid, sample_weight=sample_weight)
        weight = self._row_weights(offsets)
        better, worse = preference_pairs(y, offsets, self.max_pairs_per_query, self.random_state)
        self.n_pairs_ = int(better.size)
        if better.size == 0:
            raise DataValidationError("no training query has two documents with different labels: nothing to learn from")
        # Difference vectors as one sparse product: row p of P is +1 at better[p], -1 at worse[p].
        pairs = np.arange(better.size)
        P = sp.csr_matrix(
            (np.r_[np.ones(better.size), -np.ones(better.size)], (np.r_[pairs, pairs], np.r_[better, worse])),
            shape=(better.size, X.shape[0]),
        )
        D = P @ X
        sign = np.where(pairs % 2 == 0, 1.0, -1.0)
        D = sp.diags(sign) @ D if sp.issparse(D) else D * sign[:, None]
        svm = LinearSVC(
            C=self.C, loss=self.loss, fit_intercept=False, dual=True, max_iter=self.max_iter, tol=self.tol,
            random_state=self.random_state,
        )
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            svm.fit(D, sign, sample_weight=None if weight is None else weight[better])
        if any(issubclass(w.category, ConvergenceWarning) for w in caught):
            warnings.warn(f"RankSVM(C={self.C}): liblinear stopped at max_iter={self.max_iter} before "
                          f"reaching tol={self.tol}; the weights are usable but not optimal", ConvergenceWarning,
                          stacklevel=2)
        self.coef_ = svm.coef_.ravel().astype(np.float64)
        self.intercept_ = 0.0
        self.n_iter_ = int(np.max(svm.n_iter_))
        return self._finish_fit(eval_set)


class PolySVCRanker(BaseRanker):

    """Pointwise baseline: an SVM classifier with a polynomial kernel, ranking by its decision value.

    The SVM baseline of Haponchyk & Moschitti (2018): good against bad documents, kernel
    ``(gamma x.x' + coef0)^degree`` of degree 3, trained with libsvm (sklearn's SVC) on at most
    ``max_per_query`` documents of each training query (the first ones in file order) "to make
    the positive/negative rate more balanced". The features are standardised with the training
    means and deviations first, since a polynomial kernel is not scale-free.

    The model keeps only numbers (support vectors, their dual coefficients, the intercept,
    the scaling), and ``predict`` evaluates the kernel expansion itself, so model files need no
    pickle.

    Parameters
    ----------
    C : float, default 1.0
    degree : int, default 3
    coef0 : float, default 1.0
    gamma : "scale" or float, default "scale"
        libsvm's 1 / (n_features * X.var()) for "scale".
    max_per_query : int or None, default 10
    relevant_from : int, default 1

    Examples
    --------
    >>> from structrank.data import make_ranking_dataset
    >>> ds = make_ranking_dataset(n_queries=20, random_state=0)
    >>> PolySVCRanker().fit(ds).predict(ds.X).shape == (ds.n_rows,)
    True
    """

    _saved_attributes = ("support_vectors_", "dual_coef_", "intercept_", "gamma_", "mean_", "scale_",
                         "n_features_in_")
    _learns_within_queries = False

    # degree at most 10: the kernel value to that power overflows float64 only past 1e30, where
    # degree 1000 overflowed for kernel values above 2 (a model file said so and predict gave inf)
    _parameter_constraints = {"C": POSITIVE, "degree": [Number(Integral, 1, 10, closed="both")],
                              "coef0": [Number(Real, None, None, closed="neither")],
                              "gamma": [StrOptions({"scale", "auto"}), *POSITIVE],
                              "max_per_query": [*COUNT, None], "relevant_from": COUNT}

    def __init__(self, C=1.0, degree=3, coef0=1.0, gamma="scale", max_per_query=10, relevant_from=1):
        self.C = C
        self.degree = degree
        self.coef0 = coef0
        self.gamma = gamma
        self.max_per_query = max_per_query
        self.relevant_from = relevant_from

    def fit(self, X, y=None, qid=None, *, group=None, sample_weight=None, eval_set=None, eval_group=None,
            eval_qid=None):
        """Fit on rows X with labels y grouped by qid (or a RankingDataset as X): the features
        standardised, the polynomial-kernel SVM of good (label ``>= relevant_from``) against bad
        documents, at most ``max_per_query`` of each query (a query's weight on each of its documents). The rows may be grouped by LightGBM's ``group`` (rows per query) instead of qid;
        ``sample_weight`` weighs the queries (``fit_conventions.row_weights``); an ``eval_set`` (LightGBM's
        ``[(X, y)]`` with ``eval_group`` too) is scored into ``eval_score_``.
        Returns self."""
        self._start_fit()
        qid, eval_set = self._fit_call(X, qid, group, eval_set, eval_group, eval_qid)
        X, y, qid, offsets = self._validate_fit_data(X, y, qid, sample_weight=sample_weight)
        weight = self._row_weights(offsets)
        if self.max_per_query is not None:
            rank_in_query = np.arange(X.shape[0]) - np.repeat(offsets[:-1], np.diff(offsets))
            keep = rank_in_query < self.max_per_query
            X, y = X[keep], y[keep]
            weight = None if weight is None else weight[keep]
        X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
        labels = (y >= self.relevant_from).astype(np.int64)
        if np.unique(labels).size < 2:
            raise DataValidationError(f"the training documents are all good or all bad (good: label >= "
                                      f"{self.relevant_from}): nothing to learn from")
        with np.errstate(over="ignore", invalid="ignore"):  # features near 1e308 overflow: the error below says so
            self.mean_ = X.mean(axis=0)
            std = X.std(axis=0)
            self.scale_ = np.where(varying_columns(X) & (std > 0), std, 1.0)
            Z = (X - self.mean_) / self.scale_
        if not np.all(np.isfinite(Z)):
            raise overflow_error(self, "standardised features")
        svm = SVC(C=self.C, kernel="poly", degree=self.degree, coef0=self.coef0, gamma=self.gamma).fit(
            Z, labels, sample_weight=weight)
        self.support_vectors_ = svm.support_vectors_
        self.dual_coef_ = svm.dual_coef_.ravel()
        self.intercept_ = float(svm.intercept_[0])
        self.gamma_ = float(svm._gamma)
        return self._finish_fit(eval_set)

    def predict(self, X):
        """The SVM's decision value of each row (higher: more likely good)."""
        X = self._validate_predict_data(X)
        X = X.toarray() if sp.issparse(X) else X
        Z = (X - self.mean_) / self.scale_
        kernel = (self.gamma_ * Z @ self.support_vectors_.T + self.coef0) ** self.degree
        return self._checked_scores(kernel @ self.dual_coef_ + self.intercept_)

    decision_function = predict
