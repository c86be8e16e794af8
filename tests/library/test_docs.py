"""The documentation site's sources and the public API's docstrings (issue 23, point 7).

The site itself is built by ``python tools/build_docs.py`` (``./dev docs``), with warnings as errors,
in .ci/run. Here: every public module has its API page, every public class an Examples section, and
those examples run (they also run under ``--doctest-modules`` when pytest is given no path, as in
the README's ``./dev test``; these tests run them under ``pytest tests`` too).
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from extras import need

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "docs" / "site"

#: the modules whose ``__all__`` is the public API; each has a page docs/site/api/NAME.rst
PUBLIC_MODULES = (
    "structrank", "structrank.data", "structrank.metrics", "structrank.metrics.compare", "structrank.fusion",
    "structrank.oracles",
    "structrank.losses", "structrank.learners", "structrank.kernels", "structrank_lab.nlp", "structrank.qa",
    "structrank.learners.torch_loss", "structrank_lab.experiments", "structrank.model_selection", "structrank.model_io",
    "structrank.archive",
    "structrank.export", "structrank.pyterrier", "structrank.figures", "structrank.errors",
)


def _module(name):
    if name == "structrank.learners.torch_loss":
        need("torch")
    if name == "structrank.pyterrier":  # its class is built on PyTerrier's when first asked for
        need("pyterrier")
    return importlib.import_module(name)


def public_classes():
    """(qualified name, module name, class) of every class a public module exports, once each."""
    seen = {}
    for name in PUBLIC_MODULES:
        try:
            module = _module(name)
        except pytest.skip.Exception:
            continue
        for export in module.__all__:
            obj = getattr(module, export)
            if inspect.isclass(obj):
                seen.setdefault(f"{obj.__module__}.{obj.__qualname__}", (name, obj))
    return [(qualified, module, obj) for qualified, (module, obj) in sorted(seen.items())]


CLASSES = public_classes()


def test_every_public_module_has_an_api_page():
    pages = {p.stem for p in (SITE / "api").glob("*.rst")} - {"index"}
    assert pages == set(PUBLIC_MODULES)
    index = (SITE / "api" / "index.rst").read_text()
    assert [line.strip() for line in index.splitlines() if line.startswith("   structrank")] == list(PUBLIC_MODULES)
    for name in PUBLIC_MODULES:
        assert f".. automodule:: {name}" in (SITE / "api" / f"{name}.rst").read_text()


def test_every_public_name_is_in_its_module_s_dir():
    """autodoc finds a module's members through ``dir()``: a name loaded lazily (PEP 562's module
    ``__getattr__``) needs the module's ``__dir__`` to list it, else the API reference misses it."""
    for name in PUBLIC_MODULES:
        try:
            module = _module(name)
        except pytest.skip.Exception:
            continue
        assert set(module.__all__) <= set(dir(module)), (name, sorted(set(module.__all__) - set(dir(module))))


def test_every_module_with_all_is_public_or_inside_a_public_package():
    """A module that declares ``__all__`` is in PUBLIC_MODULES, or a package in it re-exports it."""
    src = ROOT / "src"
    for path in sorted((src / "structrank").rglob("*.py")):
        if not re.search(r"^__all__\s*=", path.read_text(), re.M):
            continue
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        name = ".".join(parts)
        assert name in PUBLIC_MODULES or ".".join(parts[:-1]) in PUBLIC_MODULES, name


def test_the_top_level_page_lists_every_top_level_name():
    import structrank

    page = (SITE / "api" / "structrank.rst").read_text()
    listed = set(re.findall(r"(?:class|func):`structrank\.(\w+) <", page))
    assert listed == set(structrank.__all__) - {"__version__"}
    assert "structrank.__version__" in page


def test_the_markdown_pages_of_docs_are_in_the_site():
    """Every docs/*.md page is included (not copied) by a page of the site's table of contents."""
    included = {}
    for page in SITE.glob("*.md"):
        match = re.search(r"```\{include\} \.\./(\w+\.md)", page.read_text())
        if match:
            included[match.group(1)] = page.stem
    assert set(included) == {p.name for p in (ROOT / "docs").glob("*.md")}
    toc = (SITE / "index.md").read_text()
    for stem in [*included.values(), "tutorial", "api/index"]:
        assert re.search(rf"^{re.escape(stem)}$", toc, re.M), stem


@pytest.mark.parametrize("qualified, module, cls", CLASSES, ids=[c[0] for c in CLASSES])
def test_public_class_has_an_examples_section(qualified, module, cls):
    doc = inspect.cleandoc(cls.__doc__ or "")
    section = re.search(r"^Examples\n-{8}\n(.*)", doc, re.M | re.S)
    assert section, f"{qualified} (exported by {module}) has no numpydoc Examples section"
    assert ">>> " in section.group(1), f"{qualified}: its Examples section has no example"


@pytest.mark.parametrize("qualified, module, cls", [
    pytest.param(*c, marks=pytest.mark.extra(c[2]._requires_extra)) if getattr(c[2], "_requires_extra", None) else c
    for c in CLASSES], ids=[c[0] for c in CLASSES])
def test_public_class_examples_run(qualified, module, cls):
    defining = importlib.import_module(cls.__module__)
    tests = doctest.DocTestFinder(recurse=False).find(cls, qualified, module=defining, globs=vars(defining).copy())
    assert tests and tests[0].examples
    out = []
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in tests:
        runner.run(test, out=out.append)
    assert runner.failures == 0, "".join(out)


def test_every_ranker_fit_is_documented():
    import structrank.learners as learners

    for name in learners.__all__:
        cls = getattr(learners, name)
        if inspect.isclass(cls) and "fit" in vars(cls):
            doc = inspect.getdoc(vars(cls)["fit"])
            assert doc and len(doc.split()) > 5, f"{name}.fit has no docstring"


def test_the_readme_test_command_runs_the_doctests_of_the_sources():
    """``./dev test`` is pytest without a path: testpaths then include the package, with --doctest-modules."""
    pyproject = (ROOT / "pyproject.toml").read_text()  # read as text: tomllib is Python 3.11+
    options = pyproject[pyproject.index("[tool.pytest.ini_options]"):]
    assert re.search(r'^testpaths = \[.*"src/structrank".*\]$', options, re.M)
    assert re.search(r'^addopts = ".*--doctest-modules.*"$', options, re.M)
    assert re.search(r"^\./dev test\b", (ROOT / ".ci" / "run").read_text(), re.M)
    assert re.search(r"^\./dev docs\b", (ROOT / ".ci" / "run").read_text(), re.M)



@pytest.mark.parametrize("given, told", [
    ([], ["-n", "auto", "-m", "not lab and not slow"]),
    (["-m", "lab"], ["-n", "auto", "-m", "lab"]),
    (["-n", "1"], ["-m", "not lab and not slow", "-n", "1"]),
    (["-p", "no:xdist"], ["-m", "not lab and not slow", "-p", "no:xdist"]),
    (["--pdb"], ["-m", "not lab and not slow", "--pdb"]),
])
def test_dev_test_leaves_the_lab_and_the_slow_tests_out_and_runs_a_worker_per_core_unless_told(given, told, tmp_path):
    """``./dev test``'s rules, run by bash on a copy of ``dev`` whose python prints the arguments pytest gets."""
    (tmp_path / "pyproject.toml").write_text("")
    bin_ = tmp_path / ".venv" / "bin"
    bin_.mkdir(parents=True)
    (bin_ / "python").write_text('#!/bin/sh\nshift 2\nprintf "%s\\n" "$@"\n')  # drops "-m pytest"; a line each
    (bin_ / "python").chmod(0o755)
    (tmp_path / ".venv" / ".structrank-installed").write_text("test\n")  # not older than pyproject.toml: no install
    shutil.copy(ROOT / "dev", tmp_path / "dev")
    done = subprocess.run(["bash", str(tmp_path / "dev"), "test", *given], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == told
