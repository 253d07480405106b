"""The caption of an explorable's static figure (posenc_lib.explore.fallback_caption)."""

from __future__ import annotations

import pytest

import posenc_lib as pe


def test_the_caption_is_one_escaped_paragraph_and_its_text():
    caption = pe.explore.fallback_caption("PE(p) · PE(p + Δ)\n  for d < 64 & more")
    assert repr(caption) == "PE(p) · PE(p + Δ) for d < 64 & more"  # whitespace joined, text kept
    assert caption._repr_html_() == '<p class="pe-fallback-caption">PE(p) · PE(p + Δ) for d &lt; 64 &amp; more</p>'


def test_the_caption_refuses_what_is_not_text():
    with pytest.raises(TypeError, match="text"):
        pe.explore.fallback_caption(3)
    with pytest.raises(ValueError, match="text"):
        pe.explore.fallback_caption("  \n")
