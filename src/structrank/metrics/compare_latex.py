"""A comparison of systems as a LaTeX table for a paper (``structrank compare --format latex``).

One row per system, one column per measure, each cell the system's mean, marked where both of the
comparison's Holm-adjusted paired tests (t-test and randomisation test) reject "no difference" with the
baseline at its alpha: a dagger where the system is better, a double dagger where it is worse. The caption
says what the marks mean, over which queries and at which level. booktabs rules (``\\toprule``,
``\\midrule``, ``\\bottomrule``), as most IR venues' templates expect; the table names the package in a
comment on its first line. Text from the user (system names) is escaped: ``\\ & % $ # _ { } ~ ^``.
"""

from __future__ import annotations

import re

#: LaTeX's special characters in text mode, and what stands for each
_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
            "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
_SPECIAL_RE = re.compile("|".join(map(re.escape, _SPECIAL)))

#: how papers write the measures' names (the family of a canonical name; the rest, cut-off and parameters, kept)
_DISPLAY = {"map": "MAP", "mrr": "MRR", "ndcg": "nDCG", "p": "P", "recall": "R", "rprec": "R-prec",
            "success": "Success", "bpref": "bpref", "auc": "AUC", "err": "ERR", "rbp": "RBP",
            "rbp_residual": "RBP residual", "infap": "infAP", "judged": "Judged"}

BETTER, WORSE = r"$^{\dagger}$", r"$^{\ddagger}$"


def escape_latex(text) -> str:
    """``text`` with LaTeX's special characters escaped, for text mode.

    >>> escape_latex("bm25_k1=0.9 & 50% #2")
    'bm25\\\\_k1=0.9 \\\\& 50\\\\% \\\\#2'
    """
    return _SPECIAL_RE.sub(lambda m: _SPECIAL[m.group(0)], str(text))


def measure_label(name: str) -> str:
    """A canonical measure name as papers write it, escaped: ``ndcg@10`` -> ``nDCG@10``, ``map`` -> ``MAP``."""
    family = re.match(r"[a-z_]*", name).group(0)
    return escape_latex(_DISPLAY.get(family, family) + name[len(family):])


def latex_table(comparison, label: str = "tab:comparison") -> str:
    """A booktabs ``table`` of ``comparison`` (a ``metrics.compare.Comparison``): systems by measures, the
    baseline first, each mean marked where it differs significantly from the baseline's."""
    marks = {(row.system, row.metric): (BETTER if row.system_ahead else WORSE)
             for row in comparison.rows if row.significant(comparison.alpha)}
    header = " & ".join(["System", *map(measure_label, comparison.metrics)]) + r" \\"
    body = []
    for system in comparison.systems:
        cells = [escape_latex(system)]
        for metric in comparison.metrics:
            cells.append(f"{comparison.means[system][metric]:.4f}{marks.get((system, metric), '')}")
        body.append(" & ".join(cells) + r" \\")
    lines = [r"% structrank compare --format latex; needs \usepackage{booktabs}",
             r"\begin{table}", r"\centering", rf"\caption{{{_caption(comparison)}}}", rf"\label{{{label}}}",
             rf"\begin{{tabular}}{{l{'r' * len(comparison.metrics)}}}", r"\toprule", header, r"\midrule", body[0]]
    lines += body[1:] + [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def _caption(comparison) -> str:
    queries = comparison.rows[0].queries if comparison.rows else 0
    n = len(comparison.systems) - 1
    test = (f"the paired randomisation test ({comparison.n_resamples} sign flips, seed {comparison.seed}; exact up "
            "to 16 queries)")
    return (f"Mean of each measure over the {queries} queries every system answers. {BETTER} and {WORSE}: "
            f"significantly better and worse than the baseline, {escape_latex(comparison.baseline)} (first row), by "
            f"both the paired t-test and {test}, each with Holm's correction across the {n} "
            f"comparison{'' if n == 1 else 's'} with the baseline, at $\\alpha = {comparison.alpha:g}$.")
