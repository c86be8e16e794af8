"""The splits neural-qa reads: WikiQA and TREC QA as haponchyk2018 prepares them, SemEval-2016 as croce2016 does,
and ``--quick``'s first few questions of each."""

from __future__ import annotations

import functools
from pathlib import Path

from structrank import paths
from structrank.data.filters import queries_with_both
from structrank_lab.experiments.neural_qa.design import DATASETS, QUICK_QUESTIONS, SEMEVAL_WITH_2015


def data_root(data_dir=None) -> Path:
    return Path(data_dir) if data_dir is not None else paths.data_dir(required=True)


def folders(data_dir=None) -> dict:
    """{data set: its folder in the data folder} (what each data set's runs read)."""
    root = data_root(data_dir)
    return {name: root / folder for name, (_, _, folder) in DATASETS.items()}


@functools.lru_cache(maxsize=12)
def load_split(dataset: str, split: str, data_dir=None, quick: bool = False):
    """One split as a ``QAData`` (SemEval: ``SemEvalPairs``), questions in file order.

    WikiQA and TREC QA: ``qa.readers.load_qa`` (the questions with a correct and an incorrect candidate; TREC's
    training questions cut to their first 10 candidates first, as the paper). SemEval: every thread of the split
    (``qa.semeval.load_semeval``, the 2015 threads in train as ``SEMEVAL_WITH_2015`` says), a comment relevant when
    Good; the questions without a Good comment stay, as the task's scorer counts them. ``quick``: the first
    ``QUICK_QUESTIONS[split]`` questions with both labels.
    """
    # deferred: `results` imports every experiment module; the QA readers (scikit-learn) load only to run
    from structrank.qa.readers import load_qa
    from structrank.qa.semeval import load_semeval, to_pairs

    root = data_root(data_dir)
    if dataset == "semeval2016":
        data = to_pairs(load_semeval(split, data_dir=root, with_2015=SEMEVAL_WITH_2015))
    else:
        data = load_qa(dataset, split, root)
    if quick:
        data = data.take_queries(queries_with_both(data.labels, data.offsets)[:QUICK_QUESTIONS[split]])
    return data


def splits(dataset: str, data_dir=None, quick: bool = False) -> tuple:
    """(train, dev, test) of ``dataset``."""
    return tuple(load_split(dataset, split, None if data_dir is None else str(data_dir), quick)
                 for split in ("train", "dev", "test"))
