"""The baseline rerankers of Jagarlamudi & Daumé (2012): suffix-tag pair features, the word-tag
n-gram features of the "n-gm" rows, and the Collins & Koo (2005) boosting reranker with its
regularised version."""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from structrank.data.nbest import NBestData
from structrank.errors import DataValidationError
from structrank.learners.nbest_boosting import BoostingReranker, _l1_step, reference_pairs
from structrank_lab.nlp.pair_features import suffix_tag_pair_features, word_tag_ngram_features

# ---------------------------------------------------------------------------------------------
# pair features
# ---------------------------------------------------------------------------------------------

SELLING = [("ng", "NN"), ("ng", "DT_NN"), ("ing", "NN"), ("ing", "DT_NN"), ("ling", "NN"), ("ling", "DT_NN")]


def _row(X, vocab, r):
    names = {c: f for f, c in vocab.items()}
    row = X.getrow(r)
    return {names[c]: v for c, v in zip(row.indices, row.data)}


def test_pair_features_paper_example():
    X, vocab = suffix_tag_pair_features([["the", "selling", "pressure"]], [[["DT", "NN", "NN"]]])
    assert sp.isspmatrix_csr(X) and X.shape == (1, len(vocab))
    row = _row(X, vocab, 0)
    for feature in SELLING:                                  # the paper's six features for 'selling'
        assert row[feature] == 1.0
    assert row[("sure", "NN")] == row[("ure", "NN_NN")] == 1.0   # 'pressure' after NN
    assert row[("the", "<s>_DT")] == row[("he", "DT")] == 1.0    # 'the' is its own 3-suffix
    assert len(row) == 16                                    # 2 + 3 + 3 suffixes, 2 features each
    assert set(vocab.values()) == set(range(len(vocab)))
    assert list(vocab) == sorted(vocab)                      # columns in sorted feature order


def test_pair_features_only_selling_features_for_selling():
    X, vocab = suffix_tag_pair_features([["the", "selling"]], [[["DT", "NN"]]])
    row = _row(X, vocab, 0)
    assert {f for f in row if f[0] in ("ng", "ing", "ling")} == set(SELLING)


def test_pair_features_counts_rows_and_candidates_in_order():
    sents = [["a", "dog", "dog"], ["selling"]]
    cands = [[["DT", "NN", "NN"], ["DT", "NN", "VB"]], [["NN"], ["VBG"], ["JJ"]]]
    X, vocab = suffix_tag_pair_features(sents, cands)
    assert X.shape[0] == 5
    r0, r1 = _row(X, vocab, 0), _row(X, vocab, 1)
    assert r0[("og", "NN")] == 2.0 and r0[("dog", "NN_NN")] == 1.0 and r0[("dog", "DT_NN")] == 1.0
    assert r1[("og", "NN")] == 1.0 and r1[("og", "VB")] == 1.0 and r1[("dog", "NN_VB")] == 1.0
    assert not any(f[0] == "a" for f in vocab)                    # one-letter word: no suffix
    assert _row(X, vocab, 3)[("ing", "<s>_VBG")] == 1.0
    assert _row(X, vocab, 4)[("ling", "JJ")] == 1.0
    Xw, vw = suffix_tag_pair_features(sents, cands, short_words="whole")
    rw = _row(Xw, vw, 0)
    assert rw[("a", "DT")] == rw[("a", "<s>_DT")] == 1.0 and rw[("og", "NN")] == 2.0


def test_pair_features_vocabulary_transform_drops_unknown():
    train_X, vocab = suffix_tag_pair_features([["the", "selling", "pressure"]], [[["DT", "NN", "NN"]]])
    X, vocab2 = suffix_tag_pair_features([["selling", "zzz"], ["the"]], [[["NN", "NN"], ["NN", "XX"]], [["DT"]]],
                                         vocabulary=vocab)
    assert vocab2 == vocab
    assert X.shape == (3, train_X.shape[1])
    assert _row(X, vocab, 0) == {("ng", "NN"): 1.0, ("ing", "NN"): 1.0, ("ling", "NN"): 1.0}
    assert _row(X, vocab, 1) == {("ng", "NN"): 1.0, ("ing", "NN"): 1.0, ("ling", "NN"): 1.0}
    assert _row(X, vocab, 2) == {("the", "<s>_DT"): 1.0, ("he", "<s>_DT"): 1.0, ("the", "DT"): 1.0,
                                 ("he", "DT"): 1.0}
    # transforming the training data again gives the training matrix
    again, _ = suffix_tag_pair_features([["the", "selling", "pressure"]], [[["DT", "NN", "NN"]]], vocabulary=vocab)
    assert (again != train_X).nnz == 0


def test_pair_features_bad_inputs():
    with pytest.raises(DataValidationError, match="2 sentences"):
        suffix_tag_pair_features([["a"], ["b"]], [[["DT"]]])
    with pytest.raises(DataValidationError, match="no candidate"):
        suffix_tag_pair_features([["a"]], [[]])
    with pytest.raises(DataValidationError, match="2 tags for 1 words"):
        suffix_tag_pair_features([["a"]], [[["DT", "NN"]]])
    with pytest.raises(DataValidationError, match="string"):
        suffix_tag_pair_features(["a dog"], [[["DT", "NN"]]])


def test_pair_features_larger_input_is_consistent():
    rng = np.random.default_rng(0)
    words = ["walking", "talks", "the", "a", "dogs", "ran", "quickly", ","]
    tags = ["DT", "NN", "NNS", "VB", "VBG", "RB", ","]
    sents = [[words[i] for i in rng.integers(0, len(words), rng.integers(1, 8))] for _ in range(50)]
    cands = [[[tags[i] for i in rng.integers(0, len(tags), len(s))] for _ in range(rng.integers(1, 5))]
             for s in sents]
    X, vocab = suffix_tag_pair_features(sents, cands)
    # each candidate row, recomputed alone, gives the same features
    r = 0
    for s, cs in zip(sents, cands):
        for c in cs:
            alone, _ = suffix_tag_pair_features([s], [[c]], vocabulary=vocab)
            assert (alone != X.getrow(r)).nnz == 0
            r += 1
    assert r == X.shape[0]


def _ngram_reference(words, tags):
    """The n-gram features of one candidate, written out from word_tag_ngram_features' docstring."""
    from collections import Counter

    padded_words = ["", *words, ""]
    padded_tags = ["<s>", "<s>", *tags, "</s>"]
    out = Counter()
    for i, (w, t) in enumerate(zip(words, tags)):
        p, p2 = padded_tags[i + 1], padded_tags[i]
        out.update([("w", w, t), ("w", w, f"{p}_{t}"), ("w-1", padded_words[i], t), ("w+1", padded_words[i + 2], t),
                    ("t", "", t), ("t", "", f"{p}_{t}"), ("t", "", f"{p2}_{p}_{t}")])
    if words:
        out.update([("t", "", f"{tags[-1]}_</s>"), ("t", "", f"{padded_tags[-3]}_{tags[-1]}_</s>")])
    return dict(out)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["a", "the", "dog", "dogs", "ran", ","]), min_size=1, max_size=6),
                min_size=1, max_size=5), st.data())
def test_ngram_features_equal_their_definition(sents, draw):
    cands = [draw.draw(st.lists(st.lists(st.sampled_from(["DT", "NN", "VB", ","]), min_size=len(s), max_size=len(s)),
                                min_size=1, max_size=4)) for s in sents]
    X, vocab = word_tag_ngram_features(sents, cands)
    assert list(vocab) == sorted(vocab) and X.shape == (sum(map(len, cands)), len(vocab))
    rows = [(s, c) for s, cs in zip(sents, cands) for c in cs]
    for r, (s, c) in enumerate(rows):
        assert _row(X, vocab, r) == {k: float(v) for k, v in _ngram_reference(s, c).items()}
    # transforming with the fitted vocabulary gives the same rows; unseen features are dropped
    again, _ = word_tag_ngram_features(sents, cands, vocabulary=vocab)
    assert (again != X).nnz == 0
    other, _ = word_tag_ngram_features([["zzz"]], [[["XX"]]], vocabulary=vocab)
    assert other.shape == (1, len(vocab)) and other.nnz == 0


def test_ngram_features_paper_phrase():
    X, vocab = word_tag_ngram_features([["the", "selling", "pressure"]], [[["DT", "NN", "NN"]]])
    row = _row(X, vocab, 0)
    assert row[("w", "selling", "DT_NN")] == row[("w-1", "the", "NN")] == row[("w+1", "pressure", "NN")] == 1.0
    assert row[("t", "", "NN")] == 2.0 and row[("t", "", "DT_NN_NN")] == 1.0
    assert row[("w-1", "", "DT")] == row[("w+1", "", "NN")] == 1.0        # beyond the sentence
    with pytest.raises(DataValidationError, match="2 tags for 1 words"):
        word_tag_ngram_features([["a"]], [[["DT", "NN"]]])


# ---------------------------------------------------------------------------------------------
# boosting: synthetic n-best problems
# ---------------------------------------------------------------------------------------------

def planted(n_lists=300, n_cand=8, d=200, n_active=6, n_planted=5, base_noise=1.0, seed=0, counts=False):
    """Lists whose candidates' losses are decided by a few planted features (+ a little noise);
    the base score is a noisy view of the loss."""
    rng = np.random.default_rng(seed)
    n = n_lists * n_cand
    rows = np.repeat(np.arange(n), n_active)
    cols = rng.integers(0, d, size=n * n_active)
    X = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n, d))   # duplicates sum: counts
    if not counts:
        X.data[:] = 1.0
    w = np.zeros(d)
    w[:n_planted] = np.where(np.arange(n_planted) % 2 == 0, 2.0, -2.0)
    loss = np.clip(np.round(4 - X @ w + rng.normal(0, 0.3, n)), 0, 10)
    base = -0.3 * loss + rng.normal(0, base_noise, n)
    qid = np.repeat(np.arange(n_lists), n_cand)
    data = NBestData(x=X, y=X, loss=loss, base_score=base, qid=qid, size=np.full(n_lists, 20))
    return X, data


@pytest.fixture(scope="module")
def problem():
    return planted(seed=0), planted(seed=1), planted(seed=2)


def naive_boosting(X, data, n_rounds, smoothing, a0, regularization=None, reg_strength=0.0):
    """Collins & Koo's boosting recomputing every W+/W- from scratch each round (dense, binary)."""
    best, other = reference_pairs(data)
    Xb = (X.toarray() != 0).astype(float)
    delta = Xb[best] - Xb[other]
    margins = a0 * (data.base_score[best] - data.base_score[other])
    w = np.zeros(X.shape[1])
    P = best.size
    curve = [np.exp(-margins).sum() / P]
    for _ in range(n_rounds):
        D = np.exp(-margins) / P
        Z = D.sum()
        wp, wm = (delta > 0).T @ D, (delta < 0).T @ D
        if regularization is None:
            k = int(np.argmax(np.abs(np.sqrt(wp) - np.sqrt(wm))))
            step = 0.5 * math.log((wp[k] + smoothing * Z) / (wm[k] + smoothing * Z))
        else:
            gains = [_l1_step(wp[j], wm[j], w[j], reg_strength)[1] if wp[j] + wm[j] > 0 else 0.0
                     for j in range(w.size)]
            k = int(np.argmax(gains))
            step = _l1_step(wp[k] + smoothing * Z, wm[k] + smoothing * Z, w[k], reg_strength)[0]
        w[k] += step
        margins += step * delta[:, k]
        curve.append(np.exp(-margins).sum() / P)
    return w, np.array(curve)


def test_efficient_update_matches_naive_boosting(problem):
    (X, data), _, _ = problem
    model = BoostingReranker(n_rounds=60, smoothing=0.01, refresh_every=7).fit(X, data)
    w, curve = naive_boosting(X, data, 60, 0.01, model.base_weight_)
    np.testing.assert_allclose(model.train_loss_, curve, rtol=1e-9)
    np.testing.assert_allclose(model.predict(X, data), model.base_weight_ * data.base_score + X @ w, rtol=1e-9,
                               atol=1e-9)


def test_efficient_l1_matches_naive(problem):
    (X, data), _, _ = problem
    model = BoostingReranker(n_rounds=40, regularization="l1", reg_strength=1e-3, smoothing=0.0,
                             refresh_every=9).fit(X, data)
    w, curve = naive_boosting(X, data, 40, 0.0, model.base_weight_, "l1", 1e-3)
    np.testing.assert_allclose(model.train_loss_, curve, rtol=1e-9)
    np.testing.assert_allclose(model.weights_, w, rtol=1e-7, atol=1e-10)


def test_base_weight_minimises_exploss_alone(problem):
    (X, data), _, _ = problem
    model = BoostingReranker(n_rounds=0).fit(X, data)
    best, other = reference_pairs(data)
    b = data.base_score[best] - data.base_score[other]
    grad = -(b * np.exp(-model.base_weight_ * b)).sum() / np.exp(-model.base_weight_ * b).sum()
    assert model.base_weight_ > 0 and abs(grad) < 1e-5
    assert model.n_rounds_ == 0 and not model.weights_.any()
    np.testing.assert_allclose(model.predict(X, data), model.base_weight_ * data.base_score)
    fixed = BoostingReranker(n_rounds=3, base_weight=2.5).fit(X, data)
    assert fixed.base_weight_ == 2.5


@pytest.mark.parametrize("kwargs", [
    {}, {"feature_values": "real"}, {"ties": "skip"}, {"smoothing": 0.1},
    {"regularization": "l1", "reg_strength": 1e-3}, {"regularization": "l2", "reg_strength": 1e-2},
    {"regularization": "l1", "reg_strength": 1e-3, "smoothing": 0.0},
])
def test_exploss_decreases_monotonically(kwargs):
    X, data = planted(seed=3, counts=True)
    model = BoostingReranker(n_rounds=150, refresh_every=40, **kwargs).fit(X, data)
    assert model.n_rounds_run_ == 150 and model.train_loss_.shape == (151,)
    curve = model.objective_curve_
    assert np.all(np.diff(curve) <= 1e-12 * curve[:-1])
    assert curve[-1] < 0.9 * curve[0]
    if "regularization" not in kwargs:
        np.testing.assert_array_equal(model.objective_curve_, model.train_loss_)
        assert np.all(np.diff(model.train_loss_) < 0)


def test_planted_problem_beats_base_scores(problem):
    (X, data), (Xd, dev), (Xt, test) = problem
    base_acc = test.accuracy_of(test.base_score)
    for kwargs in ({}, {"regularization": "l1", "reg_strength": 1e-3}, {"regularization": "l2", "reg_strength": 1e-3}):
        model = BoostingReranker(n_rounds=100, **kwargs).fit(X, data, eval_set=(Xd, dev))
        acc = model.score(Xt, test)
        assert acc > base_acc + 0.01, (kwargs, acc, base_acc)
        assert acc <= test.oracle_accuracy()
        planted_weights = model.weights_[:5]
        assert np.all(np.sign(planted_weights) == [1, -1, 1, -1, 1])   # the deciding features found


@pytest.mark.parametrize("regularization,strength", [("l1", 3e-3), ("l2", 3e-2)])
def test_regularised_weights_are_smaller(problem, regularization, strength):
    (X, data), _, _ = problem
    plain = BoostingReranker(n_rounds=200).fit(X, data)
    reg = BoostingReranker(n_rounds=200, regularization=regularization, reg_strength=strength).fit(X, data)
    assert plain.n_rounds_ == 200
    assert reg.n_rounds_ <= 200
    assert np.linalg.norm(reg.weights_) < np.linalg.norm(plain.weights_)
    assert np.abs(reg.weights_).sum() < np.abs(plain.weights_).sum()
    # the penalised objective is what the regularised model lowers
    penalty = strength * (np.abs(reg.weights_).sum() if regularization == "l1" else 0.5 * (reg.weights_ ** 2).sum())
    assert reg.objective_curve_[-1] == pytest.approx(reg.train_loss_[-1] + penalty, rel=1e-9)


def test_l1_can_zero_weights(problem):
    (X, data), _, _ = problem
    strong = BoostingReranker(n_rounds=300, regularization="l1", reg_strength=3e-2).fit(X, data)
    assert strong.n_rounds_run_ < 300                                 # converged: no feature helps
    assert np.count_nonzero(strong.weights_) < 20


@pytest.mark.parametrize("eval_every", [1, 7])
def test_dev_chooses_number_of_rounds(problem, eval_every):
    (X, data), (Xd, dev), _ = problem
    model = BoostingReranker(n_rounds=80, eval_every=eval_every).fit(X, data, eval_set=(Xd, dev))
    expected_rounds = list(range(0, 81, eval_every))
    if expected_rounds[-1] != 80:
        expected_rounds.append(80)
    assert model.dev_rounds_.tolist() == expected_rounds
    assert model.dev_curve_.shape == model.dev_rounds_.shape
    assert model.dev_curve_[0] == pytest.approx(dev.accuracy_of(dev.base_score))
    best = int(np.argmax(model.dev_curve_))
    assert model.n_rounds_ == model.dev_rounds_[best] and model.n_rounds_run_ == 80
    assert model.score(Xd, dev) == pytest.approx(model.dev_curve_.max())
    # the kept model is the one trained for n_rounds_ rounds without a dev set
    again = BoostingReranker(n_rounds=model.n_rounds_).fit(X, data)
    np.testing.assert_allclose(again.weights_, model.weights_, atol=1e-12)
    # every curve entry is the dev accuracy of the model truncated at that round
    for r, acc in zip(model.dev_rounds_[:4], model.dev_curve_[:4]):
        w = np.bincount(model.selected_features_[:r], weights=model.steps_[:r], minlength=X.shape[1])
        assert dev.accuracy_of(model.base_weight_ * dev.base_score + Xd @ w) == pytest.approx(acc)


def test_real_valued_features_use_counts():
    X, data = planted(seed=4, counts=True)
    assert X.data.max() > 1
    real = BoostingReranker(n_rounds=50, feature_values="real").fit(X, data)
    binary = BoostingReranker(n_rounds=50).fit(X, data)
    scores = real.predict(X, data)
    np.testing.assert_allclose(scores, real.base_weight_ * data.base_score + X @ real.weights_)
    Xb = X.copy()
    Xb.data[:] = 1.0
    np.testing.assert_allclose(binary.predict(X, data), binary.base_weight_ * data.base_score + Xb @ binary.weights_)


def test_reference_pairs_and_ties():
    X = sp.csr_matrix(np.eye(6))
    data = NBestData(x=X, y=X, loss=[2, 0, 0, 1, 3, 3], base_score=[0, -1, -0.5, 0, 0, 0], qid=[0, 0, 0, 0, 1, 1])
    best, other = reference_pairs(data)
    assert best.tolist() == [2, 2, 2, 4] and other.tolist() == [0, 1, 3, 5]   # tie: higher base score
    best, other = reference_pairs(data, ties="skip")
    assert best.tolist() == [2, 2] and other.tolist() == [0, 3]


# ---------------------------------------------------------------------------------------------
# bad inputs
# ---------------------------------------------------------------------------------------------

def test_bad_inputs_raise_clear_errors(problem):
    (X, data), (Xd, dev), _ = problem
    with pytest.raises(DataValidationError, match="rows but the n-best data has"):
        BoostingReranker().fit(X[:-1], data)
    empty = NBestData(x=sp.csr_matrix((0, 3)), y=sp.csr_matrix((0, 3)), loss=[], base_score=[], qid=[])
    with pytest.raises(DataValidationError, match="no candidates"):
        BoostingReranker().fit(sp.csr_matrix((0, 3)), empty)
    single = NBestData(x=X[:3], y=X[:3], loss=[0, 1, 2], base_score=[0, 0, 0], qid=[0, 1, 2])
    with pytest.raises(DataValidationError, match="no training pairs"):
        BoostingReranker().fit(X[:3], single)
    with pytest.raises(DataValidationError, match=r"eval_set must be a tuple \(dev_features, dev_data\)"):
        BoostingReranker().fit(X, data, eval_set=dev)
    with pytest.raises(DataValidationError, match="eval_set's features has .* columns"):
        BoostingReranker().fit(X, data, eval_set=(Xd[:, :10], dev))
    with pytest.raises(DataValidationError, match="NBestData"):
        BoostingReranker().fit(X, {"loss": data.loss})
    bad = X.copy()
    bad.data[0] = np.nan
    with pytest.raises(DataValidationError, match="NaN"):
        BoostingReranker().fit(bad, data)
    with pytest.raises(DataValidationError, match="not fitted"):
        BoostingReranker().predict(X, data)
    model = BoostingReranker(n_rounds=5).fit(X, data)
    with pytest.raises(DataValidationError, match="columns"):
        model.predict(X[:, :10], data)
    with pytest.raises(DataValidationError, match="rows"):
        model.predict(X, dev.take_lists(np.arange(5)))
    for params in ({"regularization": "l3"}, {"smoothing": 0.0}, {"regularization": "l1", "reg_strength": 0},
                   {"feature_values": "counts"}, {"ties": "drop"}, {"n_rounds": -1}, {"eval_every": 0}):
        with pytest.raises(ValueError):
            BoostingReranker(**params).fit(X, data)
