"""The O(n log n) MAP oracle (divide and conquer over monotone choices) against Yue et al.'s
O(P N) scan on long lists, where brute force over permutations cannot go."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from structrank.losses import get_loss


def map_oracle(scores, labels):
    return get_loss("map").oracle(scores, labels)


def yue_scan_objective(s, z):
    """max over interleavings of s . c_po + (1 - AP), by Yue et al.'s scan of every position for
    every bad document (numpy, independent of the kernel)."""
    good = np.flatnonzero(z)[np.argsort(-s[z == 1], kind="stable")]
    bad = np.flatnonzero(z == 0)[np.argsort(-s[z == 0], kind="stable")]
    P, N = good.size, bad.size
    sg = s[good]
    g = np.arange(P, dtype=float)
    choice = np.empty(N, np.int64)
    for l in range(N):
        delta = (g + 1) / ((g + l + 1) * (g + l + 2) * P) - (sg - s[bad[l]]) * 2.0 / (P * N)
        totals = np.concatenate([np.cumsum(delta[::-1])[::-1], [0.0]])  # totals[m]: bad l above goods m..P-1
        best = totals.max()
        choice[l] = np.flatnonzero(totals == best)[-1]
    choice = np.maximum.accumulate(choice)
    j = np.array([(choice <= gi).sum() for gi in range(P)])  # bad documents above good gi
    ap = np.mean((g + 1) / (g + j + 1))
    # s . c_po of the interleaving: each (good, bad) pair +-1 / (P N)
    above = np.array([[choice[l] <= gi for l in range(N)] for gi in range(P)])  # bad l above good gi
    sign = np.where(above, -1.0, 1.0)
    score = float(np.sum(sign * (sg[:, None] - s[bad][None, :]))) / (P * N)
    return score + 1.0 - ap


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(20, 250), st.floats(0.02, 0.9), st.sampled_from([0.01, 1.0, 100.0]),
       st.booleans())
def test_divide_and_conquer_matches_the_scan(seed, n, rate, spread, ties):
    rng = np.random.default_rng(seed)
    s = (rng.integers(0, 4, n).astype(float) if ties else rng.normal(size=n)) * spread
    z = (rng.random(n) < rate).astype(np.int64)
    z[0], z[1] = 1, 0
    v = map_oracle(s, z)
    assert abs(v.loss + s @ v.coef - yue_scan_objective(s, z)) <= 1e-12 * max(1.0, spread)
