"""The layers keep their rules, read from the sources by tools/import_graph.py.

Each rule forbids a layer to import some modules, deferred imports included. ``KNOWN`` lists the
imports that still break a rule, each with why it is there: a new breach fails, and so does a
listed one that has gone (so that the list only shrinks).
"""

import ast
import importlib.util
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parents[2] / "tools" / "import_graph.py"
spec = importlib.util.spec_from_file_location("import_graph", TOOL)
import_graph = importlib.util.module_from_spec(spec)
spec.loader.exec_module(import_graph)

READERS = ("structrank.data.letor", "structrank.data.svmlight", "structrank.data.cache",
           "structrank.data.prepare", "structrank.data.folds")  # not the containers (dataset, nbest, labels)
ABOVE = ("structrank_lab", "structrank.cli", "structrank.commands")

#: layer -> prefixes of the modules it must not import
RULES = {
    "data": ("structrank.learners", "structrank.metrics", "structrank.oracles", "structrank.losses",
             "structrank.parallel", *ABOVE),
    "metrics": (*READERS, "structrank.learners", "structrank.oracles", "structrank.losses", *ABOVE),
    # oracles are pure kernels over flat arrays: no loss object, learner, metric or data set
    "oracles": ("structrank.losses", "structrank.learners", "structrank.metrics", "structrank.data",
                "structrank.parallel", "structrank.kernels", "structrank_lab.nlp", "structrank.qa",
                "structrank.model_io", *ABOVE),
    # a loss holds its kernels (oracles), its target and the name of its metric: it runs no learner or metric
    "losses": ("structrank.learners", "structrank.metrics", "structrank.data", "structrank.kernels",
               "structrank_lab.nlp", "structrank.qa", "structrank.model_io", *ABOVE),
    "learners": (*READERS, "structrank.oracles", *ABOVE),  # a learner asks its loss object, never an oracle
    "kernels": ("structrank.learners", "structrank.metrics", *ABOVE),
    # shards and rows serve any learner; they know none, nor any loss
    "parallel": ("structrank.learners", "structrank.losses", "structrank.oracles", "structrank.metrics",
                 "structrank.kernels", "structrank_lab.nlp", "structrank.qa", *ABOVE),
    # text features: no learner, loss or metric (the experiments put them together)
    "qa": ("structrank.learners", "structrank.losses", "structrank.oracles", "structrank.metrics",
           "structrank.parallel", *ABOVE),
    # the lab's language substrate: a tagger's file is an archive (structrank.archive), not a ranker's model file
    # (model_io reaches the learners); the QA features' tokenizer is the library's public one
    "lab.nlp": ("structrank.learners", "structrank.losses", "structrank.oracles", "structrank.metrics",
                "structrank.parallel", "structrank.model_io", "structrank_lab.experiments", "structrank_lab.bench",
                "structrank.cli", "structrank.commands"),
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


def test_the_library_never_imports_the_lab(graph):
    """structrank holds what a user imports; the lab (structrank_lab) sits on top of it, so no module of the library,
    its command line included, imports the lab, not even inside a function (its commands come through entry
    points)."""
    found = sorted((m, t) for m, targets in graph.items() if m.split(".")[0] == "structrank"
                   for t in targets if t.split(".")[0] == "structrank_lab")
    assert found == []


def _private_uses(path):
    """[(line, name)] of the private names of structrank (a leading underscore) that a lab module imports or reaches as
    an attribute of an imported structrank module or name."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported = set()  # the local names bound to structrank's modules and objects
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "structrank" and not node.level:
            for alias in node.names:
                if alias.name.startswith("_"):
                    found.append((node.lineno, f"{node.module}.{alias.name}"))
                imported.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "structrank":
                    imported.add((alias.asname or alias.name).split(".")[0])
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                and isinstance(node.value, ast.Name) and node.value.id in imported):
            found.append((node.lineno, f"{node.value.id}.{node.attr}"))
    return sorted(found)


def test_the_lab_imports_only_public_names_of_the_library():
    src = TOOL.parents[1] / "src" / "structrank_lab"
    found = [f"{path.relative_to(src.parent)}:{line}: {name}" for path in sorted(src.rglob("*.py"))
             for line, name in _private_uses(path)]
    assert found == []


def test_a_private_name_taken_from_the_library_is_caught(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("from structrank.learners.crf import PermutationCRFRanker, _seed\nimport structrank.parallel.shards as sh"
                      "\nfrom structrank.learners import ssvm\n\ndef f(model):\n    sh._cache_shard()\n    ssvm._shard_step()\n"
                      "    model._private()\n    return PermutationCRFRanker._x\n")
    assert _private_uses(module) == [(1, "structrank.learners.crf._seed"), (6, "sh._cache_shard"),
                                     (7, "ssvm._shard_step"), (9, "PermutationCRFRanker._x")]


def test_no_circle_among_module_level_imports(graph):
    edges = {m: [t for t, deferred in targets.items() if not deferred and t in graph] for m, targets in graph.items()}
    assert import_graph.cycles(edges) == []


def test_only_the_dispatcher_and_the_commands_import_the_commands(graph):
    """``structrank.cli`` finds the commands by name (``structrank.commands.find``); no library module imports one,
    and a command, the library's or the lab's, imports no other command (what they share is
    ``structrank.commands.options``)."""
    importers = {(m, t) for m, targets in graph.items() for t in targets if _bound("structrank.commands", t)}
    shared = ("structrank.commands", "structrank.commands.options")
    command_modules = {m for m in graph if _bound("structrank.commands", m) or _bound("structrank_lab.commands", m)}
    assert {m for m, _ in importers} <= {"structrank.cli", *command_modules}
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
    """Imports belong at module level; one inside a function carries ``# deferred: REASON``."""
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
