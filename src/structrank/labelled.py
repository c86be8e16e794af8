"""Labelled data files as the commands and the training workflow read them: LETOR/SVMlight features or
question-candidate text, and the queries that have both a relevant and a non-relevant document.
"""

from __future__ import annotations

from structrank.data import read_letor
from structrank.data.filters import queries_with_both as with_both
from structrank.metrics import resolve_convention
from structrank.qa.pairs_files import is_pairs_file, read_pairs_file
from structrank.qa.readers import QAData
from structrank.qa.semeval import SemEvalPairs


def read_labelled(path, inputs=None):
    """The labelled rows of a data file: a LETOR/SVMlight file (``RankingDataset``), or question-candidate text
    (``QAData``: a QA TSV, WikiQA, TREC QA's jacana or SemEval XML; ``structrank.qa.pairs_files.read_pairs_file``).
    ``inputs`` ("features" or "text") says which a model needs; None tells them apart by the first line."""
    if inputs == "text" or (inputs is None and path != "-" and is_pairs_file(path)):
        return read_pairs_file(path)
    return read_letor(path)


def data_convention(convention, ds) -> str:
    """The convention ``ds`` is judged by (``evaluate``, ``compare``, ``train --vali``): ``convention`` when named;
    else for question-candidate text the official tool of its task, SemEval-2016 Task 3's scorer for SemEval
    threads and trec_eval for the rest (as answer selection is reported), else ``auto``, from the labels (letor4's
    rules would score nDCG@10 of every question with fewer than 10 candidates 0)."""
    if convention is not None:
        return convention
    if isinstance(ds, SemEvalPairs):
        return "semeval"
    return "trec" if isinstance(ds, QAData) else "auto"


def queries_with_both(ds, path, convention=None):
    """The positions of ``ds``'s queries with a relevant and a non-relevant document (``--queries with-both``),
    what is relevant read through ``convention`` (None: auto, from the labels; mslr counts labels >= 2); none is
    an error naming ``path``, the file ``ds`` was read from."""
    chosen, _ = resolve_convention(convention or "auto", ds.y)
    queries = with_both(chosen.relevant(ds.y), ds.offsets)
    if queries.size == 0:
        raise ValueError(f"--queries with-both: no query of {path} has both a relevant and a non-relevant document")
    return queries
