"""Tree models out (export_trees.py): the LTR plugin's ``model/xgboost+json`` scored by an evaluator written from
the plugin's rules (opensearch_ltr_eval.py) against LightGBM's own predictions, and LightGBM's model text loaded
back by LightGBM. The acceptance test on MQ2008 is tests/library/test_export_letor.py."""

from __future__ import annotations

import json
import warnings

import lightgbm
import numpy as np
import pytest

from cli_checks import NO_OPEN_FILES
from export_helpers import leaf_values, train_models
from opensearch_ltr_eval import PluginModel
from structrank.cli import main
from structrank.data import make_ranking_dataset, write_letor
from structrank.export_trees import booster_trees
from structrank.model_io import load_model

pytestmark = NO_OPEN_FILES

F32 = np.float32
Z = F32(1e-35)  # LightGBM's kZeroThreshold


def one_split_booster(threshold, missing_type, default_left):
    """A LightGBM booster of one split on feature 0 (leaves 1 and 2), from a model text written by hand.
    decision_type bits: 1 categorical, 2 default left, 4-8 missing type (0 None, 1 Zero, 2 NaN)."""
    decision = (missing_type << 2) | (2 if default_left else 0)
    text = "\n".join([
        "tree", "version=v4", "num_class=1", "num_tree_per_iteration=1", "label_index=0", "max_feature_idx=0",
        "objective=regression", "feature_names=f", "feature_infos=none", "", "Tree=0", "num_leaves=2", "num_cat=0",
        "split_feature=0", "split_gain=1", f"threshold={float(threshold)!r}", f"decision_type={decision}",
        "left_child=-1", "right_child=-2", "leaf_value=1 2", "leaf_weight=1 1", "leaf_count=1 1", "internal_value=0",
        "internal_weight=0", "internal_count=2", "is_linear=0", "shrinkage=1", "", "", "end of trees", ""])
    return lightgbm.Booster(model_str=text)


def around(value):
    """The doubles next to ``value`` and the float32 values next to its float32."""
    with np.errstate(over="ignore"):
        rounded = F32(value)
    return [value, np.nextafter(value, np.inf), np.nextafter(value, -np.inf),
            *(float(v) for v in (np.nextafter(rounded, F32(-np.inf)), rounded, np.nextafter(rounded, F32(np.inf))))]


THRESHOLDS = [np.nextafter(0.602759, 1.0), 0.602759, 0.1, 0.5, 0.0, -0.0, 1e-36, -1e-36, 3e-35, -3e-35, float(Z),
              float(-Z), 1e-45, -1e-45, 3.4e38, 3.5e38, -3.5e38, 1e300, -1e300]


@pytest.mark.parametrize("threshold", THRESHOLDS)
def test_one_split_routes_every_value_as_lightgbm(threshold):
    """At each threshold (beside a training value, not a float32, a float32, zero, within LightGBM's zero band
    of +-1e-35, subnormal, beyond float32), for every missing type and default side, a value the plugin reads
    as its float32 goes where LightGBM sends the double, except the cases export_trees.py names: a value above
    the threshold sharing its float32, one outside +-1e-35 rounding to their float32, infinity past a threshold
    beyond float32."""
    values = [0.0, -0.0, np.nan, np.inf, -np.inf, 1.0, -1.0, 1e-40, -1e-40, *around(float(Z)), *around(float(-Z)),
              *around(threshold)]
    X = np.array(values)[:, None]
    with np.errstate(over="ignore"):
        X32, threshold32 = X.astype(F32), F32(threshold)
    checked = 0
    for missing_type in (0, 1, 2):
        for default_left in (False, True):
            booster = one_split_booster(threshold, missing_type, default_left)
            expected = booster.predict(X)
            got = PluginModel(booster_trees(booster.dump_model(), ["f"]), ["f"]).scores(X32)
            for x, x32, e, g in zip(values, X32[:, 0], expected, got):
                same_cell = x > threshold and x32 == threshold32
                band_edge = abs(x32) == Z and abs(x) > Z
                infinite = np.isposinf(x32) and np.isposinf(threshold32)
                if not (same_cell or band_edge or infinite):
                    assert g == e, (threshold, missing_type, default_left, x)
                    checked += 1
    assert checked > 6 * len(values) // 2  # the exceptions are values next to the threshold and to +-1e-35


def _missing_types(booster):
    found, stack = set(), [info["tree_structure"] for info in booster.dump_model()["tree_info"]]
    while stack:
        node = stack.pop()
        if "left_child" in node:
            found.add(node["missing_type"])
            stack += [node["left_child"], node["right_child"]]
    return found


@pytest.mark.parametrize("params", [{}, {"zero_as_missing": True}, {"use_missing": False}])
def test_boosters_on_missing_values_and_zeros_route_as_lightgbm(params):
    """Boosters grown on float32 features with NaNs, exact zeros and values inside LightGBM's zero band:
    in every tree, every row reaches the leaf LightGBM's predictor reaches (its value as a float32)."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(1500, 5)).astype(F32).astype(np.float64)
    X[:, :2][rng.random((1500, 2)) < 0.15] = np.nan
    X[:, 2:4][rng.random((1500, 2)) < 0.3] = 0.0
    X[:, 4][rng.random(1500) < 0.1] = 1e-36
    y = np.nan_to_num(X[:, 0]) + (X[:, 2] == 0) + np.where(np.isnan(X[:, 1]), 2.0, np.nan_to_num(X[:, 1])) \
        - (np.abs(X[:, 4]) < 1e-30)
    booster = lightgbm.train({"objective": "regression", "num_leaves": 15, "min_data_in_leaf": 5, "verbose": -1,
                              "deterministic": True, "num_threads": 1, **params}, lightgbm.Dataset(X, y), 20)
    expected_types = {"zero_as_missing": {"Zero"}, "use_missing": {"None"}}.get(next(iter(params), ""), {"NaN", "None"})
    assert expected_types <= _missing_types(booster)
    names = [f"feature {i}" for i in range(5)]
    model = PluginModel(booster_trees(booster.dump_model(), names), names)
    leaves = np.column_stack([tree.leaves(X.astype(F32)) for tree in model.trees])
    np.testing.assert_array_equal(leaves, leaf_values(booster, X).astype(F32))
    # the double sum of the plugin's float32 leaves is LightGBM's prediction up to their rounding
    np.testing.assert_allclose(model.scores(X, np.float64), booster.predict(X), rtol=0, atol=1e-6)


def test_categorical_splits_and_linear_leaves_are_refused():
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.integers(0, 5, 400), rng.normal(size=400)]).astype(float)
    y = (X[:, 0] == 3) + X[:, 1]
    common = {"objective": "regression", "verbose": -1, "min_data_in_leaf": 5, "num_threads": 1}
    categorical = lightgbm.train({**common, "min_data_per_group": 5, "cat_smooth": 0},
                                 lightgbm.Dataset(X, y, categorical_feature=[0]), 5)
    with pytest.raises(ValueError, match="a categorical split on feature 1 .*only compare a value with a threshold"):
        booster_trees(categorical.dump_model(), ["a", "b"])
    linear = lightgbm.train({**common, "linear_tree": True}, lightgbm.Dataset(X[:, 1:], y), 3)
    with pytest.raises(ValueError, match="a linear leaf"):
        booster_trees(linear.dump_model(), ["b"])


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    folder = tmp_path_factory.mktemp("export_trees")
    ds = make_ranking_dataset(n_queries=30, n_features=6, random_state=3)
    write_letor(folder / "train.txt", ds)
    specs = [("lambdamart", ["n_estimators=25"]), ("gbrt-map", ["n_estimators=15"]), ("mcrank", ["n_estimators=8"])]
    models = train_models(folder, folder / "train.txt", specs)
    X = np.asarray(ds.X)
    return folder, models, X


@pytest.mark.parametrize("name", ["lambdamart", "gbrt-map"])
def test_plugin_export_of_a_trained_model_scores_as_predict(trained, name, tmp_path):
    folder, models, X = trained
    model = load_model(models[name])
    names = [f"feat_{i}" for i in range(X.shape[1])]
    (tmp_path / "names.txt").write_text("".join(n + "\n" for n in names))
    out = tmp_path / "model.json"
    assert main(["export", str(models[name]), "--format", "opensearch-ltr", "--feature-names", str(tmp_path / "names.txt"),
                 "--name", "trees", "--out", str(out), "--quiet"]) == 0
    body = json.loads(out.read_text())
    assert body["model"]["name"] == "trees" and body["model"]["model"]["type"] == "model/xgboost+json"
    definition = json.loads(body["model"]["model"]["definition"])
    assert isinstance(definition, list) and len(definition) == model._booster().num_trees()
    plugin = PluginModel.from_body(body, names)  # which checks every split names a feature of the set
    assert len(plugin.split_features) > 1
    expected = model.predict(X)
    np.testing.assert_allclose(plugin.scores(X, np.float64), expected, rtol=0, atol=1e-6)
    # the plugin's own float32 sum: each addition rounds by at most half a float32 unit of the running sum
    bound = len(definition) * np.finfo(F32).eps * (np.abs(expected).max() + 1.0)
    np.testing.assert_allclose(plugin.scores(X), expected, rtol=0, atol=bound)


def test_lightgbm_text_loads_in_lightgbm_and_predicts_the_same(trained, tmp_path, capsys):
    folder, models, X = trained
    for name, path in models.items():
        model = load_model(path)
        out = tmp_path / f"{name}.txt"
        assert main(["export", str(path), "--format", "lightgbm", "--out", str(out)]) == 0
        booster = lightgbm.Booster(model_file=str(out))
        predicted = booster.predict(X)
        if name == "mcrank":  # P(grade) for each grade; the score is their expectation
            assert "their expectation" in capsys.readouterr().err
            predicted = predicted @ model.classes_.astype(float)
        np.testing.assert_array_equal(predicted, model.predict(X))


def test_mcrank_exports_to_the_plugin_only_for_grades_0_and_1(trained, tmp_path, capsys):
    folder, models, X = trained
    assert main(["export", str(models["mcrank"]), "--format", "opensearch-ltr"]) == 2
    assert "expresses it only for the two grades 0 and 1" in capsys.readouterr().err
    binary = make_ranking_dataset(n_queries=30, n_features=6, random_state=3)
    binary.y[:] = np.minimum(binary.y, 1)
    write_letor(tmp_path / "binary.txt", binary)
    assert main(["train", "mcrank", "--train", str(tmp_path / "binary.txt"), "--out", str(tmp_path / "m.npz"),
                 "--set", "n_estimators=8", "--quiet"]) == 0
    model = load_model(tmp_path / "m.npz")
    assert list(model.classes_) == [0, 1]
    assert main(["export", str(tmp_path / "m.npz"), "--format", "opensearch-ltr", "--out", str(tmp_path / "m.json"),
                 "--quiet"]) == 0
    body = json.loads((tmp_path / "m.json").read_text())
    definition = json.loads(body["model"]["model"]["definition"])
    assert definition["objective"] == "binary:logistic"
    plugin = PluginModel.from_body(body, [str(i + 1) for i in range(X.shape[1])])
    np.testing.assert_allclose(plugin.scores(np.asarray(binary.X)), model.predict(np.asarray(binary.X)), rtol=0,
                               atol=1e-6)


def test_formats_a_model_does_not_have_are_refused(trained, tmp_path, capsys):
    folder, models, X = trained
    for fmt in ("json", "svmrank"):
        assert main(["export", str(models["lambdamart"]), "--format", fmt]) == 2
        assert "is not a linear ranker" in capsys.readouterr().err
    assert main(["train", "linreg", "--train", str(folder / "train.txt"), "--out", str(tmp_path / "l.npz"),
                 "--quiet"]) == 0
    assert main(["export", str(tmp_path / "l.npz"), "--format", "lightgbm"]) == 2
    assert "LinearRegressionRanker is not a tree model" in capsys.readouterr().err
    (tmp_path / "names.txt").write_text("".join(f"f{i}\n" for i in range(X.shape[1])))
    for fmt in ("lightgbm", "onnx"):
        assert main(["export", str(models["lambdamart"]), "--format", fmt, "--feature-names",
                     str(tmp_path / "names.txt")]) == 2
        assert "--feature-names applies only with --format json or opensearch-ltr" in capsys.readouterr().err


def test_onnx_without_the_extra_names_it(trained, monkeypatch, capsys):
    """Where onnx is not installed, the error names the extra (simulated: the import fails)."""
    import importlib

    from structrank import export_onnx

    folder, models, _ = trained
    real = importlib.import_module

    def without_onnx(name, *args):
        if name.split(".")[0] in ("onnx", "onnxmltools"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return real(name, *args)

    monkeypatch.setattr(export_onnx.importlib, "import_module", without_onnx)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["export", str(models["lambdamart"]), "--format", "onnx", "--out", "-"]) == 2
    assert "pip install \"structrank[onnx]\"" in capsys.readouterr().err
