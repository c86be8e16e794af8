"""benchmarks/mlp_departures.py's summary: which candidate vali chooses, the gains against the linear start, and
how well vali ranks the candidates by their test gain (the study itself needs the data and runs outside the suite)."""

import importlib.util
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "mlp_departures.py"
_SPEC = importlib.util.spec_from_file_location("mlp_departures", _PATH)
departures = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(departures)


def _curve(start, points):
    """[(epoch, vali choice metric, vali metric, test metric)]: epoch 0 at ``start``, then ``points`` (vali, test)."""
    return [(0, start[0], start[0], start[1])] + [(e, v, v, t) for e, (v, t) in enumerate(points, 1)]


def test_the_chosen_candidate_is_the_first_best_on_vali_and_its_gains_are_against_the_start():
    fits = [({"h": 16}, _curve((0.30, 0.40), [(0.31, 0.39), (0.33, 0.38)])),
            ({"h": 64}, _curve((0.30, 0.40), [(0.33, 0.45), (0.32, 0.41)]))]   # ties at 0.33: the first grid point
    s = departures.summarise([fits])
    assert s["chosen_vali"] == pytest.approx(3.0) and s["chosen_test"] == pytest.approx(-2.0)
    assert s["chosen_left"] == 1.0 and s["candidates"] == 4 and s["fits"] == 1
    assert s["vali"] == pytest.approx(100 * (0.01 + 0.03 + 0.03 + 0.02) / 4)
    assert s["test"] == pytest.approx(100 * (-0.01 - 0.02 + 0.05 + 0.01) / 4)
    assert s["test_up"] == 0.5
    assert s["rho"] == pytest.approx((-1.0 + 1.0) / 2)   # the first grid point ranks inversely, the second alike
    text = departures.verdict(s)
    assert "vali lead (+3.00) did not carry to test (-2.00)" in text and "gain on test on average (+0.75, 50%" in text
    assert "vali hardly ranks the departures as test does (rho 0.00)" in text


def test_a_start_no_epoch_beats_on_vali_is_kept():
    fits = [({"h": 16}, _curve((0.30, 0.40), [(0.29, 0.45), (0.28, 0.44)]))]
    s = departures.summarise([fits, fits])
    assert s["chosen_left"] == 0.0 and s["chosen_vali"] == 0.0 and s["chosen_test"] == 0.0 and s["fits"] == 2
    assert s["rho"] == pytest.approx(1.0) and "vali ranks the departures much as test does" in departures.verdict(s)
