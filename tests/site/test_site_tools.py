"""The website's build tools on small inputs (no book build): course_site, offline_site, site_check, lighthouse_audit."""

from __future__ import annotations

import hashlib
import urllib.request

import pytest
from bs4 import BeautifulSoup

import course_site
import lighthouse_audit
import offline_site
import site_check

# ------------------------------------------------------------------ course_site


def rewritten(rewrite, page: str, *arguments) -> BeautifulSoup:
    """The page parsed, after one of course_site's rewrites (each changes the parsed page in place)."""
    soup = BeautifulSoup(page, "html.parser")
    rewrite(soup, *arguments)
    return soup


def test_solution_markers_are_stripped_and_nothing_else():
    code = "def f(x):\n    ### BEGIN SOLUTION\n    return 2 * x  # ### not a marker\n    ### END SOLUTION\n"
    assert course_site.strip_solution_markers(code) == "def f(x):\n    return 2 * x  # ### not a marker\n"
    assert course_site.strip_solution_markers("print(1)\n") == "print(1)\n"


def test_site_note_markup():
    from docutils import nodes

    parts = course_site.inline_markup("run it: it installs `posenc_lib` first")
    assert [type(p) for p in parts] == [nodes.Text, nodes.literal, nodes.Text]
    assert parts[1].astext() == "posenc_lib"
    with pytest.raises(ValueError, match="unmatched backtick"):
        course_site.inline_markup("a `b c")


def test_figures_get_their_size_before_they_load(tmp_path):
    images = tmp_path / "_images"
    images.mkdir()
    (images / "plot.svg").write_text('<?xml version="1.0"?>\n<svg width="432pt" height="216pt" viewBox="0 0 432 216">')
    (images / "diagram.svg").write_text('<svg id="my-svg" width="723.7" height="350" style="x">')
    (images / "boxed.svg").write_text('<svg viewBox="0 0 120 60">')
    (images / "plot.png").write_bytes(b"\x89PNG")
    page = (
        '<img alt="a" loading="lazy" src="../_images/plot.svg" />\n<img src="../_images/diagram.svg" alt="b">\n'
        '<img src="../_images/boxed.svg"><img src="../_images/plot.png" />\n'
        '<img src="../_images/plot.svg" width="100"><img src="../_static/logo.svg"><img src="../_images/gone.svg">'
    )
    sized = rewritten(course_site.sized_images, page, tmp_path / "book").find_all("img")
    sizes = [(image.get("width"), image.get("height")) for image in sized]
    assert sizes[:2] == [("576", "288"), ("724", "350")]  # pt: 4/3 px
    # no width and height, not an SVG file, a size already given, not a figure, a file not there: as they were
    assert sizes[2:] == [(None, None), (None, None), ("100", None), (None, None), (None, None)]
    assert [image["src"] for image in sized] == [
        image["src"] for image in BeautifulSoup(page, "html.parser").find_all("img")
    ]


def test_icons_become_inline_svg(tmp_path):
    (tmp_path / "solid").mkdir()
    (tmp_path / "solid" / "bars.svg").write_text('<svg viewBox="0 0 448 512"><!-- c --><path d="M0 96z"/></svg>')
    page = (
        '<script defer src="../_static/scripts/fontawesome.js?digest=1"></script>\n'
        '<i class="theme-switch fa-solid fa-bars fa-lg" data-mode="light" title="Light"></i>'
        '<span class="fa-solid fa-bars"></span><i>plain italics</i><span class="fa-solid">odd</span>'
    )
    out = rewritten(course_site.inline_icons, page, tmp_path).decode(formatter=course_site.IN_ORDER)
    assert "fontawesome.js" not in out
    assert out.count("<svg") == 2 and 'viewBox="0 0 448 512"' in out and 'd="M0 96z"' in out
    assert '<svg class="theme-switch fa-lg pst-icon" data-mode="light"' in out  # kept what the theme's CSS uses
    assert "<i>plain italics</i>" in out and '<span class="fa-solid">odd</span>' in out
    with pytest.raises(ValueError, match="no Font Awesome icon solid/rocket"):
        rewritten(course_site.inline_icons, '<i class="fas fa-rocket"></i>', tmp_path)


@pytest.mark.npm
def test_every_icon_the_theme_uses_is_in_the_pinned_package():
    offline_site.ensure_installed()  # Font Awesome's SVGs come from npm (package-lock.json)
    for style, name in [
        ("solid", "bars"),
        ("solid", "list"),
        ("solid", "magnifying-glass"),
        ("brands", "github"),
        ("solid", "circle-half-stroke"),
        ("solid", "angle-left"),
        ("solid", "rocket"),
    ]:
        view_box, path = course_site.icon_svg(style, name)
        assert view_box.startswith("0 0 ") and path.startswith("M")


def test_bibliography_style_orders_and_labels_organisations():
    from pybtex.database import parse_string
    from pybtex.plugin import find_plugin

    course_site._register_bibliography_style()
    bib = parse_string(
        """
        @misc{z, title={Zeta}, author={Zimmer, Anna}, year={2020}}
        @misc{org, title={Big}, author={{BigScience Workshop}}, year={2022}, eprint={2211.05100}}
        @misc{a, title={Alpha}, author={Adams, Bo and Brown, Cy}, year={2019}}
        """,
        "bibtex",
    )
    style = find_plugin("pybtex.style.formatting", "course")()
    formatted = list(style.format_entries(bib.entries.values()))
    assert [e.key for e in formatted] == ["a", "org", "z"]
    assert [e.label for e in formatted] == ["AB19", "BigScience22", "Zim20"]
    assert "https://arxiv.org/abs/2211.05100" in formatted[1].text.render_as("html")


# ------------------------------------------------------------------ offline_site


def test_a_diagram_gets_its_natural_size(tmp_path):
    svg = tmp_path / "d.svg"
    svg.write_text(
        '<svg id="x" width="100%" style="max-width: 182.8px; background-color: white;" viewBox="0 0 182.796875 174" role="graphics-document"><g/></svg>'
    )
    assert offline_site.natural_size(svg) == (182.796875, 174.0)
    assert svg.read_text().startswith(
        '<svg id="x" width="182.797" height="174" style="background-color: white;" viewBox='
    )
    assert offline_site.natural_size(svg) == (182.796875, 174.0)  # again: nothing more to change
    svg.write_text("<svg/>")
    with pytest.raises(ValueError, match="no viewBox"):
        offline_site.natural_size(svg)


def code_style(**colours):
    """A Pygments style drawing text #080808 and the given token types (Name=..., ...) as given."""
    from pygments.style import Style
    from pygments.token import Text, Token

    return type(
        "CodeStyle", (Style,), {"styles": {Text: "#080808"} | {getattr(Token, k): v for k, v in colours.items()}}
    )


def test_only_tokens_drawn_in_the_blocks_colour_in_every_style_lose_their_span():
    from pygments import highlight
    from pygments.lexers import PythonLexer
    from pygments.token import Keyword, Name, Punctuation

    # Name: the text's colour in both styles; Punctuation: not in the second; Keyword: not in the first;
    # Whitespace: bold as well
    light = code_style(Name="#080808", Punctuation="#080808", Keyword="#6730C5", Whitespace="bold #080808")
    dark = code_style(Name="#080808", Punctuation="#ABE338", Keyword="#080808", Whitespace="#080808")
    plain = course_site.plain_token_types(light, dark)
    assert {Name, Name.Other} <= plain and not {Punctuation, Keyword, Keyword.Constant} & plain
    assert Punctuation in course_site.plain_token_types(light, light)
    formatter = type("Formatter", (course_site.PlainTokenFormatter,), {"plain": plain})
    code = highlight("def f(x):\n    return x[0]\n", PythonLexer(), formatter())
    # Name.Function inherits Name's colour: plain too
    assert '<span class="k">def</span> f<span class="p">(</span>x<span class="p">):</span>' in code
    assert 'class="n"' not in code
    assert 'class="n"' in highlight("x", PythonLexer(), course_site.PlainTokenFormatter())  # plain: none given


def test_bundled_css_points_at_the_same_files_and_inlines_its_imports(tmp_path):
    (tmp_path / "_static" / "vendor" / "fonts").mkdir(parents=True)
    (tmp_path / "_static" / "vendor" / "base.css").write_text(".base{background:url(img/dot.png)}")
    (tmp_path / "_static" / "vendor" / "theme.css").write_text(
        "@import url(\"base.css\");\n@media (min-width: 1px) { .a { background: url( 'fonts/a.png' ) } }\n"
        '@font-face{src:url(fonts/x.woff2) format("woff2"),url(data:font/woff2;base64,AA==)}'
        ".b{background:url(/abs.png)}"
    )
    css = course_site.css_text(tmp_path, "_static/vendor/theme.css")
    assert "@import" not in css and ".base{background:url(vendor/img/dot.png)}" in css
    assert '"vendor/fonts/a.png"' in css and "url(vendor/fonts/x.woff2)" in css  # also inside @media
    assert "url(data:font/woff2;base64,AA==)" in css and "url(/abs.png)" in css  # left as they were


def test_the_font_keeps_the_glyphs_style_sheets_show():
    css = (
        '@media print { .admonition-title:before { content: "\\f303" } }'  # inside @media too
        '.note:after{content:"\uf05a"}'  # the character itself
        '.quote:before{content:"\\201c"}'  # not an icon (no private-use code point)
    )
    assert course_site.icon_codepoints(css) == {0xF303, 0xF05A}


@pytest.mark.npm
def test_a_bundle_keeps_the_rules_its_pages_and_their_scripts_use(tmp_path):
    offline_site.ensure_installed()  # PurgeCSS comes from npm (package-lock.json)
    static = tmp_path / "_static"
    static.mkdir()
    (static / "a.css").write_text(
        ".used{color:red}.unused{color:blue}html[data-theme=dark] .used{color:white}"
        "html[data-theme=dark] .unused{color:white}"
    )
    (static / "b.css").write_text(".added-by-script{display:none}.bs-tooltip-top{margin:0}.also-unused{margin:0}")
    # the theme sets the colour mode with `dataset.theme`: "data-theme" is in no file
    (static / "app.js").write_text('el.classList.add("added-by-script"); root.dataset.theme = mode;')
    (static / "other.js").write_text('el.classList.add("also-unused");')  # on the site, but no page loads it
    links = '<link rel="stylesheet" href="../_static/a.css" />\n<link rel="stylesheet" href="../_static/b.css" />\n'
    page = tmp_path / "book" / "page.html"
    page.parent.mkdir()
    body = '<script defer src="../_static/app.js?v=1"></script><html lang="en"><p class="used">text</p></html>'
    soups = {page: BeautifulSoup(links + body, "html.parser")}
    course_site.bundle_styles(tmp_path, soups)
    (bundle,) = static.glob("course-*.css")
    css = bundle.read_text()
    assert [link["href"] for link in soups[page].find_all("link")] == [f"../_static/{bundle.name}"]
    assert bundle.name == f"course-{hashlib.sha1(css.encode()).hexdigest()[:12]}.css"  # named after its content
    for kept in (".used{", "html[data-theme=dark] .used", ".added-by-script", ".bs-tooltip-top"):
        assert kept in css, (kept, css)
    for dropped in (".unused", ".also-unused"):
        assert dropped not in css, (dropped, css)


def test_npm_packages_are_pinned_in_the_lock_file():
    versions = offline_site.pinned_versions()
    assert {
        "@mermaid-js/mermaid-cli",
        "katex",
        "@lhci/cli",
        "@fortawesome/fontawesome-free",
        "puppeteer",
        "purgecss",
    } <= versions.keys()


# ------------------------------------------------------------------ site_check


def report(**changes):
    base = {"pageWidth": 390, "windowWidth": 390, "sticking": [], "wide": [], "images": [], "math": []}
    return {**base, **changes}


IMAGE = {
    "src": "../_images/a.svg",
    "loaded": True,
    "inArticle": True,
    "diagram": False,
    "alt": "Attention weights of five tokens.",
    "natural": 700,
    "shown": 700,
    "visible": True,
    "section": "1.2",
    "smallestTextPt": 9,
}


def kinds(found):
    return sorted(p.kind for p in found)


def test_a_complying_report_has_no_problems():
    assert site_check.problems_of(report(images=[IMAGE]), phone=False) == []
    assert site_check.problems_of(report(images=[IMAGE]), phone=True) == []


def test_each_fault_is_reported_where_it_matters():
    wide = {"kind": "code", "width": 900, "box": 753, "chars": 104, "line": "x" * 104, "first": "x", "section": "1.1"}
    wide |= {"cue": True, "columns": 0}
    assert kinds(site_check.problems_of(report(wide=[wide]), phone=False)) == ["wide"]
    assert site_check.problems_of(report(wide=[wide]), phone=True) == []  # a phone scrolls inside the block
    # ... with a shade on the edge that shows it does
    assert kinds(site_check.problems_of(report(wide=[dict(wide, cue=False)]), phone=True)) == ["clipped"]
    assert kinds(site_check.problems_of(report(pageWidth=600), phone=True)) == ["sideways"]
    small = dict(IMAGE, shown=400)  # 0.57 of natural size
    assert kinds(site_check.problems_of(report(images=[small]), phone=False)) == ["figure", "figure"]
    tiny_text = dict(IMAGE, smallestTextPt=7)  # 9.3 px at full size
    assert kinds(site_check.problems_of(report(images=[tiny_text]), phone=False)) == ["figure"]
    for alt in ("", None, "../_images/a.svg", "0901c969f84bffc3ba2d4bc3f9dfd03b"):
        assert kinds(site_check.problems_of(report(images=[dict(IMAGE, alt=alt)]), phone=False)) == ["alt"], alt
    assert kinds(site_check.problems_of(report(images=[dict(IMAGE, loaded=False)]), phone=True)) == ["load"]
    assert kinds(
        site_check.problems_of(report(math=[{"typeset": False, "error": False, "source": "x"}]), phone=True)
    ) == ["load"]


# ------------------------------------------------------------------ lighthouse_audit


def test_only_failed_assertions_at_level_error_are_problems():
    seo = {"auditId": "categories", "auditProperty": "seo", "name": "minScore", "operator": ">=", "expected": 1}
    seo |= {"actual": 0.92, "level": "error", "url": "http://localhost:4321/book/x.html", "passed": False}
    slow = dict(seo, auditProperty="performance", expected=0.9, actual=0.84, level="warn")  # a timing
    run = lighthouse_audit.Run("mobile", reports=[], failed=[slow], printed="")
    assert run.problems() == [] and run.problems("warn") == [
        "book/x.html: categories.performance minScore >= 0.9, found 0.84"
    ]
    run.failed.append(seo)
    assert run.problems() == ["book/x.html: categories.seo minScore >= 1, found 0.92"]


def test_the_check_server_sends_modules_as_javascript(tmp_path):
    (tmp_path / "explore.mjs").write_text("export const x = 1;")
    with site_check.serve(tmp_path) as base, urllib.request.urlopen(base + "explore.mjs") as response:
        assert response.headers["Content-Type"] == "text/javascript" and response.read() == b"export const x = 1;"
