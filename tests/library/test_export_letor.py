"""Issue 41's acceptance test: tree models trained on MQ2008 Fold1 and exported score its test file as
`structrank predict` does, in the LTR plugin (as tests/opensearch_ltr_eval.py evaluates the plugin's rules, from the
exported JSON and the feature rows alone), in LightGBM (its model text) and in onnxruntime (the ONNX graph).

The test rows are read with scikit-learn's SVMlight reader, not structrank's."""

from __future__ import annotations

import lightgbm
import numpy as np
import pytest
from sklearn.datasets import load_svmlight_file

from extras import need
from export_helpers import leaf_values, train_models
from opensearch_ltr_eval import PluginModel
from structrank.cli import main
from structrank.export_trees import model_booster
from structrank.model_io import load_model

pytestmark = pytest.mark.data

#: the models and the settings that keep the fits short (gbrt-ndcg is the flagship structured one)
MODELS = {"lambdamart": [], "gbrt-ndcg": ["n_estimators=30"], "mcrank": [], "linreg": []}
N_FEATURES = 46  # MQ2008's


@pytest.fixture(scope="module")
def fold1(data_root, tmp_path_factory):
    folder = tmp_path_factory.mktemp("export_letor")
    fold = data_root / "letor" / "MQ2008" / "Fold1"
    names = [f"mq2008_feature_{i}" for i in range(1, N_FEATURES + 1)]
    (folder / "names.txt").write_text("".join(n + "\n" for n in names))
    models, predicted = train_models(folder, fold / "train.txt.gz", MODELS.items()), {}
    for name in MODELS:
        assert main(["predict", "--model", str(models[name]), "--data", str(fold / "test.txt.gz"), "--out",
                     str(folder / f"{name}.scores"), "--quiet"]) == 0
        predicted[name] = np.loadtxt(folder / f"{name}.scores")
    X, _ = load_svmlight_file(str(fold / "test.txt.gz"), n_features=N_FEATURES, query_id=False, zero_based=False)
    return folder, names, models, predicted, X.toarray()


@pytest.mark.parametrize("name", ["lambdamart", "gbrt-ndcg"])
def test_the_plugin_scores_mq2008_test_as_structrank_predict(fold1, name):
    folder, names, models, predicted, X = fold1
    out = folder / f"{name}.json"
    assert main(["export", str(models[name]), "--format", "opensearch-ltr", "--feature-names", str(folder / "names.txt"),
                 "--out", str(out), "--quiet"]) == 0
    plugin = PluginModel.from_body(out.read_text(), names)
    assert len(plugin.split_features) > 1  # the splits name the feature set's features
    # every row of the float32 features reaches, in every tree, the leaf LightGBM reaches from the file's doubles
    leaves = np.column_stack([tree.leaves(X.astype(np.float32)) for tree in plugin.trees])
    np.testing.assert_array_equal(leaves, leaf_values(model_booster(load_model(models[name])), X).astype(np.float32))
    # so those leaves add up to predict's scores, up to their float32 rounding
    np.testing.assert_allclose(plugin.scores(X, np.float64), predicted[name], rtol=0, atol=1e-6)
    # the plugin's float32 sum adds at most half a float32 unit of the running sum per tree
    bound = len(plugin.trees) * np.finfo(np.float32).eps * (np.abs(predicted[name]).max() + 1.0)
    np.testing.assert_allclose(plugin.scores(X), predicted[name], rtol=0, atol=bound)


def test_mcrank_on_three_grades_is_refused_by_the_plugin_export(fold1, capsys):
    folder, _, models, _, _ = fold1
    assert main(["export", str(models["mcrank"]), "--format", "opensearch-ltr"]) == 2
    assert "softmax of 3 tree ensembles (grades [0, 1, 2])" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["lambdamart", "gbrt-ndcg", "mcrank"])
def test_lightgbm_text_scores_mq2008_test_as_structrank_predict(fold1, name):
    folder, _, models, predicted, X = fold1
    out = folder / f"{name}.lightgbm.txt"
    assert main(["export", str(models[name]), "--format", "lightgbm", "--out", str(out), "--quiet"]) == 0
    scores = lightgbm.Booster(model_file=str(out)).predict(X)
    if name == "mcrank":  # P(grade) for each grade
        scores = scores @ load_model(models[name]).classes_.astype(np.float64)
    np.testing.assert_array_equal(scores, predicted[name])


@pytest.mark.extra("onnx")
@pytest.mark.parametrize("name", ["lambdamart", "gbrt-ndcg", "mcrank", "linreg"])
def test_onnx_scores_mq2008_test_as_structrank_predict(fold1, name):
    need("onnx")
    import onnxruntime

    folder, _, models, predicted, X = fold1
    out = folder / f"{name}.onnx"
    assert main(["export", str(models[name]), "--format", "onnx", "--out", str(out), "--quiet"]) == 0
    session = onnxruntime.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    (scores,) = session.run(["score"], {"X": X.astype(np.float32)})
    np.testing.assert_allclose(scores, predicted[name], rtol=0, atol=1e-5)
