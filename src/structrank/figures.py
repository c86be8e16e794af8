"""Figures drawn headless and written atomically: the one place that knows matplotlib's canvas.

Used by the experiments' reports, ``structrank compare --plot`` and the benchmarks, so that none
of them imports another's module for it. matplotlib is imported when a figure is made.

``new_figure`` gives a matplotlib Figure on the Agg canvas (no pyplot, no display), and
``save_figure`` writes it as PNG with ``bbox_inches="tight"`` (so no label is cut off at the edge),
atomically.
"""

from __future__ import annotations

import io
from pathlib import Path

from structrank.atomic import write_bytes_atomic


def new_figure(**kwargs):
    """A matplotlib Figure drawn by the Agg backend, independent of pyplot and any display.

    Its layout is matplotlib's constrained layout unless ``layout`` is given: titles, axis labels,
    tick labels and legends are fitted inside the figure's own extent (``save_figure``'s tight box
    then only trims the margins), which tests/library/test_figures.py checks for every figure drawn.

    >>> fig = new_figure(figsize=(3, 2))
    >>> ax = fig.add_subplot()
    >>> fig.get_layout_engine().__class__.__name__
    'ConstrainedLayoutEngine'
    """
    # deferred: matplotlib loads only when a figure is drawn
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    kwargs.setdefault("layout", "constrained")
    fig = Figure(**kwargs)
    FigureCanvasAgg(fig)
    return fig


def cutoff_line(ax, cutoffs, values, **kwargs):
    """Plot ``values`` against the integer cut-offs k of a metric@k, joining only adjacent cut-offs.

    Points at k and k + 1 are joined when both are finite; a gap in the cut-offs (5, then 10) or a
    missing value (NaN) leaves the points on either side apart, so no line stands for values at
    cut-offs that were never measured. Points are marked (``marker="o"`` unless given), so a point
    with no neighbour still shows. Returns the ``Line2D``.

    Examples
    --------
    >>> fig = new_figure(figsize=(3, 2))
    >>> line = cutoff_line(fig.add_subplot(), [1, 2, 3, 5, 10], [0.3, 0.4, float("nan"), 0.5, 0.6])
    >>> [round(float(x), 1) for x in line.get_xdata()]  # 3 is missing, 4 and 6-9 were not measured
    [1.0, 2.0, 3.0, 4.0, 5.0, 7.5, 10.0]
    """
    # deferred: start-up time, `reproduce --help` loads this module (structrank_lab.experiments) and no numpy
    import numpy as np

    points = sorted(zip(cutoffs, values))
    xs, ys = [], []
    for i, (k, value) in enumerate(points):
        if i and k != points[i - 1][0] + 1:  # cut-offs between were not measured: break the line
            xs.append((points[i - 1][0] + k) / 2)
            ys.append(np.nan)
        xs.append(k)
        ys.append(value)
    kwargs.setdefault("marker", "o")
    (line,) = ax.plot(xs, np.asarray(ys, dtype=np.float64), **kwargs)
    return line


def save_figure(fig, path, dpi: int = 150) -> Path:
    """Save ``fig`` as a PNG at ``path``, atomically, rendered by Agg.

    Works headless whatever pyplot backend is configured, since the image is rendered into
    memory first and written in one step.

    Examples
    --------
    >>> import tempfile, os
    >>> fig = new_figure(figsize=(2, 2)); _ = fig.add_subplot().plot([0, 1], [1, 0])
    >>> path = save_figure(fig, os.path.join(tempfile.mkdtemp(), "fig.png"))
    >>> open(path, "rb").read(4)
    b'\\x89PNG'
    """
    # deferred: matplotlib loads only when a figure is drawn
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)  # a pyplot figure of an interactive backend: render with Agg
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")  # no label cut off at the edge
    path = Path(path)
    write_bytes_atomic(path, buffer.getvalue())
    return path


__all__ = ["cutoff_line", "new_figure", "save_figure"]
