"""Jackknifed n-best lists and the two reranking views of structrank_lab.nlp.tagging.

- folds are contiguous blocks that cover every sentence once; each sentence's n-best list comes
  from a tagger that was not trained on it (a recording tagger checks), and equals the list of a
  tagger trained on the other folds;
- the sentence view is the bag of suffixes of length 2-4 (character 1- and 2-grams for Chinese),
  the tag view the bag of tag unigrams and bigrams with boundary symbols; vocabularies are fitted
  on training items and drop unseen features;
- the NBestData rows: loss = number of wrong tags, the base score is the tagger's, one identical
  x row per candidate, the gold views, and oracle accuracy >= 1-best accuracy = the tagger's;
- on UD French-Sequoia (data test) the whole pipeline runs and behaves the same way.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from structrank.data.nbest import NBestData
from structrank_lab.nlp.hmm import TrigramHMMTagger, token_accuracy
from structrank_lab.nlp.tagging import (
    ViewVectorizer,
    build_nbest_data,
    char_ngram_features,
    contiguous_folds,
    fit_views,
    jackknife_nbest,
    suffix_features,
    tag_features,
    x_vectorizer,
    y_vectorizer,
)

WORDS = [["The", "dog", "runs", "fast"], ["a", "cat", "runs"], ["the", "dogs", "walked"], ["Dogs", "run"],
         ["a", "fast", "cat", "walked", "home"], ["the", "cat", "sleeps"], ["Cats", "sleep", "at", "home"]]
TAGS = [["DT", "NN", "VBZ", "RB"], ["DT", "NN", "VBZ"], ["DT", "NNS", "VBD"], ["NNS", "VBP"],
        ["DT", "JJ", "NN", "VBD", "NN"], ["DT", "NN", "VBZ"], ["NNS", "VBP", "IN", "NN"]]


# ----------------------------------------------------------------------------------------------
# folds


@given(st.integers(2, 12), st.integers(0, 60))
def test_contiguous_folds_cover_once(n_folds, extra):
    n_items = n_folds + extra
    folds = contiguous_folds(n_items, n_folds)
    assert len(folds) == n_folds
    assert folds[0][0] == 0 and folds[-1][1] == n_items
    assert all(a[1] == b[0] for a, b in zip(folds, folds[1:]))
    sizes = [b - a for a, b in folds]
    assert min(sizes) >= 1 and max(sizes) - min(sizes) <= 1


def test_contiguous_folds_bad_input():
    with pytest.raises(ValueError):
        contiguous_folds(5, 1)
    with pytest.raises(ValueError):
        contiguous_folds(3, 4)


class RecordingTagger:
    """Remembers the sentences it was trained on and refuses to tag any of them."""

    log = []

    def fit(self, words, tags):
        self.seen = {tuple(w) for w in words}
        return self

    def nbest_many(self, sentences, n=10):
        assert not any(tuple(w) in self.seen for w in sentences), "tagged a sentence it was trained on"
        RecordingTagger.log.append([int(w[0][1:]) for w in sentences])
        return [[(tuple("X" for _ in w), -float(k)) for k in range(n)] for w in sentences]


def test_jackknife_uses_contiguous_held_out_blocks():
    words = [[f"s{i}", "w"] for i in range(23)]
    tags = [["A", "B"]] * 23
    RecordingTagger.log = []
    lists = jackknife_nbest(words, tags, n_folds=5, n=3, make_tagger=RecordingTagger)
    assert len(lists) == 23 and all(len(cands) == 3 for cands in lists)
    held_out = RecordingTagger.log
    assert [s for block in held_out for s in block] == list(range(23))  # each once, in order
    assert all(block == list(range(block[0], block[-1] + 1)) for block in held_out)
    assert [len(block) for block in held_out] == [b - a for a, b in contiguous_folds(23, 5)]


def test_jackknife_lists_come_from_the_other_folds():
    lists = jackknife_nbest(WORDS, TAGS, n_folds=3, n=4)
    for a, b in contiguous_folds(len(WORDS), 3):
        tagger = TrigramHMMTagger().fit(WORDS[:a] + WORDS[b:], TAGS[:a] + TAGS[b:])
        assert lists[a:b] == tagger.nbest_many(WORDS[a:b], n=4)


# ----------------------------------------------------------------------------------------------
# views


def test_suffix_features():
    assert suffix_features(["selling"]) == ["ng", "ing", "ling"]
    assert suffix_features(["the", "a", "of"]) == ["he", "the", "of"]
    assert suffix_features(["pressure"], lengths=(1, 2)) == ["e", "re"]


def test_char_ngram_features():
    assert char_ngram_features(["中国人"]) == ["中", "国", "人", "中国", "国人"]
    assert char_ngram_features(["我", "爱"]) == ["我", "爱"]  # no bigram across words


def test_tag_features_include_boundaries():
    assert tag_features(["DT", "NN"]) == ["DT", "NN", "<s> DT", "DT NN", "NN </s>"]
    assert tag_features([]) == ["<s> </s>"]


def test_view_vectorizer_counts_and_drops_unseen():
    vec = ViewVectorizer(suffix_features).fit([["selling", "telling"]])
    assert vec.feature_names_ == ["ing", "ling", "ng"]
    X = vec.transform([["selling", "telling", "sing"], ["xyz"]])
    assert X.shape == (2, 3) and X.format == "csr"
    row = dict(zip(vec.feature_names_, X[0].toarray().ravel()))
    assert row == {"ing": 3.0, "ling": 2.0, "ng": 3.0}
    assert X[1].nnz == 0
    with pytest.raises(ValueError):
        x_vectorizer("words")


# ----------------------------------------------------------------------------------------------
# NBestData


def make_data(n=5):
    tagger = TrigramHMMTagger().fit(WORDS, TAGS)
    test_words = [["the", "dog", "sleeps"], ["A", "cat", "walked", "fast"], ["Dogs", "run", "home"]]
    test_tags = [["DT", "NN", "VBZ"], ["DT", "NN", "VBD", "RB"], ["NNS", "VBP", "NN"]]
    lists = tagger.nbest_many(test_words, n=n)
    x_vec, y_vec = fit_views(WORDS, TAGS, tagger.nbest_many(WORDS, n=n))
    return tagger, test_words, test_tags, lists, build_nbest_data(test_words, test_tags, lists, x_vec, y_vec, 100)


def test_build_nbest_data_rows():
    tagger, words, gold, lists, data = make_data()
    assert isinstance(data, NBestData)
    assert data.n_lists == 3
    candidates = [(s, tags, score) for s, cands in enumerate(lists) for tags, score in cands]
    assert data.x.shape[0] == len(candidates)
    np.testing.assert_array_equal(data.qid, [100 + s for s, _, _ in candidates])
    np.testing.assert_array_equal(data.loss, [sum(a != b for a, b in zip(t, gold[s])) for s, t, _ in candidates])
    np.testing.assert_array_equal(data.base_score, [score for _, _, score in candidates])
    np.testing.assert_array_equal(data.size, [3, 4, 3])
    for q in range(data.n_lists):
        rows = data.x[data.offsets[q]:data.offsets[q + 1]].toarray()
        assert (rows == data.gold_x[q].toarray()).all()  # the sentence's row, repeated
    # the y row of a candidate counts its unigrams and bigrams
    _, y_vec = fit_views(WORDS, TAGS, tagger.nbest_many(WORDS, n=5))
    assert "<s> DT" in y_vec.vocabulary_ and "NN </s>" in y_vec.vocabulary_
    first = dict(zip(y_vec.feature_names_, data.y[0].toarray().ravel()))
    expected = {}
    for f in tag_features(lists[0][0][0]):
        if f in y_vec.vocabulary_:
            expected[f] = expected.get(f, 0) + 1
    assert {k: v for k, v in first.items() if v} == expected


def test_oracle_and_one_best_accuracy():
    tagger, words, gold, lists, data = make_data()
    one_best = data.accuracy_of(data.base_score)
    assert one_best == pytest.approx(token_accuracy(tagger.predict(words), gold))
    assert data.oracle_accuracy() >= one_best


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 10))
def test_oracle_grows_with_n(n):
    _, _, _, _, small = make_data(n)
    _, _, _, _, large = make_data(n + 1)
    assert large.oracle_accuracy() >= small.oracle_accuracy() >= small.accuracy_of(small.base_score)


def test_build_nbest_data_checks_alignment():
    _, words, gold, lists, _ = make_data()
    x_vec, y_vec = fit_views(WORDS, TAGS)
    with pytest.raises(ValueError):
        build_nbest_data(words[:2], gold, lists, x_vec, y_vec)
    with pytest.raises(ValueError):
        build_nbest_data(words, gold, [[]] + lists[1:], x_vec, y_vec)
    assert y_vectorizer().fit([["A"]]).transform([["B"]]).nnz == 0


@pytest.mark.data
def test_french_pipeline(data_root):
    from structrank_lab.nlp.conllu import load_tagged

    words, tags, kind = load_tagged("fr", "train", data_dir=data_root)
    assert kind == "upos"
    lists = jackknife_nbest(words, tags, n_folds=10, n=10)
    x_vec, y_vec = fit_views(words, tags, lists, "suffix")
    data = build_nbest_data(words, tags, lists, x_vec, y_vec)
    one_best = data.accuracy_of(data.base_score)
    assert 0.9 < one_best < data.oracle_accuracy()
    # jackknifed lists are harder than lists of the tagger that saw the sentences
    seen = TrigramHMMTagger().fit(words, tags)
    assert one_best < seen.score(words, tags)
