"""benchmarks/xenc_map_smoothing.py's page: which candidate the dev rule keeps, and the paired test on test questions
(the sweep itself fine-tunes on WikiQA and runs outside the suite)."""

import importlib.util
import json
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "xenc_map_smoothing.py"
_SPEC = importlib.util.spec_from_file_location("xenc_map_smoothing", _PATH)
sweep = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(sweep)

CANDIDATES = sweep.candidates([0.0, 1.0, 3.0], positional=[("greedy", 4.0)])
ROWS = [label for label, _ in CANDIDATES]
SETTINGS = dict(CANDIDATES)


def _by_id(values):
    return {f"q{i}": v for i, v in enumerate(values)}


def _results(devs, tests):
    per_query = {ROWS[0]: [0.5, 1.0, 0.25, 1.0], ROWS[1]: [1.0, 1.0, 0.5, 1.0], ROWS[2]: [0.5, 1.0, 0.25, 1.0],
                 ROWS[3]: [0.25, 0.5, 0.25, 1.0]}
    return {label: {"curve": [dev - 0.01, dev], "epoch": 2, "dev": dev, "test": test,
                    "per_query": _by_id(per_query[label]),
                    "epoch_seconds": [100.0, 101.0], "seconds": 300.0, "dev_questions": 122, "test_questions": 4}
            for label, dev, test in zip(ROWS, devs, tests)}


def test_the_candidates_start_with_the_exact_hinge_and_end_with_the_positional_map():
    assert ROWS[0] == "phi_po, smoothing 0" and ROWS[1] == "phi_po, smoothing 1"
    assert ROWS[3] == "positional (LSP-AP's map), scale 4"
    assert SETTINGS[ROWS[0]] == {} and SETTINGS[ROWS[1]] == {"smoothing": 1.0}
    assert sweep.candidates([0.0], positional=[("greedy", 1.0), ("greedy", 4.0)])[-1][1] == \
        {"loss_params": {"feature_map": "positional", "scale": 4.0}}
    exact = sweep.candidates([0.0], positional=[("exact", 3.0)])[-1]
    assert exact[0] == "positional, exact inference (LSP-AP*), scale 3"
    assert exact[1] == {"loss_params": {"feature_map": "positional", "scale": 3.0, "inference": "exact"}}
    assert len(sweep.candidates([0.0, 0.3])) == 2


def test_the_learning_rate_the_questions_per_step_and_the_pairwise_mix_each_change_one_setting():
    rows = dict(sweep.candidates([0.0], learning_rates=[1e-4], questions_per_step=[2], mix=True))
    assert rows["phi_po, learning rate 0.0001"] == {"learning_rate": 1e-4}
    assert rows["phi_po, 2 questions per step"] == {"batch_size": 2}
    assert rows["phi_po with a pairwise term (SVM-combo of the MAP and AUC hinges)"] == \
        {"loss": "combo", "loss_params": {"components": ["map", "auc"]}}
    # what each trains, against neural-qa's MAP hinge: only the named setting differs
    base = json.loads(sweep.trained({}))
    assert base == {"loss": "map", "loss_params": None, "smoothing": 0.0,
                    "learning_rate": sweep.BUDGET["learning_rate"], "batch_size": sweep.BUDGET["batch_size"]}
    for setting in rows.values():
        changed = {k for k, v in json.loads(sweep.trained(setting)).items() if base[k] != v}
        assert changed == set(setting)
    # the mix trains through the registered SVM-combo loss (each question's more violated component)
    from structrank.losses import get_loss

    combo = get_loss("combo", **sweep.MIX["loss_params"])
    assert [c.name for c in combo.components] == ["map", "auc"]


@pytest.mark.parametrize("devs, kept, sentence", [
    ((0.78, 0.785, 0.77, 0.70), ROWS[0], "+0.0050 against the exact hinge: under the rule's point"),
    ((0.78, 0.80, 0.77, 0.70), ROWS[1],
     "+0.0200 against the exact hinge: the rule picks it over the exact hinge on WikiQA."),
    ((0.78, 0.77, 0.76, 0.70), ROWS[0], "No candidate's dev MAP is above the exact hinge's"),
])
def test_a_candidate_replaces_the_exact_hinge_only_a_point_above_it_on_dev(devs, kept, sentence):
    text = sweep.page(ROWS, _results(devs, (0.7, 0.9, 0.7, 0.6)), "python benchmarks/xenc_map_smoothing.py", 600.0,
                      SETTINGS)
    assert f"| {kept} (kept) |" in text and text.count("(kept)") == 1
    assert sentence in text
    assert f"The kept candidate ({kept}) has WikiQA test MAP {0.7 if kept == ROWS[0] else 0.9:.4f}, " in text
    assert ("at least neural-qa's target 0.80" in text) == (kept == ROWS[1])


def test_each_candidate_is_paired_with_the_exact_hinge_on_test_questions():
    text = sweep.page(ROWS, _results((0.78, 0.77, 0.76, 0.70), (0.7, 0.9, 0.7, 0.6)), "cmd", 600.0, SETTINGS)
    lines = {line.split(" |")[0].lstrip("| "): line for line in text.splitlines() if line.startswith("| phi_po")
             or line.startswith("| positional")}
    assert "| — |" in lines[ROWS[0] + " (kept)"]
    assert "| +0.1875 (" in lines[ROWS[1]]            # (0.5 + 0 + 0.25 + 0) / 4
    assert "| +0.0000 (+0.0000, +0.0000), 1.000 |" in lines[ROWS[2]]   # the same values: no difference
    assert "| -0.1875 (" in lines[ROWS[3]]


def test_rows_are_paired_by_question_id_whatever_their_order():
    """A row read from neural-qa's store lists its questions by id, a fine-tuning in the order evaluate met them:
    the paired test matches them by id, over the questions both measured."""
    results = _results((0.78, 0.77, 0.76, 0.70), (0.7, 0.9, 0.7, 0.6))
    shuffled = dict(reversed(list(results[ROWS[1]]["per_query"].items())))
    results[ROWS[1]] = {**results[ROWS[1]], "per_query": {**shuffled, "q9": 0.0}}   # q9: the exact hinge lacks it
    t = sweep.paired(results[ROWS[1]], results[ROWS[0]])
    assert t.n == 4 and t.mean_diff == pytest.approx(0.1875)


def test_a_row_that_repeats_an_earlier_one_epoch_for_epoch_is_named():
    results = _results((0.78, 0.77, 0.76, 0.70), (0.7, 0.9, 0.7, 0.6))
    assert "repeats" not in sweep.page(ROWS, results, "cmd", 600.0, SETTINGS)
    results[ROWS[3]] = {**results[ROWS[2]], "per_query": results[ROWS[3]]["per_query"]}
    text = sweep.page(ROWS, results, "cmd", 600.0, SETTINGS)
    assert f"{ROWS[3]} repeats {ROWS[2]} epoch for epoch" in text


def test_the_page_says_which_candidate_xenc_map_trains_by_default(monkeypatch):
    """The page names the candidate the registry's xenc-map trains by default, or says it is none of the rows."""
    from dataclasses import replace

    def trains(loss_params):
        spec = sweep.MODELS["xenc-map"]
        monkeypatch.setitem(sweep.MODELS, "xenc-map", replace(spec, defaults={"loss": "map", **loss_params}))

    results = _results((0.78, 0.77, 0.76, 0.70), (0.7, 0.9, 0.7, 0.6))
    trains({"loss_params": {"feature_map": "positional", "scale": 9.0}})
    assert "trains by default (`learners.registry.XENC_DEFAULTS`) none of these candidates." in \
        sweep.page(ROWS, results, "cmd", 600.0, SETTINGS)
    trains({"loss_params": SETTINGS[ROWS[3]]["loss_params"]})
    text = sweep.page(ROWS, _results((0.78, 0.77, 0.76, 0.80), (0.7, 0.9, 0.7, 0.6)), "cmd", 600.0, SETTINGS)
    assert f"trains by default (`learners.registry.XENC_DEFAULTS`) the kept candidate ({ROWS[3]})." in text
    text = sweep.page(ROWS, results, "cmd", 600.0, SETTINGS)
    assert f"trains by default (`learners.registry.XENC_DEFAULTS`) {ROWS[3]}, not the kept candidate." in text
    trains({})  # phi_po unsmoothed: the first row
    assert f"the kept candidate ({ROWS[0]})." in sweep.page(ROWS, results, "cmd", 600.0, SETTINGS)


def _record(store, dataset, params, dev, per_query):
    """A neural-qa MAP hinge run at seed 0 as the reproduction records it (the part the page reads)."""
    from structrank_lab.experiments.neural_qa.design import EXPERIMENT, MAP_HINGE
    from structrank_lab.experiments.run_key import RunKey

    rows = [("curve:001", "trec", dev - 0.02), ("curve:002", "trec", dev), ("chosen:epoch", "param", 2.0),
            ("dev:map", "trec", dev), ("test:map", "trec", sum(per_query) / len(per_query)),
            ("time:epoch:001", "time", 300.0), ("time:epoch:002", "time", 310.0), ("time:wall", "time", 700.0),
            ("count:dev_questions", "count", 60.0), ("count:test_questions", "count", float(len(per_query)))]
    rows += [(f"q:q{i}:map", "trec", v) for i, v in enumerate(per_query)] + [("q:q0:mrr", "trec", 1.0)]
    store.record(RunKey(EXPERIMENT, dataset, "test", 0, 0, MAP_HINGE, params), rows, 700.0)


def test_the_store_s_seed_0_map_hinge_runs_are_read_for_the_candidates_they_ran(tmp_path):
    from structrank_lab.experiments.store import ResultStore

    exact = sweep.candidates([0.0], positional=[("exact", 3.0)], learning_rates=[1e-4])
    settings = dict(exact)
    with ResultStore(tmp_path / "results.sqlite") as store:
        _record(store, "trec13", {"budget": "full"}, 0.83, [1.0, 0.5, 0.25])
        _record(store, "trec13", {"budget": "full", "loss_params": exact[1][1]["loss_params"]}, 0.82, [1.0, 1.0, 0.25])
        _record(store, "semeval2016", {"budget": "full"}, 0.68, [0.5, 0.5])
        _record(store, "wikiqa", {"budget": "full"}, 0.5, [0.5])        # the exact hinge's own WikiQA row
        _record(store, "trec13", {"budget": "quick"}, 0.1, [0.0])       # another key: not read
    found = sweep.from_store(tmp_path, settings)
    assert set(found) == {"trec13", "semeval2016", "wikiqa"} and set(found["semeval2016"]) == {exact[0][0]}
    assert set(found["wikiqa"]) == {exact[0][0]} and found["wikiqa"][exact[0][0]]["source"] == "store"
    assert exact[2][0] not in found["trec13"]   # a learning rate of its own: not a run of neural-qa
    run = found["trec13"][exact[1][0]]
    assert run["dev"] == 0.82 and run["curve"] == pytest.approx([0.80, 0.82]) and run["epoch"] == 2
    assert run["per_query"] == {"q0": 1.0, "q1": 1.0, "q2": 0.25} and run["epoch_seconds"] == [300.0, 310.0]
    assert run["dev_questions"] == 60 and run["test_questions"] == 3
    with pytest.raises(SystemExit, match="no result store .results.sqlite. and no kept runs"):
        sweep.from_store(tmp_path / "nowhere", settings)


def test_the_runs_kept_in_the_repository_are_a_store_too(tmp_path):
    """--store results/neural-qa: the kept runs' folder is read through a store made aside (the folder untouched)."""
    from structrank_lab.experiments.kept_runs import export_run
    from structrank_lab.experiments.store import ResultStore

    kept = tmp_path / "kept"
    with ResultStore(tmp_path / "results.sqlite") as store:
        _record(store, "wikiqa", {"budget": "full"}, 0.81, [0.5, 1.0])
        (key,) = store.completed_keys()
        export_run(store, kept, key)
    before = sorted(p.name for p in kept.iterdir())
    found = sweep.from_store(kept, dict(sweep.candidates([0.0])))
    assert found["wikiqa"]["phi_po, smoothing 0"]["dev"] == 0.81
    assert found["wikiqa"]["phi_po, smoothing 0"]["per_query"] == {"q0": 0.5, "q1": 1.0}
    assert sorted(p.name for p in kept.iterdir()) == before


def test_the_page_says_when_the_exact_hinge_s_row_is_neural_qa_s_own_run():
    results = _results((0.78, 0.77, 0.76, 0.70), (0.7, 0.9, 0.7, 0.6))
    assert "read from its store" not in sweep.page(ROWS, results, "cmd", 600.0, SETTINGS)
    results[ROWS[0]] = {**results[ROWS[0]], "source": "store"}
    text = sweep.page(ROWS, results, "cmd", 600.0, SETTINGS)
    assert f"The first row ({ROWS[0]}) is neural-qa's own seed-0 run of its `SVM-map hinge` row, read from its " \
           "store" in text


@pytest.mark.parametrize("elsewhere, kept, said", [
    ((-0.013, -0.01), ROWS[0], "mean -0.0010, under the point, so the exact hinge is kept."),
    ((0.015, 0.02), ROWS[1], "mean +0.0183, so it stays chosen."),
])
def test_the_wikiqa_choice_stays_only_if_the_other_dev_sets_keep_its_point(elsewhere, kept, said):
    """The WikiQA rule picks the second row (+0.02 on dev); the other data sets' dev gains decide whether it stays."""
    results = _results((0.78, 0.80, 0.77, 0.70), (0.7, 0.9, 0.7, 0.6))
    others = {dataset: {ROWS[0]: {**results[ROWS[0]], "dev": 0.70},
                        ROWS[1]: {**results[ROWS[1]], "dev": 0.70 + gain}}
              for dataset, gain in zip(("trec13", "semeval2016"), elsewhere)}
    text = sweep.page(ROWS, results, "cmd", 600.0, SETTINGS, others)
    assert "the rule picks it over the exact hinge on WikiQA." in text
    assert f"| {kept} (kept) |" in text and text.count("(kept)") == 1
    assert "## The same fine-tuning on the other data sets" in text and "TREC QA:" in text
    assert said in text and f"The kept candidate ({kept}) has WikiQA test MAP" in text


def test_only_missing_runs_are_measured_on_the_data_set_asked(monkeypatch, tmp_path):
    calls = []
    monkeypatch.setattr(sweep, "measure", lambda setting, threads, dataset: calls.append((setting, dataset)) or
                        {"dev": 0.5, "test": 0.6, "seconds": 1.0})
    results = {"kept": {"dev": 0.1}}
    state = tmp_path / "state.json"
    sweep.measure_missing([("kept", {"a": 1}), ("new", {"b": 2})], results, state, 1, "trec13")
    assert calls == [({"b": 2}, "trec13")] and set(results) == {"kept", "new"}
    assert json.loads(state.read_text())["new"]["test"] == 0.6
    sweep.measure_missing([("other", {"c": 3})], results, state, 1)
    assert calls[-1] == ({"c": 3}, sweep.DATASET)
