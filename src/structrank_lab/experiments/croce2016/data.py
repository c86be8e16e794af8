"""The pair objects of SemEval-2016 and the columns of their kernel against every training pair, computed
once in timed blocks and cached in ``OUT/data`` (``experiments.cache``'s format)."""

from __future__ import annotations

import functools
import time
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from structrank_lab.experiments.cache import block_path, block_paths, load_arrays, save_arrays
from structrank_lab.experiments.croce2016.design import BLOCK, EXPERIMENT, MAX_WORDS, PARTS, PTK_MAX_LENGTH, SPLITS

DATA_FORMAT, BLOCK_FORMAT, CACHE_VERSION = "structrank-croce2016-pairs", "structrank-croce2016-kernel-block", 1


def part_kernels():
    """{part: kernel} of the pair objects (the RBF's gamma is set from the data in ``prepare``)."""
    # deferred: `results` imports every experiment module; the kernels (scikit-learn) load only to run
    from structrank.kernels import PartialTreeKernel

    return {"q": PartialTreeKernel(lam=0.4, mu=0.4, max_length=PTK_MAX_LENGTH),
            "c": PartialTreeKernel(lam=0.4, mu=0.4, max_length=PTK_MAX_LENGTH)}


def pair_objects(data_dir=None, max_threads=None):
    """(pairs, dense, trees): {split: SemEvalPairs}, {split: standardised dense features}, {split: {q, c}: trees}.

    ``max_threads`` keeps the first threads of each split only (for tests).
    """
    # deferred: `results` imports every experiment module; the QA features and scikit-learn load only to prepare
    from sklearn.preprocessing import StandardScaler

    from structrank_lab.nlp.shallow import ShallowParser
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
    # deferred: `results` imports every experiment module; the kernels (scikit-learn) load only to run
    from structrank.kernels import RBFKernel, parallel_gram

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
        save_arrays(data_path, arrays, {"prep_seconds": prep_seconds, "n_train": n_train}, DATA_FORMAT, CACHE_VERSION)
    kernels = {"x": RBFKernel(gamma=1.0 / dense["train"].shape[1]), **part_kernels()}
    objects = {"x": dense, "q": {s: trees[s]["q"] for s in SPLITS}, "c": {s: trees[s]["c"] for s in SPLITS}}
    blocks = list(range(0, n_train, BLOCK))
    todo = [b for b in blocks if not block_path(folder / "kernel", b // BLOCK).is_file()]
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
        meta = {"columns": [b, b + len(columns)], "seconds": seconds, "n_jobs": n_jobs}
        save_arrays(block_path(folder / "kernel", b // BLOCK), arrays, meta, BLOCK_FORMAT, CACHE_VERSION)
    return folder, len(todo)


@functools.lru_cache(maxsize=1)
def load_pairs(folder):
    """(header meta, {name: array}) of ``OUT/data/pairs.npz``."""
    arrays, meta = load_arrays(Path(folder) / "pairs.npz", DATA_FORMAT, CACHE_VERSION, what="croce2016 pairs cache")
    return meta, arrays


def _block_paths(folder, n_train):
    return block_paths(Path(folder) / "kernel", n_train, BLOCK)


@functools.lru_cache(maxsize=1)
def load_kernel(folder, parts=PARTS):
    """({split: K(split, train in permutation order)} summed over ``parts``, [per-block meta])."""
    meta, _ = load_pairs(folder)
    grams, metas = {s: [] for s in SPLITS}, []
    for path in _block_paths(folder, meta["n_train"]):
        arrays, block_meta = load_arrays(path, BLOCK_FORMAT, CACHE_VERSION, what="croce2016 kernel block")
        metas.append(block_meta)
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
