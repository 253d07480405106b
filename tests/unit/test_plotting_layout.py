"""Figures designed for the website's column: the course style, panels stacked to the column's
width, grids that wrap, legends below the data, readability measured, SVG on the website."""

from __future__ import annotations

import os

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import nbformat
import numpy as np
import pytest

from conftest import ROOT
from posenc_lib import plotting

COLUMN_PX = 470  # COLUMN_WIDTH: figures are made for the phone's column and shown at 100 % on a laptop


@pytest.fixture(autouse=True)
def course_style():
    with plt.rc_context():
        plotting.use_course_style()
        yield
    plt.close("all")


def test_the_course_style_draws_no_text_smaller_than_its_minimum():
    sizes = [v for k, v in plotting.COURSE_STYLE.items() if k.endswith("size") and isinstance(v, (int, float))]
    assert sizes and min(sizes) >= plotting.MIN_FONT_PT
    assert plotting.MIN_FONT_PT * 96 / 72 >= 11  # 14.7 px at 100 %: readable on a desktop
    # and on a phone, where a figure of the column's width is shrunk to the phone's column
    assert plotting.MIN_FONT_PT * 96 / 72 * plotting.PHONE_COLUMN_PX / (plotting.COLUMN_WIDTH * 96) >= 11


def test_a_default_line_plot_fits_the_column_with_readable_text():
    x = np.linspace(0, 10, 50)
    ax = plotting.line_plot(x, {"sin": np.sin(x), "cos": np.cos(x)}, title="t", xlabel="x", ylabel="y")
    report = plotting.readability(ax.figure)
    assert report["width_px"] <= COLUMN_PX and report["min_font_px"] >= 11, report
    assert report["phone_min_font_px"] >= 11, report


def test_panels_are_stacked_at_the_column_width():
    fig, axes = plotting.panels(3, height=2.0)
    assert len(axes) == 3
    fig.canvas.draw()
    lefts = {round(ax.get_position().x0, 3) for ax in axes}
    tops = [ax.get_position().y1 for ax in axes]
    assert len(lefts) == 1 and tops == sorted(tops, reverse=True)  # one column, top to bottom
    assert fig.get_size_inches()[0] == pytest.approx(plotting.COLUMN_WIDTH)
    assert plotting.readability(fig)["width_px"] <= COLUMN_PX


@pytest.mark.parametrize(
    "bad, message",
    [(0, "n must be a positive int"), (2.5, "n must be a positive int"), (True, "n must be a positive int")],
)
def test_panels_refuse_a_bad_count(bad, message):
    with pytest.raises(ValueError, match=message):
        plotting.panels(bad)


def test_panels_refuse_a_width_wider_than_the_column():
    with pytest.raises(ValueError, match=r"width must be in \(0, 4.7\]"):
        plotting.panels(2, width=10)


def test_a_heatmap_grid_wraps_into_rows_instead_of_growing_wider_than_the_column():
    fig = plotting.heatmap_grid(
        np.random.default_rng(0).random((4, 6, 6)),
        titles=list("abcd"),
        suptitle="s",
        xlabel="key",
        ylabel="query",
        ncols=4,
    )
    used = [ax for ax in fig.axes if ax.images]
    rows = {round(ax.get_position().y0, 3) for ax in used}
    assert len(used) == 4 and len(rows) == 2  # two by two in the column
    assert plotting.readability(fig)["width_px"] <= COLUMN_PX


def test_legend_below_sits_under_the_tick_labels():
    x = np.linspace(0, 1, 20)
    ax = plotting.line_plot(x, {"a": x, "b": 1 - x, "c": x * x}, title="t", xlabel="x", ylabel="y", legend_loc="below")
    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    legend = ax.get_legend().get_window_extent(renderer)
    ax.get_legend().set_visible(False)
    axes_and_labels = ax.get_tightbbox(renderer)  # axes, ticks and labels, without the legend
    assert legend.y1 <= axes_and_labels.y0 + 1  # under everything else: nothing of the data is covered
    with pytest.raises(ValueError, match="no labelled artists"):
        plotting.legend_below(plt.subplots()[1])


def test_readability_reports_a_shrunk_figure():
    fig, ax = plt.subplots(figsize=(15, 3))  # what chapter 4 drew: twice the column
    ax.set_title("t", fontsize=7)
    report = plotting.readability(fig)
    assert report["width_px"] > 2 * COLUMN_PX and report["min_font_px"] == pytest.approx(7 * 96 / 72)
    # on a phone the browser shrinks it to the column: 7 pt becomes 7 * 96/72 * 358 / width
    assert report["phone_min_font_px"] == pytest.approx(7 * 96 / 72 * plotting.PHONE_COLUMN_PX / report["width_px"])
    with pytest.raises(ValueError, match="figure_format must be 'svg' or 'png'"):
        plotting.readability(fig, figure_format="pdf")


def test_a_bad_figure_format_is_refused():
    with pytest.raises(ValueError, match="figure_format must be one of"):
        plotting.use_course_style("gif")


def run_notebook(env_format: str | None) -> list[str]:
    """Mime types of a one-plot notebook's outputs, run in a kernel the way the book build runs it."""
    from nbclient import NotebookClient

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell(
            "import matplotlib.pyplot as plt\nfrom posenc_lib.plotting import use_course_style\nuse_course_style()\n"
            "plt.plot([1, 2, 3])\nplt.show()"
        )
    ]
    env = {k: v for k, v in os.environ.items() if k != "POSENC_FIGURE_FORMAT"}
    if env_format:
        env["POSENC_FIGURE_FORMAT"] = env_format
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)  # the kernel inherits the environment, as under `jupyter-book build`
    try:
        NotebookClient(notebook, timeout=120, kernel_name="python3").execute()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return sorted(mime for output in notebook.cells[0].outputs for mime in output.get("data", {}))


@pytest.mark.slow
def test_notebooks_draw_png_unless_the_website_build_asks_for_svg():
    png = run_notebook(None)
    assert "image/png" in png and "image/svg+xml" not in png
    svg = run_notebook("svg")
    assert "image/svg+xml" in svg and "image/png" not in svg


def test_trajectory_labels_sit_outside_a_circle_not_on_it():
    # chapter 2's positions on a circle: each label is pushed away from the circle's centre (not all
    # up-right of their points, where they fell on the path and on each other)
    angles = np.linspace(0, 2 * np.pi, 12, endpoint=False)
    circle = np.stack([2 + np.cos(angles), -1 + np.sin(angles)], axis=1)  # (12, 2), centre (2, -1)
    ax = plotting.trajectory_plot({"cat": circle}, title="t", xlabel="x", ylabel="y")
    labels = [t for t in ax.texts if t.get_text().isdigit()]
    assert len(labels) == 12
    for label in labels:
        away = np.asarray(label.xy) - np.array([2.0, -1.0])
        assert np.dot(away, np.asarray(label.xyann)) > 0.9 * np.linalg.norm(away) * np.linalg.norm(label.xyann)
