"""structrank's own error types.

Every problem with a user's input surfaces as one of these, with the file, the line and the
field named, never as a traceback from deep inside numpy or scipy.

The types:

- ``StructRankError``: the base of every error raised on purpose;
- ``DataFormatError(path, line, problem, field)``: a file that cannot be read as it stands,
  naming the file, the line and the field;
- ``DataValidationError``: arrays that do not fit together (lengths, groups, values);
- ``DegenerateDataWarning``: training data that leave nothing to learn (one relevance level,
  no feature that varies within a query); ``ConventionWarning``: labels a metric convention does
  not credit.
"""

from __future__ import annotations


class StructRankError(Exception):
    """Base class of every error structrank raises on purpose."""


class DataFormatError(StructRankError, ValueError):
    """A data, scores or model file that cannot be read as it stands.

    Parameters
    ----------
    path : str or None
        The file the problem is in.
    line : int or None
        1-based line number of the problem, when it has one.
    problem : str
        What is wrong, in words a user can act on.
    field : str or None
        The field of the line the problem is in (``"label"``, ``"qid"``, ``"feature 7"`` ...).
    """

    def __init__(self, path, line, problem, field=None):
        self.path = None if path is None else str(path)
        self.line = line
        self.field = field
        self.problem = problem
        where = self.path or "<input>"
        if line is not None:
            where += f", line {line}"
        if field is not None:
            where += f", {field}"
        super().__init__(f"{where}: {problem}")


class DataValidationError(StructRankError, ValueError):
    """Arrays handed to structrank that do not fit together (lengths, groups, values)."""


class DegenerateDataWarning(UserWarning):
    """Training data a ranker can fit but not learn from (nothing varies that a ranking could follow).

    The fit finishes with finite weights, but they carry no information: every training label is
    the same, or no feature varies within any query.
    """


class ConventionWarning(UserWarning):
    """Labels a metric convention does not credit: under ``letor4`` (LETOR 4.0's eval script) a label
    above 2 has gain 0 and is not relevant, so graded data of another scale scores as if unjudged."""
