"""A neural ranker trained on any structured loss: a multi-layer perceptron in PyTorch.

The network scores each document; ``structrank.learners.torch_loss.StructuredRankingLoss`` turns the scores of a
batch of queries into the loss and its gradient, and Adam follows it. Training needs the optional
``torch`` extra; prediction does not: the learned weights are one flat float array (``params_``),
read back layer by layer with the shapes that ``hidden_layer_sizes`` fixes, and the forward pass
is a few NumPy products, so model files hold plain arrays (no pickle, no torch).

The epoch is kept on ``eval_set`` by the loss's metric. ``init="linear"`` (every ``mlp-<loss>``
model): the linear skip starts at the linear learner of the same loss (its grid chosen on the eval
set, cached across the MLP grid) and the output layer at 0, so the network starts as the linear
model (epoch 0 of the choice) and learns a residual.
"""

from __future__ import annotations

import hashlib
import warnings

import numpy as np
import scipy.sparse as sp
from structrank.constraints import StrOptions

from structrank.errors import DataFormatError, DataValidationError, DegenerateDataWarning, FeatureScaleWarning
from structrank.learners.base import (COUNT, METRICS, NON_NEGATIVE, NON_NEGATIVE_INT, POSITIVE, BaseRanker, EvalSetMixin,
                                      Items, labels_vary_within_queries)
from structrank.learners.epochs import BestEpoch, OneStandardErrorEpoch, SignificantGainEpoch
from structrank.learners.loss_params import LOSS_PARAMETERS
from structrank.learners.score_loss import ScoreLossScorerMixin
from structrank.losses import PROBABILISTIC, get_entry
from structrank.metrics import evaluate

INITS = ("zeros", "linear")
EPOCH_RULES = ("best", "one-se", "significant")
# the rules that choose from every epoch's per-query eval values (``BestEpoch``, "best", needs only the means)
_PER_QUERY_RULES = {"one-se": OneStandardErrorEpoch, "significant": SignificantGainEpoch}
_LINEAR_STARTS: dict = {}  # (data and loss) -> the linear learner's weights and bias, for the grid's other points


def linear_model_name(loss) -> str:
    """The command-line linear learner of a loss (``structrank.learners.registry``): ``svm-<loss>`` for a hinge
    (``svm-<loss>-ideal`` where there is one: the network's hinge is the ideal target's with the loss's own
    feature map, while ``svm-ndcg`` and ``svm-mrr`` may fall back to a latent target), the permutation CRF of the same
    objective (``crf-kl``) for a CRF objective."""
    if get_entry(loss).kind == PROBABILISTIC:
        return loss
    # deferred: the model registry sits above the learners (docs/ARCHITECTURE.md)
    from structrank.learners.registry import MODELS

    return f"svm-{loss}-ideal" if f"svm-{loss}-ideal" in MODELS else f"svm-{loss}"


def _digest(*arrays) -> str:
    h = hashlib.sha1()
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(str((a.dtype, a.shape)).encode())
        h.update(a.tobytes())
    return h.hexdigest()


def layer_shapes(n_features, hidden_layer_sizes):
    """[(rows, columns)] of each layer's weight matrix, the input layer first (bias: one per column)."""
    sizes = [int(n_features), *(int(h) for h in hidden_layer_sizes), 1]
    return list(zip(sizes[:-1], sizes[1:]))


def n_parameters(n_features, hidden_layer_sizes, linear_skip=False):
    """Every layer's weights and bias, and the linear skip's weights (no bias) when there is one."""
    return sum(a * b + b for a, b in layer_shapes(n_features, hidden_layer_sizes)) + (int(n_features) if linear_skip
                                                                                      else 0)


class MLPRanker(ScoreLossScorerMixin, EvalSetMixin, BaseRanker):
    """Multi-layer perceptron (ReLU) scoring documents, trained with a structured ranking loss.

    Parameters
    ----------
    loss : str, default "ndcg"
        Any registered loss, seen through ``structrank.learners.score_loss``: a structural hinge or
        a permutation CRF objective (``structrank.losses.loss_names()`` lists them, docs/LOSSES.md
        with their options).
    hidden_layer_sizes : tuple of int, default (32,)
    linear_skip : bool, default True
        Add a linear term ``x . v`` to the network's output ("wide and deep"), started at 0. Why:
        the network then holds the linear model, and on LETOR's 46 query-normalised features the
        linear part carries most of the signal (when it was added, the NDCG hinge and CRF-KL each
        scored a little higher with the skip than without it on MQ2008 Folds 1-2).
    init : {"zeros", "linear"}, default "zeros"
        "linear" (with ``linear_skip``): the linear skip starts at the weights of the linear
        learner of the same loss (``svm-<loss>``, ``crf-<objective>``; its grid chosen on
        ``eval_set`` by its own vali metric, else its defaults) and the output layer at zero,
        so the network starts as the linear model and learns a residual; with ``eval_set`` that
        start is epoch 0 of the choice. Why: the linear model on LETOR's 46 query-normalised
        features is a strong ranker, a network started at random fell short of it.
        docs/ANY_SCORER.md sets each ``MLP · <loss>`` beside ``linear · <loss>`` (test, 5 folds and
        5 seeds, grids on vali). docs/MLP_DEPARTURES.md measures every epoch of every grid point on
        vali and test against the start: where the start is strong, most departures lose on test
        and vali ranks them only loosely.
        The ``mlp-<loss>`` models use it.
    epochs : int, default 30
        Passes over the training queries; with ``eval_set`` the epoch with the best eval metric
        (``dev_metric``; by ``epoch_rule``) is kept (``init="linear"``: the start, epoch 0, too).
    dev_metric : str or list of str, default None
        What ``eval_set`` chooses the epoch by: a metric, or several (comma-separated or a list)
        whose mean is used, under the loss's convention; None, the loss's own metric (``score``'s).
        The ``mlp-crf-*`` models set NDCG@1-5, the metric their grid is chosen by, so that one
        criterion picks both the grid point and the epoch.
    epoch_rule : {"best", "one-se", "significant"}, default "best"
        How the eval set picks the epoch: "best", the first with the highest eval metric; "one-se",
        the earliest whose eval metric is within one standard error (paired over the eval queries)
        of the best (``structrank.learners.epochs.OneStandardErrorEpoch``); "significant", the best
        only if it beats the first epoch offered (with ``init="linear"`` the linear start) by a
        one-sided paired t-test over the eval queries at 0.05 / the number of epochs (Bonferroni),
        else that first epoch (``SignificantGainEpoch``). Why the other two exist: the best of many
        epochs on a small eval set wins partly by noise; "one-se" departs less from the start,
        "significant" only on evidence, so that the network is at least its linear start unless the
        eval set shows otherwise. Neither is the default, as each gave away more where the network
        helped than it saved where it did not (``mlp-<loss>``, test, 5 folds, grids on vali, measured
        at 9d759c7 with ``benchmarks/any_scorer_fits.py mlp-map --set epoch_rule=significant`` and the
        like; not on a generated page): "significant" kept the linear start in almost every fit, as
        on OHSUMED's eval sets of 21-22 queries even OHSUMED NDCG@10's large gain did not pass the
        test.
    batch_queries : int, default 16
        Queries per Adam step (the loss is their mean).
    learning_rate : float, default 1e-3
    weight_decay : float, default 0.0
    random_state : int, default 0
        Seeds the weights, the query order and the CRF subsets.
    loss_params : dict or None
        The loss's options, as in ``StructuredBoostingRanker`` (docs/LOSSES.md lists each loss's).
    k, feature_map, gain, discount, dorm_cut, components, relevant_from, crf_param : deprecated
        The loss's options as separate parameters, as before ``loss_params``: given, each joins
        ``loss_params`` with a FutureWarning.

    Attributes
    ----------
    params_ : ndarray
        Every layer's weights then bias, flattened in order.
    gain_ : str
    best_epoch_ : int
    dev_curve_, dev_epochs_ : ndarray
        The eval metric on ``eval_set`` after each epoch (with ``init="linear"``, at the start first;
        empty without ``eval_set``), and those epochs (thinned past ``learners.epochs.CURVE_POINTS``).
    n_epochs_ : int
        The epochs trained: ``epochs``, or fewer when one left the parameters as it found them.
    stop_reason_ : str or None
        Why training stopped before ``epochs``: an epoch in which no step moved any parameter (Adam
        moves them while its moments are not 0: the gradients were 0 and its steps had died out). The rules
        "one-se" keeps every epoch's parameters until the choice at the end; "best" and "significant"
        keep two.

    Examples
    --------
    >>> from structrank.data import make_ranking_dataset
    >>> ds = make_ranking_dataset(n_queries=50, random_state=0)
    >>> train, vali = ds.take_queries(range(30)), ds.take_queries(range(30, 50))
    >>> model = MLPRanker(loss="map", hidden_layer_sizes=(8,), epochs=5, random_state=0).fit(train, eval_set=vali)
    >>> model.predict(vali.X).shape == (vali.n_rows,), model.score(vali) > 0.5
    (True, True)
    """

    #: fit needs the optional extra (prediction does not); its doctest skips without it
    _requires_extra = "torch"

    _saved_attributes = ("params_", "n_features_in_", "gain_")
    _text_attributes = ("gain_",)
    _text_choices = {"gain_": ("binary", "exp2")}

    _parameter_constraints = {**LOSS_PARAMETERS,
                              "hidden_layer_sizes": [Items(COUNT[0])], "linear_skip": ["boolean"],
                              "init": [StrOptions(set(INITS))],
                              "epoch_rule": [StrOptions(set(EPOCH_RULES))], "dev_metric": [*METRICS, None],
                              "epochs": NON_NEGATIVE_INT, "batch_queries": COUNT, "learning_rate": POSITIVE,
                              "weight_decay": NON_NEGATIVE,
                              "random_state": NON_NEGATIVE_INT}  # torch's seed: an int

    def __init__(self, loss="ndcg", hidden_layer_sizes=(32,), linear_skip=True, init="zeros", epochs=30,
                 epoch_rule="best", dev_metric=None, batch_queries=16,
                 learning_rate=1e-3, weight_decay=0.0, random_state=0, loss_params=None):
        self.loss = loss
        self.loss_params = loss_params
        self.hidden_layer_sizes = hidden_layer_sizes
        self.linear_skip = linear_skip
        self.init = init
        self.epochs = epochs
        self.epoch_rule = epoch_rule
        self.dev_metric = dev_metric
        self.batch_queries = batch_queries
        self.learning_rate = learning_rate
        self.weight_decay = weight_decay
        self.random_state = random_state

    def _joint_parameter_problems(self):
        """The linear start needs the linear skip, and no epochs need the linear start."""
        if self.init == "linear" and not self.linear_skip:
            return {"init": "init='linear' starts the linear skip: it needs linear_skip=True"}
        if self.epochs == 0 and self.init != "linear":  # epochs=0 keeps the start: only the linear one is a model
            return {"epochs": "epochs=0 keeps the linear start: it needs init='linear'"}
        return {}

    def _network(self):
        # deferred: optional extra torch
        import torch

        layers = []
        for i, (a, b) in enumerate(layer_shapes(self.n_features_in_, self.hidden_layer_sizes)):
            layers += [torch.nn.ReLU()] if i else []
            layers.append(torch.nn.Linear(a, b, dtype=torch.float64))
        deep = torch.nn.Sequential(*layers)
        if not self.linear_skip:
            return deep

        class WideAndDeep(torch.nn.Module):
            """The network plus a linear term; parameters in order: the network's, then the skip's weights."""

            def __init__(self, n_features):
                super().__init__()
                self.deep = deep
                self.skip = torch.nn.Linear(n_features, 1, bias=False, dtype=torch.float64)
                torch.nn.init.zeros_(self.skip.weight)

            def forward(self, x):
                return self.deep(x) + self.skip(x)

        return WideAndDeep(self.n_features_in_)

    def fit(self, X, y=None, qid=None, eval_set=None, *, group=None, sample_weight=None, eval_group=None,
            eval_qid=None):
        """Train with Adam on batches of queries (the epoch kept by ``eval_set``, else the last). The rows may
        be grouped by LightGBM's ``group`` (rows per query), ``eval_set`` given as LightGBM's ``[(X, y)]`` with
        ``eval_group``; ``sample_weight`` must weigh every query alike."""
        self._start_fit()
        qid, eval_set = self._fit_call(X, qid, group, eval_set, eval_group, eval_qid)
        self._refuse_weights(sample_weight, X, qid, "its minibatch objective is the mean over the batch's queries, and weighted means are not implemented; train LambdaMARTRanker, StructuredBoostingRanker or RankSVM, which take query weights")
        X, y, qid, offsets = self._validate_fit_data(X, y, qid)
        if not labels_vary_within_queries(y, offsets):
            raise DataValidationError("no training query has two documents with different labels: nothing to "
                                      "learn from")
        self._fit_loss(y)  # the loss's problems first: they hold with or without the extra
        self._warn_if_loss_is_constant(self.loss_, offsets)
        try:
            # deferred: optional extra torch
            import torch
        except ImportError:
            raise ImportError("MLPRanker trains with PyTorch, an optional extra: pip install torch, then "
                              "pip install 'structrank[torch]' (a saved model predicts without it)") from None

        # deferred: optional extra torch (structrank.learners.torch_loss imports it)
        from structrank.learners.torch_loss import StructuredRankingLoss
        X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
        torch.manual_seed(int(self.random_state))
        rng = np.random.default_rng(self.random_state)
        net = self._network()
        loss = StructuredRankingLoss.from_spec(self.score_loss())
        optimiser = torch.optim.Adam(net.parameters(), lr=float(self.learning_rate),
                                     weight_decay=float(self.weight_decay))
        dev = self._eval_set_arrays(eval_set) if eval_set is not None else None
        X_t, n_queries = torch.from_numpy(X), offsets.size - 1

        def dev_value(params, per_query=False):
            self.params_ = params
            return self._dev_scored(dev[1], self.predict(dev[0]), dev[2], per_query)

        def dev_per_query(params):
            return dev_value(params, per_query=True)

        if dev is not None and self.epoch_rule in _PER_QUERY_RULES:
            best = _PER_QUERY_RULES[self.epoch_rule](dev_per_query, total=int(self.epochs))
        else:
            best = BestEpoch(None if dev is None else dev_value, total=int(self.epochs))
        if self.init == "linear":
            coef, intercept = self._linear_start(X, y, qid, eval_set, dev)
            with torch.no_grad():
                net.skip.weight.copy_(torch.from_numpy(coef).reshape(1, -1))
                out = net.deep[-1]
                out.weight.zero_()
                out.bias.fill_(intercept)
            best.offer(0, torch.nn.utils.parameters_to_vector(net.parameters()).detach().numpy().copy())
        self.stop_reason_, self.n_epochs_ = None, 0
        before = torch.nn.utils.parameters_to_vector(net.parameters()).detach().numpy().copy()
        for epoch in range(1, int(self.epochs) + 1):
            order = rng.permutation(n_queries)
            for start in range(0, n_queries, int(self.batch_queries)):
                batch = order[start:start + int(self.batch_queries)]
                rows = np.concatenate([np.arange(offsets[q], offsets[q + 1]) for q in batch])
                sizes = np.diff(offsets)[batch]
                value = loss(net(X_t[rows]).squeeze(1), y[rows], np.concatenate([[0], np.cumsum(sizes)]))
                optimiser.zero_grad()
                value.backward()
                optimiser.step()
            after = torch.nn.utils.parameters_to_vector(net.parameters()).detach().numpy().copy()
            best.offer(epoch, after)
            self.n_epochs_ = epoch
            if epoch < int(self.epochs) and np.array_equal(after, before):
                self.stop_reason_ = (f"stopped after epoch {epoch} of {int(self.epochs)}: no step of it moved the "
                                     "network's parameters (the gradients were 0, or Adam's steps below their "
                                     "precision)")
                break
            before = after
        self.params_ = best.iterate
        best.keep(self)
        return self._finish_fit()

    def _linear_start(self, X, y, qid, eval_set, dev):
        """(weights, bias) of the linear learner of this loss, its grid point chosen on ``dev`` by its
        own vali metric (``structrank.learners.registry``) under the loss's convention (computed once per data, loss and options: the other points of an MLP
        grid reuse it)."""
        # deferred: the model registry sits above the learners (docs/ARCHITECTURE.md); only the linear start needs it
        from structrank.learners.registry import get_model

        spec = get_model(linear_model_name(self.loss))
        accepted = spec.cls().get_params(deep=False)
        # the network's own: its step size, seed and dev choice (the linear learner keeps its defaults)
        own = ("learning_rate", "random_state", "dev_metric")
        options = {name: value for name, value in self.get_params(deep=False).items()
                   if name in accepted and name not in own}
        # the linear model's own loss options over the network's (svm-ndcg's phi_dorm)
        loss_params = {**(self.loss_params or {}), **(spec.defaults.get("loss_params") or {})}
        options.update(spec.defaults)
        if "loss_params" in accepted:
            options["loss_params"] = loss_params
        key = (spec.name, repr(sorted(options.items())), _digest(X, y, qid), None if dev is None else _digest(*dev))
        if key not in _LINEAR_STARTS:
            metrics = [spec.metric] if isinstance(spec.metric, str) else list(spec.metric)
            convention = self._trained_loss().convention

            def linear_value(scores):  # the linear model's own vali metric (the CRF's: NDCG@1-5)
                return evaluate(dev[1], scores, dev[2], metrics, convention).mean_of(metrics)

            best = None
            for params in (spec.candidates({}) if dev is not None else [{}]):
                model = spec.cls(**{**options, **params})
                with warnings.catch_warnings():  # the data's warnings: this fit gives them itself
                    warnings.simplefilter("ignore", DegenerateDataWarning)
                    warnings.simplefilter("ignore", FeatureScaleWarning)
                    model = model.fit(X, y, qid=qid, eval_set=eval_set) if spec.fit_with_vali and dev is not None \
                        else model.fit(X, y, qid=qid)
                value = linear_value(model.predict(dev[0])) if dev is not None else 0.0
                if best is None or value > best[0]:
                    best = (value, np.asarray(model.coef_, dtype=np.float64).ravel(),
                            float(getattr(model, "intercept_", 0.0)))
            if len(_LINEAR_STARTS) >= 8:
                _LINEAR_STARTS.pop(next(iter(_LINEAR_STARTS)))
            _LINEAR_STARTS[key] = best[1:]
        return _LINEAR_STARTS[key]

    def _layers(self):
        """([(W, b)], skip weights or None) from ``params_`` (torch's order: each layer's weight
        (out x in), then its bias; the linear skip's weights last)."""
        params = np.asarray(self.params_, dtype=np.float64)
        expected = n_parameters(self.n_features_in_, self.hidden_layer_sizes, self.linear_skip)
        if params.ndim != 1 or params.size != expected:
            raise DataFormatError(None, None, f"params_ has {params.size} entries where hidden_layer_sizes "
                                  f"{tuple(self.hidden_layer_sizes)}, linear_skip={self.linear_skip} and "
                                  f"{self.n_features_in_} features need {expected}", "params_")
        layers, at = [], 0
        for a, b in layer_shapes(self.n_features_in_, self.hidden_layer_sizes):
            W = params[at:at + a * b].reshape(b, a)
            at += a * b
            layers.append((W, params[at:at + b]))
            at += b
        return layers, (params[at:] if self.linear_skip else None)

    def _check_loaded(self):
        self._layers()

    def predict(self, X):
        """One score per row: the network's output (NumPy; torch is not needed)."""
        X = self._validate_predict_data(X)
        h = x = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
        layers, skip = self._layers()
        for i, (W, b) in enumerate(layers):
            h = h @ W.T + b
            if i < len(layers) - 1:
                h = np.maximum(h, 0.0)
        return self._checked_scores(h.ravel() + (x @ skip if skip is not None else 0.0))
