"""Experiments: a resumable runner, a durable result store, and report writers.

One module per paper builds the runs of its tables and figures and hands them to
:func:`run_all`; results land in a :class:`ResultStore` (SQLite), from which ``results.csv``,
``report.md`` and docs/RESULTS.md are generated.

Example
-------
>>> import tempfile, os
>>> from structrank_lab.experiments import ResultStore, RunSpec, run_all, markdown_table
>>> store = ResultStore(os.path.join(tempfile.mkdtemp(), "runs.sqlite"))
>>> rows = run_all([RunSpec("demo2024", "toy", model="const")],
...                lambda spec: [("map", "trec", 0.5)], store, progress=False)
>>> print(markdown_table(rows, fmt="{:.2f}"))
| model | map |
|---|---|
| const | 0.50 |
>>> store.close()
"""

from structrank_lab.experiments.report import markdown_table, pivot, write_report, write_results_markdown
from structrank_lab.experiments.runner import Measurement, RunFailedError, RunSpec, run_all
from structrank_lab.experiments.run_key import RunKey, canonical_params
from structrank_lab.experiments.store import COLUMNS, ResultStore
from structrank.figures import new_figure, save_figure

__all__ = [
    "COLUMNS",
    "Measurement",
    "ResultStore",
    "RunFailedError",
    "RunKey",
    "RunSpec",
    "canonical_params",
    "markdown_table",
    "new_figure",
    "pivot",
    "run_all",
    "save_figure",
    "write_report",
    "write_results_markdown",
]
