"""Model files that loading cannot turn into code execution.

The text rerankers (their class says ``_model_file = "folder"``) are saved and read by
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

import io
import json
import math
import os
import struct
import zipfile
import zlib

from pathlib import Path

import numpy as np

import structrank
from structrank.atomic import atomic_open
from structrank.files import open_regular
from structrank.errors import DataFormatError, DataValidationError

#: the ``format`` a model file's header names; loading refuses any other
FORMAT_NAME = "structrank-model"
#: the ``version`` of that format a header names; loading refuses any other
FORMAT_VERSION = 1

#: what reading a damaged or doctored zip or .npy member can raise (flipped bytes reach corners of
#: zipfile and numpy that raise more than BadZipFile: an unknown compression method is a
#: NotImplementedError, an "encrypted" flag a RuntimeError, a deeply nested JSON header a
#: RecursionError, a forged length an OverflowError or struct.error)
_DAMAGED = (OSError, ValueError, EOFError, zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, RuntimeError,
            struct.error, zlib.error, OverflowError, MemoryError)

#: a model's header is a few kilobytes; a bigger one is not a model's
MAX_MODEL_HEADER_BYTES = 1 << 20
#: other archives (a tagger's header holds its vocabulary) get more room
MAX_HEADER_BYTES = 1 << 26
#: a stored member may be compressed (np.savez_compressed) by at most this ratio
MAX_COMPRESSION_RATIO = 1000


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
    from structrank.learners.registry import ranker_class

    name = type(model).__name__
    if ranker_class(name) is not type(model):
        raise TypeError(f"{name} is not a structrank ranker that can be saved")
    params = {"format": FORMAT_NAME, "version": FORMAT_VERSION, "structrank": structrank.__version__, "class": name,
              "params": _jsonable(model.get_params(deep=False))}
    if getattr(model, "_model_file", None) == "folder":  # a transformer (structrank.cross_encoder_models)
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


def write_archive(path, header: dict, arrays: dict) -> None:
    """Write ``arrays`` and a JSON ``header`` into one npz at ``path``, atomically (read by ``read_archive``)."""
    buffer = io.BytesIO()
    np.savez(buffer, __header__=np.frombuffer(json.dumps(header, ensure_ascii=False).encode("utf-8"), dtype=np.uint8),
             **arrays)
    with atomic_open(path, "wb") as fh:
        fh.write(buffer.getvalue())


def _check_members(path, archive, what, max_header_bytes):
    """Refuse, before reading any array, members that could not be read without unpickling or huge allocations.

    Every member must be a ``.npy`` array (version 1 or 2) of a dtype without Python objects
    whose declared shape fits in the bytes the member holds, and compressed members must not
    expand more than MAX_COMPRESSION_RATIO times: numpy allocates the declared shape before
    reading, so a forged shape would otherwise ask for terabytes.
    """
    for info in archive.zip.infolist():
        name = info.filename
        if not name.endswith(".npy"):
            raise DataFormatError(path, None, f"damaged {what} file (member {name!r} is not a .npy array)")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):  # numpy writes no other
            raise DataFormatError(path, None, f"damaged {what} file (member {name!r} has compression method "
                                  f"{info.compress_type})")
        if info.compress_type != zipfile.ZIP_STORED and info.file_size > MAX_COMPRESSION_RATIO * max(
                info.compress_size, 1):
            raise DataFormatError(path, None, f"damaged {what} file (member {name!r} would expand from "
                                  f"{info.compress_size} to {info.file_size} bytes)")
        with archive.zip.open(info) as member:
            version = np.lib.format.read_magic(member)
            if version not in ((1, 0), (2, 0)):
                raise DataFormatError(path, None, f"damaged {what} file (member {name!r} is .npy version {version})")
            read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                           else np.lib.format.read_array_header_2_0)
            shape, _, dtype = read_header(member)
            offset = member.tell()
        if dtype.hasobject:
            raise DataFormatError(path, None, f"not a structrank {what} file (member {name!r} holds Python objects, "
                                  "a pickle, which structrank never loads)", name[:-4])
        nbytes = math.prod(shape) * dtype.itemsize
        if nbytes != info.file_size - offset:
            raise DataFormatError(path, None, f"damaged {what} file (member {name!r} declares shape {list(shape)} "
                                  f"of {dtype}, {nbytes} bytes, but holds {info.file_size - offset})")
        if name == "__header__.npy" and (dtype != np.uint8 or len(shape) != 1 or nbytes > max_header_bytes):
            raise DataFormatError(path, None, f"damaged {what} file (the header must be at most {max_header_bytes} "
                                  f"bytes of UTF-8 JSON; it is {dtype} of shape {list(shape)})", "__header__")


def _read_open_archive(path, fh, what, max_header_bytes):
    """(header, arrays) of the npz open as ``fh`` (``read_archive``'s reading; ``path`` names it in errors)."""
    try:
        magic = fh.read(6)
        fh.seek(0)
    except OSError as exc:
        raise DataFormatError(path, None, f"not a structrank {what} file ({exc})") from None
    # Only a zip archive goes to numpy: a bare .npy or a pickle is refused unread.
    if magic.startswith(b"\x93NUMPY"):
        raise DataFormatError(path, None, f"not a structrank {what} file (a bare array, not an archive; structrank "
                              "never reads bare .npy files, which may hold pickles)")
    if not magic.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        raise DataFormatError(path, None, f"not a structrank {what} file (not an npz archive)")
    try:
        archive = np.load(fh, allow_pickle=False)
    except _DAMAGED as exc:
        raise DataFormatError(path, None, f"not a structrank {what} file ({exc})") from None
    if not isinstance(archive, np.lib.npyio.NpzFile):  # np.load decides by the same magic: cannot happen
        raise DataFormatError(path, None, f"not a structrank {what} file (a bare array, not an archive)")
    with archive:
        if "__header__" not in archive.files:
            raise DataFormatError(path, None, f"not a structrank {what} file (no header)")
        try:
            _check_members(path, archive, what, max_header_bytes)
            header = json.loads(bytes(archive["__header__"]).decode("utf-8"))
            listed = header.get("arrays") if isinstance(header, dict) else None
            members = set(archive.files) - {"__header__"}
            if isinstance(listed, dict) and members != set(listed):  # before any array is read: an extra
                # member (as large as the compression limit lets it be) would otherwise be loaded, then refused
                raise DataFormatError(path, None, f"damaged {what} file (its arrays {sorted(members)} are not the "
                                      f"header's {sorted(listed)})", "arrays")
            arrays = {key: archive[key] for key in archive.files if key != "__header__"}
        except DataFormatError:
            raise
        except _DAMAGED as exc:  # UnicodeDecodeError and json's errors are ValueErrors, deep nesting a RecursionError
            raise DataFormatError(path, None, f"damaged {what} file ({type(exc).__name__}: {exc})") from None
    return header, arrays


def read_archive(path, format_name, version, what="model", max_header_bytes=MAX_HEADER_BYTES):
    """(header, arrays) of an npz written with a JSON ``__header__``, never unpickling anything.

    DataFormatError (naming ``what``) for a missing, damaged or foreign file, or one whose
    header has another format name or version.
    """
    if not os.path.lexists(path):
        raise DataFormatError(path, None, f"{what} file not found")
    try:
        fh = open_regular(Path(path))  # a FIFO or a device is refused, never waited on
    except DataFormatError as exc:  # a folder, a FIFO, a device: say which, as this file kind's error
        raise DataFormatError(path, None, f"not a structrank {what} file ({exc.problem})") from None
    except OSError as exc:
        raise DataFormatError(path, None, f"not a structrank {what} file ({exc})") from None
    # numpy reads the archive from this one open file, which closes here whatever happens (np.load given a
    # path leaves its file open when the archive turns out damaged: a ResourceWarning after the error)
    with fh:
        header, arrays = _read_open_archive(path, fh, what, max_header_bytes)
    if not isinstance(header, dict) or header.get("format") != format_name:
        raise DataFormatError(path, None, f"not a structrank {what} file (wrong format name)", "format")
    if type(header.get("version")) is not int or header.get("version") != version:  # not 1.0 or true either
        raise DataFormatError(path, None, f"{what} format version {header.get('version')!r}; this structrank "
                              f"reads version {version}", "version")
    return header, arrays


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
