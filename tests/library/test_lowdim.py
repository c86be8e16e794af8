"""Low-dimensional rerankers (Jagarlamudi & Daumé III 2012): structrank.learners.lowdim."""

from functools import lru_cache

import numpy as np
import pytest
import scipy.linalg as sl
import scipy.sparse as sp
from sklearn.cross_decomposition import CCA

from structrank.data.nbest import NBestData
from structrank.learners.lowdim import ListViews, LowDimReranker, first_argmax, multiplier_step, weighted_gram

# ------------------------------------------------------------------------------------------
# Synthetic data
# ------------------------------------------------------------------------------------------


@lru_cache(maxsize=None)
def tagged(n_lists, seed, n_tags=5, d1=200, n_cand=8, with_gold=True, with_size=True):
    """Tagging-like n-best lists with a planted input/output relation.

    Each token has a tag; its three input features ("suffixes") come from a tag-specific block
    of the input vocabulary with probability 0.7 (else uniformly). The output view is the bag of
    tag unigrams and bigrams. A candidate changes e random tags (loss e); the base score is
    -0.3 e plus unit noise, so the base model often prefers a wrong candidate, while the input
    view tells which tags are plausible.
    """
    rng = np.random.default_rng(seed)
    T = n_tags
    d2 = T + T * T
    block = d1 // T

    def bag(tags):
        return np.bincount(np.concatenate([tags, T + tags[:-1] * T + tags[1:]]), minlength=d2).astype(float)

    xs, ys, losses, base, qid, gold, sizes = [], [], [], [], [], [], []
    for i in range(n_lists):
        L = int(rng.integers(4, 9))
        tags = rng.integers(0, T, L)
        own = rng.random((L, 3)) < 0.7
        suffixes = np.where(own, tags[:, None] * block + rng.integers(0, block, (L, 3)), rng.integers(0, d1, (L, 3)))
        x = np.bincount(suffixes.ravel(), minlength=d1).astype(float)
        errors = rng.integers(0, 4, n_cand)
        errors[rng.integers(n_cand)] = 0
        score = -0.3 * errors + rng.normal(size=n_cand)
        for j in np.argsort(-score):  # the base model's order, best first
            cand = tags.copy()
            where = rng.choice(L, min(errors[j], L), replace=False)
            cand[where] = (cand[where] + rng.integers(1, T, where.size)) % T
            xs.append(x)
            ys.append(bag(cand))
            losses.append(float((cand != tags).sum()))
            base.append(score[j])
            qid.append(i)
        gold.append(bag(tags))
        sizes.append(L)
    return NBestData(sp.csr_matrix(np.array(xs)), sp.csr_matrix(np.array(ys)), np.array(losses), np.array(base),
                     np.array(qid), gold_y=sp.csr_matrix(np.array(gold)) if with_gold else None,
                     size=np.array(sizes) if with_size else None)


def dense_pairs(n=400, d1=5, d2=4, rank=2, seed=0, y_rank=None):
    """Centered dense views with a planted rank-``rank`` relation, as n-best lists of two
    candidates (the reference and a perturbed copy)."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, rank))
    X = z @ rng.normal(size=(rank, d1)) + rng.normal(size=(n, d1))
    if y_rank is None:
        Y = z @ rng.normal(size=(rank, d2)) + rng.normal(size=(n, d2))
    else:  # Y confined to a y_rank-dimensional subspace
        Y = (z @ rng.normal(size=(rank, y_rank)) + rng.normal(size=(n, y_rank))) @ rng.normal(size=(y_rank, d2))
    X -= X.mean(axis=0)
    Y -= Y.mean(axis=0)
    cand = np.empty((2 * n, d2))
    cand[0::2] = Y
    cand[1::2] = Y + rng.normal(size=(n, d2))
    data = NBestData(np.repeat(X, 2, axis=0), cand, np.tile([0.0, 1.0], n), np.tile([0.0, -1.0], n),
                     np.repeat(np.arange(n), 2), gold_y=Y)
    return data, X, Y


def inv_sqrt(C):
    w, V = np.linalg.eigh(C)
    return V @ np.diag(w ** -0.5) @ V.T


def residuals(data, weights):
    """R of Eq. 9 written out list by list: row i = (1/m_i) sum_j w_ij (y_i - yhat_ij)."""
    Y = data.gold_y.toarray()
    Yhat = data.y.toarray()
    R = np.zeros_like(Y)
    for i, (a, b) in enumerate(zip(data.offsets[:-1], data.offsets[1:])):
        for j in range(a, b):
            R[i] += weights[j] * (Y[i] - Yhat[j]) / (b - a)
    return R


def direct_solution(X, M, Y, tau, k, diagonal=False):
    """Top-k of the full (d1 + d2) generalized eigenproblem of Eq. 11 with C_xy = X^T M."""
    d1, d2 = X.shape[1], M.shape[1]
    Cxx = (1 - tau) * X.T @ X + tau * np.eye(d1)
    Cyy = (1 - tau) * Y.T @ Y + tau * np.eye(d2)
    if diagonal:
        Cxx, Cyy = np.diag(np.diag(Cxx)), np.diag(np.diag(Cyy))
    Cxy = X.T @ M
    lhs = np.block([[np.zeros((d1, d1)), Cxy], [Cxy.T, np.zeros((d2, d2))]])
    rhs = sl.block_diag(Cxx, Cyy)
    rho, V = sl.eigh(lhs, rhs)
    top = np.argsort(rho)[::-1][:k]
    # eigh normalizes v^T rhs v = 1, i.e. a^T Cxx a = b^T Cyy b = 1/2 at a solution
    return rho[top], np.sqrt(2) * V[:d1, top], np.sqrt(2) * V[d1:, top], Cxx, Cyy


def assert_same_pairs(A, B, A_ref, B_ref, atol=1e-6):
    """Columns equal up to one sign per pair (a, b)."""
    for c in range(A.shape[1]):
        s = np.sign(B[:, c] @ B_ref[:, c])
        np.testing.assert_allclose(A[:, c], s * A_ref[:, c], atol=atol)
        np.testing.assert_allclose(B[:, c], s * B_ref[:, c], atol=atol)


# ------------------------------------------------------------------------------------------
# The generative model is CCA
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("tau", [0.0, 1e-9])
def test_generative_is_cca(tau):
    data, X, Y = dense_pairs()
    model = LowDimReranker(model="generative", k=2, tau=tau, covariance="full", weights=[0]).fit(data)
    assert model.covariance_["x"] == "primal"
    # Independent CCA: whitening + SVD.
    Wx, Wy = inv_sqrt(X.T @ X), inv_sqrt(Y.T @ Y)
    U, s, Vt = np.linalg.svd(Wx @ X.T @ Y @ Wy)
    a, b = Wx @ U[:, 0], Wy @ Vt[0]
    np.testing.assert_allclose(np.sqrt(model.eigenvalues_), s[:2], rtol=1e-7)
    cos = lambda u, v: abs(u @ v) / np.linalg.norm(u) / np.linalg.norm(v)  # noqa: E731
    assert cos(model.A_[:, 0], a) == pytest.approx(1.0, abs=1e-9)
    assert cos(model.B_[:, 0], b) == pytest.approx(1.0, abs=1e-9)
    # Length constraints of Eq. 4 (tau -> 0) hold for the returned directions.
    np.testing.assert_allclose(model.A_.T @ X.T @ X @ model.A_, np.eye(2), atol=1e-6)
    np.testing.assert_allclose(model.B_.T @ Y.T @ Y @ model.B_, np.eye(2), atol=1e-6)
    # And scikit-learn's CCA (NIPALS) finds the same first pair.
    cca = CCA(n_components=1, scale=False, max_iter=5000, tol=1e-12).fit(X, Y)
    xs, ys = cca.transform(X, Y)
    assert np.corrcoef(xs[:, 0], ys[:, 0])[0, 1] == pytest.approx(s[0], abs=1e-6)
    assert abs(np.corrcoef(xs[:, 0], X @ model.A_[:, 0])[0, 1]) == pytest.approx(1.0, abs=1e-6)
    assert abs(np.corrcoef(ys[:, 0], Y @ model.B_[:, 0])[0, 1]) == pytest.approx(1.0, abs=1e-6)


# ------------------------------------------------------------------------------------------
# The smaller eigenproblem (Eqs. 14-15) against the direct one (Eq. 11)
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("covariance, n_lists, expected_x", [
    ("full", 120, "primal"),       # d1 = 40 <= 120 lists: C_xx factored directly
    ("full", 30, "dual"),          # d1 = 40 > 30 lists: push-through identity, 30 x 30 factorization
    ("diagonal", 120, "diagonal"),
])
@pytest.mark.parametrize("model", ["generative", "softened"])
def test_small_eigenproblem_matches_direct(model, covariance, n_lists, expected_x):
    data = tagged(n_lists, seed=3, n_tags=4, d1=40, n_cand=4)
    tau, lam, k = 0.3, 0.4, 3
    fitted = LowDimReranker(model=model, k=k, tau=tau, lam=lam, covariance=covariance, weights=[0]).fit(data)
    assert fitted.covariance_["x"] == expected_x
    X = data.x.toarray()[data.offsets[:-1]]
    Y = data.gold_y.toarray()
    M = Y if model == "generative" else (1 - lam) * Y + lam * residuals(data, data.loss)
    rho, A, B, Cxx, Cyy = direct_solution(X, M, Y, tau, k, diagonal=covariance == "diagonal")
    np.testing.assert_allclose(fitted.eigenvalues_, rho ** 2, rtol=1e-8)
    assert_same_pairs(fitted.A_, fitted.B_, A, B)
    np.testing.assert_allclose(fitted.A_.T @ Cxx @ fitted.A_, np.eye(k), atol=1e-8)
    np.testing.assert_allclose(fitted.B_.T @ Cyy @ fitted.B_, np.eye(k), atol=1e-8)


def test_matrix_free_solver_matches_dense():
    """Beyond max_dense output features, Eq. 14 is solved by Lanczos without forming K."""
    data = tagged(150, seed=4, n_tags=4, d1=40, n_cand=4)
    params = dict(model="softened", k=3, tau=0.3, lam=0.4, covariance="diagonal", weights=[0])
    dense = LowDimReranker(**params).fit(data)
    lanczos = LowDimReranker(**params, max_dense=5).fit(data)
    assert dense.covariance_["eigensolver"] == "eigh" and lanczos.covariance_["eigensolver"] == "eigsh"
    np.testing.assert_allclose(lanczos.eigenvalues_, dense.eigenvalues_, rtol=1e-8)
    assert_same_pairs(lanczos.A_, lanczos.B_, dense.A_, dense.B_)


def test_auto_covariance_falls_back_to_diagonal():
    data = tagged(30, seed=5, n_tags=4, d1=40, n_cand=3)  # 30 lists < 40 input features
    assert LowDimReranker(k=2, weights=[0]).fit(data).covariance_["x"] == "dual"
    assert LowDimReranker(k=2, weights=[0], max_dense=20).fit(data).covariance_ == \
        {"x": "diagonal", "y": "primal", "eigensolver": "eigh"}


# ------------------------------------------------------------------------------------------
# Alg. 1
# ------------------------------------------------------------------------------------------


def test_discriminative_starts_from_softened():
    data = tagged(200, seed=6)
    params = dict(k=4, tau=0.5, lam=0.3, weights=[0])
    soft = LowDimReranker(model="softened", **params).fit(data)
    disc = LowDimReranker(model="discriminative", n_iter=5, **params).fit(data)
    np.testing.assert_allclose(disc.init_A_, soft.A_, atol=1e-10)
    np.testing.assert_allclose(disc.init_B_, soft.B_, atol=1e-10)
    np.testing.assert_allclose(disc.history_[0]["eigenvalues"], soft.eigenvalues_)
    # The multipliers moved away from the losses and the projections with them.
    assert len(disc.history_) in range(2, 6)
    assert not np.allclose(disc.alpha_, data.loss)
    assert not np.allclose(disc.A_, soft.A_)
    # One iteration, or a zero step, is the softened model.
    one = LowDimReranker(model="discriminative", n_iter=1, **params).fit(data)
    still = LowDimReranker(model="discriminative", step=0.0, **params).fit(data)
    for other in (one, still):
        np.testing.assert_allclose(other.A_, soft.A_, atol=1e-10)
        np.testing.assert_allclose(other.B_, soft.B_, atol=1e-10)


def test_multiplier_step_by_hand():
    """One list, x = e1, A = B = e1, reference y = e1; candidates' margins 0, 0.5, 0.2."""
    views = ListViews(X=sp.csr_matrix([[1.0, 0.0]]), Y=sp.csr_matrix([[1.0, 0.0]]),
                      Yhat=sp.csr_matrix([[1.0, 0.0], [0.5, 0.0], [0.8, 0.0]]),
                      loss=np.array([0.0, 1.0, 2.0]), owner=np.zeros(3, dtype=np.int64),
                      offsets=np.array([0, 3]))
    e1 = np.array([[1.0], [0.0]])
    alpha, slack, _ = multiplier_step(views, e1, e1, views.loss, lam=0.3, step=2.0)
    # psi = (1 - margin) L = 0, 0.5, 1.6: the slack is the smallest positive one, 0.5
    np.testing.assert_allclose(slack, [0.5])
    # d = margin - (1 - xi / L): candidate 2 has d = 0, candidate 3 d = 0.2 - 0.75; L = 0 is left alone
    np.testing.assert_allclose(alpha, [0.0, 1.0, 2.0 + 2.0 * 0.55])
    # Constraints all satisfied: no slack, no update.
    views_ok = ListViews(views.X, views.Y, sp.csr_matrix([[1.0, 0.0], [-0.5, 0.0], [-1.5, 0.0]]),
                         views.loss, views.owner, views.offsets)
    alpha, slack, _ = multiplier_step(views_ok, e1, e1, views.loss, lam=0.3, step=2.0)
    np.testing.assert_allclose(slack, [0.0])
    np.testing.assert_allclose(alpha, views.loss)


# ------------------------------------------------------------------------------------------
# Reranking
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("model", ["generative", "softened", "discriminative"])
def test_rerankers_beat_the_base_model(model):
    train, dev, test = tagged(500, seed=10), tagged(250, seed=11), tagged(250, seed=12)
    fitted = LowDimReranker(model=model, k=5, tau=0.95, lam=0.3).fit(train, eval_set=dev)
    base = test.accuracy_of(test.base_score)
    assert test.accuracy_of(fitted.predict(test)) > base + 0.01  # 0.02-0.05 on these seeds
    assert test.oracle_accuracy() >= test.accuracy_of(fitted.predict(test))
    # w is the dev-best point of the paper's grid 0, 1, ..., 100 (the first on ties)
    np.testing.assert_array_equal(fitted.weights_, np.arange(101))
    assert fitted.w_ in fitted.weights_ and fitted.w_ > 0
    assert fitted.dev_metric_ == "accuracy" and fitted.dev_curve_.shape == (101,)
    assert fitted.w_ == fitted.weights_[np.argmax(fitted.dev_curve_)]
    assert fitted.dev_curve_.max() == pytest.approx(dev.accuracy_of(fitted.predict(dev)))
    assert fitted.dev_curve_[0] == pytest.approx(dev.accuracy_of(dev.base_score))
    # rerank() is the first best of predict(), as NBestData.chosen
    np.testing.assert_array_equal(fitted.rerank(test), test.chosen(fitted.predict(test)))


def test_weight_limits():
    """Eq. 13 is s + w p: w = 0 is the base model's choice, a huge w the projection's alone."""
    train, dev, test = tagged(300, seed=20), tagged(150, seed=21), tagged(150, seed=22)
    fitted = LowDimReranker(model="generative", k=4, tau=0.9).fit(train, eval_set=dev)
    fitted.w_ = 0.0
    np.testing.assert_array_equal(fitted.rerank(test), test.chosen(test.base_score))
    fitted.w_ = 1e12
    np.testing.assert_array_equal(fitted.rerank(test), test.chosen(fitted.projection_scores(test)))
    p = fitted.projection_scores(test)
    assert np.all(np.abs(p) <= 1 + 1e-12)  # Eq. 1 is a cosine


def test_custom_grid_and_loss_criterion():
    """Without sizes, w minimizes the dev loss; the grid may be any finite set."""
    train, dev = tagged(300, seed=30, with_size=False), tagged(150, seed=31, with_size=False)
    fitted = LowDimReranker(model="generative", k=4, tau=0.9, weights=[50, 0, 5, 20]).fit(train, eval_set=dev)
    np.testing.assert_array_equal(fitted.weights_, [0, 5, 20, 50])
    assert fitted.dev_metric_ == "loss"
    assert fitted.w_ == fitted.weights_[np.argmin(fitted.dev_curve_)]
    assert fitted.dev_curve_.min() == dev.loss_of(fitted.predict(dev))
    no_dev = LowDimReranker(model="generative", k=4, tau=0.9, weights=[0, 5]).fit(train)
    assert no_dev.w_selected_on_ == "train"


def test_reference_defaults_to_the_lowest_loss_candidate():
    with_gold = tagged(150, seed=40)
    without = tagged(150, seed=40, with_gold=False)
    best = with_gold.chosen(-with_gold.loss)
    stand_in = NBestData(with_gold.x, with_gold.y, with_gold.loss, with_gold.base_score, with_gold.qid,
                         gold_y=with_gold.y[best])
    a = LowDimReranker(model="softened", k=3, tau=0.5, weights=[0]).fit(without)
    b = LowDimReranker(model="softened", k=3, tau=0.5, weights=[0]).fit(stand_in)
    np.testing.assert_allclose(a.A_, b.A_)


def test_first_argmax_matches_chosen_on_ties():
    rng = np.random.default_rng(0)
    data = tagged(80, seed=50)
    scores = rng.integers(0, 3, data.x.shape[0]).astype(float)
    np.testing.assert_array_equal(first_argmax(scores, data.offsets), data.chosen(scores))


# ------------------------------------------------------------------------------------------
# Bad inputs
# ------------------------------------------------------------------------------------------


def test_k_larger_than_the_rank():
    data = tagged(50, seed=60, n_tags=3, d1=30, n_cand=3)  # d2 = 12
    with pytest.raises(ValueError, match=r"k=13 is larger than the rank bound .* = 12"):
        LowDimReranker(k=13).fit(data)
    # References confined to a 2-dimensional subspace: C_xy has rank 2.
    low, _, _ = dense_pairs(n=200, d1=6, d2=5, y_rank=2)
    with pytest.raises(ValueError, match=r"k=3 is larger than the rank of the cross-covariance .* use k <= 2"):
        LowDimReranker(model="generative", k=3, tau=0.5).fit(low)
    LowDimReranker(model="generative", k=2, tau=0.5).fit(low)


def test_mismatched_views():
    train = tagged(60, seed=70, n_tags=3, d1=30, n_cand=3)
    other = tagged(40, seed=71, n_tags=4, d1=30, n_cand=3)  # 20 output features instead of 12
    with pytest.raises(ValueError, match="mismatched views"):
        LowDimReranker(k=2).fit(train, eval_set=other)
    fitted = LowDimReranker(k=2).fit(train)
    with pytest.raises(ValueError, match="mismatched views"):
        fitted.predict(other)
    bad_gold = NBestData(train.x, train.y, train.loss, train.base_score, train.qid,
                         gold_y=sp.csr_matrix((train.n_lists, 7)))
    with pytest.raises(ValueError, match="mismatched output views"):
        LowDimReranker(k=2).fit(bad_gold)
    x = train.x.tolil()
    x[1, 0] += 1.0  # second candidate of list 0 gets another input
    with pytest.raises(ValueError, match="input view x differs .* qid=0"):
        LowDimReranker(k=2).fit(NBestData(x.tocsr(), train.y, train.loss, train.base_score, train.qid,
                                          gold_y=train.gold_y))


@pytest.mark.parametrize("params, message", [
    (dict(model="neural"), "model must be one of"),
    (dict(tau=1.5), "tau must be in"),
    (dict(lam=-0.1), "lam must be in"),
    (dict(k=0), "k must be a positive integer"),
    (dict(n_iter=0), "n_iter must be a positive integer"),
    (dict(weights=[]), "weights must be a non-empty grid"),
    (dict(covariance="sparse"), "covariance must be one of"),
])
def test_bad_parameters(params, message):
    data = tagged(30, seed=80, n_tags=3, d1=30, n_cand=3)
    with pytest.raises(ValueError, match=message):
        LowDimReranker(**{"k": 2, **params}).fit(data)
    with pytest.raises(ValueError, match="must be an NBestData"):
        LowDimReranker(k=2).fit((data.x, data.y))


def test_weighted_gram_dense_and_sparse_rows():
    """Q^T diag(w) Q, with rows dense enough to go through BLAS and sparse ones through scipy."""
    rng = np.random.default_rng(0)
    Q = sp.random(600, 200, density=0.03, random_state=1, format="lil")
    Q[:40] = rng.random((40, 200)) * (rng.random((40, 200)) < 0.6)  # ~120 of 200 entries: "heavy"
    Q = Q.tocsr()
    w = rng.random(600)
    expected = (Q.T @ sp.diags(w) @ Q).toarray()
    np.testing.assert_allclose(weighted_gram(Q, w), expected, atol=1e-12)
    np.testing.assert_allclose(weighted_gram(Q, w, block_rows=7), expected, atol=1e-12)
