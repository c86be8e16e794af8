"""Every structrank reader on the corpus of bad inputs of tests/bad_inputs.py.

One test per case, named ``reader/case``, so that a failure says which reader did what with
which file: valid though unusual input must load right, invalid input must raise structrank's
own error naming the file, the line and the problem, never a traceback from numpy, sklearn,
expat or zipfile. The files are written into tests/data/bad/ (git-ignored, rewritten on every
run) so that they can be opened after a failure, or into a temporary folder when tests/data
cannot be written.
"""

from pathlib import Path

import pytest

from bad_inputs import ERROR, LOADS, READERS, corpus, run_case

CASES = corpus()
BAD = Path(__file__).resolve().parents[1] / "data" / "bad"


@pytest.fixture(scope="module")
def corpus_folder(tmp_path_factory):
    """tests/data/bad/ when it can be written, else a temporary folder."""
    try:
        BAD.mkdir(parents=True, exist_ok=True)
        probe = BAD / ".writable"
        probe.write_text("")
        probe.unlink()
    except OSError:
        return tmp_path_factory.mktemp("bad")
    return BAD


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_bad_input(case, corpus_folder):
    result = run_case(case, corpus_folder)
    assert result.matched, (f"{case.id}: expected {result.expected}, got {result.outcome!r} ({result.detail}). "
                            f"Why: {case.why}")


def test_every_reader_has_inputs_to_load_and_to_refuse():
    """A reader tested only with files it must refuse could refuse everything, and vice versa."""
    for reader in READERS:
        kinds = {case.expect for case in CASES if case.reader == reader}
        assert kinds == {LOADS, ERROR}, f"{reader}: {kinds}"
