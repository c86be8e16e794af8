"""The runs of jagarlamudi2012 (the taggers, every reranker at every setting, the boosting baselines, the
ablation on the first-order HMM's lists) and ``reproduce``."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from structrank_lab.experiments.claims import claims_section
from structrank_lab.experiments.jagarlamudi2012.claims import claims
from structrank_lab.experiments.jagarlamudi2012.data import load_language, prepare
from structrank_lab.experiments.jagarlamudi2012.design import (ABLATION, BOOSTING, CENTRE, DEV_SENTENCE, EXPERIMENT, HMM,
                                                           LANGUAGE_NAMES, LANGUAGES, NO_VITERBI_SENTENCE, ON_FIRST,
                                                           RERANKERS, SENTENCE, SPLITS, TAGGERS, base_of,
                                                           reranker_grid)
from structrank_lab.experiments.jagarlamudi2012.report import report_sections
from structrank_lab.experiments.report import write_report
from structrank_lab.experiments.runner import Measurement, RunSpec, SpecRun, claim_folder, run_experiment
from structrank.learners.nbest_boosting import BoostingReranker
from structrank.learners.lowdim import LowDimReranker
from structrank_lab.nlp.conllu import treebank_file


def run_spec(spec, data, extra, meta):
    """The measurements of one run on one language's prepared data (``load_language``)."""
    if spec.split == "tagger":
        return _tagger_run(spec.model, data, extra, meta)
    learner = spec.model.removesuffix(ON_FIRST)
    if learner in BOOSTING:
        return _boosting_run(learner, spec.params, data, extra)
    return _reranker_run(learner, spec.params, data)


def _run(spec, paths):
    """``run_spec`` on the prepared data of the spec's (language, base tagger)."""
    return run_spec(spec, *load_language(paths[spec.dataset, base_of(spec.model)]))


def _correct(d, scores):
    """Correct tokens of each list's chosen candidate."""
    return d.size - d.loss[d.chosen(scores)]


def _sentences(correct, hmm_correct, prefix=SENTENCE):
    """Per-sentence correct tokens where they differ from the HMM's: what a paired test needs."""
    return [Measurement(f"{prefix}{i}", "correct tokens", float(correct[i]))
            for i in np.flatnonzero(correct != hmm_correct)]


def _dev_sentences(correct, data):
    """``_sentences`` on dev, against the dev lists' first candidates."""
    return _sentences(correct, _correct(data["dev"], data["dev"].base_score), DEV_SENTENCE)


def _tagger_run(model, data, extra, meta):
    """Accuracy, 10-best oracle, known/unknown-word accuracy and speed of one of the two HMMs."""
    tag = "" if model == HMM else "_1"
    out = []
    for split in ("dev", "test"):
        d = data[split]
        if model == HMM:
            accuracy, oracle = d.accuracy_of(d.base_score), d.oracle_accuracy()
        else:
            accuracy, oracle = meta[f"{split}_accuracy_1"], meta[f"{split}_oracle_1"]
        out += [Measurement(f"{split}:accuracy", "token", accuracy), Measurement(f"{split}:oracle", "token", oracle),
                Measurement(f"{split}:nbest_per_second", "time", meta[f"{split}_sentences"]
                            / meta[f"{split}_nbest_seconds{tag}"])]
        out += [Measurement(f"{split}:{name}", "token", meta[f"{split}{tag}_{name}"])
                for name in ("unknown_rate", "known_accuracy", "unknown_accuracy")]
    hmm_correct = _correct(data["test"], data["test"].base_score)
    if model == HMM:
        hmm_dev = _correct(data["dev"], data["dev"].base_score)
        out += [Measurement(f"{prefix}{i}", "correct tokens", float(c))
                for prefix, correct in ((SENTENCE, hmm_correct), (DEV_SENTENCE, hmm_dev)) for i, c in enumerate(correct)]
        out += [Measurement("test:sentences", "count", float(hmm_correct.size)),
                Measurement("test:tokens", "count", float(data["test"].size.sum())),
                Measurement("dev:sentences", "count", float(hmm_dev.size)),
                Measurement("dev:tokens", "count", float(data["dev"].size.sum())),
                Measurement("train:sentences", "count", float(meta["train_sentences"])),
                Measurement("train:tokens", "count", float(meta["train_tokens"])),
                Measurement("jackknife_seconds", "time", meta["jackknife_seconds"])]
    else:
        out += _sentences(extra["test"]["correct_1"], hmm_correct) + _dev_sentences(extra["dev"]["correct_1"], data)
    return out + [Measurement("train_seconds", "time", meta[f"train_seconds{tag}"])]


def _reranker_run(name, params, data):
    params = {k: v for k, v in params.items() if k in ("k", "tau", "lam")}
    start = time.perf_counter()
    model = LowDimReranker(model=RERANKERS[name], **params).fit(data["train"], eval_set=data["dev"])
    seconds = time.perf_counter() - start
    out = [Measurement("train_seconds", "time", seconds), Measurement("w", "param", float(model.w_)),
           Measurement("exact_Cxx", "param", float(model.covariance_["x"] != "diagonal")),
           Measurement("exact_Cyy", "param", float(model.covariance_["y"] != "diagonal"))]
    slacks = [h["slack"] for h in model.history_ if "slack" in h]
    if slacks:  # Alg. 1 (discriminative): how far the summed slack still moved at the last of its iterations
        change = abs(slacks[-1] - slacks[-2]) / max(slacks[-2], 1e-300) if len(slacks) > 1 else 0.0
        out += [Measurement("iterations", "param", float(len(slacks))),
                Measurement("slack_last_change", "param", float(change))]
    for split in ("dev", "test"):
        d = data[split]
        out += [Measurement(f"{split}:accuracy", "token", d.accuracy_of(model.predict(d))),
                Measurement(f"{split}:accuracy_no_viterbi", "token", d.accuracy_of(model.projection_scores(d)))]
    test, hmm_correct = data["test"], _correct(data["test"], data["test"].base_score)
    return (out + _sentences(_correct(test, model.predict(test)), hmm_correct)
            + _sentences(_correct(test, model.projection_scores(test)), hmm_correct, NO_VITERBI_SENTENCE)
            + _dev_sentences(_correct(data["dev"], model.predict(data["dev"])), data))


def _features(extra, split, blocks):
    parts = [extra[split][b] for b in blocks]
    return parts[0] if len(parts) == 1 else sp.hstack(parts, format="csr")


def _boosting_run(name, params, data, extra):
    regularization, blocks = BOOSTING[name]
    features = {split: _features(extra, split, blocks) for split in SPLITS}
    start = time.perf_counter()
    model = BoostingReranker(n_rounds=params["n_rounds"], regularization=regularization).fit(
        features["train"], data["train"], eval_set=(features["dev"], data["dev"]))
    out = [Measurement("train_seconds", "time", time.perf_counter() - start),
           Measurement("rounds", "param", float(model.n_rounds_))]
    for split in ("dev", "test"):
        out.append(Measurement(f"{split}:accuracy", "token", data[split].accuracy_of(model.predict(features[split],
                                                                                                   data[split]))))
    test = data["test"]
    return (out + _sentences(_correct(test, model.predict(features["test"], test)), _correct(test, test.base_score))
            + _dev_sentences(_correct(data["dev"], model.predict(features["dev"], data["dev"])), data))


def plan(langs, quick=False):
    specs = []
    for lang in langs:
        specs += [RunSpec(EXPERIMENT, lang, "tagger", "", 0, model, {}) for model in TAGGERS]
        for model in RERANKERS:
            for point in reranker_grid(model, quick):
                specs.append(RunSpec(EXPERIMENT, lang, "rerank", "", 0, model, point))
        for model in BOOSTING:
            specs.append(RunSpec(EXPERIMENT, lang, "rerank", "", 0, model, {"n_rounds": 200 if quick else 2000}))
        if not quick:
            specs += [RunSpec(EXPERIMENT, lang, "rerank", "", 0, model + ON_FIRST,
                              dict(CENTRE) if model in RERANKERS else {"n_rounds": 2000}) for model in ABLATION]
    return specs


def reproduce(out, data_dir=None, quick=False, n_jobs=1, keep=None):
    """Prepare every language (``quick``: French, the smallest, one setting) and run the rerankers; write the report."""
    out = Path(out)
    paths, treebanks = {}, {}
    for lang in ("fr",) if quick else LANGUAGES:
        try:
            files = [treebank_file(lang, split, data_dir) for split in SPLITS]
        except FileNotFoundError as exc:
            print(f"{LANGUAGE_NAMES[lang]}: {exc}; skipped", file=sys.stderr)
            continue
        # OUT/data caches the tagged treebank: refuse other data first (the folder, so that a split renamed or
        # decompressed is other data too: treebank_file reads .conllu or .conllu.gz)
        treebanks[lang] = sorted({f.parent for f in files})
        claim_folder(out, EXPERIMENT, treebanks[lang])
        print(f"{EXPERIMENT}: tagging and featurising {LANGUAGE_NAMES[lang]}", file=sys.stderr)
        for base in (HMM,) if quick else TAGGERS:
            paths[lang, base] = str(prepare(out, lang, data_dir, n_jobs=n_jobs, base=base))
    if not paths:
        raise FileNotFoundError("no Universal Dependencies treebank of the paper's languages in the data folder")
    rows = run_experiment(out, plan(sorted({lang for lang, _ in paths}, key=LANGUAGES.index), quick), SpecRun(_run, paths),
                          n_jobs, EXPERIMENT, inputs=lambda spec: treebanks[spec.dataset], kept=keep)
    sections = [("Claims", claims_section(claims(rows)))] + report_sections(rows, out)
    write_report(out / "report.md", sections, title="Jagarlamudi & Daumé III (2012), reproduced")
    print(f"wrote {out / 'results.csv'} and {out / 'report.md'}", file=sys.stderr)
    return rows
