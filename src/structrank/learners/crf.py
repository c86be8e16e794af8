"""Permutation CRF rankers trained for NDCG (Volkovs, Larochelle & Zemel 2011).

The model is the CRF over permutations of Sec. 6: a linear score ``s_i = theta . x_i``, the
energy ``E(y) = -sum_i alpha_{y_i} s_i`` (structrank.oracles.crf), prediction by sorting the
scores (Eq. 14). It is trained by stochastic gradient over queries on one of five objectives
(maximum likelihood with multiple ground truths, loss-augmented, loss-scaled, expected loss,
loss-inspired KL; ML and LA also with Eq. 10's sum over the correct rankings where we default to
their mean), each computed exactly over all rankings of a small subset of the query's
documents: at each visit a random subset of ``subset_size`` (6) documents that holds at least one
document of every relevance level of the query (Sec. 6), whose 720 rankings are the rows of a
permutation table built once.

A query whose documents all share one relevance level is skipped by default
(``skip_single_level``): every ranking of it has loss 0, so EL and LS have zero gradient there,
while ML, LA and KL pull its scores together (the uniform target over all its rankings), which
says nothing about what to rank first. About a quarter of MQ2008's training queries are such.

An epoch is one numba loop over the queries; ``eval_set`` picks the epoch (and so the
iterate) with the best dev metric.

Rows are read through ``structrank.parallel.rows.row_arrays`` (dense or CSR, in a fixed order).
With ``n_jobs`` an epoch is iterative parameter mixing over shards; ``fit(LetorCache)`` trains
shard by shard on the mapped file.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
import scipy.sparse as sp
from structrank.constraints import StrOptions

from structrank.errors import DataValidationError
from structrank.learners.base import (CONVENTION, COUNT, METRICS, N_JOBS, NON_NEGATIVE, POSITIVE, BaseRanker, EvalSetMixin,
                                      LinearRankerMixin, Number)
from structrank.learners.epochs import Curve
from structrank.losses import PROBABILISTIC, get_loss, require
from structrank.losses.crf import OBJECTIVES, CRFObjective
from structrank.numba_cache import njit
from structrank.parallel.rows import row_arrays, row_column, row_span
from structrank.parallel.scratch import shard_memo
from structrank.parallel.shards import DEFAULT_SHARD_ROWS, ShardedQueries, ordered_sum, serves_shards
from structrank.parallel.workers import dask_client

# the kernels the numba SGD below calls, from the loss (module globals, so that numba compiles them in and caches)
ndcg_losses = CRFObjective.kernels.ndcg_losses
objective_gradient = CRFObjective.kernels.objective_gradient


@njit(cache=True, nogil=True)
def _seed(seed):
    np.random.seed(seed)


@njit(cache=True, nogil=True)
def _draw_subset(r, size, out):
    """Indices of a random subset of at most ``size`` documents holding every relevance level of ``r``.

    One document of each level is drawn uniformly among that level's documents, the rest
    uniformly among the remaining documents. Returns the subset's size. (With more levels than
    ``size``, which fit refuses, only the first ``size`` levels drawn are represented.)
    """
    n = r.shape[0]
    if n <= size:
        for i in range(n):
            out[i] = i
        return n
    order = np.random.permutation(n)
    taken = np.zeros(n, np.bool_)
    chosen = 0
    for j in range(n):  # the first document of each level, in random order
        d = order[j]
        new = True
        for k in range(chosen):
            if r[out[k]] == r[d]:
                new = False
                break
        if new and chosen < size:
            out[chosen] = d
            taken[j] = True
            chosen += 1
    for j in range(n):
        if chosen == size:
            break
        if not taken[j]:
            out[chosen] = order[j]
            chosen += 1
    return chosen


@njit(cache=True, nogil=True)
def _sgd_epoch(data, indices, indptr, n_features, r, offsets, visit, tables, starts, code, param, rate, size, theta):
    """One pass of stochastic gradient over the queries in ``visit`` order; returns the summed objective.

    The rows are ``structrank.parallel.rows.row_arrays``: dense or CSR, read in a fixed order.
    """
    P_max = starts[size + 1] - starts[size]
    idx = np.empty(size, np.int64)
    E = np.empty(P_max)
    losses = np.empty(P_max)
    g = np.empty(P_max)
    work = np.empty(P_max)
    rs = np.empty(size)
    s = np.empty(size)
    ds = np.empty(size)
    total = 0.0
    for q in visit:
        a = offsets[q]
        m = _draw_subset(r[a:offsets[q + 1]], size, idx)
        A = tables[starts[m]:starts[m + 1]]
        P = A.shape[0]
        for i in range(m):
            row = a + idx[i]
            rs[i] = r[row]
            acc = 0.0
            lo, hi = row_span(indptr, row, n_features)
            for k in range(lo, hi):
                acc += data[k] * theta[row_column(indices, k, lo)]
            s[i] = acc
        ndcg_losses(A[:, :m], rs[:m], losses[:P])
        for y in range(P):  # E = -A s
            acc = 0.0
            for i in range(m):
                acc += A[y, i] * s[i]
            E[y] = -acc
        total += objective_gradient(code, E[:P], losses[:P], param, g[:P], work[:P])
        for i in range(m):  # dObjective/ds = -A^T g
            acc = 0.0
            for y in range(P):
                acc += A[y, i] * g[y]
            ds[i] = -acc
        for i in range(m):  # theta -= rate * X_subset^T dObjective/ds
            row = a + idx[i]
            step = rate * ds[i]
            lo, hi = row_span(indptr, row, n_features)
            for k in range(lo, hi):
                theta[row_column(indices, k, lo)] -= step * data[k]
    return total


def _shard_epoch(shard, theta, settings, visit_and_seed):
    """One SGD epoch over a shard's queries from theta: (theta, summed objective)."""
    visit, seed = visit_and_seed
    theta = np.array(theta, dtype=np.float64)
    _seed(seed)
    X = shard["X"]
    # a cache shard has integer labels: their float copy is made once per shard, not at every epoch
    r = shard["r"] if "r" in shard else shard_memo(shard, "r", lambda: np.asarray(shard["y"], dtype=np.float64))
    total = _sgd_epoch(*row_arrays(X), X.shape[1], r, np.asarray(shard["offsets"], dtype=np.int64), visit, *settings,
                       theta)
    return theta, total


def _mixed_epoch(shards, visit, settings, theta, rng, n_jobs):
    """Iterative parameter mixing: every shard's epoch from theta, then their mean (structrank.parallel)."""
    local = [(visit[(visit >= lo) & (visit < hi)] - lo, int(rng.integers(2**31))) for lo, hi in shards.bounds]
    results = shards.map(_shard_epoch, theta, settings, n_jobs=n_jobs, per_shard=local)
    return ordered_sum(r[0] for r in results) / len(results), ordered_sum(r[1] for r in results)


class DivergedError(DataValidationError, FloatingPointError):
    """SGD's weights left float64: a data problem for the command line (one line), a FloatingPointError as before."""


class PermutationCRFRanker(EvalSetMixin, LinearRankerMixin, BaseRanker):
    """Permutation CRF trained by SGD on ML, LA, LS, EL or KL (CRF-ML ... CRF-KL).

    Parameters
    ----------
    objective : {"ml", "la", "ls", "el", "kl", "ml-sum", "la-sum"}, default "kl"
        Maximum likelihood over all zero-loss rankings (Eq. 10), loss-augmented (Eq. 4),
        loss-scaled (Eq. 11), expected loss (Eq. 6), loss-inspired KL (Eqs. 8-9). The loss is
        1 - NDCG of Eq. 12 over the subset. ``ml`` and ``la`` take the mean of the
        log-likelihoods of the zero-loss rankings; ``ml-sum`` and ``la-sum`` their sum, as Eq. 10
        prints it, so a query's step is ``|Y0|`` times larger (structrank.oracles.crf).
    learning_rate : float, default 0.1
        Step of each per-query gradient step.
    alpha : float, default 1.0
        Weight of the loss in the loss-augmented energy ``E - alpha l`` (Sec. 6.2); ``la`` and
        ``la-sum`` only.
    T : float, default 1.0
        Temperature of the KL target ``q(y) ~ exp(-l(y) / T)``; ``kl`` only.
    max_epochs : int, default 50
        Passes over the training queries. With ``eval_set`` the epoch with the best dev metric
        is kept; without it, the last.
    subset_size : int, default 6
        Documents per query visit (at most 9: subset_size! rankings are enumerated).
    skip_single_level : bool, default True
        Skip training queries whose documents all have one relevance level (see the module doc).
    shuffle : bool, default False
        Visit the queries in a new random order each epoch. By default they are visited in the
        order of the data, as the paper's "iterating over queries" reads; the subsets are random
        either way.
    random_state : int or None, default 0
        Seed of the visiting order and of the subsets. Why 0 and not None: with None two fits of
        the same data differ, and ``structrank train crf-* --vali`` chose different parameters
        from run to run (the demo's crf-kl chose T = 50, 20, 10 in three runs).
    dev_metric : str or list of str, default "ndcg@1,ndcg@2,ndcg@3,ndcg@4,ndcg@5"
        What chooses the epoch on ``eval_set``: the mean of these metrics (comma-separated).
    dev_convention : str, default "auto"
        The convention of ``dev_metric`` (``auto``: the one the dev labels allow).
    n_jobs : int or None, default None
        None: SGD in this process. An int (or a joblib dask backend): iterative parameter mixing
        over shards of about ``shard_rows`` rows (structrank.parallel): each shard runs an SGD
        epoch over its queries from the same theta on its own worker, with its own seed drawn
        from ``random_state``, and theta becomes their mean. One shard is plain SGD; the model
        depends on the shards, never on the number of workers.
    shard_rows : int, default 100000

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    loss_ : RankingLoss
        The CRF objective the fit trained on (``crf-<objective>`` with ``alpha`` or ``T``), built once.
    best_epoch_ : int
    dev_curve_, dev_epochs_ : ndarray
        Dev metric after each epoch (empty without ``eval_set``), and those epochs: every one up to
        ``learners.epochs.CURVE_POINTS`` of them, then a thinned set (``learners.epochs.Curve``).
    objective_curve_, objective_epochs_ : ndarray
        Mean training objective over the visited queries in each epoch (at the visit's weights), and
        those epochs (thinned alike).
    n_epochs_ : int
        The epochs trained: ``max_epochs``, or fewer when one left theta as it found it.
    stop_reason_ : str or None
        Why training stopped before ``max_epochs``: an epoch in which no step moved theta (every
        gradient 0, as a single-level query's at theta = 0 when ``skip_single_level=False``, or below
        theta's precision). A query longer than ``subset_size`` would show its next epoch other
        subsets; an epoch that none of its subsets moved is taken as the end all the same.
    n_queries_used_, n_queries_skipped_ : int

    Examples
    --------
    >>> from structrank.data import make_ranking_dataset
    >>> ds = make_ranking_dataset(n_queries=50, random_state=0)
    >>> train, vali = ds.take_queries(range(30)), ds.take_queries(range(30, 50))
    >>> model = PermutationCRFRanker(objective="kl", max_epochs=5, random_state=0).fit(train, eval_set=vali)
    >>> 1 <= model.best_epoch_ <= 5, model.score(vali) > 0.5
    (True, True)
    """

    _saved_attributes = ("coef_", "n_features_in_")
    _score_metric = "ndcg@5"

    _parameter_constraints = {"objective": [StrOptions(set(OBJECTIVES))], "learning_rate": POSITIVE,
                              "alpha": NON_NEGATIVE, "T": POSITIVE, "max_epochs": COUNT,
                              "subset_size": [Number(Integral, 2, 9, closed="both")],  # subset_size! rankings
                              "skip_single_level": ["boolean"], "shuffle": ["boolean"], "random_state": ["random_state"],
                              "dev_metric": METRICS, "dev_convention": CONVENTION, "n_jobs": N_JOBS,
                              "shard_rows": COUNT}

    def __init__(self, objective="kl", learning_rate=0.1, alpha=1.0, T=1.0, max_epochs=50, subset_size=6,
                 skip_single_level=True, shuffle=False, random_state=0,
                 dev_metric="ndcg@1,ndcg@2,ndcg@3,ndcg@4,ndcg@5", dev_convention="auto", n_jobs=None,
                 shard_rows=DEFAULT_SHARD_ROWS):
        self.objective = objective
        self.learning_rate = learning_rate
        self.alpha = alpha
        self.T = T
        self.max_epochs = max_epochs
        self.subset_size = subset_size
        self.skip_single_level = skip_single_level
        self.shuffle = shuffle
        self.random_state = random_state
        self.dev_metric = dev_metric
        self.dev_convention = dev_convention
        self.n_jobs = n_jobs
        self.shard_rows = shard_rows

    #: parameters only some objectives read ({parameter: the losses that read it}); the model registry's
    #: per-model help lists them only for those (``structrank train crf-ml --help`` shows no alpha or T)
    _loss_parameters = {"alpha": ("crf-la", "crf-la-sum"), "T": ("crf-kl",)}

    def _param(self):
        loss = f"crf-{self.objective}"
        return next((getattr(self, name) for name, losses in self._loss_parameters.items() if loss in losses), 0.0)

    def fit(self, X, y=None, qid=None, eval_set=None, *, group=None, sample_weight=None, eval_group=None,
            eval_qid=None):
        """Fit on rows X with labels y grouped by qid (or LightGBM's ``group``, rows per query); ``eval_set``
        (dev data; LightGBM's ``[(X, y)]`` with ``eval_group`` too) chooses the epoch. ``sample_weight`` must
        weigh every query alike.

        X may be a ``structrank.data.LetorCache`` (a memory-mapped LETOR file): it is trained on
        shard by shard without loading it (in this process with ``n_jobs=None``).
        """

        self._start_fit()
        qid, eval_set = self._fit_call(X, qid, group, eval_set, eval_group, eval_qid)
        self._refuse_weights(sample_weight, X, qid, "its minibatch objective is the mean over the batch's queries, and weighted means are not implemented; train LambdaMARTRanker, StructuredBoostingRanker or RankSVM, which take query weights")
        # the one build of the fit
        self.loss_ = loss = require(get_loss(f"crf-{self.objective}", crf_param=self._param()), PROBABILISTIC,
                                    type(self).__name__)
        code = loss.code
        size = int(self.subset_size)
        if serves_shards(X):
            offsets = np.asarray(X.offsets, dtype=np.int64)
            queries = self._training_queries(np.asarray(X.y), offsets, size)
            self.n_features_in_ = n_features = X.n_features
            shards = ShardedQueries.from_cache(X, self.shard_rows)
        else:
            X, y, qid, offsets = self._validate_fit_data(X, y, qid)
            queries = self._training_queries(y, offsets, size)
            X = np.ascontiguousarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
            r = y.astype(np.float64)
            n_features = X.shape[1]
            sharded = self.n_jobs is not None or dask_client() is not None
            shards = ShardedQueries({"X": X, "r": r}, offsets, self.shard_rows) if sharded else None
        tables, starts = loss.kernels.stacked_tables(size)
        dev = self._eval_set_arrays(eval_set) if eval_set is not None else None
        rng = np.random.default_rng(self.random_state)
        theta = np.zeros(n_features)
        total_epochs = int(self.max_epochs)
        best = self._best_epoch(dev, start=theta.copy(), total=total_epochs)
        objective = Curve()
        self.stop_reason_ = None
        settings = (tables, starts, code, float(self._param()), float(self.learning_rate), size)
        for epoch in range(1, total_epochs + 1):
            visit = rng.permutation(queries) if self.shuffle else queries
            start = theta.copy()
            if shards is None:
                _seed(int(rng.integers(2**31)))
                total = _sgd_epoch(*row_arrays(X), n_features, r, offsets, visit, *settings, theta)
            else:
                theta, total = _mixed_epoch(shards, visit, settings, theta, rng, self.n_jobs)
            if not np.all(np.isfinite(theta)):
                where = self._too_large_where()  # a feature whose square overflows: the step size is not the cause
                raise DivergedError(
                    f"the weights diverged in epoch {epoch} (learning_rate={self.learning_rate}); lower it" if where is None
                    else f"{where}: the weights diverged in epoch {epoch}; scale the features (a log, or a division by "
                         "a constant)")
            objective.append(epoch, total / max(visit.size, 1))
            best.offer(epoch, theta.copy())
            self.n_epochs_ = epoch
            if epoch < total_epochs and np.array_equal(theta, start):
                self.stop_reason_ = (f"stopped after epoch {epoch} of {total_epochs}: no step of it moved the weights "
                                     "(every gradient it met was 0 or below the weights' precision)")
                break
        if shards is not None:
            shards.close()
        self.coef_ = best.iterate
        best.keep(self)
        self.objective_curve_ = np.array(objective.values)
        self.objective_epochs_ = np.array(objective.epochs, dtype=np.int64)
        self.n_queries_used_ = int(queries.size)
        self.n_queries_skipped_ = int(offsets.size - 1 - queries.size)
        return self._finish_fit()

    def _training_queries(self, y, offsets, size):
        """Indices of the queries to visit: at least two documents (and two levels unless kept)."""
        keep = []
        for q in range(offsets.size - 1):
            levels = np.unique(y[offsets[q]:offsets[q + 1]])
            if levels.size > size:
                raise ValueError(f"query {q} has {levels.size} relevance levels, more than subset_size={size}: "
                                 "a subset cannot hold one document of each")
            if offsets[q + 1] - offsets[q] >= 2 and (levels.size >= 2 or not self.skip_single_level):
                keep.append(q)
        if not keep:
            raise DataValidationError("no training query has two documents of different relevance: nothing to learn "
                                      "from")
        return np.array(keep, dtype=np.int64)


__all__ = ["OBJECTIVES", "PermutationCRFRanker"]
