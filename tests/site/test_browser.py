"""The built website as a reader sees it, in a real browser (Debian's Chromium driven by Playwright).

The site in `_build/html` (built once per session by the `built_site` fixture) is served on
127.0.0.1 and every page is opened at 1366 px (a laptop) and 390 px (a phone) by
tools/site_check.py, which also writes a screenshot of every page at both widths (the first screen;
the whole page with POSENC_SCREENSHOTS=1 or `make screenshots`) to `test-artifacts/screenshots/`. On every page: no console errors, no request to any host but the
local server, every image and diagram loads, every formula is typeset; on a phone the page
never scrolls sideways, the visible hamburger and "Contents" buttons open their drawers, and a jump
from the contents of the longest chapters lands on its section with the drawer closed and the
header naming the page and section, and nothing is cut off sideways without a shade showing
there is more (the tables the text points to fit); on
a desktop code and printed output fit the text column, figures are shown at >= 0.6 of their
natural size; at both widths figure and diagram text shows >= 11 px; images have real alt text, the
sidebar toggle collapses the sidebar and there is one search entry point. Also: the search page finds a word and shows
snippets of the article, a folded solution opens on click, plots and diagrams follow the dark theme
(a dark card, light text of WCAG contrast >= 4.5 against the page),
and a page opened straight from disk (file://) still shows its diagram and formulas.

Each layout check is shown to pass on a page that complies and to fail on the same page with
the fault added (a long code line, a shrunken figure, a file-name alt text, a page-wide element,
the theme's hidden first toggle button that broke phone navigation).

No browser is downloaded: Chromium comes from Debian (`.ci/run` installs it); without it these
tests fail, they do not skip.
"""

from __future__ import annotations

import base64
import io
import os
import pathlib
import random
import re
import socket

import numpy as np
import PIL.Image
import pytest

import site_check
from conftest import ROOT

pytestmark = pytest.mark.book

ARTIFACTS = ROOT / "test-artifacts" / "screenshots"
# full-page screenshots of every page at both widths cost a third of the browser checks' time: on request
SCREENSHOTS = bool(os.environ.get("POSENC_SCREENSHOTS"))
NAVIGATION_PAGES = ["book/intro.html", "book/05_rope.html", "book/12_experiments.html"]
SEARCH_WORD = "equivariant"  # on the landing page (book/intro.md) and in chapter 1


def chromium_or_fail() -> None:
    try:
        site_check.chromium_executable()
    except RuntimeError as error:
        pytest.fail(str(error))


@pytest.fixture(scope="module")
def site(built_site) -> pathlib.Path:
    if not built_site.ok:
        pytest.fail(
            "the book did not build, so there is no site to check (see test_book_builds_strictly):\n"
            + built_site.log_tail()
        )
    chromium_or_fail()
    return built_site.html


@pytest.fixture(scope="module")
def browser(site):
    """One Chromium for the tests below that open pages themselves (a launch costs ~1.7 s of CPU); each test
    opens its own contexts. (check_site runs its own two, one per width, side by side.)"""
    with site_check.browser() as instance:
        yield instance


@pytest.fixture(autouse=True)
def close_contexts(request):
    """The contexts a test opened in the shared browser are closed after it."""
    yield
    if "browser" in request.fixturenames:
        for context in request.getfixturevalue("browser").contexts:
            context.close()


@pytest.fixture(scope="module")
def reports(site) -> list[site_check.PageReport]:
    """Every page at both widths, inspected once for all the tests below, with a screenshot of each (its first
    screen; the whole page when POSENC_SCREENSHOTS is set). The navigation buttons are clicked on three pages:
    every page has the same header and drawers (the theme's template), and the clicks take as long as the
    rest of a page's checks."""
    return site_check.check_site(site, screenshots=ARTIFACTS, full_page=SCREENSHOTS, navigation=NAVIGATION_PAGES)


def found(
    reports: list[site_check.PageReport], *kinds: str, width: int | None = None
) -> dict[str, list[site_check.Problem]]:
    """Problems of the given kinds, by page and width."""
    by_page: dict[str, list[site_check.Problem]] = {}
    for report in reports:
        if width is not None and report.width != width:
            continue
        problems = [p for p in report.problems if p.kind in kinds]
        if problems:
            by_page[f"{report.page} at {report.width} px"] = problems
    return by_page


def listing(by_page: dict[str, list[site_check.Problem]]) -> str:
    return "\n".join(f"{page}:\n  " + "\n  ".join(problems) for page, problems in by_page.items())


# ------------------------------------------------------------------ every page


def test_every_page_renders_offline_without_errors(reports):
    pages = {r.page for r in reports}
    assert "book/intro.html" in pages and "search.html" in pages, pages
    problems = found(reports, "load")
    assert not problems, listing(problems)
    # the checks looked at something: the landing page alone has a diagram, formulas and a logo
    intro = next(r.raw for r in reports if r.page == "book/intro.html" and r.width == site_check.DESKTOP["width"])
    assert any(i["diagram"] for i in intro["images"]) and len(intro["math"]) >= 2, intro["images"]
    assert all(f.exists() for f in (ARTIFACTS / "book__intro-1366.png", ARTIFACTS / "book__intro-390.png"))


def test_no_page_scrolls_sideways(reports):
    problems = found(reports, "sideways")
    assert not problems, listing(problems)


def test_navigation_works_from_the_visible_buttons(reports):
    # phone: hamburger and "Contents" open their drawers; desktop: the toggle collapses the sidebar, one search
    problems = found(reports, "navigation")
    assert not problems, listing(problems)
    assert set(NAVIGATION_PAGES) <= {r.page for r in reports}, "a page whose buttons were to be clicked was not built"


def test_code_and_output_fit_the_column_on_a_desktop(reports):
    problems = found(reports, "wide", width=site_check.DESKTOP["width"])
    assert not problems, listing(problems)


def test_nothing_is_cut_off_sideways_on_a_phone_without_a_cue(reports):
    # code, output, tables and formulas wider than a phone's column scroll in their box with a shade
    # on the edge that hides more (a phone's scrollbar shows only while touched)
    problems = found(reports, "clipped", width=site_check.PHONE["width"])
    assert not problems, listing(problems)
    wide = [b for r in reports if r.width == site_check.PHONE["width"] for b in r.raw["wide"]]
    assert any(b["kind"] == "code" for b in wide), "no code block scrolls on a phone: the check saw nothing"


# tables a reader is told to read whole (chapter 7: "read down the last column"; chapter 9's stage tables,
# "read each column from top to bottom"; chapter 10's table to choose from; the instructor guide's): on a
# phone they fit, or are laid out row by row (6+ columns). Chapter 9's seven columns (418 px in the 358 px
# column) are two tables now, of three and four columns.
READ_WHOLE = [
    "book/07_relative_biases.html",
    "book/09_where_it_plugs_in.html",
    "book/10_choosing.html",
    "book/instructor_guide.html",
]


def test_the_tables_a_reader_is_told_to_read_fit_a_phone(reports):
    phone = {r.page: r for r in reports if r.width == site_check.PHONE["width"]}
    assert set(READ_WHOLE) | {"book/appendix_making_it_fast.html"} <= phone.keys()
    # a site table, or a chapter's result table (a cell's HTML output: a block with columns)
    cut = {page: [b for b in phone[page].raw["wide"] if b["kind"] == "table" or b["columns"]] for page in READ_WHOLE}
    # the appendix's timing tables of six or seven columns too; its five-column ones scroll, first column kept
    cut["appendix"] = [
        b for b in phone["book/appendix_making_it_fast.html"].raw["wide"] if b["kind"] == "table" and b["columns"] >= 6
    ]
    assert not any(cut.values()), cut


def test_display_formulas_are_at_least_as_large_as_the_text_and_inline_formulas(reports):
    # on a phone display formulas were 16 px beside 19.4 px inline formulas; now both at 1.1 x the text
    small = {}
    for r in reports:
        sizes = r.raw["fontSizes"]
        if not sizes["display"]:
            continue
        floor = max([sizes["text"], *sizes["inline"]])
        if min(sizes["display"]) < floor - 0.05:
            small[f"{r.page} at {r.width} px"] = (min(sizes["display"]), floor)
    assert not small, small
    assert any(r.raw["fontSizes"]["display"] for r in reports if r.width == site_check.PHONE["width"])


def test_a_printed_page_keeps_its_lines_and_its_solutions_folded(site, browser):
    chapter = "book/05_rope.html"
    with site_check.serve(site) as base:
        page = site_check.new_context(browser).new_page()
        page.goto(base + chapter, wait_until="load")
        page.emulate_media(media="print")
        page.set_viewport_size({"width": 794, "height": 1123})  # an A4 page at 96 px per inch
        cut = page.evaluate(
            "() => [...document.querySelectorAll('article pre, article div.math')]"
            ".filter((el) => el.getClientRects().length && el.scrollWidth > el.clientWidth + 1)"
            ".map((el) => [el.scrollWidth, el.clientWidth, el.textContent.slice(0, 60)])"
        )
        open_on_print = page.evaluate("() => toggleOpenOnPrint")
        folded = page.locator(".solution.dropdown.toggle-hidden").count()
    assert not cut, cut[:5]
    # sphinx-togglebutton opened every folded solution and code cell before printing (its beforeprint handler)
    assert open_on_print == "false" and folded >= 3, (open_on_print, folded)


def test_a_wide_formula_on_a_phone_shades_only_its_hidden_side(site, browser):
    """A display formula wider than the phone column, scrolled to its start: a shade on the right edge
    (more is hidden there) and none on the left, not even a line of device pixels at its corners."""
    with site_check.serve(site) as base:
        page = site_check.new_context(browser, phone=True).new_page()
        page.goto(base + "book/07_relative_biases.html", wait_until="load")
        box = page.locator("div.math").filter(has_text="content").first  # Transformer-XL's four terms
        assert box.evaluate("(el) => el.scrollWidth > el.clientWidth + 20"), "the formula fits: pick a wider one"
        box.scroll_into_view_if_needed()
        shot = PIL.Image.open(io.BytesIO(box.screenshot())).convert("L")
    width, height = shot.size
    background = shot.getpixel((width // 2, 0))
    left = [shot.getpixel((x, y)) for y in (0, 1, height - 2, height - 1) for x in range(0, 24)]
    right_edge = [shot.getpixel((width - 1, y)) for y in range(height // 4, 3 * height // 4)]
    assert max(abs(value - background) for value in left) <= 8, "a shade shows on the side scrolled to"
    assert min(abs(value - background) for value in right_edge) >= 30, "no shade where the formula is cut"


def test_figures_are_readable_on_a_desktop(reports):
    problems = found(reports, "figure", width=site_check.DESKTOP["width"])
    assert not problems, listing(problems)


def test_figures_and_diagrams_are_readable_on_a_phone(reports):
    # the browser shrinks a figure wider than the phone's column, and its text with it: every plot and
    # diagram keeps its smallest text >= 11 CSS px at 390 px (they were 5.9-8.4 px before issue 27)
    phone = [r for r in reports if r.width == site_check.PHONE["width"]]
    problems = found(phone, "figure")
    assert not problems, listing(problems)
    measured = {r.page: site_check.smallest_figure_text(r.raw) for r in phone}
    with_figures = [page for page, px in measured.items() if px is not None]
    assert len(with_figures) >= 9, measured  # the chapters with plots and the landing page's diagram
    assert min(measured[page] for page in with_figures) >= site_check.MIN_TEXT_PX, measured


def test_images_have_real_alt_text(reports):
    problems = found(reports, "alt")
    assert not problems, listing(problems)


# ------------------------------------------------------------------ page budgets
# What decides how fast a page shows, measured exactly instead of timed (tools/page_weight.py): the gzip
# bytes, by kind, of everything a page fetches when read to its end; the requests that block its first
# paint; its element count; raster images no larger than they are shown. Each budget is the largest value
# measured on 2026-12-02 plus some headroom (the measurement is in the comment): raise one only with a
# reason written next to it. Lighthouse's performance score, a timing, is reported by `make audit` and CI.
PAGE_BUDGET_KIB = {
    # 66.0 (chapter 12): a chapter's text, code and outputs; chapter 12 also embeds the stored accuracy
    # curves its explorable draws (was 50.4 before the explorables and questions)
    "html": 76,
    # 34.3 (chapter 1): the page's purged bundle; 29.9 before the phone header, scroll shades, phone tables and
    # result tables of course.css (issue 27)
    "css": 36,
    "js": 80,  # 69.7 (the search page and its index); 42.9 on a chapter, 59 with the explorables' script
    "font": 84,  # 73.9 (the appendix): the KaTeX faces a page uses; 115 before the GitHub glyph went
    "image": 190,  # 165.4 (chapter 12): its figures
    "data": 0,  # nothing fetches JSON
}
RENDER_BLOCKING = 2  # the page's style sheet and Sphinx's documentation_options.js
RENDER_BLOCKING_SEARCH = 8  # the search page also loads its index and Sphinx's search scripts up front
MAX_ELEMENTS = 12_000  # 10,393 (chapter 5)


def budget_overruns(site: pathlib.Path, reports: list[site_check.PageReport]) -> dict[str, list[str]]:
    """What each page (at each width) spends beyond its budgets."""
    import page_weight

    by_page = {}
    for report in reports:  # (index.html, a redirect to book/intro.html, is not inspected)
        row = page_weight.page_weight(site, report)
        over = [
            f"{kind}: {size / 1024:.1f} KiB > {PAGE_BUDGET_KIB[kind]} KiB"
            for kind, size in row["gzip_bytes"].items()
            if size > PAGE_BUDGET_KIB[kind] * 1024
        ]
        allowed = RENDER_BLOCKING_SEARCH if report.page == "search.html" else RENDER_BLOCKING
        if len(row["render_blocking"]) > allowed:
            over.append(f"{len(row['render_blocking'])} render-blocking requests > {allowed}: {row['render_blocking']}")
        if row["elements"] > MAX_ELEMENTS:
            over.append(f"{row['elements']} elements > {MAX_ELEMENTS}")
        ratio = 2 if report.width == site_check.PHONE["width"] else 1  # the phone's device pixel ratio
        over += [
            f"image {i['src']} is {i['natural']} px wide, shown at {i['shown']:.0f} CSS px"
            for i in report.raw["images"]
            if i["visible"] and i["shown"] and not i["src"].endswith(".svg") and i["natural"] > 1.5 * ratio * i["shown"]
        ]
        if over:
            by_page[f"{report.page} at {report.width} px"] = over
    return by_page


def test_every_page_keeps_its_budgets(site, reports):
    over = budget_overruns(site, reports)
    assert not over, "\n".join(f"{page}: " + "; ".join(items) for page, items in over.items())
    assert len({r.page for r in reports}) >= 15  # every page was measured


# ------------------------------------------------------------------ a page that reads as a lesson
# At both widths (the laptop's 1366 px binds), the share of a page's height that is code a reader sees with every fold closed
# (MyST-NB's hide-input cells and the code inside folded solutions not counted) and the longest printed
# output. The goal: code at most a quarter of the page, no printed output over 12 lines. Every chapter is
# within the goal; each has a ceiling of its measurement (2026-12-03, 1366 px) plus 0.01, never above the
# goal (edits of a page's text move its height): lower one when a chapter's code gets shorter, never raise
# one without a reason written next to it.
# (In the comments: the measurement, then what the same measure gave before the last change.)
CODE_SHARE_GOAL = 0.25
CODE_SHARE_CEILING = {
    "01_why_order_matters": 0.229,  # 21.9 %
    "02_analogy": 0.196,  # 18.6 %
    "03_sinusoidal": 0.221,  # 21.1 %
    "04_learned": 0.171,  # 16.1 %
    "05_rope": 0.25,  # 24.0 % (26.2 %: the explorable's fallback plot folded, its table a real one)
    "06_alibi": 0.231,  # 22.1 %
    "07_relative_biases": 0.183,  # 17.3 %
    "08_long_context": 0.242,  # 23.2 % (26.0 %: the explorable's fallback plot folded)
    "09_where_it_plugs_in": 0.249,  # 23.9 % (24.7 %: one helper fewer)
    "10_choosing": 0.176,  # 16.6 %
    "11_interview_questions": 0.071,  # 6.1 %: the code behind four answers folded (hide-input)
    "12_experiments": 0.163,  # 15.3 %
    "13_real_text": 0.224,  # 21.4 %
}
OUTPUT_LINES_GOAL = 12
# (chapter 3 printed its formula's source, 22 lines, now a code block beside the text; chapters 12 and 13
# printed their provenance and key-set tables, 18 and 22 lines, now real tables; chapter 5 prints its formula's
# nine lines, not the 28 of its source): every page is within the goal, so no chapter has a ceiling above it
OUTPUT_LINES_CEILING: dict[str, int] = {}


def test_code_and_printed_output_keep_to_the_lesson_budget(reports):
    # both widths; the laptop binds (on a phone the text reflows taller and code lines scroll: 10-18 %)
    over = {}
    chapters = [r for r in reports if r.page.startswith("book/")]
    for r in chapters:
        shares = r.raw["shares"]
        name = r.page.removeprefix("book/").removesuffix(".html")
        where = f"{name} at {r.width} px"
        code_ceiling = CODE_SHARE_CEILING.get(name, CODE_SHARE_GOAL)
        lines_ceiling = OUTPUT_LINES_CEILING.get(name, OUTPUT_LINES_GOAL)
        if shares["code"] > code_ceiling:
            over[where] = f"visible code {shares['code']:.1%} of the page > {code_ceiling:.1%}"
        if shares["outputLines"] > lines_ceiling:
            over[where] = over.get(where, "") + f" printed output of {shares['outputLines']} lines > {lines_ceiling}"
    assert not over, over
    laptop = [r for r in chapters if r.width == site_check.DESKTOP["width"]]
    assert len(laptop) >= 12 and len(chapters) >= 24, "a width was not measured"
    assert any(r.raw["shares"]["code"] > 0.1 for r in laptop), "no code measured"
    assert max(CODE_SHARE_CEILING.values()) <= CODE_SHARE_GOAL


# ------------------------------------------------------------------ the checks can fail


def site_with_page(site: pathlib.Path, tmp_path: pathlib.Path, relative: str, text: str) -> pathlib.Path:
    """A copy of the site (symlinks) in which one page has the given text."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    for entry in site.iterdir():
        (tmp_path / entry.name).symlink_to(entry)
    folder = pathlib.PurePosixPath(relative).parent.as_posix()
    (tmp_path / folder).unlink()
    (tmp_path / folder).mkdir()
    for entry in (site / folder).iterdir():
        (tmp_path / folder / entry.name).symlink_to(entry)
    (tmp_path / relative).unlink()
    (tmp_path / relative).write_text(text)
    return tmp_path


def figures_by_width(site: pathlib.Path) -> list[str]:
    """The site's Matplotlib figures, narrowest first, as paths relative to book/."""
    import re

    widths = {}
    for svg in (site / "_images").glob("*.svg"):
        match = re.search(r'<svg[^>]*\bwidth="([\d.]+)pt"', svg.read_text()[:2000])
        if match:
            widths[svg.name] = float(match.group(1))
    assert widths, "no Matplotlib SVG figure on the site"
    return ["../_images/" + name for name in sorted(widths, key=widths.__getitem__)]


FAULTS = [
    # (kind, HTML put at the start of the article, width it shows at)
    ("wide", '<div class="highlight"><pre>' + "x = 1  # " + "a long comment " * 12 + "</pre></div>", 1366),
    ("figure", '<img src="{widest}" alt="A test figure, shown far too small." style="width: 120px">', 1366),
    # a figure of the course's width whose text is 9 pt (what the chapters drew before): 12 px on a
    # laptop, 9.3 px once a phone shrinks it to its column
    ("figure", '<img src="{small_text}" alt="A test figure with 9-point text.">', 390),
    ("alt", '<img src="{narrowest}" alt="../_images/0123456789abcdef0123.svg">', 1366),
    ("sideways", '<div style="width: 900px; height: 10px"></div>', 390),
    (
        "clipped",
        '<div class="highlight"><pre style="background-image: none">'
        + "x = 1  # "
        + "a long comment " * 12
        + "</pre></div>",
        390,
    ),
]


def figure_with_small_text(directory: pathlib.Path) -> str:
    """A Matplotlib SVG of the course's column width (4.7 in) with 9-pt text, written to `directory`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from posenc_lib import plotting

    with plt.rc_context():
        plotting.use_course_style()
        fig, ax = plt.subplots(figsize=(plotting.COLUMN_WIDTH, 3))
        ax.plot([0, 1], [0, 1])
        ax.set_title("nine-point text", fontsize=9)
        ax.tick_params(labelsize=9)
        fig.savefig(directory / "small-text.svg")
        plt.close(fig)
    return "small-text.svg"


def test_the_layout_checks_pass_on_a_complying_page_and_fail_on_each_fault(site, reports, tmp_path, browser):
    intro = (site / "book" / "intro.html").read_text()
    figures = figures_by_width(site)
    clean = {r.width: r.problems for r in reports if r.page == "book/intro.html"}  # the fixture's inspection
    assert clean.keys() == {1366, 390} and not any(clean.values()), f"the landing page should comply: {clean}"
    small_text = figure_with_small_text(tmp_path)
    for number, (kind, html, width) in enumerate(FAULTS):
        fault = html.format(widest=figures[-1], narrowest=figures[0], small_text=small_text)
        faulty = intro.replace('<article class="bd-article">', '<article class="bd-article">' + fault, 1)
        assert faulty != intro
        root = site_with_page(site, tmp_path / f"{kind}-{number}", "book/intro.html", faulty)
        if small_text in fault:
            (root / "book" / small_text).symlink_to(tmp_path / small_text)
        with site_check.serve(root) as base:
            context = site_check.new_context(browser, phone=width < 1000)
            problems, _ = site_check.inspect_page(context, base + "book/intro.html", phone=width < 1000)
            context.close()
        assert {p.kind for p in problems} == {kind}, (kind, width, problems)


def test_a_request_to_another_host_is_reported_and_does_not_leave_the_machine(site, tmp_path, browser):
    # the site's logo from this server under the machine's own name, which resolves (/etc/hosts): only the
    # browser's rule (site_check.OFFLINE: no host name resolves but the loopback's) keeps it from loading
    intro = (site / "book" / "intro.html").read_text()
    root = site_with_page(site, tmp_path / "outside", "book/intro.html", intro)
    with site_check.serve(root) as base:
        outside = base.replace("127.0.0.1", socket.gethostname()) + "_static/logo.svg"
        image = f'<img src="{outside}" alt="The course logo, from another host.">'
        article = '<article class="bd-article">'
        (root / "book" / "intro.html").write_text(intro.replace(article, article + image, 1))
        context = site_check.new_context(browser)
        problems, _ = site_check.inspect_page(context, base + "book/intro.html", phone=False)
        context.close()
    assert f"request to a non-local host: {outside}" in problems, problems
    assert any("ERR_NAME_NOT_RESOLVED" in problem for problem in problems), problems


def test_the_lesson_measure_counts_a_long_printed_output_and_not_a_folded_one(site, tmp_path, browser):
    # a printed output of 13 lines counts 13; one of 30 lines folded by MyST-NB's hide-output (a closed
    # <details>) is not seen, so it does not count
    def output(lines: int) -> str:
        text = "\n".join(f"line {i}" for i in range(lines))
        return f'<div class="cell_output docutils container"><div class="highlight"><pre>{text}\n</pre></div></div>'

    added = output(13) + '<details class="hide below-input"><summary>Show output</summary>' + output(30) + "</details>"
    intro = (site / "book" / "intro.html").read_text()
    faulty = intro.replace('<article class="bd-article">', '<article class="bd-article">' + added, 1)
    assert faulty != intro
    root = site_with_page(site, tmp_path / "long-output", "book/intro.html", faulty)
    with site_check.serve(root) as base:
        context = site_check.new_context(browser, phone=False)
        _, raw = site_check.inspect_page(context, base + "book/intro.html", phone=False)
        context.close()
    assert raw["shares"]["outputLines"] == 13 > OUTPUT_LINES_GOAL


def test_the_lesson_measure_counts_the_code_of_an_open_solution_and_not_of_a_folded_one(site, browser):
    # sphinx-togglebutton folds a solution with visibility: hidden inside a card one title bar high, so the
    # code cells in it keep their boxes: the measure once counted them as code a reader sees. Chapter 5,
    # measured with its solutions folded (as a reader finds it), then with its first solution with code opened.
    chapter = "book/05_rope.html"
    with site_check.serve(site) as base:
        page = site_check.new_context(browser).new_page()
        page.goto(base + chapter, wait_until="load")
        page.add_style_tag(content=site_check.LAY_OUT_EVERYTHING)
        cell_heights = """(within) => [...document.querySelectorAll('article .cell_input')]
            .filter((el) => !el.closest('details') && (within === !!el.closest('.solution.dropdown')))
            .reduce((total, el) => total + el.getBoundingClientRect().height, 0)"""
        outside = page.evaluate(cell_heights, False)  # every cell outside folded cells and solutions
        closed = page.evaluate(site_check.INSPECT_PAGE, site_check.RENDER_TIMEOUT_MS)["shares"]
        solution = page.locator(".solution.dropdown:has(.cell_input)").first
        solution.scroll_into_view_if_needed()
        box = solution.locator(":scope > .admonition-title").first.bounding_box()
        page.mouse.click(box["x"] + box["width"] * 0.3, box["y"] + box["height"] / 2)
        solution.locator(":scope .cell_input").first.wait_for(state="visible", timeout=5_000)
        page.wait_for_timeout(500)  # the card's opening transition
        in_first = solution.evaluate(
            "(el) => [...el.querySelectorAll('.cell_input')].reduce((t, c) => t + c.getBoundingClientRect().height, 0)"
        )
        opened = page.evaluate(site_check.INSPECT_PAGE, site_check.RENDER_TIMEOUT_MS)["shares"]
    assert in_first > 100, in_first  # code a reader sees once it is open
    # folded: exactly the code outside solutions (to a pixel per cell); open: plus the opened solution's code
    assert abs(closed["code"] * closed["height"] - outside) < 30, (closed, outside)
    grown = opened["code"] * opened["height"] - closed["code"] * closed["height"]
    assert abs(grown - in_first) < 30, (grown, in_first)


def test_the_navigation_check_fails_when_a_hidden_toggle_comes_first(site, tmp_path, browser):
    # what pydata-sphinx-theme's header did: a hidden .primary-toggle / .secondary-toggle before the visible ones
    page = (site / "book" / "05_rope.html").read_text()
    hidden = (
        '<div style="display: none"><button class="primary-toggle"></button>'
        '<button class="secondary-toggle"></button></div>'
    )
    faulty = page.replace('<div class="bd-container">', hidden + '<div class="bd-container">', 1)
    assert faulty != page
    root = site_with_page(site, tmp_path, "book/05_rope.html", faulty)
    with site_check.serve(root) as base:
        context = site_check.new_context(browser, phone=True)
        problems = site_check.check_navigation(context, base + "book/05_rope.html", phone=True)
    assert len(problems) == 2 and all("did not open" in p for p in problems), problems


# ------------------------------------------------------------------ jumps on a phone
# the three longest chapters on a phone (page heights measured 2026-12-02: 12 44,100 px, 5 27,900 px,
# 3 25,400 px): the further down a section, the more a wrong guess of the heights above it adds up
LONGEST_CHAPTERS = ["book/12_experiments.html", "book/05_rope.html", "book/03_sinusoidal.html"]


def test_a_jump_from_the_contents_lands_on_its_section_on_a_phone(site, browser):
    # tap "Contents", tap one of its last sections: the heading is just under the header, the drawer
    # closed, the header names the page and the section, and shows no fullscreen / repository / download
    problems = {}
    with site_check.serve(site) as base:
        context = site_check.new_context(browser, phone=True)
        for relative in LONGEST_CHAPTERS:
            problems[relative] = site_check.check_contents_jumps(context, base + relative, last=4)
    assert not any(problems.values()), problems


def test_the_jump_check_fails_when_sections_are_laid_out_late(site, tmp_path, browser):
    # the site before: sections far from the screen counted 1500 px tall even after a jump, figures without
    # a size, and nothing closing the drawer (chapter 5's 5.6 landed 3,421 px short, the drawer open)
    page = re.sub(r'(<img\b[^>]*?) width="\d+" height="\d+"', r"\1", (site / "book" / "05_rope.html").read_text())
    late = "<style>.bd-article > section > section { content-visibility: auto !important; }</style>"
    faulty = re.sub(r"<script[^>]*course-nav\.js[^>]*></script>", "", page.replace("</head>", late + "</head>", 1))
    assert "course-nav" not in faulty and late in faulty
    root = site_with_page(site, tmp_path, "book/05_rope.html", faulty)
    with site_check.serve(root) as base:
        context = site_check.new_context(browser, phone=True)
        problems = site_check.check_contents_jumps(context, base + "book/05_rope.html", last=6)
    # (where the jump lands without the fix depends on how far the sections' real heights are from the guess:
    # 3,421 px short for 5.6 on 2026-12-02; the check's arithmetic is the same as for the drawer and header)
    assert any("drawer stayed open" in p for p in problems), problems
    assert any("the header names section ''" in p for p in problems), problems


# ------------------------------------------------------------------ particular pages


def test_the_budgets_catch_a_render_blocking_script_and_an_oversized_image(site, reports, tmp_path):
    intro = (site / "book" / "intro.html").read_text()
    filler = base64.b64encode(random.Random(0).randbytes(150_000)).decode()  # 200 KB that gzip cannot shrink
    (tmp_path / "slow.js").write_text(f"var filler = '{filler}';\n")
    png = tmp_path / "wide.png"  # a 1600 px wide image, shown at 200 CSS px
    from PIL import Image

    Image.new("RGB", (1600, 100), "white").save(png)
    page = intro.replace("</head>", '<script src="slow.js"></script></head>', 1).replace(
        '<article class="bd-article">',
        '<article class="bd-article"><img src="wide.png" alt="A test image." width="200">',
        1,
    )
    faulty = site_with_page(site, tmp_path / "site", "book/intro.html", page)
    for made in (png, tmp_path / "slow.js"):
        (faulty / "book" / made.name).symlink_to(made)
    over = budget_overruns(faulty, site_check.check_site(faulty, ["book/intro.html"]))
    for width in (site_check.DESKTOP["width"], site_check.PHONE["width"]):
        items = " ".join(over[f"book/intro.html at {width} px"])
        assert "js: " in items and "3 render-blocking requests" in items and "wide.png is 1600 px" in items, items
    assert not budget_overruns(site, [r for r in reports if r.page == "book/intro.html"])  # the fixture's


def test_search_finds_a_known_word_and_shows_article_text(site, browser):
    with site_check.serve(site) as base:
        page = site_check.new_context(browser).new_page()
        page.goto(f"{base}search.html?q={SEARCH_WORD}", wait_until="load")
        page.wait_for_selector("ul.search li a", timeout=site_check.RENDER_TIMEOUT_MS)
        hits = page.eval_on_selector_all("ul.search li a", "links => links.map((a) => a.getAttribute('href'))")
        page.goto(f"{base}search.html?q=rotary", wait_until="load")
        page.wait_for_function(
            "() => document.querySelectorAll('ul.search li p.context').length >= 3",
            timeout=site_check.RENDER_TIMEOUT_MS,
        )
        page.wait_for_timeout(500)  # snippets arrive one page fetch at a time
        snippets = page.eval_on_selector_all("ul.search li p.context", "ps => ps.map((p) => p.textContent)")
        page.screenshot(path=str(site_check.screenshot_path(ARTIFACTS, "search", "-rotary")), full_page=True)
    assert any("intro" in href for href in hits), hits
    # snippets are article text (Sphinx took them from the toolbar before: "…Binder", "….md")
    toolbar = [s for s in snippets if any(word in s for word in ("Binder", ".ipynb", ".md", ".pdf", "Launch"))]
    assert not toolbar, toolbar
    assert any("Rotary position embeddings" in s for s in snippets), snippets


def search_results(page, base: str, query: str) -> tuple[list[str], list[str]]:
    """(result links, snippets) of the search page for `query`, once every snippet has arrived."""
    page.goto(f"{base}search.html?q={query}", wait_until="load")
    page.wait_for_selector("ul.search li a", timeout=site_check.RENDER_TIMEOUT_MS)
    page.wait_for_function(
        "() => [...document.querySelectorAll('ul.search li')].every((li) => li.querySelector('p.context'))"
        " || document.querySelectorAll('ul.search li p.context').length >= 8",
        timeout=site_check.RENDER_TIMEOUT_MS,
    )
    page.wait_for_timeout(500)  # snippets arrive one page fetch at a time
    hits = page.eval_on_selector_all("ul.search li > a", "links => links.map((a) => a.getAttribute('href'))")
    snippets = page.eval_on_selector_all("ul.search li p.context", "ps => ps.map((p) => p.textContent)")
    return hits, snippets


# a query naming a scheme: its chapter first (Sphinx ranked chapter 6 third for "ALiBi", chapter 5 third for
# "rope", after pages with a section of that name)
NAMED_CHAPTERS = {"ALiBi": "06_alibi.html", "rope": "05_rope.html", "sinusoidal": "03_sinusoidal.html"}


def test_search_ranks_the_chapter_named_after_the_query_first_with_clean_snippets(site, browser):
    found = {}
    with site_check.serve(site) as base:
        page = site_check.new_context(browser).new_page()
        for query in NAMED_CHAPTERS:
            found[query] = search_results(page, base, query)
    for query, chapter in NAMED_CHAPTERS.items():
        hits, _ = found[query]
        assert hits and hits[0].split("#")[0].endswith(chapter), (query, hits[:4])
    # formulas in snippets are their plain text: no TeX source, no KaTeX's three copies run together
    snippets = [s for _, found_snippets in found.values() for s in found_snippets]
    assert any("−" in s or "θ" in s for s in snippets), "no snippet shows a formula: nothing was checked"
    tex = [s for s in snippets if re.search(r"\\[a-zA-Z,]|\w_\{|m_h", s)]
    assert not tex, tex[:3]
    assert any("−mh∣i−j∣" in s for s in found["ALiBi"][1]), found["ALiBi"][1][:2]  # chapter 6's bias, once


def test_a_folded_solution_opens_on_click(site, browser):
    pages = [p for p in site_check.html_pages(site) if "solution" in (site / p).read_text()]
    pages = pages[:1] + pages[-1:]  # the first and the last page with solutions: one mechanism (sphinx-exercise)
    checked = []
    with site_check.serve(site) as base:
        context = site_check.new_context(browser)
        for relative in pages:
            page = context.new_page()
            page.goto(base + relative, wait_until="load")
            folded = page.locator(".solution.dropdown")
            if folded.count() == 0:
                page.close()
                continue
            solution = folded.first
            body = solution.locator(":scope > :not(.admonition-title)").first
            solution.scroll_into_view_if_needed()
            assert not body.is_visible(), f"{relative}: the solution is visible before any click"
            # a click on the title's words, the part that looks clickable (it was a link to the exercise)
            title = solution.locator(":scope > .admonition-title").first
            box = title.bounding_box()
            before = page.evaluate("scrollY")
            page.mouse.click(box["x"] + box["width"] * 0.3, box["y"] + box["height"] / 2)
            body.wait_for(state="visible", timeout=5_000)
            assert abs(page.evaluate("scrollY") - before) < 50, f"{relative}: clicking the bar scrolled away"
            page.screenshot(
                path=str(site_check.screenshot_path(ARTIFACTS, relative, "-solution-open")), full_page=False
            )
            checked.append(relative)
            page.close()
    assert checked, "no page has a folded solution (`.solution.dropdown`), so folding could not be checked"


def test_figures_and_diagrams_follow_the_theme_with_readable_text(site, browser):
    # one card style for plots and diagrams; in dark mode no white card in the dark page: the card is
    # as dark as the page around it, and the text and axes drawn on it are light, readable against it
    chapters = [
        p
        for p in site_check.html_pages(site)
        if p.startswith("book/") and (site / "_sources" / p).with_suffix(".ipynb").exists()
    ]
    assert chapters, "no notebook pages were built"
    measured, cards = {}, {}
    with site_check.serve(site) as base:
        for mode in ("light", "dark"):
            context = site_check.new_context(browser, color_scheme=mode)
            # (in the light theme, the one new_context opens by default, the `reports` fixture checked every page)
            for relative in ["book/intro.html", chapters[0]] if mode == "dark" else []:
                problems, _ = site_check.inspect_page(
                    context,
                    base + relative,
                    phone=False,
                    screenshot=site_check.screenshot_path(ARTIFACTS, relative, f"-{mode}"),
                )
                assert not [p for p in problems if p.kind == "load"], problems
            for relative, selector in [(chapters[0], ".cell_output img"), ("book/intro.html", "img.diagram")]:
                page = context.new_page()
                page.goto(base + relative, wait_until="load")
                assert page.evaluate("document.documentElement.dataset.theme") == mode
                background = page.evaluate("getComputedStyle(document.body).backgroundColor")
                images = page.locator(selector)
                assert images.count(), f"{relative} has no {selector} to check"
                for i in range(min(images.count(), 3)):
                    image = images.nth(i)
                    # figures load as they come near the screen (loading="lazy"), then take their size
                    image.evaluate(
                        "img => { img.scrollIntoView({block: 'center'}); return img.complete && img.naturalWidth ? 0"
                        " : new Promise((done) => { img.onload = img.onerror = done; }); }"
                    )
                    image.evaluate("img => img.scrollIntoView({block: 'center'})")
                    card, ink = card_and_ink(page.screenshot(clip=image.bounding_box()))
                    cards[(mode, relative, i)] = image.evaluate(
                        "img => { const s = getComputedStyle(img); return [s.padding, s.borderRadius, s.width]; }"
                    )
                    measured[(mode, relative, i)] = {
                        "card vs page": contrast(card, css_rgb(background)),
                        "text vs card": contrast(ink, card),
                        "text vs page": contrast(ink, css_rgb(background)),
                        "card luminance": luminance(card),
                    }
                page.close()
            context.close()
    for (mode, relative, i), m in measured.items():
        where = f"{mode}: {relative} image {i}: {m}"
        assert m["text vs card"] >= 4.5 and m["text vs page"] >= 4.5, where  # WCAG AA for text
        assert m["card vs page"] < 1.3, where  # the card follows the page: no white card on a dark page
        assert (m["card luminance"] < 0.05) if mode == "dark" else (m["card luminance"] > 0.9), where
    # one card style: padding, corners and drawn width the same in both themes (the theme's own dark-mode
    # image rule pads images by 8 px, which shrank figures and their text on a phone)
    for (mode, relative, i), style in cards.items():
        assert style == cards[("light", relative, i)], (mode, relative, i, style, cards[("light", relative, i)])


def css_rgb(colour: str) -> tuple[float, float, float]:
    """'rgb(18, 18, 18)' -> (18, 18, 18)."""
    import re

    red, green, blue = (float(v) for v in re.findall(r"[\d.]+", colour)[:3])
    return red, green, blue


def luminance(rgb) -> float:
    """WCAG relative luminance of an sRGB colour given in 0..255."""

    channel = np.asarray(rgb, dtype=float) / 255.0
    linear = np.where(channel <= 0.03928, channel / 12.92, ((channel + 0.055) / 1.055) ** 2.4)
    return float(linear @ np.array([0.2126, 0.7152, 0.0722]))


def contrast(a, b) -> float:
    """WCAG contrast ratio of two sRGB colours (1 .. 21)."""
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def card_and_ink(png: bytes) -> tuple[np.ndarray, np.ndarray]:
    """The colour of a figure's card (the median of its outer 3-pixel frame) and of its text and axes:
    the 0.5 % of pixels farthest in lightness from the card (text is thin: few pixels, the most extreme)."""
    import io

    from PIL import Image

    pixels = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(float)  # (height, width, 3)
    frame = np.concatenate(
        [
            pixels[:3].reshape(-1, 3),
            pixels[-3:].reshape(-1, 3),
            pixels[:, :3].reshape(-1, 3),
            pixels[:, -3:].reshape(-1, 3),
        ]
    )
    card = np.median(frame, axis=0)
    flat = pixels.reshape(-1, 3)
    lightness = flat.mean(axis=1)
    away = np.abs(lightness - card.mean())
    ink = flat[away >= np.quantile(away, 0.995)]
    return card, np.median(ink, axis=0)


def test_code_text_has_the_code_styles_colour_in_both_modes(site, browser):
    # names, punctuation and spaces carry no <span> on the site (tools/course_site.py): their text is
    # drawn in the <pre>'s colour, which must be the code block's, the colour the code style gives them
    chapter = "book/05_rope.html"
    colours = {}
    with site_check.serve(site) as base:
        for mode in ("light", "dark"):
            context = site_check.new_context(browser, color_scheme=mode)
            page = context.new_page()
            page.goto(base + chapter, wait_until="load")
            assert page.evaluate("document.documentElement.dataset.theme") == mode
            colours[mode] = page.evaluate(
                """() => ['.cell_input', '.cell_output'].map((part) => {
                    const pre = document.querySelector(`${part} div.highlight > pre`);
                    return [getComputedStyle(pre).color, getComputedStyle(pre.parentElement).color];
                })"""
            )
            context.close()
    for mode, pairs in colours.items():
        for pre, block in pairs:
            assert pre == block, (mode, colours)
    assert colours["light"] != colours["dark"], colours


def test_a_page_opened_from_disk_shows_its_diagram_and_formulas(site, browser):
    # a reader who builds the site and opens _build/html/index.html has no server: file:// pages
    context = site_check.new_context(browser)
    problems, report = site_check.inspect_page(
        context,
        (site / "book" / "intro.html").as_uri(),
        phone=False,
        screenshot=site_check.screenshot_path(ARTIFACTS, "book/intro", "-file"),
    )
    context.close()
    assert not [p for p in problems if p.kind == "load"], problems
    assert any(i["diagram"] and i["loaded"] for i in report["images"]), report["images"]
    assert report["math"] and all(m["typeset"] for m in report["math"]), report["math"]
