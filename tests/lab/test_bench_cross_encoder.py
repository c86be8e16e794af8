"""The cross-encoder section of `structrank bench` on a tiny random BERT (tests/tiny_encoder.py): the quick section
runs every comparison (the old loop's played by this checkout, so that the plumbing of a second package is
exercised without one) and prints figures it measured; the verdicts follow the medians. No timing is asserted."""

import math
import os
import re
from pathlib import Path

import pytest

from tests.extras import need
from tests.tiny_encoder import write_tiny_encoder

#: this checkout, standing in for the old loop's (its src folder holds structrank)
CHECKOUT = Path(__file__).resolve().parents[2]


def needs_both(test):
    """The mark of a test that trains: the text extra (CrossEncoderRanker) and sentence-transformers (the embeddings
    extra)."""
    return pytest.mark.extra("text")(pytest.mark.extra("embeddings")(test))


@pytest.fixture(scope="module")
def encoder(tmp_path_factory):
    need("text")
    need("embeddings")
    return str(write_tiny_encoder(tmp_path_factory.mktemp("tiny-bert")))


@pytest.fixture(scope="module")
def quick(encoder, data_root, tmp_path_factory):
    from structrank_lab.bench import cross_encoder

    return cross_encoder.bench_cross_encoder(**cross_encoder.QUICK, encoder=encoder, n_threads=1, max_length=32,
                                             data_dir=data_root, folder=tmp_path_factory.mktemp("xbench"),
                                             old_loop=str(CHECKOUT))


@needs_both
@pytest.mark.data
def test_the_quick_section_times_every_contender_on_the_same_data(quick):
    from structrank_lab.bench.cross_encoder import NEW, OLD, OURS, THEIRS

    assert set(quick) == {"settings", "train", "test", "rounds", "loops", "losses", "loss_steps", "loss_map", "predict",
                          "predict_map", "score_difference", "command", "command_map"}
    assert quick["rounds"] == 1 and quick["train"]["questions"] == 4 and quick["test"]["questions"] == 4
    assert quick["train"]["of"] == 857  # WikiQA train's questions with both labels
    s = quick["settings"]
    assert (s["threads"], s["max_length"], s["batch_size"], s["old_batch_size"]) == (1, 32, 4, 32)
    loops = quick["loops"]
    assert set(loops) == {NEW, OLD, "old_source", "old_commit"} and loops["old_source"] == str(CHECKOUT)
    for side in (NEW, OLD):
        (run,) = loops[side]
        assert set(run) == {"epoch_seconds", "fit_seconds", "steps", "test_map"}
        assert 0 < run["epoch_seconds"] <= run["fit_seconds"]  # the epoch is inside the fit call
        assert run["steps"] >= 1 and 0 <= run["test_map"] <= 1  # the last round scores the test questions
    assert loops[NEW][0]["steps"] == 1  # 4 questions, 4 a step
    assert set(quick["losses"]) == set(quick["loss_steps"]) == set(quick["loss_map"]) == {"map", "crf-kl", "listnet"}
    for loss, seconds in quick["losses"].items():
        assert len(seconds) == 1 and math.isfinite(seconds[0]) and seconds[0] > 0
        assert quick["loss_steps"][loss] == 1 and 0 <= quick["loss_map"][loss] <= 1
    for kind in ("predict", "command"):
        assert set(quick[kind]) == {OURS, THEIRS}
        assert all(len(v) == 1 and math.isfinite(v[0]) and v[0] > 0 for v in quick[kind].values())
    # both predict calls score the same model: the same scores, the same MAP
    assert quick["score_difference"] < 1e-5
    assert quick["predict_map"][OURS] == quick["predict_map"][THEIRS] == quick["loss_map"]["map"]
    assert all(0 <= v <= 1 for v in quick["command_map"].values()) and set(quick["command_map"]) == {OURS, THEIRS}
    assert all(v is None or v >= 0 for v in s["load"])


@needs_both
@pytest.mark.data
def test_the_quick_section_prints_finite_ratios_and_its_verdicts(quick):
    from structrank_lab.bench import cross_encoder

    ratios = cross_encoder.ratios(quick)
    assert set(ratios) == {"old_loop", "old_loop_fit", "map", "crf-kl", "throughput", "command"}
    assert all(math.isfinite(r) and r > 0 for r in ratios.values())
    lines = cross_encoder.format_cross_encoder(quick)
    text = "\n".join(lines)
    assert lines[0].startswith("cross-encoder: WikiQA train's first 4 of 857 questions (")
    assert lines[1].startswith("threads: 1 torch thread everywhere (--threads; 1 by default")
    assert f"{ratios['old_loop']:.2f}x old (bar: at most 1.0x, " in text
    assert f"{ratios['map']:.2f}x listnet (bar: at most 1.1x, " in text
    assert f"{ratios['crf-kl']:.2f}x listnet (bar: at most 1.1x, " in text
    assert f"{ratios['throughput']:.2f}x (bar: at least 1.0x, " in text
    assert not re.search(r"\b(nan|inf)\b", text)
    # each of the 4 bars: beside its figure and in the summary
    assert len(re.findall(r"\b(met|MISSED)\b", text)) == 8
    assert lines[-1].startswith("verdicts: new/old ")
    assert cross_encoder.markdown_section(quick).startswith("## The cross-encoder's trainer path")


def _figures(**changes):
    from structrank_lab.bench.cross_encoder import NEW, OLD, OURS, THEIRS

    def run(epoch, fit):
        return {"epoch_seconds": epoch, "fit_seconds": fit, "steps": 50, "test_map": 0.6}

    figures = {
        "settings": {"encoder": "/models/x", "threads": 1, "max_length": 128, "epochs": 1, "batch_size": 4,
                     "mini_batch_size": 16, "old_batch_size": 32, "learning_rate": 2e-5, "warmup": 0.1,
                     "weight_decay": 0.01, "seed": 0, "predict_batch_size": 32, "cores": [0], "load": [1.0, 1.5]},
        "train": {"questions": 200, "pairs": 1962, "of": 857}, "test": {"questions": 237, "pairs": 2341}, "rounds": 3,
        "loops": {NEW: [run(9.0, 10.0), run(10.0, 11.0), run(30.0, 31.0)],
                  OLD: [run(12.0, 13.0), run(8.0, 9.0), run(11.0, 12.0)], "old_source": "/tmp/old",
                  "old_commit": "7c82150"},
        "losses": {"map": [10.0, 12.0, 11.0], "crf-kl": [13.0, 12.0, 40.0], "listnet": [10.0, 10.0, 10.0]},
        "loss_steps": {"map": 50, "crf-kl": 50, "listnet": 50},
        "loss_map": {"map": 0.61, "crf-kl": 0.6, "listnet": 0.59},
        "predict": {OURS: [2.0, 3.0, 2.5], THEIRS: [2.0, 2.0, 2.0]}, "predict_map": {OURS: 0.61, THEIRS: 0.61},
        "score_difference": 0.0, "command": {OURS: [20.0, 21.0, 22.0], THEIRS: [24.0, 23.0, 22.0]},
        "command_map": {OURS: 0.61, THEIRS: 0.59}}
    figures.update(changes)
    return figures


def test_the_verdicts_follow_the_medians():
    from structrank_lab.bench.cross_encoder import format_cross_encoder, ratios, verdicts

    figures = _figures()
    r = ratios(figures)
    assert r["old_loop"] == pytest.approx(10.0 / 11.0) and r["old_loop_fit"] == pytest.approx(11.0 / 12.0)
    assert r["map"] == pytest.approx(1.1) and r["crf-kl"] == pytest.approx(1.3)  # medians: a slow round weighs nothing
    assert r["throughput"] == pytest.approx(2.0 / 2.5) and r["command"] == pytest.approx(21.0 / 23.0)
    assert verdicts(figures) == {"old_loop": True, "map": True, "crf-kl": False, "throughput": False}
    text = "\n".join(format_cross_encoder(figures))
    assert "0.91x old (bar: at most 1.0x, met)" in text
    assert "1.10x listnet (bar: at most 1.1x, met)" in text and "1.30x listnet (bar: at most 1.1x, MISSED)" in text
    assert "0.80x (bar: at least 1.0x, MISSED)" in text and "0.91x the script" in text
    assert ("verdicts: new/old 0.91x <= 1.0 met; map/listnet 1.10x <= 1.1 met; crf-kl/listnet 1.30x <= 1.1 MISSED; "
            "predict throughput 0.80x >= 1.0 MISSED") in text
    assert "1,962 pairs" in text and "1 torch thread everywhere" in text and "1 epoch," in text
    assert "load average 1.0 at the start, 1.5 at the end" in text
    assert "commit 7c82150, /tmp/old" in text and "new 50, old 50" in text
    assert "map 0.6100, crf-kl 0.6000, listnet 0.5900" in text
    assert "xenc-map 0.6100, the script's ListNet 0.5900" in text
    assert "size:" not in text  # the section's size
    fewer = _figures(train={"questions": 100, "pairs": 980, "of": 857})
    assert "size: 100 train questions (--questions), fewer than the section's 200" in "\n".join(
        format_cross_encoder(fewer))


def test_without_the_old_loop_that_comparison_says_it_skipped_and_how_to_enable_it(tmp_path):
    from structrank_lab.bench.cross_encoder import bench_loops, format_cross_encoder, old_loop_source, ratios, verdicts

    no_loop = bench_loops({}, 1, 4, 4, None, None, tmp_path)
    assert set(no_loop) == {"skipped"} and "git worktree add /tmp/old 7c82150" in no_loop["skipped"]
    assert old_loop_source(None) == (None, no_loop["skipped"])
    assert old_loop_source(CHECKOUT) == old_loop_source(CHECKOUT / "src") == (str(CHECKOUT / "src"), None)
    missing, why = old_loop_source(tmp_path)
    assert missing is None and why.startswith(f"{tmp_path} holds no src/structrank/learners/cross_encoder.py; ")
    figures = _figures(loops=no_loop)
    assert "old_loop" not in ratios(figures) and "old_loop" not in verdicts(figures)
    lines = format_cross_encoder(figures)
    assert f"  skipped: {no_loop['skipped']}" in lines
    assert lines[-1].startswith("verdicts: new/old not measured (no old loop); map/listnet ")


def test_the_section_takes_the_old_loop_from_the_environment(monkeypatch, tmp_path):
    from structrank_lab.bench import cross_encoder

    seen = []
    monkeypatch.setattr(cross_encoder, "missing_peer", lambda: None)
    monkeypatch.setattr(cross_encoder, "load_qa", lambda name, split, data_dir: _Data())
    monkeypatch.setattr(cross_encoder, "encoder_folder", lambda encoder: "/models/x")
    monkeypatch.setattr(cross_encoder, "bench_loops", lambda *args: seen.append(args[5]) or {"skipped": "-"})
    monkeypatch.setattr(cross_encoder, "bench_losses", lambda *args: {})
    monkeypatch.setattr(cross_encoder, "bench_commands", lambda *args: {})
    monkeypatch.setenv(cross_encoder.OLD_LOOP_ENV, "/somewhere/old")
    cross_encoder.bench_cross_encoder(folder=tmp_path)
    cross_encoder.bench_cross_encoder(folder=tmp_path, old_loop="/given")
    monkeypatch.delenv(cross_encoder.OLD_LOOP_ENV)
    cross_encoder.bench_cross_encoder(folder=tmp_path)
    assert seen == ["/somewhere/old", "/given", None]


class _Data:
    """QA data's sizes, all the section reads before it times anything."""
    n_queries, n_candidates = 10, 100

    def take_queries(self, index):
        return self


def test_without_the_data_or_the_peer_the_section_says_it_skipped(tmp_path):
    from structrank_lab.bench.cross_encoder import bench_cross_encoder, format_cross_encoder

    figures = bench_cross_encoder(data_dir=tmp_path)  # no wikiqa/ there (or no torch, no sentence-transformers)
    assert set(figures) == {"skipped"} and format_cross_encoder(figures)[0].startswith("cross-encoder: skipped (")
    assert format_cross_encoder({"skipped": "WikiQA not found"}) == ["cross-encoder: skipped (WikiQA not found)"]


def test_the_page_names_the_command_that_made_it(monkeypatch):
    from structrank_lab.bench import cross_encoder

    monkeypatch.setattr(cross_encoder, "_cores", lambda: {0})
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    command = cross_encoder._command_line(["--old-loop", "/work/old", "--threads", "1", "--out", "docs/X.md"])
    assert command == ("taskset -c 0 python -m structrank_lab.bench.cross_encoder --old-loop /work/old --threads 1 --out "
                       "docs/X.md")
    page = cross_encoder.page(_figures(), command)
    assert page.startswith(f"# Benchmarks\n\n<!-- Generated by `{command}`; do not edit by hand. -->\n\n"
                           f"Generated by `{command}` on ")
    assert page.endswith(cross_encoder.markdown_section(_figures()))
