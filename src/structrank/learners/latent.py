"""Latent structured perceptron and latent structural SVM for MAP (Haponchyk & Moschitti 2018).

A ranking is scored with the positional map of Eq. 1 (structrank.oracles.positional). The
correct rankings of a query are many (any order within the good and within the bad
documents), so the ground truth is a latent variable, imputed with the current weights as the
best correct ranking (Eq. 3): good documents on top by score, bad ones below.

- ``LatentPerceptronRanker`` is Alg. 1: for each query, infer the max-violating ranking (loss
  scaled by C; greedy, exact, or no loss for plain LSP), and if its loss is positive move w by
  ``Psi(r*) - Psi(r_hat)``; the returned weights are the average of all iterates. The epoch
  count is chosen on a dev set by MAP (``eval_set``); ``dev_curve_`` is the paper's Fig. 1.
- ``LatentSSVMRanker`` is the latent structural SVM of Yu & Joachims (2009): CCCP alternates
  imputing the latent ground truth with the current w and solving the convex structural SVM
  with that ground truth fixed (structrank.learners.ssvm.cutting_plane), until the imputation
  no longer changes. Its updates keep only the top P positions (Sec. 4.1).

Queries without both a good and a bad document are skipped: they cannot be ranked wrongly.

In process the perceptron works on dense rows (a sparse X is densified) and its epoch is one numba
loop. With ``n_jobs`` (or a dask backend) it runs iterative parameter mixing over shards, each
shard's epoch a fixed-order row kernel over dense or CSR rows, and ``fit(LetorCache)`` trains shard
by shard on the mapped file; with ``n_jobs`` the latent SVM's shards each impute their own rows.
``slack="mean"`` (ours) or ``"sum"`` (Eq. 4 as printed) says how C weighs the queries' slacks.

Both take ``loss=`` from the registry (default: MAP with the positional map, the paper's). The
perceptron runs any other hinge one query at a time in process (``_loss_epoch``; its loss scaling
C as the oracle at ``s / C``; sharding refuses it); the latent SVM imputes a clipped loss's latent
target (``structrank.losses.latent.ImputedTarget``) or holds any other loss to its ``star`` at
the imputation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from structrank.constraints import StrOptions

from structrank.data.filters import queries_with_both
from structrank.errors import DataValidationError
from structrank.learners.base import (CONVENTION, COUNT, METRICS, N_JOBS, NON_NEGATIVE, POSITIVE, BaseRanker,
                                      EvalSetMixin, LinearRankerMixin, informative_queries, optimiser_health,
                                      query_ranges)
from structrank.learners.loss_params import LOSS_PARAMETERS, LossParamsMixin
from structrank.learners.epochs import Curve, repeated_epochs
from structrank.learners.ssvm import WEIGHTS_REFUSED, cccp, cccp_health
from structrank.numba_cache import njit
from structrank.parallel.rows import matvec, rmatvec, row_arrays, row_column, row_span
from structrank.parallel.scratch import shard_memo
from structrank.parallel.shards import DEFAULT_SHARD_ROWS, ShardedQueries, ordered_sum, serves_shards
from structrank.parallel.workers import dask_client
from structrank.losses import HINGE
from structrank.losses.base import relevance
from structrank.losses.latent import ImputedTarget, has_latent_target
from structrank.losses.map import PositionalAPLoss
from structrank.feature_maps import POSITIONAL_WEIGHTS, positional_weights

# the kernels Alg. 1's numba step below calls, from the loss (module globals, so that numba compiles them in
# and caches the step)
exact_kernel = PositionalAPLoss.kernels.exact
greedy_kernel = PositionalAPLoss.kernels.greedy
latent_truth = PositionalAPLoss.kernels.truth
coef_of_order = PositionalAPLoss.kernels.coef_of_order


@njit(cache=True, nogil=True)
def _query_step(s, z, v, scale, exact, order_hat, order_star, c_hat, c_star):
    """Alg. 1 lines 5-7 for one query with scores ``s``: returns Delta of the inferred ranking,
    and when it is positive leaves ``c_star - c_hat`` (line 8's coefficients) in ``c_hat``."""
    n = s.shape[0]
    if exact:
        delta = exact_kernel(s, z, v, scale, order_hat[:n])
    else:
        delta = greedy_kernel(s, z, v, scale, order_hat[:n])
    if delta > 0.0:  # Alg. 1 line 6
        latent_truth(s, z, order_star[:n])  # line 7, Eq. 3
        coef_of_order(order_hat[:n], v, n, c_hat[:n])
        coef_of_order(order_star[:n], v, n, c_star[:n])
        for i in range(n):
            c_hat[i] = c_star[i] - c_hat[i]
    return delta


@njit(cache=True, nogil=True)
def _buffers(offsets):
    longest = 0
    for q in range(offsets.shape[0] - 1):
        longest = max(longest, offsets[q + 1] - offsets[q])
    return (np.empty(longest, np.int64), np.empty(longest, np.int64), np.empty(longest), np.empty(longest),
            np.empty(longest))


@njit(cache=True, nogil=True)
def _perceptron_epoch_rows(data, indices, indptr, n_features, z, offsets, visit, v, scale, exact, w, w_sum):
    """One pass of Alg. 1 over the queries in ``visit`` order; ``w_sum`` accumulates every iterate.
    Returns (number of updates, summed loss).

    The rows are CSR (``data, indices, indptr``) or, with an empty ``indptr``, dense rows of
    ``n_features`` values laid end to end in ``data``. The products are plain loops over rows in a
    fixed order: BLAS's last bits depend on the kernel OpenBLAS picks for the processor and on
    memory alignment, these on neither, so a fit (or a shard, structrank.parallel) gives the same
    bits on any machine and wherever its rows live.
    """
    n_updates = 0
    total_loss = 0.0
    order_hat, order_star, c_hat, c_star, s_buffer = _buffers(offsets)
    for q in visit:
        a, b = offsets[q], offsets[q + 1]
        s = s_buffer[: b - a]
        for i in range(a, b):
            lo, hi = row_span(indptr, i, n_features)
            total = 0.0
            for k in range(lo, hi):
                total += data[k] * w[row_column(indices, k, lo)]
            s[i - a] = total
        delta = _query_step(s, z[a:b], v, scale, exact, order_hat, order_star, c_hat, c_star)
        total_loss += delta
        if delta > 0.0:
            for i in range(a, b):
                diff = c_hat[i - a]
                if diff != 0.0:
                    lo, hi = row_span(indptr, i, n_features)
                    for k in range(lo, hi):
                        w[row_column(indices, k, lo)] += data[k] * diff
            n_updates += 1
        w_sum += w
    return n_updates, total_loss


def paper_feature_map(loss, feature_map):
    """None means the positional map for MAP (Haponchyk & Moschitti's) and the loss's own default otherwise."""
    return "positional" if feature_map is None and loss == "map" else feature_map


def _loss_epoch(X, y, offsets, visit, loss, scale, w, w_sum):
    """Alg. 1 with any hinge loss of the registry, one query at a time: the loss scaled by C is the
    oracle's at the scores divided by C (``argmax s.c + C Delta = argmax (s / C).c + Delta``), and
    the latent truth is the loss's best target for the scores. Returns (updates, summed loss)."""
    n_updates, total = 0, 0.0
    one = np.zeros(2, dtype=np.int64)
    for q in visit:
        a, b = offsets[q], offsets[q + 1]
        one[1] = b - a
        s = matvec(X[a:b], w)  # fixed summation order, as the positional maps' kernel
        c_hat, delta = loss.batch(s / scale, y[a:b], one)
        total += float(delta[0])
        if delta[0] > 0.0:  # Alg. 1 line 6
            w += rmatvec(X[a:b], loss.star(s, y[a:b], one) - c_hat)
            n_updates += 1
        w_sum += w
    return n_updates, total


def _hinge_sums(X, y, offsets, w, loss, positional, C):
    """([summed hinge at w], [summed hinge at w = 0], per-query score ranges) of the perceptron's loss-augmented
    hinge over the queries ``offsets`` of rows X, in units of the loss: ``Delta(r_hat) + (s / C) . (c_hat -
    c_star)``, r_hat the oracle's ranking at the scores s (its loss scaled by C; the plain argmax at C = 0,
    whose scores are then taken as they are)."""
    scale = C if C > 0 else 1.0
    sums = []
    at_w = matvec(X, w)
    for scores in (at_w, np.zeros_like(at_w)):
        # the positional oracle scales its loss itself; the others see s / C (``_loss_epoch``)
        c_hat, delta = loss.batch(scores if positional else scores / scale, y, offsets)
        margins = delta + np.add.reduceat(scores / scale * (c_hat - loss.star(scores, y, offsets)), offsets[:-1])
        sums.append(float(margins.sum()))
    return [sums[0]], [sums[1]], query_ranges(at_w / scale, offsets)


def _shard_hinge(shard, w, loss, positional, C, relevant_from):
    """``_hinge_sums`` of one shard of a LetorCache, over its queries with a good and a bad document."""
    y, offsets = np.asarray(shard["y"]), np.asarray(shard["offsets"], dtype=np.int64)
    if queries_with_both(y, offsets, relevant_from).size == 0:
        return 0.0, 0.0, np.zeros(0)
    X, y, offsets = informative_queries(shard["X"], y, offsets, relevant_from)
    total, zero, ranges = _hinge_sums(X, y, offsets, w, loss, positional, C)
    return total[0], zero[0], ranges


def _perceptron_health(w, totals, zeros, ranges):
    """The perceptron's ``OptimiserHealth`` from its hinge's sums (over queries, ``ranges`` one per query):
    no regulariser, so obj / obj(w = 0) is the mean hinge over its value at w = 0."""
    n = max(len(ranges), 1)
    return optimiser_health(w, ordered_sum(totals) / n, ordered_sum(zeros) / n, None, np.asarray(ranges), None)


def _shard_epoch(shard, w, v, scale, exact, relevant_from, visit):
    """Alg. 1 over one shard's queries (``visit``: local indices) from w: (w, iterates' sum, updates, loss).

    The shard's rows are dense or CSR (a LetorCache's shards are CSR views of the mapped file).
    """
    w = np.array(w, dtype=np.float64)
    w_sum = np.zeros_like(w)
    X = shard["X"]
    # a cache shard has labels only: its relevance is computed once per shard, not at every epoch
    z = shard["z"] if "z" in shard else shard_memo(
        shard, ("z", relevant_from), lambda: (np.asarray(shard["y"]) >= relevant_from).astype(np.int8))
    n_updates, total = _perceptron_epoch_rows(*row_arrays(X), X.shape[1], z, np.asarray(shard["offsets"], dtype=np.int64),
                                              visit, v, scale, exact, w, w_sum)
    return w, w_sum, int(n_updates), float(total)


def visits_by_shard(visit, bounds) -> list:
    """``visit`` (query numbers in visiting order) cut into each shard's queries (``bounds``: contiguous
    (q_lo, q_hi) ranges in order), numbered within the shard, each in visiting order. One stable sort
    by shard rather than a mask per shard, which reads every query once per shard.

    >>> [part.tolist() for part in visits_by_shard(np.array([4, 0, 3, 1]), [(0, 2), (2, 3), (3, 5)])]
    [[0, 1], [], [1, 0]]
    """
    visit = np.asarray(visit, dtype=np.int64)
    starts = np.array([lo for lo, _ in bounds], dtype=np.int64)
    shard = np.searchsorted(starts, visit, side="right") - 1
    order = np.argsort(shard, kind="stable")
    cuts = np.searchsorted(shard[order], np.arange(1, len(bounds)))
    return [part - start for part, start in zip(np.split(visit[order], cuts), starts)]


def _mixed_epoch(shards, visit, v, scale, exact, relevant_from, w, w_sum, n_jobs):
    """One epoch of iterative parameter mixing; adds to ``w_sum``; returns (new w, updates, loss).

    ``visit`` holds query numbers of ``shards`` in visiting order; each shard visits its own.
    """
    results = shards.map(_shard_epoch, w, v, scale, exact, relevant_from, n_jobs=n_jobs,
                         per_shard=visits_by_shard(visit, shards.bounds))
    w_sum += ordered_sum(r[1] for r in results)
    new_w = ordered_sum(r[0] for r in results) / len(results)
    return new_w, sum(r[2] for r in results), ordered_sum(r[3] for r in results)


#: the constraints both latent learners declare for their loss, positional weights and sharding
_LATENT_LOSS_OPTIONS = {**LOSS_PARAMETERS, "weights": [StrOptions(set(POSITIONAL_WEIGHTS))], "n_jobs": N_JOBS, "shard_rows": COUNT}


class _LatentLossMixin(LossParamsMixin):
    """The loss of the latent learners: a hinge whose positional options (the paper's MAP) come from the
    learner's own parameters, on the positional map when MAP's feature map is not given."""

    _loss_kind = HINGE

    def _paper_map(self) -> dict:
        """{"feature_map": the one given in ``loss_params``, or for MAP without one the positional map}."""
        return {"feature_map": paper_feature_map(self.loss, (self.loss_params or {}).get("feature_map"))}



class LatentPerceptronRanker(_LatentLossMixin, EvalSetMixin, LinearRankerMixin, BaseRanker):
    """Latent structured perceptron for ranking (Alg. 1): LSP, LSP-AP and LSP-AP*.

    Parameters
    ----------
    inference : {"greedy", "exact", "none"}, default "greedy"
        Max-violating inference for Delta_ap = 1 - AP: the paper's greedy (LSP-AP), the exact
        interleaving search (LSP-AP*), or the plain argmax without loss (LSP).
    C : float, default 1.0
        Loss scaling in the inference (ignored by ``inference="none"``).
    loss : str, default "map"
        A hinge loss of the registry (``structrank.losses``). "map" with the positional map (the
        default feature map) is the paper's (numba epochs, sharding with ``n_jobs``); any other
        (e.g. ``loss="ndcg"``, with its paper's map) runs Alg. 1 one query at a time in this process,
        its loss scaled by C > 0. A probabilistic objective (a CRF's) is refused: it has no
        max-violating ranking to update against.
    loss_params : dict or None
        The loss's options (docs/LOSSES.md lists each loss's): ``feature_map`` (None: the positional
        map for MAP, the paper's, and the loss's own default for the others), ``k`` (the cut-off of
        a clipped loss: NDCG@k, MRR@k, P@k, ...), ``relevant_from`` (labels at least this are good).
        The positional map's ``inference``, ``weights`` and scale (``C``) are this learner's parameters.
    max_epochs : int, default 100
        Epochs T. With ``eval_set`` the epoch whose averaged weights give the best dev metric
        is kept (T_best); without, the weights after ``max_epochs``.
    weights : {"harmonic", "log2", "linear"}, default "harmonic"
        Positional weights v_j (1/j in the paper).
    average : bool, default True
        Return the average of all iterates (Alg. 1 line 13) rather than the last one.
    shuffle : bool, default False
        Visit the queries in a new random order each epoch (Alg. 1 visits them in order).
    random_state : int or None
        Seed of the shuffling.
    dev_metric, dev_convention : str, default "map", "auto"
        What chooses the epoch on ``eval_set``.
    n_jobs : int or None, default None
        None: Alg. 1 in this process. An int (or a joblib dask backend): the queries are cut
        into shards of about ``shard_rows`` rows (structrank.parallel) and every epoch is
        *iterative parameter mixing* (McDonald, Hall & Mann 2010): each shard runs Alg. 1 over
        its queries from the same w, on its own worker, and the new w is the mean of the
        shards' weights; the averaged weights sum every shard's iterates. With one shard this is
        Alg. 1 exactly; the model depends on the shards, never on the number of workers.
    shard_rows : int, default 100000
    feature_map, k, relevant_from : deprecated
        The loss's options as separate parameters, as before ``loss_params``: given, each joins
        ``loss_params`` with a FutureWarning.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    loss_ : RankingLoss
        The loss the fit trained on, built once.
    best_epoch_ : int
        The epoch kept (1-based).
    dev_curve_, dev_epochs_ : ndarray
        The dev metric after each epoch (empty without ``eval_set``), and those epochs: every one up to
        ``learners.epochs.CURVE_POINTS`` of them, then a thinned set (``learners.epochs.Curve``).
    train_loss_curve_, train_loss_epochs_ : ndarray
        Mean loss of the inferred rankings in each epoch, and those epochs (thinned alike).
    n_epochs_ : int
        The epochs trained: ``max_epochs``, or fewer when an epoch left w as it found it (below).
    stop_reason_ : str or None
        Why training stopped before ``max_epochs``: an epoch that ends at the w it started from (in the
        same visiting order, or without a single update) is repeated by every later epoch, so the fit
        stops there and offers the later epochs' weights without training them (the plain iterate is
        that w; the average after e more epochs is computed in closed form, at epochs t + 1, t + 2,
        t + 4, ... and ``max_epochs``, so with ``eval_set`` the epochs in between are not scored).
        Memory does not grow with the epochs.
    n_updates_ : int
    n_queries_used_ : int
    health_ : OptimiserHealth
        The kept weights' loss-augmented hinge (in units of the loss: the scores divided by C) against
        its value at w = 0, their ratio (no regulariser) and ``|w|^2``; a fit that stayed at w = 0 warns.

    Examples
    --------
    >>> from structrank.data import make_ranking_dataset
    >>> ds = make_ranking_dataset(n_queries=50, random_state=0)
    >>> train, vali = ds.take_queries(range(30)), ds.take_queries(range(30, 50))
    >>> model = LatentPerceptronRanker(max_epochs=10, random_state=0).fit(train, eval_set=vali)
    >>> 1 <= model.best_epoch_ <= 10, model.score(vali) > 0.5  # score: MAP, the loss's metric
    (True, True)
    """

    _saved_attributes = ("coef_", "n_features_in_")

    # C = 0 is the plain argmax; a loss other than MAP needs C > 0 and says so in fit
    _parameter_constraints = {**_LATENT_LOSS_OPTIONS, "inference": [StrOptions({"greedy", "exact", "none"})],
                              "C": NON_NEGATIVE, "max_epochs": COUNT, "average": ["boolean"], "shuffle": ["boolean"],
                              "random_state": ["random_state"], "dev_metric": METRICS,
                              "dev_convention": CONVENTION}

    _loss_set_by = {"inference": "its parameter inference", "weights": "its parameter weights",
                    "scale": "its parameter C", "positions": "the perceptron updates all positions"}

    def __init__(self, inference="greedy", C=1.0, max_epochs=100, weights="harmonic", average=True, shuffle=False,
                 random_state=None, dev_metric="map", dev_convention="auto", n_jobs=None,
                 shard_rows=DEFAULT_SHARD_ROWS, loss="map", loss_params=None):
        self.inference = inference
        self.C = C
        self.loss = loss
        self.loss_params = loss_params
        self.max_epochs = max_epochs
        self.weights = weights
        self.average = average
        self.shuffle = shuffle
        self.random_state = random_state
        self.dev_metric = dev_metric
        self.dev_convention = dev_convention
        self.n_jobs = n_jobs
        self.shard_rows = shard_rows

    def fit(self, X, y=None, qid=None, eval_set=None, *, group=None, sample_weight=None, eval_group=None,
            eval_qid=None):
        """Fit on rows X with labels y grouped by qid (or LightGBM's ``group``, rows per query); ``eval_set``
        (dev data; LightGBM's ``[(X, y)]`` with ``eval_group`` too) chooses the epoch. ``sample_weight`` must
        weigh every query alike (a perceptron's update is a mistake's, the same for every query).

        X may be a ``structrank.data.LetorCache`` (a memory-mapped LETOR file): it is trained on
        shard by shard without loading it (in this process with ``n_jobs=None``), each shard a
        reference to rows of the mapped file.
        """

        self._start_fit()
        qid, eval_set = self._fit_call(X, qid, group, eval_set, eval_group, eval_qid)
        self._refuse_weights(sample_weight, X, qid, "the perceptron updates on each query's mistake with the same "
                             "step, and weighted steps are not implemented")
        loss = self._fit_loss(None)
        relevant_from = loss.relevant_from
        positional = isinstance(loss, PositionalAPLoss)
        if not positional:
            if dask_client() is not None or serves_shards(X):
                raise ValueError(f"loss {loss.label!r}: sharded training (n_jobs, a cluster, a LetorCache) runs the "
                                 "positional MAP kernels only; train it with n_jobs=None on read data")
        if serves_shards(X):
            offsets = np.asarray(X.offsets, dtype=np.int64)
            # only queries with a good and a bad document are visited, as informative_queries keeps
            queries = queries_with_both(np.asarray(X.y), offsets, relevant_from)
            if queries.size == 0:
                raise DataValidationError(f"{X.source}: no query has both a good and a bad document: nothing to "
                                          "learn from")
            if positional and loss.inference == "exact":
                loss.kernels.check_exact_size(loss.relevance(np.asarray(X.y)), offsets)
            self.n_features_in_ = n_features = X.n_features
            shards = ShardedQueries.from_cache(X, self.shard_rows)
        else:
            X, y, qid, offsets = self._validate_fit_data(X, y, qid)
            if positional and loss.inference == "exact":  # its numba loop calls the DP directly
                loss.kernels.check_exact_size(loss.relevance(y), offsets)
            X, y, offsets = informative_queries(X, y, offsets, relevant_from)
            X = np.ascontiguousarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
            z = relevance(y, relevant_from)
            n_features = X.shape[1]
            queries = np.arange(offsets.size - 1)
            sharded = self.n_jobs is not None or dask_client() is not None
            shards = ShardedQueries({"X": X, "z": z}, offsets, self.shard_rows) if sharded else None
        self._warn_if_loss_is_constant(loss, offsets)
        v = positional_weights(int(np.diff(offsets).max()), self.weights)
        scale = 0.0 if self.inference == "none" else float(self.C)
        dev = None
        if eval_set is not None:
            dev = self._eval_set_arrays(eval_set)
        rng = np.random.default_rng(self.random_state)
        n_queries = queries.size
        w = np.zeros(n_features)
        w_sum = np.zeros(n_features)
        steps = 0
        total_epochs = int(self.max_epochs)
        best = self._best_epoch(dev, start=w.copy(), total=total_epochs)
        losses = Curve()
        self.n_updates_ = 0
        self.stop_reason_ = None
        exact = self.inference == "exact"
        for epoch in range(1, total_epochs + 1):
            visit = queries[rng.permutation(n_queries)] if self.shuffle else queries
            start, start_sum = w.copy(), w_sum.copy()
            if not positional:
                n_updates, total = _loss_epoch(X, y, offsets, visit, loss, float(self.C), w, w_sum)
            elif shards is None:
                n_updates, total = _perceptron_epoch_rows(*row_arrays(X), n_features, z, offsets, visit, v, scale,
                                                          exact, w, w_sum)
            else:
                w, n_updates, total = _mixed_epoch(shards, visit, v, scale, exact, relevant_from, w, w_sum,
                                                   self.n_jobs)
            steps += n_queries
            self.n_updates_ += int(n_updates)
            losses.append(epoch, total / n_queries)
            best.offer(epoch, w_sum / steps if self.average else w.copy())
            self.n_epochs_ = epoch
            # an epoch that ends where it began, in the same visiting order (or without an update, in any
            # order), is repeated by every later epoch: w stays, and w_sum grows by the same sum each time
            if np.array_equal(w, start) and (n_updates == 0 or not self.shuffle):
                self.stop_reason_ = self._repeat_later_epochs(best, losses, epoch, total_epochs, total / n_queries,
                                                              w, w_sum, w_sum - start_sum, steps, n_queries)
                break
        if serves_shards(X):  # the mapped file, shard by shard
            parts = shards.map(_shard_hinge, best.iterate, loss, positional, float(self.C), relevant_from,
                               n_jobs=self.n_jobs)
            self.health_ = _perceptron_health(best.iterate, [p[0] for p in parts], [p[1] for p in parts],
                                              np.concatenate([p[2] for p in parts]))
        else:
            with np.errstate(over="ignore", invalid="ignore"):  # scores that overflow: _finish_fit's error says so
                self.health_ = _perceptron_health(best.iterate, *_hinge_sums(X, y, offsets, best.iterate, loss,
                                                                             positional, float(self.C)))
        if shards is not None:
            shards.close()
        self.coef_ = best.iterate
        best.keep(self)
        self.train_loss_curve_ = np.array(losses.values)
        self.train_loss_epochs_ = np.array(losses.epochs, dtype=np.int64)
        self.n_queries_used_ = int(n_queries)
        return self._finish_fit()

    def _repeat_later_epochs(self, best, losses, epoch, total_epochs, loss, w, w_sum, repeated_sum, steps, n_queries):
        """Offer the epochs after ``epoch``, which repeats itself, without training them (``repeated_epochs``):
        the plain iterate stays ``w``; the average after ``e`` more epochs is ``(w_sum + e repeated_sum) /
        (steps + e n_queries)``, which moves along a line towards the repeated epoch's mean. Returns why it stopped."""
        later = repeated_epochs(epoch, total_epochs) if self.average else ([total_epochs] if total_epochs > epoch else [])
        for e in later:
            losses.append(e, loss)
            more = e - epoch
            best.offer(e, (w_sum + more * repeated_sum) / (steps + more * n_queries) if self.average else w.copy())
        if epoch == total_epochs:
            return None
        return (f"stopped after epoch {epoch} of {total_epochs}: it left the weights as it found them, so every later "
                "epoch would repeat it" + (" (their averaged weights were computed, not trained)" if self.average else ""))

    def _joint_parameter_problems(self):
        """Another loss than the positional MAP needs C > 0 (its scaling) and runs in this process (no n_jobs)."""
        if self._paper_map()["feature_map"] == "positional":
            return {}
        label = self.loss
        if not self.C > 0:
            return {"C": f"loss {label!r} in the perceptron needs C > 0 (its loss scaling), got {self.C!r}"}
        if self.n_jobs is not None:
            return {"n_jobs": f"loss {label!r}: sharded training (n_jobs, a cluster, a LetorCache) runs the positional "
                              "MAP kernels only; train it with n_jobs=None on read data"}
        return {}

    def _formulation(self):
        return f"{type(self).__name__}(loss={self.loss!r}, inference={self.inference!r}, C={self.C:g})"

    def _zero_advice(self):
        return ("its averaged weights give the training queries the hinge of w = 0: more epochs, another epoch on "
                "--vali, or inference with the loss (not 'none') learns")

    def _loss_context(self):
        """The positional map's inference, weights and scale are the perceptron's (the loss scaled by C)."""
        return {**self._paper_map(), "inference": self.inference, "weights": self.weights, "scale": float(self.C),
                "positions": "all"}

    def _objective_scoring(self):
        return self._trained_loss().scoring()


@dataclass(frozen=True)
class _FixedTruth:
    """A loss whose ground truth is held fixed: the convex step of CCCP.

    The truth was imputed at weights ``w``: ``c_star`` holds its coefficients for all rows,
    and a shard (structrank.parallel) imputes its own rows again at ``w`` rather than receive
    them.
    """

    loss: PositionalAPLoss
    c_star: np.ndarray
    w: np.ndarray
    star_varies = False

    def batch(self, scores, labels, offsets, out=None):
        return self.loss.batch(scores, labels, offsets, out)

    def star(self, scores, labels, offsets):
        return self.c_star

    def same_as(self, other):
        return np.array_equal(self.c_star, other.c_star)

    def for_shard(self, shard):
        return _FixedTruth(self.loss, self.loss.star(matvec(shard["X"], self.w), shard["y"], shard["offsets"]), self.w)


class LatentSSVMRanker(_LatentLossMixin, LinearRankerMixin, BaseRanker):
    """Latent structural SVM for MAP (Yu & Joachims 2009; LSSVM-AP and LSSVM-AP*).

    Minimises Eq. 4, ``1/2 |w|^2 + C/|Q| sum_q [max_r (Delta_ap(r) + w.Psi(r)) - max_{h correct} w.Psi(h)]``
    (by default the mean over queries, like structrank's StructSVMRanker; ``slack="sum"`` is
    Eq. 4 as printed, ``C sum_q``) by CCCP: impute each query's latent ground truth with the
    current w, solve the structural SVM with it fixed by the 1-slack cutting-plane method, repeat
    until the imputation is unchanged.

    Parameters
    ----------
    inference : {"greedy", "exact"}, default "greedy"
    C : float, default 1.0
        Regularisation trade-off: the weight of the mean slack, or of the summed slacks with
        ``slack="sum"``.
    slack : {"mean", "sum"}, default "mean"
        How C weighs the queries' slacks. "mean" keeps one C meaningful across training sets of
        any size (StructSVMRanker's convention); "sum" is the paper's Eq. 4, ``C sum_q xi_q``,
        under which the paper's grid {1, ..., 5000} was chosen. The two are one problem: "sum"
        with C is "mean" with C times the number of queries used (``n_queries_used_``).
    weights : {"harmonic", "log2", "linear"}, default "harmonic"
    positions : {"positives", "all"}, default "positives"
        Keep only the top P positions of Psi in the constraints (Sec. 4.1), or all N.
    loss, loss_params : default "map", None
        A hinge loss of the registry (``structrank.losses``) and its options (docs/LOSSES.md lists
        them: ``feature_map``, ``k``, ``relevant_from``, ...). The default is the paper's (no
        ``feature_map``: the positional map for MAP, the loss's own default for others); the positional
        map's ``inference``, ``weights`` and ``positions`` are this learner's parameters. A clipped
        loss with a latent target (NDCG@k, MRR@k with binary gains) imputes the
        best loss-zero ranking under w (structrank.oracles.latent); any other is held to its
        ``star`` at the imputation (one convex solve when the target does not follow the scores).
        A probabilistic objective (a CRF's) is refused.
    tol, max_iter : float, int
        Tolerance and iteration cap of each cutting-plane solve.
    max_outer : int, default 30
        CCCP iterations.
    outer_tol : float, default 1e-3
        Stop CCCP when Eq. 4 drops by less than this fraction; the iterate with the lowest
        objective is kept.
    n_jobs : int or None, default None
        None: in this process. An int (or a joblib dask backend): every cutting-plane
        iteration's oracle calls run shard by shard on that many threads, each shard imputing its
        own latent truth (StructSVMRanker's ``n_jobs``); the same model on any number of workers.
    shard_rows : int, default 100000
    feature_map, k, relevant_from : deprecated
        The loss's options as separate parameters, as before ``loss_params``: given, each joins
        ``loss_params`` with a FutureWarning.

    Attributes
    ----------
    loss_ : RankingLoss
        The loss the fit trained on, built once.
    coef_ : ndarray
    n_outer_ : int
        CCCP iterations run.
    converged_ : bool
        The imputed ground truth or the objective stopped changing.
    objective_history_ : ndarray
        Eq. 4 (with the inference's own max) after each CCCP iteration, under ``slack``'s
        weighting of the slacks.
    n_queries_used_ : int
        The queries with a good and a bad document: the ``|Q|`` of Eq. 4.
    health_ : OptimiserHealth
        Eq. 4's average slack against its value at w = 0, obj / obj(w = 0) and ``|w|^2`` (each with the
        latent truth imputed at its own weights); a fit that stayed at w = 0 warns.

    Examples
    --------
    >>> from structrank.data import make_ranking_dataset
    >>> ds = make_ranking_dataset(n_queries=30, random_state=0)
    >>> model = LatentSSVMRanker(C=10.0).fit(ds)
    >>> model.converged_, model.score(ds) > 0.5
    (True, True)
    """

    _saved_attributes = ("coef_", "n_features_in_")

    _parameter_constraints = {**_LATENT_LOSS_OPTIONS, "inference": [StrOptions({"greedy", "exact"})], "C": POSITIVE,
                              "slack": [StrOptions({"mean", "sum"})], "positions": [StrOptions({"positives", "all"})],
                              "tol": POSITIVE, "max_iter": COUNT, "max_outer": COUNT, "outer_tol": NON_NEGATIVE}

    _loss_set_by = {"inference": "its parameter inference", "weights": "its parameter weights",
                    "positions": "its parameter positions", "scale": "the latent SVM's loss is unscaled, C weighs the slacks"}

    def __init__(self, inference="greedy", C=1.0, slack="mean", weights="harmonic", positions="positives", tol=1e-4,
                 max_iter=1000, max_outer=30, outer_tol=1e-3, n_jobs=None, shard_rows=DEFAULT_SHARD_ROWS, loss="map",
                 loss_params=None):
        self.inference = inference
        self.C = C
        self.loss = loss
        self.loss_params = loss_params
        self.slack = slack
        self.weights = weights
        self.positions = positions
        self.tol = tol
        self.max_iter = max_iter
        self.max_outer = max_outer
        self.outer_tol = outer_tol
        self.n_jobs = n_jobs
        self.shard_rows = shard_rows

    def fit(self, X, y=None, qid=None, *, group=None, sample_weight=None, eval_set=None, eval_group=None,
            eval_qid=None):
        """Fit on rows X with labels y grouped by qid (or LightGBM's ``group``, or a RankingDataset as X) by
        CCCP: impute each query's best correct ranking under w, solve the structural SVM against it by cutting
        planes, and repeat until the imputation or the objective stops changing. An ``eval_set`` is scored
        into ``eval_score_``; ``sample_weight`` must weigh every query alike. Returns self."""
        self._start_fit()
        qid, eval_set = self._fit_call(X, qid, group, eval_set, eval_group, eval_qid)
        self._refuse_weights(sample_weight, X, qid, WEIGHTS_REFUSED)
        X, y, qid, offsets = self._validate_fit_data(X, y, qid)
        loss = self._fit_loss(y)
        self._warn_if_loss_is_constant(loss, offsets)
        X, y, offsets = informative_queries(X, y, offsets, loss.relevant_from)
        n_queries = offsets.size - 1
        # the cutting-plane solver weighs the mean slack: Eq. 4's sum is its mean times |Q|
        C = float(self.C) * (n_queries if self.slack == "sum" else 1)
        X = X.tocsr() if sp.issparse(X) else np.ascontiguousarray(X, dtype=np.float64)

        def impute(w, scores):
            if latent_target:  # a clipped loss: the best loss-zero ranking under w (structrank.oracles.latent)
                return ImputedTarget.impute(loss, w, scores, y, offsets)
            return _FixedTruth(loss, loss.star(scores, y, offsets), w)

        latent_target = not isinstance(loss, PositionalAPLoss) and has_latent_target(loss)

        result = cccp(X, y, offsets, impute, C, self.tol, self.max_iter, self.max_outer, self.outer_tol,
                      self.n_jobs, self.shard_rows)
        self.health_ = cccp_health(X, y, offsets, impute, result.w, C)[0]
        self.coef_ = result.w
        self.n_outer_ = result.n_outer
        self.converged_ = result.converged
        self.objective_history_ = np.array(result.history)
        self.n_queries_used_ = int(n_queries)
        return self._finish_fit(eval_set)

    def _formulation(self):
        return f"{type(self).__name__}(loss={self.loss!r}, inference={self.inference!r}, C={self.C:g})"

    def _loss_context(self):
        """The positional map's inference, weights and positions are the latent SVM's (its loss unscaled)."""
        return {**self._paper_map(), "inference": self.inference, "weights": self.weights, "scale": 1.0,
                "positions": self.positions}

    def _objective_scoring(self):
        return self._trained_loss().scoring()
