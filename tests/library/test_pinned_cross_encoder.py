"""A cross-encoder fine-tuned on a tiny BERT (built from a config, seeded) predicts what its pin says, on any
x86-64 machine (issue 37's rule for every model a user trains, here for ``xenc-map``).

The network computes in float32, whose sums BLAS kernels and thread counts order differently: predictions
agree to ``RTOL`` of their scale (the largest pinned |score|), MAP to ``test_pinned.TOL``.
``STRUCTRANK_UPDATE_PINS=1`` writes the pin when there is none (``all`` rewrites it).
"""

import warnings

import numpy as np
import pytest
from test_pinned import TOL, differs, load_json, update_mode, write_json

from test_cross_encoder import make_pairs
from tests.tiny_encoder import write_tiny_encoder

NAME = "cross_encoder"
#: float32 training: two epochs of sums in another order move the last digits of float32, never this much
RTOL = 1e-3


@pytest.mark.extra("text")
def test_xenc_map_predicts_its_pin(tmp_path):
    from structrank.learners.registry import MODELS
    from structrank.metrics import evaluate

    encoder = write_tiny_encoder(tmp_path / "tiny", seed=7)
    pairs, y, qid = make_pairs(20, seed=3)
    test_pairs, test_y, test_qid = make_pairs(6, seed=4)
    model = MODELS["xenc-map"].make(encoder=str(encoder), epochs=2, learning_rate=2e-3, batch_size=4, device="cpu",
                                    progress=False, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scores = model.fit(pairs, y, qid).predict(test_pairs)
    docids = [str(i) for i in range(len(test_y))]
    got = {"scores": scores.tolist(),
           "map": float(evaluate(test_y, scores, test_qid, ["map"], "trec", docids=docids).metrics["map"])}
    pins = load_json(NAME)
    if update_mode() == "all" or (update_mode() and "xenc-map" not in pins):
        write_json(NAME, {**pins, "xenc-map": got})
        pins = load_json(NAME)
    pin = pins["xenc-map"]
    pinned = np.asarray(pin["scores"])
    scale = float(np.abs(pinned).max())
    gap = float(np.abs(scores - pinned).max())
    assert gap <= RTOL * scale, f"predictions differ by {gap:.3g}, {gap / scale:.3g} of their scale {scale:.3g}"
    assert not differs(got["map"], pin["map"], TOL), (got["map"], pin["map"])
