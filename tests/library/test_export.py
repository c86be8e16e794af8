"""`structrank export`: each format read back by a reader written from the format's documentation,
and its scores equal to the model's."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cli_checks import NO_OPEN_FILES
from export_helpers import train_models
from structrank.cli import main
from structrank.data import make_ranking_dataset, write_letor
from structrank.export import FORMATS, export_model
from structrank.model_io import load_model

pytestmark = NO_OPEN_FILES


def read_svmlight_model(text):
    """An SVM-light model file: 11 header lines (version, kernel type and parameters, highest feature
    index, training documents, support vectors + 1, threshold b), then lines ``alpha*y [qid:..]
    index:value ... #``; a linear kernel scores ``sum alpha*y (sv . x) - b``."""
    lines = text.splitlines()
    assert lines[0].startswith("SVM-light Version") and int(lines[1].split()[0]) == 0  # linear kernel
    n_features = int(lines[7].split()[0])
    n_vectors = int(lines[9].split()[0]) - 1
    b = float(lines[10].split()[0])
    w = np.zeros(n_features)
    for line in lines[11:11 + n_vectors]:
        fields = line.split("#")[0].split()
        alpha = float(fields[0])
        for pair in fields[1:]:
            if pair.startswith("qid:"):
                continue
            index, value = pair.split(":")
            w[int(index) - 1] += alpha * float(value)
    return lambda X: X @ w - b


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    folder = tmp_path_factory.mktemp("export")
    ds = make_ranking_dataset(n_queries=20, n_features=5, random_state=1)
    write_letor(folder / "train.txt", ds)
    models = train_models(folder, folder / "train.txt", [("svm-map", []), ("linreg", [])])
    X = ds.X.toarray() if hasattr(ds.X, "toarray") else np.asarray(ds.X)
    return folder, models, X


@pytest.mark.parametrize("name", ["svm-map", "linreg"])
def test_every_format_round_trips_to_the_same_scores(trained, name, capsys):
    folder, models, X = trained
    model = load_model(models[name])
    expected = model.predict(X)
    bias = float(getattr(model, "intercept_", 0.0))
    for fmt in ("json", "opensearch-ltr", "svmrank"):
        out = folder / f"{name}.{fmt}"
        assert main(["export", str(models[name]), "--format", fmt, "--out", str(out), "--quiet"]) == 0
        text = out.read_text()
        if fmt == "json":
            doc = json.loads(text)
            w = np.array([doc["weights"][str(i + 1)] for i in range(X.shape[1])])
            scores = X @ w + doc["bias"]
        elif fmt == "opensearch-ltr":  # the plugin's model/linear: definition is a JSON string, no bias
            doc = json.loads(text)
            assert doc["model"]["model"]["type"] == "model/linear"
            definition = json.loads(doc["model"]["model"]["definition"])
            scores = X @ np.array([definition[str(i + 1)] for i in range(X.shape[1])]) + bias
        else:
            scores = read_svmlight_model(text)(X)
        np.testing.assert_allclose(scores, expected, rtol=1e-12, atol=1e-12, err_msg=fmt)


def test_feature_names_and_errors(trained, tmp_path, capsys):
    folder, models, X = trained
    (tmp_path / "names.txt").write_text("".join(f"f_{i}\n" for i in range(X.shape[1])))
    assert main(["export", str(models["svm-map"]), "--format", "opensearch-ltr", "--feature-names",
                 str(tmp_path / "names.txt"), "--name", "mine"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["model"]["name"] == "mine" and set(json.loads(doc["model"]["model"]["definition"])) == {
        f"f_{i}" for i in range(X.shape[1])}
    (tmp_path / "short.txt").write_text("a\n")
    assert main(["export", str(models["svm-map"]), "--format", "json", "--feature-names", str(tmp_path / "short.txt")]) == 2
    assert "give as many different names" in capsys.readouterr().err
    (tmp_path / "dup.txt").write_text("a\nb\na\n")
    assert main(["export", str(models["svm-map"]), "--format", "json", "--feature-names", str(tmp_path / "dup.txt")]) == 2
    assert "dup.txt, line 3, name: feature name 'a' is given twice (lines 1 and 3)" in capsys.readouterr().err
    assert main(["train", "lambdamart", "--train", str(folder / "train.txt"), "--out", str(tmp_path / "t.npz"),
                 "--set", "n_estimators=3", "--quiet"]) == 0
    assert main(["export", str(tmp_path / "t.npz"), "--format", "json"]) == 2
    assert "not a linear ranker" in capsys.readouterr().err


def test_feature_names_are_read_with_the_data_files_grammar(tmp_path):
    import codecs
    import gzip

    from structrank.errors import DataFormatError
    from structrank.export import read_feature_names

    path = tmp_path / "names.txt"
    path.write_bytes(codecs.BOM_UTF8 + b"# the MQ2008 features\r\nbm25\r\ntf idf\r\n\r\n\r\n")
    assert read_feature_names(path) == ["bm25", "tf idf"]  # BOM, CRLF, a comment and the trailing blank lines
    with gzip.open(tmp_path / "names.txt.gz", "wb") as fh:
        fh.write(b"bm25\ntf\n")
    assert read_feature_names(tmp_path / "names.txt.gz") == ["bm25", "tf"]
    path.write_text("bm25\n\ntf\n")
    with pytest.raises(DataFormatError, match=r"names.txt, line 2, name: a blank line between feature names"):
        read_feature_names(path)
    path.write_text("bm25\ntf\n# a comment\nbm25\n")
    with pytest.raises(DataFormatError, match=r"line 4, name: feature name 'bm25' is given twice \(lines 1 and 4\)"):
        read_feature_names(path)
    path.write_bytes(b"bm25\n\xff\n")
    with pytest.raises(DataFormatError, match="not UTF-8"):
        read_feature_names(path)


def test_an_export_names_weights_as_the_model_file_records_them(tmp_path, capsys):
    """A model fitted on a DataFrame records its columns: json and opensearch-ltr export under those names (not
    "1, 2, 3"), --feature-names that agree are taken, ones that contradict them are refused in one line."""
    import json

    import pandas as pd

    from structrank.cli import main
    from structrank.learners import RankSVM
    from structrank.model_io import save_model

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(20, 3)), columns=["bm25", "tf", "idf"])
    model = RankSVM().fit(X, np.tile([1, 0, 0, 0, 0], 4), qid=np.repeat(np.arange(4), 5))
    save_model(model, tmp_path / "m.npz")
    out = tmp_path / "m.json"
    assert main(["export", str(tmp_path / "m.npz"), "--format", "json", "--out", str(out)]) == 0
    assert list(json.loads(out.read_text())["weights"]) == ["bm25", "tf", "idf"]
    names = tmp_path / "names.txt"
    names.write_text("bm25\ntf\nidf\n")
    assert main(["export", str(tmp_path / "m.npz"), "--format", "opensearch-ltr", "--feature-names", str(names),
                 "--out", str(out)]) == 0
    names.write_text("a\nb\nc\n")
    capsys.readouterr()
    assert main(["export", str(tmp_path / "m.npz"), "--format", "json", "--feature-names", str(names),
                 "--out", str(tmp_path / "other.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert "feature 1 is 'bm25' there, 'a' here" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "other.json").exists()


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_text_reranker_is_refused_with_where_its_folder_goes_instead(fmt):
    from structrank.learners import CrossEncoderRanker

    with pytest.raises(ValueError, match=r"CrossEncoderRanker reads text.*sentence-transformers CrossEncoder"):
        export_model(CrossEncoderRanker(), fmt)
