"""Paired significance tests over queries: is system A better than system B on the same queries?

IR papers compare two rankers query by query (Smucker, Allan & Carterette 2007): the per-query
metric values of A and B are paired, and the mean difference is tested by

- the paired t-test (``scipy.stats.ttest_rel``), and
- the paired randomisation test (Fisher's sign-flip permutation test: under the null hypothesis
  the labels A and B of each query are exchangeable, so each difference keeps its size and takes
  either sign), two-sided; exact when there are at most ``2**max_exact_log2`` sign patterns, else
  ``n_resamples`` seeded random ones. (``scipy.stats.permutation_test`` computes the same test,
  but its two-sided p-value doubles the smaller tail and counts a zero mean difference as
  p < 1; the direct count here is the textbook definition.)

Both are two-sided. A query where A and B agree adds a zero difference and counts in n.
:func:`sign_test_p` is the exact sign test over the same differences (ties left out).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class PairedTest:
    """The outcome of comparing two systems on the same queries."""

    n: int  #: number of paired queries
    mean_a: float
    mean_b: float
    mean_diff: float  #: mean over queries of a - b
    t_p: float  #: two-sided p-value of the paired t-test (1.0 when every difference is 0)
    rand_p: float  #: two-sided p-value of the paired randomisation test
    #: the paired t-test's two-sided 95% confidence interval of ``mean_diff`` (a point where every
    #: difference is equal): how large a difference in either direction the queries still allow
    ci_low: float = float("nan")
    ci_high: float = float("nan")

    def significant(self, alpha: float = 0.05) -> bool:
        """Both tests reject "no difference" at level ``alpha``."""
        return self.t_p < alpha and self.rand_p < alpha

    def verdict(self, alpha: float = 0.05) -> str:
        """``"A > B"``, ``"A < B"`` (both tests at ``alpha``) or ``"no significant difference"``."""
        if not self.significant(alpha):
            return "no significant difference"
        return "A > B" if self.mean_diff > 0 else "A < B"


#: random signs drawn at once by the randomisation test (a block of rows of the patterns x queries matrix)
SIGN_BLOCK = 1 << 21


def sign_flip_p(d, n_resamples: int = 10_000, seed: int = 0, max_exact_log2: int = 16) -> float:
    """Two-sided p-value of the mean difference ``d`` under random signs.

    The share of sign patterns whose |mean| reaches the observed one (within rounding): all
    ``2^n`` patterns when ``n <= max_exact_log2``, else ``n_resamples`` seeded random ones plus
    the observed pattern (so p > 0, as Phipson & Smyth 2010 recommend).
    """
    d = np.asarray(d, dtype=np.float64)
    n = d.size
    # sums, not means: the same test, with one rounding less; a pattern ties when equal to rounding
    threshold = abs(d.sum()) - 1e-9 * max(1.0, np.abs(d).sum())
    if n <= max_exact_log2:
        bits = (np.arange(2 ** n)[:, None] >> np.arange(n)[None, :]) & 1
        signs = 1.0 - 2.0 * bits
        return float(np.count_nonzero(np.abs(signs @ d) >= threshold) / signs.shape[0])
    # The random patterns are drawn a block of rows at a time, so memory stays bounded at any number of
    # queries; the generator's stream is the same as one draw of all rows, and so is the p-value.
    rng = np.random.default_rng(seed)
    rows = max(1, SIGN_BLOCK // n)
    hits = 0
    for start in range(0, n_resamples, rows):
        signs = rng.choice((-1.0, 1.0), size=(min(rows, n_resamples - start), n))
        hits += int(np.count_nonzero(np.abs(signs @ d) >= threshold))
    return float((hits + 1) / (n_resamples + 1))


def sign_test_p(d) -> float:
    """Two-sided exact sign test of the paired differences ``d``: among the non-zero ones, is a
    positive difference as likely as a negative one? (Binomial(n, 1/2); 1.0 when every
    difference is 0.) Tagging papers often report it: it counts the sentences one system gets
    better, whatever the size of the difference.

    >>> round(sign_test_p([1, 2, 3, 0, 1, 1, 2, 1]), 4)
    0.0156
    """
    d = np.asarray(d, dtype=np.float64).ravel()
    positive, n = int(np.count_nonzero(d > 0)), int(np.count_nonzero(d))
    return 1.0 if n == 0 else float(stats.binomtest(positive, n, 0.5).pvalue)


def paired_test(a, b, n_resamples: int = 10_000, seed: int = 0, max_exact_log2: int = 16) -> PairedTest:
    """Paired t-test and randomisation test of the per-query values ``a`` against ``b``.

    >>> r = paired_test([0.5, 0.7, 0.9, 0.4], [0.4, 0.6, 0.8, 0.4])
    >>> round(r.mean_diff, 3), r.n
    (0.075, 4)
    >>> round(r.ci_low, 3), round(r.ci_high, 3)
    (-0.005, 0.155)
    """
    a = np.asarray(a, dtype=np.float64).ravel()
    b = np.asarray(b, dtype=np.float64).ravel()
    if a.shape != b.shape:
        raise ValueError(f"paired values must have one value per query each, got {a.size} and {b.size}")
    if a.size < 2:
        raise ValueError(f"a paired test needs at least 2 queries, got {a.size}")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("paired values must be finite")
    d = a - b
    ci = (float(d.mean()),) * 2  # every difference equal (0 or not): no spread, the interval is the point
    if not np.any(d):
        t_p = rand_p = 1.0
    else:
        with warnings.catch_warnings():  # near-constant differences: scipy warns, the p-value is still right
            warnings.simplefilter("ignore", RuntimeWarning)
            result = stats.ttest_rel(a, b)
            t_p = float(result.pvalue)
        if not np.isfinite(t_p):  # every difference equal and non-zero: no variance to test with
            t_p = 0.0
        elif np.ptp(d) > 0:
            low, high = result.confidence_interval(0.95)
            ci = (float(low), float(high))
        rand_p = sign_flip_p(d, n_resamples, seed, max_exact_log2)
    return PairedTest(int(d.size), float(a.mean()), float(b.mean()), float(d.mean()), t_p, rand_p, *ci)


def per_query_pairs(values_a: dict, values_b: dict):
    """The queries both systems were measured on, and their two aligned value arrays."""
    queries = sorted(set(values_a) & set(values_b), key=str)
    return queries, np.array([values_a[q] for q in queries]), np.array([values_b[q] for q in queries])


def paired_units(values_a: dict, values_b: dict):
    """(a, b): ``per_query_pairs``' two aligned arrays over the units (queries, questions, seeds) both sides were
    measured on, or None under two units, too few for a paired test."""
    _, a, b = per_query_pairs(values_a, values_b)
    return (a, b) if a.size >= 2 else None
