"""Answer-selection data: WikiQA, TREC QA (jacana splits and TRAIN-ALL) and a plain user TSV.

Every reader returns a ``QAData``: one question per query and its candidate sentences, each
candidate with a relevance label, the question's id and a document id. Questions are kept in
file order and each question's candidates stay contiguous and in file order, because the
paper's TREC13 training cap keeps "the first 10" candidates.

``load_qa(name, split)`` gives the splits of Haponchyk & Moschitti (2018), Sec. 5.1, from the
benchmark data folder.

``QAData`` holds questions, candidates, labels, qid, docids, ``position`` (source information,
never a feature) and ``titles`` (each candidate's document title where the file gives one: WikiQA's
DocumentTitle). The readers: WikiQA TSV, TREC jacana pseudo-XML (read line by line), TREC
TRAIN-ALL POSInput files, and a user TSV (3 or 4 columns, or the WikiQA header). The paper's filters
are ``keep_questions_with_both``, ``cap_candidates`` and ``filter_questions``.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from structrank.data.dataset import contiguous_order, group_offsets
from structrank.data.filters import queries_with_both
from structrank.data.letor import MAX_LABEL, check_not_utf16, read_bytes
from structrank.errors import DataFormatError, DataValidationError
from structrank.files import TRAIN_ALL_FILES
from structrank.paths import data_dir

#: Columns a WikiQA header must have; SentenceID gives docids and positions when present.
WIKIQA_REQUIRED = ("QuestionID", "Question", "Sentence", "Label")

#: Between a candidate's document title and its text when a reranker reads both (``QAData.titled_candidates``)
TITLE_SEPARATOR = ". "

#: The paper caps TREC13 training questions at this many candidates (Sec. 5.1).
TREC13_TRAIN_CAP = 10


@dataclass
class QAData:
    """Questions and their candidate answer sentences.

    Parameters
    ----------
    questions : list of str
        One text per question, in the order of the questions' first rows.
    candidates : list of str
        One text per candidate; the candidates of a question are contiguous.
    labels : ndarray of int64, shape (n_candidates,)
        1 (or more) for a correct answer sentence, 0 for an incorrect one.
    qid : ndarray of str, shape (n_candidates,)
        The question id of each candidate, as in the source file.
    docids : list of str
        An id per candidate (WikiQA's SentenceID; ``QID-k`` for k = 0, 1, ... elsewhere).
    position : ndarray of int64, shape (n_candidates,), optional
        Index of the sentence in its source document (WikiQA's ``D1-3`` gives 3), -1 when
        unknown. Source information only: it must never be used as a feature (the first
        sentence of a Wikipedia summary answers many questions, which a reranker of arbitrary
        passages cannot know).
    source : str, optional
        Where the data came from, for messages.
    titles : list of str, optional
        The title of each candidate's document (WikiQA's DocumentTitle), None when the file has none. A text
        reranker reads it only when told (``CrossEncoderRanker(titles=True)``, through ``titled_candidates``), as
        rerankers read a passage with its document's title (BEIR's title and text).

    Examples
    --------
    >>> import numpy as np
    >>> d = QAData(["who?"], ["Ann did it.", "Rain."], np.array([1, 0]), np.array(["q1", "q1"]), ["a", "b"])
    >>> d.n_queries, d.n_candidates, d.pair_questions()
    (1, 2, ['who?', 'who?'])
    """

    questions: list
    candidates: list
    labels: np.ndarray
    qid: np.ndarray
    docids: list
    position: np.ndarray | None = None
    source: str | None = None
    titles: list | None = None

    def __post_init__(self):
        self.questions = [str(q) for q in self.questions]
        self.candidates = [str(c) for c in self.candidates]
        self.docids = [str(d) for d in self.docids]
        if self.titles is not None:
            self.titles = [str(t) for t in self.titles]
        self.labels = np.asarray(self.labels, dtype=np.int64)
        self.qid = np.asarray(self.qid, dtype=str)
        n = len(self.candidates)
        lengths = [("labels", self.labels.shape[0]), ("qid", self.qid.shape[0]), ("docids", len(self.docids))]
        for name, length in lengths + ([("titles", len(self.titles))] if self.titles is not None else []):
            if length != n:
                raise DataValidationError(f"{name} must have one entry per candidate ({n}), got {length}")
        if self.position is not None:
            self.position = np.asarray(self.position, dtype=np.int64)
            if self.position.shape != (n,):
                raise DataValidationError(f"position must have one entry per candidate ({n}), got {self.position.shape}")
        if np.any(self.labels < 0):
            raise DataValidationError("labels must be non-negative integers")
        self.offsets, query_ids = group_offsets(self.qid)
        self.query_ids = [str(q) for q in query_ids]
        if len(self.questions) != len(self.query_ids):
            raise DataValidationError(
                f"{len(self.questions)} question texts for {len(self.query_ids)} question ids")

    @property
    def n_queries(self) -> int:
        return len(self.questions)

    @property
    def n_candidates(self) -> int:
        return len(self.candidates)

    def __len__(self) -> int:
        return self.n_candidates

    # The protocol of a labelled data set that ``structrank train``, ``select_on_vali`` and ``evaluate`` read:
    # ``y``, the rows as ``X`` (the pairs a text reranker predicts on), ``n_rows`` and ``row_order`` (None:
    # the rows are in the reader's order, which is the file's unless it had to group a question's rows).

    @property
    def y(self) -> np.ndarray:
        return self.labels

    @property
    def X(self) -> list:
        """The (question, candidate) pairs, one per row."""
        return list(zip(self.pair_questions(), self.candidates))

    @property
    def n_rows(self) -> int:
        return self.n_candidates

    row_order = None

    def titled_candidates(self) -> list:
        """Each candidate with its document's title before it (``"{title}. {candidate}"``; an empty title, the
        candidate alone), the text a reranker told to read titles scores; DataValidationError when the data has
        no titles."""
        if self.titles is None:
            raise DataValidationError(f"{self.source or 'the QA data'} gives no document titles (a WikiQA file's "
                                      "DocumentTitle column) for the candidates to be read with")
        return [f"{title}{TITLE_SEPARATOR}{candidate}" if title else candidate
                for title, candidate in zip(self.titles, self.candidates)]

    def pair_questions(self) -> list:
        """The question text of every candidate (one entry per candidate)."""
        sizes = np.diff(self.offsets)
        return [q for q, size in zip(self.questions, sizes) for _ in range(size)]

    def take_rows(self, rows) -> "QAData":
        """The candidates at ``rows`` (increasing indices keep each question contiguous)."""
        rows = np.asarray(rows, dtype=np.int64)
        kept = sorted(set(np.searchsorted(self.offsets, rows, side="right") - 1))
        return QAData(
            [self.questions[i] for i in kept],
            [self.candidates[i] for i in rows],
            self.labels[rows],
            self.qid[rows],
            [self.docids[i] for i in rows],
            None if self.position is None else self.position[rows],
            self.source,
            None if self.titles is None else [self.titles[i] for i in rows],
        )

    def take_queries(self, query_index) -> "QAData":
        """The questions at positions ``query_index`` (increasing), with all their candidates."""
        query_index = np.asarray(query_index, dtype=np.int64)
        pieces = [np.arange(self.offsets[i], self.offsets[i + 1]) for i in query_index]
        return self.take_rows(np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int64))

    def summary(self) -> dict:
        """Counts to check before trusting a number: questions, pairs, positives, clean questions."""
        return {
            "questions": self.n_queries,
            "pairs": self.n_candidates,
            "positive": int(np.sum(self.labels >= 1)),
            "questions_with_both": int(queries_with_both(self.labels, self.offsets).size),
        }


# -- filters --------------------------------------------------------------------------------------


def keep_questions_with_both(data: QAData) -> QAData:
    """Keep the questions with at least one correct and one incorrect candidate.

    This is the filtering of Yang et al. (2015) that the paper applies to WikiQA and TREC13:
    a question whose candidates are all correct or all wrong has nothing to rank.
    """
    return data.take_queries(queries_with_both(data.labels, data.offsets))


def cap_candidates(data: QAData, max_per_question: int) -> QAData:
    """Keep the first ``max_per_question`` candidates of every question, in file order.

    File order is the order of the source (TREC's pseudo-XML lists positives before negatives),
    so the cap is deterministic and reproducible; a question may lose all its negatives.
    """
    if max_per_question < 1:
        raise ValueError(f"max_per_question must be >= 1, got {max_per_question}")
    starts = np.repeat(data.offsets[:-1], np.diff(data.offsets))
    return data.take_rows(np.flatnonzero(np.arange(data.n_candidates) - starts < max_per_question))


def filter_questions(data: QAData, max_candidates: int | None = None, both: bool = True) -> QAData:
    """The paper's preparation: cap the candidates first, then keep the questions with both labels.

    The order matters. On TREC TRAIN-ALL, capping at 10 and then filtering keeps 970 questions,
    the number the paper reports; filtering first would keep 1,161, of which 191 have only
    correct candidates left after the cap.
    """
    if max_candidates is not None:
        data = cap_candidates(data, max_candidates)
    return keep_questions_with_both(data) if both else data


# -- reading text ---------------------------------------------------------------------------------


def _read_lines(path, universal=False) -> list:
    """The lines of a text file (plain or gzip), UTF-8, without line ends.

    ``universal`` also splits on a lone carriage return (the TRAIN-ALL files mix line ends);
    TSV files split on "\\n" only, so that a stray "\\r" or U+2028 inside a sentence stays text.
    """
    raw = read_bytes(path)
    check_not_utf16(path, raw)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise DataFormatError(path, line, f"not UTF-8 text (byte {raw[exc.start]:#x})") from None
    lines = re.split(r"\r\n|\r|\n", text) if universal else [s[:-1] if s.endswith("\r") else s for s in text.split("\n")]
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _parse_label(path, number, text, hint=False) -> int:
    """A non-negative integer label; too large a one (it would overflow the int64 labels array
    with a bare OverflowError) is refused like the labels of LETOR files. ``hint``: the file's
    first row, which may be a header the reader did not recognise."""
    text = text.strip()
    if not re.fullmatch(r"\d+", text):
        header = " (a header row is read as one when its last column is named 'label')" if hint else ""
        raise DataFormatError(path, number, f"label {text!r} is not a non-negative integer{header}", "label")
    label = int(text)
    if label > MAX_LABEL:
        raise DataFormatError(path, number, f"label {text} is too large (at most {MAX_LABEL})", "label")
    return label


def _check_text(path, number, text, field) -> str:
    text = text.strip()
    if not text:
        raise DataFormatError(path, number, f"empty {field}", field)
    return text


class _Builder:
    """Collects rows question by question and makes a QAData; used by every reader."""

    def __init__(self, path):
        self.path = path
        self.question_of = {}  # qid -> (text, line)
        self.rows = []  # (qid, candidate, label, docid, position, title)

    def add(self, number, qid, question, candidate, label, docid=None, position=-1, title=None):
        seen = self.question_of.get(qid)
        if seen is None:
            self.question_of[qid] = (question, number)
        elif seen[0] != question:
            raise DataFormatError(
                self.path, number, f"question id {qid!r} was {seen[0]!r} at line {seen[1]}, here {question!r}",
                "question")
        self.rows.append((qid, candidate, label, docid, position, title))

    def build(self) -> QAData:
        if not self.rows:
            raise DataFormatError(self.path, None, "holds no question-candidate pairs")
        qid = np.array([r[0] for r in self.rows], dtype=str)
        order = contiguous_order(qid)
        rows = self.rows
        if order is not None:
            warnings.warn(f"{self.path}: the rows of some questions are not contiguous; they were grouped by "
                          "question id (stable order)", stacklevel=3)
            rows = [rows[i] for i in order]
        # Documents without an id get QID-k, k counting the question's candidates from 0.
        docids, counter = [], {}
        for q, _, _, docid, _, _ in rows:
            k = counter.get(q, 0)
            counter[q] = k + 1
            docids.append(docid if docid else f"{q}-{k}")
        questions = [self.question_of[q][0] for q in dict.fromkeys(r[0] for r in rows)]
        return QAData(
            questions,
            [r[1] for r in rows],
            np.array([r[2] for r in rows], dtype=np.int64),
            np.array([r[0] for r in rows], dtype=str),
            docids,
            np.array([r[4] for r in rows], dtype=np.int64),
            str(self.path),
            [r[5] for r in rows] if all(r[5] is not None for r in rows) else None,
        )


# -- TSV ------------------------------------------------------------------------------------------


def _is_wikiqa_header(fields) -> bool:
    return bool(fields) and fields[0].strip().lower() == "questionid"


def read_qa_tsv(path) -> QAData:
    """Read a user TSV or a WikiQA TSV (plain or .gz).

    Two layouts are accepted, told apart by the first line:

    - WikiQA's, with its header ``QuestionID Question DocumentID DocumentTitle SentenceID
      Sentence Label`` (columns found by name; QuestionID, Question, Sentence and Label are
      required);
    - rows of ``question candidate label`` or ``question_id question candidate label``, with or
      without a header row whose last column is named ``label`` (any case; the other names are
      free). Without a question id, consecutive rows with the same question form one query (ids
      ``q1``, ``q2``, ... in order).

    Labels are non-negative integers. Blank lines are skipped. Raises DataFormatError naming
    the file, the line and the field of the first problem.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "qa.tsv")
    >>> with open(path, "w") as fh:
    ...     _ = fh.write("who wrote it?\\tAnn wrote it.\\t1\\nwho wrote it?\\tIt rained.\\t0\\n")
    >>> d = read_qa_tsv(path)
    >>> d.questions, d.labels.tolist(), d.docids
    (['who wrote it?'], [1, 0], ['q1-0', 'q1-1'])
    """
    lines = _read_lines(path)
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None:
        raise DataFormatError(path, None, "holds no question-candidate pairs (empty file)")
    if _is_wikiqa_header(lines[first].split("\t")):
        return _read_wikiqa_lines(path, lines, first)
    return _read_plain_tsv_lines(path, lines, first)


def read_wikiqa(path) -> QAData:
    """Read a WikiQA TSV (plain or .gz); its header row is required.

    ``docids`` are the SentenceIDs and ``position`` the sentence's index in its Wikipedia
    summary (never a feature: see ``QAData``).
    """
    lines = _read_lines(path)
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None or not _is_wikiqa_header(lines[first].split("\t")):
        raise DataFormatError(path, 1 if first is None else first + 1,
                              "no WikiQA header (QuestionID, Question, DocumentID, DocumentTitle, SentenceID, "
                              "Sentence, Label)")
    return _read_wikiqa_lines(path, lines, first)


def _read_wikiqa_lines(path, lines, header_index) -> QAData:
    header = [f.strip() for f in lines[header_index].split("\t")]
    column = {name: i for i, name in enumerate(header)}
    for name in WIKIQA_REQUIRED:
        if name not in column:
            raise DataFormatError(path, header_index + 1, f"header has no {name!r} column (it has {', '.join(header)})",
                                  name)
    builder = _Builder(path)
    for index in range(header_index + 1, len(lines)):
        line, number = lines[index], index + 1
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != len(header):
            raise DataFormatError(path, number, f"expected {len(header)} tab-separated columns as in the header, "
                                                f"found {len(fields)}")
        qid = _check_text(path, number, fields[column["QuestionID"]], "QuestionID")
        sentence_id = fields[column["SentenceID"]].strip() if "SentenceID" in column else ""
        # SentenceID is DocumentID-k: k is the sentence's place in the summary.
        match = re.fullmatch(r".*-(\d+)", sentence_id)
        builder.add(
            number, qid,
            _check_text(path, number, fields[column["Question"]], "Question"),
            _check_text(path, number, fields[column["Sentence"]], "Sentence"),
            _parse_label(path, number, fields[column["Label"]]),
            re.sub(r"\s+", "_", sentence_id) or None,
            int(match.group(1)) if match else -1,
            fields[column["DocumentTitle"]].strip() if "DocumentTitle" in column else None,
        )
    return builder.build()


def _is_label_header(fields) -> bool:
    return fields[-1].strip().lower() == "label"


def _read_plain_tsv_lines(path, lines, first) -> QAData:
    header = lines[first].split("\t")
    n_columns = len(header)
    if n_columns not in (3, 4):
        raise DataFormatError(path, first + 1, f"expected 3 tab-separated columns (question, candidate, label) or 4 "
                                               f"(question id, question, candidate, label), found {n_columns}")
    start = first + 1 if _is_label_header(header) else first
    builder = _Builder(path)
    n_questions, previous = 0, None
    for index in range(start, len(lines)):
        line, number = lines[index], index + 1
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != n_columns:
            raise DataFormatError(path, number, f"expected {n_columns} tab-separated columns as on line {first + 1}, "
                                                f"found {len(fields)}")
        if n_columns == 4:
            qid = _check_text(path, number, fields[0], "question id")
            fields = fields[1:]
        question = _check_text(path, number, fields[0], "question")
        if n_columns == 3:
            # Without ids a query is a run of rows with the same question.
            if question != previous:
                n_questions += 1
                previous = question
            qid = f"q{n_questions}"
        builder.add(number, qid, question, _check_text(path, number, fields[1], "candidate"),
                    _parse_label(path, number, fields[2], hint=index == first))
    return builder.build()


# -- TREC QA, jacana pseudo-XML -------------------------------------------------------------------

_QAPAIRS = re.compile(r"<QApairs\s+id\s*=\s*['\"]?([^'\">]+)['\"]?\s*>")
_JACANA_LINES = ("tokens", "POS tags", "dependency labels", "heads", "NER tags")


def read_jacana(path) -> QAData:
    """Read a TREC QA split in Yao et al.'s (2013) jacana pseudo-XML (plain or .gz).

    Per question: ``<QApairs id='..'>``, a ``<question>`` block, then ``<positive>`` and
    ``<negative>`` blocks, each of 5 tab-separated lines (tokens, POS, dependency labels, heads,
    NER); a ``<positive>`` block may add 2 lines (the answer fragment's tokens and indices). The
    text is not escaped XML, so it is read line by line. A candidate's text is its tokens joined
    by spaces, label 1 for ``<positive>``, 0 for ``<negative>``. Questions without candidates are
    left out (nothing to rank).
    """
    lines = _read_lines(path, universal=True)
    builder = _Builder(path)
    qid = question = None
    block, block_start, block_lines = None, 0, []
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if block is not None:
            if stripped == f"</{block}>":
                # Positive blocks may add the answer fragment's tokens and their indices (Yao et al.'s
                # answer-extraction annotation): 5 or 7 lines.
                allowed = (5, 7) if block == "positive" else (5,)
                if len(block_lines) not in allowed:
                    problem = "truncated block" if len(block_lines) < 5 else "malformed block"
                    raise DataFormatError(
                        path, number, f"{problem}: <{block}> opened at line {block_start} has {len(block_lines)} lines, "
                                      f"expected {' or '.join(map(str, allowed))} ({', '.join(_JACANA_LINES)}"
                                      f"{'[, answer tokens, answer indices]' if block == 'positive' else ''})")
                text = " ".join(t for t in block_lines[0].split("\t") if t.strip())
                if block == "question":
                    question = _check_text(path, block_start + 1, text, "question")
                else:
                    if question is None:
                        raise DataFormatError(path, block_start, f"<{block}> before the <question> of {qid!r}")
                    builder.add(block_start, qid, question, _check_text(path, block_start + 1, text, "candidate"),
                                1 if block == "positive" else 0)
                block = None
            elif stripped.startswith("<") and re.fullmatch(r"</?(QApairs|question|positive|negative)\b.*", stripped):
                raise DataFormatError(path, number, f"truncated block: <{block}> opened at line {block_start} "
                                                    f"is not closed before {stripped!r}")
            else:
                block_lines.append(line)
            continue
        if not stripped:
            continue
        match = _QAPAIRS.fullmatch(stripped)
        if match:
            if qid is not None:
                raise DataFormatError(path, number, f"<QApairs> of {qid!r} is not closed before the next one")
            qid, question = match.group(1).strip(), None
        elif stripped == "</QApairs>":
            if qid is None:
                raise DataFormatError(path, number, "</QApairs> without <QApairs id=...>")
            qid = None
        elif stripped in ("<question>", "<positive>", "<negative>"):
            if qid is None:
                raise DataFormatError(path, number, f"{stripped} outside <QApairs id=...>")
            block, block_start, block_lines = stripped[1:-1], number, []
        else:
            raise DataFormatError(path, number, f"unexpected line {stripped[:40]!r} (expected a tag)")
    if block is not None:
        raise DataFormatError(path, len(lines), f"truncated block: <{block}> opened at line {block_start} is not closed "
                                                "at the end of the file")
    if qid is not None:
        raise DataFormatError(path, len(lines), f"<QApairs> of {qid!r} is not closed at the end of the file")
    return builder.build()


# -- TREC QA TRAIN-ALL, Wang et al.'s POSInput files ----------------------------------------------

_BLOCK = re.compile(r"<([QA])\s+(\d+)\s*>")


def _read_blocks(path, tag) -> dict:
    """``<Q n >`` / ``<A n >`` blocks of a POSInput file: {n: [(line number, sentence), ...]}."""
    blocks, current, start = {}, None, 0
    for number, line in enumerate(_read_lines(path, universal=True), start=1):
        stripped = line.strip()
        match = _BLOCK.fullmatch(stripped)
        if match:
            if current is not None:
                raise DataFormatError(path, number, f"truncated block: <{tag} {current} > opened at line {start} is "
                                                    "not closed before the next block")
            if match.group(1) != tag:
                raise DataFormatError(path, number, f"<{match.group(1)} ..> block in a file of <{tag} ..> blocks")
            current, start = match.group(2), number
            if current in blocks:
                raise DataFormatError(path, number, f"second block for question {current}")
            blocks[current] = []
        elif stripped == f"</{tag}>":
            if current is None:
                raise DataFormatError(path, number, f"</{tag}> without an open block")
            current = None
        elif stripped:
            if current is None:
                raise DataFormatError(path, number, f"text outside a <{tag} n > block")
            # Three sentences carry a paragraph marker glued to their start.
            blocks[current].append((number, re.sub(r"^<\s*P\s*>\s*", "", stripped)))
    if current is not None:
        raise DataFormatError(path, None, f"truncated block: <{tag} {current} > opened at line {start} is not closed "
                                          "at the end of the file")
    return blocks


def read_trec_train_all(folder=None, positive=None, negative=None, question=None) -> QAData:
    """Read TREC QA TRAIN-ALL (questions 1-2393 of TREC 8-12) from Wang et al.'s POSInput files.

    Parameters
    ----------
    folder : path, optional
        Folder with the three files of ``TRAIN_ALL_FILES`` (default:
        ``DATA/trecqa/wang2007-train-all``).
    positive, negative, question : path, optional
        The files themselves; the cleaned positive list by default, which gives the usual
        TRAIN-ALL pair count (53,417 over 1,229 questions).

    Each question's positives come first, then its negatives, as in the pseudo-XML versions
    of the data (``TRAIN-ALL.xml`` and the jacana splits list positive blocks first).
    """
    if folder is None and None in (positive, negative, question):
        folder = qa_file("trec13", "train")
    paths = {kind: Path(given) if given is not None else Path(folder) / TRAIN_ALL_FILES[kind]
             for kind, given in (("question", question), ("positive", positive), ("negative", negative))}
    questions = _read_blocks(paths["question"], "Q")
    answers = {kind: _read_blocks(paths[kind], "A") for kind in ("positive", "negative")}
    for kind, blocks in answers.items():
        for number in blocks:
            if number not in questions:
                raise DataFormatError(paths[kind], None, f"answers for question {number}, which "
                                                         f"{paths['question'].name} does not have")
    builder = _Builder(paths["question"])
    for number, lines in questions.items():
        if len(lines) != 1:
            raise DataFormatError(paths["question"], lines[0][0] if lines else None,
                                  f"question {number} has {len(lines)} lines, expected 1")
        text = lines[0][1]
        for kind, label in (("positive", 1), ("negative", 0)):
            for line_number, sentence in answers[kind].get(number, []):
                builder.add(line_number, number, text, sentence, label)
    return builder.build()


# -- the paper's splits ---------------------------------------------------------------------------

DATASETS = ("wikiqa", "trec13")
SPLITS = ("train", "dev", "test")


def _existing(path: Path) -> Path:
    """``path`` or ``path.gz``, whichever exists (the data folder gzips its larger files)."""
    for candidate in (path, path.with_name(path.name + ".gz")):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"neither {path} nor {path.name}.gz exists")


def qa_file(name: str, split: str, root=None) -> Path:
    """The file of a split (``qa_file("wikiqa", "dev")``); trec13 train is TRAIN-ALL's folder (its POSInput files,
    read by ``read_trec_train_all`` and by the commands as it is)."""
    root = Path(root) if root is not None else data_dir(required=True)
    if name == "trec13" and split == "train":
        folder = root / "trecqa" / "wang2007-train-all"
        if not folder.is_dir():
            raise FileNotFoundError(f"{folder} is not a folder")
        return folder
    if name == "wikiqa":
        return _existing(root / "wikiqa" / f"WikiQA-{split}.tsv")
    if name == "trec13":
        return _existing(root / "trecqa" / "jacana" / f"{split}-less-than-40.manual-edit.xml")
    raise ValueError(f"unknown QA data set {name!r}; known: {', '.join(DATASETS)}")


def load_qa(name: str, split: str, data_root=None, filtered: bool = True) -> QAData:
    """A split of the paper's experiments (Haponchyk & Moschitti 2018, Sec. 5.1).

    Parameters
    ----------
    name : {"wikiqa", "trec13"}
    split : {"train", "dev", "test"}
    data_root : path, optional
        The benchmark data folder (``structrank.paths.data_dir()`` by default).
    filtered : bool, default True
        Apply the paper's preparation; False gives everything the files hold.

    Notes
    -----
    - wikiqa: the questions with at least one correct and one incorrect sentence, 857 / 122 /
      237 questions (8,651 / 1,126 / 2,341 pairs) for train / dev / test.
    - trec13 dev/test: the jacana DEV and TEST splits, clean (65 questions / 1,117 pairs and
      68 / 1,442).
    - trec13 train: TRAIN-ALL (1,229 questions; 1,161 clean), each question's first 10
      candidates in file order (positives first), then the questions with both labels. The
      paper reports 970 training questions; capping before filtering gives exactly 970 here,
      filtering first would give 1,161 (191 of them with positives only after the cap). The
      pseudo-XML TRAIN-ALL the paper used is not available; the POSInput files hold the same
      pairs (53,417).
    """
    if name not in DATASETS:
        raise ValueError(f"unknown QA data set {name!r}; known: {', '.join(DATASETS)}")
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; known: {', '.join(SPLITS)}")
    root = Path(data_root) if data_root is not None else data_dir(required=True)
    if name == "wikiqa":
        data = read_wikiqa(qa_file(name, split, root))
        return keep_questions_with_both(data) if filtered else data
    if split == "train":
        data = read_trec_train_all(qa_file(name, split, root))
        return filter_questions(data, max_candidates=TREC13_TRAIN_CAP) if filtered else data
    data = read_jacana(qa_file(name, split, root))
    return keep_questions_with_both(data) if filtered else data
