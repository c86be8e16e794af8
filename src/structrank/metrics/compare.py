"""Compare systems on the same queries: means, paired tests against a baseline, Holm's correction.

The first system is the baseline; every other one is paired with it query by query (the queries
both were measured on) on each measure, and tested by the paired t-test and the paired
randomisation test of ``structrank.metrics.significance`` (Fisher's sign flips: exact up to 2^16
sign patterns, else ``n_resamples`` seeded ones). With several systems the p-values of each measure
and test are adjusted by Holm's step-down method across the systems (Holm 1979), so that the
family-wise error over the comparisons with the baseline stays at ``alpha``.

``Comparison`` prints as text, markdown, JSON or a LaTeX table and draws the per-query differences.

``compare_results({system: EvaluationResult})`` and ``compare_values({system: {metric: {query:
value}}})`` build a ``Comparison``; ``holm`` is the correction; ``against_baseline`` gives the rows
of the reproductions' paired tables (own-metric, any-scorer). ``structrank compare`` runs it over
TREC runs (``--qrels``) or scores files (``--data``).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

import numpy as np

from structrank.errors import DataValidationError
from structrank.metrics.compare_latex import latex_table
from structrank.figures import new_figure, save_figure
from structrank.metrics.significance import paired_test, per_query_pairs
from structrank.metrics.tool_measures import higher_is_better


def holm(pvalues) -> np.ndarray:
    """Holm's step-down adjusted p-values (same order as given).

    >>> holm([0.01, 0.04, 0.03]).round(3).tolist()
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(pvalues, dtype=np.float64)
    m = p.size
    order = np.argsort(p, kind="stable")
    adjusted = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = adjusted
    return out


@dataclass(frozen=True)
class PairedRow:
    """One system against the baseline on one measure.

    Examples
    --------
    >>> from structrank.metrics.compare import compare_values
    >>> values = {"bm25": {"map": {q: 0.30 + 0.01 * q for q in range(8)}},
    ...           "mine": {"map": {q: 0.35 + 0.01 * q + 0.003 * (q % 3) for q in range(8)}}}
    >>> row = compare_values(values).rows[0]
    >>> row.system, row.queries, round(row.difference, 4), row.rand_p  # 8 queries: the exact test, 2 / 2**8
    ('mine', 8, 0.0526, 0.0078125)
    >>> row.verdict("bm25")
    'mine better'
    """

    system: str
    metric: str
    mean: float
    baseline_mean: float
    difference: float
    queries: int
    t_p: float
    rand_p: float
    t_p_holm: float
    rand_p_holm: float
    #: the paired t-test's 95% confidence interval of ``difference`` (not adjusted across the comparisons)
    ci_low: float = float("nan")
    ci_high: float = float("nan")
    #: the measure's direction (``tool_measures.higher_is_better``): which sign of ``difference`` is the better run
    higher_is_better: bool = True

    @property
    def system_ahead(self) -> bool:
        """Whether the system's mean is the better side of the baseline's, in the measure's direction."""
        return (self.difference > 0) == self.higher_is_better

    def significant(self, alpha) -> bool:
        """Both Holm-adjusted tests reject "no difference" at ``alpha``."""
        return self.t_p_holm < alpha and self.rand_p_holm < alpha

    def verdict(self, baseline: str, alpha: float = 0.05) -> str:
        """"<system> better", "<baseline> better" (both Holm-adjusted tests at ``alpha``) or "no significant difference"."""
        if not self.significant(alpha):
            return "no significant difference"
        return f"{self.system if self.system_ahead else baseline} better"


@dataclass
class Comparison:
    """The outcome of ``compare_results``.

    Examples
    --------
    >>> from structrank.metrics.compare import compare_values
    >>> values = {"bm25": {"map": {q: 0.30 + 0.01 * q for q in range(8)}},
    ...           "mine": {"map": {q: 0.35 + 0.01 * q + 0.003 * (q % 3) for q in range(8)}}}
    >>> comparison = compare_values(values)
    >>> comparison.baseline, comparison.systems, round(comparison.means["mine"]["map"], 4)
    ('bm25', ['bm25', 'mine'], 0.3876)
    >>> header, base, mine = comparison.table()
    >>> dict(zip(header, mine))["both < 0.05"]  # both Holm-adjusted tests reject "no difference"
    'better'
    """

    baseline: str
    systems: list
    metrics: list
    means: dict  # {system: {metric: mean over its queries}}
    rows: list  # PairedRow, by metric then system
    differences: dict = field(repr=False)  # {(system, metric): per-query system - baseline, query order}
    n_resamples: int = 10_000
    seed: int = 0
    alpha: float = 0.05
    #: {system: its queries left out because another system did not answer them} (``compare_results``)
    left_out: dict = field(default_factory=dict)

    def _marker(self, row) -> str:
        if not row.significant(self.alpha):
            return ""
        return "better" if row.system_ahead else "worse"

    def table(self) -> list:
        """[[cells]]: a header, then one line per system and measure."""
        lines = [["metric", "system", "mean", f"vs {self.baseline}", "95% CI", "queries", "t-test p (Holm)",
                  "randomisation p (Holm)", f"both < {self.alpha:g}"]]
        for metric in self.metrics:
            lines.append([metric, self.baseline, f"{self.means[self.baseline][metric]:.4f}", "(baseline)", "", "", "",
                          "", ""])
            for row in (r for r in self.rows if r.metric == metric):
                lines.append([metric, row.system, f"{row.mean:.4f}", f"{row.difference:+.4f}",
                              f"{row.ci_low:+.4f} to {row.ci_high:+.4f}", str(row.queries),
                              f"{row.t_p:.3g} ({row.t_p_holm:.3g})", f"{row.rand_p:.3g} ({row.rand_p_holm:.3g})",
                              self._marker(row)])
        return lines

    def to_text(self) -> str:
        lines = self.table()
        widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
        body = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip() for line in lines]
        return "\n".join(body) + "\n" + self._note() + "\n"

    def to_markdown(self) -> str:
        lines = self.table()
        out = ["| " + " | ".join(lines[0]) + " |", "|" + "---|" * len(lines[0])]
        out += ["| " + " | ".join(line) + " |" for line in lines[1:]]
        return "\n".join(out) + "\n\n" + self._note() + "\n"

    def to_latex(self, label: str = "tab:comparison") -> str:
        """A booktabs LaTeX table of the means, systems by measures, marked where significant against the
        baseline, with a caption that says what the marks mean (``metrics.compare_latex``)."""
        return latex_table(self, label)

    def to_dict(self) -> dict:
        return {"baseline": self.baseline, "systems": self.systems, "metrics": self.metrics, "means": self.means,
                "comparisons": [asdict(r) for r in self.rows], "n_resamples": self.n_resamples, "seed": self.seed,
                "alpha": self.alpha, "left_out": self.left_out}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), allow_nan=False)  # JSON has no NaN: an error, never an unreadable file

    def _note(self) -> str:
        dropped = {s: n for s, n in self.left_out.items() if n}
        if dropped:
            kept = self.rows[0].queries if self.rows else 0
            lines = (f"Over the {kept} queries every system answers; left out as not answered by every system: "
                     + ", ".join(f"{n} of {s}'s" for s, n in dropped.items()) + ".\n")
        else:
            lines = ""
        return lines + (f"Paired over the queries both systems were measured on; t-test (scipy.stats.ttest_rel) and "
                f"randomisation test (sign flips, exact up to 16 queries, else {self.n_resamples} seeded with "
                f"{self.seed}); Holm's correction across the {len(self.systems) - 1} comparison"
                f"{'' if len(self.systems) == 2 else 's'} with {self.baseline} per measure and test. 95% CI: the t-test's "
                "confidence interval of the mean difference, each on its own (not adjusted across comparisons).")

    def plot(self, path):
        """A PNG of each system's per-query differences from the baseline, sorted, one panel per measure."""
        fig = new_figure(figsize=(5 * len(self.metrics), 3.5))
        for i, metric in enumerate(self.metrics):
            ax = fig.add_subplot(1, len(self.metrics), i + 1)
            for system in self.systems[1:]:
                d = np.sort(self.differences[(system, metric)])[::-1]
                ax.plot(np.arange(1, d.size + 1), d, label=system)
            ax.axhline(0.0, color="grey", linewidth=0.8)
            ax.set_xlabel("queries, sorted by difference")
            ax.set_ylabel(f"{metric}: system - {self.baseline}")
            ax.legend(fontsize="small")
        return save_figure(fig, path)


def check_test_options(n_resamples, seed, alpha) -> None:
    """Refuse what no test can use: alpha outside (0, 1) (NaN too), fewer than 1 resample, a negative seed."""
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.floating)) or not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be a level in (0, 1), got {alpha!r}")
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) or n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")


def compare_results(results: dict, n_resamples: int = 10_000, seed: int = 0, alpha: float = 0.05) -> Comparison:
    """Compare ``{system: EvaluationResult}`` (the first is the baseline) on the measures they share.

    >>> import numpy as np
    >>> from structrank.metrics import evaluate
    >>> y, qid = np.array([1, 0, 0, 1, 1, 0]), np.array([1, 1, 2, 2, 3, 3])
    >>> a = evaluate(y, [1.0, 0.0, 0.0, 1.0, 1.0, 0.0], qid, ["map"])
    >>> b = evaluate(y, [0.0, 1.0, 1.0, 0.0, 1.0, 0.0], qid, ["map"])
    >>> c = compare_results({"A": a, "B": b})
    >>> c.rows[0].system, round(c.rows[0].difference, 4)
    ('B', -0.3333)
    """
    systems = list(results)
    if len(systems) < 2:
        raise ValueError("comparing needs at least two systems")
    metrics = [m for m in results[systems[0]].metrics if all(m in r.metrics for r in results.values())]
    if not metrics:
        raise ValueError("the systems share no measure")
    # every mean and every test over the same queries: those all systems answer
    queries = {s: [query_text(q) for q in r.qids] for s, r in results.items()}
    common = set.intersection(*map(set, queries.values()))
    if len(common) < 2:
        raise ValueError(f"the systems share {len(common)} quer{'y' if len(common) == 1 else 'ies'}: a paired test "
                         "needs at least 2")
    values = {s: {m: {q: v for q, v in zip(queries[s], r.per_query[m]) if q in common} for m in metrics}
              for s, r in results.items()}
    comparison = compare_values(values, None, n_resamples, seed, alpha)
    comparison.left_out = {s: len(queries[s]) - len(common) for s in systems}
    return comparison


def against_baseline(values: dict, baseline: str, metric: str, n_resamples: int = 10_000, seed: int = 0) -> list:
    """[PairedRow] of every system of ``{system: {query: value}}`` against ``baseline`` on one metric,
    Holm-adjusted across them; systems sharing fewer than 2 queries with the baseline are left out.
    The reproductions' paired tables (own-metric, any-scorer) are made of these rows."""
    reference = values[baseline]
    kept = {s: v for s, v in values.items() if s != baseline and len(set(v) & set(reference)) >= 2}
    if not kept:
        return []
    return compare_values({baseline: {metric: reference}, **{s: {metric: v} for s, v in kept.items()}},
                          n_resamples=n_resamples, seed=seed).rows


def compare_values(values: dict, means: dict | None = None, n_resamples: int = 10_000, seed: int = 0,
                   alpha: float = 0.05) -> Comparison:
    """Compare ``{system: {metric: {query: value}}}`` (the first system is the baseline) on the
    metrics of the baseline; ``means`` (``{system: {metric: mean}}``) defaults to the mean of each
    system's values. What ``compare_results`` and the reproductions' paired tables use."""
    systems = list(values)
    if len(systems) < 2:
        raise ValueError("comparing needs at least two systems")
    check_test_options(n_resamples, seed, alpha)
    baseline = systems[0]
    metrics = list(values[baseline])
    values = {s: {m: _checked_values(v, s, m) for m, v in by_metric.items()} for s, by_metric in values.items()}
    if means is None:
        means = {s: {m: float(np.mean(list(values[s][m].values()))) for m in metrics} for s in systems}
    rows, differences = [], {}
    for metric in metrics:
        tests = []
        for system in systems[1:]:
            queries, a, b = per_query_pairs(values[system][metric], values[baseline][metric])
            if len(queries) < 2:
                raise ValueError(f"{system} and {baseline} share {len(queries)} quer{'y' if len(queries) == 1 else 'ies'}"
                                 " on " + metric + ": a paired test needs at least 2")
            tests.append((system, paired_test(a, b, n_resamples=n_resamples, seed=seed)))
            differences[(system, metric)] = a - b
        t_holm = holm([t.t_p for _, t in tests])
        rand_holm = holm([t.rand_p for _, t in tests])
        for (system, t), th, rh in zip(tests, t_holm, rand_holm):
            rows.append(PairedRow(system, metric, t.mean_a, t.mean_b, t.mean_diff, t.n, t.t_p, t.rand_p, float(th),
                                  float(rh), t.ci_low, t.ci_high, higher_is_better(metric)))
    return Comparison(baseline, systems, metrics, means, rows, differences, n_resamples, seed, alpha)


def query_text(qid) -> str:
    """A query id as text, alike whichever input it came from: a whole float (a pandas column or a
    float qid array) reads as the integer, so that query 1.0 of one system is query 1 of another."""
    if isinstance(qid, (float, np.floating)) and np.isfinite(qid) and float(qid).is_integer():
        return str(int(qid))
    return str(qid)


def _checked_values(by_query, system, metric) -> dict:
    """``{query: value}`` with query ids as ``query_text`` and every value a finite number, or
    DataValidationError naming the system, the measure and the query (a NaN would make every mean and
    p-value of the row NaN)."""
    if not isinstance(by_query, dict):
        raise DataValidationError(f"system {system!r}, {metric}: the values are a {type(by_query).__name__}, not a "
                                  "dict {query: value}")
    out = {}
    for qid, value in by_query.items():
        where = f"system {system!r}, {metric}, query {qid!r}"
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise DataValidationError(f"{where}: value {value!r} is not a number")
        if not np.isfinite(value):
            raise DataValidationError(f"{where}: value {value} is not finite")
        query = query_text(qid)
        if query in out:
            raise DataValidationError(f"{where}: query {query} is given twice (as {qid!r} and another id of that "
                                      "value)")
        out[query] = float(value)
    return out


__all__ = ["Comparison", "PairedRow", "against_baseline", "compare_results", "compare_values", "holm"]
