"""Every command-line model, trained with its defaults on one fixed small data set, predicts what its
pin says (issue 23: refactoring must not change a model), on any x86-64 machine (issue 37).

``tests/pinned/models.json`` holds, per model, its float64 predictions on a held-out set (6 queries
of 14 documents) and their mean NDCG@10. A pin compares what a user sees, not bits: the BLAS
kernel OpenBLAS picks per processor (``OPENBLAS_CORETYPE``) and the thread counts may move the
last bits of a fit, so predictions agree to ``RTOL`` of their scale (the largest pinned |score|)
and the NDCG@10 to ``test_pinned.TOL``. A model whose training path rounding steers (an early-stopped
cutting plane that adds another constraint) gets its own tolerance in
``tests/pinned/path_sensitive.json`` (``"models"``: the measured cross-kernel spread, as data).

``STRUCTRANK_UPDATE_PINS=1`` adds the pins of models that have none (a new model) and leaves the
others; ``STRUCTRANK_UPDATE_PINS=all`` rewrites every pin, for a change that is meant to move
models: commit the file with the reason. ``tools/pins_across_kernels.sh`` runs the pinned tests
under each BLAS kernel and thread count.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from test_pinned import TOL, differs, load_json, path_sensitive, update_mode, write_json

from structrank.data import make_ranking_dataset
from structrank.learners.registry import FEATURE_MODELS as MODELS  # the text models' pin: tests/library/test_cross_encoder.py
from structrank.metrics import evaluate

NAME = "models"
#: short runs: the grid is not searched, each model takes its defaults with these few iterations
QUICK = {"max_iter": 20, "epochs": 3, "max_epochs": 3, "n_estimators": 10, "n_landmarks": 20}
#: predictions agree to this fraction of their scale: far above the rounding of a fit that takes
#: the same path under another BLAS kernel, far below a change of model
RTOL = 1e-9


@pytest.fixture(scope="module")
def split():
    ds = make_ranking_dataset(n_queries=24, docs_per_query=14, n_features=5, n_levels=3, random_state=11)
    return ds.take_queries(np.arange(12)), ds.take_queries(np.arange(12, 18)), ds.take_queries(np.arange(18, 24))


def _predict(name, split):
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
    scores = np.asarray(model.predict(test.X), dtype=np.float64)
    ndcg = evaluate(test.y, scores, test.qid, ["ndcg@10"], "letor4").metrics["ndcg@10"]
    return {"ndcg@10": float(ndcg), "scores": scores.tolist()}


def _names():
    names = sorted(MODELS)
    try:
        import torch  # noqa: F401
    except ImportError:
        names = [n for n in names if not n.startswith("mlp-")]
    return names


def moved(got, pin, rtol=RTOL, tol=TOL):
    """What of a model's predictions differs from its pin beyond the tolerances, or None."""
    scores, pinned = np.asarray(got["scores"]), np.asarray(pin["scores"])
    if scores.shape != pinned.shape:
        return f"{scores.size} predictions where the pin has {pinned.size}"
    scale = max(float(np.abs(pinned).max(initial=0.0)), np.finfo(float).tiny)
    gap = float(np.abs(scores - pinned).max(initial=0.0))
    if not gap <= rtol * scale:  # not <=: a NaN prediction moves
        return f"predictions differ by {gap:.3g}, {gap / scale:.3g} of their scale {scale:.3g} (tolerance {rtol:g})"
    if differs(got["ndcg@10"], pin["ndcg@10"], tol):
        return f"NDCG@10 {got['ndcg@10']:.6f} where the pin says {pin['ndcg@10']:.6f}"
    return None


@pytest.mark.slow
def test_every_cli_model_predicts_its_pin(split):
    got = {name: _predict(name, split) for name in _names()}
    pins = load_json(NAME)
    mode = update_mode()
    if mode:
        write_json(NAME, {**pins, **got} if mode == "all" else {**got, **pins})
        pins = load_json(NAME)
    assert set(MODELS) <= set(pins), f"models without a pin: {sorted(set(MODELS) - set(pins))}"
    sensitive = path_sensitive(NAME)
    changes = {name: why for name in got
               if (why := moved(got[name], pins[name], sensitive.get(name, {}).get("tolerance", RTOL)))}
    assert not changes, f"these models' predictions changed: {changes}"


def test_a_pin_sees_a_change_of_model_but_not_rounding():
    pin = {"scores": [0.5, -1.25, 2.0], "ndcg@10": 0.75}
    rounded = {"scores": [np.nextafter(0.5, 1.0), -1.25, 2.0 + 1e-12], "ndcg@10": 0.75}
    assert moved(rounded, pin) is None
    assert "predictions differ" in moved({**pin, "scores": [0.5, -1.25, 2.001]}, pin)
    assert "predictions differ" in moved({**pin, "scores": [0.5, np.nan, 2.0]}, pin)
    assert "NDCG@10" in moved({**pin, "ndcg@10": 0.7}, pin)
    assert "the pin has 3" in moved({**pin, "scores": [0.5, -1.25]}, {**pin, "scores": [0.5, -1.25, 2.0]})
