"""Model files of the rankers, which loading cannot turn into code execution (the archive format: ``archive``).

The text rerankers (``learners.base.model_inputs`` says "text": their class declares ``inputs = "text"``) are saved and read by
``structrank.cross_encoder_models``: a sentence-transformers model folder with the same header beside the weights;
``load_model`` tells a folder from a file. Everything below is about the npz files of the other models.

A model file is a NumPy ``.npz`` archive read with ``allow_pickle=False``: one entry
``__header__`` holds UTF-8 JSON (format name and version, the estimator's class name, its
constructor parameters, the name, dtype and shape of every learned array), the other entries
are the learned arrays: real numbers, or a single unicode string for the attributes a class
lists in ``_text_attributes`` (a LightGBM model's text, say). Loading accepts only the classes of
structrank's model registry (``learners.registry.ranker_class``), checks the version, the parameters, and every array's dtype and
shape against the header, and writes nothing; saving is atomic.

Before any array is read, loading checks the header's size and type, the zip members (stored or
deflated, no compression bombs), the ``.npy`` shapes and dtypes, the arrays against each other,
and LightGBM model texts tree by tree (a doctored tree could otherwise abort or hang LightGBM).
Header parameters must meet the class's ``_parameter_constraints`` (a string for a number,
``degree=1000``: refused naming the file and ``parameter NAME``). ``save_model`` refuses NaN/inf
arrays, so a non-finite model is never written.
"""

from __future__ import annotations

import os

import numpy as np

import structrank
from structrank.archive import read_archive, write_archive
from structrank.errors import DataFormatError, DataValidationError

#: the ``format`` a model file's header names; loading refuses any other
FORMAT_NAME = "structrank-model"
#: the ``version`` of that format a header names; loading refuses any other
FORMAT_VERSION = 1

#: a model's header is a few kilobytes; a bigger one is not a model's
MAX_MODEL_HEADER_BYTES = 1 << 20
def _jsonable(value):
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    raise TypeError(f"parameter value {value!r} cannot be saved in a model file")


def save_model(model, path) -> None:
    """Save a fitted structrank estimator to ``path`` (npz), atomically."""
    # deferred: the registry and the learners (scikit-learn) load only for rankers, not for archives
    from structrank.learners.base import model_inputs
    from structrank.learners.registry import ranker_class

    name = type(model).__name__
    if ranker_class(name) is not type(model):
        raise TypeError(f"{name} is not a structrank ranker that can be saved")
    params = {"format": FORMAT_NAME, "version": FORMAT_VERSION, "structrank": structrank.__version__, "class": name,
              "params": _jsonable(model.get_params(deep=False))}
    if model_inputs(model) == "text":  # a transformer's folder (structrank.cross_encoder_models)
        # deferred: only a text model's save needs it
        from structrank.cross_encoder_models import save_cross_encoder_model

        save_cross_encoder_model(model, path, params)
        return
    arrays = {attr: np.asarray(getattr(model, attr)) for attr in model._saved_attributes}
    header = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "structrank": structrank.__version__,
        "class": name,
        "params": _jsonable(model.get_params(deep=False)),
        "arrays": {k: {"dtype": v.dtype.str, "shape": list(v.shape)} for k, v in arrays.items()},
    }
    if hasattr(model, "feature_names_in_"):  # a DataFrame's columns: predict refuses others, or another order
        header["feature_names"] = [str(name) for name in model.feature_names_in_]
    text = getattr(model, "_text_attributes", ())
    for key, value in arrays.items():
        if value.dtype.kind not in "biuf" and not (key in text and value.dtype.kind == "U" and value.ndim == 0):
            raise TypeError(f"attribute {key} of dtype {value.dtype} cannot be saved")
        if value.dtype.kind == "f" and not np.all(np.isfinite(value)):  # load_model would refuse the file
            raise DataValidationError(f"{name}: attribute {key} holds NaN or infinite values; not writing {path}")
    write_archive(path, header, arrays)


def load_model(path):
    """Load a model saved by ``save_model``; DataFormatError names the problem of a bad file."""
    # deferred: the text models' folders (structrank.cross_encoder_models) load only when one is read
    from structrank.cross_encoder_models import is_single_file_model, load_cross_encoder_model, refuse_single_file

    if os.path.isdir(path):  # a text reranker (structrank.cross_encoder_models; a folder without its header is named)
        return load_cross_encoder_model(path)
    if os.path.lexists(path) and is_single_file_model(path):
        refuse_single_file(path)
    header, arrays = read_archive(path, FORMAT_NAME, FORMAT_VERSION, max_header_bytes=MAX_MODEL_HEADER_BYTES)
    # deferred: the registry and the learners (scikit-learn) load only for rankers, not for archives
    from structrank.learners.registry import ranker_class

    name = header.get("class")
    cls = ranker_class(name)
    if cls is None:
        raise DataFormatError(path, None, f"unknown model class {header.get('class')!r}", "class")
    params = header.get("params")
    valid = cls().get_params(deep=False)
    if isinstance(params, dict):
        # deferred: the learners (scikit-learn) load only for rankers, not for archives
        from structrank.learners.loss_params import migrated_params

        params = migrated_params(cls, params)  # a file of before loss_params gives its loss options flat
    if not isinstance(params, dict) or set(params) - set(valid):
        raise DataFormatError(path, None, f"parameters do not match {cls.__name__}", "params")
    expected = header.get("arrays")
    if not isinstance(expected, dict) or set(expected) != set(cls._saved_attributes) or set(arrays) != set(expected):
        raise DataFormatError(path, None, f"learned arrays do not match {cls.__name__}", "arrays")
    # JSON has no tuples: give back a tuple where the class's default is one
    params = {k: tuple(v) if isinstance(v, list) and isinstance(valid[k], tuple) else v for k, v in params.items()}
    model = cls(**params)
    # the class's declared ranges (as for fit and --set), before any array is used: a forged
    # degree=1000 made a polynomial model predict inf and NaN
    # deferred: the registry and the learners (scikit-learn) load only for rankers, not for archives
    from structrank.learners.base import parameter_problems

    problems = parameter_problems(model)
    if problems:
        key, problem = next(iter(problems.items()))
        raise DataFormatError(path, None, problem, f"parameter {key}")
    for key, spec in expected.items():
        value = arrays[key]
        if not isinstance(spec, dict) or value.dtype.str != spec.get("dtype") or list(value.shape) != spec.get("shape"):
            raise DataFormatError(path, None, f"array {key} has dtype {value.dtype.str} shape {list(value.shape)}, "
                                  f"the header says {spec}", key)
        # A class's declared text attributes are one unicode string each (kept as a 0-d array).
        if key in getattr(cls, "_text_attributes", ()):
            if value.dtype.kind != "U" or value.ndim != 0:
                raise DataFormatError(path, None, f"array {key} must be one unicode string", key)
            setattr(model, key, value)
            continue
        # Counts and class labels are integers; the other learned arrays are floats (what fit
        # stores): no text, objects, complex or boolean values, no NaN or inf.
        integer = key.startswith("n_") or key in _INTEGER_ATTRIBUTES
        if value.dtype.kind not in ("iu" if integer else "f"):
            raise DataFormatError(path, None, f"array {key} has dtype {value.dtype}, not "
                                  f"{'an integer' if integer else 'a floating-point'} type", key)
        if value.dtype.kind == "f" and not np.all(np.isfinite(value)):
            raise DataFormatError(path, None, f"array {key} holds NaN or infinite values", key)
        if key.startswith("n_") and (value.ndim != 0 or value < 0):
            raise DataFormatError(path, None, f"{key} must be a non-negative integer scalar", key)
        setattr(model, key, value.item() if value.ndim == 0 else value)
    _check_shapes(path, model)
    if "feature_names" in header:
        model.feature_names_in_ = _feature_names(path, header["feature_names"], getattr(model, "n_features_in_", None))
    for key, allowed in getattr(model, "_text_choices", {}).items():  # text attributes from a fixed set
        if str(getattr(model, key)) not in allowed:
            raise DataFormatError(path, None, f"{key} must be one of {', '.join(allowed)}", key)
    if hasattr(model, "_check_loaded"):  # a class's own consistency checks (e.g. the MLP's parameter count)
        try:
            model._check_loaded()
        except DataFormatError as exc:
            raise DataFormatError(path, None, exc.problem, exc.field) from None
    if hasattr(model, "_booster"):  # parse a LightGBM model's text now, so that a bad one names this file
        try:
            model._booster()
        except DataFormatError as exc:
            raise DataFormatError(path, None, exc.problem, exc.field) from None
    return model


def _feature_names(path, names, n_features):
    """The header's feature names (a fit on a DataFrame's columns) as scikit-learn keeps them, checked: one
    distinct string per feature."""
    if (not isinstance(names, list) or not all(isinstance(name, str) for name in names)
            or len(set(names)) != len(names) or (n_features is not None and len(names) != n_features)):
        raise DataFormatError(path, None, f"must be {n_features} distinct feature names (strings)", "feature_names")
    return np.asarray(names, dtype=object)


#: learned arrays of integers other than the counts ``n_*``
_INTEGER_ATTRIBUTES = ("classes_",)


def _check_shapes(path, model):
    """The learned arrays' shapes agree with each other and with ``n_features_in_``."""
    d = getattr(model, "n_features_in_", None)

    def need(ok, key, problem):
        if not ok:
            raise DataFormatError(path, None, problem, key)

    for key in ("coef_", "mean_", "scale_"):
        value = getattr(model, key, None)
        if value is not None:
            need(np.ndim(value) == 1 and np.shape(value)[0] == d, key, f"{key} does not have n_features_in_ entries")
    for key in ("intercept_", "gamma_"):
        if hasattr(model, key):
            need(np.ndim(getattr(model, key)) == 0, key, f"{key} must be a scalar")
    if hasattr(model, "scale_"):
        need(np.all(model.scale_ != 0), "scale_", "scale_ holds zeros (features are divided by it)")
    if hasattr(model, "support_vectors_"):
        sv, dual = model.support_vectors_, model.dual_coef_
        need(np.ndim(sv) == 2 and sv.shape[1] == d, "support_vectors_",
             "support_vectors_ must be a matrix with n_features_in_ columns")
        need(np.ndim(dual) == 1 and dual.shape[0] == sv.shape[0], "dual_coef_",
             "dual_coef_ must have one entry per support vector")
    if hasattr(model, "classes_"):
        classes = model.classes_
        need(np.ndim(classes) == 1 and classes.size >= 2 and np.all(np.diff(classes) > 0), "classes_",
             "classes_ must be at least two grades in increasing order")


__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "load_model", "save_model"]
