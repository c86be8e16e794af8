"""NystroemFeatures: exactness with all landmarks, convergence, rank deficiency, counts, pipelines."""

import numpy as np
import pytest
from sklearn import config_context
from sklearn.base import clone
from sklearn.datasets import make_circles
from sklearn.pipeline import Pipeline
from sklearn.svm import LinearSVC

from structrank.kernels.base import LinearKernel, PartKernel
from structrank.kernels.nystroem import NystroemFeatures
from structrank.kernels.strings import WordSequenceKernel
from structrank.kernels.vector import PolynomialKernel, RBFKernel

VOCAB = ["good", "bad", "not", "very", "movie", "plot", "the", "a"]


def token_lists(n, seed=0):
    rng = np.random.default_rng(seed)
    return [list(rng.choice(VOCAB, size=rng.integers(1, 8))) for _ in range(n)]


def test_all_landmarks_reproduce_rbf_gram():
    X = np.random.default_rng(0).normal(size=(60, 3))
    k = RBFKernel(gamma=0.5)
    Z = NystroemFeatures(k, n_landmarks=1000, random_state=0).fit_transform(X)
    np.testing.assert_allclose(Z @ Z.T, RBFKernel(gamma=0.5)(X), atol=1e-8)
    Z2 = NystroemFeatures(k, n_landmarks=60).fit(X).transform(X)
    np.testing.assert_allclose(Z2 @ Z2.T, RBFKernel(gamma=0.5)(X), atol=1e-8)


def test_all_landmarks_reproduce_string_kernel_gram():
    docs = token_lists(40)
    k = WordSequenceKernel(n=3, lam=0.5)
    nys = NystroemFeatures(k, n_landmarks=40).fit(docs)
    assert isinstance(nys.landmarks_, list) and nys.landmarks_[0] is docs[0]  # objects, not an array
    Z = nys.transform(docs)
    np.testing.assert_allclose(Z @ Z.T, k(docs), atol=1e-8)


def test_fit_transform_equals_fit_then_transform():
    X = np.random.default_rng(1).normal(size=(80, 2))
    nys = NystroemFeatures(RBFKernel(1.0), n_landmarks=25, random_state=3)
    Z1 = nys.fit_transform(X)
    Z2 = clone(nys).fit(X).transform(X)
    np.testing.assert_allclose(Z1 @ Z1.T, Z2 @ Z2.T, atol=1e-8)
    np.testing.assert_array_equal(nys.landmark_indices_, clone(nys).fit(X).landmark_indices_)


def test_error_falls_with_landmarks():
    X = np.random.default_rng(2).normal(size=(200, 3))
    G = RBFKernel(0.3)(X)
    errors = []
    for m in (5, 20, 50, 100):
        Z = NystroemFeatures(RBFKernel(0.3), n_landmarks=m, random_state=0).fit_transform(X)
        errors.append(np.linalg.norm(G - Z @ Z.T))
    assert all(a > b for a, b in zip(errors, errors[1:])), errors
    assert errors[-1] < 0.05 * errors[0]


def test_rank_deficient_landmark_gram():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(50, 3))
    nys = NystroemFeatures(LinearKernel(), n_landmarks=20, random_state=0)
    Z = nys.fit_transform(X)  # W is 20 x 20 of rank 3
    assert nys.n_components_ == 3 and Z.shape == (50, 3)
    assert np.all(np.isfinite(Z))
    np.testing.assert_allclose(Z @ Z.T, X @ X.T, atol=1e-8)
    # duplicated objects: every landmark appears twice
    Xd = np.repeat(rng.normal(size=(10, 2)), 2, axis=0)
    nys = NystroemFeatures(RBFKernel(1.0), n_landmarks=20).fit(Xd)
    Zd = nys.transform(Xd)
    assert nys.n_components_ <= 10 and np.all(np.isfinite(Zd))
    np.testing.assert_allclose(Zd @ Zd.T, RBFKernel(1.0)(Xd), atol=1e-8)
    docs = token_lists(8) * 3  # duplicate token lists
    Zs = NystroemFeatures(WordSequenceKernel(), n_landmarks=24).fit_transform(docs)
    assert np.all(np.isfinite(Zs))


def test_zero_kernel_is_an_error():
    with pytest.raises(ValueError, match="no positive eigenvalue"):
        NystroemFeatures(LinearKernel(), n_landmarks=5).fit(np.zeros((10, 2)))


def test_kernel_evaluation_counts():
    X, Xtest = np.random.default_rng(4).normal(size=(70, 2)), np.zeros((13, 2))
    k = RBFKernel()
    nys = NystroemFeatures(k, n_landmarks=15, random_state=0).fit(X)
    assert nys.n_kernel_evaluations_fit_ == 15 * 15 and k.n_evaluations == 15 * 15
    assert nys.n_kernel_evaluations_transform_ == 0
    nys.transform(Xtest)
    assert nys.n_kernel_evaluations_transform_ == 13 * 15
    nys.transform(X)
    assert nys.n_kernel_evaluations_transform_ == 13 * 15 + 70 * 15
    assert k.n_evaluations == 15 * 15 + 83 * 15
    nys.fit_transform(X)  # one n x l matrix; W is its landmark rows
    assert nys.n_kernel_evaluations_fit_ == 70 * 15 and nys.n_kernel_evaluations_transform_ == 0
    # combinations over composite objects count each object pair once at the top
    objs = [{"v": x, "t": t} for x, t in zip(X[:30], token_lists(30))]
    kc = PartKernel(RBFKernel(), "v") + PartKernel(WordSequenceKernel(), "t")
    nys = NystroemFeatures(kc, n_landmarks=10, random_state=0).fit(objs)
    nys.transform(objs[:7])
    assert (nys.n_kernel_evaluations_fit_, nys.n_kernel_evaluations_transform_) == (100, 70)


def test_pipeline_with_linear_svc_learns_circles():
    X, y = make_circles(n_samples=400, factor=0.4, noise=0.08, random_state=0)
    Xtr, ytr, Xte, yte = X[:300], y[:300], X[300:], y[300:]
    linear = LinearSVC().fit(Xtr, ytr).score(Xte, yte)
    pipe = Pipeline([("nys", NystroemFeatures(RBFKernel(gamma=2.0), n_landmarks=50, random_state=0)),
                     ("svm", LinearSVC())])
    nonlinear = pipe.fit(Xtr, ytr).score(Xte, yte)
    assert linear < 0.75 and nonlinear > 0.95, (linear, nonlinear)
    assert pipe.named_steps["nys"].n_kernel_evaluations_transform_ == 100 * 50
    assert list(pipe[:-1].get_feature_names_out()[:2]) == ["nystroemfeatures0", "nystroemfeatures1"]
    assert clone(pipe).fit(Xtr, ytr).score(Xte, yte) == nonlinear


def test_pipeline_on_token_lists():
    # label: does the text contain "not" followed (possibly with gaps) by "good"?
    docs = token_lists(300, seed=5)
    y = np.array([int(any(a == "not" and "good" in d[i + 1:] for i, a in enumerate(d))) for d in docs])
    pipe = Pipeline([("nys", NystroemFeatures(WordSequenceKernel(n=2, lam=0.8), n_landmarks=100, random_state=0)),
                     ("svm", LinearSVC(C=10.0))])
    pipe.fit(docs[:200], y[:200])
    majority = max(y[200:].mean(), 1 - y[200:].mean())
    assert majority < 0.9 and pipe.score(docs[200:], y[200:]) > 0.95


def test_features_feed_a_structrank_ranker():
    from structrank.data import make_ranking_dataset
    from structrank.learners import RankSVM

    ds = make_ranking_dataset(n_queries=20, n_features=5, random_state=0)
    nys = NystroemFeatures(PolynomialKernel(degree=2, gamma=0.1), n_landmarks=40, random_state=0)
    Z = nys.fit_transform(ds.X)
    ranker = RankSVM(C=0.1).fit(Z, ds.y, qid=ds.qid)
    assert ranker.score(nys.transform(ds.X), ds.y, qid=ds.qid) > 0.5
    pipe = Pipeline([("nys", clone(nys)), ("rank", RankSVM(C=0.1))]).fit(ds.X, ds.y, rank__qid=ds.qid)
    np.testing.assert_allclose(pipe.predict(ds.X), ranker.predict(Z), atol=1e-8)
    with config_context(enable_metadata_routing=True):  # qid routed to the ranker only
        routed = Pipeline([("nys", clone(nys)), ("rank", RankSVM(C=0.1))]).fit(ds.X, ds.y, qid=ds.qid)
        np.testing.assert_allclose(routed.predict(ds.X), ranker.predict(Z), atol=1e-8)


# -- kernel matrices over joblib workers ------------------------------------------------------------

def _forest(n=23, seed=3):
    from structrank.kernels.trees import Tree

    rng = np.random.default_rng(seed)
    words = ["visa", "cost", "qatar", "job", "doha", "bank"]
    trees = []
    for _ in range(n):
        chunks = [Tree(rng.choice(["NP", "VP", "PP"]), [Tree(t, [Tree(str(rng.choice(words)))])
                                                         for t in rng.choice(["NN", "VB", "IN"], rng.integers(1, 4))])
                  for _ in range(rng.integers(1, 5))]
        trees.append(Tree("ROOT", chunks))
    return trees


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_parallel_gram_equals_one_call(n_jobs):
    from structrank.kernels.base import parallel_gram
    from structrank.kernels.trees import PartialTreeKernel

    trees = _forest()
    kernel = PartialTreeKernel(max_length=3)
    expected = PartialTreeKernel(max_length=3)(trees)
    got = parallel_gram(kernel, trees, n_jobs=n_jobs, block_size=5)  # tiles on and off the diagonal
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0)
    assert kernel.n_evaluations == len(trees) ** 2
    rect = parallel_gram(kernel, trees[:9], trees[4:], n_jobs=n_jobs, block_size=4)
    np.testing.assert_allclose(rect, expected[:9, 4:], rtol=1e-12, atol=0)
    assert kernel.n_evaluations == len(trees) ** 2 + 9 * (len(trees) - 4)


def test_trees_sent_to_workers_are_encoded_again():
    import pickle

    from structrank.kernels.trees import PartialTreeKernel

    trees = _forest(4)
    PartialTreeKernel()(trees)  # caches encodings with this process's encoder
    copy = pickle.loads(pickle.dumps(trees[0]))
    assert copy == trees[0] and copy._encoded is None


def test_nystroem_n_jobs_gives_the_same_features():
    from structrank.kernels.trees import SubsetTreeKernel

    trees = _forest(30)
    one = NystroemFeatures(SubsetTreeKernel(), n_landmarks=12, random_state=0).fit(trees)
    two = NystroemFeatures(SubsetTreeKernel(), n_landmarks=12, random_state=0, n_jobs=2).fit(trees)
    np.testing.assert_allclose(two.transform(trees), one.transform(trees), rtol=1e-10, atol=1e-12)
    assert two.n_kernel_evaluations_fit_ == one.n_kernel_evaluations_fit_ == 144


def test_the_normalization_s_eigenvector_signs_do_not_follow_rounding():
    """Each column of U S^(-1/2) has its largest entry positive, so W computed two ways (fit's K(L, L), fit_transform's
    rows of K(X, L)) gives the same features, not columns of opposite sign."""
    from structrank.kernels.nystroem import nystroem_normalization

    rng = np.random.default_rng(0)
    Q = np.linalg.qr(rng.normal(size=(12, 12)))[0]
    W = Q @ np.diag(np.linspace(1.0, 12.0, 12)) @ Q.T  # distinct eigenvalues: each eigenvector is unique but for sign
    _, base = nystroem_normalization(W)
    assert np.all(base[np.argmax(np.abs(base), axis=0), np.arange(base.shape[1])] > 0)
    for seed in range(5):
        noise = np.random.default_rng(seed).normal(size=W.shape) * 1e-13
        _, other = nystroem_normalization(W + noise + noise.T)
        np.testing.assert_allclose(other, base, atol=1e-8)
