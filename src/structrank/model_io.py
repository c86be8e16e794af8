"""Model files that loading cannot turn into code execution.

A model file is a NumPy ``.npz`` archive read with ``allow_pickle=False``: one entry
``__header__`` holds UTF-8 JSON (format name and version, the estimator's class name, its
constructor parameters, the name, dtype and shape of every learned array), the other entries
are the learned arrays: real numbers, or a single unicode string for the attributes a class
lists in ``_text_attributes`` (a LightGBM model's text, say). Loading accepts only classes from
structrank's own registry, checks the version, the parameters, and every array's dtype and
shape against the header, and writes nothing; saving is atomic.
"""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np

import structrank
from structrank.atomic import atomic_open
from structrank.errors import DataFormatError

FORMAT_NAME = "structrank-model"
FORMAT_VERSION = 1


def _classes():
    from structrank.learners import RANKER_CLASSES

    return RANKER_CLASSES


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
    name = type(model).__name__
    if _classes().get(name) is not type(model):
        raise TypeError(f"{name} is not a structrank ranker that can be saved")
    arrays = {attr: np.asarray(getattr(model, attr)) for attr in model._saved_attributes}
    header = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "structrank": structrank.__version__,
        "class": name,
        "params": _jsonable(model.get_params(deep=False)),
        "arrays": {k: {"dtype": v.dtype.str, "shape": list(v.shape)} for k, v in arrays.items()},
    }
    text = getattr(model, "_text_attributes", ())
    for key, value in arrays.items():
        if value.dtype.kind not in "biuf" and not (key in text and value.dtype.kind == "U" and value.ndim == 0):
            raise TypeError(f"attribute {key} of dtype {value.dtype} cannot be saved")
    write_archive(path, header, arrays)


def write_archive(path, header: dict, arrays: dict) -> None:
    """Write ``arrays`` and a JSON ``header`` into one npz at ``path``, atomically (read by ``read_archive``)."""
    buffer = io.BytesIO()
    np.savez(buffer, __header__=np.frombuffer(json.dumps(header, ensure_ascii=False).encode("utf-8"), dtype=np.uint8),
             **arrays)
    with atomic_open(path, "wb") as fh:
        fh.write(buffer.getvalue())


def read_archive(path, format_name, version, what="model"):
    """(header, arrays) of an npz written with a JSON ``__header__``, never unpickling anything.

    DataFormatError (naming ``what``) for a missing, damaged or foreign file, or one whose
    header has another format name or version.
    """
    try:
        archive = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise DataFormatError(path, None, f"{what} file not found") from None
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
        raise DataFormatError(path, None, f"not a structrank {what} file ({exc})") from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise DataFormatError(path, None, f"not a structrank {what} file (a bare array, not an archive)")
    with archive:
        try:
            header = json.loads(bytes(archive["__header__"]).decode("utf-8"))
            arrays = {key: archive[key] for key in archive.files if key != "__header__"}
        except KeyError:
            raise DataFormatError(path, None, f"not a structrank {what} file (no header)") from None
        except (ValueError, UnicodeDecodeError, zipfile.BadZipFile, OSError, EOFError) as exc:
            raise DataFormatError(path, None, f"damaged {what} file ({exc})") from None
    if not isinstance(header, dict) or header.get("format") != format_name:
        raise DataFormatError(path, None, f"not a structrank {what} file (wrong format name)", "format")
    if header.get("version") != version:
        raise DataFormatError(path, None, f"{what} format version {header.get('version')!r}; this structrank "
                              f"reads version {version}", "version")
    return header, arrays


def load_model(path):
    """Load a model saved by ``save_model``; DataFormatError names the problem of a bad file."""
    header, arrays = read_archive(path, FORMAT_NAME, FORMAT_VERSION)
    cls = _classes().get(header.get("class"))
    if cls is None:
        raise DataFormatError(path, None, f"unknown model class {header.get('class')!r}", "class")
    params = header.get("params")
    valid = cls().get_params(deep=False)
    if not isinstance(params, dict) or set(params) - set(valid):
        raise DataFormatError(path, None, f"parameters do not match {cls.__name__}", "params")
    expected = header.get("arrays")
    if not isinstance(expected, dict) or set(expected) != set(cls._saved_attributes) or set(arrays) != set(expected):
        raise DataFormatError(path, None, f"learned arrays do not match {cls.__name__}", "arrays")
    # JSON has no tuples: give back a tuple where the class's default is one
    params = {k: tuple(v) if isinstance(v, list) and isinstance(valid[k], tuple) else v for k, v in params.items()}
    model = cls(**params)
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
        # Other learned arrays are real numbers: no text, objects or complex values, no NaN or inf.
        if value.dtype.kind not in "biuf":
            raise DataFormatError(path, None, f"array {key} has dtype {value.dtype}, not a real number type", key)
        if value.dtype.kind == "f" and not np.all(np.isfinite(value)):
            raise DataFormatError(path, None, f"array {key} holds NaN or infinite values", key)
        if key.startswith("n_") and (value.ndim != 0 or value.dtype.kind not in "iu" or value < 0):
            raise DataFormatError(path, None, f"{key} must be a non-negative integer scalar", key)
        setattr(model, key, value.item() if value.ndim == 0 else value)
    coef = getattr(model, "coef_", None)
    if coef is not None and (coef.ndim != 1 or coef.shape[0] != model.n_features_in_):
        raise DataFormatError(path, None, "coef_ does not have n_features_in_ entries", "coef_")
    intercept = getattr(model, "intercept_", None)
    if intercept is not None and np.ndim(intercept) != 0:
        raise DataFormatError(path, None, "intercept_ must be a scalar", "intercept_")
    return model
