"""The registries (issue 23, point 2): experiments by name, each module imported on use."""

import importlib
import json
import subprocess
import sys

from structrank_lab.experiments import registry


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
    code = ("from structrank_lab.experiments.registry import EXPERIMENTS, REPORTS, CLAIMS\n"
            "from structrank_lab.experiments.report import write_results_markdown\n"
            "assert 'chakrabarti2008' in EXPERIMENTS and 'croce2016' in CLAIMS and len(REPORTS) == 8")
    assert [m for m in _modules_after(code, "structrank_lab.experiments.") if m in papers] == []
    code = ("from structrank.cli import main\ntry:\n    main(['reproduce', '--help'])\nexcept SystemExit:\n    pass")
    assert [m for m in _modules_after(code, "structrank_lab.experiments.") if m in papers] == []


def test_an_item_set_replaces_the_function_and_can_be_removed():
    table = registry.OnUse("claims", ("volkovs2011",))
    table["volkovs2011"] = len
    table["new"] = min
    assert list(table) == ["volkovs2011", "new"] and table["volkovs2011"] is len and table.get("none") is None
    del table["new"]
    assert len(table) == 1


# -- the models ----------------------------------------------------------------------------------------------------


def test_every_constructor_read_from_its_source_equals_get_params():
    """`train --help` lists parameters read without importing a learner (tests/library/test_import_graph.py checks
    that nothing is imported); here they must be what the classes themselves give, value and type."""
    from structrank.learners.registry import RANKERS, constructor_defaults, ranker_class

    for name in RANKERS:
        expected = dict(sorted(ranker_class(name)().get_params(deep=False).items()))
        read = constructor_defaults(name)
        assert list(read) == list(expected) and repr(read) == repr(expected), name


def test_every_model_lists_the_parameters_it_is_made_with():
    from structrank.learners.registry import MODELS

    for name, spec in MODELS.items():
        assert repr(spec.parameters()) == repr(spec.make().get_params()), name


def test_a_model_file_may_name_only_a_class_that_a_registered_model_trains():
    from structrank.learners import LowDimReranker, StructSVMRanker
    from structrank.learners.registry import MODELS, RANKERS, ranker_class

    assert ranker_class("StructSVMRanker") is StructSVMRanker
    assert set(RANKERS) == {spec.estimator for spec in MODELS.values()}
    assert LowDimReranker.__name__ not in RANKERS
    for name in ("LowDimReranker", "BaseRanker", "preference_pairs", "__class__", "os", "", None, 3, ["RankSVM"]):
        assert ranker_class(name) is None


def test_a_default_bound_to_a_name_is_followed_through_imports(tmp_path, monkeypatch):
    from structrank.learners import registry as models

    package = tmp_path / "h3pkg"
    (package / "inner").mkdir(parents=True)
    (package / "__init__.py").write_text("from .inner import WIDTH as SIZE\n")
    (package / "inner" / "__init__.py").write_text("from .values import WIDTH\n")
    (package / "inner" / "values.py").write_text("BASE = (3, 'x')\nWIDTH = BASE\nWIDTH = 7\n")
    (package / "other.py").write_text("from h3pkg import SIZE\nfrom . import inner\nCALL = len('ab')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert models._bound_value("h3pkg", "SIZE") == 7  # the last binding
    assert models._bound_value("h3pkg.inner.values", "BASE") == (3, "x")
    assert models._bound_value("h3pkg.other", "SIZE") == 7
    for name in ("CALL", "MISSING"):
        try:
            models._bound_value("h3pkg.other", name)
        except (LookupError, ValueError):
            continue
        raise AssertionError(f"{name} is not a literal")
