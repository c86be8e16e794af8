"""Question-candidate similarity features for answer reranking, without external resources.

``QAFeaturizer`` turns (question, candidate) pairs into a dense float64 matrix. Its features are
listed one by one, with definition and range, in ``FEATURES`` below and in docs/QA_FEATURES.md.
They follow the "simple textual similarity" setting of the paper (Barron-Cedeno et al. 2016:
cosines, longest common substring/subsequence, Jaccard, containment, greedy string tiling) plus
the count baselines of WikiQA (Yang et al. 2015) and candidate-side answer cues.

Why the crosses: in a linear ranker, a feature that is the same for every candidate of a
question (its wh-word, its length) adds the same amount to every score of the list and cancels
out of the ranking. Question type therefore enters only crossed with candidate-side cues
("a when-question and the candidate has a year"), so that each type weighs the cues its own way.

Vocabulary counts are done with scikit-learn's CountVectorizer over the texts being transformed;
the only fitted state is the document frequency of each word in the training texts (for idf,
Cnt/WgtCnt and BM25) and their average length, saved as JSON. Sequence comparisons (LCS, longest
common substring, greedy string tiling) are numba loops over all pairs at once.

There are 38 plain features, then the question type crossed with the 6 candidate-side values of
``CROSSED``. ``PAPER_FEATURES`` names the columns of the paper's own feature list (haponchyk2018's
``paper`` feature set).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, CountVectorizer
from sklearn.preprocessing import normalize

from structrank.atomic import write_text_atomic
from structrank.errors import DataFormatError, DataValidationError
from structrank.numba_cache import njit

# -- text analysis --------------------------------------------------------------------------------

#: Penn Treebank escapes in the TREC data, put back so that both corpora tokenise alike.
_PTB = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-LCB-": "{", "-RCB-": "}", "``": '"', "''": '"'}
_PTB_RE = re.compile("|".join(re.escape(k) for k in _PTB))
# A number keeps its decimal point and thousands separators; everything else is runs of letters/digits.
_TOKEN_RE = re.compile(r"\d+(?:[.,]\d+)*|[^\W_]+")
_YEAR_RE = re.compile(r"1[0-9]{3}|20[0-9]{2}")
_DIGIT_RE = re.compile(r"\d")

STOP_WORDS = frozenset(ENGLISH_STOP_WORDS)
_MONTHS = {"january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec"}
_DATE_WORDS = _MONTHS | {"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
                         "century", "centuries", "decade", "decades", "bc", "bce"}
_MONEY_WORDS = {"dollar", "dollars", "euro", "euros", "pound", "pounds", "cents", "yen", "usd", "worth", "cost",
                "costs", "price", "revenue", "budget"}
_CAUSE_WORDS = {"because", "due", "cause", "caused", "causes", "causing", "reason", "reasons", "result",
                "resulted", "results", "since", "therefore", "thus", "lead", "leads", "led", "order"}
_PERSON_WORDS = {"he", "she", "his", "her", "him", "born", "who", "whom", "whose"}
_DEFINITION_RE = re.compile(r"\b(?:is|are|was|were)\s+(?:a|an|the|one)\b|\brefers?\s+to\b|\bknown\s+as\b|\bdefined\s+as\b")
_LOCATION_RE = re.compile(r"\b(?:in|at|near|from|of)\s+(?:the\s+)?[A-Z]")

#: Question types: the wh-word class of the question.
QUESTION_TYPES = ("what", "who", "when", "where", "why", "how", "how many", "how much", "which", "other")
_WH = {"what", "which", "who", "whom", "whose", "when", "where", "why", "how"}
# "how old", "how long" ... ask for a quantity, like "how many".
_HOW_MEASURE = {"many", "old", "long", "far", "big", "tall", "deep", "high", "large", "fast", "often", "wide",
                "heavy", "hot", "cold", "small", "short", "low"}
# "what year", "which country" ... ask what "when" and "where" ask.
_WHAT_TIME = {"year", "years", "date", "time", "century", "decade", "day", "month", "era", "period"}
_WHAT_PLACE = {"country", "countries", "city", "cities", "state", "states", "place", "county", "continent",
               "region", "island", "river", "province", "capital", "location", "town"}


def normalise_text(text: str) -> str:
    """Text with TREC's PTB escapes undone and runs of white space made one space."""
    return " ".join(_PTB_RE.sub(lambda m: _PTB[m.group(0)], text).split())


def tokenize(text: str) -> list:
    """Word tokens with their case: numbers (``1,234.5``) and runs of letters or digits.

    >>> tokenize("How much is 1,234.5 -LRB- Euros -RRB- 's worth?")
    ['How', 'much', 'is', '1,234.5', 'Euros', 's', 'worth']
    """
    return _TOKEN_RE.findall(normalise_text(text))


def question_type(question: str) -> str:
    """The wh-word class of a question, one of ``QUESTION_TYPES``.

    The first wh-word counts ("in what year" is a what-question) with three refinements:
    "how many"/"how old"/"how long"/... are "how many" (a count or a measure), "how much" is
    "how much", and "what"/"which" followed by a time word (year, date ...) is "when", by a
    place word (country, city ...) "where". No wh-word: "other".

    >>> [question_type(q) for q in ["how old is he", "In what year did it end?", "which city", "Name a fruit"]]
    ['how many', 'when', 'where', 'other']
    """
    tokens = [t.lower() for t in tokenize(question)]
    for i, token in enumerate(tokens):
        if token not in _WH:
            continue
        following = tokens[i + 1] if i + 1 < len(tokens) else ""
        if token == "how":
            if following == "much":
                return "how much"
            return "how many" if following in _HOW_MEASURE else "how"
        if token in ("what", "which"):
            if following in _WHAT_TIME:
                return "when"
            if following in _WHAT_PLACE:
                return "where"
            return token
        return "who" if token in ("whom", "whose") else token
    return "other"


class _Analysis:
    """What the features need of one text, computed once per distinct text."""

    __slots__ = ("lower", "content", "capitalised", "numbers", "joined", "text")

    def __init__(self, text: str):
        tokens = tokenize(text)
        self.text = normalise_text(text)
        self.lower = [t.lower() for t in tokens]
        self.content = [t for t in self.lower if t not in STOP_WORDS]
        # The first word is capitalised by convention, not because it is a name.
        self.capitalised = {t.lower() for t in tokens[1:] if t[0].isupper()}
        self.numbers = {t.replace(",", "") for t in tokens if t[0].isdigit()}
        self.joined = " ".join(self.lower)


def _ngrams(tokens, n):
    return [" ".join(tokens[i:i + n]) for i in range(len(tokens) - n + 1)]


# -- sequence comparisons (numba) -----------------------------------------------------------------


@njit(cache=True, nogil=True)
def _lcs_length(a, b):
    """Longest common subsequence of two integer sequences (two-row dynamic programme)."""
    m = b.shape[0]
    prev = np.zeros(m + 1, dtype=np.int64)
    cur = np.zeros(m + 1, dtype=np.int64)
    for i in range(a.shape[0]):
        for j in range(m):
            if a[i] == b[j]:
                cur[j + 1] = prev[j] + 1
            else:
                cur[j + 1] = max(prev[j + 1], cur[j])
        prev, cur = cur, prev
    return prev[m]


@njit(cache=True, nogil=True)
def _longest_common_substring(a, b):
    """Length of the longest contiguous run shared by two sequences."""
    m = b.shape[0]
    prev = np.zeros(m + 1, dtype=np.int64)
    cur = np.zeros(m + 1, dtype=np.int64)
    best = 0
    for i in range(a.shape[0]):
        for j in range(m):
            if a[i] == b[j]:
                cur[j + 1] = prev[j] + 1
                if cur[j + 1] > best:
                    best = cur[j + 1]
            else:
                cur[j + 1] = 0
        prev, cur = cur, prev
    return best


@njit(cache=True, nogil=True)
def _greedy_string_tiling(a, b, min_match):
    """Tokens covered by greedy string tiling (Wise 1993): tiles of >= min_match shared tokens.

    Each round finds the longest matches between unmarked tokens, lays every one that does
    not overlap an earlier tile, and marks its tokens; rounds go on while they find matches
    longer than the minimum. Returns the number of tokens of ``a`` covered by tiles.
    """
    n, m = a.shape[0], b.shape[0]
    marked_a = np.zeros(n, dtype=np.bool_)
    marked_b = np.zeros(m, dtype=np.bool_)
    starts_a = np.empty(n * m + 1, dtype=np.int64)
    starts_b = np.empty(n * m + 1, dtype=np.int64)
    covered = 0
    while True:
        longest = min_match
        found = 0
        for p in range(n):
            if marked_a[p]:
                continue
            for t in range(m):
                if marked_b[t]:
                    continue
                j = 0
                while p + j < n and t + j < m and a[p + j] == b[t + j] and not marked_a[p + j] and not marked_b[t + j]:
                    j += 1
                if j > longest:
                    longest = j
                    found = 0
                if j == longest:
                    starts_a[found] = p
                    starts_b[found] = t
                    found += 1
        for k in range(found):
            p, t = starts_a[k], starts_b[k]
            free = True
            for j in range(longest):
                if marked_a[p + j] or marked_b[t + j]:
                    free = False
                    break
            if free:
                for j in range(longest):
                    marked_a[p + j] = True
                    marked_b[t + j] = True
                covered += longest
        if longest == min_match:
            return covered


@njit(cache=True, nogil=True)
def _sequence_features(tokens, token_offsets, chars, char_offsets, left, right, min_match):
    """Per pair: token LCS, longest common character substring, GST coverage (token counts)."""
    n_pairs = left.shape[0]
    out = np.zeros((n_pairs, 3), dtype=np.int64)
    for p in range(n_pairs):
        q, c = left[p], right[p]
        qt = tokens[token_offsets[q]:token_offsets[q + 1]]
        ct = tokens[token_offsets[c]:token_offsets[c + 1]]
        out[p, 0] = _lcs_length(qt, ct)
        out[p, 1] = _longest_common_substring(chars[char_offsets[q]:char_offsets[q + 1]],
                                              chars[char_offsets[c]:char_offsets[c + 1]])
        out[p, 2] = _greedy_string_tiling(qt, ct, min_match)
    return out


# -- the feature list -----------------------------------------------------------------------------

#: Plain features: name -> (range, definition). Q is the question, C the candidate; word sets are
#: lowercased tokens; "content" words exclude scikit-learn's English stop words.
FEATURES = {
    "cos_tf_words": ("[0,1]", "cosine of the word unigram count vectors of Q and C (all words)"),
    "cos_tf_content": ("[0,1]", "cosine of the content-word count vectors"),
    "cos_tfidf_words": ("[0,1]", "cosine of the tf-idf unigram vectors (idf from the training texts)"),
    "cos_tfidf_content": ("[0,1]", "cosine of the tf-idf content-word vectors"),
    "cos_bigrams": ("[0,1]", "cosine of the word bigram count vectors"),
    "cos_trigrams": ("[0,1]", "cosine of the word trigram count vectors"),
    "cos_char_2_4": ("[0,1]", "cosine of the character 2-4-gram count vectors (within words, lowercased)"),
    "jaccard_words": ("[0,1]", "|Q & C| / |Q | C| over word sets"),
    "jaccard_content": ("[0,1]", "Jaccard over content-word sets"),
    "jaccard_bigrams": ("[0,1]", "Jaccard over word bigram sets"),
    "jaccard_trigrams": ("[0,1]", "Jaccard over word trigram sets"),
    "containment_q_in_c": ("[0,1]", "|Q & C| / |Q| over content-word sets: share of the question found in C"),
    "containment_c_in_q": ("[0,1]", "|Q & C| / |C| over content-word sets: share of the candidate found in Q"),
    "containment_bigrams": ("[0,1]", "share of the question's word bigrams found in C"),
    "lcsubstring_chars": ("[0,1]", "longest common substring of the lowercased token strings, in characters, "
                                   "divided by the length of Q's string"),
    "lcsubsequence_tokens": ("[0,1]", "longest common token subsequence divided by |Q| (tokens)"),
    "lcsubsequence_tokens_sym": ("[0,1]", "longest common token subsequence times 2 divided by |Q| + |C|"),
    "gst_q": ("[0,1]", "tokens of Q covered by greedy string tiling (min. match 3 tokens) divided by |Q|"),
    "gst_sym": ("[0,1]", "greedy string tiling coverage times 2 divided by |Q| + |C|"),
    "number_overlap": ("[0,1]", "share of the numbers of Q found in C (0 when Q has none)"),
    "capitalised_overlap_q": ("[0,1]", "share of Q's capitalised words (not sentence-initial) found in C"),
    "capitalised_overlap_c": ("[0,1]", "share of C's capitalised words (not sentence-initial) that are words of Q"),
    "cnt": ("[0, |Q|]", "Cnt of Yang et al. (2015): distinct content words of Q that occur in C"),
    "wgt_cnt": ("[0, inf)", "WgtCnt: the idf-weighted Cnt, sum of idf(w) over those words"),
    "wgt_cnt_norm": ("[0,1]", "WgtCnt divided by the summed idf of Q's content words"),
    "bm25": ("[0, inf)", "Okapi BM25 of C for the content words of Q (k1 = 1.2, b = 0.75, average length "
                         "from the training candidates)"),
    "log_len_c": ("[0, inf)", "log(1 + number of tokens of C)"),
    "len_diff": ("[0,1]", "| |C| - |Q| | / (|C| + |Q|), tokens"),
    "cue_number": ("{0,1}", "C has a number (a token with a digit)"),
    "cue_year": ("{0,1}", "C has a year: a token 1000-2099 (the 1990s gives 1990)"),
    "cue_date": ("{0,1}", "C has a month, weekday, 'century', 'decade' or 'BC'"),
    "cue_percent": ("{0,1}", "C has '%', 'percent' or 'per cent'"),
    "cue_money": ("{0,1}", "C has a currency sign or a money word (dollars, worth, cost, price ...)"),
    "cue_new_capitalised": ("[0,1]", "share of C's capitalised words (not sentence-initial) that are not words of Q: "
                                     "a name the question does not already give"),
    "cue_definition": ("{0,1}", "C has a defining pattern: 'is/are/was/were a/an/the/one', 'refers to', "
                                "'known as', 'defined as'"),
    "cue_cause": ("{0,1}", "C has a causal word (because, due, cause(d), reason, result, since, led ...)"),
    "cue_person": ("{0,1}", "C has a personal pronoun (he, she, his, her, him, who, whom, whose) or 'born'"),
    "cue_location": ("{0,1}", "C has 'in/at/near/from/of (the) X' with X capitalised"),
}

#: The columns of the paper's own feature list (Haponchyk & Moschitti 2018, Sec. 5.1, after
#: Barron-Cedeno et al. 2016): cosine, longest common substring/subsequence, Jaccard, word
#: containment and greedy string tiling, and nothing else. Our cues, counts (Cnt, WgtCnt, BM25),
#: overlaps of numbers and names, lengths and question-type crosses are not in it; its PTK
#: similarity is rebuilt in structrank_lab.nlp.syntax, and its ESA similarity needs a Wikipedia index
#: that is not available here.
PAPER_FEATURES = (
    "cos_tf_words", "cos_tf_content", "cos_tfidf_words", "cos_tfidf_content", "cos_bigrams", "cos_trigrams",
    "cos_char_2_4", "jaccard_words", "jaccard_content", "jaccard_bigrams", "jaccard_trigrams", "containment_q_in_c",
    "containment_c_in_q", "containment_bigrams", "lcsubstring_chars", "lcsubsequence_tokens",
    "lcsubsequence_tokens_sym", "gst_q", "gst_sym",
)

#: Candidate-side values each question type is crossed with: qtype=T*cue is the cue when the
#: question is of type T, else 0 (10 types x 6 = 60 columns). Chosen by 5-fold cross-validation
#: on WikiQA train among a few sets (these had the best cross-validated MAP, above no crosses and above
#: crossing all ten cues); dev and test were not used for the choice.
CROSSED = ("cue_number", "cue_year", "cue_date", "cue_definition", "cue_new_capitalised", "log_len_c")


def feature_names(crosses: bool = True) -> list:
    """Column names of ``QAFeaturizer(crosses=...)``, in column order."""
    names = list(FEATURES)
    if crosses:
        names += [f"qtype={t}*{cue}" for t in QUESTION_TYPES for cue in CROSSED]
    return names


def _rowwise_dot(A, B):
    return np.asarray(A.multiply(B).sum(axis=1)).ravel()


def _safe_div(num, den):
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    return np.divide(num, den, out=np.zeros_like(num), where=den > 0)


def _counts(docs, vectorizer=None):
    """Count matrix of documents (lists of terms, by default) and its vocabulary.

    The columns are in term order and sorted within each row, so a row's sums run over its
    terms in the same order whatever else is in the batch: rows come out identical bit for bit.
    """
    vectorizer = vectorizer or CountVectorizer(analyzer=lambda terms: terms, lowercase=False)
    try:
        M = vectorizer.fit_transform(docs).tocsr().astype(np.float64)
    except ValueError:  # every document empty: no vocabulary
        return sp.csr_matrix((len(docs), 1), dtype=np.float64), {}
    M.sort_indices()
    return M, vectorizer.vocabulary_


# -- the featurizer -------------------------------------------------------------------------------

STATE_FORMAT = "structrank-qa-featurizer"
STATE_VERSION = 1


class QAFeaturizer:
    """Similarity features of (question, candidate) pairs, fitted on training data.

    Parameters
    ----------
    crosses : bool, default True
        Add the question-type crosses (``CROSSED``); without them the 38 plain features only.
    min_match : int, default 3
        Minimum tile length of greedy string tiling, in tokens.

    Attributes
    ----------
    n_documents_ : int
        Distinct training texts (questions and candidates) the document frequencies count.
    document_frequency_ : dict
        Lowercased word -> number of distinct training texts that contain it.
    average_length_ : float
        Mean length of the distinct training candidates in tokens (for BM25).
    feature_names_ : list of str

    Examples
    --------
    >>> from structrank.qa.readers import QAData
    >>> import numpy as np
    >>> data = QAData(["when was it built?"], ["It was built in 1901.", "It is red."],
    ...               np.array([1, 0]), np.array(["q", "q"]), ["a", "b"])
    >>> f = QAFeaturizer().fit(data)
    >>> X = f.transform(data)
    >>> X.shape == (2, len(f.feature_names_)), X[:, f.feature_names_.index("qtype=when*cue_year")].tolist()
    (True, [1.0, 0.0])
    """

    def __init__(self, crosses: bool = True, min_match: int = 3):
        self.crosses = crosses
        self.min_match = min_match

    # fit / transform ------------------------------------------------------------------------
    def fit(self, data) -> "QAFeaturizer":
        """Count document frequencies over the distinct questions and candidates of ``data``."""
        texts = list(dict.fromkeys(data.questions + data.candidates))
        if not texts:
            raise DataValidationError("QAFeaturizer.fit needs at least one question or candidate")
        df = Counter()
        for text in texts:
            df.update(set(_Analysis(text).lower))
        lengths = [len(tokenize(c)) for c in dict.fromkeys(data.candidates)]
        self.n_documents_ = len(texts)
        self.document_frequency_ = dict(sorted(df.items()))
        self.average_length_ = float(np.mean(lengths)) if lengths else 1.0
        self.feature_names_ = feature_names(self.crosses)
        return self

    def transform(self, data) -> np.ndarray:
        """Features of every candidate of ``data`` (a QAData): float64, n_candidates x n_features."""
        return self.transform_pairs(data.pair_questions(), data.candidates)

    def fit_transform(self, data) -> np.ndarray:
        return self.fit(data).transform(data)

    def transform_pairs(self, questions, candidates) -> np.ndarray:
        """Features of aligned lists of question and candidate texts (one row per pair).

        A row depends only on its own pair and the fitted state, never on the other pairs.
        """
        if not hasattr(self, "document_frequency_"):
            raise DataValidationError("QAFeaturizer is not fitted: call fit() or load() first")
        questions, candidates = list(questions), list(candidates)
        if len(questions) != len(candidates):
            raise DataValidationError(f"{len(questions)} questions for {len(candidates)} candidates")
        if not questions:
            return np.zeros((0, len(self.feature_names_)))
        pool = list(dict.fromkeys(questions + candidates))
        index = {t: i for i, t in enumerate(pool)}
        left = np.array([index[q] for q in questions], dtype=np.int64)
        right = np.array([index[c] for c in candidates], dtype=np.int64)
        texts = [_Analysis(t) for t in pool]
        columns = {}
        columns.update(self._vector_features(texts, left, right))
        columns.update(self._sequence_features(texts, left, right))
        columns.update(self._entity_and_length_features(texts, left, right))
        columns.update(_cue_features(texts, right))
        if self.crosses:
            types = np.array([QUESTION_TYPES.index(question_type(pool[i])) for i in left])
            for k, t in enumerate(QUESTION_TYPES):
                on = (types == k).astype(np.float64)
                for cue in CROSSED:
                    columns[f"qtype={t}*{cue}"] = on * columns[cue]
        X = np.column_stack([columns[name] for name in self.feature_names_]).astype(np.float64)
        if not np.all(np.isfinite(X)):  # a bug, never the input's fault
            raise AssertionError("QAFeaturizer produced a non-finite value")
        return X

    # feature groups -------------------------------------------------------------------------
    def _df(self, vocabulary, n_columns):
        """Training document frequency of each column (0 for a word never seen in training)."""
        df = np.zeros(n_columns)
        for term, column in vocabulary.items():
            df[column] = self.document_frequency_.get(term, 0)
        return df

    def _idf(self, vocabulary, n_columns):
        """Smoothed idf, ln((1 + N) / (1 + df)) + 1, of each column (sklearn's formula).

        A word never seen in training has df = 0 and the largest idf: rare words weigh most.
        """
        return np.log((1.0 + self.n_documents_) / (1.0 + self._df(vocabulary, n_columns))) + 1.0

    def _bm25_idf(self, vocabulary, n_columns):
        """BM25's idf, ln(1 + (N - df + 0.5) / (df + 0.5)), never negative."""
        df = self._df(vocabulary, n_columns)
        return np.log1p((self.n_documents_ - df + 0.5) / (df + 0.5))

    def _vector_features(self, texts, left, right):
        out = {}
        words, words_vocab = _counts([t.lower for t in texts])
        content, content_vocab = _counts([t.content for t in texts])
        bigrams, _ = _counts([_ngrams(t.lower, 2) for t in texts])
        trigrams, _ = _counts([_ngrams(t.lower, 3) for t in texts])
        char_counts, _ = _counts([t.joined for t in texts],
                                 CountVectorizer(analyzer="char_wb", ngram_range=(2, 4), lowercase=False))

        def cosine(M, weights=None):
            if weights is not None:
                M = M @ sp.diags(weights)
            M = normalize(M)
            return np.minimum(_rowwise_dot(M[left], M[right]), 1.0)  # 1 + 1e-16 from rounding is 1

        def set_sizes(M):
            B = (M > 0).astype(np.float64)
            inter = _rowwise_dot(B[left], B[right])
            size = np.asarray(B.sum(axis=1)).ravel()
            return inter, size[left], size[right]

        out["cos_tf_words"] = cosine(words)
        out["cos_tf_content"] = cosine(content)
        out["cos_tfidf_words"] = cosine(words, self._idf(words_vocab, words.shape[1]))
        out["cos_tfidf_content"] = cosine(content, self._idf(content_vocab, content.shape[1]))
        out["cos_bigrams"] = cosine(bigrams)
        out["cos_trigrams"] = cosine(trigrams)
        out["cos_char_2_4"] = cosine(char_counts)
        for name, M in (("words", words), ("content", content), ("bigrams", bigrams), ("trigrams", trigrams)):
            inter, nq, nc = set_sizes(M)
            out[f"jaccard_{name}"] = _safe_div(inter, nq + nc - inter)
            if name == "content":
                out["containment_q_in_c"] = _safe_div(inter, nq)
                out["containment_c_in_q"] = _safe_div(inter, nc)
                # Cnt / WgtCnt (Yang et al. 2015): question content words present in the candidate.
                Bq = (content[left] > 0).astype(np.float64)
                Bc = (content[right] > 0).astype(np.float64)
                idf = self._idf(content_vocab, content.shape[1])
                shared = Bq.multiply(Bc) @ sp.diags(idf)
                out["cnt"] = inter
                out["wgt_cnt"] = np.asarray(shared.sum(axis=1)).ravel()
                out["wgt_cnt_norm"] = _safe_div(out["wgt_cnt"], np.asarray((Bq @ sp.diags(idf)).sum(axis=1)).ravel())
                out["bm25"] = self._bm25(content[right], Bq, content_vocab, right, texts)
            if name == "bigrams":
                out["containment_bigrams"] = _safe_div(inter, nq)
        return out

    def _bm25(self, C, Bq, vocabulary, right, texts, k1=1.2, b=0.75):
        lengths = np.array([len(texts[i].lower) for i in right], dtype=np.float64)
        norm = k1 * (1.0 - b + b * lengths / max(self.average_length_, 1e-9))
        C = C.tocsr(copy=True)
        row_norm = np.repeat(norm, np.diff(C.indptr))
        C.data = C.data * (k1 + 1.0) / (C.data + row_norm)
        return np.asarray((C.multiply(Bq) @ sp.diags(self._bm25_idf(vocabulary, C.shape[1]))).sum(axis=1)).ravel()

    def _sequence_features(self, texts, left, right):
        ids = {}
        token_seqs = [np.array([ids.setdefault(w, len(ids)) for w in t.lower], dtype=np.int64) for t in texts]
        char_seqs = [np.frombuffer(t.joined.encode("utf-32-le"), dtype=np.uint32).astype(np.int64) for t in texts]
        token_offsets = np.concatenate(([0], np.cumsum([s.size for s in token_seqs]))).astype(np.int64)
        char_offsets = np.concatenate(([0], np.cumsum([s.size for s in char_seqs]))).astype(np.int64)
        flat_tokens = np.concatenate(token_seqs) if token_offsets[-1] else np.zeros(0, dtype=np.int64)
        flat_chars = np.concatenate(char_seqs) if char_offsets[-1] else np.zeros(0, dtype=np.int64)
        counts = _sequence_features(flat_tokens, token_offsets, flat_chars, char_offsets, left, right,
                                    int(self.min_match))
        nq = np.diff(token_offsets)[left].astype(np.float64)
        nc = np.diff(token_offsets)[right].astype(np.float64)
        q_chars = np.diff(char_offsets)[left].astype(np.float64)
        return {
            "lcsubsequence_tokens": _safe_div(counts[:, 0], nq),
            "lcsubsequence_tokens_sym": _safe_div(2.0 * counts[:, 0], nq + nc),
            "lcsubstring_chars": _safe_div(counts[:, 1], q_chars),
            "gst_q": _safe_div(counts[:, 2], nq),
            "gst_sym": _safe_div(2.0 * counts[:, 2], nq + nc),
        }

    def _entity_and_length_features(self, texts, left, right):
        n = left.shape[0]
        number, cap_q, cap_c, new_cap, log_len, len_diff = (np.zeros(n) for _ in range(6))
        for p, (i, j) in enumerate(zip(left, right)):
            q, c = texts[i], texts[j]
            if q.numbers:
                number[p] = len(q.numbers & c.numbers) / len(q.numbers)
            if q.capitalised:
                cap_q[p] = len(q.capitalised & set(c.lower)) / len(q.capitalised)
            if c.capitalised:
                cap_c[p] = len(c.capitalised & set(q.lower)) / len(c.capitalised)
                # A name the question does not mention: often the answer to who/where/what.
                new_cap[p] = 1.0 - cap_c[p]
            log_len[p] = math.log1p(len(c.lower))
            total = len(c.lower) + len(q.lower)
            len_diff[p] = abs(len(c.lower) - len(q.lower)) / total if total else 0.0
        return {"number_overlap": number, "capitalised_overlap_q": cap_q, "capitalised_overlap_c": cap_c,
                "cue_new_capitalised": new_cap, "log_len_c": log_len, "len_diff": len_diff}

    # state ----------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """The fitted state as plain JSON-able values."""
        if not hasattr(self, "document_frequency_"):
            raise DataValidationError("QAFeaturizer is not fitted: nothing to save")
        return {
            "format": STATE_FORMAT,
            "version": STATE_VERSION,
            "params": {"crosses": self.crosses, "min_match": self.min_match},
            "feature_names": self.feature_names_,
            "n_documents": self.n_documents_,
            "average_length": self.average_length_,
            "document_frequency": self.document_frequency_,
        }

    def save(self, path) -> None:
        """Write the fitted state as JSON, atomically (no pickle: the file is data, not code)."""
        write_text_atomic(path, json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":")) + "\n")

    @classmethod
    def from_dict(cls, state: dict, path=None) -> "QAFeaturizer":
        def bad(problem, field=None):
            return DataFormatError(path, None, problem, field)

        if not isinstance(state, dict) or state.get("format") != STATE_FORMAT:
            raise bad(f"not a QA featurizer state (no \"format\": \"{STATE_FORMAT}\")", "format")
        if state.get("version") != STATE_VERSION:
            raise bad(f"state version {state.get('version')!r}; this structrank reads version {STATE_VERSION}", "version")
        params = state.get("params")
        if not isinstance(params, dict) or set(params) != {"crosses", "min_match"}:
            raise bad("\"params\" must hold crosses and min_match", "params")
        if not isinstance(params["crosses"], bool) or not isinstance(params["min_match"], int) or params["min_match"] < 1:
            raise bad("\"params\" must be crosses (true/false) and min_match (an integer >= 1)", "params")
        featurizer = cls(**params)
        names = feature_names(featurizer.crosses)
        if state.get("feature_names") != names:
            raise bad("its feature names differ from this version's; fit the featurizer again", "feature_names")
        n_documents, average = state.get("n_documents"), state.get("average_length")
        if not isinstance(n_documents, int) or n_documents < 1:
            raise bad("\"n_documents\" must be a positive integer", "n_documents")
        if not isinstance(average, (int, float)) or not math.isfinite(average) or average <= 0:
            raise bad("\"average_length\" must be a positive number", "average_length")
        df = state.get("document_frequency")
        if not isinstance(df, dict) or not all(isinstance(v, int) and 0 < v <= n_documents for v in df.values()):
            raise bad("\"document_frequency\" must map words to counts in 1..n_documents", "document_frequency")
        featurizer.n_documents_ = n_documents
        featurizer.average_length_ = float(average)
        featurizer.document_frequency_ = df
        featurizer.feature_names_ = names
        return featurizer

    @classmethod
    def load(cls, path) -> "QAFeaturizer":
        """Read a state written by ``save``; DataFormatError names the file and the bad field."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise DataFormatError(path, None, "file not found") from None
        except UnicodeDecodeError:
            raise DataFormatError(path, None, "not UTF-8 text") from None
        try:
            state = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DataFormatError(path, exc.lineno, f"not JSON ({exc.msg})") from None
        return cls.from_dict(state, path)


def _cue_features(texts, right):
    """Candidate-side answer cues: does C hold the kind of thing a question type asks for."""
    n = right.shape[0]
    names = ("cue_number", "cue_year", "cue_date", "cue_percent", "cue_money", "cue_definition", "cue_cause",
             "cue_person", "cue_location")
    per_text = {}
    for j in set(right.tolist()):
        c = texts[j]
        words = set(c.lower)
        per_text[j] = (
            bool(_DIGIT_RE.search(c.joined)),
            any(_YEAR_RE.fullmatch(w) for w in c.lower),
            bool(words & _DATE_WORDS),
            "%" in c.text or "percent" in words or "per cent" in c.joined,
            bool(words & _MONEY_WORDS) or any(sign in c.text for sign in "$£€¥"),
            bool(_DEFINITION_RE.search(c.joined)),
            bool(words & _CAUSE_WORDS),
            bool(words & _PERSON_WORDS),
            bool(_LOCATION_RE.search(c.text)),
        )
    values = np.array([per_text[j] for j in right], dtype=np.float64).reshape(n, len(names))
    return {name: values[:, k] for k, name in enumerate(names)}
