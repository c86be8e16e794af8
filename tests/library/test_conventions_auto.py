"""Graded labels get graded defaults (issue 37, point 5): the convention ``auto`` follows the labels,
every ranker's ``score()`` follows one rule under it, and ``train --vali`` / ``evaluate`` take
``--convention`` and agree with each other."""

import json
import re
import warnings

import numpy as np
import pytest

from structrank.cli import main
from structrank.data import RankingDataset, make_ranking_dataset, read_letor, write_letor
from structrank.errors import ConventionWarning
from structrank.learners import RankSVM, StructSVMRanker
from structrank.learners.registry import FEATURE_MODELS, MODELS, RANKERS
from structrank.metrics import CONVENTIONS, auto_convention, evaluate, get_convention, resolve_convention
from structrank.model_io import load_model


def _top_heavy(top, n_queries=6, n_docs=20, seed=0):
    """Queries of ``n_docs`` documents, exactly 10 of them relevant (labels from 1, or from 2 when the
    labels go above 2, as mslr counts relevance) and each of those labels up to ``top`` present: a
    perfect ranking's value is 1 for every metric a ranker stands for (P@10 and Recall@10 included,
    which are below 1 when a query has other than 10 relevant documents)."""
    rng = np.random.default_rng(seed)
    low = 1 if top <= 2 else 2
    labels = []
    for _ in range(n_queries):
        good = np.concatenate([np.arange(low, top + 1), rng.integers(low, top + 1, size=10 - (top - low + 1))])
        labels.append(rng.permutation(np.concatenate([good, np.zeros(n_docs - 10, dtype=np.int64)])))
    y = np.concatenate(labels)
    X = rng.normal(size=(y.size, 4))
    return RankingDataset(X, y, np.repeat(np.arange(n_queries), n_docs))


@pytest.mark.parametrize("top, name", [(1, "letor4"), (2, "letor4"), (3, "mslr"), (4, "mslr"), (7, "trec")])
def test_auto_resolves_from_the_largest_label(top, name):
    assert auto_convention([0, top, 1]).name == name
    conv, auto = resolve_convention("auto", [0, top])
    assert (conv.name, auto) == (name, True)
    assert resolve_convention("letor4", [0, top]) == (CONVENTIONS["letor4"], False)


def test_auto_is_not_a_convention_of_its_own():
    with pytest.raises(ValueError, match="resolve_convention"):
        get_convention("auto")
    with pytest.raises(ValueError, match="known: auto, letor4"):
        get_convention("letor5")


@pytest.mark.parametrize("top", [1, 2, 4, 7])
def test_a_perfect_ranking_scores_one_without_a_warning_by_default(top):
    ds = _top_heavy(top)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = evaluate(ds.y, ds.y.astype(float), ds.qid)  # every default metric, no convention named
    assert result.auto and result.convention == auto_convention(ds.y).name
    assert result.convention_label == f"{result.convention} (auto)"
    assert result.metrics == {name: 1.0 for name in result.metrics}
    assert result.to_dict(per_query=False)["convention_auto"] is True


def test_auto_picks_trec_above_4_and_breaks_its_ties_by_the_rows_numbers_without_docids():
    y = np.array([7, 0, 3, 5, 0, 1, 2, 6])
    scores = np.array([1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.0, 0.0])  # ties, which trec orders by docid
    qid = np.array([1, 1, 1, 1, 2, 2, 2, 2])
    auto = evaluate(y, scores, qid, ["ndcg@3", "map", "mrr"])
    named = evaluate(y, scores, qid, ["ndcg@3", "map", "mrr"], "trec", docids=np.arange(1, 9))
    assert auto.convention_label == "trec (auto)" and auto.metrics == named.metrics
    with pytest.raises(ValueError, match="docids"):  # named, trec still needs them
        evaluate(y, scores, qid, ["map"], "trec")


def test_generated_graded_data_perfect_ranking_is_one_under_auto_and_not_under_letor4():
    ds = make_ranking_dataset(n_queries=40, docs_per_query=(10, 30), n_levels=5, random_state=1)
    keep = [q for q in np.unique(ds.qid) if ds.y[ds.qid == q].max() >= 2]  # mslr's MAP needs a label >= 2
    ds = ds.take_queries(np.searchsorted(np.unique(ds.qid), keep))
    assert ds.y.max() == 4
    perfect = ds.y.astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        auto = evaluate(ds.y, perfect, ds.qid, ["ndcg@10", "map"])
    assert (auto.convention, auto.metrics) == ("mslr", {"ndcg@10": 1.0, "map": 1.0})
    with pytest.warns(ConventionWarning, match="labels above 2"):
        letor4 = evaluate(ds.y, perfect, ds.qid, ["ndcg@10", "map"], "letor4")
    assert letor4.metrics["ndcg@10"] < 0.9 and letor4.metrics["map"] < 0.9  # labels 3-4 count as gain 0


def test_letor4_named_on_graded_labels_keeps_its_documented_value():
    # LETOR 4.0's table: labels 3 and 4 gain 0; ranks 1-3 hold labels 4, 3, 2: DCG@3 = 3/log2(3), and the
    # ideal ranking's gains are 3 (label 2) and 1 (label 1) at ranks 1 and 2: IDCG@3 = 4
    documented = (3 / np.log2(3)) / 4
    y, scores, qid = np.array([4, 3, 2, 1, 0]), np.array([5.0, 4, 3, 2, 1]), np.zeros(5, int)
    with pytest.warns(ConventionWarning):
        assert evaluate(y, scores, qid, ["ndcg@3"], "letor4")["ndcg@3"] == pytest.approx(documented, abs=1e-12)
    # the same through a ranker's score(), with the convention named on the estimator
    model = StructSVMRanker(metric="ndcg@3", convention="letor4")
    model.predict = lambda X: scores
    with pytest.warns(ConventionWarning):
        assert model.score(np.zeros((5, 2)), y, qid=qid) == pytest.approx(documented, abs=1e-12)
    assert evaluate(y, scores, qid, ["ndcg@3"])["ndcg@3"] == 1.0  # auto: mslr


def _perfect_score(spec, ds):
    model = spec.make()
    model.predict = lambda X: ds.y.astype(float)  # a model that ranks as the labels do
    return model, model.score(ds)


@pytest.mark.parametrize("name", sorted(FEATURE_MODELS))  # the text models: tests/library/test_cross_encoder.py
def test_every_model_scores_a_perfect_ranking_one_on_any_label_range(name):
    for top in (1, 2, 4, 7):
        ds = _top_heavy(top)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            model, value = _perfect_score(MODELS[name], ds)
        assert value == 1.0, (name, top, model._scoring())


def test_the_models_cover_every_ranker_class():
    from structrank.learners.base import BaseRanker
    import structrank.learners as learners

    classes = {n for n in learners.__all__ if isinstance(getattr(learners, n), type)
               and issubclass(getattr(learners, n), BaseRanker) and n != "BaseRanker"}
    assert classes == set(RANKERS)


def test_score_follows_one_rule():
    # the objective's metric under auto
    for name in ("ranksvm", "linreg", "lambdamart", "svm-map", "crf-kl", "lsp"):
        if name in MODELS:
            assert MODELS[name].make()._scoring()[1] == "auto", name
    assert RankSVM()._scoring() == (("ndcg@10",), "auto", None)
    assert StructSVMRanker(loss="map")._scoring() == (("map",), "auto", 1)
    # a loss whose metric fixes its convention keeps it; a convention named on the estimator wins
    assert StructSVMRanker(loss="ndcg", loss_params={"discount": "log2"})._scoring()[1] == "trec"
    assert StructSVMRanker(loss="ndcg", convention="mslr", loss_params={"discount": "log2"})._scoring()[1] == "mslr"


# -- the command line ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def graded_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("graded")
    full = make_ranking_dataset(n_queries=50, docs_per_query=(10, 25), n_levels=5, n_features=6, random_state=3)
    paths = {}
    for name, queries in (("train", range(0, 30)), ("vali", range(30, 50))):
        paths[name] = folder / f"{name}.txt"
        write_letor(paths[name], full.take_queries(np.array(list(queries))))
    assert read_letor(paths["vali"]).y.max() == 4
    return paths


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _chosen_value(err):
    chosen = re.search(r"chose .*: vali map ([0-9.]+) under (\S+)( \(auto\))?$", err, re.MULTILINE)
    assert chosen is not None, err
    return float(chosen.group(1)), chosen.group(2), bool(chosen.group(3))


def _evaluated_map(capsys, data, model, tmp_path, *convention):
    scores = tmp_path / "scores.txt"
    assert run(capsys, "predict", "--model", model, "--data", data, "--out", scores)[0] == 0
    code, out, err = run(capsys, "evaluate", "--data", data, "--scores", scores, "--metric", "map", "--json",
                         *convention)
    assert code == 0, err
    return json.loads(out)


def test_train_vali_prints_what_evaluate_gives_for_the_chosen_model(graded_files, tmp_path, capsys):
    model = tmp_path / "m.npz"
    code, out, err = run(capsys, "train", "ranksvm", "--train", graded_files["train"], "--vali", graded_files["vali"],
                         "--out", model)
    assert code == 0, err
    value, name, auto = _chosen_value(err)
    assert (name, auto) == ("mslr", True)
    assert "under mslr (auto)" in err
    got = _evaluated_map(capsys, graded_files["vali"], model, tmp_path, "--convention", "mslr")
    assert round(got["metrics"]["map"], 6) == value
    default = _evaluated_map(capsys, graded_files["vali"], model, tmp_path)
    assert (default["convention"], default["convention_auto"]) == ("mslr", True)
    assert default["metrics"]["map"] == got["metrics"]["map"]


def test_train_convention_option_and_set_convention_mean_the_same(graded_files, tmp_path, capsys):
    values = []
    for option in (["--convention", "letor4"], ["--set", "convention=letor4"]):
        model = tmp_path / "m.npz"
        with pytest.warns(ConventionWarning, match="labels above 2"):  # letor4 named on labels 0-4
            code, out, err = run(capsys, "train", "ranksvm", "--train", graded_files["train"], "--vali",
                                 graded_files["vali"], "--out", model, "--set", "C=1", *option)
        assert code == 0, err
        value, name, auto = _chosen_value(err)
        assert (name, auto) == ("letor4", False)
        with pytest.warns(ConventionWarning):
            got = _evaluated_map(capsys, graded_files["vali"], model, tmp_path, "--convention", "letor4")
        assert round(got["metrics"]["map"], 6) == value
        values.append(value)
    assert values[0] == values[1]


def test_train_convention_errors_name_the_option(graded_files, tmp_path, capsys):
    common = ("--train", graded_files["train"], "--out", tmp_path / "m.npz")
    code, _, err = run(capsys, "train", "ranksvm", *common, "--vali", graded_files["vali"],
                       "--set", "convention=mslr", "--convention", "letor4")
    assert code == 2 and "--convention" in err and "disagree" in err
    code, _, err = run(capsys, "train", "ranksvm", *common, "--convention", "mslr")
    assert code == 2 and "--convention mslr" in err and "--vali" in err
    code, _, err = run(capsys, "train", "svm-map", *common, "--set", "convention=letor9")
    assert code == 2 and "not a convention" in err and "--convention" in err


def test_train_convention_sets_score_of_a_model_that_takes_one(graded_files, tmp_path, capsys):
    model = tmp_path / "m.npz"
    code, _, err = run(capsys, "train", "svm-map", "--train", graded_files["train"], "--out", model,
                       "--convention", "mslr", "--set", "max_iter=5")
    assert code == 0, err
    assert load_model(model).convention == "mslr"


def test_evaluate_says_auto_chose_the_convention(graded_files, tmp_path, capsys):
    ds = read_letor(graded_files["vali"])
    scores = tmp_path / "labels.txt"
    np.savetxt(scores, ds.to_file_order(ds.y.astype(float)))
    code, out, err = run(capsys, "evaluate", "--data", graded_files["vali"], "--scores", scores)
    assert code == 0, err
    assert CONVENTIONS["mslr"].describe(auto=True) in out and "chosen by auto from" in out
    assert "Warning" not in err
    with pytest.warns(ConventionWarning, match="labels above 2"):
        code, out, err = run(capsys, "evaluate", "--data", graded_files["vali"], "--scores", scores,
                             "--convention", "letor4", "--metric", "map")
    assert code == 0 and CONVENTIONS["letor4"].describe() in out and "chosen by auto from" not in out


def test_trec_ties_compare_docids_as_trec_eval_s_strcmp_compares_their_bytes():
    # a docid read from bytes that are not UTF-8 holds a surrogate (U+DCC3 for the byte 0xC3); 'ह' is
    # E0 A4 B9 in UTF-8. strcmp puts 0xE0 above 0xC3, code points would put U+DCC3 above U+0939
    docids = ["\udcc3x", "\u0939", "a"]
    result = evaluate([1, 0, 0], [1.0, 1.0, 1.0], [1, 1, 1], ["mrr"], "trec", docids=docids)
    assert result.metrics["mrr"] == 0.5  # ties ranked by docid descending, bytewise: 'ह', '\xc3x', 'a'
    # valid UTF-8 alone keeps code point order, which is its byte order
    assert evaluate([0, 1, 0], [1.0, 1.0, 1.0], [1, 1, 1], ["mrr"], "trec", docids=["é", "\u0939", "a"]).metrics == {
        "mrr": 1.0}
