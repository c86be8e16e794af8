"""Reproduced numbers are pinned: a fast slice of each experiment against an expected file.

Each test runs a small, fixed slice of an experiment (one fold, fixed parameters) and compares
every value with ``tests/pinned/NAME.json`` to ``TOL`` (relative to the value's size, at least 1),
a tolerance the floating point allows: the BLAS kernel OpenBLAS picks per processor and the
thread counts move a fit's last bits, not a metric. A value whose learner takes another path
when rounding differs (a cutting plane or CCCP loop that a last bit steers to another
constraint or imputation) is listed in ``tests/pinned/path_sensitive.json`` with its measured
cross-kernel spread and the tolerance it is pinned to. A change that moves a number to be
published fails here. ``STRUCTRANK_UPDATE_PINS=1`` adds the pins of new values and leaves the
others; when a change is meant to move them, ``STRUCTRANK_UPDATE_PINS=all pytest tests/library/test_pinned.py``
rewrites the files: commit them with the reason.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from structrank.data import letor_folds, read_letor
from structrank.metrics import evaluate

PINNED = Path(__file__).parents[1] / "pinned"
#: a pinned value and a new one agree to this fraction of max(1, |pin|)
TOL = 1e-6
UPDATE = "STRUCTRANK_UPDATE_PINS"


def update_mode() -> str:
    """"" (compare), "new" (``STRUCTRANK_UPDATE_PINS=1``: add the missing pins) or "all" (rewrite them)."""
    value = os.environ.get(UPDATE, "")
    modes = {"": "", "0": "", "1": "new", "all": "all"}
    if value not in modes:
        raise pytest.UsageError(f"{UPDATE}={value!r}: expected 1 (add the missing pins) or all (rewrite every pin)")
    return modes[value]


def load_json(name) -> dict:
    path = PINNED / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else {}


def write_json(name, values: dict):
    (PINNED / f"{name}.json").write_text(json.dumps(values, indent=1, sort_keys=True) + "\n")


def path_sensitive(name) -> dict:
    """The pins of ``name`` whose learner's path rounding steers: key -> {"tolerance", "spread", "measured"}."""
    return load_json("path_sensitive").get(name, {})


def differs(value, pinned, tol=TOL) -> bool:
    return not abs(value - pinned) <= tol * max(1.0, abs(pinned))  # not <=: a NaN differs


def check_pinned(name, values: dict):
    mode = update_mode()
    if mode:
        write_json(name, values if mode == "all" else {**values, **load_json(name)})
    expected = load_json(name)
    assert sorted(values) == sorted(expected), f"{name}: the pinned values changed names"
    sensitive = path_sensitive(name)
    assert set(sensitive) <= set(expected), f"path_sensitive.json names values {name} does not pin: " \
        f"{sorted(set(sensitive) - set(expected))}"
    moved = {k: (values[k], expected[k]) for k in expected
             if differs(values[k], expected[k], sensitive.get(k, {}).get("tolerance", TOL))}
    assert not moved, f"{name}: values moved from the pinned ones (now, pinned): {moved}"


def test_check_pinned_adds_new_values_and_holds_a_path_sensitive_one_to_its_tolerance(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "PINNED", tmp_path)
    write_json("x", {"a": 0.5})
    write_json("path_sensitive", {"x": {"b": {"tolerance": 0.01, "spread": 0.005, "measured": "two kernels"}}})
    monkeypatch.setenv(UPDATE, "1")  # adds b, keeps a's pin
    check_pinned("x", {"a": 0.5 + 1e-9, "b": 0.3})
    assert load_json("x") == {"a": 0.5, "b": 0.3}
    monkeypatch.delenv(UPDATE)
    check_pinned("x", {"a": 0.5, "b": 0.305})
    for moved in ({"a": 0.5, "b": 0.32}, {"a": 0.5001, "b": 0.3}, {"a": float("nan"), "b": 0.3}):
        with pytest.raises(AssertionError, match="moved"):
            check_pinned("x", moved)
    with pytest.raises(AssertionError, match="changed names"):
        check_pinned("x", {"a": 0.5})
    monkeypatch.setenv(UPDATE, "all")  # rewrites: b is gone, and path_sensitive.json names it
    with pytest.raises(AssertionError, match="path_sensitive.json names"):
        check_pinned("x", {"a": 0.6})
    assert load_json("x") == {"a": 0.6}
    monkeypatch.setenv(UPDATE, "yes")
    with pytest.raises(pytest.UsageError, match="STRUCTRANK_UPDATE_PINS='yes'"):
        check_pinned("x", {"a": 0.6})


def _fold1(data_root, name):
    fold = letor_folds(data_root / "letor" / name / ("QueryLevelNorm" if name == "OHSUMED" else ""))[0]
    train = read_letor(fold.train)
    return train, read_letor(fold.test, n_features=train.n_features)


def _test_metrics(model, test, convention, prefix):
    result = evaluate(test.y, model.predict(test.X), test.qid, ["map", "mrr@10", "ndcg@10"], convention,
                      docids=test.docids)
    return {f"{prefix}/{m}": float(v) for m, v in result.metrics.items()}


def test_own_metric_quick_run_is_pinned(data_root, tmp_path):
    from structrank_lab.experiments import own_metric

    rows = own_metric.reproduce(tmp_path, data_root, quick=True)
    check_pinned("own-metric", {f"{r['dataset']}/{r['fold']}/{r['model']}/{r['metric']}": r["value"] for r in rows
                                if not r["metric"].startswith(own_metric.QUERY_PREFIX)})


def test_letor_baselines_quick_run_is_pinned(data_root, tmp_path):
    """Linear regression and RankSVM, chosen on vali from the quick grids, on MQ2008 Fold1-2."""
    from structrank_lab.experiments import letor_baselines

    rows = letor_baselines.reproduce(tmp_path, data_root, quick=True)
    check_pinned("letor-baselines", {f"{r['dataset']}/{r['fold']}/{r['model']}/{r['metric']}": r["value"]
                                     for r in rows})


def test_chakrabarti2008_structural_svms_are_pinned(data_root):
    """Every criterion of Fig. 9 at a fixed C on Fold1 of OHSUMED and MQ2008."""
    from structrank import StructSVMRanker

    values = {}
    for dataset, convention in (("OHSUMED", "letor3"), ("MQ2008", "letor4")):
        train, test = _fold1(data_root, dataset)
        # the paper's formulation (target="ideal") where target="auto" could fall back to the latent one
        for label, params in {"auc": {"loss": "auc"}, "map": {"loss": "map"}, "ndcg": {"loss": "ndcg", "target": "ideal"},
                              "ndcg-nc": {"loss": "ndcg-nc"}, "mrr": {"loss": "mrr", "C": 0.01, "target": "ideal"},
                              "mrr-latent": {"loss": "mrr", "target": "latent"},
                              "ndcg-latent": {"loss": "ndcg", "target": "latent", "C": 100.0},
                              "combo": {"loss": "combo"}, "combo-shared": {"loss": "combo", "slacks": "shared"},
                              "dorm-cut30": {"loss": "ndcg", "target": "ideal",
                                             "loss_params": {"feature_map": "dorm", "dorm_cut": 30}}
                              }.items():
            if params["loss"].startswith("ndcg"):  # the paper's binary gains
                params = {**params, "loss_params": {**params.get("loss_params", {}), "gain": "binary"}}
            model = StructSVMRanker(**{"C": 1.0, **params}).fit(train)
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
