"""benchmarks/xenc_map_smoothing.py's page: which candidate the dev rule keeps, and the paired test on test questions
(the sweep itself fine-tunes on WikiQA and runs outside the suite)."""

import importlib.util
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "xenc_map_smoothing.py"
_SPEC = importlib.util.spec_from_file_location("xenc_map_smoothing", _PATH)
sweep = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(sweep)

CANDIDATES = sweep.candidates([0.0, 1.0, 3.0], positional=[("greedy", 4.0)])
ROWS = [label for label, _, _ in CANDIDATES]
SETTINGS = {label: (params, smoothing) for label, params, smoothing in CANDIDATES}


def _results(devs, tests):
    per_query = {ROWS[0]: [0.5, 1.0, 0.25, 1.0], ROWS[1]: [1.0, 1.0, 0.5, 1.0], ROWS[2]: [0.5, 1.0, 0.25, 1.0],
                 ROWS[3]: [0.25, 0.5, 0.25, 1.0]}
    return {label: {"curve": [dev - 0.01, dev], "epoch": 2, "dev": dev, "test": test, "per_query": per_query[label],
                    "epoch_seconds": [100.0, 101.0], "seconds": 300.0, "dev_questions": 122, "test_questions": 4}
            for label, dev, test in zip(ROWS, devs, tests)}


def test_the_candidates_start_with_the_exact_hinge_and_end_with_the_positional_map():
    assert ROWS[0] == "phi_po, smoothing 0" and ROWS[1] == "phi_po, smoothing 1"
    assert ROWS[3] == "positional (LSP-AP's map), scale 4"
    assert sweep.candidates([0.0], positional=[("greedy", 1.0), ("greedy", 4.0)])[-1][1] == \
        {"feature_map": "positional", "scale": 4.0}
    exact = sweep.candidates([0.0], positional=[("exact", 3.0)])[-1]
    assert exact[0] == "positional, exact inference (LSP-AP*), scale 3"
    assert exact[1] == {"feature_map": "positional", "scale": 3.0, "inference": "exact"}
    assert len(sweep.candidates([0.0, 0.3])) == 2


@pytest.mark.parametrize("devs, kept, sentence", [
    ((0.78, 0.785, 0.77, 0.70), ROWS[0], "+0.0050 against the exact hinge: under the rule's point"),
    ((0.78, 0.80, 0.77, 0.70), ROWS[1], "+0.0200 against the exact hinge: the rule picks it over the exact hinge."),
    ((0.78, 0.77, 0.76, 0.70), ROWS[0], "No candidate's dev MAP is above the exact hinge's"),
])
def test_a_candidate_replaces_the_exact_hinge_only_a_point_above_it_on_dev(devs, kept, sentence):
    text = sweep.page(ROWS, _results(devs, (0.7, 0.9, 0.7, 0.6)), "python benchmarks/xenc_map_smoothing.py", 600.0, SETTINGS)
    assert f"| {kept} (kept) |" in text and text.count("(kept)") == 1
    assert sentence in text
    assert f"The kept candidate ({kept}) has test MAP {0.7 if kept == ROWS[0] else 0.9:.4f}, " in text
    assert ("at least issue 40's 0.80" in text) == (kept == ROWS[1])


def test_each_candidate_is_paired_with_the_exact_hinge_on_test_questions():
    text = sweep.page(ROWS, _results((0.78, 0.77, 0.76, 0.70), (0.7, 0.9, 0.7, 0.6)), "cmd", 600.0, SETTINGS)
    lines = {line.split(" |")[0].lstrip("| "): line for line in text.splitlines() if line.startswith("| phi_po")
             or line.startswith("| positional")}
    assert "| — |" in lines[ROWS[0] + " (kept)"]
    assert "| +0.1875 (" in lines[ROWS[1]]            # (0.5 + 0 + 0.25 + 0) / 4
    assert "| +0.0000 (+0.0000, +0.0000), 1.000 |" in lines[ROWS[2]]   # the same values: no difference
    assert "| -0.1875 (" in lines[ROWS[3]]


def test_a_row_that_repeats_an_earlier_one_epoch_for_epoch_is_named():
    results = _results((0.78, 0.77, 0.76, 0.70), (0.7, 0.9, 0.7, 0.6))
    assert "repeats" not in sweep.page(ROWS, results, "cmd", 600.0, SETTINGS)
    results[ROWS[3]] = {**results[ROWS[2]], "per_query": results[ROWS[3]]["per_query"]}
    text = sweep.page(ROWS, results, "cmd", 600.0, SETTINGS)
    assert f"{ROWS[3]} repeats {ROWS[2]} epoch for epoch" in text


def test_the_page_says_which_candidate_xenc_map_trains_by_default():
    """The registry's default is LSP-AP*'s map at scale 3 (the candidate the rule kept on WikiQA): the page names it
    when it is among the rows, and says so when it is not."""
    results = _results((0.78, 0.77, 0.76, 0.70), (0.7, 0.9, 0.7, 0.6))
    assert "trains by default (`learners.registry.XENC_DEFAULTS`) none of these candidates." in \
        sweep.page(ROWS, results, "cmd", 600.0, SETTINGS)
    exact = sweep.candidates([0.0], positional=[("exact", 3.0)])
    settings = {**SETTINGS, ROWS[3]: exact[-1][1:]}  # the last row set as xenc-map's default sets it
    text = sweep.page(ROWS, _results((0.78, 0.77, 0.76, 0.80), (0.7, 0.9, 0.7, 0.6)), "cmd", 600.0, settings)
    assert f"trains by default (`learners.registry.XENC_DEFAULTS`) the kept candidate ({ROWS[3]})." in text
    text = sweep.page(ROWS, results, "cmd", 600.0, settings)
    assert f"trains by default (`learners.registry.XENC_DEFAULTS`) {ROWS[3]}, not the kept candidate." in text
