"""Outputs never destroy inputs or other files (issue 24, point 1).

Every command refuses an --out that is one of its inputs (by resolved path: a symlink or a hard link
to the input counts), `atomic_open` writes a symlink's target and a FIFO in place, and a reproduction
folder belongs to one experiment and one set of data files.
"""

import os
import sqlite3
import threading

import numpy as np
import pytest

from cli_checks import one_line as refused
from cli_checks import NO_OPEN_FILES, trained_letor
from structrank.atomic import atomic_open, check_output, write_text_atomic
from structrank.cli import main
from structrank.errors import StructRankError
from structrank_lab.experiments import ResultStore, RunSpec
from structrank_lab.experiments.runner import discard_results, run_experiment

pytestmark = NO_OPEN_FILES


@pytest.fixture(scope="module")
def letor(tmp_path_factory):
    """A small training file and a model trained on it."""
    return trained_letor(tmp_path_factory.mktemp("outputs"), seed=3)


def snapshot(*paths):
    return [p.read_bytes() for p in paths]


# -- --out equal to an input ------------------------------------------------------------------------


def test_predict_refuses_out_equal_to_the_data_or_the_model(letor, capsys):
    data, model = letor
    before = snapshot(data, model)
    refused(capsys, ["predict", "--model", model, "--data", data, "--out", data], "--out", "--data", data)
    refused(capsys, ["predict", "--model", model, "--data", data, "--out", model], "--out", "--model", model)
    assert snapshot(data, model) == before


def test_train_refuses_out_equal_to_the_training_or_vali_file(letor, tmp_path, capsys):
    data, _ = letor
    before = snapshot(data)
    refused(capsys, ["train", "ranksvm", "--train", data, "--out", data], "--train")
    vali = tmp_path / "vali.txt"
    vali.write_bytes(data.read_bytes())
    refused(capsys, ["train", "ranksvm", "--train", data, "--vali", vali, "--out", vali], "--vali", vali)
    assert snapshot(data, vali) == before * 2


def test_an_alias_of_the_input_is_refused_too(letor, tmp_path, capsys):
    """A symlink, a hard link and a path with .. all name the same file."""
    data, model = letor
    before = snapshot(data)
    link = tmp_path / "link.txt"
    link.symlink_to(data)
    hard = tmp_path / "hard.txt"
    os.link(data, hard)
    dotted = tmp_path / ".." / data.parent.name / data.name
    for out in (link, hard, dotted):
        refused(capsys, ["predict", "--model", model, "--data", data, "--out", out], "--data")
    assert snapshot(data) == before and link.is_symlink()


def test_export_results_featurize_and_compare_refuse_their_inputs(letor, tmp_path, capsys):
    data, model = letor
    refused(capsys, ["export", model, "--format", "json", "--out", model], "MODEL_FILE")
    names = tmp_path / "names.txt"
    names.write_text("a\nb\nc\nd\n")
    refused(capsys, ["export", model, "--format", "json", "--feature-names", names, "--out", names], "--feature-names")
    store = tmp_path / "results.sqlite"
    ResultStore(store).close()
    refused(capsys, ["results", store, "--out", store], "STORE 1")
    tsv = tmp_path / "qa.tsv"
    tsv.write_text("q1\twhat is a cat\ta cat is an animal\t1\nq1\twhat is a cat\tdogs bark\t0\n")
    refused(capsys, ["featurize", "qa", "--input", tsv, "--out", tsv], "--input")
    refused(capsys, ["featurize", "qa", "--input", tsv, "--fit", tsv, "--out", tsv], "--input")
    scores = tmp_path / "scores.txt"
    scores.write_text("\n".join(["0.5"] * 60) + "\n")
    refused(capsys, ["compare", "--data", data, scores, scores, "--plot", scores], "--plot", "system 1")
    assert tsv.read_text().startswith("q1\t") and scores.read_text().startswith("0.5")
    assert ResultStore(store).rows() == []


def test_featurize_refuses_a_state_file_that_would_overwrite_the_input(tmp_path, capsys):
    tsv = tmp_path / "qa.tsv"
    tsv.write_text("q1\twhat is a cat\ta cat is an animal\t1\nq1\twhat is a cat\tdogs bark\t0\n")
    state_alias = tmp_path / "out.txt.featurizer.json"
    state_alias.symlink_to(tsv)
    refused(capsys, ["featurize", "qa", "--input", tsv, "--out", tmp_path / "out.txt"], "featurizer state", "--input")
    assert tsv.read_text().startswith("q1\t")


def test_check_output_lets_new_files_special_files_and_stdout_through(tmp_path):
    data = tmp_path / "in.txt"
    data.write_text("x")
    for out in (tmp_path / "new.txt", "-", "/dev/null", None):
        check_output(out, {"--data": data, "--model": None})
    with pytest.raises(ValueError, match="--out is empty"):
        check_output("", {})
    with pytest.raises(IsADirectoryError, match=f"--out {tmp_path}: is a folder"):
        check_output(tmp_path, {})


# -- atomic_open: symlinks and special files ------------------------------------------------------------


def test_atomic_write_through_a_symlink_replaces_the_target_and_keeps_the_link(tmp_path):
    target = tmp_path / "real.txt"
    target.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    write_text_atomic(link, "new")
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == "new"
    # a link into another folder: the temporary file goes beside the target, where the rename is atomic
    other = tmp_path / "sub"
    other.mkdir()
    far = other / "link.txt"
    far.symlink_to(target)
    write_text_atomic(far, "newer")
    assert far.is_symlink() and target.read_text() == "newer"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.txt", "real.txt", "sub"]


def test_atomic_write_through_a_dangling_symlink_creates_its_target(tmp_path):
    link = tmp_path / "link.txt"
    link.symlink_to(tmp_path / "target.txt")
    write_text_atomic(link, "made")
    assert link.is_symlink() and (tmp_path / "target.txt").read_text() == "made"


def test_predict_out_through_a_symlink_writes_its_target(letor, tmp_path, capsys):
    data, model = letor
    target = tmp_path / "scores.txt"
    target.write_text("stale\n")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    assert main(["predict", "--model", str(model), "--data", str(data), "--out", str(link), "--quiet"]) == 0
    assert link.is_symlink()
    assert len(target.read_text().splitlines()) == data.read_text().count("\n")


def test_atomic_write_to_a_fifo_writes_in_place(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))  # a Path: read and closed
    reader.start()
    write_text_atomic(fifo, "through the pipe")
    reader.join(10)
    assert got == ["through the pipe"]
    assert fifo.is_fifo()


def test_atomic_write_to_dev_null_keeps_the_device(tmp_path):
    write_text_atomic("/dev/null", "nothing")
    assert os.path.exists("/dev/null") and not os.path.isfile("/dev/null")


def test_atomic_write_to_a_symlink_loop_or_an_empty_name_fails_and_writes_nothing(tmp_path):
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    with pytest.raises(OSError):
        with atomic_open(loop) as fh:
            fh.write("x")
    assert loop.is_symlink()
    with pytest.raises(FileNotFoundError, match="empty file name"):
        with atomic_open("") as fh:
            fh.write("x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["loop"]


# -- reproduce: a store belongs to one experiment and one set of data files ---------------------------------


def _specs(experiment="exp2024"):
    return [RunSpec(experiment, "toy", fold=f, model="m") for f in range(2)]


def _run(spec):
    return [("map", "letor4", 0.5 + spec.fold / 10)]


@pytest.fixture
def data_folder(tmp_path):
    folder = tmp_path / "data" / "toy"
    (folder / "Fold1").mkdir(parents=True)
    (folder / "Fold1" / "train.txt").write_text("1 qid:1 1:0.5\n")
    (folder / "Fold1" / "test.txt").write_text("0 qid:2 1:0.1\n")
    return folder


def test_a_store_refuses_other_data_and_resumes_on_the_same(data_folder, tmp_path):
    out = tmp_path / "out"
    run_experiment(out, _specs(), _run, data=[data_folder])
    run_experiment(out, _specs(), _run, data=[data_folder])  # the same data: resumes
    copy = tmp_path / "copy" / "toy"
    (copy / "Fold1").mkdir(parents=True)
    (copy / "Fold1" / "train.txt").write_text("1 qid:1 1:0.5\n")
    (copy / "Fold1" / "test.txt").write_text("0 qid:2 1:0.1\n")
    run_experiment(out, _specs(), _run, data=[copy])  # the same content elsewhere: resumes too
    (copy / "Fold1" / "train.txt").write_text("2 qid:1 1:0.9\n")
    with pytest.raises(StructRankError, match=r"results.sqlite: its runs were made from other data: "
                                              r"toy/Fold1/train.txt was .*toy/Fold1/train.txt \(sha256 "):
        run_experiment(out, _specs(), _run, data=[copy])
    discard_results(out)
    assert len(run_experiment(out, _specs(), _run, data=[copy])) == 2


def test_a_store_records_paths_sizes_and_hashes(data_folder, tmp_path):
    import hashlib

    out = tmp_path / "out"
    run_experiment(out, _specs(), _run, data=[data_folder])
    with ResultStore(out / "results.sqlite") as store:
        recorded = store.recorded_data()
    train = data_folder / "Fold1" / "train.txt"
    assert recorded["toy/Fold1/train.txt"] == {
        "path": str(train.resolve()), "size": train.stat().st_size, "mtime_ns": train.stat().st_mtime_ns,
        "sha256": hashlib.sha256(train.read_bytes()).hexdigest()}
    assert sorted(recorded) == ["toy/Fold1/test.txt", "toy/Fold1/train.txt"]


def test_a_store_refuses_another_experiment_also_one_made_before_ownership_was_recorded(tmp_path):
    out = tmp_path / "out"
    run_experiment(out, _specs("first2020"), _run)
    with pytest.raises(StructRankError, match="holds the runs of experiment first2020, not second2021"):
        run_experiment(out, _specs("second2021"), _run)
    old = tmp_path / "old"
    with ResultStore(old / "results.sqlite") as store:  # runs but no owner: as stores were before
        store.record(_specs("first2020")[0], [("map", "letor4", 0.5)], seconds=1)
    with pytest.raises(StructRankError, match="first2020"):
        run_experiment(old, _specs("second2021"), _run)
    with sqlite3.connect(old / "results.sqlite") as db:
        assert db.execute("select count(*) from runs").fetchone()[0] == 1


def test_reproduce_refuses_a_store_of_other_data_in_one_line_and_fresh_starts_afresh(
        data_folder, tmp_path, monkeypatch, capsys):
    from structrank_lab.experiments import registry

    calls = []

    def fake(out, data_dir=None, quick=False, n_jobs=1, keep=None):
        calls.append(out)
        return run_experiment(out, _specs("letor-baselines"), _run, data=[data_dir])

    monkeypatch.setitem(registry.EXPERIMENTS, "letor-baselines", fake)
    out = tmp_path / "out"
    argv = ["reproduce", "letor-baselines", "--out", str(out), "--data-dir", str(data_folder)]
    assert main(argv) == 0
    capsys.readouterr()
    (data_folder / "Fold1" / "test.txt").write_text("1 qid:2 1:0.7\n")
    line = refused(capsys, argv, out / "results.sqlite", "toy/Fold1/test.txt", "--fresh")
    assert "other data" in line
    assert main(argv + ["--fresh"]) == 0
    assert len(calls) == 3


def test_reproduce_refuses_an_out_that_is_a_file_or_inside_the_data_folder(data_folder, tmp_path, capsys):
    file = tmp_path / "a-file"
    file.write_text("keep me")
    refused(capsys, ["reproduce", "letor-baselines", "--out", file, "--data-dir", data_folder], "--out", file)
    assert file.read_text() == "keep me"
    refused(capsys, ["reproduce", "letor-baselines", "--out", data_folder / "Fold1", "--data-dir", data_folder],
            "inside the data folder")
    assert sorted(p.name for p in (data_folder / "Fold1").iterdir()) == ["test.txt", "train.txt"]


def test_fresh_discards_the_store_and_the_caches_only(tmp_path):
    out = tmp_path / "out"
    run_experiment(out, _specs(), _run)
    (out / "data").mkdir()
    (out / "data" / "cache.npz").write_bytes(b"x")
    (out / "mine.txt").write_text("a user's file")
    discard_results(out)
    assert sorted(p.name for p in out.iterdir()) == ["mine.txt"]


def test_fit_refuses_mixed_int_and_str_qids():
    from structrank.errors import DataValidationError
    from structrank.learners import RankSVM

    X = np.random.default_rng(0).random((4, 3))
    with pytest.raises(DataValidationError, match="qid mixes strings and numbers"):
        RankSVM().fit(X, np.array([1, 0, 1, 0]), qid=np.array([1, 1, "a", "a"], dtype=object))


@pytest.mark.parametrize("name", ["croce2016", "haponchyk2018", "jagarlamudi2012", "letor-baselines", "volkovs2011"])
def test_every_reproduction_claims_its_folder_before_computing_anything(name, data_root, tmp_path):
    """The experiments that cache features or kernels in OUT refuse another's folder before touching it."""
    from structrank_lab.experiments.registry import EXPERIMENTS
    from structrank_lab.experiments.runner import claim_folder

    out = tmp_path / "out"
    claim_folder(out, "other2000")
    with pytest.raises(StructRankError, match=f"holds the runs of experiment other2000, not {name}"):
        EXPERIMENTS[name](out=out, data_dir=data_root, quick=True)
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith("results.sqlite")) == []


# -- an output that cannot be written names the user's path, never the temporary file ------------------------------


def test_an_out_in_a_folder_that_takes_no_file_names_the_out_given(letor, capsys):
    import pathlib

    if not pathlib.Path("/proc/self").is_dir():
        pytest.skip("needs /proc")
    data, model = letor
    for out in ("/proc/scores.txt", "/proc/no-such-folder/scores.txt"):
        line = refused(capsys, ["predict", "--model", model, "--data", data, "--out", out], f"error: {out}: ")
        assert ".tmp" not in line and "cannot create a file in " in line, line
    line = refused(capsys, ["train", "ranksvm", "--train", data, "--out", "/proc/m.npz", "--quiet"], "/proc/m.npz: ")
    assert ".tmp" not in line


def test_every_write_error_of_atomic_open_names_the_path_given(tmp_path, monkeypatch):
    import errno
    import tempfile

    target = tmp_path / "out.txt"

    def no_temporary_file(prefix, suffix, dir):
        raise PermissionError(errno.EACCES, "Permission denied", os.path.join(dir, f"{prefix}abc{suffix}"))

    with monkeypatch.context() as patch:
        patch.setattr(tempfile, "mkstemp", no_temporary_file)
        with pytest.raises(PermissionError) as info:
            write_text_atomic(target, "x")
    assert info.value.filename == str(target) and ".tmp" not in str(info.value)
    assert info.value.strerror == f"Permission denied (cannot create a file in {tmp_path})"

    def no_rename(src, dst):
        raise OSError(errno.EXDEV, "Invalid cross-device link", src, dst)

    with monkeypatch.context() as patch:
        patch.setattr(os, "replace", no_rename)
        with pytest.raises(OSError) as info:
            write_text_atomic(target, "x")
    assert (info.value.filename, info.value.filename2, info.value.strerror) == (
        str(target), None, "Invalid cross-device link (cannot replace it)")

    with pytest.raises(OSError) as info:  # a full disk while the caller writes
        with atomic_open(target) as fh:
            fh.write("x")
            raise OSError(errno.ENOSPC, "No space left on device")
    assert (info.value.errno, info.value.filename) == (errno.ENOSPC, str(target))

    with pytest.raises(FileNotFoundError) as info:  # the caller's own error (an input it reads) passes as it is
        with atomic_open(target) as fh:
            open(tmp_path / "missing-input.txt")
    assert info.value.filename == str(tmp_path / "missing-input.txt")
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no temporary file left behind
