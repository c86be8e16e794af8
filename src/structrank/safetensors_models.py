"""Model files of the text rerankers: one safetensors file, the weights and structrank's JSON header, no pickle.

A transformer's weights are too many and too structured for the npz of ``model_io``; safetensors (the
format Hugging Face writes) stores named tensors and a string-to-string metadata table, and reading it
runs no code. The metadata holds one entry, ``structrank``: the JSON header every model file has
(format name and version, structrank's version, the class, its constructor parameters) plus the fitted
attributes that are not tensors (``best_epoch_``, the dev curve), the network's config and the tokenizer
(``tokenizer.json``'s text), so that one file is the whole model and predicting needs no encoder folder.

Loading (``load_safetensors_model``) checks before building anything: the file's safetensors header
(its length, its JSON, the metadata), the class (one the model registry trains), the parameters (the
class's declared constraints), the attributes; then the tensors against the network the config builds
(names and shapes: ``load_state_dict(strict=True)``), and that every floating tensor is finite. Every
problem is a DataFormatError naming the file and the field. Saving is atomic (``structrank.atomic``).
"""

# deferred imports: safetensors, torch and transformers (the text extra) and the registry load when a text model is saved or loaded

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

import numpy as np

from structrank.atomic import atomic_open
from structrank.errors import DataFormatError
from structrank.files import open_regular

FORMAT_NAME = "structrank-model"
FORMAT_VERSION = 1
#: the safetensors header holds the tensors' table and the tokenizer (hundreds of kilobytes); more is not ours
MAX_SAFETENSORS_HEADER = 1 << 26
#: the fitted attributes kept in the header, and what each must be
ATTRIBUTES = {"best_epoch_": int, "n_epochs_": int, "gain_": str, "dev_curve_": list, "dev_epochs_": list,
              "epoch_seconds_": list}


def is_safetensors(path) -> bool:
    """Whether ``path`` starts as a safetensors file does (8 bytes of header length, then ``{``)."""
    try:
        with open_regular(Path(path)) as fh:
            head = fh.read(9)
    except (OSError, DataFormatError):
        return False
    return len(head) == 9 and head[8:9] == b"{" and struct.unpack("<Q", head[:8])[0] <= MAX_SAFETENSORS_HEADER


def save_safetensors_model(model, path, header: dict) -> None:
    """Write ``model`` (a fitted text reranker: ``network_``, ``tokenizer_``) to ``path``; ``header`` is
    ``model_io``'s (format, version, class, parameters)."""
    from safetensors.torch import save

    from structrank.learners.encoders import config_text, tokenizer_text

    attributes = {}
    for key, kind in ATTRIBUTES.items():
        if hasattr(model, key):
            value = getattr(model, key)
            attributes[key] = np.asarray(value).tolist() if kind is list else kind(value)
    header = {**header, "attributes": attributes, "config": config_text(model.network_),
              "tokenizer": tokenizer_text(model.tokenizer_)}
    # each tensor its own contiguous copy: safetensors refuses tensors that share memory (tied weights)
    tensors = {name: t.detach().to("cpu").contiguous().clone() for name, t in model.network_.state_dict().items()}
    data = save(tensors, metadata={"structrank": json.dumps(header, ensure_ascii=False)})
    with atomic_open(path, "wb") as fh:
        fh.write(data)


def _read_header(path) -> dict:
    """The safetensors header's JSON of ``path`` (its tensors' table and ``__metadata__``)."""
    with open_regular(Path(path)) as fh:
        head = fh.read(8)
        if len(head) != 8:
            raise DataFormatError(path, None, "not a structrank model file (too short)")
        (size,) = struct.unpack("<Q", head)
        if size > MAX_SAFETENSORS_HEADER or size > os.fstat(fh.fileno()).st_size - 8:
            raise DataFormatError(path, None, f"damaged model file (its safetensors header claims {size} bytes)")
        raw = fh.read(size)
    try:
        table = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise DataFormatError(path, None, f"damaged model file (safetensors header: {exc})") from None
    if not isinstance(table, dict):
        raise DataFormatError(path, None, "damaged model file (safetensors header is not an object)")
    return table


def load_safetensors_model(path):
    """The text reranker saved at ``path`` by ``save_safetensors_model``, every part checked (module docstring)."""
    from structrank.learners.base import parameter_problems
    from structrank.learners.registry import ranker_class

    table = _read_header(path)
    metadata = table.get("__metadata__")
    if not isinstance(metadata, dict) or not isinstance(metadata.get("structrank"), str):
        raise DataFormatError(path, None, "not a structrank model file (a safetensors file without structrank's "
                              "header)", "__metadata__")
    try:
        header = json.loads(metadata["structrank"])
    except (ValueError, RecursionError) as exc:
        raise DataFormatError(path, None, f"damaged model file (header: {exc})", "header") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT_NAME:
        raise DataFormatError(path, None, "not a structrank model file (wrong format name)", "format")
    if type(header.get("version")) is not int or header["version"] != FORMAT_VERSION:
        raise DataFormatError(path, None, f"model format version {header.get('version')!r}; this structrank reads "
                              f"version {FORMAT_VERSION}", "version")
    cls = ranker_class(header.get("class"))
    if cls is None or getattr(cls, "_model_file", None) != "safetensors":
        raise DataFormatError(path, None, f"unknown model class {header.get('class')!r}", "class")
    params = header.get("params")
    if not isinstance(params, dict) or set(params) - set(cls().get_params(deep=False)):
        raise DataFormatError(path, None, f"parameters do not match {cls.__name__}", "params")
    model = cls(**params)
    problems = parameter_problems(model)
    if problems:
        key, problem = next(iter(problems.items()))
        raise DataFormatError(path, None, problem, f"parameter {key}")
    attributes = header.get("attributes")
    if not isinstance(attributes, dict) or set(attributes) - set(ATTRIBUTES):
        raise DataFormatError(path, None, "unknown fitted attributes", "attributes")
    for key, value in attributes.items():
        kind = ATTRIBUTES[key]
        ok = isinstance(value, kind) and not isinstance(value, bool) and (
            kind is not list or all(isinstance(v, (int, float)) and not isinstance(v, bool) and np.isfinite(v)
                                    for v in value))
        if not ok:
            raise DataFormatError(path, None, f"{key} must be {kind.__name__}", key)
        setattr(model, key, np.asarray(value) if kind is list else value)
    for key in ("config", "tokenizer"):
        if not isinstance(header.get(key), str):
            raise DataFormatError(path, None, f"the header holds no {key}", key)
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    from structrank.learners.encoders import load_tokenizer, network_from_config, require_text_extra

    require_text_extra("loading a cross-encoder model")
    try:
        network = network_from_config(header["config"])
    except (ValueError, TypeError, KeyError) as exc:
        raise DataFormatError(path, None, f"the network's config cannot be read ({exc})", "config") from None
    try:
        model.tokenizer_ = load_tokenizer(header["tokenizer"])
    except Exception as exc:  # tokenizers raises its own Exception type for a bad tokenizer.json
        raise DataFormatError(path, None, f"the tokenizer cannot be read ({exc})", "tokenizer") from None
    try:
        tensors = load_file(str(path))
    except (SafetensorError, OSError, ValueError) as exc:
        raise DataFormatError(path, None, f"damaged model file ({exc})", "tensors") from None
    for name, tensor in tensors.items():
        if tensor.is_floating_point() and not bool(tensor.isfinite().all()):
            raise DataFormatError(path, None, f"tensor {name} holds NaN or infinite values", name)
    try:
        network.load_state_dict(tensors, strict=True)
    except RuntimeError as exc:
        first = str(exc).splitlines()[0:3]
        raise DataFormatError(path, None, f"the tensors do not fit the network of its config ({' '.join(first)})",
                              "tensors") from None
    network.eval()
    model.network_ = network
    return model


__all__ = ["is_safetensors", "load_safetensors_model", "save_safetensors_model"]
