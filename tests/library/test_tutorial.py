"""The getting-started tutorial (docs/site/tutorial.md) runs as it is written.

Its ``python`` blocks run in order in one namespace, and its ``bash`` blocks' ``structrank``
commands through the CLI's ``main``, all in an empty folder: the tutorial makes its own data.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import numpy as np
import pytest

from structrank.cli import main

TUTORIAL = Path(__file__).resolve().parents[2] / "docs" / "site" / "tutorial.md"


def code_blocks(text):
    """[(language, code)] of the fenced blocks of a Markdown page, in order."""
    return [(m.group(1), m.group(2)) for m in re.finditer(r"^```(\w+)\n(.*?)^```$", text, re.M | re.S)]


def test_the_tutorial_has_python_and_command_line_blocks():
    languages = [language for language, _ in code_blocks(TUTORIAL.read_text())]
    assert languages.count("python") >= 5 and languages.count("bash") >= 1
    assert set(languages) == {"python", "bash"}


def test_the_tutorial_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "tutorial"}
    outputs = []
    for language, code in code_blocks(TUTORIAL.read_text()):
        if language == "python":
            exec(compile(code, str(TUTORIAL), "exec"), namespace)
            continue
        for line in code.splitlines():
            argv = shlex.split(line, comments=True)
            if not argv:
                continue
            assert argv[0] == "structrank", f"the tutorial's command blocks run structrank only: {line}"
            assert main(argv[1:]) == 0, capsys.readouterr().err
            outputs.append(capsys.readouterr().out)
    # what the Python part computed
    result, scores = namespace["result"], namespace["scores"]
    assert set(result.metrics) == {"map", "ndcg@10", "p@5"} and result.metrics["map"] > 0.5
    assert scores.shape == (namespace["test"].n_rows,)
    # the command line wrote a model, scores in the file's row order, and a JSON evaluation
    assert (tmp_path / "svm-map-cli.npz").is_file()
    cli_scores = np.loadtxt(tmp_path / "scores.txt")
    assert cli_scores.shape == scores.shape
    report = json.loads(outputs[-1])
    assert report["convention"] == "letor4" and set(report["metrics"]) == {"map", "ndcg@10"}
    assert report["metrics"]["map"] == pytest.approx(
        namespace["evaluate"](namespace["test"].y, cli_scores, namespace["test"].qid, ["map"]).metrics["map"])
