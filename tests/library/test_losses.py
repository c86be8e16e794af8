"""The loss contract (structrank.losses): one registry that every learner and scorer takes its loss from."""

import numpy as np
import pytest

from structrank.data import make_ranking_dataset
from structrank.learners import (LatentPerceptronRanker, LatentSSVMRanker, MLPRanker, PermutationCRFRanker,
                                 StructSVMRanker, StructuredBoostingRanker)
from structrank.learners.registry import MODELS
from structrank.losses import HINGE, PROBABILISTIC, RankingLoss, entries, get_loss, loss_names
from structrank.losses.map import PositionalAPLoss

# every variant issue 20 names, as (registry name, options)
VARIANTS = [
    ("auc", {}), ("map", {}), ("ndcg", {"k": 5}), ("ndcg-nc", {}), ("ndcg", {"gain": "exp2"}),
    ("mrr", {}), ("mrr", {"feature_map": "po"}), ("ndcg", {"feature_map": "dorm"}),
    ("ndcg", {"feature_map": "dorm", "dorm_cut": 3}), ("combo", {}),
    ("map", {"feature_map": "positional", "inference": "greedy"}),
    ("map", {"feature_map": "positional", "inference": "exact"}),
    ("map", {"feature_map": "positional", "inference": "none"}),
    *((f"crf-{o}", {}) for o in ("ml", "la", "ls", "el", "kl")),
]


def _query_batch(seed=0, n_queries=4):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(3, 9, size=n_queries)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    labels = rng.integers(0, 3, size=offsets[-1])
    labels[offsets[:-1]] = 0  # every query has a bad and a good document
    labels[offsets[:-1] + 1] = 2
    return rng.normal(size=offsets[-1]), labels, offsets


@pytest.mark.parametrize("name,options", VARIANTS)
def test_every_loss_goes_through_the_registry_with_its_contract(name, options):
    loss = get_loss(name, **options)
    assert isinstance(loss, RankingLoss) and loss.kind in (HINGE, PROBABILISTIC)
    assert loss.metrics and loss.convention and loss.labels in ("binary", "graded")
    scores, labels, offsets = _query_batch()
    values, grad = loss.value_and_grad(scores, labels, offsets)
    assert values.shape == (offsets.size - 1,) and grad.shape == scores.shape and np.all(np.isfinite(grad))
    if loss.kind == HINGE:
        c_hat, delta = loss.batch(scores, labels, offsets)
        c_star = loss.star(scores, labels, offsets)
        # the hinge's subgradient with respect to the scores is c_hat - c_star, its value >= its loss term's floor 0
        np.testing.assert_allclose(grad, c_hat - c_star, atol=1e-12)
        assert np.all(values >= -1e-9) and np.all(delta >= -1e-12)
    else:
        with pytest.raises(TypeError, match="no max-violating structure"):
            loss.batch(scores, labels, offsets)


def test_the_registry_lists_hinges_then_probabilistic_objectives():
    names = loss_names()
    hinges, crfs = loss_names(HINGE), loss_names(PROBABILISTIC)
    assert names == hinges + crfs
    assert {"auc", "map", "ndcg", "ndcg-nc", "mrr", "combo"} <= set(hinges)
    assert set(crfs) == {f"crf-{o}" for o in ("ml", "la", "ls", "el", "kl", "ml-sum", "la-sum")}
    assert all(entry.summary for entry in entries().values())


def test_every_registered_loss_has_a_tree_and_a_network_model_and_every_hinge_an_svm():
    for name, entry in entries().items():
        assert f"gbrt-{name}" in MODELS and f"mlp-{name}" in MODELS
        if entry.kind == HINGE:
            assert f"svm-{name}" in MODELS


def test_unknown_and_incompatible_losses_are_clear_errors_at_fit():
    ds = make_ranking_dataset(n_queries=6, random_state=0)
    with pytest.raises(ValueError, match="unknown loss 'p@x'"):
        get_loss("p@x")
    for model in (StructSVMRanker(loss="crf-kl"), LatentPerceptronRanker(loss="crf-kl"), LatentSSVMRanker(loss="crf-el")):
        with pytest.raises(ValueError, match="needs a hinge loss, got 'crf-"):
            model.fit(ds)
    with pytest.raises(ValueError, match="needs C > 0"):
        LatentPerceptronRanker(loss="ndcg", C=0.0).fit(ds)
    with pytest.raises(ValueError, match="positional MAP kernels only"):
        LatentPerceptronRanker(loss="ndcg", n_jobs=1).fit(ds)
    with pytest.raises(ValueError, match="no oracle for feature_map 'positional'"):
        LatentPerceptronRanker(loss="ndcg", loss_params={"feature_map": "positional"}).fit(ds)
    with pytest.raises(ValueError, match="unknown loss 'nope'; known: auc, combo"):
        StructuredBoostingRanker(loss="nope").fit(ds)
    with pytest.raises(ValueError, match="objective must be a str among"):
        PermutationCRFRanker(objective="nope").fit(ds)


def test_the_perceptron_with_the_default_loss_is_the_paper_s_positional_map():
    model = LatentPerceptronRanker()
    assert isinstance(model._trained_loss(), PositionalAPLoss) and model._scoring()[0] == ("map",)
    assert LatentSSVMRanker(loss="ndcg", loss_params={"k": 5})._scoring()[0] == ("ndcg@5",)


@pytest.mark.parametrize("cls", [LatentPerceptronRanker, LatentSSVMRanker])
def test_the_latent_learners_train_on_another_loss_and_score_its_metric(cls):
    ds = make_ranking_dataset(n_queries=30, random_state=1)
    params = {"max_epochs": 5} if cls is LatentPerceptronRanker else {"C": 10.0}
    model = cls(loss="ndcg", **params).fit(ds)
    assert np.linalg.norm(model.coef_) > 0
    # its score is the loss's metric, NDCG@10, and the model ranks better than the w = 0 ranking
    assert model._scoring()[0] == ("ndcg@10",)
    assert model.score(ds) > 0.5


def test_the_perceptron_on_a_scaled_loss_updates_against_the_oracle_at_scores_over_c():
    """Alg. 1's ``argmax s.c + C Delta`` is the oracle's at ``s / C``: one update by hand."""
    X = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    y = np.array([0, 1, 0])
    model = LatentPerceptronRanker(loss="ndcg", C=2.0, max_epochs=1, average=False).fit(X, y, qid=[1, 1, 1])
    loss = get_loss("ndcg")
    offsets = np.array([0, 3])
    c_hat, delta = loss.batch(np.zeros(3) / 2.0, y, offsets)
    expected = X.T @ (loss.star(np.zeros(3), y, offsets) - c_hat)
    assert delta[0] > 0
    np.testing.assert_allclose(model.coef_, expected, atol=1e-12)


@pytest.mark.extra("torch")
def test_mlp_rejects_an_unknown_loss_before_training():
    with pytest.raises(ValueError, match="unknown loss .nope.; known: "):
        MLPRanker(loss="nope").fit(make_ranking_dataset(n_queries=4, random_state=0))


def test_the_losses_page_is_generated_from_the_registry_and_up_to_date():
    from pathlib import Path

    from structrank.learners.registry import losses_page

    page = losses_page()
    for name in loss_names():
        assert f"| `{name}` |" in page
    committed = Path(__file__).resolve().parents[2] / "docs" / "LOSSES.md"
    assert committed.read_text() == page, "docs/LOSSES.md is stale: run `structrank losses --out docs/LOSSES.md`"


def test_train_help_lists_a_model_for_every_registered_loss(capsys):
    from structrank.cli import main

    with pytest.raises(SystemExit):
        main(["train", "--help"])
    text = " ".join(capsys.readouterr().out.split())  # a family's losses on one entry, wrapped over lines
    for family in ("gbrt", "mlp"):
        listed = text.split(f"{family}-<loss> on the loss: ")[1].split(" ")
        assert all(f"{name}," in listed or name in listed for name in loss_names()), family
