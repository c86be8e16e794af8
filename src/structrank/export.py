"""Rankers out to other tools: plain JSON, the Elasticsearch/OpenSearch LTR plugin, SVM-rank, LightGBM, ONNX.

This module holds the linear formats and sends the others on: tree models (a LightGBM booster) to
export_trees.py (the plugin's ``model/xgboost+json``, LightGBM's model text), ONNX to export_onnx.py.

A linear ranker scores a document ``x . w + b`` (``coef_``, and ``intercept_`` where it has one,
which shifts every score of a query alike and so never changes a ranking). Features are named by
their LETOR index (1-based, as in the files) unless names are given.

- ``json``: ``{"format": "structrank-linear", "version": 1, "model": CLASS, "weights": {name: w},
  "bias": b}``.
- ``opensearch-ltr``: the body of the LTR plugin's ``_createmodel`` request for a ``model/linear``
  model, whose ``definition`` is a JSON string ``{feature name: weight}``; the plugin scores
  ``sum_f weight_f * feature_f`` (no bias), and the feature names must be those of the feature set.
- ``svmrank``: an SVM-light model file as ``svm_rank_learn`` writes it for a linear kernel: eleven
  header lines, then one support vector (the weight vector, ``alpha*y`` = 1), which
  ``svm_rank_classify`` reads to score ``w . x - b``.

Tree models (``LambdaMARTRanker``, ``McRank``, ``StructuredBoostingRanker``):

- ``opensearch-ltr``: the ``_createmodel`` body of a ``model/xgboost+json`` model (export_trees.py);
- ``lightgbm``: LightGBM's model text, which ``lightgbm.Booster(model_file=...)`` loads.

``onnx`` (linear and tree models; the optional ``onnx`` extra): an ONNX graph, ``X`` to ``score``.

``export_model(model, fmt)`` writes them (``structrank export``): text, or bytes for ONNX;
``export_text`` the text formats. Each format is read back in tests/library/test_export.py and
tests/library/test_export_trees.py by a reader written from its documentation (the plugin's trees by
tests/opensearch_ltr_eval.py). ``read_feature_names`` reads ``--feature-names`` with the data files'
grammar.
"""

from __future__ import annotations

import json

import numpy as np

from structrank.data import grammar
from structrank.errors import DataFormatError
from structrank.export_trees import lightgbm_text, plugin_model
from structrank.files import read_bytes
from structrank.learners.base import model_inputs

#: the formats ``export_model`` writes (``structrank export --format``)
FORMATS = ("json", "opensearch-ltr", "svmrank", "lightgbm", "onnx")
#: the formats of a tree model
TREE_FORMATS = ("opensearch-ltr", "lightgbm", "onnx")


def linear_weights(model):
    """(weights, bias) of a fitted linear ranker; a clear error for any other model."""
    coef = getattr(model, "coef_", None)
    if coef is None or np.ndim(coef) != 1:
        raise ValueError(f"{type(model).__name__} is not a linear ranker (no weight vector coef_): only linear models "
                         "export to these formats")
    return np.asarray(coef, dtype=np.float64), float(getattr(model, "intercept_", 0.0))


def feature_names(n_features, names=None) -> list:
    """The names of a model's features: ``names`` (as many, all different), else the LETOR indices.

    >>> feature_names(3), feature_names(2, ["bm25", "tf"])
    (['1', '2', '3'], ['bm25', 'tf'])
    """
    if names is None:
        return [str(i + 1) for i in range(n_features)]
    names = [str(n) for n in names]
    if len(names) != n_features or len(set(names)) != len(names):
        raise ValueError(f"the model has {n_features} features; give as many different names, got {len(names)}")
    return names


def model_feature_names(model, names=None) -> list:
    """The names a model's features are exported under: the names its file records (``feature_names_in_``, from a
    DataFrame's columns) unless the user's agree with them, else the user's ``names``, else the LETOR indices."""
    n = int(model.n_features_in_) if hasattr(model, "n_features_in_") else None
    recorded = getattr(model, "feature_names_in_", None)
    if recorded is None:
        return feature_names(n if n is not None else len(names or ()), names)
    recorded = [str(name) for name in recorded]
    if names is not None:
        given = feature_names(len(recorded), names)
        differ = next((i for i, (a, b) in enumerate(zip(recorded, given)) if a != b), None)
        if differ is not None:
            raise ValueError(f"--feature-names disagree with the names the model file records: feature {differ + 1} "
                             f"is {recorded[differ]!r} there, {given[differ]!r} here")
    return recorded


def read_feature_names(path) -> list:
    """One feature name per line, in feature order, read with the data files' grammar (docs/GRAMMAR.md):
    plain or gzip, UTF-8 with its BOM dropped, LF or CRLF line ends, ``#`` lines are comments and the
    blank lines ending the file are nothing. A blank line between names is an error, since every name
    after it would move to the next feature, and so is a name given twice (naming both lines)."""
    raw = read_bytes(path)
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataFormatError(str(path), None, f"not UTF-8 text ({exc.reason})") from None
    numbered = list(grammar.lines(str(path), raw))
    while numbered and not numbered[-1][1].strip():
        numbered.pop()
    names, first_line = [], {}
    for number, line in numbered:
        name = line.decode("utf-8").strip()
        if name.startswith("#"):
            continue
        if not name:
            raise DataFormatError(str(path), number, "a blank line between feature names: each line names the next "
                                  "feature, so every name after it would name the wrong one", "name")
        if name in first_line:
            raise DataFormatError(str(path), number, f"feature name {name!r} is given twice (lines "
                                  f"{first_line[name]} and {number})", "name")
        first_line[name] = number
        names.append(name)
    return names


def export_model(model, fmt, names=None, model_name="structrank"):
    """The model in format ``fmt`` (one of FORMATS): bytes for ``onnx``, text for the others.

    Parameters
    ----------
    model : ranker
        A fitted linear ranker (``coef_``) or LightGBM tree ranker (``booster_text_``).
    fmt : str
        One of FORMATS; a tree model takes those of TREE_FORMATS.
    names : list of str, optional
        The feature names (``json`` and ``opensearch-ltr``), else the LETOR indices 1, 2, ...
    model_name : str
        The model's name in the LTR plugin (``opensearch-ltr``).

    Returns
    -------
    str or bytes
    """
    if fmt in ("lightgbm", "onnx") and names is not None:
        raise ValueError(f"a {fmt} model takes its features by position; feature names do not apply")
    if model_inputs(model) == "text":  # a transformer over text, not weights or trees over features
        raise ValueError(f"{type(model).__name__} reads text, and none of these formats holds a transformer: its "
                         "model folder is itself a sentence-transformers CrossEncoder (served as it is, or exported "
                         "by that library, e.g. CrossEncoder(folder, backend='onnx'))")
    if fmt == "onnx":
        from structrank.export_onnx import onnx_bytes  # deferred: the optional onnx extra, only for ONNX

        return onnx_bytes(model)
    return export_text(model, fmt, names, model_name)


def export_text(model, fmt, names=None, model_name="structrank") -> str:
    """The model in a text format ``fmt`` (one of FORMATS but ``onnx``) as text."""
    if fmt not in FORMATS or fmt == "onnx":
        raise ValueError(f"format must be one of {', '.join(f for f in FORMATS if f != 'onnx')}, got {fmt!r}"
                         + (" (ONNX is binary: export_model gives its bytes)" if fmt == "onnx" else ""))
    if fmt == "lightgbm":
        return lightgbm_text(model)  # a model without a booster is refused there
    if getattr(model, "booster_text_", None) is not None:
        if fmt != "opensearch-ltr":
            raise ValueError(f"{type(model).__name__} is not a linear ranker (a LightGBM tree model): --format {fmt} "
                             f"holds weights; trees export as {', '.join(TREE_FORMATS)}")
        return json.dumps(plugin_model(model, model_feature_names(model, names), model_name), indent=1) + "\n"
    w, b = linear_weights(model)
    if fmt == "json":
        return json.dumps({"format": "structrank-linear", "version": 1, "model": type(model).__name__,
                           "weights": dict(zip(model_feature_names(model, names), map(float, w))), "bias": b},
                          indent=1) + "\n"
    if fmt == "opensearch-ltr":
        definition = json.dumps(dict(zip(model_feature_names(model, names), map(float, w))))
        return json.dumps({"model": {"name": model_name, "model": {"type": "model/linear", "definition": definition}}},
                          indent=1) + "\n"
    if fmt == "svmrank":
        if names is not None:
            raise ValueError("an SVM-rank model names features by their index; feature names do not apply")
        vector = " ".join(f"{i + 1}:{float(v)!r}" for i, v in enumerate(w) if v != 0.0)
        # svm_rank_classify scores w . x - b: the bias enters with its sign flipped
        header = ["SVM-light Version V6.20", "0 # kernel type", "3 # kernel parameter -d", "1 # kernel parameter -g",
                  "1 # kernel parameter -s", "1 # kernel parameter -r", "empty# kernel parameter -u",
                  f"{w.size} # highest feature index", "1 # number of training documents",
                  "2 # number of support vectors plus 1",
                  f"{-b!r} # threshold b, each following line is a SV (starting with alpha*y)"]
        return "\n".join(header) + f"\n1 qid:0 {vector} #\n"
    raise AssertionError(fmt)  # every text format is handled above


__all__ = ["FORMATS", "TREE_FORMATS", "export_model", "export_text", "feature_names", "linear_weights",
           "model_feature_names", "read_feature_names"]
