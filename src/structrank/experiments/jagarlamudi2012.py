"""``structrank reproduce jagarlamudi2012``: low-dimensional reranking of POS-tag n-best lists.

Jagarlamudi & Daumé III (2012) on the four languages of the paper, with the Universal
Dependencies treebanks that the data folder holds complete (docs/ARCHITECTURE.md says why these):
English-EWT, Chinese-GSD (r1.4), French-Sequoia and Swedish-LinES (r2.4).

1. Per language (``prepare``, cached in ``OUT/data/LANG.npz``): a trigram HMM tagger
   (structrank.nlp.hmm) trained on train tags dev and test with its exact 10-best Viterbi; the
   training sentences get their 10-best lists by 10-fold jackknifing over contiguous blocks; the
   two views of every candidate (structrank.nlp.tagging) and the suffix-tag pair features of
   the boosting baselines (structrank.nlp.pair_features).
2. Runs: every reranker at every setting of its grid, and the two boosting baselines, each
   trained on the jackknifed training lists; the Viterbi weight w of Eq. 13 (and the boosting
   rounds) chosen on dev. The report chooses each model's setting on dev accuracy.
3. Report: Table 2 (baseline, 10-best oracle, every reranker; dev and test token accuracy),
   Table 3 (the rerankers without the Viterbi score), Fig. 1 (English dev accuracy against tau
   and against lambda), the tagger's accuracy and speed per language, and the paper's published
   Table 2 rows beside ours (marked as published).
"""

from __future__ import annotations

import functools
import json
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from structrank.data.nbest import NBestData
from structrank.experiments.report import new_figure, save_figure, write_report
from structrank.experiments.runner import Measurement, RunSpec, run_experiment, wall_time

EXPERIMENT = "jagarlamudi2012"
LANGUAGES = ("en", "zh", "fr", "sv")
LANGUAGE_NAMES = {"en": "English-EWT", "zh": "Chinese-GSD r1.4", "fr": "French-Sequoia", "sv": "Swedish-LinES r2.4"}
N_BEST = 10
N_FOLDS = 10
SPLITS = ("train", "dev", "test")
_NBEST_FIELDS = ("x", "y", "loss", "base_score", "qid", "gold_x", "gold_y", "size")


# -- data preparation -------------------------------------------------------------------------------


CACHE_FORMAT, CACHE_VERSION = "structrank-nbest-cache", 1


def _save_arrays(path, arrays: dict, meta: dict):
    """One npz of dense arrays and CSR matrices (as data/indices/indptr/shape), ``meta`` in its header."""
    from structrank.model_io import write_archive

    flat = {}
    for name, value in arrays.items():
        if sp.issparse(value):
            value = value.tocsr()
            for part in ("data", "indices", "indptr"):
                flat[f"{name}|{part}"] = getattr(value, part)
            flat[f"{name}|shape"] = np.array(value.shape, dtype=np.int64)
        else:
            flat[name] = np.asarray(value)
    write_archive(path, {"format": CACHE_FORMAT, "version": CACHE_VERSION, "meta": meta}, flat)


def _load_arrays(path):
    from structrank.model_io import read_archive

    header, flat = read_archive(path, CACHE_FORMAT, CACHE_VERSION, what="n-best cache")
    arrays = {}
    for key, value in flat.items():
        name, _, part = key.partition("|")
        if not part:
            arrays[name] = value
        elif part == "shape":
            arrays[name] = sp.csr_matrix((flat[f"{name}|data"], flat[f"{name}|indices"], flat[f"{name}|indptr"]),
                                         shape=tuple(value))
    return arrays, header["meta"]


def prepare(out, lang, data_dir=None, n_jobs=1):
    """Tag, jackknife and featurise one language once; returns the cache path ``OUT/data/LANG.npz``."""
    from structrank.nlp.conllu import load_tagged
    from structrank.nlp.hmm import TrigramHMMTagger
    from structrank.nlp.pair_features import suffix_tag_pair_features
    from structrank.nlp.tagging import build_nbest_data, fit_views, jackknife_nbest, x_view_for

    path = Path(out) / "data" / f"{lang}.npz"
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    words, tags, lists = {}, {}, {}
    words["train"], tags["train"], kind = load_tagged(lang, "train", data_dir=data_dir)
    start = time.perf_counter()
    lists["train"] = jackknife_nbest(words["train"], tags["train"], n_folds=N_FOLDS, n=N_BEST, n_jobs=n_jobs)
    jackknife_seconds = time.perf_counter() - start
    start = time.perf_counter()
    tagger = TrigramHMMTagger().fit(words["train"], tags["train"])
    meta = {"lang": lang, "kind": kind, "train_seconds": time.perf_counter() - start,
            "jackknife_seconds": jackknife_seconds}
    for split in ("dev", "test"):
        words[split], tags[split], _ = load_tagged(lang, split, kind=kind, data_dir=data_dir)
        start = time.perf_counter()
        lists[split] = tagger.nbest_many(words[split], n=N_BEST)
        meta[f"{split}_nbest_seconds"] = time.perf_counter() - start
    x_vec, y_vec = fit_views(words["train"], tags["train"], lists["train"], x_view_for(lang))
    arrays, vocabulary, qid_start = {}, None, 0
    for split in SPLITS:
        data = build_nbest_data(words[split], tags[split], lists[split], x_vec, y_vec, qid_start)
        qid_start += len(words[split])
        for name in _NBEST_FIELDS:
            arrays[f"{split}.{name}"] = getattr(data, name)
        candidates = [[list(t) for t, _ in one] for one in lists[split]]
        arrays[f"{split}.pairs"], vocabulary = suffix_tag_pair_features(words[split], candidates, vocabulary)
        meta[f"{split}_sentences"] = len(words[split])
        meta[f"{split}_tokens"] = int(sum(len(w) for w in words[split]))
    _save_arrays(path, arrays, meta)
    return path


@functools.lru_cache(maxsize=2)
def load_language(path):
    """({split: NBestData}, {split: pair features}, meta) of a prepared language."""
    arrays, meta = _load_arrays(path)
    data = {split: NBestData(**{name: arrays[f"{split}.{name}"] for name in _NBEST_FIELDS}) for split in SPLITS}
    pairs = {split: arrays[f"{split}.pairs"] for split in SPLITS}
    return data, pairs, meta


# -- runs -------------------------------------------------------------------------------------------

# The paper tunes tau, lambda, k and w by grid search on dev (Sec. 4.2; English optimum of the
# discriminative model tau = 0.95, lambda = 0.3, k = 75). w is chosen inside each fit. The grid
# is a cross around that optimum, not a full product (a discriminative fit on English takes about
# a minute): tau along a line at lambda = 0.3, lambda along a line at tau = 0.95, and k = 150 at
# the centre. The lines are also Fig. 1.
CENTRE = {"k": 75, "tau": 0.95, "lam": 0.3}
TAUS = (0.5, 0.9, 0.95, 0.99)
LAMBDAS = (0.1, 0.3, 0.5, 0.7)
KS = (75, 150)
RERANKERS = {"Generative": "generative", "Softened-Disc": "softened", "Discriminative": "discriminative"}
BOOSTING = {"Collins (Sufx)": None, "Regularized (Sufx)": "l1"}

# Table 2 and 3 of the paper (token accuracy, %), shown beside ours, never computed with.
PAPER_TABLE2 = {  # model -> (dev en, zh, fr, sv, test en, zh, fr, sv)
    "Baseline": (96.74, 92.55, 96.94, 93.22, 96.15, 92.31, 97.41, 93.23),  # published
    "Oracle": (98.85, 98.41, 98.61, 96.96, 98.39, 98.19, 99.00, 96.48),
    "Collins (Sufx)": (96.66, 93.00, 96.87, 93.50, 96.06, 92.81, 97.35, 93.44),
    "Regularized (Sufx)": (96.60, 93.12, 96.90, 93.36, 96.00, 92.88, 97.38, 93.35),
    "Generative": (96.82, 93.14, 96.97, 93.46, 96.24, 92.95, 97.43, 93.26),
    "Softened-Disc": (96.85, 93.14, 97.04, 93.49, 96.32, 92.87, 97.53, 93.24),
    "Discriminative": (96.85, 93.17, 97.03, 93.50, 96.3, 92.91, 97.53, 93.36),
}
PAPER_TABLE3 = {"Generative": (94.83, 89.89, 96.1, 91.89), "Softened-Disc": (95.04, 89.61, 95.97, 91.95),
                "Discriminative": (94.95, 89.76, 95.82, 92.11)}


def reranker_grid(model, quick=False):
    """The settings of a low-dimensional reranker: lines through CENTRE along tau, lambda and k.

    The generative model has no lambda.
    """
    if quick:
        return [{"k": 75, "tau": 0.95} if model == "Generative" else dict(CENTRE)]
    points = [{**CENTRE, "tau": t} for t in TAUS] + [{**CENTRE, "k": k} for k in KS]
    if model != "Generative":
        points += [{**CENTRE, "lam": lam} for lam in LAMBDAS]
    unique = []
    for point in points:
        point = {k: v for k, v in point.items() if model != "Generative" or k != "lam"}
        if point not in unique:
            unique.append(point)
    return unique


class _Runner:
    """Picklable run function bound to the prepared data of each language."""

    def __init__(self, paths):
        self.paths = paths

    def __call__(self, spec):
        data, pairs, meta = load_language(self.paths[spec.dataset])
        if spec.split == "tagger":
            return _tagger_run(data, meta)
        if spec.model in BOOSTING:
            return _boosting_run(spec, data, pairs)
        return _reranker_run(spec, data)


def _tagger_run(data, meta):
    out = []
    for split in ("dev", "test"):
        d = data[split]
        out += [Measurement(f"{split}:accuracy", "token", d.accuracy_of(d.base_score)),
                Measurement(f"{split}:oracle", "token", d.oracle_accuracy()),
                Measurement(f"{split}:nbest_per_second", "time", meta[f"{split}_sentences"]
                            / meta[f"{split}_nbest_seconds"])]
    return out + [Measurement("train_seconds", "time", meta["train_seconds"]),
                  Measurement("jackknife_seconds", "time", meta["jackknife_seconds"])]


def _reranker_run(spec, data):
    from structrank.learners.lowdim import LowDimReranker

    params = {k: v for k, v in spec.params.items() if k in ("k", "tau", "lam")}
    start = time.perf_counter()
    model = LowDimReranker(model=RERANKERS[spec.model], **params).fit(data["train"], data["dev"])
    seconds = time.perf_counter() - start
    out = [Measurement("train_seconds", "time", seconds), Measurement("w", "param", float(model.w_)),
           Measurement("exact_Cxx", "param", float(model.covariance_["x"] != "diagonal")),
           Measurement("exact_Cyy", "param", float(model.covariance_["y"] != "diagonal"))]
    for split in ("dev", "test"):
        d = data[split]
        out += [Measurement(f"{split}:accuracy", "token", d.accuracy_of(model.predict(d))),
                Measurement(f"{split}:accuracy_no_viterbi", "token", d.accuracy_of(model.projection_scores(d)))]
    return out


def _boosting_run(spec, data, pairs):
    from structrank.learners.boosting import BoostingReranker

    start = time.perf_counter()
    model = BoostingReranker(n_rounds=spec.params["n_rounds"], regularization=BOOSTING[spec.model]).fit(
        pairs["train"], data["train"], dev_features=pairs["dev"], dev=data["dev"])
    out = [Measurement("train_seconds", "time", time.perf_counter() - start),
           Measurement("rounds", "param", float(model.n_rounds_))]
    for split in ("dev", "test"):
        out.append(Measurement(f"{split}:accuracy", "token", data[split].accuracy_of(model.predict(pairs[split],
                                                                                                   data[split]))))
    return out


def plan(langs, quick=False):
    specs = []
    for lang in langs:
        specs.append(RunSpec(EXPERIMENT, lang, "tagger", "", 0, "HMM", {}))
        for model in RERANKERS:
            for point in reranker_grid(model, quick):
                specs.append(RunSpec(EXPERIMENT, lang, "rerank", "", 0, model, point))
        for model in BOOSTING:
            specs.append(RunSpec(EXPERIMENT, lang, "rerank", "", 0, model, {"n_rounds": 200 if quick else 2000}))
    return specs


def reproduce(out, data_dir=None, quick=False, n_jobs=1):
    """Prepare every language (``quick``: French, the smallest, one setting) and run the rerankers; write the report."""
    from structrank.nlp.conllu import treebank_file

    out = Path(out)
    paths = {}
    for lang in ("fr",) if quick else LANGUAGES:
        try:
            for split in SPLITS:
                treebank_file(lang, split, data_dir)
        except FileNotFoundError as exc:
            print(f"{LANGUAGE_NAMES[lang]}: {exc}; skipped", file=sys.stderr)
            continue
        print(f"{EXPERIMENT}: tagging and featurising {LANGUAGE_NAMES[lang]}", file=sys.stderr)
        paths[lang] = str(prepare(out, lang, data_dir, n_jobs=n_jobs))
    if not paths:
        raise FileNotFoundError("no Universal Dependencies treebank of the paper's languages in the data folder")
    rows = run_experiment(out, plan(paths, quick), _Runner(paths), n_jobs, EXPERIMENT)
    write_report(out / "report.md", report_sections(rows, out), title="Jagarlamudi & Daumé III (2012), reproduced")
    print(f"wrote {out / 'results.csv'} and {out / 'report.md'}", file=sys.stderr)
    return rows


# -- report -----------------------------------------------------------------------------------------


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


def _pct(value):
    return "—" if value is None or not np.isfinite(value) else f"{100 * value:.2f}"


def _table(header, lines):
    return "\n".join(["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
                     + ["| " + " | ".join(line) + " |" for line in lines])


def table2(runs, langs):
    header = ["model", *(f"dev {l}" for l in langs), *(f"test {l}" for l in langs)]
    lines = []
    for label, metric in (("Baseline", "accuracy"), ("Oracle", "oracle")):
        values = {l: runs.get((l, "HMM", ()), {}) for l in langs}
        lines.append([label, *(_pct(values[l].get(f"{s}:{metric}")) for s in ("dev", "test") for l in langs)])
    for model in (*BOOSTING, *RERANKERS):
        chosen = {l: best(runs, l, model) for l in langs}
        lines.append([model, *(_pct(chosen[l][1][f"{s}:accuracy"]) if chosen[l] else "—"
                               for s in ("dev", "test") for l in langs)])
    order = {l: i for i, l in enumerate(LANGUAGES)}
    for model, values in PAPER_TABLE2.items():
        lines.append([f"published: {model}", *(f"{values[order[l]]:.2f}" for l in langs),
                      *(f"{values[4 + order[l]]:.2f}" for l in langs)])
    return _table(header, lines)


def table3(runs, langs):
    lines = []
    for model in RERANKERS:
        chosen = {l: best(runs, l, model, "dev:accuracy_no_viterbi") for l in langs}
        lines.append([model, *(_pct(chosen[l][1][f"{s}:accuracy_no_viterbi"]) if chosen[l] else "—"
                               for s in ("dev", "test") for l in langs)])
    order = {l: i for i, l in enumerate(LANGUAGES)}
    for model, values in PAPER_TABLE3.items():
        lines.append([f"published: {model} (test)", *("" for _ in langs), *(f"{values[order[l]]:.2f}" for l in langs)])
    return _table(["model", *(f"dev {l}" for l in langs), *(f"test {l}" for l in langs)], lines)


def improvements(runs, langs, model="Discriminative"):
    """{lang: test accuracy of the dev-chosen ``model`` minus the HMM's}, in points."""
    out = {}
    for l in langs:
        chosen, hmm = best(runs, l, model), runs.get((l, "HMM", ()), {})
        if chosen and "test:accuracy" in hmm:
            out[l] = 100 * (chosen[1]["test:accuracy"] - hmm["test:accuracy"])
    return out


def tagger_table(runs, langs):
    from structrank.nlp.conllu import UD_TAG_KIND  # the tag column load_tagged uses for each language

    lines = []
    for l in langs:
        m = runs.get((l, "HMM", ()), {})
        lines.append([LANGUAGE_NAMES[l], UD_TAG_KIND[l].upper(), _pct(m.get("dev:accuracy")),
                      _pct(m.get("test:accuracy")), _pct(m.get("dev:oracle")), _pct(m.get("test:oracle")),
                      f"{m.get('dev:nbest_per_second', float('nan')):.0f}", f"{m.get('train_seconds', float('nan')):.1f}",
                      f"{m.get('jackknife_seconds', float('nan')):.1f}"])
    return _table(["treebank", "tags", "dev acc", "test acc", "dev 10-best oracle", "test 10-best oracle",
                   "10-best sentences/s (dev, one thread)", "train s", "jackknife s"], lines)


def fig1(runs, path, model="Discriminative", lang="en"):
    """English dev accuracy against tau and against lambda, the other parameters at the grid's centre.

    (The paper fixes them at their optimum; our grid is two lines through CENTRE, so the centre
    is where both lines exist.)
    """
    if best(runs, lang, model) is None:
        return False
    fixed = dict(CENTRE)
    baseline = runs.get((lang, "HMM", ()), {}).get("dev:accuracy")
    fig = new_figure(figsize=(8, 3))
    for j, name in enumerate(("tau", "lam")):
        points = sorted((dict(s)[name], m["dev:accuracy"]) for (l, mo, s), m in runs.items()
                        if l == lang and mo == model and all(dict(s).get(k) == v for k, v in fixed.items() if k != name))
        ax = fig.add_subplot(1, 2, j + 1)
        if points:
            xs, ys = zip(*points)
            ax.plot(xs, [100 * y for y in ys], marker="o", label=model)
        if baseline is not None:
            ax.axhline(100 * baseline, color="grey", linestyle="--", label="HMM")
        ax.set_xlabel({"tau": "tau", "lam": "lambda"}[name])
        ax.set_ylabel("dev token accuracy (%)")
        ax.set_title(", ".join(f"{k}={v:g}" for k, v in fixed.items() if k != name), fontsize=8)
        ax.legend(fontsize=7)
    fig.suptitle(f"Fig. 1: {LANGUAGE_NAMES[lang]} dev accuracy of the {model} reranker", fontsize=9)
    fig.tight_layout()
    save_figure(fig, path)
    return True


def _kind_of(flags):
    if not flags:
        return "not recorded"
    return "exact" if all(flags) else "diagonal" if not any(flags) else "exact in some settings, diagonal in others"


def report_sections(rows, out, link_prefix=""):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    runs = collect(rows)
    langs = [l for l in LANGUAGES if any(k[0] == l for k in runs)]
    if not langs:
        return [("No runs", "No runs are recorded yet.")]
    sections = [("The HMM tagger and its 10-best lists", tagger_table(runs, langs))]
    gains = improvements(runs, langs)
    sections.append(("Table 2: token accuracy (%) of the HMM, the 10-best oracle and every reranker",
                     "Each reranker's setting (k, tau, lambda; the boosting rounds) and the Viterbi weight w of "
                     "Eq. 13 are chosen on dev. Rows `published:` are the paper's Table 2 (its own treebanks and "
                     "tagger), not run here.\n\n" + table2(runs, langs)
                     + "\n\nDiscriminative minus the HMM on test, in points: "
                     + ", ".join(f"{l} {g:+.2f}" for l, g in gains.items())
                     + f" (better on {sum(g > 0 for g in gains.values())} of {len(gains)} languages)."))
    exact = {l: [m["exact_Cxx"] for (l2, mo, _), m in runs.items() if l2 == l and mo in RERANKERS and "exact_Cxx" in m]
             for l in langs}
    sections.append(("How C_xx was applied",
                     "The paper's C_xx = (1 - tau) X X^T + tau I exactly, or its diagonal when the smaller of the "
                     "input dimension and the number of lists exceeds 5,000 (docs/ARCHITECTURE.md): "
                     + ", ".join(f"{l} {_kind_of(v)}" for l, v in exact.items()) + "."))
    sections.append(("Table 3: the rerankers without the Viterbi score (projection score alone)",
                     "Settings chosen on dev by this accuracy.\n\n" + table3(runs, langs)))
    if fig1(runs, out / "fig1-tau-lambda-en.png"):
        sections.append(("Fig. 1: English dev accuracy against tau and lambda",
                         f"![Fig. 1]({link_prefix}fig1-tau-lambda-en.png)"))
    seconds = [(mo, m["train_seconds"]) for (l, mo, _), m in runs.items() if l == "en" and "train_seconds" in m
               and mo != "HMM"]
    if seconds:
        lines = [[mo, f"{np.mean([s for m2, s in seconds if m2 == mo]):.1f}",
                  str(sum(m2 == mo for m2, _ in seconds))] for mo in (*RERANKERS, *BOOSTING)
                 if any(m2 == mo for m2, _ in seconds)]
        timing = wall_time(out)
        sections.append(("Training time on English (seconds per fit)",
                         _table(["model", "seconds per fit", "fits"], lines)
                         + (f"\n\nThe {timing['runs']} runs took {timing['seconds'] / 60:.1f} minutes of wall time with "
                            f"--jobs {timing['jobs']}; tagging, jackknifing and featurising (once per language, cached "
                            "in OUT/data) are timed in the tagger table." if timing else "")))
    return sections
