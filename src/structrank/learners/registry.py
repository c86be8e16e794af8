"""The registry of models: short name -> estimator class, defaults, documented grid and tuning metric.

One table (``MODELS``) that every user reads: ``structrank train`` (its choices and its ``--help``),
model files (``model_io``: a file's class must be one that a registered model trains, see
``ranker_class``), the experiments (``get_model`` and ``select_on_vali``), ``MLPRanker``'s linear start
and ``NystroemRanker``'s inner ranker. A model names its class as a string, resolved through the lazy
``structrank.learners`` package on use, so that listing the models (``train --help``, which reads each
class's constructor from its source) imports no learner's module. ``loss_models()`` gives every
registered loss (``structrank.losses``) its ``svm-``, ``lsp-``, ``gbrt-`` and ``mlp-`` models.

The grids here are general-purpose defaults; a reproduction states its paper's grids itself
(the ``design`` module of each package under ``experiments/``).

What it holds:

- ``MODELS``: name -> the estimator's class name in ``structrank.learners``, its defaults, grid and
  tuning metric; ``loss_models()`` adds ``svm-``/``lsp-``/``gbrt-``/``mlp-<loss>`` for every
  registered loss, and ``losses_page()`` is docs/LOSSES.md;
- ``ModelSpec.make`` refuses values outside the class's declared constraints (``--set C=Infinity``:
  "svm-map: C must be a float in the range (0.0, inf), got inf");
- ``select_on_vali``: the grid's points fitted (over joblib with ``n_jobs``) and chosen on vali;
- ``RANKERS`` / ``ranker_class``: the classes a model file may hold.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import itertools
import json
import textwrap
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path


import structrank.learners
from structrank.losses import HINGE, PROBABILISTIC, entries
from structrank.metrics import evaluate


@dataclass(frozen=True)
class ModelSpec:
    """A registered model: its estimator class, fixed defaults and the grid tuned on --vali."""

    name: str
    estimator: str  # the class's name in structrank.learners, imported when the model is used
    help: str
    defaults: dict = field(default_factory=dict)
    grid: dict = field(default_factory=dict)
    metric: str | tuple = "map"  # the vali metric the grid is tuned on (a tuple: the mean of its metrics)
    fit_with_vali: bool = False  # fit(train, eval_set=vali): the learner picks its epoch on vali itself
    inputs: str = "features"  # what its files hold: "features" (LETOR/SVMlight) or "text" (question, candidate, label)

    @property
    def cls(self) -> type:
        return getattr(structrank.learners, self.estimator)

    @property
    def metric_label(self) -> str:
        return self.metric if isinstance(self.metric, str) else "mean(" + ", ".join(self.metric) + ")"

    def make(self, **params):
        """The estimator with ``params`` over the defaults, every value checked against the class's
        ``_parameter_constraints`` (``structrank train --set`` goes through here before reading data)."""
        # deferred: start-up time, `train` parses with this registry; scikit-learn loads to make a model
        from structrank.constraints import InvalidParameterError

        from structrank.learners.base import parameter_problems

        params = self.with_loss_params(params)
        unknown = set(params) - set(self.cls().get_params(deep=False))
        if unknown:
            raise ValueError(
                f"{self.name} has no parameter {', '.join(sorted(unknown))}; "
                f"its parameters are: {', '.join(sorted(self.cls().get_params(deep=False)))}"
            )
        model = self.cls(**self.over_defaults(params))
        problems = parameter_problems(model)
        if problems:
            raise InvalidParameterError(f"{self.name}: {next(iter(problems.values()))}")
        return model

    def with_loss_params(self, params: dict) -> dict:
        """``params`` checked for where a loss's options go: ``loss_params`` a JSON object, and an option of the
        model's loss given flat (``--set k=5``) refused with the spelling that works."""
        given = params.get("loss_params")
        if given is not None and not isinstance(given, dict):
            raise ValueError(f"{self.name}: loss_params must be a JSON object of the loss's options, got "
                             f"{type(given).__name__} {given!r:.60}")
        loss = _spec_loss(self)
        own = set(constructor_defaults(self.estimator))
        options = set(entries()[loss].options) if loss in entries() else set()
        flat = sorted(name for name in params if name in options and name not in own)
        if flat:
            name = flat[0]
            raise ValueError(f"{self.name}: {name} is an option of the loss {loss!r}; give it as --set "
                             f"loss_params='{{\"{name}\": {json.dumps(params[name])}}}'")
        return params

    def over_defaults(self, params: dict) -> dict:
        """``params`` over the model's defaults; ``loss_params`` joins the model's own (``--set
        loss_params='{"k": 5}'`` on svm-ndcg keeps its phi_dorm)."""
        merged = {**self.defaults, **params}
        if params.get("loss_params") is not None and self.defaults.get("loss_params"):
            merged["loss_params"] = {**self.defaults["loss_params"], **params["loss_params"]}
        return merged

    def parameters(self) -> dict:
        """Every constructor parameter the model is made with (its defaults over the class's), in
        ``get_params``' order, read from the class's source without importing it (see ``constructor_defaults``)."""
        return dict(sorted({**constructor_defaults(self.estimator), **self.defaults}.items()))

    def chosen_with(self, fixed: dict) -> "ModelSpec":
        """The model as ``fixed`` parameters make it, for the choice on vali: a model chosen by its loss's own
        metric is chosen by the metric of its loss as ``fixed`` builds it (``--set loss_params='{"k": 3}'`` on
        gbrt-precision: P@3, not P@10)."""
        loss = _spec_loss(self)
        options = (fixed.get("loss_params") or {}) if loss in entries() else {}
        if not options or "loss" in fixed or self.metric != _loss_metric(entries()[loss], self.loss_options()):
            return self
        metric = _loss_metric(entries()[loss], {**self.loss_options(), **options})
        return replace(self, metric=metric)

    def loss_options(self) -> dict:
        """{option: default} of the options of the model's loss that ``--set loss_params=...`` may set: the
        loss's declared ones without those its learner sets itself, the model's own values over them."""
        loss = _spec_loss(self)
        if loss not in entries():
            return {}
        # the learner's own parameters (a seed, the perceptron's inference) and what it declares it sets (a scale)
        own = set(constructor_defaults(self.estimator))
        set_by = own | set(_class_literal(self.estimator, "_loss_set_by") or {})
        options = {name: value for name, value in entries()[loss].defaults.items() if name not in set_by}
        return {**options, **(self.defaults.get("loss_params") or {})}

    def candidates(self, fixed: dict, grid: dict | None = None):
        """Every grid point (of ``grid``, the model's own by default), ``fixed`` parameters held."""
        free = {k: v for k, v in (self.grid if grid is None else grid).items() if k not in fixed}
        keys = sorted(free)
        for values in itertools.product(*(free[k] for k in keys)):
            yield {**dict(zip(keys, values)), **fixed}


# The documented grids and defaults: general-purpose, for `structrank train --vali` and the experiments of
# structrank's own (own-metric, any-scorer); a reproduction states the grids of its paper itself.
#
# The structural SVM's C. phi_po is scaled by 1/(n+ n-) and phi_dorm by its decay; phi_mrr (a count of documents)
# is not, so the same C means a much weaker regulariser for it: its grid is lower. A latent target only counts the
# top of the list, so a useful w is larger for the same slack: its grid is higher (chakrabarti2008's runs).
SSVM_C_GRID = [0.001, 0.01, 0.1, 1.0, 10.0, 100.0]
MRR_C_GRID = [1e-5, 1e-4, 0.001, 0.01, 0.1]
LATENT_TARGET_C_GRID = [0.01, 0.1, 1.0, 10.0, 100.0, 1000.0]
# The latent MAP models' C (loss scaling for LSP, regulariser for LSSVM): Haponchyk & Moschitti's (2018) range
LATENT_AP_C_GRID = [1.0, 10.0, 100.0, 1000.0, 2000.0, 5000.0]
# The short names (svm-ndcg, svm-mrr, dorm) train the class's default, target="auto" (StructSVMRanker says the rule):
# the paper's formulation, and the latent target when that fit stays at w = 0 (with the ideal target the hinge of
# NDCG@k and MRR@k is lowest at w = 0 on OHSUMED's long lists at every C; on graded lists it learns). Their C grid is
# both formulations' (the latent target's is higher). The papers' literal formulations are the -ideal names, which
# the reproductions train, and the -latent names hold the latent target whatever happens.
AUTO_C_GRID = sorted(set(SSVM_C_GRID) | set(LATENT_TARGET_C_GRID))
AUTO_MRR_C_GRID = sorted(set(MRR_C_GRID) | set(LATENT_TARGET_C_GRID))
DORM = {"loss_params": {"feature_map": "dorm"}}
DORM_LATENT = {**DORM, "target": "latent"}
IDEAL = {"target": "ideal"}
# Permutation CRFs: the learning rate, CRF-LA's loss weight alpha and CRF-KL's temperature T over the ranges of
# Volkovs et al. (2011, Sec. 6.2), tuned on the mean of NDCG@1-5 as they tune
CRF_RATE_GRID = [0.5, 0.1, 0.01, 0.001]
CRF_ALPHA_GRID = [1.0, 10.0, 20.0, 50.0]
CRF_T_GRID = [1.0, 10.0, 20.0, 50.0]
CRF_METRIC = ("ndcg@1", "ndcg@2", "ndcg@3", "ndcg@4", "ndcg@5")
# Boosted trees on a structured loss: LambdaMART's grid (the same tree budget, 100 rounds)
GBRT_GRID = {"learning_rate": [0.05, 0.1], "num_leaves": [15, 31]}
# The options an xenc model sets beyond its loss (none: each trains its loss as registered). xenc-map keeps phi_po's
# exact hinge: LSP-AP's positional map with the exact search passed the one-point dev rule on WikiQA but not over the
# dev sets of the three QA data sets (benchmarks/xenc_map_smoothing.py --store, docs/XENC_MAP_SMOOTHING.md)
XENC_DEFAULTS: dict = {}
# The perceptron on another loss: its loss scaling C (the argmax at the scores divided by C)
LSP_C_GRID = [0.1, 1.0, 10.0]
# Neural scorers: Adam's step and the hidden layer
MLP_GRID = {"learning_rate": [1e-3, 1e-2], "hidden_layer_sizes": [(16,), (64,)]}

MODELS = {
    spec.name: spec
    for spec in (
        ModelSpec("linreg", "LinearRegressionRanker", "pointwise least-squares regression of the labels",
                  {"alpha": 0.0}, {"alpha": [0.0, 0.1, 1.0, 10.0]}),
        ModelSpec("ranksvm", "RankSVM", "pairwise RankSVM (Joachims 2002) with liblinear",
                  {"C": 1.0}, {"C": [0.001, 0.01, 0.1, 1.0, 10.0]}),
        ModelSpec("svc-poly", "PolySVCRanker", "SVM classifier, polynomial kernel of degree 3, first 10 documents per "
                  "training query (the SVM baseline of Haponchyk & Moschitti 2018)", {}, {"C": [0.01, 0.1, 1.0, 10.0]}),
        ModelSpec("mcrank", "McRank", "McRank (Li et al. 2007): LightGBM multiclass grades, expected relevance",
                  {}, {"num_leaves": [7, 31], "min_child_samples": [5, 20]}, metric="ndcg@10"),
        ModelSpec("lambdamart", "LambdaMARTRanker", "LambdaMART with LightGBM's lambdarank objective",
                  {}, {"learning_rate": [0.05, 0.1], "num_leaves": [15, 31]}, metric="ndcg@10"),
        *(
            ModelSpec(name, "StructSVMRanker", help, {"loss": loss, **extra}, {"C": c_grid}, metric=metric)
            for name, loss, extra, c_grid, metric, help in (
                ("svm-auc", "auc", {}, SSVM_C_GRID, "map", "structural SVM for AUC with phi_po (Joachims 2005)"),
                ("svm-map", "map", {}, SSVM_C_GRID, "map", "structural SVM for MAP with phi_po (Yue et al. 2007)"),
                ("svm-ndcg", "ndcg", {}, AUTO_C_GRID, "ndcg@10",
                 "structural SVM for NDCG@k, target 'auto': phi_po and the ideal target (the paper's), phi_dorm and "
                 "the latent target when that fit stays at w = 0"),
                ("svm-ndcg-ideal", "ndcg", IDEAL, SSVM_C_GRID, "ndcg@10",
                 "structural SVM for NDCG@k with phi_po and the ideal target (Chakrabarti et al. 2008)"),
                ("svm-ndcg-nc", "ndcg-nc", {}, SSVM_C_GRID, "ndcg@10",
                 "structural SVM for NDCG without cut-off, phi_po"),
                ("svm-mrr", "mrr", {}, AUTO_MRR_C_GRID, "mrr@10",
                 "structural SVM for MRR@k with phi_mrr, target 'auto': the ideal target (the paper's), the latent "
                 "target when that fit stays at w = 0"),
                ("svm-mrr-ideal", "mrr", IDEAL, MRR_C_GRID, "mrr@10",
                 "structural SVM for MRR@k with phi_mrr and the ideal target (Chakrabarti et al. 2008)"),
                ("svm-ndcg-latent", "ndcg", {"target": "latent"}, LATENT_TARGET_C_GRID, "ndcg@10",
                 "SVM-ndcg held to the best loss-zero ranking under w (latent target, CCCP)"),
                ("svm-mrr-latent", "mrr", {"target": "latent"}, LATENT_TARGET_C_GRID, "mrr@10",
                 "SVM-mrr with phi_mrr, its first good document the best-scoring one (latent target, CCCP)"),
                ("dorm", "ndcg", DORM, AUTO_C_GRID, "ndcg@10",
                 "DORM (Le & Smola 2008): NDCG@k with phi_dorm, target 'auto': the ideal target (the literal DORM), "
                 "the latent target when that fit stays at w = 0"),
                ("dorm-ideal", "ndcg", {**DORM, **IDEAL}, SSVM_C_GRID, "ndcg@10",
                 "DORM (Le & Smola 2008): NDCG@k with phi_dorm and the ideal target, an assignment problem"),
                ("dorm-latent", "ndcg", DORM_LATENT, LATENT_TARGET_C_GRID, "ndcg@10",
                 "DORM held to the best loss-zero ranking under w (latent target, CCCP)"),
                ("svm-combo", "combo", {}, SSVM_C_GRID, "map",
                 "SVM-combo: MAP, NDCG@k, NDCG-nc and MRR@k with separate slacks (Chakrabarti et al. 2008)"),
            )
        ),
        ModelSpec("lsp", "LatentPerceptronRanker", "latent structured perceptron without loss, epoch chosen on vali "
                  "(LSP; Haponchyk & Moschitti 2018)", {"inference": "none"}, fit_with_vali=True),
        *(
            ModelSpec(name, cls, help, {"inference": inference}, {"C": LATENT_AP_C_GRID},
                      fit_with_vali=cls == "LatentPerceptronRanker")
            for name, cls, inference, help in (
                ("lsp-ap", "LatentPerceptronRanker", "greedy",
                 "latent structured perceptron for MAP, greedy inference, epoch chosen on vali (LSP-AP)"),
                ("lsp-ap-exact", "LatentPerceptronRanker", "exact",
                 "latent structured perceptron for MAP, exact interleaving search (LSP-AP*)"),
                ("lssvm-ap", "LatentSSVMRanker", "greedy", "latent structural SVM for MAP, greedy inference (LSSVM-AP)"),
                ("lssvm-ap-exact", "LatentSSVMRanker", "exact",
                 "latent structural SVM for MAP, exact interleaving search (LSSVM-AP*)"),
            )
        ),
        *(
            ModelSpec(f"crf-{objective}", "PermutationCRFRanker", help, {"objective": objective},
                      {"learning_rate": CRF_RATE_GRID, **extra}, metric=CRF_METRIC, fit_with_vali=True)
            for objective, extra, help in (
                ("ml", {}, "permutation CRF, maximum likelihood over all zero-loss rankings (Volkovs et al. 2011)"),
                ("la", {"alpha": CRF_ALPHA_GRID}, "permutation CRF, loss-augmented likelihood, 1 - NDCG"),
                ("ml-sum", {}, "crf-ml with Eq. 10's sum over the zero-loss rankings where crf-ml takes their mean"),
                ("la-sum", {"alpha": CRF_ALPHA_GRID}, "crf-la with Eq. 10's sum over the zero-loss rankings"),
                ("ls", {}, "permutation CRF, loss-scaled likelihood (slack-scaling analogue), 1 - NDCG"),
                ("el", {}, "permutation CRF, expected loss 1 - NDCG"),
                ("kl", {"T": CRF_T_GRID}, "permutation CRF, loss-inspired KL to q(y) ~ exp(-(1 - NDCG)/T)"),
            )
        ),
    )
}


def _loss_metric(entry, options=None):
    """The vali metric of a loss's models: its own under ``options`` (the mean of several), the CRF's NDCG@1-5 as
    Volkovs et al."""
    if entry.kind == PROBABILISTIC:
        return CRF_METRIC
    metrics = entry.build(**(options or {})).metrics
    return metrics[0] if len(metrics) == 1 else metrics


def loss_models() -> list:
    """The models every registered loss gets (``structrank.losses``): boosted trees (``gbrt-<loss>``)
    and a network (``mlp-<loss>``) for every loss; for a hinge without a paper's model of its own,
    the structural SVM (``svm-<loss>``) and the perceptron (``lsp-<loss>``) too. A new loss file
    therefore appears here, in ``structrank train --help`` and in the generated docs."""
    specs = []
    for name, entry in entries().items():
        metric = _loss_metric(entry)
        metrics = (metric,) if isinstance(metric, str) else tuple(metric)
        # where the grid's vali metric is not the loss's own (the CRF objectives: NDCG@1-5 against NDCG@5),
        # the trees' rounds and the network's epochs are chosen by the grid's metric too: one criterion
        dev = {} if metrics == tuple(entry.build().scoring()[0]) else {"dev_metric": ",".join(metrics)}
        if entry.kind == HINGE and f"svm-{name}" not in MODELS:
            specs.append(ModelSpec(f"svm-{name}", "StructSVMRanker", f"structural SVM on {entry.summary}",
                                   {"loss": name}, {"C": SSVM_C_GRID}, metric=metric))
        if entry.kind == HINGE and name != "map" and f"lsp-{name}" not in MODELS:
            specs.append(ModelSpec(f"lsp-{name}", "LatentPerceptronRanker", f"averaged structured perceptron (Alg. 1 of "
                                   f"Haponchyk & Moschitti 2018) on {entry.summary}, epoch chosen on vali",
                                   {"loss": name, "dev_metric": metric if isinstance(metric, str) else ",".join(metric)},
                                   {"C": LSP_C_GRID}, metric=metric, fit_with_vali=True))
        specs.append(ModelSpec(f"gbrt-{name}", "StructuredBoostingRanker", f"gradient-boosted trees (LightGBM) on "
                               f"{entry.summary}; the eval metric recorded per round on --vali",
                               {"loss": name, **dev}, GBRT_GRID, metric=metric,
                               fit_with_vali=True))
        specs.append(ModelSpec(f"mlp-{name}", "MLPRanker", f"a ReLU network (PyTorch, the torch extra) on {entry.summary}, "
                               "Adam, started at the linear learner of the loss, the epoch chosen on --vali",
                               {"loss": name, "init": "linear", **dev}, MLP_GRID, metric=metric,
                               fit_with_vali=True))
        specs.append(cross_encoder_model(name, entry.summary, metric))
    return specs


def cross_encoder_model(loss, summary, metric) -> ModelSpec:
    """``xenc-<loss>``: a cross-encoder fine-tuned on the loss, on text files (the epoch kept on --vali by the
    loss's own metric; no grid: each point is a fine-tuning run)."""
    return ModelSpec(f"xenc-{loss}", "CrossEncoderRanker", f"a cross-encoder (a transformer over each question-"
                     f"candidate pair; the text extra) fine-tuned on {summary}, the epoch chosen on --vali",
                     {"loss": loss, **XENC_DEFAULTS.get(loss, {})}, {}, metric=metric, fit_with_vali=True,
                     inputs="text")


MODELS.update((spec.name, spec) for spec in loss_models())
# sentence-transformers' own cross-encoder losses, trained by the same trainer, as baselines of the structured ones
MODELS.update((f"xenc-{loss}", replace(cross_encoder_model(loss, summary, "map"), help=(
    f"{summary}: a cross-encoder (the text extra) fine-tuned on it, the epoch chosen on --vali by MAP")))
    for loss, summary in (("bce", "sentence-transformers' BinaryCrossEntropyLoss (pointwise, on the same pairs)"),
                          ("ranknet", "sentence-transformers' RankNetLoss (pairwise logistic)"),
                          ("listnet", "sentence-transformers' ListNetLoss (listwise softmax cross-entropy)"),
                          ("lambdaloss", "sentence-transformers' LambdaLoss (NDCGLoss2++ weighting)")))
# A kernelised structured ranker (croce2016's section on MQ2008): Nyström RBF features, 500 landmarks, then SVM-<loss>
MODELS.update((f"nystroem-svm-{loss}", ModelSpec(
    f"nystroem-svm-{loss}", "NystroemRanker", f"SVM-{loss} on a Nyström RBF embedding (500 landmarks, gamma = 1 / number "
    "of features; Croce et al. 2016); saved as landmarks, normalisation and weights",
    {"ranker": "StructSVMRanker", "ranker_params": {"loss": loss}},
    {"ranker_params": [{"loss": loss, "C": c} for c in (0.01, 0.1, 1.0, 10.0)]}, metric=metric))
    for loss, metric in (("map", "map"), ("ndcg", "ndcg@10")))


#: the classes a model file may hold: those a registered model trains (the n-best rerankers, LowDimReranker and
#: BoostingReranker, take NBestData rather than (X, y, qid) and have no model files)
RANKERS = tuple(dict.fromkeys(spec.estimator for spec in MODELS.values()))
#: the models on LETOR/SVMlight features and their classes; the others read text (``inputs="text"``: question,
#: candidate, label) and save model folders (``structrank.cross_encoder_models``)
FEATURE_MODELS = {name: spec for name, spec in MODELS.items() if spec.inputs == "features"}
FEATURE_RANKERS = tuple(dict.fromkeys(spec.estimator for spec in FEATURE_MODELS.values()))


def ranker_class(name):
    """The class named ``name`` if it is one of ``RANKERS``, else None. Model files are loaded and saved
    through here, so that only these classes are ever built from a file."""
    if not isinstance(name, str) or name not in RANKERS:
        return None

    return getattr(structrank.learners, name)


def ranker_classes() -> dict:
    """{class name: class} of ``RANKERS`` (imports every learner's module)."""
    return {name: ranker_class(name) for name in RANKERS}


# -- a class's constructor, read from its source ----------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _source(module: str):
    """(syntax tree, is a package) of a module, read from its file: nothing is imported but its parents."""
    spec = importlib.util.find_spec(module)
    return ast.parse(Path(spec.origin).read_text(encoding="utf-8")), spec.submodule_search_locations is not None


def _bound_value(module: str, name: str, depth: int = 0):
    """The literal that ``module`` binds to ``name`` at its top level (the last binding), following
    ``NAME = OTHER`` and ``from M import NAME``; LookupError when it is not a literal."""
    if depth > 8:
        raise LookupError(f"{module}.{name}: too many indirections")
    tree, is_package = _source(module)
    for node in reversed(tree.body):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return _literal(node.value, module, depth)
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name \
                and node.value is not None:
            return _literal(node.value, module, depth)
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if (alias.asname or alias.name) == name:
                    package = module.split(".") if is_package else module.split(".")[:-1]
                    base = ".".join(package[: len(package) - node.level + 1]) if node.level else ""
                    source = ".".join(part for part in (base, node.module) if part)
                    return _bound_value(source, alias.name, depth + 1)
    raise LookupError(f"{module} binds no {name} at its top level")


def _literal(node, module: str, depth: int):
    if isinstance(node, ast.Name):
        return _bound_value(module, node.id, depth + 1)
    return ast.literal_eval(node)


@functools.lru_cache(maxsize=None)
def constructor_defaults(class_name: str) -> dict:
    """{parameter: default} of a learner's ``__init__``, sorted by name as ``get_params`` lists them.

    Read from the class's module's source (``ast``): a default is a literal or a name bound to one
    (``DEFAULT_COMBO``, imported from ``structrank.losses.combo``, is followed there), so that
    ``structrank train --help`` lists every model's parameters without importing scikit-learn, LightGBM
    or PyTorch. A constructor this cannot read is imported instead (a test checks that none is)."""
    module = structrank.learners.module_of(class_name)
    try:
        tree, _ = _source(module)
        cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name)
        init = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
        args = init.args
        positional = [*args.posonlyargs, *args.args][1:]  # without self
        defaults = dict(zip([a.arg for a in positional[len(positional) - len(args.defaults):]], args.defaults))
        defaults.update((a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None)
        names = [a.arg for a in (*positional, *args.kwonlyargs)]
        if args.vararg or args.kwarg or set(names) != set(defaults):
            raise LookupError(f"{class_name}.__init__ has a parameter without a default")
        return {name: _literal(defaults[name], module, 0) for name in sorted(names)}
    except (LookupError, StopIteration, ValueError, TypeError, SyntaxError, OSError):
        return dict(sorted(getattr(structrank.learners, class_name)().get_params(deep=False).items()))


# -- the losses page and the choice on vali ----------------------------------------------------------------------


def _spec_loss(spec):
    """The registered loss a command-line model trains on (None for the baselines); nothing is imported."""
    if spec.estimator == "PermutationCRFRanker":
        return f"crf-{spec.parameters().get('objective')}"
    return spec.parameters().get("loss")


def trained_loss(spec):
    """The name of the registered loss a model trains on, also through an inner ranker (``nystroem-svm-map``),
    or None (the baselines); nothing is imported."""
    name = _spec_loss(spec) or (spec.defaults.get("ranker_params") or {}).get("loss")
    return name if name in entries() else None  # RankSVM's loss="hinge" is liblinear's, no registered one


def models_by_loss() -> dict:
    """{registered loss name: [its command-line models]} for every loss (registry order), then
    ``None``: the models that train on no registered loss (the baselines, LambdaMART, ...)."""
    table = {name: [] for name in entries()}
    for model, spec in MODELS.items():
        table.setdefault(trained_loss(spec), []).append(model)
    return table


def readme_table() -> str:
    """The README's table of losses and models (between its ``registry-table`` markers): every
    registered loss with its kind, the metric it stands for and the command-line models that train
    on it, and a last row of the models that train on no registered loss. Generated from the two
    registries by ``python tools/readme_table.py`` (tests/library/test_readme.py keeps the README equal to it)."""
    lines = ["| loss | kind | stands for | command-line models |", "|---|---|---|---|"]
    for name, models in models_by_loss().items():
        if name is None:
            lines.append(f"| none | | | {', '.join(f'`{m}`' for m in models)} |")
            continue
        entry = entries()[name]
        lines.append(f"| `{name}` | {entry.kind} | {', '.join(entry.build().metrics)} | "
                     f"{', '.join(f'`{m}`' for m in models)} |")
    return "\n".join(lines) + "\n"


def losses_page() -> str:
    """docs/LOSSES.md: every registered loss (``structrank.losses``) with its options, the metric it
    stands for, and the command-line models that train on it, generated from the registry."""
    from structrank.learners.structured_boosting import LATENT_NDCG_SMOOTHING  # deferred: the trees' module
    lines = ["# Ranking losses", "",
             "<!-- Generated by `structrank losses --out docs/LOSSES.md` from the loss registry; do not edit by hand. -->",
             "", "Every loss below is one module of `structrank.losses` registered at import. A hinge has a "
             "max-violating structure (the structural SVM, the perceptron and the latent SVM train on it); a "
             "probabilistic objective gives a value and a gradient only. Every loss trains boosted trees "
             "(`gbrt-<loss>`) and networks (`mlp-<loss>`) through its gradient with respect to the scores. An option "
             "followed by feature maps in parentheses is read only with them; given another value with another map, "
             "it is refused rather than ignored.", "",
             "| loss | kind | feature maps | options (`loss_params`, defaults) | stands for (defaults) | labels | from | models | "
             "what it is |",
             "|---" * 9 + "|"]
    for name, entry in entries().items():
        loss = entry.build()
        models = ", ".join(f"`{m}`" for m in models_by_loss()[name])
        only = dict(entry.map_options)  # options one feature map reads: "(positional)" after them
        options = ", ".join(f"`{o}={d!r}`" + (f" ({', '.join(only[o])})" if o in only else "")
                            for o, d in entry.defaults.items()) or "none"
        lines.append(f"| `{name}` | {entry.kind} | {', '.join(entry.feature_maps)} | {options} | "
                     f"{', '.join(loss.metrics)} ({loss.convention}) | {loss.labels} | {entry.paper or 'structrank'} | "
                     f"{models} | {entry.summary} |")
    lines += ["", "## One default formulation", "",
              "A structural SVM's default target is `target='auto'`, one rule for every hinge, the same for the class "
              "(`StructSVMRanker(loss=...)`) and its short name (`svm-<loss>`, `dorm`): fit the paper's formulation, "
              "the ideal target (every good document above every bad one); when that fit stays at w = 0 "
              "(`health_.stayed_at_zero`: its objective that of w = 0) and the loss has a latent target (NDCG@k, "
              "MRR@k, the clipped losses), fit the latent target instead (the best loss-zero ranking under w, CCCP), "
              "NDCG@k with phi_dorm unless a feature map was given (phi_po's latent target stays at w = 0 too). A "
              "loss without a latent target (MAP, AUC, ...) has its one formulation. The fit records what it "
              "trained and why in `formulation_`, which the model file keeps and `structrank train` prints; the "
              "`-ideal` and `-latent` names hold one formulation whatever happens.", "",
              "Boosted trees (`StructuredBoostingRanker(loss=...)` and `gbrt-<loss>` alike) take their default by the "
              "loss too (`target='auto'`, `smoothing=None`): the NDCG@k hinge with phi_po against its latent target, "
              f"re-imputed each round and smoothed by {LATENT_NDCG_SMOOTHING} (docs/TREES_SMOOTHING.md chose it); every "
              "other loss against its ideal target, unsmoothed. docs/SHORT_NAME_DEFAULTS.md sets the defaults against "
              "their formulations on graded data sets no default was tuned on."]
    return "\n".join(lines) + "\n"


# -- the models' help: `structrank train --help` and `structrank train MODEL --help` -------------------------------


def _class_node(class_name: str):
    tree, _ = _source(structrank.learners.module_of(class_name))
    return next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name)


def _shortened(text: str, width: int) -> str:
    """``text`` in ``width`` characters, cut after a whole word (hyphenated words whole) and marked " ..."."""
    return textwrap.shorten(text, width, placeholder=" ...", break_on_hyphens=False)


def _phrase(spec) -> str:
    """A model's help in a phrase: the summary of the loss it trains on when its help names it (the
    models every loss gets, whose help is otherwise their family's words), else its help's first clause."""
    loss = entries().get(_spec_loss(spec))
    if loss is not None and loss.summary in spec.help:
        return "on " + loss.summary
    return spec.help.split("; ")[0]


def models_overview(width: int = 79) -> str:
    """Every registered model, grouped by the class that trains it under that class's first docstring line: a model
    of its own on a line (its name and a phrase, shortened at a word), the models a family has for a registered loss
    (``gbrt-<loss>``, ...) on one entry listing the losses, wrapped at words; nothing is cut mid-word. The model list
    of ``structrank train --help``. Read from the sources; no learner is imported."""
    families = {}
    for spec in MODELS.values():
        families.setdefault(spec.estimator, []).append(spec)

    def generic(spec):  # a family's model of a loss: named <family>-<loss>, its help the loss's summary
        return _phrase(spec).startswith("on ") and spec.name.endswith("-" + _spec_loss(spec))

    name_width = max(len(spec.name) for spec in MODELS.values() if not generic(spec))
    hang = " " * (name_width + 4)
    lines = []
    for estimator, specs in families.items():
        summary = (ast.get_docstring(_class_node(estimator)) or "").split("\n")[0]
        lines += ["", _shortened(f"{estimator}: {summary}", width)]
        lines += [f"  {spec.name:<{name_width}}  " + _shortened(_phrase(spec), max(width - len(hang), len(hang)))
                  for spec in specs if not generic(spec)]
        grouped = [spec for spec in specs if generic(spec)]
        if grouped:
            prefix = grouped[0].name[:-len(_spec_loss(grouped[0])) - 1]
            names = ", ".join(_spec_loss(spec) for spec in grouped)
            lines += textwrap.wrap(f"{prefix + '-<loss>':<{name_width}}  on the loss: {names}", width,
                                   initial_indent="  ", subsequent_indent=hang, break_on_hyphens=False)
    return "\n".join(lines[1:])


def applicable_parameters(spec: ModelSpec) -> dict:
    """{parameter: default} of the parameters that act on ``spec``'s model: its class's constructor
    parameters without the options of other losses that its own loss ignores (svm-mrr takes no
    ``components``, SVM-combo's) and without those the class reads only for other losses (its
    ``_loss_parameters``: SVM-combo's ``slacks``, CRF-KL's ``T``). Read from the sources."""
    params = dict(spec.parameters())
    loss = _spec_loss(spec)
    if loss not in entries():
        return params
    every_option = {option for entry in entries().values() for option in entry.options}
    # a seed is the learner's own too (LightGBM's, the shuffle's), not only a sampling loss's option
    others = every_option - set(entries()[loss].options) - {"random_state"}
    loss_only = _class_literal(spec.estimator, "_loss_parameters") or {}
    return {name: value for name, value in params.items()
            if name not in others and loss in loss_only.get(name, (loss,))}


def _class_literal(class_name: str, attribute: str):
    """The literal value of ``attribute`` assigned in the body of ``class_name`` (read from its source), or None."""
    node = next((n for n in _class_node(class_name).body if isinstance(n, ast.Assign)
                 and any(isinstance(t, ast.Name) and t.id == attribute for t in n.targets)), None)
    return None if node is None else ast.literal_eval(node.value)


def ignored_parameters(spec: ModelSpec, params: dict) -> str | None:
    """Why the first of ``params`` (``structrank train --set``) that would not act on the model they make is
    ignored (``applicable_parameters`` of ``spec`` with ``params`` over its defaults, so ``--set loss=...``
    counts), or None: ``--set T=2`` on crf-ml is an error, not a value its objective never reads (a loss's options in
    ``loss_params`` are checked against the loss itself)."""
    params = spec.with_loss_params(params)
    made = replace(spec, defaults=spec.over_defaults(params))
    acting = applicable_parameters(made)
    for name in params:
        if name not in acting:
            return (f"--set {name}: {spec.name} with loss {_spec_loss(made)!r} does not read {name}: it would be ignored "
                    f"here (`structrank train {spec.name} --help` lists the parameters that act)")
    return None


def model_details(name: str) -> str:
    """One model's help: what it is, the class that trains it, the metric its grid is tuned on, its
    parameters with their defaults (only those that act on it) and its grid on --vali."""
    spec = get_model(name)
    grid = spec.grid or {}
    lines = [f"{spec.name}: {spec.help}", "",
             f"trained by {spec.estimator} ({structrank.learners.module_of(spec.estimator)}); with --vali, the "
             f"parameters not fixed by --set are chosen by {spec.metric_label} on the vali file"
             + ("; the learner picks its epoch on --vali itself" if spec.fit_with_vali else ""), "",
             "parameters (--set NAME=VALUE), with their defaults:"]
    lines += [f"  {key} = {value!r}" for key, value in applicable_parameters(spec).items()]
    options = spec.loss_options()
    if options:
        example = next(iter(options))
        lines += ["", f"the options of its loss ({_spec_loss(spec)!r}; --set loss_params='{{\"{example}\": ...}}', "
                      "docs/LOSSES.md), with their defaults:"]
        lines += [f"  {key} = {value!r}" for key, value in options.items()]
    lines += ["", "grid on --vali:" if grid else "grid on --vali: none (the defaults are used)"]
    lines += [f"  {key}: {', '.join(repr(v) for v in values)}" for key, values in grid.items()]
    return "\n".join(lines)


def get_model(name: str) -> ModelSpec:
    """The model ``name`` (the reproductions' settings, such as the papers' binary NDCG gain, are
    ``experiments.runner.paper_model``'s)."""
    try:
        return MODELS[name]
    except KeyError:
        raise ValueError(f"unknown model {name!r}; known: {', '.join(MODELS)}") from None


def fit_and_score(spec, params, train, vali, convention):
    """(model, vali value) of one grid point: a module-level function, so joblib can ship it.

    A grid point that stays at w = 0 (a small C) says nothing: ``select_on_vali`` warns about the chosen one."""
    # deferred: start-up time, `train` parses with this registry; scikit-learn loads to fit
    from structrank.learners.base import StayedAtZeroWarning

    model = spec.make(**params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StayedAtZeroWarning)
        model = model.fit(train, eval_set=vali) if spec.fit_with_vali else model.fit(train)
    metrics = [spec.metric] if isinstance(spec.metric, str) else list(spec.metric)
    # docids: trec_eval's tie rule needs them (trec named, or auto on labels above 4)
    rows = vali if spec.inputs == "text" else vali.X  # QA data: titles, where a model reads them
    value = evaluate(vali.y, model.predict(rows), vali.qid, metrics, convention,
                     docids=getattr(vali, "docids", None)).mean_of(metrics)
    return model, value


def select_on_vali(spec: ModelSpec, train, vali, fixed=None, convention="auto", report=None, grid=None,
                   n_jobs=None):
    """Fit every grid point (``fixed`` parameters held) on ``train``; keep the best on ``vali``.

    ``grid`` replaces the model's own grid (a smaller one for quick runs).

    The vali metric is the model's ``spec.metric`` under ``convention`` (a tuple of metrics:
    their mean; ``auto``: the convention the vali labels allow, as ``evaluate``'s). ``report(params, value)`` is called
    after each fit (progress on the command line). The chosen model warns (``StayedAtZeroWarning``) when it stayed
    at w = 0; the other grid points do not. ``n_jobs`` fits the grid points on that many joblib workers (or on the
    cluster of an active joblib dask backend); the choice is the same: the best value, the first in grid
    order on ties.

    Returns
    -------
    (model, params, vali_value)
    """
    # deferred: start-up time, `train` parses with this registry; joblib loads to select
    from structrank.parallel.workers import dask_client

    candidates = list(spec.candidates(fixed or {}, grid))
    if (n_jobs in (None, 1) and dask_client() is None) or len(candidates) == 1:
        fitted = (fit_and_score(spec, params, train, vali, convention) for params in candidates)
    else:
        # deferred: start-up time, `train` parses with this registry; joblib loads to select
        from joblib import Parallel, delayed

        fitted = Parallel(n_jobs=n_jobs)(delayed(fit_and_score)(spec, params, train, vali, convention)
                                         for params in candidates)
    best = None
    for params, (model, value) in zip(candidates, fitted):
        if report is not None:
            report(params, value)
        if best is None or value > best[2]:
            best = (model, params, value)
    health = getattr(best[0], "health_", None)
    if health is not None and health.stayed_at_zero:
        # deferred: start-up time, as in fit_and_score
        from structrank.learners.base import StayedAtZeroWarning

        warnings.warn(best[0].stayed_at_zero_message(), StayedAtZeroWarning, stacklevel=2)
    return best
