"""The runs of croce2016 (the kernel columns' record, the IR baseline, the linear and full SVMs, the Nyström
sweep, the MQ2008 rankers) and ``reproduce``."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

from structrank import paths
from structrank.atomic import write_text_atomic
from structrank.data import letor_folds, read_letor
from structrank_lab.experiments.croce2016.data import _block_paths, block_seconds, load_kernel, load_pairs, prepare
from structrank_lab.experiments.croce2016.design import (DATASET, EXPERIMENT, FULL, IR, LANDMARKS, LETOR_C,
                                                     LETOR_LANDMARKS, LETOR_ROWS, LETOR_SETS, LINEAR, NYSTROEM, PARTS,
                                                     SEEDS, SPLITS)
from structrank_lab.experiments.croce2016.report import report_sections
from structrank_lab.experiments.croce2016.scoring import grid, ranked, svm_measurements
from structrank_lab.experiments.report import write_report
from structrank_lab.experiments.runner import (Measurement, RunSpec, SpecRun, claim_folder, dataset_inputs, letor_roots,
                                          paper_model, run_experiment)
from structrank.learners.registry import select_on_vali
from structrank.metrics import evaluate


def _linear_svm(C):
    # deferred: `results` imports every experiment module; scikit-learn's metrics and SVMs load only to run
    from sklearn.svm import LinearSVC

    # liblinear's dual coordinate descent visits the rows in a random order: seeded, so that a rerun
    # (and the pinned slice) gives the same bits
    return LinearSVC(C=C, max_iter=20000, random_state=0)


def _nystroem_run(spec, folder):
    # deferred: `results` imports every experiment module; the kernels (scikit-learn) load only to run
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
    fitted = grid(lambda C: _linear_svm(C).fit(features["train"], arrays["train.y"]))
    out, model, C = svm_measurements(fitted, arrays, features)
    tic = time.perf_counter()
    model.decision_function(K["test"][:, positions] @ normalization)
    decide_seconds = time.perf_counter() - tic
    out += [Measurement("components", "param", float(len(evals))),
            Measurement("svm_seconds", "time", fitted[C][1]),
            Measurement("projection_seconds", "time", project_seconds),
            Measurement("decide_seconds", "time", decide_seconds)]
    if spec.seed == 0:  # the first m columns are exactly these landmarks: their measured kernel time
        out += [Measurement("kernel_train_seconds", "time", block_seconds(metas, "train", m)),
                Measurement("kernel_test_seconds", "time", block_seconds(metas, "test", m))]
    return out


def _full_run(spec, folder):
    # deferred: `results` imports every experiment module; scikit-learn's metrics and SVMs load only to run
    from sklearn.svm import SVC

    meta, arrays = load_pairs(folder)
    parts = FULL[spec.model]
    K, metas = load_kernel(folder, parts)
    back = np.argsort(arrays["order"])  # columns back to training order
    gram = {s: K[s][:, back] for s in SPLITS}
    fitted = grid(lambda C: SVC(C=C, kernel="precomputed").fit(gram["train"], arrays["train.y"]))
    out, model, C = svm_measurements(fitted, arrays, gram)
    n_sv = int(model.support_.size)
    tic = time.perf_counter()
    model.decision_function(gram["test"])
    decide_seconds = time.perf_counter() - tic
    n_train, n_test = meta["n_train"], len(arrays["test.y"])
    out += [Measurement("support_vectors", "param", float(n_sv)),
            Measurement("bounded_support_vectors", "param",
                        float(np.sum(np.isclose(np.abs(model.dual_coef_), C)))),
            Measurement("n_train", "param", float(n_train)),
            Measurement("test_kernel_evaluations", "param", float(n_sv * n_test)),
            Measurement("svm_seconds", "time", fitted[C][1]), Measurement("decide_seconds", "time", decide_seconds),
            Measurement("kernel_train_seconds", "time", block_seconds(metas, "train", parts=parts)),
            # only the support vectors' columns are needed to classify: the measured time of the
            # test rows against all training pairs, prorated to the support vectors
            Measurement("kernel_test_seconds", "time", block_seconds(metas, "test", parts=parts) * n_sv / n_train)]
    return out


def _linear_run(spec, folder):
    _, arrays = load_pairs(folder)
    features = {s: arrays[f"{s}.x"] for s in SPLITS}
    fitted = grid(lambda C: _linear_svm(C).fit(features["train"], arrays["train.y"]))
    out, _, C = svm_measurements(fitted, arrays, features)
    return out + [Measurement("svm_seconds", "time", fitted[C][1])]


def _ir_run(spec, folder):
    _, arrays = load_pairs(folder)
    return ranked(arrays, lambda s: -arrays[f"{s}.position"].astype(float))


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
    # deferred: `results` imports every experiment module; the kernels (scikit-learn) load only to run
    from structrank.kernels import NystroemFeatures, RBFKernel

    convention = LETOR_SETS[spec.dataset]
    fold = next(f for f in letor_folds(root) if f.name == spec.fold)
    train = read_letor(fold.train, sparse=True)
    vali, test = (read_letor(p, n_features=train.n_features, sparse=True) for p in (fold.vali, fold.test))
    tic = time.perf_counter()
    if spec.params.get("nystroem"):
        nys = NystroemFeatures(RBFKernel(gamma=spec.params["gamma"] / train.n_features),
                               n_landmarks=spec.params["nystroem"], random_state=0)
        train = train.with_X(nys.fit_transform(train.X.toarray() if hasattr(train.X, "toarray") else train.X))
        vali, test = (d.with_X(nys.transform(d.X.toarray() if hasattr(d.X, "toarray") else d.X)) for d in (vali, test))
    model_spec = paper_model(LETOR_ROWS[spec.model.split(" + ")[0]])
    model, params, _ = select_on_vali(model_spec, train, vali, convention=convention, grid={"C": list(LETOR_C)})
    seconds = time.perf_counter() - tic
    result = evaluate(test.y, model.predict(test.X), test.qid, ["map", "ndcg@10", "mrr@10"], convention)
    return [Measurement(k, convention, v) for k, v in result.metrics.items()] + [
        Measurement("C", "param", float(params["C"])), Measurement("seconds", "time", seconds)]


def _run(spec, folder, roots):
    """One spec: a LETOR run on its data set's root, the others on the kernel cache in ``folder``."""
    if spec.split == "letor":
        return _letor_run(spec, roots[spec.dataset])
    kind = {"nystroem": _nystroem_run, "full": _full_run, "linear": _linear_run, "ir": _ir_run,
            "kernel": _kernel_run}[spec.split]
    return kind(spec, str(folder))


def plan(roots, quick=False):
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


def reproduce(out, data_dir=None, quick=False, n_jobs=1, keep=None):
    """Build the kernel cache, run the sweep and the references, write the report.

    ``quick`` is not a smaller SemEval problem (the kernel columns are the whole cost and are
    needed by the full SVM): it runs two landmark counts, one seed and one MQ2008 fold.
    """
    # deferred: `results` imports every experiment module; the SemEval reader (scikit-learn) loads only to run
    from structrank.qa.semeval import FOLDER, load_semeval

    out = Path(out)
    load_semeval("dev", data_dir=data_dir)  # a clear error now if the SemEval data is absent
    # the kernel cache in OUT/data was computed from the SemEval files: refuse other data before using it
    semeval = Path(data_dir or paths.data_dir(required=True)) / FOLDER
    claim_folder(out, EXPERIMENT, [semeval])
    print(f"{EXPERIMENT}: pair objects and kernel columns (cached in {out / 'data'})", file=sys.stderr)
    tic = time.perf_counter()
    folder, computed = prepare(out, data_dir, n_jobs=n_jobs)
    prepare_seconds = time.perf_counter() - tic
    try:
        roots = letor_roots(LETOR_SETS, data_dir)
    except FileNotFoundError as exc:
        print(f"{exc}; the MQ2008 part is skipped", file=sys.stderr)
        roots = {}
    rows = run_experiment(out, plan(roots, quick), SpecRun(_run, folder, roots), n_jobs, EXPERIMENT, data=roots.values(),
                          inputs=dataset_inputs(roots, others=[semeval]), kept=keep)
    if computed == len(_block_paths(folder, load_pairs(str(folder))[0]["n_train"])):  # all in this call
        write_text_atomic(out / "prepare_time.json", json.dumps({"seconds": prepare_seconds, "jobs": n_jobs}))
    write_report(out / "report.md", report_sections(rows, out), title="Croce, Filice & Basili (2016), reproduced")
    print(f"wrote {out / 'results.csv'} and {out / 'report.md'}", file=sys.stderr)
    return rows
