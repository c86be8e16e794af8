"""StructSVMRanker trains on the informative queries' rows in place (no copy of X), on dense and
CSR input alike, with the same bits as on a copy of those rows."""

import re

import numpy as np
import pytest
import scipy.sparse as sp

from structrank.data import make_ranking_dataset
from structrank.data.dataset import rows_of_queries
from structrank.data.filters import queries_with_both
from structrank.errors import DataValidationError
from structrank.learners import StructSVMRanker
from structrank.parallel.rows import csr_index_error, dense_view, matvec, rmatvec


def with_uninformative_queries(seed=0):
    ds = make_ranking_dataset(n_queries=40, random_state=seed)
    y = ds.y.copy()
    for q in range(0, 40, 3):  # every third query: all bad, or all good
        y[ds.offsets[q]:ds.offsets[q + 1]] = 0 if q % 2 else 1
    return ds.X, y, ds.qid, ds.offsets


@pytest.mark.parametrize("loss", ["map", "ndcg", "mrr", "auc", "combo"])
def test_in_place_fit_equals_a_fit_on_the_informative_rows_copied(loss):
    X, y, qid, offsets = with_uninformative_queries()
    keep = queries_with_both(y, offsets)
    assert keep.size < offsets.size - 1
    rows = rows_of_queries(offsets, keep)
    whole = StructSVMRanker(loss=loss, C=10.0).fit(X, y, qid=qid)
    copied = StructSVMRanker(loss=loss, C=10.0).fit(X[rows], y[rows], qid=qid[rows])
    assert whole.n_queries_used_ == copied.n_queries_used_ == keep.size
    assert np.array_equal(whole.coef_, copied.coef_) and whole.n_iter_ == copied.n_iter_


@pytest.mark.parametrize("loss", ["map", "ndcg"])
def test_dense_and_csr_fits_have_the_same_bits(loss):
    X, y, qid, _ = with_uninformative_queries(1)
    X = X.copy()
    X[::7, 2] = 0.0  # zeros that a CSR matrix built from X drops: rows of different lengths
    dense = StructSVMRanker(loss=loss, C=1.0).fit(X, y, qid=qid)
    csr = StructSVMRanker(loss=loss, C=1.0).fit(sp.csr_matrix(X), y, qid=qid)
    assert np.array_equal(dense.coef_, csr.coef_)
    assert np.array_equal(dense.predict(X), csr.predict(sp.csr_matrix(X)))


def test_dense_view_of_a_csr_matrix_that_lists_every_column():
    rng = np.random.default_rng(0)
    A = rng.random((50, 6))
    A[3, 2] = 0.0
    full = sp.csr_matrix((A.ravel(), np.tile(np.arange(6), 50), np.arange(51) * 6), shape=(50, 6))  # zero kept
    view = dense_view(full)
    assert isinstance(view, np.ndarray) and np.shares_memory(view, full.data) and np.array_equal(view, A)
    dropped = sp.csr_matrix(A)  # the zero is not stored: not every column is listed
    assert dense_view(dropped) is not None and sp.issparse(dense_view(dropped))
    w, c = rng.normal(size=6), rng.normal(size=50)
    assert np.array_equal(matvec(view, w), matvec(dropped, w))
    assert np.array_equal(rmatvec(view, c), rmatvec(dropped, c))
    assert dense_view(A) is A


def _malformed(kind):
    """A 4 x 3 CSR matrix with one bad entry: the kernels read indices unchecked, so fit and
    predict must refuse it before they run."""
    data, indices, indptr = np.ones(4), np.array([0, 1, 1, 2], dtype=np.int32), np.array([0, 1, 2, 3, 4])
    if kind == "negative column":
        indices[1] = -1
    elif kind == "column past the last":
        indices[1] = 7
    else:  # decreasing row pointers
        indptr = np.array([0, 2, 1, 3, 4])
    return sp.csr_matrix((data, indices, indptr), shape=(4, 3))


@pytest.mark.parametrize("kind, says", [("negative column", "row 1: column index -1 is outside 0..2"),
                                        ("column past the last", "row 1: column index 7 is outside 0..2"),
                                        ("decreasing pointers", "row 1: its row pointers (indptr) decrease")])
@pytest.mark.parametrize("learner", ["StructSVMRanker", "LatentPerceptronRanker", "PermutationCRFRanker"])
def test_a_malformed_csr_matrix_is_an_error_naming_the_row(kind, says, learner):
    import structrank.learners as learners

    X, y, qid = _malformed(kind), np.array([1, 0, 1, 0]), np.array([1, 1, 2, 2])
    cls = getattr(learners, learner)
    with pytest.raises(DataValidationError, match=f"{learner}.fit: the sparse matrix X is malformed: {re.escape(says)}"):
        cls().fit(X, y, qid=qid)
    model = cls().fit(np.eye(4, 3), y, qid=qid)
    with pytest.raises(DataValidationError, match=f"{learner}.predict: the sparse matrix X is malformed"):
        model.predict(X)


@pytest.mark.parametrize("kind, says", [("column past the last", "row 1: column index 5 is outside 0..1"),
                                        ("repeated column", None),
                                        ("decreasing pointers", "row 1: its row pointers (indptr) decrease")])
def test_a_full_size_malformed_csr_matrix_is_not_taken_as_dense(kind, says):
    """StructSVMRanker takes a CSR matrix that lists every column as its dense view before the checks;
    a matrix with as many entries as cells that does not list every column in order stays CSR and is
    checked (or, with in-range indices, trained on as the CSR it is)."""
    data, indices, indptr = np.arange(1.0, 9.0), np.array([0, 1, 0, 1, 0, 1, 0, 1], dtype=np.int32), np.arange(0, 9, 2)
    if kind == "column past the last":
        indices[3] = 5
    elif kind == "repeated column":
        indices[3] = 0
    else:
        indptr = np.array([0, 4, 2, 6, 8])
    X, y, qid = sp.csr_matrix((data, indices, indptr), shape=(4, 2)), np.array([1, 0, 1, 0]), np.array([1, 1, 2, 2])
    assert sp.issparse(dense_view(X))
    if says is None:
        dense = X.toarray()  # column 0 of row 1 summed from its two entries
        assert np.array_equal(StructSVMRanker().fit(X, y, qid=qid).coef_, StructSVMRanker().fit(dense, y, qid=qid).coef_)
    else:
        with pytest.raises(DataValidationError, match=f"StructSVMRanker.fit: the sparse matrix X is malformed: "
                                                      f"{re.escape(says)}"):
            StructSVMRanker().fit(X, y, qid=qid)


def test_csr_kernels_read_the_indices_unsigned_with_the_same_bits():
    """The unsigned views (no sign check in numba's indexing) change no sum: CSR with rows of
    different lengths, int32 and int64 indices, equals the dense products bit for bit."""
    rng = np.random.default_rng(3)
    A = rng.normal(size=(200, 9)) * (rng.random((200, 9)) < 0.5)
    w, c = rng.normal(size=9), rng.normal(size=200)
    for index_dtype in (np.int32, np.int64):
        X = sp.csr_matrix(A)
        X.indices, X.indptr = X.indices.astype(index_dtype), X.indptr.astype(index_dtype)
        assert csr_index_error(X) is None
        assert np.array_equal(matvec(X, w), matvec(A, w)) and np.array_equal(rmatvec(X, c), rmatvec(A, c))
    assert np.allclose(matvec(A, w), A @ w) and np.allclose(rmatvec(A, c), A.T @ c)
