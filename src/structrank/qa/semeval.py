"""SemEval-2016 Task 3, subtask A: rank the comments of a Qatar Living question thread.

The data of the Nyström-kernel experiments of Croce et al. (community question answering):
each ``<Thread>`` holds one question (``<RelQuestion>``: subject and body) and its comments
(``<RelComment>``) in thread order, each labelled ``RELC_RELEVANCE2RELQ`` in {Good,
PotentiallyUseful, Bad}. Good is the relevant class (the official scorer maps Good to ``true``
and the other two to ``false``).

- ``read_semeval(path)`` parses one XML file (plain or .gz) into ``Thread`` objects;
- ``load_semeval(split)`` gives the train / dev / test threads from the benchmark data folder;
- ``to_pairs(threads)`` makes question-comment pairs (a ``QAData``) with task features;
- ``write_semeval_scores`` writes a prediction file for the official scorer and
  ``semeval_gold`` reads the ``.relevancy`` gold files (and prediction files).

Splits (files in ``DATA/semeval2016-cqa``; see QA_NLP_PROVENANCE.md, sections 3 and 5a):

- train: 2016 train-part2 (379 threads / 3,790 comments) followed by the SemEval-2015 dev
  data reformatted to the 2016 format, "excluding-2016-questions", cleansed (291 / 1,529),
  minus the two threads whose question duplicates a 2016 test question (Q2630 = test
  Q373_R23, Q2656 = test Q350_R26; 53 comments between them): 668 threads / 5,266 comments (one 2015
  thread has no comment, so 667 questions in pairs). The 2016 train-part1 is not in the data
  folder; ``load_semeval`` reads it too (first) when a user has it.
- dev: 2016 dev (244 / 2,440); test: 2016 test with gold labels (327 / 3,270).

Why the cleansed "excluding" 2015 variant: the organisers removed from it the 2015 questions
that are also 2016 questions (the full 2015 dev file overlaps the 2016 dev and train data), and
its text is cleansed and single-line "as for 2016", so token counts, URLs and punctuation look
like those of the 2016 files. Its thread ids, comment ids and labels are those of the
multiline variant.

Errors of the XML reader name the file and the line.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from structrank import paths
from structrank.atomic import atomic_open
from structrank.data.letor import read_bytes
from structrank.data.letor import parse_score
from structrank.errors import DataFormatError, DataValidationError
from structrank.paths import data_dir
from structrank.qa.readers import QAData

#: The labels of RELC_RELEVANCE2RELQ; only Good counts as relevant.
LABELS = ("Good", "PotentiallyUseful", "Bad")
RELEVANT_LABEL = "Good"

SPLITS = ("train", "dev", "test")

#: Files of each split, relative to the data folder, in reading order.
FOLDER = "semeval2016-cqa"
TRAIN_2016_FILES = (
    "SemEval2016-Task3-CQA-QL-train-part1-subtaskA.xml",  # not in the data folder; read if present
    "SemEval2016-Task3-CQA-QL-train-part2-subtaskA.xml",
)
TRAIN_2015_FILE = "train-more-from-2015/SemEval2015-Task3-CQA-QL-dev-reformatted-excluding-2016-questions-cleansed.xml"
DEV_FILE = "SemEval2016-Task3-CQA-QL-dev-subtaskA.xml"
TEST_FILE = "SemEval2016-Task3-CQA-QL-test-subtaskA.xml"
GOLD_FILES = {"dev": DEV_FILE + ".subtaskA.relevancy", "test": TEST_FILE + ".subtaskA.relevancy"}

#: Threads of the 2015 "excluding-2016-questions" dev files whose question body is that of a
#: 2016 test question (QA_NLP_PROVENANCE.md, 5a): 2015 thread id -> 2016 test thread id.
DUPLICATES_OF_2016_TEST = {"Q2630": "Q373_R23", "Q2656": "Q350_R26"}

#: The columns of ``SemEvalPairs.features``, documented in ``FEATURE_DOCS``.
FEATURE_NAMES = (
    "rank",
    "reciprocal_rank",
    "by_asker",
    "comment_tokens",
    "question_tokens",
    "has_url",
    "has_question_mark",
    "has_mention",
    "same_user_comments",
    "asker_comments",
    "thread_comments",
)
FEATURE_DOCS = {
    "rank": "1-based position of the comment in its thread (file order = posting order)",
    "reciprocal_rank": "1 / rank (the official IR baseline's score)",
    "by_asker": "1 if the comment's user id is the question's user id, else 0 (anonymous posters share "
                "one user id per file, U2 or U3, so in an anonymous thread every anonymous comment counts)",
    "comment_tokens": "number of word tokens of the comment (structrank.qa.features.tokenize)",
    "question_tokens": "number of word tokens of the question (subject + body)",
    "has_url": "1 if the comment contains a URL (http://, https:// or www.), else 0",
    "has_question_mark": "1 if the comment contains '?', else 0",
    "has_mention": "1 if the comment contains '@' (a mention or an e-mail address), else 0",
    "same_user_comments": "comments in the thread by the comment's user, this one included",
    "asker_comments": "comments in the thread by the asker (same for every comment of the thread)",
    "thread_comments": "number of comments in the thread (10 in the 2016 files, 0-32 in the 2015 ones)",
}

_URL = re.compile(r"https?://|\bwww\.", re.IGNORECASE)


@dataclass
class Comment:
    """One ``<RelComment>``.

    Attributes
    ----------
    comment_id : str
        RELC_ID (``Q318_R6_C1``).
    text : str
        RelCText, stripped.
    user_id, username : str
        RELC_USERID and RELC_USERNAME.
    label : str or None
        RELC_RELEVANCE2RELQ, one of ``LABELS`` (None only when read with ``require_labels=False``
        from a file without labels).
    rank : int
        1-based position in the thread, in file order.
    date : str
        RELC_DATE ("" when absent).
    line : int
        Line of the ``<RelComment>`` start tag in its file.
    """

    comment_id: str
    text: str
    user_id: str
    username: str
    label: str | None
    rank: int
    date: str = ""
    line: int | None = None

    @property
    def relevant(self) -> bool:
        """True for Good (the scorer's ``true``)."""
        return self.label == RELEVANT_LABEL


@dataclass
class Thread:
    """One ``<Thread>``: a question and its comments in thread order.

    Attributes
    ----------
    thread_id : str
        THREAD_SEQUENCE.
    question_id : str
        RELQ_ID (the first column of the scorer's files).
    subject, body : str
        RelQSubject and RelQBody, stripped (a body may be empty).
    user_id, username : str
        RELQ_USERID and RELQ_USERNAME of the asker.
    comments : list of Comment
    category, date : str
    source : str
        The file it was read from.
    line : int
        Line of the ``<Thread>`` start tag.
    """

    thread_id: str
    question_id: str
    subject: str
    body: str
    user_id: str
    username: str
    comments: list = field(default_factory=list)
    category: str = ""
    date: str = ""
    source: str | None = None
    line: int | None = None

    @property
    def question_text(self) -> str:
        """Subject and body joined by a space (the question of every pair)."""
        return " ".join(part for part in (self.subject, self.body) if part)

    def by_asker(self, comment: Comment) -> bool:
        """Whether ``comment`` was written by the asker (same user id)."""
        return comment.user_id == self.user_id


# -- reading the XML ------------------------------------------------------------------------------


def _attribute(path, line, element, name, required=True) -> str:
    value = element.get(name)
    if value is None:
        if required:
            raise DataFormatError(path, line, f"<{element.tag}> has no {name} attribute", name)
        return ""
    return value.strip()


def _events(path, raw: bytes):
    """(event, element, line) from an ElementTree pull parser fed line by line.

    Feeding one line at a time gives each start event the line its tag ends on (the tags of
    these files each fit on one line); a ParseError becomes a DataFormatError with expat's line.
    """
    parser = ET.XMLPullParser(events=("start", "end"))
    flush = getattr(parser, "flush", None)  # Python versions with expat reparse deferral
    number = 0
    try:
        for number, chunk in enumerate(raw.splitlines(keepends=True), start=1):
            parser.feed(chunk)
            if flush is not None:
                flush()
            for event, element in parser.read_events():
                yield event, element, number
        parser.close()
        for event, element in parser.read_events():
            yield event, element, number
    except ET.ParseError as exc:
        line = exc.position[0] if getattr(exc, "position", None) else number
        raise DataFormatError(path, line, f"malformed XML: {exc.msg if hasattr(exc, 'msg') else exc}") from None


def read_semeval(path, require_labels: bool = True) -> list:
    """Read a SemEval-2016 Task 3 subtask A XML file (plain or .gz) into a list of ``Thread``.

    Parameters
    ----------
    path : path
        A ``*-subtaskA.xml`` file of 2016 or a reformatted 2015 file (same format).
    require_labels : bool, default True
        Every comment must carry RELC_RELEVANCE2RELQ; False accepts unlabelled files (label None).

    Threads and comments keep file order; a comment's ``rank`` is its 1-based position in the
    thread. Raises DataFormatError naming the file, the line and the field: malformed XML (with
    expat's line), a missing id, user id or label attribute, an unknown label, a repeated
    comment id, a thread without a question.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "t.xml")
    >>> with open(path, "w") as fh:
    ...     _ = fh.write('<xml><Thread THREAD_SEQUENCE="Q1_R1"><RelQuestion RELQ_ID="Q1_R1" '
    ...                  'RELQ_USERID="U1" RELQ_USERNAME="ann"><RelQSubject>Visa</RelQSubject>'
    ...                  '<RelQBody>How long?</RelQBody></RelQuestion><RelComment RELC_ID="Q1_R1_C1" '
    ...                  'RELC_USERID="U2" RELC_USERNAME="bob" RELC_RELEVANCE2RELQ="Good">'
    ...                  '<RelCText>Two weeks.</RelCText></RelComment></Thread></xml>')
    >>> [t] = read_semeval(path)
    >>> t.question_text, t.comments[0].label, t.comments[0].rank
    ('Visa How long?', 'Good', 1)
    """
    path = Path(path)
    raw = read_bytes(path)
    if not raw or raw.isspace():  # else expat's "no element found: line 1, column 0"
        raise DataFormatError(path, None, "holds no <Thread> (empty file)")
    threads, seen_threads, seen_comments = [], {}, {}
    thread = None
    lines = {}  # id(element) -> line of its start tag
    for event, element, number in _events(path, raw):
        tag = element.tag
        if event == "start":
            lines[id(element)] = number
            if tag == "Thread":
                if thread is not None:
                    raise DataFormatError(path, number, "<Thread> inside another <Thread>")
                thread_id = _attribute(path, number, element, "THREAD_SEQUENCE")
                if thread_id in seen_threads:
                    raise DataFormatError(path, number, f"thread {thread_id!r} already at line "
                                                        f"{seen_threads[thread_id]}", "THREAD_SEQUENCE")
                seen_threads[thread_id] = number
                thread = Thread(thread_id, "", "", "", "", "", [], source=str(path), line=number)
            elif tag in ("RelQuestion", "RelComment") and thread is None:
                raise DataFormatError(path, number, f"<{tag}> outside a <Thread>")
            continue
        line = lines.pop(id(element), number)
        if tag == "RelQuestion":
            if thread.question_id:
                raise DataFormatError(path, line, f"second <RelQuestion> in thread {thread.thread_id!r}")
            thread.question_id = _attribute(path, line, element, "RELQ_ID")
            if not thread.question_id:
                raise DataFormatError(path, line, "empty RELQ_ID", "RELQ_ID")
            thread.user_id = _attribute(path, line, element, "RELQ_USERID")
            thread.username = _attribute(path, line, element, "RELQ_USERNAME", required=False)
            thread.category = _attribute(path, line, element, "RELQ_CATEGORY", required=False)
            thread.date = _attribute(path, line, element, "RELQ_DATE", required=False)
            subject, body = element.find("RelQSubject"), element.find("RelQBody")
            if subject is None:
                raise DataFormatError(path, line, f"question {thread.question_id!r} has no <RelQSubject>", "RelQSubject")
            if body is None:
                raise DataFormatError(path, line, f"question {thread.question_id!r} has no <RelQBody>", "RelQBody")
            thread.subject = (subject.text or "").strip()
            thread.body = (body.text or "").strip()
            element.clear()
        elif tag == "RelComment":
            comment_id = _attribute(path, line, element, "RELC_ID")
            if not comment_id:
                raise DataFormatError(path, line, "empty RELC_ID", "RELC_ID")
            if comment_id in seen_comments:
                raise DataFormatError(path, line, f"comment {comment_id!r} already at line {seen_comments[comment_id]}",
                                      "RELC_ID")
            seen_comments[comment_id] = line
            label = element.get("RELC_RELEVANCE2RELQ")
            if label is None:
                if require_labels:
                    raise DataFormatError(path, line, f"comment {comment_id!r} has no label", "RELC_RELEVANCE2RELQ")
            else:
                label = label.strip()
                if label not in LABELS:
                    raise DataFormatError(path, line, f"label {label!r} of comment {comment_id!r} is not one of "
                                                      f"{', '.join(LABELS)}", "RELC_RELEVANCE2RELQ")
            text = element.find("RelCText")
            if text is None:
                raise DataFormatError(path, line, f"comment {comment_id!r} has no <RelCText>", "RelCText")
            thread.comments.append(Comment(
                comment_id,
                (text.text or "").strip(),
                _attribute(path, line, element, "RELC_USERID"),
                _attribute(path, line, element, "RELC_USERNAME", required=False),
                label,
                len(thread.comments) + 1,
                _attribute(path, line, element, "RELC_DATE", required=False),
                line,
            ))
            element.clear()
        elif tag == "Thread":
            if not thread.question_id:
                raise DataFormatError(path, line, f"thread {thread.thread_id!r} has no <RelQuestion>", "RelQuestion")
            threads.append(thread)
            thread = None
            element.clear()
    if not threads:
        raise DataFormatError(path, None, "holds no <Thread>")
    return threads


# -- the splits -----------------------------------------------------------------------------------


def _existing(path: Path, required: bool = True) -> Path | None:
    for candidate in (path, path.with_name(path.name + ".gz")):
        if candidate.is_file():
            return candidate
    if required:
        raise FileNotFoundError(f"neither {path} nor {path.name}.gz exists")
    return None


def semeval_file(name: str, data_root=None, required: bool = True) -> Path | None:
    """A file of the SemEval folder by its name without .gz (the data folder gzips its larger files)."""
    root = Path(data_root) if data_root is not None else data_dir(required=True)
    return _existing(root / FOLDER / name, required)


def normalise_question(text: str) -> str:
    """Lower case, letters and digits only: how duplicate questions are matched across files."""
    return re.sub(r"[^0-9a-z]+", "", text.lower())


def duplicate_threads(threads, reference) -> dict:
    """{thread id in ``threads``: thread id in ``reference``} for equal normalised question bodies.

    Empty bodies never match.
    """
    bodies = {}
    for t in reference:
        key = normalise_question(t.body)
        if key:
            bodies.setdefault(key, t.thread_id)
    return {t.thread_id: bodies[normalise_question(t.body)] for t in threads
            if normalise_question(t.body) in bodies}


def load_semeval(split: str, data_dir=None, with_2015: bool = True) -> list:
    """The threads of a split: "train", "dev" or "test" (see the module notes).

    Parameters
    ----------
    split : {"train", "dev", "test"}
    data_dir : path, optional
        The benchmark data folder (``structrank.paths.data_dir()`` by default).
    with_2015 : bool, default True
        Train only: add the reformatted SemEval-2015 dev threads.

    The 2015 threads that duplicate a 2016 test question are found by comparing normalised
    question bodies with the 2016 test file (when it is there) and must be exactly the two of
    ``DUPLICATES_OF_2016_TEST``; without the test file those two are dropped by id.
    """
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; known: {', '.join(SPLITS)}")

    root = Path(data_dir) if data_dir is not None else paths.data_dir(required=True)
    if split == "dev":
        return read_semeval(semeval_file(DEV_FILE, root))
    if split == "test":
        return read_semeval(semeval_file(TEST_FILE, root))
    threads = []
    found = [semeval_file(name, root, required=False) for name in TRAIN_2016_FILES]
    if found[-1] is None:
        raise FileNotFoundError(f"{root / FOLDER / TRAIN_2016_FILES[-1]}(.gz) does not exist")
    for path in found:
        if path is not None:
            threads.extend(read_semeval(path))
    if with_2015:
        extra_path = semeval_file(TRAIN_2015_FILE, root)
        extra = read_semeval(extra_path)
        test_path = semeval_file(TEST_FILE, root, required=False)
        if test_path is not None:
            duplicates = duplicate_threads(extra, read_semeval(test_path))
            if duplicates != DUPLICATES_OF_2016_TEST:
                raise DataValidationError(
                    f"{extra_path}: threads duplicating 2016 test questions are {duplicates}, expected "
                    f"{DUPLICATES_OF_2016_TEST} (QA_NLP_PROVENANCE.md, 5a); is this the cleansed "
                    "excluding-2016-questions dev file?")
        drop = set(DUPLICATES_OF_2016_TEST)
        threads.extend(t for t in extra if t.thread_id not in drop)
    return threads


# -- pairs and features ---------------------------------------------------------------------------


@dataclass
class SemEvalPairs(QAData):
    """Question-comment pairs of SemEval threads: a ``QAData`` plus the task's fields.

    ``qid`` is the thread's index in the list given to ``to_pairs`` (``"0"``, ``"1"``, ...),
    unique even when files of 2015 and 2016 are mixed; ``docids`` are the comment ids;
    ``labels`` are 1 for Good, 0 for PotentiallyUseful and Bad; ``position`` is rank - 1.

    Extra attributes
    ----------------
    features : ndarray of float64, shape (n_candidates, len(FEATURE_NAMES))
        Task features, columns ``feature_names`` (documented in ``FEATURE_DOCS``).
    feature_names : tuple of str
    question_ids : ndarray of str
        RELQ_ID of each pair (the first column of the scorer's files).
    fine_labels : ndarray of str
        Good / PotentiallyUseful / Bad.
    """

    features: np.ndarray | None = None
    feature_names: tuple = FEATURE_NAMES
    question_ids: np.ndarray | None = None
    fine_labels: np.ndarray | None = None

    def __post_init__(self):
        super().__post_init__()
        n = self.n_candidates
        self.features = np.zeros((n, 0)) if self.features is None else np.asarray(self.features, dtype=np.float64)
        self.question_ids = np.asarray(self.question_ids if self.question_ids is not None else self.qid, dtype=str)
        self.fine_labels = np.asarray(self.fine_labels if self.fine_labels is not None else [""] * n, dtype=str)
        self.feature_names = tuple(self.feature_names)
        for name, array in (("features", self.features), ("question_ids", self.question_ids),
                            ("fine_labels", self.fine_labels)):
            if array.shape[0] != n:
                raise DataValidationError(f"{name} must have one entry per candidate ({n}), got {array.shape[0]}")
        if self.features.shape[1] and self.features.shape[1] != len(self.feature_names):
            raise DataValidationError(f"{self.features.shape[1]} feature columns for {len(self.feature_names)} names")

    def feature(self, name: str) -> np.ndarray:
        """One column of ``features`` by name."""
        return self.features[:, self.feature_names.index(name)]

    def take_rows(self, rows) -> "SemEvalPairs":
        base = QAData.take_rows(self, rows)
        rows = np.asarray(rows, dtype=np.int64)
        return SemEvalPairs(base.questions, base.candidates, base.labels, base.qid, base.docids, base.position,
                            base.source, features=self.features[rows], feature_names=self.feature_names,
                            question_ids=self.question_ids[rows], fine_labels=self.fine_labels[rows])


def comment_features(thread: Thread) -> np.ndarray:
    """The ``FEATURE_NAMES`` columns of every comment of ``thread``, shape (n_comments, n_features)."""
    users = [c.user_id for c in thread.comments]
    per_user = {u: users.count(u) for u in set(users)}
    asker = per_user.get(thread.user_id, 0)
    # deferred: the features module loads scikit-learn, which reading a pairs file (structrank evaluate) never needs
    from structrank.qa.features import tokenize

    question_tokens = len(tokenize(thread.question_text))
    n = len(thread.comments)
    rows = []
    for c in thread.comments:
        rows.append((
            c.rank,
            1.0 / c.rank,
            float(thread.by_asker(c)),
            len(tokenize(c.text)),
            question_tokens,
            float(bool(_URL.search(c.text))),
            float("?" in c.text),
            float("@" in c.text),
            per_user[c.user_id],
            asker,
            n,
        ))
    return np.array(rows, dtype=np.float64).reshape(n, len(FEATURE_NAMES))


def to_pairs(threads, source: str | None = None) -> SemEvalPairs:
    """Question-comment pairs of ``threads`` with binary labels (Good = 1) and task features.

    Threads without comments give no pairs (and no question). See ``SemEvalPairs`` and
    ``FEATURE_DOCS``.
    """
    questions, candidates, labels, qid, docids, position = [], [], [], [], [], []
    features, question_ids, fine = [], [], []
    for index, thread in enumerate(threads):
        if not thread.comments:
            continue
        questions.append(thread.question_text)
        features.append(comment_features(thread))
        for c in thread.comments:
            candidates.append(c.text)
            labels.append(int(c.relevant))
            qid.append(str(index))
            docids.append(c.comment_id)
            position.append(c.rank - 1)
            question_ids.append(thread.question_id)
            fine.append(c.label or "")
    if not candidates:
        raise DataValidationError("no comments in the threads given")
    if source is None:
        sources = list(dict.fromkeys(t.source for t in threads if t.source))
        source = " + ".join(sources) or None
    return SemEvalPairs(questions, candidates, np.array(labels, dtype=np.int64), np.array(qid, dtype=str), docids,
                        np.array(position, dtype=np.int64), source, features=np.vstack(features),
                        feature_names=FEATURE_NAMES, question_ids=np.array(question_ids, dtype=str),
                        fine_labels=np.array(fine, dtype=str))


# -- the scorer's files ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ScoreRow:
    """A line of a scorer file: ``question_id comment_id rank score label`` (label True = "true")."""

    question_id: str
    comment_id: str
    rank: int
    score: float
    label: bool


def _rows_of(threads_or_pairs):
    """(question id, comment id) of every comment, in order."""
    if isinstance(threads_or_pairs, QAData):
        question_ids = getattr(threads_or_pairs, "question_ids", None)
        if question_ids is None:
            question_ids = threads_or_pairs.qid
        return list(zip((str(q) for q in question_ids), threads_or_pairs.docids))
    return [(t.question_id, c.comment_id) for t in threads_or_pairs for c in t.comments]


def write_semeval_scores(path, threads_or_pairs, scores, labels=None, threshold: float = 0.0) -> None:
    """Write a prediction file for the official SemEval-2016 Task 3 scorer, atomically.

    One line per comment, tab-separated: ``RELQ_ID  RELC_ID  0  score  true|false``
    (README-submissions-and-scores.txt, section 4: the rank column is not used and is 0 in the
    examples; higher scores rank first). Lines follow the order of the threads and comments,
    i.e. the XML order the scorer expects.

    Parameters
    ----------
    path : path
    threads_or_pairs : list of Thread, or SemEvalPairs / QAData
        Gives the question and comment ids, in the order of ``scores``.
    scores : array of float, one per comment
    labels : array of bool, optional
        Predicted Good (true) / not Good (false); default ``scores > threshold``.
    threshold : float, default 0.0
    """
    ids = _rows_of(threads_or_pairs)
    scores = np.asarray(scores, dtype=np.float64).reshape(-1)
    if scores.shape[0] != len(ids):
        raise DataValidationError(f"{scores.shape[0]} scores for {len(ids)} comments")
    if not np.all(np.isfinite(scores)):
        bad = int(np.flatnonzero(~np.isfinite(scores))[0])
        raise DataValidationError(f"score {scores[bad]} of comment {ids[bad][1]!r} is not finite")
    predicted = scores > threshold if labels is None else np.asarray(labels, dtype=bool).reshape(-1)
    if predicted.shape[0] != len(ids):
        raise DataValidationError(f"{predicted.shape[0]} labels for {len(ids)} comments")
    with atomic_open(path, "w") as fh:
        for (question_id, comment_id), score, label in zip(ids, scores, predicted):
            fh.write(f"{question_id}\t{comment_id}\t0\t{float(score)!r}\t{'true' if label else 'false'}\n")


def semeval_gold(path, data_root=None) -> list:
    """Read a ``.relevancy`` gold file (or a prediction file) into a list of ``ScoreRow``.

    ``path`` may also be "dev" or "test" for the gold file of that split in the data folder.
    Columns are separated by tabs or spaces; labels must be ``true`` or ``false``. Raises
    DataFormatError naming the file, the line and the field.
    """
    if str(path) in GOLD_FILES:
        path = semeval_file(GOLD_FILES[str(path)], data_root)
    raw = read_bytes(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataFormatError(path, raw[: exc.start].count(b"\n") + 1, "not UTF-8 text") from None
    rows, seen = [], {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) != 5:
            raise DataFormatError(path, number, f"expected 5 columns (question_id comment_id rank score label), "
                                                f"found {len(fields)}")
        question_id, comment_id, rank, score, label = fields
        try:
            rank = int(rank)
        except ValueError:
            raise DataFormatError(path, number, f"rank {rank!r} is not an integer", "rank") from None
        score = parse_score(path, number, score)
        if label not in ("true", "false"):
            raise DataFormatError(path, number, f"label {label!r} is not 'true' or 'false'", "label")
        key = (question_id, comment_id)
        if key in seen:
            raise DataFormatError(path, number, f"{question_id} {comment_id} already at line {seen[key]}", "comment_id")
        seen[key] = number
        rows.append(ScoreRow(question_id, comment_id, rank, score, label == "true"))
    if not rows:
        raise DataFormatError(path, None, "holds no lines")
    return rows
