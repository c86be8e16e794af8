"""A linear ranker behind a Nyström RBF embedding, as one estimator that saves in the safe model format.

``NystroemFeatures`` (Croce et al. 2016) turns each row into ``K(x, L) U S^(-1/2)`` over landmarks L
sampled from the training rows; any linear ranker of structrank trained on those vectors is a
kernelised ranker. Its scores are ``K(x, L) (U S^(-1/2) w) + b``: three arrays (the landmarks, the
normalisation, the weights) and two numbers, so the model file holds only numbers, never the inner
estimator as an object.

The inner ranker is named by its class (``ranker``) with its parameters as a JSON dict
(``ranker_params``); ``_check_loaded`` names a doctored array of a loaded model. On the command
line: ``nystroem-svm-map`` and ``nystroem-svm-ndcg``.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import scipy.sparse as sp

from structrank.errors import DataFormatError, DataValidationError, DegenerateDataWarning
from structrank.learners.base import (COUNT, POSITIVE, BaseRanker, EvalSetMixin, LinearRankerMixin, built_problem,
                                      overflow_error, parameter_problems)


def _dense(X):
    return X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)


class NystroemRanker(BaseRanker):
    """A structrank linear ranker trained on a Nyström RBF embedding of the rows.

    Parameters
    ----------
    ranker : str, default "StructSVMRanker"
        The class name of a linear structrank ranker (one with ``coef_``: StructSVMRanker,
        RankSVM, LatentPerceptronRanker, LatentSSVMRanker, PermutationCRFRanker, ...).
    ranker_params : dict or None
        Its parameters (JSON values), e.g. ``{"loss": "map", "C": 1.0}``.
    n_landmarks : int, default 500
    gamma : float or None, default None
        RBF width ``exp(-gamma |x - y|^2)``; None: 1 / (number of features), as croce2016 uses.
    random_state : int, default 0
        Seeds the landmarks.

    Attributes
    ----------
    landmarks_, normalization_ : ndarray
        The landmark rows and ``U S^(-1/2)``.
    weights_ : ndarray
        The inner ranker's weights over the embedding.
    intercept_, gamma_ : float

    Examples
    --------
    >>> from structrank.data import make_ranking_dataset
    >>> ds = make_ranking_dataset(n_queries=30, random_state=0)
    >>> model = NystroemRanker(ranker_params={"loss": "map", "C": 10.0}, n_landmarks=50).fit(ds)
    >>> model.weights_.shape, model.score(ds) > 0.5
    ((50,), True)
    """

    _saved_attributes = ("landmarks_", "normalization_", "weights_", "intercept_", "gamma_", "n_features_in_")

    # the inner ranker's parameters are its own class's to check, when it is fitted
    _parameter_constraints = {"ranker": [str], "ranker_params": [dict, None], "n_landmarks": COUNT,
                              "gamma": [*POSITIVE, None], "random_state": ["random_state"]}

    def __init__(self, ranker="StructSVMRanker", ranker_params=None, n_landmarks=500, gamma=None, random_state=0):
        self.ranker = ranker
        self.ranker_params = ranker_params
        self.n_landmarks = n_landmarks
        self.gamma = gamma
        self.random_state = random_state

    def _inner_class(self):
        """The class ``ranker`` names; ValueError naming the linear rankers when it names none of them."""
        # deferred: the model registry sits above the learners (docs/ARCHITECTURE.md); only the inner model needs it
        from structrank.learners.registry import RANKERS, ranker_class

        cls = ranker_class(self.ranker)
        if cls is None or not issubclass(cls, LinearRankerMixin):
            linear = sorted(n for n in RANKERS if issubclass(ranker_class(n), LinearRankerMixin))
            raise ValueError(f"ranker must name a linear structrank ranker ({', '.join(linear)}), got {self.ranker!r}")
        return cls

    def _inner(self):
        return self._inner_class()(**(self.ranker_params or {}))

    def _joint_parameter_problems(self):
        """``ranker`` names a linear ranker, and ``ranker_params`` holds only its parameters, each valid for it
        (its own declaration, its loss): a nested key is named with the keys it could have been."""
        problems = built_problem("ranker", self._inner_class)
        if problems:
            return problems
        cls = self._inner_class()
        params = self.ranker_params or {}
        known = cls().get_params(deep=False)
        unknown = [key for key in params if key not in known]
        if unknown:
            return {"ranker_params": f"ranker_params has no key {unknown[0]!r}: {self.ranker}'s parameters are "
                                     f"{', '.join(sorted(known))}"}
        for name, problem in parameter_problems(cls(**params)).items():  # the first
            path = re.match(rf"{re.escape(name)}(\[[^\]]*\])* must be ", problem)  # k, or loss_params['k']
            if path:
                where = path.group(0)[:-len(" must be ")]
                return {"ranker_params": f"ranker_params[{name!r}]{where[len(name):]} of {self.ranker}"
                                         f"{problem[len(where):]}"}
            return {"ranker_params": f"ranker_params of {self.ranker}: {problem}"}
        return {}

    def _embed(self, X):
        # deferred: the kernels package (numba, the tree kernels) loads only to fit or predict
        from structrank.kernels import RBFKernel

        return RBFKernel(gamma=self.gamma_)(_dense(X), self.landmarks_) @ self.normalization_

    def fit(self, X, y=None, qid=None, eval_set=None, *, group=None, sample_weight=None, eval_group=None,
            eval_qid=None):
        """Sample landmarks from X's rows, embed, and fit the inner ranker on the embedding
        (``eval_set``, embedded alike, goes to a ranker that picks its epoch on it; another scores it into
        ``eval_score_``). The rows may be grouped by LightGBM's ``group``; ``sample_weight`` goes to the inner
        ranker (which may refuse unequal weights)."""
        # deferred: the kernels package (numba, the tree kernels) loads only to fit or predict
        from structrank.kernels import NystroemFeatures, RBFKernel

        self._start_fit()
        qid, eval_set = self._fit_call(X, qid, group, eval_set, eval_group, eval_qid)
        inner = self._inner()
        X, y, qid, offsets = self._validate_fit_data(X, y, qid, sample_weight=sample_weight)
        weight = self._row_weights(offsets)
        # checked even where the inner ranker has no use for it: a malformed dev set is an error, not ignored
        dev = EvalSetMixin._eval_set_arrays(self, eval_set) if eval_set is not None else None
        X = _dense(X)
        self.gamma_ = float(1.0 / X.shape[1] if self.gamma is None else self.gamma)
        nys = NystroemFeatures(RBFKernel(gamma=self.gamma_), n_landmarks=int(self.n_landmarks),
                               random_state=self.random_state)
        with np.errstate(over="ignore", invalid="ignore"):  # the error below says it in one line
            try:
                Z = nys.fit_transform(X)
            except ValueError as exc:  # NystroemFeatures' refusal of a Gram matrix with NaN or infinity
                if "NaN or infinite" not in str(exc):
                    raise
                where = self._too_large_where()
                if where is None:
                    raise overflow_error(self, "kernel values of the landmarks") from None
                raise DataValidationError(f"{where}: the kernel values of the landmarks are NaN or infinite; scale the "
                                          "features (a log, or a division by a constant)") from None
        self.landmarks_, self.normalization_ = np.asarray(nys.landmarks_, dtype=np.float64), nys.normalization_
        with warnings.catch_warnings():  # the rows' own check has warned already; the embedding adds nothing to say
            warnings.simplefilter("ignore", DegenerateDataWarning)
            if dev is not None and isinstance(inner, EvalSetMixin):
                inner.fit(Z, y, qid=qid, sample_weight=weight, eval_set=(self._embed(dev[0]), dev[1], dev[2]))
            else:
                inner.fit(Z, y, qid=qid, sample_weight=weight)
        self.weights_ = np.asarray(inner.coef_, dtype=np.float64)
        self.stop_reason_ = getattr(inner, "stop_reason_", None)  # an iterative inner ranker's early end
        self.intercept_ = float(getattr(inner, "intercept_", 0.0))
        self._scoring_of_inner = inner._scoring()
        return self._finish_fit(None if isinstance(inner, EvalSetMixin) else eval_set)

    def _objective_scoring(self):  # the inner ranker's, its own rule applied
        return getattr(self, "_scoring_of_inner", None) or self._inner()._scoring()

    def _check_loaded(self):
        """A loaded model's arrays fit together (a doctored file names the array that does not)."""
        def need(ok, key, problem):
            if not ok:
                raise DataFormatError(None, None, problem, key)

        need(np.ndim(self.landmarks_) == 2 and np.shape(self.landmarks_)[1] == self.n_features_in_, "landmarks_",
             "landmarks_ must have one row per landmark and n_features_in_ columns (features)")
        need(np.ndim(self.normalization_) == 2 and np.shape(self.normalization_)[0] == np.shape(self.landmarks_)[0],
             "normalization_", "normalization_ must have one row per landmark")
        need(np.ndim(self.weights_) == 1 and np.shape(self.weights_)[0] == np.shape(self.normalization_)[1],
             "weights_", "weights_ must have one entry per column of normalization_")
        need(np.ndim(self.gamma_) == 0 and float(self.gamma_) > 0, "gamma_", "gamma_ must be a positive number")

    def predict(self, X):
        """``K(x, landmarks_) @ normalization_ @ weights_ + intercept_`` for every row."""
        X = self._validate_predict_data(X)
        return self._checked_scores(self._embed(X) @ self.weights_ + self.intercept_)
