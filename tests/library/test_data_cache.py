"""The streaming LETOR cache: same content as read_letor, reuse and rebuild, errors that name the
line in the whole file, atomic builds, memory-mapped arrays and memory bounded by one chunk."""

import gzip
import json
import os
import stat
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

from structrank.data import LetorCache, build_letor_cache, open_letor_cache, read_letor
from structrank.data import cache as cache_module
from structrank.errors import DataFormatError
from arrays import dense


def letor_text(n_queries=7, seed=0):
    """A small LETOR file with what real ones have: a header comment, docids, blank lines,
    rows with different features (so chunks parse to matrices of different widths)."""
    rng = np.random.default_rng(seed)
    lines = ["# generated for tests"]
    for q in range(n_queries):
        for r in range(int(rng.integers(1, 6))):
            columns = np.sort(rng.choice(np.arange(1, 10), int(rng.integers(1, 7)), replace=False))
            features = " ".join(f"{j}:{rng.random():.4f}" for j in columns)
            lines.append(f"{rng.integers(0, 5)} qid:{300 + 7 * q} {features} #docid = d{q}-{r}")
        if q % 3 == 0:
            lines.append("")
    return "\n".join(lines) + "\n"


def write(folder, text, name="train.txt"):
    path = folder / name
    raw = text.encode("utf-8")
    path.write_bytes(gzip.compress(raw) if name.endswith(".gz") else raw)
    return path


def numbered_rows(n_rows, bad_line=None, bad_row=""):
    """``n_rows`` good rows, 4 to a query, with ``bad_row`` in place of line ``bad_line``."""
    lines = [f"{i % 3} qid:{i // 4} 1:{i}.5 2:0.25" for i in range(n_rows)]
    if bad_line is not None:
        lines[bad_line - 1] = bad_row
    return "\n".join(lines) + "\n"


def built_at(folder):
    return json.loads((folder / "manifest.json").read_text())["built_at_ns"]


# -- content ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["train.txt", "train.txt.gz"])
def test_round_trip_equals_read_letor_with_queries_across_chunks(tmp_path, name):
    path = write(tmp_path, letor_text(), name)
    expected = read_letor(path, dtype=np.float32)
    cache = open_letor_cache(path, chunk_rows=3)

    assert (cache.n_rows, cache.n_features, cache.n_queries) == (expected.n_rows, expected.n_features, expected.n_queries)
    assert cache.X.shape == expected.X.shape
    assert np.array_equal(dense(cache.X), dense(expected.X))
    assert cache.y.tolist() == expected.y.tolist()
    assert np.asarray(cache.offsets).tolist() == expected.offsets.tolist()
    assert np.asarray(cache.query_ids).tolist() == expected.query_ids.tolist()
    # some query really straddles a chunk boundary (data lines 3 per chunk, blank lines between)
    assert any(np.diff(expected.offsets) > 3)

    dataset = cache.to_dataset()
    assert dataset.qid.tolist() == expected.qid.tolist()
    assert np.array_equal(dense(dataset.X), dense(expected.X))

    X, y, offsets = cache.rows(2, 5)
    lo, hi = cache.query_range(2, 5)
    assert (lo, hi) == (expected.offsets[2], expected.offsets[5])
    assert np.array_equal(dense(X), dense(expected.X[lo:hi]))
    assert y.tolist() == expected.y[lo:hi].tolist()
    assert offsets.tolist() == (expected.offsets[2:6] - lo).tolist()


def test_bom_crlf_and_comment_lines_read_as_read_letor_does(tmp_path):
    text = "\r\n".join(letor_text().split("\n"))
    path = tmp_path / "crlf.txt"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    expected = read_letor(path, dtype=np.float32)
    cache = open_letor_cache(path, chunk_rows=2)
    assert np.array_equal(dense(cache.X), dense(expected.X))
    assert cache.y.tolist() == expected.y.tolist()


def test_arrays_are_memory_mapped_and_X_does_not_copy_them(tmp_path):
    cache = open_letor_cache(write(tmp_path, letor_text()), chunk_rows=4)
    assert isinstance(np.load(cache.folder / "data.npy", mmap_mode="r"), np.memmap)
    for name in ("data", "indices", "indptr", "y", "offsets", "query_ids"):
        array = getattr(cache, name)
        assert isinstance(array, np.memmap), name
        assert array.dtype == cache_module.ARRAY_DTYPES[name], name
    assert isinstance(cache.X, sp.csr_matrix)
    assert np.shares_memory(cache.X.data, cache.data)
    assert np.shares_memory(cache.X.indices, cache.indices)
    # the files are plain .npy: np.load without mmap reads the same
    assert np.load(cache.folder / "y.npy").tolist() == cache.y.tolist()


def test_given_n_features_widens_and_rejects_a_larger_index(tmp_path):
    path = write(tmp_path, letor_text())
    assert open_letor_cache(path, n_features=20).X.shape[1] == 20
    with pytest.raises(DataFormatError, match="n_features=4") as info:
        build_letor_cache(path, n_features=4, chunk_rows=5)
    index = int(info.value.field.removeprefix("feature "))
    assert index > 4
    assert f" {index}:" in path.read_text().split("\n")[info.value.line - 1]


# -- reuse and rebuild -------------------------------------------------------------------------------
def test_cache_is_reused_while_the_source_is_unchanged_and_rebuilt_when_it_changes(tmp_path):
    path = write(tmp_path, letor_text())
    folder = build_letor_cache(path, chunk_rows=4)
    assert folder == tmp_path / "train.txt.structrank-cache"
    first = built_at(folder)
    assert build_letor_cache(path) == folder and built_at(folder) == first
    assert open_letor_cache(path).folder == folder and built_at(folder) == first

    with open(path, "a") as fh:  # a new size
        fh.write("1 qid:999 1:0.5 #docid = new\n")
    cache = open_letor_cache(path)
    assert built_at(folder) != first and cache.n_queries == read_letor(path).n_queries
    second = built_at(folder)

    stat_ = path.stat()  # the same size, another modification time
    os.utime(path, ns=(stat_.st_atime_ns, stat_.st_mtime_ns + 10**9))
    build_letor_cache(path)
    assert built_at(folder) != second
    assert sorted(p.name for p in tmp_path.iterdir()) == ["train.txt", "train.txt.structrank-cache"]


def test_manifest_describes_the_cache(tmp_path):
    path = write(tmp_path, letor_text())
    cache = open_letor_cache(path, chunk_rows=5)
    manifest = json.loads((cache.folder / "manifest.json").read_text())
    assert manifest["format"] == "structrank-letor-cache" and manifest["version"] == 1
    assert manifest["source"] == {"path": str(path.resolve()), "size": path.stat().st_size,
                                  "mtime_ns": path.stat().st_mtime_ns}
    assert (manifest["n_rows"], manifest["n_features"], manifest["n_queries"]) == (cache.n_rows, cache.n_features, cache.n_queries)
    assert manifest["chunk_rows"] == 5


def test_cache_dir_holds_caches_named_by_file_and_path_hash(tmp_path):
    for fold in ("Fold1", "Fold2"):
        (tmp_path / fold).mkdir()
    a = write(tmp_path / "Fold1", letor_text(seed=1))
    b = write(tmp_path / "Fold2", letor_text(seed=2))
    folder_a = build_letor_cache(a, cache_dir=tmp_path / "cache")
    folder_b = build_letor_cache(b, cache_dir=tmp_path / "cache")
    assert folder_a.parent == folder_b.parent == tmp_path / "cache"
    assert folder_a != folder_b
    for folder in (folder_a, folder_b):
        stem, digest = folder.name[: -len(".structrank-cache")].rsplit("-", 1)
        assert stem == "train.txt" and len(digest) == 12 and int(digest, 16) >= 0
    assert not (tmp_path / "Fold1" / "train.txt.structrank-cache").exists()
    assert open_letor_cache(b, cache_dir=tmp_path / "cache").y.tolist() == read_letor(b).y.tolist()


def test_read_only_source_folder_falls_back_to_the_user_cache_dir(tmp_path, monkeypatch):
    data = tmp_path / "data"
    data.mkdir()
    path = write(data, letor_text())
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    if os.geteuid() == 0:  # root may write anywhere: judge by the permission bits chmod set
        monkeypatch.setattr(cache_module, "_can_write", lambda folder: bool(folder.stat().st_mode & stat.S_IWUSR))
    data.chmod(0o555)
    try:
        cache = open_letor_cache(path)
        assert cache.folder.parent == tmp_path / "xdg" / "structrank"
        assert cache.folder.name.startswith("train.txt-")
        assert [p.name for p in data.iterdir()] == ["train.txt"]
        assert open_letor_cache(path).folder == cache.folder
    finally:
        data.chmod(0o755)


# -- atomic builds -------------------------------------------------------------------------------------
def test_interrupted_build_leaves_nothing_that_looks_like_a_cache(tmp_path, monkeypatch):
    path = write(tmp_path, numbered_rows(40))
    calls = []
    real_add = cache_module._ArraysWriter.add

    def add_then_interrupt(self, *chunk):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        real_add(self, *chunk)

    monkeypatch.setattr(cache_module._ArraysWriter, "add", add_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        build_letor_cache(path, chunk_rows=5)
    assert [p.name for p in tmp_path.iterdir()] == ["train.txt"]

    # A hard kill skips the clean-up: the half-built folder stays, under a name nothing opens.
    calls.clear()
    monkeypatch.setattr(cache_module.shutil, "rmtree", lambda *args, **kwargs: None)
    with pytest.raises(KeyboardInterrupt):
        build_letor_cache(path, chunk_rows=5)
    leftovers = [p for p in tmp_path.iterdir() if p.name != "train.txt"]
    assert len(leftovers) == 1 and leftovers[0].name.startswith(".") and leftovers[0].name.endswith(".tmp")
    with pytest.raises(DataFormatError):
        LetorCache.load(leftovers[0])
    monkeypatch.undo()

    cache = open_letor_cache(path, chunk_rows=5)
    assert cache.folder == tmp_path / "train.txt.structrank-cache" and cache.n_rows == 40


@pytest.mark.parametrize("damage", ["no manifest", "truncated array", "other version", "nested manifest"])
def test_a_damaged_cache_is_rebuilt(tmp_path, damage):
    path = write(tmp_path, numbered_rows(30))
    folder = build_letor_cache(path)
    first = built_at(folder)
    if damage == "no manifest":
        (folder / "manifest.json").unlink()
    elif damage == "nested manifest":  # json.loads raises RecursionError
        (folder / "manifest.json").write_text("[" * 100_000 + "]" * 100_000)
    elif damage == "truncated array":
        data = folder / "data.npy"
        data.write_bytes(data.read_bytes()[:-8])
    else:
        manifest = json.loads((folder / "manifest.json").read_text())
        (folder / "manifest.json").write_text(json.dumps({**manifest, "version": 99}))
    with pytest.raises(DataFormatError):
        LetorCache.load(folder)
    assert open_letor_cache(path).n_rows == 30
    assert built_at(folder) != first


def test_npy_header_that_changes_size_moves_the_data_once(tmp_path, monkeypatch):
    real = cache_module._npy_header

    def header(dtype, length):  # as a numpy without growth padding would
        return real(dtype, length) + (b" " * 64 if length == 0 else b"")

    monkeypatch.setattr(cache_module, "_npy_header", header)
    appender = cache_module._NpyAppender(tmp_path / "a.npy", np.dtype("<i8"))
    appender.append(np.arange(5))
    appender.append(np.arange(3))
    appender.close()
    assert np.load(tmp_path / "a.npy").tolist() == [0, 1, 2, 3, 4, 0, 1, 2]


# -- errors name the line in the whole file --------------------------------------------------------------
@pytest.mark.parametrize(
    "bad_row, field, words",
    [
        ("1.5 qid:5 1:0.5", "label", "not a non-negative integer"),
        ("1 qid:5 1:nan 2:0.5", "feature 1", "not finite"),
        ("1 qid:5 1:0.5 2:inf", "feature 2", "not finite"),
        ("1 1:0.5 2:0.5", "qid", "no qid"),
        ("1 qid:x 1:0.5", "qid", "not an integer"),
        ("1 qid:0 1:0.5", "qid", "grouped by query"),
        ("1 qid:5 2:0.5 1:0.5", "feature 1", "indices must increase"),
        ("1 qid:5 1:0.5 junk", None, "not 'index:value'"),
    ],
)
def test_error_in_a_late_chunk_names_the_line_in_the_whole_file(tmp_path, bad_row, field, words):
    # line 23 is data row 23 (query 5), in the 5th chunk of 5 lines
    path = write(tmp_path, numbered_rows(40, bad_line=23, bad_row=bad_row))
    with pytest.raises(DataFormatError) as info:
        build_letor_cache(path, chunk_rows=5)
    assert (info.value.line, info.value.field) == (23, field)
    assert words in str(info.value) and str(path.resolve()) in str(info.value)
    assert not (tmp_path / "train.txt.structrank-cache").exists()


def test_a_qid_back_after_other_queries_names_the_row_where_it_comes_back(tmp_path):
    text = numbered_rows(12) + "\n# a comment\n" + "2 qid:1 1:0.5\n" + numbered_rows(4).replace("qid:0", "qid:50")
    path = write(tmp_path, text)
    with pytest.raises(DataFormatError) as info:
        build_letor_cache(path, chunk_rows=4)
    assert (info.value.line, info.value.field) == (15, "qid")
    assert "must be grouped by query" in str(info.value) and "read_letor" in str(info.value)


def test_files_that_are_not_data(tmp_path):
    with pytest.raises(DataFormatError, match="file not found"):
        build_letor_cache(tmp_path / "missing.txt")
    with pytest.raises(DataFormatError, match="no data rows"):
        build_letor_cache(write(tmp_path, "# only a comment\n\n", "empty.txt"))
    broken = tmp_path / "broken.txt.gz"
    broken.write_bytes(gzip.compress(numbered_rows(2000).encode())[:300])
    with pytest.raises(DataFormatError, match="gzip"):
        build_letor_cache(broken)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.txt.gz", "empty.txt"]


def test_query_range_outside_the_cache_is_an_index_error(tmp_path):
    cache = open_letor_cache(write(tmp_path, numbered_rows(8)))
    assert cache.query_range(0, cache.n_queries) == (0, 8)
    assert cache.rows(1, 1)[0].shape == (0, cache.n_features)
    for q_lo, q_hi in [(-1, 1), (1, 0), (0, cache.n_queries + 1)]:
        with pytest.raises(IndexError):
            cache.query_range(q_lo, q_hi)


# -- memory ----------------------------------------------------------------------------------------------
def test_memory_is_bounded_by_the_chunk_not_the_file(tmp_path):
    n_rows, n_features = 200_000, 8
    rng = np.random.default_rng(0)
    pool = [" ".join(f"{j}:{v:.3f}" for j, v in enumerate(rng.random(n_features), start=1)) for _ in range(256)]
    path = tmp_path / "big.txt"
    with open(path, "w") as fh:
        fh.writelines(f"{i % 5} qid:{i // 25} {pool[i % 256]}\n" for i in range(n_rows))

    tracemalloc.start()
    try:
        folder = build_letor_cache(path, chunk_rows=4_000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    dense_float32 = n_rows * n_features * 4
    assert peak < dense_float32 / 3, f"peak {peak / 1e6:.1f} MB for {dense_float32 / 1e6:.1f} MB of values"
    cache = LetorCache.load(folder)
    assert (cache.n_rows, cache.n_features, cache.n_queries) == (n_rows, n_features, n_rows // 25)
    assert cache.rows(7_999, 8_000)[1].tolist() == [i % 5 for i in range(199_975, 200_000)]
