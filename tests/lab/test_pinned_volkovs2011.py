"""The paper's ML and LA (Eq. 10's sum over the zero-loss rankings) are pinned like the five CRF objectives.

tests/library/test_pinned.py pins ``ml``, ``la``, ``ls``, ``el`` and ``kl`` (volkovs2011-crfs); this pins ``ml-sum`` and
``la-sum`` with the same slice (MQ2008 Fold1, 3 epochs, fixed rates, seed 0) and the epoch chosen on vali as
``reproduce volkovs2011`` does, so that a change to the sum moves a number here; also ML-sum with the single-level
queries kept, where the sum weighs a query's step by up to 720. The rate is the grid's smallest (0.001), since the
sum's step is |Y0| times the mean's. ``STRUCTRANK_UPDATE_PINS=all`` rewrites tests/pinned/volkovs2011-sum.json.
"""

from __future__ import annotations

from test_pinned import _fold1, check_pinned

from structrank.data import letor_folds, read_letor
from structrank.metrics import evaluate

NDCG = [f"ndcg@{k}" for k in range(1, 6)]


def test_the_papers_ml_and_la_are_pinned(data_root):
    from structrank import PermutationCRFRanker

    train, test = _fold1(data_root, "MQ2008")
    vali = read_letor(letor_folds(data_root / "letor" / "MQ2008")[0].vali, n_features=train.n_features)
    values = {}
    for objective, params in (("ml-sum", {}), ("la-sum", {"alpha": 10.0}), ("ml-sum-kept", {})):
        model = PermutationCRFRanker(objective=objective.removesuffix("-kept"), learning_rate=0.001, max_epochs=3,
                                     random_state=0, skip_single_level=not objective.endswith("-kept"), **params)
        model.fit(train, eval_set=vali)
        result = evaluate(test.y, model.predict(test.X), test.qid, NDCG, "letor4").metrics
        values.update({f"MQ2008/crf-{objective}/{m}": float(v) for m, v in result.items()})
        values[f"MQ2008/crf-{objective}/best_epoch"] = float(model.best_epoch_)
        values[f"MQ2008/crf-{objective}/vali"] = float(model.dev_curve_.max())
    check_pinned("volkovs2011-sum", values)
