"""The grid study of haponchyk2018: one fit per C, each model's grid grown one 1-2-5 step at a time past
an end where its choice sits, the slow large-C fits last."""

from __future__ import annotations

import numpy as np

from structrank_lab.experiments.haponchyk2018.design import (EXPERIMENT, GRID_STUDY, MAX_EFFECTIVE_C, MAX_EXTENSION,
                                                         QUADRATIC_C_MODELS, ROWS, SUM_ROW, TEXT_SETS)
from structrank_lab.experiments.haponchyk2018.recorded import _study_values
from structrank_lab.experiments.runner import RunSpec


def step_125(c: float, up: bool) -> float:
    """The next value of the 1-2-5 series (..., 1000, 2000, 5000, 10^4, ...) above or below ``c``.

    >>> step_125(5000.0, True), step_125(0.01, False), step_125(3.0, True)
    (10000.0, 0.005, 5.0)
    """
    exponent = int(np.floor(np.log10(c)))
    series = sorted(m * 10.0 ** e for e in (exponent - 1, exponent, exponent + 1) for m in (1, 2, 5))
    series = [float(f"{v:.12g}") for v in series]
    return min(v for v in series if v > c * (1 + 1e-9)) if up else max(v for v in series if v < c * (1 - 1e-9))


def grid_points(base, select: dict, max_extension: int = MAX_EXTENSION, ceiling: float = np.inf) -> list:
    """The C values to fit: ``base``, extended one 1-2-5 step at a time past an end where the choice sits.

    ``select`` maps the C values fitted so far to their dev value. While every point is fitted and
    the best (the smallest C on ties, as ``select_on_vali`` breaks them) is the largest or the
    smallest point, the next step past it is added, at most ``max_extension`` on each side and
    never above ``ceiling``. So the choice ends inside the grid, or at an end that could not be
    extended further (which the report says).

    >>> grid_points([1.0, 10.0], {1.0: 0.5, 10.0: 0.6, 20.0: 0.55})
    [1.0, 10.0, 20.0]
    >>> grid_points([1.0, 10.0], {1.0: 0.5, 10.0: 0.6})
    [1.0, 10.0, 20.0]
    """
    points = sorted(float(c) for c in base)
    low, high = points[0], points[-1]
    while all(c in select for c in points):
        best = max(points, key=lambda c: (select[c], -c))
        if best == points[-1] and sum(c > high for c in points) < max_extension and step_125(best, True) <= ceiling:
            points.append(step_125(best, True))
        elif best == points[0] and sum(c < low for c in points) < max_extension:
            points.insert(0, step_125(best, False))
        else:
            break
    return points


def _effective_c(row: str, c: float, n_queries: int) -> float:
    """The C of the mean-slack problem a fit solves (Eq. 4's sum: C times the training queries)."""
    return c * n_queries if row == SUM_ROW else c


def grid_plan(rows, n_queries: int) -> list:
    """Every grid-study run wanted, given the values recorded so far (``rows``)."""
    specs = []
    for feature_set in TEXT_SETS:
        select = _study_values(rows, feature_set)
        for row in GRID_STUDY:  # Eq. 4's sum on both sets too: its claim is judged first on the paper's list
            ceiling = MAX_EFFECTIVE_C / _effective_c(row, 1.0, n_queries)
            for c in grid_points(GRID_STUDY[row], select.get(row, {}), ceiling=ceiling):
                specs.append(RunSpec(EXPERIMENT, "wikiqa", "grid", 0, 0, row, {"features": feature_set, "C": c}))
    return specs


def _cost(spec, n_queries: int) -> float:
    """How slow a grid-study fit is, for ordering: its effective C where the QP's time grows with it."""
    if spec.split != "grid" or ROWS[spec.model][0] not in QUADRATIC_C_MODELS:
        return 0.0
    return _effective_c(spec.model, float(spec.params["C"]), n_queries)
