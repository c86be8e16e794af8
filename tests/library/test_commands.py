"""The commands, one module each, and the dispatcher that finds them (``structrank.commands``, ``structrank.cli``).

Every library command follows the protocol (``HELP``, ``INPUTS``, ``add_parser``, ``run``) and imports nothing
heavy at its top; another installed package adds a command through an entry point of the group
``structrank.commands``, which ``structrank --help`` lists and the dispatcher runs, without replacing a library
command of the same name; a library command starts without reading the entry points.
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from structrank import commands
from structrank.cli import main

SRC = Path(__file__).resolve().parents[2] / "src"


def _probe(code, *, path=(), args=()):
    """Standard output, error and exit code of ``code`` in a fresh interpreter, ``path`` first on sys.path."""
    env_path = ":".join([*map(str, path), str(SRC)])
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin"})
    return done.stdout, done.stderr, done.returncode


@pytest.mark.parametrize("name", commands.LIBRARY)
def test_every_library_command_follows_the_protocol(name):
    module = commands.find(name)
    assert module.__name__ == f"structrank.commands.{name}"
    assert isinstance(module.HELP, str) and module.HELP and "\n" not in module.HELP
    assert isinstance(module.INPUTS, tuple) and all(option.startswith("--") for option in module.INPUTS)
    assert callable(module.run)
    sub = argparse.ArgumentParser().add_subparsers()
    parser = module.add_parser(sub, False)
    assert sub.choices[name] is parser
    assert all(option in parser._option_string_actions for option in module.INPUTS)


def test_no_name_or_an_option_is_no_command():
    assert commands.find("") is None and commands.find("--help") is None
    assert commands.names()[:len(commands.LIBRARY)] == commands.LIBRARY


def test_the_command_modules_import_nothing_heavy():
    """``structrank --help`` imports every command module: their top level is the standard library and light
    structrank modules (no numpy, no model registry, no entry points)."""
    code = ("import sys, json\nfrom structrank import commands\n"
            "[commands.find(name) for name in commands.LIBRARY]\n"
            "heavy = ('numpy', 'scipy', 'sklearn', 'tqdm', 'importlib.metadata', 'structrank.learners', "
            "'structrank.metrics')\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith(heavy))))")
    out, err, code_ = _probe(code)
    assert code_ == 0, err
    assert json.loads(out) == []


@pytest.mark.parametrize("argv", [["--version"], ["evaluate", "--help"],
                                  ["evaluate", "--data", "{tmp}/missing.txt", "--scores", "s"],
                                  ["predict", "--model", "m", "--data", "d", "--out", "o", "--format", "nope"]])
def test_a_library_command_starts_without_reading_the_entry_points(argv, tmp_path):
    """Until the command runs (numba reads entry points of its own): ``--version``, a command's help (which lists
    no other command), the input check, the parser."""
    argv = [a.format(tmp=tmp_path) for a in argv]
    code = ("import sys, json\nfrom structrank.cli import main\ntry:\n    main(json.loads(sys.argv[1]))\n"
            "except SystemExit:\n    pass\nprint('metadata', 'importlib.metadata' in sys.modules)")
    out, err, code_ = _probe(code, args=[json.dumps(argv)])
    assert out.strip().splitlines()[-1] == "metadata False", err


PLUGIN = '''"""A command of another package."""

HELP = "say hello from a plugin"
INPUTS = ("--names",)


def add_parser(sub, details):
    p = sub.add_parser("hello", help=HELP)
    p.add_argument("--names", required=True)
    p.add_argument("--run", default="x")  # an option named as the protocol's function
    return p


def run(args):
    if args.run == "fail":
        raise ValueError("asked to fail")
    with open(args.names) as names:
        print(names.read().strip(), "hello", "quiet" if args.quiet else "loud")
    return 3
'''


@pytest.fixture
def plugin(tmp_path):
    """A folder holding an installed distribution whose entry points add ``hello`` and try to replace ``train``."""
    site = tmp_path / "site"
    info = site / "helloplugin-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: helloplugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[structrank.commands]\nhello = helloplugin_hello\n"
                                           "train = helloplugin_hello\n")
    (site / "helloplugin_hello.py").write_text(PLUGIN)
    (tmp_path / "names.txt").write_text("world\n")
    return site


RUN = "import sys, json\nfrom structrank.cli import main\nsys.exit(main(json.loads(sys.argv[1])))"


def test_a_plugin_command_is_listed_and_runs(plugin, tmp_path):
    out, err, code = _probe(RUN, path=[plugin], args=[json.dumps(["--help"])])
    assert code == 0, err
    assert "hello" in out and "say hello from a plugin" in out and "train a model on a LETOR/SVMlight file" in out
    names = str(tmp_path / "names.txt")
    out, err, code = _probe(RUN, path=[plugin], args=[json.dumps(["hello", "--names", names, "--quiet"])])
    assert (code, out, err) == (3, "world hello quiet\n", "")
    # its errors and missing inputs end in one line, as a library command's
    out, err, code = _probe(RUN, path=[plugin], args=[json.dumps(["hello", "--names", names, "--run", "fail"])])
    assert (code, err) == (2, "structrank hello: error: asked to fail\n")
    missing = str(tmp_path / "missing.txt")
    out, err, code = _probe(RUN, path=[plugin], args=[json.dumps(["hello", "--names", missing])])
    assert (code, err) == (2, f"structrank hello: error: {missing}: file not found\n")


def test_a_plugin_does_not_replace_a_library_command(plugin):
    out, err, code = _probe(RUN, path=[plugin], args=[json.dumps(["train", "--help"])])
    assert code == 0, err
    assert "models, by the class that trains them" in out
    code_ = ("import json\nfrom structrank import commands\n"
             "print(json.dumps([commands.names(), commands.find('train').__name__]))")
    out, err, code = _probe(code_, path=[plugin])
    names, train = json.loads(out)
    plugins = names[len(commands.LIBRARY):]
    assert names[:len(commands.LIBRARY)] == list(commands.LIBRARY) and train == "structrank.commands.train"
    assert "hello" in plugins and "train" not in plugins and plugins == sorted(plugins)


def test_a_plugin_that_cannot_be_imported_is_listed_and_refused_in_one_line(plugin):
    """Another package's broken command neither breaks ``structrank --help`` nor ends in a traceback."""
    info = plugin / "helloplugin-0.1.dist-info"
    (info / "entry_points.txt").write_text("[structrank.commands]\nhello = helloplugin_hello\nbroken = nowhere_mod\n")
    out, err, code = _probe(RUN, path=[plugin], args=[json.dumps(["--help"])])
    assert code == 0, err
    assert "broken" in out and "(cannot be loaded: ModuleNotFoundError)" in out and "say hello from a plugin" in out
    out, err, code = _probe(RUN, path=[plugin], args=[json.dumps(["broken", "--any", "thing"])])
    assert code == 2 and "Traceback" not in err, err
    assert err == ("structrank broken: error: the command 'broken' (entry point 'nowhere_mod' of the group "
                   "structrank.commands) cannot be loaded: ModuleNotFoundError: No module named 'nowhere_mod'\n")


def test_an_unknown_command_is_refused_with_the_list_of_commands(plugin, capsys):
    out, err, code = _probe(RUN, path=[plugin], args=[json.dumps(["nope"])])
    assert code == 2 and "invalid choice: 'nope'" in err and "'hello'" in err


def test_an_error_line_names_the_command_even_beside_an_option_named_command(tmp_path, capsys):
    """``results --command TEXT`` names the command of the stores, not this one."""
    assert main(["results", str(tmp_path / "none.sqlite"), "--out", str(tmp_path / "r.md"), "--command", "x y"]) == 2
    assert capsys.readouterr().err.startswith("structrank results: error: ")
