"""No measured figure in hand-written prose (issue 39, point 5).

A timing, a ratio, a size or a percentage typed into a comment, a docstring or docs/ARCHITECTURE.md
is true on the day it was measured and wrong after the next change, and nothing regenerates it. The
figures live on the generated pages (docs/BENCHMARKS.md, docs/RESULTS.md, docs/ANY_SCORER.md,
docs/MLP_DEPARTURES.md, docs/TREES_SMOOTHING.md, docs/XENC_MAP_SMOOTHING.md), made by the commands
ARCHITECTURE.md lists under "Generated pages"; prose points to them and says why, without the number.

The check reads every module of ``src/structrank`` with :mod:`tokenize`: ``COMMENT`` tokens and the
string tokens that stand alone as a statement (docstrings, attribute docstrings), without their
doctest examples (a doctest's output is checked by running it, not typed). docs/ARCHITECTURE.md is
read whole, outside its code blocks. A figure (``FIGURE``: a number with a unit of time, size or
percentage, a ratio, a metric's value, a signed difference in points, a speed-up) fails the test,
named by file and line, unless it is in :data:`ALLOWED_MODULES` (a paper's published
tables, which are data) or :data:`EXCEPTIONS` (a figure that is not a measurement, with its reason).
"""

from __future__ import annotations

import doctest
import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
#: the packages whose prose is read: the library and its lab
PACKAGES = (SRC / "structrank", SRC / "structrank_lab")
ARCHITECTURE = ROOT / "docs" / "ARCHITECTURE.md"

_NUMBER = r"(?<![\w.@^*/])\d+(?:,\d{3})*(?:\.\d+)?"
#: a figure: a number with a unit of time, memory or share (not "95% confidence", a definition); a ratio
#: written ``3.1x`` or ``3.1×`` (not ``d2 x d2``, ``0x1f``); N times faster; a metric's value (``MAP 0.443``,
#: ``NDCG@10 from 0.2257``); a signed difference in points (``+0.24 points``); a speed-up (``speed-up of 1.6``)
FIGURE = re.compile(
    rf"""
    {_NUMBER}\s*(?:ms|µs|us|ns|s|secs?|seconds?|mins?|minutes?|h|hours?|[kKMGT]i?B|%(?!\s*confidence))(?![\w%])
    | {_NUMBER}[x×](?!\w)
    | {_NUMBER}\s*times\s+(?:faster|slower|as\s+(?:fast|slow|long|much))\b
    | \b(?i:map|mrr|ndcg(?:@\d+)?|p@\d+|auc|f1|accuracy|slack)\s*(?:=|:|of|from|is)?\s*[01]?\.\d{{2,}}
    | (?<![\w.])[+-]\d+(?:\.\d+)?\s+points?\b
    | \bspeed-ups?\s+(?:of\s+)?\d+\.\d+
    """,
    re.VERBOSE,
)

#: modules that hold a paper's published tables, which are data and may quote the paper's figures
#: (module path below src/structrank, or below src for the lab's -> reason). The published tables of structrank_lab.experiments are
#: dicts in code, not prose, so none needs the exemption today.
ALLOWED_MODULES: dict[str, str] = {}

#: (module path as in ``ALLOWED_MODULES``, or "docs/ARCHITECTURE.md", a piece of the line that holds the figure)
#: -> why that figure is not a measurement a rerun could contradict
EXCEPTIONS: dict[tuple[str, str], str] = {
    ("data/letor.py", "2**20 float64 weights are 8 MiB"): "arithmetic: 2**20 weights of 8 bytes",
    ("data/letor.py", "made a 762 MB model"): "arithmetic: 10**8 weights of 8 bytes, what a stray index allocated",
    ("data/synthetic.py", "(MQ2008 has 28%)"): "a count of MQ2008's distributed files, not of anything we run",
    ("metrics/conventions.py", "NDCG@3 = 0.9502 under"): "a fixed example's value under each convention's "
                                                          "definition; the module's doctest computes it",
}


def figures(text: str) -> list[str]:
    """The figures (number and unit, ratio) in one line of prose."""
    return [m.group(0) for m in FIGURE.finditer(text)]


def _doctest_lines(docstring: str) -> set[int]:
    """Line offsets (0-based) of a docstring taken by its doctest examples and their expected output."""
    taken = set()
    for example in doctest.DocTestParser().parse(docstring):
        if isinstance(example, doctest.Example):
            length = example.source.count("\n") + example.want.count("\n")
            taken.update(range(example.lineno, example.lineno + length))
    return taken


def _is_statement(tokens: list[tokenize.TokenInfo], i: int) -> bool:
    """Whether the string token ``tokens[i]`` stands alone as a statement (a docstring)."""
    skip = (tokenize.NL, tokenize.COMMENT)
    j = i - 1
    while j >= 0 and tokens[j].type in skip:
        j -= 1
    if j >= 0 and tokens[j].type not in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING):
        return False
    k = i + 1
    while tokens[k].type in skip or tokens[k].type == tokenize.STRING:
        k += 1
    return tokens[k].type in (tokenize.NEWLINE, tokenize.ENDMARKER)


def prose_lines(source: str):
    """(line number, text) of every comment and docstring line of Python source, doctests left out."""
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    for i, token in enumerate(tokens):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
        elif token.type == tokenize.STRING and _is_statement(tokens, i):
            text = token.string
            skip = _doctest_lines(text)
            for offset, line in enumerate(text.splitlines()):
                if offset not in skip:
                    yield token.start[0] + offset, line


def markdown_lines(text: str):
    """(line number, text) of a markdown page outside its fenced code blocks."""
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced:
            yield number, line


def _excepted(name: str, line: str) -> bool:
    return any(module == name and piece in line for module, piece in EXCEPTIONS)


def find_figures(name: str, lines) -> list[tuple[str, int, str, str]]:
    """(name, line, figure, the line) of every figure on a line ``EXCEPTIONS`` does not name."""
    return [(name, number, figure, line.strip()) for number, line in lines if not _excepted(name, line)
            for figure in figures(line)]


def _name(path) -> str:
    """A library module's path below src/structrank (``data/letor.py``), a lab module's below src
    (``structrank_lab/bench/crf.py``)."""
    rel = path.relative_to(SRC)
    return rel.relative_to("structrank").as_posix() if rel.parts[0] == "structrank" else rel.as_posix()


def _prose() -> dict[str, list[tuple[int, str]]]:
    """{name: (line number, text) of its prose} for every source module and docs/ARCHITECTURE.md."""
    prose = {_name(path): list(prose_lines(path.read_text(encoding="utf-8")))
             for package in PACKAGES for path in sorted(package.rglob("*.py"))}
    prose["docs/ARCHITECTURE.md"] = list(markdown_lines(ARCHITECTURE.read_text(encoding="utf-8")))
    return prose


PROSE = _prose()


def _report(found) -> str:
    return "measured figures in prose (point to the generated page instead):\n" + "\n".join(
        f"  {name}:{line}: {figure!r} in {text[:120]!r}" for name, line, figure, text in found)


def test_no_figure_in_source_comments_or_docstrings():
    found = [hit for name, lines in PROSE.items() if name.endswith(".py") and name not in ALLOWED_MODULES
             for hit in find_figures(name, lines)]
    assert not found, _report(found)


def test_no_figure_in_architecture():
    found = find_figures("docs/ARCHITECTURE.md", PROSE["docs/ARCHITECTURE.md"])
    assert not found, _report(found)


def test_every_exception_and_allowed_module_is_still_needed():
    """An exception whose line is gone, or whose line holds no figure any more, is stale: drop it."""
    stale = [key for key in EXCEPTIONS
             if not any(key[1] in line and figures(line) for _, line in PROSE.get(key[0], []))]
    assert not stale, f"exceptions that match no figure: {stale}"
    assert not set(ALLOWED_MODULES) - set(PROSE), "allowed modules that do not exist"


# -- the checker itself ------------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("the fit took 3.2 s on MQ2008", ["3.2 s"]),
    ("(40 ms an epoch)", ["40 ms"]),
    ("peak 148 MB, 1.5 GiB past it, 400 kB each", ["148 MB", "1.5 GiB", "400 kB"]),
    ("about 5 minutes for the fit; 12 seconds", ["5 minutes", "12 seconds"]),
    ("the products took 1.2-2.4x their dense cost", ["2.4x"]),
    ("at 1.07× one process", ["1.07×"]),
    ("10-20 times faster on OHSUMED", ["20 times faster"]),
    ("30-40% slower", ["40%"]),
    ("MAP 0.674 with these", ["MAP 0.674"]),
    ("test NDCG@10 from 0.2257 to 0.2275", ["NDCG@10 from 0.2257"]),
    ("training slack 1.0001", ["slack 1.0001"]),
    ("+0.24 points of NDCG@10", ["+0.24 points"]),
    ("under a speed-up of 1.6", ["speed-up of 1.6"]),
    ("1,396 s in all", ["1,396 s"]),
])
def test_the_pattern_fires_on_figures(text, expected):
    assert figures(text) == expected


@pytest.mark.parametrize("text", [
    "p@10, ndcg@10 and recall@100 under letor4",
    "int32 holds at most 2**31 - 1; 2^31 - 1 likewise",
    "scikit-learn 1.8 and numpy 1.24.1; Python 3.11",
    "flags 0x1f and 0x7fffffff",
    "max_iter=1000, tol=1e-4, C in 0.001..100",
    "a d2 x d2 matrix; (P + 1) x (N- + 1) cells",
    "the 95% confidence interval of the mean difference",
    "Sec. 4.1 and Figs. 4-6; Eq. 13's s + w p",
    "within 0.5 points of lambdarank; differs by > 3 points",
    "the speed-up of 2 workers",
    "10^6 rows of 46 features, 1,024 documents",
])
def test_the_pattern_leaves_other_numbers_alone(text):
    assert figures(text) == [], text


def test_comments_and_docstrings_are_read_and_doctests_and_code_are_not():
    source = (
        '"""A module.\n\nIt took 3.2 s once.\n\n>>> slow()  # 9 s\n4.5 s\n"""\n'
        'X = "a string of 7 s in code"  # a comment of 40 ms\n'
        'def f():\n    """Its docstring, 2.5x faster."""\n    return f"{1} 8 s"\n'
        'Y = 1\n"""An attribute docstring: 148 MB."""\n'
    )
    found = [(line, figure) for _, line, figure, _ in find_figures("planted.py", prose_lines(source))]
    assert found == [(3, "3.2 s"), (8, "40 ms"), (10, "2.5x"), (13, "148 MB")]


def test_markdown_is_read_outside_its_code_blocks():
    text = "A fit takes 3 s.\n```\n  svm-map   9.07 s\n```\nand 2x after.\n"
    assert [(line, figure) for _, line, figure, _ in find_figures("page.md", markdown_lines(text))] == [
        (1, "3 s"), (5, "2x")]


def test_an_exception_names_a_line_and_spares_only_it():
    lines = [(1, "2**20 float64 weights are 8 MiB, here"), (2, "and another 8 MiB")]
    assert [line for _, line, _, _ in find_figures("data/letor.py", lines)] == [2]
