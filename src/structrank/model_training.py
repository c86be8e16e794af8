"""Training a registered model from files, as ``structrank train`` does: read, choose on a validation file, save.

- Parameters: the fixed ones (``--set``) are checked whole before any file is read: a loss's options go in
  ``loss_params``, unknown names and bad values fail, and so does a parameter the model would not read with its
  loss (``learners.registry.ignored_parameters``).
- Convention: the one selection on vali follows (``training_convention``): named once, as an argument or as the
  fixed parameter ``convention``; a model with a ``convention`` parameter gets it; a text reranker is judged by
  its vali file's task's official tool unless one is named (``labelled.data_convention``: SemEval's scorer for
  SemEval threads, trec_eval's rules for the rest).
- Files: a model on text reads question-candidate pairs (``structrank.labelled.read_labelled``); a feature model
  reads the validation file with the training file's feature count.
- Progress: a bar over the grid's fits and one over each fit's epochs (``training_progress``; the epochs come
  from ``learners.epochs.epoch_progress``, so that no learner knows of bars), and messages written above them.
"""

from __future__ import annotations

import contextlib
import sys

import numpy as np
from tqdm.auto import tqdm

from structrank.data import read_letor
from structrank.labelled import data_convention, queries_with_both, read_labelled
from structrank.launch import is_main_process
from structrank.learners.epochs import epoch_progress
from structrank.learners.registry import get_model, ignored_parameters, select_on_vali
from structrank.metrics import resolve_convention
from structrank.metrics.conventions import CONVENTION_NAMES
from structrank.model_io import save_model


def training_convention(spec, fixed: dict, convention=None, vali=False) -> str | None:
    """The convention named for selection on vali: ``convention`` (``--convention``), or the fixed parameter
    ``convention`` (``--set convention=X``), which means the same (taken out of ``fixed``; both given, they must
    agree), else None: the vali file's own (``labelled.data_convention``, once ``train_model`` has read it). A
    model with a ``convention`` parameter (``score()``'s) gets the one named in ``fixed``; without ``vali`` and
    without that parameter, naming one would change nothing, which is an error rather than a silent no-op."""
    given = fixed.pop("convention", None)
    if given is not None and convention is not None and given != convention:
        raise ValueError(f"--set convention={given} and --convention {convention} disagree: give the "
                         "convention once, as --convention")
    named = convention or given
    if named is None:
        return None
    if named not in CONVENTION_NAMES:
        raise ValueError(f"--set convention={named!r}: not a convention; --convention takes one of "
                         f"{', '.join(CONVENTION_NAMES)}")
    has_parameter = "convention" in spec.cls().get_params(deep=False)
    if has_parameter:
        fixed["convention"] = named
    elif not vali:
        raise ValueError(f"--convention {named}: {spec.name} has no convention parameter, and without --vali "
                         "there is no selection for it to apply to")
    return named


def train_model(model, train, out, *, fixed=None, vali=None, convention=None, queries=None, jobs=None,
                workers=None, progress=None, say=None):
    """Train the registered ``model`` (a name, or ``learners.registry.get_model``'s ModelSpec) on the file
    ``train`` and save it to ``out`` (``model_io.save_model``); returns the fitted model.

    ``fixed``: parameters held ({name: value}; a loss's options inside ``loss_params``). With ``vali`` (a file),
    the other parameters are chosen on it from the model's grid (``learners.registry.select_on_vali``), by the
    model's metric under ``convention`` (``training_convention``), on the queries ``queries`` keeps ("all", or
    "with-both": those with a relevant and a non-relevant document), ``jobs`` grid points at a time; without it,
    the defaults are used. ``workers``: a context manager the fits run inside (a dask cluster's,
    ``parallel.workers.cluster``; None: this machine). ``progress``: the bars drawn on standard error (None: on a
    terminal, True: always, False: never; a text reranker's fine-tuning steps draw theirs only when told either
    way). ``say(message)``: where progress messages go (None: nowhere).
    """
    spec = get_model(model) if isinstance(model, str) else model
    fixed = spec.with_loss_params(dict(fixed or {}))  # a loss's options in loss_params (k=5 refused)
    spec = spec.chosen_with(fixed)
    convention = training_convention(spec, fixed, convention, vali is not None)
    spec.make(**fixed)  # unknown names and bad values fail here, before any work
    ignored = ignored_parameters(spec, fixed)
    if ignored is not None:
        raise ValueError(ignored)
    if spec.inputs == "text" and progress is not None:  # a fine-tuning run's bar over its steps
        fixed.setdefault("progress", progress)
    tell = say or (lambda message: None)
    data = read_labelled(train, spec.inputs)
    n_fits = len(list(spec.candidates(fixed))) if vali is not None else 1
    with workers or contextlib.nullcontext(), training_progress(n_fits, progress, say) as report:
        if vali is not None:
            held_out = (read_labelled(vali, spec.inputs) if spec.inputs == "text"
                        else read_letor(vali, n_features=data.n_features))
            if convention is None:  # the file's own: its task's official tool for text (SemEval's scorer), else auto
                convention = data_convention(None, held_out)
                if convention != "auto" and "convention" in spec.cls().get_params(deep=False):
                    fixed["convention"] = convention  # a text reranker keeps its epoch by it too
            if queries == "with-both":
                held_out = held_out.take_queries(queries_with_both(held_out, vali, convention))
            if not (np.asarray(held_out.y) > 0).any():  # every model would score 0 on it: the choice would be void
                raise ValueError(f"--vali {vali}: no document has a label above 0, so every model scores 0 on it and "
                                 "nothing can be chosen by it; give a validation file with relevant documents")
            chosen, auto = resolve_convention(convention, held_out.y)
            label = f"{chosen.name} (auto)" if auto else chosen.name
            tell(f"choosing on {vali} by {spec.metric_label} under {label}")
            fitted, params, value = select_on_vali(
                spec, data, held_out, fixed, convention=convention, n_jobs=jobs or 1,
                report=lambda p, v: report(f"  {p}  vali {spec.metric_label} = {v:.4f}", fitted=True),
            )
            # as many digits as `structrank evaluate` prints, so that the two can be compared
            report(f"chose {params}: vali {spec.metric_label} {value:.6f} under {label}")
        else:
            fitted = spec.make(**fixed).fit(data)
    if getattr(fitted, "formulation_", None):  # what target="auto" chose, and why
        tell(f"formulation: {fitted.formulation_}")
    if hasattr(fitted, "health_"):  # structural and perceptron fits: how far the optimiser moved from w = 0
        tell(f"optimiser health: {fitted.health_}")
    members = getattr(fitted, "member_dev_", None)
    if members is not None and len(members) > 1:  # a cross-encoder soup: each fine-tuning's vali value, then the mean's
        each = ", ".join(f"{value:.4f} (epoch {epoch})" for value, epoch in zip(members, fitted.member_epochs_))
        tell(f"soup of {len(members)} fine-tunings: vali {each}; their averaged weights {fitted.soup_dev_:.4f}")
    if getattr(fitted, "stop_reason_", None):  # an iterative learner whose epochs stopped changing the model
        tell(fitted.stop_reason_)
    if is_main_process():  # the copies a launcher started end with the same model: the first one writes it
        save_model(fitted, out)
    return fitted


@contextlib.contextmanager
def training_progress(n_fits, progress=None, say=None):
    """Bars over a training's ``n_fits`` grid fits and each fit's epochs (tqdm, with ETA, on standard
    error): drawn on a terminal when ``progress`` is None, always when True, never when False. Yields
    ``report(message, fitted=False)``: ``message`` goes to ``say`` (None: nowhere) with the bars cleared
    around it; ``fitted``: one more grid point is done."""
    disable = None if progress is None else not progress  # None: tqdm draws on a terminal only
    grid = tqdm(total=n_fits, desc="grid", unit="fit", disable=True if n_fits < 2 else disable, file=sys.stderr)
    bars = [grid]

    def on_epoch(epoch, total):
        if len(bars) == 1:  # made at the first epoch: a learner without epochs gets no bar
            # below a grid's bar, each fit's epochs clear when it ends
            bars.append(tqdm(total=total, desc="epochs", unit="epoch", disable=disable, leave=grid.disable,
                             file=sys.stderr, position=0 if grid.disable else 1))
        elif epoch == 1:  # the next fit's first epoch
            bars[1].reset(total=total)
        bars[1].update(epoch - bars[1].n)

    def report(message, fitted=False):
        if fitted:
            grid.update(1)
        if say is not None:
            with tqdm.external_write_mode(file=sys.stderr):
                say(message)

    try:
        with epoch_progress(on_epoch):
            yield report
    finally:
        for bar in reversed(bars):
            bar.close()
