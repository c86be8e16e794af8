"""From tagged sentences to reranking data: jackknifed n-best lists and the two views of a candidate.

Jagarlamudi & Daumé (2012, Sec. 4) rerank the 10 best tag sequences of a trigram HMM. The
n-best lists of the training sentences must come from taggers that did not see them, else the
lists are far better than at test time and the reranker learns to trust the tagger: the training
set is cut into folds and each fold is tagged by a tagger trained on the others ("multi-fold
cross-validation like Collins and Koo (2005)"). The folds are *contiguous blocks* of the
treebank: UD sentences come in document order, and round-robin folds would put a sentence's
neighbours -- same names, same rare words -- into the training data of the tagger that tags it.

The reranker sees each candidate through two separate views (Sec. 4), and never a joint feature:

- x, the sentence: the bag of suffixes of length 2 to 4 of its words (a word shorter than a
  length has no suffix of that length); for Chinese the bag of character 1- and 2-grams of each
  word (within words: the treebank's segmentation is given). The same row for every candidate.
- y, the candidate tag sequence: the bag of its tag unigrams and tag bigrams, the bigrams over
  the sequence padded with ``<s>`` and ``</s>`` (a sentence of n words has n + 1 bigrams).
  Feature names are ``"NN"`` and ``"DT NN"`` (tags hold no spaces).

A :class:`ViewVectorizer` maps the feature bags to count rows of a CSR matrix with a vocabulary
fitted on training data; features it has not seen are dropped. :func:`build_nbest_data` puts it
all in a :class:`structrank.data.nbest.NBestData`: loss = number of wrong tags, base score = the
tagger's log score, size = sentence length, and the views of the reference tags as gold_x/gold_y.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import scipy.sparse as sp

from structrank.data.nbest import NBestData
from structrank.errors import DataValidationError
from structrank_lab.nlp.conllu import load_tagged
from structrank_lab.nlp.hmm import BOUNDARY_END, BOUNDARY_START, TrigramHMMTagger

SUFFIX_LENGTHS = (2, 3, 4)
CHAR_NGRAM_ORDERS = (1, 2)


# ----------------------------------------------------------------------------------------------
# jackknifed n-best lists


def contiguous_folds(n_items, n_folds):
    """(start, stop) of ``n_folds`` contiguous blocks covering 0..n_items, sizes differing by at most 1."""
    if isinstance(n_folds, bool) or not isinstance(n_folds, (int, np.integer)) or n_folds < 2:
        raise ValueError(f"n_folds must be an integer >= 2, got {n_folds!r}")
    if n_items < n_folds:
        raise ValueError(f"{n_items} sentences cannot make {n_folds} folds")
    bounds = [n_items * k // n_folds for k in range(n_folds + 1)]
    return list(zip(bounds[:-1], bounds[1:]))


def _fold_nbest(make_tagger, train_words, train_tags, held_out, n):
    tagger = make_tagger()
    tagger.fit(train_words, train_tags)
    return tagger.nbest_many(held_out, n=n)


def jackknife_nbest(sentences_words, sentences_tags, n_folds=10, n=10, make_tagger=TrigramHMMTagger, n_jobs=1):
    """The n-best lists of every training sentence, each from a tagger trained without its fold.

    Parameters
    ----------
    sentences_words, sentences_tags : lists of lists of str
        The training treebank, in its own (document) order.
    n_folds : int, default 10
        Contiguous blocks (see :func:`contiguous_folds`); each is tagged by a tagger fitted on
        the other ``n_folds - 1``.
    n : int, default 10
        Candidates per sentence.
    make_tagger : callable, default TrigramHMMTagger
        Returns an unfitted tagger with ``fit(words, tags)`` and ``nbest_many(words, n=n)``.
    n_jobs : int, default 1
        Folds run in parallel with joblib when > 1 (or -1 for every core).

    Returns a list aligned with the sentences, of lists of (tags tuple, log score), best first.
    """
    words = [list(w) for w in sentences_words]
    tags = [list(t) for t in sentences_tags]
    if len(words) != len(tags):
        raise DataValidationError(f"{len(words)} word sequences but {len(tags)} tag sequences")
    folds = contiguous_folds(len(words), n_folds)
    jobs = [(make_tagger, words[:a] + words[b:], tags[:a] + tags[b:], words[a:b], n) for a, b in folds]
    if n_jobs == 1:
        parts = [_fold_nbest(*job) for job in jobs]
    else:
        # deferred: joblib loads only when the folds run in parallel
        from joblib import Parallel, delayed

        parts = Parallel(n_jobs=n_jobs)(delayed(_fold_nbest)(*job) for job in jobs)
    return [lists for part in parts for lists in part]


# ----------------------------------------------------------------------------------------------
# the two views


def suffix_features(words, lengths=SUFFIX_LENGTHS):
    """The suffixes of each given length of every word.

    >>> suffix_features(["the", "selling"])
    ['he', 'the', 'ng', 'ing', 'ling']
    """
    return [word[len(word) - k:] for word in words for k in lengths if len(word) >= k]


def char_ngram_features(words, orders=CHAR_NGRAM_ORDERS):
    """The character n-grams of each given order within every word."""
    return [word[i:i + k] for word in words for k in orders for i in range(len(word) - k + 1)]


def tag_features(tags):
    """Tag unigrams and the bigrams of ``<s> t1 .. tn </s>``.

    >>> tag_features(["DT", "NN"])
    ['DT', 'NN', '<s> DT', 'DT NN', 'NN </s>']
    """
    padded = [BOUNDARY_START, *tags, BOUNDARY_END]
    return list(tags) + [f"{a} {b}" for a, b in zip(padded[:-1], padded[1:])]


#: the sentence views by name
X_VIEWS = {"suffix": suffix_features, "char": char_ngram_features}


def x_view_for(lang):
    """The sentence view the paper uses for a language: character n-grams for Chinese, else suffixes."""
    return "char" if lang == "zh" else "suffix"


class ViewVectorizer:
    """Bags of string features -> count rows (CSR), over a vocabulary fitted on training items.

    ``analyzer`` maps one item (a sentence's words, a tag sequence) to its list of features.
    Columns are the training features in sorted order; unseen features are dropped.

    Examples
    --------
    >>> vectorizer = ViewVectorizer(lambda words: [word[-2:] for word in words])  # two-letter suffixes
    >>> X = vectorizer.fit_transform([["the", "dog"], ["a", "cat", "sat"]])
    >>> vectorizer.feature_names_, X.toarray().tolist()
    (['a', 'at', 'he', 'og'], [[0.0, 0.0, 1.0, 1.0], [1.0, 2.0, 0.0, 0.0]])
    >>> vectorizer.transform([["the", "bat", "ran"]]).toarray().tolist()  # "an" is unseen: dropped
    [[0.0, 1.0, 1.0, 0.0]]
    """

    def __init__(self, analyzer):
        self.analyzer = analyzer

    def fit(self, items):
        features = set()
        for item in items:
            features.update(self.analyzer(item))
        self.feature_names_ = sorted(features)
        self.vocabulary_ = {name: column for column, name in enumerate(self.feature_names_)}
        return self

    def transform(self, items):
        if not hasattr(self, "vocabulary_"):
            raise DataValidationError("this ViewVectorizer is not fitted yet")
        vocabulary = self.vocabulary_
        indptr, indices, data = [0], [], []
        for item in items:
            counts = Counter(vocabulary[f] for f in self.analyzer(item) if f in vocabulary)
            columns = sorted(counts)
            indices.extend(columns)
            data.extend(counts[c] for c in columns)
            indptr.append(len(indices))
        return sp.csr_matrix((np.asarray(data, dtype=np.float64), np.asarray(indices, dtype=np.int64),
                              np.asarray(indptr, dtype=np.int64)), shape=(len(indptr) - 1, len(vocabulary)))

    def fit_transform(self, items):
        items = list(items)
        return self.fit(items).transform(items)


def x_vectorizer(view="suffix"):
    """An unfitted ViewVectorizer of the sentence view ``view`` (``suffix`` or ``char``)."""
    if view not in X_VIEWS:
        raise ValueError(f"view must be one of {', '.join(X_VIEWS)}, got {view!r}")
    return ViewVectorizer(X_VIEWS[view])


def y_vectorizer():
    """An unfitted ViewVectorizer of the tag view."""
    return ViewVectorizer(tag_features)


def fit_views(train_words, train_tags, train_nbest=(), view="suffix"):
    """(x vectorizer, y vectorizer) fitted on training sentences, their tags and their candidates."""
    x_vec = x_vectorizer(view).fit(train_words)
    candidates = [tags for lists in train_nbest for tags, _ in lists]
    y_vec = y_vectorizer().fit(list(train_tags) + candidates)
    return x_vec, y_vec


def hamming(candidate, reference):
    """Number of positions where two equally long tag sequences differ."""
    if len(candidate) != len(reference):
        raise DataValidationError(f"a candidate of {len(candidate)} tags for a reference of {len(reference)}")
    return sum(a != b for a, b in zip(candidate, reference))


def build_nbest_data(sentences_words, gold_tags, nbest_lists, x_vec, y_vec, qid_start=0):
    """An NBestData of the n-best lists: one query per sentence, candidates in the tagger's order.

    ``nbest_lists[i]`` is sentence i's list of (tags, log score), as from ``nbest_many`` or
    :func:`jackknife_nbest`; qids are ``qid_start + i``.
    """
    if not len(sentences_words) == len(gold_tags) == len(nbest_lists):
        raise DataValidationError(f"{len(sentences_words)} sentences, {len(gold_tags)} references and "
                                  f"{len(nbest_lists)} n-best lists")
    counts = np.array([len(lists) for lists in nbest_lists], dtype=np.int64)
    if np.any(counts == 0):
        raise DataValidationError(f"sentence {int(np.argmin(counts))} has an empty n-best list")
    candidates = [tags for lists in nbest_lists for tags, _ in lists]
    gold_x = x_vec.transform(sentences_words)
    owner = np.repeat(np.arange(len(nbest_lists)), counts)
    loss = np.array([hamming(c, gold_tags[s]) for c, s in zip(candidates, owner.tolist())], dtype=np.float64)
    return NBestData(
        x=gold_x[owner],
        y=y_vec.transform(candidates),
        loss=loss,
        base_score=np.array([score for lists in nbest_lists for _, score in lists], dtype=np.float64),
        qid=qid_start + owner,
        gold_x=gold_x,
        gold_y=y_vec.transform(gold_tags),
        size=np.array([len(words) for words in sentences_words], dtype=np.int64),
    )


def reranking_data(lang, n=10, n_folds=10, data_dir=None, make_tagger=TrigramHMMTagger, n_jobs=1):
    """The reranking data of one UD language: train (jackknifed), dev and test NBestData.

    The dev and test lists come from a tagger trained on the whole training split. Returns a dict
    with ``train``, ``dev``, ``test`` (NBestData), ``tagger``, ``x_vectorizer``, ``y_vectorizer``
    and ``kind`` (the tag column).
    """
    train_words, train_tags, kind = load_tagged(lang, "train", data_dir=data_dir)
    train_lists = jackknife_nbest(train_words, train_tags, n_folds=n_folds, n=n, make_tagger=make_tagger,
                                  n_jobs=n_jobs)
    tagger = make_tagger().fit(train_words, train_tags)
    x_vec, y_vec = fit_views(train_words, train_tags, train_lists, x_view_for(lang))
    out = dict(train=build_nbest_data(train_words, train_tags, train_lists, x_vec, y_vec),
               tagger=tagger, x_vectorizer=x_vec, y_vectorizer=y_vec, kind=kind)
    qid_start = len(train_words)
    for split in ("dev", "test"):
        words, tags, _ = load_tagged(lang, split, kind=kind, data_dir=data_dir)
        out[split] = build_nbest_data(words, tags, tagger.nbest_many(words, n=n), x_vec, y_vec, qid_start)
        qid_start += len(words)
    return out


__all__ = [
    "ViewVectorizer",
    "X_VIEWS",
    "build_nbest_data",
    "char_ngram_features",
    "contiguous_folds",
    "fit_views",
    "hamming",
    "jackknife_nbest",
    "reranking_data",
    "suffix_features",
    "tag_features",
    "x_vectorizer",
    "x_view_for",
    "y_vectorizer",
]
