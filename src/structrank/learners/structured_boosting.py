"""Gradient-boosted trees trained on a structured loss (LightGBM with the loss as custom objective).

The loss sees only the scores (DESIGN.md): a structural hinge ``Delta(r_hat) + s . (c_hat - c_star)``
has the subgradient ``c_hat - c_star`` with respect to a query's scores, and a permutation CRF
objective (Volkovs et al. 2011) its exact derivative. So any loss structrank trains a linear model
with also trains trees: each boosting round asks the loss for that gradient at the current scores
and LightGBM fits a tree to it.

The hessian is a documented choice, since a hinge has none (and LightGBM needs a positive one):
every row of a query gets the query's largest absolute gradient (1e-12 when it is 0). A leaf's
Newton step ``-sum g / sum h`` is then a gradient step normalised per query, in [-1, 1] times the
learning rate whatever the feature map's scale (phi_po's coefficients are O(1/n) on long lists, a
CRF's gradient O(1)), so one learning rate serves every loss.

``target="latent"`` (the NDCG@k hinge with phi_po): the correct ranking the hinge compares with is
re-imputed at every round as the best loss-zero ranking under the current scores, the latent
structural SVM's target (``structrank.oracles.latent``) with one boosting round per imputation.
Why: against the ideal ranking the hinge's subgradient is a pairwise one with equal weights on
every misordered pair of the max-violating ranking, whatever its place in the list, while NDCG@k
and lambdarank's |Delta NDCG|-weighted gradient look at the top k. On long lists with many good
documents (LETOR 3.0 OHSUMED: about 150 documents, a third of them relevant) most of the gradient
then goes to pairs deep in the list; against the latent target those pairs cancel and the trees
are pushed on the head only. Measured when the target was chosen (grids on vali, 100 trees, test
NDCG@10 over 5 folds): the latent target lifted OHSUMED to lambdarank's level and left MQ2008
(about 19 documents per query, so little below the cut) about where it was. docs/ANY_SCORER.md
sets ``trees · ndcg`` beside LightGBM lambdarank on both, for the current models.

``smoothing``: a hinge's subgradient is piecewise constant in the scores and zero on every query
the scores already rank with a margin; the gradient of its perturbed smoothing (``ScoreLoss.smoothed``)
varies smoothly and weighs every ranking near the max-violating one, as lambdarank's logistic pair
weights do. ``gbrt-ndcg`` uses the value chosen on the vali sets of MQ2008 and OHSUMED
(``benchmarks/trees_smoothing.py``; its page, docs/TREES_SMOOTHING.md, gives vali and test).

Also: a hinge is any registered loss (gain ``auto`` as in ``StructSVMRanker``); a CRF objective's
gradient is taken on per-round 6-document subsets; early stopping is on ``eval_set`` under the
loss's metric; the command line has ``gbrt-<loss>`` for every registered loss. The latent target
is ``oracles.latent.latent_graded_po_star``. ``gbrt-ndcg``'s smoothing is 0.3, chosen by pooled vali
NDCG@10 over the ten MQ2008 and OHSUMED folds. Rows too few to split at ``min_child_samples``
(LightGBM bins no feature and its custom objective fails) give a constant model and a
``DegenerateDataWarning``.
"""

from __future__ import annotations

import warnings

import numpy as np
from structrank.constraints import StrOptions

from structrank.errors import DataValidationError, DegenerateDataWarning
from structrank.learners.base import (COUNT, METRICS, NON_NEGATIVE, EvalSetMixin, features_vary_within_queries,
                                      labels_vary_within_queries)
from structrank.learners.loss_params import LOSS_PARAMETERS
from structrank.learners.score_loss import ScoreLossScorerMixin
from structrank.learners.lightgbm_rankers import _LightGBMRanker, stop_when_a_round_adds_nothing
from structrank.losses.base import hinge_values

_HESSIAN_FLOOR = 1e-12
TARGETS = ("ideal", "latent")
# The defaults of target="auto" and smoothing=None by the loss: the NDCG@k hinge with phi_po against the latent
# target, re-imputed each round (the module's docstring says why), smoothed (ScoreLoss.smoothed says why) by the
# value with the best vali NDCG@10 over the ten folds of MQ2008 and OHSUMED (benchmarks/trees_smoothing.py,
# docs/TREES_SMOOTHING.md); every other loss against its ideal target, unsmoothed
LATENT_NDCG_SMOOTHING = 0.3


def latent_star(loss, scores, labels, offsets) -> np.ndarray:
    """phi_po coefficients of each query's best loss-zero ranking of NDCG@k under ``scores``
    (the loss's ``latent_graded_star``)."""
    return loss.latent_graded_star(scores, labels, offsets)


def _latent_value_and_grad(loss, labels, offsets):
    """``f(scores) -> (values, gradient)``: each query's hinge against the latent target and its subgradient."""

    def value_and_grad(scores):
        c_hat, delta = loss.batch(scores, labels, offsets)
        grad = c_hat - latent_star(loss, scores, labels, offsets)
        return hinge_values(delta, scores, grad, offsets), grad

    return value_and_grad


def _per_query_hessian(grad, offsets):
    """Every row gets its query's largest |gradient| (the normalisation described above)."""
    starts = offsets[:-1]
    scale = np.maximum.reduceat(np.abs(grad), starts) if grad.size else np.zeros(0)
    return np.maximum(np.repeat(scale, np.diff(offsets)), _HESSIAN_FLOOR)


class StructuredBoostingRanker(ScoreLossScorerMixin, EvalSetMixin, _LightGBMRanker):
    """Boosted regression trees (LightGBM) fitted to a structured ranking loss's gradient.

    Parameters
    ----------
    loss : str, default "ndcg"
        Any registered loss (``structrank.losses.loss_names()``; docs/LOSSES.md lists them): a
        hinge (``StructSVMRanker``'s loss, its max-violating structure against the ideal one) or a
        probabilistic objective (a permutation CRF objective, ``PermutationCRFRanker``'s, on a
        subset of at most 6 documents per query drawn anew each round with every relevance level in it).
    loss_params : dict or None
        The loss's options (docs/LOSSES.md lists each loss's): a hinge's as in ``StructSVMRanker``
        (``gain`` "auto", the default: graded NDCG gains when the training labels have more than two
        levels), a CRF objective's ``crf_param`` (LA's loss weight, KL's temperature T).
    n_estimators : int, default 100
        Boosting rounds (one tree each); with ``eval_set`` and ``early_stopping_rounds`` the
        round with the best eval metric is kept.
    learning_rate : float, default 0.1
    num_leaves : int, default 31
    min_child_samples : int, default 20
    target : {"auto", "ideal", "latent"}, default "auto"
        The correct structure of a hinge: "ideal", every better-graded document above every
        worse one (``StructSVMRanker``'s); "latent" (``loss="ndcg"`` with phi_po, binary or
        graded gains): each round, the best loss-zero ranking under the current scores (the
        module's docstring says why). "auto": "latent" for ``loss="ndcg"`` with phi_po, "ideal"
        for every other loss (what ``gbrt-<loss>`` trains).
    smoothing : float or None, default None
        A hinge's perturbed smoothing: the gradient is the mean of the subgradients at the scores
        plus ``smoothing`` times standard normal noise (``ScoreLoss.smoothed`` says why); 0 is the
        exact subgradient. In score units: a round moves a query's scores by at most about
        ``learning_rate`` (the hessian above). Refused for a CRF objective (smooth already).
        None: ``LATENT_NDCG_SMOOTHING`` on the latent target, 0 otherwise.
    smoothing_samples : int, default 1
        The draws each round's gradient averages. One draw is an unbiased estimate of the smoothed
        gradient, and boosting averages the rounds' estimates as stochastic gradient descent does;
        each draw costs an oracle call on every query, so the fit's time grows with the draws
        (docs/BENCHMARKS.md, "Boosted trees on a structured loss", times the default beside LightGBM
        lambdarank; ``structrank bench --only trees``).
    early_stopping_rounds : int or None, default None
        Stop when the eval metric (``dev_metric``) has not improved for this many rounds (needs
        ``eval_set`` in ``fit``).
    dev_metric : str or list of str, default None
        The eval metric of each round: a metric, or several (comma-separated or a list) whose mean
        is used, under the loss's convention; None, the loss's own metric (``score``'s). The
        ``gbrt-crf-*`` models set NDCG@1-5, the metric their grid is chosen by, so that one
        criterion picks both the grid point and the round.
    random_state : int or None, default 0
        LightGBM's seed and the CRF subsets' generator.
    n_jobs : int, default 1
    k, feature_map, gain, discount, dorm_cut, components, relevant_from, crf_param : deprecated
        The loss's options as separate parameters, as before ``loss_params``: given, each joins
        ``loss_params`` with a FutureWarning.

    Attributes
    ----------
    booster_text_ : ndarray of str, shape ()
    loss_ : RankingLoss
        The loss the fit trained on, built once.
    gain_ : str
        The NDCG gain used ("binary" or "exp2"; "binary" for the other losses).
    best_iteration_ : int
        The number of trees kept.
    dev_curve_ : ndarray
        The eval metric on ``eval_set`` after each round (empty without ``eval_set``).

    Examples
    --------
    >>> from structrank.data import make_ranking_dataset
    >>> ds = make_ranking_dataset(n_queries=40, random_state=0)
    >>> model = StructuredBoostingRanker(loss="map", n_estimators=20).fit(ds)
    >>> model.score(ds) > 0.5
    True
    """

    _saved_attributes = ("booster_text_", "n_features_in_", "gain_")
    _text_attributes = ("booster_text_", "gain_")
    _text_choices = {"gain_": ("binary", "exp2")}  # checked when a model file is loaded

    _parameter_constraints = {**_LightGBMRanker._parameter_constraints, **LOSS_PARAMETERS,
                              "early_stopping_rounds": [*COUNT, None], "target": [StrOptions({*TARGETS, "auto"})],
                              "smoothing": [*NON_NEGATIVE, None], "smoothing_samples": COUNT,
                              "dev_metric": [*METRICS, None]}

    def __init__(self, loss="ndcg", loss_params=None, n_estimators=100, learning_rate=0.1, num_leaves=31,
                 min_child_samples=20, early_stopping_rounds=None, target="auto", smoothing=None, smoothing_samples=1,
                 dev_metric=None, random_state=0, n_jobs=1, importance_type="split"):
        self.loss = loss
        self.loss_params = loss_params
        self.dev_metric = dev_metric
        self.smoothing = smoothing
        self.smoothing_samples = smoothing_samples
        self.target = target
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.num_leaves = num_leaves
        self.min_child_samples = min_child_samples
        self.early_stopping_rounds = early_stopping_rounds
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.importance_type = importance_type

    # -- fitting -------------------------------------------------------------------------------

    def fit(self, X, y=None, qid=None, eval_set=None, *, group=None, sample_weight=None, eval_group=None,
            eval_qid=None):
        """Grow ``n_estimators`` trees on the loss's gradient (early-stopped on ``eval_set``). The rows are
        grouped by qid, or LightGBM's ``group`` (rows per query); ``eval_set`` may be LightGBM's ``[(X, y)]``
        with ``eval_group`` or XGBoost's ``eval_qid``; ``sample_weight`` weighs each query's gradient
        (``fit_conventions.row_weights``)."""
        # deferred: lightgbm loads only to train or predict
        import lightgbm

        self._start_fit()
        qid, eval_set = self._fit_call(X, qid, group, eval_set, eval_group, eval_qid)
        if eval_set is None and self.early_stopping_rounds is not None:
            raise ValueError("early_stopping_rounds needs an eval_set")
        X, y, qid, offsets = self._validate_fit_data(X, y, qid, sample_weight=sample_weight)
        weight = self._row_weights(offsets)
        if not labels_vary_within_queries(y, offsets):
            raise DataValidationError("no training query has two documents with different labels: nothing to "
                                      "learn from (every gradient is 0)")
        self._fit_loss(y)
        self._warn_if_loss_is_constant(self.loss_, offsets)
        dev = self._eval_set_arrays(eval_set) if eval_set is not None else None  # checked before any early return
        if not features_vary_within_queries(X, np.array([0, X.shape[0]])):
            return self._keep(self._constant_booster(X), [])  # fit has warned
        spec = self.score_loss()
        if self._target() == "latent":
            loss = spec.smoothed(_latent_value_and_grad(spec.loss, y, offsets))
        else:
            loss = spec.bind(y, offsets)

        def objective(preds, _):
            _, grad = loss(np.asarray(preds, dtype=np.float64))
            hess = _per_query_hessian(grad, offsets)
            return (grad, hess) if weight is None else (grad * weight, hess * weight)

        params = {**self._lgb_params(), "objective": objective, "metric": "None"}
        train = lightgbm.Dataset(X, label=y.astype(np.float64), group=np.diff(offsets), free_raw_data=True,
                                 params={k: v for k, v in params.items() if k != "objective"}).construct()
        if not any(train.feature_num_bin(j) for j in range(X.shape[1])):
            # LightGBM binned no feature: with min_child_samples rows per leaf none can be split
            warnings.warn(f"StructuredBoostingRanker: no feature can be split into leaves of min_child_samples="
                          f"{self.min_child_samples} of the {X.shape[0]} training rows: every document gets the same "
                          "score", DegenerateDataWarning, stacklevel=2)
            return self._keep(self._constant_booster(X), [])
        booster, history = self._train_on_dev(params, train, dev, self._dev_scored)
        return self._keep(booster, history)

    def _constant_booster(self, X):
        """One tree with a zero leaf. LightGBM drops the columns it cannot split on, and a custom
        objective then fails; a regression on zero labels gives every document the same score."""
        # deferred: lightgbm loads only to train or predict
        import lightgbm

        return lightgbm.train({**self._lgb_params(), "objective": "regression"},
                              lightgbm.Dataset(X, label=np.zeros(X.shape[0])), num_boost_round=1)

    def _target(self) -> str:
        """The target a fit trains: ``target``, or for "auto" the latent one for the NDCG@k hinge with phi_po
        (``gbrt-ndcg``) and the ideal one for every other loss."""
        if self.target != "auto":
            return self.target
        given = self.loss_params or {}
        return "latent" if self.loss == "ndcg" and given.get("feature_map") in (None, "po") else "ideal"

    def _smoothing(self) -> float:
        """``smoothing``, or for None ``LATENT_NDCG_SMOOTHING`` on the latent target and 0 on the ideal one."""
        if self.smoothing is not None:
            return self.smoothing
        return LATENT_NDCG_SMOOTHING if self._target() == "latent" else 0.0

    def _loss_problems(self, loss):
        """The latent target needs NDCG@k with phi_po (and a smoothing, a hinge: the mixin's)."""
        if self._target() != "latent":
            return super()._loss_problems(loss)
        if getattr(loss, "name", None) != "ndcg" or getattr(loss, "feature_map", None) != "po":
            return {"target": "target='latent' needs the NDCG@k hinge with phi_po (loss='ndcg'), got "
                              f"{getattr(loss, 'label', self.loss)!r}"}
        return super()._loss_problems(loss)

    def _keep(self, booster, history):
        self.best_iteration_ = booster.num_trees()
        self.dev_curve_ = np.array(history)
        self.booster_text_ = np.array(booster.model_to_string())
        self._booster_cache = (self.booster_text_, booster)
        return self._finish_fit()

    def predict(self, X):
        """One score per row: the sum of the kept trees' outputs."""
        return self._checked_scores(np.asarray(self._raw_predict(X), dtype=np.float64).ravel())

