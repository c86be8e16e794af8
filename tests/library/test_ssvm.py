"""The cutting-plane structural SVM: its QP, its convergence, and what it learns."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize
from sklearn.base import clone

from structrank.data import make_ranking_dataset
from structrank.errors import DataValidationError
from structrank.learners import RankSVM
from structrank.learners.qp import dual_objective, solve_dual
from structrank.learners.ssvm import StructSVMRanker
from structrank.metrics import evaluate
from structrank.model_io import load_model, save_model


def kkt_violation(H, b, group, C, alpha):
    """Largest violation of the KKT conditions of max b.a - a'Ha/2, a >= 0, sum_group a <= C."""
    grad = b - H @ alpha  # gradient of the maximised objective
    worst = 0.0
    for l in np.unique(group):
        idx = group == l
        full = alpha[idx].sum() >= C * (1 - 1e-9)
        mu = max(0.0, grad[idx][alpha[idx] > 0].max()) if (alpha[idx] > 0).any() and full else 0.0
        # free variables: grad = mu; zero ones: grad <= mu; mu > 0 only when the sum is at C
        worst = max(worst, np.max(grad[idx] - mu), np.max(np.abs(grad[idx][alpha[idx] > 0] - mu), initial=0.0))
    return worst


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 12), st.integers(1, 6), st.sampled_from([0.01, 1.0, 100.0]), st.integers(0, 2**31 - 1),
       st.integers(1, 3))
def test_qp_solution_is_optimal(m, d, C, seed, n_groups):
    rng = np.random.default_rng(seed)
    G = rng.normal(size=(m, d)) * rng.choice([1e-3, 1.0], size=(m, 1))
    if m > 2:
        G[-1] = G[0] * 0.999  # near-parallel constraints, as cutting planes produce
    H = G @ G.T
    b = rng.uniform(0, 1, size=m)
    group = rng.integers(0, n_groups, size=m)
    alpha = np.zeros(m)
    solve_dual(H, b, group, n_groups, C, alpha, 1e-12, 10**7)
    assert np.all(alpha >= 0)
    for l in range(n_groups):
        assert alpha[group == l].sum() <= C * (1 + 1e-12)
    assert kkt_violation(H, b, group, C, alpha) < 1e-8 * max(1.0, C)
    # and no general-purpose solver finds a better point
    cons = [{"type": "ineq", "fun": (lambda a, l=l: C - a[group == l].sum())} for l in range(n_groups)]
    ref = minimize(lambda a: -dual_objective(H, b, a), np.full(m, 0.0), bounds=[(0, None)] * m,
                   constraints=cons, method="SLSQP", options={"ftol": 1e-14, "maxiter": 1000})
    # SLSQP sometimes fails on these ill-conditioned H and returns an infeasible point: the
    # KKT check above is the proof of optimality, the reference only a second opinion.
    if ref.success:
        assert dual_objective(H, b, alpha) >= -ref.fun - 1e-9 * max(1.0, abs(ref.fun))


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 60), st.integers(1, 10), st.sampled_from([0.01, 1.0, 100.0, 1e4]), st.integers(0, 2**31 - 1),
       st.integers(1, 3))
@example(40, 1, 1e4, 667928, 3)  # the multi-group stall hypothesis found
def test_active_set_solves_the_dual_alone(m, d, C, seed, n_groups):
    """With one slack group the active-set method reaches the optimum by itself (SMO, run after
    it in the cutting plane, then has at most a rounding-level polish left), rank-deficient H
    included. With several (SVM-combo's separate slacks) it can stall on a degenerate face (found:
    d = 1, C = 1e4, 3 groups); it then leaves a feasible point, and SMO finishes the solve."""
    from structrank.learners.qp import active_set_dual

    rng = np.random.default_rng(seed)
    G = rng.normal(size=(m, d)) * rng.choice([1e-3, 1.0], size=(m, 1))
    if m > 2:
        G[-1] = G[0] * 0.999
    H, b, group = G @ G.T, rng.uniform(0, 1, size=m), rng.integers(0, n_groups, size=m)
    tol = 1e-12 * max(1.0, C * np.abs(H).max())
    alpha = np.zeros(m)
    finished = active_set_dual(H, b, group, n_groups, C, alpha, tol, 10 * m + 50) >= 0
    assert finished or n_groups > 1  # one group: finished, not stalled
    assert np.all(alpha >= 0)  # feasible either way
    for l in range(n_groups):
        assert alpha[group == l].sum() <= C * (1 + 1e-12)
    steps, _ = solve_dual(H, b, group, n_groups, C, alpha, tol, 10**7)
    assert kkt_violation(H, b, group, C, alpha) < 1e-8 * max(1.0, C)
    smo = np.zeros(m)
    solve_dual(H, b, group, n_groups, C, smo, tol, 10**7)
    assert dual_objective(H, b, alpha) >= dual_objective(H, b, smo) - 1e-9 * max(1.0, abs(dual_objective(H, b, smo)))
    if finished:
        assert steps <= 5


def test_qp_warm_start_keeps_the_optimum():
    rng = np.random.default_rng(1)
    G = rng.normal(size=(8, 4))
    H, b, group = G @ G.T, rng.uniform(size=8), np.zeros(8, dtype=np.int64)
    cold = np.zeros(8)
    solve_dual(H, b, group, 1, 5.0, cold, 1e-12, 10**6)
    warm = cold.copy()
    steps, _ = solve_dual(H, b, group, 1, 5.0, warm, 1e-12, 10**6)
    assert steps <= 2  # at most a rounding-level polish
    np.testing.assert_allclose(warm, cold, atol=1e-9)


@pytest.fixture(scope="module")
def split():
    ds = make_ranking_dataset(n_queries=60, docs_per_query=15, n_features=8, random_state=4)
    return ds.take_queries(np.arange(40)), ds.take_queries(np.arange(40, 60))


@pytest.mark.parametrize("params", [
    {"loss": "auc"}, {"loss": "map"}, {"loss": "ndcg"}, {"loss": "ndcg-nc"}, {"loss": "mrr"},
    {"loss": "mrr", "loss_params": {"feature_map": "po"}}, {"loss": "ndcg", "loss_params": {"feature_map": "dorm", "dorm_cut": 5}},
    {"loss": "ndcg", "loss_params": {"gain": "exp2"}}, {"loss": "combo", "slacks": "separate"}, {"loss": "combo", "slacks": "shared"},
])
def test_cutting_plane_converges_with_rising_dual(split, params):
    train, test = split
    C = 0.1 if params.get("feature_map") == "mrr" or params["loss"] == "mrr" else 10.0
    model = StructSVMRanker(C=C, tol=1e-4, **params).fit(train)
    assert model.converged_
    dual = model.dual_history_
    assert np.all(np.diff(dual) >= -1e-10 * max(1.0, abs(dual).max()))
    # weak duality: the primal objective at the solution is at least the final dual
    assert model.objective_ >= dual[-1] - 1e-9
    # converged within tol: primal - dual gap is at most C * tol per slack group
    groups = 4 if params == {"loss": "combo", "slacks": "separate"} else 1
    assert model.objective_ - dual[-1] <= C * 1e-4 * groups + 1e-9
    learned = evaluate(test.y, model.predict(test.X), test.qid, ["ndcg@10"]).metrics["ndcg@10"]
    random = evaluate(test.y, np.random.default_rng(0).normal(size=test.n_rows), test.qid, ["ndcg@10"]).metrics["ndcg@10"]
    assert learned > random + 0.1


def test_svm_auc_agrees_with_ranksvm_up_to_scale():
    """One query, binary labels: SVM-auc with phi_po is RankSVM with C' = 4C/(n+ n-) and w' = 2w.

    max_r [Delta_auc - w . dPsi] = sum_pairs max(0, 1 - 2 w.(x_g - x_b)) / (n+ n-), so with v = 2w
    the objective times 4 is 1/2 |v|^2 + 4C/(n+ n-) sum_pairs hinge(v . (x_g - x_b)).
    """
    rng = np.random.default_rng(7)
    n, d = 30, 5
    X = rng.normal(size=(n, d))
    y = (X @ rng.normal(size=d) + rng.normal(size=n) > 0).astype(int)
    qid = np.zeros(n, dtype=int)
    C = 2.0
    ssvm = StructSVMRanker(loss="auc", C=C, tol=1e-7, max_iter=5000).fit(X, y, qid=qid)
    pairs = y.sum() * (n - y.sum())
    rank = RankSVM(C=4 * C / pairs, tol=1e-10, max_iter=10**6).fit(X, y, qid=qid)
    np.testing.assert_allclose(rank.coef_, 2 * ssvm.coef_, rtol=1e-3, atol=1e-4)


def test_estimator_contract_and_model_file(split, tmp_path):
    train, test = split
    model = StructSVMRanker(loss="ndcg", C=1.0, loss_params={"k": 5})
    assert clone(model).get_params() == model.get_params()
    model.fit(train.X, train.y, qid=train.qid)
    path = tmp_path / "svm-ndcg.npz"
    save_model(model, path)
    loaded = load_model(path)
    np.testing.assert_array_equal(loaded.predict(test.X), model.predict(test.X))
    assert loaded.get_params() == model.get_params()


def test_clear_errors():
    X, y = np.zeros((4, 2)), np.array([0, 0, 0, 0])
    with pytest.raises(ValueError, match="both a good and a bad"):
        StructSVMRanker().fit(X, y, qid=[1, 1, 2, 2])
    with pytest.raises(DataValidationError, match="qid"):
        StructSVMRanker().fit(X, y)
    with pytest.raises(ValueError, match=r"C must be a float in the range \(0.0, inf\), got 0"):
        StructSVMRanker(C=0).fit(X, [0, 1, 0, 1], qid=[1, 1, 2, 2])
    with pytest.raises(ValueError, match="unknown loss"):
        StructSVMRanker(loss="p@5").fit(X, [0, 1, 0, 1], qid=[1, 1, 2, 2])


def test_queries_without_both_kinds_are_left_out(split):
    train, _ = split
    model = StructSVMRanker(loss="map", C=1.0).fit(train)
    informative = sum(0 < (train.y[a:b] >= 1).sum() < b - a for a, b in zip(train.offsets[:-1], train.offsets[1:]))
    assert model.n_queries_used_ == informative


def test_stopping_at_max_iter_reports_the_final_model(split):
    train, _ = split
    model = StructSVMRanker(loss="map", C=100.0, tol=1e-6, max_iter=3).fit(train)
    assert model.n_iter_ == 3 and not model.converged_ and model.n_constraints_ == 3
    # the reported objective is the one of the returned weights
    from structrank.losses import get_loss

    scores = train.X @ model.coef_
    loss = get_loss("map")
    c_hat, delta = loss.batch(scores, train.y, train.offsets)
    keep = [q for q in range(train.n_queries) if 0 < (train.y[train.offsets[q]:train.offsets[q + 1]] >= 1).sum()
            < train.offsets[q + 1] - train.offsets[q]]
    rows = np.concatenate([np.arange(train.offsets[q], train.offsets[q + 1]) for q in keep])
    diff = (loss.star(scores, train.y, train.offsets) - c_hat)[rows]
    violation = delta[keep].mean() - scores[rows] @ diff / len(keep)
    assert model.objective_ == pytest.approx(0.5 * model.coef_ @ model.coef_ + 100.0 * max(violation, 0.0))


@pytest.mark.parametrize("params,metrics,convention", [
    ({"loss": "auc"}, ["auc"], "letor4"), ({"loss": "map"}, ["map"], "letor4"),
    ({"loss": "ndcg", "loss_params": {"k": 5, "gain": "binary"}}, ["ndcg@5"], "letor4"), ({"loss": "ndcg-nc"}, ["ndcg"], "letor4"),
    ({"loss": "mrr", "loss_params": {"k": 3}}, ["mrr@3"], "letor4"),
    ({"loss": "ndcg", "loss_params": {"discount": "log2", "gain": "binary"}}, ["ndcg@10"], "trec"),
    ({"loss": "combo", "loss_params": {"components": ("map", "mrr/po")}}, ["map", "mrr@10"], "letor4"),
])
def test_score_is_the_metric_the_loss_stands_for(split, params, metrics, convention):
    """score() is the loss's own metric on binary relevance (the mean of SVM-combo's components'),
    so GridSearchCV without ``scoring`` tunes it; ``metric``/``convention`` override it."""
    train, test = split
    model = StructSVMRanker(C=1.0, **params).fit(train)
    binary = (test.y >= 1).astype(int)
    expected = evaluate(binary, model.predict(test.X), test.qid, metrics, convention, docids=test.docids).metrics
    assert model.score(test) == pytest.approx(np.mean(list(expected.values())), abs=1e-12)
    other = clone(model).set_params(metric="p@3", convention="letor3").fit(train)
    assert other.score(test) == pytest.approx(
        evaluate(test.y, other.predict(test.X), test.qid, ["p@3"], "letor3").metrics["p@3"], abs=1e-12)


def test_graded_ndcg_is_scored_on_graded_labels(split):
    train, test = split
    assert set(np.unique(test.y)) - {0, 1}  # the synthetic labels are graded
    model = StructSVMRanker(loss="ndcg", loss_params={"gain": "exp2"}).fit(train)
    expected = evaluate(test.y, model.predict(test.X), test.qid, ["ndcg@10"], "mslr").metrics["ndcg@10"]
    assert model.score(test) == pytest.approx(expected, abs=1e-12)


def test_grid_search_without_scoring_tunes_the_loss_metric(split):
    import sklearn
    from sklearn.model_selection import GridSearchCV

    from structrank.model_selection import QueryKFold

    train, _ = split
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(StructSVMRanker(loss="mrr", loss_params={"k": 3}), {"C": [0.01, 1.0]}, cv=QueryKFold(3)).fit(
            train.X, train.y, qid=train.qid)
    folds = QueryKFold(3).split(train.X, train.y, groups=train.qid)
    by_hand = []
    for train_rows, test_rows in folds:
        model = StructSVMRanker(loss="mrr", C=search.best_params_["C"], loss_params={"k": 3}).fit(
            train.X[train_rows], train.y[train_rows], qid=train.qid[train_rows])
        binary = (train.y[test_rows] >= 1).astype(int)
        by_hand.append(evaluate(binary, model.predict(train.X[test_rows]), train.qid[test_rows], ["mrr@3"],
                                "letor4").metrics["mrr@3"])
    assert search.best_score_ == pytest.approx(np.mean(by_hand), abs=1e-12)


def test_auto_gain_is_graded_for_ndcg_on_graded_labels_and_binary_otherwise(split):
    """gain="auto" (the default): graded gains for NDCG@k when the training labels have more than
    two levels (the same model as gain="exp2"), binary relevance for two levels, for the latent
    target and for the losses without a graded oracle; the choice is gain_."""
    train, _ = split
    assert np.unique(train.y).size > 2
    auto = StructSVMRanker(loss="ndcg").fit(train)
    assert auto.gain_ == "exp2"
    np.testing.assert_array_equal(auto.coef_, StructSVMRanker(loss="ndcg", loss_params={"gain": "exp2"}).fit(train).coef_)
    binary_labels = (train.y >= 1).astype(int)
    two = StructSVMRanker(loss="ndcg").fit(train.X, binary_labels, qid=train.qid)
    assert two.gain_ == "binary"
    np.testing.assert_array_equal(two.coef_, StructSVMRanker(loss="ndcg", loss_params={"gain": "binary"}).fit(
        train.X, binary_labels, qid=train.qid).coef_)
    for params in ({"loss": "ndcg", "target": "latent"}, {"loss": "ndcg-nc"}, {"loss": "map"}, {"loss": "mrr"},
                   {"loss": "ndcg", "loss_params": {"gain": "binary"}}):
        assert StructSVMRanker(max_iter=3, **params).fit(train).gain_ == "binary", params
    with pytest.raises(ValueError, match="gain"):
        StructSVMRanker(loss="ndcg", loss_params={"gain": "graded"}).fit(train)


def test_reproductions_keep_the_papers_binary_gain():
    from structrank_lab.experiments.runner import paper_model
    from structrank.learners.registry import get_model

    assert "gain" not in (get_model("svm-ndcg").make().loss_params or {})  # "auto", the loss's default
    assert paper_model("svm-ndcg").make().loss_params == {"gain": "binary"}  # target "auto": phi_po, the paper's
    # a row's own choice wins (dorm-ideal: the latent target of dorm takes binary gains only, and says so at make)
    assert paper_model("dorm-ideal").make(loss_params={"gain": "exp2"}).loss_params["gain"] == "exp2"
    assert "loss_params" not in paper_model("lssvm-ap").defaults
    assert "loss_params" not in paper_model("svm-map").defaults  # 1 - AP has no gain
