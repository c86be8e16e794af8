"""Optimiser health (issue 37): every structural and perceptron fit records how far it moved from w = 0
(Chakrabarti et al. 2008, Sec. 4.2), warns in one line when it stayed there, and a model whose scores all tie
is warned about at predict time; the short names train the formulations that learn."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

from structrank.cli import _one_line_warning, main
from structrank.data import make_ranking_dataset, write_letor
from structrank.data.dataset import group_offsets
from structrank.errors import DegenerateDataWarning
from structrank.learners import (LatentPerceptronRanker, LatentSSVMRanker, OptimiserHealth, StayedAtZeroWarning,
                                 StructSVMRanker)
from structrank.learners.base import informative_queries, optimiser_health
from structrank.learners.registry import MODELS, get_model, select_on_vali

TINY_C = 1e-7  # keeps w within rounding of 0 whatever the loss


@pytest.fixture(scope="module")
def ds():
    return make_ranking_dataset(n_queries=24, docs_per_query=12, n_features=5, random_state=3)


def _informative(ds, relevant_from=1):
    X, y, offsets = ds.X, ds.y, group_offsets(ds.qid)[0]
    return informative_queries(np.asarray(X), y, offsets, relevant_from)


def _fit(model, ds):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(ds)
    return model, [w for w in caught if issubclass(w.category, StayedAtZeroWarning)]


@pytest.mark.parametrize("params", [{"loss": "map"}, {"loss": "mrr"}, {"loss": "ndcg", "loss_params": {"gain": "binary"}},
                                    {"loss": "auc"}, {"loss": "mrr", "target": "latent"}])
def test_ssvm_health_reads_the_fit_and_its_value_at_w_0(ds, params):
    model, _ = _fit(StructSVMRanker(C=10.0, **params), ds)
    h = model.health_
    X, y, offsets = _informative(ds)
    # at w = 0 every score ties: the slack there is the mean loss of the max-violating ranking at zero scores
    loss = model.loss_
    _, delta = loss.batch(np.zeros(y.size), y, offsets)
    if params.get("target") != "latent":
        assert h.zero_slack == pytest.approx(delta.mean(), rel=1e-12)
    assert h.slack == model.slack_
    assert h.objective_ratio == pytest.approx(model.objective_ / model.zero_objective_, rel=1e-12)
    assert h.zero_slack == pytest.approx(model.zero_objective_ / model.C, rel=1e-12)
    assert h.w_norm2 == pytest.approx(float(model.coef_ @ model.coef_), rel=1e-12)
    scores = X @ model.coef_
    assert h.score_range == pytest.approx(max(np.ptp(scores[a:b]) for a, b in zip(offsets[:-1], offsets[1:])))
    assert h.objective_ratio < 1 - 1e-3 and not h.stayed_at_zero  # C = 10 learns on these data


def test_health_at_w_0_has_ratio_1_and_stays():
    h = optimiser_health(np.zeros(3), 0.8, 0.8, 1.0, np.zeros(4), np.array([0, 2, 4]))
    assert (h.objective_ratio, h.w_norm2, h.score_range, h.stayed_at_zero) == (1.0, 0.0, 0.0, True)
    # no regulariser (the perceptron's): the ratio is the hinge's; obj(w = 0) = 0 gives NaN, never a division error
    assert optimiser_health(np.ones(2), 0.2, 0.8, None, np.array([1.0]), None).objective_ratio == 0.25
    assert np.isnan(optimiser_health(np.ones(2), 0.0, 0.0, None, np.array([1.0]), None).objective_ratio)
    with pytest.raises(Exception):  # frozen
        h.slack = 0.0


def test_stayed_at_zero_needs_both_the_objective_and_the_scores():
    assert OptimiserHealth(1.0, 1.0, 1.0, 1e-9, 1e-4).stayed_at_zero
    assert not OptimiserHealth(1.0, 1.0, 1.0, 0.1, 0.5).stayed_at_zero  # a w that ranks, at an unmoved objective
    assert not OptimiserHealth(0.5, 1.0, 0.6, 1e-9, 1e-4).stayed_at_zero  # small scores, moved objective


def test_latent_ssvm_health_is_eq_4_at_its_weights_and_at_0(ds):
    from structrank.learners.ssvm import latent_objective

    model, _ = _fit(LatentSSVMRanker(C=10.0), ds)
    h = model.health_
    X, y, offsets = _informative(ds)
    loss = model.loss_
    zero = np.zeros(y.size)
    from structrank.learners.latent import _FixedTruth

    at_zero = latent_objective(np.zeros(X.shape[1]), zero, _FixedTruth(loss, loss.star(zero, y, offsets), None), y,
                               offsets, 10.0)
    assert h.zero_slack == pytest.approx(at_zero / 10.0, rel=1e-12)
    assert h.w_norm2 == pytest.approx(float(model.coef_ @ model.coef_))
    assert h.objective_ratio < 1 and not h.stayed_at_zero


@pytest.mark.parametrize("params", [{}, {"inference": "none"}, {"loss": "ndcg"}])
def test_perceptron_health_is_its_hinge_against_w_0(ds, params):
    model, _ = _fit(LatentPerceptronRanker(max_epochs=5, **params), ds)
    h = model.health_
    X, y, offsets = _informative(ds)
    loss = model.loss_
    _, delta = loss.batch(np.zeros(y.size), y, offsets)  # zero scores: every ranking's w.Psi is 0
    assert h.zero_slack == pytest.approx(delta.mean(), rel=1e-12)
    assert h.objective_ratio == pytest.approx(h.slack / h.zero_slack, rel=1e-12)
    assert h.w_norm2 == pytest.approx(float(model.coef_ @ model.coef_))
    assert h.slack < h.zero_slack and not h.stayed_at_zero


def test_the_sharded_perceptron_records_the_same_health_kind(ds):
    model, _ = _fit(LatentPerceptronRanker(max_epochs=3, n_jobs=2, shard_rows=60), ds)
    assert model.health_.zero_slack > 0 and model.health_.w_norm2 == pytest.approx(float(model.coef_ @ model.coef_))


@pytest.mark.parametrize("params, cure", [({"loss": "mrr"}, "target='latent' (svm-mrr)"),
                                          ({"loss": "ndcg", "loss_params": {"feature_map": "dorm"}}, "target='latent' (dorm)"),
                                          ({"loss": "ndcg"}, "loss_params={'feature_map': 'dorm'} with target='latent' (svm-ndcg)"),
                                          ({"loss": "map"}, "a larger C")])
def test_a_fit_that_stays_at_w_0_warns_once_naming_cause_and_cure(ds, params, cure):
    # the paper's formulation (target "auto" answers a stay at w = 0 by the latent target: tests/library/test_short_name_defaults)
    model, said = _fit(StructSVMRanker(C=TINY_C, target="ideal", **params), ds)
    assert model.health_.stayed_at_zero
    assert len(said) == 1, [str(w.message) for w in said]
    text = str(said[0].message)
    assert "\n" not in text and "stayed at w = 0" in text and cure in text, text
    assert text.startswith(f"StructSVMRanker(loss={params['loss']!r}")
    assert said[0].filename == __file__  # points at the caller's fit


def test_a_healthy_fit_does_not_warn(ds):
    for model in (StructSVMRanker(loss="map", C=10.0), StructSVMRanker(loss="mrr", target="latent", C=10.0),
                  LatentSSVMRanker(C=10.0), LatentPerceptronRanker(max_epochs=3)):
        _, said = _fit(model, ds)
        assert not said, [str(w.message) for w in said]


def test_grid_search_warns_about_the_chosen_point_only(ds):
    train, vali = ds.take_queries(np.arange(16)), ds.take_queries(np.arange(16, 24))
    spec = get_model("svm-mrr-ideal")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model, params, _ = select_on_vali(spec, train, vali, grid={"C": [TINY_C, 1.0]})
    said = [w for w in caught if issubclass(w.category, StayedAtZeroWarning)]
    assert len(said) == (1 if model.health_.stayed_at_zero else 0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        select_on_vali(spec, train, vali, grid={"C": [TINY_C]})
    assert [issubclass(w.category, StayedAtZeroWarning) for w in caught].count(True) == 1


def test_cli_train_prints_the_health_line_and_one_warning_line(ds, tmp_path, capsys):
    path = tmp_path / "train.txt"
    write_letor(path, ds)
    with pytest.warns(StayedAtZeroWarning) as said:
        assert main(["train", "svm-mrr-ideal", "--train", str(path), "--set", f"C={TINY_C}", "--out",
                     str(tmp_path / "m.npz")]) == 0
    err = capsys.readouterr().err
    assert "optimiser health: slack" in err and "obj/obj(w=0) 1.0000" in err
    line = _one_line_warning(said[0].message, said[0].category, "", 0)
    assert line.startswith("structrank: StayedAtZeroWarning: StructSVMRanker(loss='mrr', target='ideal'")
    assert line.count("\n") == 1 and "svm-mrr" in line
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a healthy fit says its health and nothing else
        assert main(["train", "svm-map", "--train", str(path), "--set", "C=10", "--out", str(tmp_path / "h.npz")]) == 0
    assert "optimiser health: slack" in capsys.readouterr().err


def test_cli_train_warning_is_one_line_on_stderr(ds, tmp_path):
    path = tmp_path / "train.txt"
    write_letor(path, ds)
    done = subprocess.run([sys.executable, "-m", "structrank", "train", "svm-mrr-ideal", "--train", str(path), "--set",
                           f"C={TINY_C}", "--out", str(tmp_path / "m.npz")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if "Warning" in line]
    assert len(lines) == 1 and lines[0].startswith("structrank: StayedAtZeroWarning: ") and "stayed at w = 0" in lines[0]


def test_predict_warns_when_every_score_ties(ds, tmp_path, capsys):
    model = StructSVMRanker(loss="map", C=10.0).fit(ds)
    with pytest.warns(DegenerateDataWarning, match=r"StructSVMRanker.predict: all 12 scores are equal"):
        model.predict(np.repeat(ds.X[:1], 12, axis=0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.predict(ds.X)  # scores that differ: nothing to say
    # structrank predict: scores that tie within every query, though not across queries
    model.coef_ = np.eye(ds.X.shape[1])[0]
    X = np.repeat(ds.X[::12], 12, axis=0)  # every query's rows alike, queries apart
    data = tmp_path / "same.txt"
    write_letor(data, ds.with_X(X))
    from structrank.model_io import save_model

    save_model(model, tmp_path / "m.npz")
    with pytest.warns(DegenerateDataWarning, match="tie within every one of the 24 queries"):
        assert main(["predict", "--model", str(tmp_path / "m.npz"), "--data", str(data), "--out",
                     str(tmp_path / "s.txt")]) == 0


def test_short_names_train_the_formulation_that_learns_and_the_papers_stay_one_name_away():
    short = {name: MODELS[name].make() for name in ("svm-mrr", "svm-ndcg", "dorm")}
    assert all(m.target == "auto" for m in short.values())  # the paper's, the latent target where it stays at w = 0
    assert short["svm-ndcg"].loss_params is None and short["dorm"].loss_params["feature_map"] == "dorm"
    ideal = {name: MODELS[name].make() for name in ("svm-mrr-ideal", "svm-ndcg-ideal", "dorm-ideal")}
    assert all(m.target == "ideal" for m in ideal.values())
    assert ideal["svm-ndcg-ideal"].loss == "ndcg" and ideal["svm-ndcg-ideal"].loss_params is None
    assert ideal["dorm-ideal"].loss_params["feature_map"] == "dorm" and ideal["svm-mrr-ideal"].loss == "mrr"
    latent = {name: MODELS[name].make() for name in ("svm-mrr-latent", "svm-ndcg-latent", "dorm-latent")}
    assert all(m.target == "latent" for m in latent.values())
    # the help text comes from the registry: each short name says what it trains
    assert "target 'auto'" in MODELS["svm-mrr"].help and "target 'auto'" in MODELS["svm-ndcg"].help
    assert "target 'auto'" in MODELS["dorm"].help and "ideal target" in MODELS["svm-ndcg-ideal"].help


def test_train_help_lists_the_ideal_names(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    out = capsys.readouterr().out
    for name in ("svm-mrr-ideal", "svm-ndcg-ideal", "dorm-ideal"):
        assert name in out


def test_the_reproductions_train_the_literal_formulations():
    from structrank_lab.experiments import any_scorer, own_metric
    from structrank_lab.experiments.chakrabarti2008.design import ROWS, SWEEP
    from structrank_lab.experiments.croce2016.design import LETOR_ROWS
    from structrank.learners.mlp import linear_model_name

    assert ROWS["NDCG"][0] == "svm-ndcg-ideal" and ROWS["MRR"][0] == "svm-mrr-ideal"
    assert ROWS["DORM"][0] == "dorm-ideal" and SWEEP["MRR"] == "svm-mrr-ideal"
    assert own_metric.MODELS["SVM-ndcg"][0] == "svm-ndcg-ideal" and own_metric.MODELS["DORM sparse"][0] == "dorm-ideal"
    assert any_scorer.LINEAR["ndcg"] == "svm-ndcg-ideal" and LETOR_ROWS["SVM-ndcg"] == "svm-ndcg-ideal"
    assert linear_model_name("ndcg") == "svm-ndcg-ideal" and linear_model_name("map") == "svm-map"


def test_a_letor_cache_fit_records_the_in_memory_health(tmp_path):
    """Shard by shard on a memory-mapped file, the health reads as on the same rows read in memory."""
    from structrank.data import open_letor_cache, read_letor

    path = tmp_path / "train.txt"
    write_letor(path, make_ranking_dataset(n_queries=40, no_relevant_fraction=0.2, random_state=0))
    cache, read = open_letor_cache(path), read_letor(path, dtype=np.float32)  # the cache holds float32 values
    # one shard: the cache perceptron is Alg. 1 as in memory (several mix their weights: another model)
    for make, rows in ((lambda **kw: LatentPerceptronRanker(C=10.0, max_epochs=3, **kw), 10**9),
                       (lambda **kw: StructSVMRanker(loss="map", C=10.0, **kw), 100)):
        mapped, memory = make(shard_rows=rows).fit(cache).health_, make().fit(read).health_
        for field in ("slack", "zero_slack", "objective_ratio", "w_norm2", "score_range"):
            assert getattr(mapped, field) == pytest.approx(getattr(memory, field), rel=1e-6), field
