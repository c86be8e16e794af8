"""Sphinx configuration of structrank's documentation site (built by ``python tools/build_docs.py``).

The Markdown pages of docs/ (architecture, results, benchmarks, ...) are included as they are by
myst-parser; the API reference is autodoc over each public module's ``__all__``, with numpydoc
docstrings. The build runs with warnings as errors, in CI too.
"""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))
os.environ.setdefault("MPLBACKEND", "Agg")

import structrank  # noqa: E402

project = "structrank"
author = "the structrank developers"
copyright = "structrank developers, MIT licence"
release = version = structrank.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = []
# every cross-reference in a docstring must resolve (:class:`...`, :func:`...`): with -W a broken one fails
nitpicky = True

autodoc_default_options = {"members": True, "member-order": "bysource"}
try:  # structrank.learners.torch_loss's page needs torch, an optional dependency: without it, autodoc mocks it
    import torch  # noqa: F401
except ImportError:
    autodoc_mock_imports = ["torch"]
autodoc_typehints = "none"  # numpydoc's Parameters sections say the types
numpydoc_show_class_members = False  # the members are documented below each class by autodoc
numpydoc_xref_param_type = False
# numpydoc checks that fail the build (with -W): unknown sections and sections out of order
numpydoc_validation_checks = {"GL06", "GL07"}

myst_heading_anchors = 3
myst_enable_extensions = ["dollarmath"]
suppress_warnings = []

html_theme = "alabaster"
html_title = f"structrank {release}"
html_theme_options = {"description": "Structured, loss-sensitive learning to rank", "fixed_sidebar": True}


def _skip_foreign(app, what, name, obj, skip, options):
    """Leave out members that structrank did not write: the ``set_*_request`` methods scikit-learn
    generates on every estimator and splitter (documented in scikit-learn's metadata routing guide)."""
    module = getattr(obj, "__module__", None) or ""
    if what == "class" and callable(obj) and not module.startswith("structrank"):
        return True
    return None


def _constant_doc(module, name) -> list:
    """The ``#:`` comment of constant ``name`` of ``module``, or of the module it imports it from."""
    import ast
    import importlib

    from sphinx.pycode import ModuleAnalyzer

    for _ in range(3):  # structrank_lab.experiments -> .store, or one more hop
        docs = ModuleAnalyzer.for_module(module).find_attr_docs()
        if ("", name) in docs:
            return list(docs[("", name)])
        path = importlib.import_module(module).__file__
        imports = [node for node in ast.walk(ast.parse(Path(path).read_text()))
                   if isinstance(node, ast.ImportFrom) and any(alias.name == name for alias in node.names)]
        if not imports or not imports[0].module:
            return []
        module = imports[0].module
    return []


def _constants(app, docname, source):
    """Append to each API page the constants its module exports: autodoc documents a module's data
    only where it is assigned with a ``#:`` comment, not a constant re-exported from a submodule."""
    import importlib
    import inspect

    from sphinx.pycode import ModuleAnalyzer

    if not docname.startswith(("api/structrank.", "api/structrank_lab.")) or docname == "api/structrank":
        return
    module_name = docname[len("api/"):]
    try:
        module = importlib.import_module(module_name)
    except ImportError:  # structrank.learners.torch_loss without torch: autodoc documents it from a mock
        return
    lines = []
    for name in module.__all__:
        value = getattr(module, name)
        if inspect.isclass(value) or inspect.isroutine(value) or inspect.ismodule(value):
            continue
        if ("", name) in ModuleAnalyzer.for_module(module_name).find_attr_docs():
            continue  # assigned here with a #: comment: automodule documents it
        lines += ["", f".. py:data:: {name}", ""] + [f"   {line}" for line in _constant_doc(module_name, name)]
    if lines:
        source[0] += "\n\nConstants\n---------\n" + "\n".join(lines) + "\n"


def setup(app):
    app.connect("autodoc-skip-member", _skip_foreign)
    app.connect("source-read", _constants)
