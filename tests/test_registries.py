"""The registries (issue 23, point 2): experiments by name, each module imported on use."""

import importlib
import json
import subprocess
import sys

from structrank.experiments import registry


def _modules_after(code, prefix):
    probe = f"import sys, json\n{code}\nprint(json.dumps(sorted(m for m in sys.modules if m.startswith({prefix!r}))))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_every_experiment_name_is_its_module_s_and_every_function_is_there():
    for name, path in registry.MODULES.items():
        module = importlib.import_module(path)
        assert module.EXPERIMENT == name
        assert registry.EXPERIMENTS[name] is module.reproduce
    for table, attribute in ((registry.REPORTS, "report_sections"), (registry.CLAIMS, "claims")):
        assert set(table) <= set(registry.MODULES)
        for name in table:
            assert table[name] is getattr(importlib.import_module(registry.MODULES[name]), attribute)
    # the experiments that define a report or claims are all listed
    for name, path in registry.MODULES.items():
        module = importlib.import_module(path)
        assert (name in registry.REPORTS) == hasattr(module, "report_sections"), name
        assert (name in registry.CLAIMS) == hasattr(module, "claims"), name


def test_the_registry_and_the_results_page_import_no_experiment_module():
    papers = tuple(registry.MODULES.values())
    code = ("from structrank.experiments.registry import EXPERIMENTS, REPORTS, CLAIMS\n"
            "from structrank.experiments.report import write_results_markdown\n"
            "assert 'chakrabarti2008' in EXPERIMENTS and 'croce2016' in CLAIMS and len(REPORTS) == 7")
    assert [m for m in _modules_after(code, "structrank.experiments.") if m in papers] == []
    code = ("from structrank.cli import main\ntry:\n    main(['reproduce', '--help'])\nexcept SystemExit:\n    pass")
    assert [m for m in _modules_after(code, "structrank.experiments.") if m in papers] == []


def test_an_item_set_replaces_the_function_and_can_be_removed():
    table = registry.OnUse("claims", ("volkovs2011",))
    table["volkovs2011"] = len
    table["new"] = min
    assert list(table) == ["volkovs2011", "new"] and table["volkovs2011"] is len and table.get("none") is None
    del table["new"]
    assert len(table) == 1
