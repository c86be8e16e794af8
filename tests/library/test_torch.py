"""structrank.learners.torch_loss (a structured loss as a differentiable torch module) and MLPRanker."""

from __future__ import annotations

import numpy as np
import pytest

from extras import need

need("torch")
pytestmark = pytest.mark.extra("torch")
import torch  # noqa: E402

from structrank.data import make_ranking_dataset  # noqa: E402
from structrank.learners import MLPRanker  # noqa: E402
from structrank.metrics import evaluate  # noqa: E402
from structrank.model_io import load_model, save_model  # noqa: E402
from structrank.losses import get_loss  # noqa: E402
from structrank.learners.torch_loss import StructuredRankingLoss  # noqa: E402


@pytest.fixture(scope="module")
def split():
    ds = make_ranking_dataset(n_queries=50, docs_per_query=10, n_features=5, random_state=7)
    return ds.take_queries(np.arange(35)), ds.take_queries(np.arange(35, 50))


@pytest.mark.parametrize("name", ["auc", "map", "ndcg", "mrr", "ndcg-nc"])
def test_a_hinge_backpropagates_its_subgradient(name):
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, size=17)
    y[[0, 9]] = [1, 0]
    offsets = np.array([0, 9, 17])
    s = rng.normal(size=17)
    scores = torch.tensor(s, requires_grad=True)
    value = StructuredRankingLoss(name, **({"gain": "binary"} if name.startswith("ndcg") else {}))(scores, y, offsets)
    value.backward()
    loss = get_loss(name)
    c_hat, delta = loss.batch(s, y, offsets)
    grad = c_hat - loss.star(s, y, offsets)
    np.testing.assert_allclose(scores.grad.numpy(), grad / 2, atol=1e-12)
    assert value.item() == pytest.approx(np.mean(delta + np.add.reduceat(s * grad, offsets[:-1])), abs=1e-12)


@pytest.mark.parametrize("objective", ["ml", "la", "ls", "el", "kl"])
def test_a_crf_objective_matches_finite_differences(objective):
    """Queries of at most 6 documents are used whole, so the objective is a smooth function of the scores."""
    y = np.array([2, 0, 1, 0, 1, 0, 0, 1])
    offsets = np.array([0, 5, 8])
    s = np.array([0.3, -0.2, 0.5, 0.1, -0.4, 0.2, 0.0, -0.1])
    module = StructuredRankingLoss(f"crf-{objective}", crf_param=2.0)
    scores = torch.tensor(s, requires_grad=True)
    module(scores, y, offsets).backward()
    h = 1e-6
    for i in range(s.size):
        up, down = s.copy(), s.copy()
        up[i] += h
        down[i] -= h
        numeric = (module(torch.tensor(up), y, offsets).item() - module(torch.tensor(down), y, offsets).item()) / (2 * h)
        assert scores.grad[i].item() == pytest.approx(numeric, abs=1e-6)


def test_the_loss_runs_on_a_gpu_tensor():
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device on this machine")
    scores = torch.zeros(3, device="cuda", requires_grad=True)
    StructuredRankingLoss("map")(scores, [1, 0, 0], [0, 3]).backward()
    assert scores.grad.device.type == "cuda"


def test_bad_offsets_are_refused():
    with pytest.raises(ValueError, match="offsets"):
        StructuredRankingLoss("map")(torch.zeros(3), [1, 0, 0], [0, 2])


@pytest.mark.parametrize("loss", ["map", "ndcg", "crf-kl"])
def test_mlp_ranker_learns_and_keeps_its_best_epoch(split, loss):
    train, dev = split
    model = MLPRanker(loss=loss, hidden_layer_sizes=(8,), epochs=8, learning_rate=0.01).fit(train, eval_set=dev)
    assert model.dev_curve_.size == 8 and model.best_epoch_ == int(np.argmax(model.dev_curve_)) + 1
    assert model.score(dev) == pytest.approx(model.dev_curve_.max(), abs=1e-12)
    chance = evaluate(dev.y, np.random.default_rng(0).normal(size=dev.n_rows), dev.qid, ["ndcg@10"], "letor4")
    assert evaluate(dev.y, model.predict(dev.X), dev.qid, ["ndcg@10"], "letor4").metrics["ndcg@10"] > \
        chance.metrics["ndcg@10"] + 0.05


def test_mlp_model_file_round_trip_and_a_wrong_parameter_count(split, tmp_path):
    from structrank.errors import DataFormatError

    train, dev = split
    model = MLPRanker(loss="map", hidden_layer_sizes=(6, 4), epochs=2).fit(train)
    save_model(model, tmp_path / "mlp.npz")
    again = load_model(tmp_path / "mlp.npz")
    np.testing.assert_array_equal(again.predict(dev.X), model.predict(dev.X))
    again.params_ = again.params_[:-1]
    with pytest.raises(DataFormatError, match="params_"):
        again.predict(dev.X)


@pytest.mark.parametrize("linear_skip", [True, False])
def test_numpy_prediction_is_the_torch_network_s_output(split, linear_skip):
    train, dev = split
    model = MLPRanker(loss="ndcg", hidden_layer_sizes=(5, 3), linear_skip=linear_skip, epochs=2,
                      learning_rate=0.05).fit(train)
    net = model._network()
    torch.nn.utils.vector_to_parameters(torch.from_numpy(model.params_.copy()), net.parameters())
    X = dev.X.toarray() if hasattr(dev.X, "toarray") else np.asarray(dev.X)
    with torch.no_grad():
        expected = net(torch.from_numpy(np.asarray(X, dtype=np.float64))).squeeze(1).numpy()
    np.testing.assert_allclose(model.predict(dev.X), expected, rtol=1e-12, atol=1e-12)
    if linear_skip:  # the skip starts at 0 and has learned
        assert np.linalg.norm(model.params_[-X.shape[1]:]) > 0
