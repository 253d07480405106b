"""Sphinx extension (``_config.yml`` loads it): explorable figures and self-check questions on the website.

A notebook output of ``posenc_lib.explore`` or ``posenc_lib.questions`` carries its script and style sheet
inline (``data-pe-inline``), so that it works in Jupyter and Colab. On the website a page with such outputs
drops those copies and links ``_static/explore/explore.js`` and ``explore.css`` once (cached across pages);
a page without explorables loads neither.
"""

from __future__ import annotations

import pathlib
import re
from typing import Any

INLINE = re.compile(r"<(script|style)\b[^>]*\bdata-pe-inline\b[^>]*>.*?</\1>\s*", re.DOTALL)


def _write_assets(app: Any) -> None:
    """The site's script and style sheet, written before any page (Sphinx then stamps their checksums)."""
    if app.builder.format != "html":
        return
    from posenc_lib import explore

    folder = pathlib.Path(app.outdir) / "_static" / "explore"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "explore.js").write_text(explore.script(), encoding="utf-8")
    (folder / "explore.css").write_text(explore.stylesheet(), encoding="utf-8")


def _on_page_context(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    """On a page with explorables: drop the inline copies, link the files (Sphinx adds them to this page only)."""
    if 'class="pe-explore' in context.get("body", ""):
        context["body"] = INLINE.sub("", context["body"])
        app.add_js_file("explore/explore.js", priority=800)  # deferred by course_site
        app.add_css_file("explore/explore.css", priority=800)  # folded into the page's one style sheet


def setup(app: Any) -> dict[str, Any]:
    app.connect("builder-inited", _write_assets)
    app.connect("html-page-context", _on_page_context, priority=800)  # before course_site's script pass (900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
