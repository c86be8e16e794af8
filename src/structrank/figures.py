"""Figures drawn headless and written atomically: the one place that knows matplotlib's canvas.

Used by the experiments' reports, ``structrank compare --plot`` and the benchmarks, so that none
of them imports another's module for it. matplotlib is imported when a figure is made.
"""

from __future__ import annotations

import io
from pathlib import Path

from structrank.atomic import write_bytes_atomic


def new_figure(**kwargs):
    """A matplotlib Figure drawn by the Agg backend, independent of pyplot and any display.

    >>> fig = new_figure(figsize=(3, 2))
    >>> ax = fig.add_subplot()
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(**kwargs)
    FigureCanvasAgg(fig)
    return fig


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
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)  # a pyplot figure of an interactive backend: render with Agg
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")  # no label cut off at the edge
    path = Path(path)
    write_bytes_atomic(path, buffer.getvalue())
    return path


__all__ = ["new_figure", "save_figure"]
