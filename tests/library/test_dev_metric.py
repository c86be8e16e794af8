"""The trees and the network choose their round or epoch on ``eval_set`` by ``dev_metric``, the
metric their grid is chosen by in the registry (issue 20): one criterion for both choices."""

from __future__ import annotations

import numpy as np
import pytest

from structrank.data import make_ranking_dataset
from structrank.learners import StructuredBoostingRanker
from structrank.learners.registry import CRF_METRIC, get_model
from structrank.metrics import evaluate


def _split():
    ds = make_ranking_dataset(n_queries=60, n_levels=3, random_state=2)
    return ds.take_queries(range(40)), ds.take_queries(range(40, 60))


def _mean(vali, scores, metrics, binary=False):
    y = (vali.y >= 1).astype(int) if binary else vali.y  # a binary-relevance loss is judged on binary labels
    result = evaluate(y, scores, vali.qid, list(metrics), "letor4").metrics
    return float(np.mean([result[m] for m in metrics]))


def test_crf_models_choose_rounds_and_epochs_by_their_grid_metric():
    for name in ("gbrt-crf-kl", "mlp-crf-kl", "gbrt-crf-ml"):
        assert get_model(name).defaults["dev_metric"] == ",".join(CRF_METRIC) and get_model(name).metric == CRF_METRIC
    for name in ("gbrt-map", "mlp-ndcg", "gbrt-combo"):  # the grid's metric is the loss's own: nothing to set
        assert "dev_metric" not in get_model(name).defaults


def test_trees_record_the_dev_metric_each_round():
    train, vali = _split()
    own = StructuredBoostingRanker(loss="crf-kl", n_estimators=6).fit(train, eval_set=vali)
    mean = StructuredBoostingRanker(loss="crf-kl", n_estimators=6, dev_metric="ndcg@1, ndcg@3").fit(train, eval_set=vali)
    assert np.isclose(own.dev_curve_[-1], _mean(vali, own.predict(vali.X), ["ndcg@5"]))
    assert np.isclose(mean.dev_curve_[-1], _mean(vali, mean.predict(vali.X), ["ndcg@1", "ndcg@3"]))
    assert mean.score(vali) == own.score(vali)  # score() stays the loss's metric: the same trees, rounds all kept


@pytest.mark.extra("torch")
def test_the_network_records_the_dev_metric_each_epoch():
    from structrank.learners import MLPRanker

    train, vali = _split()
    model = MLPRanker(loss="map", hidden_layer_sizes=(4,), epochs=3, dev_metric=["ndcg@2"]).fit(train, eval_set=vali)
    kept = model.predict(vali.X)
    assert np.isclose(model.dev_curve_[model.best_epoch_ - 1], _mean(vali, kept, ["ndcg@2"], binary=True))
    assert model.dev_curve_[model.best_epoch_ - 1] == max(model.dev_curve_)
