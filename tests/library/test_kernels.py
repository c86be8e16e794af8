"""Vector kernels against sklearn, the word-sequence kernel against brute force, PSD combinations."""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics.pairwise import polynomial_kernel, rbf_kernel

from structrank.kernels.base import LinearKernel, PartKernel
from structrank.kernels.strings import WordSequenceKernel
from structrank.kernels.vector import PolynomialKernel, RBFKernel

RNG = np.random.default_rng(0)
A, B = RNG.normal(size=(7, 4)), RNG.normal(size=(5, 4))


@pytest.mark.parametrize("degree,gamma,coef0", [(2, 1.0, 1.0), (3, 0.5, 0.0), (1, None, 2.0)])
def test_polynomial_equals_sklearn(degree, gamma, coef0):
    k = PolynomialKernel(degree=degree, gamma=gamma, coef0=coef0)
    expected = polynomial_kernel(A, B, degree=degree, gamma=gamma, coef0=coef0)
    np.testing.assert_allclose(k(A, B), expected, rtol=1e-12)
    np.testing.assert_allclose(k.diag(A), np.diag(polynomial_kernel(A, degree=degree, gamma=gamma, coef0=coef0)),
                               rtol=1e-12)
    assert k.n_evaluations == 7 * 5 + 7


@pytest.mark.parametrize("gamma", [1.0, 0.1, None])
def test_rbf_equals_sklearn(gamma):
    k = RBFKernel(gamma=gamma)
    np.testing.assert_allclose(k(A, B), rbf_kernel(A, B, gamma=gamma), rtol=1e-12)
    np.testing.assert_allclose(k(A), rbf_kernel(A, gamma=gamma), rtol=1e-12)
    np.testing.assert_array_equal(k.diag(A), np.ones(7))
    assert k.n_evaluations == 7 * 5 + 7 * 7 + 7


def test_vector_kernels_on_sparse_rows():
    As, Bs = sp.csr_matrix(A), sp.csr_matrix(B)
    np.testing.assert_allclose(RBFKernel(0.3)._gram(As, Bs), rbf_kernel(A, B, gamma=0.3), rtol=1e-12)
    np.testing.assert_allclose(PolynomialKernel(3)._gram(As, Bs), polynomial_kernel(A, B, degree=3, gamma=1.0, coef0=1.0),
                               rtol=1e-12)
    np.testing.assert_allclose(PolynomialKernel(3)._diag(As), np.diag(polynomial_kernel(A, degree=3, gamma=1.0, coef0=1.0)),
                               rtol=1e-12)


def test_vector_kernel_call_on_sparse_rows():
    np.testing.assert_allclose(RBFKernel(0.3)(sp.csr_matrix(A), sp.csr_matrix(B)), rbf_kernel(A, B, gamma=0.3))


# ---------------------------------------------------------------- word-sequence kernel

def brute_features(s, n, lam, exact):
    """phi_u(s) = sum over index tuples i of s spelling u of lam ** (i_last - i_first + 1)."""
    phi = {}
    for p in range(n if exact else 1, n + 1):
        for idx in itertools.combinations(range(len(s)), p):
            u = tuple(s[i] for i in idx)
            phi[u] = phi.get(u, 0.0) + lam ** (idx[-1] - idx[0] + 1)
    return phi


def brute_kernel(s, t, n, lam, exact=False, normalize=False):
    fs, ft = brute_features(s, n, lam, exact), brute_features(t, n, lam, exact)
    k = sum(v * ft.get(u, 0.0) for u, v in fs.items())
    if normalize:
        nss, ntt = sum(v * v for v in fs.values()), sum(v * v for v in ft.values())
        k = k / np.sqrt(nss * ntt) if nss > 0 and ntt > 0 else 0.0
    return k


tokens = st.lists(st.sampled_from(["the", "cat", "sat", "on", "mat"]), min_size=0, max_size=6)


@settings(max_examples=60, deadline=None)
@given(st.lists(tokens, min_size=1, max_size=4), st.lists(tokens, min_size=1, max_size=3),
       st.integers(1, 3), st.sampled_from([0.3, 0.5, 1.0]), st.booleans(), st.booleans())
def test_word_sequence_kernel_equals_brute_force(S, T, n, lam, exact, normalize):
    k = WordSequenceKernel(n=n, lam=lam, normalize=normalize, exact=exact)
    expected = np.array([[brute_kernel(s, t, n, lam, exact, normalize) for t in T] for s in S])
    np.testing.assert_allclose(k(S, T), expected, rtol=1e-10, atol=1e-12)
    # the symmetric path (B is A) and the general path agree
    np.testing.assert_allclose(k(S), k(S, list(S)), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(k.diag(S), np.diag(k(S)), rtol=1e-12, atol=1e-12)


def test_word_sequence_kernel_known_value():
    lam = 0.5
    k = WordSequenceKernel(n=2, lam=lam, normalize=False)
    # "a b" vs "a c b": a, b (lam^2 each) and the gapped "a b" (lam^2 * lam^3)
    assert k([["a", "b"]], [["a", "c", "b"]])[0, 0] == pytest.approx(2 * lam**2 + lam**5)
    assert k.n_evaluations == 1
    kn = WordSequenceKernel(n=2, lam=lam)
    g = kn([["a", "b"], ["a", "c", "b"], []])
    np.testing.assert_allclose(np.diag(g), [1.0, 1.0, 0.0])  # an empty sequence has no features
    assert kn.n_evaluations == 9


def test_word_sequence_kernel_rejects_bad_parameters():
    with pytest.raises(ValueError):
        WordSequenceKernel(n=0)
    with pytest.raises(ValueError):
        WordSequenceKernel(lam=1.5)


# ---------------------------------------------------------------- combinations stay PSD

def assert_psd(G):
    np.testing.assert_allclose(G, G.T, atol=1e-10)
    evals = np.linalg.eigvalsh(G)
    assert evals.min() >= -1e-9 * max(1.0, evals.max())


def test_sums_and_products_of_vector_kernels_are_psd():
    X = RNG.normal(size=(25, 3))
    k = (RBFKernel(0.5) + 0.5 * PolynomialKernel(2)) * LinearKernel() + 2.0 * RBFKernel(2.0) * PolynomialKernel(3, coef0=0.5)
    G = k(X)
    assert_psd(G)
    np.testing.assert_allclose(k.diag(X), np.diag(G), rtol=1e-10)
    k.reset()
    assert k.n_evaluations == 0


def test_sums_and_products_of_part_kernels_are_psd():
    rng = np.random.default_rng(1)
    vocab = ["q", "w", "e", "r", "t"]
    objs = [{"vec": rng.normal(size=3), "tokens": list(rng.choice(vocab, size=rng.integers(1, 6)))} for _ in range(20)]
    wsk = PartKernel(WordSequenceKernel(n=3, lam=0.6), "tokens")
    rbf = PartKernel(RBFKernel(0.5), "vec")
    for k in (wsk + rbf, wsk * rbf, 0.3 * wsk + wsk * rbf):
        G = k(objs)
        assert_psd(G)
        np.testing.assert_allclose(k.diag(objs), np.diag(G), rtol=1e-10)
