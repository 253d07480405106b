"""Sphinx extension: explorable figures and self-check questions on the website (``_config.yml`` loads it).

A notebook output made by ``posenc_lib.explore`` or ``posenc_lib.questions`` carries its script and
style sheet inline (``data-pe-inline``), so that it works in Jupyter and Colab. On the website each page
that has such outputs loses those inline copies and links, once, ``_static/explore/explore.js`` (one
script with every kind, deferred, cached across pages) and ``_static/explore/explore.css`` (which the style
bundler of tools/course_site.py folds into the page's one style sheet). Pages without explorables load
neither: no script, no rule.
"""

from __future__ import annotations

import pathlib
import re
from typing import Any

SCRIPT, STYLE = "explore/explore.js", "explore/explore.css"
MARKER = 'class="pe-explore'
INLINE = re.compile(r"<(script|style)\b[^>]*\bdata-pe-inline\b[^>]*>.*?</\1>\s*", re.DOTALL)


def _write_assets(app: Any) -> None:
    """The site's copies of the script and style sheet, written before any page (Sphinx then stamps their checksums)."""
    if app.builder.format != "html":
        return
    from posenc_lib import explore

    folder = pathlib.Path(app.outdir) / "_static" / "explore"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "explore.js").write_text(explore.script(), encoding="utf-8")
    (folder / "explore.css").write_text(explore.stylesheet(), encoding="utf-8")


def _on_page_context(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    body = context.get("body", "")
    if MARKER not in body:
        return
    from sphinx.builders.html._assets import _CascadingStyleSheet, _JavaScript

    context["body"] = INLINE.sub("", body)
    context["script_files"].append(_JavaScript(f"_static/{SCRIPT}", priority=800))  # deferred by course_site
    context["css_files"].append(
        _CascadingStyleSheet(f"_static/{STYLE}", priority=800, rel="stylesheet", type="text/css")
    )


def setup(app: Any) -> dict[str, Any]:
    app.connect("builder-inited", _write_assets)
    app.connect("html-page-context", _on_page_context, priority=800)  # before course_site's script pass (900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
