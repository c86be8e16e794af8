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
