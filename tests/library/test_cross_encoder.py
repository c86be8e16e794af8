"""CrossEncoderRanker: a tiny randomly initialised BERT built from a config in the test (no download, seconds).

The gradient path is checked against ``structrank.learners.torch_loss``, the baselines against their formulas, a model
file's round trip and its refusals, the command line end to end, and the batching of whole queries.
"""

import json
import os
import re
import struct
import subprocess
import sys
from pathlib import Path

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
    model = CrossEncoderRanker(loss="map", encoder=encoder, epochs=3, learning_rate=2e-3, batch_size=4, max_length=64,
                               device="cpu", progress=False, random_state=0)
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


def test_question_candidate_text_is_judged_by_trec_eval_s_rules_unless_told(tmp_path, capsys):
    from structrank.cli import main

    data, scores = tmp_path / "qa.tsv", tmp_path / "s.txt"
    data.write_text("q1\twho?\tAnn.\t0\nq1\twho?\tRain.\t1\nq1\twho?\tSun.\t0\n"
                    "q2\twhere?\tHere.\t1\nq2\twhere?\tThere.\t0\n")
    scores.write_text("3\n2\n1\n1\n0\n")
    # ranks 2 and 1: nDCG@10 of these short lists is 1/log2(3) and 1 under trec_eval; letor4 (auto's choice for
    # labels 0-1) would score both 0, as its script does with fewer than 10 documents
    expected = {"ndcg@10": (1 / np.log2(3) + 1) / 2, "map": (0.5 + 1) / 2}
    for command in (["evaluate", "--data", str(data), "--scores", str(scores)],
                    ["compare", "--data", str(data), str(scores), str(scores), "--names", "a,b"]):
        args = ["--metric", "ndcg@10", "--metric", "map"]
        assert main(command + args + ["--json" if command[0] == "evaluate" else "--format=json"]) == 0
        out = json.loads(capsys.readouterr().out)
        got = out["metrics"] if command[0] == "evaluate" else out["means"]["a"]
        assert got == pytest.approx(expected, abs=1e-12), command[0]
        if command[0] == "evaluate":
            assert out["convention"] == "trec" and out["convention_auto"] is False
    assert main(["evaluate", "--data", str(data), "--scores", str(scores), "--metric", "ndcg@10", "--json",
                 "--convention", "letor4"]) == 0  # named, it is followed
    assert json.loads(capsys.readouterr().out)["metrics"]["ndcg@10"] == 0.0


@TEXT
def test_the_baselines_are_sentence_transformers_own_losses(encoder):
    from sentence_transformers.cross_encoder import CrossEncoder, losses

    from structrank.learners import CrossEncoderRanker

    model = CrossEncoder(encoder, num_labels=1, device="cpu", local_files_only=True)
    for name, cls in [("bce", losses.BinaryCrossEntropyLoss), ("ranknet", losses.RankNetLoss),
                      ("listnet", losses.ListNetLoss), ("lambdaloss", losses.LambdaLoss)]:
        assert type(CrossEncoderRanker(loss=name, mini_batch_size=8)._training_loss(model)) is cls
    assert isinstance(losses.LambdaLoss(model).weighting_scheme, type(
        CrossEncoderRanker(loss="lambdaloss")._training_loss(model).weighting_scheme))  # its default weighting


# -- the loss module --------------------------------------------------------------------------------------------

QUERIES = ["who wrote hamlet ?", "where is rome ?", "what is red ?"]
DOCS = [["shakespeare wrote hamlet", "paris is big", "a dog", "the sun", "moon rain", "ann bob", "cat tree ate",
         "house"], ["rome is in italy", "hamlet is a play", "the river"], ["red", "blue"]]
LABELS = [[1, 0, 0, 1, 0, 0, 0, 2], [1, 0, 0], [0, 1]]


def _parameter_gradient(model):
    import torch

    return torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None]).double().numpy()


@TEXT
@pytest.mark.parametrize("loss, options", [("map", {}), ("ndcg", {"k": 3}), ("crf-kl", {}), ("crf-la", {})])
def test_the_trainer_loss_gives_structrank_torch_s_gradient_on_the_same_logits(encoder, loss, options):
    """StructuredCrossEncoderLoss over listwise rows (mini-batches of similar length) gives the network the gradient
    that structrank.learners.torch_loss.StructuredRankingLoss gives on the logits of every pair scored at once, with the same seed:
    the same CRF subsets, the same mean over queries."""
    import torch
    from sentence_transformers.cross_encoder import CrossEncoder

    from structrank.learners.cross_encoder_losses import StructuredCrossEncoderLoss
    from structrank.learners.torch_loss import StructuredRankingLoss

    torch.manual_seed(0)
    model = CrossEncoder(encoder, num_labels=1, max_length=64, device="cpu", local_files_only=True)
    model.eval()  # no dropout: both passes see the same network
    for call in range(2):  # the second call draws new CRF subsets, as the reference module does
        criterion = StructuredCrossEncoderLoss(model, loss, options, mini_batch_size=3, random_state=5)
        reference = StructuredRankingLoss(loss, random_state=5, **options)
        for _ in range(call + 1):
            model.zero_grad()
            value = criterion((QUERIES, DOCS), [torch.tensor(v) for v in LABELS])
            value.backward()
        ours = _parameter_gradient(model)
        model.zero_grad()
        pairs = [(q, d) for q, docs in zip(QUERIES, DOCS) for d in docs]
        logits = model(model.preprocess(pairs))["scores"].view(-1)
        offsets = np.cumsum([0] + [len(d) for d in DOCS])
        for _ in range(call):
            reference.call_spec()  # the reference's stream, advanced as the criterion's was
        expected_value = reference(logits, np.concatenate(LABELS), offsets)
        expected_value.backward()
        expected = _parameter_gradient(model)
        assert value.item() == pytest.approx(expected_value.item(), rel=1e-5)
        # float32 logits of pairs padded in other batches: equal to a thousandth of the largest entry
        np.testing.assert_allclose(ours, expected, rtol=1e-4, atol=1e-3 * np.abs(expected).max())
        assert np.abs(expected).max() > 0


@TEXT
def test_a_crf_objective_forwards_only_the_pairs_of_its_subsets(encoder):
    import torch
    from sentence_transformers.cross_encoder import CrossEncoder

    from structrank.learners.cross_encoder_losses import StructuredCrossEncoderLoss

    model = CrossEncoder(encoder, num_labels=1, max_length=64, device="cpu", local_files_only=True)
    seen = []
    preprocess = model.preprocess
    model.preprocess = lambda pairs, **kw: seen.extend(pairs) or preprocess(pairs, **kw)
    labels = [torch.tensor(v) for v in LABELS]
    StructuredCrossEncoderLoss(model, "crf-kl", mini_batch_size=4)((QUERIES, DOCS), labels)
    assert len(seen) == 6 + 3 + 2  # the 8-document query's subset of 6, the others whole
    seen.clear()
    StructuredCrossEncoderLoss(model, "map", mini_batch_size=4)((QUERIES, DOCS), labels)
    assert len(seen) == 8 + 3 + 2  # a hinge's gradient reaches every pair


@TEXT
def test_one_step_under_torchrun_gives_the_single_process_gradient(encoder, tmp_path):
    """Two processes under torchrun (gloo, CPU), each with half the step's queries, DDP averaging the gradients:
    the single process's gradient of the whole step to 1e-6."""
    script = Path(__file__).parents[1] / "ddp_step.py"
    for loss in ("map", "crf-kl"):
        out, log = tmp_path / f"{loss}.json", tmp_path / f"{loss}.log"
        with open(log, "w") as fh:  # a file, not a pipe: a helper process of torchrun's may hold a pipe open after it
            done = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2",
                                   "--standalone", str(script), encoder, loss, str(out)], stdout=fh, stderr=fh,
                                  timeout=300, env={**os.environ, "OMP_NUM_THREADS": "1",
                                                    "PYTHONPATH": str(Path(__file__).parents[2])})
        assert done.returncode == 0, log.read_text()[-2000:]
        found = json.loads(out.read_text())
        assert found["world"] == 2 and found["largest"] > 0
        assert found["max_difference"] < 1e-6


@TEXT
def test_the_readme_s_trainer_lines_run_on_a_tiny_bert(encoder, tmp_path, monkeypatch):
    """The README's three lines: a CrossEncoder, structrank's loss, sentence-transformers' trainer, on rows of
    (query, docs, labels); the trained model ranks the signal."""
    from datasets import Dataset
    from sentence_transformers.cross_encoder import CrossEncoder, CrossEncoderTrainer

    from structrank.learners.cross_encoder_losses import StructuredCrossEncoderLoss

    monkeypatch.chdir(tmp_path)  # the trainer's default output folder
    pairs, y, qid = make_pairs(24)
    data = text_pairs(pairs, y, qid)
    o = data.offsets
    rows = Dataset.from_dict({"query": [data.queries[o[q]] for q in range(len(o) - 1)],
                              "docs": [data.candidates[o[q]:o[q + 1]] for q in range(len(o) - 1)],
                              "labels": [data.y[o[q]:o[q + 1]].tolist() for q in range(len(o) - 1)]})
    LOCAL_MODEL_DIR = encoder
    model = CrossEncoder(LOCAL_MODEL_DIR, num_labels=1)
    loss = StructuredCrossEncoderLoss(model, "crf-kl", mini_batch_size=16)
    from sentence_transformers.cross_encoder import CrossEncoderTrainingArguments

    args = CrossEncoderTrainingArguments(output_dir=str(tmp_path / "out"), learning_rate=2e-3, num_train_epochs=4,
                                         per_device_train_batch_size=4, report_to="none", use_cpu=True)
    CrossEncoderTrainer(model=model, args=args, train_dataset=rows, loss=loss).train()
    dev, dy, dq = make_pairs(10, seed=1)
    from structrank.metrics import evaluate

    assert evaluate(dy, model.predict(dev), dq, ["map"]).metrics["map"] > 0.85  # random scores: about 0.6


# -- the estimator -----------------------------------------------------------------------------------------------


@TEXT
def test_a_smoothed_hinge_feeds_the_network_the_perturbed_gradient(encoder):
    """With ``smoothing``, the scores' gradient is ScoreLoss's perturbed smoothing of the hinge, its noise drawn
    afresh at every step from the learner's seed: equal to ScoreLoss.smoothed's at the same scores and seed, and
    unlike the exact subgradient."""
    import torch
    from sentence_transformers.cross_encoder import CrossEncoder

    from structrank.learners import CrossEncoderRanker
    from structrank.learners.score_loss import ScoreLoss

    pairs, y, qid = make_pairs(4)
    data = text_pairs(pairs, y, qid)
    scores = np.linspace(-1.0, 1.0, data.n_rows)
    model = CrossEncoderRanker(loss="map", smoothing=0.5, smoothing_samples=3, encoder=encoder, random_state=7)
    model._start_fit()
    model._fit_loss(data.y)
    criterion = model._training_loss(CrossEncoder(encoder, num_labels=1, local_files_only=True)).criterion
    grads = []
    for _ in range(2):  # two steps with the same scores: each call draws its own noise
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
    assert model.n_steps_ == 3 * 8  # 30 questions, 4 per step: the trainer's real count, the last step short
    assert model.best_epoch_ == int(model.dev_epochs_[np.argmax(model.dev_curve_)])
    # the kept network is the best epoch's: its dev MAP is the curve's best
    assert model.score(*dev) == pytest.approx(model.dev_curve_.max(), abs=1e-6)
    assert model.dev_curve_.max() > 0.9  # random scores give about 0.6 here


@TEXT
@pytest.mark.parametrize("loss", ["ndcg", "crf-kl", "bce", "ranknet", "listnet", "lambdaloss"])
def test_every_kind_of_loss_trains(encoder, loss):
    from structrank.learners import CrossEncoderRanker

    pairs, y, qid = make_pairs(30)
    dev = make_pairs(10, seed=1)
    model = CrossEncoderRanker(loss=loss, encoder=encoder, epochs=2, learning_rate=2e-3, batch_size=4,
                               device="cpu", progress=False).fit(pairs, y, qid, eval_set=dev)
    assert np.all(np.isfinite(model.predict(dev[0])))
    assert model.dev_curve_.max() > 0.8


@TEXT
def test_a_fit_is_repeatable_with_its_seed_and_leaves_the_process_as_it_was(encoder):
    """Two fits with one seed predict alike; the caller's generators, torch's threads and the environment are as
    they were before the fit."""
    import random

    import torch

    from structrank.learners import CrossEncoderRanker

    pairs, y, qid = make_pairs(8)
    torch.manual_seed(123)
    np.random.seed(123)
    random.seed(123)
    threads, environ = torch.get_num_threads(), dict(os.environ)
    states = (torch.random.get_rng_state().clone(), np.random.get_state()[1].copy(), random.getstate())
    runs = [CrossEncoderRanker(encoder=encoder, epochs=1, progress=False, device="cpu", n_threads=1, random_state=3)
            .fit(pairs, y, qid).predict(pairs) for _ in range(2)]
    np.testing.assert_allclose(runs[0], runs[1], rtol=1e-5, atol=1e-6)
    assert torch.equal(torch.random.get_rng_state(), states[0])
    assert np.array_equal(np.random.get_state()[1], states[1]) and random.getstate() == states[2]
    assert torch.get_num_threads() == threads and dict(os.environ) == environ


@TEXT
def test_mixed_precision_and_accumulation_reach_the_trainer(encoder):
    """bf16 trains under autocast on the CPU (its scores move off fp32's, it still learns, the weights stay fp32);
    accumulating two steps' gradients halves the updates; fp16, which the trainer would quietly run in fp32 on the
    CPU, is refused in one line."""
    import torch

    from structrank.constraints import InvalidParameterError
    from structrank.learners import CrossEncoderRanker

    pairs, y, qid = make_pairs(24)
    dev = make_pairs(8, seed=1)
    options = dict(loss="crf-kl", encoder=encoder, epochs=2, learning_rate=2e-3, max_length=64, device="cpu",
                   progress=False)
    plain = CrossEncoderRanker(**options).fit(pairs, y, qid, eval_set=dev)
    bf16 = CrossEncoderRanker(**options, precision="bf16").fit(pairs, y, qid, eval_set=dev)
    assert np.abs(bf16.predict(pairs) - plain.predict(pairs)).max() > 1e-4
    assert bf16.dev_curve_.max() > 0.8 and next(bf16.model_.parameters()).dtype == torch.float32
    accumulated = CrossEncoderRanker(**options, gradient_accumulation_steps=2).fit(pairs, y, qid)
    assert plain.n_steps_ == 2 * 24 // 4 and accumulated.n_steps_ == plain.n_steps_ // 2
    with pytest.raises(InvalidParameterError, match="precision='fp16' needs a GPU"):
        CrossEncoderRanker(**options, precision="fp16").fit(pairs, y, qid)


@TEXT
def test_qa_data_and_pairs_give_the_same_scores(fitted):
    from structrank.qa.readers import QAData

    model, (pairs, y, qid) = fitted
    data = QAData([pairs[i][0] for i in range(0, len(pairs), 5)], [c for _, c in pairs], y, qid.astype(str),
                  [f"d{i}" for i in range(len(pairs))])
    np.testing.assert_array_equal(model.predict(data), model.predict(pairs))


def titled_data(n_queries, seed=0):
    """QA data whose signal is in the titles alone: a correct candidate's document is titled "red ...", another's
    "blue ...", and every candidate's own words are random."""
    from structrank.qa.readers import QAData

    pairs, y, qid = make_pairs(n_queries, seed)
    titles = [("red " if label else "blue ") + str(WORDS[i % 7]) for i, label in enumerate(y)]
    plain = [" ".join(w for w in c.split() if w not in ("red", "blue")) for _, c in pairs]
    questions = [pairs[i][0] for i in range(0, len(pairs), 5)]
    return QAData(questions, plain, y, qid.astype(str), [f"d{i}" for i in range(len(pairs))], titles=titles)


@TEXT
def test_titles_are_read_in_fit_eval_set_and_predict_when_told(encoder):
    """Trained with titles=True on data whose signal is in the titles, the model finds it (dev MAP near 1); the
    same fit without titles cannot (about random). Its scores are those of the titled candidates as pairs, and
    pairs, which carry no titles, are refused."""
    from structrank.learners import CrossEncoderRanker
    from structrank.qa.readers import TITLE_SEPARATOR

    train, dev = titled_data(30), titled_data(10, seed=1)
    options = dict(loss="map", encoder=encoder, epochs=3, learning_rate=2e-3, batch_size=4, max_length=64,
                   device="cpu", progress=False)
    titled = CrossEncoderRanker(**options, titles=True).fit(train, eval_set=dev)
    untitled = CrossEncoderRanker(**options).fit(train, eval_set=dev)
    assert titled.dev_curve_.max() > 0.9 and untitled.dev_curve_.max() < 0.8  # random scores give about 0.6
    assert titled.score(dev) == pytest.approx(titled.soup_dev_, abs=1e-6)
    joined = [(q, f"{t}{TITLE_SEPARATOR}{c}") for q, t, c in zip(dev.pair_questions(), dev.titles, dev.candidates)]
    assert joined[0][1].startswith(dev.titles[0] + ". ")
    scores = titled.predict(dev)
    np.testing.assert_array_equal(scores, titled.set_params(titles=False).predict(joined))
    titled.set_params(titles=True)
    with pytest.raises(DataValidationError, match=r"predict: titles=True reads .* pairs carry none"):
        titled.predict(joined)
    with pytest.raises(DataValidationError, match=r"fit: titles=True reads"):
        CrossEncoderRanker(**options, titles=True).fit(*make_pairs(3))
    no_titles = titled_data(2)
    no_titles.titles, no_titles.source = None, "plain.tsv"
    with pytest.raises(DataValidationError, match=r"predict: titles=True: plain.tsv gives no document titles"):
        titled.predict(no_titles)


@TEXT
def test_bad_parameters_and_data_are_refused_before_any_work(encoder, tmp_path):
    from structrank.constraints import InvalidParameterError

    from structrank.learners import CrossEncoderRanker

    pairs, y, qid = make_pairs(3)
    with pytest.raises(InvalidParameterError, match="unknown loss 'hinge'.*bce, ranknet, listnet, lambdaloss"):
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
    with pytest.raises(InvalidParameterError, match="precision must be"):
        CrossEncoderRanker(precision="fp8", encoder=encoder).fit(pairs, y, qid)
    with pytest.raises(InvalidParameterError, match="CrossEncoderRanker: encoder .*no config.json"):
        CrossEncoderRanker(encoder=str(tmp_path)).fit(pairs, y, qid)
    # max_length against the encoder's 512 positions, before the data is read (these data are not even pairs)
    with pytest.raises(InvalidParameterError, match="max_length=600 is more than the 512 token positions"):
        CrossEncoderRanker(encoder=encoder, max_length=600).fit(["not pairs"], [1], [1])
    with pytest.raises(DataValidationError, match="nothing to learn from"):
        CrossEncoderRanker(encoder=encoder, max_length=64).fit(pairs, np.zeros_like(y), qid)


def test_a_device_this_machine_lacks_is_refused_before_any_work(encoder, monkeypatch):
    import torch

    from structrank.constraints import InvalidParameterError
    from structrank.learners import CrossEncoderRanker

    absent = f"cuda:{torch.cuda.device_count()}"  # numbered past the last device: absent on any machine
    with pytest.raises(InvalidParameterError, match=rf"CrossEncoderRanker: device='{absent}': this machine"):
        CrossEncoderRanker(encoder=encoder, device=absent).fit(["not pairs"], [1], [1])
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(InvalidParameterError, match=r"device='cuda': .*sees no CUDA device.*give device='auto'"):
        CrossEncoderRanker(encoder=encoder, device="cuda").fit(["not pairs"], [1], [1])
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    with pytest.raises(InvalidParameterError, match=r"device='mps': .*no MPS device"):
        CrossEncoderRanker(encoder=encoder, device="mps").fit(["not pairs"], [1], [1])


# -- model folders ----------------------------------------------------------------------------------------------


@TEXT
def test_a_model_folder_loads_in_sentence_transformers_and_scores_the_same(fitted, tmp_path):
    from sentence_transformers import CrossEncoder

    from structrank.model_io import load_model, save_model

    model, (pairs, y, qid) = fitted
    path = tmp_path / "xenc"
    save_model(model, path)
    meta = json.loads((path / "structrank.json").read_text())
    assert meta["class"] == "CrossEncoderRanker" and meta["params"]["loss"] == "map"
    loaded = load_model(path)
    ours = model.predict(pairs)
    np.testing.assert_allclose(loaded.predict(pairs), ours, rtol=0, atol=1e-5)
    np.testing.assert_allclose(CrossEncoder(str(path)).predict(pairs), ours, rtol=0, atol=1e-5)
    assert loaded.best_epoch_ == model.best_epoch_ and loaded.n_steps_ == model.n_steps_
    np.testing.assert_allclose(loaded.dev_curve_, model.dev_curve_)
    save_model(model, path)  # a folder of ours is replaced whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["xenc"]


@TEXT
def test_a_saved_model_is_an_encoder_whose_head_carries_over(fitted, tmp_path):
    """Transfer, then adapt: a model folder of ours as ``encoder`` starts the next fine-tuning from the fitted network,
    its head included (no new head); with no epoch of training it scores as the saved model does."""
    from structrank.learners import CrossEncoderRanker
    from structrank.model_io import save_model

    model, (pairs, y, qid) = fitted
    path = tmp_path / "first"
    save_model(model, path)
    then = CrossEncoderRanker(loss="crf-kl", encoder=str(path), epochs=1, learning_rate=1e-12, batch_size=4,
                              max_length=64, device="cpu", progress=False, random_state=5).fit(pairs, y, qid)
    np.testing.assert_allclose(then.predict(pairs), model.predict(pairs), rtol=0, atol=1e-4)
    fresh = CrossEncoderRanker(loss="crf-kl", encoder=model.encoder, epochs=1, learning_rate=1e-12, batch_size=4,
                               max_length=64, device="cpu", progress=False, random_state=5).fit(pairs, y, qid)
    assert np.abs(fresh.predict(pairs) - model.predict(pairs)).max() > 1e-2  # from the plain encoder: a new head


@TEXT
def test_a_mean_pooled_head_learns_saves_and_carries_over(encoder, tmp_path):
    """``head="mean"``: a linear layer over the mean of the token vectors instead of the pooler's first token. It
    learns the signal, truncates at ``max_length``, saves as a folder ``CrossEncoder`` loads and scores the same, and
    a saved model as ``encoder`` keeps that head whatever ``head`` says."""
    from sentence_transformers import CrossEncoder
    from sentence_transformers.sentence_transformer.modules import Pooling

    from structrank.learners import CrossEncoderRanker
    from structrank.model_io import load_model, save_model

    pairs, y, qid = make_pairs(30)
    dev = make_pairs(10, seed=1)
    options = {"encoder": encoder, "epochs": 2, "learning_rate": 2e-3, "batch_size": 4, "max_length": 8,
               "device": "cpu", "progress": False}
    model = CrossEncoderRanker(loss="crf-kl", head="mean", **options).fit(pairs, y, qid, eval_set=dev)
    assert any(isinstance(m, Pooling) and m.pooling_mode == "mean" for m in model.model_)
    assert model.model_.max_seq_length == 8
    assert model.dev_curve_.max() > 0.8
    classification = CrossEncoderRanker(loss="crf-kl", **options).fit(pairs, y, qid)
    assert not any(isinstance(m, Pooling) for m in classification.model_)
    assert np.abs(classification.predict(dev[0]) - model.predict(dev[0])).max() > 1e-2

    path = tmp_path / "mean"
    save_model(model, path)
    assert load_model(path).head == "mean"
    np.testing.assert_allclose(CrossEncoder(str(path)).predict(dev[0]), model.predict(dev[0]), rtol=0, atol=1e-5)
    then = CrossEncoderRanker(loss="crf-kl", **{**options, "encoder": str(path), "epochs": 1,
                                                "learning_rate": 1e-12}).fit(pairs, y, qid)
    np.testing.assert_allclose(then.predict(dev[0]), model.predict(dev[0]), rtol=0, atol=1e-4)


@TEXT
@pytest.mark.parametrize("change, field", [
    (lambda m: m.update({"class": "Pickle"}), "class"),
    (lambda m: m.update({"version": 2}), "version"),
    (lambda m: m["params"].update({"max_length": 0}), "parameter max_length"),
    (lambda m: m["params"].update({"rogue": 1}), "params"),
    (lambda m: m["attributes"].update({"best_epoch_": "one"}), "best_epoch_"),
])
def test_a_doctored_model_folder_is_refused_naming_the_field(fitted, tmp_path, change, field):
    from structrank.model_io import load_model, save_model

    path = tmp_path / "m"
    save_model(fitted[0], path)
    meta = json.loads((path / "structrank.json").read_text())
    change(meta)
    (path / "structrank.json").write_text(json.dumps(meta))
    with pytest.raises(DataFormatError) as caught:
        load_model(path)
    assert caught.value.field == field and str(path) in str(caught.value)


@TEXT
def test_damaged_weights_an_old_single_file_and_a_failed_save_are_handled(fitted, tmp_path):
    from structrank.model_io import load_model, save_model

    path = tmp_path / "m"
    save_model(fitted[0], path)
    weights = (path / "model.safetensors").read_bytes()
    (path / "model.safetensors").write_bytes(weights[: len(weights) // 2])
    with pytest.raises(DataFormatError, match="damaged weights"):
        load_model(path)
    (path / "model.safetensors").write_bytes(weights)
    old = tmp_path / "old.safetensors"  # the single-file form of before: 8 bytes of header length, then JSON
    header = b'{"__metadata__": {"structrank": "{}"}}'
    old.write_bytes(struct.pack("<Q", len(header)) + header)
    with pytest.raises(DataFormatError, match="older single-file form.*train it again") as caught:
        load_model(old)
    assert len(str(caught.value).splitlines()) == 1
    broken = fitted[0].__class__(**fitted[0].get_params())  # unfitted: no network to save
    with pytest.raises(AttributeError):
        save_model(broken, path)
    np.testing.assert_allclose(load_model(path).predict(fitted[1][0]), fitted[0].predict(fitted[1][0]), atol=1e-5)
    with pytest.raises(FileExistsError, match="not a structrank model folder"):
        save_model(fitted[0], tmp_path)


@TEXT
def test_a_model_trained_on_a_device_this_machine_lacks_is_served_on_what_it_has(fitted, tmp_path):
    import copy

    import torch

    from structrank.model_io import load_model, save_model

    model = copy.deepcopy(fitted[0]).set_params(device=f"cuda:{torch.cuda.device_count()}")  # as a GPU box saves it
    save_model(model, tmp_path / "m")
    loaded = load_model(tmp_path / "m")
    assert loaded.device == model.device  # the parameter is kept as trained; only where it is served changes
    assert str(loaded.model_.model.device).startswith("cuda" if torch.cuda.is_available() else "cpu")
    np.testing.assert_allclose(loaded.predict(fitted[1][0]), fitted[0].predict(fitted[1][0]), atol=1e-5)


# -- the command line -------------------------------------------------------------------------------------------


def _write_tsv(path, pairs, y, qid):
    with open(path, "w", encoding="utf-8") as fh:
        for (q, c), label, i in zip(pairs, y, qid):
            fh.write(f"q{i}\t{q}\t{c}\t{label}\n")


@TEXT
@pytest.mark.parametrize("head, soup", [("classification", 1), ("mean", 1), ("classification", 2)])
def test_train_predict_evaluate_on_a_qa_tsv(encoder, tmp_path, head, soup):
    train, vali = tmp_path / "train.tsv", tmp_path / "vali.tsv"
    _write_tsv(train, *make_pairs(30))
    _write_tsv(vali, *make_pairs(10, seed=1))
    with open(vali, "a", encoding="utf-8") as fh:  # two questions without a correct answer, as WikiQA's dev has
        fh.write("".join(f"z{q}\twho {q} ?\tsome blue words {d}\t0\n" for q in range(2) for d in range(5)))
    model, scores, run = tmp_path / "m", tmp_path / "s.txt", tmp_path / "run.txt"

    def structrank(*args):
        done = subprocess.run([sys.executable, "-m", "structrank", *map(str, args)], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done

    trained = structrank("train", "xenc-map", "--train", train, "--vali", vali, "--set", f"encoder={encoder}",
                         "--set", "epochs=2", "--set", "learning_rate=0.002", "--set", "batch_size=4",
                         "--set", "max_length=64", "--set", f"head={head}", "--set", f"soup={soup}",
                         "--set", f"n_jobs={soup}", "--queries", "with-both", "--out", model)
    assert json.loads((model / "structrank.json").read_text())["params"]["head"] == head
    assert "under trec" in trained.stderr and f"wrote {model}" in trained.stderr
    # a soup says what each fine-tuning and their average measured on vali
    assert ("soup of 2 fine-tunings: vali " in trained.stderr) == (soup == 2)
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


def _write_semeval(path, pairs, y, qid):
    """Pairs as SemEval-2016 Task 3 threads (a question, its comments Good or Bad), the XML the task ships."""
    from xml.sax.saxutils import escape

    threads = {}
    for (question, comment), label, q in zip(pairs, y, qid):
        threads.setdefault(q, (question, []))[1].append((comment, "Good" if label else "Bad"))
    out = ['<?xml version="1.0" encoding="utf-8"?>', '<xml version="1.0">']
    for q, (question, comments) in threads.items():
        out += [f'<Thread THREAD_SEQUENCE="Q{q}_R1">', f'<RelQuestion RELQ_ID="Q{q}_R1" RELQ_CATEGORY="c" '
                f'RELQ_DATE="2012-01-01 10:00:00" RELQ_USERID="U0" RELQ_USERNAME="u">',
                f"<RelQSubject>{escape(question)}</RelQSubject><RelQBody></RelQBody></RelQuestion>"]
        out += [f'<RelComment RELC_ID="Q{q}_R1_C{c + 1}" RELC_DATE="2012-01-01 11:00:00" RELC_USERID="U{c + 1}" '
                f'RELC_USERNAME="u{c + 1}" RELC_RELEVANCE2RELQ="{label}"><RelCText>{escape(text)}</RelCText>'
                "</RelComment>" for c, (text, label) in enumerate(comments)]
        out.append("</Thread>")
    path.write_text("\n".join(out + ["</xml>", ""]), encoding="utf-8")


@TEXT
def test_semeval_threads_are_judged_by_the_task_s_scorer_in_train_and_evaluate(encoder, tmp_path):
    train, vali, model, scores = tmp_path / "train.xml", tmp_path / "vali.xml", tmp_path / "m", tmp_path / "s.txt"
    _write_semeval(train, *make_pairs(30))
    _write_semeval(vali, *make_pairs(10, seed=1, per_query=12))  # longer than the scorer's cut-off of 10

    def structrank(*args):
        done = subprocess.run([sys.executable, "-m", "structrank", *map(str, args)], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done

    trained = structrank("train", "xenc-map", "--train", train, "--vali", vali, "--set", f"encoder={encoder}",
                         "--set", "epochs=1", "--set", "max_length=64", "--out", model)
    assert "under semeval" in trained.stderr
    assert json.loads((model / "structrank.json").read_text())["params"]["convention"] == "semeval"
    structrank("predict", "--model", model, "--data", vali, "--out", scores)
    out = json.loads(structrank("evaluate", "--data", vali, "--scores", scores, "--json", "--metric", "map").stdout)
    assert out["convention"] == "semeval"
    chosen = float(re.search(r"chose .*: vali map ([0-9.]+)", trained.stderr).group(1))
    assert chosen == pytest.approx(out["metrics"]["map"], abs=1e-5)  # train's vali value is evaluate's


def _write_wikiqa(path, data):
    """``data`` (QA data with titles) as a WikiQA TSV, its header and seven columns."""
    lines = ["QuestionID\tQuestion\tDocumentID\tDocumentTitle\tSentenceID\tSentence\tLabel"]
    for q, question, title, sentence, label, docid in zip(data.qid, data.pair_questions(), data.titles,
                                                          data.candidates, data.labels, data.docids):
        lines.append(f"Q{q}\t{question}\tD{q}\t{title}\tD{q}-{docid[1:]}\t{sentence}\t{label}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@TEXT
def test_a_model_trained_with_titles_reads_them_through_the_command_line(encoder, tmp_path):
    """`--set titles=true` on WikiQA files: train chooses its epoch on the titled vali, predict reads the test file's
    titles as the saved model says (the signal is in them: MAP near 1), and a file without titles is refused in one
    line that names it."""
    train, vali, plain = tmp_path / "train.tsv", tmp_path / "vali.tsv", tmp_path / "plain.tsv"
    _write_wikiqa(train, titled_data(30))
    _write_wikiqa(vali, titled_data(10, seed=1))
    _write_tsv(plain, *make_pairs(3))
    model, scores = tmp_path / "m", tmp_path / "s.txt"

    def structrank(*args, rc=0):
        done = subprocess.run([sys.executable, "-m", "structrank", *map(str, args)], capture_output=True, text=True)
        assert done.returncode == rc, done.stderr
        return done

    structrank("train", "xenc-map", "--train", train, "--vali", vali, "--set", f"encoder={encoder}", "--set",
               "epochs=3", "--set", "learning_rate=0.002", "--set", "max_length=64", "--set", "titles=true",
               "--out", model)
    assert json.loads((model / "structrank.json").read_text())["params"]["titles"] is True
    structrank("predict", "--model", model, "--data", vali, "--out", scores)
    out = json.loads(structrank("evaluate", "--data", vali, "--scores", scores, "--json").stdout)
    assert out["metrics"]["map"] > 0.9
    refused = structrank("predict", "--model", model, "--data", plain, "--out", tmp_path / "t.txt", rc=2)
    assert "plain.tsv gives no document titles" in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "t.txt").exists()
    # served by sentence-transformers, the folder scores the candidates joined with their titles as predict did
    from sentence_transformers import CrossEncoder
    from structrank.qa.pairs_files import read_pairs_file

    data = read_pairs_file(vali)
    served = CrossEncoder(str(model)).predict(list(zip(data.pair_questions(), data.titled_candidates())))
    np.testing.assert_allclose(served, np.loadtxt(scores), atol=1e-5)


@TEXT
def test_train_under_torchrun_shares_each_step_and_writes_once(encoder, tmp_path):
    """`torchrun -m structrank train xenc-...` with two processes (gloo, CPU): each takes half of a step's queries, so
    the steps are a single process's; the first process alone reports and writes the model, which loads; a step's
    queries that two processes cannot share are refused in one line; no warning of DDP's reaches the user."""
    train, vali = tmp_path / "train.tsv", tmp_path / "vali.tsv"
    _write_tsv(train, *make_pairs(24))
    _write_tsv(vali, *make_pairs(8, seed=1))
    common = ["train", "xenc-crf-kl", "--train", train, "--vali", vali, "--set", f"encoder={encoder}", "--set",
              "epochs=2", "--set", "max_length=64"]

    def run(*args, processes=1):
        launch = ["-m", "torch.distributed.run", "--nproc_per_node", str(processes), "--standalone", "-m"]
        log = tmp_path / "log.txt"
        with open(log, "w") as fh:  # a file, not a pipe: a helper process of torchrun's may hold a pipe open after it
            done = subprocess.run([sys.executable, *(launch if processes > 1 else ["-m"]), "structrank",
                                   *map(str, args)], stdout=fh, stderr=fh, timeout=300,
                                  env={**os.environ, "OMP_NUM_THREADS": "1"})
        return done.returncode, log.read_text()

    code, single = run(*common, "--out", tmp_path / "one")
    assert code == 0, single[-2000:]
    code, shared = run(*common, "--out", tmp_path / "two", processes=2)
    assert code == 0, shared[-2000:]
    assert shared.count("wrote ") == 1 and shared.count("choosing on") == 1
    for warning in ("find_unused_parameters", "broadcast_buffers", "dataloader_drop_last"):
        assert warning not in shared
    steps = [json.loads((tmp_path / name / "structrank.json").read_text())["attributes"]["n_steps_"]
             for name in ("one", "two")]
    assert steps[0] == steps[1] == 2 * 24 // 4
    from sentence_transformers.cross_encoder import CrossEncoder

    assert np.isfinite(CrossEncoder(str(tmp_path / "two"), local_files_only=True).predict([("who red ?", "a red"),
                                                                                         ("who ?", "blue")])).all()
    code, refused = run(*common, "--set", "batch_size=3", "--out", tmp_path / "three", processes=2)
    assert code != 0 and "batch_size=3 queries per step cannot be shared by the launcher's 2 processes" in refused
    assert not (tmp_path / "three").exists()


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


def test_average_weights_is_the_mean_of_float_tensors_and_keeps_integer_buffers():
    need("text")
    import torch

    from structrank.learners.cross_encoder import average_weights

    states = [{"w": torch.tensor([1.0, 2.0]), "ids": torch.tensor([0, 1])},
              {"w": torch.tensor([3.0, 6.0]), "ids": torch.tensor([0, 1])},
              {"w": torch.tensor([2.0, 1.0]), "ids": torch.tensor([0, 1])}]
    soup = average_weights(states)
    assert torch.equal(soup["w"], torch.tensor([2.0, 3.0])) and soup["w"].dtype == torch.float32
    assert torch.equal(soup["ids"], torch.tensor([0, 1])) and soup["ids"].dtype == torch.int64


@TEXT
def test_a_soup_averages_fine_tunings_that_share_their_start(encoder, tmp_path, monkeypatch, capsys):
    """``soup=2``: its first fine-tuning is ``soup=1``'s, the model is the mean of both kept networks, its dev value
    is the averaged network's, one after the other or in two processes alike (these draw one bar of both's steps);
    it saves as one CrossEncoder folder."""
    from sentence_transformers import CrossEncoder

    from structrank.learners import CrossEncoderRanker
    from structrank.learners import cross_encoder
    from structrank.model_io import load_model, save_model

    pairs, y, qid = make_pairs(30)
    dev = make_pairs(10, seed=1)
    options = {"loss": "crf-kl", "encoder": encoder, "epochs": 2, "learning_rate": 2e-3, "batch_size": 4,
               "max_length": 64, "device": "cpu", "progress": False, "n_threads": 1, "random_state": 5}
    alone = CrossEncoderRanker(**options).fit(pairs, y, qid, eval_set=dev)
    assert alone.member_epochs_ == [alone.best_epoch_] and alone.soup_dev_ == alone.member_dev_[0]

    averaged = []
    real = cross_encoder.average_weights
    monkeypatch.setattr(cross_encoder, "average_weights", lambda states: averaged.append(states) or real(states))
    soup = CrossEncoderRanker(**options, soup=2).fit(pairs, y, qid, eval_set=dev)
    states = averaged[0]
    first = alone.model_.state_dict()
    assert len(states) == 2 and all(torch_close(states[0][k], first[k]) for k in first)  # soup=1's network
    assert not all(torch_close(states[1][k], first[k]) for k in first)  # the second drew its own order
    mean = real(states)
    assert all(torch_close(soup.model_.state_dict()[k], mean[k]) for k in mean)
    assert soup.member_epochs_[0] == alone.best_epoch_ and soup.member_dev_[0] == pytest.approx(alone.soup_dev_)
    assert soup.score(*dev) == pytest.approx(soup.soup_dev_, abs=1e-6) and len(soup.member_dev_) == 2

    capsys.readouterr()
    parallel = CrossEncoderRanker(**{**options, "n_threads": None, "progress": True}, soup=2,
                                  n_jobs=2).fit(pairs, y, qid, eval_set=dev)
    np.testing.assert_allclose(parallel.predict(dev[0]), soup.predict(dev[0]), rtol=0, atol=1e-4)
    assert parallel.member_epochs_ == soup.member_epochs_
    assert not workers_left(), "the soup's worker processes outlived its fit"
    last = capsys.readouterr().err.replace("\r", "\n").strip().splitlines()[-1]
    steps = 2 * parallel.n_steps_  # both fine-tunings take as many steps
    assert last.startswith("soup of 2 fine-tunings") and f" {steps}/{steps} " in last, last

    path = tmp_path / "soup"
    save_model(soup, path)
    loaded = load_model(path)
    assert loaded.soup == 2 and list(loaded.member_epochs_) == soup.member_epochs_
    np.testing.assert_allclose(CrossEncoder(str(path)).predict(dev[0]), soup.predict(dev[0]), rtol=0, atol=1e-5)

    # without eval_set each fine-tuning gives its last epoch, and no dev value is claimed
    blind = CrossEncoderRanker(**{**options, "epochs": 1}, soup=2).fit(pairs, y, qid)
    assert len(averaged) == 3 and not hasattr(blind, "member_dev_") and blind.n_epochs_ == 1
    assert all(torch_close(blind.model_.state_dict()[k], v) for k, v in real(averaged[-1]).items())

    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(ValueError, match="n_jobs=2 under the launcher's 2 processes"):
        CrossEncoderRanker(**options, soup=2, n_jobs=2).fit(pairs, y, qid)


@TEXT
def test_a_failed_fine_tuning_in_a_worker_is_raised_and_its_workers_end():
    """A fine-tuning that fails in its worker process is raised in the caller, and the pool's workers are gone."""
    from structrank.learners.cross_encoder import _in_processes

    with pytest.raises(AttributeError, match="_fine_tune"):
        _in_processes(2, [(None,) * 7] * 3)
    assert not workers_left()


def workers_left() -> list:
    """This process's children but the resource trackers (the one each process keeps for its life, started by any
    use of multiprocessing): the command lines of the worker processes still alive."""
    import psutil

    return [" ".join(child.cmdline()) for child in psutil.Process().children(recursive=True)
            if not any("resource_tracker" in part for part in child.cmdline())]


def torch_close(a, b):
    import torch

    return bool(torch.allclose(a.float(), b.float(), rtol=0, atol=1e-6))
