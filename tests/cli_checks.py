"""Helpers of the command line's tests: a command's failure is one line and leaves its inputs alone, and no
command leaves a file open."""

import sys

import pytest

from structrank.cli import main
from structrank.data import make_ranking_dataset, write_letor


#: ``pytestmark`` of the command line's test modules (issue 38): a file left open (a ResourceWarning, which the
#: command keeps an error under this filter) fails the test, in this process and, through ``PYTHON``, in the
#: commands the tests start
NO_OPEN_FILES = [pytest.mark.filterwarnings("error::ResourceWarning"),
                 pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")]
#: how the tests start ``python -m structrank``: with a file left open an error
PYTHON = [sys.executable, "-W", "error::ResourceWarning"]


def trained_letor(folder, seed):
    """(a small LETOR training file, a RankSVM model file trained on it) in ``folder``."""
    data = folder / "train.txt"
    write_letor(data, make_ranking_dataset(n_queries=6, n_features=4, random_state=seed))
    model = folder / "model.npz"
    assert main(["train", "ranksvm", "--train", str(data), "--out", str(model), "--quiet"]) == 0
    return data, model


def one_line(capsys, argv, *names, code=2):
    """Run ``structrank ARGV``; assert the exit code and a single stderr line naming ``names``."""
    got = main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert got == code, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    for name in names:
        assert str(name) in lines[0], (name, lines[0])
    return lines[0]
