"""CrossEncoderRanker: a tiny randomly initialised BERT built from a config in the test (no download, seconds).

The gradient path is checked against ``structrank.torch``, the baselines against their formulas, a model
file's round trip and its refusals, the command line end to end, and the batching of whole queries.
"""

import json
import re
import struct
import subprocess
import sys

import numpy as np
import pytest

from structrank.errors import DataFormatError, DataValidationError
from structrank.learners.text_pairs import length_sorted_batches, query_batches, text_pairs
from tests.extras import need
from tests.tiny_encoder import WORDS, write_tiny_encoder

TEXT = pytest.mark.extra("text")


def make_pairs(n_queries, seed=0, per_query=5):
    """Queries whose relevant candidates say "red" and the others "blue", among random words: learnable by a
    tiny network in a few steps."""
    rng = np.random.default_rng(seed)
    pairs, y, qid = [], [], []
    for q in range(n_queries):
        topic = str(rng.choice(WORDS))
        n_relevant = int(rng.integers(1, per_query))
        for d in range(per_query):
            words = [str(w) for w in rng.choice(WORDS, 4)]
            words.insert(2, "red" if d < n_relevant else "blue")
            pairs.append((f"who {topic} ?", " ".join(words)))
            y.append(int(d < n_relevant))
            qid.append(q)
    return pairs, np.array(y), np.array(qid)


@pytest.fixture(scope="module")
def encoder(tmp_path_factory):
    need("text")
    return str(write_tiny_encoder(tmp_path_factory.mktemp("tiny-bert")))


@pytest.fixture(scope="module")
def fitted(encoder):
    from structrank.learners import CrossEncoderRanker

    pairs, y, qid = make_pairs(30)
    dev = make_pairs(10, seed=1)
    model = CrossEncoderRanker(loss="map", encoder=encoder, epochs=3, learning_rate=2e-3, batch_size=16,
                               progress=False, random_state=0)
    return model.fit(pairs, y, qid, eval_set=dev), dev


# -- batches (no extra) ------------------------------------------------------------------------------------------


def test_query_batches_hold_whole_queries_once_within_the_budget():
    rng = np.random.default_rng(0)
    sizes = rng.integers(1, 12, size=200)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    lengths = rng.integers(5, 200, size=offsets[-1])
    batches = query_batches(lengths, offsets, 32, np.random.default_rng(1))
    seen = np.concatenate(batches)
    assert sorted(seen.tolist()) == list(range(200))
    for batch in batches:
        assert len(batch) == 1 or sizes[batch].sum() <= 32
    # length-sorted windows: a batch's longest pairs are closer together than those of random batches
    longest = np.maximum.reduceat(lengths, offsets[:-1])
    spread = np.mean([np.ptp(longest[b]) for b in batches if len(b) > 1])
    shuffled = np.random.default_rng(2).permutation(200)
    random_spread = np.mean([np.ptp(longest[shuffled[i:i + 5]]) for i in range(0, 200, 5)])
    assert spread < random_spread / 2


def test_a_query_longer_than_the_batch_is_a_batch_alone():
    offsets = np.array([0, 50, 53])
    batches = query_batches(np.ones(53, dtype=int), offsets, 8, np.random.default_rng(0))
    assert sorted(map(list, batches)) == [[0], [1]]


def test_length_sorted_batches_are_a_permutation_longest_first():
    lengths = np.array([3, 9, 1, 7, 7, 2])
    batches = length_sorted_batches(lengths, 4)
    assert [b.tolist() for b in batches] == [[1, 3, 4, 0], [5, 2]]


def test_text_pairs_regroup_queries_and_refuse_bad_rows():
    data = text_pairs([("a", "x"), ("b", "y"), ("a", "z")], y=[1, 0, 0], qid=["q1", "q2", "q1"])
    assert data.candidates == ["x", "z", "y"] and data.offsets.tolist() == [0, 2, 3]
    assert data.in_caller_order(np.array([10.0, 11.0, 12.0])).tolist() == [10.0, 12.0, 11.0]
    with pytest.raises(DataValidationError, match="row 1 of X is not a"):
        text_pairs([("a", "x"), ("b",)], y=[1, 0], qid=[1, 1])
    with pytest.raises(DataValidationError, match="needs relevance labels y and qid"):
        text_pairs([("a", "x")])
    with pytest.raises(DataValidationError, match="2 pairs, 3 labels"):
        text_pairs([("a", "x"), ("a", "y")], y=[1, 0, 0], qid=[1, 1])


def test_only_queries_with_two_labels_are_informative():
    data = text_pairs([("a", "x"), ("a", "y"), ("b", "z"), ("b", "w"), ("c", "v")], y=[1, 0, 0, 0, 1],
                      qid=[1, 1, 2, 2, 3])
    kept = data.informative()
    assert kept.candidates == ["x", "y"] and kept.offsets.tolist() == [0, 2] and kept.y.tolist() == [1, 0]


def test_evaluate_and_compare_keep_the_queries_with_both_labels(tmp_path, capsys):
    from structrank.cli import main

    data, scores = tmp_path / "qa.tsv", tmp_path / "s.txt"
    data.write_text("q1\twho?\tAnn.\t1\nq1\twho?\tRain.\t0\nq2\twhere?\tHere.\t0\nq2\twhere?\tThere.\t0\n"
                    "q3\twhen?\tNow.\t0\nq3\twhen?\tThen.\t1\n")
    scores.write_text("1\n0\n0\n1\n1\n0\n")
    assert main(["evaluate", "--data", str(data), "--scores", str(scores), "--convention", "trec", "--json"]) == 0
    every = json.loads(capsys.readouterr().out)["metrics"]["map"]
    assert main(["evaluate", "--data", str(data), "--scores", str(scores), "--convention", "trec", "--json",
                 "--queries", "with-both"]) == 0
    clean = json.loads(capsys.readouterr().out)["metrics"]["map"]
    assert every == pytest.approx((1 + 0 + 0.5) / 3) and clean == pytest.approx((1 + 0.5) / 2)
    assert main(["compare", "--data", str(data), str(scores), str(scores), "--names", "a,b", "--queries",
                 "with-both", "--format", "json"]) == 0
    assert '"map"' in capsys.readouterr().out


def test_baseline_losses_match_their_formulas():
    torch = pytest.importorskip("torch", reason="the baselines are torch functions (the text extra)")
    from structrank.learners.pair_losses import bce, ranknet

    scores = torch.tensor([2.0, -1.0, 0.5, 0.0, 1.0], dtype=torch.float64)
    labels, offsets = np.array([1, 0, 0, 2, 0]), np.array([0, 3, 5])
    expected_bce = np.mean([np.log1p(np.exp(-2.0)), np.log1p(np.exp(-1.0)), np.log1p(np.exp(0.5)),
                            np.log1p(np.exp(-0.0)), np.log1p(np.exp(1.0))])
    assert bce(scores, labels, offsets).item() == pytest.approx(expected_bce, rel=1e-12)
    # preference pairs: (0,1), (0,2) in the first query, (3,4) in the second
    margins = [2.0 - -1.0, 2.0 - 0.5, 0.0 - 1.0]
    assert ranknet(scores, labels, offsets).item() == pytest.approx(np.mean(np.log1p(np.exp(-np.array(margins)))))
    assert ranknet(scores, np.zeros(5, dtype=int), offsets).item() == 0.0


# -- the estimator -----------------------------------------------------------------------------------------------


@TEXT
def test_the_gradient_reaching_the_network_is_the_structured_losses(encoder):
    """The scores' gradient is structrank.torch's for the MAP hinge, and it reaches the head: the head's bias
    (added to every score) gets the sum of the scores' gradients."""
    import torch

    from structrank.learners import CrossEncoderRanker
    from structrank.learners.encoders import encode_pairs, load_tokenizer, network_from_folder, pad
    from structrank.torch import StructuredRankingLoss

    pairs, y, qid = make_pairs(4)
    data = text_pairs(pairs, y, qid)
    model = CrossEncoderRanker(loss="map", encoder=encoder)
    model._start_fit()
    model._fit_loss(data.y)
    torch.manual_seed(0)
    net = network_from_folder(encoder)
    net.eval()  # no dropout: the two passes below see the same scores
    ids, types = encode_pairs(load_tokenizer(encoder), data.queries, data.candidates, 64)
    scores = net(**pad(ids, types, list(range(data.n_rows)))).logits[:, 0]
    scores.retain_grad()
    model._training_loss()(scores, data.y, data.offsets).backward()
    reference = torch.tensor(scores.detach().numpy(), dtype=torch.float64, requires_grad=True)
    StructuredRankingLoss("map")(reference, data.y, data.offsets).backward()
    np.testing.assert_allclose(scores.grad.numpy(), reference.grad.numpy(), rtol=1e-5, atol=1e-7)
    assert np.any(reference.grad.numpy() != 0)
    assert net.classifier.bias.grad.item() == pytest.approx(float(scores.grad.sum()), abs=1e-6)


@TEXT
def test_a_smoothed_hinge_feeds_the_network_the_perturbed_gradient(encoder):
    """With ``smoothing``, the scores' gradient is ScoreLoss's perturbed smoothing of the hinge, its noise drawn
    afresh at every batch from the learner's seed: equal to ScoreLoss.smoothed's at the same scores and seed, and
    unlike the exact subgradient."""
    import torch

    from structrank.learners import CrossEncoderRanker
    from structrank.learners.score_loss import ScoreLoss

    pairs, y, qid = make_pairs(4)
    data = text_pairs(pairs, y, qid)
    scores = np.linspace(-1.0, 1.0, data.n_rows)
    model = CrossEncoderRanker(loss="map", smoothing=0.5, smoothing_samples=3, encoder=encoder, random_state=7)
    model._start_fit()
    model._fit_loss(data.y)
    criterion = model._training_loss()
    grads = []
    for _ in range(2):  # two batches with the same scores: each call draws its own noise
        tensor = torch.tensor(scores, requires_grad=True)
        criterion(tensor, data.y, data.offsets).backward()
        grads.append(tensor.grad.numpy())
    first_seed = int(np.random.default_rng(7).integers(2**31))  # the module's stream of per-call seeds
    _, expected = ScoreLoss.named("map", random_state=first_seed, smoothing=0.5, smoothing_samples=3).bind(
        data.y, data.offsets)(scores)
    np.testing.assert_allclose(grads[0], expected / 4, rtol=1e-12)
    assert not np.allclose(grads[0], grads[1])
    _, exact = ScoreLoss.named("map").bind(data.y, data.offsets)(scores)
    assert not np.allclose(expected, exact)


@TEXT
def test_fine_tuning_learns_the_signal_and_keeps_the_best_epoch(fitted):
    model, dev = fitted
    assert model.n_epochs_ == 3 and len(model.dev_curve_) == 3 and model.epoch_seconds_.shape == (3,)
    assert model.best_epoch_ == int(model.dev_epochs_[np.argmax(model.dev_curve_)])
    # the kept network is the best epoch's: its dev MAP is the curve's best
    assert model.score(*dev) == pytest.approx(model.dev_curve_.max(), abs=1e-9)
    assert model.dev_curve_.max() > 0.9  # random scores give about 0.6 here


@TEXT
@pytest.mark.parametrize("loss", ["ndcg", "crf-kl", "bce", "ranknet"])
def test_every_kind_of_loss_trains(encoder, loss):
    from structrank.learners import CrossEncoderRanker

    pairs, y, qid = make_pairs(30)
    dev = make_pairs(10, seed=1)
    model = CrossEncoderRanker(loss=loss, encoder=encoder, epochs=2, learning_rate=2e-3, batch_size=16,
                               progress=False).fit(pairs, y, qid, eval_set=dev)
    assert np.all(np.isfinite(model.predict(dev[0])))
    assert model.dev_curve_.max() > 0.8


@TEXT
def test_a_fit_is_repeatable_with_its_seed(encoder):
    from structrank.learners import CrossEncoderRanker

    pairs, y, qid = make_pairs(8)
    runs = [CrossEncoderRanker(encoder=encoder, epochs=1, progress=False, random_state=3).fit(pairs, y, qid)
            .predict(pairs) for _ in range(2)]
    np.testing.assert_allclose(runs[0], runs[1], rtol=1e-5, atol=1e-6)


@TEXT
def test_qa_data_and_pairs_give_the_same_scores(fitted):
    from structrank.qa.readers import QAData

    model, (pairs, y, qid) = fitted
    data = QAData([pairs[i][0] for i in range(0, len(pairs), 5)], [c for _, c in pairs], y, qid.astype(str),
                  [f"d{i}" for i in range(len(pairs))])
    np.testing.assert_array_equal(model.predict(data), model.predict(pairs))


@TEXT
def test_bad_parameters_and_data_are_refused_before_any_work(encoder, tmp_path):
    from sklearn.utils._param_validation import InvalidParameterError

    from structrank.learners import CrossEncoderRanker

    pairs, y, qid = make_pairs(3)
    with pytest.raises(InvalidParameterError, match="unknown loss 'hinge'.*bce, ranknet"):
        CrossEncoderRanker(loss="hinge", encoder=encoder).fit(pairs, y, qid)
    with pytest.raises(InvalidParameterError, match="loss 'bce' takes no options"):
        CrossEncoderRanker(loss="bce", loss_params={"k": 3}, encoder=encoder).fit(pairs, y, qid)
    with pytest.raises(InvalidParameterError, match="loss 'map' takes no option 'k'"):
        CrossEncoderRanker(loss="map", loss_params={"k": 3}, encoder=encoder).fit(pairs, y, qid)
    with pytest.raises(InvalidParameterError, match="smoothing=0.5 applies to a structural hinge; loss 'bce'"):
        CrossEncoderRanker(loss="bce", smoothing=0.5, encoder=encoder).fit(pairs, y, qid)
    with pytest.raises(InvalidParameterError, match="smoothing=0.5 applies to a structural hinge; .*probabilistic"):
        CrossEncoderRanker(loss="crf-kl", smoothing=0.5, encoder=encoder).fit(pairs, y, qid)
    with pytest.raises(InvalidParameterError, match="smoothing must be"):
        CrossEncoderRanker(smoothing=-1.0, encoder=encoder).fit(pairs, y, qid)
    with pytest.raises(InvalidParameterError, match="CrossEncoderRanker: encoder .*no config.json"):
        CrossEncoderRanker(encoder=str(tmp_path)).fit(pairs, y, qid)
    with pytest.raises(DataValidationError, match="nothing to learn from"):
        CrossEncoderRanker(encoder=encoder).fit(pairs, np.zeros_like(y), qid)


# -- model files ------------------------------------------------------------------------------------------------


@TEXT
def test_a_model_file_round_trips_as_safetensors(fitted, tmp_path):
    from structrank.model_io import load_model, save_model

    model, (pairs, y, qid) = fitted
    path = tmp_path / "xenc.safetensors"
    save_model(model, path)
    head = path.read_bytes()[:8]
    header = json.loads(path.read_bytes()[8:8 + struct.unpack("<Q", head)[0]])
    meta = json.loads(header["__metadata__"]["structrank"])
    assert meta["class"] == "CrossEncoderRanker" and meta["params"]["loss"] == "map"
    loaded = load_model(path)
    np.testing.assert_allclose(loaded.predict(pairs), model.predict(pairs), rtol=1e-6, atol=1e-7)
    assert loaded.best_epoch_ == model.best_epoch_
    np.testing.assert_allclose(loaded.dev_curve_, model.dev_curve_)


def _rewrite_header(path, out, change):
    """A copy of the safetensors file ``path`` with its structrank header changed by ``change(dict)``."""
    raw = path.read_bytes()
    size = struct.unpack("<Q", raw[:8])[0]
    table = json.loads(raw[8:8 + size])
    meta = json.loads(table["__metadata__"]["structrank"])
    change(meta)
    table["__metadata__"]["structrank"] = json.dumps(meta)
    text = json.dumps(table).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    out.write_bytes(struct.pack("<Q", len(text)) + text + raw[8 + size:])
    return out


@TEXT
@pytest.mark.parametrize("change, field", [
    (lambda m: m.update({"class": "Pickle"}), "class"),
    (lambda m: m.update({"version": 2}), "version"),
    (lambda m: m["params"].update({"max_length": 0}), "parameter max_length"),
    (lambda m: m["params"].update({"rogue": 1}), "params"),
    (lambda m: m["attributes"].update({"best_epoch_": "one"}), "best_epoch_"),
    (lambda m: m.update({"config": json.dumps({"model_type": "bert", "hidden_size": 8, "num_attention_heads": 2})}),
     "tensors"),
])
def test_a_doctored_model_file_is_refused_naming_the_field(fitted, tmp_path, change, field):
    from structrank.model_io import load_model, save_model

    path = tmp_path / "m.safetensors"
    save_model(fitted[0], path)
    bad = _rewrite_header(path, tmp_path / "bad.safetensors", change)
    with pytest.raises(DataFormatError) as caught:
        load_model(bad)
    assert caught.value.field == field and str(bad) in str(caught.value)


@TEXT
def test_a_truncated_model_file_is_refused_and_a_failed_save_keeps_the_old(fitted, tmp_path):
    from structrank.model_io import load_model, save_model

    path = tmp_path / "m.safetensors"
    save_model(fitted[0], path)
    before = path.read_bytes()
    (tmp_path / "cut.safetensors").write_bytes(before[: len(before) // 2])
    with pytest.raises(DataFormatError, match="damaged model file"):
        load_model(tmp_path / "cut.safetensors")
    broken = fitted[0].__class__(**fitted[0].get_params())  # unfitted: no network to save
    with pytest.raises(AttributeError):
        save_model(broken, path)
    assert path.read_bytes() == before


# -- the command line -------------------------------------------------------------------------------------------


def _write_tsv(path, pairs, y, qid):
    with open(path, "w", encoding="utf-8") as fh:
        for (q, c), label, i in zip(pairs, y, qid):
            fh.write(f"q{i}\t{q}\t{c}\t{label}\n")


@TEXT
def test_train_predict_evaluate_on_a_qa_tsv(encoder, tmp_path):
    train, vali = tmp_path / "train.tsv", tmp_path / "vali.tsv"
    _write_tsv(train, *make_pairs(30))
    _write_tsv(vali, *make_pairs(10, seed=1))
    with open(vali, "a", encoding="utf-8") as fh:  # two questions without a correct answer, as WikiQA's dev has
        fh.write("".join(f"z{q}\twho {q} ?\tsome blue words {d}\t0\n" for q in range(2) for d in range(5)))
    model, scores, run = tmp_path / "m.safetensors", tmp_path / "s.txt", tmp_path / "run.txt"

    def structrank(*args):
        done = subprocess.run([sys.executable, "-m", "structrank", *map(str, args)], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done

    trained = structrank("train", "xenc-map", "--train", train, "--vali", vali, "--set", f"encoder={encoder}",
                         "--set", "epochs=2", "--set", "learning_rate=0.002", "--set", "batch_size=16",
                         "--queries", "with-both", "--out", model)
    assert "under trec" in trained.stderr and f"wrote {model}" in trained.stderr
    structrank("predict", "--model", model, "--data", vali, "--out", scores)
    assert len(scores.read_text().split()) == 60
    out = json.loads(structrank("evaluate", "--data", vali, "--scores", scores, "--convention", "trec",
                                "--json", "--queries", "with-both").stdout)
    assert out["metrics"]["map"] > 0.8
    # the epoch was chosen on the questions evaluate keeps: the dev MAP train reports is the one evaluate gives
    chosen = float(re.search(r"chose .*: vali map ([0-9.]+)", trained.stderr).group(1))
    assert chosen == pytest.approx(out["metrics"]["map"], abs=1e-5)
    structrank("predict", "--model", model, "--data", vali, "--out", run, "--format", "trec")
    first = run.read_text().splitlines()[0].split()
    assert first[0] == "q0" and first[1] == "Q0" and first[3] == "1"
    compared = structrank("compare", "--data", vali, scores, scores, "--names", "a,b", "--format", "json")
    assert json.loads(compared.stdout)


# -- the files the xenc models read (the benchmark data; no extra) --------------------------------------------------


@pytest.mark.data
@pytest.mark.parametrize("path, reader, counts", [
    ("wikiqa/WikiQA-dev.tsv", "read_wikiqa", (296, 2733)),
    ("trecqa/jacana/dev-less-than-40.manual-edit.xml", "read_jacana", None),
    ("semeval2016-cqa/SemEval2016-Task3-CQA-QL-dev-subtaskA.xml", "semeval", None),
])
def test_every_qa_reader_s_file_is_told_apart_by_its_first_line(data_root, path, reader, counts):
    from structrank.qa import pairs_files, readers
    from structrank.qa.semeval import read_semeval, to_pairs

    file = data_root / path
    assert pairs_files.is_pairs_file(file)
    got = pairs_files.read_pairs_file(file)
    expected = to_pairs(read_semeval(file)) if reader == "semeval" else getattr(readers, reader)(file)
    assert got.candidates == expected.candidates and got.labels.tolist() == expected.labels.tolist()
    assert got.docids == expected.docids
    if counts is not None:
        assert (got.n_queries, got.n_candidates) == counts


@pytest.mark.data
def test_a_letor_file_is_not_taken_for_text(data_root):
    from structrank.qa.pairs_files import is_pairs_file

    assert not is_pairs_file(data_root / "letor" / "MQ2008" / "Fold1" / "vali.txt.gz")
