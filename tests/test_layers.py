"""The layers keep their rules (issue 23), read from the sources by tools/import_graph.py.

Each rule forbids a layer to import some modules, deferred imports included. ``KNOWN`` lists the
imports that still break a rule, each with why it is there: a new breach fails, and so does a
listed one that has gone (so that the list only shrinks).
"""

import importlib.util
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parents[1] / "tools" / "import_graph.py"
spec = importlib.util.spec_from_file_location("import_graph", TOOL)
import_graph = importlib.util.module_from_spec(spec)
spec.loader.exec_module(import_graph)

READERS = ("structrank.data.letor", "structrank.data.svmlight", "structrank.data.cache",
           "structrank.data.prepare", "structrank.data.folds")  # not the containers (dataset, nbest, labels)
ABOVE = ("structrank.experiments", "structrank.cli", "structrank.commands", "structrank.bench")

#: layer -> prefixes of the modules it must not import
RULES = {
    "data": ("structrank.learners", "structrank.metrics", "structrank.oracles", "structrank.losses",
             "structrank.parallel", *ABOVE),
    "metrics": (*READERS, "structrank.learners", "structrank.oracles", "structrank.losses", *ABOVE),
    # oracles are pure kernels over flat arrays: no loss object, learner, metric or data set
    "oracles": ("structrank.losses", "structrank.learners", "structrank.metrics", "structrank.data",
                "structrank.parallel", "structrank.kernels", "structrank.nlp", "structrank.qa",
                "structrank.model_io", *ABOVE),
    # a loss holds its kernels (oracles), its target and the name of its metric: it runs no learner or metric
    "losses": ("structrank.learners", "structrank.metrics", "structrank.data", "structrank.kernels",
               "structrank.nlp", "structrank.qa", "structrank.model_io", *ABOVE),
    "learners": (*READERS, "structrank.oracles", *ABOVE),  # a learner asks its loss object, never an oracle
    "kernels": ("structrank.learners", "structrank.metrics", *ABOVE),
    # shards and rows serve any learner; they know none, nor any loss
    "parallel": ("structrank.learners", "structrank.losses", "structrank.oracles", "structrank.metrics",
                 "structrank.kernels", "structrank.nlp", "structrank.qa", *ABOVE),
    # text features: no learner, loss or metric (the experiments put them together)
    "qa": ("structrank.learners", "structrank.losses", "structrank.oracles", "structrank.metrics",
           "structrank.parallel", *ABOVE),
    # a tagger's file is an archive (structrank.archive), not a ranker's model file (model_io reaches the learners)
    "nlp": ("structrank.learners", "structrank.losses", "structrank.oracles", "structrank.metrics",
            "structrank.parallel", "structrank.qa", "structrank.model_io", *ABOVE),
    # run fusion reads and evaluates TREC runs (metrics) and knows no learner, loss or data reader
    "fusion": (*READERS, "structrank.learners", "structrank.oracles", "structrank.losses", *ABOVE),
    # the workflows the commands run are the library's: they know no command
    "model_training": ABOVE,
    "labelled": ABOVE,
}

#: (module, imported module): why it is still there (a new breach fails the test below)
KNOWN: dict = {}


def _bound(prefix, module):
    return module == prefix or module.startswith(prefix + ".")


def breaches(graph):
    found = set()
    for module, targets in graph.items():
        forbidden = RULES.get(import_graph.layer(module), ())
        found |= {(module, t) for t in targets if any(_bound(p, t) for p in forbidden)}
    return found


@pytest.fixture(scope="module")
def graph():
    return import_graph.imports()


def test_no_layer_imports_what_its_rule_forbids(graph):
    new = breaches(graph) - set(KNOWN)
    assert not new, f"imports that break a layer rule: {sorted(new)}"


def test_the_known_breaches_are_all_still_there(graph):
    gone = set(KNOWN) - breaches(graph)
    assert not gone, f"fixed: remove from KNOWN {sorted(gone)}"


def test_no_circle_among_module_level_imports(graph):
    edges = {m: [t for t, deferred in targets.items() if not deferred and t in graph] for m, targets in graph.items()}
    assert import_graph.cycles(edges) == []


def test_only_the_dispatcher_and_the_commands_import_the_commands(graph):
    """``structrank.cli`` finds the commands by name (``structrank.commands.find``); no library module imports one,
    and a command imports no other command (what they share is ``structrank.commands.options``)."""
    importers = {(m, t) for m, targets in graph.items() for t in targets if _bound("structrank.commands", t)}
    shared = ("structrank.commands", "structrank.commands.options")
    assert {m for m, _ in importers} <= {"structrank.cli", *(m for m in graph if _bound("structrank.commands", m))}
    assert {(m, t) for m, t in importers if m != "structrank.cli" and t not in shared} == set()


def test_the_rules_catch_a_breach():
    """A made-up graph where data imports a learner and two modules import each other."""
    graph = {"structrank.data.x": {"structrank.learners.ssvm": True}, "structrank.a": {"structrank.b": False},
             "structrank.b": {"structrank.a": False}}
    assert breaches(graph) == {("structrank.data.x", "structrank.learners.ssvm")}
    assert import_graph.cycles({m: list(t) for m, t in graph.items()}) == [["structrank.a", "structrank.b"]]


def test_relative_and_deferred_imports_are_read(tmp_path):
    pkg = tmp_path / "structrank" / "data"
    pkg.mkdir(parents=True)
    (tmp_path / "structrank" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("from .letor import read\n")
    (pkg / "letor.py").write_text("import numpy\n\ndef f():\n    from structrank.learners import ssvm\n")
    got = import_graph.imports(tmp_path)
    assert got["structrank.data"] == {"structrank.data.letor": False}
    assert got["structrank.data.letor"] == {"structrank.learners": True}


def test_every_import_inside_a_function_says_why():
    """Imports belong at module level; one inside a function carries ``# deferred: REASON`` (issue 23)."""
    silent = [f"src/{path}:{line}" for path, line, explained in import_graph.deferred_imports() if not explained]
    assert not silent, f"imports inside functions without '# deferred: REASON': {silent}"


def test_an_import_inside_a_function_without_a_reason_is_caught():
    source = '''import os

def f():
    # deferred: optional extra torch
    import torch
    import numpy  # the next statement: shares the comment above

    x = "# deferred: in a string"
    import scipy

def g():
    import json  # deferred: start-up time

    class Inner:
        def method(self):
            # deferred:
            import csv
            if True:
                import gzip

class Outer:
    import math

    def method(self):
        # a comment that gives no reason
        import re
        # deferred: import cycle a <-> b
        # (the second line of the reason)
        from . import b
'''
    found = dict(import_graph.function_imports(source))
    assert found == {5: True, 6: True, 9: False, 12: True, 17: False, 19: False, 26: False, 29: True}


def test_a_module_may_give_one_reason_for_all_its_deferred_imports():
    body = "def f():\n    import torch\n\ndef g():\n    import json\n"
    assert dict(import_graph.function_imports(body)) == {2: False, 5: False}
    whole = "# deferred imports: each command loads only what it runs\nimport os\n\n" + body
    assert dict(import_graph.function_imports(whole)) == {5: True, 8: True}
    indented = "def h():\n    # deferred imports: not at the left margin\n    import csv\n"
    assert dict(import_graph.function_imports(indented)) == {3: False}
