"""Sphinx extension: what the course website changes about its pages (``_config.yml`` loads it).

Reading (the notebooks stay as they are; only the site changes):

* the set-up cell (stamped by tools/setup_cell.py with ``metadata.posenc.site_note``) is
  replaced by its one-sentence note for Colab readers;
* solution code does not show nbgrader's ``### BEGIN SOLUTION`` / ``### END SOLUTION`` lines;
* an exercise whose question is all in its title gets no empty body (sphinx-exercise writes an
  empty content section, which the theme draws as a strip under the title).
* a solution's title is plain text, so the whole bar opens it (it held a link back to the
  exercise); a solution right after an exercise whose question is all in its title replaces that
  exercise, so the question is shown once (``fold_solution_titles``).

Writing each page:

* a ``<meta name="description">`` from the page's first paragraph (SEO; a page can set its
  own with MyST's ``html_meta`` front matter), the site's description on pages without text;
* scripts only where they are used: none of sphinx-thebe (no live code on this site), the
  search index and search tools only on the search page (template ``book/_templates/layout.html``),
  toggle / copy-button / tab scripts only on pages that have toggles / code / tabs, KaTeX's CSS
  only on pages with formulas; every other script deferred so none blocks the first paint;
* on the search page, result snippets are taken from the article, not from the toolbar.
* on a phone, the header names the page and the section being read, and a link tapped in a
  drawer closes it (``_static/course-nav.js``, template ``book/_templates/toggle-primary-sidebar.html``);
  figures carry their width and height (``sized_images``), so the page does not grow as they load.
* table cells carry their column's heading (``labelled_tables``), which a phone shows when it
  lays a wide table out row by row (course.css).

Figures are loaded lazily (``loading="lazy"``), when the reader scrolls near them: a phone draws
a chapter's first screen without fetching and rasterising a dozen plots below it. The build asks
the notebooks for SVG figures (``POSENC_FIGURE_FORMAT=svg``, read by
``posenc_lib.plotting.use_course_style``).

References (``bibtex_default_style: course``): pybtex's alpha style, with arXiv identifiers
(``eprint`` fields) as links, entries sorted by author name even when the author is an
organisation written in braces (``{BigScience Workshop}``), which plain alpha puts last,
and such organisations labelled by their first word (``[BigScience22]``).

After the build (each page's HTML is rewritten):

* Font Awesome icons become inline SVG (from npm's @fortawesome/fontawesome-free, the version the
  theme bundles), so no page loads the theme's 1.4 MB fontawesome.js;
* a page's dozen style sheets become one (``StyleBundler``), cut to the rules its pages and their
  scripts can use (PurgeCSS: 520 KB to about 150 KB); Font Awesome's 156 KB font is cut to the
  few glyphs the style sheets show;
* highlighted code loses the ``<span>`` of each name, punctuation mark and space, which the code
  style draws in the block's own colour (``plain_token_classes``);
* the theme's script no longer measures every box of the page on load (``patch_theme_script``);
* references are list items for screen readers (``fix_aria``).

Why: Lighthouse's phone emulation (slow 4G, a slow CPU) scored chapters 0.28-0.36; each of
these steps was measured to move it (see the closing notes of issue 15).
"""

from __future__ import annotations

import hashlib
import html
import io
import json
import os
import pathlib
import posixpath
import re
import subprocess
import warnings
from typing import Any
from xml.etree import ElementTree

import tinycss2  # type: ignore[import-untyped]  # tinycss2 ships no type information
from bs4 import BeautifulSoup, XMLParsedAsHTMLWarning
from bs4.dammit import EntitySubstitution
from bs4.formatter import HTMLFormatter
from tinycss2.serializer import serialize_string_value, serialize_url  # type: ignore[import-untyped]  # as above

ROOT = pathlib.Path(__file__).resolve().parents[1]
FONTAWESOME = ROOT / "node_modules" / "@fortawesome" / "fontawesome-free" / "svgs"
SOLUTION_MARKER = re.compile(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n?", re.MULTILINE)
DESCRIPTION_LENGTH = 155  # what search engines show

# ------------------------------------------------------------------ reading


def strip_solution_markers(text: str) -> str:
    """The code without nbgrader's solution marker lines."""
    return SOLUTION_MARKER.sub("", text)


def inline_markup(text: str) -> list[Any]:
    """Docutils nodes for a sentence where `backticks` mark code."""
    from docutils import nodes

    parts = text.split("`")
    if len(parts) % 2 == 0:
        raise ValueError(f"site note has an unmatched backtick: {text!r}")
    return [nodes.literal(part, part) if index % 2 else nodes.Text(part) for index, part in enumerate(parts) if part]


def _on_doctree_read(app: Any, doctree: Any) -> None:
    from docutils import nodes

    for block in list(doctree.findall(nodes.literal_block)):
        text = block.astext()
        stripped = strip_solution_markers(text)
        if stripped != text:
            block.rawsource = stripped
            block.children = []
            block += nodes.Text(stripped)
    for cell in list(doctree.findall(nodes.container)):
        metadata = cell.get("cell_metadata") or {}
        note = (metadata.get("posenc") or {}).get("site_note") if isinstance(metadata, dict) else None
        if note:  # (replace_self would give the paragraph the cell's classes)
            cell.parent.replace(cell, nodes.paragraph("", "", *inline_markup(note), classes=["setup-note"]))


# ------------------------------------------------------------------ writing


def page_summary(doctree: Any, length: int = DESCRIPTION_LENGTH) -> str:
    """The page's opening text: paragraphs and lists directly under its first section, up to ``length``."""
    from docutils import nodes

    section = next(iter(doctree.findall(nodes.section)), None)
    if section is None:
        return ""
    words: list[str] = []
    for child in section.children:
        if isinstance(child, nodes.section):
            break
        if isinstance(child, (nodes.paragraph, nodes.bullet_list, nodes.enumerated_list)):
            words += child.astext().split()
            if len(" ".join(words)) >= length:
                break
    return " ".join(words)


def shorten(text: str, length: int = DESCRIPTION_LENGTH) -> str:
    if len(text) <= length:
        return text
    cut = text[: length - 1].rsplit(" ", 1)[0].rstrip(",;:")
    return cut + "…"


def _script_name(script: Any) -> str:
    return str(getattr(script, "filename", "") or "")


def _used(name: str, inline: str, body: str) -> bool:
    """Whether a script or style sheet of an extension is needed on a page with this body."""
    if "sphinx-thebe" in name or "THEBE_JS_URL" in inline:
        return False  # no live-code button on this site
    if "design-tabs" in name or "sphinx-design" in name:
        return "sd-" in body
    if (
        "togglebutton" in name
        or "toggleHint" in inline
        or "toggleOpenOnPrint" in inline
        or "togglebuttonSelector" in inline
    ):
        return any(marker in body for marker in ("toggle", "dropdown", "tag_hide"))
    if "clipboard" in name or "copybutton" in name:
        return "highlight" in body
    if "katex" in name:
        return 'class="katex' in body
    return True


def _on_page_context(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    from sphinx.builders.html._assets import _JavaScript

    body = context.get("body", "")
    metatags = context.get("metatags", "")
    if 'name="description"' not in metatags:
        description = shorten(page_summary(doctree)) if doctree is not None else ""
        description = description or app.config.html_context.get("site_description", "")
        if description:
            context["metatags"] = metatags + f'\n<meta name="description" content="{html.escape(description)}" />'

    scripts = context.get("script_files")
    if scripts is not None:
        kept, seen = [], set()
        for script in scripts:
            name = _script_name(script)
            attributes = dict(script.attributes)
            inline = attributes.get("body", "")
            if not _used(name, inline, body) or (name, inline) in seen:
                continue  # Sphinx 7 adds inline scripts registered while reading twice: keep one
            seen.add((name, inline))
            # documentation_options.js defines what inline scripts use at once: it stays synchronous;
            # so does everything on the search page, whose search tools need doctools.js at once
            deferrable = name and "documentation_options" not in name and pagename != "search"
            if deferrable and not {"async", "defer", "type"} & attributes.keys():
                script = _JavaScript(name, priority=script.priority, **{**attributes, "defer": "defer"})
            kept.append(script)
        if pagename == "search":
            kept.append(_JavaScript("_static/search-snippets.js", priority=900, defer="defer"))
        kept.append(_JavaScript("_static/course-nav.js", priority=900, defer="defer"))
        if "<pre" in body or "cell_output" in body or 'class="math' in body:
            kept.append(_JavaScript("_static/scroll-tab-stops.js", priority=900, defer="defer"))
        scripts[:] = kept

    styles = context.get("css_files")
    if styles is not None:
        styles[:] = [css for css in styles if _used(_script_name(css), "", body)]


# ------------------------------------------------------------------ after the build
# Each page is parsed once (BeautifulSoup; bs4 comes with pydata-sphinx-theme), rewritten by the functions
# below, written once; style sheets are read with tinycss2 (which the theme's dependencies bring too).

STYLES = {"fa-solid": "solid", "fas": "solid", "fa-regular": "regular", "far": "regular", "fa-brands": "brands"}
STYLES["fab"] = "brands"
KEEP_CLASSES = {"fa-lg", "fa-fw"}
FA_SOLID_TTF = "_static/vendor/fontawesome/webfonts/fa-solid-900.ttf"
FA_SUBSET = "_static/course-fa-solid.woff"
PURGE_SCRIPT = ROOT / "tools" / "purge_css.mjs"


class _InOrder(HTMLFormatter):
    """bs4's HTML output ("minimal" entities), attributes in their order (bs4 sorts them by name)."""

    def attributes(self, tag: Any) -> Any:
        return tag.attrs.items()


IN_ORDER = _InOrder(entity_substitution=EntitySubstitution.substitute_xml)  # what bs4 calls "minimal"
warnings.filterwarnings("ignore", category=XMLParsedAsHTMLWarning)  # an SVG file's root, read by html.parser


def soup_of(text: str) -> BeautifulSoup:
    return BeautifulSoup(text, "html.parser")


def icon_svg(style: str, name: str, icons: pathlib.Path = FONTAWESOME) -> tuple[str, str]:
    """(viewBox, path) of a Font Awesome icon."""
    source = icons / style / f"{name}.svg"
    if not source.exists():
        raise ValueError(f"no Font Awesome icon {style}/{name} in {icons}")
    svg = soup_of(source.read_text()).svg
    if svg is None or svg.path is None or not svg.get("viewbox") or not svg.path.get("d"):
        raise ValueError(f"{source} has no viewBox and path")
    return str(svg["viewbox"]), str(svg.path["d"])


def inline_icons(soup: BeautifulSoup, icons: pathlib.Path = FONTAWESOME) -> None:
    """Every empty Font Awesome ``<i>``/``<span>`` icon replaced by an inline SVG, and no fontawesome.js."""
    for script in soup.select('script[src*="_static/scripts/fontawesome.js"]'):
        script.decompose()
    for tag in soup.find_all(["i", "span"], class_=True):
        classes = list(tag["class"])
        styles = [STYLES[c] for c in classes if c in STYLES]
        names = [c[3:] for c in classes if c.startswith("fa-") and c not in STYLES and c not in KEEP_CLASSES]
        if len(styles) != 1 or len(names) != 1 or tag.get_text().strip() or tag.find(True):
            continue
        view_box, path = icon_svg(styles[0], names[0], icons)
        kept = [c for c in classes if not (c in STYLES or c.startswith("fa-")) or c in KEEP_CLASSES]
        attributes: dict[str, Any] = {k: v for k, v in tag.attrs.items() if k not in ("class", "title")}
        svg = soup.new_tag("svg", attrs={"class": " ".join([*kept, "pst-icon"]), **attributes, "viewBox": view_box})
        svg.attrs |= {"aria-hidden": "true", "focusable": "false"}
        svg.append(soup.new_tag("path", attrs={"fill": "currentColor", "d": path}))
        tag.replace_with(svg)


def _tokens(nodes: Any) -> Any:
    """Every token of a tinycss2 component list, also those inside blocks and functions."""
    for node in nodes or []:
        yield node
        yield from _tokens(getattr(node, "content", None) if node.type != "function" else node.arguments)


def _qualified_rules(nodes: list[Any]) -> Any:
    """The style rules of a parsed style sheet, also those inside @media and the like."""
    for node in nodes:
        if node.type == "qualified-rule":
            yield node
        elif node.type == "at-rule" and node.content:
            yield from _qualified_rules(tinycss2.parse_rule_list(node.content, skip_whitespace=True))


def css_text(outdir: pathlib.Path, relative: str, into: str) -> str:
    """A site CSS file's text for a file at `into` (both relative to the site root): its
    relative url()s rewritten for the new place and its @imports inlined."""
    folder = posixpath.dirname(relative)

    def url_of(token: Any) -> Any:  # the token holding the address of url(x), url("x") or "x" (@import)
        if token.type == "function" and token.lower_name == "url":
            return next((t for t in token.arguments if t.type == "string"), None)
        return token if token.type in ("url", "string") else None

    parts = []
    for node in tinycss2.parse_stylesheet((outdir / relative).read_text(encoding="utf-8")):
        if node.type == "at-rule" and node.lower_at_keyword == "import":
            target = next(u for t in node.prelude if (u := url_of(t)) is not None)
            parts.append(css_text(outdir, posixpath.normpath(posixpath.join(folder, target.value)), into))
            continue
        for token in _tokens([node]):
            address = url_of(token) if token.type in ("url", "function") else None
            if address is not None and not address.value.startswith(("data:", "http:", "https:", "/", "#")):
                target = posixpath.normpath(posixpath.join(folder, address.value))
                address.value = posixpath.relpath(target, posixpath.dirname(into))
                address.representation = (
                    f'"{serialize_string_value(address.value)}"'
                    if address.type == "string"
                    else f"url({serialize_url(address.value)})"
                )
        parts.append(node.serialize())
    return "".join(parts)


def icon_codepoints(css: str) -> set[int]:
    """Font Awesome code points that style sheets show through ``content`` (admonition icons and
    the like), leaving out Font Awesome's own ``.fa-*`` class rules (the icons now inline SVG)."""
    return {
        ord(char)
        for rule in _qualified_rules(tinycss2.parse_stylesheet(css, skip_whitespace=True, skip_comments=True))
        if ".fa-" not in tinycss2.serialize(rule.prelude)
        for token in _tokens(rule.content)
        if token.type == "string"
        for char in token.value
        if "\ue000" <= char <= "\uf8ff"  # the private use area, where icon fonts put their glyphs
    }


def subset_font(source: pathlib.Path, target: pathlib.Path, codepoints: set[int]) -> None:
    """A WOFF font holding only `codepoints` of `source` (fontTools, which Matplotlib brings)."""
    import logging

    from fontTools import subset

    logging.getLogger("fontTools").setLevel(logging.WARNING)  # it logs every table it prunes
    options = subset.Options()
    options.flavor = "woff"  # zlib: no brotli needed
    options.layout_features = ["*"]
    font = subset.load_font(str(source), options)
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=sorted(codepoints))
    subsetter.subset(font)
    subset.save_font(font, str(target), options)


class StyleBundler:
    """One style sheet per page instead of a dozen: the stylesheets a page links, in their order,
    concatenated into ``_static/course-<hash>.css`` (pages with the same list share a file).
    A dozen render-blocking requests cost a phone on a slow link a second and a half before
    the first paint; one costs one. Also: Font Awesome's 156 KB solid font replaced by the few
    glyphs the style sheets use (admonition icons). (Preloading KaTeX's fonts was measured too:
    it made the largest paint later, competing with the style sheet, and a preload with
    ``crossorigin`` fails on pages opened from disk.)"""

    def __init__(self, outdir: pathlib.Path):
        self.outdir = outdir
        self.bundles: dict[tuple[str, ...], str] = {}
        self.pages: dict[str, list[pathlib.Path]] = {}  # bundle -> the pages that link it
        self.scripts: dict[str, set[pathlib.Path]] = {}  # bundle -> the site's scripts those pages load
        self.sheets: dict[str, str] = {}  # a style sheet's text for the bundle (most are in every bundle)
        self.font_face = ""
        solid = outdir / FA_SOLID_TTF
        if solid.exists():
            sheets = [p for p in (outdir / "_static").rglob("*.css") if not p.name.startswith("course-")]
            points = icon_codepoints("".join(p.read_text(encoding="utf-8") for p in sheets))
            if points:
                subset_font(solid, outdir / FA_SUBSET, points)
                self.font_face = (
                    '\n@font-face{font-display:block;font-family:"Font Awesome 6 Free";font-style:normal;font-weight:900;'
                    f'src:url({posixpath.basename(FA_SUBSET)}) format("woff")}}\n'
                )

    def bundle(self, sheets: tuple[str, ...]) -> str:
        """The bundle's path (relative to the site root) for these style sheets (relative to the root)."""
        if sheets not in self.bundles:
            for name in set(sheets) - self.sheets.keys():
                self.sheets[name] = css_text(self.outdir, name, "_static/bundle.css")
            parts = [f"/* {name} */\n" + self.sheets[name] for name in sheets]
            text = "\n".join(parts) + self.font_face
            name = f"_static/course-{hashlib.sha1(text.encode()).hexdigest()[:12]}.css"
            (self.outdir / name).write_text(text, encoding="utf-8")
            self.bundles[sheets] = name
        return self.bundles[sheets]

    def page(self, page: pathlib.Path, soup: BeautifulSoup) -> None:
        """Link the page (at ``page``, parsed into ``soup``) to one bundle of its local style sheets."""
        folder = page.parent.relative_to(self.outdir).as_posix()
        links = soup.find_all("link", rel="stylesheet", href=True)
        local = [
            tag
            for tag in links
            if not str(tag["href"]).startswith(("http:", "https:", "//")) and "media" not in tag.attrs
        ]
        if len(local) < 2:
            return
        bundle = self.bundle(
            tuple(posixpath.normpath(posixpath.join(folder, str(t["href"]).split("?")[0])) for t in local)
        )
        self.pages.setdefault(bundle, []).append(page)
        sources = (page.parent / str(s["src"]).split("?")[0] for s in soup.find_all("script", src=True))
        self.scripts.setdefault(bundle, set()).update(path.resolve() for path in sources if path.is_file())
        local[0].replace_with(
            soup.new_tag("link", attrs={"rel": "stylesheet", "href": posixpath.relpath(bundle, folder)})
        )
        for tag in local[1:]:
            tag.decompose()

    def purge(self) -> None:
        """Cut each bundle to the rules its pages can use (``tools/purge_css.mjs``, PurgeCSS):
        those whose selectors name only what occurs in the pages or in the scripts they load.
        A bundle is then renamed after its new content, in the pages that link it. Run once
        every page is written."""
        if not self.pages:
            return
        jobs = [
            {"css": str(self.outdir / bundle), "content": [str(p) for p in pages + sorted(self.scripts[bundle])]}
            for bundle, pages in self.pages.items()
        ]
        subprocess.run(["node", str(PURGE_SCRIPT)], input=json.dumps(jobs), text=True, check=True, cwd=ROOT)
        for bundle, pages in self.pages.items():
            text = (self.outdir / bundle).read_text(encoding="utf-8")
            name = f"_static/course-{hashlib.sha1(text.encode()).hexdigest()[:12]}.css"
            (self.outdir / bundle).rename(self.outdir / name)
            old, new = posixpath.basename(bundle), posixpath.basename(name)
            for page in pages:
                page.write_text(page.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")


# Pygments wraps every token in a <span>, also names, punctuation and spaces, which the code style
# draws in the code block's own colour: a third of a code-heavy chapter's elements (4,400 of
# 11,700 in chapter 12), each styled and laid out by a phone for nothing. Without its span, such
# text takes the <pre>'s colour, which course.css makes the block's (``div.highlight > pre``).
HIGHLIGHT_SELECTOR = re.compile(r'html\[data-theme="(\w+)"\] \.highlight(?: \.(\w+))?')


def plain_token_classes(pygments_css: str) -> frozenset[str]:
    """The Pygments classes whose text looks like the code block's own text: in every colour
    mode of the theme's ``pygments.css``, their one rule sets the block's colour and nothing else."""
    base: dict[str, str] = {}
    rules: dict[str, dict[str, list[dict[str, str]]]] = {}
    for rule in _qualified_rules(tinycss2.parse_stylesheet(pygments_css, skip_whitespace=True, skip_comments=True)):
        if (selector := HIGHLIGHT_SELECTOR.fullmatch(tinycss2.serialize(rule.prelude).strip())) is None:
            continue
        mode, token = selector.groups()
        declarations = {
            d.lower_name: tinycss2.serialize(d.value).strip().lower()
            for d in tinycss2.parse_blocks_contents(rule.content, skip_whitespace=True, skip_comments=True)
            if d.type == "declaration"
        }
        if token:
            rules.setdefault(token, {}).setdefault(mode, []).append(declarations)
        elif "color" in declarations:
            base[mode] = declarations["color"]
    return frozenset(
        token
        for token, by_mode in rules.items()
        if base
        and by_mode.keys() == base.keys()
        and all(found == [{"color": base[mode]}] for mode, found in by_mode.items())
    )


def unwrap_plain_tokens(soup: BeautifulSoup, classes: frozenset[str]) -> None:
    """The spans of those classes in highlighted code replaced by their text (Pygments' spans hold only text)."""
    for pre in soup.select("div.highlight > pre") if classes else []:
        for span in pre.find_all("span", class_=True):
            if len(span["class"]) == 1 and span["class"][0] in classes and span.string is not None:
                span.unwrap()


# pydata-sphinx-theme 0.17.1 measures every scrollable box of the page on "load" (to give the
# boxes that scroll a tab stop): that lays out every section at once, also those the browser would
# lay out only when they come near the screen (content-visibility in course.css). We drop that
# first pass; _static/scroll-tab-stops.js gives the tab stops box by box as they come into view.
# (The theme still re-checks on resize.) Why a patch of the minified file and not a template, CSS or
# a script of ours: the call sits inside the theme's bundled module (``I()``, run by
# ``"complete"===document.readyState?I():window.addEventListener("load",I)``), not exported and with
# no theme option; CSS cannot stop a script reading scrollWidth (which forces the layout); a template
# can only leave out the whole script (colour modes, search, sidebars); a script of ours could only
# wrap a global API (``window.addEventListener`` or ``document.querySelectorAll`` for the theme's
# selectors), which depends on the same internals and would fail silently when they change. The text
# is checked so that a new theme version fails the build here rather than silently doing the work again.
THEME_SCRIPT = "_static/scripts/pydata-sphinx-theme.js"
TAB_STOP_SCAN = (",e()}function _(e,t)", "}function _(e,t)")


def patch_theme_script(outdir: pathlib.Path) -> None:
    script = outdir / THEME_SCRIPT
    text = script.read_text(encoding="utf-8")
    old, new = TAB_STOP_SCAN
    if text.count(old) == 1:
        script.write_text(text.replace(old, new), encoding="utf-8")
    elif text.count(new) != 1:
        from sphinx.errors import ExtensionError

        raise ExtensionError(
            f"course_site: {THEME_SCRIPT} is not pydata-sphinx-theme 0.17.1's: "
            "review TAB_STOP_SCAN in tools/course_site.py for the new theme version"
        )


# A figure loaded lazily, without width and height, is 0 px tall until it arrives: the page grows
# under the reader as figures load, and a jump from the contents to a late section landed thousands
# of pixels short (chapter 5 on a phone: 3,421 px, in the section before). With its size written on
# the <img>, the browser reserves the figure's box (the theme's ``height: auto`` keeps its aspect
# ratio when the column scales it down) before the file is fetched.
SVG_LENGTH = {"": 1.0, "px": 1.0, "pt": 96 / 72}


def svg_size(text: str) -> tuple[float, float] | None:
    """An SVG file's width and height in CSS pixels (its root's width/height, else its viewBox)."""
    try:  # the first element read is the root
        root = next(ElementTree.iterparse(io.StringIO(text[:5000]), events=("start",)))[1].attrib
    except (ElementTree.ParseError, StopIteration):
        return None
    width, height = (re.fullmatch(r"([\d.]+)(px|pt|)", root.get(name, "")) for name in ("width", "height"))
    if width and height:
        return float(width[1]) * SVG_LENGTH[width[2]], float(height[1]) * SVG_LENGTH[height[2]]
    box = root.get("viewBox", "").replace(",", " ").split()
    try:
        return (float(box[2]), float(box[3])) if len(box) == 4 else None
    except ValueError:
        return None


def image_size(path: pathlib.Path) -> tuple[int, int] | None:
    """(width, height) in CSS pixels of an image file of the site (None when unknown)."""
    if not path.is_file():
        return None
    if path.suffix == ".svg":
        size = svg_size(path.read_text(encoding="utf-8", errors="replace"))
        return (round(size[0]), round(size[1])) if size and size[0] > 0 and size[1] > 0 else None
    from PIL import Image

    try:
        with Image.open(path) as image:
            return image.size
    except OSError:
        return None


def sized_images(soup: BeautifulSoup, folder: pathlib.Path) -> None:
    """Width and height written on each figure (image under _images/) that has neither; `folder` is
    the page's folder, against which the images' sources resolve."""
    for image in soup.find_all("img", src=True):
        if "width" in image.attrs or "height" in image.attrs or "_images/" not in image["src"]:
            continue
        found = image_size(pathlib.Path(posixpath.normpath(folder / str(image["src"]).split("?")[0])))
        if found is not None:
            image["width"], image["height"] = str(found[0]), str(found[1])


# On a phone, a table too wide for the column is laid out row by row (course.css): each cell then
# says which column it is from, with the column's heading written on it here.


def plain_text(cell: Any) -> str:
    """A cell's text as read: a formula as its TeX source (KaTeX writes each formula three times)."""
    copy = cell.__copy__()
    for formula in copy.select(".katex"):
        annotation = formula.select_one("annotation")
        formula.replace_with(annotation.get_text() if annotation else formula.get_text())
    return " ".join(copy.get_text(" ").split())


def labelled_tables(soup: BeautifulSoup) -> None:
    """Each body cell of the page's tables carrying its column's heading (``data-label``)."""
    for table in soup.find_all("table", class_="table"):
        if table.thead is None or table.tbody is None or not table.thead.find_all("tr"):
            continue
        names = [plain_text(th) for th in table.thead.find_all("tr")[-1].find_all(["th", "td"])]
        for row in table.tbody.find_all("tr"):
            for name, cell in zip(names, row.find_all(["td", "th"]), strict=False):
                cell["data-label"] = name


def fix_aria(soup: BeautifulSoup) -> None:
    """docutils marks each reference of a citation list role="doc-biblioentry", a role ARIA 1.3
    deprecates and axe refuses on a <div> (Lighthouse accessibility 0.94 on the references page);
    in the list that holds them, "listitem" is the role they play."""
    for entry in soup.find_all(role="doc-biblioentry"):
        entry["role"] = "listitem"


def _on_build_finished(app: Any, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    outdir = pathlib.Path(app.outdir)
    patch_theme_script(outdir)
    bundler = StyleBundler(outdir)
    pygments_css = outdir / "_static" / "pygments.css"
    plain = plain_token_classes(pygments_css.read_text(encoding="utf-8")) if pygments_css.exists() else frozenset()
    for page in outdir.rglob("*.html"):
        if "_static" in page.relative_to(outdir).parts:
            continue
        soup = soup_of(page.read_text(encoding="utf-8"))
        inline_icons(soup)
        fix_aria(soup)
        labelled_tables(soup)
        sized_images(soup, page.parent)
        unwrap_plain_tokens(soup, plain)
        bundler.page(page, soup)
        page.write_text(soup.decode(formatter=IN_ORDER), encoding="utf-8")
    bundler.purge()


# ------------------------------------------------------------------ references


def _organisation(persons: list[Any]) -> str | None:
    """The name of a single author written in braces (an organisation), else None."""
    if len(persons) != 1:
        return None
    name = str(persons[0])
    return name.strip("{}") if name.startswith("{") and name.endswith("}") else None


def _register_bibliography_style() -> None:
    from pybtex.plugin import register_plugin
    from pybtex.style.formatting.alpha import Style as AlphaStyle
    from pybtex.style.labels.alpha import LabelStyle as AlphaLabels
    from pybtex.style.sorting.author_year_title import SortingStyle as AuthorYearTitle

    class Labels(AlphaLabels):
        def format_lab_names(self, persons):
            organisation = _organisation(persons)
            return organisation.split()[0] if organisation else super().format_lab_names(persons)

    class Sorting(AuthorYearTitle):
        def person_key(self, person):
            return super().person_key(person).replace("{", "").replace("}", "")

    class Style(AlphaStyle):
        default_label_style = "course"
        default_sorting_style = "course"

    for group, plugin in [("labels", Labels), ("sorting", Sorting), ("formatting", Style)]:
        register_plugin(f"pybtex.style.{group}", "course", plugin, force=True)


def _figures_as_svg(app: Any, config: Any) -> None:
    # the notebooks' kernels inherit the build's environment; posenc_lib.plotting.use_course_style()
    # reads it and makes the inline backend draw SVG (zoomable on a phone, sharp at any scale)
    os.environ.setdefault("POSENC_FIGURE_FORMAT", "svg")


def fold_solution_titles(doctree: Any) -> None:
    """Solution bars a reader opens by clicking anywhere on them.

    sphinx-exercise titles a solution "Solution to <a>Exercise 3.2 (…)</a>", a link back to the
    exercise: the blue, underlined part of the bar, the one a reader clicks, scrolled away and left
    the solution folded. The title becomes plain text (the whole title is the toggle). A solution
    right after its exercise does not repeat the exercise's title ("Solution to Exercise 3.2"); one
    that follows an exercise whose question is all in its title (chapter 11's interview questions)
    showed that question twice, an empty exercise box and the bar: the bar now stands for both,
    titled like the exercise ("Exercise 11.1 (…)") and answering to its anchor."""
    from docutils import nodes
    from sphinx_exercise.nodes import exercise_enumerable_node, exercise_node, solution_node

    for solution in list(doctree.findall(solution_node)):
        title = solution.children[0] if solution.children else None
        if not isinstance(title, nodes.title):
            continue
        for link in list(title.findall(nodes.reference)):
            link.parent.replace(link, link.children)
        parent = solution.parent
        index = parent.index(solution)
        before = parent[index - 1] if index else None
        exercises = (exercise_node, exercise_enumerable_node)
        if not isinstance(before, exercises) or before.get("label") != solution.get("target_label"):
            continue
        if any(not isinstance(child, nodes.title) for child in before.children):
            # the exercise, with its title, is just above: the bar need not repeat its title
            short = title.astext().split(" (", 1)[0]
            title.children = []
            title += nodes.Text(short)
            continue
        first = title.children[0] if title.children else None
        if isinstance(first, nodes.Text):
            text = first.astext().removeprefix("Solution to").lstrip()
            if text:
                title.replace(first, nodes.Text(text))
            else:
                title.remove(first)
        solution["ids"] = before["ids"] + solution["ids"]
        parent.remove(before)


def _on_doctree_resolved(app: Any, doctree: Any, docname: str) -> None:
    from docutils import nodes

    for section in list(doctree.findall(nodes.section)):
        if "exercise-content" in section["ids"] and not section.children:
            section.parent.remove(section)
    fold_solution_titles(doctree)
    # figures load when the reader scrolls near them: a phone draws a chapter's first screen
    # without first fetching and rasterising a dozen SVG plots below it
    for image in doctree.findall(nodes.image):
        image.setdefault("loading", "lazy")


def setup(app: Any) -> dict[str, Any]:
    _register_bibliography_style()
    app.connect("config-inited", _figures_as_svg)
    app.connect("doctree-read", _on_doctree_read)
    app.connect("doctree-resolved", _on_doctree_resolved)
    app.connect("html-page-context", _on_page_context, priority=900)  # after the extensions that add scripts
    # after the theme writes its final pygments.css (pydata-sphinx-theme does that at build-finished)
    app.connect("build-finished", _on_build_finished, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
