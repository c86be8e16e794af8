"""QA similarity features: the sequence kernels against brute force, ranges, invariances, state files."""

import itertools
import json

import numpy as np
import pytest

from structrank.errors import DataFormatError, DataValidationError
from structrank.qa.features import (
    CROSSED,
    FEATURES,
    QUESTION_TYPES,
    QAFeaturizer,
    _greedy_string_tiling,
    _lcs_length,
    _longest_common_substring,
    feature_names,
    question_type,
    tokenize,
)
from structrank.qa.readers import QAData

QUESTION = "When was the Eiffel Tower in Paris built?"
CANDIDATES = [
    "The Eiffel Tower was built in 1889 for the World's Fair.",
    "The Eiffel Tower is a wrought-iron lattice tower in Paris.",
    "It is the most-visited paid monument in the world.",
    "Gustave Eiffel's company designed and built the tower between January 1887 and March 1889.",
    "About 7 million people, 75% of them foreigners, visit it every year.",
    "Paris is the capital of France.",
]


def qa(question=QUESTION, candidates=CANDIDATES, labels=None, position=None):
    n = len(candidates)
    labels = np.array(labels if labels is not None else [1] + [0] * (n - 1))
    return QAData([question], list(candidates), labels, np.array(["q"] * n), [f"d{i}" for i in range(n)],
                  position=position)


@pytest.fixture(scope="module")
def fitted():
    train = QAData(
        ["who wrote hamlet?", "when was the eiffel tower built?"],
        ["Hamlet is a tragedy by William Shakespeare.", "The play is set in Denmark.",
         "The tower was built in 1889.", "The tower is in Paris.", "The the the the."],
        np.array([1, 0, 1, 0, 0]), np.array(["a", "a", "b", "b", "b"]), list("vwxyz"))
    return QAFeaturizer().fit(train)


def column(featurizer, X, name):
    return X[:, featurizer.feature_names_.index(name)]


# -- sequence kernels against brute force ---------------------------------------------------------


def brute_lcs(a, b):
    for k in range(min(len(a), len(b)), 0, -1):
        subsequences = set(itertools.combinations(b, k))
        if any(s in subsequences for s in itertools.combinations(a, k)):
            return k
    return 0


def brute_substring(a, b):
    best = 0
    for i in range(len(a)):
        for j in range(len(b)):
            k = 0
            while i + k < len(a) and j + k < len(b) and a[i + k] == b[j + k]:
                k += 1
            best = max(best, k)
    return best


def test_lcs_and_longest_common_substring_equal_brute_force():
    rng = np.random.default_rng(0)
    for _ in range(200):
        a = rng.integers(0, 4, rng.integers(0, 8))
        b = rng.integers(0, 4, rng.integers(0, 8))
        assert _lcs_length(a, b) == brute_lcs(a.tolist(), b.tolist())
        assert _longest_common_substring(a, b) == brute_substring(a.tolist(), b.tolist())


@pytest.mark.parametrize("a, b, covered", [
    ([1, 2, 3, 4, 5], [1, 2, 3, 4, 5], 5),
    ([1, 2, 3, 9, 4, 5, 6], [4, 5, 6, 8, 1, 2, 3], 6),  # two tiles, in either order
    ([1, 2], [1, 2], 0),  # shorter than the minimum match
    ([1, 2, 3, 1, 2, 3], [1, 2, 3], 3),  # a token is covered once
    ([1, 2, 3, 4, 5, 6, 7], [5, 6, 7, 1, 2, 3, 4], 7),  # longest first (1-4), then 5-7
    ([1, 2, 3, 4], [9, 2, 3, 4, 1, 2, 3], 3),  # 2-3-4 is laid; 1-2-3 then overlaps it
])
def test_greedy_string_tiling_examples(a, b, covered):
    assert _greedy_string_tiling(np.array(a), np.array(b), 3) == covered


def test_greedy_string_tiling_bounds():
    rng = np.random.default_rng(1)
    for _ in range(200):
        a = rng.integers(0, 3, rng.integers(0, 12))
        b = rng.integers(0, 3, rng.integers(0, 12))
        covered = _greedy_string_tiling(a, b, 3)
        longest = brute_substring(a.tolist(), b.tolist())
        assert covered <= min(a.size, b.size)
        assert covered >= (longest if longest >= 3 else 0)  # the first tile is the longest match


# -- text analysis --------------------------------------------------------------------------------


def test_tokenize_and_question_types():
    assert tokenize("-LRB- 1,234.5 dollars -RRB- ``quoted''") == ["1,234.5", "dollars", "quoted"]
    cases = {
        "what is a glacier cave?": "what", "who wrote hamlet": "who", "whose book is it": "who",
        "when did it end": "when", "in what year did it end": "when", "where is paris": "where",
        "which country has the most lakes": "where", "why is the sky blue": "why", "how are caves formed": "how",
        "how many states are there": "how many", "how old is kirk douglas": "how many",
        "how much is a tablespoon": "how much", "which band played": "which", "name a fruit": "other",
    }
    assert {q: question_type(q) for q in cases} == cases
    assert set(cases.values()) == set(QUESTION_TYPES)


# -- features -------------------------------------------------------------------------------------


def test_names_ranges_and_finiteness(fitted):
    X = fitted.transform(qa())
    assert X.dtype == np.float64 and X.shape == (len(CANDIDATES), len(feature_names()))
    assert fitted.feature_names_ == list(FEATURES) + [f"qtype={t}*{c}" for t in QUESTION_TYPES for c in CROSSED]
    assert np.all(np.isfinite(X))
    for name, (value_range, _) in FEATURES.items():
        values = column(fitted, X, name)
        assert values.min() >= 0, name
        if value_range in ("[0,1]", "{0,1}"):
            assert values.max() <= 1 + 1e-12, name
        if value_range == "{0,1}":
            assert set(values.tolist()) <= {0.0, 1.0}, name
    assert QAFeaturizer(crosses=False).fit(qa()).transform(qa()).shape[1] == len(FEATURES)


def test_identical_text_is_maximally_similar(fitted):
    X = fitted.transform_pairs([QUESTION, QUESTION], [QUESTION, "Completely unrelated words here."])
    for name in ("cos_tf_words", "cos_tf_content", "cos_tfidf_words", "cos_tfidf_content", "cos_bigrams",
                 "cos_trigrams", "cos_char_2_4", "jaccard_words", "jaccard_content", "jaccard_bigrams",
                 "jaccard_trigrams", "containment_q_in_c", "containment_c_in_q", "containment_bigrams",
                 "lcsubstring_chars", "lcsubsequence_tokens", "lcsubsequence_tokens_sym", "gst_q", "gst_sym",
                 "wgt_cnt_norm"):
        assert column(fitted, X, name)[0] == pytest.approx(1.0), name
        # no shared word; characters are shared by any two English texts
        assert column(fitted, X, name)[1] == (pytest.approx(0.0) if "char" not in name else pytest.approx(0.1, abs=0.1))


def test_idf_weights_rare_words_more(fitted):
    # "the" is in every training text, "denmark" in one: sharing "denmark" counts for more.
    X = fitted.transform_pairs(["the denmark"] * 2, ["the x y", "denmark x y"])
    assert column(fitted, X, "cos_tf_words")[0] == column(fitted, X, "cos_tf_words")[1]
    assert column(fitted, X, "cos_tfidf_words")[0] < column(fitted, X, "cos_tfidf_words")[1]


def test_texts_without_words(fitted):
    X = fitted.transform_pairs(["?", "?", "x"], ["!", "a b", "x"])
    assert X.shape == (3, len(fitted.feature_names_)) and np.all(np.isfinite(X))
    assert np.all(X[0] == 0)


def test_rows_depend_only_on_their_pair(fitted):
    data = qa()
    X = fitted.transform(data)
    # another batch, another order: the same rows, bit for bit
    order = np.array([4, 0, 5, 2])
    part = fitted.transform_pairs([QUESTION] * order.size, [CANDIDATES[i] for i in order])
    np.testing.assert_array_equal(part, X[order])
    mixed = fitted.transform_pairs(["who wrote hamlet?", QUESTION], ["Shakespeare did.", CANDIDATES[3]])
    np.testing.assert_array_equal(mixed[1], X[3])


def test_position_is_never_a_feature(fitted):
    n = len(CANDIDATES)
    a = fitted.transform(qa(position=np.arange(n)))
    b = fitted.transform(qa(position=np.arange(n)[::-1].copy()))
    np.testing.assert_array_equal(a, b)


def test_no_feature_is_constant_over_a_questions_candidates(fitted):
    # A value shared by every candidate of a question cancels out of a linear ranking; such
    # values (question type, question length) may only enter crossed with candidate cues.
    X = fitted.transform(qa())
    constant = [n for n, col in zip(fitted.feature_names_, X.T) if np.all(col == col[0]) and col[0] != 0]
    assert constant == []


def test_question_type_crosses_follow_candidate_cues(fitted):
    X = fitted.transform(qa())
    year = column(fitted, X, "qtype=when*cue_year")
    assert year.tolist() == [1, 0, 0, 1, 0, 0]
    assert np.all(column(fitted, X, "qtype=who*cue_year") == 0)
    assert column(fitted, X, "cue_percent").tolist() == [0, 0, 0, 0, 1, 0]
    assert column(fitted, X, "cue_date").tolist() == [0, 0, 0, 1, 0, 0]
    assert column(fitted, X, "number_overlap").tolist() == [0] * 6


# -- state ----------------------------------------------------------------------------------------


def test_state_round_trip_is_json(fitted, tmp_path):
    path = tmp_path / "state.json"
    fitted.save(path)
    state = json.loads(path.read_text(encoding="utf-8"))
    assert state["format"] == "structrank-qa-featurizer" and state["feature_names"] == fitted.feature_names_
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]  # no temporary file left behind
    loaded = QAFeaturizer.load(path)
    np.testing.assert_array_equal(loaded.transform(qa()), fitted.transform(qa()))


@pytest.mark.parametrize("edit, field", [
    (lambda s: s.update(format="other"), "format"),
    (lambda s: s.update(version=99), "version"),
    (lambda s: s["feature_names"].pop(), "feature_names"),
    (lambda s: s["document_frequency"].update(tower=-1), "document_frequency"),
    (lambda s: s.update(average_length=0), "average_length"),
    (lambda s: s["params"].update(min_match="3"), "params"),
])
def test_bad_state_files_are_named(fitted, tmp_path, edit, field):
    state = fitted.to_dict()
    state = json.loads(json.dumps(state))
    edit(state)
    path = tmp_path / "state.json"
    path.write_text(json.dumps(state), encoding="utf-8")
    with pytest.raises(DataFormatError) as info:
        QAFeaturizer.load(path)
    assert info.value.field == field and str(path) in str(info.value)


def test_not_json_and_not_fitted(tmp_path):
    path = tmp_path / "state.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(DataFormatError, match="not JSON"):
        QAFeaturizer.load(path)
    with pytest.raises(DataValidationError, match="not fitted"):
        QAFeaturizer().transform(qa())
    with pytest.raises(DataValidationError):
        QAFeaturizer().fit(qa()).transform_pairs(["a"], ["b", "c"])


# -- WikiQA ---------------------------------------------------------------------------------------


@pytest.mark.data
@pytest.mark.slow
def test_wikiqa_ranksvm_reaches_the_target(data_root):
    from structrank.learners.baselines import RankSVM
    from structrank.metrics import evaluate
    from structrank.qa.readers import load_qa

    train, test = load_qa("wikiqa", "train", data_root=data_root), load_qa("wikiqa", "test", data_root=data_root)
    featurizer = QAFeaturizer().fit(train)
    # C = 0.1 is the value chosen on WikiQA dev from the grid 0.01..100
    model = RankSVM(C=0.1).fit(featurizer.transform(train), train.labels, qid=train.qid)
    scores = model.predict(featurizer.transform(test))
    result = evaluate(test.labels, scores, test.qid, ["map"], "trec", docids=test.docids)
    assert result.metrics["map"] >= 0.64
