"""NystroemRanker: a kernelised linear ranker that saves in the safe model format and predicts from numbers."""

import numpy as np
import pytest

from structrank.cli import main
from structrank.data import make_ranking_dataset, write_letor
from structrank.errors import DataFormatError
from structrank.kernels import NystroemFeatures, RBFKernel
from structrank.learners import NystroemRanker, StructSVMRanker
from structrank.model_io import load_model, save_model


def test_it_is_the_inner_ranker_on_the_embedding_and_round_trips(tmp_path):
    ds = make_ranking_dataset(n_queries=25, n_features=5, random_state=2)
    X = ds.X.toarray() if hasattr(ds.X, "toarray") else np.asarray(ds.X)
    model = NystroemRanker(ranker_params={"loss": "map", "C": 1.0}, n_landmarks=40).fit(ds)
    nys = NystroemFeatures(RBFKernel(gamma=1 / 5), n_landmarks=40, random_state=0)
    Z = nys.fit_transform(X)
    inner = StructSVMRanker(loss="map", C=1.0).fit(Z, ds.y, qid=ds.qid)
    np.testing.assert_allclose(model.predict(ds.X), inner.predict(Z), rtol=1e-10, atol=1e-12)
    assert model._scoring()[0] == ("map",)
    save_model(model, tmp_path / "n.npz")
    again = load_model(tmp_path / "n.npz")
    np.testing.assert_array_equal(again.predict(ds.X), model.predict(ds.X))
    assert again.score(ds) == pytest.approx(model.score(ds))
    again.weights_ = again.weights_[:-1]
    with pytest.raises(DataFormatError, match="weights_ must have one entry per column"):
        again._check_loaded()


def test_a_non_linear_inner_ranker_is_refused():
    ds = make_ranking_dataset(n_queries=5, random_state=0)
    with pytest.raises(ValueError, match="linear structrank ranker"):
        NystroemRanker(ranker="LambdaMARTRanker").fit(ds)


def test_the_cli_trains_and_predicts_a_nystroem_model(tmp_path, capsys):
    ds = make_ranking_dataset(n_queries=20, n_features=4, random_state=0)
    write_letor(tmp_path / "t.txt", ds)
    assert main(["train", "nystroem-svm-map", "--train", str(tmp_path / "t.txt"), "--vali", str(tmp_path / "t.txt"),
                 "--out", str(tmp_path / "m.npz"), "--quiet"]) == 0
    assert main(["predict", "--model", str(tmp_path / "m.npz"), "--data", str(tmp_path / "t.txt"), "--out",
                 str(tmp_path / "s.txt"), "--quiet"]) == 0
    assert len((tmp_path / "s.txt").read_text().split()) == ds.n_rows
