"""A loss declares its options once and every learner takes them the same way (issue 39, point 2).

- ``loss_params`` is checked against the loss's declared options before any data is read (what shows only in
  the built loss, such as an option its feature map does not read, when a fit builds it on the labels), in the
  words of the learners' own parameters;
- a loss with an option no learner knows trains through ``--set loss_params=...`` on its svm-, lsp-,
  gbrt- and mlp- models, with nothing in ``structrank.learners`` naming it (a toy loss, registered
  in a child process from a module outside the package);
- a loss option given flat is refused (in Python and on the command line), and model files that hold them flat load;
- a fit builds its loss once (``loss_``): the registry's builds are counted.
"""

import json
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
from structrank.constraints import InvalidParameterError

from structrank.data import make_ranking_dataset, write_letor
from structrank.learners import (LatentPerceptronRanker, LatentSSVMRanker, MLPRanker, StructSVMRanker,
                                 StructuredBoostingRanker)
from structrank.learners.score_loss import ScoreLoss
from structrank.losses import registry
from structrank.archive import read_archive, write_archive
from structrank.model_io import FORMAT_NAME, FORMAT_VERSION, load_model, save_model

DS = make_ranking_dataset(n_queries=20, n_features=5, random_state=0)

#: a hinge with an option ``alpha`` that no learner knows: MAP's, its loss Delta scaled by alpha
TOY = textwrap.dedent('''
    from dataclasses import dataclass
    from numbers import Real

    import numpy as np

    from structrank.constraints import Number
    from structrank.losses import RankingLoss, get_loss, register


    @dataclass(frozen=True)
    class ScaledAP(RankingLoss):
        alpha: float = 1.0
        relevant_from: int = 1

        name = "toy"
        feature_map = "po"
        metrics = ("map",)

        def batch(self, scores, labels, offsets, out=None):
            coef, delta = get_loss("map", relevant_from=self.relevant_from).batch(scores, labels, offsets, out)
            return coef, self.alpha * delta

        def star(self, scores, labels, offsets):
            return get_loss("map", relevant_from=self.relevant_from).star(scores, labels, offsets)


    @register("toy", "alpha times 1 - AP (a test's toy loss)", constraints={"alpha": [Number(Real, 0, None, closed="neither")]})
    def toy_loss(alpha=1.0, relevant_from=1):
        return ScaledAP(float(alpha), relevant_from)
''')


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    folder = tmp_path_factory.mktemp("toy")
    (folder / "toy_loss.py").write_text(TOY, encoding="utf-8")
    for name, queries in (("train", range(0, 14)), ("vali", range(14, 20))):
        write_letor(folder / f"{name}.txt", DS.take_queries(np.array(list(queries))))
    return folder


def _train_toy(folder, model, loss_params):
    """``structrank train MODEL --set loss_params=...`` in a process where the toy loss is registered first."""
    code = ("import sys, toy_loss; from structrank.cli import main; sys.exit(main(sys.argv[1:]))")
    args = ["train", model, "--train", str(folder / "train.txt"), "--vali", str(folder / "vali.txt"),
            "--out", str(folder / f"{model}.npz"), "--set", f"loss_params={json.dumps(loss_params)}",
            "--set", "C=1.0" if not model.startswith(("gbrt", "mlp")) else "learning_rate=0.1"]
    if model.startswith("mlp"):
        args += ["--set", "epochs=2"]
    if model.startswith("gbrt"):
        args += ["--set", "n_estimators=3"]
    env = {"PYTHONPATH": f"{folder}:{':'.join(sys.path)}", "PATH": "/usr/bin:/bin"}
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=600)


@pytest.mark.parametrize("model", ["svm-toy", "lsp-toy", "gbrt-toy", "mlp-toy"])
def test_a_loss_with_an_option_no_learner_knows_trains_through_loss_params(toy, model):
    if model.startswith("mlp"):
        pytest.importorskip("torch", reason="mlp-toy trains with PyTorch, the torch extra (pip install 'structrank[torch]')")
    done = _train_toy(toy, model, {"alpha": 0.5})
    assert done.returncode == 0, done.stderr
    params = read_archive(toy / f"{model}.npz", FORMAT_NAME, FORMAT_VERSION)[0]["params"]
    assert params["loss"] == "toy" and params["loss_params"] == {"alpha": 0.5}
    refused = _train_toy(toy, model, {"alpha": -1})
    assert refused.returncode == 2 and "loss_params['alpha'] must be a float in the range (0.0, inf), got -1" in \
        refused.stderr, refused.stderr
    unknown = _train_toy(toy, model, {"beta": 1})
    assert unknown.returncode == 2 and "loss 'toy' takes no option 'beta'; its options: alpha, relevant_from" in \
        unknown.stderr, unknown.stderr


def test_the_toy_loss_reaches_the_learner_with_its_option(toy, monkeypatch):
    """In this process: the option is the built loss's (``loss_``), and changes what is learned."""
    monkeypatch.syspath_prepend(str(toy))
    import toy_loss  # noqa: F401 -- registers "toy"

    try:
        half = StructSVMRanker(loss="toy", loss_params={"alpha": 0.5}, C=1.0).fit(DS)
        assert half.loss_.alpha == 0.5
        whole = StructSVMRanker(loss="toy", C=1.0).fit(DS)
        assert whole.loss_.alpha == 1.0 and not np.allclose(half.coef_, whole.coef_)
    finally:
        registry._ENTRIES.pop("toy")


@pytest.mark.parametrize("cls, params, message", [
    (StructSVMRanker, {"loss": "map", "loss_params": {"k": 5}},
     "loss_params: loss 'map' takes no option 'k'; its options: feature_map, relevant_from, inference, weights, "
     "scale, positions"),
    (StructSVMRanker, {"loss": "ndcg", "loss_params": {"k": 0}},
     "loss_params['k'] must be an int in the range [1, 2147483647], got 0"),
    (StructSVMRanker, {"loss": "ndcg", "loss_params": {"gain": "graded"}},
     "loss_params['gain'] must be a str among"),
    (StructSVMRanker, {"loss": "ndcg", "loss_params": [("k", 5)]}, "loss_params must be an instance of 'dict'"),
    (StructSVMRanker, {"loss": "ndcg", "loss_params": {"feature_map": "mrr"}},
     "loss 'ndcg' has no oracle for feature_map 'mrr'"),
    (LatentPerceptronRanker, {"loss": "map", "loss_params": {"inference": "exact"}},
     "loss_params: 'inference' is set by the learner (its parameter inference)"),
    (StructuredBoostingRanker, {"loss": "crf-kl", "loss_params": {"random_state": 1}},
     "loss_params: 'random_state' is set by the learner (its parameter random_state)"),
    # an option only another feature map reads is refused, not ignored
    (StructSVMRanker, {"loss": "map", "loss_params": {"scale": 5.0}},
     "loss_params['scale']=5.0 would be ignored: loss 'map' reads it only with feature_map 'positional', and this "
     "one runs with 'po'"),
    (MLPRanker, {"loss": "map", "loss_params": {"weights": "log2"}},
     "loss_params['weights']='log2' would be ignored: loss 'map' reads it only with feature_map 'positional'"),
    (StructSVMRanker, {"loss": "ndcg", "loss_params": {"dorm_cut": 30}},
     "loss_params['dorm_cut']=30 would be ignored: loss 'ndcg' reads it only with feature_map 'dorm', and this one "
     "runs with 'po'"),
])
def test_loss_params_are_checked_against_the_loss_before_the_data(cls, params, message):
    with pytest.raises(InvalidParameterError, match=None) as caught:
        cls(**params).fit(DS)
    assert message in str(caught.value), str(caught.value)
    assert str(caught.value).startswith(f"{cls.__name__}: ")


def test_an_option_of_another_feature_map_is_taken_at_its_default_and_with_its_own_map():
    """``map_options`` refuse only a value that would change nothing: the default passes (a model file that
    holds every option does), and the map that reads the option takes it and changes with it."""
    assert StructSVMRanker(loss="map", loss_params={"scale": 1.0}, C=1.0).fit(DS).loss_.label == "map/po"
    assert StructSVMRanker(loss="ndcg", loss_params={"dorm_cut": None}, C=1.0).fit(DS).loss_.feature_map == "po"
    with pytest.raises(ValueError, match=r"options\['scale'\]=5 would be ignored"):
        ScoreLoss.named("map", scale=5)
    y, offsets = np.asarray(DS.y), np.asarray(DS.offsets)
    scores = np.random.default_rng(0).normal(size=y.shape[0])
    one, five = (ScoreLoss.named("map", feature_map="positional", inference="exact", scale=c).bind(y, offsets)(scores)
                 for c in (1, 5))
    assert five[0].sum() > one[0].sum()  # the scaled loss is in the hinge
    dorm = StructSVMRanker(loss="ndcg", loss_params={"feature_map": "dorm", "dorm_cut": 3}, C=1.0).fit(DS)
    assert dorm.loss_.dorm_cut == 3


@pytest.mark.parametrize("cls", [StructSVMRanker, LatentPerceptronRanker, StructuredBoostingRanker])
def test_a_loss_option_given_flat_is_an_unknown_keyword(cls):
    """A loss's options go in loss_params only: ``k=5`` is refused as any unknown keyword is."""
    with pytest.raises(TypeError, match="unexpected keyword argument 'k'"):
        cls(loss="ndcg" if cls is not LatentPerceptronRanker else "map", k=5)


def test_the_command_line_refuses_a_flat_loss_option_with_the_spelling_that_works():
    from structrank.learners.registry import get_model

    with pytest.raises(ValueError, match=r"""svm-ndcg: k is an option of the loss 'ndcg'; give it as --set loss_params='\{"k": 5\}'"""):
        get_model("svm-ndcg").with_loss_params({"k": 5})
    assert get_model("svm-ndcg").with_loss_params({"loss_params": {"k": 5}, "C": 2.0}) == {"loss_params": {"k": 5},
                                                                                          "C": 2.0}


def test_a_model_file_with_flat_loss_options_loads_as_loss_params(tmp_path):
    """A file written before ``loss_params`` (its header holds k, feature_map, ...) loads quietly, through the one
    migration (``migrated_params``): the options its loss takes move into loss_params, the others are dropped."""
    # binary gains: a structural SVM's file keeps no gain_, so an "auto" gain reads as binary after a load
    model = StructSVMRanker(loss="ndcg", loss_params={"k": 5, "feature_map": "dorm", "gain": "binary"}, C=1.0).fit(DS)
    path = tmp_path / "m.npz"
    save_model(model, path)
    header, arrays = read_archive(path, FORMAT_NAME, FORMAT_VERSION)
    old = {k: v for k, v in header["params"].items() if k != "loss_params"}
    old.update(k=5, feature_map="dorm", components=["map"], discount="letor", dorm_cut=None, gain="binary",
               relevant_from=1)
    write_archive(path, {**header, "params": old}, arrays)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loaded = load_model(path)
        assert loaded.loss_params == {"k": 5, "feature_map": "dorm", "discount": "letor", "dorm_cut": None,
                                      "gain": "binary", "relevant_from": 1}
        np.testing.assert_allclose(loaded.predict(DS.X), model.predict(DS.X), rtol=1e-12)
        assert loaded.score(DS) == pytest.approx(model.score(DS), rel=1e-12)


def _builds(monkeypatch):
    """The names of the losses the registry builds from here on (not the components a loss builds inside)."""
    count, depth = [], [0]
    build = registry.LossEntry.build

    def counted(self, **options):
        depth[0] += 1
        try:
            loss = build(self, **options)
        finally:
            depth[0] -= 1
        if depth[0] == 0:
            count.append(self.name)
        return loss

    monkeypatch.setattr(registry.LossEntry, "build", counted)
    return count


@pytest.mark.parametrize("make", [
    lambda: StructSVMRanker(loss="map", C=1.0),
    lambda: StructSVMRanker(loss="ndcg", C=1.0),  # graded labels: the "auto" gain settled at the build
    lambda: StructSVMRanker(loss="ndcg", loss_params={"feature_map": "dorm"}, target="latent", C=1.0, max_outer=2),
    lambda: StructSVMRanker(loss="combo", C=1.0, max_iter=5),
    lambda: LatentPerceptronRanker(max_epochs=3),
    lambda: LatentPerceptronRanker(loss="ndcg", max_epochs=3, dev_metric="ndcg@10"),
    lambda: LatentSSVMRanker(C=1.0, max_outer=2),
    lambda: StructuredBoostingRanker(loss="map", n_estimators=3),
    lambda: StructuredBoostingRanker(loss="ndcg", n_estimators=3, target="latent", smoothing=0.3),
    lambda: StructuredBoostingRanker(loss="crf-kl", n_estimators=3),
], ids=["svm-map", "svm-ndcg", "dorm-latent", "svm-combo", "lsp-ap", "lsp-ndcg", "lssvm-ap", "gbrt-map", "gbrt-ndcg",
        "gbrt-crf-kl"])
def test_a_fit_builds_its_loss_once(monkeypatch, make):
    model = make()
    builds = _builds(monkeypatch)
    fit = model.fit(DS, eval_set=DS) if hasattr(model, "dev_metric") and not isinstance(model, StructSVMRanker) \
        else model.fit(DS)
    fit.score(DS)
    assert builds == [model.loss], builds
    assert model.loss_.name == model.loss


def test_a_network_builds_its_loss_once_and_its_linear_start_its_own(monkeypatch):
    pytest.importorskip("torch", reason="MLPRanker trains with PyTorch, the torch extra (pip install 'structrank[torch]')")
    builds = _builds(monkeypatch)
    MLPRanker(loss="ndcg", epochs=3, batch_queries=4).fit(DS, eval_set=DS).score(DS)
    assert builds == ["ndcg"]  # once, not once per batch (each batch binds the built loss to its labels)
    builds.clear()
    MLPRanker(loss="ndcg", epochs=1, init="linear").fit(DS)
    assert builds == ["ndcg", "ndcg"]  # the network's, and the linear model's fit (svm-ndcg) that starts it


def test_the_torch_module_takes_only_the_options_its_loss_declares():
    pytest.importorskip("torch", reason="structrank.learners.torch_loss needs PyTorch, the torch extra (pip install 'structrank[torch]')")
    from structrank.learners.torch_loss import StructuredRankingLoss

    assert StructuredRankingLoss("ndcg", k=5).spec.loss.label == "ndcg@5/po"
    with pytest.raises(ValueError, match="options: loss 'map' takes no option 'k'; its options: feature_map"):
        StructuredRankingLoss("map", k=5)


def test_the_choice_on_vali_follows_the_loss_params(tmp_path, capsys):
    """A model chosen by its loss's own metric is chosen by the metric of the loss its loss_params build."""
    from structrank.cli import main
    from structrank.learners.registry import MODELS

    assert MODELS["gbrt-precision"].chosen_with({"loss_params": {"k": 3}}).metric == "p@3"
    assert MODELS["svm-ndcg"].chosen_with({"loss_params": {"k": 5}}).metric == "ndcg@5"
    assert MODELS["svm-map"].chosen_with({"C": 1.0}).metric == "map"
    for name, queries in (("train", range(0, 14)), ("vali", range(14, 20))):
        write_letor(tmp_path / f"{name}.txt", DS.take_queries(np.array(list(queries))))
    code = main(["train", "svm-precision", "--train", str(tmp_path / "train.txt"), "--vali", str(tmp_path / "vali.txt"),
                 "--set", 'loss_params={"k": 3}', "--set", "max_iter=5", "--out", str(tmp_path / "m.npz")])
    err = capsys.readouterr().err
    assert code == 0 and "by p@3 under" in err and "vali p@3 =" in err, err
