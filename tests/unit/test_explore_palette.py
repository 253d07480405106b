"""The explorables draw each scheme and each context-extension method in the colour the chapters' plots give
it (posenc_lib.plotting's SCHEME_COLORS and METHOD_COLORS), in light mode as the plots are drawn and in dark
mode as the site shows them there (inverted: plotting.dark_twin)."""

from __future__ import annotations

import re

import pytest

from posenc_lib import plotting
from posenc_lib.explore import STATIC

CSS = (STATIC / "explore.css").read_text()
CORE = (STATIC / "core.js").read_text()


def block(selector_start: str) -> str:
    """The declarations of the first rule whose selector starts with `selector_start`."""
    start = CSS.index(selector_start)
    return CSS[CSS.index("{", start) + 1 : CSS.index("}", start)]


def course_colours(declarations: str) -> dict[str, str]:
    return dict(re.findall(r"--pe-c-([a-z0-9-]+):\s*(#[0-9a-f]{6});", declarations))


def expected() -> dict[str, str]:
    """Every scheme's and method's colour, by its CSS name (plain RoPE is rope's colour)."""
    colours = {name: colour.lower() for name, colour in plotting.SCHEME_COLORS.items()}
    for name, colour in plotting.METHOD_COLORS.items():
        if name != "plain":
            colours[name.replace("_", "-")] = colour.lower()
    return colours


def dark_blocks() -> list[str]:
    media = CSS.index("@media (prefers-color-scheme: dark)")
    in_media = CSS[CSS.index("{", CSS.index("{", media) + 1) + 1 :]
    return [block('html[data-theme="dark"] .pe-explore,'), in_media[: in_media.index("}")]]


def test_light_mode_uses_the_plots_colours():
    assert course_colours(block(".pe-explore {")) == expected()


@pytest.mark.parametrize("which", ["data-theme", "prefers-color-scheme"])
def test_dark_mode_uses_the_colours_the_site_shows_the_plots_in(which):
    declarations = dark_blocks()[0 if which == "data-theme" else 1]
    found = course_colours(declarations)
    assert found == {name: plotting.dark_twin(colour) for name, colour in expected().items()}


def test_every_scheme_and_method_has_a_class_the_scripts_name_whole():
    # core.js names each class whole (the site's style sheet keeps only rules whose names occur in its scripts)
    classes = dict(re.findall(r"(\w+): \"(pe-c-[a-z0-9-]+)\"", CORE[CORE.index("const COLOURS") :]))
    for name in plotting.SCHEME_COLORS:
        assert classes[name] == f"pe-c-{name}"
    for name in plotting.METHOD_COLORS:
        assert classes[name] == ("pe-c-rope" if name == "plain" else f"pe-c-{name.replace('_', '-')}")
    for css_class in set(classes.values()):
        assert f".pe-explore .{css_class} {{ stroke: var(--{css_class}); fill: var(--{css_class}); }}" in CSS


def relative_luminance(colour: str) -> float:
    channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def test_dark_twins_are_lines_a_reader_sees_on_the_dark_panel():
    panel = relative_luminance("#161b22")  # --pe-panel in dark mode, the lightest dark background
    for name, colour in expected().items():
        twin = relative_luminance(plotting.dark_twin(colour))
        assert (twin + 0.05) / (panel + 0.05) >= 3.0, name  # WCAG's 3:1 for graphics


def test_dark_twin_is_the_site_filter():
    assert plotting.dark_twin("white") == "#1f1f1f"  # the plot's white background: 0.12 grey
    assert plotting.dark_twin("#000000") == "#e0e0e0"  # black text: 0.88 grey
    red, green, blue = (int(plotting.dark_twin("#0072B2")[i : i + 2], 16) for i in (1, 3, 5))
    assert blue > green > red  # blue stays blue (the hue turns back), lighter
    with pytest.raises(ValueError, match="color"):
        plotting.dark_twin("not a colour")
    with pytest.raises(TypeError, match="color"):
        plotting.dark_twin(0.5)
