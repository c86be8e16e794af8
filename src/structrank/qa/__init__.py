"""Answer reranking for question answering: readers, features and embeddings.

- ``readers``: ``QAData`` and the readers of WikiQA, TREC QA (jacana splits, TRAIN-ALL) and a
  plain user TSV; the paper's filtering; ``load_qa(name, split)`` for the paper's splits.
- ``features``: ``QAFeaturizer``, question-candidate similarity features (docs/QA_FEATURES.md).
- ``featurize``: ``structrank featurize qa``, a TSV into a LETOR/SVMlight file.
- ``semeval``: SemEval-2016 Task 3 subtask A (community QA) threads: the XML reader, the
  paper's train/dev/test composition, (question, comment) pairs with task features, and the
  official scorer's file formats.
- ``embeddings``: optional sentence-embedding features (``pip install "structrank[embeddings]"``);
  not imported here, so that nothing above needs torch.
"""

import importlib

from structrank.qa.readers import (
    QAData,
    cap_candidates,
    filter_questions,
    keep_questions_with_both,
    load_qa,
    read_jacana,
    read_qa_tsv,
    read_trec_train_all,
    read_wikiqa,
)

__all__ = [
    "QAData",
    "QAFeaturizer",
    "cap_candidates",
    "filter_questions",
    "keep_questions_with_both",
    "load_qa",
    "question_type",
    "read_jacana",
    "read_qa_tsv",
    "read_trec_train_all",
    "read_wikiqa",
    "tokenize",
]

#: the features module's names, imported when first used (as structrank.data's and structrank.learners' lazy
#: names): it loads scikit-learn, which the readers (and so ``structrank evaluate`` and ``predict`` on a LETOR file,
#: through structrank.labelled) never need
_LAZY = {"QAFeaturizer": "features", "question_type": "features", "tokenize": "features"}


def __getattr__(name):
    if name in _LAZY:
        return getattr(importlib.import_module(f"structrank.qa.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'structrank.qa' has no attribute {name!r}")


def __dir__():  # the lazy names too (PEP 562): tab completion and autodoc see them
    return sorted({*globals(), *__all__})
