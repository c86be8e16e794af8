"""The ideal ranking's gains: counted per label level (small labels) or sorted, the same array."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from structrank.metrics import get_convention, query_loops
from structrank.metrics.evaluate import _MAX_LEVEL_TABLE, _ideal_gains


@settings(max_examples=200, deadline=None)
@given(sizes=st.lists(st.integers(0, 12), min_size=1, max_size=6),
       top=st.sampled_from([1, 2, 4, 6, _MAX_LEVEL_TABLE, _MAX_LEVEL_TABLE + 5]),
       convention=st.sampled_from(["letor4", "letor3", "trec", "mslr"]), seed=st.integers(0, 2**16))
def test_counted_ideal_gains_are_the_sorted_gains(sizes, top, convention, seed):
    """Under every convention, letor4's gain 0 above label 2 included (gains not monotone in the label)."""
    conv = get_convention(convention)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    labels = np.random.default_rng(seed).integers(0, top + 1, offsets[-1])
    gains = conv.gains(labels)
    expected = np.concatenate([np.sort(gains[a:b])[::-1] for a, b in zip(offsets[:-1], offsets[1:])] or [[]])
    np.testing.assert_array_equal(_ideal_gains(query_loops, conv, labels, gains, offsets), expected)
    np.testing.assert_array_equal(query_loops.ideal_gains(gains, offsets), expected)


@settings(max_examples=200, deadline=None)
@given(sizes=st.lists(st.integers(0, 40), min_size=1, max_size=8), levels=st.sampled_from([2, 5, 1000]),
       big=st.booleans(), seed=st.integers(0, 2**16))
def test_ranking_by_score_is_a_stable_sort_within_each_query(sizes, levels, big, seed):
    """The radix-then-counting path against a stable argsort per query, ties (few score levels) and
    a file long enough for the radix sort included."""
    rng = np.random.default_rng(seed)
    if big:
        sizes = sizes + [1500]
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    scores = rng.integers(0, levels, offsets[-1]).astype(np.float64) - levels / 2
    scores[rng.random(offsets[-1]) < 0.1] = -0.0
    expected = np.concatenate([a + np.argsort(-scores[a:b], kind="stable")
                               for a, b in zip(offsets[:-1], offsets[1:])] or [[]]).astype(np.int64)
    got = query_loops.rank_segments(scores, offsets, np.zeros((0, 0), np.uint32), False)
    np.testing.assert_array_equal(got, expected)
