"""SemEval-2016 Task 3 subtask A: XML reader, splits, pairs and features, scorer files."""

import gzip
from collections import Counter

import numpy as np
import pytest

from structrank.errors import DataFormatError, DataValidationError
from structrank.metrics.evaluate import evaluate
from structrank.qa.readers import QAData
from structrank.qa.semeval import (
    DUPLICATES_OF_2016_TEST,
    FEATURE_DOCS,
    FEATURE_NAMES,
    TRAIN_2015_FILE,
    duplicate_threads,
    load_semeval,
    read_semeval,
    semeval_file,
    semeval_gold,
    to_pairs,
    write_semeval_scores,
)

HEADER = '<?xml version="1.0" encoding="utf-8"?>\n<xml version="1.0">\n'
THREAD_1 = """\t<Thread THREAD_SEQUENCE="Q1_R1">
\t\t<RelQuestion RELQ_ID="Q1_R1" RELQ_CATEGORY="Visas" RELQ_DATE="2012-01-01 10:00:00" RELQ_USERID="U1" RELQ_USERNAME="ann">
\t\t\t<RelQSubject>Family visa</RelQSubject>
\t\t\t<RelQBody>How long does a family visa take? Any idea for Doha café owners &amp; staff?</RelQBody>
\t\t</RelQuestion>
\t\t<RelComment RELC_ID="Q1_R1_C1" RELC_DATE="2012-01-01 11:00:00" RELC_USERID="U2" RELC_USERNAME="bob" RELC_RELEVANCE2RELQ="Good">
\t\t\t<RelCText>About two weeks; see http://example.com/visa for the form.</RelCText>
\t\t</RelComment>
\t\t<RelComment RELC_ID="Q1_R1_C2" RELC_DATE="2012-01-01 11:05:00" RELC_USERID="U1" RELC_USERNAME="ann" RELC_RELEVANCE2RELQ="Bad">
\t\t\t<RelCText>@bob thanks! Is that for Ümit too?</RelCText>
\t\t</RelComment>
\t\t<RelComment RELC_ID="Q1_R1_C3" RELC_DATE="2012-01-01 12:00:00" RELC_USERID="U2" RELC_USERNAME="bob" RELC_RELEVANCE2RELQ="PotentiallyUseful">
\t\t\t<RelCText>Ask at the ministry — 日本 people too.</RelCText>
\t\t</RelComment>
\t</Thread>
"""
THREAD_2 = """\t<Thread THREAD_SEQUENCE="Q1_R2">
\t\t<RelQuestion RELQ_ID="Q1_R2" RELQ_CATEGORY="Visas" RELQ_DATE="2012-01-02 10:00:00" RELQ_USERID="U3" RELQ_USERNAME="cy">
\t\t\t<RelQSubject>Exit permit</RelQSubject>
\t\t\t<RelQBody></RelQBody>
\t\t</RelQuestion>
\t\t<RelComment RELC_ID="Q1_R2_C1" RELC_DATE="2012-01-02 11:00:00" RELC_USERID="U4" RELC_USERNAME="di" RELC_RELEVANCE2RELQ="Good">
\t\t\t<RelCText>Your sponsor signs it.</RelCText>
\t\t</RelComment>
\t</Thread>
"""
XML = HEADER + THREAD_1 + THREAD_2 + "</xml>\n"


def write(path, text, gz=False, crlf=False):
    if crlf:
        text = text.replace("\n", "\r\n")
    data = text.encode("utf-8")
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def error_of(path, **kwargs):
    with pytest.raises(DataFormatError) as info:
        read_semeval(path, **kwargs)
    return info.value


# -- reader ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("gz,crlf", [(False, False), (False, True), (True, False), (True, True)])
def test_read_small_file(tmp_path, gz, crlf):
    path = write(tmp_path / ("t.xml.gz" if gz else "t.xml"), XML, gz, crlf)
    threads = read_semeval(path)
    assert [t.thread_id for t in threads] == ["Q1_R1", "Q1_R2"]
    t = threads[0]
    assert (t.question_id, t.user_id, t.username, t.category) == ("Q1_R1", "U1", "ann", "Visas")
    assert t.subject == "Family visa"
    assert t.body == "How long does a family visa take? Any idea for Doha café owners & staff?"
    assert t.question_text == "Family visa How long does a family visa take? Any idea for Doha café owners & staff?"
    assert [c.comment_id for c in t.comments] == ["Q1_R1_C1", "Q1_R1_C2", "Q1_R1_C3"]
    assert [c.label for c in t.comments] == ["Good", "Bad", "PotentiallyUseful"]
    assert [c.rank for c in t.comments] == [1, 2, 3]
    assert [t.by_asker(c) for c in t.comments] == [False, True, False]
    assert t.comments[1].text == "@bob thanks! Is that for Ümit too?"
    assert t.comments[2].text == "Ask at the ministry — 日本 people too."
    assert all("\r" not in c.text for c in t.comments)
    assert t.comments[0].line == 8 and t.line == 3  # start-tag lines, CRLF or not
    assert threads[1].body == "" and threads[1].question_text == "Exit permit"


def test_pairs_and_features(tmp_path):
    threads = read_semeval(write(tmp_path / "t.xml", XML))
    pairs = to_pairs(threads)
    assert isinstance(pairs, QAData)
    assert pairs.labels.tolist() == [1, 0, 0, 1]
    assert pairs.fine_labels.tolist() == ["Good", "Bad", "PotentiallyUseful", "Good"]
    assert pairs.qid.tolist() == ["0", "0", "0", "1"]
    assert pairs.question_ids.tolist() == ["Q1_R1"] * 3 + ["Q1_R2"]
    assert pairs.docids == ["Q1_R1_C1", "Q1_R1_C2", "Q1_R1_C3", "Q1_R2_C1"]
    assert pairs.questions == [threads[0].question_text, "Exit permit"]
    assert pairs.offsets.tolist() == [0, 3, 4]
    assert pairs.features.shape == (4, len(FEATURE_NAMES))
    assert set(FEATURE_DOCS) == set(FEATURE_NAMES)
    f = {name: pairs.feature(name).tolist() for name in FEATURE_NAMES}
    assert f["rank"] == [1, 2, 3, 1]
    assert f["reciprocal_rank"] == [1, 0.5, pytest.approx(1 / 3), 1]
    assert f["by_asker"] == [0, 1, 0, 0]
    assert f["comment_tokens"][1] == 7  # bob thanks Is that for Ümit too
    assert f["question_tokens"][:3] == [len(f"{threads[0].question_text}".split()) - 1] * 3  # "&" is no token
    assert f["has_url"] == [1, 0, 0, 0]
    assert f["has_question_mark"] == [0, 1, 0, 0]
    assert f["has_mention"] == [0, 1, 0, 0]
    assert f["same_user_comments"] == [2, 1, 2, 1]
    assert f["asker_comments"] == [1, 1, 1, 0]
    assert f["thread_comments"] == [3, 3, 3, 1]
    sub = pairs.take_queries([1])
    assert sub.docids == ["Q1_R2_C1"] and sub.features.tolist() == pairs.features[3:].tolist()
    assert sub.question_ids.tolist() == ["Q1_R2"]


def test_thread_without_comments_gives_no_pairs(tmp_path):
    empty = THREAD_2.replace(THREAD_2[THREAD_2.index("\t\t<RelComment"):THREAD_2.index("\t</Thread>")], "")
    threads = read_semeval(write(tmp_path / "t.xml", HEADER + THREAD_1 + empty + "</xml>\n"))
    assert threads[1].comments == []
    pairs = to_pairs(threads)
    assert pairs.n_queries == 1 and pairs.n_candidates == 3


def test_malformed_xml_names_file_and_line(tmp_path):
    broken = XML.replace("<RelCText>Your sponsor signs it.</RelCText>", "<RelCText>Your sponsor signs it.</RelCTxt>")
    path = write(tmp_path / "bad.xml", broken, crlf=True)
    e = error_of(path)
    assert e.path == str(path) and e.line == 24
    assert "malformed XML" in str(e) and "bad.xml, line 24" in str(e)
    e = error_of(write(tmp_path / "cut.xml.gz", XML[: XML.index("</Thread>")], gz=True))
    assert e.path.endswith("cut.xml.gz") and e.line is not None


@pytest.mark.parametrize("attribute,line", [
    ("RELC_RELEVANCE2RELQ", 11), ("RELC_ID", 11), ("RELC_USERID", 11), ("RELQ_ID", 4), ("THREAD_SEQUENCE", 3)])
def test_missing_attribute(tmp_path, attribute, line):
    target = {"RELC_RELEVANCE2RELQ": ' RELC_RELEVANCE2RELQ="Bad"', "RELC_ID": ' RELC_ID="Q1_R1_C2"',
              "RELC_USERID": ' RELC_USERID="U1" RELC_USERNAME="ann" RELC_RELEVANCE2RELQ="Bad"',
              "RELQ_ID": ' RELQ_ID="Q1_R1"', "THREAD_SEQUENCE": ' THREAD_SEQUENCE="Q1_R1"'}[attribute]
    replacement = ' RELC_USERNAME="ann" RELC_RELEVANCE2RELQ="Bad"' if attribute == "RELC_USERID" else ""
    assert XML.count(target) == 1
    e = error_of(write(tmp_path / "m.xml", XML.replace(target, replacement)))
    assert (e.line, e.field) == (line, attribute)
    assert "m.xml" in str(e) and attribute in str(e)


def test_unknown_label_and_unlabelled_files(tmp_path):
    e = error_of(write(tmp_path / "l.xml", XML.replace('RELC_RELEVANCE2RELQ="Bad"', 'RELC_RELEVANCE2RELQ="Dialogue"')))
    assert (e.line, e.field) == (11, "RELC_RELEVANCE2RELQ") and "Dialogue" in str(e)
    unlabelled = XML.replace(' RELC_RELEVANCE2RELQ="Bad"', "")
    threads = read_semeval(write(tmp_path / "u.xml", unlabelled), require_labels=False)
    assert threads[0].comments[1].label is None


def test_structure_errors(tmp_path):
    e = error_of(write(tmp_path / "d.xml", XML.replace("Q1_R2_C1", "Q1_R1_C1")))
    assert (e.line, e.field) == (23, "RELC_ID") and "line 8" in str(e)
    e = error_of(write(tmp_path / "n.xml", XML.replace("<RelCText>Your sponsor signs it.</RelCText>", "")))
    assert e.field == "RelCText"
    assert error_of(write(tmp_path / "e.xml", HEADER + "</xml>\n")).problem == "holds no <Thread>"
    assert "not found" in str(error_of(tmp_path / "missing.xml"))


def test_scores_file_round_trip(tmp_path):
    threads = read_semeval(write(tmp_path / "t.xml", XML))
    pairs = to_pairs(threads)
    out = tmp_path / "run" / "pred.txt"
    scores = np.array([0.25, -1.5, 3.0, 1e-20])
    write_semeval_scores(out, pairs, scores)
    lines = out.read_text().splitlines()
    assert lines[0] == "Q1_R1\tQ1_R1_C1\t0\t0.25\ttrue"
    assert lines[1] == "Q1_R1\tQ1_R1_C2\t0\t-1.5\tfalse"
    rows = semeval_gold(out)
    assert [(r.question_id, r.comment_id, r.rank, r.label) for r in rows] == [
        ("Q1_R1", "Q1_R1_C1", 0, True), ("Q1_R1", "Q1_R1_C2", 0, False),
        ("Q1_R1", "Q1_R1_C3", 0, True), ("Q1_R2", "Q1_R2_C1", 0, True)]
    assert [r.score for r in rows] == scores.tolist()  # exact round trip
    write_semeval_scores(out, threads, scores, labels=[False, False, True, False])  # from threads too
    assert [r.label for r in semeval_gold(out)] == [False, False, True, False]
    with pytest.raises(DataValidationError):
        write_semeval_scores(out, threads, scores[:3])
    with pytest.raises(DataValidationError):
        write_semeval_scores(out, threads, [1.0, np.nan, 0.0, 0.0])
    assert [r.label for r in semeval_gold(out)] == [False, False, True, False]  # failed writes left it intact


def test_gold_file_errors(tmp_path):
    path = tmp_path / "g.relevancy"
    path.write_text("Q1\tQ1_C1\t1\t1\ttrue\nQ1\tQ1_C2\t2\t0.5\tmaybe\n")
    with pytest.raises(DataFormatError) as info:
        semeval_gold(path)
    assert (info.value.line, info.value.field) == (2, "label")
    path.write_text("Q1\tQ1_C1\t1\ttrue\n")
    with pytest.raises(DataFormatError) as info:
        semeval_gold(path)
    assert info.value.line == 1 and "5 columns" in str(info.value)


def test_unknown_split():
    with pytest.raises(ValueError, match="unknown split"):
        load_semeval("validation")


# -- the benchmark data ---------------------------------------------------------------------------

COUNTS = {  # threads, comments, Good / PotentiallyUseful / Bad (QA_NLP_PROVENANCE.md, section 3)
    "train-part2": (379, 3790, (1364, 649, 1777)),
    "dev": (244, 2440, (818, 413, 1209)),
    "test": (327, 3270, (1329, 456, 1485)),
}


def label_counts(threads):
    counts = Counter(c.label for t in threads for c in t.comments)
    return counts["Good"], counts["PotentiallyUseful"], counts["Bad"]


@pytest.fixture(scope="module")
def splits(data_root):
    return {split: load_semeval(split, data_root) for split in ("train", "dev", "test")}


@pytest.mark.data
def test_2016_counts(data_root, splits):
    part2 = read_semeval(semeval_file("SemEval2016-Task3-CQA-QL-train-part2-subtaskA.xml", data_root))
    for name, threads in (("train-part2", part2), ("dev", splits["dev"]), ("test", splits["test"])):
        n_threads, n_comments, labels = COUNTS[name]
        assert len(threads) == n_threads, name
        assert sum(len(t.comments) for t in threads) == n_comments, name
        assert all(len(t.comments) == 10 for t in threads), name
        assert label_counts(threads) == labels, name
        assert all(c.comment_id == f"{t.question_id}_C{c.rank}" for t in threads for c in t.comments), name
    with_both = {"dev": 209, "test": 305}
    for name, n in with_both.items():
        assert to_pairs(splits[name]).summary()["questions_with_both"] == n


@pytest.mark.data
def test_2015_extra_and_duplicates_dropped(data_root, splits):
    extra = read_semeval(data_root / "semeval2016-cqa" / TRAIN_2015_FILE)
    assert len(extra) == 291 and sum(len(t.comments) for t in extra) == 1529
    assert label_counts(extra) == (813, 172, 544)
    # the two duplicates, found by comparing question bodies with the 2016 test file
    assert duplicate_threads(extra, splits["test"]) == DUPLICATES_OF_2016_TEST == {"Q2630": "Q373_R23",
                                                                                   "Q2656": "Q350_R26"}
    assert duplicate_threads(extra, splits["dev"]) == {}
    train = splits["train"]
    ids = [t.thread_id for t in train]
    assert len(train) == 379 + 289 and len(set(ids)) == len(ids)
    assert not set(DUPLICATES_OF_2016_TEST) & set(ids)
    assert ids[379:] == [t.thread_id for t in extra if t.thread_id not in DUPLICATES_OF_2016_TEST]
    assert duplicate_threads(train, splits["test"]) == {}
    dropped = sum(len(t.comments) for t in extra if t.thread_id in DUPLICATES_OF_2016_TEST)
    assert sum(len(t.comments) for t in train) == 3790 + 1529 - dropped == 5266
    part2 = COUNTS["train-part2"][2]
    dropped_labels = label_counts([t for t in extra if t.thread_id in DUPLICATES_OF_2016_TEST])
    assert label_counts(train) == tuple(a + b - c for a, b, c in zip(part2, (813, 172, 544), dropped_labels))
    assert label_counts(train) == (2150, 816, 2300)
    assert len(load_semeval("train", data_root, with_2015=False)) == 379


@pytest.mark.data
def test_gold_files_agree_with_xml(splits):
    for split, n_true in (("dev", 818), ("test", 1329)):
        gold = semeval_gold(split)
        assert len(gold) == len(splits[split]) * 10 and sum(r.label for r in gold) == n_true
        assert [(r.question_id, r.comment_id, r.label) for r in gold] == [
            (t.question_id, c.comment_id, c.relevant) for t in splits[split] for c in t.comments]


@pytest.mark.data
def test_pairs_of_the_splits(splits):
    for split, (n_threads, n_pairs, n_good) in {"train": (667, 5266, 2150), "dev": (244, 2440, 818),
                                                "test": (327, 3270, 1329)}.items():
        pairs = to_pairs(splits[split])
        assert (pairs.n_queries, pairs.n_candidates, int(pairs.labels.sum())) == (n_threads, n_pairs, n_good)
        assert np.all(np.isfinite(pairs.features))
        assert pairs.feature("rank").min() == 1
        assert set(np.unique(pairs.feature("by_asker"))) == {0.0, 1.0}


@pytest.mark.data
def test_ir_baseline_map_on_test(splits, tmp_path):
    """Comments in thread order: the official IR baseline, MAP 59.53 on the 2016 test set."""
    pairs = to_pairs(splits["test"])
    scores = -pairs.feature("rank")
    result = evaluate(pairs.labels, scores, pairs.qid, ["map"], "semeval")
    assert round(result.metrics["map"], 4) == 0.5953
    # the prediction file holds the same ranking, in the scorer's format
    out = tmp_path / "ir.pred"
    write_semeval_scores(out, splits["test"], scores)
    rows = semeval_gold(out)
    assert len(rows) == 3270 and [r.score for r in rows] == scores.tolist()
