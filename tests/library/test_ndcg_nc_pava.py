"""No-clip NDCG on long lists: pooling adjacent violators against the exact table of Fig. 2."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from structrank.metrics.conventions import CONVENTIONS
from structrank.oracles import po


@settings(max_examples=400, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 40), st.integers(1, 60), st.sampled_from(["letor4", "trec"]),
       st.sampled_from([0.0, 0.001, 1.0, 30.0]), st.booleans())
def test_pooling_reaches_the_table_optimum(seed, n_good, n_bad, convention, spread, ties):
    rng = np.random.default_rng(seed)
    draw = (lambda n: rng.integers(0, 3, n).astype(float)) if ties else (lambda n: rng.normal(size=n))
    sg, sb = np.sort(draw(n_good))[::-1] * spread, np.sort(draw(n_bad))[::-1] * spread
    discount = CONVENTIONS[convention].discounts(n_good + n_bad)
    assert po.convex_from_second_rank(discount)
    weight = np.full(n_good, 1.0 / discount[:n_good].sum())
    table = po._interleave(sg, sb, weight, discount, n_good + n_bad)
    pooled = po.pava_interleave(sg, sb, weight, discount)
    assert np.all(np.diff(pooled) >= 0) and pooled.min() >= 0 and pooled.max() <= n_bad
    best, found = (po._objective(sg, sb, weight[0], discount, j) for j in (table, pooled))
    assert abs(best - found) <= 1e-12 * max(1.0, spread)


def test_a_long_list_takes_the_pooling_path_and_agrees_with_the_table():
    """10,000 documents (the table: 9 million cells) through the oracle, against the table itself."""
    from structrank.losses import get_loss

    rng = np.random.default_rng(3)
    s = rng.normal(size=10_000)
    z = (rng.random(10_000) < 0.1).astype(np.int64)
    assert z.sum() * (z.size - z.sum()) > po.PAVA_MIN_PAIRS
    v = get_loss("ndcg-nc", feature_map="po").oracle(s, z)
    good, bad = np.flatnonzero(z)[np.argsort(-s[z == 1], kind="stable")], np.flatnonzero(z == 0)[np.argsort(-s[z == 0], kind="stable")]
    discount = CONVENTIONS["letor4"].discounts(z.size)
    weight = np.full(good.size, 1.0 / discount[:good.size].sum())
    j = po._interleave(s[good], s[bad], weight, discount, z.size)
    loss = 1.0 - float(np.sum(weight * discount[np.arange(good.size) + j]))
    order, coef = np.empty(z.size, np.int64), np.empty(z.size)
    po._merge(good, bad, j, order)
    po.po_coef_from_order(order, z, coef)
    assert abs((v.loss + s @ v.coef) - (loss + s @ coef)) <= 1e-12  # the same maximum of Delta + s . c
