"""The runs of neural-qa, in the order they run, and ``reproduce``."""

from __future__ import annotations

import sys
from pathlib import Path

from structrank_lab.experiments.neural_qa.data import folders
from structrank_lab.experiments.neural_qa.design import (BUDGET, DATASETS, DEFAULT_ENCODER, DEV_METRIC, EXPERIMENT, FIRST,
                                                     FINE_TUNED, LOSSES, QUICK_BUDGET, QUICK_SEEDS, REFERENCE_ROWS,
                                                     SEEDS, SEMEVAL_WITH_2015, TRANSFER_FROM, TRANSFER_TO, TRANSFERRED,
                                                     encoder_override, n_threads)
from structrank_lab.experiments.neural_qa.report import report_sections
from structrank_lab.experiments.neural_qa.runs import run
from structrank_lab.experiments.report import write_report
from structrank_lab.experiments.runner import RunSpec, SpecRun, run_experiment


def plan(quick=False) -> list:
    """One run per (data set, row, seed): seed 0 of every row on WikiQA, then on TREC QA (``FIRST``: the targets are
    judged there, so both get a first verdict before either gets a further seed), then seed 1 on each, then seed 2;
    then SemEval's seed 0, 1 and 2 in turn. The frozen cosine and the feature LSP-AP, which have no seed, come before
    a data set's seed-0 fine-tunings. Last the transfer rows (``TRANSFERRED``), seed by seed. ``quick``: seed 0 only."""
    budget = {"budget": "quick" if quick else "full"}
    seeds = QUICK_SEEDS if quick else SEEDS
    order = [(dataset, seed) for seed in seeds for dataset in FIRST]
    order += [(dataset, seed) for seed in seeds for dataset in DATASETS if dataset not in FIRST]
    specs = []
    for dataset, seed in order:
        rows = [*REFERENCE_ROWS, *FINE_TUNED] if seed == 0 else list(FINE_TUNED)
        specs += [RunSpec(EXPERIMENT, dataset, "test", 0, seed, row, {**budget, **row_params(row)}) for row in rows]
    specs += [RunSpec(EXPERIMENT, TRANSFER_TO, "test", 0, seed, row, {**budget, **row_params(row)})
              for seed in seeds for row in TRANSFERRED]
    return specs


def row_params(row) -> dict:
    """The ``loss_params`` a fine-tuned row's ``xenc-<loss>`` model sets by default (``XENC_DEFAULTS``), so that
    each row trains what ``structrank train xenc-<loss>`` trains and a run's key names them (a changed default runs
    the row again); {} where it sets none."""
    # deferred: the model registry loads scikit-learn, which planning a run does not otherwise need
    from structrank.learners.registry import MODELS

    row = TRANSFERRED.get(row, row)
    defaults = MODELS[f"xenc-{LOSSES[row]}"].defaults if row in LOSSES else {}
    return {"loss_params": defaults["loss_params"]} if "loss_params" in defaults else {}


def read_by(spec, sources) -> list:
    """The data folders a run reads: its data set's, and a transfer row's first data set's before it."""
    return [sources[TRANSFER_FROM]] * (spec.model in TRANSFERRED) + [sources[spec.dataset]]


def configuration(quick, encoder) -> dict:
    """What changes the runs' values but not their keys (the run identity's ``config``)."""
    return {"encoder": encoder or DEFAULT_ENCODER, "budget": QUICK_BUDGET if quick else BUDGET,
            "dev_metric": DEV_METRIC, "semeval_with_2015": SEMEVAL_WITH_2015,
            "engine": "sentence-transformers CrossEncoderTrainer"}


def kept_folder(quick, encoder):
    """The repository's folder of kept runs (``results/neural-qa``) for a full run of the default encoder from a
    checkout; None otherwise (a quick run, the tests' encoder, an installed package)."""
    root = Path(__file__).resolve().parents[4]
    if quick or encoder is not None or not (root / "pyproject.toml").is_file():
        return None
    return root / "results" / EXPERIMENT


def reproduce(out, data_dir=None, quick=False, n_jobs=1, keep=None):
    """Fine-tune every row on the three data sets with every seed (``quick``: a few questions, one epoch, one seed),
    beside the frozen cosine and the feature LSP-AP, and write ``results.csv``, ``report.md`` and the figure.

    The encoder is the default (all-MiniLM-L6-v2) unless the environment variable ``STRUCTRANK_NEURAL_QA_ENCODER``
    names a folder; each run takes ``design.n_threads(n_jobs)`` of torch's threads. ``keep``: the folder of kept
    runs read first and written as each run finishes (default ``kept_folder``: the repository's ``results/neural-qa``
    for a full run from a checkout).
    """
    out = Path(out)
    sources = folders(data_dir)
    missing = [str(folder) for folder in sources.values() if not folder.is_dir()]
    if missing:
        raise FileNotFoundError(f"{EXPERIMENT}: data folders not found: {', '.join(missing)}")
    encoder = encoder_override()
    specs = plan(quick)
    threads = n_threads(n_jobs)
    keep = kept_folder(quick, encoder) if keep is None else Path(keep)
    rows = run_experiment(out, specs, SpecRun(run, None if data_dir is None else str(data_dir), encoder, threads),
                          n_jobs, EXPERIMENT, data=list(sources.values()), inputs=lambda spec: read_by(spec, sources),
                          config=configuration(quick, encoder), kept=keep)
    write_report(out / "report.md", report_sections(rows, out),
                 title="Cross-encoders fine-tuned on structured losses (neural-qa)")
    print(f"wrote {out / 'results.csv'} and {out / 'report.md'}", file=sys.stderr)
    return rows
