"""The README's examples run as they are written (issue 37, point 7).

Every ``python`` block runs on its own, in a fresh namespace (so each defines what it uses), and every
``bash`` block line by line, in order, in one empty folder (a block may read a file an earlier one
wrote, as a reader following the page would): ``name=value`` lines set shell variables (``$name``,
``${name:-default}``), and ``structrank`` lines run through the CLI's ``main``. The data paths are under
``STRUCTRANK_DATA``. The first block's ``./dev`` commands are what CI itself runs (.ci/run). The commands
that run a whole reproduction or benchmark (``reproduce``, ``results``, ``bench``: minutes to hours, by
design outside the test suite) are parsed by the CLI's own parser and their input paths checked, not run.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import sklearn

from structrank.cli import build_parser, main

README = Path(__file__).resolve().parents[2] / "README.md"
#: subcommands whose README lines are parsed, not run (long by design: `structrank reproduce` is resumable)
PARSED_ONLY = {"reproduce", "results", "bench"}
VARIABLE = re.compile(r"\$\{(\w+):-([^}]*)\}|\$\{(\w+)\}|\$(\w+)")


def code_blocks(text):
    """[(language, code)] of the fenced blocks of a Markdown page, in order."""
    return [(m.group(1), m.group(2)) for m in re.finditer(r"^```(\w+)\n(.*?)^```$", text, re.M | re.S)]


def expand(text, env):
    """The shell's expansion of ``$name``, ``${name}`` and ``${name:-default}`` (all the README uses)."""
    def value(match):
        name = match.group(1) or match.group(3) or match.group(4)
        return env.get(name) or (match.group(2) or "")
    return VARIABLE.sub(value, text)


def shell_lines(code):
    """The lines of a bash block, with backslash continuations joined."""
    return code.replace("\\\n", " ").splitlines()


def test_the_readme_starts_with_the_demo_and_test_commands_and_links_the_tutorial():
    blocks = code_blocks(README.read_text())
    first = [shlex.split(line, comments=True) for line in shell_lines(blocks[0][1])]
    assert [argv[:2] for argv in first if argv][:2] == [["./dev", "demo"], ["./dev", "test"]]
    head = README.read_text()[:3000]
    assert "(docs/site/tutorial.md)" in head and "5-minute" in head
    assert (README.parent / "docs" / "site" / "tutorial.md").is_file()


def test_every_readme_block_is_python_or_bash():
    assert {language for language, _ in code_blocks(README.read_text())} == {"python", "bash"}


#: a README line that ends with this comment is a fine-tuning of the real encoder, or uses its model (minutes,
#: the text extra): parsed, not run; tests/library/test_cross_encoder.py runs the same commands on a tiny BERT
FINE_TUNING = "# fine-tuning (tests/library/test_cross_encoder.py runs it on a tiny BERT)"


@pytest.mark.data
@pytest.mark.slow
def test_the_readme_examples_run(tmp_path, monkeypatch, capsys, data_root):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("STRUCTRANK_DATA", str(data_root))
    env = {"STRUCTRANK_DATA": str(data_root)}
    ran, parsed = [], []
    for index, (language, code) in enumerate(code_blocks(README.read_text())[1:], start=2):
        if language == "python" and FINE_TUNING in code:  # a fine-tuning in Python: compiled, not run
            compile(code, f"{README}, block {index}", "exec")
            parsed.append("python fine-tuning")
            continue
        if language == "python":
            with sklearn.config_context():  # a block's sklearn.set_config (metadata routing) ends with it
                exec(compile(code, f"{README}, block {index}", "exec"), {"__name__": f"readme_block_{index}"})
            ran.append(f"python block {index}")
            continue
        for line in shell_lines(code):
            assignment = re.fullmatch(r"(\w+)=(\S+)\s*(#.*)?", line.strip())
            if assignment:
                env[assignment.group(1)] = expand(assignment.group(2), env)
                continue
            argv = shlex.split(expand(line, env), comments=True)
            if not argv:
                continue
            assert argv[0] == "structrank", f"README block {index}: a command other than structrank: {line}"
            if argv[1] in PARSED_ONLY or FINE_TUNING in line:
                args = build_parser().parse_args(argv[1:])  # exits (fails the test) on a wrong option
                for path in (getattr(args, name, None) for name in ("data_dir", "stores")):
                    for p in ([path] if isinstance(path, str) else path or []):
                        assert Path(p).exists() or p.endswith(".sqlite"), f"README block {index}: {p} is missing"
                parsed.append(" ".join(argv[:2]))
                continue
            code_ = main(argv[1:])
            assert code_ == 0, f"README block {index}: {line}\n{capsys.readouterr().err}"
            capsys.readouterr()
            ran.append(" ".join(argv[:2]))
    # what ran: every Python block and the commands a user runs day to day
    assert ran.count("structrank train") >= 5 and "structrank compare" in ran and "structrank export" in ran
    assert sum(r.startswith("python") for r in ran) >= 5
    assert set(parsed) <= {f"structrank {c}" for c in (*PARSED_ONLY, "train", "predict", "evaluate")} | {
        "python fine-tuning"}
    assert (tmp_path / "model.json").is_file() and (tmp_path / "diff.png").is_file()


def _readme_table_tool():
    import importlib.util

    spec = importlib.util.spec_from_file_location("readme_table", README.parent / "tools" / "readme_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_readme_table_of_losses_and_models_is_the_registries(monkeypatch):
    """The README lists no loss or model by hand: its table is generated from the registries, so a loss
    added without `python tools/readme_table.py` run (or a model) fails here (issue 39, point 3)."""
    tool = _readme_table_tool()
    text = README.read_text()
    assert tool.fill(text) == text, "README.md's table of losses is stale: run `python tools/readme_table.py`"
    block = tool.BLOCK.search(text).group(0)
    from structrank.learners.registry import MODELS, models_by_loss
    from structrank.losses import loss_names

    for name in loss_names():
        assert f"| `{name}` |" in block
    assert all(f"`{model}`" in block for model in MODELS)
    assert tool.main(["--check"]) == 0

    assert set(models_by_loss()) == {*loss_names(), None}

    # a loss registered and the README not regenerated: the check fails
    grown = tool.readme_table() + "| `new` | hinge | new | `svm-new` |\n"
    monkeypatch.setattr(tool, "readme_table", lambda: grown)
    assert tool.fill(text) != text and tool.main(["--check"]) == 1
