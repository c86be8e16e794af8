"""The recorded runs of jagarlamudi2012 read back: each model's dev-chosen setting, each sentence's correct tokens
(test, dev, and test without the decoder's score) and the paired tests over test sentences."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from structrank_lab.experiments.jagarlamudi2012.design import BOOSTING, DEV_SENTENCE, HMM, HMM_FIRST, SENTENCE, base_of
from structrank_lab.experiments.run_key import params_of as _params
from structrank.metrics.significance import paired_test, sign_test_p


def collect(rows):
    """{(lang, model, setting): {metric: value}} with setting a sorted tuple of the run's parameters."""
    runs = {}
    for r in rows:
        key = (r["dataset"], r["model"], tuple(sorted(_params(r).items())))
        runs.setdefault(key, {})[r["metric"]] = r["value"]
    return runs


def best(runs, lang, model, metric="dev:accuracy"):
    """(setting, metrics) of ``model`` on ``lang`` with the best dev value of ``metric``; first in grid order on ties."""
    candidates = [(setting, m) for (l, mo, setting), m in runs.items() if l == lang and mo == model and metric in m]
    if not candidates:
        return None
    return max(candidates, key=lambda item: item[1][metric])


def accuracy(runs, lang, model, split="test", metric="accuracy"):
    """``split`` accuracy of ``model`` at its dev-chosen setting (a tagger has one), or None."""
    chosen = best(runs, lang, model, f"dev:{metric}")
    return None if chosen is None else chosen[1].get(f"{split}:{metric}")


def improvements(runs, langs, model="Discriminative"):
    """{lang: test accuracy of the dev-chosen ``model`` minus that of the HMM whose lists it reranks}, in points."""
    out = {}
    for l in langs:
        chosen, hmm = best(runs, l, model), runs.get((l, base_of(model), ()), {})
        if chosen and "test:accuracy" in hmm:
            out[l] = 100 * (chosen[1]["test:accuracy"] - hmm["test:accuracy"])
    return out


# -- significance over test sentences --------------------------------------------------------------


def sentence_values(runs, lang, model, prefix=SENTENCE, select="dev:accuracy", setting=None):
    """Correct tokens of every sentence of a split for ``model`` (None if not recorded).

    The split and what is counted follow ``prefix``: ``SENTENCE`` (test), ``DEV_SENTENCE`` (dev) or
    ``NO_VITERBI_SENTENCE`` (test, a reranker without the decoder's score). The run is ``setting``'s, else the one
    with the best ``select`` (a tagger has one). The HMM run records every sentence; the first-order HMM and the
    rerankers only where they differ from the tagger whose lists they rerank (the ablation's: the first-order HMM).
    """
    base = DEV_SENTENCE if prefix == DEV_SENTENCE else SENTENCE  # what the tagger below records
    hmm = runs.get((lang, HMM, ()))
    chosen = (setting, runs.get((lang, model, setting))) if setting is not None else best(runs, lang, model, select)
    # the dev sentences and the sentences without the decoder's score came later than the test sentences: a store
    # whose HMM run has no dev count predates them (its runs recorded none)
    recorded = hmm and "test:sentences" in hmm and (prefix == SENTENCE or "dev:sentences" in hmm)
    if not recorded or chosen is None or chosen[1] is None:
        return None
    if model == HMM:
        count = hmm[f"{'dev' if base == DEV_SENTENCE else 'test'}:sentences"]
        return np.array([hmm[f"{base}{i}"] for i in range(int(count))])
    values = sentence_values(runs, lang, base_of(model) if model != HMM_FIRST else HMM, base)
    if values is None:
        return None
    for key, value in chosen[1].items():
        if key.startswith(prefix):
            values[int(key[len(prefix):])] = value
    return values


def accuracy_units(runs, lang, model, prefix=SENTENCE, select="dev:accuracy", setting=None):
    """``sentence_values`` over the split's mean sentence length: one value per sentence whose mean is the token
    accuracy, the units of the claims' paired tests (``verdict_rules``, scaled to points); None if not recorded."""
    values = sentence_values(runs, lang, model, prefix, select, setting)
    if values is None:
        return None
    split = "dev" if prefix == DEV_SENTENCE else "test"
    return values * values.size / runs[(lang, HMM, ())][f"{split}:tokens"]


@dataclass(frozen=True)
class Comparison:
    """Model a against model b on the same test sentences."""

    a: str
    b: str
    points: float  #: test token accuracy of a minus b, in points
    differing: int  #: sentences where the two differ in correct tokens
    rand_p: float  #: paired randomisation (sign-flip) test over sentences, two-sided
    t_p: float  #: paired t-test over sentences, two-sided
    sign_p: float  #: exact sign test over the sentences that differ, two-sided

    def significant(self, alpha):
        """Better (or worse) at level ``alpha`` by the randomisation test."""
        return self.rand_p < alpha


def compare(runs, lang, a, b):
    """The paired tests of the dev-chosen ``a`` against the dev-chosen ``b`` over test sentences, or None.

    The values are each sentence's correct tokens, so the mean difference is the token-accuracy
    difference times the mean sentence length, and the randomisation test is a test of it.
    """
    va, vb = sentence_values(runs, lang, a), sentence_values(runs, lang, b)
    if va is None or vb is None:
        return None
    test = paired_test(va, vb)
    tokens = runs[(lang, HMM, ())]["test:tokens"]
    return Comparison(a, b, 100 * float((va - vb).sum()) / tokens, int(np.count_nonzero(va != vb)), test.rand_p,
                      test.t_p, sign_test_p(va - vb))


def best_boosting(runs, lang, models=tuple(BOOSTING)):
    """The boosting reranker with the best dev accuracy on ``lang`` (None if none was run)."""
    scored = [(accuracy(runs, lang, m, "dev"), m) for m in models if accuracy(runs, lang, m, "dev") is not None]
    return max(scored)[1] if scored else None


def _p(value):
    return "—" if value is None else f"{value:.2g}" if value >= 1e-4 else "<1e-4"
