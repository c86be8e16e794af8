"""The command line's runs and streams: TREC runs out, stdin and stdout, devices and pipes written in
place, one-line errors for folders, Ctrl-C's exit code, --quiet and one-line warnings."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

from cli_checks import NO_OPEN_FILES, PYTHON
from structrank.cli import main
from structrank.data import make_ranking_dataset, read_letor, write_letor
from structrank.metrics import evaluate, evaluate_run, read_run

pytestmark = NO_OPEN_FILES


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    folder = tmp_path_factory.mktemp("streams")
    ds = make_ranking_dataset(n_queries=12, n_features=6, random_state=3)
    write_letor(folder / "data.txt", ds)
    assert main(["train", "linreg", "--train", str(folder / "data.txt"), "--out", str(folder / "m.npz"), "--quiet"]) == 0
    return folder


def _run_cli(*args, stdin=None):
    return subprocess.run([*PYTHON, "-m", "structrank", *args], input=stdin, capture_output=True)


def test_predict_writes_a_trec_run_that_evaluates_like_the_scores(setup, capsys):
    data = setup / "data.txt"
    assert main(["predict", "--model", str(setup / "m.npz"), "--data", str(data), "--out", str(setup / "s.txt")]) == 0
    assert main(["predict", "--model", str(setup / "m.npz"), "--data", str(data), "--out", str(setup / "r.txt"),
                 "--format", "trec", "--run-tag", "lin"]) == 0
    capsys.readouterr()
    lines = (setup / "r.txt").read_text().splitlines()
    assert all(len(line.split()) == 6 and line.split()[1] == "Q0" and line.endswith(" lin") for line in lines)
    ds = read_letor(data)
    run = read_run(setup / "r.txt")
    # docnos from the #docid comments, else the rows' line numbers
    docids = ds.docids if ds.docids is not None else ds.line_numbers.astype(str)
    qrels = {}
    for q, d, label in zip(ds.qid, docids, ds.y):
        qrels.setdefault(str(q), {})[str(d)] = int(label)
    scores = np.array([float(x) for x in (setup / "s.txt").read_text().split()])
    by_run = evaluate_run(qrels, run, ["ndcg@10", "map"])
    by_scores = evaluate(ds.y, scores[ds.row_order] if ds.row_order is not None else scores, ds.qid, ["ndcg@10", "map"],
                         "trec", docids=docids)
    assert by_run.metrics == pytest.approx(by_scores.metrics, abs=1e-12)
    # the ranks of each query count 1, 2, ... in score order
    first = [line.split() for line in lines if line.split()[0] == lines[0].split()[0]]
    assert [int(f[3]) for f in first] == list(range(1, len(first) + 1))
    assert [float(f[4]) for f in first] == sorted((float(f[4]) for f in first), reverse=True)


def test_stdin_and_stdout(setup):
    data = (setup / "data.txt").read_bytes()
    out = _run_cli("predict", "--model", str(setup / "m.npz"), "--data", "-", "--out", "-", "--quiet", stdin=data)
    assert out.returncode == 0 and out.stderr == b""
    assert len(out.stdout.split()) == read_letor(setup / "data.txt").n_rows
    evaluated = _run_cli("evaluate", "--data", str(setup / "data.txt"), "--scores", "-", "--json", stdin=out.stdout)
    assert evaluated.returncode == 0 and b'"metrics"' in evaluated.stdout


def test_out_to_a_device_or_a_pipe_is_written_in_place_and_a_folder_is_a_one_line_error(setup, tmp_path, capsys):
    assert main(["predict", "--model", str(setup / "m.npz"), "--data", str(setup / "data.txt"), "--out",
                 "/dev/null"]) == 0
    assert os.path.exists("/dev/null") and not os.path.isfile("/dev/null")  # not replaced by a file
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    assert main(["predict", "--model", str(setup / "m.npz"), "--data", str(setup / "data.txt"), "--out", str(fifo),
                 "--quiet"]) == 0
    assert len(reader.communicate(timeout=30)[0].split()) == read_letor(setup / "data.txt").n_rows
    capsys.readouterr()
    assert main(["predict", "--model", str(setup / "m.npz"), "--data", str(setup / "data.txt"), "--out",
                 str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is a folder" in err


def _blocked_reading_stdin(pid) -> bool:
    """Whether the process sits in read(0, ...) (Linux: /proc/PID/syscall starts with the read number and fd 0)."""
    try:
        fields = Path(f"/proc/{pid}/syscall").read_text().split()  # closed at once (a ResourceWarning is an error)
    except OSError:
        return False
    return len(fields) > 1 and fields[0] == "0" and fields[1] == "0x0"


@pytest.mark.skipif(not os.path.exists("/proc/self/syscall"), reason="needs Linux's /proc/PID/syscall")
def test_ctrl_c_exits_130_without_a_traceback(setup):
    # SIGINT as a terminal delivers it: a shell's background job (CI started with `&`) ignores SIGINT, and a
    # Python started with SIGINT ignored installs no KeyboardInterrupt handler
    proc = subprocess.Popen([*PYTHON, "-m", "structrank", "predict", "--model", str(setup / "m.npz"), "--data",
                             "-", "--out", "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.time() + 120
        while not _blocked_reading_stdin(proc.pid) and time.time() < deadline:
            time.sleep(0.05)
        assert _blocked_reading_stdin(proc.pid), "the command never waited on its standard input"
        proc.send_signal(signal.SIGINT)
        # the command must end on the signal alone: standard input stays open until it has (closing it first
        # would race the signal with an end of file, which reads as an empty input on a loaded machine)
        proc.wait(timeout=60)
        out, err = proc.communicate(timeout=60)
    finally:  # a command left running would end the test run with its ResourceWarning in another test
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130 and b"Traceback" not in err and b"interrupted" in err and out == b"", err


def test_warnings_print_as_one_line(capsys):
    from structrank.cli import _one_line_warning

    text = _one_line_warning(UserWarning("first line\nsecond"), UserWarning, "x.py", 3, "source line")
    assert text == "structrank: UserWarning: first line\n"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["--quiet", "losses"]) == 0


def test_help_and_version_build_no_command_and_each_command_builds_alone(capsys):
    import json as _json

    probe = ("import sys, json\nfrom structrank.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
             "print(json.dumps([m for m in ('structrank.learners', 'structrank.learners.registry', 'structrank_lab.experiments.registry',"
             " 'sklearn') if m in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert _json.loads(out.stdout.strip().splitlines()[-1]) == []
    assert "compare" in out.stdout and "export" in out.stdout
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    # a family of names is listed once with its losses (gbrt-ndcg among them)
    assert re.search(r"gbrt-<loss>\s+on the loss: [^\n]*\bndcg\b", capsys.readouterr().out)
    assert main(["losses"]) == 0 and "| `map` |" in capsys.readouterr().out


@pytest.mark.parametrize("call, frozen", [("main()", True), ("main(['evaluate', '--help'])", False)])
def test_only_a_process_that_ends_with_the_command_spares_the_last_collections(call, frozen):
    """``main()`` (the console script, ``python -m structrank``) freezes the garbage collector's objects
    once the command is done, so that the ending interpreter does not walk them; ``main(argv)``, as the
    tests and other callers run it, leaves the collector alone. The command's output is all there."""
    probe = (f"import gc, sys\nfrom structrank.cli import main\nsys.argv = ['structrank', 'evaluate', '--help']\n"
             f"try:\n    {call}\nexcept SystemExit:\n    pass\nprint('frozen', gc.get_freeze_count() > 0)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert "--scores" in out and out.strip().splitlines()[-1] == f"frozen {frozen}"


def test_a_command_run_as_a_process_writes_its_whole_output(tmp_path):
    """Files and standard output are complete when the process ends after a frozen collector."""
    data = tmp_path / "d.txt"
    data.write_text("".join(f"{i % 3} qid:{i // 4} 1:{i / 10} 2:{(i * 7) % 5} #docid = d{i}\n" for i in range(40)))
    scores = tmp_path / "s.txt"
    scores.write_text("".join(f"{(i * 13) % 11 / 10}\n" for i in range(40)))
    model, predicted = tmp_path / "m.npz", tmp_path / "p.txt"
    done = subprocess.run([*PYTHON, "-m", "structrank", "evaluate", "--data", str(data), "--scores", str(scores),
                           "--json", "--per-query"], capture_output=True, text=True, check=True)
    for command in (["train", "svm-map", "--train", str(data), "--out", str(model), "--quiet"],
                    ["predict", "--model", str(model), "--data", str(data), "--out", str(predicted)]):
        subprocess.run([*PYTHON, "-m", "structrank", *command], capture_output=True, text=True, check=True)
    result = json.loads(done.stdout)
    assert result["queries"] == 10 and len(result["per_query"]) == 10 and 0 <= result["metrics"]["map"] <= 1
    assert len(predicted.read_text().splitlines()) == 40


@pytest.mark.parametrize("command", [["evaluate", "--json", "--per-query"], ["predict", "--out", "-"]])
def test_a_reader_that_closes_standard_output_ends_the_command_quietly(setup, command):
    """``structrank evaluate --json | head -c 10``: the reader's end of the pipe is closed before the
    command writes; the command ends with 141 (128 + SIGPIPE, as ``cat`` would) and says nothing."""
    data, model = setup / "data.txt", setup / "m.npz"
    scores = setup / "piped_scores.txt"
    assert main(["predict", "--model", str(model), "--data", str(data), "--out", str(scores), "--quiet"]) == 0
    inputs = ["--data", str(data), "--scores", str(scores)] if command[0] == "evaluate" else \
        ["--model", str(model), "--data", str(data)]
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first byte
    try:
        proc = subprocess.run([*PYTHON, "-m", "structrank", *command, *inputs, "--quiet"], stdout=write_end,
                              stderr=subprocess.PIPE, timeout=300)
    finally:
        os.close(write_end)
    assert proc.returncode == 141 and proc.stderr == b"", proc.stderr


HEAVY = ("numpy", "structrank.learners.registry", "structrank.metrics", "sklearn")


@pytest.mark.parametrize("argv, option, words", [
    (["train", "svm-map", "--train", "{missing}", "--out", "{out}"], "{missing}", "file not found"),
    (["train", "svm-map", "--train", "{data}", "--vali", "{folder}", "--out", "{out}"], "{folder}",
     "is a folder, not a file"),
    (["predict", "--model", "{missing}", "--data", "{data}", "--out", "{out}"], "{missing}", "model file not found"),
    (["evaluate", "--data", "{data}", "--scores", "{missing}"], "{missing}", "file not found"),
    (["evaluate", "--qrels", "{missing}", "--run", "{data}"], "{missing}", "file not found"),
])
def test_an_input_that_is_not_there_is_reported_before_the_command_imports_anything(setup, tmp_path, argv, option,
                                                                                      words):
    names = {"missing": str(tmp_path / "missing.txt"), "folder": str(tmp_path), "data": str(setup / "data.txt"),
             "out": str(tmp_path / "out.txt")}
    argv = [a.format(**names) for a in argv]
    probe = ("import json, sys\nfrom structrank.cli import main\ncode = main(json.loads(sys.argv[1]))\n"
             f"print(json.dumps([code, [m for m in {HEAVY!r} if m in sys.modules]]))")
    done = subprocess.run([sys.executable, "-c", probe, json.dumps(argv)], capture_output=True, text=True, timeout=120)
    code, imported = json.loads(done.stdout)
    assert code == 2 and imported == []
    assert done.stderr == f"structrank {argv[0]}: error: {option.format(**names)}: {words}\n"
    assert not (tmp_path / "out.txt").exists()


def test_the_early_check_words_a_missing_file_as_the_reader_does(setup, tmp_path, capsys):
    """Without the early check (the reader meets the file), the line is the same."""
    from structrank.cli import check_input_paths
    from structrank.data import read_letor
    from structrank.errors import DataFormatError

    missing = tmp_path / "missing.txt"
    with pytest.raises(DataFormatError) as early:
        check_input_paths("train", ["svm-map", "--train", str(missing), "--out", "x"])
    with pytest.raises(DataFormatError) as late:
        read_letor(missing)
    assert str(early.value) == str(late.value)
    check_input_paths("train", ["svm-map", "--train", "-", "--out", "x"])  # standard input: the reader's affair
    check_input_paths("train", ["svm-map", "--train", str(missing), "--help"])  # help needs no file


def _train_stderr(*argv):
    return subprocess.run([*PYTHON, "-m", "structrank", "train", *map(str, argv)], capture_output=True,
                          text=True, timeout=600)


def test_train_draws_progress_bars_when_asked_and_stays_quiet_in_a_pipe(setup, tmp_path):
    data = setup / "data.txt"
    grid = ["linreg", "--train", data, "--vali", data, "--out", tmp_path / "g.npz"]
    epochs = ["lsp-ap", "--train", data, "--out", tmp_path / "e.npz", "--set", "max_epochs=3"]
    piped = _train_stderr(*grid)  # standard error is a pipe: the messages only, as before
    assert piped.returncode == 0 and "\r" not in piped.stderr and "grid" not in piped.stderr
    lines = piped.stderr.splitlines()
    assert lines[0].startswith("choosing on ") and " under letor4 (auto)" in lines[0]
    assert [line.split("  vali")[0].strip() for line in lines[1:5]] == [str({"alpha": a}) for a in (0.0, 0.1, 1.0, 10.0)]
    bars = _train_stderr(*grid, "--progress")
    assert bars.returncode == 0 and "grid: 100%" in bars.stderr and "4/4" in bars.stderr
    assert "chose {'alpha'" in bars.stderr and "wrote " in bars.stderr  # the messages are still there
    bars = _train_stderr(*epochs, "--progress")
    assert bars.returncode == 0 and "epochs:" in bars.stderr and "3/3" in bars.stderr
    quiet = _train_stderr(*epochs, "--progress", "--quiet")
    assert quiet.returncode == 0 and quiet.stderr == ""
