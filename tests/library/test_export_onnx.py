"""`structrank export --format onnx`: each graph run by onnxruntime scores as the model's predict (float32)."""

from __future__ import annotations

import numpy as np
import pytest

from extras import need

need("onnx")
pytestmark = pytest.mark.extra("onnx")

import onnx  # noqa: E402
import onnxruntime  # noqa: E402

from cli_checks import NO_OPEN_FILES  # noqa: E402
from export_helpers import train_models  # noqa: E402
from structrank.cli import main  # noqa: E402
from structrank.data import make_ranking_dataset, write_letor  # noqa: E402
from structrank.model_io import load_model, save_model  # noqa: E402

pytestmark = [pytestmark, *NO_OPEN_FILES]


def onnx_scores(path, X):
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    assert [i.name for i in session.get_inputs()] == ["X"] and [o.name for o in session.get_outputs()] == ["score"]
    (scores,) = session.run(["score"], {"X": np.asarray(X, dtype=np.float32)})
    return scores


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("export_onnx")
    ds = make_ranking_dataset(n_queries=30, n_features=6, random_state=5)
    write_letor(folder / "train.txt", ds)
    return folder, np.asarray(ds.X)


@pytest.mark.parametrize("name, settings", [("svm-map", []), ("linreg", []), ("lambdamart", ["n_estimators=25"]),
                                            ("gbrt-map", ["n_estimators=15"]), ("mcrank", ["n_estimators=8"])])
def test_onnx_graph_scores_as_predict(data, name, settings):
    folder, X = data
    model_file, out = train_models(folder, folder / "train.txt", [(name, settings)])[name], folder / f"{name}.onnx"
    assert main(["export", str(model_file), "--format", "onnx", "--out", str(out), "--quiet"]) == 0
    onnx.checker.check_model(onnx.load(str(out)))
    expected = load_model(model_file).predict(X)
    scores = onnx_scores(out, X)
    assert scores.shape == expected.shape
    np.testing.assert_allclose(scores, expected, rtol=0, atol=1e-5)


def test_models_without_a_converter_are_refused(tmp_path, capsys):
    from structrank.learners import NystroemRanker

    model = NystroemRanker(n_landmarks=20).fit(make_ranking_dataset(n_queries=10, n_features=6, random_state=0))
    save_model(model, tmp_path / "m.npz")
    assert main(["export", str(tmp_path / "m.npz"), "--format", "onnx", "--out", str(tmp_path / "m.onnx")]) == 2
    assert "NystroemRanker has no ONNX converter here: linear rankers (coef_) and LightGBM trees" in capsys.readouterr().err
    assert not (tmp_path / "m.onnx").exists()


def test_mcrank_on_two_grades(tmp_path):
    from structrank.export import export_model
    from structrank.learners import McRank

    ds = make_ranking_dataset(n_queries=30, n_features=6, random_state=3)
    ds.y[:] = np.minimum(ds.y, 1)
    model = McRank(n_estimators=8).fit(ds)
    (tmp_path / "m.onnx").write_bytes(export_model(model, "onnx"))
    np.testing.assert_allclose(onnx_scores(tmp_path / "m.onnx", ds.X), model.predict(np.asarray(ds.X)), rtol=0, atol=1e-5)


def _with_booster(params, ds):
    """A LambdaMARTRanker whose trees are a booster LightGBM trained with ``params`` (a mode structrank's
    learners never set, as a model file carrying another booster would hold)."""
    import lightgbm

    from structrank.learners import LambdaMARTRanker

    X = np.asarray(ds.X).copy()
    X[::3, 0] = 0.0  # zeros, where zero_as_missing sends them elsewhere
    booster = lightgbm.train({"objective": "lambdarank", "verbose": -1, "min_data_in_leaf": 2, **params},
                             lightgbm.Dataset(X, ds.y, group=np.diff(ds.offsets)), num_boost_round=10)
    model = LambdaMARTRanker(n_estimators=2, min_child_samples=2).fit(ds)
    model.booster_text_ = np.array(booster.model_to_string())
    return model, X


RANDOM_FOREST = {"boosting": "rf", "bagging_fraction": 0.7, "bagging_freq": 1}


@pytest.mark.parametrize("params, match", [(RANDOM_FOREST, "random-forest booster"),
                                           ({"zero_as_missing": True}, "zero_as_missing")])
def test_tree_modes_the_converter_does_not_follow_are_refused(params, match, tmp_path, capsys):
    from structrank.export import export_model

    ds = make_ranking_dataset(n_queries=30, n_features=8, n_levels=4, random_state=1)
    model, X = _with_booster(params, ds)
    with pytest.raises(ValueError, match=match):
        export_model(model, "onnx")
    save_model(model, tmp_path / "m.npz")
    assert main(["export", str(tmp_path / "m.npz"), "--format", "onnx", "--out", str(tmp_path / "m.onnx")]) == 2
    err = capsys.readouterr().err.strip()
    assert match in err and len(err.splitlines()) == 1 and not (tmp_path / "m.onnx").exists()


def test_a_graph_that_scores_otherwise_than_predict_is_refused(monkeypatch):
    """Beyond the modes named above: the converted graph is run on rows built from the thresholds and refused
    where it differs from predict (the named checks are switched off to show the net under them)."""
    from structrank import export_onnx
    from structrank.export import export_model

    ds = make_ranking_dataset(n_queries=30, n_features=8, n_levels=4, random_state=1)
    model, _ = _with_booster(RANDOM_FOREST, ds)
    monkeypatch.setattr(export_onnx, "_refuse_unconverted_modes", lambda dump: None)
    with pytest.raises(ValueError, match="mode the ONNX converter does not follow"):
        export_model(model, "onnx")
    plain, X = _with_booster({}, ds)  # the same net passes a plain booster, and its graph scores as predict
    graph = export_model(plain, "onnx")
    session = onnxruntime.InferenceSession(graph, providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(session.run(["score"], {"X": X.astype(np.float32)})[0],
                               plain.predict(X.astype(np.float32).astype(np.float64)), rtol=0, atol=1e-5)


def test_probe_rows_avoid_every_threshold():
    from structrank.export_onnx import probe_rows

    dump = {"tree_info": [{"tree_structure": {"split_feature": 1, "threshold": 0.5, "left_child": {"leaf_value": 0},
                                              "right_child": {"split_feature": 1, "threshold": 2.0,
                                                              "left_child": {"leaf_value": 1},
                                                              "right_child": {"leaf_value": 2}}}}]}
    rows = probe_rows(dump, 3, n_rows=200)
    assert rows.shape == (200, 3) and rows.dtype == np.float32 and not rows[:, [0, 2]].any()
    assert set(rows[:, 1].tolist()) == {np.float32(v) for v in (-0.5, 0.0, 1.25, 3.0)}
