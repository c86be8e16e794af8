"""The data layer: LETOR reading and writing, errors that name file, line and field, folds, filters."""

import gzip
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from structrank.data import (
    RankingDataset,
    cap_candidates,
    drop_queries_without_irrelevant,
    drop_queries_without_relevant,
    keep_queries_with_both,
    letor_folds,
    letor_root,
    make_ranking_dataset,
    read_letor,
    read_scores,
    write_letor,
    write_scores,
)
from structrank.errors import DataFormatError, DataValidationError
from arrays import dense

GOOD = (
    "2 qid:10 1:0.5 2:1 3:0.25 #docid = d1 inc = 1 prob = 0.5\n"
    "0 qid:10 1:0.1 2:0 3:0.75 #docid = d2 inc = 0 prob = 0.1\n"
    "1 qid:11 1:0.3 2:0.2 3:0 #docid = d3\n"
)


def write(tmp_path, text, name="data.txt"):
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def test_reads_labels_qids_features_and_docids(tmp_path):
    ds = read_letor(write(tmp_path, GOOD))
    assert ds.y.tolist() == [2, 0, 1]
    assert ds.qid.tolist() == [10, 10, 11]
    assert ds.offsets.tolist() == [0, 2, 3]
    assert ds.docids.tolist() == ["d1", "d2", "d3"]
    assert ds.comments[0] == "docid = d1 inc = 1 prob = 0.5"
    assert np.allclose(dense(ds.X), [[0.5, 1, 0.25], [0.1, 0, 0.75], [0.3, 0.2, 0]])


def test_gzip_crlf_blank_lines_and_bom_load_the_same(tmp_path):
    plain = read_letor(write(tmp_path, GOOD))
    variants = {
        "g.txt.gz": gzip.compress(GOOD.encode()),
        "crlf.txt": GOOD.replace("\n", "\r\n").encode(),
        "blank.txt": ("\n\n" + GOOD.replace("\n", "\n\n")).encode(),
        "bom.txt": b"\xef\xbb\xbf" + GOOD.encode(),
        "comment.txt": ("# a header comment\n" + GOOD).encode(),
    }
    for name, raw in variants.items():
        ds = read_letor(write(tmp_path, raw, name))
        assert ds.y.tolist() == plain.y.tolist(), name
        assert ds.docids.tolist() == plain.docids.tolist(), name
        assert np.array_equal(dense(ds.X), dense(plain.X)), name


def test_write_then_read_round_trip(tmp_path):
    ds = read_letor(write(tmp_path, GOOD))
    for name in ("out.txt", "out.txt.gz"):
        write_letor(tmp_path / name, ds)
        again = read_letor(tmp_path / name)
        assert again.y.tolist() == ds.y.tolist() and again.qid.tolist() == ds.qid.tolist()
        assert again.comments.tolist() == ds.comments.tolist()
        assert np.array_equal(dense(again.X), dense(ds.X))
    synthetic = make_ranking_dataset(n_queries=5, random_state=3)
    write_letor(tmp_path / "s.txt", synthetic)
    again = read_letor(tmp_path / "s.txt")
    assert np.array_equal(dense(again.X), synthetic.X)  # shortest repr: floats round-trip exactly
    assert again.docids.tolist() == synthetic.docids.tolist()


def test_groups_from_lightgbm_query_file(tmp_path):
    path = write(tmp_path, "1 1:0.5\n0 1:0.1\n0 1:0.2\n2 1:0.9\n")
    write(tmp_path, "3\n1\n", "data.txt.query")
    ds = read_letor(path)
    assert ds.offsets.tolist() == [0, 3, 4]
    assert ds.docids is None


def test_query_file_sizes_must_add_up(tmp_path):
    path = write(tmp_path, "1 1:0.5\n0 1:0.1\n")
    write(tmp_path, "3\n", "data.txt.query")
    with pytest.raises(DataFormatError, match=r"data.txt.query: group sizes add up to 3, but the data file has 2 rows"):
        read_letor(path)


def test_rows_without_qid_and_without_query_file(tmp_path):
    with pytest.raises(DataFormatError, match=r"data.txt, line 1, qid: rows carry no qid and there is no FILE.query"):
        read_letor(write(tmp_path, "1 1:0.5\n0 1:0.1\n"))


@pytest.mark.parametrize(
    "text, expected",
    [
        ("1 qid:1 1:0.5\n0 qid:1 1:0.1 garbage\n", r"line 2: token 4 'garbage' is not 'index:value'"),
        ("1 qid:1 1:0.5\n0 1:0.1\n", r"line 2, qid: no qid on this row while other rows have one"),
        ("1 qid:1 1:0.5\n0 qid:abc 1:0.1\n", r"line 2, qid: 'abc' is not an integer"),
        ("1 qid:1 1:0.5 2:x\n", r"line 1, feature 2: 'x' is not a number"),
        ("1 qid:1 1:0.5\n1 qid:1 1:nan\n", r"line 2, feature 1: value nan is not finite"),
        ("1 qid:1 1:0.5\n1 qid:1 1:1 2:inf\n", r"line 2, feature 2: value inf is not finite"),
        ("1.5 qid:1 1:0.5\n", r"line 1, label: label 1.5 is not a non-negative integer"),
        ("-1 qid:1 1:0.5\n", r"line 1, label: label -1 is not a non-negative integer"),
        ("x qid:1 1:0.5\n", r"line 1, label: 'x' is not a number"),
        ("1 qid:1 1:0.5\n1 qid:1 2:0.5 1:0.3\n", r"line 2, feature 1: feature index 1 after 2: indices must increase"),
        ("1 qid:1 -1:0.5\n", r"line 1, feature -1: feature index -1 < 0"),
        ("", r"holds no data rows \(empty file\)"),
        ("\n\n# only a comment\n", r"holds no data rows \(empty file\)"),
    ],
)
def test_bad_input_names_file_line_and_problem(tmp_path, text, expected):
    with pytest.raises(DataFormatError, match=expected) as info:
        read_letor(write(tmp_path, text, "bad.txt"))
    assert str(info.value).startswith(str(tmp_path / "bad.txt"))


def test_truncated_gzip_is_a_clear_error(tmp_path):
    raw = gzip.compress(GOOD.encode() * 50)
    with pytest.raises(DataFormatError, match=r"corrupt or truncated gzip"):
        read_letor(write(tmp_path, raw[: len(raw) // 2], "cut.txt.gz"))


def test_missing_file(tmp_path):
    with pytest.raises(DataFormatError, match=r"nope.txt: file not found$"):
        read_letor(tmp_path / "nope.txt")
    # the file is there compressed (LETOR's and WikiQA's ship as .gz), or the other way round: the error says so
    write(tmp_path, gzip.compress(GOOD.encode()), "train.txt.gz")
    with pytest.raises(DataFormatError, match=r"train.txt: file not found \(there is train.txt.gz beside it"):
        read_letor(tmp_path / "train.txt")
    write(tmp_path, GOOD, "vali.txt")
    with pytest.raises(DataFormatError, match=r"vali.txt.gz: file not found \(there is vali.txt beside it"):
        read_letor(tmp_path / "vali.txt.gz")


def test_non_contiguous_qids_are_grouped_stably_with_a_warning(tmp_path):
    text = "1 qid:5 1:1\n0 qid:6 1:2\n2 qid:5 1:3\n0 qid:6 1:4\n"
    with pytest.warns(UserWarning, match="not contiguous"):
        ds = read_letor(write(tmp_path, text))
    assert ds.qid.tolist() == [5, 5, 6, 6]
    assert dense(ds.X).ravel().tolist() == [1, 3, 2, 4]
    # Scores computed in dataset order go back to the file's order.
    assert ds.to_file_order(np.array([10.0, 30.0, 20.0, 40.0])).tolist() == [10, 20, 30, 40]


def test_scores_file_errors(tmp_path):
    assert read_scores(write(tmp_path, "1.5\n-2\n3e-1\n", "s.txt"), n_rows=3).tolist() == [1.5, -2, 0.3]
    with pytest.raises(DataFormatError, match=r"s2.txt: has 2 scores but data.txt has 3 rows"):
        read_scores(write(tmp_path, "1\n2\n", "s2.txt"), n_rows=3, data_path="data.txt")
    with pytest.raises(DataFormatError, match=r"s3.txt, line 2, score: 'abc' is not a number"):
        read_scores(write(tmp_path, "1\nabc\n", "s3.txt"))
    with pytest.raises(DataFormatError, match=r"s4.txt, line 1, score: score nan is not finite"):
        read_scores(write(tmp_path, "nan\n", "s4.txt"))
    scores = np.random.default_rng(0).normal(size=20)
    write_scores(tmp_path / "w.txt", scores)
    assert np.array_equal(read_scores(tmp_path / "w.txt"), scores)


def test_dataset_validation():
    with pytest.raises(DataValidationError, match="one entry per row"):
        RankingDataset(np.zeros((3, 2)), [0, 1], [1, 1, 1])
    with pytest.raises(DataValidationError, match="not contiguous"):
        RankingDataset(np.zeros((3, 2)), [0, 1, 0], [1, 2, 1])
    with pytest.raises(DataValidationError, match="row 0: label 0.5 is not a non-negative integer"):
        RankingDataset(np.zeros((2, 2)), [0.5, 1], [1, 1])
    with pytest.raises(DataValidationError, match="NaN or infinite"):
        RankingDataset(np.array([[np.nan]]), [0], [1])


def test_filters_and_caps():
    ds = RankingDataset(np.arange(9.0)[:, None], [0, 0, 1, 1, 1, 0, 0, 0, 2], [1, 1, 2, 2, 3, 3, 3, 4, 4])
    assert drop_queries_without_relevant(ds).query_ids.tolist() == [2, 3, 4]
    assert drop_queries_without_irrelevant(ds).query_ids.tolist() == [1, 3, 4]
    both = keep_queries_with_both(ds)
    assert both.query_ids.tolist() == [3, 4] and both.X.ravel().tolist() == [4, 5, 6, 7, 8]
    capped = cap_candidates(ds, 2)
    assert capped.query_sizes().tolist() == [2, 2, 2, 2] and capped.X.ravel().tolist() == [0, 1, 2, 3, 4, 5, 7, 8]
    sampled = cap_candidates(ds, 1, random_state=0)
    assert sampled.query_sizes().tolist() == [1, 1, 1, 1]


def test_synthetic_generator_is_seeded():
    a = make_ranking_dataset(n_queries=30, no_relevant_fraction=0.3, random_state=7)
    b = make_ranking_dataset(n_queries=30, no_relevant_fraction=0.3, random_state=7)
    assert np.array_equal(a.X, b.X) and np.array_equal(a.y, b.y)
    assert set(np.unique(a.y)) == {0, 1, 2}
    assert a.summary()["queries_without_relevant"] > 0
    sparse = make_ranking_dataset(n_queries=5, sparse=True, random_state=0)
    assert sp.issparse(sparse.X)


def test_mq2008_and_ohsumed_counts_match_provenance(data_root):
    """Counts from ../shared/data/letor/PROVENANCE.md, read by our reader."""
    folds = letor_folds(letor_root("MQ2008", data_root))
    assert [f.name for f in folds] == [f"Fold{i}" for i in range(1, 6)]
    train = read_letor(folds[0].train)
    summary = train.summary()
    assert (summary["rows"], summary["queries"], summary["features"]) == (9630, 471, 46)
    assert summary["labels"] == {0: 7820, 1: 1223, 2: 587}
    assert summary["queries_without_relevant"] == 132
    assert train.docids[0].startswith("GX")
    total = sum(read_letor(f.test).n_queries for f in folds)
    assert total == 784
    ohsumed = letor_folds(letor_root("OHSUMED", data_root))
    test = read_letor(ohsumed[0].test)
    assert (test.n_rows, test.n_queries, test.n_features) == (3383, 22, 45)
    assert int((np.asarray(test.X.sum(axis=1)).ravel() == 0).sum()) == 266


def test_letor_root_and_folds_missing(tmp_path):
    assert letor_root("MQ2008", tmp_path) is None
    with pytest.raises(FileNotFoundError, match="no Fold1..FoldK"):
        letor_folds(tmp_path)
    (tmp_path / "Fold1").mkdir()
    (tmp_path / "Fold1" / "train.txt").write_text(GOOD)
    with pytest.raises(FileNotFoundError, match="lacks a train or a test"):
        letor_folds(tmp_path)
    (tmp_path / "Fold1" / "test.txt.gz").write_bytes(gzip.compress(GOOD.encode()))
    fold = letor_folds(tmp_path)[0]
    assert fold.vali is None and fold.test.name == "test.txt.gz"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert read_letor(fold.test).n_rows == 3


def test_letor_root_finds_td2003_as_distributed_with_normalisation_variants(tmp_path):
    """TD2003/TD2004 (LETOR 3.0 Gov) unpack into QueryLevelNorm/, NoNorm/...: QueryLevelNorm is read."""
    for variant in ("QueryLevelNorm", "NoNorm"):
        fold = tmp_path / "letor" / "TD2003" / variant / "Fold1"
        fold.mkdir(parents=True)
        for split in ("train", "vali", "test"):
            (fold / f"{split}.txt").write_text("0 qid:1 1:0.5 #docid = a\n1 qid:1 1:0.7 #docid = b\n")
    root = letor_root("TD2003", tmp_path)
    assert root == tmp_path / "letor" / "TD2003" / "QueryLevelNorm"
    assert [f.name for f in letor_folds(root)] == ["Fold1"]
    assert letor_root("TD2004", tmp_path) is None


def test_zero_based_files_are_detected_or_refused_on_request(tmp_path):
    path = write(tmp_path, "1 qid:1 0:0.5 2:1\n0 qid:1 1:0.2\n", "zero.txt")
    ds = read_letor(path)
    assert ds.X.shape[1] == 3 and dense(ds.X)[0].tolist() == [0.5, 0.0, 1.0]
    with pytest.raises(DataFormatError, match=r"line 1, feature 0: feature index 0 < 1 \(indices are 1-based\)"):
        read_letor(path, zero_based=False)
    one = read_letor(write(tmp_path, "1 qid:1 1:0.5\n0 qid:1 2:0.2\n", "one.txt"))
    assert dense(one.X)[0].tolist() == [0.5, 0.0]  # no index 0 anywhere: one-based, as LETOR


def test_write_letor_writes_the_group_file_beside_it(tmp_path):
    from structrank.data import make_ranking_dataset, write_letor

    ds = make_ranking_dataset(n_queries=4, random_state=0)
    write_letor(tmp_path / "out.txt", ds, query_file=True)
    sizes = [int(line) for line in (tmp_path / "out.txt.query").read_text().split()]
    assert sizes == np.diff(ds.offsets).tolist()
    assert not (tmp_path / "plain.txt.query").exists()


def test_a_dataframe_with_a_qid_column_stands_for_x_and_qid():
    pd = pytest.importorskip("pandas", reason="DataFrames are an optional input type")
    from structrank.data import make_ranking_dataset
    from structrank.learners import StructSVMRanker

    ds = make_ranking_dataset(n_queries=10, n_features=4, random_state=0)
    frame = pd.DataFrame(dense(ds.X), columns=list("abcd"))
    frame["qid"] = ds.qid
    from_frame = StructSVMRanker(loss="map").fit(frame, ds.y)
    from_arrays = StructSVMRanker(loss="map").fit(ds.X, ds.y, qid=ds.qid)
    np.testing.assert_allclose(from_frame.coef_, from_arrays.coef_)
    np.testing.assert_allclose(from_frame.predict(frame), from_arrays.predict(ds.X))
    assert from_frame.score(frame, ds.y) == pytest.approx(from_arrays.score(ds.X, ds.y, qid=ds.qid))
    with pytest.raises(Exception, match="qid column and qid is given too"):
        StructSVMRanker().fit(frame, ds.y, qid=ds.qid)
