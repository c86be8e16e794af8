"""jagarlamudi2012's numbers are pinned: a small slice of French-Sequoia through the whole pipeline.

400 training sentences (4 jackknife folds), the first 150 of dev and of test: both HMMs, every
reranker at one fixed setting, the four boosting baselines at 100 rounds, and the paired tests of
Table 2's significance section, each against tests/pinned/jagarlamudi2012.json to ``check_pinned``'s
tolerance (the same code as ``structrank reproduce jagarlamudi2012``: ``prepare_arrays``, ``run_spec``, ``compare``).
``STRUCTRANK_UPDATE_PINS=all`` rewrites the file when a change is meant to move them.
"""

from __future__ import annotations

import json

from test_pinned import check_pinned

SIZES = {"train": 400, "dev": 150, "test": 150}
SETTINGS = {"Generative": {"k": 20, "tau": 0.95}, "Softened-Disc": {"k": 20, "tau": 0.95, "lam": 0.3},
            "Discriminative": {"k": 20, "tau": 0.95, "lam": 0.3}}


def test_jagarlamudi2012_french_slice_is_pinned(data_root):
    from structrank_lab.experiments import jagarlamudi2012 as jag
    from structrank_lab.experiments.jagarlamudi2012.data import prepare_arrays, split_data
    from structrank_lab.experiments.jagarlamudi2012.design import (BOOSTING, DEV_SENTENCE, HMM, HMM_FIRST, NO_VITERBI_SENTENCE,
                                                                SENTENCE, TABLE2_MODELS, TAGGERS)
    from structrank_lab.experiments.jagarlamudi2012.plan import run_spec
    from structrank_lab.experiments.jagarlamudi2012.recorded import accuracy, collect, compare, sentence_values
    from structrank_lab.experiments.runner import RunSpec
    from structrank_lab.nlp.conllu import load_tagged

    words, tags = {}, {}
    words["train"], tags["train"], kind = load_tagged("fr", "train", data_dir=data_root)
    for split in ("dev", "test"):
        words[split], tags[split], _ = load_tagged("fr", split, kind=kind, data_dir=data_root)
    words = {s: w[:SIZES[s]] for s, w in words.items()}
    tags = {s: t[:SIZES[s]] for s, t in tags.items()}
    arrays, meta = prepare_arrays(words, tags, "fr", n_folds=4)
    data, extra = split_data(arrays)
    specs = [RunSpec(jag.EXPERIMENT, "fr", "tagger", "", 0, model, {}) for model in TAGGERS]
    specs += [RunSpec(jag.EXPERIMENT, "fr", "rerank", "", 0, model, params) for model, params in SETTINGS.items()]
    specs += [RunSpec(jag.EXPERIMENT, "fr", "rerank", "", 0, model, {"n_rounds": 100}) for model in BOOSTING]
    rows, values = [], {}
    for spec in specs:
        for m in run_spec(spec, data, extra, meta):
            rows.append({"dataset": "fr", "model": spec.model, "params": json.dumps(spec.params), "metric": m.metric,
                         "value": m.value})
            if m.convention != "time" and not m.metric.startswith((SENTENCE, DEV_SENTENCE, NO_VITERBI_SENTENCE)):
                values[f"{spec.model}/{m.metric}"] = float(m.value)
    runs = collect(rows)
    for model in (HMM_FIRST, *TABLE2_MODELS):
        c = compare(runs, "fr", model, HMM)
        values.update({f"{model} vs HMM/{k}": float(getattr(c, k)) for k in ("points", "differing", "rand_p", "t_p",
                                                                            "sign_p")})
    # the per-sentence records rebuild each model's test accuracy exactly
    tokens = runs[("fr", HMM, ())]["test:tokens"]
    for model in (HMM_FIRST, *TABLE2_MODELS):
        assert abs(sentence_values(runs, "fr", model).sum() / tokens - accuracy(runs, "fr", model)) < 1e-12
    check_pinned("jagarlamudi2012", values)
