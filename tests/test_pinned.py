"""Reproduced numbers are pinned: a fast slice of each experiment against an expected file.

Each test runs a small, fixed slice of an experiment (one fold, fixed parameters) and compares
every value with ``tests/pinned/NAME.json`` to 1e-6. A change that moves a number to be
published fails here. When a change is meant to move them, rerun with
``STRUCTRANK_UPDATE_PINS=1 pytest tests/test_pinned.py`` and commit the new files with the reason.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from structrank.data import letor_folds, read_letor
from structrank.metrics import evaluate

PINNED = Path(__file__).parent / "pinned"
TOL = 1e-6


def check_pinned(name, values: dict):
    path = PINNED / f"{name}.json"
    if os.environ.get("STRUCTRANK_UPDATE_PINS"):
        path.write_text(json.dumps(values, indent=1, sort_keys=True) + "\n")
    expected = json.loads(path.read_text())
    assert sorted(values) == sorted(expected), f"{name}: the pinned values changed names"
    moved = {k: (values[k], expected[k]) for k in expected if abs(values[k] - expected[k]) > TOL}
    assert not moved, f"{name}: values moved from the pinned ones (now, pinned): {moved}"


def _fold1(data_root, name):
    fold = letor_folds(data_root / "letor" / name / ("QueryLevelNorm" if name == "OHSUMED" else ""))[0]
    train = read_letor(fold.train)
    return train, read_letor(fold.test, n_features=train.n_features)


def _test_metrics(model, test, convention, prefix):
    result = evaluate(test.y, model.predict(test.X), test.qid, ["map", "mrr@10", "ndcg@10"], convention,
                      docids=test.docids)
    return {f"{prefix}/{m}": float(v) for m, v in result.metrics.items()}


def test_own_metric_quick_run_is_pinned(data_root, tmp_path):
    from structrank.experiments import own_metric

    rows = own_metric.reproduce(tmp_path, data_root, quick=True)
    check_pinned("own-metric", {f"{r['dataset']}/{r['fold']}/{r['model']}/{r['metric']}": r["value"] for r in rows
                                if not r["metric"].startswith(own_metric.QUERY_PREFIX)})


def test_letor_baselines_quick_run_is_pinned(data_root, tmp_path):
    """Linear regression and RankSVM, chosen on vali from the quick grids, on MQ2008 Fold1-2."""
    from structrank.experiments import letor_baselines

    rows = letor_baselines.reproduce(tmp_path, data_root, quick=True)
    check_pinned("letor-baselines", {f"{r['dataset']}/{r['fold']}/{r['model']}/{r['metric']}": r["value"]
                                     for r in rows})


def test_chakrabarti2008_structural_svms_are_pinned(data_root):
    """Every criterion of Fig. 9 at a fixed C on Fold1 of OHSUMED and MQ2008."""
    from structrank import StructSVMRanker

    values = {}
    for dataset, convention in (("OHSUMED", "letor3"), ("MQ2008", "letor4")):
        train, test = _fold1(data_root, dataset)
        for label, params in {"auc": {"loss": "auc"}, "map": {"loss": "map"}, "ndcg": {"loss": "ndcg"},
                              "ndcg-nc": {"loss": "ndcg-nc"}, "mrr": {"loss": "mrr", "C": 0.01},
                              "mrr-latent": {"loss": "mrr", "target": "latent"},
                              "ndcg-latent": {"loss": "ndcg", "target": "latent", "C": 100.0},
                              "combo": {"loss": "combo"}, "combo-shared": {"loss": "combo", "slacks": "shared"},
                              "dorm-cut30": {"loss": "ndcg", "feature_map": "dorm", "dorm_cut": 30}}.items():
            model = StructSVMRanker(**{"C": 1.0, "gain": "binary", **params}).fit(train)  # the paper's gains
            values.update(_test_metrics(model, test, convention, f"{dataset}/{label}"))
            values[f"{dataset}/{label}/slack"] = float(model.slack_)
    check_pinned("chakrabarti2008", values)


def test_latent_map_learners_are_pinned(data_root):
    """LSP-AP and LSSVM-AP (haponchyk2018's learners) at fixed parameters on MQ2008 Fold1."""
    from structrank.learners import LatentPerceptronRanker, LatentSSVMRanker

    train, test = _fold1(data_root, "MQ2008")
    values = {}
    for label, model in {"lsp-ap": LatentPerceptronRanker(inference="greedy", C=10.0, max_epochs=5, random_state=0),
                         "lsp-ap-exact": LatentPerceptronRanker(inference="exact", C=10.0, max_epochs=5, random_state=0),
                         "lssvm-ap": LatentSSVMRanker(inference="greedy", C=10.0),
                         "lssvm-ap-exact": LatentSSVMRanker(inference="exact", C=10.0)}.items():
        values.update(_test_metrics(model.fit(train), test, "letor4", f"MQ2008/{label}"))
    check_pinned("haponchyk2018-learners", values)


def test_permutation_crfs_are_pinned(data_root):
    """volkovs2011's five objectives, 3 epochs at fixed rates on MQ2008 Fold1."""
    from structrank import PermutationCRFRanker

    train, test = _fold1(data_root, "MQ2008")
    values = {}
    for objective in ("ml", "la", "ls", "el", "kl"):
        model = PermutationCRFRanker(objective=objective, learning_rate=0.1, max_epochs=3, random_state=0).fit(train)
        result = evaluate(test.y, model.predict(test.X), test.qid, [f"ndcg@{k}" for k in range(1, 6)], "letor4")
        values.update({f"MQ2008/crf-{objective}/{m}": float(v) for m, v in result.metrics.items()})
    check_pinned("volkovs2011-crfs", values)
