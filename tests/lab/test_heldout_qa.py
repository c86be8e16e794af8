"""The held-out answer-selection page (structrank_lab.experiments.heldout_qa): its verdict rule, a section built
from given per-question values, steps kept in the work folder, and the feature path run end to end through the CLI
on a small TSV made here (the cross-encoder's fine-tuning is the command's, on the user's data)."""

import json

import numpy as np
import pytest

from structrank_lab.experiments import cli_pages
from structrank_lab.experiments import heldout_qa as hq


def test_well_above_needs_the_whole_interval_past_the_bar():
    bar = hq.WELL_ABOVE
    assert hq.verdict(bar + 0.001, bar + 0.05) == "holds"
    assert hq.verdict(bar - 0.001, bar + 0.05) == "inconclusive"
    assert hq.verdict(-0.05, bar - 0.001) == "does not hold"


def _tsv(path, n_questions, rng):
    """Questions whose correct candidate repeats the question's words, the others not."""
    lines = []
    for q in range(n_questions):
        words = [f"w{q}x{i}" for i in range(4)]
        lines.append(f"what is {' '.join(words)} ?\t{' '.join(words)} is a thing .\t1")
        for c in range(4):
            lines.append(f"what is {' '.join(words)} ?\tsomething else entirely {rng.integers(1000)} .\t0")
    path.write_text("\n".join(lines) + "\n")
    return path


def _results(shift, n=40):
    rng = np.random.default_rng(0)
    base = {str(q): 0.5 + 0.4 * rng.random() for q in range(n)}
    def values(d):
        return {m: {q: min(1.0, v + d + 0.002 * (int(q) % 3)) for q, v in base.items()} for m in hq.METRICS}
    return {"lsp-ap (features)": {"values": values(0.0), "train": {"seconds": 3.0, "cores": 1},
                                  "predict": {"seconds": 1.0}},
            "xenc-crf-kl": {"values": values(shift), "train": {"seconds": 1800.0, "cores": 2},
                            "predict": {"seconds": 60.0, "cores": 2}}}


def test_a_section_pairs_each_cross_encoder_with_lsp_ap(tmp_path):
    rng = np.random.default_rng(1)
    train, test = _tsv(tmp_path / "tr.tsv", 6, rng), _tsv(tmp_path / "te.tsv", 5, rng)
    far = hq.dataset_section("D", train, test, _results(0.06))
    assert "6 questions / 30 pairs" in far and "5 questions / 25 pairs" in far
    row = next(line for line in far.splitlines() if line.startswith("| xenc-crf-kl | +"))
    assert row.endswith("**holds** |") and "| 40 |" in row
    assert "| 1800 (2 cores) | 60 (2 cores) |" in far and "| 3 (1 core) | 1 |" in far  # no cores recorded: none said
    near = hq.dataset_section("D", train, test, _results(0.0))
    row = next(line for line in near.splitlines() if line.startswith("| xenc-crf-kl | +"))
    assert row.endswith("**does not hold** |")


def test_a_step_kept_in_the_work_folder_is_not_run_again(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(cli_pages, "structrank", lambda *args, processes=1: calls.append(args))
    output = tmp_path / "model"
    first = cli_pages.timed_step(tmp_path, "train-x", output, "train", "x")
    assert len(calls) == 1 and first["seconds"] >= 0 and first["cores"] >= 1
    assert json.loads((tmp_path / "train-x.seconds.json").read_text())["command"] == "structrank train x"
    output.write_text("done")  # the command wrote its output: the step is kept
    assert cli_pages.timed_step(tmp_path, "train-x", output, "train", "x") == first and len(calls) == 1


def test_a_bad_heldout_spec_is_refused_in_one_line(capsys):
    with pytest.raises(SystemExit) as stop:
        hq.main(["--out", "x.md", "--heldout", "only-a-name"])
    assert stop.value.code == 2 and "give NAME=TRAIN,TEST" in capsys.readouterr().err


@pytest.mark.slow
def test_the_feature_path_runs_through_the_cli_and_writes_the_page(tmp_path):
    rng = np.random.default_rng(2)
    train, test = _tsv(tmp_path / "tr.tsv", 30, rng), _tsv(tmp_path / "te.tsv", 12, rng)
    out = tmp_path / "page.md"
    assert hq.main(["--out", str(out), "--heldout", f"tiny={train},{test}", "--models", "",
                    "--work", str(tmp_path / "work")]) == 0
    text = out.read_text()
    row = next(line for line in text.splitlines() if line.startswith("| lsp-ap (features) |"))
    assert float(row.split("|")[2]) > 0.9  # the correct candidate repeats the question: the features find it
    assert (tmp_path / "work" / "tiny" / "train-lsp-ap.seconds.json").exists()
    # LSP-AP's values are keyed as the TSV's own evaluation keys them, so a cross-encoder pairs with it
    lsp = hq._features_model(train, test, tmp_path / "work" / "tiny")["values"]["map"]
    assert list(lsp) == list(hq.per_question(test, tmp_path / "work" / "tiny" / "lsp-ap.scores", hq.METRICS)["map"])


def test_featurized_questions_are_renamed_as_the_tsv_names_them(tmp_path):
    """The names come from featurize's "question = ID" comments, not from the order of the integer qids."""
    test = _tsv(tmp_path / "te.tsv", 3, np.random.default_rng(3))
    order = list(dict.fromkeys(hq.read_qa_tsv(test).qid.tolist()))
    featurized = tmp_path / "te.svm"
    numbered = {1: order[2], 2: order[0], 3: order[1]}  # not the TSV's order
    featurized.write_text("".join(f"0 qid:{q} 1:0.5 #docid = d{q} question = {'_'.join(name.split())}\n"
                                  for q, name in numbered.items()))
    renamed = hq.by_tsv_question({"map": {"1": 0.5, "2": 1.0, "3": 0.25}}, featurized, test)
    assert renamed == {"map": {order[2]: 0.5, order[0]: 1.0, order[1]: 0.25}}
    featurized.write_text("0 qid:1 1:0.5 #docid = d1 question = elsewhere\n")
    with pytest.raises(hq.StructRankError, match="'elsewhere' is not a question of"):
        hq.by_tsv_question({"map": {"1": 0.5}}, featurized, test)
