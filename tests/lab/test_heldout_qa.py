"""The held-out answer-selection page (structrank_lab.experiments.heldout_qa): its verdict rules, a section built
from given per-question values (the variants paired with the defaults), the kept record that regenerates the page
without the files, steps kept in the work folder, and the feature path run end to end through the CLI on a small
TSV made here (the cross-encoder's fine-tuning is the command's, on the user's data)."""

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


def _values(base, d):
    return {m: {q: min(1.0, v + d + 0.002 * (int(q) % 3)) for q, v in base.items()} for m in hq.METRICS}


def _results(shift, n=40, variants=None):
    """LSP-AP, the checked cross-encoder ``shift`` above it and each variant ``variants[v]`` above that."""
    rng = np.random.default_rng(0)
    base = {str(q): 0.5 + 0.4 * rng.random() for q in range(n)}
    out = {"lsp-ap (features)": {"values": _values(base, 0.0), "train": {"seconds": 3.0, "cores": 1},
                                 "predict": {"seconds": 1.0}},
           "xenc-crf-kl": {"values": _values(base, shift), "train": {"seconds": 1800.0, "cores": 2},
                           "predict": {"seconds": 60.0, "cores": 2}}}
    for variant, d in (variants or {}).items():
        noisy = {q: v + 0.01 * rng.standard_normal() for q, v in base.items()}
        out[hq.variant_name(variant)] = {"values": _values(noisy, shift + d), "train": {"seconds": 5400.0, "cores": 1},
                                         "predict": {"seconds": 60.0, "cores": 1}}
    for name, r in out.items():
        r["train"]["command"], r["predict"]["command"] = f"structrank train {name}", "structrank predict"
    return out


def _files(train, test):
    return {"train": {"name": train.name, "size": hq._size(train)}, "test": {"name": test.name, "size": hq._size(test)}}


def test_a_section_pairs_each_cross_encoder_with_lsp_ap(tmp_path):
    rng = np.random.default_rng(1)
    files = _files(_tsv(tmp_path / "tr.tsv", 6, rng), _tsv(tmp_path / "te.tsv", 5, rng))
    far = hq.dataset_section("D", files, _results(0.06))
    assert "6 questions / 30 pairs" in far and "5 questions / 25 pairs" in far
    row = next(line for line in far.splitlines() if line.startswith("| xenc-crf-kl | +"))
    assert row.endswith("**holds** |") and "| 40 |" in row
    assert "| 1800 (2 cores) | 60 (2 cores) |" in far and "| 3 (1 core) | 1 |" in far  # no cores recorded: none said
    assert "tried on WikiQA" not in far  # no variants: no table of them
    near = hq.dataset_section("D", files, _results(0.0))
    row = next(line for line in near.splitlines() if line.startswith("| xenc-crf-kl | +"))
    assert row.endswith("**does not hold** |")


def test_a_variant_is_judged_against_the_defaults_not_lsp_ap(tmp_path):
    rng = np.random.default_rng(1)
    files = _files(_tsv(tmp_path / "tr.tsv", 6, rng), _tsv(tmp_path / "te.tsv", 5, rng))
    section = hq.dataset_section("D", files, _results(0.06, variants={"head-mean": 0.03, "soup-3": -0.03,
                                                                      "soup-3-mean": 0.0}))
    table = section.split("tried on WikiQA")[1]
    verdicts = {line.split(" |")[0][2:]: line.rsplit("**", 2)[1] for line in table.splitlines()
                if line.startswith("| xenc-crf-kl --set")}
    assert verdicts == {"xenc-crf-kl --set head=mean": "better", "xenc-crf-kl --set soup=3": "worse",
                        "xenc-crf-kl --set soup=3 --set head=mean": "inconclusive"}
    row = next(line for line in table.splitlines() if line.startswith("| xenc-crf-kl --set head=mean |"))
    assert 2.5 < float(row.split("|")[2]) < 3.5  # the difference from xenc-crf-kl (+3 and noise), not LSP-AP's +9
    assert hq.better(0.001, 0.02) == "better" and hq.better(-0.02, -0.001) == "worse"
    assert hq.better(-0.001, 0.02) == "inconclusive"


def test_the_record_regenerates_the_section_without_the_files(tmp_path):
    rng = np.random.default_rng(4)
    train, test = _tsv(tmp_path / "tr.tsv", 6, rng), _tsv(tmp_path / "te.tsv", 5, rng)
    results = _results(0.04, variants={"head-mean": 0.01})
    for name, r in results.items():
        r["train"]["command"] = f"structrank train {name} --train {train} --out {tmp_path / 'work' / name}"
        r["predict"]["command"] = f"structrank predict --data {test}"
    text = hq.dumps(hq.to_record(results, train, test, work=tmp_path / "work"))
    record = json.loads(text)  # as read back from the file
    assert record["test"] == {"name": "te.tsv", "size": "5 questions / 25 pairs"}
    assert "what is" not in text and str(tmp_path) not in text  # numbers only: no text of the data, no question ids
    steps = record["models"]["xenc-crf-kl"]
    assert steps["train"]["command"] == "structrank train xenc-crf-kl --train $HELDOUT/tr.tsv --out $WORK/xenc-crf-kl"
    assert steps["predict"]["command"] == "structrank predict --data $HELDOUT/te.tsv"
    assert len(text.splitlines()) < 100  # each list of per-question values on one line
    assert hq.dataset_section("D", record, hq.from_record(record)) == hq.dataset_section("D", _files(train, test),
                                                                                           results)
    # a later run of fewer models keeps the recorded others, in the same order of questions
    fewer = {m: r for m, r in results.items() if m != hq.variant_name("head-mean")}
    merged = hq.to_record(fewer, train, test, record)
    assert merged["models"][hq.variant_name("head-mean")] == record["models"][hq.variant_name("head-mean")]
    lopsided = dict(results, **{"xenc-crf-kl": {**results["xenc-crf-kl"], "values": {
        m: dict(list(v.items())[1:]) for m, v in results["xenc-crf-kl"]["values"].items()}}})
    with pytest.raises(hq.StructRankError, match="xenc-crf-kl was measured on other questions"):
        hq.to_record(lopsided, train, test)


def test_a_recorded_data_set_is_not_run_again(tmp_path, monkeypatch):
    rng = np.random.default_rng(5)
    train, test = _tsv(tmp_path / "tr.tsv", 6, rng), _tsv(tmp_path / "te.tsv", 5, rng)
    results = _results(0.04, variants={variant: 0.0 for variant in hq.VARIANTS})
    record = tmp_path / "record.json"
    record.write_text(json.dumps({"D": hq.to_record(results, train, test)}))
    train.unlink(), test.unlink()  # the page needs neither file now
    monkeypatch.setattr(hq, "run_dataset", lambda *a, **k: pytest.fail("a recorded data set was run again"))
    out = tmp_path / "page.md"
    assert hq.main(["--out", str(out), "--heldout", f"D={train},{test}", "--record", str(record)]) == 0
    text = out.read_text()
    assert "| xenc-crf-kl --set soup=3 --set head=mean | " in text and "- train: `tr.tsv`, 6 questions" in text
    assert hq.main(["--out", str(out), "--heldout", f"D={train},{test}", "--record", str(record),
                    "--variants", ""]) == 0
    assert "xenc-crf-kl --set" not in out.read_text().split("## D")[1]  # the page shows what was asked, from the record

    # a model the record lacks is the only one run (beside LSP-AP, which orders the questions); the rest are kept
    lacking = json.loads(record.read_text())
    del lacking["D"]["models"][hq.variant_name("soup-3")]
    record.write_text(json.dumps(lacking))
    calls = []
    fresh = {m: r for m, r in results.items() if m in ("lsp-ap (features)", hq.variant_name("soup-3"))}
    monkeypatch.setattr(hq, "run_dataset", lambda *a: calls.append(a[3:5]) or fresh)
    monkeypatch.setattr(hq, "_size", lambda path: "-")  # the files are gone; a run would have them
    assert hq.main(["--out", str(out), "--heldout", f"D={train},{test}", "--record", str(record)]) == 0
    assert calls == [([], ["soup-3"])]
    assert set(json.loads(record.read_text())["D"]["models"]) == set(results)


def test_an_unknown_variant_is_refused_in_one_line(capsys):
    with pytest.raises(SystemExit) as stop:
        hq.main(["--out", "x.md", "--heldout", "D=a,b", "--variants", "head-max"])
    assert stop.value.code == 2 and "'head-max' is not one of head-mean" in capsys.readouterr().err


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
    assert hq.main(["--out", str(out), "--heldout", f"tiny={train},{test}", "--models", "", "--variants", "",
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


def test_the_committed_page_is_what_the_kept_record_makes(tmp_path, monkeypatch):
    """docs/HELDOUT_QA.md regenerates from results/heldout-qa.json by the command on its first line, without the
    held-out files (not on this machine, not in the repository) and without a run."""
    import shlex
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    committed = (root / "docs" / "HELDOUT_QA.md").read_text()
    command = shlex.split(committed.splitlines()[0].split("`")[1])
    assert command[:3] == ["python", "-m", "structrank_lab.experiments.heldout_qa"]
    argv = command[3:]
    argv[argv.index("--out") + 1] = str(tmp_path / "page.md")
    argv[argv.index("--record") + 1] = str(root / "results" / "heldout-qa.json")
    monkeypatch.setattr(hq, "run_dataset", lambda *a, **k: pytest.fail("the kept record was not enough"))
    assert hq.main(argv) == 0
    made = (tmp_path / "page.md").read_text().splitlines()
    assert made[1:] == committed.splitlines()[1:]  # all but the header line, which names the command as run
    assert "| xenc-crf-kl --set soup=3 --set head=mean |" in committed


def test_a_model_at_several_seeds_is_each_questions_mean_over_them(tmp_path, monkeypatch):
    """Seed 0 is the default run (no --set, kept under the model's name); seed S adds ``--set random_state=S`` and is
    kept under NAME.seed-S; the row pairs each question's mean over the seeds."""
    steps = []
    monkeypatch.setattr(hq, "timed_step", lambda work, name, output, *args: steps.append((name, args)) or
                        {"seconds": 10.0 * len(steps), "cores": 1, "command": "structrank " + " ".join(args)})
    by_seed = {"x.v": {"a": 0.5, "b": 1.0}, "x.v.seed-3": {"a": 1.0, "b": 0.0}}
    monkeypatch.setattr(hq, "per_question", lambda test, scores, metrics: {
        m: by_seed[scores.name.removesuffix(".scores")] for m in metrics})
    row = hq._text_model("xenc-crf-kl", tmp_path / "tr.tsv", tmp_path / "te.tsv", tmp_path, ("--set", "head=mean"),
                         "x.v", (0, 3))
    assert [name for name, _ in steps] == ["train-x.v", "predict-x.v", "train-x.v.seed-3", "predict-x.v.seed-3"]
    assert steps[0][1][-3:] == ("--set", "head=mean", "--quiet")
    assert steps[2][1][-5:] == ("--set", "head=mean", "--set", "random_state=3", "--quiet")
    assert row["values"]["map"] == {"a": 0.75, "b": 0.5} and row["seeds"] == {"0": 0.75, "3": 0.5}
    assert [step["seconds"] for step in row["train"]] == [10.0, 30.0]
    section = hq.dataset_section("D", {"train": {"name": "tr", "size": "-"}, "test": {"name": "te", "size": "-"}},
                                 {"lsp-ap (features)": {"values": {m: {"a": 0.5, "b": 0.5} for m in hq.METRICS},
                                                        "train": {"seconds": 1.0}, "predict": {"seconds": 1.0}},
                                  "xenc-crf-kl": row})
    assert "| xenc-crf-kl | 0.6250 | 0.6250 | 0.6250 | 0, 3 (0.7500 / 0.5000) | 10 / 30 (1 core) | 20 / 40 (1 core) |" \
        in section
    with pytest.raises(hq.StructRankError, match="other questions"):
        hq.over_seeds([{"values": {m: {"a": 1.0} for m in hq.METRICS}},
                       {"values": {m: {"b": 1.0} for m in hq.METRICS}}], (0, 1))


@pytest.mark.parametrize("seeds", ["0,x", "0,0", "-1", ","])
def test_bad_seeds_are_refused_in_one_line(seeds, capsys):
    with pytest.raises(SystemExit) as stop:
        hq.main(["--out", "x.md", "--heldout", "D=a,b", "--seeds", seeds])
    assert stop.value.code == 2 and f"--seeds {seeds!r}: give" in capsys.readouterr().err
