"""What every structrank ranker shares: scikit-learn conventions for ranking data.

A ranker is fitted on rows grouped into queries: ``fit(X, y, qid=qid)`` (qid aligned with the
rows, as in XGBoost's ranking API) or ``fit(dataset)`` with a RankingDataset. ``predict`` gives
one score per row; ``score`` is the metric the ranker stands for, under a named convention
(``auto`` unless the ranker names one: see ``BaseRanker``).

qid is requested through scikit-learn's metadata routing by default, so that with
``sklearn.set_config(enable_metadata_routing=True)`` a GridSearchCV or cross_val_score passes
it to ``fit``, to ``score`` and to the QueryKFold splitter without any further call.

What it holds:

- ``BaseRanker`` (scikit-learn's ``BaseEstimator``): validation (``unpack``: arrays, a
  ``RankingDataset``, or a DataFrame whose ``qid`` column gives the queries), the grouping of rows
  by qid, and ``score`` under the ranker's metric (``sample_weight`` must be None:
  ``Pipeline.score`` passes it). ``_finish_fit`` turns non-finite learned arrays into a
  ``DataValidationError``, an all-zero ``coef_`` into a ``DegenerateDataWarning``, and a fit whose
  ``health_`` (``OptimiserHealth``: slack, obj/obj(w=0), ``|w|^2``) says it stayed at w = 0 into one
  ``StayedAtZeroWarning`` line naming the cause and the cure; a fit on a feature past ``LARGEST_FEATURE``
  (1e154, whose square overflows float64) after the learner's own overflow errors: a ``DataValidationError``
  when the model scores the rows holding it NaN or infinite, else a ``FeatureScaleWarning`` naming the
  feature and its row (not for trees, ``_scale_sensitive``) -- a check after the fit, so that each
  learner's own one-line overflow error still comes first;
  ``_checked_scores`` makes predict refuse NaN/inf scores and warn (``DegenerateDataWarning``) when every
  score ties (``warn_if_every_query_ties``: when they tie within every query, for ``structrank predict``);
- ``LinearRankerMixin.predict``: rows summed in a fixed order (``parallel.rows.matvec``);
- ``EvalSetMixin``: the dev set of the learners that choose their epoch on it (``dev_metric`` may
  be a list, whose mean is used);
- ``informative_rows``: the labels, offsets and row indices of the queries with a good and a bad
  document, so that ``StructSVMRanker`` trains on them in place (no copy of X: the other rows get
  zero coefficients, which the products skip, so the bits equal a fit on a copy);
- parameters as data: every ranker declares each ``__init__`` parameter once in scikit-learn's
  ``_parameter_constraints`` (``Interval``/``StrOptions``; ``Number`` is an ``Interval`` that
  refuses booleans, ``Items`` a list whose items each meet a constraint; shared ``POSITIVE``,
  ``COUNT``, ``METRICS``...; a loss's options are the loss's own, ``learners.loss_params``; counts at most ``MAX_COUNT``), and ``parameter_problems``
  checks them, then what they must satisfy together (a loss's options against its declaration,
  ``_loss_params_problems``; ``_joint_parameter_problems``: a nested dict, options that need each other), then
  the loss they build (``_built_loss``, without labels), for ``--set`` (``ModelSpec.make``) and for model
  headers (``load_model``); ``fit`` checks all but the build before the data (``_start_fit``) and builds its
  loss once, on the labels (``LossParamsMixin._fit_loss``); ``_warn_if_loss_is_constant``: a k that makes the
  loss constant on every training list (P@k, Recall@k) is a ``DegenerateDataWarning``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted, validate_data

from structrank.constraints import (COUNT, MAX_COUNT, NON_NEGATIVE, NON_NEGATIVE_INT, POSITIVE,  # noqa: F401
                                   Constraint, InvalidParameterError, Items, Number, StrOptions, problem)
from structrank.data.dataset import RankingDataset, check_labels, contiguous_order, group_offsets, rows_of_queries
from structrank.data.labels import check_finite_features, check_qid
from structrank.data.filters import queries_with_both
from structrank.errors import DataValidationError, DegenerateDataWarning, FeatureScaleWarning
from structrank.learners.epochs import BestEpoch
from structrank.learners.fit_conventions import fit_qid, one_eval_set, refuse_weights, row_weights
from structrank.metrics import evaluate
from structrank.metrics.conventions import AUTO, CONVENTION_NAMES
from structrank.metrics.evaluate import parse_metric



def model_inputs(model) -> str:
    """What a ranker (or a ranker class) scores: "text", question-candidate pairs (its class declares
    ``inputs = "text"``; its model is a folder, ``structrank.cross_encoder_models``), or "features", the rows of a
    LETOR/SVMlight file (any other class; its model is an npz file). The same words as a registered model's
    ``learners.registry.ModelSpec.inputs``."""
    return getattr(model, "inputs", "features")


class MetricNames(Constraint):
    """Metric names ``evaluate`` knows (``"map"``, ``"ndcg@10"``): one, several comma-separated, or a list,
    checked before a fit evaluates anything (an unknown name would otherwise end the fit after its first epoch)."""

    def is_satisfied_by(self, val):
        if not isinstance(val, (str, list, tuple)) or not val:
            return False
        try:
            for name in metric_list(val):
                parse_metric(name)
        except (ValueError, AttributeError):
            return False
        return True

    def __str__(self):
        return "metric names (map, mrr@k, ndcg@k, p@k, ...: one, comma-separated, or a list)"


class ConventionName(Constraint):
    """A convention ``evaluate`` knows (``auto`` or a named one, in any case)."""

    def is_satisfied_by(self, val):
        return isinstance(val, str) and val.lower() in CONVENTION_NAMES

    def __str__(self):
        return f"a convention among {{{', '.join(repr(name) for name in CONVENTION_NAMES)}}}"


# threads: -1 all cores, -2 all but one, ...; 0 is no number of threads
N_JOBS = [Number(Integral, 1, MAX_COUNT, closed="both"), Number(Integral, -MAX_COUNT, -1, closed="both"), None]
METRICS = [MetricNames()]
CONVENTION = [ConventionName()]


def parameter_problems(estimator, build_loss=True) -> dict:
    """{name: "C must be a float in the range (0.0, inf), got inf"} of the parameters that meet none of
    their ``_parameter_constraints`` (scikit-learn's constraint objects, worded without the class); when
    each parameter meets its own, the problems of their combination: a loss's options read against its
    declaration (``_loss_params_problems``), the others (``_joint_parameter_problems``: a nested dict's keys and
    values), then the loss they build (``_built_loss``, without labels). ``build_loss=False`` leaves the build to
    a fit, which builds the loss once, on its labels (``LossParamsMixin._fit_loss``)."""
    problems = {}
    for name, value in estimator.get_params(deep=False).items():
        found = problem(name, value, estimator._parameter_constraints.get(name, ()))
        if found:
            problems[name] = found
    if not problems and hasattr(estimator, "_loss_params_problems"):
        problems = estimator._loss_params_problems()
    if not problems and hasattr(estimator, "_joint_parameter_problems"):
        problems = estimator._joint_parameter_problems()
    if not problems and build_loss and hasattr(estimator, "_built_loss"):
        problems = estimator._built_loss().problems
    return problems


def built_problem(name, build) -> dict:
    """{name: the message} of the ValueError that ``build()`` raises (a loss the options cannot build), else {}."""
    try:
        build()
    except ValueError as exc:
        return {name: str(exc)}
    return {}


def check_parameters(estimator, build_loss=True) -> None:
    """InvalidParameterError (a ValueError and a TypeError, as scikit-learn's) naming the class, the first bad
    parameter, what it must be and its value (``build_loss``: as ``parameter_problems``)."""
    problems = parameter_problems(estimator, build_loss)
    if problems:
        raise InvalidParameterError(f"{type(estimator).__name__}: {next(iter(problems.values()))}")


def overflow_error(estimator, what) -> DataValidationError:
    """The error of a fit whose arithmetic left float64 (``what``: the values that showed it)."""
    return DataValidationError(f"{type(estimator).__name__}: training gave non-finite {what} (NaN or infinity): the "
                               "features or the step size are too large for float64; scale the features")


def unpack(X, y=None, qid=None):
    """(X, y, qid) from arrays, a RankingDataset passed as X, or a DataFrame X with a ``qid`` column
    (the query ids; the other columns are the features)."""
    if isinstance(X, RankingDataset):
        if y is not None or qid is not None:
            raise DataValidationError("pass either a RankingDataset or (X, y, qid), not both")
        return X.X, X.y, X.qid
    if hasattr(X, "columns") and "qid" in X.columns:
        if qid is not None:
            raise DataValidationError("X has a qid column and qid is given too: pass one of them")
        return X.drop(columns=["qid"]), y, X["qid"].to_numpy()
    return X, y, qid


class StayedAtZeroWarning(ConvergenceWarning):
    """A structural or perceptron fit that ended where it started, at w = 0 (``OptimiserHealth.stayed_at_zero``):
    its objective is that of w = 0, so the model ranks by what is left of rounding. The message names the
    cause and the formulation that learns instead.

    Examples
    --------
    A C this small keeps w at 0 (the warning can be filtered by its class):

    >>> import warnings
    >>> from structrank.data import make_ranking_dataset
    >>> from structrank.learners import StructSVMRanker
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     model = StructSVMRanker(loss="map", C=1e-6).fit(make_ranking_dataset(n_queries=20, random_state=0))
    >>> model.health_.stayed_at_zero, [w.category.__name__ for w in caught]
    (True, ['StayedAtZeroWarning'])
    """


#: A fit "stayed at w = 0" when its objective is within this fraction of its value at w = 0 ...
ZERO_OBJECTIVE_TOL = 1e-3
#: ... and its scores spread, within every training query, over less than this (in the hinge's units: the
#: losses are in [0, 1], so such scores move no constraint of a scaled feature map by more than this).
ZERO_SCORE_RANGE = 0.05


@dataclass(frozen=True)
class OptimiserHealth:
    """How far a structural or perceptron fit moved from w = 0, as Chakrabarti et al. (2008, Sec. 4.2, Figs. 4-6)
    read an optimiser: the final average slack against its value at w = 0, obj / obj(w = 0) and ``|w|^2``.

    Attributes
    ----------
    slack : float
        The average slack over the training queries used, at the learned w (an upper bound on the
        training loss; the perceptron's: its loss-augmented hinge, in units of the loss).
    zero_slack : float
        The same at w = 0: the mean loss of the max-violating ranking at zero scores.
    objective_ratio : float
        obj / obj(w = 0), obj = ``1/2 |w|^2`` + C x slack (the perceptron has no regulariser: slack /
        zero_slack). 1 means the optimiser found nothing better than w = 0; NaN when obj(w = 0) is 0.
    w_norm2 : float
        ``|w|^2``.
    score_range : float
        The largest spread (max - min) of the training scores within one query, in the hinge's units
        (the perceptron's scores divided by its loss scaling C).

    ``stayed_at_zero``: objective_ratio >= 1 - ``ZERO_OBJECTIVE_TOL`` and score_range <
    ``ZERO_SCORE_RANGE``: the objective did not move off its w = 0 value and the scores are too close
    together to move any constraint (relative thresholds: the losses are in [0, 1]).

    Examples
    --------
    >>> health = OptimiserHealth(slack=0.6, zero_slack=1.0, objective_ratio=0.65, w_norm2=0.09, score_range=0.8)
    >>> health.stayed_at_zero
    False
    >>> print(health)
    slack 0.6000 (1.0000 at w = 0), obj/obj(w=0) 0.6500, |w|^2 0.09, score range 0.8
    """

    slack: float
    zero_slack: float
    objective_ratio: float
    w_norm2: float
    score_range: float

    @property
    def stayed_at_zero(self) -> bool:
        return bool(self.objective_ratio >= 1.0 - ZERO_OBJECTIVE_TOL and self.score_range < ZERO_SCORE_RANGE)

    def __str__(self):
        return (f"slack {self.slack:.4f} ({self.zero_slack:.4f} at w = 0), obj/obj(w=0) {self.objective_ratio:.4f}, "
                f"|w|^2 {self.w_norm2:.3g}, score range {self.score_range:.3g}")


def optimiser_health(w, slack, zero_slack, C, scores, offsets) -> OptimiserHealth:
    """The ``OptimiserHealth`` of weights ``w`` with average slack ``slack`` (``zero_slack`` at w = 0): obj =
    ``1/2 |w|^2`` + C slack (C None: no regulariser, the perceptron's), ``scores`` the training scores (in the
    hinge's units) of the queries ``offsets``, or their per-query ranges already taken."""
    w_norm2 = float(w @ w)
    objective, zero = (slack, zero_slack) if C is None else (0.5 * w_norm2 + C * slack, C * zero_slack)
    ranges = scores if offsets is None else query_ranges(scores, offsets)
    return OptimiserHealth(float(slack), float(zero_slack), float(objective / zero) if zero > 0 else float("nan"),
                           w_norm2, float(np.max(ranges, initial=0.0)))


def query_ranges(scores, offsets) -> np.ndarray:
    """max - min of ``scores`` within each query of ``offsets`` (non-empty queries)."""
    starts = offsets[:-1]
    return np.maximum.reduceat(scores, starts) - np.minimum.reduceat(scores, starts)


class BaseRanker(BaseEstimator):
    """Base class of structrank's rankers (not used directly).

    ``score`` follows one rule for every ranker (``_scoring``, implemented here once): the mean over
    queries of the metric the ranker's loss or objective stands for (a structured loss's own metric,
    e.g. MAP for SVM-map, NDCG@5 for the permutation CRFs; NDCG@10 for a ranker without a loss of its
    own: RankSVM, the regression, the trees), under the convention the ranker names (a ``convention``
    parameter, or a loss whose metric fixes one: the log2 discount is trec_eval's), else ``auto``: the
    convention the labels allow (letor4 for labels 0-2, mslr up to 4, trec above), so that a perfect
    ranking scores 1 on any label range. A loss on binary relevance is judged on the labels binarised
    at its ``relevant_from``. A subclass states only its objective's part (``_objective_scoring``).

    Examples
    --------
    A new ranker subclasses it: ``fit`` validates with ``_validate_fit_data`` (which also accepts a
    RankingDataset) and ``score`` comes for free (NDCG@10 under ``auto`` unless the class says otherwise).

    >>> import numpy as np
    >>> from structrank.data import make_ranking_dataset
    >>> from structrank.learners import LinearRankerMixin
    >>> class FirstFeature(LinearRankerMixin, BaseRanker):
    ...     def fit(self, X, y=None, qid=None):
    ...         X, y, qid, offsets = self._validate_fit_data(X, y, qid)
    ...         self.coef_ = np.eye(X.shape[1])[0]
    ...         return self
    >>> ds = make_ranking_dataset(n_queries=10, random_state=0)
    >>> model = FirstFeature().fit(ds)
    >>> bool(np.array_equal(model.predict(ds.X), ds.X[:, 0])), round(model.score(ds), 4)
    (True, 0.2203)
    """

    # qid is routed to fit and score by default (metadata routing).
    __metadata_request__fit = {"qid": True}
    __metadata_request__score = {"qid": True}

    #: the metric ``score`` reports for a ranker whose objective names none (``_objective_scoring``)
    _score_metric = "ndcg@10"

    #: scikit-learn's parameter declarations, one entry per ``__init__`` parameter: the same rules hold
    #: for ``fit``, ``structrank train --set`` (``learners.registry.ModelSpec.make``) and model files (``model_io``)
    _parameter_constraints: dict = {}

    #: whether the model's scores follow the features' magnitudes (linear models, kernels, networks) rather than
    #: only their order (trees split on thresholds): ``_finish_fit`` warns of a feature past ``LARGEST_FEATURE``
    _scale_sensitive = True

    def _joint_parameter_problems(self) -> dict:
        """{name: problem} of the parameters that are each valid but do not go together (a nested dict of an
        inner estimator's parameters, an option that needs another): ``parameter_problems`` adds them, so fit,
        ``--set`` and model files check them before any work. None by default."""
        return {}

    def _start_fit(self):
        """Every fit's first step: the parameters checked against ``_parameter_constraints`` and together before
        any work, a loss's options against its declaration; the loss is built on the labels, once
        (``LossParamsMixin._fit_loss``)."""
        check_parameters(self, build_loss=False)
        self._said_degenerate = False
        self._too_large = None

    def _fit_call(self, X, qid, group, eval_set, eval_group, eval_qid):
        """(qid, eval set) of a fit called in structrank's or LightGBM's convention (``fit_conventions``)."""
        where = f"{type(self).__name__}.fit"
        return fit_qid(X, qid, group, where), one_eval_set(eval_set, eval_group, eval_qid, where)

    def _row_weights(self, offsets):
        """The fit's query weights (``_validate_fit_data``) repeated over each query's rows, or None."""
        weights = getattr(self, "_query_weights", None)
        return None if weights is None else np.repeat(weights, np.diff(offsets))

    def _refuse_weights(self, sample_weight, X, qid, why):
        """A DataValidationError naming ``why`` when ``sample_weight`` weighs the queries of the rows X (grouped
        by qid) unequally; equal weights are the unweighted fit, which every ranker runs."""
        if sample_weight is not None:
            refuse_weights(self, sample_weight, qid if qid is not None else unpack(X)[2], why)

    def _finish_fit(self, eval_set=None):
        """``self``, every fit's last step: learned arrays with NaN or infinity are an error (a model file
        could not hold them); all-zero weights a DegenerateDataWarning, unless the data's warning said so.
        ``eval_set`` (of a ranker that does not choose on it): its ``score`` becomes ``eval_score_``."""
        self.__dict__.pop("_query_weights", None)  # the fit's, not the model's
        for key in self._saved_attributes:
            value = np.asarray(getattr(self, key, 0.0))
            if value.dtype.kind == "f" and not np.all(np.isfinite(value)):
                raise overflow_error(self, key)
        coef = getattr(self, "coef_", None)
        if coef is not None and not np.any(coef) and not getattr(self, "_said_degenerate", False):
            self._warn_degenerate("training gave all-zero weights: the model scores every document alike and ranks "
                                  "nothing (features too large or too small, C too small, or too few iterations)", 3)
        health = getattr(self, "health_", None)
        if health is not None and health.stayed_at_zero and not getattr(self, "_said_degenerate", False):
            warnings.warn(self.stayed_at_zero_message(), StayedAtZeroWarning, stacklevel=3)
        self._check_too_large()
        if eval_set is not None:
            # LightGBM and PyTerrier pass an eval set to every ranker: one that does not choose its epoch or
            # round on it reports how it scores there rather than ignoring it
            self.eval_score_ = self.score(eval_set) if isinstance(eval_set, RankingDataset) else self.score(*eval_set)
        return self

    def _too_large_where(self):
        """"Class: feature j of row i is v, past 1e+154, where squares overflow float64" for the first value of the
        training data past ``LARGEST_FEATURE`` (row and feature counted from 1, as in the file), or None."""
        too_large = getattr(self, "_too_large", None)
        if too_large is None:
            return None
        row, column, value = too_large[1]
        return (f"{type(self).__name__}: feature {column + 1} of row {row + 1} is {value:g}, past {LARGEST_FEATURE:g}, "
                "where squares overflow float64")

    def _check_too_large(self):
        """After a fit on a feature past ``LARGEST_FEATURE`` (``_validate_fit_data`` kept the rows that hold one):
        DataValidationError when the model scores those rows NaN or infinite, else a FeatureScaleWarning (when
        ``_scale_sensitive``), naming the first such value. The learners' own overflow errors come first."""
        where, too_large, self._too_large = self._too_large_where(), getattr(self, "_too_large", None), None
        if too_large is None:
            return
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                finite = np.all(np.isfinite(self.predict(too_large[0])))
            except DataValidationError:  # predict's refusal of non-finite scores
                finite = False
        if not finite:
            raise DataValidationError(f"{where}: the fitted model scores that row NaN or infinite; scale the features "
                                      "(a log, or a division by a constant)")
        if self._scale_sensitive:
            warnings.warn(f"{where}: sums of squares, norms and standardisation that touch it overflow or see nothing "
                          "beside it, so the model may have lost the other features; scale the features (a log, or a "
                          "division by a constant)", FeatureScaleWarning, stacklevel=4)

    def stayed_at_zero_message(self) -> str:
        """One line for a fit whose ``health_`` says it stayed at w = 0: the model, the figures, the cause and the cure."""
        return (f"{self._formulation()} stayed at w = 0 (obj/obj(w=0) {self.health_.objective_ratio:.4f}, slack "
                f"{self.health_.slack:.4f} against {self.health_.zero_slack:.4f} at w = 0): {self._zero_advice()}")

    def _formulation(self) -> str:
        """The class with the parameters that choose its formulation, for messages (``Class(loss='mrr')``)."""
        return type(self).__name__

    def _zero_advice(self) -> str:
        """Why a fit of this class stays at w = 0, and what learns instead (the message's second half)."""
        return (f"the hinge is lowest near w = 0 for every w that C={self.C:g} allows; a larger C, or a loss that "
                "gives the optimiser a signal here, learns")

    def _checked_scores(self, scores):
        """``scores`` when every one is finite; else a DataValidationError saying how many are not, and where."""
        bad = ~np.isfinite(scores)
        if bad.any():
            raise DataValidationError(
                f"{type(self).__name__}.predict: {int(bad.sum())} of {bad.size} scores are NaN or infinite (the first "
                f"at row index {int(np.flatnonzero(bad)[0])} of X): the features are too large for this model; scale them")
        if scores.size > 1 and not np.any(scores != scores[0]):
            warnings.warn(f"{type(self).__name__}.predict: all {scores.size} scores are equal ({scores[0]:.6g}): the model "
                          "ranks nothing here (its weights are 0, or no feature it uses varies in these rows)",
                          DegenerateDataWarning, stacklevel=3)
        return scores

    def _warn_if_loss_is_constant(self, loss, offsets, stacklevel=2):
        """DegenerateDataWarning when ``loss`` gives every ranking of every training list (queries ``offsets``)
        the same value (``RankingLoss.constant_on``: P@k and Recall@k with k at least the longest list), naming
        k, the longest list and why; ``stacklevel``: the user's frame counted from the caller (1)."""
        longest = int(np.max(np.diff(offsets), initial=0))
        reason = loss.constant_on(longest) if hasattr(loss, "constant_on") else None
        if reason is not None and not getattr(self, "_said_degenerate", False):  # one warning a fit: the data's first
            self._warn_degenerate(f"k={loss.k} is at least the longest training list ({longest} documents): {reason}, "
                                  "so every ranking has the same loss and training optimises nothing of that metric; "
                                  f"choose k below {longest}", stacklevel + 1)

    def _warn_degenerate(self, message, stacklevel):
        """DegenerateDataWarning ``message`` (once per fit), pointing ``stacklevel`` frames above the caller."""
        self._said_degenerate = True
        warnings.warn(f"{type(self).__name__}: {message}", DegenerateDataWarning, stacklevel=stacklevel + 1)

    def _validate_fit_data(self, X, y, qid, dtype=(np.float64, np.float32), sample_weight=None):
        """Validated X, y, qid with each query's rows contiguous, and the query offsets; ``sample_weight``
        (``fit_conventions.row_weights``) as ``_query_weights``, one per query of the offsets (None: unweighted)."""
        X, y, qid = unpack(X, y, qid)
        if y is None:
            # the second phrase is the one scikit-learn's estimator checks look for
            raise DataValidationError(f"{type(self).__name__}.fit needs relevance labels y: it requires y to be "
                                      "passed, but the target y is None")
        if qid is None:
            raise DataValidationError(
                f"{type(self).__name__}.fit needs qid (one query id per row) or group (rows per query). Inside "
                "GridSearchCV or cross_val_score, enable metadata routing: sklearn.set_config("
                "enable_metadata_routing=True); in PyTerrier, pt.ltr.apply_learned_model(ranker, form='ltr') or "
                "structrank.pyterrier.StructrankTransformer(ranker) (form='regression', PyTerrier's default, passes "
                "no queries)"
            )
        # a ranking needs two documents; scikit-learn's message names the row count
        if np.asarray(y).dtype.kind in "fiub":  # a NaN or fractional label in the file readers' words
            check_labels(y, f"{type(self).__name__}.fit")
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=dtype, y_numeric=True, ensure_min_samples=2,
                             ensure_all_finite=False)
        check_finite_features(X, f"{type(self).__name__}.fit")
        _check_csr(X, f"{type(self).__name__}.fit")
        self._too_large = too_large_values(X)
        y = check_labels(y)
        qid = check_qid(qid, X.shape[0])
        weights = row_weights(sample_weight, qid, f"{type(self).__name__}.fit")
        order = contiguous_order(qid)
        if order is not None:  # learners walk queries as contiguous blocks
            X, y, qid = X[order], y[order], qid[order]
            weights = None if weights is None else weights[order]
        offsets, _ = group_offsets(qid)
        self._query_weights = None if weights is None else weights[offsets[:-1]]
        self._warn_constant_features(X, offsets)
        return X, y, qid, offsets

    #: whether the learner learns only from differences between the documents of one query (pairwise
    #: and listwise learners) rather than from each row's label on its own (pointwise learners)
    _learns_within_queries = True

    def _warn_constant_features(self, X, offsets):
        """DegenerateDataWarning when the features give the learner nothing to tell documents apart by."""
        if self._learns_within_queries:
            if not features_vary_within_queries(X, offsets):
                self._warn_degenerate(
                    "no feature varies within any training query (the documents of each query have identical "
                    "feature vectors): there is nothing to rank by, and the model learns nothing", 4)
        elif not features_vary_within_queries(X, np.array([0, X.shape[0]])):
            self._warn_degenerate("every feature is constant over the training rows: there is nothing to rank by, "
                                  "and the model gives every document the same score", 4)

    def _validate_predict_data(self, X):
        X, _, _ = unpack(X)
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=(np.float64, np.float32), reset=False,
                          ensure_all_finite=False)
        check_finite_features(X, f"{type(self).__name__}.predict")
        _check_csr(X, f"{type(self).__name__}.predict")
        return X

    def score(self, X, y=None, qid=None, sample_weight=None):
        """Mean over queries of the metric the ranker stands for, under the ranker's convention or
        ``auto`` (the rule in the class docstring, ``_scoring``), as in scikit-learn: GridSearchCV
        without ``scoring`` tunes it.

        ``sample_weight`` is in the signature because ``Pipeline.score`` always passes it; it must
        be None, as a ranking metric averages queries, not rows.
        """
        if sample_weight is not None:
            raise DataValidationError(f"{type(self).__name__}.score: sample_weight must be None (the score is a "
                                      "mean over queries, which row weights do not define)")
        docids = X.docids if isinstance(X, RankingDataset) else None  # trec_eval's tie rule needs them
        X, y, qid = unpack(X, y, qid)
        if qid is None:
            raise DataValidationError(
                f"{type(self).__name__}.score needs qid. Inside a Pipeline, GridSearchCV or cross_val_score, "
                "enable metadata routing: sklearn.set_config(enable_metadata_routing=True)"
            )
        return self._scored(y, self.predict(X), qid, docids)

    def _scored(self, y, scores, qid, docids=None) -> float:
        """``score``'s value of given scores (also what learners pick their best round or epoch by)."""
        return self._evaluated(y, scores, qid, docids).mean_of()

    def _evaluated(self, y, scores, qid, docids=None, metrics=None):
        """``evaluate`` of given scores by ``metrics`` (default: ``score``'s) under ``score``'s convention
        and relevance."""
        own, convention, relevant_from = self._scoring()
        y = np.asarray(y)
        if relevant_from is not None:  # a loss on binary relevance is judged on binary labels
            y = (y >= relevant_from).astype(np.int64)
        return evaluate(y, scores, qid, list(own if metrics is None else metrics), convention, docids=docids)

    def _scoring(self):
        """(metrics, convention, relevant_from) of ``score``: the mean of the metrics under the
        convention, on labels binarised at ``relevant_from`` (None: the labels as they are). The one
        rule: the objective's metrics; the ranker's ``convention`` parameter if it has one and it is
        set, else the objective's own convention, else ``auto``."""
        metrics, convention, relevant_from = self._objective_scoring()
        return metrics, getattr(self, "convention", None) or convention or AUTO, relevant_from

    def _objective_scoring(self):
        """(metrics, convention or None, relevant_from) that the ranker's loss or objective stands for;
        a convention of None (or ``auto``) leaves the choice to the labels."""
        return (self._score_metric,), None, None

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.target_tags.required = True
        return tags


def warn_if_every_query_ties(model, scores, qid) -> None:
    """DegenerateDataWarning when the scores tie within every query of ``qid`` but not all alike (all alike:
    ``predict`` said so): the model orders no query's documents (``structrank predict``)."""
    scores, qid = np.asarray(scores), np.asarray(qid)
    if scores.size < 2 or not np.any(scores != scores[0]):
        return
    order = np.argsort(qid, kind="stable")
    s, q = scores[order], qid[order]
    starts = np.flatnonzero(np.r_[True, q[1:] != q[:-1]])
    if np.all(np.maximum.reduceat(s, starts) == np.minimum.reduceat(s, starts)):
        warnings.warn(f"{type(model).__name__}: the scores tie within every one of the {starts.size} queries: the model "
                      "ranks no query's documents (no feature it uses varies within a query)", DegenerateDataWarning,
                      stacklevel=2)


#: the largest |feature| whose square float64 holds (its largest number is about 1.8e308): past it, sums of
#: squares, norms, Gram matrices and standardisation overflow or see nothing beside it
LARGEST_FEATURE = 1e154


def too_large_values(X, most_rows=64):
    """None when every |value| of X is at most ``LARGEST_FEATURE``; else (the rows holding a larger one, at most
    ``most_rows`` of them, as X's type, (row, column, value) of the first such value in row order)."""
    values = X.data if sp.issparse(X) else X
    # max and min, not abs: no temporary the size of X (a 10^7-row fit)
    if values.size == 0 or max(values.max(), -values.min()) <= LARGEST_FEATURE:
        return None
    if sp.issparse(X):
        entries = np.flatnonzero(np.abs(X.data) > LARGEST_FEATURE)
        rows = np.searchsorted(X.indptr, entries, side="right") - 1
        row, column = int(rows[0]), int(X.indices[entries[0]])
    else:
        rows, columns = np.nonzero(np.abs(X) > LARGEST_FEATURE)
        row, column = int(rows[0]), int(columns[0])
    keep = np.unique(rows)[:most_rows]
    return X[keep], (row, column, float(X[row, column]))


def _check_csr(X, where):
    """DataValidationError when sparse X has a row pointer or column index out of range (the numba
    kernels read them unchecked, ``parallel.rows``)."""
    if not sp.issparse(X):
        return
    # deferred: numba (start-up time), only for sparse input
    from structrank.parallel.rows import csr_index_error

    error = csr_index_error(X)
    if error is not None:
        raise DataValidationError(f"{where}: the sparse matrix X is malformed: {error}")


class LinearRankerMixin:
    """predict for rankers that learn a weight vector ``coef_`` (and maybe ``intercept_``).

    Examples
    --------
    >>> import numpy as np
    >>> from structrank.data import make_ranking_dataset
    >>> from structrank.learners import RankSVM
    >>> ds = make_ranking_dataset(n_queries=10, random_state=0)
    >>> model = RankSVM().fit(ds)
    >>> bool(np.allclose(model.predict(ds.X), ds.X @ model.coef_))
    True
    """

    def predict(self, X):
        """One score per row: ``X @ coef_``, each row summed left to right, so that a document's score
        is the same bits whether X is dense or CSR and wherever its row sits (BLAS's blocked
        products differ in the last bit with a row's position)."""
        # deferred: numba at the first predict; the scikit-learn and LightGBM rankers need no numba
        from structrank.parallel.rows import matvec

        X = self._validate_predict_data(X)
        return self._checked_scores(matvec(X, np.ravel(self.coef_)) + getattr(self, "intercept_", 0.0))

    def decision_function(self, X):
        return self.predict(X)


def metric_list(metrics) -> list:
    """A ``dev_metric`` value as a list of metric names: one name, several comma-separated, or a list."""
    return [m.strip() for m in (metrics.split(",") if isinstance(metrics, str) else metrics)]


class EvalSetMixin:
    """Dev-set handling for learners that pick their epoch on ``fit(..., eval_set=...)``.

    Needs ``dev_metric`` (a metric name, or several, comma-separated or as a list, whose mean is used) and
    ``dev_convention`` parameters, and ``n_features_in_`` set by fit.
    """

    def _eval_set_arrays(self, eval_set):
        """(dense X, y, qid) of an eval set given as a RankingDataset or a tuple (X, y, qid)."""
        if isinstance(eval_set, RankingDataset):
            X, y, qid = unpack(eval_set)
        else:
            try:
                X, y, qid = eval_set
            except (TypeError, ValueError):
                raise DataValidationError("eval_set must be a RankingDataset or a tuple (X, y, qid)") from None
        X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise DataValidationError(f"eval_set has {X.shape[-1]} features, the training data {self.n_features_in_}")
        y, qid = check_labels(y), np.asarray(qid)
        if y.shape[0] != X.shape[0] or qid.shape[0] != X.shape[0]:
            raise DataValidationError(f"eval_set: X has {X.shape[0]} rows, y {y.shape[0]} and qid {qid.shape[0]}")
        return X, y, qid

    def _dev_metrics(self):
        return metric_list(self.dev_metric)

    def _dev_scored(self, y, scores, qid, per_query=False):
        """What ``eval_set`` chooses the epoch or round by, for given scores: the mean of ``dev_metric`` (None:
        ``score``'s metric) under ``score``'s convention and relevance; ``per_query``: each query's mean."""
        result = self._evaluated(y, scores, qid, metrics=None if self.dev_metric is None else self._dev_metrics())
        if per_query:
            return np.mean(list(result.per_query.values()), axis=0)
        return result.mean_of()

    def _best_epoch(self, dev, start, total=None):
        """A ``BestEpoch`` over linear weights: on ``dev`` (``_eval_set_arrays``) by ``_dev_value``, the
        zero weights ``start`` standing as epoch 0; the last epoch when ``dev`` is None; ``total``
        epochs planned (for a progress bar)."""
        return BestEpoch(None if dev is None else lambda w: self._dev_value(w, dev), start=start, total=total)

    def _dev_value(self, w, dev):
        """Mean over ``dev_metric`` (each a mean over queries) of the linear scores ``X @ w``."""
        X, y, qid = dev
        metrics = self._dev_metrics()
        # deferred: numba at the first predict; the scikit-learn and LightGBM rankers need no numba
        from structrank.parallel.rows import matvec

        return evaluate(y, matvec(X, w), qid, metrics, self.dev_convention).mean_of(metrics)


def features_vary_within_queries(X, offsets, max_block_rows=65536) -> bool:
    """Whether some row differs from the first row of its query.

    Compared in blocks of rows that grow from 256, stopping at the first difference: on real
    data the first block answers, so a fit pays next to nothing for the check.
    """
    first = np.repeat(offsets[:-1], np.diff(offsets))
    start, block = 0, 256
    while start < X.shape[0]:
        rows = slice(start, start + block)
        if sp.issparse(X):
            if (X[rows] - X[first[rows]]).count_nonzero():
                return True
        elif np.any(X[rows] != X[first[rows]]):
            return True
        start, block = start + block, min(2 * block, max_block_rows)
    return False


def labels_vary_within_queries(y, offsets) -> bool:
    """Whether some query has two documents with different labels."""
    if y.size == 0:
        return False
    starts = offsets[:-1]
    return bool(np.any(np.maximum.reduceat(y, starts) != np.minimum.reduceat(y, starts)))


def informative_rows(y, offsets, relevant_from=1):
    """(y, offsets, rows) of the queries with both a good and a bad document: their labels and
    query boundaries, and their rows in the data (None when every query is informative).

    The others cannot be ranked wrongly, so structured learners learn nothing from them.
    """
    keep = queries_with_both(y, offsets, relevant_from)
    if keep.size == 0:
        raise DataValidationError(f"no training query has both a good and a bad document (good: label >= "
                                  f"{relevant_from}): nothing to learn from")
    if keep.size == offsets.size - 1:
        return y, offsets, None
    rows = rows_of_queries(offsets, keep)
    return y[rows], np.concatenate([[0], np.cumsum(np.diff(offsets)[keep])]).astype(np.int64), rows


def informative_queries(X, y, offsets, relevant_from=1):
    """(X, y, offsets) restricted to the informative queries (``informative_rows``): a copy of
    their rows, for learners that walk them as one block."""
    y, offsets, rows = informative_rows(y, offsets, relevant_from)
    return (X, y, offsets) if rows is None else (X[rows], y, offsets)
