"""The constraint objects that parameters are checked against: scikit-learn's ``_parameter_constraints``
vocabulary with the two kinds it lacks, shared by the rankers' parameters (``structrank.learners.base``)
and the losses' options (``structrank.losses.options``).

- ``Number``: scikit-learn's ``Interval`` that refuses booleans (``C=true`` is not C=1);
- ``Items``: a list or tuple whose every item meets a constraint;
- ``MAX_COUNT`` and the shared lists ``POSITIVE``, ``NON_NEGATIVE``, ``COUNT``, ``NON_NEGATIVE_INT``.

It is the one module that imports scikit-learn's private ``_param_validation``: the vocabulary it re-exports
(``Interval``, ``StrOptions``, ``InvalidParameterError``, ``Constraint``) is what every other module takes from
here, so a move of those names in scikit-learn is mended in one place.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import InvalidParameterError, Interval, StrOptions, make_constraint  # noqa: F401 -- re-exported
from sklearn.utils._param_validation import _Constraint as Constraint


class Number(Interval):
    """scikit-learn's ``Interval`` without booleans: ``C=true`` is not C=1, nor ``max_iter=true`` 1 iteration.

    Bounds given as None exclude infinity unless the interval is closed on that side, so
    ``Number(Real, 0, None, closed="neither")`` is a finite positive float (NaN is never inside).
    """

    def is_satisfied_by(self, val):
        return not isinstance(val, (bool, np.bool_)) and super().is_satisfied_by(val)


class Items(Constraint):
    """A list or tuple whose every item meets ``constraint`` (layer sizes, a combination's losses)."""

    def __init__(self, constraint):
        super().__init__()
        self.constraint = make_constraint(constraint)

    def is_satisfied_by(self, val):
        return isinstance(val, (list, tuple)) and all(self.constraint.is_satisfied_by(item) for item in val)

    def __str__(self):
        return f"a list of items each {self.constraint}"


#: the largest count a parameter may hold: C's int, which liblinear and LightGBM take their counts in, and the
#: metrics' largest cut-off (``parse_metric``); past it ``k=10**20`` failed inside numba instead of here
MAX_COUNT = 2**31 - 1
POSITIVE = [Number(Real, 0, None, closed="neither")]
NON_NEGATIVE = [Number(Real, 0, None, closed="left")]
COUNT = [Number(Integral, 1, MAX_COUNT, closed="both")]
NON_NEGATIVE_INT = [Number(Integral, 0, MAX_COUNT, closed="both")]


def problem(name: str, value, constraints) -> str | None:
    """"name must be <what the constraints allow>, got value" when ``value`` meets none of ``constraints``
    (scikit-learn constraint objects or what ``make_constraint`` takes), else None."""
    constraints = [c if isinstance(c, Constraint) else make_constraint(c) for c in constraints]
    if not constraints or any(c.is_satisfied_by(value) for c in constraints):
        return None
    return f"{name} must be {' or '.join(str(c) for c in constraints if not c.hidden)}, got {value!r}"
