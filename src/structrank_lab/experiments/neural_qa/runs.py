"""How one run of neural-qa goes: a cross-encoder fine-tuned on a loss (structrank's or sentence-transformers', all in
that library's CrossEncoderTrainer), the frozen encoder's cosine, or haponchyk2018's feature-based LSP-AP; and what
every run records.

A run records its test MAP, MRR and P@1 and each test question's values (``q:<qid>:<metric>``, for the paired tests),
in the data set's convention; the fine-tuned rows also the dev MAP after each epoch (``curve:NNN``), the epoch kept
(``chosen:epoch``) and its dev MAP (``dev:map``), the training seconds of each epoch (``time:epoch:NNN``), and every
run its test prediction's and its whole wall seconds (``time:predict``, ``time:wall``), the pairs and questions it
read and the optimiser steps a fine-tuning took (``count:*``) and torch's threads (``run:threads``). A transfer row
records besides its first fine-tuning's best dev MAP (``transfer:dev:map``), epoch kept, seconds and counts.
"""

# deferred imports: torch, transformers, the learners and the QA features load when a run runs (`results` imports
# every experiment module, and the text extra is optional)

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field

import numpy as np

from structrank_lab.experiments.haponchyk2018.design import QUICK as PAPER_QUICK
from structrank_lab.experiments.haponchyk2018.design import ROWS as PAPER_ROWS
from structrank_lab.experiments.haponchyk2018.design import SELECT_CONVENTION as PAPER_SELECT
from structrank_lab.experiments.neural_qa.data import splits
from structrank_lab.experiments.neural_qa.design import (BUDGET, COSINE, CURVE_PREFIX, DATASETS, DEV_METRIC, LOSSES,
                                                     LSP_AP, LSP_AP_ROW, METRICS, QUICK_BUDGET, TRANSFER_FROM, TRANSFER_TO,
                                                     TRANSFERRED)
from structrank_lab.experiments.report import QUERY_PREFIX
from structrank_lab.experiments.runner import Measurement

@dataclass
class Fitted:
    """What a run's model gave: test scores, and for a fine-tuning its dev curve and timings."""

    scores: np.ndarray
    predict_seconds: float
    curve: tuple = ()  # dev MAP after each epoch in ``epochs``
    epochs: tuple = ()
    best_epoch: int | None = None
    epoch_seconds: tuple = ()
    extra: list = field(default_factory=list)  # Measurements of the row's own (chosen C, ...)


def _predicted(predict, test):
    tic = time.perf_counter()
    scores = np.asarray(predict(test), dtype=np.float64)
    return scores, time.perf_counter() - tic


def fitted_ranker(loss, loss_params, train, dev, budget, seed, encoder, threads, convention):
    """CrossEncoderRanker on ``loss`` with ``loss_params`` fitted on ``train``, its epoch kept by dev MAP."""
    # deferred: the text extra (torch, transformers) loads only to run
    from structrank.learners import CrossEncoderRanker

    model = CrossEncoderRanker(loss=loss, loss_params=loss_params, encoder=encoder, dev_metric=DEV_METRIC,
                               convention=convention, n_threads=threads, random_state=seed, **budget)
    return model.fit(train, eval_set=dev)


def fine_tune(loss, loss_params, train, dev, test, budget, seed, encoder, threads, convention) -> Fitted:
    """CrossEncoderRanker on ``loss`` with ``loss_params``, its epoch kept by dev MAP, and its test scores."""
    model = fitted_ranker(loss, loss_params, train, dev, budget, seed, encoder, threads, convention)
    scores, seconds = _predicted(model.predict, test)
    return Fitted(scores, seconds, tuple(model.dev_curve_), tuple(int(e) for e in model.dev_epochs_),
                  int(model.best_epoch_), tuple(model.epoch_seconds_),
                  [Measurement("count:steps", "count", float(model.n_steps_))])


def transferred(loss, loss_params, target, budget, seed, encoder, threads, data_dir, quick) -> Fitted:
    """``fine_tune`` on ``target`` (train, dev, test) from the model that ``loss`` fine-tuned on ``TRANSFER_FROM``'s
    training questions first (its epoch kept by that data set's dev MAP; its folder, the encoder, is removed after)."""
    source_train, source_dev, _ = splits(TRANSFER_FROM, data_dir, quick)
    source_convention = DATASETS[TRANSFER_FROM][1]
    tic = time.perf_counter()
    first = fitted_ranker(loss, loss_params, source_train, source_dev, budget, seed, encoder, threads,
                          source_convention)
    with tempfile.TemporaryDirectory(prefix="structrank-transfer-") as folder:
        first.model_.save_pretrained(folder)
        seconds = time.perf_counter() - tic
        fitted = fine_tune(loss, loss_params, *target, budget, seed, folder, threads, DATASETS[TRANSFER_TO][1])
    fitted.extra += [Measurement("transfer:dev:map", source_convention, float(first.dev_curve_.max())),
                     Measurement("transfer:epoch", "param", float(first.best_epoch_)),
                     Measurement("time:transfer", "time", seconds),
                     Measurement("count:transfer_questions", "count", float(source_train.n_queries)),
                     Measurement("count:transfer_steps", "count", float(first.n_steps_))]
    return fitted


def sentence_embeddings(texts, encoder, max_length, threads, batch_size=64) -> np.ndarray:
    """L2-normalised mean-pooled token vectors of ``texts`` from the encoder's transformer, as sentence-transformers
    embeds with all-MiniLM-L6-v2 (its modules: the transformer, mean pooling, normalisation)."""
    # deferred: the text extra (torch, transformers) loads only to run
    import torch
    from transformers import AutoModel

    from structrank.learners.cross_encoder import torch_threads
    from structrank.learners.encoders import encoder_folder, load_tokenizer, pad, pad_id_of, quiet_transformers
    from structrank.learners.text_pairs import length_sorted_batches

    folder = encoder_folder(encoder)
    tokenizer = load_tokenizer(folder)
    tokenizer.enable_truncation(int(max_length))
    encodings = tokenizer.encode_batch(list(texts))
    ids = [np.asarray(e.ids, dtype=np.int64) for e in encodings]
    types = [np.zeros(a.size, dtype=np.int64) for a in ids]
    out = np.empty((len(ids), 0), dtype=np.float64)
    with torch_threads(threads), torch.inference_mode():
        with quiet_transformers():
            net = AutoModel.from_pretrained(str(folder)).eval()
        for rows in length_sorted_batches([a.size for a in ids], batch_size):
            batch = pad(ids, types, rows, pad_id_of(tokenizer))
            hidden = net(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = ((hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)).double().numpy()
            if out.shape[1] == 0:
                out = np.empty((len(ids), pooled.shape[1]), dtype=np.float64)
            out[rows] = pooled
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.where(norms == 0.0, 1.0, norms)


def frozen_cosine(test, budget, encoder, threads) -> Fitted:
    """The cosine of question and candidate under the encoder as it ships (no fine-tuning)."""
    tic = time.perf_counter()
    texts = list(dict.fromkeys(list(test.questions) + list(test.candidates)))
    vectors = sentence_embeddings(texts, encoder, budget["max_length"], threads)
    at = {text: i for i, text in enumerate(texts)}
    q = vectors[[at[t] for t in test.pair_questions()]]
    d = vectors[[at[t] for t in test.candidates]]
    return Fitted(np.einsum("ij,ij->i", q, d), time.perf_counter() - tic)


def feature_lsp_ap(train, dev, test, quick, convention) -> Fitted:
    """haponchyk2018's LSP-AP on its similarity features (fitted on train), C and the epoch chosen on dev."""
    # deferred: the QA features (scikit-learn) and the learners load only to run
    from structrank.data import RankingDataset
    from structrank.learners.registry import get_model, select_on_vali
    from structrank.qa.features import QAFeaturizer

    featurizer = QAFeaturizer(crosses=True).fit(train)

    def featurised(data):
        qid = np.unique(data.qid, return_inverse=True)[1]
        return RankingDataset(featurizer.transform(data), np.asarray(data.labels, dtype=np.int64), qid,
                              docids=np.asarray(data.docids, dtype=object))

    name, fixed, grid = PAPER_ROWS[LSP_AP_ROW]
    if quick:
        grid, fixed = PAPER_QUICK.get(LSP_AP_ROW, grid), {**fixed, "max_epochs": 20}
    select = PAPER_SELECT if convention == "trec" else convention
    model, params, value = select_on_vali(get_model(name), featurised(train), featurised(dev), fixed,
                                          convention=select, grid=grid)
    features = featurised(test)
    scores, seconds = _predicted(lambda data: model.predict(data.X), features)
    extra = [Measurement("select:map", select, float(value))]
    extra += [Measurement(f"chosen:{k}", "param", float(v)) for k, v in params.items() if isinstance(v, (int, float))]
    if getattr(model, "dev_curve_", np.empty(0)).size:
        extra.append(Measurement("chosen:epoch", "param", float(model.best_epoch_)))
    return Fitted(scores, seconds, extra=extra)


def measured(spec, fitted: Fitted, train, dev, test, threads, seconds) -> list:
    """The measurements of a run (the module's notes)."""
    # deferred: start-up time of `results`; the metrics load to run
    from structrank.metrics import evaluate

    convention = DATASETS[spec.dataset][1]
    result = evaluate(test.labels, fitted.scores, test.qid, list(METRICS), convention, docids=test.docids)
    out = [Measurement(f"test:{m}", convention, v) for m, v in result.metrics.items()]
    out += [Measurement(f"{QUERY_PREFIX}{q}:{m}", convention, float(v))
            for m in METRICS for q, v in zip(result.qids, result.per_query[m])]
    for epoch, value in zip(fitted.epochs, fitted.curve):
        out.append(Measurement(f"{CURVE_PREFIX}{epoch:03d}", convention, float(value)))
        if epoch == fitted.best_epoch:
            out.append(Measurement("dev:map", convention, float(value)))
    if fitted.best_epoch is not None:
        out.append(Measurement("chosen:epoch", "param", float(fitted.best_epoch)))
    out += [Measurement(f"time:epoch:{e:03d}", "time", float(s)) for e, s in enumerate(fitted.epoch_seconds, 1)]
    if fitted.epoch_seconds:
        out.append(Measurement("time:train", "time", float(sum(fitted.epoch_seconds))))
    out += [Measurement("time:predict", "time", float(fitted.predict_seconds)),
            Measurement("time:wall", "time", seconds)]
    for split, data in (("train", train), ("dev", dev), ("test", test)):
        out += [Measurement(f"count:{split}_questions", "count", float(data.n_queries)),
                Measurement(f"count:{split}_pairs", "count", float(data.n_candidates))]
    return out + fitted.extra + [Measurement("run:threads", "param", float(threads))]


def run(spec, data_dir, encoder, threads) -> list:
    """One spec of the plan (``spec.params["budget"]``: "full" or "quick")."""
    started = time.perf_counter()
    quick = spec.params.get("budget") == "quick"
    budget = QUICK_BUDGET if quick else BUDGET
    convention = DATASETS[spec.dataset][1]
    train, dev, test = splits(spec.dataset, data_dir, quick)
    if spec.model in TRANSFERRED:
        base = TRANSFERRED[spec.model]
        fitted = transferred(LOSSES[base], spec.params.get("loss_params"), (train, dev, test), budget, spec.seed,
                             encoder, threads, data_dir, quick)
    elif spec.model in LOSSES:
        fitted = fine_tune(LOSSES[spec.model], spec.params.get("loss_params"), train, dev, test, budget, spec.seed,
                           encoder, threads, convention)
    elif spec.model == COSINE:
        fitted = frozen_cosine(test, budget, encoder, threads)
    elif spec.model == LSP_AP:
        fitted = feature_lsp_ap(train, dev, test, quick, convention)
    else:
        raise ValueError(f"unknown row {spec.model!r}")
    return measured(spec, fitted, train, dev, test, threads, time.perf_counter() - started)
