"""The data preparation of Chakrabarti et al. (2008), Section 4.1: zero rows, near-identical
good/bad pairs, then queries without both labels."""

import json
import math

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from structrank.data import RankingDataset, letor_folds, letor_root, read_letor
from structrank.data.prepare import PreparationReport, prepare_like_chakrabarti

# Hand-built: every row's fate is known. (qid, label, features, what happens to the row)
HAND = [
    (1, 1, [1, 0, 0], "pair"),     # cos with the next bad row ~ 0.99999
    (1, 0, [0, 0, 0], "zero"),
    (1, 0, [2, 0, 0.01], "pair"),
    (1, 1, [0, 1, 0], "kept"),
    (1, 0, [0, 0, 1], "kept"),
    (2, 1, [1, 1, 0], "pair"),     # in two pairs, counted once as a document
    (2, 0, [1, 1, 0], "pair"),     # identical to the good row: cos = 1
    (2, 0, [1, 0.9, 0], "pair"),   # cos 0.9986 with the good row
    (2, 1, [0, 0, 0], "zero"),     # query 2 loses every row
    (3, 1, [1, 0, 0], "pair"),
    (3, 0, [1, 0, 0], "pair"),
    (3, 0, [0, 1, 1], "query"),    # query 3 is left with bad rows only
    (3, 0, [0, 0, 1], "query"),
    (4, 0, [1, 2, 3], "query"),    # query 4 never had a good row
    (4, 0, [3, 2, 1], "query"),
    (5, 1, [1, 2, 3], "kept"),     # good/good and bad/bad duplicates are not pairs
    (5, 2, [1, 2, 3], "kept"),
    (5, 0, [3, 0, 0], "kept"),
    (5, 0, [3, 0, 0], "kept"),
]


def hand_dataset(sparse=False):
    qid = np.array([r[0] for r in HAND])
    y = np.array([r[1] for r in HAND])
    X = np.array([r[2] for r in HAND], dtype=float)
    n = len(HAND)
    return RankingDataset(
        sp.csr_matrix(X) if sparse else X, y, qid,
        docids=[f"d{i}" for i in range(n)], comments=[f"docid = d{i} note {i}" for i in range(n)],
        source="hand.txt",
    )


def dense(X):
    return X.toarray() if sp.issparse(X) else np.asarray(X)


def check_consistent(ds, out, report):
    """The report's arithmetic, and the output's promises."""
    assert report.rows_in == ds.n_rows and report.queries_in == ds.n_queries
    assert (report.rows_in - report.zero_rows_dropped - report.docs_dropped_for_pairs
            - report.rows_dropped_with_queries) == report.rows_out == out.n_rows
    assert report.queries_in - report.queries_dropped == report.queries_out == out.n_queries
    assert len(report.dropped_query_ids) == report.queries_dropped
    assert set(report.dropped_query_ids).isdisjoint(out.query_ids.tolist())
    # d documents split into g good and d - g bad make at most g (d - g) <= d^2 / 4 pairs,
    # and p pairs involve at most 2p documents.
    docs, pairs = report.docs_dropped_for_pairs, report.pairs_over_threshold
    assert 4 * pairs <= docs ** 2 and docs <= 2 * pairs
    assert np.all(np.any(dense(out.X) != 0, axis=1))
    good = out.y >= report.relevant_from
    for piece in out.query_slices():
        assert good[piece].any() and not good[piece].all()


@pytest.mark.parametrize("sparse", [False, True])
def test_hand_built_dataset_drops_exactly_the_known_rows(sparse):
    ds = hand_dataset(sparse)
    out, report = prepare_like_chakrabarti(ds)
    kept = [i for i, r in enumerate(HAND) if r[3] == "kept"]
    assert out.docids.tolist() == [f"d{i}" for i in kept]
    assert out.comments.tolist() == [f"docid = d{i} note {i}" for i in kept]
    assert out.source == "hand.txt"
    assert out.qid.tolist() == [1, 1, 5, 5, 5, 5]
    assert out.y.tolist() == [1, 0, 1, 2, 0, 0]
    assert np.array_equal(dense(out.X), dense(ds.X)[kept])
    assert sp.issparse(out.X) == sparse
    assert report == PreparationReport(
        rows_in=19, zero_rows_dropped=2, pairs_over_threshold=4, docs_dropped_for_pairs=7,
        queries_in=5, queries_dropped=3, dropped_query_ids=(2, 3, 4), rows_dropped_with_queries=4,
        rows_out=6, queries_out=2, threshold=0.99, relevant_from=1,
    )
    check_consistent(ds, out, report)


def test_threshold_and_relevant_from_change_what_is_a_pair():
    ds = hand_dataset()
    # cos 0.9986 (query 2's third row) is under 0.999, cos ~0.99999 (query 1) is not.
    _, report = prepare_like_chakrabarti(ds, threshold=0.999)
    assert (report.pairs_over_threshold, report.docs_dropped_for_pairs) == (3, 6)
    # Cosines are clipped to 1, so threshold 1 finds no pair even for identical vectors.
    _, report = prepare_like_chakrabarti(ds, threshold=1.0)
    assert report.pairs_over_threshold == 0
    # With good = label >= 2 only query 5 has a good row; its duplicate (label 1) is now bad,
    # so the two form a pair and query 5 is left without a good row as well.
    out, report = prepare_like_chakrabarti(ds, relevant_from=2)
    assert (report.pairs_over_threshold, report.docs_dropped_for_pairs) == (1, 2)
    assert report.dropped_query_ids == (1, 2, 3, 4, 5)
    assert out.n_rows == 0 and report.rows_dropped_with_queries == 19 - 2 - 2


def test_nothing_changes_without_zeros_or_near_duplicates():
    rng = np.random.default_rng(0)
    sizes = rng.integers(2, 8, size=6)
    n = int(sizes.sum())
    # Distinct basis vectors are orthogonal (cosine 0); positive scales keep them non-zero.
    X = np.eye(n) * rng.uniform(0.5, 2.0, size=n)[:, None]
    qid = np.repeat(np.arange(10, 16), sizes)
    y = rng.integers(0, 3, size=n)
    y[np.cumsum(sizes) - sizes] = 2  # every query gets a good row...
    y[np.cumsum(sizes) - 1] = 0      # ...and a bad one
    ds = RankingDataset(X, y, qid, docids=[f"x{i}" for i in range(n)], source="s")
    for data in (ds, ds.with_X(sp.csr_matrix(X))):
        out, report = prepare_like_chakrabarti(data)
        assert np.array_equal(dense(out.X), X)
        assert out.y.tolist() == y.tolist() and out.qid.tolist() == qid.tolist()
        assert out.docids.tolist() == ds.docids.tolist()
        assert (report.zero_rows_dropped, report.pairs_over_threshold, report.queries_dropped) == (0, 0, 0)
        assert (report.rows_out, report.queries_out) == (n, 6)


def test_input_is_not_modified():
    ds = hand_dataset(sparse=True)
    before = (dense(ds.X).copy(), ds.y.copy(), ds.qid.copy(), ds.docids.copy())
    prepare_like_chakrabarti(ds)
    assert np.array_equal(dense(ds.X), before[0])
    assert all(np.array_equal(a, b) for a, b in zip((ds.y, ds.qid, ds.docids), before[1:]))


def test_explicitly_stored_zeros_are_zero_rows():
    # A CSR row may store zeros explicitly (a LETOR line "1:0 2:0"); it is still a zero vector.
    X = sp.csr_matrix((np.array([0.0, 0.0, 1.0, 1.0]), np.array([0, 1, 0, 1]), np.array([0, 2, 3, 4])), shape=(3, 2))
    ds = RankingDataset(X, np.array([1, 1, 0]), np.array([1, 1, 1]))
    assert ds.X.nnz == 4
    out, report = prepare_like_chakrabarti(ds)
    assert report.zero_rows_dropped == 1
    assert out.n_rows == 2


def test_empty_dataset():
    ds = RankingDataset(np.zeros((0, 3)), np.zeros(0, dtype=int), np.zeros(0, dtype=int))
    out, report = prepare_like_chakrabarti(ds)
    assert out.n_rows == 0 and report.rows_out == 0 and report.dropped_query_ids == ()


@pytest.mark.parametrize("kwargs", [{"threshold": 1.5}, {"threshold": float("nan")}, {"relevant_from": 0},
                                    {"relevant_from": 1.5}])
def test_bad_parameters(kwargs):
    with pytest.raises(ValueError):
        prepare_like_chakrabarti(hand_dataset(), **kwargs)


def test_report_line_and_dict():
    ds = hand_dataset()
    ds = RankingDataset(ds.X, ds.y, ds.qid.astype(np.int64))
    _, report = prepare_like_chakrabarti(ds)
    line = str(report)
    assert "\n" not in line and line == report.describe()
    for number in ("19 rows", "2 zero rows", "7 docs in 4", "3 queries", "6 rows / 2 queries out"):
        assert number in line
    as_json = json.loads(json.dumps(report.to_dict()))
    assert as_json["dropped_query_ids"] == [2, 3, 4] and as_json["rows_out"] == 6


# -- random data against brute force -------------------------------------------------------

def brute_force(X, y, qid, threshold, relevant_from):
    """Rows kept and pairs counted, by the definitions, one pair at a time."""
    n = len(y)
    good = [label >= relevant_from for label in y]
    zero = [not any(v != 0 for v in row) for row in X]
    keep = [not z for z in zero]
    pairs = 0
    for i in range(n):
        for j in range(n):
            if qid[i] != qid[j] or not good[i] or good[j] or zero[i] or zero[j]:
                continue
            dot = sum(a * b for a, b in zip(X[i], X[j]))
            cos = dot / (math.sqrt(sum(a * a for a in X[i])) * math.sqrt(sum(b * b for b in X[j])))
            assume(abs(cos - threshold) > 1e-9)  # float rounding may differ right at the boundary
            if cos > threshold:
                pairs += 1
                keep[i] = keep[j] = False
    for q in set(qid):
        members = [i for i in range(n) if qid[i] == q and keep[i]]
        if not (any(good[i] for i in members) and any(not good[i] for i in members)):
            for i in members:
                keep[i] = False
    return [i for i in range(n) if keep[i]], pairs


@st.composite
def small_datasets(draw):
    sizes = draw(st.lists(st.integers(1, 7), min_size=1, max_size=6))
    n = sum(sizes)
    # Few distinct values so that zero rows and (near-)duplicates are common.
    values = st.sampled_from([0.0, 0.0, 1.0, 2.0, 0.5, 0.01])
    X = draw(st.lists(st.lists(values, min_size=3, max_size=3), min_size=n, max_size=n))
    y = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    qid = [q for q, size in enumerate(sizes) for _ in range(size)]
    return np.array(X), np.array(y), np.array(qid)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(small_datasets(), st.sampled_from([0.5, 0.9, 0.99]), st.sampled_from([1, 2]))
def test_random_data_agrees_with_brute_force_dense_and_sparse(data, threshold, relevant_from):
    X, y, qid = data
    kept, pairs = brute_force(X.tolist(), y.tolist(), qid.tolist(), threshold, relevant_from)
    ds = RankingDataset(X, y, qid, docids=[f"d{i}" for i in range(len(y))])
    out, report = prepare_like_chakrabarti(ds, threshold=threshold, relevant_from=relevant_from)
    assert out.docids.tolist() == [f"d{i}" for i in kept]
    assert report.pairs_over_threshold == pairs
    assert report.zero_rows_dropped == int(np.sum(~np.any(X != 0, axis=1)))
    check_consistent(ds, out, report)
    sparse_out, sparse_report = prepare_like_chakrabarti(ds.with_X(sp.csr_matrix(X)), threshold, relevant_from)
    assert sparse_report == report
    assert np.array_equal(sparse_out.X.toarray(), out.X)
    # The output is already clean: preparing it again removes nothing.
    again, again_report = prepare_like_chakrabarti(out, threshold, relevant_from)
    assert again_report.rows_out == out.n_rows and again_report.queries_dropped == 0


# -- the real data ---------------------------------------------------------------------------

@pytest.mark.data
@pytest.mark.parametrize("name", ["OHSUMED", "MQ2008"])
def test_on_letor_fold1_train(data_root, name):
    ds = read_letor(letor_folds(letor_root(name, data_root))[0].train)
    out, report = prepare_like_chakrabarti(ds)
    print(f"{name} Fold1 train: {report}")
    check_consistent(ds, out, report)
    # Independent counts: zero rows by the sum of absolute values (LETOR features are >= 0)...
    assert report.zero_rows_dropped == int((abs(ds.X).sum(axis=1) == 0).sum())
    # ...and every query that never had a relevant document is among the dropped ones.
    without_relevant = {q for q, sl in zip(ds.query_ids.tolist(), ds.query_slices()) if ds.y[sl].max() < 1}
    assert without_relevant <= set(report.dropped_query_ids)
    # Dense and CSR agree on real data too.
    other = dense(ds.X) if sp.issparse(ds.X) else sp.csr_matrix(ds.X)
    assert prepare_like_chakrabarti(ds.with_X(other))[1] == report


def test_dropping_only_the_bad_document_of_a_pair_keeps_every_good_one():
    ds = hand_dataset()
    both, report_both = prepare_like_chakrabarti(ds)
    out, report = prepare_like_chakrabarti(ds, drop="bad")
    assert report.pairs_over_threshold == report_both.pairs_over_threshold
    # only bad documents go for pairs: fewer rows than with both, none of them good
    assert report.docs_dropped_for_pairs < report_both.docs_dropped_for_pairs
    assert set(both.docids.tolist()) <= set(out.docids.tolist())
    gone = set(ds.docids.tolist()) - set(out.docids.tolist())
    nonzero = np.any(dense(ds.X) != 0, axis=1)
    kept_queries = set(out.qid.tolist())
    for i, docid in enumerate(ds.docids.tolist()):
        if ds.y[i] >= 1 and nonzero[i] and ds.qid[i] in kept_queries:
            assert docid not in gone
    with pytest.raises(ValueError, match="drop must be"):
        prepare_like_chakrabarti(ds, drop="good")
