"""Every command-line model, trained with its defaults on one fixed small data set, predicts the
same bits as when its pin was written (issue 23: refactoring must not change a model).

``tests/pinned/models.json`` holds, per model, the SHA-256 of its float64 predictions on a
held-out set. A change that is meant to move a model: rerun with ``STRUCTRANK_UPDATE_PINS=1``
and commit the file with the reason. Models whose training is not bit-reproducible across
processes would show here as a moved pin (none is today).
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from pathlib import Path

import numpy as np
import pytest

from structrank.data import make_ranking_dataset
from structrank.learners.registry import MODELS

PINS = Path(__file__).parent / "pinned" / "models.json"
#: short runs: the grid is not searched, each model takes its defaults with these few iterations
QUICK = {"max_iter": 20, "epochs": 3, "max_epochs": 3, "n_estimators": 10, "n_landmarks": 20}


@pytest.fixture(scope="module")
def split():
    ds = make_ranking_dataset(n_queries=24, docs_per_query=14, n_features=5, n_levels=3, random_state=11)
    return ds.take_queries(np.arange(12)), ds.take_queries(np.arange(12, 18)), ds.take_queries(np.arange(18, 24))


def _fingerprint(name, split):
    train, vali, test = split
    spec = MODELS[name]
    accepted = spec.cls().get_params(deep=False)
    quick = {k: v for k, v in QUICK.items() if k in accepted}
    if "ranker_params" in accepted:  # the Nyström ranker: 20 landmarks for 168 rows
        quick = {"n_landmarks": 20} if "n_landmarks" in accepted else {}
    model = spec.make(**quick)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = model.fit(train, eval_set=vali) if spec.fit_with_vali else model.fit(train)
    scores = np.ascontiguousarray(model.predict(test.X), dtype=np.float64)
    return hashlib.sha256(scores.tobytes()).hexdigest()


def _names():
    names = sorted(MODELS)
    try:
        import torch  # noqa: F401
    except ImportError:
        names = [n for n in names if not n.startswith("mlp-")]
    return names


@pytest.mark.slow
def test_every_cli_model_predicts_the_pinned_bits(split):
    got = {name: _fingerprint(name, split) for name in _names()}
    if os.environ.get("STRUCTRANK_UPDATE_PINS"):
        pinned = json.loads(PINS.read_text()) if PINS.exists() else {}
        PINS.write_text(json.dumps({**pinned, **got}, indent=1, sort_keys=True) + "\n")
    pinned = json.loads(PINS.read_text())
    assert set(MODELS) <= set(pinned), f"models without a pin: {sorted(set(MODELS) - set(pinned))}"
    moved = sorted(name for name in got if got[name] != pinned[name])
    assert not moved, f"these models' predictions changed: {moved}"


def test_a_fingerprint_sees_the_last_bit():
    a = np.array([0.1, 0.2])
    b = a.copy()
    b[1] = np.nextafter(b[1], 1.0)
    assert hashlib.sha256(a.tobytes()).hexdigest() != hashlib.sha256(b.tobytes()).hexdigest()
