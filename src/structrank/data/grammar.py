"""The text grammar every reader shares: line ends, numbers and integers (docs/GRAMMAR.md).

LETOR/SVMlight rows (``letor``, ``cache``; the numba kernel of ``svmlight`` mirrors ``NUMBER``
for speed, and tests/library/test_grammar.py checks that the two agree), scores files, ``.query`` group
files and TREC qrels and runs all read their lines and numbers through this module, so that a
token means the same thing in each. Python's ``float`` and ``int`` are not the grammar: they read
``1_5`` as 15 and full-width digits as digits, so a token reaches them only after it matched
``NUMBER`` or ``INTEGER``.

Light on purpose (``re`` only): the TREC readers of ``structrank.metrics`` use it.

What it holds: ``check_line_ends`` (LF or CRLF; a bare CR is refused with its line), ``lines``,
the patterns ``NUMBER`` and ``INTEGER``, and ``number``, ``finite`` and ``integer``, which read a
token or name its field (no ``1_5``, hex, ``1,5`` or non-ASCII digits).
"""

from __future__ import annotations

import math
import re

from structrank.errors import DataFormatError

#: A number: ASCII decimal digits with an optional sign, point and exponent; ``inf``,
#: ``infinity`` and ``nan`` (any case) are read so that a reader can say "not finite" (every
#: reader then refuses them). No underscores, hex, locale commas or non-ASCII digits.
NUMBER = re.compile(rb"[+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|(?i:inf|infinity|nan))")

#: An integer: ASCII decimal digits with an optional sign.
INTEGER = re.compile(rb"[+-]?[0-9]+")

# A carriage return that is neither part of CRLF nor the file's last byte.
_BARE_CR = re.compile(rb"\r(?!\n|\Z)")


#: the characters of a bad token an error shows (the rest elided: a line of a binary file can be megabytes)
SHOWN_CHARS = 60


def _shown(token: bytes) -> str:
    text = token.decode("utf-8", errors="replace")
    return repr(text) if len(text) <= SHOWN_CHARS else repr(text[:SHOWN_CHARS]) + f"... ({len(text)} characters)"


def check_line_ends(path, raw: bytes, lines_before: int = 0) -> None:
    """Refuse a bare CR (old Mac line ends, or a stray CR inside a line), naming its line.

    Lines end at LF; the CR of CRLF (and a CR ending the file) is white space before it. A bare
    CR is refused rather than taken as a line end because other tools disagree about it (Python's
    ``splitlines`` ends a line there, ``wc -l``, ``sed`` and scikit-learn do not), so either
    choice would number lines unlike some tool, and reading it as white space merges rows.
    """
    match = _BARE_CR.search(raw)
    if match is not None:
        line = lines_before + raw.count(b"\n", 0, match.start()) + 1
        raise DataFormatError(path, line, "a bare carriage return (CR) inside the line: lines end with LF or CRLF "
                              "(convert old Mac line ends, e.g. with tr '\\r' '\\n')", "line end")


def lines(path, raw: bytes):
    """``(line number, line)`` for every line of ``raw`` (LF or CRLF ends, the CR stripped)."""
    check_line_ends(path, raw)
    for number, line in enumerate(raw.split(b"\n"), start=1):
        yield number, line[:-1] if line.endswith(b"\r") else line


def number(path, line, token: bytes, field) -> float:
    """``token`` as a float if it matches ``NUMBER``, else DataFormatError naming the field."""
    if NUMBER.fullmatch(token) is None:
        raise DataFormatError(path, line, f"{_shown(token)} is not a number", field)
    return float(token)


def finite(path, line, token: bytes, field) -> float:
    """``number``, refusing NaN and infinities (scores, values and labels must be finite)."""
    value = number(path, line, token, field)
    if not math.isfinite(value):
        raise DataFormatError(path, line, f"{field} {value} is not finite", field)
    return value


def integer(path, line, token: bytes, field) -> int:
    """``token`` as an int if it matches ``INTEGER``, else DataFormatError naming the field."""
    if INTEGER.fullmatch(token) is None:
        raise DataFormatError(path, line, f"{_shown(token)} is not an integer", field)
    try:
        return int(token)
    except ValueError:  # more digits than Python converts (sys.get_int_max_str_digits)
        raise DataFormatError(path, line, f"{_shown(token)} has {len(token)} digits: too long for an integer",
                              field) from None
