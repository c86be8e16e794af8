"""``structrank featurize qa``: a QA TSV into a LETOR/SVMlight file, end to end through the CLI."""

import json
import sys
import types

import numpy as np
import pytest

from structrank.cli import main
from structrank.data import read_letor
from structrank.qa.features import QAFeaturizer, feature_names
from arrays import dense

N_FEATURES = len(feature_names())

TRAIN_ROWS = [
    ("Q7", "who wrote hamlet?", "Hamlet is a tragedy written by William Shakespeare.", 1),
    ("Q7", "who wrote hamlet?", "The play is set in Denmark.", 0),
    ("Q7", "who wrote hamlet?", "It was first performed around 1600.", 0),
    ("Q9", "when was the eiffel tower built?", "The tower was built in 1889 for the World's Fair.", 1),
    ("Q9", "when was the eiffel tower built?", "The Eiffel Tower is in Paris.", 0),
    ("Q3", "how many moons does mars have?", "Mars has two moons, Phobos and Deimos.", 1),
    ("Q3", "how many moons does mars have?", "Mars is the fourth planet from the Sun.", 0),
    ("Q3", "how many moons does mars have?", "Its surface is red.", 0),
]
TEST_ROWS = [
    ("T1", "where is the louvre?", "The Louvre is a museum in Paris, France.", 1),
    ("T1", "where is the louvre?", "It holds the Mona Lisa.", 0),
    # the same question and candidates as in the training file
    ("Q9", "when was the eiffel tower built?", "The tower was built in 1889 for the World's Fair.", 1),
    ("Q9", "when was the eiffel tower built?", "The Eiffel Tower is in Paris.", 0),
]


def write_tsv(path, rows, with_ids=True):
    lines = ["\t".join(str(v) for v in (row if with_ids else row[1:])) for row in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_featurize_end_to_end(tmp_path, capsys):
    tsv = write_tsv(tmp_path / "train.tsv", TRAIN_ROWS)
    out = tmp_path / "train.letor"
    code, _, err = run(capsys, "featurize", "qa", "--input", tsv, "--out", out)
    assert code == 0, err
    assert "fitting the featurizer (idf) on the input" in err
    ds = read_letor(out)
    assert ds.n_rows == len(TRAIN_ROWS) and ds.n_features == N_FEATURES
    assert ds.qid.tolist() == [1, 1, 1, 2, 2, 3, 3, 3]  # integer qids in question order
    assert ds.y.tolist() == [r[3] for r in TRAIN_ROWS]
    assert ds.docids.tolist() == ["Q7-0", "Q7-1", "Q7-2", "Q9-0", "Q9-1", "Q3-0", "Q3-1", "Q3-2"]
    assert [c.split("question = ")[1] for c in ds.comments] == [r[0] for r in TRAIN_ROWS]
    # the state used is kept beside the output, as JSON
    state = json.loads((tmp_path / "train.letor.featurizer.json").read_text(encoding="utf-8"))
    assert state["feature_names"] == feature_names()


def test_featurize_writes_the_group_file_on_request(tmp_path, capsys):
    tsv = write_tsv(tmp_path / "train.tsv", TRAIN_ROWS)
    assert run(capsys, "featurize", "qa", "--input", tsv, "--out", tmp_path / "g.letor", "--query-file")[0] == 0
    assert (tmp_path / "g.letor.query").read_text().split() == ["3", "2", "3"]
    assert run(capsys, "featurize", "qa", "--input", tsv, "--out", tmp_path / "n.letor")[0] == 0
    assert not (tmp_path / "n.letor.query").exists()


def test_three_column_tsv_and_gzip_output(tmp_path, capsys):
    tsv = write_tsv(tmp_path / "plain.tsv", TRAIN_ROWS, with_ids=False)
    out = tmp_path / "plain.txt.gz"
    assert run(capsys, "featurize", "qa", "--input", tsv, "--out", out)[0] == 0
    ds = read_letor(out)
    assert ds.qid.tolist() == [1, 1, 1, 2, 2, 3, 3, 3] and ds.docids[0] == "q1-0"


def test_fit_on_one_file_transform_another(tmp_path, capsys):
    train = write_tsv(tmp_path / "train.tsv", TRAIN_ROWS)
    test = write_tsv(tmp_path / "test.tsv", TEST_ROWS)
    assert run(capsys, "featurize", "qa", "--input", train, "--out", tmp_path / "train.letor", "--fit", train)[0] == 0
    code, _, err = run(capsys, "featurize", "qa", "--input", test, "--out", tmp_path / "test.letor", "--fit", train)
    assert code == 0 and "fitting" not in err
    a, b = read_letor(tmp_path / "train.letor"), read_letor(tmp_path / "test.letor")
    # identical rows, identical features: the test file's own texts do not change them
    np.testing.assert_array_equal(dense(b.X)[2:4], dense(a.X)[3:5])
    assert b.qid.tolist() == [1, 1, 2, 2]
    # the saved state reproduces them, and the library agrees with the command
    state = tmp_path / "train.letor.featurizer.json"
    assert run(capsys, "featurize", "qa", "--input", test, "--out", tmp_path / "again.letor", "--state", state)[0] == 0
    np.testing.assert_array_equal(dense(read_letor(tmp_path / "again.letor").X), dense(b.X))
    assert not (tmp_path / "again.letor.featurizer.json").exists()  # a given state is not copied
    from structrank.qa.readers import read_qa_tsv

    featurizer = QAFeaturizer.load(state)
    np.testing.assert_array_equal(featurizer.transform(read_qa_tsv(test)), dense(b.X))


def write_jacana(path, rows):
    """``rows`` in TREC QA's jacana form: per question a <QApairs> with its <question>, <positive> and <negative>
    blocks of five tab-separated lines (the tokens first; the other four are annotations the reader skips)."""
    lines = []
    for qid in dict.fromkeys(row[0] for row in rows):
        mine = [row for row in rows if row[0] == qid]
        lines += [f"<QApairs id='{qid}'>", *block("question", mine[0][1])]
        lines += [line for _, _, candidate, label in mine for line in block(("negative", "positive")[label], candidate)]
        lines.append("</QApairs>")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def block(tag, text):
    tokens = "\t".join(text.split())
    return [f"<{tag}>", tokens, *(["\t".join("-" for _ in text.split())] * 4), f"</{tag}>"]


def test_any_question_candidate_file_the_commands_read_is_featurized_alike(tmp_path, capsys):
    tsv = write_tsv(tmp_path / "train.tsv", TRAIN_ROWS)
    xml = write_jacana(tmp_path / "train.xml", TRAIN_ROWS)  # TREC QA's form, which train and predict read too
    for path in (tsv, xml):
        code, _, err = run(capsys, "featurize", "qa", "--input", path, "--fit", tsv, "--out", f"{path}.letor")
        assert code == 0, err
    a, b = read_letor(f"{tsv}.letor"), read_letor(f"{xml}.letor")
    # the jacana reader joins tokens by spaces: the texts and so the features are those of the TSV's rows
    np.testing.assert_array_equal(dense(b.X), dense(a.X))
    assert b.y.tolist() == a.y.tolist() and b.qid.tolist() == a.qid.tolist()


def test_fit_and_state_exclude_each_other(tmp_path, capsys):
    tsv = write_tsv(tmp_path / "t.tsv", TRAIN_ROWS)
    with pytest.raises(SystemExit) as info:
        main(["featurize", "qa", "--input", str(tsv), "--out", str(tmp_path / "o"), "--fit", str(tsv),
              "--state", str(tsv)])
    assert info.value.code == 2
    assert "not allowed with" in capsys.readouterr().err


def test_bad_input_names_file_and_line(tmp_path, capsys):
    tsv = tmp_path / "bad.tsv"
    tsv.write_text("who?\tAnn.\t1\nwho?\tBob.\tmaybe\n", encoding="utf-8")
    code, _, err = run(capsys, "featurize", "qa", "--input", tsv, "--out", tmp_path / "o.letor")
    assert code == 2 and f"{tsv}, line 2, label" in err and "'maybe'" in err
    assert not (tmp_path / "o.letor").exists()


def test_embeddings_columns_are_appended(tmp_path, capsys, monkeypatch):
    calls = {}

    def embedding_features(questions, candidates, kind="interaction"):
        calls["args"] = (list(questions), list(candidates), kind)
        return np.column_stack([np.arange(len(candidates)), np.ones(len(candidates))]), ["emb_a", "emb_b"]

    fake = types.ModuleType("structrank.qa.embeddings")
    fake.embedding_features = embedding_features
    monkeypatch.setitem(sys.modules, "structrank.qa.embeddings", fake)
    tsv = write_tsv(tmp_path / "t.tsv", TRAIN_ROWS)
    code, _, err = run(capsys, "featurize", "qa", "--input", tsv, "--out", tmp_path / "o.letor", "--embeddings")
    assert code == 0, err
    questions, candidates, kind = calls["args"]
    assert kind == "interaction" and questions == [r[1] for r in TRAIN_ROWS] and candidates == [r[2] for r in TRAIN_ROWS]
    X = dense(read_letor(tmp_path / "o.letor").X)
    assert X.shape == (len(TRAIN_ROWS), N_FEATURES + 2)
    np.testing.assert_array_equal(X[:, -2], np.arange(len(TRAIN_ROWS)))


def test_embeddings_missing_says_what_to_install(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "structrank.qa.embeddings", None)  # import fails
    tsv = write_tsv(tmp_path / "t.tsv", TRAIN_ROWS)
    code, _, err = run(capsys, "featurize", "qa", "--input", tsv, "--out", tmp_path / "o.letor", "--embeddings")
    assert code == 2 and "structrank[embeddings]" in err
    assert not (tmp_path / "o.letor").exists()

    fake = types.ModuleType("structrank.qa.embeddings")

    def embedding_features(questions, candidates, kind="interaction"):
        raise ImportError("No module named 'torch'")

    fake.embedding_features = embedding_features
    monkeypatch.setitem(sys.modules, "structrank.qa.embeddings", fake)
    code, _, err = run(capsys, "featurize", "qa", "--input", tsv, "--out", tmp_path / "o.letor", "--embeddings")
    assert code == 2 and "structrank[embeddings]" in err and "torch" in err
