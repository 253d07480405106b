"""Sphinx extension: what the course website changes about its pages (``_config.yml`` loads it).

While reading: a cell's printed chunks joined verbatim, the set-up cell becomes its one-sentence note,
solution code loses nbgrader's marker lines, an exercise without a body loses its empty strip, a solution
bar is plain text (and stands for an exercise that is all title), figures load lazily. While writing: a
meta description, scripts only on pages that use them, code without the spans of tokens drawn in the
block's colour, and on a page with explorables or self-check questions (``posenc_lib.explore``,
``posenc_lib.questions``) one linked script and style sheet, ``_static/explore/``, in place of the copies
each output carries inline for Jupyter and Colab. After the build (pages parsed with BeautifulSoup, style
sheets with tinycss2): Font Awesome icons as inline SVG, one purged style sheet per page, a subset icon
font, figures with their size, table cells with their column's heading, references as list items.
(book/_templates/layout.html defers the scripts.) Why: Lighthouse's phone emulation scored chapters
0.28-0.36 before these steps (issue 15); each was measured to move it.
"""

from __future__ import annotations

import copy
import hashlib
import html
import json
import os
import pathlib
import posixpath
import re
import subprocess
import textwrap
import warnings
from typing import Any

import tinycss2
from bs4 import BeautifulSoup, XMLParsedAsHTMLWarning
from bs4.dammit import EntitySubstitution
from bs4.formatter import HTMLFormatter
from pygments.formatters import HtmlFormatter
from pygments.token import STANDARD_TYPES, Text
from tinycss2.serializer import serialize_string_value, serialize_url

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
        if (stripped := strip_solution_markers(text := block.astext())) != text:
            block.rawsource, block.children = stripped, [nodes.Text(stripped)]
    for cell in list(doctree.findall(nodes.container)):
        metadata = cell.get("cell_metadata") or {}
        note = (metadata.get("posenc") or {}).get("site_note") if isinstance(metadata, dict) else None
        if note:  # (replace_self would give the paragraph the cell's classes)
            cell.parent.replace(cell, nodes.paragraph("", "", *inline_markup(note), classes=["setup-note"]))


def fold_solution_titles(doctree: Any) -> None:
    """Solution bars titled in plain text, so the whole bar opens them (their link back to the exercise
    scrolled away instead); after its exercise a bar says only "Solution to Exercise 3.2", and a bar after
    an exercise that is all title replaces that exercise, so the question is shown once."""
    from docutils import nodes
    from sphinx_exercise.nodes import exercise_enumerable_node, exercise_node, solution_node

    for solution in list(doctree.findall(solution_node)):
        title = solution.children[0] if solution.children else None
        if not isinstance(title, nodes.title):
            continue
        for link in list(title.findall(nodes.reference)):
            link.parent.replace(link, link.children)
        parent = solution.parent
        before = parent[parent.index(solution) - 1] if parent.index(solution) else None
        if not isinstance(before, (exercise_node, exercise_enumerable_node)):
            continue
        if before.get("label") != solution.get("target_label"):
            continue
        if any(not isinstance(child, nodes.title) for child in before.children):  # the exercise has a body
            title.children = [nodes.Text(title.astext().split(" (", 1)[0])]
            continue
        first = title.children[0] if title.children else None
        if isinstance(first, nodes.Text):
            if text := first.astext().removeprefix("Solution to").lstrip():
                title.replace(first, nodes.Text(text))
            else:
                title.remove(first)
        solution["ids"] = before["ids"] + solution["ids"]
        parent.remove(before)


def _on_doctree_resolved(app: Any, doctree: Any, docname: str) -> None:
    from docutils import nodes

    for section in list(doctree.findall(nodes.section)):
        if "exercise-content" in section["ids"] and not section.children:  # an exercise all in its title
            section.parent.remove(section)
    fold_solution_titles(doctree)
    for image in doctree.findall(nodes.image):  # a phone draws the first screen without the plots below it
        image.setdefault("loading", "lazy")


def concatenate_stream_chunks(outputs: list[Any]) -> list[Any]:
    """The chunks of each stream (stdout, stderr) joined verbatim, in order, where its first chunk was."""
    merged: list[Any] = []
    first: dict[str, Any] = {}
    for output in outputs:
        if output.get("output_type") != "stream":
            merged.append(output)
        elif output["name"] in first:
            first[output["name"]]["text"] += output["text"]
        else:
            first[output["name"]] = copy.deepcopy(output)
            merged.append(first[output["name"]])
    return merged


def join_stream_chunks() -> None:
    """A cell's printed chunks joined verbatim before MyST-NB merges its streams: the kernel sends printed
    text in chunks split by timing, and ``nb_merge_streams`` strips each chunk and adds a newline, so a
    line could show broken in two (stored notebooks are merged by nbclient's coalesce_streams)."""
    from myst_nb.core import render

    if not getattr(render.coalesce_streams, "joins_chunks", False):
        original = render.coalesce_streams
        render.coalesce_streams = lambda outputs: original(concatenate_stream_chunks(outputs))
        render.coalesce_streams.joins_chunks = True  # a marker on the function: patched once


# ------------------------------------------------------------------ writing


def page_summary(doctree: Any, length: int = DESCRIPTION_LENGTH) -> str:
    """The page's opening text: paragraphs and lists directly under its first section, up to ``length``."""
    from docutils import nodes

    section = next(iter(doctree.findall(nodes.section)), None)
    words: list[str] = []
    for child in section.children if section is not None else []:
        if isinstance(child, nodes.section) or len(" ".join(words)) >= length:
            break
        if isinstance(child, (nodes.paragraph, nodes.bullet_list, nodes.enumerated_list)):
            words += child.astext().split()
    return " ".join(words)


def _used(name: str, inline: str, body: str) -> bool:
    """Whether an extension's script or style sheet is needed on a page with this body."""
    if "sphinx-thebe" in name or "THEBE_JS_URL" in inline:
        return False  # no live-code button on this site
    if "design-tabs" in name or "sphinx-design" in name:
        return "sd-" in body
    if "togglebutton" in name or any(w in inline for w in ("toggleHint", "toggleOpenOnPrint", "togglebuttonSelector")):
        return any(marker in body for marker in ("toggle", "dropdown", "tag_hide"))
    if "clipboard" in name or "copybutton" in name:
        return "highlight" in body
    return 'class="katex' in body if "katex" in name else True


def _write_explore_assets(app: Any) -> None:
    """The explorables' script and style sheet, written before any page (Sphinx then stamps their checksums)."""
    if app.builder.format == "html":
        from posenc_lib import explore

        folder = pathlib.Path(app.outdir) / "_static" / "explore"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "explore.js").write_text(explore.script(), encoding="utf-8")
        (folder / "explore.css").write_text(explore.stylesheet(), encoding="utf-8")


def _on_page_context(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    if 'class="pe-explore' in context.get("body", ""):  # explorables: their inline copies out, the files linked
        soup = soup_of(context["body"])
        for inline in soup.select("[data-pe-inline]"):
            inline.decompose()
        context["body"] = soup.decode(formatter=IN_ORDER)
        app.add_js_file("explore/explore.js", priority=800)  # on this page only (Sphinx), deferred below
        app.add_css_file("explore/explore.css", priority=800)  # folded into the page's one style sheet
    body, metatags = context.get("body", ""), context.get("metatags", "")
    if 'name="description"' not in metatags:  # a page may set its own (MyST's html_meta)
        summary = page_summary(doctree) if doctree is not None else ""
        description = textwrap.shorten(summary, DESCRIPTION_LENGTH, placeholder="…")  # cut at a word
        if description := description or app.config.html_context.get("site_description", ""):
            context["metatags"] = metatags + f'\n<meta name="description" content="{html.escape(description)}" />'
    if (scripts := context.get("script_files")) is not None:
        seen: set[tuple[str, str]] = set()  # Sphinx 7 adds inline scripts registered while reading twice
        for script in list(scripts):
            key = (str(script.filename or ""), script.attributes.get("body", ""))
            if not _used(*key, body) or key in seen:
                scripts.remove(script)
            seen.add(key)
        if pagename == "search":
            app.add_js_file("search-snippets.js", priority=900, loading_method="defer")
        app.add_js_file("course-nav.js", priority=900, loading_method="defer")
        if "<pre" in body or "cell_output" in body or 'class="math' in body:
            app.add_js_file("scroll-tab-stops.js", priority=900, loading_method="defer")
    if (styles := context.get("css_files")) is not None:
        styles[:] = [css for css in styles if _used(str(css.filename), "", body)]


def plain_token_types(*styles: Any) -> frozenset[Any]:
    """The Pygments token types every one of these styles draws in its code block's own colour and
    nothing else: names, punctuation and the like (a third of a code-heavy chapter's elements)."""

    def plain(formatter: HtmlFormatter, name: str) -> bool:  # no rule, or the one of the block's text (class "")
        rules = formatter.class2style
        return rules.get(name, ("",))[0].lower() in ("", rules.get("", ("",))[0].lower())

    formatters = [HtmlFormatter(style=style) for style in styles]
    return frozenset(t for t, name in STANDARD_TYPES.items() if name and all(plain(f, name) for f in formatters))


class PlainTokenFormatter(HtmlFormatter):
    """Sphinx's HTML formatter, writing the tokens of ``plain`` as text: the <pre>'s colour is the block's."""

    plain: frozenset[Any] = frozenset()

    def format_unencoded(self, tokensource: Any, outfile: Any) -> None:
        super().format_unencoded(((Text if t in self.plain else t, v) for t, v in tokensource), outfile)


def _plain_code(app: Any) -> None:
    if hasattr(app.builder, "highlighter"):  # the colour modes' styles, as pydata-sphinx-theme writes them
        options = {**app.builder.theme.get_options(), **app.config.html_theme_options}
        PlainTokenFormatter.plain = plain_token_types(options["pygments_light_style"], options["pygments_dark_style"])
        app.builder.highlighter.formatter = PlainTokenFormatter


# ------------------------------------------------------------------ after the build

STYLES = {"fa-solid": "solid", "fas": "solid", "fa-regular": "regular", "far": "regular", "fa-brands": "brands"}
STYLES["fab"] = "brands"
KEEP_CLASSES = {"fa-lg", "fa-fw"}
FA_SOLID_TTF = "_static/vendor/fontawesome/webfonts/fa-solid-900.ttf"
FA_SUBSET = "_static/course-fa-solid.woff"
PURGE_SCRIPT = ROOT / "tools" / "purge_css.mjs"


class _InOrder(HTMLFormatter):
    """bs4's "minimal" HTML output with attributes in their order (bs4 sorts them by name)."""

    def attributes(self, tag: Any) -> Any:
        return tag.attrs.items()


IN_ORDER = _InOrder(entity_substitution=EntitySubstitution.substitute_xml)


def soup_of(text: str) -> BeautifulSoup:
    with warnings.catch_warnings():  # an SVG file (with its XML declaration) is read by html.parser too
        warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
        return BeautifulSoup(text, "html.parser")


def icon_svg(style: str, name: str, icons: pathlib.Path = FONTAWESOME) -> tuple[str, str]:
    """(viewBox, path) of a Font Awesome icon."""
    if not (source := icons / style / f"{name}.svg").exists():
        raise ValueError(f"no Font Awesome icon {style}/{name} in {icons}")
    svg = soup_of(source.read_text()).svg
    if svg is None or svg.path is None or not svg.get("viewbox") or not svg.path.get("d"):
        raise ValueError(f"{source} has no viewBox and path")
    return str(svg["viewbox"]), str(svg.path["d"])


def inline_icons(soup: BeautifulSoup, icons: pathlib.Path = FONTAWESOME) -> None:
    """Every empty Font Awesome ``<i>``/``<span>`` replaced by an inline SVG, and no fontawesome.js (1.4 MB)."""
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
        yield from _tokens(node.arguments if node.type == "function" else getattr(node, "content", None))


def _qualified_rules(nodes: list[Any]) -> Any:
    """The style rules of a parsed style sheet, also those inside @media and the like."""
    for node in nodes:
        if node.type == "qualified-rule":
            yield node
        elif node.type == "at-rule" and node.content:
            yield from _qualified_rules(tinycss2.parse_rule_list(node.content, skip_whitespace=True))


def css_text(outdir: pathlib.Path, relative: str) -> str:
    """The text of the site's style sheet at ``relative`` for a file in _static/: its relative url()s
    rewritten for that place and its @imports inlined."""
    folder = posixpath.dirname(relative)

    def address(token: Any) -> Any:  # the token holding the address of url(x), url("x") or "x" (@import)
        if token.type == "function" and token.lower_name == "url":
            return next((t for t in token.arguments if t.type == "string"), None)
        return token if token.type in ("url", "string") else None

    parts = []
    for node in tinycss2.parse_stylesheet((outdir / relative).read_text(encoding="utf-8")):
        if node.type == "at-rule" and node.lower_at_keyword == "import":
            target = next(found.value for token in node.prelude if (found := address(token)) is not None)
            parts.append(css_text(outdir, posixpath.normpath(posixpath.join(folder, target))))
            continue
        for token in _tokens([node]):
            found = address(token) if token.type in ("url", "function") else None
            if found is not None and not found.value.startswith(("data:", "http:", "https:", "/", "#")):
                found.value = posixpath.relpath(posixpath.join(folder, found.value), "_static")
                quoted = f'"{serialize_string_value(found.value)}"'
                found.representation = quoted if found.type == "string" else f"url({serialize_url(found.value)})"
        parts.append(node.serialize())
    return "".join(parts)


def icon_codepoints(css: str) -> set[int]:
    """Font Awesome code points that style sheets show through ``content`` (admonition icons), leaving
    out Font Awesome's own ``.fa-*`` rules (those icons are inline SVG)."""
    return {
        ord(char)
        for rule in _qualified_rules(tinycss2.parse_stylesheet(css, skip_whitespace=True, skip_comments=True))
        if ".fa-" not in tinycss2.serialize(rule.prelude)
        for token in _tokens(rule.content)
        if token.type == "string"
        for char in token.value
        if "\ue000" <= char <= "\uf8ff"  # the private use area, where icon fonts put their glyphs
    }


def subset_icon_font(outdir: pathlib.Path, css: str) -> str:
    """Font Awesome's solid font (156 KB) cut to the glyphs ``css`` shows, as a WOFF file (fontTools, which
    Matplotlib brings); returns the @font-face rule that serves it ("" if none)."""
    import logging

    from fontTools import subset

    if not (points := icon_codepoints(css)) or not (outdir / FA_SOLID_TTF).exists():
        return ""
    logging.getLogger("fontTools").setLevel(logging.WARNING)  # it logs every table it prunes
    options = subset.Options(flavor="woff", layout_features=["*"])  # woff: zlib, no brotli needed
    font = subset.load_font(str(outdir / FA_SOLID_TTF), options)
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=sorted(points))
    subsetter.subset(font)
    subset.save_font(font, str(outdir / FA_SUBSET), options)
    return (
        '\n@font-face{font-display:block;font-family:"Font Awesome 6 Free";font-style:normal;font-weight:900;'
        f'src:url({posixpath.basename(FA_SUBSET)}) format("woff")}}\n'
    )


def _local_sheets(soup: BeautifulSoup) -> list[Any]:
    links = soup.find_all("link", rel="stylesheet", href=True)
    return [t for t in links if not str(t["href"]).startswith(("http:", "https:", "//")) and "media" not in t.attrs]


def bundle_styles(outdir: pathlib.Path, soups: dict[pathlib.Path, BeautifulSoup]) -> None:
    """Each page's local style sheets replaced by one (a dozen render-blocking requests cost a slow phone
    link a second and a half): ``_static/course-<hash>.css`` holds them in order, cut by PurgeCSS
    (tools/purge_css.mjs) to the rules the pages sharing it and the scripts they load can use."""
    groups: dict[tuple[str, ...], list[pathlib.Path]] = {}
    bundle_links = {}  # page -> the link that becomes its bundle's (the others go, and no name stays for PurgeCSS)
    for page, soup in soups.items():
        folder = page.parent.relative_to(outdir).as_posix()
        if len(links := _local_sheets(soup)) > 1:
            sheets = tuple(posixpath.normpath(posixpath.join(folder, str(t["href"]).split("?")[0])) for t in links)
            groups.setdefault(sheets, []).append(page)
            bundle_links[page] = links[0]
            links[0].attrs = {"rel": "stylesheet", "href": ""}
            for link in links[1:]:
                link.decompose()
    texts = {name: css_text(outdir, name) for name in set().union(*groups)}
    jobs = []
    for sheets, pages in groups.items():
        scripts = [(page.parent, str(s["src"])) for page in pages for s in soups[page]("script", src=True)]
        sources = {(folder / src.split("?")[0]).resolve() for folder, src in scripts}
        content = [{"raw": str(soups[page]), "extension": "html"} for page in pages]
        content += [{"raw": s.read_text(encoding="utf-8"), "extension": "js"} for s in sorted(sources) if s.is_file()]
        jobs.append({"css": "\n".join(f"/* {n} */\n{texts[n]}" for n in sheets), "content": content})
    run = subprocess.run(["node", str(PURGE_SCRIPT)], input=json.dumps(jobs), capture_output=True, text=True, cwd=ROOT)
    if run.returncode:
        raise RuntimeError(f"{PURGE_SCRIPT.name} failed: {run.stderr}")
    purged = json.loads(run.stdout)
    font_face = subset_icon_font(outdir, "".join(purged))  # the icons of the rules kept
    for sheets, css in zip(groups, purged, strict=True):
        css += font_face
        name = f"_static/course-{hashlib.sha1(css.encode()).hexdigest()[:12]}.css"  # a new name for new content
        (outdir / name).write_text(css, encoding="utf-8")
        for page in groups[sheets]:
            bundle_links[page]["href"] = posixpath.relpath(name, page.parent.relative_to(outdir).as_posix())


# pydata-sphinx-theme 0.17.1 measures every scrollable box on "load" to give those that scroll a tab
# stop, which lays out the whole page at once; _static/scroll-tab-stops.js does it box by box as they
# come into view. The call is inside the theme's bundled module, with no option, no export and no
# template block; CSS cannot stop a script reading scrollWidth. So the minified file is patched, and a
# new theme version fails the build here instead of silently doing the work again.
THEME_SCRIPT = "_static/scripts/pydata-sphinx-theme.js"
TAB_STOP_SCAN = (",e()}function _(e,t)", "}function _(e,t)")


def patch_theme_script(outdir: pathlib.Path) -> None:
    """The theme's script without its on-load scan of every scrollable box (see above)."""
    text = (script := outdir / THEME_SCRIPT).read_text(encoding="utf-8")
    old, new = TAB_STOP_SCAN
    if text.count(old) == 1:
        script.write_text(text.replace(old, new), encoding="utf-8")
    elif text.count(new) != 1:
        from sphinx.errors import ExtensionError

        raise ExtensionError(f"course_site: {THEME_SCRIPT} is not pydata-sphinx-theme 0.17.1's: review TAB_STOP_SCAN")


SVG_LENGTH = re.compile(r"([\d.]+)(px|pt|)")
PX_PER = {"pt": 96 / 72, "px": 1, "": 1}


def image_size(path: pathlib.Path) -> tuple[int, int] | None:
    """(width, height) in CSS pixels of an SVG file (Matplotlib gives its figures' in pt), or None."""
    if path.suffix != ".svg" or not path.is_file():
        return None
    svg = soup_of(path.read_text(encoding="utf-8", errors="replace")[:5000]).find("svg")
    width, height = (SVG_LENGTH.fullmatch(str(svg.get(name, ""))) if svg else None for name in ("width", "height"))
    if width is None or height is None:
        return None
    return round(float(width[1]) * PX_PER[width[2]]), round(float(height[1]) * PX_PER[height[2]])


def sized_images(soup: BeautifulSoup, folder: pathlib.Path) -> None:
    """Width and height on each figure (under _images/) without them, so the page does not grow as they
    load (a jump from the contents landed thousands of pixels short); ``folder`` is the page's."""
    for image in soup.find_all("img", src=True):
        if "width" in image.attrs or "height" in image.attrs or "_images/" not in image["src"]:
            continue
        if found := image_size(pathlib.Path(posixpath.normpath(folder / str(image["src"]).split("?")[0]))):
            image["width"], image["height"] = str(found[0]), str(found[1])


def plain_text(cell: Any) -> str:
    """A cell's text as read: a formula as its TeX source (KaTeX writes each formula three times)."""
    copy = cell.__copy__()
    for formula in copy.select(".katex"):
        annotation = formula.select_one("annotation")
        formula.replace_with(annotation.get_text() if annotation else formula.get_text())
    return " ".join(copy.get_text(" ").split())


def labelled_tables(soup: BeautifulSoup) -> None:
    """Each body cell carrying its column's heading (``data-label``), which a phone shows when it lays a
    wide table out row by row (course.css)."""
    for table in soup.find_all("table", class_="table"):
        if table.thead is None or table.tbody is None or not (heads := table.thead.find_all("tr")):
            continue
        names = [plain_text(th) for th in heads[-1].find_all(["th", "td"])]
        for row in table.tbody.find_all("tr"):
            for name, cell in zip(names, row.find_all(["td", "th"]), strict=False):
                cell["data-label"] = name


def fix_aria(soup: BeautifulSoup) -> None:
    """References as list items: docutils' role "doc-biblioentry" is deprecated and refused by axe on a <div>."""
    for entry in soup.find_all(role="doc-biblioentry"):
        entry["role"] = "listitem"


def _on_build_finished(app: Any, exception: Exception | None) -> None:
    from sphinx.util import logging

    if exception is not None or app.builder.format != "html":
        return
    logger = logging.getLogger(__name__)
    outdir = pathlib.Path(app.outdir)
    patch_theme_script(outdir)
    pages = [page for page in outdir.rglob("*.html") if "_static" not in page.relative_to(outdir).parts]
    soups = {page: soup_of(page.read_text(encoding="utf-8")) for page in pages}
    for page, soup in soups.items():
        inline_icons(soup)
        fix_aria(soup)
        labelled_tables(soup)
        sized_images(soup, page.parent)
        for error in soup.select(".katex-error"):  # KaTeX shows a formula it cannot typeset in red, and goes on
            logger.warning(f"KaTeX cannot typeset {error.get_text()!r}: {error.get('title')}", location=str(page))
    bundle_styles(outdir, soups)
    for page, soup in soups.items():
        page.write_text(soup.decode(formatter=IN_ORDER), encoding="utf-8")


# ------------------------------------------------------------------ references


def _register_bibliography_style() -> None:
    """pybtex's alpha style (arXiv links), sorting an organisation written in braces by its name and
    labelling it by its first word (``[BigScience22]``), for ``bibtex_default_style: course``."""
    from pybtex.plugin import register_plugin
    from pybtex.style.formatting.alpha import Style as AlphaStyle
    from pybtex.style.labels.alpha import LabelStyle as AlphaLabels
    from pybtex.style.sorting.author_year_title import SortingStyle as AuthorYearTitle

    class Labels(AlphaLabels):
        def format_lab_names(self, persons):
            name = str(persons[0])
            if len(persons) == 1 and name.startswith("{") and name.endswith("}"):  # an organisation
                return name.strip("{}").split()[0]
            return super().format_lab_names(persons)

    class Sorting(AuthorYearTitle):
        def person_key(self, person):
            return super().person_key(person).replace("{", "").replace("}", "")

    class Style(AlphaStyle):
        default_label_style = default_sorting_style = "course"

    for group, plugin in [("labels", Labels), ("sorting", Sorting), ("formatting", Style)]:
        register_plugin(f"pybtex.style.{group}", "course", plugin, force=True)


def _figures_as_svg(app: Any, config: Any) -> None:
    # the kernels inherit the build's environment: posenc_lib.plotting.use_course_style() then draws SVG
    os.environ.setdefault("POSENC_FIGURE_FORMAT", "svg")


def setup(app: Any) -> dict[str, Any]:
    _register_bibliography_style()
    join_stream_chunks()
    app.connect("config-inited", _figures_as_svg)
    app.connect("builder-inited", _plain_code)
    app.connect("builder-inited", _write_explore_assets)
    app.connect("doctree-read", _on_doctree_read)
    app.connect("doctree-resolved", _on_doctree_resolved)
    app.connect("html-page-context", _on_page_context, priority=900)  # after the extensions that add scripts
    app.connect("build-finished", _on_build_finished, priority=900)  # after the theme writes pygments.css
    return {"parallel_read_safe": True, "parallel_write_safe": True}
