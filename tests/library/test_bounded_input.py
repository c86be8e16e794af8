"""Reading is bounded for any input (issue 24, point 4; docs/GRAMMAR.md "Limits"): non-regular
files are refused without blocking, gzip expansion and line length are capped, blank lines cost
nothing, and feature indices have a documented, overridable limit."""

import gzip
import os
import re
import subprocess
import sys
import threading
import zlib

import pytest

from cli_checks import NO_OPEN_FILES, PYTHON
from structrank.data.cache import build_letor_cache
from structrank.data.letor import INDEX_CEILING, MAX_FEATURE_INDEX, read_letor, read_scores
from structrank.errors import DataFormatError
from structrank.metrics.trec import read_run

pytestmark = NO_OPEN_FILES

LETOR = b"2 qid:1 1:0.5 2:0.1\n0 qid:1 1:0.2 2:0.9\n1 qid:2 1:0.3 2:0.4\n0 qid:2 1:0.1 2:0.2\n"


def finishes(call, seconds=20):
    """The exception ``call`` raised, failing the test if it is still running after ``seconds``."""
    outcome = {}

    def target():
        try:
            call()
        except BaseException as exc:  # noqa: BLE001  (handed to the test)
            outcome["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still reading after {seconds} s"
    return outcome.get("error")


READERS = {
    "read_letor": read_letor,
    "cache": lambda path: build_letor_cache(path, cache_dir=os.environ["BOUNDED_TMP"]),
    "read_scores": read_scores,
    "read_run": read_run,
}


@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_fifo_without_a_writer_is_refused_not_waited_on(tmp_path, monkeypatch, reader):
    monkeypatch.setenv("BOUNDED_TMP", str(tmp_path / "cache"))
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    error = finishes(lambda: READERS[reader](fifo))
    assert isinstance(error, DataFormatError) and "is a FIFO (named pipe), not a regular file" in str(error), error


@pytest.mark.parametrize("reader", sorted(READERS))
def test_dev_zero_is_refused_not_read_forever(tmp_path, monkeypatch, reader):
    monkeypatch.setenv("BOUNDED_TMP", str(tmp_path / "cache"))
    error = finishes(lambda: READERS[reader]("/dev/zero"))
    assert isinstance(error, DataFormatError) and "is a character device" in str(error), error


def test_the_cli_refuses_a_fifo_as_data_in_one_line(tmp_path):
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    (tmp_path / "s.txt").write_text("0.5\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.run([*PYTHON, "-m", "structrank.cli", "evaluate", "--data", str(fifo), "--scores",
                           str(tmp_path / "s.txt")], capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode != 0
    assert "FIFO" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


def newline_bomb(n_bytes: int, row: bytes = b"") -> bytes:
    """A gzip of ``n_bytes`` newlines (then ``row``), made block by block."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = b"\n" * (1 << 20)
    parts = [packer.compress(block) for _ in range(n_bytes >> 20)]
    return b"".join(parts) + packer.compress(row) + packer.flush()


def test_the_477_kb_gzip_of_newlines_is_refused_after_reading_no_more_than_its_limit(tmp_path, monkeypatch):
    """It used to take 4.5 GB and not end. The bound is on the bytes expanded (at most the limit and one
    block), not on seconds: how fast a refusal is belongs to a bench, not to a test a busy machine can fail."""
    import gzip as gzip_module

    from structrank.files import gzip_limits

    path = tmp_path / "bomb.txt.gz"
    path.write_bytes(newline_bomb(480 << 20))
    assert path.stat().st_size < 600_000
    most = gzip_limits(path.stat().st_size)[0]
    expanded = []
    read = gzip_module.GzipFile.read

    def counting_read(self, *args):
        block = read(self, *args)
        expanded.append(len(block))
        return block

    monkeypatch.setattr(gzip_module.GzipFile, "read", counting_read)
    for reader in (read_letor, lambda p: build_letor_cache(p, cache_dir=tmp_path / "cache")):
        expanded.clear()
        error = finishes(lambda: reader(path), seconds=900)  # a liveness guard only: it must end
        assert isinstance(error, DataFormatError), error
        assert re.search(r"bomb.txt.gz: gzip data expands past .* STRUCTRANK_GZIP_MAX_RATIO", str(error)), error
        assert most < sum(expanded) <= most + max(expanded) < (480 << 20) // 4, (most, sum(expanded))


def test_the_gzip_ratio_is_overridable_and_blank_lines_are_then_skipped(tmp_path, monkeypatch):
    path = tmp_path / "blank.txt.gz"
    path.write_bytes(newline_bomb(80 << 20, LETOR))  # past the 64 MiB floor, about 1000-fold
    with pytest.raises(DataFormatError, match="expands past"):
        read_letor(path)
    monkeypatch.setenv("STRUCTRANK_GZIP_MAX_RATIO", "5000")
    ds = read_letor(path)
    assert ds.n_rows == 4 and ds.n_queries == 2


def test_blank_lines_allocate_nothing_per_line():
    # The parser used to size its row arrays by newlines: 73 bytes each, 730 MB for 10**7 blank lines.
    code = ("import resource\nfrom structrank.data import svmlight\n"
            "svmlight.parse(b'1 qid:1 1:1\\n', 100)\n"
            "raw = b'\\n' * 10**7 + b'1 qid:1 1:1\\n'\n"
            "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
            "rows = svmlight.parse(raw, 100)\n"
            "assert rows['labels'].size == 1 and rows['line_numbers'][0] == 10**7 + 1\n"
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env, check=True)
    grown_kib = int(out.stdout.split()[-1])
    assert grown_kib < 100_000, f"parsing 10 MB of blank lines took {grown_kib} KiB more"


def test_a_line_longer_than_the_limit_is_refused_with_its_line(tmp_path, monkeypatch):
    monkeypatch.setenv("STRUCTRANK_MAX_LINE_BYTES", "1000")
    long_row = b"0 qid:2 " + b" ".join(b"%d:0.5" % i for i in range(1, 400)) + b"\n"
    text = LETOR + long_row
    (tmp_path / "long.txt.gz").write_bytes(gzip.compress(text))
    with pytest.raises(DataFormatError, match=r"long.txt.gz, line 5: a line longer than 1,000 bytes"):
        read_letor(tmp_path / "long.txt.gz")
    (tmp_path / "long.txt").write_bytes(text)
    with pytest.raises(DataFormatError, match=r"long.txt, line 5: a line longer than 1,000 bytes"):
        build_letor_cache(tmp_path / "long.txt", cache_dir=tmp_path / "cache", chunk_rows=2)
    (tmp_path / "zeros.txt.gz").write_bytes(gzip.compress(b"\0" * (1 << 20)))  # one endless line
    with pytest.raises(DataFormatError, match=r"zeros.txt.gz, line 1: a line longer than"):
        build_letor_cache(tmp_path / "zeros.txt.gz", cache_dir=tmp_path / "cache")
    monkeypatch.setenv("STRUCTRANK_MAX_LINE_BYTES", "5000")
    assert read_letor(tmp_path / "long.txt.gz").n_rows == 5


TINY = b"1 qid:1 1:0.5 100000000:1\n0 qid:1 1:0.1\n"  # the 68-byte file: one index of 10**8


def test_a_feature_index_past_the_limit_is_refused_naming_line_and_field(tmp_path):
    path = tmp_path / "tiny.txt"
    path.write_bytes(TINY)
    message = (rf"tiny.txt, line 1, feature 100000000: feature index 100000000 exceeds the largest supported index "
               rf"{MAX_FEATURE_INDEX} .*STRUCTRANK_MAX_FEATURE_INDEX")
    with pytest.raises(DataFormatError, match=message):
        read_letor(path)
    with pytest.raises(DataFormatError, match=message):
        build_letor_cache(path, cache_dir=tmp_path / "cache")


def test_the_feature_index_limit_is_overridable_up_to_int32(tmp_path, monkeypatch):
    path = tmp_path / "tiny.txt"
    path.write_bytes(TINY)
    assert read_letor(path, max_feature_index=10**8).X.shape == (2, 10**8)
    monkeypatch.setenv("STRUCTRANK_MAX_FEATURE_INDEX", str(10**8))
    assert read_letor(path).X.shape == (2, 10**8)
    widest = tmp_path / "widest.txt"
    widest.write_bytes(b"1 qid:1 %d:1\n" % INDEX_CEILING)
    assert read_letor(widest, max_feature_index=INDEX_CEILING).X.shape == (1, INDEX_CEILING)
    for bad in (INDEX_CEILING + 1, 0, "1_0"):
        with pytest.raises(ValueError, match=r"max_feature_index must be an integer from 1 to 2147483647"):
            read_letor(path, max_feature_index=bad)
    monkeypatch.setenv("STRUCTRANK_MAX_FEATURE_INDEX", "lots")
    with pytest.raises(ValueError, match=r"STRUCTRANK_MAX_FEATURE_INDEX must be an integer"):
        read_letor(path)


def test_the_scale_bench_times_reading_with_peak_memory(tmp_path):
    from structrank_lab.bench.scale import SCALE_TASKS, _task, write_synthetic_letor

    assert "read" in SCALE_TASKS
    path = write_synthetic_letor(tmp_path / "s.txt", 500)
    seconds, peak_mb, extra = _task("read", str(path))
    assert extra == {"rows": 500} and seconds > 0 and peak_mb > 0


def test_exact_positional_inference_refuses_a_query_past_its_dp_limit(monkeypatch):
    """LSP-AP*'s DP is (relevant + 1) x (others + 1) cells: a query past the limit is refused with its
    index, rows and sizes before any cell is allocated; the greedy inference still runs on it."""
    import numpy as np

    from structrank.errors import DataValidationError
    from structrank.learners import LatentPerceptronRanker
    from structrank.oracles import positional

    monkeypatch.setattr(positional, "MAX_EXACT_CELLS", 50)
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(24, 3)), np.tile([1, 0, 0], 8)
    qid = np.repeat([1, 2], [4, 20])  # query 1 (rows 4-23): 6 relevant, 14 others: 7 x 15 = 105 cells
    with pytest.raises(DataValidationError, match=r"query 1 \(rows 4-23\) has 6 relevant and 14 other.*105 DP cells"
                       r".*inference='greedy'"):
        LatentPerceptronRanker(inference="exact", max_epochs=1).fit(X, y, qid=qid)
    LatentPerceptronRanker(inference="greedy", max_epochs=1).fit(X, y, qid=qid)


def test_graded_dense_dorm_refuses_a_query_past_its_assignment_limit(monkeypatch):
    import numpy as np

    from structrank.errors import DataValidationError
    from structrank.learners import StructSVMRanker
    from structrank.oracles import dorm

    monkeypatch.setattr(dorm, "MAX_ASSIGNMENT_SIDE", 10)
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(20, 3)), np.tile([2, 1, 0, 0], 5)
    qid = np.repeat([1, 2], [8, 12])
    with pytest.raises(DataValidationError, match=r"query 1 \(rows 8-19\).*12 x 12 assignment.*dorm_cut"):
        StructSVMRanker(loss="ndcg", max_iter=2, loss_params={"feature_map": "dorm", "gain": "exp2"}).fit(X, y, qid=qid)
    StructSVMRanker(loss="ndcg", max_iter=2, loss_params={"feature_map": "dorm", "gain": "exp2", "dorm_cut": 5}).fit(X, y, qid=qid)


def test_standard_input_is_read_with_a_bound(monkeypatch):
    """'-' reads standard input in blocks: zeros without a newline end at the line limit, a stream
    past the byte limit is refused, and a well-formed input (text or gzip) reads as before."""
    import io

    from structrank import files

    monkeypatch.setenv("STRUCTRANK_MAX_LINE_BYTES", "4096")
    with pytest.raises(DataFormatError, match=r"<stdin>.*line longer than 4,096 bytes"):
        files.read_stdin(files.Path("<stdin>"), io.BytesIO(b"\0" * 100_000))
    monkeypatch.setenv("STRUCTRANK_MAX_STDIN_BYTES", "1000")
    with pytest.raises(DataFormatError, match=r"more than 1,000 bytes on standard input.*STRUCTRANK_MAX_STDIN_BYTES"):
        files.read_stdin(files.Path("<stdin>"), io.BytesIO(b"1 qid:1 1:0.5\n" * 100))
    text = b"1 qid:1 1:0.5\n0 qid:1 1:0.25\n"
    assert files.read_stdin(files.Path("<stdin>"), io.BytesIO(text)) == text
    packed = gzip.compress(b"\n" * 500)  # a gzip's bytes are not lines: only its expansion is checked
    assert files.read_stdin(files.Path("<stdin>"), io.BytesIO(packed)) == packed


def test_the_cli_reads_dev_zero_on_standard_input_to_a_one_line_error(tmp_path):
    scores = tmp_path / "s.txt"
    scores.write_text("0.5\n")
    with open("/dev/zero", "rb") as zero:
        done = subprocess.run([*PYTHON, "-m", "structrank", "evaluate", "--data", "-", "--scores", str(scores)],
                              stdin=zero, capture_output=True, text=True, timeout=120,
                              env={**os.environ, "STRUCTRANK_MAX_LINE_BYTES": "65536"})
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert "<stdin>" in done.stderr and "line longer than 65,536 bytes" in done.stderr
