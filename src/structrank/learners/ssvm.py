"""Structural SVM rankers trained by the 1-slack cutting-plane algorithm (Joachims et al. 2009).

The learner knows nothing of the loss it optimises: it asks a loss object (structrank.losses)
for the max-violating structure of every query and turns the answer into one constraint

    w . g >= delta - xi,   g = mean_q X_q^T (c_star_q - c_hat_q),   delta = mean_q Delta_q,

the 1-slack form of the paper's problem (1), ``min 1/2 |w|^2 + C/|Q| sum_q xi_q``: both have the
same solution w. The working set grows by the most violated constraint until none is violated
by more than ``tol`` beyond the current slack; the dual QP over the working set is solved
exactly each time, warm-started (structrank.learners.qp).

SVM-combo with separate slacks (Sec. 3.7) gives every component loss its own slack and its own
constraints: ``min 1/2 |w|^2 + C sum_l xi_l``.

What it holds: ``cutting_plane`` (one constraint group per loss; the constraint comes from a
``step(w)``, in process or ``sharded_oracle_step``); ``cccp``, a latent structural SVM's loop
(impute, solve with ``cutting_plane``, repeat; used by ``StructSVMRanker(target="latent")`` and
``LatentSSVMRanker``); and ``StructSVMRanker``: SVM-auc/map/ndcg/ndcg-nc/mrr, DORM and SVM-combo
(separate or shared slacks), which also trains on a ``LetorCache`` shard by shard.
"""

from __future__ import annotations

import dataclasses
import re
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from structrank.constraints import StrOptions

from structrank.data.filters import queries_with_both
from structrank.errors import DataFormatError, DataValidationError
from structrank.learners.base import (CONVENTION, COUNT, METRICS, N_JOBS, NON_NEGATIVE, POSITIVE, BaseRanker,
                                      LinearRankerMixin, StayedAtZeroWarning, built_problem, informative_queries, informative_rows, metric_list,
                                      optimiser_health, query_ranges, unpack)
from structrank.learners.loss_params import LOSS_PARAMETERS, LossParamsMixin
from structrank.learners.qp import active_set_dual, dual_objective, solve_dual
from structrank.losses import HINGE
from structrank.losses.latent import ImputedTarget, check_latent, has_latent_target
from structrank.parallel.rows import dense_view, dot, matvec, rmatvec
from structrank.parallel.scratch import scratch, shard_memo
from structrank.parallel.shards import DEFAULT_SHARD_ROWS, ShardedQueries, ordered_sum, serves_shards
from structrank.parallel.workers import dask_client


@dataclass
class CuttingPlaneTrace:
    """What one cutting-plane run did (for the paper's Figs. 4-6 and 8)."""

    dual: list = field(default_factory=list)  # dual objective after each QP
    primal: list = field(default_factory=list)  # primal objective at each iterate (exact: oracle's violation)
    violation: list = field(default_factory=list)  # most violated constraint's violation, per loss
    oracle_seconds: float = 0.0
    qp_seconds: float = 0.0
    qp_steps: int = 0


def _oracle_step(X, y, offsets, losses, stars, w, n_queries, rows=None):
    """[(g, delta)] per loss at w: the most violated constraint of each slack group, in this process.

    ``rows``: the rows of X that ``y`` and ``offsets`` describe (the informative queries), so that
    X is not copied; the other rows get a zero coefficient, which the product skips, so g has
    the same bits as on a copy of those rows.
    """
    scores = matvec(X, w)  # fixed summation order: dense and CSR rows give the same bits
    if rows is not None:
        scores = scores[rows]
    found = []
    for l, loss in enumerate(losses):
        if loss.star_varies:  # the best correct structure for the current scores
            stars[l] = loss.star(scores, y, offsets)
        c_hat, delta = loss.batch(scores, y, offsets)
        diff = stars[l] - c_hat
        if rows is not None:
            full = np.zeros(X.shape[0])
            full[rows] = diff
            diff = full
        g = rmatvec(X, diff) / n_queries
        found.append((g, float(delta.mean())))
    return found


def shard_step(shard, w, losses):
    """One shard's part of every loss's constraint: (X^T (c_star - c_hat) summed, delta summed).

    Its per-row temporaries are this thread's reused buffers (structrank.parallel.scratch), and
    a loss's fixed ideal structure is computed once per shard, not at every iteration.
    """
    X = shard_memo(shard, "dense_view", lambda: dense_view(shard["X"]))  # full CSR rows: the dense kernels
    y, offsets = shard["y"], shard["offsets"]
    n = X.shape[0]
    scores = matvec(X, w, out=scratch("scores", n))
    out = []
    for loss in losses:
        imputed = hasattr(loss, "for_shard")
        if imputed:  # a latent truth, imputed at other weights than these: this shard's rows, once per imputation
            loss = _imputed_for_shard(shard, loss)
        c_hat, delta = loss.batch(scores, y, offsets, out=(scratch("coef", n), scratch("order", n, np.int64)))
        if imputed or loss.star_varies:
            star = loss.star(scores, y, offsets)
        else:
            star = shard_memo(shard, ("star", loss), lambda loss=loss: loss.star(scores, y, offsets))
        diff = np.subtract(star, c_hat, out=c_hat)
        out.append((rmatvec(X, diff), float(np.sum(delta))))
    return out


def _shard_ranges(shard, w):
    """The spread (max - min) of one shard's scores within each of its queries."""
    return query_ranges(matvec(shard["X"], w), np.asarray(shard["offsets"]))


def _imputed_for_shard(shard, target):
    """``target.for_shard(shard)``, kept in the shard until the imputation changes: a CCCP solve
    runs many cutting-plane steps at one imputation, and re-imputing (a product and a sort per
    query) at each of them would repeat the same work."""
    key = target.w.tobytes()
    kept = shard.get("_imputed")
    if kept is None or kept[0] is not target.loss or kept[1] != key:
        kept = shard["_imputed"] = (target.loss, key, target.for_shard(shard))
    return kept[2]


def sharded_oracle_step(shards, losses, n_jobs=None, n_queries=None):
    """A ``step(w)`` for ``cutting_plane`` that runs the oracles shard by shard (structrank.parallel).

    The shards' sums are added in shard order, so w is the same on any number of workers.
    ``n_queries`` divides the sums (all the shards' queries by default).
    """
    n_queries = shards.offsets.size - 1 if n_queries is None else n_queries

    def step(w):
        results = shards.map(shard_step, w, losses, n_jobs=n_jobs)
        return [(ordered_sum(r[l][0] for r in results) / n_queries, ordered_sum(r[l][1] for r in results) / n_queries)
                for l in range(len(losses))]

    return step


def cutting_plane(X, y, offsets, losses, C, tol=1e-4, max_iter=1000, qp_tol=1e-12, callback=None, step=None,
                  rows=None):
    """Train w by the cutting-plane method over queries ``offsets`` of (X, y) (of ``X[rows]``, when
    ``rows`` are given, without copying them).

    Parameters
    ----------
    X : ndarray or CSR, shape (n_rows, d)
        Rows grouped by query (``offsets[q]:offsets[q+1]``).
    losses : list of loss objects
        One: the 1-slack SVM. Several: one slack per loss (separate slacks).
    C, tol, max_iter : float, float, int
        Regularisation; stop when no constraint is violated by more than ``tol`` beyond the
        current slack; at most ``max_iter`` oracle calls.
    step : callable or None
        ``step(w) -> [(g, delta)]`` per loss (the new constraint of each slack group); None
        runs the oracles here over all of X (``sharded_oracle_step`` spreads them over workers).

    Returns
    -------
    w, alpha, n_iter, converged, trace
    """
    n_queries = offsets.shape[0] - 1
    d = X.shape[1]
    n_groups = len(losses)
    stars = [loss.star(np.zeros(y.shape[0]), y, offsets) for loss in losses] if step is None else None
    G = np.zeros((0, d))
    b = np.zeros(0)
    group = np.zeros(0, dtype=np.int64)
    H = np.zeros((0, 0))
    alpha = np.zeros(0)
    w = np.zeros(d)
    trace = CuttingPlaneTrace()
    converged = False
    n_iter = 0
    # max_iter + 1 passes: the last one only measures the final w (its slack and objective)
    for n_iter in range(1, max_iter + 2):
        start = time.perf_counter()
        found = _oracle_step(X, y, offsets, losses, stars, w, n_queries, rows) if step is None else step(w)
        trace.oracle_seconds += time.perf_counter() - start
        # slack of each group under the current working set, and the new violations
        slack = np.zeros(n_groups)
        if b.size:
            margins = b - matvec(G, w)
            for l in range(n_groups):
                in_group = group == l
                if in_group.any():
                    slack[l] = max(0.0, margins[in_group].max())
        violations = np.array([delta - dot(g, w) for g, delta in found])
        trace.violation.append(violations.tolist())
        trace.primal.append(0.5 * dot(w, w) + C * np.maximum(violations, 0.0).sum())
        new = [l for l in range(n_groups) if violations[l] > slack[l] + tol]
        if callback is not None:
            callback(n_iter, w, violations, slack)
        if not new:
            converged = True
            break
        if n_iter > max_iter:
            n_iter = max_iter
            break
        for l in new:
            g, delta = found[l]
            cross = matvec(G, g)
            H = np.block([[H, cross[:, None]], [cross[None, :], np.array([[dot(g, g)]])]])
            G = np.vstack([G, g])
            b = np.append(b, delta)
            group = np.append(group, l)
            alpha = np.append(alpha, 0.0)
        start = time.perf_counter()
        # The gradient H a - b carries rounding of order eps * C * max|H|: a gap below that cannot
        # be reached, and at large C an absolute 1e-12 would keep SMO turning until max_steps.
        scale = max(1.0, np.abs(b).max(), float(C) * np.abs(H).max())
        # the exact active-set solve first; SMO then confirms (or finishes) it
        active_set_dual(H, b, group, n_groups, float(C), alpha, qp_tol * scale, 10 * alpha.size + 50)
        steps, _ = solve_dual(H, b, group, n_groups, float(C), alpha, qp_tol * scale, 10**7)
        trace.qp_seconds += time.perf_counter() - start
        trace.qp_steps += int(steps)
        trace.dual.append(dual_objective(H, b, alpha))
        w = rmatvec(G, alpha)
    return w, alpha, n_iter, converged, trace


@dataclass
class CCCPResult:
    """What a CCCP run of a latent structural SVM found."""

    w: np.ndarray  # the iterate with the lowest objective
    objective: float  # its objective (inf when no solve ran)
    history: list  # the objective after each convex solve
    n_outer: int  # convex solves run
    converged: bool  # the imputation repeated or the objective stopped dropping
    n_iter: int  # cutting-plane iterations over all solves
    trace: CuttingPlaneTrace | None  # the last solve's


def latent_objective(w, scores, target, y, offsets, C):
    """``1/2 |w|^2 + C mean_q [Delta + s . (c_hat - c_star)]`` of an imputed target at its own w."""
    c_hat, delta = target.batch(scores, y, offsets)
    margins = delta + np.add.reduceat(scores * (c_hat - target.star(scores, y, offsets)), offsets[:-1])
    return float(0.5 * dot(w, w) + C * margins.mean())


def cccp_health(X, y, offsets, impute, w, C):
    """(``OptimiserHealth``, objective, objective at w = 0) of a latent structural SVM's weights ``w``: each
    objective (``latent_objective``) with the target imputed at its own weights; the slack is the objective
    less the regulariser, over C."""
    scores = matvec(X, w)
    zero_w, zero_scores = np.zeros_like(w), np.zeros_like(scores)
    zero = latent_objective(zero_w, zero_scores, impute(zero_w, zero_scores), y, offsets, C)
    objective = latent_objective(w, scores, impute(w, scores), y, offsets, C)
    health = optimiser_health(w, (objective - 0.5 * dot(w, w)) / C, zero / C, C, scores, offsets)
    return health, objective, zero


def cccp(X, y, offsets, impute, C, tol=1e-4, max_iter=1000, max_outer=30, outer_tol=1e-3, n_jobs=None,
         shard_rows=DEFAULT_SHARD_ROWS, w0=None):
    """CCCP for a latent structural SVM (Yu & Joachims 2009).

    ``impute(w, scores)`` returns the loss with its correct structure imputed at ``w`` (an object
    with ``batch``, ``star``, ``same_as`` and, for shards, ``for_shard``). From w = 0: impute,
    solve the convex structural SVM with the imputation fixed by the cutting-plane method,
    repeat until the imputation repeats or the objective drops by less than ``outer_tol``
    (relative), at most ``max_outer`` solves. With an oracle that does not maximise the
    constrained Psi (the greedy AP inference, the top-P update) the decrease is not monotone,
    hence the second rule and the best iterate kept. ``n_jobs`` and ``shard_rows``: as in
    ``StructSVMRanker`` (each shard imputes its own rows).
    """
    sharded = n_jobs is not None or dask_client() is not None
    shards = ShardedQueries({"X": X, "y": y}, offsets, shard_rows) if sharded else None
    try:
        return _cccp(X, y, offsets, impute, C, tol, max_iter, max_outer, outer_tol, shards, n_jobs, w0)
    finally:
        if shards is not None:
            shards.close()


def _cccp(X, y, offsets, impute, C, tol, max_iter, max_outer, outer_tol, shards, n_jobs, w0):
    w = np.zeros(X.shape[1]) if w0 is None else np.asarray(w0, dtype=np.float64).copy()
    fixed = None
    result = CCCPResult(w, np.inf, [], 0, False, 0, None)
    while True:
        scores = matvec(X, w)
        new = impute(w, scores)
        if fixed is not None:
            value = latent_objective(w, scores, new, y, offsets, C)
            result.history.append(value)
            decrease = result.objective - value
            if value < result.objective:
                result.w, result.objective = w, value
            if new.same_as(fixed) or decrease <= outer_tol * abs(value):
                result.converged = True
                break
        if result.n_outer == int(max_outer):
            break
        fixed = new
        step = None if shards is None else sharded_oracle_step(shards, [fixed], n_jobs)
        w, _, n_iter, _, result.trace = cutting_plane(X, y, offsets, [fixed], C, tol, max_iter, step=step)
        result.n_iter += n_iter
        result.n_outer += 1
    return result


#: why the cutting-plane learners refuse unequal query weights
WEIGHTS_REFUSED = ("its cutting-plane oracle (Joachims' 1-slack formulation) averages the queries' losses and feature "
                   "differences with equal weights, and weighted slacks are not implemented; repeat a query's rows "
                   "under new qids to weigh it up, or train LambdaMARTRanker, StructuredBoostingRanker or RankSVM, "
                   "which take query weights")


class StructSVMRanker(LossParamsMixin, LinearRankerMixin, BaseRanker):

    """Structural SVM ranker for a chosen ranking loss (Chakrabarti et al. 2008 and the methods it reviews).

    Learns w by ``min 1/2 |w|^2 + C/|Q| sum_q xi_q`` subject to, for every query q and ranking
    r, ``w . (Psi(x_q, r*) - Psi(x_q, r)) >= Delta(r*, r) - xi_q``, with exact loss-augmented
    inference for the loss (structrank.oracles) and the 1-slack cutting-plane method. Relevance
    is binary: a label >= ``relevant_from`` is good.

    ============================  ===================================
    method                        parameters
    ============================  ===================================
    SVM-auc (Joachims 2005)       ``loss="auc"``
    SVM-map (Yue et al. 2007)     ``loss="map"``
    SVM-ndcg                      ``loss="ndcg", loss_params={"k": 10}``
    SVM-ndcg-nc (no clip)         ``loss="ndcg-nc"``
    SVM-mrr                       ``loss="mrr"`` (phi_mrr; ``loss_params={"feature_map": "po"}`` for phi_po)
    DORM (Le & Smola 2008)        ``loss="ndcg", loss_params={"feature_map": "dorm"}`` (``"dorm_cut"``: sparse A)
    SVM-combo                     ``loss="combo", loss_params={"components": (...)}, slacks="separate"|"shared"``
    latent SVM-ndcg / SVM-mrr     ``loss="ndcg"`` or ``"mrr"``, ``target="latent"`` (CCCP)
    ============================  ===================================

    Parameters
    ----------
    loss : str, default "map"
        A hinge loss of the registry: ``structrank.losses.loss_names("hinge")`` lists them and
        docs/LOSSES.md gives each one's options and the metric it stands for (the table above names
        the papers' methods among them).
    loss_params : dict or None
        The loss's options (docs/LOSSES.md lists each loss's, with its defaults): ``k`` (the cut-off of
        NDCG@k and MRR@k), ``feature_map`` (None: the loss's own, phi_mrr for MRR and phi_po otherwise;
        "dorm" for DORM), ``components`` (SVM-combo's losses, ``"loss"`` or ``"loss/feature_map"``; by
        default MAP, NDCG@k and NDCG-nc with phi_po, MRR@k with phi_po: phi_mrr's unscaled counts would
        outweigh the others in a shared w), ``discount`` ("letor": 1 at ranks 1-2 then 1/log2(rank), as
        the paper and the LETOR scripts; "log2": 1/log2(rank + 1)), ``dorm_cut`` (DORM's sparse decay:
        A(r) = 0 from rank ``dorm_cut`` on), ``relevant_from`` (a label at least this is good) and
        ``gain``: NDCG's gain, binary relevance (the paper's) or graded, 2^label - 1 ("exp2"; with phi_po
        the pairs are then all pairs of different labels, see structrank.oracles.graded). The default
        "auto" takes graded gains for NDCG@k (phi_po or phi_dorm, ideal target) when the training labels
        have more than two levels, binary otherwise; the choice is ``gain_``. Why: on graded data the
        binary loss cannot tell a perfect document from a fair one, and the graded metric users report
        then suffers; the paper's binary loss stays ``gain="binary"`` (what the reproductions use). NDCG
        without cut-off, the other losses and the latent target see binary relevance whatever this says.
    C : float, default 1.0
        Weight of the average slack.
    slacks : {"separate", "shared"}, default "separate"
        SVM-combo: one slack per loss, or one slack for the most violated of them.
    target : {"auto", "ideal", "latent"}, default "auto"
        The correct structure each ranking is compared with. "ideal" (the paper): every good
        document above every bad one. "latent" (NDCG@k and MRR@k with binary gains): the best
        loss-zero ranking under the current w, imputed by CCCP (Yu & Joachims 2009;
        structrank.oracles.latent says why): on long lists with many good documents the paper's
        hinge is lowest at w = 0, and SVM-ndcg and SVM-mrr then learn next to nothing. "auto", one rule
        for every loss (docs/LOSSES.md): the paper's formulation first, the ideal target; when that fit
        stays at w = 0 (``health_.stayed_at_zero``) and the loss has a latent target, the latent target
        (NDCG@k with phi_po unless ``feature_map`` was given: phi_dorm, the map whose latent target moves
        off w = 0 where phi_po's stays). ``formulation_`` says which was fitted.
    max_outer : int, default 30
        ``target="latent"``: at most this many CCCP solves.
    outer_tol : float, default 1e-3
        ``target="latent"``: stop CCCP when the objective drops by less than this fraction.
    tol : float, default 1e-4
        Stop when no constraint is violated by more than ``tol`` beyond the slack (losses are
        in [0, 1]). Finer than SVM-struct's usual 1e-3: with phi_po, SVM-map and SVM-ndcg stay
        close to w = 0 (Figs. 4-6), so their whole progress is of the order of 1e-3; on MQ2008
        1e-4 still moved SVM-ndcg's test NDCG@10 and 1e-5 hardly did.
        0 runs all ``max_iter`` iterations (the benchmarks time a fixed number).
    max_iter : int, default 1000
        Cutting-plane iterations (oracle calls per loss).
    metric, convention : str or None, default None
        What ``score`` (and so GridSearchCV without ``scoring``) measures. None: the metric the
        loss stands for (its registered loss's ``metrics``): AUC, MAP, NDCG@k, NDCG, MRR@k, or for SVM-combo
        the mean of its components' metrics, under "auto" (the convention the labels allow:
        letor4 for 0-2, mslr up to 4; "trec" with the log2 discount), on labels binarised at
        ``relevant_from`` when the loss sees binary relevance. Set, the metric is measured on the
        labels as they are. A convention given here holds for either (``BaseRanker``'s rule).
    n_jobs : int or None, default None
        None: the oracles run in this process over all queries at once. An int (1, 2, ..., -1
        for all cores): the queries are cut into shards of about ``shard_rows`` rows whose
        oracle calls and feature sums run on that many threads of this process; inside
        ``joblib.parallel_backend("dask")`` they run on the dask cluster whatever ``n_jobs``
        is (structrank.parallel). The sharded model does not depend on the number of workers
        or the backend (same bits); it can differ from ``n_jobs=None``'s in the last bits.
    shard_rows : int, default 100000
        About how many rows one shard (one task per iteration) holds.
    k, feature_map, components, discount, dorm_cut, gain, relevant_from : deprecated
        The loss's options as separate parameters, as before ``loss_params``: given, each joins
        ``loss_params`` with a FutureWarning.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    loss_ : RankingLoss
        The loss the fit trained on, built once from ``loss`` and ``loss_params``.
    n_iter_ : int
    converged_ : bool
    n_constraints_ : int
    n_queries_used_ : int
        Training queries with both good and bad documents (the others cannot be violated).
    slack_ : float
        Sum over slack groups of the slack at the solution: the average slack over queries
        (Fig. 4), an upper bound on the training loss.
    objective_, zero_objective_ : float
        The primal objective at the solution and at w = 0 (Fig. 5).
    dual_history_ : ndarray
        The dual objective after each QP (``target="latent"``: of the last CCCP solve); it never
        decreases.
    n_outer_ : int
        CCCP solves (1 with ``target="ideal"``).
    oracle_seconds_, qp_seconds_ : float
        Time spent in loss-augmented inference and in the QP (Fig. 8).
    gain_ : {"binary", "exp2"}
        The NDCG gain the fit used (``gain="auto"`` resolved on the training labels).
    formulation_ : str
        What the fit trained: the target and feature map, and with ``target="auto"`` why (saved in the model file).
    health_ : OptimiserHealth
        How far the optimiser moved from w = 0 (Sec. 4.2): ``slack_`` against its value at w = 0,
        ``objective_ / zero_objective_``, ``|w|^2`` and the training scores' spread. A fit that stayed at
        w = 0 (``health_.stayed_at_zero``) warns in one line (``StayedAtZeroWarning``) naming the
        formulation that learns (with the ideal target, SVM-mrr and SVM-ndcg stay there on OHSUMED).

    Examples
    --------
    >>> from structrank.data import make_ranking_dataset
    >>> ds = make_ranking_dataset(n_queries=30, random_state=0)
    >>> model = StructSVMRanker(loss="map", C=10.0).fit(ds)
    >>> model.converged_, model.score(ds) > 0.5
    (True, True)
    """

    _saved_attributes = ("coef_", "n_features_in_", "formulation_")
    _text_attributes = ("formulation_",)

    #: parameters only some losses read (the model registry's per-model help lists them only there)
    _loss_parameters = {"slacks": ("combo",)}
    _loss_kind = HINGE
    _parameter_constraints = {**LOSS_PARAMETERS, "C": POSITIVE,
                              "slacks": [StrOptions({"separate", "shared"})],
                              "target": [StrOptions({"auto", "ideal", "latent"})], "max_outer": COUNT, "outer_tol": NON_NEGATIVE,
                              "tol": NON_NEGATIVE, "max_iter": COUNT, "metric": [*METRICS, None],
                              "convention": [*CONVENTION, None], "n_jobs": N_JOBS, "shard_rows": COUNT}

    def __init__(self, loss="map", loss_params=None, C=1.0, slacks="separate", target="auto", max_outer=30,
                 outer_tol=1e-3, tol=1e-4, max_iter=1000, metric=None, convention=None, n_jobs=None,
                 shard_rows=DEFAULT_SHARD_ROWS):
        self.loss = loss
        self.loss_params = loss_params
        self.C = C
        self.slacks = slacks
        self.target = target
        self.max_outer = max_outer
        self.outer_tol = outer_tol
        self.tol = tol
        self.max_iter = max_iter
        self.metric = metric
        self.convention = convention
        self.n_jobs = n_jobs
        self.shard_rows = shard_rows

    @property
    def _loss_target(self):
        return self.target

    def _objective_scoring(self):
        if self.metric is not None:
            return tuple(metric_list(self.metric)), None, None
        return self._trained_loss().scoring()

    def _loss_problems(self, loss) -> dict:
        """With the latent target: {"target": why} when ``loss`` has none, or is SVM-combo's separate slacks."""
        if self.target != "latent":
            return {}
        if len(self._losses(loss)) != 1:
            return {"target": "target='latent' takes one loss, not SVM-combo's separate slacks"}
        return built_problem("target", lambda: check_latent(loss))

    def _losses(self, loss):
        """The slack groups of ``loss``: itself, or SVM-combo's components with ``slacks="separate"``."""
        if self.slacks == "separate" and hasattr(loss, "components"):  # SVM-combo: one slack group per component
            return list(loss.components)
        return [loss]

    def fit(self, X, y=None, qid=None, *, group=None, sample_weight=None, eval_set=None, eval_group=None,
            eval_qid=None):
        """Fit on rows X with labels y grouped by qid, or by LightGBM's ``group`` (rows per query), or a
        RankingDataset, or a LetorCache, as X.

        A ``structrank.data.LetorCache`` (a memory-mapped LETOR file) is trained on shard by
        shard without loading it: memory is proportional to the model and one shard. An ``eval_set``
        (LightGBM's ``[(X, y)]`` with ``eval_group`` too) is scored into ``eval_score_``. ``sample_weight``
        must weigh every query alike (``WEIGHTS_REFUSED`` says why).
        """

        if self.target == "auto":
            return self._fit_auto(X, y, qid, group=group, sample_weight=sample_weight, eval_set=eval_set,
                                  eval_group=eval_group, eval_qid=eval_qid)
        self._start_fit()
        qid, eval_set = self._fit_call(X, qid, group, eval_set, eval_group, eval_qid)
        self._refuse_weights(sample_weight, X, qid, WEIGHTS_REFUSED)
        if serves_shards(X):
            self._fit_cache(X)
        else:
            # A CSR matrix that lists every column of every row (a LETOR file read as CSR) is taken as
            # the dense view of its values before the checks: one pass over its indices, not the range
            # check's and then dense_view's (each a visible share of a short fit: docs/BENCHMARKS.md,
            # "Memory and sparse input", times the same fit on dense and CSR rows)
            X, y, qid = unpack(X, y, qid)
            self._fit_arrays(*self._validate_fit_data(dense_view(X), y, qid))
        return self._finish_fit(eval_set)

    def _fit_auto(self, X, y, qid, **fit_args):
        """``target="auto"``: the ideal target; when that fit stays at w = 0 and the loss has a latent target, the
        latent target (NDCG@k: phi_dorm unless a feature map was given). The fitted attributes are the kept fit's."""
        params = self.get_params(deep=False)
        first = type(self)(**{**params, "target": "ideal"})
        with warnings.catch_warnings(record=True) as first_warnings:
            warnings.simplefilter("always")
            first.fit(X, y, qid, **fit_args)
        fallback = self._latent_fallback(first)
        chosen, why, said = first, ("the ideal target, the paper's: its fit did not stay at w = 0"
                                    if not first.health_.stayed_at_zero else
                                    "the ideal target, the loss's only formulation" if fallback is None else
                                    "the ideal target: the latent target does not train on sharded data"), first_warnings
        if first.health_.stayed_at_zero and fallback is not None and not serves_shards(X):
            with warnings.catch_warnings(record=True) as latent_warnings:
                warnings.simplefilter("always")
                chosen = type(self)(**{**params, **fallback, "target": "latent"}).fit(X, y, qid, **fit_args)
            why, said = "the ideal target's fit stayed at w = 0, so the latent target", latent_warnings
        for caught in said:  # the kept fit's warnings, once, at the caller's line
            warnings.warn(caught.message, caught.category, stacklevel=3)
        for key, value in vars(chosen).items():
            if key.endswith("_") and not key.startswith("_"):
                setattr(self, key, value)
        self.formulation_ = f"{chosen.formulation_} (target='auto': {why})"
        return self

    def _latent_fallback(self, fitted):
        """The parameters of the latent fit ``target="auto"`` falls back to, or None when the loss has no latent
        target (MAP, AUC, ...: the ideal fit is the only one)."""
        loss = fitted.loss_
        binary = dataclasses.replace(loss, gain="binary") if hasattr(loss, "gain") else loss
        if self.slacks == "separate" and hasattr(loss, "components") or not has_latent_target(binary):
            return None
        given = dict(self.loss_params or {})
        if self.loss == "ndcg" and given.get("feature_map") is None:
            return {"loss_params": {**given, "feature_map": "dorm"}}  # phi_po's latent target stays at w = 0 too
        return {}

    def _fit_arrays(self, X, y, qid, offsets):
        losses = self._losses(self._fit_loss(y))
        self._warn_if_loss_is_constant(self.loss_, offsets, 3)
        if self.target != "latent" and self.n_jobs is None and dask_client() is None:
            # only the informative queries can be violated; their rows are indexed, not copied
            y, offsets, rows = informative_rows(y, offsets, self.loss_.relevant_from)
            self.n_queries_used_ = int(offsets.size - 1)
            # X is already dense_view's (fit takes it before the checks)
            X = X if sp.issparse(X) else np.ascontiguousarray(X, dtype=np.float64)
            w, alpha, n_iter, converged, trace = cutting_plane(X, y, offsets, losses, self.C, self.tol, self.max_iter,
                                                               rows=rows)
            scores = matvec(X, w)
            return self._set_fitted(w, alpha, n_iter, converged, trace,
                                    query_ranges(scores if rows is None else scores[rows], offsets))
        X, y, offsets = informative_queries(X, y, offsets, self.loss_.relevant_from)  # only these can be violated
        self.n_queries_used_ = int(offsets.size - 1)
        if self.target == "latent":
            return self._fit_latent(X, y, offsets, losses)
        # shards hold the informative rows; float32 stays float32: their products accumulate in float64
        X = X.tocsr() if sp.issparse(X) else np.ascontiguousarray(X)
        with ShardedQueries({"X": X, "y": y}, offsets, self.shard_rows) as shards:
            step = sharded_oracle_step(shards, losses, self.n_jobs)
            w, alpha, n_iter, converged, trace = cutting_plane(X, y, offsets, losses, self.C, self.tol,
                                                               self.max_iter, step=step)
        return self._set_fitted(w, alpha, n_iter, converged, trace, query_ranges(matvec(X, w), offsets))

    def _fit_latent(self, X, y, offsets, losses):
        X = X.tocsr() if sp.issparse(X) else np.ascontiguousarray(X, dtype=np.float64)

        def impute(w, scores):
            return ImputedTarget.impute(losses[0], w, scores, y, offsets)

        result = cccp(X, y, offsets, impute, self.C, self.tol, self.max_iter, self.max_outer, self.outer_tol,
                      self.n_jobs, self.shard_rows)
        w = result.w
        self.health_, objective, zero = cccp_health(X, y, offsets, impute, w, self.C)
        self.coef_ = w
        self.n_iter_ = result.n_iter
        self.n_outer_ = result.n_outer
        self.converged_ = result.converged
        self.n_constraints_ = 0 if result.trace is None else len(result.trace.dual)
        self.slack_ = self.health_.slack
        self.objective_, self.zero_objective_ = objective, zero
        trace = result.trace or CuttingPlaneTrace()
        self.dual_history_ = np.array(trace.dual)
        self.oracle_seconds_, self.qp_seconds_, self.qp_steps_ = trace.oracle_seconds, trace.qp_seconds, trace.qp_steps
        self.formulation_ = self._fitted_formulation("latent")
        return self

    def _fit_cache(self, cache):
        if self.target != "ideal":
            raise ValueError("target='latent' does not train on a LetorCache yet: read the file with read_letor")
        losses = self._losses(self._fit_loss(cache.y))
        offsets = np.asarray(cache.offsets, dtype=np.int64)
        self._warn_if_loss_is_constant(self.loss_, offsets, 3)
        y = np.asarray(cache.y)
        # Queries without both a good and a bad document add exact zeros to every sum (their
        # loss and feature difference are 0); only the average counts the informative ones.
        self.n_queries_used_ = int(queries_with_both(y, offsets, self.loss_.relevant_from).size)
        if self.n_queries_used_ == 0:
            raise DataValidationError(f"{cache.source}: no query has both a good and a bad document: nothing to learn "
                                      "from")
        self.n_features_in_ = cache.n_features
        shards = ShardedQueries.from_cache(cache, self.shard_rows)
        step = sharded_oracle_step(shards, losses, self.n_jobs, self.n_queries_used_)
        fitted = cutting_plane(cache.X, y, offsets, losses, self.C, self.tol, self.max_iter, step=step)
        ranges = [np.max(r, initial=0.0) for r in shards.map(_shard_ranges, fitted[0], n_jobs=self.n_jobs)]
        return self._set_fitted(*fitted, np.array(ranges))

    def _set_fitted(self, w, alpha, n_iter, converged, trace, ranges):
        """The fitted attributes of a cutting-plane run (``ranges``: the training scores' spread in each query)."""
        self.coef_ = w
        self.n_iter_ = n_iter
        self.converged_ = converged
        self.n_constraints_ = int(alpha.size)
        final = np.maximum(np.array(trace.violation[-1]), 0.0)
        self.slack_ = float(final.sum())
        self.objective_ = float(trace.primal[-1])
        self.zero_objective_ = float(trace.primal[0])
        self.dual_history_ = np.array(trace.dual)
        self.oracle_seconds_ = trace.oracle_seconds
        self.qp_seconds_ = trace.qp_seconds
        self.qp_steps_ = trace.qp_steps
        self.n_outer_ = 1
        # the first oracle call is at w = 0 (cutting_plane starts there): its violations are the slack at w = 0
        self.health_ = optimiser_health(w, self.slack_, np.maximum(np.array(trace.violation[0]), 0.0).sum(), self.C,
                                        ranges, None)
        self.formulation_ = self._fitted_formulation("ideal")
        return self

    def fitted_target(self) -> str:
        """"ideal" or "latent": the target the fit trained (target="auto" chooses one, ``formulation_`` says which)."""
        if self.target != "auto":
            return self.target
        return "latent" if ", latent target" in self.formulation_.split(" (target='auto'")[0] else "ideal"

    def _check_loaded(self):
        """A loaded model's ``formulation_`` is one that a fit of its loss writes (a doctored file is refused)."""
        text = getattr(self, "formulation_", None)
        if text is None:  # a file saved before formulation_ was kept
            return
        written = rf"{re.escape(self.loss)} with [^,]+, (ideal|latent) target( \(target='auto': [^()]*\))?"
        if not re.fullmatch(written, str(text)):
            raise DataFormatError(None, None, f"formulation_ {str(text)[:80]!r} is not one a fit of loss {self.loss!r} "
                                  "writes ('<loss> with <map>, ideal|latent target')", "formulation_")

    def _fitted_formulation(self, target) -> str:
        """The loss, its feature map and the target a fit trained (``formulation_``)."""
        feature_map = getattr(self.loss_, "feature_map", None)
        return f"{self.loss} with {feature_map or 'its map'}, {target} target"

    def _formulation(self):
        given = self.loss_params or {}
        chosen = {k: v for k, v in given.items() if k in ("feature_map", "dorm_cut") and v is not None}
        options = f", loss_params={chosen!r}" if chosen else ""  # the options that choose the formulation, when set
        return f"{type(self).__name__}(loss={self.loss!r}{options}, target={self.target!r}, C={self.C:g})"

    def _zero_advice(self):
        if self.loss == "ndcg" and (self.loss_params or {}).get("feature_map") in (None, "po"):
            # phi_po stays there with either target
            return ("with phi_po the NDCG@k hinge gives the optimiser no signal on lists this long (it is lowest at w = 0, "
                    "with either target); loss_params={'feature_map': 'dorm'} with target='latent' (svm-ndcg) learns on "
                    "such lists")
        loss = self._trained_loss()
        binary = dataclasses.replace(loss, gain="binary") if hasattr(loss, "gain") else loss  # the latent target's
        if self.target == "ideal" and has_latent_target(binary):
            name = "svm-mrr" if self.loss == "mrr" else "dorm"
            return ("with the ideal target (every good document above every bad one) the loss gives the optimiser no "
                    f"signal on lists this long (its hinge is lowest at w = 0); target='latent' ({name}) learns on such "
                    "lists")
        return super()._zero_advice()
