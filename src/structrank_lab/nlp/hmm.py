"""A second-order (trigram) HMM part-of-speech tagger with exact n-best decoding.

The baseline tagger of Jagarlamudi & Daumé (2012, Sec. 4) is the second-order HMM of Thede &
Harper (1999); we build it the way Brants' TnT (2000) does, which is the standard recipe:

- **transitions** ``P(t3 | t1, t2) = l1 P^(t3) + l2 P^(t3 | t2) + l3 P^(t3 | t1, t2)``, maximum
  likelihood estimates over the training tags padded with two sentence-start symbols ``<s>`` and
  one end symbol ``</s>`` (the end symbol is an outcome like a tag, so every sentence's
  probability includes ``P(</s> | t_{n-1}, t_n)``); an estimate of a history never seen is
  replaced by the next lower order. The weights come from TnT's deleted
  interpolation: each tag trigram's count goes to the weight of whichever estimate predicts it
  best with that trigram taken out of the counts (ties to the lower order). ``l1`` is then floored
  at ``min_unigram_weight`` so that no trigram has probability 0 (on a real treebank it is far
  above the floor; on a toy corpus it can come out 0).
- **emissions** of a known word, ``P(w | t) = f(w, t) / f(t)``, for the tags it was seen with.
- **unknown words** (TnT's suffix model): from the tokens of rare words (seen at most
  ``rare_max_count`` = 10 times) the tag distribution of each suffix of up to ``max_suffix_length``
  = 10 characters, smoothed by successive abstraction
  ``P(t | l_{n-i+1..n}) = (P^(t | l_{n-i+1..n}) + theta P(t | l_{n-i+2..n})) / (1 + theta)``
  from the rare words' tag distribution (the empty suffix) upwards, with ``theta`` the standard
  deviation of the unigram tag probabilities. Capitalised and uncapitalised words have separate
  models. An unknown word is looked up by its longest suffix in its model and gets
  ``P(w | t) = P(t | suffix) / f(t)``, Bayes' ``P(t | s) P(w) / P(t)`` with ``P(t) = f(t) / N`` and
  ``P(w) = 1 / N``, the probability of a word seen once: its emission is on the scale of a
  singleton's ``1 / f(t)``, so log scores stay comparable log-probabilities.
- an unknown capitalised **sentence-initial** word whose lowercase form is known is tagged as
  that form ("Yesterday" -> "yesterday"), when ``lowercase_fallback``.

**Second-order emissions** (``emission_order=2``). Jagarlamudi & Daumé's baseline "uses trigram
transition and emission probabilities" (Thede & Harper 1999): a word is emitted by the pair of
its previous tag and its tag, ``P(w_i | t_{i-1}, t_i)``. Thede & Harper smooth it with the
first-order estimate by a weight that grows with the count of the richer event,

    P(w | t', t) = k N3 / C2 + (1 - k) N2 / C1,    k = (ln(N3 + 1) + 1) / (ln(N3 + 1) + 2),

with N3 = f(t', t, w), C2 = f(t', t), N2 = f(t, w), C1 = f(t) (``<s>`` is the previous tag of
the first word). What we assumed where their paper could not be checked line by line: the
logarithm is natural; the weight formula is the one they use for their contextual
probabilities, applied to the lexical ones with N3 in place of the trigram count; an unseen
context gets the same formula at N3 = 0, i.e. half the first-order estimate (so the scores are
not normalised over words, as in their paper: decoding only compares paths over one sentence);
unknown words keep the first-order suffix model above (their emission is then half of it in
every context, which changes no comparison between paths; Thede & Harper's own unknown-word
model is not reproduced); the transitions stay TnT's deleted interpolation (Thede & Harper
smooth them with count-dependent weights too; that is not implemented here). Decoding is unchanged:
its states are already (previous tag, tag) pairs, so the emission of a state is looked up once
per state, and Viterbi and n-best stay exact (tests check both against brute force).

**Candidate tags.** Each word is decoded only over its candidate tags: a known word's tags seen
with it; for an unknown word, the tags of its suffix distribution within ``unknown_beam`` (1e-4)
of the most probable one, at most ``max_unknown_tags`` (20) of them, most probable first. On UD
English-EWT dev the probability mass so dropped is a small fraction per unknown word; measured
when the defaults were set, the dev accuracy was that of the unpruned model and the 10-best
oracle barely lower, while 10-best decoding ran faster (docs/BENCHMARKS.md, "POS tagging and
n-best reranking", gives the current accuracy and decoding speed). Every score, Viterbi and
n-best below is exact for the model restricted to these candidates;
:meth:`TrigramHMMTagger.candidates` lists them so that tests can enumerate the same space by
brute force.

**Decoding** is in log space over states (previous tag, tag), in numba. The n-best search is list
Viterbi: every state keeps its ``n`` best partial paths (score and a back-pointer to the
predecessor state's path), merged from the sorted lists of its predecessors; the end transition
merges all final states into the ``n`` best complete paths. This is exact: a path among the
``n`` best complete paths has, at every state it passes, a prefix among that state's ``n`` best
(else ``n`` better paths would exist). Paths are distinct by construction, come out in
non-increasing score, ties in a fixed order (predecessor tag, then rank), the Viterbi path
first. :meth:`predict` is the 1-best case.

Fitted models are saved without pickle: one ``.npz`` whose ``__header__`` entry is UTF-8 JSON
(format name and version, parameters, tag set, vocabulary, suffixes and a SHA-256 of every
array), written atomically; loading checks all of it.

Format version 2 holds the second-order emission tables.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter

import numpy as np

import structrank
from structrank.errors import DataFormatError, DataValidationError
from structrank.archive import read_archive, write_archive
from structrank.numba_cache import njit

FORMAT_NAME = "structrank-hmm-tagger"
FORMAT_VERSION = 2  # 2: second-order emission tables (context_ptr, context_prev, context_logp, unseen_logp)
BOUNDARY_START = "<s>"
BOUNDARY_END = "</s>"
_ARRAYS = ("log_trans", "lambdas", "unigram_counts", "bigram_counts", "trigram_counts", "tag_counts",
           "entry_ptr", "entry_tag", "entry_logp", "context_ptr", "context_prev", "context_logp", "unseen_logp")


# ----------------------------------------------------------------------------------------------
# estimation


def encode_tags(sentences_tags, tag_index):
    """Tag ids of every sentence concatenated, and sentence offsets."""
    lengths = np.fromiter((len(tags) for tags in sentences_tags), dtype=np.int64, count=len(sentences_tags))
    ids = np.fromiter((tag_index[t] for tags in sentences_tags for t in tags), dtype=np.int64,
                      count=int(lengths.sum()))
    offsets = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return ids, offsets


def ngram_counts(ids, offsets, n_tags):
    """Unigram, bigram and trigram counts of the padded tag sequences ``<s> <s> t1 .. tn </s>``.

    Index ``n_tags`` is ``<s>`` in a history position and ``</s>`` in the outcome position:
    unigram[c], bigram[b, c], trigram[a, b, c] count outcome c after history (a, b).
    """
    K = n_tags + 1
    n_sent = offsets.size - 1
    lengths = np.diff(offsets)
    # every sentence padded to [<s>, <s>, t1 .. tn, </s>], all concatenated
    padded_start = offsets[:-1] + 3 * np.arange(n_sent)
    padded = np.full(ids.size + 3 * n_sent, n_tags, dtype=np.int64)
    padded[np.repeat(padded_start + 2 - offsets[:-1], lengths) + np.arange(ids.size)] = ids
    # a trigram starts at each of the first len + 1 places of a padded sentence
    first = np.repeat(padded_start, lengths + 1) + _ranges(lengths + 1)
    prev2, prev1, outcome = padded[first], padded[first + 1], padded[first + 2]
    unigram = np.bincount(outcome, minlength=K).astype(np.float64)
    bigram = np.bincount(prev1 * K + outcome, minlength=K * K).astype(np.float64).reshape(K, K)
    trigram = np.bincount((prev2 * K + prev1) * K + outcome, minlength=K ** 3).astype(np.float64).reshape(K, K, K)
    return unigram, bigram, trigram


def _ranges(sizes):
    """0, 1, .., sizes[0] - 1, 0, 1, .., sizes[1] - 1, ..."""
    starts = np.repeat(np.cumsum(sizes) - sizes, sizes)
    return np.arange(int(sizes.sum())) - starts


def deleted_interpolation(unigram, bigram, trigram):
    """TnT's weights (l1, l2, l3) of the unigram, bigram and trigram estimates.

    For every trigram (a, b, c) seen f times, compare the three estimates of c with this trigram
    removed from the counts -- ``(f(c) - 1) / (N - 1)``, ``(f(b, c) - 1) / (f(b) - 1)``,
    ``(f(a, b, c) - 1) / (f(a, b) - 1)``, 0 where the denominator is 0 -- and add f to the weight
    of the largest (the lowest order on ties). Returns the weights normalised to sum 1.
    """
    a, b, c = np.nonzero(trigram)
    f3 = trigram[a, b, c]
    hist2 = trigram.sum(axis=2)[a, b]
    hist1 = bigram.sum(axis=1)[b]
    N = unigram.sum()
    ratios = np.zeros((f3.size, 3))
    ratios[:, 0] = _safe_ratio(unigram[c] - 1, np.full(f3.size, N - 1))
    ratios[:, 1] = _safe_ratio(bigram[b, c] - 1, hist1 - 1)
    ratios[:, 2] = _safe_ratio(f3 - 1, hist2 - 1)
    winner = np.argmax(ratios, axis=1)  # first maximum: the lower order wins ties
    weights = np.bincount(winner, weights=f3, minlength=3)
    return weights / weights.sum()


def _safe_ratio(num, den):
    out = np.zeros(num.shape)
    ok = den > 0
    out[ok] = num[ok] / den[ok]
    return out


def floor_unigram_weight(lambdas, minimum):
    """Raise l1 to at least ``minimum``, scaling l2 and l3 down to keep the sum 1."""
    lambdas = np.asarray(lambdas, dtype=np.float64).copy()
    if lambdas[0] < minimum:
        rest = lambdas[1:].sum()
        lambdas[1:] = lambdas[1:] * (1.0 - minimum) / rest if rest > 0 else (1.0 - minimum) / 2
        lambdas[0] = minimum
    return lambdas


def transition_log_probs(unigram, bigram, trigram, lambdas):
    """``log P(c | a, b)`` for every history (a, b) and outcome c: the interpolated trigram model.

    An estimate whose history was never seen (``f(a, b) = 0`` or ``f(b) = 0``) is undefined; it is
    replaced by the next lower order, so that every history's distribution sums to 1.
    """
    p1 = unigram / unigram.sum()
    p2 = _rows_normalised(bigram, np.broadcast_to(p1, bigram.shape))
    p3 = _rows_normalised(trigram, np.broadcast_to(p2[None, :, :], trigram.shape))
    with np.errstate(divide="ignore"):
        return np.log(lambdas[0] * p1[None, None, :] + lambdas[1] * p2[None, :, :] + lambdas[2] * p3)


def _rows_normalised(counts, fallback):
    """Counts over their last axis' sum; ``fallback`` where that sum is 0."""
    total = counts.sum(axis=-1, keepdims=True)
    return np.where(total > 0, counts / np.where(total > 0, total, 1.0), fallback)


def tag_std_theta(tag_counts):
    """TnT's theta: the standard deviation (divisor s - 1) of the s unigram tag probabilities."""
    p = tag_counts / tag_counts.sum()
    return float(np.std(p, ddof=1)) if p.size > 1 else 0.0


def is_capitalised(word):
    """Whether the word starts with an uppercase letter (TnT's split of the suffix model)."""
    return word[:1].isupper()


def suffix_counts(pairs, max_length):
    """(suffixes, node-by-tag count triples) of the suffixes of the words in ``pairs``.

    ``pairs`` is a list of (word, tag id, count). Every suffix of length 0 (the root, all the
    words) to ``min(max_length, len(word))`` gets the pair's count. Suffix node 0 is the root;
    nodes are numbered in order of first appearance.
    """
    index = {"": 0}
    rows, cols, vals = [], [], []
    for word, tag, count in pairs:
        for length in range(0, min(max_length, len(word)) + 1):
            suffix = word[len(word) - length:]
            node = index.setdefault(suffix, len(index))
            rows.append(node)
            cols.append(tag)
            vals.append(count)
    return list(index), np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64), np.array(vals, np.float64)


def successive_abstraction(suffixes, rows, cols, vals, n_tags, theta):
    """``P(t | suffix)`` of every suffix node (rows), smoothed from shorter suffixes (TnT)."""
    n_nodes = len(suffixes)
    counts = np.zeros((n_nodes, n_tags))
    np.add.at(counts, (rows, cols), vals)
    p_hat = counts / counts.sum(axis=1, keepdims=True)
    lengths = np.fromiter(map(len, suffixes), dtype=np.int64, count=n_nodes)
    node_of = {s: i for i, s in enumerate(suffixes)}
    parent = np.array([node_of[s[1:]] if s else 0 for s in suffixes], dtype=np.int64)
    probs = np.empty_like(p_hat)
    probs[0] = p_hat[0]
    for length in range(1, int(lengths.max()) + 1 if n_nodes > 1 else 1):
        level = np.flatnonzero(lengths == length)  # parents are one shorter: already done
        probs[level] = (p_hat[level] + theta * probs[parent[level]]) / (1.0 + theta)
    return probs


def prune_candidates(probs, beam, max_tags):
    """Per row, the tags with probability >= beam * the row's largest, at most max_tags, best first.

    Returns (row pointer, tags) in CSR form. Ties are kept in tag order (stable sort).
    """
    order = np.argsort(-probs, axis=1, kind="stable")
    ranked = np.take_along_axis(probs, order, axis=1)
    keep = (ranked >= beam * ranked[:, :1]) & (ranked > 0)
    keep[:, max_tags:] = False
    ptr = np.zeros(probs.shape[0] + 1, dtype=np.int64)
    np.cumsum(keep.sum(axis=1), out=ptr[1:])
    return ptr, order[keep]


def thede_harper_weight(count):
    """Thede & Harper's weight ``k = (ln(N + 1) + 1) / (ln(N + 1) + 2)`` of an estimate seen N times.

    It rises from 1/2 at N = 0 towards 1, so the richer estimate is trusted more the more often
    its event was seen. (The natural logarithm is our assumption; the paper writes ``log``.)
    """
    lg = np.log1p(np.asarray(count, dtype=np.float64))
    return (lg + 1.0) / (lg + 2.0)


def second_order_emission_tables(entry_logp, slot, prev, n3, c2, p1):
    """The lexical tables of second-order emissions (:func:`_emission` reads them).

    ``entry_logp`` is the first-order ``log P(w | t)`` of every lexical slot (a word's candidate
    tag); ``slot``, ``prev``, ``n3`` list the training triples (word, previous tag, tag) by slot,
    previous tag id and count N3, with ``c2`` = f(previous tag, tag) and ``p1`` = f(w, t) / f(t)
    of their slot. A seen context gets Thede & Harper's
    ``P(w | t', t) = k N3 / C2 + (1 - k) P(w | t)`` with ``k = thede_harper_weight(N3)``; every
    other context of a slot gets the same formula at N3 = 0, ``(1 - k(0)) P(w | t)`` (half of the
    first-order estimate), which is all an unknown word ever gets.

    Returns (context pointer per slot, previous tags sorted within a slot, their log emissions,
    the log emission of an unseen context per slot).
    """
    slot, prev = np.asarray(slot, dtype=np.int64), np.asarray(prev, dtype=np.int64)
    order = np.lexsort((prev, slot))
    slot, prev = slot[order], prev[order]
    n3, c2, p1 = (np.asarray(v, dtype=np.float64)[order] for v in (n3, c2, p1))
    k = thede_harper_weight(n3)
    ctx_logp = np.log(k * n3 / c2 + (1.0 - k) * p1)
    ctx_ptr = np.zeros(entry_logp.size + 1, dtype=np.int64)
    np.cumsum(np.bincount(slot, minlength=entry_logp.size), out=ctx_ptr[1:])
    unseen = entry_logp + math.log(1.0 - float(thede_harper_weight(0)))
    return ctx_ptr, prev, ctx_logp, unseen


# ----------------------------------------------------------------------------------------------
# decoding


@njit(cache=True, nogil=True)
def _insert(scores, backs, base, count, n, value, back):
    """Insert (value, back) into the descending list at ``base`` holding ``count`` of ``n`` places.

    An equal value goes after the ones already there. Returns the new count.
    """
    if count == n:
        if value <= scores[base + n - 1]:
            return count
        pos = n - 1
    else:
        pos = count
        count += 1
    while pos > 0 and scores[base + pos - 1] < value:
        scores[base + pos] = scores[base + pos - 1]
        backs[base + pos] = backs[base + pos - 1]
        pos -= 1
    scores[base + pos] = value
    backs[base + pos] = back
    return count


@njit(cache=True, nogil=True)
def _emission(slot, prev, ctx_ptr, ctx_prev, ctx_logp, unseen_logp):
    """Log emission of lexical slot ``slot`` (a word's candidate tag) after tag ``prev``.

    The slot's contexts (previous tags seen with it, sorted) carry their own log emission; any
    other previous tag gets ``unseen_logp[slot]``. A first-order model has no contexts.
    """
    for q in range(ctx_ptr[slot], ctx_ptr[slot + 1]):
        if ctx_prev[q] == prev:
            return ctx_logp[q]
    return unseen_logp[slot]


@njit(cache=True, nogil=True)
def _nbest_sentence(log_trans, boundary, tok_entry, entry_ptr, entry_tag, unseen_logp, ctx_ptr, ctx_prev, ctx_logp,
                    n, out_tags, out_scores):
    """The n best tag sequences of one sentence (its tokens' lexical entries); returns how many.

    ``out_tags`` (n * L) receives path k at ``k * L``; ``out_scores`` (n) their log scores.
    States at position i are (candidate a of word i-1, candidate b of word i), numbered
    ``a * c_i + b`` after the states of earlier positions (word -1 has the one candidate <s>).
    The emission of word i may depend on both tags of its state (:func:`_emission`), so a
    second-order emission costs one lookup per state and the search is the same.
    """
    L = tok_entry.shape[0]
    if L == 0:
        out_scores[0] = log_trans[boundary, boundary, boundary]
        return 1
    cand = np.empty(L, np.int64)
    start = np.empty(L, np.int64)
    state_base = np.empty(L + 1, np.int64)
    state_base[0] = 0
    for i in range(L):
        e = tok_entry[i]
        start[i] = entry_ptr[e]
        cand[i] = entry_ptr[e + 1] - entry_ptr[e]
        prev = cand[i - 1] if i > 0 else 1
        state_base[i + 1] = state_base[i] + prev * cand[i]
    G = state_base[L]
    hscore = np.empty(G * n)
    hback = np.empty(G * n, np.int64)
    hcount = np.zeros(G, np.int64)
    state_tag = np.empty(G, np.int64)
    for b in range(cand[0]):
        tb = entry_tag[start[0] + b]
        state_tag[b] = tb
        emit = _emission(start[0] + b, boundary, ctx_ptr, ctx_prev, ctx_logp, unseen_logp)
        hscore[b * n] = log_trans[boundary, boundary, tb] + emit
        hback[b * n] = -1
        hcount[b] = 1
    for i in range(1, L):
        c_prev2 = cand[i - 2] if i >= 2 else 1
        c_prev = cand[i - 1]
        for a in range(c_prev):
            ta = entry_tag[start[i - 1] + a]
            for b in range(cand[i]):
                tb = entry_tag[start[i] + b]
                emit = _emission(start[i] + b, ta, ctx_ptr, ctx_prev, ctx_logp, unseen_logp)
                g = state_base[i] + a * cand[i] + b
                state_tag[g] = tb
                count = 0
                for z in range(c_prev2):
                    tz = entry_tag[start[i - 2] + z] if i >= 2 else boundary
                    gp = state_base[i - 1] + z * c_prev + a
                    step = log_trans[tz, ta, tb] + emit
                    for k in range(hcount[gp]):
                        value = hscore[gp * n + k] + step
                        if count == n and value <= hscore[g * n + n - 1]:
                            break  # the rest of this sorted list is no better
                        count = _insert(hscore, hback, g * n, count, n, value, gp * n + k)
                hcount[g] = count
    final_score = np.empty(n)
    final_back = np.empty(n, np.int64)
    count = 0
    c_prev = cand[L - 2] if L >= 2 else 1
    for a in range(c_prev):
        ta = entry_tag[start[L - 2] + a] if L >= 2 else boundary
        for b in range(cand[L - 1]):
            g = state_base[L - 1] + a * cand[L - 1] + b
            step = log_trans[ta, state_tag[g], boundary]
            for k in range(hcount[g]):
                value = hscore[g * n + k] + step
                if count == n and value <= final_score[n - 1]:
                    break
                count = _insert(final_score, final_back, 0, count, n, value, g * n + k)
    for k in range(count):
        out_scores[k] = final_score[k]
        h = final_back[k]
        for i in range(L - 1, -1, -1):
            out_tags[k * L + i] = state_tag[h // n]
            h = hback[h]
    return count


@njit(cache=True, nogil=True)
def _nbest_batch(log_trans, boundary, sent_ptr, tok_entry, entry_ptr, entry_tag, unseen_logp, ctx_ptr, ctx_prev,
                 ctx_logp, n, out_tags, out_scores, out_counts):
    """:func:`_nbest_sentence` over a batch; sentence s's paths go to ``out_tags[n * sent_ptr[s]:]``."""
    for s in range(sent_ptr.shape[0] - 1):
        a, b = sent_ptr[s], sent_ptr[s + 1]
        out_counts[s] = _nbest_sentence(log_trans, boundary, tok_entry[a:b], entry_ptr, entry_tag, unseen_logp,
                                        ctx_ptr, ctx_prev, ctx_logp, n, out_tags[n * a:n * b], out_scores[s])


# ----------------------------------------------------------------------------------------------
# the tagger


class TrigramHMMTagger:
    """Second-order HMM POS tagger (Thede & Harper 1999, estimated as in TnT) with exact n-best.

    Parameters
    ----------
    rare_max_count : int, default 10
        Words seen at most this often feed the unknown-word suffix model.
    max_suffix_length : int, default 10
        Longest suffix of the suffix model.
    unknown_beam : float, default 1e-4
        An unknown word's candidate tags are those with ``P(t | suffix)`` at least this times the
        most probable tag's.
    max_unknown_tags : int, default 20
        At most this many candidate tags per unknown word.
    lowercase_fallback : bool, default True
        Look up an unknown capitalised sentence-initial word in lowercase.
    min_unigram_weight : float, default 1e-3
        Floor of the unigram interpolation weight (keeps every transition probability positive).
    emission_order : {1, 2}, default 1
        1: ``P(w_i | t_i)`` (TnT). 2: ``P(w_i | t_{i-1}, t_i)`` backed off to ``P(w_i | t_i)`` as
        Thede & Harper (1999) do, the baseline tagger of Jagarlamudi & Daumé (2012); see the
        module docstring.

    Attributes
    ----------
    tags_ : list of str
        The tag set, sorted; tag id i is ``tags_[i]``, id ``len(tags_)`` the boundary symbol.
    lambdas_ : ndarray (3,)
        Interpolation weights of the unigram, bigram and trigram estimates.
    unigram_counts_, bigram_counts_, trigram_counts_ : ndarray
        Counts of the padded training tag sequences (see ``ngram_counts``).
    tag_counts_ : ndarray (n_tags,)
        ``f(t)``, tokens per tag.
    log_trans_ : ndarray (n_tags + 1,) * 3
        ``log P(c | a, b)``.
    entry_logp_ : ndarray
        First-order ``log P(w | t)`` of every lexical slot (a word's or suffix's candidate tag).
    context_ptr_, context_prev_, context_logp_, unseen_logp_ : ndarray
        The emissions decoding uses: slot s after previous tag p emits
        ``context_logp_[q]`` if ``context_prev_[q] == p`` for some q in
        ``context_ptr_[s]:context_ptr_[s + 1]``, else ``unseen_logp_[s]``. A first-order model
        has no contexts and ``unseen_logp_ == entry_logp_``.
    theta_ : float
        Successive-abstraction weight.

    Examples
    --------
    >>> words = [["the", "dog", "runs"], ["the", "runs", "end"], ["a", "cat", "runs"], ["the", "dog", "sleeps"]]
    >>> tags = [["DT", "NN", "VBZ"], ["DT", "NNS", "VBP"], ["DT", "NN", "VBZ"], ["DT", "NN", "VBZ"]]
    >>> tagger = TrigramHMMTagger().fit(words, tags)
    >>> tagger.predict([["a", "dog", "runs"]]), tagger.score(words, tags)
    ([['DT', 'NN', 'VBZ']], 1.0)
    >>> [(tags, round(score, 2)) for tags, score in tagger.nbest(["a", "dog", "runs"], n=3)]
    [(('DT', 'NN', 'VBZ'), -3.1), (('DT', 'NN', 'NNS'), -9.89)]
    """

    def __init__(self, rare_max_count=10, max_suffix_length=10, unknown_beam=1e-4, max_unknown_tags=20,
                 lowercase_fallback=True, min_unigram_weight=1e-3, emission_order=1):
        self.rare_max_count = rare_max_count
        self.max_suffix_length = max_suffix_length
        self.unknown_beam = unknown_beam
        self.max_unknown_tags = max_unknown_tags
        self.lowercase_fallback = lowercase_fallback
        self.min_unigram_weight = min_unigram_weight
        self.emission_order = emission_order

    def get_params(self):
        return {name: getattr(self, name) for name in ("rare_max_count", "max_suffix_length", "unknown_beam",
                                                        "max_unknown_tags", "lowercase_fallback",
                                                        "min_unigram_weight", "emission_order")}

    def _check_params(self):
        p = self.get_params()
        for name in ("rare_max_count", "max_suffix_length"):
            if not isinstance(p[name], (int, np.integer)) or isinstance(p[name], bool) or p[name] < 0:
                raise ValueError(f"{name} must be a non-negative integer, got {p[name]!r}")
        if not isinstance(p["max_unknown_tags"], (int, np.integer)) or p["max_unknown_tags"] < 1:
            raise ValueError(f"max_unknown_tags must be a positive integer, got {p['max_unknown_tags']!r}")
        if not 0.0 <= p["unknown_beam"] <= 1.0:
            raise ValueError(f"unknown_beam must be in [0, 1], got {p['unknown_beam']!r}")
        if not 0.0 < p["min_unigram_weight"] < 1.0:
            raise ValueError(f"min_unigram_weight must be in (0, 1), got {p['min_unigram_weight']!r}")
        if isinstance(p["emission_order"], bool) or p["emission_order"] not in (1, 2):
            raise ValueError(f"emission_order must be 1 or 2, got {p['emission_order']!r}")

    # -- fitting ----------------------------------------------------------------------------

    def fit(self, sentences_words, sentences_tags):
        """Estimate the model from tagged sentences (lists of words, lists of tags)."""
        self._check_params()
        sentences_words, sentences_tags = _check_corpus(sentences_words, sentences_tags)
        self.tags_ = sorted({t for tags in sentences_tags for t in tags})
        T = len(self.tags_)
        tag_index = {t: i for i, t in enumerate(self.tags_)}
        ids, offsets = encode_tags(sentences_tags, tag_index)
        self.unigram_counts_, self.bigram_counts_, self.trigram_counts_ = ngram_counts(ids, offsets, T)
        self.tag_counts_ = self.unigram_counts_[:T].copy()
        self.lambdas_ = floor_unigram_weight(
            deleted_interpolation(self.unigram_counts_, self.bigram_counts_, self.trigram_counts_),
            self.min_unigram_weight)
        self.log_trans_ = transition_log_probs(self.unigram_counts_, self.bigram_counts_, self.trigram_counts_,
                                               self.lambdas_)
        self.theta_ = tag_std_theta(self.tag_counts_)
        pairs = Counter()
        for words, tags in zip(sentences_words, sentences_tags):
            pairs.update((w, tag_index[t]) for w, t in zip(words, tags))
        self._build_lexicon(pairs)
        if self.emission_order == 2:
            self._second_order_emissions(sentences_words, sentences_tags, tag_index, pairs)
        else:
            self.context_ptr_ = np.zeros(self.entry_tag_.size + 1, dtype=np.int64)
            self.context_prev_ = np.zeros(0, dtype=np.int64)
            self.context_logp_ = np.zeros(0, dtype=np.float64)
            self.unseen_logp_ = self.entry_logp_.copy()
        return self

    def _second_order_emissions(self, sentences_words, sentences_tags, tag_index, pairs):
        """Thede & Harper's P(w | t', t) for every (word, previous tag, tag) seen in training."""
        T = len(self.tags_)
        triples = Counter()
        for words, tags in zip(sentences_words, sentences_tags):
            ids = [tag_index[t] for t in tags]
            triples.update(zip(words, [T, *ids[:-1]], ids))
        slot, prev, n3, c2, p1 = [], [], [], [], []
        for (word, a, b), count in triples.items():
            e = self.word_entry_[word]
            lo = self.entry_ptr_[e]
            slot.append(lo + int(np.searchsorted(self.entry_tag_[lo:self.entry_ptr_[e + 1]], b)))
            prev.append(a)
            n3.append(count)
            c2.append(self.bigram_counts_[a, b])
            p1.append(pairs[word, b] / self.tag_counts_[b])
        self.context_ptr_, self.context_prev_, self.context_logp_, self.unseen_logp_ = \
            second_order_emission_tables(self.entry_logp_, slot, prev, n3, c2, p1)

    def _build_lexicon(self, pairs):
        """Entries (candidate tags and log emissions) of the known words, then of the suffixes."""
        T = len(self.tags_)
        log_f = np.log(self.tag_counts_)
        word_count = Counter()
        by_word = {}
        for (word, tag), count in sorted(pairs.items()):  # sorted: entries in tag order
            word_count[word] += count
            by_word.setdefault(word, []).append((tag, count))
        ptr, tags, logp = [0], [], []
        for word, seen in by_word.items():
            for tag, count in seen:
                tags.append(tag)
                logp.append(math.log(count) - log_f[tag])
            ptr.append(len(tags))
        self.words_ = list(by_word)
        rare = [(w, t, c) for (w, t), c in sorted(pairs.items()) if word_count[w] <= self.rare_max_count]
        models = []
        for capital in (False, True):
            pool = [p for p in rare if is_capitalised(p[0]) == capital] or \
                [(w, t, c) for (w, t), c in sorted(pairs.items()) if is_capitalised(w) == capital]
            models.append(self._suffix_model(pool, T, log_f) if pool else None)
        if models[0] is None:
            models[0] = models[1]
        if models[1] is None:
            models[1] = models[0]
        self.suffixes_, first = [], []
        seen = {}
        for model in models:
            if id(model) in seen:  # a class without any word shares the other's model
                self.suffixes_.append(self.suffixes_[seen[id(model)]])
                first.append(first[seen[id(model)]])
                continue
            seen[id(model)] = len(self.suffixes_)
            suffixes, sptr, stags, slogp = model
            first.append(len(ptr) - 1)
            ptr.extend(ptr[-1] + sptr[1:])
            tags.extend(stags)
            logp.extend(slogp)
            self.suffixes_.append(suffixes)
        self.suffix_first_entry_ = first
        self.entry_ptr_ = np.asarray(ptr, dtype=np.int64)
        self.entry_tag_ = np.asarray(tags, dtype=np.int64)
        self.entry_logp_ = np.asarray(logp, dtype=np.float64)
        self._index()

    def _suffix_model(self, pool, n_tags, log_f):
        suffixes, rows, cols, vals = suffix_counts(pool, self.max_suffix_length)
        probs = successive_abstraction(suffixes, rows, cols, vals, n_tags, self.theta_)
        ptr, tags = prune_candidates(probs, self.unknown_beam, self.max_unknown_tags)
        rows_of = np.repeat(np.arange(len(suffixes)), np.diff(ptr))
        logp = np.log(probs[rows_of, tags]) - log_f[tags]
        return suffixes, ptr, tags.tolist(), logp.tolist()

    def _index(self):
        """Lookup tables derived from the saved state."""
        self.word_entry_ = {w: i for i, w in enumerate(self.words_)}
        self.suffix_entry_ = [{s: first + i for i, s in enumerate(suffixes)}
                              for suffixes, first in zip(self.suffixes_, self.suffix_first_entry_)]
        self.log_trans_ = np.ascontiguousarray(self.log_trans_, dtype=np.float64)

    # -- lexical lookup ----------------------------------------------------------------------

    def _check_fitted(self):
        if not hasattr(self, "log_trans_"):
            raise DataValidationError("this TrigramHMMTagger is not fitted yet: call fit or load")

    def _unknown_entry(self, word):
        table = self.suffix_entry_[int(is_capitalised(word))]
        for length in range(min(self.max_suffix_length, len(word)), -1, -1):
            entry = table.get(word[len(word) - length:])
            if entry is not None:
                return entry
        raise AssertionError("the root suffix is always present")  # pragma: no cover

    def _entries(self, words, cache):
        """Lexical entry of each word of one sentence (``cache`` memoises unknown words)."""
        get = self.word_entry_.get
        out = []
        for i, word in enumerate(words):
            entry = get(word)
            if entry is None:
                entry = cache.get((i == 0, word))
                if entry is None:
                    entry = self._unknown_entry_at(word, i == 0)
                    cache[(i == 0, word)] = entry
            out.append(entry)
        return out

    def _unknown_entry_at(self, word, initial):
        if initial and self.lowercase_fallback and is_capitalised(word):
            entry = self.word_entry_.get(word.lower())
            if entry is not None:
                return entry
        return self._unknown_entry(word)

    def candidates(self, words):
        """Per word, (candidate tags, their first-order ``log P(w | t)``): the space decoding searches.

        With ``emission_order=2`` the emission decoding uses also depends on the previous tag
        (:meth:`sequence_score`).
        """
        self._check_fitted()
        out = []
        for entry in self._entries(list(words), {}):
            a, b = self.entry_ptr_[entry], self.entry_ptr_[entry + 1]
            out.append(([self.tags_[t] for t in self.entry_tag_[a:b]], self.entry_logp_[a:b].copy()))
        return out

    def sequence_score(self, words, tags):
        """Log score of ``tags`` for ``words``: -inf when a tag is not among the word's candidates."""
        self._check_fitted()
        if len(words) != len(tags):
            raise DataValidationError(f"{len(words)} words but {len(tags)} tags")
        index = {t: i for i, t in enumerate(self.tags_)}
        B = len(self.tags_)
        history = [B, B]
        score = 0.0
        for entry, (cand, _), tag in zip(self._entries(list(words), {}), self.candidates(words), tags):
            if tag not in cand:
                return -math.inf
            t = index[tag]
            emit = _emission(int(self.entry_ptr_[entry]) + cand.index(tag), history[-1], self.context_ptr_,
                             self.context_prev_, self.context_logp_, self.unseen_logp_)
            score += self.log_trans_[history[-2], history[-1], t] + emit
            history.append(t)
        return float(score + self.log_trans_[history[-2], history[-1], B])

    # -- decoding ----------------------------------------------------------------------------

    def _decode(self, sentences, n):
        self._check_fitted()
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"n must be a positive integer, got {n!r}")
        sentences = [list(words) for words in sentences]
        cache = {}
        entries = [e for words in sentences for e in self._entries(words, cache)]
        lengths = np.fromiter(map(len, sentences), dtype=np.int64, count=len(sentences))
        sent_ptr = np.zeros(len(sentences) + 1, dtype=np.int64)
        np.cumsum(lengths, out=sent_ptr[1:])
        tok_entry = np.asarray(entries, dtype=np.int64)
        out_tags = np.zeros(n * int(sent_ptr[-1]), dtype=np.int64)
        out_scores = np.full((len(sentences), n), -np.inf)
        out_counts = np.zeros(len(sentences), dtype=np.int64)
        _nbest_batch(self.log_trans_, len(self.tags_), sent_ptr, tok_entry, self.entry_ptr_, self.entry_tag_,
                     self.unseen_logp_, self.context_ptr_, self.context_prev_, self.context_logp_, int(n),
                     out_tags, out_scores, out_counts)
        return sent_ptr, out_tags, out_scores, out_counts

    def nbest_many(self, sentences, n=10):
        """The n best tag sequences of each sentence: lists of (tags tuple, log score), best first."""
        sent_ptr, out_tags, out_scores, out_counts = self._decode(sentences, n)
        names = self.tags_
        flat = [names[t] for t in out_tags.tolist()]
        scores = out_scores.tolist()
        result = []
        for s, count in enumerate(out_counts.tolist()):
            a, L = int(sent_ptr[s]), int(sent_ptr[s + 1] - sent_ptr[s])
            base = n * a
            result.append([(tuple(flat[base + k * L:base + (k + 1) * L]), scores[s][k]) for k in range(count)])
        return result

    def nbest(self, words, n=10):
        """The n best distinct tag sequences of one sentence, (tags tuple, log score), Viterbi first."""
        return self.nbest_many([words], n)[0]

    def predict(self, sentences):
        """The Viterbi tag sequence of each sentence (lists of words) as lists of tags."""
        sent_ptr, out_tags, _, _ = self._decode(sentences, 1)
        flat = [self.tags_[t] for t in out_tags.tolist()]
        return [flat[a:b] for a, b in zip(sent_ptr[:-1].tolist(), sent_ptr[1:].tolist())]

    def score(self, sentences_words, sentences_tags):
        """Token accuracy of :meth:`predict` against reference tags."""
        return token_accuracy(self.predict(sentences_words), sentences_tags)

    # -- saving ------------------------------------------------------------------------------

    def _arrays(self):
        return {"log_trans": self.log_trans_, "lambdas": self.lambdas_, "unigram_counts": self.unigram_counts_,
                "bigram_counts": self.bigram_counts_, "trigram_counts": self.trigram_counts_,
                "tag_counts": self.tag_counts_, "entry_ptr": self.entry_ptr_, "entry_tag": self.entry_tag_,
                "entry_logp": self.entry_logp_, "context_ptr": self.context_ptr_, "context_prev": self.context_prev_,
                "context_logp": self.context_logp_, "unseen_logp": self.unseen_logp_}

    def save(self, path):
        """Write the fitted model to ``path`` (one .npz with a JSON header; no pickle), atomically."""
        self._check_fitted()
        arrays = {k: np.ascontiguousarray(v) for k, v in self._arrays().items()}
        header = {
            "format": FORMAT_NAME,
            "version": FORMAT_VERSION,
            "structrank": structrank.__version__,
            "params": _jsonable(self.get_params()),
            "tags": self.tags_,
            "words": self.words_,
            "suffixes": self.suffixes_,
            "suffix_first_entry": [int(v) for v in self.suffix_first_entry_],
            "theta": self.theta_,
            "arrays": {k: {"dtype": v.dtype.str, "shape": list(v.shape), "sha256": _digest(v)}
                       for k, v in arrays.items()},
        }

        write_archive(path, header, arrays)

    @classmethod
    def load(cls, path):
        """A tagger saved by :meth:`save`; DataFormatError names what is wrong with a bad file."""
        header, arrays = _read_archive(path)
        params = header.get("params")
        if not isinstance(params, dict) or set(params) != set(cls().get_params()):
            raise DataFormatError(path, None, "parameters do not match TrigramHMMTagger", "params")
        model = cls(**params)
        try:
            model._check_params()
        except ValueError as exc:
            raise DataFormatError(path, None, str(exc), "params") from None
        _check_header_types(path, header)
        model.tags_ = header["tags"]
        model.words_ = header["words"]
        model.suffixes_ = header["suffixes"]
        model.suffix_first_entry_ = header["suffix_first_entry"]
        model.theta_ = float(header["theta"])
        model.log_trans_ = arrays["log_trans"]
        model.lambdas_ = arrays["lambdas"]
        model.unigram_counts_ = arrays["unigram_counts"]
        model.bigram_counts_ = arrays["bigram_counts"]
        model.trigram_counts_ = arrays["trigram_counts"]
        model.tag_counts_ = arrays["tag_counts"]
        model.entry_ptr_ = arrays["entry_ptr"]
        model.entry_tag_ = arrays["entry_tag"]
        model.entry_logp_ = arrays["entry_logp"]
        model.context_ptr_ = arrays["context_ptr"]
        model.context_prev_ = arrays["context_prev"]
        model.context_logp_ = arrays["context_logp"]
        model.unseen_logp_ = arrays["unseen_logp"]
        _check_consistency(path, model)
        model._index()
        return model


# ----------------------------------------------------------------------------------------------
# helpers


def token_accuracy(predicted, reference):
    """Fraction of tokens whose predicted tag equals the reference tag."""
    if len(predicted) != len(reference):
        raise DataValidationError(f"{len(predicted)} predicted sentences for {len(reference)} references")
    right = total = 0
    for p, r in zip(predicted, reference):
        if len(p) != len(r):
            raise DataValidationError(f"a predicted sequence of {len(p)} tags for a sentence of {len(r)}")
        right += sum(a == b for a, b in zip(p, r))
        total += len(r)
    return right / total if total else float("nan")


def _check_corpus(sentences_words, sentences_tags):
    sentences_words = [list(words) for words in sentences_words]
    sentences_tags = [list(tags) for tags in sentences_tags]
    if len(sentences_words) != len(sentences_tags):
        raise DataValidationError(f"{len(sentences_words)} word sequences but {len(sentences_tags)} tag sequences")
    if not any(sentences_words):
        raise DataValidationError("no tagged word to learn from")
    for i, (words, tags) in enumerate(zip(sentences_words, sentences_tags)):
        if len(words) != len(tags):
            raise DataValidationError(f"sentence {i}: {len(words)} words but {len(tags)} tags")
        for w, t in zip(words, tags):
            if not isinstance(w, str) or not w or not isinstance(t, str) or not t:
                raise DataValidationError(f"sentence {i}: words and tags must be non-empty strings, got {w!r}/{t!r}")
    return sentences_words, sentences_tags


def _jsonable(params):
    return {k: (v.item() if isinstance(v, np.generic) else v) for k, v in params.items()}


def _digest(array):
    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()


def _read_archive(path):
    header, arrays = read_archive(path, FORMAT_NAME, FORMAT_VERSION, what="tagger")
    specs = header.get("arrays")
    if not isinstance(specs, dict) or set(specs) != set(_ARRAYS) or set(arrays) != set(_ARRAYS):
        raise DataFormatError(path, None, f"the arrays are not {', '.join(_ARRAYS)}", "arrays")
    for key in _ARRAYS:
        value, spec = arrays[key], specs[key]
        if not isinstance(spec, dict) or value.dtype.str != spec.get("dtype") or list(value.shape) != spec.get("shape"):
            raise DataFormatError(path, None, f"array {key} has dtype {value.dtype.str} shape {list(value.shape)}, "
                                  "the header says otherwise", key)
        if _digest(value) != spec.get("sha256"):
            raise DataFormatError(path, None, f"array {key} does not match its checksum: the file was changed "
                                  "or damaged after it was saved", key)
    return header, arrays


def _check_header_types(path, header):
    def strings(value):
        return isinstance(value, list) and all(isinstance(v, str) for v in value)

    if not strings(header.get("tags")) or not header["tags"] or len(set(header["tags"])) != len(header["tags"]):
        raise DataFormatError(path, None, "tags must be a non-empty list of distinct strings", "tags")
    if not strings(header.get("words")) or len(set(header["words"])) != len(header["words"]):
        raise DataFormatError(path, None, "words must be a list of distinct strings", "words")
    suffixes = header.get("suffixes")
    if not isinstance(suffixes, list) or len(suffixes) != 2 or not all(strings(s) and "" in s for s in suffixes):
        raise DataFormatError(path, None, "suffixes must be two lists of strings holding the root ''", "suffixes")
    first = header.get("suffix_first_entry")
    if not isinstance(first, list) or len(first) != 2 or not all(isinstance(v, int) and v >= 0 for v in first):
        raise DataFormatError(path, None, "suffix_first_entry must be two non-negative integers", "suffix_first_entry")
    theta = header.get("theta")
    if not isinstance(theta, (int, float)) or not math.isfinite(theta) or theta < 0:
        raise DataFormatError(path, None, "theta must be a non-negative number", "theta")


def _check_consistency(path, model):
    """Shapes, ranges and cross-references of a loaded model."""
    T = len(model.tags_)
    K = T + 1
    expect = {"log_trans": ((K, K, K), "f"), "lambdas": ((3,), "f"), "unigram_counts": ((K,), "f"),
              "bigram_counts": ((K, K), "f"), "trigram_counts": ((K, K, K), "f"), "tag_counts": ((T,), "f"),
              "entry_ptr": (None, "i"), "entry_tag": (None, "i"), "entry_logp": (None, "f"),
              "context_ptr": (None, "i"), "context_prev": (None, "i"), "context_logp": (None, "f"),
              "unseen_logp": (None, "f")}
    arrays = model._arrays()
    for key, (shape, kind) in expect.items():
        value = arrays[key]
        wrong_shape = value.shape != shape if shape is not None else value.ndim != 1
        if value.dtype.kind != kind or wrong_shape:
            raise DataFormatError(path, None, f"array {key} has dtype {value.dtype} shape {value.shape}", key)
        if kind == "f" and key != "log_trans" and not np.all(np.isfinite(value)):
            raise DataFormatError(path, None, f"array {key} holds NaN or infinite values", key)
    if not np.all(np.isfinite(model.log_trans_)) or not np.all(model.log_trans_ <= 1e-12):
        raise DataFormatError(path, None, "log_trans must hold finite log-probabilities (<= 0)", "log_trans")
    if not np.all(model.tag_counts_ > 0):
        raise DataFormatError(path, None, "every tag must have a positive count", "tag_counts")
    ptr = model.entry_ptr_
    n_entries = ptr.size - 1
    if ptr.size < 1 or ptr[0] != 0 or np.any(np.diff(ptr) < 1) or ptr[-1] != model.entry_tag_.size \
            or model.entry_logp_.size != model.entry_tag_.size:
        raise DataFormatError(path, None, "entry_ptr must rise from 0 by at least 1 to the number of entries",
                              "entry_ptr")
    if model.entry_tag_.size and (model.entry_tag_.min() < 0 or model.entry_tag_.max() >= T):
        raise DataFormatError(path, None, f"entry_tag must hold tag ids 0..{T - 1}", "entry_tag")
    cptr = model.context_ptr_
    if cptr.size != model.entry_tag_.size + 1 or cptr[0] != 0 or np.any(np.diff(cptr) < 0) \
            or cptr[-1] != model.context_prev_.size or model.context_logp_.size != model.context_prev_.size \
            or model.unseen_logp_.size != model.entry_tag_.size:
        raise DataFormatError(path, None, "context_ptr must rise from 0 to the number of contexts, one slot per "
                              "lexical entry tag", "context_ptr")
    if model.context_prev_.size and (model.context_prev_.min() < 0 or model.context_prev_.max() > T):
        raise DataFormatError(path, None, f"context_prev must hold tag ids 0..{T}", "context_prev")
    if len(model.words_) > n_entries:
        raise DataFormatError(path, None, "more words than lexical entries", "words")
    for suffixes, first in zip(model.suffixes_, model.suffix_first_entry_):
        if first < len(model.words_) or first + len(suffixes) > n_entries:
            raise DataFormatError(path, None, "suffix entries fall outside the entry table", "suffix_first_entry")


__all__ = ["BOUNDARY_END", "BOUNDARY_START", "FORMAT_VERSION", "TrigramHMMTagger", "token_accuracy"]
