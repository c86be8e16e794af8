"""Every error is one line (issue 24, point 5): no traceback escapes a command, and the line names
the file or the parameter. STRUCTRANK_DEBUG=1 still gives the traceback."""

import os
import subprocess
import sys

import pytest

from cli_checks import NO_OPEN_FILES, PYTHON, one_line, trained_letor
from structrank.cli import main
from structrank_lab.experiments import ResultStore, RunSpec

pytestmark = NO_OPEN_FILES


@pytest.fixture(scope="module")
def letor(tmp_path_factory):
    return trained_letor(tmp_path_factory.mktemp("errors"), seed=5)


def predict(letor, out, data=None):
    _, model = letor
    return ["predict", "--model", model, "--data", data or letor[0], "--out", out]


def test_a_path_under_a_file(letor, capsys):
    data, _ = letor
    before = data.read_bytes()
    one_line(capsys, predict(letor, data / "scores.txt"), data, "Not a directory")
    one_line(capsys, predict(letor, "scores.txt", data=data / "x.txt"), data / "x.txt")
    assert data.read_bytes() == before


def test_a_name_too_long(letor, tmp_path, capsys):
    long = tmp_path / ("a" * 300)
    one_line(capsys, predict(letor, long), "File name too long", "aaaa")
    one_line(capsys, predict(letor, tmp_path / "s.txt", data=long), "aaaa")


def test_a_symlink_loop(letor, tmp_path, capsys):
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    one_line(capsys, predict(letor, loop), loop, "Too many levels of symbolic links")
    one_line(capsys, predict(letor, tmp_path / "s.txt", data=loop), loop)
    assert loop.is_symlink()


def test_permission_denied_names_the_file(letor, tmp_path, capsys, monkeypatch):
    import structrank.data

    secret = tmp_path / "secret.txt"
    secret.write_text("")  # there, so that the paths checked before the command pass it to the (denied) reader

    def denied(path, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(path))

    # as root nothing is denied, so the reader raises what the system would
    monkeypatch.setattr(structrank.data, "read_letor", denied)
    line = one_line(capsys, predict(letor, tmp_path / "s.txt", data=secret))
    assert line == f"structrank predict: error: {secret}: Permission denied"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_permission_denied_on_a_real_file(letor, tmp_path, capsys):
    secret = tmp_path / "secret.txt"
    secret.write_bytes(letor[0].read_bytes())
    secret.chmod(0)
    one_line(capsys, predict(letor, tmp_path / "s.txt", data=secret), secret, "Permission denied")


def test_out_a_folder_or_empty(letor, tmp_path, capsys):
    one_line(capsys, predict(letor, tmp_path), "--out", tmp_path, "folder")
    one_line(capsys, predict(letor, ""), "--out is empty")
    one_line(capsys, ["train", "ranksvm", "--train", letor[0], "--out", ""], "--out is empty")
    one_line(capsys, ["export", letor[1], "--format", "json", "--out", tmp_path], "--out", "folder")


def test_a_corrupt_truncated_or_folder_shaped_store(tmp_path, capsys):
    corrupt = tmp_path / "corrupt.sqlite"
    corrupt.write_text("not a database at all, just text " * 100)
    one_line(capsys, ["results", corrupt, "--out", tmp_path / "r.md"], corrupt, "not a readable result store")
    good = tmp_path / "good.sqlite"
    with ResultStore(good) as store:
        for fold in range(200):
            store.record(RunSpec("e", "d", fold=fold, model="m"), [("map", "letor4", 0.5)], seconds=1)
    truncated = tmp_path / "truncated.sqlite"
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    one_line(capsys, ["results", truncated, "--out", tmp_path / "r.md"], truncated)
    assert not (tmp_path / "r.md").exists()


def test_reproduce_over_a_folder_shaped_or_corrupt_store(data_root, tmp_path, capsys):
    out = tmp_path / "out"
    (out / "results.sqlite").mkdir(parents=True)
    one_line(capsys, ["reproduce", "letor-baselines", "--quick", "--out", out], out / "results.sqlite")
    other = tmp_path / "other"
    other.mkdir()
    (other / "results.sqlite").write_text("garbage " * 1000)
    one_line(capsys, ["reproduce", "letor-baselines", "--quick", "--out", other], other / "results.sqlite")
    assert (other / "results.sqlite").read_text() == "garbage " * 1000


def _tsv(tmp_path):
    tsv = tmp_path / "qa.tsv"
    tsv.write_text("q1\twhat is a cat\ta cat is an animal\t1\nq1\twhat is a cat\tdogs bark\t0\n")
    return tsv


def test_a_featurizer_state_that_is_bad_json_deeply_nested_or_a_folder(tmp_path, capsys):
    tsv = _tsv(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    one_line(capsys, ["featurize", "qa", "--input", tsv, "--state", bad, "--out", tmp_path / "o.txt"], "bad.json")
    nested = tmp_path / "nested.json"
    nested.write_text("[" * 100_000 + "]" * 100_000)
    one_line(capsys, ["featurize", "qa", "--input", tsv, "--state", nested, "--out", tmp_path / "o.txt"],
             "--state", nested, "nested too deeply")
    one_line(capsys, ["featurize", "qa", "--input", tsv, "--state", tmp_path, "--out", tmp_path / "o.txt"], tmp_path)
    assert not (tmp_path / "o.txt").exists()


def test_an_unreachable_scheduler_names_it(letor, tmp_path):
    env = {**os.environ, "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "1s"}
    result = subprocess.run(
        [*PYTHON, "-m", "structrank", "train", "ranksvm", "--train", str(letor[0]),
         "--out", str(tmp_path / "m.npz"), "--scheduler", "tcp://127.0.0.1:9"],
        env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert "--scheduler tcp://127.0.0.1:9: cannot connect" in lines[0]
    assert not (tmp_path / "m.npz").exists()


def test_an_empty_data_file_inside_reproduce(letor, tmp_path, capsys):
    fold = tmp_path / "data" / "letor" / "MQ2008" / "Fold1"
    fold.mkdir(parents=True)
    (fold / "train.txt").write_text("")
    (tmp_path / "data" / "letor" / "OHSUMED" / "QueryLevelNorm").mkdir(parents=True)  # present, not read by --quick
    for split in ("vali", "test"):
        (fold / f"{split}.txt").write_bytes(letor[0].read_bytes())
    line = one_line(capsys, ["reproduce", "letor-baselines", "--quick", "--out", tmp_path / "out",
                             "--data-dir", tmp_path / "data"], "run failed", fold / "train.txt")
    assert (fold / "train.txt").read_text() == ""
    assert "Fold1" in line


def test_bench_refuses_a_negative_or_zero_size(capsys):
    one_line(capsys, ["bench", "--only", "scale", "--scale-sizes", "-5"], "--scale-sizes", "'-5'")
    one_line(capsys, ["bench", "--only", "scale", "--scale-sizes", "1e4,abc"], "--scale-sizes", "'abc'")
    one_line(capsys, ["bench", "--only", "scale", "--scale-sizes", "0"], "--scale-sizes")
    one_line(capsys, ["bench", "--repeat", "0"], "--repeat")


def test_an_unexpected_error_is_one_line_too_and_debug_reraises(letor, tmp_path, capsys, monkeypatch):
    import structrank.data

    def bug(*args, **kwargs):
        raise TypeError("a bug\nwith a second line")

    monkeypatch.setattr(structrank.data, "read_letor", bug)
    line = one_line(capsys, predict(letor, tmp_path / "s.txt"), "internal error (TypeError", "a bug", code=1)
    assert "second line" not in line
    monkeypatch.setenv("STRUCTRANK_DEBUG", "1")
    with pytest.raises(TypeError, match="a bug"):
        main([str(a) for a in predict(letor, tmp_path / "s.txt")])


def test_debug_reraises_an_os_error(letor, tmp_path, monkeypatch):
    monkeypatch.setenv("STRUCTRANK_DEBUG", "1")
    with pytest.raises(IsADirectoryError):
        main([str(a) for a in predict(letor, tmp_path)])


def test_deeply_nested_json_anywhere_is_one_line_naming_its_source(letor, tmp_path, capsys):
    """json.loads raises RecursionError past ~1,000 levels: each reader names what it was reading."""
    deep = "[" * 100_000 + "]" * 100_000
    data, _ = letor
    one_line(capsys, ["train", "ranksvm", "--train", data, "--out", tmp_path / "m.npz", "--set", f"C={deep}"],
             "--set C", "nested too deeply")
    assert not (tmp_path / "m.npz").exists()
    store = tmp_path / "results.sqlite"
    with ResultStore(store) as results:
        results.record(RunSpec("e", "d", fold=0, model="m"), [("map", "letor4", 0.5)], seconds=1)
    import sqlite3

    with sqlite3.connect(store) as conn:
        conn.execute("UPDATE runs SET params = ?", (deep,))
    one_line(capsys, ["results", store, "--out", tmp_path / "r.md"], store, "damaged result store")
    assert not (tmp_path / "r.md").exists()
