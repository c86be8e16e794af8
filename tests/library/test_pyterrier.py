"""structrank in PyTerrier (issue 41): the adapter, pt.ltr.apply_learned_model, and PyTerrier's and
ir_datasets' frames in evaluate_run.

MQ2008 Fold1 is turned into PyTerrier frames (qid, docno, features; qrels qid, docno, label). The adapter must
fit the model that a fit on the arrays gives (the same bits) and score every row as ``ranker.predict`` does, in
the frame's order; the MAP of its frame must be the MAP of ``structrank.evaluate`` on the arrays, and the MAP
that pt.Experiment (through ir_measures and pytrec_eval) computes. Nothing here starts Terrier's JVM, and a
test checks that.
"""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest

from structrank.data import make_ranking_dataset, read_letor
from structrank.errors import DataValidationError
from structrank.learners import LatentPerceptronRanker, LinearRegressionRanker, RankSVM
from structrank.metrics import evaluate, evaluate_run, write_run
from conftest import needs_data

PT = pytest.mark.extra("pyterrier")
# pyterrier's add_ranks drops a column in place, which pandas 3.1 deprecates (PyTerrier's own warning, not ours)
pytestmark = pytest.mark.filterwarnings("ignore:The inplace keyword in DataFrame.drop:DeprecationWarning")


def _ranker():
    """A structured ranker that picks its epoch on a validation set (eval_set), quick on MQ2008."""
    return LatentPerceptronRanker(loss="map", max_epochs=4)


@pytest.fixture(scope="module")
def mq2008(data_root):
    """MQ2008 Fold1 as datasets and as PyTerrier frames {split: (dataset, results, qrels)}."""
    from structrank.pyterrier import dataset_frames

    out = {}
    for split in ("train", "vali", "test"):
        dataset = read_letor(data_root / "letor" / "MQ2008" / "Fold1" / f"{split}.txt.gz")
        out[split] = (dataset, *dataset_frames(dataset))
    return out


@pytest.fixture(scope="module")
def fitted(mq2008):
    """The adapter fitted on train with vali, and the same ranker fitted on the arrays."""
    from structrank.pyterrier import StructrankTransformer

    (train, train_res, train_qrels), (vali, vali_res, vali_qrels) = mq2008["train"], mq2008["vali"]
    adapter = StructrankTransformer(_ranker()).fit(train_res, train_qrels, vali_res, vali_qrels)
    on_arrays = _ranker().fit(train.X, train.y, qid=train.qid, eval_set=(vali.X, vali.y, vali.qid))
    return adapter, on_arrays


@PT
@needs_data
def test_the_adapter_fits_the_arrays_model_and_scores_as_predict(mq2008, fitted):
    import pyterrier as pt

    adapter, on_arrays = fitted
    test, test_res, _ = mq2008["test"]
    assert isinstance(adapter, pt.Estimator)
    np.testing.assert_array_equal(adapter.ranker.coef_, on_arrays.coef_)  # same rows, labels, queries, dev set
    assert adapter.ranker.best_epoch_ == on_arrays.best_epoch_
    # rows of the queries interleaved: scores stay with their rows, and rank is PyTerrier's own
    shuffled = test_res.sample(frac=1.0, random_state=0)
    out = adapter.transform(shuffled)
    assert out.index.equals(shuffled.index) and out.docno.tolist() == shuffled.docno.tolist()
    np.testing.assert_array_equal(out.score.to_numpy(), adapter.ranker.predict(np.stack(shuffled.features)))
    np.testing.assert_array_equal(out.score.to_numpy(), on_arrays.predict(test.X)[shuffled.index.to_numpy()])
    expected_rank = shuffled.assign(score=out.score).groupby("qid")["score"].rank(ascending=False, method="first")
    np.testing.assert_array_equal(out["rank"].to_numpy(), expected_rank.to_numpy().astype(int) - 1 + pt.model.FIRST_RANK)
    assert not pt.java.started()


@PT
@needs_data
def test_map_of_the_frames_equals_map_of_the_arrays(mq2008, fitted):
    """structrank.evaluate on arrays (trec convention: ties by docno, as trec_eval), evaluate_run on the frames
    and pt.Experiment (pytrec_eval) give the same MAP and NDCG@10 on the reranked test frame."""
    import pyterrier as pt

    adapter, _ = fitted
    test, test_res, test_qrels = mq2008["test"]
    out = adapter.transform(test_res)
    arrays = evaluate(test.y, out.score.to_numpy(), test.qid, ["map", "ndcg@10"], convention="trec",
                      docids=test.docids).metrics
    frames = evaluate_run(test_qrels, out, ["map", "ndcg@10"]).metrics
    topics = test_res[["qid"]].drop_duplicates().assign(query="")
    experiment = pt.Experiment([adapter], test_res, test_qrels, eval_metrics=["map", "ndcg_cut_10"], names=["sr"])
    from_df = pt.Experiment([out], topics, test_qrels, eval_metrics=["map", "ndcg_cut_10"], names=["sr"])
    assert frames == pytest.approx(arrays, abs=1e-12)
    for table in (experiment, from_df):
        assert table.loc[0, "map"] == pytest.approx(arrays["map"], abs=1e-12)
        assert table.loc[0, "ndcg_cut_10"] == pytest.approx(arrays["ndcg@10"], abs=1e-12)
    assert 0.3 < arrays["map"] < 0.7  # a model that learned (MQ2008's MAP of random scores is far lower)
    assert not pt.java.started()


@PT
@needs_data
def test_apply_learned_model_ltr_fits_what_fit_with_qid_fits(mq2008):
    """pt.ltr's LTRTransformer calls fit(X, y, group=sizes, eval_set=[(Xv, yv)], eval_group=[sizes_v]) on its
    rows joined with the qrels and sorted by qid: the model of fit(X, y, qid=...) on those rows, to the bit
    (the perceptron visits rows in order, so the order is pt.ltr's own, made by the same pandas calls)."""
    import pyterrier as pt

    (_, train_res, train_qrels), (_, vali_res, vali_qrels) = mq2008["train"], mq2008["vali"]
    test, test_res, _ = mq2008["test"]
    ltr = pt.ltr.apply_learned_model(_ranker(), form="ltr")
    ltr.fit(train_res, train_qrels, vali_res, vali_qrels)

    def pt_ltr_rows(res, qrels):
        rows = res.merge(qrels, on=["qid", "docno"], how="left").fillna(0).sort_values("qid")
        return np.stack(rows["features"].values), rows["label"].values, rows["qid"].to_numpy()

    X, y, qid = pt_ltr_rows(train_res, train_qrels)
    expected = _ranker().fit(X, y, qid=qid, eval_set=pt_ltr_rows(vali_res, vali_qrels))
    np.testing.assert_array_equal(ltr.learner.coef_, expected.coef_)
    assert ltr.learner.best_epoch_ == expected.best_epoch_
    np.testing.assert_array_equal(ltr.transform(test_res).score.to_numpy(), expected.predict(test.X))


@PT
def test_apply_learned_model_regression_says_to_use_ltr():
    """form='regression' (PyTerrier's default) calls fit(X, y): no queries, so no ranking to learn."""
    import pyterrier as pt
    from structrank.pyterrier import dataset_frames

    results, qrels = dataset_frames(make_ranking_dataset(n_queries=6, random_state=0))
    with pytest.raises(DataValidationError, match=r"needs qid .* or group .*apply_learned_model\(ranker, form='ltr'\)"):
        pt.ltr.apply_learned_model(RankSVM()).fit(results, qrels)


@PT
def test_labels_are_joined_from_the_qrels_unjudged_rows_count_as_zero():
    """A row the qrels do not judge has label 0 (as pt.ltr); qrels under ir_datasets' names, with int qids
    beside the results' string qids, give the same model; ids compare as strings."""
    import pandas as pd
    from structrank.pyterrier import StructrankTransformer, dataset_frames

    data = make_ranking_dataset(n_queries=20, n_features=5, random_state=3)
    results, qrels = dataset_frames(data)
    judged = qrels.sample(frac=0.6, random_state=1).sort_index()
    y = np.where(qrels.index.isin(judged.index), data.y, 0)
    expected = LinearRegressionRanker().fit(data.X, y, qid=data.qid)
    got = StructrankTransformer(LinearRegressionRanker()).fit(results, judged).ranker
    np.testing.assert_array_equal(got.coef_, expected.coef_)
    ir_datasets_names = pd.DataFrame({"query_id": judged.qid.astype(int), "doc_id": judged.docno,
                                      "relevance": judged.label, "iteration": "0"})
    again = StructrankTransformer(LinearRegressionRanker()).fit(results, ir_datasets_names).ranker
    np.testing.assert_array_equal(again.coef_, expected.coef_)


@PT
def test_fit_refuses_frames_it_cannot_read():
    from structrank.pyterrier import StructrankTransformer, dataset_frames

    results, qrels = dataset_frames(make_ranking_dataset(n_queries=6, random_state=0))
    adapter = StructrankTransformer(LinearRegressionRanker())
    with pytest.raises(DataValidationError, match="judge no row"):
        adapter.fit(results, qrels.assign(qid="x" + qrels.qid))
    with pytest.raises(DataValidationError, match=r"judge document 'S1-3' of query 1 twice \(rows 3 and 6\)"):
        adapter.fit(results, qrels.iloc[[0, 1, 2, 3, 4, 5, 3]].reset_index(drop=True))
    with pytest.raises(DataValidationError, match="no relevance label column"):
        adapter.fit(results, qrels.rename(columns={"label": "grade"}))
    ragged = results.copy()
    ragged.at[2, "features"] = ragged.features[2][:-1]
    with pytest.raises(DataValidationError, match=r"training results, row 2: features of shape"):
        adapter.fit(ragged, qrels)
    with pytest.raises(DataValidationError, match="together"):
        adapter.fit(results, qrels, results)
    import pyterrier as pt
    with pytest.raises(pt.validate.InputValidationError):  # PyTerrier's own check names the missing column
        adapter.fit(results.drop(columns=["features"]), qrels)


@PT
def test_the_validation_frames_reach_the_rankers_eval_set():
    """A ranker that does not choose on its eval set scores it (eval_score_); one whose fit takes none warns."""
    from structrank.pyterrier import StructrankTransformer, dataset_frames

    train, vali = (make_ranking_dataset(n_queries=8, random_state=seed) for seed in (0, 1))
    (results, qrels), (vali_results, vali_qrels) = dataset_frames(train), dataset_frames(vali)
    adapter = StructrankTransformer(LinearRegressionRanker()).fit(results, qrels, vali_results, vali_qrels)
    on_arrays = LinearRegressionRanker().fit(train.X, train.y, qid=train.qid)
    assert adapter.ranker.eval_score_ == on_arrays.score(vali.X, vali.y, qid=vali.qid)

    class NoEvalSet(LinearRegressionRanker):  # the fit of a ranker from elsewhere, without eval_set
        def fit(self, X, y=None, qid=None):
            return super().fit(X, y, qid=qid)

    with pytest.warns(UserWarning, match="NoEvalSet takes no validation set: the validation results were not used"):
        StructrankTransformer(NoEvalSet()).fit(results, qrels, vali_results, vali_qrels)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        StructrankTransformer(NoEvalSet()).fit(results, qrels)


@PT
def test_transform_of_no_rows_gives_the_columns_and_pipelines_compose():
    import pyterrier as pt
    from structrank.pyterrier import StructrankTransformer, dataset_frames

    results, qrels = dataset_frames(make_ranking_dataset(n_queries=8, random_state=0))
    adapter = StructrankTransformer(LinearRegressionRanker()).fit(results, qrels)
    empty = adapter.transform(results.iloc[:0])
    assert len(empty) == 0 and {"score", "rank"} <= set(empty.columns)
    top = (adapter % 3).transform(results)  # PyTerrier's rank cut-off on the adapter's ranks
    assert top.groupby("qid").size().max() == 3
    assert repr(adapter) == "StructrankTransformer(LinearRegressionRanker())"


@PT
def test_the_adapter_pickles():
    import pickle

    from structrank.pyterrier import StructrankTransformer, dataset_frames

    results, qrels = dataset_frames(make_ranking_dataset(n_queries=8, random_state=0))
    adapter = StructrankTransformer(LinearRegressionRanker()).fit(results, qrels)
    again = pickle.loads(pickle.dumps(adapter))
    assert type(again) is StructrankTransformer
    np.testing.assert_array_equal(again.transform(results).score, adapter.transform(results).score)


def test_without_pyterrier_the_error_says_what_to_install(monkeypatch):
    import structrank.pyterrier as adapter_module

    monkeypatch.delitem(vars(adapter_module), "StructrankTransformer", raising=False)
    monkeypatch.setitem(sys.modules, "pyterrier", None)  # what `import pyterrier` meets where it is absent
    with pytest.raises(ImportError, match=r"pip install python-terrier"):
        adapter_module.StructrankTransformer


# --- evaluate_run on PyTerrier's and ir_datasets' own frames


@pytest.fixture(scope="module")
def trec_files(tmp_path_factory, data_root):
    """MQ2008 Fold1 test as a qrels file and a run of a fitted ranker's scores (ties and all)."""
    folder = tmp_path_factory.mktemp("trec")
    fold = data_root / "letor" / "MQ2008" / "Fold1"
    train, test = read_letor(fold / "train.txt.gz"), read_letor(fold / "test.txt.gz")
    scores = RankSVM().fit(train).predict(test.X)
    (folder / "qrels").write_text("".join(f"{q} 0 {d} {y}\n" for q, d, y in zip(test.qid, test.docids, test.y)))
    write_run(folder / "run", test.qid, test.docids, scores)
    return folder / "qrels", folder / "run"


METRICS = ["map", "ndcg@10", "p@5", "mrr", "recall@10"]


@PT
@needs_data
def test_pyterriers_frames_evaluate_as_the_files(trec_files):
    import pyterrier as pt

    qrels, run = trec_files
    qrels_frame, run_frame = pt.io.read_qrels(str(qrels)), pt.io.read_results(str(run))
    assert {"qid", "docno", "label"} <= set(qrels_frame.columns) and {"qid", "docno", "score"} <= set(run_frame.columns)
    assert evaluate_run(qrels_frame, run_frame, METRICS).metrics == evaluate_run(qrels, run, METRICS).metrics


@needs_data
def test_ir_datasets_frames_evaluate_as_the_files(trec_files):
    ir_datasets = pytest.importorskip("ir_datasets", reason="ir_datasets (installed with ranx and python-terrier)")
    import pandas as pd
    from ir_datasets.formats import TrecQrels, TrecScoredDocs
    from ir_datasets.util import LocalDownload

    qrels, run = trec_files
    qrels_frame = pd.DataFrame(TrecQrels(LocalDownload(qrels), {}).qrels_iter())
    run_frame = pd.DataFrame(TrecScoredDocs(LocalDownload(run)).scoreddocs_iter())
    assert list(qrels_frame.columns) == ["query_id", "doc_id", "relevance", "iteration"], ir_datasets.__version__
    assert list(run_frame.columns) == ["query_id", "doc_id", "score"]
    assert evaluate_run(qrels_frame, run_frame, METRICS).metrics == evaluate_run(qrels, run, METRICS).metrics


def test_a_frame_without_known_columns_is_refused_naming_the_accepted_ones():
    import pandas as pd

    run = pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "score": [1.0, 0.5]})
    qrels = pd.DataFrame({"topic": ["1"], "doc": ["a"], "grade": [1]})
    accepted = (r"the qrels DataFrame has no query id column \('qid' or 'query_id'\): a qrels DataFrame takes the "
                r"columns of PyTerrier's qid, docno, label; ir_datasets' query_id, doc_id, relevance; trec_eval's qid, "
                r"docno, rel; it has topic, doc, grade")
    with pytest.raises(DataValidationError, match=accepted):
        evaluate_run(qrels, run)
    with pytest.raises(DataValidationError, match=r"run DataFrame has no score column \('score'\)"):
        evaluate_run(pd.DataFrame({"qid": ["1"], "docno": ["a"], "label": [1]}), run.drop(columns=["score"]))
    both = pd.DataFrame({"qid": ["1"], "docno": ["a"], "label": [1], "relevance": [0]})
    with pytest.raises(DataValidationError, match=r"2 relevance label columns, 'label' and 'relevance': keep one"):
        evaluate_run(both, run)


@PT
@pytest.mark.extra("text")
def test_a_cross_encoder_reads_each_rows_query_and_text(tmp_path):
    """A text reranker in the adapter reads PyTerrier's query and text columns (what pt.text.get_text adds), fits
    what a fit on the pairs fits, and scores as its predict; a row without text is named."""
    import pandas as pd

    from extras import need
    from structrank.learners import CrossEncoderRanker
    from structrank.pyterrier import StructrankTransformer
    from tiny_encoder import write_tiny_encoder

    need("text")
    encoder = str(write_tiny_encoder(tmp_path / "tiny-bert"))
    rng = np.random.default_rng(0)
    rows = [(str(q), f"d{q}-{d}", "who ate the cake ?", f"the {'red' if d == q % 4 else 'blue'} dog ate",
             int(d == q % 4)) for q in range(8) for d in range(4)]
    rng.shuffle(rows[:4])  # the frame's order is the pairs' order either way
    frame = pd.DataFrame(rows, columns=["qid", "docno", "query", "text", "label"])
    results, qrels = frame.drop(columns=["label"]), frame[["qid", "docno", "label"]]

    def ranker():
        return CrossEncoderRanker(encoder=encoder, epochs=1, learning_rate=2e-3, max_length=32, device="cpu",
                                  progress=False, random_state=0)

    adapter = StructrankTransformer(ranker()).fit(results, qrels)
    pairs = list(zip(frame["query"], frame["text"]))
    on_pairs = ranker().fit(pairs, frame["label"].to_numpy(), frame["qid"].to_numpy())
    reranked = adapter.transform(results)
    np.testing.assert_allclose(reranked.score.to_numpy(), on_pairs.predict(pairs), atol=1e-5)
    assert {"score", "rank"} <= set(reranked.columns)
    holed = results.copy()
    holed.at[5, "text"] = None
    with pytest.raises(DataValidationError, match=r"the results, row 5: text is missing, not text"):
        adapter.transform(holed)
    import pyterrier as pt
    with pytest.raises(pt.validate.InputValidationError):  # PyTerrier's own check names the missing column
        adapter.transform(results.drop(columns=["text"]))
