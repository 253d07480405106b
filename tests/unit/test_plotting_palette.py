"""The course's colours: one per scheme and per method, told apart with and without red/green vision.

A colour-vision simulation (Machado, Oliveira & Fernandes 2009, severity 1, applied in linear RGB)
turns each colour into what a reader with protanopia or deuteranopia sees; every pair of colours
that may share a plot must stay at least ``MIN_DELTA_E`` apart in CIELAB (ΔE 1976). Matplotlib's
default cycle, whose green and red (C2, C3) a deuteranope sees as nearly one colour, fails it.
"""

from __future__ import annotations

import itertools

import matplotlib.colors
import numpy as np
import pytest

from posenc_lib import model, plotting

MIN_DELTA_E = 15.0  # CIELAB distance: two line colours a reader tells apart at a glance

SIMULATIONS = {  # linear-RGB matrices of full dichromacy (Machado et al. 2009, severity 1.0)
    "protanopia": np.array(
        [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]]
    ),
    "deuteranopia": np.array(
        [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]]
    ),
    "normal vision": np.eye(3),
}


def to_lab(colour: str, simulation: np.ndarray) -> np.ndarray:
    """CIELAB (D65) of a Matplotlib colour as seen through a colour-vision simulation."""
    srgb = np.asarray(matplotlib.colors.to_rgb(colour))
    linear = np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)
    seen = np.clip(simulation @ linear, 0.0, 1.0)
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ seen
    xyz = xyz / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def closest_pair(colours: dict[str, str], simulation: np.ndarray) -> tuple[float, str, str]:
    labs = {name: to_lab(c, simulation) for name, c in colours.items()}
    return min((float(np.linalg.norm(labs[a] - labs[b])), a, b) for a, b in itertools.combinations(labs, 2))


@pytest.mark.parametrize("mode", ["light", "dark"])
@pytest.mark.parametrize("vision", sorted(SIMULATIONS))
@pytest.mark.parametrize("table", ["SCHEME_COLORS", "METHOD_COLORS"])
def test_every_pair_of_course_colours_stays_apart(table, vision, mode):
    # in dark mode the site shows each plot inverted (plotting.dark_twin): the twins must stay apart too
    # (Okabe & Ito's vermillion and reddish purple did not: orange-vermillion 13.2 with protanopia,
    # bluish green-reddish purple 11.3 with deuteranopia)
    colours = getattr(plotting, table)
    if mode == "dark":
        colours = {name: plotting.dark_twin(colour) for name, colour in colours.items()}
    distance, a, b = closest_pair(colours, SIMULATIONS[vision])
    assert distance >= MIN_DELTA_E, f"{table}: {a} and {b} are ΔE {distance:.1f} apart with {vision}, {mode} mode"


@pytest.mark.parametrize("vision", ["protanopia", "deuteranopia"])
def test_the_simulation_catches_matplotlibs_red_and_green(vision):
    default = {f"C{i}": f"C{i}" for i in range(5)}  # blue, orange, green, red, purple
    distance, _, _ = closest_pair(default, SIMULATIONS[vision])
    assert distance < MIN_DELTA_E
    # and with normal vision the same five are far apart: it is the simulation that merges them
    assert closest_pair(default, SIMULATIONS["normal vision"])[0] > 2 * MIN_DELTA_E


def test_every_scheme_of_the_model_has_its_colour():
    assert set(plotting.SCHEME_COLORS) == set(model.SCHEMES), model.SCHEMES
    assert plotting.scheme_color("T5") == plotting.SCHEME_COLORS["t5"]
    with pytest.raises(ValueError, match="name must be one of the schemes"):
        plotting.scheme_color("cope")


def test_method_names_as_the_chapters_write_them():
    assert plotting.method_color("YaRN") == plotting.METHOD_COLORS["yarn"]
    assert plotting.method_color("Llama 3") == plotting.METHOD_COLORS["llama3"]
    assert plotting.method_color("NTK-aware") == plotting.METHOD_COLORS["ntk"]
    assert plotting.method_color("original") == plotting.SCHEME_COLORS["rope"]  # plain RoPE is rope
    assert plotting.method_color("PI") == plotting.METHOD_COLORS["linear"]
    with pytest.raises(ValueError, match="name must be one of the methods"):
        plotting.method_color("xpos")


def test_reference_lines_of_different_kinds_look_different():
    styles = {tuple(sorted(s.items())) for s in plotting.REFERENCE_STYLES.values()}
    dashes = {s["linestyle"] for s in plotting.REFERENCE_STYLES.values()}
    assert len(styles) == len(dashes) == len(plotting.REFERENCE_STYLES)
