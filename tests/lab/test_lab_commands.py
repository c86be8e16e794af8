"""The lab's commands reach the ``structrank`` command through entry points: found, listed, on the protocol."""

import argparse

import pytest

from structrank import commands
from structrank.cli import main

LAB = ("bench", "reproduce", "results")


@pytest.mark.parametrize("name", LAB)
def test_each_lab_command_is_an_entry_point_on_the_protocol(name):
    assert name not in commands.LIBRARY
    module = commands.find(name)
    assert module is not None, f"{name}: no entry point (reinstall: pip install -e .)"
    assert module.__name__ == f"structrank_lab.commands.{name}"
    assert isinstance(module.HELP, str) and module.HELP and "\n" not in module.HELP
    sub = argparse.ArgumentParser().add_subparsers()
    assert sub.choices.get(name) is None
    assert module.add_parser(sub, False) is sub.choices[name]


def test_the_top_level_help_lists_the_lab_commands_after_the_library_s(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert commands.names() == (*commands.LIBRARY, *LAB)
    for name in LAB:
        assert commands.find(name).HELP in out


def test_a_lab_command_runs_and_its_errors_are_one_line(tmp_path, capsys):
    assert main(["results", str(tmp_path / "none.sqlite"), "--out", str(tmp_path / "r.md")]) == 2
    assert capsys.readouterr().err == (f"structrank results: error: {tmp_path / 'none.sqlite'}: no such result store "
                                       "or folder of kept runs\n")
