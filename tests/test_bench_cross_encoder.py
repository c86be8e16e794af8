"""The cross-encoder section of `structrank bench` and its peer, sentence-transformers' CrossEncoder, on a tiny
random BERT (tests/tiny_encoder.py): the peer trains on the pairs it is given with the budget it is given, and
the quick section times both tools and prints figures it measured (no timing is asserted)."""

import math
import re

import numpy as np
import pytest

from tests.extras import need
from tests.test_cross_encoder import make_pairs
from tests.tiny_encoder import write_tiny_encoder



def needs_both(test):
    """The mark of a test that trains: the text extra (structrank's cross-encoder) and sentence-transformers (the
    embeddings extra)."""
    return pytest.mark.extra("text")(pytest.mark.extra("embeddings")(test))


@pytest.fixture(scope="module")
def encoder(tmp_path_factory):
    need("text")
    need("embeddings")
    return str(write_tiny_encoder(tmp_path_factory.mktemp("tiny-bert")))


@pytest.fixture(scope="module")
def quick(encoder, data_root, tmp_path_factory):
    from structrank.bench import cross_encoder

    return cross_encoder.bench_cross_encoder(**cross_encoder.QUICK, encoder=encoder, n_threads=1, max_length=32,
                                             data_dir=data_root, folder=tmp_path_factory.mktemp("xbench"))


def _seen(monkeypatch):
    """The (query, candidate, label) of every pair sentence-transformers' training batches hold, batch by batch."""
    from sentence_transformers import CrossEncoder

    batches = []
    collate = CrossEncoder.smart_batching_collate

    def counting(self, batch):
        batches.append([(*example.texts, example.label) for example in batch])
        return collate(self, batch)

    monkeypatch.setattr(CrossEncoder, "smart_batching_collate", counting)
    return batches


@needs_both
def test_the_peer_trains_on_every_pair_once_an_epoch_in_batches_of_the_size(encoder, monkeypatch):
    from structrank.bench.st_cross_encoder import fit_st_cross_encoder

    batches = _seen(monkeypatch)
    pairs, y, qid = make_pairs(9, seed=3)
    model, seconds = fit_st_cross_encoder(pairs, y, qid, encoder=encoder, max_length=32, batch_size=8, epochs=2,
                                          n_threads=1)
    assert len(batches) == 2 * math.ceil(len(pairs) / 8)
    assert [len(b) for b in batches[:math.ceil(len(pairs) / 8)]] == [8] * (len(pairs) // 8) + [len(pairs) % 8] * (
        len(pairs) % 8 > 0)
    expected = sorted((q, c, float(label)) for (q, c), label in zip(pairs, y))
    half = len(batches) // 2
    for epoch in (batches[:half], batches[half:]):  # each pair once an epoch, with its label
        assert sorted(p for batch in epoch for p in batch) == expected
    assert batches[0] != batches[half]  # shuffled anew each epoch
    assert seconds > 0 and model.config.num_labels == 1


@needs_both
def test_the_peer_gets_the_budget_and_loss_it_is_given(encoder, monkeypatch):
    from sentence_transformers import CrossEncoder

    from structrank.bench.st_cross_encoder import fit_st_cross_encoder

    calls = []
    old_fit = CrossEncoder.old_fit

    def recording(self, loader, **kwargs):
        calls.append((len(loader), loader.batch_size, kwargs))
        return old_fit(self, loader, **kwargs)

    monkeypatch.setattr(CrossEncoder, "old_fit", recording)
    pairs, y, qid = make_pairs(12)
    fit_st_cross_encoder(pairs, y, qid, encoder=encoder, max_length=32, batch_size=10, epochs=3, learning_rate=1e-4,
                         warmup=0.2, n_threads=1)
    (n_batches, batch_size, kwargs), = calls
    assert (n_batches, batch_size) == (math.ceil(len(pairs) / 10), 10)
    assert kwargs["epochs"] == 3 and kwargs["warmup_steps"] == int(0.2 * n_batches * 3)
    assert kwargs["optimizer_params"] == {"lr": 1e-4}
    assert (kwargs["weight_decay"], kwargs["max_grad_norm"]) == (0.01, 1.0)
    assert "loss_fct" not in kwargs  # its default for one output: BCEWithLogitsLoss


@needs_both
def test_the_peer_scores_pairs_in_their_order_and_takes_qa_data(encoder):
    from structrank.bench.st_cross_encoder import fit_st_cross_encoder, st_scores
    from structrank.qa.readers import QAData

    pairs, y, qid = make_pairs(6, seed=1)
    model, _ = fit_st_cross_encoder(pairs, y, qid, encoder=encoder, max_length=32, batch_size=8, n_threads=1)
    scores = st_scores(model, pairs, batch_size=4)
    assert scores.shape == (len(pairs),) and scores.dtype == np.float64 and np.isfinite(scores).all()
    np.testing.assert_allclose(st_scores(model, pairs[::-1], batch_size=3), scores[::-1], rtol=1e-5, atol=1e-6)
    questions = [pairs[i][0] for i in np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])]
    data = QAData(questions, [c for _, c in pairs], y, qid.astype(str), [f"d{i}" for i in range(len(pairs))])
    np.testing.assert_allclose(st_scores(model, data, batch_size=4), scores, rtol=1e-5, atol=1e-6)
    trained, _ = fit_st_cross_encoder(data, encoder=encoder, max_length=32, batch_size=8, n_threads=1)
    np.testing.assert_allclose(st_scores(trained, pairs), scores, rtol=1e-5, atol=1e-6)  # same pairs, same seed


@needs_both
def test_the_quick_section_times_both_tools_on_the_same_pairs(quick):
    from structrank.bench.cross_encoder import OURS, THEIRS

    assert set(quick) == {"settings", "train", "test", "rounds", "epoch", "fit", "predict", "command", "steps", "map"}
    assert quick["rounds"] == 1 and quick["train"]["questions"] == 4 and quick["test"]["questions"] == 4
    assert quick["train"]["of"] == 857  # WikiQA train's questions with both labels
    assert quick["settings"]["threads"] == 1 and quick["settings"]["max_length"] == 32
    for kind in ("epoch", "fit", "predict", "command"):
        assert set(quick[kind]) == {OURS, THEIRS}
        assert all(len(v) == 1 and math.isfinite(v[0]) and v[0] > 0 for v in quick[kind].values())
    for name in (OURS, THEIRS):
        assert quick["epoch"][name][0] <= quick["fit"][name][0]  # the epoch is inside the fit call
        assert 0 <= quick["map"][name] <= 1
    # structrank: whole questions of at most batch_size pairs (a longer one alone): at least as many steps as
    # full batches would take, at most one a question
    pairs, size = quick["train"]["pairs"], quick["settings"]["batch_size"]
    assert math.ceil(pairs / size) <= quick["steps"][OURS] <= quick["train"]["questions"]
    # sentence-transformers: exactly batch_size pairs a step (the last fewer)
    assert quick["steps"][THEIRS] == math.ceil(quick["train"]["pairs"] / quick["settings"]["batch_size"])


@needs_both
def test_the_quick_section_prints_finite_ratios_and_its_verdicts(quick):
    from structrank.bench import cross_encoder

    ratios = cross_encoder.ratios(quick)
    assert set(ratios) == {"epoch", "fit", "command", "throughput"}
    assert all(math.isfinite(r) and r > 0 for r in ratios.values())
    lines = cross_encoder.format_cross_encoder(quick)
    text = "\n".join(lines)
    assert lines[0].startswith("cross-encoder: WikiQA train's first 4 of 857 questions (")
    assert f"{ratios['epoch']:.2f}x sentence-transformers (bar: at most 1.0x, " in text
    assert f"{ratios['throughput']:.2f}x sentence-transformers (bar: at least 1.0x, " in text
    assert not re.search(r"\b(nan|inf)\b", text)
    assert text.count("MISSED") + text.count("met)") == 2
    assert lines[-2].startswith("optimiser steps per epoch: structrank ")
    assert lines[-1].startswith("test MAP (trec) after the epoch")
    assert cross_encoder.markdown_section(quick).startswith(
        "## A cross-encoder against sentence-transformers' CrossEncoder\n\n```\ncross-encoder: WikiQA")


def test_the_verdicts_follow_the_medians():
    from structrank.bench.cross_encoder import OURS, THEIRS, format_cross_encoder, ratios

    figures = {"settings": {"encoder": "/models/x", "threads": 2, "max_length": 128, "batch_size": 32, "epochs": 1,
                            "learning_rate": 2e-5, "warmup": 0.1, "seed": 0, "predict_batch_size": 32},
               "train": {"questions": 200, "pairs": 1962, "of": 857}, "test": {"questions": 237, "pairs": 2341},
               "rounds": 3, "epoch": {OURS: [9.0, 10.0, 30.0], THEIRS: [12.0, 8.0, 11.0]},
               "fit": {OURS: [12.0, 12.0, 12.0], THEIRS: [10.0, 10.0, 10.0]},
               "predict": {OURS: [2.0, 3.0, 2.5], THEIRS: [2.0, 2.0, 2.0]},
               "command": {OURS: [20.0, 21.0, 22.0], THEIRS: [24.0, 23.0, 22.0]},
               "steps": {OURS: 64, THEIRS: 62}, "map": {OURS: 0.61, THEIRS: 0.6}}
    r = ratios(figures)
    assert r["epoch"] == pytest.approx(10.0 / 11.0) and r["fit"] == pytest.approx(1.2)
    assert r["command"] == pytest.approx(21.0 / 23.0) and r["throughput"] == pytest.approx(2.0 / 2.5)
    text = "\n".join(format_cross_encoder(figures))
    assert "0.91x sentence-transformers (bar: at most 1.0x, met)" in text
    assert "0.80x sentence-transformers (bar: at least 1.0x, MISSED)" in text
    assert "1,962 pairs" in text and "2 threads" in text and "1 epoch," in text
    assert "structrank 64 (whole questions" in text and "structrank 0.6100, sentence-transformers 0.6000" in text


def test_without_the_data_or_the_peer_the_section_says_it_skipped(tmp_path):
    from structrank.bench.cross_encoder import bench_cross_encoder, format_cross_encoder

    figures = bench_cross_encoder(data_dir=tmp_path)  # no wikiqa/ there (or no torch, no sentence-transformers)
    assert set(figures) == {"skipped"} and format_cross_encoder(figures)[0].startswith("cross-encoder: skipped (")
    assert format_cross_encoder({"skipped": "WikiQA not found"}) == ["cross-encoder: skipped (WikiQA not found)"]
