"""Plot helpers shared by the chapters, so every figure looks the same.

Each helper draws on a Matplotlib ``Axes`` (created if not given) and returns
it, so chapters can combine them in subplots. Figures get an opaque white
background so they stay readable on the website's dark theme.
"""

from __future__ import annotations

from typing import Sequence

import matplotlib


import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

COURSE_STYLE = {
    "figure.figsize": (7.0, 3.6),
    "figure.dpi": 100,
    "figure.facecolor": "white",
    "savefig.facecolor": "white",
    "axes.facecolor": "white",
    "axes.titlesize": 12,
    "axes.labelsize": 11,
    "axes.grid": False,
    "image.cmap": "viridis",
    "font.size": 10,
}


def use_course_style() -> None:
    """Apply the course's Matplotlib defaults (white background, readable sizes)."""
    plt.rcParams.update(COURSE_STYLE)


def _as_numpy(values: object) -> np.ndarray:
    if hasattr(values, "detach"):
        values = values.detach().cpu().numpy()  # torch tensor
    array = np.asarray(values, dtype=float)
    return array


def heatmap(
    matrix: object,
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    ax: plt.Axes | None = None,
    cmap: str = "viridis",
    colorbar_label: str | None = None,
    vmin: float | None = None,
    vmax: float | None = None,
    xticklabels: Sequence[str] | None = None,
    yticklabels: Sequence[str] | None = None,
) -> plt.Axes:
    """Draw a 2-D array (numpy or torch) as an image with labelled axes and a colour bar."""
    array = _as_numpy(matrix)
    if array.ndim != 2:
        raise ValueError(f"matrix must be 2-D, got shape {array.shape}")
    if ax is None:
        _, ax = plt.subplots()
    image = ax.imshow(array, aspect="auto", cmap=cmap, vmin=vmin, vmax=vmax, interpolation="nearest")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if xticklabels is not None:
        ax.set_xticks(range(len(xticklabels)), xticklabels, rotation=45, ha="right")
    if yticklabels is not None:
        ax.set_yticks(range(len(yticklabels)), yticklabels)
    colorbar = ax.figure.colorbar(image, ax=ax)
    if colorbar_label:
        colorbar.set_label(colorbar_label)
    return ax


def line_plot(
    x: object,
    curves: dict[str, object],
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    ax: plt.Axes | None = None,
    logy: bool = False,
    legend_loc: str = "best",
) -> plt.Axes:
    """Plot several named curves against one x axis, with a legend."""
    xs = _as_numpy(x)
    if ax is None:
        _, ax = plt.subplots()
    for label, ys in curves.items():
        ys = _as_numpy(ys)
        if ys.shape != xs.shape:
            raise ValueError(f"curve {label!r} has shape {ys.shape}, x has shape {xs.shape}")
        ax.plot(xs, ys, label=label)
    if logy:
        ax.set_yscale("log")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if curves:
        ax.legend(loc=legend_loc, fontsize=9)
    return ax
