"""The chapters' figures as stored: numbered with a caption, made for the phone's column, text >= 11 pt.

The browser tests (tests/site/test_browser.py) measure the built site; these read the notebooks, so an
author learns in a second, without a site build, that a figure is too wide or has no caption.
Stored figures are PNG at the course style's 100 dpi, saved with a tight bounding box (0.1 in of
padding): a PNG w pixels wide is an SVG of 0.96 w CSS pixels on the site.
"""

from __future__ import annotations

import base64
import io
import re

import nbformat
import pytest
from PIL import Image

from conftest import ROOT
from posenc_lib import plotting

NOTEBOOKS = sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb"))
PHONE_TEXT_PX = 11.0


def figure_cells():
    for path in NOTEBOOKS:
        for cell in nbformat.read(path, as_version=4).cells:
            images = [o for o in cell.get("outputs", []) if "image/png" in o.get("data", {})]
            if cell.cell_type == "code" and images:
                yield path.stem, cell, images


FIGURES = list(figure_cells())


def test_the_chapters_have_figures():
    assert len(FIGURES) >= 25, len(FIGURES)


@pytest.mark.parametrize("chapter, cell, images", FIGURES, ids=[f"{c}:{cell.id}" for c, cell, _ in FIGURES])
def test_a_figure_is_readable_on_a_phone(chapter, cell, images):
    for output in images:
        width, _ = Image.open(io.BytesIO(base64.b64decode(output["data"]["image/png"]))).size
        css_px = width * 96 / 100
        smallest = plotting.MIN_FONT_PT * 96 / 72 * min(1.0, plotting.PHONE_COLUMN_PX / css_px)
        assert smallest >= PHONE_TEXT_PX, (
            f"{chapter} cell {cell.id}: the figure is {css_px:.0f} CSS px wide, so a phone shows its "
            f"{plotting.MIN_FONT_PT:g}-pt text at {smallest:.1f} px; keep it within COLUMN_WIDTH "
            "(break long titles and legends over lines)"
        )
    sizes = [int(n) for n in re.findall(r"(?:fontsize|labelsize)\s*=\s*(\d+)", cell.source)]
    assert all(n >= plotting.MIN_FONT_PT for n in sizes), f"{chapter} cell {cell.id}: font sizes {sizes}"


def test_every_figure_a_reader_sees_is_numbered_with_a_caption():
    names = []
    for chapter, cell, _ in FIGURES:
        if "explorable-fallback" in cell.metadata.get("tags", []):
            continue  # hidden on screen: the explorable stands in for it
        figure = cell.metadata.get("mystnb", {}).get("figure", {})
        assert figure.get("name", "").startswith("fig-") and len(figure.get("caption", "")) > 20, (
            f"{chapter} cell {cell.id} has no mystnb.figure name and caption: {figure}"
        )
        names.append(figure["name"])
    assert len(names) == len(set(names)), sorted(names)


def test_the_text_points_at_figures_by_number():
    cited = set()
    for path in NOTEBOOKS:
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "markdown":
                cited |= set(re.findall(r"\{numref\}`(fig-[\w-]+)`", cell.source))
    named = {
        cell.metadata["mystnb"]["figure"]["name"]
        for _, cell, _ in FIGURES
        if "figure" in cell.metadata.get("mystnb", {})
    }
    assert cited and cited <= named, cited - named
