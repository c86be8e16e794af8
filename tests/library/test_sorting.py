"""The oracles' radix sort is numpy's stable argsort by decreasing score."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from structrank.sorting import RADIX_MIN, order_desc

SPECIAL = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, 5e-324, -5e-324, 1.7e308, -1.7e308, 0.5, 2.0]


@settings(max_examples=60, deadline=None)
@given(n=st.sampled_from([0, 1, 7, RADIX_MIN - 1, RADIX_MIN, RADIX_MIN + 1, 3 * RADIX_MIN]),
       kind=st.sampled_from(["normal", "few values", "special", "huge and tiny"]), seed=st.integers(0, 2**16))
def test_order_desc_is_the_stable_argsort_of_minus_the_scores(n, kind, seed):
    """Ties (many, in "few values"), -0.0 against 0.0, infinities and subnormals included."""
    rng = np.random.default_rng(seed)
    if kind == "normal":
        s = rng.normal(size=n)
    elif kind == "few values":
        s = rng.integers(-2, 3, n).astype(np.float64)
    elif kind == "special":
        s = rng.choice(SPECIAL, n)
    else:
        s = rng.normal(size=n) * 10.0 ** rng.integers(-300, 300, n)
    np.testing.assert_array_equal(order_desc(s), np.argsort(-s, kind="stable"))


def test_a_strided_view_sorts_as_its_copy():
    s = np.random.default_rng(0).normal(size=4 * RADIX_MIN)[::2]
    np.testing.assert_array_equal(order_desc(s), np.argsort(-s, kind="stable"))
