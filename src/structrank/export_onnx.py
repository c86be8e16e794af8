"""Rankers out as ONNX graphs (``structrank export --format onnx``; the optional ``onnx`` extra).

Every graph takes ``X``, float32 rows of shape (n, n_features), and gives ``score``, float32 of shape
(n,): one score per row, what ``predict`` gives (in float32).

- Linear rankers: ``X @ coef_ + intercept_``, a MatMul and an Add written with ``onnx.helper``.
- LightGBM trees (``LambdaMARTRanker``, ``StructuredBoostingRanker``): onnxmltools converts the
  booster to a ``TreeEnsembleRegressor``. It knows LightGBM's objectives, not a custom one, so a
  ``StructuredBoostingRanker``'s booster is converted as a regression one: both predict the raw sum of
  the trees. onnxmltools rounds the thresholds to float32 and keeps LightGBM's ``<=``, the rounding
  export_trees.py explains.
- ``McRank``: onnxmltools converts its multiclass booster to a ``TreeEnsembleClassifier`` whose
  probabilities a MatMul with ``classes_`` turns into the expected grade.

Other rankers (a network, a Nyström embedding, a text reranker) have no converter here and are
refused, naming the kinds that convert. Without the extra the error names it.
"""

# deferred imports: onnx and onnxmltools (the optional onnx extra) load only when a graph is written, through _require

from __future__ import annotations

import importlib

import numpy as np

from structrank.errors import StructRankError
from structrank.export_trees import model_booster

#: the extra and its install line, named by every error of a missing package
INSTALL_HINT = 'pip install "structrank[onnx]" (onnx, onnxruntime, onnxmltools, skl2onnx)'
#: the default-domain opset of the graphs written by hand (ONNX 1.8 and later read it)
_OPSET = 13
_IR_VERSION = 7


class MissingOnnxExtra(StructRankError, ImportError):
    """The optional ``onnx`` extra (onnx, onnxmltools) is not installed."""


def _require(*modules):
    """Import ``modules``, or raise ``MissingOnnxExtra`` naming the extra."""
    try:
        return [importlib.import_module(m) for m in modules]
    except ImportError as exc:
        raise MissingOnnxExtra(f"--format onnx needs {exc.name}, an optional dependency: {INSTALL_HINT}") from None


def _linear_graph(coef, intercept):
    (onnx,) = _require("onnx")
    helper, tensor = onnx.helper, onnx.TensorProto
    nodes = [helper.make_node("MatMul", ["X", "coef"], ["raw"]), helper.make_node("Add", ["raw", "intercept"], ["score"])]
    weights = [onnx.numpy_helper.from_array(np.asarray(coef, dtype=np.float32), "coef"),
               onnx.numpy_helper.from_array(np.array(intercept, dtype=np.float32), "intercept")]
    rows = helper.make_tensor_value_info("X", tensor.FLOAT, [None, coef.size])
    scores = helper.make_tensor_value_info("score", tensor.FLOAT, [None])
    graph = helper.make_graph(nodes, "structrank_linear", [rows], [scores], weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", _OPSET)], producer_name="structrank")
    model.ir_version = _IR_VERSION  # the IR of the opset, which older runtimes read too
    onnx.checker.check_model(model)
    return model


def _converted_booster(model):
    import lightgbm  # deferred: loads only to convert trees

    onnxmltools, data_types = _require("onnxmltools", "onnxmltools.convert.common.data_types")
    text = model_booster(model).model_to_string()
    header, trees = text.split("\nTree=", 1)
    custom = "\nobjective=" not in header
    if custom:
        # a custom objective, which the text does not name: its prediction, like a regression's, is the raw sum
        # of the trees; onnxmltools reads the objective from the booster's parameters and from its dump
        text = header.replace("\nfeature_names=", "\nobjective=regression\nfeature_names=", 1) + "\nTree=" + trees
    booster = lightgbm.Booster(model_str=text)
    if custom:
        booster.params["objective"] = "regression"
    features = data_types.FloatTensorType([None, model.n_features_in_])
    return onnxmltools.convert_lightgbm(booster, initial_types=[("X", features)], zipmap=False)


def _scored(model, nodes, initializers):
    """``model`` with ``nodes`` appended and ``score`` (which they compute) its one output; the nodes
    ``score`` does not need (a classifier's label) are dropped."""
    (onnx,) = _require("onnx")
    graph = model.graph
    graph.node.extend(nodes)
    graph.initializer.extend(initializers)
    needed, kept = {"score"}, []
    for node in reversed(list(graph.node)):
        if needed.intersection(node.output):
            kept.append(node)
            needed.update(node.input)
    del graph.node[:]
    graph.node.extend(reversed(kept))
    del graph.output[:]
    graph.output.append(onnx.helper.make_tensor_value_info("score", onnx.TensorProto.FLOAT, [None]))
    onnx.checker.check_model(model)
    return model


def _split_nodes(node):
    """Every split node of a LightGBM dump tree."""
    if "leaf_value" not in node:
        yield node
        yield from _split_nodes(node["left_child"])
        yield from _split_nodes(node["right_child"])


def _refuse_unconverted_modes(dump):
    """Raise ValueError for what onnxmltools' tree ensembles do not follow (they would score otherwise, silently)."""
    if dump.get("average_output"):
        raise ValueError("a random-forest booster (average_output) averages its trees; the ONNX tree ensemble adds them")
    for info in dump["tree_info"]:
        for node in _split_nodes(info["tree_structure"]):
            if node.get("missing_type") == "Zero":
                raise ValueError(f"a split on feature {int(node['split_feature']) + 1} with zero_as_missing (missing_type "
                                 "Zero): LightGBM sends a 0 to the default child, the ONNX tree ensemble by the threshold")


def probe_rows(dump, n_features: int, n_rows: int = 256, seed: int = 0) -> np.ndarray:
    """float32 rows built from the trees' thresholds: for each feature, values between and beyond its thresholds
    (as float32, none on a threshold's rounding) and 0, drawn at random; a converted graph must score them as
    ``predict`` does."""
    cuts: dict = {}
    for info in dump["tree_info"]:
        for node in _split_nodes(info["tree_structure"]):
            with np.errstate(over="ignore"):
                cuts.setdefault(int(node["split_feature"]), set()).add(float(np.float32(node["threshold"])))
    rng = np.random.default_rng(seed)
    rows = np.zeros((n_rows, n_features), dtype=np.float32)
    for feature, values in cuts.items():
        edges = np.array(sorted(v for v in values if np.isfinite(v)), dtype=np.float64)
        if edges.size == 0:
            continue
        inner = (edges[:-1] + edges[1:]) / 2  # between two thresholds
        candidates = np.concatenate([inner, [edges[0] - 1.0, edges[-1] + 1.0, 0.0]]).astype(np.float32)
        candidates = candidates[~np.isin(candidates, edges.astype(np.float32))]
        rows[:, feature] = rng.choice(candidates, size=n_rows)
    return rows


def _check_scores_as_predict(model, graph, dump):
    """Run the graph on ``probe_rows`` with onnxruntime (when installed) and refuse it where it scores otherwise
    than ``predict`` (a booster mode the converter does not follow): never a silent mismatch."""
    try:
        import onnxruntime  # deferred: the onnx extra's runtime, only to check a tree graph
    except ImportError:
        return
    rows = probe_rows(dump, int(model.n_features_in_))
    session = onnxruntime.InferenceSession(graph.SerializeToString(), providers=["CPUExecutionProvider"])
    got = session.run(["score"], {"X": rows})[0].astype(np.float64)
    expected = np.asarray(model.predict(rows.astype(np.float64)), dtype=np.float64)
    gap = float(np.max(np.abs(got - expected)))
    if not gap <= 1e-4 * max(1.0, float(np.max(np.abs(expected)))):  # float32 arithmetic over the trees' leaves
        raise ValueError(f"the ONNX graph scores rows built from the trees' thresholds up to {gap:.3g} away from "
                         "predict: this booster uses a mode the ONNX converter does not follow")


def _tree_graph(model):
    (onnx,) = _require("onnx")
    dump = model_booster(model).dump_model()
    _refuse_unconverted_modes(dump)
    graph = _tree_graph_of(model, onnx)
    _check_scores_as_predict(model, graph, dump)
    return graph


def _tree_graph_of(model, onnx):
    converted = _converted_booster(model)
    outputs = [o.name for o in converted.graph.output]
    classes = getattr(model, "classes_", None)
    if classes is None:  # TreeEnsembleRegressor's (n, 1) output flattened
        shape = onnx.numpy_helper.from_array(np.array([-1], dtype=np.int64), "score_shape")
        return _scored(converted, [onnx.helper.make_node("Reshape", [outputs[0], "score_shape"], ["score"])],
                       [shape])
    probabilities = next(name for name in outputs if "prob" in name)  # onnxmltools' "probabilities"
    grades = onnx.numpy_helper.from_array(np.asarray(classes, dtype=np.float32), "grades")
    return _scored(converted, [onnx.helper.make_node("MatMul", [probabilities, "grades"], ["score"])],
                   [grades])


def onnx_bytes(model) -> bytes:
    """The ONNX graph of a fitted ranker, serialised: input ``X`` (float32, n x n_features), output ``score``.

    Parameters
    ----------
    model : ranker
        A linear ranker (``coef_``) or a LightGBM tree ranker (``booster_text_``).

    Returns
    -------
    bytes
        The ``ModelProto``, which ``onnxruntime.InferenceSession`` runs.
    """
    coef = getattr(model, "coef_", None)
    if coef is not None and np.ndim(coef) == 1:
        graph = _linear_graph(np.asarray(coef, dtype=np.float64), float(getattr(model, "intercept_", 0.0)))
    elif getattr(model, "booster_text_", None) is not None:
        graph = _tree_graph(model)
    else:
        raise ValueError(f"{type(model).__name__} has no ONNX converter here: linear rankers (coef_) and LightGBM "
                         "trees (LambdaMARTRanker, McRank, StructuredBoostingRanker) convert")
    return graph.SerializeToString()

