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
nitpicky = False

autodoc_default_options = {"members": True, "member-order": "bysource"}
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


def setup(app):
    app.connect("autodoc-skip-member", _skip_foreign)
