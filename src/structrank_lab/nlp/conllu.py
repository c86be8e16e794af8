"""CoNLL-U treebanks: a hand-written reader, the choice of tag column, and the four UD treebanks used.

The POS-tagging experiments of Jagarlamudi & Daumé (2012, Sec. 4) tag words with a treebank's
fine-grained tags. They used the CoNLL 2006 data; we use Universal Dependencies treebanks of the
same four languages (the data folder's ``ud/``, see its README and QA_NLP_PROVENANCE.md):

========  ==========================  ======================  =========================================
language  folder                      tag column (checked)    why
========  ==========================  ======================  =========================================
``en``    UD_English-EWT              XPOS (49 PTB tags)      every token has an XPOS
``zh``    UD_Chinese-GSD-r1.4         XPOS (42 CTB-style)     every token has an XPOS
``fr``    UD_French-Sequoia           UPOS (16 tags)          XPOS is ``_`` throughout
``sv``    UD_Swedish-LinES-r2.4       UPOS (17 tags)          a quarter of the tokens lack XPOS (and
                                                              LinES XPOS is morphology, not POS)
========  ==========================  ======================  =========================================

The rule is :func:`tag_set`'s ``auto``: XPOS when every token of the treebank has one, else UPOS;
the table is what it gives on each of these treebanks (train, dev and test agree), recorded in
``UD_TAG_KIND`` so that dev and test are tagged with the training split's column without reading
it again.

The reader keeps only what tagging needs: the syntactic words (integer IDs) with their form, UPOS
and XPOS, and the sentence id. Multiword-token ranges (``3-4``) and empty nodes (``5.1``) are
skipped: the words of a range are listed after it with their own tags, and empty nodes are not
in the surface string. Files may be plain or gzip, UTF-8 with or without a byte-order mark, with
LF or CRLF line ends. Anything malformed raises DataFormatError naming the file, the line and
the field.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from structrank.data.letor import check_not_utf16, read_bytes
from structrank.errors import DataFormatError
from structrank.paths import data_dir as _default_data_dir

#: language code -> treebank folder under ``<data>/ud``
UD_TREEBANKS = {
    "en": "UD_English-EWT",
    "zh": "UD_Chinese-GSD-r1.4",
    "fr": "UD_French-Sequoia",
    "sv": "UD_Swedish-LinES-r2.4",
}
#: the tag column ``tag_set(..., "auto")`` picks on each treebank (see the module docstring)
UD_TAG_KIND = {"en": "xpos", "zh": "xpos", "fr": "upos", "sv": "upos"}
SPLITS = ("train", "dev", "test")
TAG_KINDS = ("auto", "xpos", "upos")

_N_FIELDS = 10
_INTEGER_ID = re.compile(r"[1-9][0-9]*\Z")
_RANGE_ID = re.compile(r"[1-9][0-9]*-[1-9][0-9]*\Z")
_EMPTY_NODE_ID = re.compile(r"[0-9]+\.[1-9][0-9]*\Z")
_SENT_ID = re.compile(r"#\s*sent_id\s*=\s*(.*?)\s*\Z")


@dataclass
class Sentence:
    """One sentence's syntactic words and their tags (``"_"`` where a column is unspecified).

    Examples
    --------
    >>> import os, tempfile
    >>> from structrank_lab.nlp import read_conllu
    >>> tmp = tempfile.TemporaryDirectory()
    >>> path = os.path.join(tmp.name, "tiny.conllu")
    >>> rows = ["1\\tThe\\tthe\\tDET\\tDT\\t_\\t2\\tdet\\t_\\t_", "2\\tdog\\tdog\\tNOUN\\tNN\\t_\\t3\\tnsubj\\t_\\t_",
    ...         "3\\tbarks\\tbark\\tVERB\\tVBZ\\t_\\t0\\troot\\t_\\t_"]
    >>> with open(path, "w") as f:
    ...     _ = f.write("# sent_id = 1\\n" + "\\n".join(rows) + "\\n\\n")
    >>> sentence, = read_conllu(path)
    >>> sentence
    Sentence(words=['The', 'dog', 'barks'], upos=['DET', 'NOUN', 'VERB'], xpos=['DT', 'NN', 'VBZ'], sent_id='1')
    >>> len(sentence)
    3
    >>> tmp.cleanup()
    """

    words: list = field(default_factory=list)
    upos: list = field(default_factory=list)
    xpos: list = field(default_factory=list)
    sent_id: str | None = None

    def __len__(self):
        return len(self.words)


def _decode(path, raw: bytes) -> str:
    """UTF-8 text of the file; a bad byte is reported with its line, UTF-16 by name."""
    check_not_utf16(path, raw)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise DataFormatError(path, line, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _word_fields(path, number, line):
    """(kind, fields) of a token line: kind is "word", or "skip" for a range or an empty node."""
    fields = line.split("\t")
    if len(fields) != _N_FIELDS:
        raise DataFormatError(path, number, f"{len(fields)} tab-separated fields, CoNLL-U has {_N_FIELDS}",
                              "columns")
    token_id = fields[0]
    if _RANGE_ID.match(token_id) or _EMPTY_NODE_ID.match(token_id):
        return "skip", fields
    if not _INTEGER_ID.match(token_id):
        raise DataFormatError(path, number,
                              f"ID {token_id!r} is not a word index, a range (3-4) or an empty node (5.1)", "ID")
    for position, name in ((1, "FORM"), (3, "UPOS"), (4, "XPOS")):
        if fields[position] == "":
            raise DataFormatError(path, number, f"empty {name} (an unspecified value is written _)", name)
    return "word", fields


def parse_conllu(text: str, path=None) -> list:
    """The sentences of CoNLL-U ``text``; ``path`` only names the source in errors."""
    sentences = []
    current = Sentence()
    # Split on LF only: str.splitlines would also split on U+2028 or U+0085 inside a FORM.
    for number, line in enumerate(text.split("\n"), start=1):
        if line.endswith("\r"):
            line = line[:-1]
        if not line.strip():
            if current.words:  # a block of comments alone (no word line) is not a sentence
                sentences.append(current)
            current = Sentence()
            continue
        if line.startswith("#"):
            if not current.words:  # comments belong before the first token line
                match = _SENT_ID.match(line)
                if match:
                    current.sent_id = match.group(1)
            continue
        kind, fields = _word_fields(path, number, line)
        if kind == "skip":
            continue
        expected = len(current.words) + 1
        if int(fields[0]) != expected:
            raise DataFormatError(path, number, f"word ID {fields[0]} where {expected} was expected "
                                  "(IDs run 1, 2, 3 ... within a sentence)", "ID")
        current.words.append(fields[1])
        current.upos.append(fields[3])
        current.xpos.append(fields[4])
    if current.words:  # the last sentence may lack its closing blank line
        sentences.append(current)
    return sentences


def read_conllu(path) -> list:
    """The sentences of a CoNLL-U file (plain or gzip; UTF-8, BOM and CRLF allowed).

    Returns a list of :class:`Sentence`. Raises DataFormatError for a missing or malformed file,
    and for one without any word line (empty, or comments only): a treebank split that holds no
    sentence is a failed download or a wrong path, and would otherwise train on nothing.
    """
    sentences = parse_conllu(_decode(path, read_bytes(path)), path)
    if not sentences:
        raise DataFormatError(path, None, "holds no sentences (empty file, or comments only)")
    return sentences


def tag_set(sentences, kind="auto"):
    """(tag sequences, kind used) of ``sentences``: their XPOS or UPOS column.

    ``auto`` takes XPOS when every token has one (not ``_``), else UPOS. Asking for ``xpos``
    where some token has none is an error rather than a tag named ``_``.
    """
    if kind not in TAG_KINDS:
        raise ValueError(f"kind must be one of {', '.join(TAG_KINDS)}, got {kind!r}")
    has_xpos = all(tag != "_" for sentence in sentences for tag in sentence.xpos)
    if kind == "auto":
        kind = "xpos" if has_xpos else "upos"
    if kind == "xpos" and not has_xpos:
        raise ValueError("some tokens have no XPOS (_); use kind='upos' or 'auto'")
    return [list(getattr(sentence, kind)) for sentence in sentences], kind


def treebank_file(lang, split, data_dir=None) -> Path:
    """The CoNLL-U file of a split of the treebank of ``lang`` (``*-ud-{split}.conllu[.gz]``)."""
    if lang not in UD_TREEBANKS:
        raise ValueError(f"lang must be one of {', '.join(UD_TREEBANKS)}, got {lang!r}")
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}, got {split!r}")
    root = Path(data_dir) if data_dir is not None else _default_data_dir(required=True)
    folder = root / "ud" / UD_TREEBANKS[lang]
    found = sorted(folder.glob(f"*-ud-{split}.conllu")) + sorted(folder.glob(f"*-ud-{split}.conllu.gz"))
    if len(found) != 1:
        what = "no file" if not found else f"{len(found)} files ({', '.join(p.name for p in found)})"
        raise FileNotFoundError(f"{folder}: {what} matching *-ud-{split}.conllu[.gz]")
    return found[0]


def load_treebank(lang, split, data_dir=None) -> list:
    """The sentences of one split (train, dev, test) of the UD treebank of ``lang`` (en, zh, fr, sv)."""
    return read_conllu(treebank_file(lang, split, data_dir))


def load_tagged(lang, split, kind=None, data_dir=None):
    """(word sequences, tag sequences, kind) of a split, tagged with the language's column.

    ``kind`` defaults to ``UD_TAG_KIND[lang]``, the column ``auto`` picks on that treebank, so
    that every split of a language uses the same tags.
    """
    sentences = load_treebank(lang, split, data_dir)
    tags, kind = tag_set(sentences, kind or UD_TAG_KIND[lang])
    return [list(sentence.words) for sentence in sentences], tags, kind


__all__ = [
    "SPLITS",
    "UD_TAG_KIND",
    "UD_TREEBANKS",
    "Sentence",
    "load_tagged",
    "load_treebank",
    "parse_conllu",
    "read_conllu",
    "tag_set",
    "treebank_file",
]
