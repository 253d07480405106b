"""Look at the built website as readers do, in Debian's Chromium (Playwright), and list what is wrong.

    python tools/site_check.py [_build/html] [--pages book/05_rope.html ...] [--screenshots DIR]

Every page is opened at 1366 px (a laptop) and 390 px (a phone). A problem has a kind:
``load`` console errors, requests to another host, images, diagrams or formulas not drawn; ``sideways``
the page scrolls sideways; ``wide`` (laptop) code, output, a table or a formula wider than its box;
``clipped`` (phone) such a block with no shade showing that it scrolls (course.css); ``figure`` a figure
shown below 0.6 of its size, or its smallest text below 11 px (both widths: a phone shrinks figures);
``alt`` an image without real alt text (laptop); ``navigation`` and ``jump`` what the visible buttons and
the "Contents" drawer do. ``phone-formula`` (a formula wider than a phone) is advice, not a failure.
tests/site/test_browser.py runs every check; authors run this on their chapter. Exit status 1 on a problem.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import dataclasses
import functools
import http.server
import pathlib
import re
import shutil
import sys
import threading
import urllib.parse
from collections.abc import Iterator, Sequence

from playwright.sync_api import expect, sync_playwright

ROOT = pathlib.Path(__file__).resolve().parents[1]
# no request leaves the machine: the browser resolves no host name but the loopback's (inspect_page reports tries)
OFFLINE = "MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1"
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
DESKTOP = {"width": 1366, "height": 900}
PHONE = {"width": 390, "height": 844}
MIN_FIGURE_SCALE = 0.6  # a figure shown below this fraction of its natural size is too small
MIN_TEXT_PX = 11.0  # the smallest text a figure or diagram may show, in CSS pixels
RENDER_TIMEOUT_MS = 20_000
ADVICE = {"phone-formula"}  # reported, never a failure
# on narrow screens the site lets the browser skip laying out sections far from the screen; measure them all
LAY_OUT_EVERYTHING = ".bd-article section { content-visibility: visible !important; }"
FILE_NAME_ALT = re.compile(r"(^|/)[\w.-]+\.(png|svg|jpe?g|gif|webp)$|^[0-9a-f]{16,}", re.IGNORECASE)


def chromium_executable() -> str:
    """Debian's Chromium (no browser is downloaded), or an error that says how to install it."""
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        raise RuntimeError("Chromium is missing: `apt-get update && apt-get install -y chromium` (.ci/run does this)")
    return path


class StaticHandler(http.server.SimpleHTTPRequestHandler):
    """Static files over HTTP/1.1 (one connection for a page's requests), JavaScript's MIME type for .mjs; no
    log lines. (Lighthouse CI serves the site to Lighthouse itself, gzip-compressed as a static host would.)"""

    protocol_version = "HTTP/1.1"
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".mjs": "text/javascript"}

    def log_message(self, format, *args):
        pass


@contextlib.contextmanager
def serve(directory: pathlib.Path) -> Iterator[str]:
    """Serve `directory` on 127.0.0.1 (a free port) for the block; yields the base URL."""
    handler = functools.partial(StaticHandler, directory=str(directory))
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}/"
        finally:
            server.shutdown()


@contextlib.contextmanager
def browser() -> Iterator[object]:
    """One headless Chromium for the block."""
    with sync_playwright() as playwright:
        flags = [*CHROMIUM_FLAGS, f"--host-resolver-rules={OFFLINE}"]
        instance = playwright.chromium.launch(executable_path=chromium_executable(), args=flags)
        yield instance
        instance.close()


def new_context(instance, *, phone: bool = False, color_scheme: str = "light"):
    """A laptop window, or a phone's: narrow, touch, two device pixels per CSS pixel."""
    phone_device = {"viewport": PHONE, "device_scale_factor": 2, "is_mobile": True, "has_touch": True}
    return instance.new_context(color_scheme=color_scheme, **(phone_device if phone else {"viewport": DESKTOP}))


def html_pages(html: pathlib.Path) -> list[str]:
    """Every page of the site, as paths relative to its root (assets and sources excluded)."""
    skip = {"_static", "_sources", "_images", "_sphinx_design_static"}
    return sorted(
        p.relative_to(html).as_posix() for p in html.rglob("*.html") if not skip & set(p.relative_to(html).parts)
    )


def site_pages(html: pathlib.Path) -> list[str]:
    """The pages a reader reads: all but index.html, a redirect to book/intro.html."""
    return [page for page in html_pages(html) if page != "index.html"]


def is_local(url: str) -> bool:
    parts = urllib.parse.urlsplit(url)
    return parts.scheme in ("data", "blob", "about", "file") or parts.hostname in ("127.0.0.1", "localhost", "::1")


# Text as a reader sees it: no permalink sign, no KaTeX MathML twin (both scripts below).
TEXT = r"""const text = (el) => {
    if (!el) return '';
    const copy = el.cloneNode(true);
    copy.querySelectorAll('.headerlink, .katex-mathml').forEach((e) => e.remove());
    return copy.textContent.replace(/\s+/g, ' ').trim();
  };
"""
# Runs in the page: loads every image, then measures what a reader sees.
INSPECT_PAGE = r"""
async (timeoutMs) => {
  /* text() */
  const settle = (promise) => Promise.race([promise, new Promise((done) => setTimeout(done, timeoutMs))]);
  const images = [...document.images];
  images.forEach((img) => { img.loading = 'eager'; });
  await settle(Promise.all(images.map((img) => img.complete || new Promise((done) => { img.onload = img.onerror = done; }))));
  const doc = document.documentElement, article = document.querySelector('article.bd-article');
  const inArticle = (selector) => article ? [...article.querySelectorAll(selector)] : [];
  const headings = inArticle('h1, h2, h3, h4');
  const section = (el) => {  // the nearest heading above an element, to say where it is
    const above = headings.filter((h) => h.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING);
    return above.length ? text(above[above.length - 1]) : '';
  };
  const kind = (el) => el.matches('div.math') ? 'formula' : el.matches('.pst-scrollable-table-container') ? 'table'
    : el.closest('.cell_output') ? (el.closest('.stderr') ? 'error output' : 'output') : 'code';
  const wide = inArticle('div.highlight pre, .cell_output pre, .cell_output > .output, .pst-scrollable-table-container, div.math')
    .filter((el) => (el.getClientRects().length || el.closest('details, .toggle-hidden, .dropdown')) && el.scrollWidth > el.clientWidth + 1)
    .map((el) => {
      const tex = el.matches('div.math') && el.querySelector('annotation');  // a formula: its TeX source
      const line = (tex ? [tex.textContent.replace(/\s+/g, ' ').trim()] : el.innerText.split('\n'))
        .reduce((a, b) => (b.length > a.length ? b : a), '');
      const style = getComputedStyle(el);  // course.css shades an edge with more behind it (4 gradients)
      const cue = ['auto', 'scroll'].includes(style.overflowX) && style.backgroundAttachment.includes('local')
        && (style.backgroundImage.match(/gradient/g) || []).length >= 4;
      const row = el.querySelector('tr');
      return { kind: kind(el), width: el.scrollWidth, box: el.clientWidth, chars: line.length, line: line.slice(0, 160),
               section: section(el), cue, columns: row ? row.children.length : 0 };
    });
  // what sticks out of the window on the right: the outermost such elements not inside a scrolling box
  function* ancestors(el) { for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) yield p; }
  const clips = (el) => getComputedStyle(el).overflowX !== 'visible';
  const out = (el) => el.getBoundingClientRect().right > doc.clientWidth + 1;
  const sticking = doc.scrollWidth <= doc.clientWidth + 1 ? [] : [...document.body.querySelectorAll('*')]
    .filter((el) => out(el) && !out(el.parentElement) && ![...ancestors(el)].some(clips)).slice(0, 8)
    .map((el) => ({ tag: el.tagName.toLowerCase() + [...el.classList].map((c) => '.' + c).join(''),
                    right: Math.round(el.getBoundingClientRect().right), text: el.textContent.trim().slice(0, 80), section: section(el) }));
  // the smallest text of a figure in pt: Matplotlib's SVG text is drawn as paths scaled by fontsize/100;
  // a mermaid diagram's style sheet gives every label one size, in px
  const smallestText = async (img) => {
    if (!article || !article.contains(img) || !img.currentSrc.endsWith('.svg') || location.protocol === 'file:') return null;
    const svg = await (await fetch(img.currentSrc)).text();
    if (img.classList.contains('diagram')) {
      const base = svg.match(/#[\w-]+\{[^}]*?font-size:\s*([\d.]+)px/);
      return base ? parseFloat(base[1]) * 72 / 96 : null;
    }
    const sizes = [...svg.matchAll(/scale\(([\d.]+) -\1\)/g)].map((m) => 100 * parseFloat(m[1]));
    return sizes.length ? Math.min(...sizes) : null;
  };
  const smallest = await Promise.all(images.map((img) => smallestText(img).catch(() => null)));
  const drawnWidth = (img) => {  // the picture itself: the box less its padding and border (a figure's card)
    const s = getComputedStyle(img);
    const edges = [s.paddingLeft, s.paddingRight, s.borderLeftWidth, s.borderRightWidth].map((v) => parseFloat(v) || 0);
    return Math.max(0, img.getBoundingClientRect().width - edges.reduce((a, b) => a + b));
  };
  // the height a reader sees of an element: none when hidden or in a closed <details>, else its part inside
  // every ancestor that clips (sphinx-togglebutton folds a solution with visibility: hidden in a short card)
  const shownHeight = (el) => {
    if (!el.getClientRects().length || el.closest('details:not([open])') || getComputedStyle(el).visibility === 'hidden') return 0;
    let { top, bottom } = el.getBoundingClientRect();
    for (const p of ancestors(el)) {
      const s = getComputedStyle(p);
      if (s.overflowX === 'visible' && s.overflowY === 'visible') continue;
      const box = p.getBoundingClientRect();
      top = Math.max(top, box.top);
      bottom = Math.min(bottom, box.bottom);
    }
    return Math.max(0, bottom - top);
  };
  const outputs = inArticle('.cell_output pre').filter((el) => shownHeight(el) > 0);
  const fontSize = (el) => parseFloat(getComputedStyle(el).fontSize);
  await settle(document.fonts.ready);  // then what the page fetched, read to its end (tools/page_weight.py)
  return {
    fetched: [...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')]
      .map((e) => ({ url: e.name, blocking: e.renderBlockingStatus || null })),
    elements: document.getElementsByTagName('*').length,
    pageWidth: doc.scrollWidth, windowWidth: doc.clientWidth, sticking, wide,
    images: images.map((img, i) => ({
      src: img.getAttribute('src'), loaded: img.complete && img.naturalWidth > 0, inArticle: !!article && article.contains(img),
      diagram: img.classList.contains('diagram'), alt: img.getAttribute('alt'), natural: img.naturalWidth,
      shown: drawnWidth(img), visible: img.getClientRects().length > 0, section: section(img), smallestTextPt: smallest[i],
    })),
    // code a reader sees with every fold closed, as a share of the page's height; the longest printed output
    shares: {
      height: doc.scrollHeight,
      code: inArticle('.cell_input').reduce((total, el) => total + shownHeight(el), 0) / doc.scrollHeight,
      outputLines: Math.max(0, ...outputs.map((el) => el.textContent.replace(/\n$/, '').split('\n').length)),
    },
    fontSizes: {
      text: article && article.querySelector('p') ? fontSize(article.querySelector('p')) : null,
      inline: inArticle('p span.math > .katex').map(fontSize),
      display: inArticle('div.math .katex-display > .katex').map(fontSize),
    },
    math: [...document.querySelectorAll('.math')].map((el) => ({
      typeset: !!el.querySelector('.katex'), error: !!el.querySelector('.katex-error'), source: el.textContent.slice(0, 80),
    })),
  };
}
""".replace("/* text() */", TEXT)


class Problem(str):
    """A problem's message, with its kind (see the module's docstring)."""

    kind: str

    def __new__(cls, kind: str, message: str) -> Problem:
        problem = super().__new__(cls, message)
        problem.kind = kind
        return problem


@dataclasses.dataclass
class PageReport:
    page: str
    width: int
    problems: list[Problem]
    raw: dict  # what INSPECT_PAGE measured


def figure_text_px(image: dict) -> float | None:
    """The smallest text of a figure or diagram as shown, in CSS pixels (None: not measured)."""
    if image["smallestTextPt"] is None or not (image["visible"] and image["natural"]):
        return None
    return image["smallestTextPt"] * 96 / 72 * min(image["shown"] / image["natural"], 1.0)


def smallest_figure_text(report: dict) -> float | None:
    """The smallest figure or diagram text of a page as shown, in CSS pixels (None: the page has none)."""
    sizes = [px for image in report["images"] if image["inArticle"] and (px := figure_text_px(image)) is not None]
    return min(sizes) if sizes else None


def problems_of(report: dict, *, phone: bool) -> list[Problem]:
    """What is wrong on a page, from what INSPECT_PAGE measured."""
    found = [Problem("load", f"image did not load: {i['src']}") for i in report["images"] if not i["loaded"]]
    for formula in report["math"]:
        if not formula["typeset"] or formula["error"]:
            found.append(Problem("load", f"formula not typeset by KaTeX: {formula['source']!r}"))
    if report["pageWidth"] > report["windowWidth"] + 1:
        culprits = [
            f"{s['tag']} reaching {s['right']} px ({s['text'][:50]!r}, in {s['section']!r})"
            for s in report["sticking"][:4]
        ]
        wider = f"the page is {report['pageWidth']} px wide in a {report['windowWidth']} px window"
        found.append(Problem("sideways", f"{wider}: {'; '.join(culprits)}"))
    for b in report["wide"]:
        where = f"{b['width']} px in a {b['box']} px box ({b['line'][:70]!r}), in {b['section']!r}"
        if not phone:
            found.append(
                Problem("wide", f"{b['kind']} wider than its box, longest line {b['chars']} characters: {where}")
            )
        elif not b["cue"]:
            found.append(Problem("clipped", f"{b['kind']} cut off on the right with nothing showing it: {where}"))
        elif b["kind"] == "formula":
            found.append(Problem("phone-formula", f"formula wider than the phone's column (split it?): {where}"))
    for image in (i for i in report["images"] if i["inArticle"]):
        what = f"{'diagram' if image['diagram'] else 'figure'} in {image['section']!r} ({image['src']})"
        alt = (image["alt"] or "").strip()
        if not phone and (not alt or FILE_NAME_ALT.search(alt)):
            found.append(Problem("alt", f"{what} has no real alt text: {alt[:60]!r}"))
        if not (image["visible"] and image["natural"]):
            continue
        scale = image["shown"] / image["natural"]
        if not phone and scale < MIN_FIGURE_SCALE:
            found.append(Problem("figure", f"{what} shown at {scale:.2f} of its {image['natural']} px"))
        text_px = figure_text_px(image)
        if text_px is not None and text_px < MIN_TEXT_PX - 0.05:
            found.append(Problem("figure", f"{what} text as small as {text_px:.1f} px ({MIN_TEXT_PX} px needed)"))
    return found


def inspect_page(
    context, url: str, *, phone: bool, screenshot: pathlib.Path | None = None, full_page: bool = True
) -> tuple[list[Problem], dict]:
    """Open `url` in `context`, never letting a request leave the machine; return (problems, measurements),
    and write a picture of the page (or of its first screen, ``full_page=False``) to `screenshot`."""
    problems: list[Problem] = []
    page = context.new_page()

    def on(event: str, message, when=lambda _: True):
        page.on(event, lambda x: problems.append(Problem("load", message(x))) if when(x) else None)

    on("console", lambda m: f"console error: {m.text}", lambda m: m.type == "error")
    on("pageerror", lambda error: f"uncaught page error: {error}")
    on("requestfailed", lambda r: f"request failed: {r.url} ({r.failure})", lambda r: is_local(r.url))
    on("response", lambda r: f"HTTP {r.status} for {r.url}", lambda r: r.status >= 400)
    # (no page.route: it would turn the browser's cache off and stop every request in Python)
    on("request", lambda r: f"request to a non-local host: {r.url}", lambda r: not is_local(r.url))
    try:
        page.goto(url, wait_until="load")
        page.add_style_tag(content=LAY_OUT_EVERYTHING)
        report = page.evaluate(INSPECT_PAGE, RENDER_TIMEOUT_MS)
        if screenshot is not None:  # (INSPECT_PAGE waited for every image and font)
            page.screenshot(path=str(screenshot), full_page=full_page)
    finally:
        page.close()
    return problems + problems_of(report, phone=phone), report


def tap(page, selector: str) -> None:
    """Tap the one visible `selector` as a reader does (Playwright clicks where it is shown); AssertionError if none."""
    shown = page.locator(selector).filter(visible=True)
    expect(shown).to_have_count(1, timeout=3_000)
    shown.click(no_wait_after=True)


DRAWERS = [
    (".primary-toggle", "#pst-primary-sidebar-modal", "hamburger"),
    (".secondary-toggle", "#pst-secondary-sidebar-modal", "Contents"),
]
USELESS_ON_A_PHONE = (".btn-fullscreen-button", ".btn-source-repository-button", ".dropdown-download-buttons")


def check_navigation(context, url: str, *, phone: bool) -> list[Problem]:
    """Phone: the hamburger and "Contents" open their drawers; laptop: one search box, the toggle hides the sidebar."""
    problems = []
    page = context.new_page()
    page.goto(url, wait_until="load")
    for button, dialog, what in DRAWERS if phone else []:
        drawer = page.locator(dialog)
        if drawer.count() == 0:
            continue  # a page without that drawer (no sections)
        try:
            tap(page, button)
            expect(drawer.locator("a").first).to_be_visible(timeout=3_000)  # open, showing links
        except AssertionError:
            problems.append(Problem("navigation", f"{what}: tapping the visible button did not open {dialog}"))
            continue
        page.keyboard.press("Escape")
        expect(drawer).to_have_js_property("open", False)
    if not phone:
        searches = page.locator(".search-button, .search-button-field, form.bd-search").filter(visible=True)
        if searches.count() != 1:
            problems.append(Problem("navigation", f"{searches.count()} visible search entry points (one expected)"))
        sidebar = page.locator("#pst-primary-sidebar")
        try:
            expect(sidebar).to_be_visible()
            tap(page, ".primary-toggle")
            expect(sidebar).to_be_hidden(timeout=3_000)  # the theme animates it to visibility: hidden
        except AssertionError:
            problems.append(Problem("navigation", "the visible sidebar toggle did not collapse the sidebar"))
    page.close()
    return problems


# Where the section a link names lands once the jump has ended, and what the header says. The jump has ended
# when the scroll position is the same over two animation frames (course-nav.js names the section in the frame
# after a scroll) with the target's heading on the screen, or after timeoutMs (it landed elsewhere).
LANDED = r"""
async ([href, timeoutMs]) => {
  /* text() */
  const target = document.getElementById(decodeURIComponent(href.slice(1)));
  const heading = target && target.querySelector('h1, h2, h3, h4');
  const frame = () => new Promise((done) => requestAnimationFrame(done));
  for (let end = performance.now() + timeoutMs, last = NaN, still = 0; performance.now() < end; ) {
    await frame();
    still = scrollY === last ? still + 1 : 0;
    last = scrollY;
    const box = heading ? heading.getBoundingClientRect() : { top: -1, bottom: -1 };
    if (still >= 2 && box.top >= 0 && box.bottom <= innerHeight) break;
  }
  const chapterSection = target && (target.closest('.bd-article > section > section') || target.closest('section'));
  const header = document.querySelector('.bd-header-article');
  return {
    top: heading ? heading.getBoundingClientRect().top : null,
    headerBottom: header ? header.getBoundingClientRect().bottom : 0,
    section: text(document.querySelector('.course-header-title__section')),
    expectedSection: text(chapterSection && chapterSection.querySelector(':scope > h2')),
    title: text(document.querySelector('article.bd-article h1')),
  };
}
""".replace("/* text() */", TEXT)
JUMP_TIMEOUT_MS = 1_500  # the fixed wait this replaced: a jump that lands is measured sooner, never later


def check_contents_jumps(context, url: str, *, last: int = 3) -> list[Problem]:
    """On a phone, tap each of the last `last` sections of the "Contents" drawer (far down, where wrong guesses of
    the heights above add up): the heading lands under the header, the drawer closes, the header names the page
    and the section, and shows no button that is useless on a phone."""
    problems = []
    page = context.new_page()
    page.goto(url, wait_until="load")
    links = page.locator('#pst-secondary-sidebar a[href^="#"]').evaluate_all(
        "links => links.filter((a) => a.getClientRects().length).map((a) => a.getAttribute('href'))"
    )[-last:]
    if not links:
        problems.append(Problem("jump", "no section links in the Contents drawer"))
    for number, href in enumerate(links):
        if number:  # each jump from the top of a fresh page, as a reader arrives
            page.goto(url, wait_until="load")
        try:
            tap(page, ".secondary-toggle")
        except AssertionError:
            problems.append(Problem("jump", "no single visible Contents button"))
            break
        page.locator(f'#pst-secondary-sidebar-modal a[href="{href}"]').first.click(no_wait_after=True)
        landed = page.evaluate(LANDED, [href, JUMP_TIMEOUT_MS])
        if page.locator("dialog[open]").count():
            problems.append(Problem("jump", f"{href}: the Contents drawer stayed open after the jump"))
        top, bottom = landed["top"], landed["headerBottom"]
        if top is None or not bottom - 1 <= top <= bottom + 80:
            problems.append(Problem("jump", f"{href}: the heading is at {top} px, the header ends at {bottom:.0f} px"))
        named = page.locator(".course-header-title__page").filter(visible=True)
        if not named.count() or not named.inner_text().strip() or named.inner_text().strip() not in landed["title"]:
            problems.append(Problem("jump", f"the header does not name the page (h1 {landed['title']!r})"))
        if landed["section"] != landed["expectedSection"]:
            names = f"names section {landed['section']!r}, not {landed['expectedSection']!r}"
            problems.append(Problem("jump", f"{href}: the header {names}"))
        if useless := [s for s in USELESS_ON_A_PHONE if page.locator(s).filter(visible=True).count()]:
            problems.append(Problem("jump", f"buttons that do nothing useful on a phone: {useless}"))
    page.close()
    return problems


def screenshot_path(directory: pathlib.Path, relative: str, suffix: str = "") -> pathlib.Path:
    directory.mkdir(parents=True, exist_ok=True)
    return directory / (relative.replace("/", "__").removesuffix(".html") + suffix + ".png")


def check_site(
    html: pathlib.Path,
    pages: list[str] | None = None,
    *,
    screenshots: pathlib.Path | None = None,
    full_page: bool = True,
    navigation: Sequence[str] = (),
) -> list[PageReport]:
    """Every page (or `pages`) at both widths, side by side in two browsers; one report per page and width
    (laptop first), with a screenshot of each in `screenshots` and the buttons clicked on the `navigation` pages."""

    def check_width(phone: bool) -> list[PageReport]:
        width, reports = (PHONE if phone else DESKTOP)["width"], []
        with browser() as instance:  # Playwright's sync API: one instance per thread
            context = new_context(instance, phone=phone)
            for relative in pages or site_pages(html):
                shot = screenshot_path(screenshots, relative, f"-{width}") if screenshots else None
                problems, raw = inspect_page(
                    context, base + relative, phone=phone, screenshot=shot, full_page=full_page
                )
                if relative in navigation:
                    problems += check_navigation(context, base + relative, phone=phone)
                reports.append(PageReport(relative, width, problems, raw))
        return reports

    with serve(html) as base, concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        return [report for reports in pool.map(check_width, (False, True)) for report in reports]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("html", nargs="?", type=pathlib.Path, default=ROOT / "_build" / "html")
    parser.add_argument("--pages", nargs="*", help="pages relative to the site root (default: every page)")
    parser.add_argument("--screenshots", type=pathlib.Path, help="write a full-page screenshot of each page here")
    args = parser.parse_args(argv)
    if not (args.html / "index.html").exists():
        parser.error(f"{args.html} is not a built site (no index.html); run `make book` first")
    reports = check_site(args.html, args.pages, screenshots=args.screenshots)
    for report in reports:
        print(f"{report.page} at {report.width} px: " + ("".join(f"\n  - {p}" for p in report.problems) or "fine"))
    failing = {r.page for r in reports if any(p.kind not in ADVICE for p in r.problems)}
    print(f"{len(failing)} of {len({r.page for r in reports})} pages have problems")
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
