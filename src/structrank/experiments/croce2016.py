"""``structrank reproduce croce2016``: Nyström embeddings of tree kernels for SemEval-2016 cQA.

Croce, Filice & Basili (2016), Table 1, on the data this folder holds (docs/ARCHITECTURE.md):
SemEval-2016 Task 3 subtask A, trained on train-part2 plus the reformatted 2015 dev set (two
threads that duplicate 2016 test questions dropped; the official train-part1 is not in the
data folder), C chosen on the 2016 dev set, tested on the 2016 test set.

1. ``prepare`` (cached in ``OUT/data``): every (question, comment) pair becomes an object of
   three parts, as in Filice et al. (2016)'s kernel sum:

   - ``x``: the dense text-pair similarity features of structrank.qa.features plus the task
     features of structrank.qa.semeval, standardised on train; kernel RBF(gamma = 1 / dim);
   - ``q`` and ``c``: shallow trees of question and comment (structrank.nlp.shallow, tags from
     structrank's HMM tagger trained on UD English-EWT, texts cut at ``MAX_WORDS`` words);
     kernel PTK (lam = mu = 0.4, child subsequences up to ``PTK_MAX_LENGTH``), normalised.
     (REL marks of the words question and comment share, ``mark_related``, gave the same dev
     MAP in a 300-landmark trial and would make every question tree distinct, ten times the
     question kernel's cost; they are not used.)

   The kernel of two pairs is the sum of the three. Its columns against every training pair
   are computed once, in blocks of ``BLOCK`` columns in the order of a random permutation of
   the training pairs (seed 0), each block timed, over joblib workers. Every landmark set of
   the sweep and the full kernel SVM read their columns from these blocks, so the kernel is
   evaluated once per (row, training pair). With seed 0 the first l columns *are* the l
   landmarks, and the measured block times are the kernel time of that Nyström model; other
   seeds draw their landmarks elsewhere in the permutation (MAP spread only, times not
   attributed).
2. Runs: Nyström with 100..1000 landmarks and three seeds (LinearSVC, liblinear's dual
   coordinate descent, C on dev MAP); the full kernel SVM (sklearn SVC on the precomputed
   Gram matrix, C on dev MAP) with the tree kernels and with the RBF part alone; a linear SVM
   on the same dense (non-tree) features; the IR baseline (thread order). And on LETOR 4.0
   MQ2008: SVM-map and SVM-ndcg on the raw features against the same rankers behind a
   Nyström RBF embedding (a kernelised structured ranker).
3. Report: Table 1 (landmarks, MAP, F1, saving against the full SVM's support vectors, times),
   the reference rows with C, support vectors and training size, a figure of MAP and saving
   against landmarks, the published Table 1 beside ours (marked), the kernel throughput of the
   blocks, and the MQ2008 table.
"""

from __future__ import annotations

import functools
import json
import sys
import time
from pathlib import Path

import numpy as np

from structrank.experiments.report import new_figure, save_figure, write_report
from structrank.experiments.runner import Measurement, RunSpec, letor_roots, run_experiment, wall_time

EXPERIMENT = "croce2016"
DATASET = "semeval2016"
SPLITS = ("train", "dev", "test")
PARTS = ("x", "q", "c")
PART_NAMES = {"x": "RBF on the dense features", "q": "PTK on the question tree", "c": "PTK on the comment tree"}
MAX_WORDS = 40
PTK_MAX_LENGTH = 3
BLOCK = 100
LANDMARKS = tuple(range(100, 1001, 100))
SEEDS = (0, 1, 2)
C_GRID = (0.01, 0.1, 1.0, 10.0)
FULL = {"SVM (dense + trees)": PARTS, "SVM (RBF on dense)": ("x",)}
NYSTROEM = "Nyström (dense + trees)"
LINEAR = "Linear SVM (dense)"
IR = "IR baseline (thread order)"
# MQ2008: the structured rankers on raw features and behind a Nyström RBF embedding
LETOR_SETS = {"MQ2008": "letor4"}
LETOR_ROWS = {"SVM-map": "svm-map", "SVM-ndcg": "svm-ndcg"}
LETOR_LANDMARKS = 500
LETOR_C = (0.01, 0.1, 1.0, 10.0)

# Table 1 of the paper (KeLP, the full official training data): landmarks -> (MAP, F1, saving %).
PAPER_TABLE1 = {
    100: (76.0, 58.6, 99.1), 200: (77.0, 60.8, 98.2), 300: (77.5, 62.2, 97.4),  # published
    400: (77.7, 62.4, 96.5), 500: (77.9, 63.1, 95.6), 600: (78.0, 63.6, 94.7),  # published
    700: (78.1, 63.7, 93.8), 800: (78.0, 63.8, 92.9), 900: (78.1, 64.2, 92.1),  # published
    1000: (78.2, 64.4, 91.2),  # published
}
PAPER_FULL = (79.2, 64.4, 11322)  # published: standard SVM MAP, F1, support vectors


# -- data preparation -------------------------------------------------------------------------------

DATA_FORMAT, BLOCK_FORMAT, CACHE_VERSION = "structrank-croce2016-pairs", "structrank-croce2016-kernel-block", 1


def part_kernels():
    """{part: kernel} of the pair objects (the RBF's gamma is set from the data in ``prepare``)."""
    from structrank.kernels import PartialTreeKernel

    return {"q": PartialTreeKernel(lam=0.4, mu=0.4, max_length=PTK_MAX_LENGTH),
            "c": PartialTreeKernel(lam=0.4, mu=0.4, max_length=PTK_MAX_LENGTH)}


def pair_objects(data_dir=None, max_threads=None):
    """(pairs, dense, trees): {split: SemEvalPairs}, {split: standardised dense features}, {split: {q, c}: trees}.

    ``max_threads`` keeps the first threads of each split only (for tests).
    """
    from sklearn.preprocessing import StandardScaler

    from structrank.nlp.shallow import ShallowParser
    from structrank.qa.features import QAFeaturizer, tokenize
    from structrank.qa.semeval import load_semeval, to_pairs

    pairs = {split: to_pairs(load_semeval(split, data_dir=data_dir)[:max_threads]) for split in SPLITS}
    featurizer = QAFeaturizer().fit(pairs["train"])
    dense = {s: np.hstack([featurizer.transform(p), p.features]) for s, p in pairs.items()}
    scaler = StandardScaler().fit(dense["train"])
    dense = {s: scaler.transform(v) for s, v in dense.items()}
    parser = ShallowParser(max_words=MAX_WORDS, data_dir=data_dir)
    trees = {}
    for split, p in pairs.items():
        # one tree object per thread question, shared by its comments' pairs (the tree kernels
        # compute a repeated object once)
        questions = list(dict.fromkeys(p.questions))
        by_text = dict(zip(questions, parser.parse([tokenize(q) for q in questions])))
        trees[split] = {"q": [by_text[q] for q in p.pair_questions()],
                        "c": parser.parse([tokenize(c) for c in p.candidates])}
    return pairs, dense, trees


def prepare(out, data_dir=None, n_jobs=1, progress=True, max_threads=None):
    """Build (or resume) the cache in ``OUT/data``: the pairs' arrays and the kernel column blocks.

    Returns (folder, number of blocks computed by this call).
    """
    from tqdm.auto import tqdm

    from structrank.kernels import RBFKernel, parallel_gram
    from structrank.model_io import write_archive

    folder = Path(out) / "data"
    (folder / "kernel").mkdir(parents=True, exist_ok=True)
    data_path = folder / "pairs.npz"
    if data_path.is_file() and all(p.is_file() for p in _block_paths(folder, load_pairs(str(folder))[0]["n_train"])):
        return folder, 0
    start = time.perf_counter()
    pairs, dense, trees = pair_objects(data_dir, max_threads)
    prep_seconds = time.perf_counter() - start
    n_train = len(pairs["train"].labels)
    order = np.random.default_rng(0).permutation(n_train)
    if not data_path.is_file():
        arrays = {"order": order}
        for split, p in pairs.items():
            arrays.update({f"{split}.x": dense[split], f"{split}.y": p.labels, f"{split}.qid": p.qid,
                           f"{split}.position": p.position})
        write_archive(data_path, {"format": DATA_FORMAT, "version": CACHE_VERSION,
                                  "meta": {"prep_seconds": prep_seconds, "n_train": n_train}}, arrays)
    kernels = {"x": RBFKernel(gamma=1.0 / dense["train"].shape[1]), **part_kernels()}
    objects = {"x": dense, "q": {s: trees[s]["q"] for s in SPLITS}, "c": {s: trees[s]["c"] for s in SPLITS}}
    blocks = list(range(0, n_train, BLOCK))
    todo = [b for b in blocks if not (folder / "kernel" / f"block_{b // BLOCK:03d}.npz").is_file()]
    for b in tqdm(todo, desc=f"{EXPERIMENT}: kernel columns", unit="block", disable=not progress or not todo):
        columns = order[b:b + BLOCK]
        arrays, seconds = {}, {}
        for part in PARTS:
            landmarks = [objects[part]["train"][i] for i in columns] if part != "x" else dense["train"][columns]
            seconds[part] = {}
            for split in SPLITS:
                tic = time.perf_counter()
                arrays[f"{part}.{split}"] = parallel_gram(kernels[part], objects[part][split], landmarks,
                                                          n_jobs=n_jobs, block_size=1024)
                seconds[part][split] = time.perf_counter() - tic
        write_archive(folder / "kernel" / f"block_{b // BLOCK:03d}.npz",
                      {"format": BLOCK_FORMAT, "version": CACHE_VERSION,
                       "meta": {"columns": [b, b + len(columns)], "seconds": seconds, "n_jobs": n_jobs}}, arrays)
    return folder, len(todo)


@functools.lru_cache(maxsize=1)
def load_pairs(folder):
    """(header meta, {name: array}) of ``OUT/data/pairs.npz``."""
    from structrank.model_io import read_archive

    header, arrays = read_archive(Path(folder) / "pairs.npz", DATA_FORMAT, CACHE_VERSION, what="croce2016 pairs cache")
    return header["meta"], arrays


def _block_paths(folder, n_train):
    return [Path(folder) / "kernel" / f"block_{b // BLOCK:03d}.npz" for b in range(0, n_train, BLOCK)]


@functools.lru_cache(maxsize=1)
def load_kernel(folder, parts=PARTS):
    """({split: K(split, train in permutation order)} summed over ``parts``, [per-block meta])."""
    from structrank.model_io import read_archive

    meta, _ = load_pairs(folder)
    grams, metas = {s: [] for s in SPLITS}, []
    for path in _block_paths(folder, meta["n_train"]):
        header, arrays = read_archive(path, BLOCK_FORMAT, CACHE_VERSION, what="croce2016 kernel block")
        metas.append(header["meta"])
        for split in SPLITS:
            grams[split].append(sum(arrays[f"{part}.{split}"] for part in parts))
    return {s: np.hstack(g) for s, g in grams.items()}, metas


def block_seconds(metas, split, n_columns=None, parts=PARTS):
    """Measured wall seconds of the kernel columns of ``split`` rows over the first ``n_columns`` columns."""
    total = 0.0
    for m in metas:
        if n_columns is not None and m["columns"][0] >= n_columns:
            break
        total += sum(m["seconds"][p][split] for p in parts)
    return total


# -- runs -------------------------------------------------------------------------------------------


def _evaluate(y, qid, scores):
    from sklearn.metrics import f1_score

    from structrank.metrics import evaluate

    return (evaluate(y, scores, qid, ["map"], "semeval").metrics["map"],
            float(f1_score(y, (scores > 0).astype(int), zero_division=0.0)))


def _scored(arrays, scores_of):
    """Dev and test MAP and F1 of ``scores_of(split)``."""
    out = []
    for split in ("dev", "test"):
        value_map, value_f1 = _evaluate(arrays[f"{split}.y"], arrays[f"{split}.qid"], scores_of(split))
        out += [Measurement(f"{split}:map", "semeval", value_map), Measurement(f"{split}:f1", "good", value_f1)]
    return out


def _select_c(fit, arrays, features):
    """(C, model, dev MAP) with the best dev MAP over C_GRID; the first C on ties."""
    best = None
    for C in C_GRID:
        model = fit(C)
        value, _ = _evaluate(arrays["dev.y"], arrays["dev.qid"], model.decision_function(features["dev"]))
        if best is None or value > best[2]:
            best = (C, model, value)
    return best


def _linear_svm(C):
    from sklearn.svm import LinearSVC

    return LinearSVC(C=C, max_iter=20000)


def _nystroem_run(spec, folder):
    from structrank.kernels.nystroem import nystroem_normalization

    meta, arrays = load_pairs(folder)
    K, metas = load_kernel(folder)
    n_train, m = meta["n_train"], spec.params["landmarks"]
    order = arrays["order"]
    # landmark j is training pair order[positions[j]], column positions[j] of the blocks
    positions = np.arange(m) if spec.seed == 0 else np.sort(np.random.default_rng(spec.seed).permutation(n_train)[:m])
    tic = time.perf_counter()
    evals, normalization = nystroem_normalization(K["train"][order[positions]][:, positions])
    features = {s: K[s][:, positions] @ normalization for s in SPLITS}
    project_seconds = time.perf_counter() - tic
    C, _, _ = _select_c(lambda C: _linear_svm(C).fit(features["train"], arrays["train.y"]), arrays, features)
    tic = time.perf_counter()
    model = _linear_svm(C).fit(features["train"], arrays["train.y"])
    fit_seconds = time.perf_counter() - tic
    tic = time.perf_counter()
    model.decision_function(K["test"][:, positions] @ normalization)
    decide_seconds = time.perf_counter() - tic
    out = _scored(arrays, lambda s: model.decision_function(features[s]))
    out += [Measurement("C", "param", C), Measurement("components", "param", float(len(evals))),
            Measurement("svm_seconds", "time", fit_seconds),
            Measurement("projection_seconds", "time", project_seconds),
            Measurement("decide_seconds", "time", decide_seconds)]
    if spec.seed == 0:  # the first m columns are exactly these landmarks: their measured kernel time
        out += [Measurement("kernel_train_seconds", "time", block_seconds(metas, "train", m)),
                Measurement("kernel_test_seconds", "time", block_seconds(metas, "test", m))]
    return out


def _full_run(spec, folder):
    from sklearn.svm import SVC

    meta, arrays = load_pairs(folder)
    parts = FULL[spec.model]
    K, metas = load_kernel(folder, parts)
    back = np.argsort(arrays["order"])  # columns back to training order
    gram = {s: K[s][:, back] for s in SPLITS}
    C, _, _ = _select_c(lambda C: SVC(C=C, kernel="precomputed").fit(gram["train"], arrays["train.y"]), arrays, gram)
    tic = time.perf_counter()
    model = SVC(C=C, kernel="precomputed").fit(gram["train"], arrays["train.y"])
    fit_seconds = time.perf_counter() - tic
    n_sv = int(model.support_.size)
    tic = time.perf_counter()
    model.decision_function(gram["test"])
    decide_seconds = time.perf_counter() - tic
    n_train, n_test = meta["n_train"], len(arrays["test.y"])
    out = _scored(arrays, lambda s: model.decision_function(gram[s]))
    out += [Measurement("C", "param", C), Measurement("support_vectors", "param", float(n_sv)),
            Measurement("bounded_support_vectors", "param",
                        float(np.sum(np.isclose(np.abs(model.dual_coef_), C)))),
            Measurement("n_train", "param", float(n_train)),
            Measurement("test_kernel_evaluations", "param", float(n_sv * n_test)),
            Measurement("svm_seconds", "time", fit_seconds), Measurement("decide_seconds", "time", decide_seconds),
            Measurement("kernel_train_seconds", "time", block_seconds(metas, "train", parts=parts)),
            # only the support vectors' columns are needed to classify: the measured time of the
            # test rows against all training pairs, prorated to the support vectors
            Measurement("kernel_test_seconds", "time", block_seconds(metas, "test", parts=parts) * n_sv / n_train)]
    return out


def _linear_run(spec, folder):
    _, arrays = load_pairs(folder)
    features = {s: arrays[f"{s}.x"] for s in SPLITS}
    C, model, _ = _select_c(lambda C: _linear_svm(C).fit(features["train"], arrays["train.y"]), arrays, features)
    tic = time.perf_counter()
    _linear_svm(C).fit(features["train"], arrays["train.y"])
    return _scored(arrays, lambda s: model.decision_function(features[s])) + [
        Measurement("C", "param", C), Measurement("svm_seconds", "time", time.perf_counter() - tic)]


def _ir_run(spec, folder):
    _, arrays = load_pairs(folder)
    return [m for m in _scored(arrays, lambda s: -arrays[f"{s}.position"].astype(float))
            if m.metric.endswith("map")]


def _kernel_run(spec, folder):
    """What the kernel columns cost: evaluations and measured wall seconds per part and split."""
    meta, arrays = load_pairs(folder)
    _, metas = load_kernel(folder)
    n_columns = meta["n_train"]
    out = [Measurement("n_jobs", "param", float(metas[0]["n_jobs"]))]
    for part in PARTS:
        for split in SPLITS:
            seconds = sum(m["seconds"][part][split] for m in metas)
            evaluations = len(arrays[f"{split}.y"]) * n_columns
            out += [Measurement(f"{part}.{split}:seconds", "time", seconds),
                    Measurement(f"{part}.{split}:evaluations", "count", float(evaluations))]
    out += [Measurement(f"{split}:rows", "count", float(len(arrays[f"{split}.y"]))) for split in SPLITS]
    out.append(Measurement("sweep_kernel_seconds", "time",
                           sum(block_seconds(metas, split, max(LANDMARKS)) for split in SPLITS)))
    return out


def _letor_run(spec, root):
    from structrank.data import letor_folds, read_letor
    from structrank.kernels import NystroemFeatures, RBFKernel
    from structrank.metrics import evaluate
    from structrank.models import get_model, select_on_vali

    convention = LETOR_SETS[spec.dataset]
    fold = next(f for f in letor_folds(root) if f.name == spec.fold)
    train = read_letor(fold.train)
    vali, test = (read_letor(p, n_features=train.n_features) for p in (fold.vali, fold.test))
    tic = time.perf_counter()
    if spec.params.get("nystroem"):
        nys = NystroemFeatures(RBFKernel(gamma=spec.params["gamma"] / train.n_features),
                               n_landmarks=spec.params["nystroem"], random_state=0)
        train = train.with_X(nys.fit_transform(train.X.toarray() if hasattr(train.X, "toarray") else train.X))
        vali, test = (d.with_X(nys.transform(d.X.toarray() if hasattr(d.X, "toarray") else d.X)) for d in (vali, test))
    model_spec = get_model(LETOR_ROWS[spec.model.split(" + ")[0]])
    model, params, _ = select_on_vali(model_spec, train, vali, convention=convention, grid={"C": list(LETOR_C)})
    seconds = time.perf_counter() - tic
    result = evaluate(test.y, model.predict(test.X), test.qid, ["map", "ndcg@10", "mrr@10"], convention)
    return [Measurement(k, convention, v) for k, v in result.metrics.items()] + [
        Measurement("C", "param", float(params["C"])), Measurement("seconds", "time", seconds)]


class _Runner:
    """Picklable run function bound to the cache folder and the LETOR roots."""

    def __init__(self, folder, roots):
        self.folder, self.roots = str(folder), roots

    def __call__(self, spec):
        if spec.split == "letor":
            return _letor_run(spec, self.roots[spec.dataset])
        kind = {"nystroem": _nystroem_run, "full": _full_run, "linear": _linear_run, "ir": _ir_run,
                "kernel": _kernel_run}[spec.split]
        return kind(spec, self.folder)


def plan(roots, quick=False):
    from structrank.data import letor_folds

    specs = [RunSpec(EXPERIMENT, DATASET, "kernel", "", 0, "kernel columns", {}),
             RunSpec(EXPERIMENT, DATASET, "ir", "", 0, IR, {}),
             RunSpec(EXPERIMENT, DATASET, "linear", "", 0, LINEAR, {})]
    specs += [RunSpec(EXPERIMENT, DATASET, "full", "", 0, model, {}) for model in FULL]
    for m in LANDMARKS[:2] if quick else LANDMARKS:
        for seed in SEEDS[:1] if quick else SEEDS:
            specs.append(RunSpec(EXPERIMENT, DATASET, "nystroem", "", seed, NYSTROEM, {"landmarks": m}))
    for dataset, root in roots.items():
        for fold in [f.name for f in letor_folds(root)][: 1 if quick else None]:
            for row in LETOR_ROWS:
                specs.append(RunSpec(EXPERIMENT, dataset, "letor", fold, 0, row, {}))
                specs.append(RunSpec(EXPERIMENT, dataset, "letor", fold, 0, row + " + Nyström RBF",
                                     {"nystroem": LETOR_LANDMARKS, "gamma": 1.0}))
    return specs


def reproduce(out, data_dir=None, quick=False, n_jobs=1):
    """Build the kernel cache, run the sweep and the references, write the report.

    ``quick`` is not a smaller SemEval problem (the kernel columns are the whole cost and are
    needed by the full SVM): it runs two landmark counts, one seed and one MQ2008 fold.
    """
    from structrank.qa.semeval import load_semeval

    out = Path(out)
    load_semeval("dev", data_dir=data_dir)  # a clear error now if the SemEval data is absent
    print(f"{EXPERIMENT}: pair objects and kernel columns (cached in {out / 'data'})", file=sys.stderr)
    tic = time.perf_counter()
    folder, computed = prepare(out, data_dir, n_jobs=n_jobs)
    prepare_seconds = time.perf_counter() - tic
    try:
        roots = letor_roots(LETOR_SETS, data_dir)
    except FileNotFoundError as exc:
        print(f"{exc}; the MQ2008 part is skipped", file=sys.stderr)
        roots = {}
    rows = run_experiment(out, plan(roots, quick), _Runner(folder, roots), n_jobs, EXPERIMENT)
    if computed == len(_block_paths(folder, load_pairs(str(folder))[0]["n_train"])):  # all in this call
        from structrank.atomic import write_text_atomic

        write_text_atomic(out / "prepare_time.json", json.dumps({"seconds": prepare_seconds, "jobs": n_jobs}))
    write_report(out / "report.md", report_sections(rows, out), title="Croce, Filice & Basili (2016), reproduced")
    print(f"wrote {out / 'results.csv'} and {out / 'report.md'}", file=sys.stderr)
    return rows


# -- report -----------------------------------------------------------------------------------------


def collect(rows):
    """{(split, model, landmarks or None, seed, dataset, fold): {metric: value}}."""
    runs = {}
    for r in rows:
        params = r["params"] if isinstance(r["params"], dict) else json.loads(r["params"])
        key = (r["split"], r["model"], params.get("landmarks"), int(r["seed"]), r["dataset"], r["fold"])
        runs.setdefault(key, {})[r["metric"]] = r["value"]
    return runs


def _table(header, lines):
    return "\n".join(["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
                      + ["| " + " | ".join(line) + " |" for line in lines])


def _pct(value, digits=1):
    return "—" if value is None or not np.isfinite(value) else f"{100 * value:.{digits}f}"


def _seconds(*values):
    return "—" if any(v is None for v in values) else f"{sum(values):.1f}"


def sweep(runs):
    """{landmarks: {seed: metrics}} of the Nyström runs."""
    out = {}
    for (split, model, m, seed, _, _), metrics in runs.items():
        if split == "nystroem":
            out.setdefault(m, {})[seed] = metrics
    return dict(sorted(out.items()))


def _full(runs, model=next(iter(FULL))):
    return runs.get(("full", model, None, 0, DATASET, ""))


def saving(landmarks, full):
    """Share of the full SVM's kernel evaluations per test pair (its support vectors) avoided."""
    return 1.0 - landmarks / full["support_vectors"]


def table1(runs):
    full = _full(runs)
    lines = []
    for m, by_seed in sweep(runs).items():
        first = by_seed.get(0, {})
        maps = [v["test:map"] for v in by_seed.values()]
        spread = f"{100 * np.mean(maps):.1f} ± {100 * np.std(maps, ddof=1):.1f} ({len(maps)})" if len(maps) > 1 else "—"
        paper = PAPER_TABLE1.get(m)
        lines.append([
            str(m), _pct(first.get("test:map")), spread, _pct(first.get("test:f1")), _pct(first.get("dev:map")),
            _pct(saving(m, full)) if full else "—", f"{first.get('components', float('nan')):.0f}",
            f"{first.get('C', float('nan')):g}",
            _seconds(first.get("kernel_train_seconds"), first.get("projection_seconds"), first.get("svm_seconds")),
            _seconds(first.get("kernel_test_seconds"), first.get("decide_seconds")),
            *(("%.1f" % paper[0], "%.1f" % paper[1], "%.1f" % paper[2]) if paper else ("", "", "")),
        ])
    return _table(["landmarks", "test MAP", "test MAP, mean ± sd (seeds)", "test F1", "dev MAP", "saving %",
                   "dimensions", "C", "train s", "classify s", "published: MAP", "published: F1",
                   "published: saving %"], lines)


def reference_table(runs):
    lines = []
    for model in FULL:
        r = _full(runs, model)
        if r:
            lines.append([model, _pct(r["test:map"]), _pct(r["test:f1"]), _pct(r["dev:map"]), f"{r['C']:g}",
                          f"{r['support_vectors']:.0f} of {r['n_train']:.0f} ({r['bounded_support_vectors']:.0f} at C)",
                          f"{r['test_kernel_evaluations'] / 1e6:.1f} M",
                          _seconds(r["kernel_train_seconds"], r["svm_seconds"]),
                          _seconds(r["kernel_test_seconds"], r["decide_seconds"])])
    linear = runs.get(("linear", LINEAR, None, 0, DATASET, ""))
    if linear:
        lines.append([LINEAR, _pct(linear["test:map"]), _pct(linear["test:f1"]), _pct(linear["dev:map"]),
                      f"{linear['C']:g}", "—", "0", _seconds(linear["svm_seconds"]), "—"])
    ir = runs.get(("ir", IR, None, 0, DATASET, ""))
    if ir:
        lines.append([IR, _pct(ir["test:map"]), "—", _pct(ir["dev:map"]), "—", "—", "0", "—", "—"])
    lines.append(["published: standard SVM (KeLP, full training data)", f"{PAPER_FULL[0]:.1f}", f"{PAPER_FULL[1]:.1f}",
                  "", "", f"{PAPER_FULL[2]:,}", "", "", ""])
    return _table(["model", "test MAP", "test F1", "dev MAP", "C", "support vectors", "test kernel evaluations",
                   "train s", "classify s"], lines)


def findings(runs):
    """Sentences computed from the runs: the targets of the issue, good news or bad."""
    full, points = _full(runs), sweep(runs)
    if not full or not points:
        return ""
    means = {m: float(np.mean([v["test:map"] for v in by_seed.values()])) for m, by_seed in points.items()}
    out = []
    top = max(points)
    out.append(f"With {top} landmarks the Nyström model reaches test MAP {_pct(means[top])} (mean over "
               f"{len(points[top])} landmark samples), {100 * (full['test:map'] - means[top]):+.1f} points from the "
               f"full kernel SVM's {_pct(full['test:map'])} (seed 0: {_pct(points[top][0]['test:map'])}).")
    close = [m for m in points if means[m] >= full["test:map"] - 0.01]
    if close:
        m = min(close)
        out.append(f"The smallest landmark count whose mean test MAP is within 1 point of the full SVM is {m}: "
                   f"it saves {_pct(saving(m, full))}% of the kernel evaluations per test pair ({m} against "
                   f"{full['support_vectors']:.0f} support vectors).")
    else:
        out.append("No landmark count comes within 1 point of the full SVM's test MAP.")
    linear = runs.get(("linear", LINEAR, None, 0, DATASET, ""))
    rbf = _full(runs, "SVM (RBF on dense)")
    if linear and rbf:
        out.append(f"What the tree kernels add: the full SVM with trees minus the linear SVM on the same dense "
                   f"features is {100 * (full['test:map'] - linear['test:map']):+.1f} MAP points on test "
                   f"({100 * (full['dev:map'] - linear['dev:map']):+.1f} on dev); minus the full RBF SVM on the dense "
                   f"features alone, {100 * (full['test:map'] - rbf['test:map']):+.1f} "
                   f"({100 * (full['dev:map'] - rbf['dev:map']):+.1f} on dev).")
    return " ".join(out)


def kernel_table(runs):
    r = runs.get(("kernel", "kernel columns", None, 0, DATASET, ""))
    if not r:
        return None
    lines = []
    for part in PARTS:
        seconds = sum(r[f"{part}.{s}:seconds"] for s in SPLITS)
        evaluations = sum(r[f"{part}.{s}:evaluations"] for s in SPLITS)
        lines.append([PART_NAMES[part], f"{evaluations / 1e6:.1f} M", f"{seconds:.0f}", f"{evaluations / seconds:,.0f}"])
    rows = ", ".join(f"{s} {r[f'{s}:rows']:.0f}" for s in SPLITS)
    total = sum(r[f"{p}.{s}:seconds"] for p in PARTS for s in SPLITS)
    return (f"Every pair ({rows}) against every training pair, once, over {r['n_jobs']:.0f} joblib workers "
            f"(wall seconds). All the columns took {total / 60:.1f} minutes; the sweep's own columns (1,000 "
            f"landmarks, all three splits) {r['sweep_kernel_seconds'] / 60:.1f} minutes.\n\n"
            + _table(["kernel part", "evaluations", "seconds", "evaluations/s"], lines))


def figure(runs, path):
    full, points = _full(runs), sweep(runs)
    if not points:
        return False
    xs = list(points)
    means = [100 * np.mean([v["test:map"] for v in points[m].values()]) for m in xs]
    sds = [100 * np.std([v["test:map"] for v in points[m].values()], ddof=1) if len(points[m]) > 1 else 0.0 for m in xs]
    fig = new_figure(figsize=(6, 3.5))
    ax = fig.add_subplot(1, 1, 1)
    ax.errorbar(xs, means, yerr=sds, marker="o", capsize=3, label="Nyström test MAP")
    if full:
        ax.axhline(100 * full["test:map"], color="black", linestyle="--", label="full kernel SVM")
    linear = runs.get(("linear", LINEAR, None, 0, DATASET, ""))
    if linear:
        ax.axhline(100 * linear["test:map"], color="grey", linestyle=":", label="linear SVM, dense features")
    ax.set_xlabel("landmarks")
    ax.set_ylabel("test MAP (%)")
    if full:
        ax2 = ax.twinx()
        ax2.plot(xs, [100 * saving(m, full) for m in xs], color="tab:red", marker="s", label="saving")
        ax2.set_ylabel("saving (%)", color="tab:red")
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title("SemEval-2016 test: MAP and saving against landmarks", fontsize=9)
    fig.tight_layout()
    save_figure(fig, path)
    return True


def letor_table(runs):
    keys = [k for k in runs if k[0] == "letor"]
    if not keys:
        return None
    lines = []
    for dataset in sorted({k[4] for k in keys}):
        for model in dict.fromkeys(k[1] for k in keys if k[4] == dataset):
            folds = [runs[k] for k in keys if k[4] == dataset and k[1] == model]
            cell = lambda name: f"{np.mean([f[name] for f in folds]):.4f}"  # noqa: E731
            lines.append([dataset, model, cell("ndcg@10"), cell("map"), cell("mrr@10"), str(len(folds)),
                          ", ".join(f"{c:g}" for c in sorted({f["C"] for f in folds})),
                          f"{np.mean([f['seconds'] for f in folds]):.1f}"])
    return _table(["data", "model", "NDCG@10", "MAP", "MRR@10", "folds", "C chosen", "s per fold (grid)"], lines)


def report_sections(rows, out, link_prefix=""):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    runs = collect(rows)
    if not runs:
        return [("No runs", "No runs are recorded yet.")]
    sections = [("Setup",
                 "SemEval-2016 Task 3 subtask A. Training data: train-part2 plus the reformatted 2015 dev set (the two "
                 "threads duplicating 2016 test questions dropped); the official train-part1 is not in the data folder, "
                 "so we train on about a third of the paper's data. C is chosen on the 2016 dev set from "
                 f"{', '.join(f'{c:g}' for c in C_GRID)} by MAP; all numbers below are on the 2016 test set unless marked "
                 "dev. MAP is the official scorer's (MAP@10); F1 is of the Good class at the SVM's threshold 0. The "
                 "kernel of two pairs is the sum of an RBF on the dense features (text-pair similarities and task "
                 "features), PTK on the question trees and PTK on the comment trees (module docstring of "
                 "structrank.experiments.croce2016). Saving = 1 - landmarks / (support vectors of the full SVM): the "
                 "kernel evaluations per test pair avoided. Seed 0's landmarks are the first columns of the kernel "
                 "blocks, so its times are measured; train s = kernel columns of the training pairs + projection + "
                 "one LinearSVC fit at the chosen C; classify s = kernel columns of the test pairs + projection + "
                 "decision. The full SVM's classify s prorates the measured time of the test pairs against all "
                 "training pairs to its support vectors.")]
    sections.append(("Table 1: Nyström landmarks against MAP, F1 and saving (SemEval-2016 test)", table1(runs)
                     + "\n\nRows `published:` are the paper's Table 1 (KeLP, its own features, the full training data), "
                       "not run here."))
    sections.append(("The full kernel SVM and the linear models", reference_table(runs) + "\n\n" + findings(runs)))
    if figure(runs, out / "map-saving-landmarks.png"):
        sections.append(("Figure: MAP and saving against landmarks", f"![MAP and saving]({link_prefix}map-saving-landmarks.png)"))
    kernels = kernel_table(runs)
    if kernels:
        timing = wall_time(out)
        sections.append(("Kernel evaluations and the sweep's time", kernels + (
            f"\n\nThe {timing['runs']} runs after the kernel columns (sweep, full SVMs, MQ2008) took "
            f"{timing['seconds'] / 60:.1f} minutes with --jobs {timing['jobs']}." if timing else "")))
    letor = letor_table(runs)
    if letor:
        sections.append(("A kernelised structured ranker: Nyström RBF in front of SVM-map and SVM-ndcg",
                         f"{LETOR_LANDMARKS} landmarks, RBF gamma = 1 / (number of features), on each fold's training "
                         "set; C chosen on vali by the ranker's own metric; LETOR 4.0 evaluation; means over folds.\n\n"
                         + letor))
    return sections
