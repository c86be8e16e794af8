"""Model folders of the text rerankers: a sentence-transformers ``CrossEncoder`` folder with structrank's header.

A fine-tuned cross-encoder is saved as the folder ``CrossEncoder.save_pretrained`` writes (config, safetensors
weights, tokenizer, model card), so that ``sentence_transformers.CrossEncoder(folder)`` and the serving tools
built on it load it as it is and score as structrank does (the head's activation is saved as the identity:
logits). Beside the weights, ``structrank.json`` holds the JSON header every structrank model file has (format
name and version, structrank's version, the class, its constructor parameters) and the fitted attributes that
are not tensors (the epoch kept, the dev curve, the steps taken).

Loading (``load_cross_encoder_model``) checks before building anything: the header (its size, JSON, format,
version, class, the parameters against the class's constraints, the attributes), then that the weights are
finite, then builds the ``CrossEncoder``. Every problem is a DataFormatError naming the folder and the field. A
model file of the older single-file form (safetensors with the header inside) is refused in one line. Saving
writes a new folder beside the target and swaps it in, so a failed save leaves the old model whole.
"""

# deferred imports: safetensors, torch and sentence-transformers (the text extra) load when a model is saved or loaded

from __future__ import annotations

import json
import os
import shutil
import struct
from pathlib import Path

import numpy as np

from structrank.errors import DataFormatError
from structrank.files import open_regular
from structrank.learners.encoders import HEADER_FILE, is_model_folder

FORMAT_NAME = "structrank-model"
FORMAT_VERSION = 1
#: a header is a few kilobytes; a bigger one is not ours
MAX_HEADER_BYTES = 1 << 20
#: the fitted attributes kept in the header, and what each must be
ATTRIBUTES = {"best_epoch_": int, "n_epochs_": int, "n_steps_": int, "gain_": str, "dev_curve_": list,
              "dev_epochs_": list, "epoch_seconds_": list, "member_epochs_": list, "member_dev_": list,
              "soup_dev_": float}


def is_single_file_model(path) -> bool:
    """Whether ``path`` starts as the older single-file cross-encoder models did (a safetensors header)."""
    try:
        with open_regular(Path(path)) as fh:
            head = fh.read(9)
    except (OSError, DataFormatError):
        return False
    return len(head) == 9 and head[8:9] == b"{" and struct.unpack("<Q", head[:8])[0] <= 1 << 26


def refuse_single_file(path):
    """The one-line refusal of a model of the older single-file form."""
    raise DataFormatError(path, None, "a cross-encoder model of the older single-file form; this structrank saves and "
                          "reads model folders (sentence-transformers' CrossEncoder form): train it again", "format")


def save_cross_encoder_model(model, path, header: dict) -> None:
    """Write the fitted text reranker ``model`` (``model_``) as the folder ``path``; ``header`` is ``model_io``'s
    (format, version, class, parameters). A folder already at ``path`` must be one of ours; it is replaced whole."""
    path = Path(path)
    if path.exists() and not is_model_folder(path):
        raise FileExistsError(f"{path}: exists and is not a structrank model folder; give another --out")
    attributes = {}
    for key, kind in ATTRIBUTES.items():
        if hasattr(model, key):
            value = getattr(model, key)
            attributes[key] = np.asarray(value).tolist() if kind is list else kind(value)
    fresh = path.with_name(f".{path.name}.new-{os.getpid()}")
    old = path.with_name(f".{path.name}.old-{os.getpid()}")
    shutil.rmtree(fresh, ignore_errors=True)
    from structrank.learners.encoders import quiet_transformers

    try:
        with quiet_transformers():
            model.model_.save_pretrained(str(fresh))
        text = json.dumps({**header, "attributes": attributes}, ensure_ascii=False, indent=1)
        with open(fresh / HEADER_FILE, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        if path.exists():
            os.replace(path, old)
        os.replace(fresh, path)
    finally:
        shutil.rmtree(fresh, ignore_errors=True)
        shutil.rmtree(old, ignore_errors=True)


def read_header(path) -> dict:
    """structrank's header of the model folder ``path``, checked as JSON of our format and version."""
    file = Path(path) / HEADER_FILE
    if not file.exists():
        raise DataFormatError(path, None, f"not a structrank model folder (no {HEADER_FILE})", "header")
    with open_regular(file) as fh:
        raw = fh.read(MAX_HEADER_BYTES + 1)
    if len(raw) > MAX_HEADER_BYTES:
        raise DataFormatError(path, None, f"{HEADER_FILE} is larger than a model's header", "header")
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise DataFormatError(path, None, f"damaged model folder ({HEADER_FILE}: {exc})", "header") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT_NAME:
        raise DataFormatError(path, None, "not a structrank model folder (wrong format name)", "format")
    if type(header.get("version")) is not int or header["version"] != FORMAT_VERSION:
        raise DataFormatError(path, None, f"model format version {header.get('version')!r}; this structrank reads "
                              f"version {FORMAT_VERSION}", "version")
    return header


def load_cross_encoder_model(path):
    """The text reranker saved as the folder ``path`` by ``save_cross_encoder_model``, every part checked."""
    from structrank.learners.base import model_inputs, parameter_problems
    from structrank.learners.registry import ranker_class

    header = read_header(path)
    cls = ranker_class(header.get("class"))
    if cls is None or model_inputs(cls) != "text":
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
    from structrank.learners.encoders import quiet_transformers, require_text_extra

    require_text_extra("loading a cross-encoder model")
    weights = Path(path) / "model.safetensors"
    if not weights.is_file():
        raise DataFormatError(path, None, "the folder holds no model.safetensors", "weights")
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    try:
        tensors = load_file(str(weights))
    except (SafetensorError, OSError, ValueError) as exc:
        raise DataFormatError(path, None, f"damaged weights ({exc})", "weights") from None
    for name, tensor in tensors.items():
        if tensor.is_floating_point() and not bool(tensor.isfinite().all()):
            raise DataFormatError(path, None, f"tensor {name} holds NaN or infinite values", name)
    import torch
    from sentence_transformers.cross_encoder import CrossEncoder

    from structrank.learners.cross_encoder import serving_device

    try:
        with quiet_transformers():
            model.model_ = CrossEncoder(str(path), device=serving_device(model.device), local_files_only=True,
                                        activation_fn=torch.nn.Identity())
    except (OSError, ValueError, RuntimeError, KeyError, TypeError) as exc:
        first = " ".join(str(exc).splitlines()[:2])
        raise DataFormatError(path, None, f"sentence-transformers cannot load it ({first})", "weights") from None
    model.model_.eval()
    return model


__all__ = ["load_cross_encoder_model", "save_cross_encoder_model"]
