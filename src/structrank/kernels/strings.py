"""The word-sequence kernel (Cancedda et al. 2003) on token lists.

Lodhi et al. (2002)'s gap-weighted subsequence kernel with words instead of characters as the
alphabet: a subsequence ``u`` of length p occurring in ``s`` at indices ``i_1 < ... < i_p``
contributes ``lam ** (i_p - i_1 + 1)`` (its span, gaps included) to the feature ``phi_u(s)``, and

    K_p(s, t) = sum_u phi_u(s) phi_u(t).

``WordSequenceKernel`` sums the lengths 1..n, ``K = K_1 + ... + K_n`` (Cancedda et al.'s
combination with equal weights), or uses ``K_n`` alone with ``exact=True``; with
``normalize=True`` (default) it returns ``K(s, t) / sqrt(K(s, s) K(t, t))`` (0 where a sequence has
no feature, i.e. is empty). The normalisation applies to the whole sum, so the kernel stays the dot
product of one unit-norm feature vector. K is computed with Lodhi et al.'s O(n |s| |t|) dynamic
programme over integer-encoded tokens, in numba.

Evaluations: a normalised Gram of ``len(A) x len(B)`` is counted as ``len(A) * len(B)``; the
self-similarities used to normalise are part of each evaluation and are not counted separately.

>>> k = WordSequenceKernel(n=2, lam=0.5)
>>> g = k([["a", "b"], ["a", "c", "b"]])
>>> float(g[0, 0]), round(float(g[0, 1]), 4)
(1.0, 0.7506)
"""

from __future__ import annotations

import numpy as np

from structrank.kernels.base import Kernel
from structrank.numba_cache import njit



@njit(cache=True, nogil=True)
def _wsk_pair(s, t, n, lam, exact, kp):
    """sum_{p=1..n} K_p(s, t) (or K_n alone if exact); kp is scratch of shape >= (n, |s|+1, |t|+1)."""
    ls, lt = s.shape[0], t.shape[0]
    for a in range(ls + 1):
        for b in range(lt + 1):
            kp[0, a, b] = 1.0
    # kp[i, a, b] = K'_i(s[:a], t[:b]): subsequences of length i, weighted by lam ** (distance
    # from their first index to the end of each prefix).
    for i in range(1, n):
        for b in range(lt + 1):
            kp[i, 0, b] = 0.0
        for a in range(1, ls + 1):
            kpp = 0.0  # K''_i(s[:a], t[:b]) along b
            kp[i, a, 0] = 0.0
            x = s[a - 1]
            for b in range(1, lt + 1):
                kpp = lam * kpp
                if t[b - 1] == x:
                    kpp += lam * lam * kp[i - 1, a - 1, b - 1]
                kp[i, a, b] = lam * kp[i, a - 1, b] + kpp
    total = 0.0
    first = n if exact else 1
    for p in range(first, n + 1):
        kval = 0.0
        for a in range(1, ls + 1):
            x = s[a - 1]
            for b in range(1, lt + 1):
                if t[b - 1] == x:
                    kval += kp[p - 1, a - 1, b - 1]
        total += lam * lam * kval
    return total


@njit(cache=True, nogil=True)
def _wsk_gram(flat_a, off_a, flat_b, off_b, n, lam, exact, symmetric):
    na, nb = off_a.shape[0] - 1, off_b.shape[0] - 1
    max_a, max_b = 0, 0
    for i in range(na):
        max_a = max(max_a, off_a[i + 1] - off_a[i])
    for j in range(nb):
        max_b = max(max_b, off_b[j + 1] - off_b[j])
    kp = np.empty((max(n, 1), max_a + 1, max_b + 1))
    out = np.zeros((na, nb))
    for i in range(na):
        s = flat_a[off_a[i]:off_a[i + 1]]
        for j in range(i if symmetric else 0, nb):
            out[i, j] = _wsk_pair(s, flat_b[off_b[j]:off_b[j + 1]], n, lam, exact, kp)
            if symmetric:
                out[j, i] = out[i, j]
    return out


@njit(cache=True, nogil=True)
def _wsk_self(flat, off, n, lam, exact):
    m = off.shape[0] - 1
    longest = 0
    for i in range(m):
        longest = max(longest, off[i + 1] - off[i])
    kp = np.empty((max(n, 1), longest + 1, longest + 1))
    out = np.zeros(m)
    for i in range(m):
        s = flat[off[i]:off[i + 1]]
        out[i] = _wsk_pair(s, s, n, lam, exact, kp)
    return out


def _encode(seqs, vocab):
    """Token lists -> (flat int64 codes, offsets), growing vocab (token -> code)."""
    offsets = np.zeros(len(seqs) + 1, dtype=np.int64)
    codes = []
    for i, seq in enumerate(seqs):
        codes.extend(vocab.setdefault(tok, len(vocab)) for tok in seq)
        offsets[i + 1] = len(codes)
    return np.asarray(codes, dtype=np.int64), offsets


class WordSequenceKernel(Kernel):
    """Gap-weighted word-subsequence kernel on token lists (Cancedda et al. 2003; Lodhi et al. 2002).

    Parameters
    ----------
    n : int, default 2
        Longest subsequence length; lengths 1..n are summed (only n with ``exact=True``).
    lam : float in (0, 1], default 0.5
        Gap decay: an occurrence spanning l tokens weighs ``lam ** l``.
    normalize : bool, default True
        Return ``K(s, t) / sqrt(K(s, s) K(t, t))``.
    exact : bool, default False
        Use only subsequences of length exactly n.

    Objects are sequences of hashable tokens (``list[str]``); a plain string is a sequence of
    characters (Lodhi et al.'s original string kernel).

    Examples
    --------
    >>> sentences = [["the", "cat", "sat"], ["the", "cat", "ran"], ["a", "dog"]]
    >>> WordSequenceKernel(n=2, lam=0.5)(sentences).round(4).tolist()
    [[1.0, 0.6316, 0.0], [0.6316, 1.0, 0.0], [0.0, 0.0, 1.0]]
    """

    def __init__(self, n=2, lam=0.5, normalize=True, exact=False):
        super().__init__()
        if int(n) < 1:
            raise ValueError(f"n must be >= 1, got {n}")
        if not 0.0 < lam <= 1.0:
            raise ValueError(f"lam must be in (0, 1], got {lam}")
        self.n, self.lam, self.normalize, self.exact = int(n), float(lam), bool(normalize), bool(exact)

    def _gram(self, A, B):
        vocab = {}
        symmetric = A is B
        fa, oa = _encode(A, vocab)
        fb, ob = (fa, oa) if symmetric else _encode(B, vocab)
        gram = _wsk_gram(fa, oa, fb, ob, self.n, self.lam, self.exact, symmetric)
        if self.normalize:
            da = np.diag(gram).copy() if symmetric else _wsk_self(fa, oa, self.n, self.lam, self.exact)
            db = da if symmetric else _wsk_self(fb, ob, self.n, self.lam, self.exact)
            gram = gram * np.outer(_inv_sqrt(da), _inv_sqrt(db))
        return gram

    def _diag(self, A):
        flat, off = _encode(A, {})
        d = _wsk_self(flat, off, self.n, self.lam, self.exact)
        return (d > 0).astype(np.float64) if self.normalize else d

    def __repr__(self):
        return f"WordSequenceKernel(n={self.n}, lam={self.lam}, normalize={self.normalize}, exact={self.exact})"


def _inv_sqrt(d):
    out = np.zeros_like(d)
    pos = d > 0
    out[pos] = 1.0 / np.sqrt(d[pos])
    return out
