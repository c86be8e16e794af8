"""haponchyk2018's numbers are pinned: a fast slice of the WikiQA and TREC13 experiments.

The first questions of each split (the paper's filtered splits), our similarity features fitted on
the training slice, and SVM-map, LSP-AP and LSSVM-AP (with our mean and with Eq. 4's sum of the
slacks) at fixed parameters; every dev/test value is compared with
``tests/pinned/haponchyk2018-qa.json`` (``check_pinned``'s tolerance). A change to the readers, the features, the
learners or the metrics that moves a reproduced number fails here. Rewrite the file with
``STRUCTRANK_UPDATE_PINS=all pytest tests/lab/test_pinned_haponchyk2018.py`` when the move is meant.
"""

from __future__ import annotations

import numpy as np

from test_pinned import check_pinned

#: questions kept per split: (train, dev, test)
SLICE = {"wikiqa": (200, 60, 80), "trec13": (200, 65, 68)}


def _first_questions(data, n):
    return data.take_rows(np.arange(data.offsets[min(n, len(data.questions))]))


def _slice(name, data_root):
    from structrank.data import RankingDataset
    from structrank.qa import QAFeaturizer, load_qa

    parts = [_first_questions(load_qa(name, split, data_root), n) for split, n in zip(("train", "dev", "test"),
                                                                                      SLICE[name])]
    featurizer = QAFeaturizer().fit(parts[0])
    return [RankingDataset(featurizer.transform(p), np.asarray(p.labels), np.unique(p.qid, return_inverse=True)[1],
                           docids=np.asarray(p.docids, dtype=object)) for p in parts]


def test_qa_slices_of_the_latent_learners_and_svm_map_are_pinned(data_root):
    from structrank import StructSVMRanker
    from structrank.learners import LatentPerceptronRanker, LatentSSVMRanker
    from structrank.metrics import evaluate

    values = {}
    for name in SLICE:
        train, dev, test = _slice(name, data_root)
        models = {"svm-map": StructSVMRanker(loss="map", C=10.0).fit(train),
                  "lsp-ap": LatentPerceptronRanker(C=10.0, max_epochs=10).fit(train, eval_set=dev),
                  "lssvm-ap": LatentSSVMRanker(C=10.0).fit(train),
                  # Eq. 4's sum over the 200 training questions at C = 0.05 is our mean at C = 10
                  "lssvm-ap-sum": LatentSSVMRanker(C=0.05, slack="sum").fit(train)}
        assert models["lssvm-ap-sum"].n_queries_used_ == 200
        np.testing.assert_allclose(models["lssvm-ap-sum"].coef_, models["lssvm-ap"].coef_, atol=1e-9)
        for label, model in models.items():
            for split, data in (("dev", dev), ("test", test)):
                result = evaluate(data.y, model.predict(data.X), data.qid, ["map", "mrr", "p@1"], "trec",
                                  docids=data.docids)
                values.update({f"{name}/{label}/{split}:{m}": float(v) for m, v in result.metrics.items()})
        values[f"{name}/lsp-ap/epoch"] = float(models["lsp-ap"].best_epoch_)
        values[f"{name}/train:rows"] = float(train.n_rows)
    check_pinned("haponchyk2018-qa", values)
