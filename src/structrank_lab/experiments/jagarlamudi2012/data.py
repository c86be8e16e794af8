"""Per language, once: the HMMs' n-best lists (the training split's by jackknifing), the candidates' two
views and the boosting features, cached in ``OUT/data`` (``experiments.cache``'s format)."""

from __future__ import annotations

import functools
import time
from pathlib import Path

import numpy as np

from structrank.data.nbest import NBestData
from structrank_lab.experiments.cache import load_arrays, save_arrays
from structrank_lab.experiments.jagarlamudi2012.design import HMM, HMM_FIRST, N_BEST, N_FOLDS, SPLITS, TAGGERS
from structrank_lab.nlp.conllu import load_tagged
from structrank_lab.nlp.hmm import TrigramHMMTagger
from structrank_lab.nlp.pair_features import suffix_tag_pair_features, word_tag_ngram_features
from structrank_lab.nlp.tagging import build_nbest_data, fit_views, jackknife_nbest, x_view_for

_NBEST_FIELDS = ("x", "y", "loss", "base_score", "qid", "gold_x", "gold_y", "size")
CACHE_FORMAT, CACHE_VERSION = "structrank-nbest-cache", 2


def _sentence_correct(lists, gold):
    """Per sentence, the correct tokens of the first candidate and of the best candidate (the oracle)."""
    first = np.array([sum(a == b for a, b in zip(cands[0][0], ref)) for cands, ref in zip(lists, gold)], dtype=float)
    best = np.array([max(sum(a == b for a, b in zip(tags, ref)) for tags, _ in cands)
                     for cands, ref in zip(lists, gold)], dtype=float)
    return first, best


def _known_unknown(words, gold, lists, known, key):
    """Accuracy of the first candidates on the tokens seen in training and on the others."""
    seen = np.array([w in known for sent in words for w in sent])
    right = np.array([a == b for cands, ref in zip(lists, gold) for a, b in zip(cands[0][0], ref)])
    return {f"{key}_unknown_rate": float(1 - seen.mean()),
            f"{key}_known_accuracy": float(right[seen].mean()) if seen.any() else float("nan"),
            f"{key}_unknown_accuracy": float(right[~seen].mean()) if (~seen).any() else float("nan")}


def prepare_arrays(words, tags, lang, n_folds=N_FOLDS, n_best=N_BEST, n_jobs=1, base=HMM):
    """Tag, jackknife and featurise one language: (arrays, meta) of the cache.

    ``words`` and ``tags`` map each split to its sentences. The lists come from the tagger
    ``base``: Table 2's from the paper's HMM (second-order emissions), beside which the
    first-order HMM is fitted and decoded for its per-sentence correct tokens (``SPLIT.correct_1``),
    oracle and known/unknown accuracies; the ablation's from the first-order HMM alone.
    """
    make = {order: functools.partial(TrigramHMMTagger, emission_order=order) for order in (1, 2)}
    start = time.perf_counter()
    lists = {"train": jackknife_nbest(words["train"], tags["train"], n_folds=n_folds, n=n_best,
                                      make_tagger=make[TAGGERS[base]], n_jobs=n_jobs)}
    meta = {"lang": lang, "jackknife_seconds": time.perf_counter() - start,
            "train_sentences": len(words["train"]), "train_tokens": int(sum(map(len, words["train"])))}
    arrays = {}
    known = {w for sent in words["train"] for w in sent}
    for model in (HMM, HMM_FIRST) if base == HMM else (base,):
        tag = "" if model == base else "_1"
        start = time.perf_counter()
        tagger = make[TAGGERS[model]]().fit(words["train"], tags["train"])
        meta[f"train_seconds{tag}"] = time.perf_counter() - start
        for split in ("dev", "test"):
            start = time.perf_counter()
            decoded = tagger.nbest_many(words[split], n=n_best)
            meta[f"{split}_nbest_seconds{tag}"] = time.perf_counter() - start
            meta.update(_known_unknown(words[split], tags[split], decoded, known, f"{split}{tag}"))
            if model == base:
                lists[split] = decoded
            else:
                first, best = _sentence_correct(decoded, tags[split])
                tokens = float(sum(map(len, tags[split])))
                arrays[f"{split}.correct_1"] = first
                meta[f"{split}_accuracy_1"], meta[f"{split}_oracle_1"] = first.sum() / tokens, best.sum() / tokens
    x_vec, y_vec = fit_views(words["train"], tags["train"], lists["train"], x_view_for(lang))
    vocabulary, qid_start = {"pairs": None, "ngrams": None}, 0
    for split in SPLITS:
        data = build_nbest_data(words[split], tags[split], lists[split], x_vec, y_vec, qid_start)
        qid_start += len(words[split])
        for name in _NBEST_FIELDS:
            arrays[f"{split}.{name}"] = getattr(data, name)
        candidates = [[list(t) for t, _ in one] for one in lists[split]]
        for name, featurise in (("pairs", suffix_tag_pair_features), ("ngrams", word_tag_ngram_features)):
            arrays[f"{split}.{name}"], vocabulary[name] = featurise(words[split], candidates, vocabulary[name])
        meta[f"{split}_sentences"] = len(words[split])
        meta[f"{split}_tokens"] = int(sum(len(w) for w in words[split]))
    return arrays, meta


def prepare(out, lang, data_dir=None, n_jobs=1, base=HMM):
    """Tag, jackknife and featurise one language once; returns the cache path ``OUT/data/LANG.npz``
    (``LANG-first-order-lists.npz`` for the lists of the first-order HMM, ``base=HMM_FIRST``)."""
    path = Path(out) / "data" / (f"{lang}.npz" if base == HMM else f"{lang}-first-order-lists.npz")
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    words, tags = {}, {}
    words["train"], tags["train"], kind = load_tagged(lang, "train", data_dir=data_dir)
    for split in ("dev", "test"):
        words[split], tags[split], _ = load_tagged(lang, split, kind=kind, data_dir=data_dir)
    arrays, meta = prepare_arrays(words, tags, lang, n_jobs=n_jobs, base=base)
    save_arrays(path, arrays, {**meta, "kind": kind}, CACHE_FORMAT, CACHE_VERSION)
    return path


#: the per-split arrays besides the n-best lists: boosting features and the first-order HMM's correct tokens
EXTRAS = ("pairs", "ngrams", "correct_1")


def split_data(arrays):
    """({split: NBestData}, {split: {extra: array}}) from the cache's arrays."""
    data = {split: NBestData(**{name: arrays[f"{split}.{name}"] for name in _NBEST_FIELDS}) for split in SPLITS}
    extra = {split: {name: arrays[f"{split}.{name}"] for name in EXTRAS if f"{split}.{name}" in arrays}
             for split in SPLITS}
    return data, extra


@functools.lru_cache(maxsize=2)
def load_language(path):
    """({split: NBestData}, {split: {extra: array}}, meta) of a prepared language."""
    arrays, meta = load_arrays(path, CACHE_FORMAT, CACHE_VERSION, what="n-best cache")
    return (*split_data(arrays), meta)
