"""The experiments ``structrank reproduce`` knows, by name; an experiment's module is imported when it is used.

- ``EXPERIMENTS``: name -> ``reproduce(out, data_dir, quick, n_jobs)``;
- ``REPORTS``: the experiments whose results page lays out its own tables and figures, name ->
  ``report_sections(rows, folder, link_prefix)``;
- ``CLAIMS``: the experiments that test a paper's claims, name -> ``claims(rows)`` -> list of
  ``claims.Claim`` (the "Claims" section of docs/RESULTS.md, in this order).

Each is a mapping whose names are known without importing anything, so ``structrank reproduce --help``
and the results page (``report.py``, which every experiment imports) need no experiment's module; a
value imports its experiment's module. Setting an item replaces the function (tests do).
"""

from __future__ import annotations

import importlib
from collections.abc import MutableMapping

#: experiment name -> its module (whose ``EXPERIMENT`` is the same name)
MODULES = {
    "letor-baselines": "structrank_lab.experiments.letor_baselines",
    "chakrabarti2008": "structrank_lab.experiments.chakrabarti2008",
    "haponchyk2018": "structrank_lab.experiments.haponchyk2018",
    "volkovs2011": "structrank_lab.experiments.volkovs2011",
    "jagarlamudi2012": "structrank_lab.experiments.jagarlamudi2012",
    "croce2016": "structrank_lab.experiments.croce2016",
    "own-metric": "structrank_lab.experiments.own_metric",
    "any-scorer": "structrank_lab.experiments.any_scorer",
    "neural-qa": "structrank_lab.experiments.neural_qa",
}


class OnUse(MutableMapping):
    """Experiment name -> the function ``attribute`` of its module, imported on first access."""

    def __init__(self, attribute: str, names):
        self.attribute = attribute
        self._functions = dict.fromkeys(names)  # None: its module is not imported yet

    def __getitem__(self, name):
        function = self._functions[name]
        if function is None:
            function = getattr(importlib.import_module(MODULES[name]), self.attribute)
            self._functions[name] = function
        return function

    def __setitem__(self, name, function):
        self._functions[name] = function

    def __delitem__(self, name):
        del self._functions[name]

    def __contains__(self, name):  # Mapping's would look the function up, importing its module
        return name in self._functions

    def __iter__(self):
        return iter(self._functions)

    def __len__(self):
        return len(self._functions)

    def __repr__(self):
        return f"OnUse({self.attribute!r}, {list(self._functions)})"


EXPERIMENTS = OnUse("reproduce", MODULES)
REPORTS = OnUse("report_sections", ("chakrabarti2008", "haponchyk2018", "volkovs2011", "jagarlamudi2012", "croce2016",
                                    "own-metric", "any-scorer", "neural-qa"))
CLAIMS = OnUse("claims", ("chakrabarti2008", "jagarlamudi2012", "volkovs2011", "haponchyk2018", "croce2016",
                          "neural-qa"))
