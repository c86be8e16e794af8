"""Speed and accuracy of the trigram HMM tagger (the base tagger of Jagarlamudi & Daumé 2012).

On one UD treebank (structrank_lab.nlp.conllu): the time to fit on the training split, the
sentences per second of Viterbi and of 10-best decoding on the dev split (the whole split in one
call, the median of several calls after numba compilation; the kernels are single-threaded), and
the dev and test token accuracy of the Viterbi path and of the best candidate of each 10-best
list (the oracle a reranker could reach).
"""

from __future__ import annotations

import time

import numpy as np

from structrank_lab.bench.timing import timings
from structrank.learners.nbest_boosting import BoostingReranker
from structrank.learners.lowdim import LowDimReranker
from structrank_lab.nlp.conllu import UD_TREEBANKS, load_tagged
from structrank_lab.nlp.hmm import TrigramHMMTagger, token_accuracy
from structrank_lab.nlp.pair_features import suffix_tag_pair_features
from structrank_lab.nlp.tagging import jackknife_nbest, reranking_data


def _oracle_accuracy(nbest_lists, references):
    wrong = sum(min(sum(a != b for a, b in zip(tags, ref)) for tags, _ in lists)
                for lists, ref in zip(nbest_lists, references))
    return 1.0 - wrong / sum(map(len, references))


def bench_tagging(lang="en", repeat=5, n=10, data_dir=None):
    """Figures of the tagger on the UD treebank of ``lang`` (en, zh, fr, sv), as a dict."""
    train_words, train_tags, kind = load_tagged(lang, "train", data_dir=data_dir)
    splits = {split: load_tagged(lang, split, kind=kind, data_dir=data_dir)[:2] for split in ("dev", "test")}
    start = time.perf_counter()
    tagger = TrigramHMMTagger().fit(train_words, train_tags)
    fit_s = time.perf_counter() - start
    dev_words = splits["dev"][0]
    tagger.nbest_many(dev_words[:5], n=n)  # compile
    tagger.predict(dev_words[:5])
    viterbi_s = float(np.median(timings(lambda: tagger.predict(dev_words), repeat, min_repeat=3)))
    nbest_s = float(np.median(timings(lambda: tagger.nbest_many(dev_words, n=n), repeat, min_repeat=3)))
    figures = dict(lang=lang, treebank=UD_TREEBANKS[lang], kind=kind, n_tags=len(tagger.tags_), n=n,
                   train_sentences=len(train_words), train_tokens=sum(map(len, train_words)),
                   dev_sentences=len(dev_words), fit_s=fit_s, viterbi_sps=len(dev_words) / viterbi_s,
                   nbest_sps=len(dev_words) / nbest_s)
    for split, (words, tags) in splits.items():
        figures[f"{split}_accuracy"] = token_accuracy(tagger.predict(words), tags)
        figures[f"{split}_oracle"] = _oracle_accuracy(tagger.nbest_many(words, n=n), tags)
    return figures


def format_tagging(figures) -> list:
    """Report lines of :func:`bench_tagging`'s figures."""
    f = figures
    lines = [
        f"trigram HMM tagger (TnT-style) on {f['treebank']} ({f['kind'].upper()}, {f['n_tags']} tags): "
        f"{f['train_sentences']:,} training sentences, {f['train_tokens']:,} tokens",
        f"  fit: {f['fit_s']:.2f} s",
        f"  decoding the {f['dev_sentences']:,} dev sentences, single thread, median: "
        f"Viterbi {f['viterbi_sps']:,.0f} sentences/s, {f['n']}-best {f['nbest_sps']:,.0f} sentences/s",
        f"  token accuracy: dev {100 * f['dev_accuracy']:.2f}%, test {100 * f['test_accuracy']:.2f}%",
        f"  {f['n']}-best oracle: dev {100 * f['dev_oracle']:.2f}%, test {100 * f['test_oracle']:.2f}%",
    ]
    if f["lang"] == "en":
        lines.append("  targets: 10-best at least 2,000 sentences/s; about 92% dev / 92.6% test, 10-best oracle about 96%")
    return lines


def bench_rerankers(lang="en", data_dir=None):
    """Seconds of one fit of each reranker of Jagarlamudi & Daumé on ``lang``'s jackknifed lists.

    The low-dimensional models at the paper's English optimum (k = 75, tau = 0.95, lambda = 0.3),
    w chosen on dev inside the fit; the boosting baselines at 2,000 rounds with dev evaluation.
    """
    start = time.perf_counter()
    data = reranking_data(lang, data_dir=data_dir)
    prepare_s = time.perf_counter() - start
    rows = []
    for model in ("generative", "softened", "discriminative"):
        start = time.perf_counter()
        LowDimReranker(model=model, k=75, tau=0.95, lam=0.3).fit(data["train"], eval_set=data["dev"])
        rows.append(dict(model=model, seconds=time.perf_counter() - start))
    # the boosting features need the candidates themselves: the same lists as reranking_data's
    words, tags, kind = load_tagged(lang, "train", data_dir=data_dir)
    dev_words, _, _ = load_tagged(lang, "dev", kind=kind, data_dir=data_dir)
    train_lists = jackknife_nbest(words, tags)
    train_pairs, vocabulary = suffix_tag_pair_features(words, [[list(t) for t, _ in one] for one in train_lists])
    dev_pairs, _ = suffix_tag_pair_features(
        dev_words, [[list(t) for t, _ in one] for one in data["tagger"].nbest_many(dev_words)], vocabulary)
    for label, regularization in (("boosting (Collins & Koo)", None), ("boosting, l1-regularised", "l1")):
        start = time.perf_counter()
        BoostingReranker(n_rounds=2000, regularization=regularization).fit(train_pairs, data["train"],
                                                                             eval_set=(dev_pairs, data["dev"]))
        rows.append(dict(model=label, seconds=time.perf_counter() - start))
    return dict(lang=lang, lists=data["train"].n_lists, candidates=data["train"].x.shape[0],
                d1=data["train"].x.shape[1], d2=data["train"].y.shape[1], prepare_s=prepare_s, rows=rows)


def format_rerankers(figures) -> list:
    f = figures
    lines = [f"rerankers on {f['lang']}: {f['lists']:,} jackknifed training lists, {f['candidates']:,} candidates, "
             f"d1 = {f['d1']:,} input features, d2 = {f['d2']:,} output features "
             f"(tagging, jackknifing and views: {f['prepare_s']:.1f} s)"]
    lines += [f"  {row['model']:<26} {row['seconds']:7.1f} s per fit" for row in f["rows"]]
    return lines


def markdown_section(tagging, rerankers=None) -> str:
    lines = format_tagging(tagging) + ([""] + format_rerankers(rerankers) if rerankers else [])
    return "## POS tagging and n-best reranking\n\n```\n" + "\n".join(lines) + "\n```\n"
