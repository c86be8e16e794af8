"""Turn long-form results into markdown tables, reports and PNG figures.

Every file is written atomically (:mod:`structrank.atomic`), so an interrupted reproduction
never leaves a half-written report. docs/RESULTS.md is produced by
:func:`write_results_markdown` from a result store and is never edited by hand.

Tables give the mean ± standard deviation over folds; ``write_results_markdown`` puts the Claims
section first (structrank_lab.experiments.claims).

Example
-------
>>> rows = [{"model": "svm-map", "metric": "map", "fold": f, "value": v}
...         for f, v in enumerate([0.4, 0.5])]
>>> print(markdown_table(rows, index="model", columns="metric", fmt="{:.2f}"))
| model | map |
|---|---|
| svm-map | 0.45 |
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from structrank.atomic import write_bytes_atomic, write_text_atomic
from structrank_lab.experiments.claims import claims_section
from structrank_lab.experiments.registry import CLAIMS, REPORTS

_MISSING = "—"


def _fields(spec) -> tuple[str, ...]:
    return (spec,) if isinstance(spec, str) else tuple(spec)


def _params_text(text) -> str:
    # Canonical JSON is exact but noisy in a table; "C=1.0, loss=map" reads better.
    try:
        params = json.loads(text) if isinstance(text, str) else dict(text)
    except (ValueError, TypeError, RecursionError):
        return str(text)
    return ", ".join(f"{k}={v}" for k, v in sorted(params.items()))


def _label(record: Mapping, fields: Sequence[str]) -> str:
    parts = []
    for name in fields:
        value = record[name]
        text = _params_text(value) if name == "params" else str(value)
        if text:
            parts.append(text)
    return " ".join(parts)


def _escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _mean_std(values: list[float]) -> tuple[float, float]:
    n = len(values)
    mean = math.fsum(values) / n
    # Sample standard deviation over folds/seeds; a single value has none.
    std = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    return mean, std


def pivot(rows: Iterable[Mapping], index="model", columns="metric", values="value"):
    """Group long-form records into cells and collect each cell's values.

    Parameters
    ----------
    rows : iterable of mapping
        Long-form records (as :meth:`ResultStore.rows` returns).
    index, columns : str or sequence of str
        The field(s) whose values label the table's rows and columns.
    values : str
        The field holding the numbers.

    Returns
    -------
    row_labels, column_labels : list of str
        In order of first appearance.
    cells : dict
        ``{(row_label, column_label): [values ...]}``.

    >>> pivot([{"model": "a", "metric": "map", "value": 1.0}])
    (['a'], ['map'], {('a', 'map'): [1.0]})
    """
    index, columns = _fields(index), _fields(columns)
    row_labels, column_labels, cells = {}, {}, defaultdict(list)
    for record in rows:
        r, c = _label(record, index), _label(record, columns)
        row_labels.setdefault(r, None)
        column_labels.setdefault(c, None)
        cells[(r, c)].append(float(record[values]))
    return list(row_labels), list(column_labels), dict(cells)


def markdown_table(
    rows: Iterable[Mapping],
    index="model",
    columns="metric",
    values: str = "value",
    fmt: str = "{:.4f}",
    std: bool = False,
    row_order: Sequence[str] | None = None,
    column_order: Sequence[str] | None = None,
) -> str:
    """A GitHub markdown table of the mean of ``values`` per (index, columns) cell.

    Everything not named by ``index`` or ``columns`` (folds, seeds, ...) is averaged over, so
    filter ``rows`` first to what one table should show.

    Parameters
    ----------
    rows : iterable of mapping
        Long-form records.
    index : str or sequence of str, default "model"
        Field(s) naming the table's rows (several are joined with spaces; ``params`` is shown
        as ``name=value`` pairs).
    columns : str or sequence of str, default "metric"
        Field(s) naming the table's columns.
    values : str, default "value"
        Field holding the numbers.
    fmt : str, default "{:.4f}"
        Format of each number.
    std : bool, default False
        Add `` ± std`` (sample standard deviation) to cells averaging several values.
    row_order, column_order : sequence of str, optional
        Labels in the order to show them (others follow in order of first appearance).

    Returns
    -------
    str
        The table, without a trailing newline; ``"—"`` marks an empty cell.

    Examples
    --------
    >>> rows = [{"model": m, "metric": "map", "value": v}
    ...         for m, v in [("a", 0.5), ("a", 0.7), ("b", 0.2)]]
    >>> print(markdown_table(rows, std=True, fmt="{:.1f}"))
    | model | map |
    |---|---|
    | a | 0.6 ± 0.1 |
    | b | 0.2 |
    """
    row_labels, column_labels, cells = pivot(rows, index, columns, values)

    def ordered(labels, order):
        if not order:
            return labels
        first = [label for label in order if label in labels]
        return first + [label for label in labels if label not in first]

    row_labels = ordered(row_labels, row_order)
    column_labels = ordered(column_labels, column_order)
    header = " / ".join(_fields(index))
    lines = ["| " + " | ".join(_escape(t) for t in [header, *column_labels]) + " |",
             "|" + "---|" * (len(column_labels) + 1)]
    for r in row_labels:
        texts = []
        for c in column_labels:
            found = cells.get((r, c))
            if not found:
                texts.append(_MISSING)
                continue
            mean, sd = _mean_std(found)
            text = fmt.format(mean)
            if std and len(found) > 1:
                text += " ± " + fmt.format(sd)
            texts.append(text)
        lines.append("| " + " | ".join([_escape(r), *texts]) + " |")
    return "\n".join(lines)


def write_report(path, sections, title: str | None = None) -> Path:
    """Write a markdown report atomically.

    Parameters
    ----------
    path : str or Path
        The file to write (e.g. ``DIR/report.md``).
    sections : mapping of str to str, or sequence of (heading, body) pairs or str
        Each section's heading (written as ``## heading``) and markdown body; a bare string
        is written as it is.
    title : str, optional
        A ``# title`` line at the top.

    Examples
    --------
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "report.md")
    >>> _ = write_report(path, {"Table 1": "| a |\\n|---|\\n| 1 |"}, title="demo")
    >>> print(open(path).read().splitlines()[:3])
    ['# demo', '', '## Table 1']
    """
    items = sections.items() if isinstance(sections, Mapping) else sections
    parts = [f"# {title}"] if title else []
    for item in items:
        if isinstance(item, str):
            parts.append(item.strip("\n"))
        else:
            heading, body = item
            parts.append(f"## {heading}\n\n{str(body).strip(chr(10))}")
    path = Path(path)
    write_text_atomic(path, "\n\n".join(parts) + "\n")
    return path




QUERY_PREFIX = "q:"  # per-query values are recorded as "q:<qid>:<metric>"


def dataset_parts(rows, datasets: Mapping):
    """(dataset, convention, its rows, its number of folds) of each data set of ``datasets`` ({name: convention})
    that ``rows`` hold, in that order: the loop a LETOR experiment's report sections run over."""
    for dataset, convention in datasets.items():
        part = [r for r in rows if r["dataset"] == dataset]
        if part:
            yield dataset, convention, part, len({r["fold"] for r in part})


def query_values(rows, dataset, model, metric):
    """(seed, (fold, qid), value) of each of one model's recorded test queries (``q:<qid>:<metric>``; the seed None
    where a row records none)."""
    suffix = ":" + metric
    for r in rows:
        if (r["dataset"] == dataset and r["model"] == model and r["metric"].startswith(QUERY_PREFIX)
                and r["metric"].endswith(suffix)):
            yield r.get("seed"), (r["fold"], r["metric"][len(QUERY_PREFIX):-len(suffix)]), r["value"]


def per_query(rows, dataset, model, metric):
    """{(fold, qid): value} of one model's test queries, recorded as ``q:<qid>:<metric>``; a model run
    with several seeds gives each query the mean over its seeds (the method's expected value on it,
    which is what a paired test over queries compares)."""
    values: dict = {}
    for _, key, value in query_values(rows, dataset, model, metric):
        values.setdefault(key, []).append(value)
    return {key: sum(v) / len(v) for key, v in values.items()}


def _metric_sort_key(name: str):
    """map, mrr, ndcg@1, ndcg@2, ..., ndcg@10, p@1 ...: by family, then by cut-off as a number."""
    family, _, k = name.partition("@")
    return (family, int(k) if k.isdigit() else -1, name)


def write_results_markdown(store, path, title: str, command: str, std: bool = True,
                           fmt: str = "{:.4f}") -> Path:
    """Write a RESULTS.md-style page of every table in ``store``.

    One section per (experiment, dataset, split, convention); in each, a row per model (and
    parameter setting, where a model has several) and a column per metric, each cell the mean
    over folds and seeds (± sample std when there are several).

    Parameters
    ----------
    store : ResultStore or list of ResultStore
        The results (one store per experiment, say).
    path : str or Path
        The file to write (e.g. ``docs/RESULTS.md``).
    title : str
        The page title.
    command : str
        The command that generates the page; the header names it, so the page is regenerated,
        never edited by hand.
    std : bool, default True
        Show ± std.
    fmt : str, default "{:.4f}"
        Number format.

    Examples
    --------
    >>> import tempfile, os
    >>> from structrank_lab.experiments.store import ResultStore, RunKey
    >>> folder = tempfile.mkdtemp()
    >>> store = ResultStore(os.path.join(folder, "runs.sqlite"))
    >>> _ = store.record(RunKey("e", "d", model="m"), [("map", "trec", 0.5)], seconds=1)
    >>> path = write_results_markdown(store, os.path.join(folder, "RESULTS.md"), "Results",
    ...                               "structrank reproduce e")
    >>> "structrank reproduce e" in open(path).read()
    True
    >>> store.close()
    """
    stores = store if isinstance(store, (list, tuple)) else [store]
    groups = defaultdict(list)
    custom = defaultdict(list)  # experiments that lay out their own report (tables and figures)
    beside = {}  # experiment -> the folder of its store (where reproduce left wall_time.json)
    for one in stores:
        folder_of_store = Path(one.path).parent
        for record in one.rows():
            if record["experiment"] in REPORTS:
                custom[record["experiment"]].append(record)
                beside[record["experiment"]] = folder_of_store
                continue
            groups[(record["experiment"], record["dataset"], record["split"],
                    record["convention"])].append(record)
    n_runs = sum(len(one) for one in stores)
    header = (
        f"<!-- Generated by `{command}`; do not edit by hand, run the command again. -->\n\n"
        f"> This page is generated from the recorded runs ({n_runs} run"
        f"{'' if n_runs == 1 else 's'}) by `{command}`. Do not edit it by hand.\n"
        f"> Cells are means over folds and seeds{' (± sample standard deviation)' if std else ''}."
    )
    sections = [header]
    # in CLAIMS' order; only the experiments on the page have their module imported
    claims = [c for experiment in CLAIMS if custom.get(experiment) for c in CLAIMS[experiment](custom[experiment])]
    if claims:
        sections.append(("Claims", "Every claim of the papers, tested against the runs on this page. The verdict is "
                         "computed from the recorded values; a sentence not backed by them says \"Hypothesis\".\n\n"
                         + claims_section(claims)))
    for experiment, records in sorted(custom.items()):
        # figures go beside the page, in figures/EXPERIMENT/, and are linked relative to it
        folder = Path(path).parent / "figures" / experiment
        timing = beside[experiment] / "wall_time.json"
        if timing.is_file():  # the reproduction's wall time, for reports that quote it
            folder.mkdir(parents=True, exist_ok=True)
            write_bytes_atomic(folder / "wall_time.json", timing.read_bytes())
        for section in REPORTS[experiment](records, folder, link_prefix=f"figures/{experiment}/"):
            sections.append((f"{experiment} — {section[0]}", section[1]) if isinstance(section, tuple) else section)
    if not groups and not custom:
        sections.append("No runs are recorded yet.")
    for (experiment, dataset, split, convention), records in sorted(groups.items(),
                                                                     key=lambda kv: str(kv[0])):
        # Show params only where they distinguish rows: a model run with several settings.
        settings = defaultdict(set)
        for record in records:
            settings[record["model"]].add(record["params"])
        index = ("model", "params") if any(len(s) > 1 for s in settings.values()) else "model"
        folds = {(r["fold"], r["seed"]) for r in records}
        body = (f"Metric convention `{convention}`; {len(folds)} fold/seed combination"
                f"{'' if len(folds) == 1 else 's'}.")
        # Metrics named "prefix:metric" (e.g. "nonempty:map") get a table of their own.
        by_prefix = defaultdict(list)
        for record in records:
            prefix, _, metric = record["metric"].rpartition(":")
            by_prefix[prefix].append({**record, "metric": metric})
        for prefix in sorted(by_prefix):
            part = by_prefix[prefix]
            order = sorted({r["metric"] for r in part}, key=_metric_sort_key)
            if prefix:
                body += f"\n\nMetrics prefixed `{prefix}:`"
            body += "\n\n" + markdown_table(part, index=index, columns="metric", fmt=fmt, std=std,
                                            column_order=order)
        sections.append((f"{experiment} — {dataset} ({split})", body))
    return write_report(path, sections, title=title)
