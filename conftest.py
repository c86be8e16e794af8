"""Root pytest configuration: tests and doctests of optional extras skip, naming the extra, where it is absent.

A test that needs an extra carries ``@pytest.mark.extra("torch")``; a doctest carries it when its module,
or the object it documents, declares ``_requires_extra = "torch"``. The rule (skip with the reason, or fail
where ``STRUCTRANK_REQUIRE_EXTRAS`` names the extra) is ``tests/extras.py``'s. ``pytest -m extra`` runs only
the tests that need an extra.
"""

import importlib.util
import re

import pytest
from _pytest.doctest import DoctestItem

from tests.extras import need

# structrank/learners/torch_loss.py imports torch at its top: without torch it cannot even be collected as doctests
# (and so do the sentence-transformers loss module and the torchrun script of the tests)
collect_ignore = [] if importlib.util.find_spec("torch") else [
    "src/structrank/learners/torch_loss.py", "src/structrank/learners/cross_encoder_losses.py", "tests/ddp_step.py"]


#: the lab's tests: those in tests/lab (the reproductions, their claims, reports and stores, the benchmarks, and the
#: substrate only they use) and the lab package's doctests. Marked ``lab``: `./dev test` leaves them to
#: `./dev test -m lab`, CI's later pass, so that the README's test command answers for the library in minutes (CI
#: still runs everything)
LAB_TESTS = re.compile(r"^(tests/lab|src/structrank_lab)/")


def pytest_configure(config):
    config.addinivalue_line("markers", "extra(name): needs the optional extra NAME (pyproject.toml); skips with "
                                       "the reason without it, fails instead when NAME is in STRUCTRANK_REQUIRE_EXTRAS")
    config.addinivalue_line("markers", "lab: a test of the lab (LAB_TESTS); `./dev test -m lab` runs them")


def _doctest_extra(item):
    """The ``_requires_extra`` of a doctest's module, or of the object (or an object around it) it documents."""
    globs = item.dtest.globs
    extra = globs.get("_requires_extra")
    obj = None
    for part in item.dtest.name.removeprefix(globs.get("__name__", "")).strip(".").split("."):
        obj = globs.get(part) if obj is None else getattr(obj, part, None)
        if obj is None:
            break
        extra = getattr(obj, "_requires_extra", None) or extra
    return extra


@pytest.hookimpl(tryfirst=True)  # before `-m extra` selects by the marks
def pytest_collection_modifyitems(config, items):
    for item in items:
        if isinstance(item, DoctestItem) and (extra := _doctest_extra(item)):
            item.add_marker(pytest.mark.extra(extra))
        if LAB_TESTS.match(item.nodeid.split("::")[0]):
            item.add_marker(pytest.mark.lab)


def pytest_runtest_setup(item):
    for mark in item.iter_markers("extra"):
        need(*mark.args)
