"""Every figure the project draws, rendered on small synthetic inputs: nothing is cut off.

Each function that calls ``save_figure`` is drawn here (a test finds them in the sources and checks
that every one was), and after the PNG is written every text of the figure (titles, axis labels,
tick labels, legends) must lie inside the figure's own extent, not merely inside the tight box the
PNG is cropped to. Plots of a metric against its cut-off k join only cut-offs that were measured.
"""

from __future__ import annotations

import ast
import inspect
import json
from pathlib import Path

import numpy as np
import pytest
from matplotlib.image import imread
from matplotlib.text import Text

import structrank.figures

SRC = Path(structrank.figures.__file__).resolve().parent
#: the packages whose figures are drawn: the library's (compare's plot) and the lab's
PACKAGES = (SRC, SRC.parent / "structrank_lab")

#: the modules that imported save_figure at their top (their own reference is patched too)
IMPORTERS = ("structrank_lab.experiments", "structrank_lab.experiments.chakrabarti2008.report",
             "structrank_lab.experiments.croce2016.report", "structrank_lab.experiments.haponchyk2018.report",
             "structrank_lab.experiments.jagarlamudi2012.report", "structrank_lab.experiments.letor_baselines",
             "structrank_lab.experiments.volkovs2011.report", "structrank_lab.experiments.neural_qa.report",
             "structrank.metrics.compare", "structrank_lab.bench.scale")


def drawing_functions():
    """{(module, function)} of every function of the library and the lab that calls save_figure."""
    found = set()
    for path in (p for package in PACKAGES for p in package.rglob("*.py")):
        if path.name == "figures.py":
            continue
        module = ".".join(path.relative_to(SRC.parent).with_suffix("").parts).removesuffix(".__init__")
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                calls = [c for c in ast.walk(node) if isinstance(c, ast.Call)]
                if any(getattr(c.func, "id", None) == "save_figure" for c in calls):
                    found.add((module, node.name))
    return found


def outside(extent, box, tolerance=1.0):
    return (extent.x0 < box.x0 - tolerance or extent.y0 < box.y0 - tolerance
            or extent.x1 > box.x1 + tolerance or extent.y1 > box.y1 + tolerance)


def _hidden_tick_labels(fig):
    """ids of the tick labels of ticks outside their axis' view (matplotlib keeps but does not draw them)."""
    hidden = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            span = (hi - lo) * 1e-9
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                if not lo - span <= tick.get_loc() <= hi + span:
                    hidden.update({id(tick.label1), id(tick.label2)})
    return hidden


def _rounded(box):
    return tuple(round(float(v)) for v in box.extents)


def cut_off(fig) -> list:
    """What of ``fig`` lies outside its extent: '<text> at (x0, y0, x1, y1)' for each text or legend."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    box, hidden, problems = fig.bbox, _hidden_tick_labels(fig), []
    for text in fig.findobj(Text):
        if text.get_visible() and text.get_text().strip() and id(text) not in hidden:
            extent = text.get_window_extent(renderer)
            if outside(extent, box):
                problems.append(f"{text.get_text()!r} at {_rounded(extent)}")
    for legend in [ax.get_legend() for ax in fig.axes] + fig.legends:
        if legend is not None and outside(legend.get_window_extent(renderer), box):
            problems.append(f"a legend at {_rounded(legend.get_window_extent(renderer))}")
    return problems


@pytest.fixture
def drawn(monkeypatch):
    """[(module, function, figure, path)] of every figure saved while the test runs; each checked on saving."""
    import importlib

    save = structrank.figures.save_figure
    figures = []

    def checked_save(fig, path, *args, **kwargs):
        written = save(fig, path, *args, **kwargs)
        caller = inspect.currentframe().f_back
        figures.append((caller.f_globals["__name__"], caller.f_code.co_name, fig, Path(written)))
        problems = cut_off(fig)
        assert not problems, f"{caller.f_code.co_name}: outside the {_rounded(fig.bbox)} figure: {problems}"
        height, width = imread(written).shape[:2]
        assert width > 100 and height > 100
        return written

    monkeypatch.setattr(structrank.figures, "save_figure", checked_save)
    for name in IMPORTERS:
        monkeypatch.setattr(importlib.import_module(name), "save_figure", checked_save)
    return figures


def joined_pairs(line):
    """(x, x') of each pair of points the line joins: neighbours in its data, both finite."""
    x, y = np.asarray(line.get_xdata(), dtype=float), np.asarray(line.get_ydata(), dtype=float)
    finite = np.isfinite(x) & np.isfinite(y)
    return [(x[i], x[i + 1]) for i in range(x.size - 1) if finite[i] and finite[i + 1]]


# -- each figure on synthetic inputs --------------------------------------------------------------------


def draw_compare(folder):
    from structrank.metrics.compare import compare_values

    rng = np.random.default_rng(0)
    values = {system: {metric: {q: float(v) for q, v in enumerate(rng.random(30) + shift)}
                       for metric in ("map", "ndcg@10")}
              for system, shift in (("bm25", 0.0), ("a much longer system name", 0.05), ("mine", 0.1))}
    compare_values(values, n_resamples=200).plot(folder / "compare.png")


def draw_chakrabarti2008(folder):
    from structrank_lab.experiments.chakrabarti2008 import design, report

    mrr = {"MRR (phi_mrr)": (list(range(1, 11)), [0.42 + 0.01 * k for k in range(10)]),
           "MRR-po (phi_po)": (list(range(1, 11)), [0.44 + 0.01 * k if k != 4 else np.nan for k in range(10)])}
    report._line_figure(folder / "fig7.png", "MQ2008: MRR@k, phi_mrr vs phi_po", "k", "test MRR@k (binary)", mrr)
    sweep = {model: ([0.01, 0.1, 1.0, 10.0, 100.0], list(np.linspace(1.0, 0.1, 5) * (i + 1)))
             for i, model in enumerate(design.SWEEP)}
    report._line_figure(folder / "fig4.png", "MQ2008 Fold1 train", "C", "average slack", sweep, logx=True)


def draw_volkovs2011(folder):
    from structrank_lab.experiments.volkovs2011 import design, report

    rng = np.random.default_rng(0)
    chosen = {(model, fold, seed): ({}, {f"test:{m}": 0.35 + 0.02 * k + 0.01 * rng.random()
                                        for k, m in enumerate(design.NDCG)})
              for model in design.TABLE1_ROWS for fold in range(1, 6) for seed in range(3)}
    report.fig2(chosen, "MQ2008", folder / "fig2.png")
    report.fig1(folder / "fig1.png")


def draw_haponchyk2018(folder):
    from structrank_lab.experiments.haponchyk2018 import design, report

    rows = [{"split": "official", "metric": f"curve:{epoch}", "model": model, "params": json.dumps({"features": "sim"}),
             "value": 0.6 + 0.01 * np.log(epoch) + 0.01 * i}
            for i, model in enumerate(design.CURVE_ROWS) for epoch in range(1, 31)]
    assert report._curve_figure(rows, folder, "") is not None


def draw_jagarlamudi2012(folder):
    from structrank_lab.experiments.jagarlamudi2012 import design, report

    runs = {("en", design.HMM, ()): {"dev:accuracy": 0.93}}
    for name, grid in (("tau", design.TAUS), ("lam", design.LAMBDAS)):
        for value in grid:
            setting = tuple(sorted({**design.CENTRE, name: value}.items()))
            runs[("en", "Discriminative", setting)] = {"dev:accuracy": 0.935 + 0.001 * value}
    assert report.fig1(runs, folder / "fig1-tau-lambda-en.png")


def draw_letor_baselines(folder):
    from structrank_lab.experiments import letor_baselines as lb

    rows = [{"model": model, "metric": f"ndcg@{k}", "fold": f"Fold{fold}", "value": 0.3 + 0.02 * k + 0.01 * fold}
            for model in lb.MODELS for k in lb.NDCG_KS for fold in range(1, 6)
            if not (model == "ranksvm" and k == 3)]  # a metric missing from the rows
    lb.ndcg_figure(rows, "MQ2008", "letor4", folder / "mq2008_ndcg.png")


def draw_croce2016(folder):
    from structrank_lab.experiments.croce2016 import design, report

    full = next(iter(design.FULL))
    runs = {("full", full, None, 0, design.DATASET, ""): {"test:map": 0.78, "support_vectors": 4000},
            ("linear", design.LINEAR, None, 0, design.DATASET, ""): {"test:map": 0.74}}
    for landmarks in (100, 200, 500, 1000):
        for seed in range(3):
            runs[("nystroem", design.NYSTROEM, landmarks, seed, design.DATASET, "")] = {
                "test:map": 0.7 + landmarks / 1e4 + 0.002 * seed}
    assert report.figure(runs, folder / "map-saving-landmarks.png")


def draw_neural_qa(folder):
    from structrank_lab.experiments.neural_qa import design, report

    rows = [{"dataset": dataset, "model": row, "seed": seed, "metric": f"{design.CURVE_PREFIX}{epoch:03d}",
             "value": 0.7 + 0.02 * epoch + 0.01 * i} for dataset in design.DATASETS
            for i, row in enumerate(design.FINE_TUNED) for seed in design.SEEDS for epoch in (1, 2, 3)]
    assert report.curve_figure(rows, folder) is not None


def draw_bench_scale(folder):
    from structrank_lab.bench import scale

    rows = [{"task": task, "size": size, "seconds": size * 1e-5 * (i + 1)}
            for i, task in enumerate(("load", "evaluate", "svm-map", "lsp-ap", "crf-kl"))
            for size in (10_000, 100_000, 1_000_000)]
    scale.figure({"rows": rows}, folder / "scale-time.png")


DRAWINGS = [draw_compare, draw_chakrabarti2008, draw_volkovs2011, draw_haponchyk2018, draw_jagarlamudi2012,
            draw_letor_baselines, draw_croce2016, draw_neural_qa, draw_bench_scale]


@pytest.mark.parametrize("draw", DRAWINGS, ids=[d.__name__[5:] for d in DRAWINGS])
def test_nothing_is_cut_off(draw, drawn, tmp_path):
    draw(tmp_path)  # each save is checked by the fixture
    assert drawn


def test_every_figure_of_the_project_is_drawn_here(drawn, tmp_path):
    for draw in DRAWINGS:
        draw(tmp_path)
    assert {(module, function) for module, function, _, _ in drawn} == drawing_functions()


def test_the_cut_off_check_sees_a_label_outside_the_figure():
    fig = structrank.figures.new_figure(figsize=(2, 1.5), layout=None)  # no layout engine to fit it in
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1])
    ax.set_xlabel("a label\nset far too low\nfor this small\nfigure")
    assert any("a label" in p for p in cut_off(fig))


def test_ndcg_at_k_joins_only_measured_cut_offs(drawn, tmp_path):
    draw_letor_baselines(tmp_path)
    (_, _, fig, _), = drawn
    lines = {line.get_label(): line for line in fig.axes[0].get_lines()}
    assert set(lines) == {"linreg", "ranksvm"}
    for label, line in lines.items():
        pairs = joined_pairs(line)
        assert pairs and all(b - a == 1 for a, b in pairs), (label, pairs)  # never 5 -> 10
        xs = np.asarray(line.get_xdata(), dtype=float)[np.isfinite(np.asarray(line.get_ydata(), dtype=float))]
        assert 10 in xs and line.get_marker() == "o"  # NDCG@10 is still shown, as a marker
    assert 3 not in np.asarray(lines["ranksvm"].get_xdata())[np.isfinite(lines["ranksvm"].get_ydata())]
    assert (2.0, 3.0) not in joined_pairs(lines["ranksvm"]) and (3.0, 4.0) not in joined_pairs(lines["ranksvm"])


def ink_at_the_edge(path, margin=2):
    """The edges of a PNG where a non-background pixel sits within ``margin`` pixels: where a label
    the tight box could not hold was cut (save_figure's PNGs keep a white border)."""
    rgb = imread(path)[..., :3]
    ink = rgb.min(axis=2) < 0.8
    return [edge for edge, strip in (("top", ink[:margin]), ("bottom", ink[-margin:]), ("left", ink[:, :margin]),
                                     ("right", ink[:, -margin:])) if strip.any()]


COMMITTED = sorted((Path(__file__).resolve().parents[2] / "docs" / "figures").glob("*/*.png"))


@pytest.mark.parametrize("path", COMMITTED, ids=[f"{p.parent.name}/{p.name}" for p in COMMITTED])
def test_committed_figures_have_nothing_cut_off(path):
    """The PNGs in docs/figures come from reproduction runs, not from this suite: each must have been
    made by the current layout (no ink at the edge, where a cut label would be)."""
    assert ink_at_the_edge(path) == []


def test_the_edge_check_sees_a_cut_label(tmp_path):
    fig = structrank.figures.new_figure(figsize=(2, 1.5), layout=None)
    ax = fig.add_subplot()
    ax.set_xlabel("a label\nset far too low\nfor this small\nfigure")
    fig.savefig(tmp_path / "cut.png", dpi=50)  # no tight box: the label runs past the bottom edge
    assert "bottom" in ink_at_the_edge(tmp_path / "cut.png")
    assert len(COMMITTED) >= 10
