"""Suffix-tag pair features for the baseline rerankers of Jagarlamudi & Daumé III (2012).

Sec. 4.1 of the paper gives the Collins & Koo (2005) boosting reranker and its regularised
version (Huang et al., 2007) joint input-output features, so that they see the same
information as the two-view models: for each word and its candidate tag, the pairs
(suffix, tag) and (suffix, previous-tag_tag) for the suffixes of length 2, 3 and 4. For
'selling' in "the/DT selling/NN pressure/NN":

    (ng, NN), (ng, DT_NN), (ing, NN), (ing, DT_NN), (ling, NN), (ling, DT_NN)

Choices the paper leaves open, made here:

- a word has no suffix of a length greater than its own (the literal reading of "suffixes of
  length two to four", and what structrank_lab.nlp.tagging.suffix_features, the two-view models'
  word view, does), so "the" gives "he" and "the", and one-character tokens ("," or "a") give
  no features; with ``short_words="whole"`` such a word contributes itself instead (Python's
  ``word[-4:]``, distinct suffixes once each), so "," gives ",";
- the previous tag of the first word is ``"<s>"``;
- features are counted per candidate (a pair occurring at two positions counts 2).

Features are keyed ``(suffix, tag)`` and ``(suffix, prev + "_" + tag)``, exactly the paper's
notation. Implementation: every distinct word's suffixes and every tag are mapped to integers
once; the distinct (token, previous tag, tag) triples of all candidates (the candidates of a
sentence share most of theirs) are expanded to integer feature keys with numpy, the keys mapped
to columns by a sorted search, and each candidate's row gathered from its tokens' triples in a
numba loop. 12,500 sentences x 10 candidates take a few seconds.

``word_tag_ngram_features`` gives Table 2's "n-gm" rows, our reading of the paper's unlisted
"n-gram features": (word, tag), (word, previous tag_tag), (previous word, tag), (next word, tag)
and tag 1-3-grams. It shares the candidate-token coding and the CSR assembly over the distinct
token contexts that a list's candidates share.
"""

from __future__ import annotations

from itertools import chain

import numpy as np
import scipy.sparse as sp

from structrank.errors import DataValidationError
from structrank.numba_cache import njit

START = "<s>"

__all__ = ["END", "START", "suffix_tag_pair_features", "word_tag_ngram_features"]


def _validate(sentences_words, candidates_tags):
    if len(sentences_words) != len(candidates_tags):
        raise DataValidationError(
            f"suffix_tag_pair_features: {len(sentences_words)} sentences but candidate tag sequences for "
            f"{len(candidates_tags)}")
    for s, (words, cands) in enumerate(zip(sentences_words, candidates_tags)):
        if isinstance(words, str):
            raise DataValidationError(f"sentence {s} is a string; pass each sentence as a list of words")
        if len(cands) == 0:
            raise DataValidationError(f"sentence {s} has no candidate tag sequences")
        n = len(words)
        for c, tags in enumerate(cands):
            if isinstance(tags, str):
                raise DataValidationError(f"sentence {s}, candidate {c} is a string; pass a list of tags")
            if len(tags) != n:
                raise DataValidationError(
                    f"sentence {s}, candidate {c}: {len(tags)} tags for {n} words")


def suffix_tag_pair_features(sentences_words, candidates_tags, vocabulary=None, suffix_lengths=(2, 3, 4),
                             short_words="skip"):
    """Counts of (suffix, tag) and (suffix, prev_tag) pairs, one CSR row per candidate.

    Parameters
    ----------
    sentences_words : list of list of str
        The sentences, each a list of words.
    candidates_tags : list of list of list of str
        Aligned with ``sentences_words``: for each sentence, its candidate tag sequences (each as
        long as the sentence), in n-best order.
    vocabulary : dict or None
        ``None`` to fit: every feature seen becomes a column (columns in sorted feature order).
        A dict ``feature -> column`` (from an earlier call) to transform: features not in it are
        dropped and the matrix has ``max(column) + 1`` columns.
    suffix_lengths : tuple of int, default (2, 3, 4)
        The suffix lengths (the paper: two to four).
    short_words : {"skip", "whole"}, default "skip"
        A word shorter than a suffix length: no suffix of that length ("skip") or the whole
        word in its place ("whole").

    Returns
    -------
    features : scipy.sparse.csr_matrix, shape (n_candidates, n_features), float64
        Rows sentence by sentence, candidates in order; sorted column indices.
    vocabulary : dict
        ``(suffix, tag)`` or ``(suffix, prev + "_" + tag)`` -> column, e.g. ``("ing", "NN")`` and
        ``("ing", "DT_NN")``; when transforming, the one passed in.

    Examples
    --------
    >>> X, vocab = suffix_tag_pair_features([["the", "selling", "pressure"]], [[["DT", "NN", "NN"]]])
    >>> float(X[0, vocab[("ing", "DT_NN")]]), float(X[0, vocab[("ling", "NN")]]), X.shape
    (1.0, 1.0, (1, 16))
    """
    _validate(sentences_words, candidates_tags)
    if short_words not in ("whole", "skip"):
        raise ValueError(f"short_words must be 'whole' or 'skip', got {short_words!r}")
    lengths = tuple(int(k) for k in suffix_lengths)
    if not lengths or min(lengths) < 1:
        raise ValueError(f"suffix_lengths must be positive integers, got {suffix_lengths!r}")
    n_rows = sum(len(c) for c in candidates_tags)

    # ---- integer codes: suffixes of each distinct word, and tags (0 is the start symbol) ----
    suffix_index: dict[str, int] = {}
    word_suffixes: dict[str, list[int]] = {}
    tok_suf_ptr = [0]          # CSR over the tokens of all sentences: their suffix ids
    tok_suf = []
    for words in sentences_words:
        for w in words:
            ids = word_suffixes.get(w)
            if ids is None:
                seen = []
                for k in lengths:
                    if len(w) < k and short_words == "skip":
                        continue
                    s = w[-k:]
                    if s and s not in seen:
                        seen.append(s)
                ids = [suffix_index.setdefault(s, len(suffix_index)) for s in seen]
                word_suffixes[w] = ids
            tok_suf.extend(ids)
            tok_suf_ptr.append(len(tok_suf))
    tok_suf_ptr = np.asarray(tok_suf_ptr, dtype=np.int64)
    tok_suf = np.asarray(tok_suf, dtype=np.int64)
    n_suf_of_tok = np.diff(tok_suf_ptr)
    row_start, tok, tags, prev, _, tag_names = _candidate_tokens(sentences_words, candidates_tags, n_rows)
    n_suffixes, n_tags = len(suffix_index), len(tag_names)
    uni_span = n_suffixes * n_tags           # unigram keys in [0, uni_span), bigram keys after

    # ---- distinct (token, prev, tag) triples: the candidates of a sentence share most ----
    triple_of = np.unique((tok * n_tags + prev) * n_tags + tags, return_inverse=True)
    triples, inv = triple_of[0], triple_of[1].ravel()
    u_tag = triples % n_tags
    u_prev = (triples // n_tags) % n_tags
    u_tok = triples // (n_tags * n_tags)
    n_suf = n_suf_of_tok[u_tok]
    occ = np.repeat(np.arange(triples.size, dtype=np.int64), n_suf)
    offs = np.arange(occ.size, dtype=np.int64) - np.repeat(np.cumsum(n_suf) - n_suf, n_suf)
    suf = tok_suf[tok_suf_ptr[u_tok[occ]] + offs]
    uni = suf * n_tags + u_tag[occ]
    bi = uni_span + (suf * n_tags + u_prev[occ]) * n_tags + u_tag[occ]
    keys = np.stack([uni, bi], axis=1).ravel()      # triple u's keys: keys[ptr[u]:ptr[u+1]]
    triple_ptr = np.zeros(triples.size + 1, dtype=np.int64)
    np.cumsum(2 * n_suf, out=triple_ptr[1:])

    # ---- the features present, and their columns ----
    present = _sorted_unique(keys)
    suffix_names = np.empty(n_suffixes, dtype=object)
    for s, i in suffix_index.items():
        suffix_names[i] = s
    names = []
    for key in present.tolist():
        if key < uni_span:
            s, t = divmod(key, n_tags)
            names.append((suffix_names[s], tag_names[t]))
        else:
            sp_, t = divmod(key - uni_span, n_tags)
            s, p = divmod(sp_, n_tags)
            names.append((suffix_names[s], f"{tag_names[p]}_{tag_names[t]}"))
    return _assemble(present, names, keys, vocabulary, row_start, inv, triple_ptr, n_rows)


#: the templates of :func:`word_tag_ngram_features`, in the order of their key spaces
NGRAM_TEMPLATES = ("w", "w", "w-1", "w+1", "t", "t", "t")
END = "</s>"


def word_tag_ngram_features(sentences_words, candidates_tags, vocabulary=None):
    """Word-tag and tag n-gram features of every candidate (Table 2's "n-gm" rerankers), one CSR row each.

    The paper runs its boosting baselines "with n-gram features" too, without listing them; this
    is our reading, n-grams of words and tags around each position i (counted per candidate):

    - ``("w", w_i, t_i)`` and ``("w", w_i, t_{i-1}_t_i)``: the pair features of Sec. 4.1 with the
      whole word in place of its suffixes;
    - ``("w-1", w_{i-1}, t_i)`` and ``("w+1", w_{i+1}, t_i)``: the neighbouring words (``""`` beyond
      the sentence);
    - ``("t", "", t_i)``, ``("t", "", t_{i-1}_t_i)``, ``("t", "", t_{i-2}_t_{i-1}_t_i)``: tag unigrams,
      bigrams and trigrams over ``<s> <s> t_1 .. t_n </s>`` (the last word adds the bigram and the
      trigram ending in ``</s>``).

    Parameters and returns are those of :func:`suffix_tag_pair_features` (names are 3-tuples).

    >>> X, vocab = word_tag_ngram_features([["the", "selling"]], [[["DT", "NN"]]])
    >>> [f for f in vocab if f[:2] == ("w", "selling")]
    [('w', 'selling', 'DT_NN'), ('w', 'selling', 'NN')]
    >>> float(X[0, vocab[("t", "", "<s>_DT_NN")]]), float(X[0, vocab[("t", "", "DT_NN_</s>")]])
    (1.0, 1.0)
    """
    _validate(sentences_words, candidates_tags)
    n_rows = sum(len(c) for c in candidates_tags)
    word_index = {"": 0}                           # 0: beyond the sentence
    tok_word = np.fromiter((word_index.setdefault(w, len(word_index)) for words in sentences_words for w in words),
                           dtype=np.int64)
    sent_len = np.fromiter(map(len, sentences_words), dtype=np.int64, count=len(sentences_words))
    first = np.zeros(tok_word.size, dtype=bool)
    last = np.zeros(tok_word.size, dtype=bool)
    ends = np.cumsum(sent_len)[sent_len > 0]
    first[ends - sent_len[sent_len > 0]] = True
    last[ends - 1] = True
    prev_word = np.where(first, 0, np.roll(tok_word, 1))
    next_word = np.where(last, 0, np.roll(tok_word, -1))
    row_start, tok, tags, prev, prev2, tag_names = _candidate_tokens(sentences_words, candidates_tags, n_rows)
    tag_names = tag_names + [END]
    nw, nt = len(word_index), len(tag_names)
    end = nt - 1
    sizes = (nw * nt, nw * nt * nt, nw * nt, nw * nt, nt, nt * nt, nt * nt * nt)
    offset = np.concatenate(([0], np.cumsum(sizes)))

    # ---- distinct (token, tag two back, previous tag, tag): the candidates of a sentence share most ----
    units, inv = np.unique(((tok * nt + prev2) * nt + prev) * nt + tags, return_inverse=True)
    inv = inv.ravel()
    u_t, u_p, u_p2, u_tok = units % nt, (units // nt) % nt, (units // (nt * nt)) % nt, units // (nt ** 3)
    w = tok_word[u_tok]
    K = np.full((units.size, 9), -1, dtype=np.int64)
    K[:, 0] = offset[0] + w * nt + u_t
    K[:, 1] = offset[1] + (w * nt + u_p) * nt + u_t
    K[:, 2] = offset[2] + prev_word[u_tok] * nt + u_t
    K[:, 3] = offset[3] + next_word[u_tok] * nt + u_t
    K[:, 4] = offset[4] + u_t
    K[:, 5] = offset[5] + u_p * nt + u_t
    K[:, 6] = offset[6] + (u_p2 * nt + u_p) * nt + u_t
    at_end = last[u_tok]
    K[at_end, 7] = offset[5] + u_t[at_end] * nt + end
    K[at_end, 8] = offset[6] + (u_p[at_end] * nt + u_t[at_end]) * nt + end
    keys = K[K >= 0]                               # row-major: unit u's keys stay together
    unit_ptr = np.zeros(units.size + 1, dtype=np.int64)
    np.cumsum(7 + 2 * at_end, out=unit_ptr[1:])

    # ---- the features present, and their names ----
    present = _sorted_unique(keys)
    words = list(word_index)
    kinds = np.searchsorted(offset, present, side="right") - 1
    names = []
    for kind, key in zip(kinds.tolist(), (present - offset[kinds]).tolist()):
        if kind in (0, 2, 3):
            word, t = divmod(key, nt)
            names.append((NGRAM_TEMPLATES[kind], words[word], tag_names[t]))
        elif kind == 1:
            wp, t = divmod(key, nt)
            word, p = divmod(wp, nt)
            names.append(("w", words[word], f"{tag_names[p]}_{tag_names[t]}"))
        else:
            parts = []
            for _ in range(kind - 3):
                key, t = divmod(key, nt)
                parts.append(tag_names[t])
            names.append(("t", "", "_".join(reversed(parts))))
    return _assemble(present, names, keys, vocabulary, row_start, inv, unit_ptr, n_rows)


def _candidate_tokens(sentences_words, candidates_tags, n_rows):
    """Every token of every candidate, in row order: (row_start, sentence token, tag, previous tag,
    the tag before that, tag names).

    Tags are coded 0 for ``<s>`` (the previous tags of the first words) and 1.. for the tags in
    sorted order; the sentence token indexes the concatenated words of all sentences.
    """
    sent_len = np.fromiter(map(len, sentences_words), dtype=np.int64, count=len(sentences_words))
    sent_tok_start = np.zeros(len(sentences_words) + 1, dtype=np.int64)
    np.cumsum(sent_len, out=sent_tok_start[1:])
    rows_tags = list(chain.from_iterable(candidates_tags))
    row_len = np.fromiter(map(len, rows_tags), dtype=np.int64, count=n_rows)
    flat_tags = list(chain.from_iterable(rows_tags))
    tag_index: dict[str, int] = {START: 0}
    for t in sorted(set(flat_tags) - {START}):
        tag_index[t] = len(tag_index)
    tags = np.fromiter(map(tag_index.__getitem__, flat_tags), dtype=np.int64, count=len(flat_tags))
    del rows_tags, flat_tags
    row_start = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(row_len, out=row_start[1:])
    n_cands = np.fromiter(map(len, candidates_tags), dtype=np.int64, count=len(candidates_tags))
    first_tok_of_row = np.repeat(sent_tok_start[:-1], n_cands)
    pos = np.arange(tags.size, dtype=np.int64) - np.repeat(row_start[:-1], row_len)
    tok = np.repeat(first_tok_of_row, row_len) + pos
    prev = np.zeros_like(tags)
    prev2 = np.zeros_like(tags)
    if tags.size:
        prev[1:] = tags[:-1]
        prev[pos == 0] = 0
        prev2[1:] = prev[:-1]
        prev2[pos <= 1] = 0
    return row_start, tok, tags, prev, prev2, list(tag_index)


def _assemble(present, names, keys, vocabulary, row_start, inv, unit_ptr, n_rows):
    """The CSR rows and the vocabulary from integer feature keys.

    ``present`` are the distinct keys (sorted) and ``names`` their feature names; unit u (a
    distinct token context shared by candidates) has the keys ``keys[unit_ptr[u]:unit_ptr[u + 1]]``
    and candidate token c is unit ``inv[c]``. Fitting (``vocabulary=None``) gives columns in sorted
    name order; transforming drops the names not in ``vocabulary``.
    """
    if vocabulary is None:
        order = sorted(range(len(names)), key=names.__getitem__)
        vocabulary = {names[i]: c for c, i in enumerate(order)}
        n_cols = len(vocabulary)
        key_col = np.empty(len(names), dtype=np.int64)
        key_col[np.asarray(order, dtype=np.int64)] = np.arange(len(names), dtype=np.int64)
    else:
        vocabulary = dict(vocabulary)
        n_cols = (max(vocabulary.values()) + 1) if vocabulary else 0
        get = vocabulary.get
        key_col = np.array([get(nm, -1) for nm in names], dtype=np.int64)
    unit_cols = key_col[np.searchsorted(present, keys)] if keys.size else keys

    # ---- counts, one row per candidate ----
    indptr = _row_counts(row_start, inv, unit_ptr, unit_cols)
    indices = np.empty(indptr[-1], dtype=np.int32)
    data = np.empty(indptr[-1], dtype=np.float64)
    _row_fill(row_start, inv, unit_ptr, unit_cols, indptr, indices, data)
    X = sp.csr_matrix((data, indices, indptr), shape=(n_rows, n_cols))
    X.has_sorted_indices = True
    return X, vocabulary


def _sorted_unique(a):
    """np.unique by sorting (numpy's hash-based unique is several times slower on large int arrays)."""
    b = np.sort(a)
    if b.size:
        b = b[np.concatenate(([True], b[1:] != b[:-1]))]
    return b


@njit(cache=True, nogil=True)
def _row_columns(r, row_start, inv, triple_ptr, triple_cols, buf):
    n = 0
    for c in range(row_start[r], row_start[r + 1]):
        u = inv[c]
        for q in range(triple_ptr[u], triple_ptr[u + 1]):
            col = triple_cols[q]
            if col >= 0:
                buf[n] = col
                n += 1
    out = np.sort(buf[:n])
    return out


@njit(cache=True, nogil=True)
def _longest_row(row_start, inv, triple_ptr):
    """The most feature entries (before merging duplicates) of any row: the scratch buffer's size."""
    longest = 0
    for r in range(row_start.size - 1):
        size = 0
        for c in range(row_start[r], row_start[r + 1]):
            size += triple_ptr[inv[c] + 1] - triple_ptr[inv[c]]
        longest = max(longest, size)
    return longest


@njit(cache=True, nogil=True)
def _row_counts(row_start, inv, triple_ptr, triple_cols):
    n_rows = row_start.size - 1
    indptr = np.zeros(n_rows + 1, np.int64)
    buf = np.empty(_longest_row(row_start, inv, triple_ptr), np.int64)
    for r in range(n_rows):
        cols = _row_columns(r, row_start, inv, triple_ptr, triple_cols, buf)
        distinct = 0
        for i in range(cols.size):
            if i == 0 or cols[i] != cols[i - 1]:
                distinct += 1
        indptr[r + 1] = indptr[r] + distinct
    return indptr


@njit(cache=True, nogil=True)
def _row_fill(row_start, inv, triple_ptr, triple_cols, indptr, indices, data):
    n_rows = row_start.size - 1
    buf = np.empty(_longest_row(row_start, inv, triple_ptr), np.int64)
    for r in range(n_rows):
        cols = _row_columns(r, row_start, inv, triple_ptr, triple_cols, buf)
        o = indptr[r] - 1
        for i in range(cols.size):
            if i == 0 or cols[i] != cols[i - 1]:
                o += 1
                indices[o] = cols[i]
                data[o] = 1.0
            else:
                data[o] += 1.0
