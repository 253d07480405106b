"""The caption of an explorable's static figure (the cell tagged ``explorable-fallback``).

On screen, where scripts run, that cell's output is left out and the explorable stands in for it; printed,
or without scripts, the static figure is shown and needs to say what it shows. Its caption is not a
numbered MyST-NB figure caption: the figure is absent on screen, and the numbers a reader sees there must
not skip one. ``display(pe.explore.fallback_caption("..."))`` after the figure puts the caption below it.
"""

from __future__ import annotations

import html


class FallbackCaption:
    """A caption shown below an explorable's static figure, in print and without scripts.

    ``text``: plain text (no Markdown, no math), at least one word.
    """

    def __init__(self, text: str):
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        if not text.strip():
            raise ValueError("text must say what the figure shows, got an empty string")
        self.text = " ".join(text.split())

    def __repr__(self) -> str:
        """The caption as plain text (what a plain-text front end and nbval compare)."""
        return self.text

    def _repr_html_(self) -> str:
        return f'<p class="pe-fallback-caption">{html.escape(self.text)}</p>'


def fallback_caption(text: str) -> FallbackCaption:
    """The caption of an explorable's static figure: ``display(fallback_caption(text))`` below the figure."""
    return FallbackCaption(text)
