"""QA readers: WikiQA TSV, TREC jacana pseudo-XML, TRAIN-ALL POSInput, user TSV; the paper's filtering."""

import gzip

import numpy as np
import pytest

from structrank.errors import DataFormatError, DataValidationError
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

WIKIQA_HEADER = "QuestionID\tQuestion\tDocumentID\tDocumentTitle\tSentenceID\tSentence\tLabel\n"
WIKIQA_ROWS = (
    "Q1\thow are glacier caves formed?\tD1\tGlacier cave\tD1-0\tA partly submerged glacier cave.\t0\n"
    "Q1\thow are glacier caves formed?\tD1\tGlacier cave\tD1-1\tA glacier cave is formed by melting ice.\t1\n"
    "Q2\twho wrote hamlet?\tD2\tHamlet\tD2-0\tHamlet is a tragedy by Shakespeare.\t1\n"
)


def write(path, text, gz=False):
    if gz:
        path.write_bytes(gzip.compress(text.encode("utf-8")))
    else:
        path.write_text(text, encoding="utf-8")
    return path


def error_of(reader, path):
    with pytest.raises(DataFormatError) as info:
        reader(path)
    return info.value


# -- WikiQA and user TSV --------------------------------------------------------------------------


@pytest.mark.parametrize("gz", [False, True])
def test_wikiqa_tsv_plain_and_gzip(tmp_path, gz):
    path = write(tmp_path / ("w.tsv.gz" if gz else "w.tsv"), WIKIQA_HEADER + WIKIQA_ROWS, gz)
    for reader in (read_wikiqa, read_qa_tsv):  # the user-TSV reader recognises the header
        d = reader(path)
        assert d.questions == ["how are glacier caves formed?", "who wrote hamlet?"]
        assert d.labels.tolist() == [0, 1, 1]
        assert d.qid.tolist() == ["Q1", "Q1", "Q2"]
        assert d.docids == ["D1-0", "D1-1", "D2-0"]
        assert d.position.tolist() == [0, 1, 0]
        assert d.offsets.tolist() == [0, 2, 3]


def test_wikiqa_titles_are_kept_and_joined_only_when_asked(tmp_path):
    """WikiQA's DocumentTitle is each candidate's title; it follows the candidates through a selection, and
    ``titled_candidates`` puts it before each; a file without titles says so, naming itself."""
    d = read_wikiqa(write(tmp_path / "w.tsv", WIKIQA_HEADER + WIKIQA_ROWS))
    assert d.titles == ["Glacier cave", "Glacier cave", "Hamlet"]
    assert d.candidates[2] == "Hamlet is a tragedy by Shakespeare."  # the text itself is untouched
    assert d.titled_candidates()[2] == "Hamlet. Hamlet is a tragedy by Shakespeare."
    assert d.take_rows([1, 2]).titles == ["Glacier cave", "Hamlet"]
    assert keep_questions_with_both(d).titles == ["Glacier cave", "Glacier cave"]
    untitled = read_wikiqa(write(tmp_path / "e.tsv", WIKIQA_HEADER + WIKIQA_ROWS.replace("\tHamlet\t", "\t\t")))
    assert untitled.titled_candidates()[2] == "Hamlet is a tragedy by Shakespeare."  # an empty title adds nothing
    plain = read_qa_tsv(write(tmp_path / "u.tsv", "who?\tAnn.\t1\nwho?\tBob.\t0\n"))
    assert plain.titles is None
    with pytest.raises(DataValidationError, match=r"u\.tsv gives no document titles"):
        plain.titled_candidates()
    with pytest.raises(DataValidationError, match="titles must have one entry per candidate"):
        QAData(["who?"], ["Ann.", "Bob."], np.array([1, 0]), np.array(["q", "q"]), ["a", "b"], titles=["T"])


def test_wikiqa_header_is_required_and_complete(tmp_path):
    e = error_of(read_wikiqa, write(tmp_path / "a.tsv", WIKIQA_ROWS))
    assert e.line == 1 and "header" in e.problem
    header = WIKIQA_HEADER.replace("\tLabel", "\tRelevance")
    e = error_of(read_qa_tsv, write(tmp_path / "b.tsv", header + WIKIQA_ROWS))
    assert e.line == 1 and e.field == "Label" and "'Label'" in e.problem and str(tmp_path / "b.tsv") in str(e)


def test_wikiqa_wrong_column_count_and_label(tmp_path):
    bad = WIKIQA_ROWS.replace("D1-1\tA glacier", "D1-1 A glacier")
    e = error_of(read_wikiqa, write(tmp_path / "a.tsv", WIKIQA_HEADER + bad))
    assert e.line == 3 and "expected 7" in e.problem and "found 6" in e.problem
    bad = WIKIQA_ROWS.replace("melting ice.\t1", "melting ice.\tyes")
    e = error_of(read_wikiqa, write(tmp_path / "b.tsv", WIKIQA_HEADER + bad))
    assert (e.line, e.field) == (3, "label") and "'yes'" in e.problem


def test_user_tsv_three_columns_groups_consecutive_rows(tmp_path):
    text = "who?\tAnn.\t1\nwho?\tBob.\t0\n\nwhen?\tIn 1901.\t1\nwho?\tCarl.\t0\n"
    d = read_qa_tsv(write(tmp_path / "u.tsv", text))
    # a question that comes back after another one starts a new query
    assert d.questions == ["who?", "when?", "who?"]
    assert d.qid.tolist() == ["q1", "q1", "q2", "q3"]
    assert d.docids == ["q1-0", "q1-1", "q2-0", "q3-0"]
    assert d.labels.tolist() == [1, 0, 1, 0]
    assert d.position.tolist() == [-1] * 4


def test_user_tsv_four_columns_with_question_ids(tmp_path):
    text = "A\twho?\tAnn.\t2\nA\twho?\tBob.\t0\nB\twhen?\tIn 1901.\t1\n"
    d = read_qa_tsv(write(tmp_path / "u.tsv", text))
    assert d.questions == ["who?", "when?"] and d.qid.tolist() == ["A", "A", "B"] and d.labels.tolist() == [2, 0, 1]
    with pytest.warns(UserWarning, match="not contiguous"):
        d = read_qa_tsv(write(tmp_path / "v.tsv", text + "A\twho?\tCarl.\t0\n"))
    assert d.qid.tolist() == ["A", "A", "A", "B"] and d.candidates[2] == "Carl."
    e = error_of(read_qa_tsv, write(tmp_path / "w.tsv", text + "A\twhy?\tCarl.\t0\n"))
    assert (e.line, e.field) == (4, "question") and "'A'" in e.problem


def test_user_tsv_header_row_named_label_is_skipped(tmp_path):
    rows = "A\twho?\tAnn.\t2\nA\twho?\tBob.\t0\n"
    d = read_qa_tsv(write(tmp_path / "h.tsv", "\nqid\tquery\tdoc\tLABEL\n" + rows))
    assert d.qid.tolist() == ["A", "A"] and d.labels.tolist() == [2, 0]
    e = error_of(read_qa_tsv, write(tmp_path / "g.tsv", "qid\tquery\tdoc\trel\n" + rows))
    assert (e.line, e.field) == (1, "label") and "named 'label'" in e.problem
    # only the first row may be a header: a row named so further down is bad data, without the hint
    e = error_of(read_qa_tsv, write(tmp_path / "k.tsv", rows + "qid\tquery\tdoc\tlabel\n"))
    assert e.line == 3 and "'label'" in e.problem and "header" not in e.problem


@pytest.mark.parametrize("text, line, words", [
    ("who?\tAnn.\n", 1, "found 2"),
    ("who?\tAnn.\t1\nwho?\tBob\t0\tx\n", 2, "expected 3"),
    ("who?\tAnn.\t1\nwho?\tBob.\t0.5\n", 2, "'0.5' is not a non-negative integer"),
    ("who?\tAnn.\t-1\n", 1, "'-1' is not a non-negative integer"),
    ("who?\t \t1\n", 1, "empty candidate"),
])
def test_user_tsv_errors_name_the_line(tmp_path, text, line, words):
    path = write(tmp_path / "bad.tsv", text)
    e = error_of(read_qa_tsv, path)
    assert e.line == line and words in e.problem and str(path) in str(e)


def test_empty_and_non_utf8_files(tmp_path):
    assert "empty" in error_of(read_qa_tsv, write(tmp_path / "e.tsv", "\n\n")).problem
    path = tmp_path / "latin1.tsv"
    path.write_bytes("who?\tAnn.\t1\nwho?\tJos\xe9.\t0\n".encode("latin-1"))
    e = error_of(read_qa_tsv, path)
    assert e.line == 2 and "UTF-8" in e.problem
    assert "not found" in error_of(read_qa_tsv, tmp_path / "missing.tsv").problem


# -- TREC jacana pseudo-XML -----------------------------------------------------------------------


def block(tag, tokens, extra=(), keep=5):
    n = len(tokens)
    lines = ["\t".join(tokens), "\t".join(["NN"] * n), "\t".join(["DEP"] * n), "\t".join(["0"] * n),
             "\t".join(["-"] * n)][:keep] + list(extra)
    return f"<{tag}>\n" + "\n".join(lines) + f"\n</{tag}>\n"


JACANA = (
    "<QApairs id='1.1'>\n" + block("question", ["Who", "wrote", "it", "?"])
    + block("positive", ["Ann", "&", "Bob", "wrote", "it", "."], extra=["Ann", "1"])
    + block("negative", ["It", "is", "<b>", "."])
    + "</QApairs>\n"
    + "<QApairs id='1.2'>\n" + block("question", ["Why", "?"]) + "</QApairs>\n"  # no candidates: left out
    + "<QApairs id='2.1'>\n" + block("question", ["When", "?"]) + block("negative", ["Now", "."]) + "</QApairs>\n"
)


@pytest.mark.parametrize("gz", [False, True])
def test_jacana_reads_blocks_line_by_line(tmp_path, gz):
    d = read_jacana(write(tmp_path / ("j.xml.gz" if gz else "j.xml"), JACANA, gz))
    assert d.questions == ["Who wrote it ?", "When ?"]
    assert d.candidates == ["Ann & Bob wrote it .", "It is <b> .", "Now ."]  # not XML: & and <b> are text
    assert d.labels.tolist() == [1, 0, 0]
    assert d.qid.tolist() == ["1.1", "1.1", "2.1"]
    assert d.docids == ["1.1-0", "1.1-1", "2.1-0"]


def test_jacana_truncated_blocks(tmp_path):
    negative = block("negative", ["It", "is", "<b>", "."])
    cut = JACANA.replace(negative, block("negative", ["It", "is", "<b>", "."], keep=4), 1)
    e = error_of(read_jacana, write(tmp_path / "a.xml", cut))
    assert "truncated block" in e.problem and "<negative>" in e.problem and "4 lines" in e.problem
    start = JACANA.splitlines().index("<negative>") + 1
    assert f"line {start}" in e.problem
    unclosed = JACANA.replace("</positive>\n", "", 1)
    e = error_of(read_jacana, write(tmp_path / "b.xml", unclosed))
    assert "truncated block" in e.problem and "<positive>" in e.problem
    e = error_of(read_jacana, write(tmp_path / "c.xml", JACANA.rsplit("</negative>", 1)[0]))
    assert "truncated block" in e.problem and "end of the file" in e.problem
    e = error_of(read_jacana, write(tmp_path / "d.xml", "hello\n" + JACANA))
    assert e.line == 1 and "unexpected line" in e.problem


# -- TREC TRAIN-ALL -------------------------------------------------------------------------------


def train_all_files(tmp_path, positive_text=None):
    question = "<Q 1 >\nWho wrote it ?\n</Q>\n<Q 7 >\nWhen ?\n</Q>\n"
    positive = positive_text or "<A 1 >\r\n< P > Ann wrote it .\r\nBob helped .\r\n</A>\r\n<A 7 >\r\n</A>\r\n"
    negative = "<A 1 >\nIt rained .\n</A>\n<A 7 >\nLater .\nSoon .\n</A>\n"
    paths = {}
    for name, text in (("question", question), ("positive", positive), ("negative", negative)):
        paths[name] = write(tmp_path / f"{name}.gz", text, gz=True)
    return paths


def test_train_all_positives_first_and_crlf(tmp_path):
    d = read_trec_train_all(**train_all_files(tmp_path))
    assert d.questions == ["Who wrote it ?", "When ?"]
    assert d.candidates == ["Ann wrote it .", "Bob helped .", "It rained .", "Later .", "Soon ."]
    assert d.labels.tolist() == [1, 1, 0, 0, 0]
    assert d.qid.tolist() == ["1", "1", "1", "7", "7"]


def test_train_all_truncated_block(tmp_path):
    paths = train_all_files(tmp_path, positive_text="<A 1 >\nAnn wrote it .\n<A 7 >\n</A>\n")
    e = error_of(lambda p: read_trec_train_all(**paths), None)
    assert "truncated block" in e.problem and "line 1" in e.problem and e.line == 3
    paths = train_all_files(tmp_path, positive_text="<A 9 >\nAnn .\n</A>\n")
    assert "question 9" in error_of(lambda p: read_trec_train_all(**paths), None).problem


def test_a_train_all_folder_is_data_to_the_commands_and_a_partial_or_other_folder_is_refused(tmp_path):
    from structrank.cli import check_input_paths
    from structrank.labelled import read_labelled
    from structrank.qa.pairs_files import is_pairs_file, read_pairs_file
    from structrank.qa.readers import TRAIN_ALL_FILES

    folder = tmp_path / "train-all"
    folder.mkdir()
    for kind, path in train_all_files(tmp_path).items():
        path.rename(folder / TRAIN_ALL_FILES[kind])
    assert is_pairs_file(folder)
    d = read_labelled(str(folder))
    assert d.labels.tolist() == [1, 1, 0, 0, 0] and d.qid.tolist() == ["1", "1", "1", "7", "7"]
    assert read_pairs_file(folder).candidates == d.candidates
    check_input_paths("train", ["xenc-crf-kl", "--train", str(folder), "--out", "x"])  # the CLI's early check passes
    (folder / TRAIN_ALL_FILES["negative"]).unlink()
    for read in (read_labelled, lambda path: check_input_paths("train", ["xenc-crf-kl", "--train", path, "--out", "x"])):
        with pytest.raises(DataFormatError, match=r"train-all: holds TREC QA TRAIN-ALL's POSInput files but not "
                                                  r"Train1-2393.Negative-M.POSInput.gz"):
            read(str(folder))
    other = tmp_path / "other"
    other.mkdir()
    for read in (read_labelled, lambda path: check_input_paths("train", ["svm-map", "--train", path, "--out", "x"])):
        with pytest.raises(DataFormatError, match=r"other: is a folder, not a file$"):
            read(str(other))
    with pytest.raises(DataFormatError, match=r"other: is a folder, not a file \(a folder is read only when it holds "
                                              r"TREC QA TRAIN-ALL's files"):
        read_labelled(str(other), "text")


# -- filters --------------------------------------------------------------------------------------


def toy(labels_per_question):
    qid = np.repeat([f"q{i}" for i in range(len(labels_per_question))], [len(x) for x in labels_per_question])
    labels = np.concatenate(labels_per_question)
    return QAData([f"question {i}" for i in range(len(labels_per_question))],
                  [f"c{i}" for i in range(labels.size)], labels, qid, [f"d{i}" for i in range(labels.size)])


def test_filters_cap_in_file_order_then_keep_both():
    d = toy([[1, 1, 0], [0, 0], [1, 0, 0, 0], [1]])
    assert keep_questions_with_both(d).query_ids == ["q0", "q2"]
    capped = cap_candidates(d, 2)
    assert capped.candidates == ["c0", "c1", "c3", "c4", "c5", "c6", "c9"]
    # capping first leaves q0 with positives only, so it goes: the order matters
    assert filter_questions(d, max_candidates=2).query_ids == ["q2"]
    assert filter_questions(d).query_ids == ["q0", "q2"]
    with pytest.raises(ValueError):
        cap_candidates(d, 0)


# -- the real data --------------------------------------------------------------------------------


@pytest.mark.data
@pytest.mark.parametrize("split, raw, clean", [
    ("train", (2118, 20360, 1040), (857, 8651)),
    ("dev", (296, 2733, 140), (122, 1126)),
    ("test", (633, 6165, 293), (237, 2341)),
])
def test_wikiqa_counts(data_root, split, raw, clean):
    d = load_qa("wikiqa", split, data_root=data_root, filtered=False)
    assert (d.n_queries, d.n_candidates, int(d.labels.sum())) == raw
    f = load_qa("wikiqa", split, data_root=data_root)
    assert (f.n_queries, f.n_candidates) == clean
    assert f.position.min() == 0  # source information is kept (and is never a feature)


@pytest.mark.data
@pytest.mark.parametrize("split, raw, clean", [("dev", (81, 1148, 222), (65, 1117)),
                                               ("test", (95, 1517, 284), (68, 1442))])
def test_trec_jacana_counts(data_root, split, raw, clean):
    d = load_qa("trec13", split, data_root=data_root, filtered=False)
    assert (d.n_queries, d.n_candidates, int(d.labels.sum())) == raw
    f = load_qa("trec13", split, data_root=data_root)
    assert (f.n_queries, f.n_candidates) == clean


@pytest.mark.data
def test_trec_train_all_counts(data_root):
    d = read_trec_train_all(data_root / "trecqa" / "wang2007-train-all")
    assert (d.n_queries, d.n_candidates, int(d.labels.sum())) == (1229, 53417, 6410)
    assert keep_questions_with_both(d).n_queries == 1161
    # the paper's 970 training questions: first 10 candidates, then both labels
    train = load_qa("trec13", "train", data_root=data_root)
    assert train.n_queries == 970 and np.diff(train.offsets).max() == 10
    jacana_train = read_jacana(data_root / "trecqa" / "jacana" / "train-less-than-40.manual-edit.xml.gz")
    assert (jacana_train.n_queries, jacana_train.n_candidates) == (93, 4718)
