"""`structrank compare --format latex` (structrank.metrics.compare_latex): the table's structure always, and
that it compiles in a minimal document where pdflatex is installed (texlive-latex-base and
texlive-latex-recommended, for booktabs)."""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest

from structrank.cli import main
from structrank.metrics.compare import compare_values
from structrank.metrics.compare_latex import BETTER, WORSE, escape_latex

#: system names with every character LaTeX treats specially in text
NAMES = ["bm25_k1=0.9", "mine & co", "50% #2", "a$b {x} ~y^z", "back\\slash"]
METRICS = ["map", "ndcg@10", "ndcg(dcg='exp-log2')@10", "rbp_residual(p=0.8)"]
#: the measures where a smaller value is the better system (RBP's residual: the part of the score left unjudged)
LOWER_IS_BETTER = {"rbp_residual(p=0.8)"}


def comparison():
    """The baseline; a system better on every measure, one worse, one no different, one better on the first
    two only: each mark, and its absence, where the Holm-adjusted tests say."""
    rng = np.random.default_rng(0)
    base = {m: 0.3 + 0.4 * rng.random(30) for m in METRICS}
    shifts = {NAMES[1]: [0.05] * 4, NAMES[2]: [-0.05] * 4, NAMES[3]: [0.0] * 4, NAMES[4]: [0.05, 0.05, 0.0, 0.0]}
    values = {NAMES[0]: {m: dict(enumerate(base[m])) for m in METRICS}}
    for name, shift in shifts.items():
        values[name] = {m: dict(enumerate(base[m] + s + 0.01 * rng.standard_normal(30))) for m, s in zip(METRICS, shift)}
    return compare_values(values)


def cells(line):
    """The cells of a tabular row (``&`` not escaped separates them), its ``\\\\`` removed."""
    assert line.endswith(r" \\"), line
    return [c.strip() for c in re.split(r"(?<!\\)&", line[: -len(r" \\")])]


def test_the_table_is_balanced_escaped_and_marked_where_significant():
    c = comparison()
    text = c.to_latex()
    lines = text.splitlines()
    assert lines[0].startswith("%") and r"\usepackage{booktabs}" in lines[0]
    unescaped = re.sub(r"\\[{}]", "", text)  # braces standing for themselves
    depth = 0
    for ch in unescaped:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        assert depth >= 0, "a } closes nothing"
    assert depth == 0, "an unclosed {"
    for env in ("table", "tabular"):
        assert text.count(rf"\begin{{{env}}}") == text.count(rf"\end{{{env}}}") == 1
    assert lines.index(r"\toprule") < lines.index(r"\midrule") < lines.index(r"\bottomrule")
    assert re.search(r"\\begin\{tabular\}\{lrrrr\}", text)
    header = cells(lines[lines.index(r"\toprule") + 1])
    assert header == ["System", "MAP", "nDCG@10", "nDCG(dcg='exp-log2')@10", r"RBP residual(p=0.8)"]
    rows = lines[lines.index(r"\midrule") + 1:lines.index(r"\bottomrule")]
    assert len(rows) == len(NAMES)
    seen = set()
    for name, row in zip(NAMES, rows):
        row_cells = cells(row)
        assert len(row_cells) == len(METRICS) + 1
        assert row_cells[0] == escape_latex(name)
        assert not re.search(r"(?<!\\)[&%#_${}]", row_cells[0].replace(r"\textbackslash{}", "").replace(
            r"\textasciitilde{}", "").replace(r"\textasciicircum{}", "")), row_cells[0]
        for metric, cell in zip(METRICS, row_cells[1:]):
            assert cell.startswith(f"{c.means[name][metric]:.4f}")
            paired = [r for r in c.rows if r.system == name and r.metric == metric]
            expected = ""
            if paired and paired[0].significant(c.alpha):
                ahead = paired[0].difference < 0 if metric in LOWER_IS_BETTER else paired[0].difference > 0
                expected = BETTER if ahead else WORSE
            assert cell[len(f"{c.means[name][metric]:.4f}"):] == expected, (name, metric, cell)
            seen.add(expected)
    assert seen == {"", BETTER, WORSE}, "the example shows every mark and its absence"
    caption = re.search(r"\\caption\{(.*)\}$", text, re.MULTILINE).group(1)
    assert escape_latex(NAMES[0]) in caption and "Holm" in caption and r"$\alpha = 0.05$" in caption
    assert BETTER in caption and WORSE in caption and "4 comparisons" in caption


def test_escape_latex_escapes_each_special_character_once():
    assert escape_latex(r"\&%$#_{}~^") == (r"\textbackslash{}\&\%\$\#\_\{\}\textasciitilde{}"
                                          r"\textasciicircum{}")
    assert escape_latex("plain text, 0.5") == "plain text, 0.5"


def test_the_compare_command_prints_the_latex_table(tmp_path, capsys):
    (tmp_path / "qrels.txt").write_text("".join(f"{q} 0 d{i} {i % 3}\n" for q in range(1, 9) for i in range(6)))
    for name, noise in (("base_run", 0.0), ("my_run", 1.0)):
        rng = np.random.default_rng(int(noise))
        (tmp_path / name).write_text("".join(f"{q} Q0 d{i} 0 {(i % 3) * noise + rng.random()!r} x\n"
                                             for q in range(1, 9) for i in range(6)))
    assert main(["compare", "--qrels", str(tmp_path / "qrels.txt"), str(tmp_path / "base_run"), str(tmp_path / "my_run"),
                 "--metric", "map", "--metric", "ERR@5", "--format", "latex"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("% structrank compare --format latex") and r"my\_run & " in out and "System & MAP & ERR@5" in out


def compile_table(table: str, folder) -> subprocess.CompletedProcess:
    """pdflatex on a minimal article that inputs ``table`` (booktabs loaded)."""
    (folder / "table.tex").write_text(table)
    (folder / "doc.tex").write_text("\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n"
                                    "\\input{table.tex}\n\\end{document}\n")
    return subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "doc.tex"],
                          cwd=folder, capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(shutil.which("pdflatex") is None,
                    reason="pdflatex is not installed (Debian: texlive-latex-base texlive-latex-recommended)")
def test_the_table_compiles_with_pdflatex(tmp_path):
    done = compile_table(comparison().to_latex(), tmp_path)
    assert done.returncode == 0, done.stdout[-2000:]
    assert (tmp_path / "doc.pdf").stat().st_size > 1000
    log = (tmp_path / "doc.log").read_text(errors="replace")
    assert "Missing character" not in log and "Undefined control sequence" not in log
    # and the check can fail: the same table with one name left unescaped does not compile
    (tmp_path / "bad").mkdir()
    raw = comparison().to_latex().replace(escape_latex(NAMES[1]), NAMES[1], 1)
    assert compile_table(raw, tmp_path / "bad").returncode != 0
