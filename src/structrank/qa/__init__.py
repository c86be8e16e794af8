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

#: the features module's names, imported when first used: it loads scikit-learn, which the readers (and so
#: ``structrank evaluate`` and ``predict`` on a LETOR file, through structrank.labelled) never need
_FEATURES = ("QAFeaturizer", "question_type", "tokenize")


def __getattr__(name):
    if name in _FEATURES:
        from structrank.qa import features  # deferred: scikit-learn loads only when a features name is used

        return getattr(features, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    # the lazy names too: autodoc (the API reference) and completion find a module's members through dir()
    return sorted(set(globals()) | set(_FEATURES))
