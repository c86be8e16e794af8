"""The recorded runs of jagarlamudi2012 read back: each model's dev-chosen setting, and the paired tests
over test sentences."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from structrank.experiments.jagarlamudi2012.design import BOOSTING, HMM, HMM_FIRST, SENTENCE, base_of
from structrank.metrics.significance import paired_test, sign_test_p


def _params(row):
    return row["params"] if isinstance(row["params"], dict) else json.loads(row["params"])


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


def sentence_values(runs, lang, model):
    """Correct tokens of every test sentence for the dev-chosen setting of ``model`` (None if not run).

    The HMM run records every sentence; the first-order HMM and the rerankers only where they
    differ from the tagger whose lists they rerank (the ablation's: the first-order HMM).
    """
    hmm, chosen = runs.get((lang, HMM, ())), best(runs, lang, model)
    if not hmm or "test:sentences" not in hmm or chosen is None:
        return None
    if model == HMM:
        values = np.array([hmm[f"{SENTENCE}{i}"] for i in range(int(hmm["test:sentences"]))])
    else:
        values = sentence_values(runs, lang, base_of(model) if model != HMM_FIRST else HMM)
        if values is None:
            return None
    for key, value in chosen[1].items():
        if key.startswith(SENTENCE):
            values[int(key[len(SENTENCE):])] = value
    return values


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
