"""Look at the built website as readers do, in Debian's Chromium (Playwright), and list what is wrong.

    python tools/site_check.py [_build/html] [--pages book/05_rope.html ...] [--screenshots DIR] [--json FILE]

Each page is opened at a desktop width (1366 px) and a phone width (390 px). Problems reported:

* both widths: console errors, requests to any host but the local server, images that do not
  load, diagrams that are not drawn, formulas KaTeX could not typeset, the page scrolling
  sideways (document wider than the window);
* desktop: code, printed output, tables or display formulas wider than their box in the
  text column (the block scrolls and hides the end of its lines); a figure or diagram shown at
  less than 0.6 of its natural size; an image whose alt text is empty, a file name or a hash;
* both widths: a figure (Matplotlib SVG) or diagram (mermaid SVG) whose smallest text shows
  below 11 px: on a phone the browser shrinks a figure wider than the column, its text with it;
* phone: the visible hamburger and "Contents" buttons do not open the navigation drawers
  (checked by clicking them, with ``--navigation``); code, output, a table or a formula wider
  than its box that does not show it scrolls (a shade on the edge, course.css); display
  formulas wider than the column are also listed as advice (better split over lines).

tests/site/test_browser.py runs these checks on every page; chapter authors run this command on
their chapter to see what to fix (widths are in CSS pixels, with the longest line of each
block). Exit status 1 when anything is found.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import dataclasses
import functools
import http.server
import json
import pathlib
import shutil
import sys
import threading
import urllib.parse
from collections.abc import Iterator

ROOT = pathlib.Path(__file__).resolve().parents[1]
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
LOCAL_HOSTS = {"127.0.0.1", "localhost", "[::1]", "::1"}
DESKTOP = {"width": 1366, "height": 900}
PHONE = {"width": 390, "height": 844}
MIN_FIGURE_SCALE = 0.6  # a figure shown smaller than this fraction of its natural size is too small
MIN_TEXT_PX = 11.0  # the smallest text a figure or diagram may show, on a desktop and on a phone, in CSS pixels
RENDER_TIMEOUT_MS = 20_000


def chromium_executable() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        raise RuntimeError(
            "Chromium is not installed, so the website cannot be checked in a browser. "
            "Install Debian's package: `apt-get update && apt-get install -y chromium` (.ci/run does this)."
        )
    return path


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".mjs": "text/javascript",
        ".js": "text/javascript",
    }

    def log_message(self, format, *args):
        pass


@contextlib.contextmanager
def serve(directory: pathlib.Path, handler: type = QuietHandler) -> Iterator[str]:
    """Serve `directory` on 127.0.0.1 (a free port) for the duration of the block; yields the base URL."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(directory)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@contextlib.contextmanager
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=chromium_executable(), headless=True, args=CHROMIUM_FLAGS)
        try:
            yield instance
        finally:
            instance.close()


def new_context(instance, *, phone: bool = False, color_scheme: str = "light"):
    if phone:  # a phone: narrow, touch, 2 device pixels per CSS pixel
        return instance.new_context(
            viewport=PHONE, device_scale_factor=2, is_mobile=True, has_touch=True, color_scheme=color_scheme
        )
    return instance.new_context(viewport=DESKTOP, color_scheme=color_scheme)


def html_pages(html: pathlib.Path) -> list[str]:
    """Every page of the site, as paths relative to the site root (assets and sources excluded)."""
    skip = {"_static", "_sources", "_images", "_sphinx_design_static"}
    return sorted(
        p.relative_to(html).as_posix() for p in html.rglob("*.html") if not skip.intersection(p.relative_to(html).parts)
    )


def is_local(url: str) -> bool:
    parts = urllib.parse.urlsplit(url)
    if parts.scheme in ("data", "blob", "about", "file"):
        return True
    return parts.scheme in ("http", "https") and parts.hostname in LOCAL_HOSTS


# Runs in the page: lets images load, then reports what a reader would see.
INSPECT_PAGE = r"""
async (timeoutMs) => {
  const deadline = Date.now() + timeoutMs;
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const images = [...document.images];
  images.forEach((img) => { img.loading = 'eager'; });
  await Promise.race([
    Promise.all(images.map((img) => img.complete ? null : new Promise((r) => { img.onload = img.onerror = r; }))),
    sleep(Math.max(0, deadline - Date.now())),
  ]);
  const article = document.querySelector('article.bd-article');
  const inArticle = (selector) => article ? [...article.querySelectorAll(selector)] : [];
  const heading = (el) => {
    // the nearest heading above the element, to say where it is
    const all = inArticle('h1, h2, h3, h4');
    let found = '';
    for (const h of all) {
      if (h.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING) found = h;
    }
    if (!found) return '';
    const copy = found.cloneNode(true);  // the heading as read: no permalink sign, no KaTeX MathML twin
    copy.querySelectorAll('.headerlink, .katex-mathml').forEach((e) => e.remove());
    return copy.textContent.replace(/\s+/g, ' ').trim();
  };
  const kindOf = (el) => {
    if (el.matches('div.math')) return 'formula';
    if (el.closest('.cell_output')) return el.closest('.stderr') ? 'error output' : 'output';
    if (el.matches('.pst-scrollable-table-container')) return 'table';
    return 'code';
  };
  const blocks = inArticle('div.highlight pre, .cell_output pre, .cell_output > .output, .pst-scrollable-table-container, div.math')
    .filter((el) => el.getClientRects().length > 0 || el.closest('details, .toggle-hidden, .dropdown'));
  const wide = blocks.filter((el) => el.scrollWidth > el.clientWidth + 1).map((el) => {
    const tex = el.matches('div.math') && el.querySelector('annotation');  // a formula: its TeX source
    const lines = tex ? [tex.textContent.replace(/\s+/g, ' ').trim()] : (el.innerText || el.textContent).split('\n');
    const longest = lines.reduce((a, b) => (b.length > a.length ? b : a), '');
    // a box that scrolls shows that it does (course.css: a shade on an edge with more behind it)
    const style = getComputedStyle(el);
    const cue = ['auto', 'scroll'].includes(style.overflowX) && style.backgroundAttachment.includes('local')
      && (style.backgroundImage.match(/gradient/g) || []).length >= 4;
    const row = el.querySelector('tr');
    return {
      kind: kindOf(el), width: el.scrollWidth, box: el.clientWidth, chars: longest.length,
      line: longest.slice(0, 160), first: lines.find((l) => l.trim()) || '', section: heading(el),
      cue, columns: row ? row.children.length : 0,
    };
  });
  // elements that stick out of the window on the right, outside any scrolling box
  const scrolls = (el) => { const o = getComputedStyle(el).overflowX; return o === 'auto' || o === 'scroll' || o === 'hidden' || o === 'clip'; };
  const sticking = [];
  const doc = document.documentElement;
  if (doc.scrollWidth > doc.clientWidth + 1) {
    for (const el of document.body.querySelectorAll('*')) {
      const rect = el.getBoundingClientRect();
      if (rect.right <= doc.clientWidth + 1 || rect.width === 0) continue;
      let p = el.parentElement, clipped = false;
      for (; p && p !== document.body; p = p.parentElement) if (scrolls(p)) { clipped = true; break; }
      if (clipped) continue;
      if (el.parentElement && el.parentElement.getBoundingClientRect().right > doc.clientWidth + 1 && !scrolls(el.parentElement) && el.parentElement !== document.body && el.parentElement.closest('article')) continue;
      sticking.push({ tag: el.tagName.toLowerCase() + (el.className && typeof el.className === 'string' ? '.' + el.className.split(' ').join('.') : ''),
                      right: Math.round(rect.right), text: (el.textContent || '').trim().slice(0, 80), section: heading(el) });
      if (sticking.length >= 8) break;
    }
  }
  const content = inArticle('img');
  // the smallest text of a Matplotlib SVG, in pt (text drawn as paths is scaled by fontsize/100), or of a
  // mermaid diagram, in the diagram's own px (the size its style sheet gives the whole diagram: every label)
  const smallestText = async (img) => {
    if (!content.includes(img) || !img.currentSrc.endsWith('.svg')) return null;
    if (location.protocol === 'file:') return null;  // a page opened from disk may not fetch files
    try {
      const svg = await (await fetch(img.currentSrc)).text();
      if (img.classList.contains('diagram')) {
        const base = svg.match(/#[\w-]+\{[^}]*?font-size:\s*([\d.]+)px/);
        return base ? parseFloat(base[1]) * 72 / 96 : null;  // as pt, like the plots
      }
      const sizes = [...svg.matchAll(/scale\(([\d.]+) -\1\)/g)].map((m) => 100 * parseFloat(m[1]));
      return sizes.length ? Math.min(...sizes) : null;
    } catch (e) { return null; }
  };
  const smallest = await Promise.all(images.map(smallestText));
  // the width the picture itself is drawn at: the box less its padding and border (a figure's card)
  const contentWidth = (img) => {
    const style = getComputedStyle(img);
    const edges = ['paddingLeft', 'paddingRight', 'borderLeftWidth', 'borderRightWidth'].map((k) => parseFloat(style[k]) || 0);
    return Math.max(0, img.getBoundingClientRect().width - edges.reduce((a, b) => a + b, 0));
  };
  // what the page fetched, read to its end (every section laid out, every image loaded, fonts settled):
  // tools/page_weight.py turns it into bytes by kind
  await Promise.race([document.fonts.ready, sleep(Math.max(0, deadline - Date.now()))]);
  const fetched = [...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')]
    .map((e) => ({ url: e.name, blocking: e.renderBlockingStatus || null }));
  return {
    fetched, elements: document.getElementsByTagName('*').length,
    column: article ? article.clientWidth : 0,
    pageWidth: doc.scrollWidth, windowWidth: doc.clientWidth,
    sticking,
    wide,
    images: images.map((img) => ({
      src: img.getAttribute('src'), loaded: img.complete && img.naturalWidth > 0,
      inArticle: content.includes(img), diagram: img.classList.contains('diagram'),
      alt: img.getAttribute('alt'), natural: img.naturalWidth, shown: contentWidth(img),
      visible: img.getClientRects().length > 0, section: heading(img), smallestTextPt: smallest[images.indexOf(img)],
    })),
    // how much of the page is code a reader sees with every fold closed (cells' input: MyST-NB's folded
    // cells and the code of folded solutions not counted) and figures,
    // and the longest printed output, in lines
    shares: (() => {
      const height = doc.scrollHeight;
      // (the content of a closed <details>, a folded cell, keeps its boxes in Chromium: not seen)
      const seen = (el) => el.getClientRects().length > 0 && !el.closest('details:not([open])');
      // the height of an element a reader sees: none when hidden (sphinx-togglebutton folds a solution with
      // visibility: hidden, its boxes keep their height), else the part inside every ancestor that clips
      // (a folded solution's card, overflow: hidden and one title bar high)
      const shownHeight = (el) => {
        if (!seen(el) || getComputedStyle(el).visibility === 'hidden') return 0;
        const rect = el.getBoundingClientRect();
        let top = rect.top, bottom = rect.bottom;
        for (let p = el.parentElement; p && p !== document.body && bottom > top; p = p.parentElement) {
          const style = getComputedStyle(p);
          if (style.overflowY === 'visible' && style.overflowX === 'visible') continue;
          const box = p.getBoundingClientRect();
          top = Math.max(top, box.top);
          bottom = Math.min(bottom, box.bottom);
        }
        return Math.max(0, bottom - top);
      };
      const sum = (els) => els.reduce((total, el) => total + shownHeight(el), 0);
      const outputs = inArticle('.cell_output pre').filter((el) => shownHeight(el) > 0);
      return {
        height,
        code: sum(inArticle('.cell_input')) / height,
        figures: sum(inArticle('img')) / height,
        outputLines: Math.max(0, ...outputs.map((el) => el.textContent.replace(/\n$/, '').split('\n').length)),
      };
    })(),
    // font sizes of the text, of formulas in a line, and of formulas on their own line
    fontSizes: {
      text: article && article.querySelector('p') ? parseFloat(getComputedStyle(article.querySelector('p')).fontSize) : null,
      inline: inArticle('p span.math > .katex').map((el) => parseFloat(getComputedStyle(el).fontSize)),
      display: inArticle('div.math .katex-display > .katex').map((el) => parseFloat(getComputedStyle(el).fontSize)),
    },
    math: [...document.querySelectorAll('.math')].map((el) => ({
      typeset: !!el.querySelector('.katex'), error: !!el.querySelector('.katex-error'), source: el.textContent.slice(0, 80),
    })),
  };
}
"""

ADVICE = {"phone-formula"}  # reported, but not a failure


class Problem(str):
    """A problem's message (a str), with its kind: load, sideways, wide, clipped, figure, alt, navigation or jump."""

    kind: str

    def __new__(cls, kind: str, message: str) -> Problem:
        problem = super().__new__(cls, message)
        problem.kind = kind
        return problem


LAY_OUT_EVERYTHING = ".bd-article section { content-visibility: visible !important; }"
FILE_NAME_ALT = r"(^|/)[\w.-]+\.(png|svg|jpe?g|gif|webp)$|^[0-9a-f]{16,}"


@dataclasses.dataclass
class PageReport:
    page: str
    width: int
    problems: list[Problem]
    raw: dict

    def to_json(self) -> dict:
        return {"page": self.page, "width": self.width, "problems": self.problems, "raw": self.raw}


def alt_problem(alt: str | None) -> str | None:
    import re

    if alt is None or not alt.strip():
        return "has no alt text"
    if re.search(FILE_NAME_ALT, alt.strip(), re.IGNORECASE):
        return f"has a file name for alt text ({alt.strip()[:60]!r})"
    return None


def figure_text_px(image: dict) -> float | None:
    """The smallest text of a figure or diagram as shown on the page, in CSS pixels (None: not measured)."""
    if image["smallestTextPt"] is None or not (image["visible"] and image["natural"]):
        return None
    scale = image["shown"] / image["natural"]
    return image["smallestTextPt"] * 96 / 72 * min(scale, 1.0)


def smallest_figure_text(report: dict) -> float | None:
    """The smallest figure or diagram text of a page as shown, in CSS pixels (None: the page has none)."""
    sizes = [px for image in report["images"] if image["inArticle"] and (px := figure_text_px(image)) is not None]
    return min(sizes) if sizes else None


def figure_text_problems(report: dict) -> list[Problem]:
    found = []
    for image in report["images"]:
        text_px = figure_text_px(image) if image["inArticle"] else None
        if text_px is not None and text_px < MIN_TEXT_PX - 0.05:
            what = "diagram" if image["diagram"] else "figure"
            found.append(
                Problem(
                    "figure",
                    f"{what} text as small as {text_px:.1f} px ({image['smallestTextPt']:g} pt drawn, shown at "
                    f"{image['shown'] / image['natural']:.2f}; {MIN_TEXT_PX} px needed), in {image['section']!r}: "
                    f"{image['src']}",
                )
            )
    return found


def problems_of(report: dict, *, phone: bool) -> list[Problem]:
    """What is wrong on a page, from what INSPECT_PAGE saw."""
    found: list[Problem] = []
    if report["pageWidth"] > report["windowWidth"] + 1:
        culprits = "; ".join(
            f"{s['tag']} reaching {s['right']} px ({s['text'][:50]!r}, in {s['section']!r})"
            for s in report["sticking"][:4]
        )
        found.append(
            Problem(
                "sideways",
                f"the page scrolls sideways: {report['pageWidth']} px wide in a {report['windowWidth']} px window ({culprits})",
            )
        )
    for image in report["images"]:
        if not image["loaded"]:
            found.append(Problem("load", f"image did not load: {image['src']}"))
    for formula in report["math"]:
        if not formula["typeset"]:
            found.append(Problem("load", f"formula not typeset: {formula['source']!r}"))
        elif formula["error"]:
            found.append(Problem("load", f"KaTeX could not typeset: {formula['source']!r}"))
    found += figure_text_problems(report)  # both widths: a phone shrinks figures to its column
    if phone:
        # not a failure (the formula scrolls in its own box), but worth splitting over lines
        found += [
            Problem(
                "phone-formula",
                f"formula wider than the phone's {b['box']} px column: {b['width']} px "
                f"({b['line'][:70]!r}), in {b['section']!r}",
            )
            for b in report["wide"]
            if b["kind"] == "formula"
        ]
        found += [
            Problem(
                "clipped",
                f"{b['kind']} cut off on the right with nothing showing it: {b['width']} px in a {b['box']} px box "
                f"({b['line'][:70]!r}), in {b['section']!r}",
            )
            for b in report["wide"]
            if not b["cue"]
        ]
        return found
    for block in report["wide"]:
        found.append(
            Problem(
                "wide",
                f"{block['kind']} wider than its {block['box']} px box: {block['width']} px, longest line {block['chars']} characters "
                f"({block['line'][:90]!r}), in {block['section']!r}",
            )
        )
    for image in report["images"]:
        if not image["inArticle"]:
            continue
        what = "diagram" if image["diagram"] else "figure"
        if problem := alt_problem(image["alt"]):
            found.append(Problem("alt", f"{what} in {image['section']!r} {problem}: {image['src']}"))
        if not (image["visible"] and image["natural"]):
            continue
        scale = image["shown"] / image["natural"]
        if scale < MIN_FIGURE_SCALE:
            found.append(
                Problem(
                    "figure",
                    f"{what} shown at {scale:.2f} of its natural size ({image['natural']} px drawn, "
                    f"{image['shown']:.0f} px shown), in {image['section']!r}: {image['src']}",
                )
            )
    return found


def inspect_page(
    context, url: str, *, phone: bool, screenshot: pathlib.Path | None = None, full_page: bool = True
) -> tuple[list[Problem], dict]:
    """Open `url` in `context`; return (problems found, what the page reported). With `screenshot`, a
    picture of the whole page (or, with ``full_page=False``, of the first screen) is written there."""
    from playwright.sync_api import Error as PlaywrightError

    problems: list[Problem] = []
    page = context.new_page()

    def on_route(route):
        if is_local(route.request.url):
            route.continue_()
        else:
            route.abort()  # recorded below; never let it leave the machine

    page.on(
        "console", lambda m: problems.append(Problem("load", f"console error: {m.text}")) if m.type == "error" else None
    )
    page.on("pageerror", lambda error: problems.append(Problem("load", f"uncaught page error: {error}")))
    page.on(
        "request",
        lambda r: (
            None if is_local(r.url) else problems.append(Problem("load", f"request to a non-local host: {r.url}"))
        ),
    )
    page.on(
        "requestfailed",
        lambda r: (
            problems.append(Problem("load", f"request failed: {r.url} ({r.failure})")) if is_local(r.url) else None
        ),
    )
    page.on(
        "response",
        lambda r: problems.append(Problem("load", f"HTTP {r.status} for {r.url}")) if r.status >= 400 else None,
    )
    page.route("**/*", on_route)
    try:
        page.goto(url, wait_until="load")
        for attempt in range(3):  # index.html is a meta-refresh redirect: inspect the page it lands on
            try:
                # lay out every section now: on narrow screens the site lets the browser skip
                # sections far from the screen (content-visibility), which would hide their
                # overflow from these measurements and leave them blank in full-page screenshots
                page.add_style_tag(content=LAY_OUT_EVERYTHING)
            except PlaywrightError as error:
                if "context was destroyed" not in str(error) or attempt == 2:
                    raise
                page.wait_for_load_state("load")
                continue
            try:
                report = page.evaluate(INSPECT_PAGE, RENDER_TIMEOUT_MS)
                break
            except PlaywrightError as error:
                if "context was destroyed" not in str(error) or attempt == 2:
                    raise
                page.wait_for_load_state("load")
        problems += problems_of(report, phone=phone)
        if screenshot is not None:
            page.wait_for_load_state("networkidle")  # late images and fonts are in the picture
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(screenshot), full_page=full_page)
    finally:
        page.close()
    return problems, report


# Clicks a visible button and reports whether the drawer it should open is open and shows links.
OPEN_DRAWER = r"""
async ([button, dialog]) => {
  const visible = (el) => !!el && el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
  const shown = [...document.querySelectorAll(button)].filter(visible);
  if (shown.length !== 1) return { error: `${shown.length} visible ${button} buttons` };
  const box = shown[0].getBoundingClientRect();
  return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
}
"""


def check_navigation(context, url: str, *, phone: bool) -> list[Problem]:
    """Click the visible navigation buttons as a reader does; return what did not work."""
    problems: list[Problem] = []
    page = context.new_page()
    try:
        page.goto(url, wait_until="load")
        page.wait_for_load_state("networkidle")
        if phone:
            for button, dialog, what in [
                (".primary-toggle", "#pst-primary-sidebar-modal", "hamburger (site navigation)"),
                (".secondary-toggle", "#pst-secondary-sidebar-modal", "Contents (this page's sections)"),
            ]:
                if page.locator(dialog).count() == 0:
                    continue  # a page without that drawer (e.g. no sections)
                where = page.evaluate(OPEN_DRAWER, [button, dialog])
                if "error" in where:
                    problems.append(Problem("navigation", f"{what}: {where['error']}"))
                    continue
                page.mouse.click(where["x"], where["y"])  # a tap where the reader sees the button
                try:
                    page.wait_for_function(
                        "d => { const el = document.querySelector(d); return el && el.open && el.querySelector('a') && el.getBoundingClientRect().width > 100; }",
                        arg=dialog,
                        timeout=3_000,
                    )
                except Exception:
                    problems.append(Problem("navigation", f"{what}: tapping the visible button did not open {dialog}"))
                    continue
                page.keyboard.press("Escape")
                page.wait_for_function("d => !document.querySelector(d).open", arg=dialog, timeout=3_000)
        else:
            searches = page.evaluate(
                "() => [...document.querySelectorAll('.search-button, .search-button-field, form.bd-search')]"
                ".filter((el) => el.getClientRects().length > 0 && !el.closest('dialog')).length"
            )
            if searches != 1:
                problems.append(
                    Problem("navigation", f"{searches} visible search entry points on a desktop (one expected)")
                )
            where = page.evaluate(OPEN_DRAWER, [".primary-toggle", ""])
            if "error" in where:
                problems.append(Problem("navigation", f"sidebar toggle: {where['error']}"))
            else:
                before = page.locator("#pst-primary-sidebar").bounding_box()
                page.mouse.click(where["x"], where["y"])
                page.wait_for_timeout(600)  # the theme animates the collapse
                hidden = page.evaluate(
                    "() => getComputedStyle(document.querySelector('#pst-primary-sidebar')).visibility === 'hidden'"
                )
                if not (before and before["width"] > 100 and hidden):
                    problems.append(
                        Problem(
                            "navigation", "sidebar toggle: clicking the visible button did not collapse the sidebar"
                        )
                    )
    finally:
        page.close()
    return problems


# The links of this page's contents (the "Contents" drawer) that a reader can tap: those shown.
SECTION_LINKS = r"""
() => [...document.querySelectorAll('#pst-secondary-sidebar a[href^="#"]')]
  .filter((a) => a.getClientRects().length > 0).map((a) => a.getAttribute('href'))
"""
# Where the section a link names is, once the jump has settled, and what the header shows.
LANDED = r"""
(href) => {
  const target = document.getElementById(decodeURIComponent(href.slice(1)));
  const heading = target && target.querySelector('h1, h2, h3, h4');
  const header = document.querySelector('.bd-header-article');
  const visible = (el) => !!el && el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
  const text = (el) => (el ? el.textContent.replace(/\s+/g, ' ').trim() : '');
  const h2 = target && (target.matches('section') ? target : target.closest('section'));
  const chapterSection = h2 && (h2.closest('.bd-article > section > section') || h2);
  const named = chapterSection && chapterSection.querySelector(':scope > h2');
  const copy = named && named.cloneNode(true);
  if (copy) copy.querySelectorAll('.headerlink, .katex-mathml').forEach((e) => e.remove());
  return {
    top: heading ? heading.getBoundingClientRect().top : null,
    headerBottom: header ? header.getBoundingClientRect().bottom : 0,
    drawerOpen: !!document.querySelector('dialog[open]'),
    page: text(document.querySelector('.course-header-title__page')),
    pageVisible: visible(document.querySelector('.course-header-title__page')),
    section: text(document.querySelector('.course-header-title__section')),
    expectedSection: text(copy),
    title: text(document.querySelector('article.bd-article h1')).replace(/#$/, '').trim(),
    useless: ['.btn-fullscreen-button', '.btn-source-repository-button', '.dropdown-download-buttons']
      .filter((s) => [...document.querySelectorAll(s)].some(visible)),
  };
}
"""
JUMP_SETTLE_MS = 1_500  # sections lay out and figures load after the jump; the page settles within this


def check_contents_jumps(context, url: str, *, last: int = 3) -> list[Problem]:
    """On a phone: open the "Contents" drawer, tap each of the last `last` sections shown in it (the ones
    far down the page, where a wrong guess of the heights above adds up) and see that the jump lands on
    the section's heading, below the header, with the drawer closed; and that the header names the page
    and the section, and shows no button that does nothing on a phone."""
    problems: list[Problem] = []
    page = context.new_page()
    try:
        page.goto(url, wait_until="load")
        links = page.evaluate(SECTION_LINKS)[-last:]
        if not links:
            problems.append(Problem("jump", "no section links in the Contents drawer"))
        for href in links:
            page.goto(url, wait_until="load")
            page.wait_for_timeout(300)
            where = page.evaluate(OPEN_DRAWER, [".secondary-toggle", ""])
            if "error" in where:
                problems.append(Problem("jump", f"Contents button: {where['error']}"))
                break
            page.mouse.click(where["x"], where["y"])
            link = page.locator(f'#pst-secondary-sidebar-modal a[href="{href}"]').first
            link.wait_for(state="visible", timeout=3_000)
            box = link.bounding_box()
            page.mouse.click(box["x"] + min(20, box["width"] / 2), box["y"] + box["height"] / 2)  # a tap
            page.wait_for_timeout(JUMP_SETTLE_MS)
            landed = page.evaluate(LANDED, href)
            if landed["drawerOpen"]:
                problems.append(Problem("jump", f"{href}: the Contents drawer stayed open after the jump"))
            top, bottom = landed["top"], landed["headerBottom"]
            if top is None or not (bottom - 1 <= top <= bottom + 80):
                problems.append(
                    Problem(
                        "jump",
                        f"{href}: the jump landed with the section's heading at {top} px from the top of the "
                        f"window (the header ends at {bottom:.0f} px)",
                    )
                )
            if not landed["pageVisible"] or not landed["page"] or landed["page"] not in landed["title"]:
                problems.append(
                    Problem("jump", f"the header does not name the page ({landed['page']!r}, h1 {landed['title']!r})")
                )
            if landed["section"] != landed["expectedSection"]:
                problems.append(
                    Problem(
                        "jump",
                        f"{href}: the header names section {landed['section']!r}, not {landed['expectedSection']!r}",
                    )
                )
            if landed["useless"]:
                problems.append(Problem("jump", f"buttons that do nothing useful on a phone: {landed['useless']}"))
    finally:
        page.close()
    return problems


def screenshot_path(directory: pathlib.Path, relative: str, suffix: str = "") -> pathlib.Path:
    return directory / (relative.replace("/", "__").removesuffix(".html") + suffix + ".png")


def check_site(
    html: pathlib.Path,
    pages: list[str] | None = None,
    *,
    screenshots: pathlib.Path | None = None,
    full_page: bool = True,
    navigation: bool | list[str] = False,
) -> list[PageReport]:
    """Every page (or `pages`) at both widths; one report per page and width (desktop first).

    `navigation`: click the navigation buttons on every chapter page (True) or on these pages. With
    `screenshots`, a picture of each page at each width (the whole page, or the first screen with
    ``full_page=False``) goes there. The two widths are checked side by side, each in its own browser
    (a machine has two cores).
    """
    pages = pages or html_pages(html)
    clicked = [p for p in pages if p.startswith("book/")] if navigation is True else list(navigation or [])
    with serve(html) as base, concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        jobs = [
            pool.submit(_check_width, base, pages, phone, screenshots, full_page, clicked) for phone in (False, True)
        ]
        return [report for job in jobs for report in job.result()]


def _check_width(
    base: str, pages: list[str], phone: bool, screenshots: pathlib.Path | None, full_page: bool, clicked: list[str]
) -> list[PageReport]:
    reports = []
    width = (PHONE if phone else DESKTOP)["width"]
    with browser() as instance:  # Playwright's sync API: one instance per thread
        context = new_context(instance, phone=phone)
        for relative in pages:
            shot = screenshot_path(screenshots, relative, f"-{width}") if screenshots else None
            problems, raw = inspect_page(context, base + relative, phone=phone, screenshot=shot, full_page=full_page)
            if relative in clicked:
                problems += check_navigation(context, base + relative, phone=phone)
            reports.append(PageReport(relative, width, problems, raw))
        context.close()
    return reports


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("html", nargs="?", type=pathlib.Path, default=ROOT / "_build" / "html")
    parser.add_argument("--pages", nargs="*", help="pages relative to the site root (default: every page)")
    parser.add_argument(
        "--screenshots", type=pathlib.Path, help="write a full-page screenshot of each page at each width here"
    )
    parser.add_argument("--navigation", action="store_true", help="also click the navigation buttons")
    parser.add_argument("--json", type=pathlib.Path, help="write every report (problems and raw measurements) here")
    parser.add_argument(
        "--figure-text", action="store_true", help="also print each page's smallest figure text at both widths"
    )
    args = parser.parse_args(argv)
    if not (args.html / "index.html").exists():
        parser.error(f"{args.html} is not a built site (no index.html); run `make book` first")
    reports = check_site(args.html, args.pages, screenshots=args.screenshots, navigation=args.navigation)
    if args.json:
        args.json.write_text(json.dumps([r.to_json() for r in reports], indent=1, ensure_ascii=False))
    for report in reports:
        if report.problems:
            print(f"{report.page} at {report.width} px:")
            for problem in report.problems:
                print(f"  - {problem}")
    if args.figure_text:
        print("smallest figure or diagram text as shown, CSS px:")
        for report in reports:
            text = smallest_figure_text(report.raw)
            if text is not None:
                print(f"  {report.page:40} {report.width:5} px: {text:5.1f}")
    total = sum(1 for r in reports for p in r.problems if p.kind not in ADVICE)
    pages_with = {r.page for r in reports if any(p.kind not in ADVICE for p in r.problems)}
    print(f"{total} problems on {len(pages_with)} of {len({r.page for r in reports})} pages")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
