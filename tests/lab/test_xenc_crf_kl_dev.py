"""benchmarks/xenc_crf_kl_dev.py's candidates and page: which setting the dev rule keeps and what xenc-crf-kl trains by
default (the sweep itself fine-tunes on WikiQA and runs outside the suite)."""

import importlib.util
import sys
from dataclasses import replace
from pathlib import Path

import pytest

_BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(_BENCHMARKS))  # the sweep reads its sibling xenc_map_smoothing.py as its own script does
_SPEC = importlib.util.spec_from_file_location("xenc_crf_kl_dev", _BENCHMARKS / "xenc_crf_kl_dev.py")
sweep = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(sweep)

CANDIDATES = sweep.candidates([1.0, 0.1], learning_rates=[1e-4], questions_per_step=[8], epochs=[5])
ROWS = [label for label, _ in CANDIDATES]
SETTINGS = dict(CANDIDATES)


def _results(devs, tests):
    per_query = [[0.5, 1.0, 0.25, 1.0], [1.0, 1.0, 0.5, 1.0], [0.5, 1.0, 0.25, 1.0], [0.25, 0.5, 0.25, 1.0],
                 [0.5, 0.5, 0.5, 0.5]]
    return {label: {"curve": [dev - 0.01, dev], "epoch": 2, "dev": dev, "test": test,
                    "per_query": {f"q{i}": v for i, v in enumerate(values)},
                    "epoch_seconds": [100.0, 101.0], "seconds": 300.0, "dev_questions": 122, "test_questions": 4}
            for label, dev, test, values in zip(ROWS, devs, tests, per_query)}


def test_each_candidate_changes_one_setting_of_neural_qas_crf_kl():
    assert ROWS == ["KL, temperature 1, neural-qa's CRF-KL", "KL, temperature 0.1", "KL, learning rate 0.0001",
                    "KL, 8 questions per step", "KL, 5 epochs"]
    assert SETTINGS[ROWS[0]] == {"loss": "crf-kl"}
    assert SETTINGS[ROWS[1]] == {"loss": "crf-kl", "loss_params": {"crf_param": 0.1}}
    assert SETTINGS[ROWS[2]] == {"loss": "crf-kl", "learning_rate": 1e-4}
    assert SETTINGS[ROWS[3]] == {"loss": "crf-kl", "batch_size": 8}
    assert SETTINGS[ROWS[4]] == {"loss": "crf-kl", "epochs": 5}
    # the temperature reaches the loss the ranker builds
    from structrank.losses import get_loss

    assert get_loss("crf-kl", **SETTINGS[ROWS[1]]["loss_params"]).param == 0.1


@pytest.mark.parametrize("devs, kept, sentence", [
    ((0.79, 0.795, 0.77, 0.70, 0.7), ROWS[0], "+0.0050 against neural-qa's setting: under the rule's point"),
    ((0.79, 0.81, 0.77, 0.70, 0.7), ROWS[1], "+0.0200 against neural-qa's setting: the rule picks it."),
    ((0.79, 0.78, 0.76, 0.70, 0.7), ROWS[0], "No candidate's dev MAP is above neural-qa's setting's"),
])
def test_a_candidate_replaces_neural_qas_setting_only_a_point_above_it_on_dev(devs, kept, sentence):
    text = sweep.page(ROWS, _results(devs, (0.78, 0.81, 0.7, 0.6, 0.6)), "cmd", 600.0, SETTINGS)
    assert f"| {kept} (kept) |" in text and text.count("(kept)") == 1
    assert sentence in text
    assert ("at least neural-qa's target 0.80" in text) == (kept == ROWS[1])
    assert "| +0.1875 (" in text  # the temperature row's test questions against the first row's, by id


def test_the_page_says_what_xenc_crf_kl_trains_by_default(monkeypatch):
    results = _results((0.79, 0.81, 0.77, 0.70, 0.7), (0.78, 0.81, 0.7, 0.6, 0.6))
    spec = sweep.MODELS["xenc-crf-kl"]

    def trains(defaults):
        monkeypatch.setitem(sweep.MODELS, "xenc-crf-kl", replace(spec, defaults={"loss": "crf-kl", **defaults}))
        return sweep.page(ROWS, results, "cmd", 600.0, SETTINGS)

    said = "trains by default (`learners.registry.XENC_DEFAULTS`) "
    assert f"{said}{ROWS[0]}, not the kept candidate." in trains({})
    assert f"{said}{ROWS[0]}, not the kept candidate." in trains({"learning_rate": sweep.BUDGET["learning_rate"]})
    assert f"{said}the kept candidate ({ROWS[1]})." in trains({"loss_params": {"crf_param": 0.1}})
    assert f"{said}none of these candidates." in trains({"loss_params": {"crf_param": 0.5}})
    assert f"{said}{ROWS[4]}, not the kept candidate." in trains({"epochs": 5})


def test_the_first_temperature_must_be_the_one_neural_qa_trains(tmp_path, capsys):
    """The first row stands for neural-qa's CRF-KL (no temperature option): another first value would train the
    default under another label."""
    assert sweep.default_temperature() == 1.0
    with pytest.raises(SystemExit):
        sweep.main(["--out", str(tmp_path / "p.md"), "--state", str(tmp_path / "s.json"), "--temperatures", "0.3,1"])
    assert "--temperatures must start with 1, CRF-KL's default" in capsys.readouterr().err


def test_the_transfer_row_comes_last_from_the_store_and_is_never_the_default(tmp_path, capsys):
    """neural-qa's transfer row (TREC QA first) is a candidate read from the store: it can be kept by the dev rule,
    and the page says that xenc-crf-kl's defaults do not train it."""
    rows = sweep.candidates([1.0, 0.1], transfer=True)
    assert [label for label, _ in rows][-1] == sweep.TRANSFER_LABEL and sweep.TRANSFER_ROW == "CRF-KL, TREC QA first"
    assert rows[-1][1] == {"loss": "crf-kl", "transfer": "trec13"}
    labels, settings = [label for label, _ in rows], dict(rows)
    results = _results((0.79, 0.78, 0.80), (0.77, 0.76, 0.82))
    results[sweep.TRANSFER_LABEL] = results.pop(ROWS[2])
    results = {label: results[label] for label in labels}
    text = sweep.page(labels, results, "cmd", 600.0, settings)
    assert f"| {sweep.TRANSFER_LABEL} (kept) |" in text and "TANDA" in text
    assert f"trains by default (`learners.registry.XENC_DEFAULTS`) {ROWS[0]}, not the kept candidate." in text
    assert "at least neural-qa's target 0.80" in text
    with pytest.raises(SystemExit):
        sweep.main(["--out", str(tmp_path / "p.md"), "--state", str(tmp_path / "s.json"), "--transfer"])
    assert "--transfer reads neural-qa's transfer run from --store" in capsys.readouterr().err


def test_the_mean_pooled_head_is_a_candidate_and_the_page_gives_its_dev_and_test_differences():
    rows = sweep.candidates([1.0], mean_head=True)
    assert rows == [(ROWS[0], {"loss": "crf-kl"}), (sweep.MEAN_HEAD_LABEL, {"loss": "crf-kl", "head": "mean"})]
    labels = [label for label, _ in rows]
    base = _results((0.79, 0.7), (0.78, 0.7))[ROWS[0]]
    results = {labels[0]: base, labels[1]: {**base, "dev": 0.79, "test": 0.80}}
    text = sweep.page(labels, results, "cmd", 600.0, dict(rows))
    assert "dev MAP +0.0000, test MAP +0.0200; the rule reads dev only." in text
    assert "No candidate's dev MAP is above neural-qa's setting's" in text
    # the candidate's setting is the estimator's: the parameter exists and takes that value
    from structrank.learners import CrossEncoderRanker

    assert CrossEncoderRanker(**dict(rows)[sweep.MEAN_HEAD_LABEL]).get_params()["head"] == "mean"


def test_more_seeds_of_the_mean_pooled_head_pair_each_question_s_mean_over_the_seeds(tmp_path, capsys):
    """``--seeds``: each seed's dev and test MAP of both rows, their means, and the test questions paired with each
    question's AP the mean over the seeds (here the mean head gains 0.25 on q0 at seed 0 only: 0.25 / 3 / 4 questions
    on average)."""
    rows = sweep.candidates([1.0], mean_head=True)
    labels = [label for label, _ in rows]
    base = _results((0.79,), (0.78,))[ROWS[0]]
    results = {}
    for seed, (dev, test) in zip((0, 1, 2), ((0.79, 0.78), (0.80, 0.76), (0.78, 0.77))):
        results[sweep.seeded(labels[0], seed)] = {**base, "dev": dev, "test": test}
        results[sweep.seeded(labels[1], seed)] = {**base, "dev": dev + 0.01, "test": test + 0.02}
    results[labels[1]]["per_query"] = {**base["per_query"], "q0": base["per_query"]["q0"] + 0.25}
    assert sweep.seeded(labels[1], 0) == labels[1] and sweep.seeded(labels[1], 2) == f"{labels[1]}, seed 2"
    text = sweep.page(labels, results, "cmd", 600.0, dict(rows), seeds=(1, 2))
    assert "## The mean-pooled head over seeds 0, 1, 2" in text
    assert f"| {labels[0]} | 0.7900 / 0.8000 / 0.7800 | 0.7800 / 0.7600 / 0.7700 | 0.7900 | 0.7700 |" in text
    assert f"| {labels[1]} | 0.8000 / 0.8100 / 0.7900 | 0.8000 / 0.7800 / 0.7900 | 0.8000 | 0.7900 |" in text
    assert "dev MAP +0.0100; test MAP +0.0208 (95% CI" in text and "4 questions paired" in text
    assert "## The mean-pooled head" not in sweep.page(labels, results, "cmd", 600.0, dict(rows))
    for argv, said in ((["--seeds", "1"], "give --mean-head and --store"),
                       (["--seeds", "0", "--mean-head", "--store", "x"], "seeds other than the sweep's own, 0")):
        with pytest.raises(SystemExit):
            sweep.main(["--out", str(tmp_path / "p.md"), "--state", str(tmp_path / "s.json"), *argv])
        assert said in capsys.readouterr().err


@pytest.mark.parametrize("gains, kept", [((0.0, 0.02, 0.01), True), ((0.0, 0.01, 0.005), False)])
def test_elsewhere_the_mean_pooled_head_is_kept_only_by_the_dev_gain_averaged_over_the_data_sets(gains, kept):
    """``--elsewhere``: the head's seed-0 runs on TREC QA and SemEval-2016 beside neural-qa's CRF-KL there; the rule
    averages the dev MAP gain with WikiQA's and keeps the head only at least a point above."""
    rows = sweep.candidates([1.0], mean_head=True)
    labels = [label for label, _ in rows]
    base = _results((0.79,), (0.78,))[ROWS[0]]
    results = {labels[0]: base, labels[1]: {**base, "dev": base["dev"] + gains[0]}}
    others = {}
    for dataset, gain in zip(sweep.ELSEWHERE, gains[1:]):
        others[dataset] = {**base, "dev": 0.7}
        results[sweep.elsewhere_key(labels[1], dataset)] = {**base, "dev": 0.7 + gain, "test": base["test"] + 0.01}
    assert sweep.elsewhere_key(labels[1], "trec13") == f"{labels[1]} on TREC QA"
    text = sweep.page(labels, results, "cmd", 600.0, dict(rows), others=others)
    assert "## The mean-pooled head on the other data sets (seed 0)" in text
    assert f"| TREC QA | 0.7000 | {0.7 + gains[1]:.4f} | {gains[1]:+.4f} | 0.7800 | 0.7900 |" in text
    assert f"averaged over the 3 data sets: {sum(gains) / 3:+.4f}" in text
    assert ("the mean-pooled head is the better choice by dev." in text) == kept
    assert ("dev does not choose it over the classification head." in text) == (not kept)
