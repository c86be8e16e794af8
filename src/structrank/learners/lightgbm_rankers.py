"""Boosted-tree baselines with LightGBM: McRank (multiclass grades) and LambdaMART (lambdarank).

A fitted model keeps its LightGBM booster as text (``booster_text_``, a 0-d NumPy unicode
array holding ``Booster.model_to_string()``), so that model files stay plain arrays without
pickle; ``predict`` rebuilds the booster from that text on first use after loading.
"""

from __future__ import annotations

import os
from numbers import Integral

import numpy as np

from structrank.constraints import StrOptions

from structrank.errors import DataFormatError, DataValidationError
from structrank.learners.base import (COUNT, METRICS, N_JOBS, NON_NEGATIVE_INT, POSITIVE, BaseRanker, EvalSetMixin,
                                      Number, labels_vary_within_queries)

#: LightGBM parameters every fit uses: reproducible, single-format histograms, quiet.
_FIXED_PARAMS = {"deterministic": True, "force_row_wise": True, "verbose": -1}

#: the most leaves LightGBM grows in a tree (its own check, which it makes only once training starts)
MAX_LEAVES = 131072
#: the largest label whose lambdarank gain 2^label - 1 is a finite float64
_MAX_LAMBDARANK_LABEL = 1023


def _num_threads(n_jobs):
    """LightGBM's num_threads from a scikit-learn n_jobs (None: 1; negative: cpu_count + 1 + n_jobs)."""
    if n_jobs is None:
        return 1
    n_jobs = int(n_jobs)
    if n_jobs < 0:
        n_jobs = max((os.cpu_count() or 1) + 1 + n_jobs, 1)
    if n_jobs == 0:
        raise ValueError("n_jobs=0 is not a number of threads; use a positive int, or -1 for all cores")
    return n_jobs


def stop_when_a_round_adds_nothing(fitted, best=None):
    """A LightGBM callback that ends training after the first round that left the model as it was.

    LightGBM drops the tree of a round that finds no split (every gradient 0, or no leaf that meets the
    split requirements) and goes on, round after round, computing the same gradients at the same
    scores: without sampling (structrank's LightGBM parameters sample nothing) every later round does
    the same. With the random draws of a loss (the smoothing's noise, a CRF objective's subsets) another
    round might split; the first round that adds nothing is taken as the end all the same.

    ``fitted`` (the estimator) gets ``stop_reason_`` and ``n_epochs_`` (the rounds run); ``best()``, if
    given, is the 0-based round to keep (the dev set's), else the last round that added a tree.
    """
    # deferred: lightgbm loads only to train
    import lightgbm

    def callback(env):
        rounds = env.iteration - env.begin_iteration + 1
        fitted.n_epochs_ = rounds
        if rounds > 1 and env.model.current_iteration() < rounds and rounds < env.end_iteration - env.begin_iteration:
            fitted.stop_reason_ = (f"stopped after round {rounds} of {env.end_iteration - env.begin_iteration}: it "
                                   "added no tree (LightGBM found no split), so every later round would do the same")
            kept = env.model.current_iteration() - 1 if best is None else best()
            raise lightgbm.callback.EarlyStopException(kept, env.evaluation_result_list or [])

    callback.order = 40  # after LightGBM's early stopping (30), which keeps its own best round
    return callback


def checked_model_text(text: str) -> str:
    """A LightGBM model text checked for what LightGBM's own parser does not survive, ready for ``Booster``.

    LightGBM (4.x) parses the trees of a text with a ``tree_sizes=`` line in parallel, and an error
    there (a truncated or edited tree) ends the process with std::terminate instead of raising;
    without that line it parses them one by one and raises LightGBMError. So the line is dropped.
    LightGBM does not check, either, that a tree's child links form a tree or that its split
    features exist: a forged link sends prediction out of bounds or round in a cycle. So this
    checks every tree: the counts of its arrays, child links that reach each internal node and
    each leaf exactly once, split features up to ``max_feature_idx``, no categorical splits and
    no linear leaves (structrank trains neither), finite leaf values.

    Raises DataFormatError (field ``booster_text_``) naming the first problem.
    """

    context = ""  # the tree a problem is in

    def bad(problem):
        return DataFormatError(None, None, f"not a LightGBM model structrank wrote ({context}{problem})",
                               "booster_text_")

    header, trees, tree = {}, [], None
    for line in text.split("\n"):
        line = line.strip()
        if line == "end of trees":
            break
        if line.startswith("Tree="):
            tree = {}
            trees.append(tree)
            continue
        key, eq, value = line.partition("=")
        if eq:
            (header if tree is None else tree)[key] = value

    def integer(where, key, low, high):
        try:
            value = int(where[key])
        except (KeyError, ValueError):
            raise bad(f"no integer {key}") from None
        if not low <= value <= high:
            raise bad(f"{key}={value} is outside {low}..{high}")
        return value

    def numbers(where, key, n, kind):
        try:
            values = np.array(where[key].split(), dtype=kind) if n else np.zeros(0, dtype=kind)
        except (KeyError, ValueError, OverflowError):
            raise bad(f"no list of numbers {key}") from None
        if values.shape != (n,):
            raise bad(f"{key} has {values.size} entries, not {n}")
        return values

    last_feature = integer(header, "max_feature_idx", 0, 2**31 - 2)
    integer(header, "num_tree_per_iteration", 1, 2**31 - 1)
    if not trees:
        raise bad("no trees")
    for number, tree in enumerate(trees):
        context = f"tree {number}: "
        leaves = integer(tree, "num_leaves", 1, 2**31 - 1)
        if integer(tree, "num_cat", 0, 0) or tree.get("is_linear", "0") != "0":
            raise bad("categorical splits or linear leaves")
        if not np.all(np.isfinite(numbers(tree, "leaf_value", leaves, np.float64))):
            raise bad("a leaf value is not finite")
        if leaves == 1:
            continue
        nodes = leaves - 1
        features = numbers(tree, "split_feature", nodes, np.int64)
        decision = numbers(tree, "decision_type", nodes, np.int64)
        numbers(tree, "threshold", nodes, np.float64)
        children = np.concatenate([numbers(tree, "left_child", nodes, np.int64),
                                   numbers(tree, "right_child", nodes, np.int64)])
        if np.any((features < 0) | (features > last_feature)):
            raise bad(f"a split feature is outside 0..{last_feature}")
        if np.any((decision < 0) | (decision > 15) | (decision & 1 == 1)):
            raise bad("a decision type is categorical or unknown")
        # node j >= 0 is internal, -1 - k is leaf k: every internal node but the root (0), and
        # every leaf, is the child of exactly one node
        internal, leaf = children[children >= 0], -1 - children[children < 0]
        if not (np.array_equal(np.sort(internal), np.arange(1, nodes))
                and np.array_equal(np.sort(leaf), np.arange(leaves))):
            raise bad("the child links do not form a tree")
    return "\n".join(line for line in text.split("\n") if not line.startswith("tree_sizes="))


class _LightGBMRanker(BaseRanker):
    """What the LightGBM rankers share: parameters, training call, booster kept as text."""

    _scale_sensitive = False  # trees split on thresholds: a feature of 1e300 is as good as any other

    # LightGBM's own ranges: a tree has at least 2 leaves, a leaf at least 0 rows
    _parameter_constraints = {"n_estimators": COUNT, "learning_rate": POSITIVE,
                              "num_leaves": [Number(Integral, 2, MAX_LEAVES, closed="both")],
                              "min_child_samples": NON_NEGATIVE_INT, "random_state": [*NON_NEGATIVE_INT, None],
                              "n_jobs": N_JOBS, "importance_type": [StrOptions({"split", "gain"})]}

    @property
    def feature_importances_(self):
        """Each feature's importance in the trees, as LightGBM's scikit-learn models give it: the number of
        splits on it (``importance_type="split"``) or the total gain of those splits (``"gain"``)."""
        return self.feature_importance(self.importance_type)

    def feature_importance(self, importance_type="split"):
        """Each feature's importance: ``"split"``, how many splits use it; ``"gain"``, their total gain."""
        if importance_type not in ("split", "gain"):
            raise ValueError(f"importance_type must be 'split' or 'gain', got {importance_type!r}")
        return np.asarray(self._booster().feature_importance(importance_type=importance_type), dtype=np.float64)

    def _lgb_params(self):
        params = {
            "learning_rate": float(self.learning_rate),
            "num_leaves": int(self.num_leaves),
            "min_data_in_leaf": int(self.min_child_samples),
            "num_threads": _num_threads(self.n_jobs),
            **_FIXED_PARAMS,
        }
        if self.random_state is not None:
            params["seed"] = int(self.random_state)
        return params

    def _train(self, params, X, label, group=None, weight=None):
        # deferred: lightgbm loads only to train or predict, not with the class
        import lightgbm

        dataset = lightgbm.Dataset(X, label=label, group=group, weight=weight, free_raw_data=True)
        self.stop_reason_ = None
        booster = lightgbm.train(params, dataset, num_boost_round=int(self.n_estimators),
                                 callbacks=[stop_when_a_round_adds_nothing(self)])
        self.booster_text_ = np.array(booster.model_to_string())
        self._booster_cache = (self.booster_text_, booster)
        return booster

    def _train_on_dev(self, params, train, dev, score_dev):
        """(booster, the dev metric after each round) of ``lightgbm.train`` on the Dataset ``train``, with the
        eval set ``dev`` ((X, y, qid) or None) scored by ``score_dev(y, scores, qid)`` after each round and,
        with ``early_stopping_rounds``, the trees up to its first best round kept."""
        # deferred: lightgbm loads only to train or predict
        import lightgbm

        callbacks, valid, history, feval = [], [], [], None
        if dev is not None:
            dev_X, dev_y, dev_qid = dev

            def feval(preds, _):
                history.append(score_dev(dev_y, preds, dev_qid))
                return "dev_metric", history[-1], True

            valid = [lightgbm.Dataset(dev_X, label=dev_y.astype(np.float64), reference=train)]
            if self.early_stopping_rounds is not None:
                callbacks.append(lightgbm.early_stopping(int(self.early_stopping_rounds), verbose=False))
        self.stop_reason_ = None
        # a round that adds no tree ends the fit; with early stopping, its best round is the first best on dev
        best = (lambda: int(np.argmax(history))) if dev is not None and self.early_stopping_rounds is not None else None
        callbacks.append(stop_when_a_round_adds_nothing(self, best))
        booster = lightgbm.train(params, train, num_boost_round=int(self.n_estimators), valid_sets=valid,
                                 feval=feval, callbacks=callbacks)
        if booster.best_iteration > 0:  # keep the trees up to the best round only
            booster = lightgbm.Booster(model_str=booster.model_to_string(num_iteration=booster.best_iteration))
        return booster, history

    def _booster(self):
        """The fitted booster, rebuilt from ``booster_text_`` once (after loading a model file)."""
        cache = getattr(self, "_booster_cache", None)
        if cache is not None and cache[0] is self.booster_text_:
            return cache[1]
        # deferred: lightgbm loads only to train or predict, not with the class
        import lightgbm

        text = checked_model_text(str(self.booster_text_))
        try:
            booster = lightgbm.Booster(model_str=text)
        except (lightgbm.basic.LightGBMError, ValueError) as exc:  # ValueError: bad JSON, text that is not UTF-8
            raise DataFormatError(None, None, f"not a LightGBM model ({exc})", "booster_text_") from None
        if booster.num_feature() != self.n_features_in_:
            raise DataFormatError(None, None, f"the booster uses {booster.num_feature()} features, "
                                  f"n_features_in_ is {self.n_features_in_}", "booster_text_")
        self._check_booster(booster)
        self._booster_cache = (self.booster_text_, booster)
        return booster

    def _check_booster(self, booster):
        pass

    def _raw_predict(self, X):
        X = self._validate_predict_data(X)
        booster = self._booster()
        return booster.predict(X, num_threads=_num_threads(self.n_jobs))

    def decision_function(self, X):
        return self.predict(X)

    def __getstate__(self):
        # The booster is rebuilt from booster_text_; copies and pickles need only the text.
        state = super().__getstate__()
        state.pop("_booster_cache", None)
        return state


class McRank(_LightGBMRanker):

    """McRank (Li, Burges and Wu, NIPS 2007): boosted trees classify the relevance grade.

    A LightGBM multiclass model estimates P(grade = k | x) for every grade k seen in training;
    a document's score is its expected relevance, sum_k P(grade = k | x) * k, with k the
    grade's own value (grades absent from training get no class, and the present ones need not
    be consecutive).

    Parameters
    ----------
    n_estimators : int, default 30
        Boosting rounds (each adds one tree per grade). 30 is what Chakrabarti et al. (2008)
        used for McRank on LETOR.
    learning_rate : float, default 0.1
    num_leaves : int, default 31
        Maximum leaves per tree.
    min_child_samples : int, default 20
        Minimum training rows in a leaf (LightGBM's ``min_data_in_leaf``).
    random_state : int or None, default 0
        LightGBM's ``seed``.
    n_jobs : int, default 1
        Threads; -1 for all cores. Fits are deterministic for a given number of threads.

    Attributes
    ----------
    classes_ : ndarray of int64
        The grades seen in training, ascending; column k of ``predict_proba`` is ``classes_[k]``.
    booster_text_ : ndarray of str, shape ()
        The LightGBM model as text.

    Examples
    --------
    >>> from structrank.data import make_ranking_dataset
    >>> ds = make_ranking_dataset(n_queries=20, random_state=0)
    >>> model = McRank(n_estimators=10).fit(ds)
    >>> model.predict_proba(ds.X).shape == (ds.n_rows, 3)
    True
    >>> model.score(ds) > 0.5
    True
    """

    _saved_attributes = ("booster_text_", "classes_", "n_features_in_")
    _text_attributes = ("booster_text_",)
    _learns_within_queries = False

    def __init__(self, n_estimators=30, learning_rate=0.1, num_leaves=31, min_child_samples=20, random_state=0,
                 n_jobs=1, importance_type="split"):
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.num_leaves = num_leaves
        self.min_child_samples = min_child_samples
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.importance_type = importance_type

    def fit(self, X, y=None, qid=None, *, group=None, sample_weight=None, eval_set=None, eval_group=None,
            eval_qid=None):
        """Fit on rows X with labels y grouped by qid, or by LightGBM's ``group`` (rows per query), or a
        RankingDataset as X: multiclass trees on the relevance grades (at least two are needed).
        ``sample_weight`` weighs the queries (``fit_conventions.row_weights``); an ``eval_set`` (with
        ``eval_group`` or ``eval_qid`` in LightGBM's and XGBoost's form) is scored into ``eval_score_``.
        Returns self."""
        self._start_fit()
        qid, eval_set = self._fit_call(X, qid, group, eval_set, eval_group, eval_qid)
        X, y, qid, offsets = self._validate_fit_data(X, y, qid, sample_weight=sample_weight)
        classes, label = np.unique(y, return_inverse=True)
        if classes.size < 2:
            raise DataValidationError(f"every training label is {int(classes[0])}: McRank needs at least two grades")
        params = {**self._lgb_params(), "objective": "multiclass", "num_class": int(classes.size)}
        self._train(params, X, label.astype(np.float64), weight=self._row_weights(offsets))
        self.classes_ = classes.astype(np.int64)
        return self._finish_fit(eval_set)

    def _check_booster(self, booster):
        if booster.num_model_per_iteration() != len(self.classes_):
            raise DataFormatError(None, None, f"the booster has {booster.num_model_per_iteration()} classes, "
                                  f"classes_ has {len(self.classes_)}", "booster_text_")

    def predict_proba(self, X):
        """P(grade = classes_[k] | x) for every row: shape (n_rows, n_classes), rows sum to 1."""
        return np.asarray(self._raw_predict(X), dtype=np.float64).reshape(-1, len(self.classes_))

    def predict(self, X):
        """Expected relevance of every row: ``predict_proba(X) @ classes_``."""
        return self._checked_scores(self.predict_proba(X) @ np.asarray(self.classes_, dtype=np.float64))


class LambdaMARTRanker(EvalSetMixin, _LightGBMRanker):

    """LambdaMART (Burges 2010): boosted trees fitted to NDCG-weighted pairwise lambda gradients.

    LightGBM's ``lambdarank`` objective with one group per query; gains are LightGBM's
    default 2^label - 1. The score of a row is the sum of its trees' outputs.

    Parameters
    ----------
    n_estimators : int, default 100
        Boosting rounds (one tree each).
    learning_rate : float, default 0.05
    num_leaves : int, default 31
        Maximum leaves per tree.
    min_child_samples : int, default 20
        Minimum training rows in a leaf (LightGBM's ``min_data_in_leaf``).
    random_state : int or None, default 0
        LightGBM's ``seed``.
    n_jobs : int, default 1
        Threads; -1 for all cores. Fits are deterministic for a given number of threads.

    Attributes
    ----------
    booster_text_ : ndarray of str, shape ()
        The LightGBM model as text.

    Examples
    --------
    >>> from structrank.data import make_ranking_dataset
    >>> ds = make_ranking_dataset(n_queries=20, random_state=0)
    >>> LambdaMARTRanker(n_estimators=20).fit(ds).score(ds) > 0.5
    True
    """

    _saved_attributes = ("booster_text_", "n_features_in_")
    _text_attributes = ("booster_text_",)

    _parameter_constraints = {**_LightGBMRanker._parameter_constraints, "early_stopping_rounds": [*COUNT, None],
                              "dev_metric": [*METRICS, None]}

    def __init__(self, n_estimators=100, learning_rate=0.05, num_leaves=31, min_child_samples=20, random_state=0,
                 n_jobs=1, early_stopping_rounds=None, dev_metric=None, importance_type="split"):
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.num_leaves = num_leaves
        self.min_child_samples = min_child_samples
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.early_stopping_rounds = early_stopping_rounds
        self.dev_metric = dev_metric
        self.importance_type = importance_type

    def fit(self, X, y=None, qid=None, *, group=None, sample_weight=None, eval_set=None, eval_group=None,
            eval_qid=None):
        """Fit on rows X with labels y grouped by qid, or by LightGBM's ``group`` (rows per query), or a
        RankingDataset as X: LightGBM's lambdarank trees (some query needs two different labels).

        ``eval_set`` (a RankingDataset, a tuple (X, y, qid), or LightGBM's ``[(X, y)]`` with ``eval_group``
        or XGBoost's ``eval_qid``) is scored after each round by ``dev_metric`` (``dev_curve_``); with
        ``early_stopping_rounds`` the trees up to its best round are kept. ``sample_weight`` weighs the
        queries (``fit_conventions.row_weights``), as LightGBM's lambdarank does. Returns self."""
        self._start_fit()
        qid, eval_set = self._fit_call(X, qid, group, eval_set, eval_group, eval_qid)
        if eval_set is None and self.early_stopping_rounds is not None:
            raise ValueError("early_stopping_rounds needs an eval_set")
        X, y, qid, offsets = self._validate_fit_data(X, y, qid, sample_weight=sample_weight)
        if not labels_vary_within_queries(y, offsets):
            raise DataValidationError("no training query has two documents with different labels: nothing to "
                                      "learn from (every lambda gradient is 0)")
        params = {**self._lgb_params(), "objective": "lambdarank", "metric": "None"}
        top = int(y.max()) if y.size else 0
        if top > _MAX_LAMBDARANK_LABEL:
            raise DataValidationError(f"label {top}: LambdaMART's gain 2^label - 1 overflows for labels above "
                                      f"{_MAX_LAMBDARANK_LABEL}")
        if top > 30:  # LightGBM's default label_gain covers labels 0..30 only
            params["label_gain"] = [2.0**k - 1 for k in range(top + 1)]
        weight = self._row_weights(offsets)
        if eval_set is None:
            self._train(params, X, y.astype(np.float64), group=np.diff(offsets), weight=weight)
            self.dev_curve_, self.best_iteration_ = np.array([]), int(self._booster().current_iteration())
            return self._finish_fit()
        # deferred: lightgbm loads only to train or predict, not with the class
        import lightgbm

        dev = self._eval_set_arrays(eval_set)
        train = lightgbm.Dataset(X, label=y.astype(np.float64), group=np.diff(offsets), weight=weight,
                                 free_raw_data=True)
        booster, history = self._train_on_dev(params, train, dev, self._dev_scored)
        self.dev_curve_, self.best_iteration_ = np.array(history), int(booster.current_iteration())
        self.booster_text_ = np.array(booster.model_to_string())
        self._booster_cache = (self.booster_text_, booster)
        return self._finish_fit()

    def predict(self, X):
        """One score per row: the sum of the trees' outputs."""
        return self._checked_scores(np.asarray(self._raw_predict(X), dtype=np.float64).ravel())
