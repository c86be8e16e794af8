"""``structrank featurize qa``: question-candidate text in, LETOR/SVMlight file out.

The input is any question-candidate file the other commands read (``pairs_files.read_pairs_file``): a user
TSV, a WikiQA TSV, TREC QA's jacana XML or TRAIN-ALL folder, SemEval-2016 XML. Every candidate becomes one
row: its label, an integer qid (1, 2, ... in the order of the questions) and the comment
``docid = DOCID question = QID`` keeping the file's own ids. Nothing is filtered: the file is
featurized as it stands (filter with ``readers.keep_questions_with_both`` for the paper's setup).

The featurizer's fitted state (document frequencies) comes from training data: ``--fit FILE``
fits on FILE, ``--state FILE`` reuses a saved state, and with neither the input itself is used,
which is right for a training file and a leak-free but weaker choice for a test file (its idf
then comes from the test texts). The state used is saved beside the output unless it was given.

``--embeddings`` adds the sentence-embedding columns of ``structrank.qa.embeddings``, imported only
then (an optional dependency).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from structrank.data.dataset import RankingDataset
from structrank.data.letor import write_letor
from structrank.errors import DataValidationError, StructRankError
from structrank.qa.features import QAFeaturizer
from structrank.qa.pairs_files import read_pairs_file
from structrank.qa.readers import QAData

EMBEDDINGS_HINT = 'pip install "structrank[embeddings]"'


def state_path_for(out) -> Path:
    """Where the featurizer state of an output file goes: ``OUT.featurizer.json``."""
    out = Path(out)
    return out.with_name(out.name + ".featurizer.json")


def embedding_columns(questions, candidates):
    """Extra columns from ``structrank.qa.embeddings`` (an optional dependency), and their names.

    Imported only here, so that the similarity features never need torch.
    """
    try:
        # deferred: optional extra (embeddings), whose ImportError becomes the error message below
        from structrank.qa.embeddings import embedding_features
    except ImportError as exc:
        raise StructRankError(f"--embeddings needs the optional embedding dependencies ({exc}); "
                              f"install them with: {EMBEDDINGS_HINT}") from None
    try:
        values, names = embedding_features(list(questions), list(candidates), kind="interaction")
    except ImportError as exc:  # the module is there, its dependencies are not
        raise StructRankError(f"--embeddings needs the optional embedding dependencies ({exc}); "
                              f"install them with: {EMBEDDINGS_HINT}") from None
    values = np.asarray(values, dtype=np.float64)
    names = [str(n) for n in names]
    if values.ndim != 2 or values.shape != (len(candidates), len(names)):
        raise DataValidationError(f"embedding_features returned shape {values.shape} and {len(names)} names "
                                  f"for {len(candidates)} pairs")
    return values, names


def to_ranking_dataset(data: QAData, X) -> RankingDataset:
    """Rows of a LETOR file: integer qids 1..n in question order, the file's ids in the comment."""
    sizes = np.diff(data.offsets)
    qid = np.repeat(np.arange(1, data.n_queries + 1), sizes)
    # The comment is split on white space when read back, so ids must not hold any.
    docids = ["_".join(d.split()) or "-" for d in data.docids]
    comments = [f"docid = {d} question = {'_'.join(q.split())}" for d, q in zip(docids, data.qid)]
    return RankingDataset(np.asarray(X, dtype=np.float64), data.labels, qid, docids=docids,
                          comments=comments, source=data.source)


def featurize(data: QAData, featurizer: QAFeaturizer, embeddings: bool = False):
    """Feature matrix and column names of ``data``; embedding columns appended when asked."""
    X = featurizer.transform(data)
    names = list(featurizer.feature_names_)
    if embeddings:
        extra, extra_names = embedding_columns(data.pair_questions(), data.candidates)
        X = np.hstack([X, extra])
        names += extra_names
    return X, names


def featurize_file(input_path, out, fit=None, state=None, embeddings=False, log=None, query_file=False) -> dict:
    """Featurize a question-candidate file into a LETOR/SVMlight file (see the module docstring).

    Returns a summary: rows, questions, features, the state file, seconds.
    """
    say = log or (lambda message: print(message, file=sys.stderr))
    if fit is not None and state is not None:
        raise ValueError("give either --fit FILE or --state FILE, not both")
    started = time.perf_counter()
    data = read_pairs_file(input_path)
    state_out = None
    if state is not None:
        featurizer = QAFeaturizer.load(state)
    else:
        if fit is None:
            say(f"no --fit or --state: fitting the featurizer (idf) on the input {input_path} itself")
            featurizer = QAFeaturizer().fit(data)
        else:
            featurizer = QAFeaturizer().fit(read_pairs_file(fit))
        state_out = state_path_for(out)
    X, names = featurize(data, featurizer, embeddings=embeddings)
    write_letor(out, to_ranking_dataset(data, X), query_file=query_file)  # query_file: OUT.query beside it
    if state_out is not None:
        featurizer.save(state_out)
    seconds = time.perf_counter() - started
    n_embedding = len(names) - len(featurizer.feature_names_)
    say(f"wrote {out}: {data.n_candidates} rows, {data.n_queries} questions, {len(names)} features"
        + (f" ({len(featurizer.feature_names_)} similarity + {n_embedding} embedding)" if n_embedding else "")
        + (f"; featurizer state {state_out}" if state_out is not None else "") + f" ({seconds:.1f} s)")
    return {"rows": data.n_candidates, "questions": data.n_queries, "features": names,
            "state": None if state_out is None else str(state_out), "seconds": seconds}
