"""Any file of question-candidate pairs, told apart by its first line: TREC QA's jacana pseudo-XML, SemEval-2016
Task 3 XML, or a QA TSV (WikiQA's or a user's); or a folder holding TREC QA TRAIN-ALL's three POSInput files
(Wang et al. 2007's form, the training set TREC QA rerankers are usually trained on); and whether a path holds
such text rather than LETOR/SVMlight rows (what ``structrank train``, ``predict``, ``evaluate`` and ``compare``
ask before they read a ``--data`` file). Here rather than in ``qa.readers``, which ``qa.semeval`` builds on."""

from __future__ import annotations

import re
from pathlib import Path

from structrank.data.letor import read_bytes
from structrank.errors import DataFormatError
from structrank.files import TRAIN_ALL_FILES, train_all_folder
from structrank.qa.readers import QAData, read_jacana, read_qa_tsv, read_trec_train_all
from structrank.qa.semeval import read_semeval, to_pairs

#: a LETOR/SVMlight row: a label, then qid:... or index:value
_LETOR_ROW = re.compile(rb"^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s+(qid:|\d+:)")


#: how much of a file's start is searched for its first line, and how much of that line is kept
_SNIFF_BYTES, _FIRST_LINE_BYTES = 1 << 20, 1 << 16


def _first_line(path) -> bytes:
    """The first non-blank line of a file (plain or gzip), cut at ``_FIRST_LINE_BYTES``."""
    raw = read_bytes(path)
    for line in raw[:_SNIFF_BYTES].split(b"\n"):
        if line.strip():
            return line.strip()[:_FIRST_LINE_BYTES]
    return b""


def is_pairs_file(path) -> bool:
    """Whether ``path`` holds question-candidate text (a QA TSV, WikiQA, jacana or SemEval XML, a TRAIN-ALL
    folder) rather than LETOR/SVMlight rows: told by its first non-blank line."""
    if train_all_folder(path):
        return True
    first = _first_line(path)
    if first.startswith(b"<"):
        return True
    return not _LETOR_ROW.match(first) and b"\t" in first


def read_pairs_file(path) -> QAData:
    """The question-candidate pairs of any file the QA readers read, told apart by its first line: TREC QA's
    jacana pseudo-XML (``<QApairs``), SemEval-2016 Task 3 XML (``<?xml``, ``<xml``), else a QA TSV
    (``read_qa_tsv``: WikiQA's header, or 3 or 4 columns); or, given a folder, TREC QA TRAIN-ALL
    (``read_trec_train_all``: every question and candidate, no cap or filter)."""
    if train_all_folder(path):
        return read_trec_train_all(path)
    if Path(path).is_dir():
        raise DataFormatError(path, None, "is a folder, not a file (a folder is read only when it holds TREC QA "
                                          f"TRAIN-ALL's files: {', '.join(TRAIN_ALL_FILES.values())})")
    first = _first_line(path)
    if first.startswith(b"<QApairs"):
        return read_jacana(path)
    if first.startswith((b"<?xml", b"<xml", b"<!DOCTYPE", b"<Thread")):
        return to_pairs(read_semeval(path), source=str(path))
    return read_qa_tsv(path)
