"""The CoNLL-U reader and treebank loading of structrank_lab.nlp.conllu.

- words come from integer IDs only: multiword-token ranges and empty nodes are skipped; sent_id
  is read from the comments; the last sentence needs no closing blank line;
- plain, gzip, BOM and CRLF files read the same;
- malformed lines raise DataFormatError with the file, the line number and the field;
- tag_set picks XPOS only when every token has one;
- on the real data (data tests): the four UD treebanks have the sentence and word counts of the
  data folder's provenance file, and ``auto`` picks the tag column recorded in UD_TAG_KIND.
"""

from __future__ import annotations

import gzip

import pytest

from structrank.errors import DataFormatError
from structrank_lab.nlp.conllu import (
    SPLITS,
    UD_TAG_KIND,
    UD_TREEBANKS,
    Sentence,
    load_tagged,
    load_treebank,
    read_conllu,
    tag_set,
    treebank_file,
)

SAMPLE = (
    "# newdoc id = d1\n"
    "# sent_id = s1\n"
    "# text = Vámonos al mar.\n"
    "1-2\tVámonos\t_\t_\t_\t_\t_\t_\t_\t_\n"
    "1\tVamos\tir\tVERB\tV\t_\t0\troot\t_\t_\n"
    "2\tnos\tnosotros\tPRON\tP\t_\t1\tobj\t_\t_\n"
    "3-4\tal\t_\t_\t_\t_\t_\t_\t_\t_\n"
    "3\ta\ta\tADP\tS\t_\t5\tcase\t_\t_\n"
    "4\tel\tel\tDET\tD\t_\t5\tdet\t_\t_\n"
    "4.1\tvamos\t_\t_\t_\t_\t_\t_\t1:x\t_\n"
    "5\tmar\tmar\tNOUN\tN\t_\t1\tobl\t_\t_\n"
    "6\t.\t.\tPUNCT\t_\t_\t1\tpunct\t_\t_\n"
    "\n"
    "# sent_id = s2\n"
    "1\tSí\tsí\tINTJ\tI\t_\t0\troot\t_\tSpaceAfter=No\n"
)
EXPECTED = [
    Sentence(["Vamos", "nos", "a", "el", "mar", "."], ["VERB", "PRON", "ADP", "DET", "NOUN", "PUNCT"],
             ["V", "P", "S", "D", "N", "_"], "s1"),
    Sentence(["Sí"], ["INTJ"], ["I"], "s2"),
]


def test_reads_words_and_skips_ranges_and_empty_nodes(tmp_path):
    path = tmp_path / "x-ud-train.conllu"
    path.write_text(SAMPLE, encoding="utf-8")
    assert read_conllu(path) == EXPECTED


@pytest.mark.parametrize("encoding", ["plain", "bom", "crlf", "gzip", "gzip-bom-crlf"])
def test_encodings(tmp_path, encoding):
    text = SAMPLE.replace("\n", "\r\n") if "crlf" in encoding else SAMPLE
    raw = text.encode("utf-8")
    if "bom" in encoding:
        raw = b"\xef\xbb\xbf" + raw
    if "gzip" in encoding:
        raw = gzip.compress(raw)
    path = tmp_path / ("x.conllu.gz" if "gzip" in encoding else "x.conllu")
    path.write_bytes(raw)
    assert read_conllu(path) == EXPECTED


def test_form_may_hold_unicode_line_separators(tmp_path):
    path = tmp_path / "x.conllu"
    path.write_text("1\ta\u2028b\t_\tX\t_\t_\t0\troot\t_\t_\n", encoding="utf-8")
    assert read_conllu(path)[0].words == ["a\u2028b"]


def test_blank_lines_and_comment_only_blocks(tmp_path):
    path = tmp_path / "x.conllu"
    path.write_text("\n\n# global.columns = ID FORM\n\n" + SAMPLE + "\n\n\n", encoding="utf-8")
    assert read_conllu(path) == EXPECTED


@pytest.mark.parametrize("line, field, message", [
    ("3\tmar\tmar\tNOUN\tN\t_\t1\tobl\t_", "columns", "9 tab-separated fields"),
    ("3\tmar\tmar\tNOUN\tN\t_\t1\tobl\t_\t_\t_", "columns", "11 tab-separated fields"),
    ("3 mar mar NOUN N _ 1 obl _ _", "columns", "1 tab-separated"),
    ("x\tmar\tmar\tNOUN\tN\t_\t1\tobl\t_\t_", "ID", "'x' is not a word index"),
    ("0\tmar\tmar\tNOUN\tN\t_\t1\tobl\t_\t_", "ID", "not a word index"),
    ("3\t\tmar\tNOUN\tN\t_\t1\tobl\t_\t_", "FORM", "empty FORM"),
    ("3\tmar\tmar\t\tN\t_\t1\tobl\t_\t_", "UPOS", "empty UPOS"),
    ("5\tmar\tmar\tNOUN\tN\t_\t1\tobl\t_\t_", "ID", "where 3 was expected"),
])
def test_malformed_lines_name_file_line_and_field(tmp_path, line, field, message):
    path = tmp_path / "bad.conllu.gz"
    text = ("# sent_id = a\n1\tIl\til\tPRON\tP\t_\t2\tnsubj\t_\t_\r\n"
            "2\tva\taller\tVERB\tV\t_\t0\troot\t_\t_\n" + line + "\n\n")
    path.write_bytes(gzip.compress(text.encode("utf-8")))
    with pytest.raises(DataFormatError, match=message) as info:
        read_conllu(path)
    error = info.value
    assert (error.path, error.line, error.field) == (str(path), 4, field)
    assert str(path) in str(error) and "line 4" in str(error)


def test_missing_file_and_bad_utf8(tmp_path):
    with pytest.raises(DataFormatError, match="not found"):
        read_conllu(tmp_path / "nothing.conllu")
    path = tmp_path / "latin1.conllu"
    text = "1\tIl\til\tPRON\tP\t_\t0\troot\t_\t_\n\n1\tmarché\t_\tN\t_\t_\t0\troot\t_\t_\n"
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises(DataFormatError, match="not UTF-8") as info:
        read_conllu(path)
    assert info.value.line == 3


def test_tag_set():
    full = [Sentence(["a", "b"], ["DET", "NOUN"], ["DT", "NN"])]
    partial = full + [Sentence(["c"], ["VERB"], ["_"])]
    assert tag_set(full) == ([["DT", "NN"]], "xpos")
    assert tag_set(partial) == ([["DET", "NOUN"], ["VERB"]], "upos")
    assert tag_set(full, "upos") == ([["DET", "NOUN"]], "upos")
    with pytest.raises(ValueError, match="no XPOS"):
        tag_set(partial, "xpos")
    with pytest.raises(ValueError, match="kind"):
        tag_set(full, "feats")


def test_treebank_file_lookup(tmp_path):
    folder = tmp_path / "ud" / UD_TREEBANKS["fr"]
    folder.mkdir(parents=True)
    (folder / "fr_x-ud-train.conllu.gz").write_bytes(gzip.compress(SAMPLE.encode("utf-8")))
    (folder / "fr_x-ud-dev.conllu").write_text(SAMPLE, encoding="utf-8")
    assert load_treebank("fr", "train", data_dir=tmp_path) == EXPECTED
    words, tags, kind = load_tagged("fr", "dev", data_dir=tmp_path)
    assert kind == "upos" and tags[1] == ["INTJ"] and words[0][0] == "Vamos"
    with pytest.raises(FileNotFoundError, match="test"):
        treebank_file("fr", "test", data_dir=tmp_path)
    with pytest.raises(ValueError, match="lang"):
        treebank_file("de", "train", data_dir=tmp_path)
    with pytest.raises(ValueError, match="split"):
        treebank_file("fr", "validation", data_dir=tmp_path)


#: sentences and syntactic words per split, from the data folder's QA_NLP_PROVENANCE.md
UD_COUNTS = {
    "en": {"train": (12544, 204577), "dev": (2001, 25147), "test": (2077, 25094)},
    "zh": {"train": (3997, 98608), "dev": (500, 12663), "test": (500, 12012)},
    "fr": {"train": (2231, 50502), "dev": (412, 9999), "test": (456, 10044)},
    "sv": {"train": (2738, 48320), "dev": (912, 16462), "test": (914, 15029)},
}


@pytest.mark.data
@pytest.mark.parametrize("lang", sorted(UD_TREEBANKS))
def test_ud_treebanks(data_root, lang):
    for split in SPLITS:
        sentences = load_treebank(lang, split, data_dir=data_root)
        assert (len(sentences), sum(map(len, sentences))) == UD_COUNTS[lang][split]
        assert tag_set(sentences)[1] == UD_TAG_KIND[lang]
        # UD 1.4 (the Chinese treebank) had no sent_id comments
        assert all(s.sent_id for s in sentences) == (lang != "zh")
