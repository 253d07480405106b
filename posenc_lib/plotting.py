"""Plot helpers shared by the chapters, so every figure looks the same and reads on a phone.

Each helper draws on a Matplotlib ``Axes`` (created if not given) and returns
it, so chapters can combine them in subplots. Figures are drawn on white; the
website shows them inverted in its dark theme (``book/_static/course.css``), so
colours are chosen to read on both.

Figures are designed for the *phone's* text column: at most ``COLUMN_WIDTH`` inches
(451 CSS pixels) wide, with text of at least ``MIN_FONT_PT`` (11 pt, 14.7 px). On a
1366-pixel laptop such a figure is shown at 100 %; on a 390-pixel phone the browser
shrinks it to the ~358-pixel column, and its smallest text to about 11.5 px. Hence:

* ``panels(n)`` stacks ``n`` panels vertically at the column's width, instead of
  side by side where each would be a third of the column;
* ``heatmap_grid`` wraps its panels into as many rows as the column needs;
* ``legend_below(ax)`` / ``line_plot(..., legend_loc="below")`` put a legend under
  the axes, off the data;
* ``readability(fig)`` reports a figure's width and its smallest text in CSS pixels,
  on a laptop and on a phone, which the course's tests and authors use to check a figure.

Colours: one per positional-encoding scheme (``SCHEME_COLORS``) and one per context-extension
method (``METHOD_COLORS``), the same in every chapter, from a palette that stays distinguishable
without red/green vision (Okabe and Ito's; tests/unit/test_plotting_palette.py checks it with a
colour-vision simulation). ``scheme_color(name)`` / ``method_color(name)`` look them up.

On the website figures are SVG (zoomable on a phone): the build sets the environment
variable ``POSENC_FIGURE_FORMAT=svg`` and ``use_course_style()`` passes it to the
notebook's inline backend. Stored notebooks keep PNG (``"png"`` is the default).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import matplotlib
import matplotlib.colors
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.rcsetup import cycler  # matplotlib's own (validating) cycler: no package of its own to pin

COLUMN_WIDTH = 4.7  # inches: the widest figure (451 CSS px) whose 11-pt text stays >= 11 px on a phone
MIN_FONT_PT = 11.0  # smallest text the helpers draw: 14.7 px at 100 % (SVG: 96 px per inch)
PHONE_COLUMN_PX = 358.0  # the text column of a 390-pixel phone, in CSS pixels
FIGURE_FORMATS = ("png", "svg", "retina")

# Okabe & Ito's colour-blind-safe palette (without its yellow, too pale on white), two of its colours moved
# so that the plots' dark-mode twins (dark_twin) stay apart for a reader with protanopia or deuteranopia as
# well (tests/unit/test_plotting_palette.py: ΔE >= 15, light and dark): reddish purple lighter (#CC79A7 ->
# #D094B6: its dark twin was ΔE 11.3 from bluish green's), vermillion darker (#D55E00 -> #BF5606: its
# twin 13.2 from orange's)
PALETTE: dict[str, str] = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky blue": "#56B4E9",
    "bluish green": "#009E73",
    "blue": "#0072B2",
    "vermillion": "#BF5606",
    "reddish purple": "#D094B6",
}
# one colour per scheme, in every chapter (posenc_lib.model's scheme names)
SCHEME_COLORS: dict[str, str] = {
    "none": PALETTE["black"],
    "sinusoidal": PALETTE["orange"],
    "learned": PALETTE["bluish green"],
    "rope": PALETTE["blue"],
    "alibi": PALETTE["vermillion"],
    "t5": PALETTE["reddish purple"],
}
# one colour per way of stretching RoPE to a longer context (chapters 8 and 12; the experiments' method
# names); plain RoPE is rope's blue
METHOD_COLORS: dict[str, str] = {
    "plain": SCHEME_COLORS["rope"],
    "linear": PALETTE["orange"],  # position interpolation (PI)
    "ntk": PALETTE["sky blue"],
    "dynamic_ntk": PALETTE["reddish purple"],
    "yarn": PALETTE["bluish green"],
    "llama3": PALETTE["vermillion"],
}
_METHOD_ALIASES = {
    "original": "plain",
    "plain rope": "plain",
    "pi": "linear",
    "linear (pi)": "linear",
    "position interpolation": "linear",
    "ntk-aware": "ntk",
    "dynamic ntk": "dynamic_ntk",
    "llama 3": "llama3",
}
REFERENCE_STYLES: dict[str, dict[str, Any]] = {
    # reference lines, each with its own look (grey, told apart by dash pattern and weight)
    "training length": {"color": "0.35", "linestyle": "--", "lw": 1.2},
    "chance": {"color": "0.45", "linestyle": ":", "lw": 1.6},
    "target": {"color": "0.25", "linestyle": "-.", "lw": 1.2},
}


def scheme_color(name: str) -> str:
    """The course's colour for a positional-encoding scheme ("none", "sinusoidal", ..., "t5")."""
    key = name.strip().lower()
    if key not in SCHEME_COLORS:
        raise ValueError(f"name must be one of the schemes {sorted(SCHEME_COLORS)}, got {name!r}")
    return SCHEME_COLORS[key]


def method_color(name: str) -> str:
    """The course's colour for a context-extension method (``"linear"`` or ``"PI"``, ``"YaRN"``, ...)."""
    key = name.strip().lower()
    key = _METHOD_ALIASES.get(key, key)
    if key not in METHOD_COLORS:
        raise ValueError(f"name must be one of the methods {sorted(METHOD_COLORS)} (or a display name), got {name!r}")
    return METHOD_COLORS[key]


# what the site's dark theme does to a plot (book/_static/course.css): invert(0.88), then hue-rotate(180deg)
DARK_INVERT = 0.88
_HUE_ROTATE_180 = np.array([[-0.574, 1.430, 0.144], [0.426, 0.430, 0.144], [0.426, 1.430, -0.856]])


def dark_twin(color: str) -> str:
    """The colour a line drawn in ``color`` shows as on the site in dark mode (``"#rrggbb"``).

    The site shows every plot inverted in its dark theme (``invert(0.88) hue-rotate(180deg)``, the CSS
    filter's matrices in sRGB), so a scheme's line keeps its hue and becomes lighter; the explorables,
    drawn by the browser, use these twins so that their lines match the plots in both modes.
    """
    if not isinstance(color, str):
        raise TypeError(f"color must be a colour string such as '#0072B2', got {type(color).__name__}")
    try:
        rgb = np.asarray(matplotlib.colors.to_rgb(color))  # (3,) in [0, 1]
    except ValueError as error:
        raise ValueError(f"color must be a Matplotlib colour, got {color!r}") from error
    inverted = DARK_INVERT * (1 - rgb) + (1 - DARK_INVERT) * rgb
    turned = np.clip(_HUE_ROTATE_180 @ inverted, 0.0, 1.0)  # (3,)
    return "#" + "".join(f"{round(float(c) * 255):02x}" for c in turned)


def reference_line(ax: plt.Axes, value: float, kind: str, *, label: str | None = None, vertical: bool = False):
    """A horizontal (or ``vertical``) reference line in the course's style for ``kind`` (``REFERENCE_STYLES``)."""
    if kind not in REFERENCE_STYLES:
        raise ValueError(f"kind must be one of {sorted(REFERENCE_STYLES)}, got {kind!r}")
    draw = ax.axvline if vertical else ax.axhline
    return draw(value, label=label, zorder=1.5, **REFERENCE_STYLES[kind])


COURSE_STYLE: dict[str, Any] = {
    "figure.figsize": (COLUMN_WIDTH, 3.3),
    "figure.dpi": 100,
    "figure.facecolor": "white",
    "savefig.facecolor": "white",
    "axes.facecolor": "white",
    "axes.titlesize": 12,
    "axes.labelsize": 11,
    "axes.grid": False,
    "axes.prop_cycle": cycler(color=list(PALETTE.values())[1:] + [PALETTE["black"]]),
    "image.cmap": "viridis",
    "font.size": 11,
    "xtick.labelsize": 11,
    "ytick.labelsize": 11,
    "legend.fontsize": 11,
    "figure.titlesize": 12,
    # SVG output the same from run to run (element ids from a fixed salt, no date)
    "svg.hashsalt": "posenc-course",
}


def use_course_style(figure_format: str | None = None) -> None:
    """Apply the course's Matplotlib defaults (white background, readable sizes).

    In a notebook, also choose the inline figure format: ``figure_format``, else the
    environment variable ``POSENC_FIGURE_FORMAT`` (the website build sets ``"svg"``),
    else ``"png"``.
    """
    plt.rcParams.update(COURSE_STYLE)  # type: ignore[arg-type]  # Matplotlib's stubs want each key as a literal
    chosen = figure_format or os.environ.get("POSENC_FIGURE_FORMAT") or "png"
    if chosen not in FIGURE_FORMATS:
        raise ValueError(f"figure_format must be one of {FIGURE_FORMATS}, got {chosen!r}")
    try:
        shell = get_ipython()  # type: ignore[name-defined]  # a builtin inside IPython only (NameError below)
    except NameError:
        return  # a plain Python process: nothing to configure
    if shell is None or "inline" not in matplotlib.get_backend():
        return
    # the inline backend's own settings (%config); bbox_inches="tight" is its default, and an SVG
    # without its creation date is the same from run to run
    metadata = {"Date": None} if chosen == "svg" else {}
    shell.run_line_magic("config", f"InlineBackend.figure_formats = [{chosen!r}]")
    shell.run_line_magic(
        "config", f"InlineBackend.print_figure_kwargs = {{'bbox_inches': 'tight', 'metadata': {metadata!r}}}"
    )


def panels(
    n: int,
    *,
    height: float = 2.6,
    width: float = COLUMN_WIDTH,
    sharex: bool = False,
    sharey: bool = False,
) -> tuple[plt.Figure, list[plt.Axes]]:
    """A figure of ``n`` panels stacked vertically, each ``width`` x ``height`` inches.

    Use it where panels would otherwise sit side by side and be shrunk to a fraction of
    the column. Returns ``(figure, list of n axes)``, top to bottom. The figure lays itself
    out (Matplotlib's constrained layout): do not call ``fig.tight_layout()`` on it, which
    warns "The figure layout has changed to tight".
    """
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
        raise ValueError(f"n must be a positive int, got {n!r}")
    if not 0 < width <= COLUMN_WIDTH:
        raise ValueError(f"width must be in (0, {COLUMN_WIDTH}] inches (the column), got {width}")
    if height <= 0:
        raise ValueError(f"height must be positive (inches), got {height}")
    fig, axes = plt.subplots(
        int(n), 1, figsize=(width, height * n), sharex=sharex, sharey=sharey, squeeze=False, layout="constrained"
    )
    return fig, list(axes[:, 0])


def columns_that_fit(ncols: int, panel_width: float, extra: float = 0.0) -> int:
    """The largest number of panels ``<= ncols`` of ``panel_width`` inches (plus ``extra``) that fits the column."""
    return max(1, min(int(ncols), int((COLUMN_WIDTH - extra) // panel_width)))


def legend_below(ax: plt.Axes, *, ncols: int | None = None, **kwargs) -> matplotlib.legend.Legend:
    """Put ``ax``'s legend under the axes, below its tick labels and x label, off the data."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        raise ValueError("ax has no labelled artists to put in a legend")
    fig = ax.figure
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]  # the inline and Agg canvases have one
    below = ax.bbox.y0 - ax.get_tightbbox(renderer).y0  # type: ignore[union-attr]  # None only for an invisible axes  # pixels taken by tick labels and x label
    anchor_y = -(below + 4) / ax.bbox.height
    columns = ncols or min(len(labels), 3)
    return ax.legend(
        handles, labels, loc="upper center", bbox_to_anchor=(0.5, anchor_y), ncols=columns, frameon=False, **kwargs
    )


def readability(fig: plt.Figure, *, figure_format: str = "svg") -> dict[str, float]:
    """How a figure shows on the website: its width and its smallest text, in CSS pixels.

    SVG is laid out at 96 CSS pixels per inch; PNG at the figure's dpi (one image pixel per
    CSS pixel). Text is every visible text artist with content (titles, labels, ticks, legends,
    annotations, colour bars). ``min_font_px`` is the smallest text at 100 % (a laptop);
    ``phone_min_font_px`` the same once the figure is shrunk to a phone's ``PHONE_COLUMN_PX``
    column. Use: ``phone_min_font_px >= 11`` (which implies ``min_font_px >= 11``).
    """
    if figure_format not in ("svg", "png"):
        raise ValueError(f"figure_format must be 'svg' or 'png', got {figure_format!r}")
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]  # the inline and Agg canvases have one
    box = fig.get_tightbbox(renderer)  # inches, as bbox_inches="tight" saves it
    per_inch = 96.0 if figure_format == "svg" else float(fig.dpi)
    sizes = [
        float(text.get_fontsize())
        for text in fig.findobj(matplotlib.text.Text)
        if text.get_visible() and text.get_text().strip() and text.get_window_extent(renderer).width > 0
    ]
    width_px = float(box.width) * per_inch
    min_font_px = min(sizes) * per_inch / 72.0 if sizes else float("nan")
    return {
        "width_px": width_px,
        "height_px": float(box.height) * per_inch,
        "min_font_px": min_font_px,
        "phone_min_font_px": min_font_px * min(1.0, PHONE_COLUMN_PX / width_px),
    }


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
    colorbar = ax.figure.colorbar(image, ax=ax, pad=0.02, fraction=0.05)  # close to its heatmap
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
    colors: dict[str, str] | None = None,
) -> plt.Axes:
    """Plot several named curves against one x axis, with a legend.

    ``colors`` maps some or all curve names to colours (e.g. ``SCHEME_COLORS``); the rest take
    the palette's next colours.

    ``legend_loc`` is a Matplotlib location, or ``"below"`` (under the axes, off the data;
    best when curves fill the plot) or ``"right"`` (outside, right of the axes: make the
    figure narrower than the column to leave it room).
    """
    xs = _as_numpy(x)
    if ax is None:
        _, ax = plt.subplots()
    for label, ys in curves.items():
        ys = _as_numpy(ys)
        if ys.shape != xs.shape:
            raise ValueError(f"curve {label!r} has shape {ys.shape}, x has shape {xs.shape}")
        style: dict[str, Any] = {"color": colors[label]} if colors and label in colors else {}
        ax.plot(xs, ys, label=label, **style)
    if logy:
        ax.set_yscale("log")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if curves and legend_loc == "below":
        legend_below(ax)
    elif curves and legend_loc == "right":
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False)
    elif curves:
        ax.legend(loc=legend_loc)  # type: ignore[call-overload]  # any of Matplotlib's location names
    return ax


def arrows_on_circle(
    vectors: object,
    *,
    labels: Sequence[str],
    title: str,
    ax: plt.Axes | None = None,
    xlabel: str = "first coordinate of the pair",
    ylabel: str = "second coordinate of the pair",
    cmap: str = "viridis",
) -> plt.Axes:
    """Draw 2-d vectors ``(n, 2)`` as labelled arrows from the origin, over the circle of their largest norm.

    Arrow ``i`` is coloured by its index (early = dark, late = light), so a
    sequence of rotations reads as a sweep.
    """
    points = _as_numpy(vectors)
    if points.ndim != 2 or points.shape[1] != 2:
        raise ValueError(f"vectors must have shape (n, 2), got {points.shape}")
    if len(labels) != points.shape[0]:
        raise ValueError(f"labels must have one entry per vector ({points.shape[0]}), got {len(labels)}")
    if ax is None:
        _, ax = plt.subplots(figsize=(4, 4))
    radius = float(np.linalg.norm(points, axis=1).max()) or 1.0
    ax.add_patch(plt.Circle((0, 0), radius, fill=False, color="0.75", linestyle="--"))
    colours = plt.get_cmap(cmap)(np.linspace(0.0, 0.85, len(points)))
    for (x, y), label, colour in zip(points, labels, colours):
        ax.annotate("", xy=(x, y), xytext=(0, 0), arrowprops=dict(arrowstyle="->", color=colour, lw=1.8))
        ax.text(1.12 * x, 1.12 * y, label, color=colour, ha="center", va="center", fontsize=MIN_FONT_PT)
    limit = 1.3 * radius
    ax.set_xlim(-limit, limit)
    ax.set_ylim(-limit, limit)
    ax.set_aspect("equal")
    ax.axhline(0, color="0.85", lw=0.8, zorder=0)
    ax.axvline(0, color="0.85", lw=0.8, zorder=0)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    return ax


def heatmap_grid(
    matrices: object,
    *,
    titles: Sequence[str],
    suptitle: str,
    xlabel: str,
    ylabel: str,
    ncols: int = 4,
    colorbar_label: str | None = None,
    vmin: float | None = None,
    vmax: float | None = None,
    cmap: str = "viridis",
    panel_size: tuple[float, float] = (1.8, 1.7),
) -> plt.Figure:
    """Draw a stack of matrices ``(n, rows, cols)`` -- e.g. one per head, ``(h, s_q, s_k)`` -- on one colour scale.

    Non-finite entries (such as a ``-inf`` causal mask) are left blank. Returns
    the figure; one shared colour bar sits on the right. ``ncols`` is the most panels
    per row: fewer when that many would be wider than the column (``COLUMN_WIDTH``).
    """
    stack = _as_numpy(matrices)
    if stack.ndim != 3:
        raise ValueError(f"matrices must be 3-D (n, rows, cols), got shape {stack.shape}")
    if len(titles) != stack.shape[0]:
        raise ValueError(f"titles must have one entry per matrix ({stack.shape[0]}), got {len(titles)}")
    stack = np.where(np.isfinite(stack), stack, np.nan)
    ncols = columns_that_fit(ncols, panel_size[0], extra=1.0)  # wrap into more rows rather than shrink
    nrows = -(-stack.shape[0] // ncols)
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(panel_size[0] * ncols + 1.0, panel_size[1] * nrows + 0.6), squeeze=False
    )
    low = np.nanmin(stack) if vmin is None else vmin
    high = np.nanmax(stack) if vmax is None else vmax
    image = None
    for index, ax in enumerate(axes.flat):
        if index >= stack.shape[0]:
            ax.axis("off")
            continue
        image = ax.imshow(stack[index], aspect="auto", cmap=cmap, vmin=low, vmax=high, interpolation="nearest")
        ax.set_title(titles[index], fontsize=MIN_FONT_PT)
        if index % ncols == 0:
            ax.set_ylabel(ylabel)
        if index // ncols == nrows - 1:
            ax.set_xlabel(xlabel)
    fig.suptitle(suptitle)
    fig.tight_layout()
    colorbar = fig.colorbar(image, ax=axes.ravel().tolist(), shrink=0.9)  # type: ignore[arg-type]  # set by the loop
    if colorbar_label:
        colorbar.set_label(colorbar_label)
    return fig


def trajectory_plot(
    paths: dict[str, object],
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    ax: plt.Axes | None = None,
    label_points: bool = True,
    point_labels: Sequence[str] | None = None,
) -> plt.Axes:
    """Draw named 2-d paths, each ``(n, 2)``, as joined markers; point ``i`` is labelled ``i``.

    Used for "the same word at positions 0, 1, 2, ...": each path is one word,
    each point one position, projected onto two coordinates. Equal axis scales,
    so circles look like circles. ``point_labels`` replaces the labels ``0 .. n-1``
    (e.g. with the positions when they do not start at 0 or skip some); an empty label leaves
    its point unlabelled (to keep the labels of points close together from overlapping).
    """
    if not paths:
        raise ValueError("paths must hold at least one named (n, 2) array")
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 5))
    for name, path in paths.items():
        points = _as_numpy(path)
        if points.ndim != 2 or points.shape[1] != 2:
            raise ValueError(f"path {name!r} must have shape (n, 2), got {points.shape}")
        (line,) = ax.plot(points[:, 0], points[:, 1], marker="o", markersize=4, lw=1, label=name)
        if point_labels is not None and len(point_labels) != points.shape[0]:
            raise ValueError(f"point_labels must have one entry per point ({points.shape[0]}), got {len(point_labels)}")
        if label_points:
            # each label sits just outside its point, pointing away from the path's centre, so the
            # labels of a closed path (a circle) do not fall on the path or on each other
            centre = points.mean(axis=0)
            for index, (x, y) in enumerate(points):
                text = str(index) if point_labels is None else str(point_labels[index])
                if not text:
                    continue
                away = np.array([x, y]) - centre
                norm = float(np.hypot(*away)) or 1.0
                dx, dy = 9.0 * away / norm
                ax.annotate(
                    text,
                    (x, y),
                    textcoords="offset points",
                    xytext=(dx, dy),
                    ha="center",
                    va="center",
                    fontsize=MIN_FONT_PT,
                    color=line.get_color(),
                )
    ax.margins(0.15)  # room for the labels outside the outermost points, clear of the title and the frame
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend()
    return ax


def bar_plot(
    labels: Sequence[str],
    values: object,
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    ax: plt.Axes | None = None,
    logy: bool = False,
    value_format: str = "{:.2f}",
) -> plt.Axes:
    """One bar per label, its value written above it (``value_format``); optional log y axis."""
    heights = _as_numpy(values)
    if heights.ndim != 1 or heights.shape[0] != len(labels):
        raise ValueError(f"values must be 1-D with one entry per label ({len(labels)}), got shape {heights.shape}")
    if ax is None:
        _, ax = plt.subplots()
    bars = ax.bar(range(len(labels)), heights, color=plt.get_cmap("viridis")(np.linspace(0.15, 0.75, len(labels))))
    ax.set_xticks(range(len(labels)), labels)
    ax.bar_label(bars, labels=[value_format.format(h) for h in heights], fontsize=MIN_FONT_PT)
    if logy:
        ax.set_yscale("log")
    ax.margins(y=0.15)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    return ax
