"""The built website as a reader sees it, in a real browser (Debian's Chromium driven by Playwright).

The site in `_build/html` (built once per session by the `built_site` fixture) is served on
127.0.0.1 and every page is visited. On each page: no console errors, no request to any host
but the local server, every mermaid diagram became an SVG (not mermaid's error picture), every
formula was typeset by MathJax, every image loaded. Also: the search page finds a word, a folded
solution opens on click, plots stay on white in dark mode, and a page opened straight from disk
(file://) still renders its diagram and formulas. A screenshot of every page goes to
`test-artifacts/screenshots/`.

No browser is downloaded: Chromium comes from Debian (`.ci/run` installs it); without it these
tests fail, they do not skip.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import pathlib
import shutil
import threading
import urllib.parse

import pytest

from conftest import ROOT

pytestmark = pytest.mark.book

ARTIFACTS = ROOT / "test-artifacts" / "screenshots"
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
LOCAL_HOSTS = {"127.0.0.1", "localhost", "[::1]", "::1"}
SEARCH_WORD = "equivariant"  # on the landing page (book/intro.md) and in chapter 1
RENDER_TIMEOUT_MS = 20_000


# ------------------------------------------------------------------ plumbing


def chromium_executable() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.fail(
            "Chromium is not installed, so the website cannot be checked in a browser. "
            "Install Debian's package: `apt-get update && apt-get install -y chromium` (.ci/run does this)."
        )
    return path


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".mjs": "text/javascript", ".js": "text/javascript"}

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


@contextlib.contextmanager
def serve(directory: pathlib.Path):
    """Serve `directory` on 127.0.0.1 (a free port) for the duration of the block; yields the base URL."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(directory)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@contextlib.contextmanager
def browser_context(color_scheme: str = "light"):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_executable(), headless=True, args=CHROMIUM_FLAGS)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=color_scheme)
            yield context
        finally:
            browser.close()


def html_pages(html: pathlib.Path) -> list[str]:
    """Every page of the site, as paths relative to the site root (assets and sources excluded)."""
    skip = {"_static", "_sources", "_images", "_sphinx_design_static"}
    return sorted(
        p.relative_to(html).as_posix() for p in html.rglob("*.html") if not skip.intersection(p.relative_to(html).parts)
    )


def is_local(url: str) -> bool:
    parts = urllib.parse.urlsplit(url)
    if parts.scheme in ("data", "blob", "about"):
        return True
    if parts.scheme == "file":
        return True
    return parts.scheme in ("http", "https") and parts.hostname in LOCAL_HOSTS


# Runs in the page: waits for mermaid and MathJax, makes lazy images load, then reports what it sees.
INSPECT_PAGE = """
async (timeoutMs) => {
  const deadline = Date.now() + timeoutMs;
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const diagrams = () => [...document.querySelectorAll('.mermaid')].filter((el) => !el.closest('.mermaid-fullscreen-modal'));
  // a diagram inside a folded block is drawn only once it is visible: unfold its containers
  const reveal = (el) => {
    for (let p = el.parentElement; p; p = p.parentElement) {
      if (p.tagName === 'DETAILS') p.open = true;
      if (p.classList.contains('toggle-hidden')) p.querySelector(':scope > .admonition-title .toggle-button, :scope > .toggle-button')?.click();
    }
    el.scrollIntoView();
  };
  while (Date.now() < deadline && !diagrams().every((el) => el.querySelector('svg'))) {
    diagrams().filter((el) => el.getAttribute('data-mermaid-deferred') === 'true').forEach(reveal);
    await sleep(100);
  }
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    await Promise.race([MathJax.startup.promise, sleep(Math.max(0, deadline - Date.now()))]);
  }
  const images = [...document.images];
  images.forEach((img) => { img.loading = 'eager'; });
  await Promise.race([
    Promise.all(images.map((img) => img.complete ? null : new Promise((r) => { img.onload = img.onerror = r; }))),
    sleep(Math.max(0, deadline - Date.now())),
  ]);
  const mathElements = [...document.querySelectorAll('.math')];
  return {
    diagrams: diagrams().map((el) => {
      const svg = el.querySelector('svg');
      return {
        svg: !!svg,
        error: !!svg && (svg.getAttribute('aria-roledescription') === 'error' || /Syntax error/i.test(svg.textContent)),
        source: (el.getAttribute('data-original-code') || el.textContent).slice(0, 80),
      };
    }),
    math: mathElements.map((el) => ({
      typeset: !!el.querySelector('mjx-container'),
      error: !!el.querySelector('mjx-merror'),
      source: el.textContent.slice(0, 80),
    })),
    images: images.map((img) => ({ src: img.getAttribute('src'), loaded: img.complete && img.naturalWidth > 0 })),
  };
}
"""


def check_page(context, url: str, screenshot: pathlib.Path | None = None) -> tuple[list[str], dict]:
    """Visit `url` and return (problems found, what the page reported)."""
    from playwright.sync_api import Error as PlaywrightError

    problems: list[str] = []
    page = context.new_page()

    def on_console(message):
        if message.type == "error":
            problems.append(f"console error: {message.text}")

    def on_request(request):
        if not is_local(request.url):
            problems.append(f"request to a non-local host: {request.url}")

    def on_response(response):
        if response.status >= 400:
            problems.append(f"HTTP {response.status} for {response.url}")

    def on_route(route):
        if is_local(route.request.url):
            route.continue_()
        else:
            route.abort()  # recorded by on_request; never let it leave the machine

    page.on("console", on_console)
    page.on("pageerror", lambda error: problems.append(f"uncaught page error: {error}"))
    page.on("request", on_request)
    page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url} ({r.failure})") if is_local(r.url) else None)
    page.on("response", on_response)
    page.route("**/*", on_route)
    try:
        page.goto(url, wait_until="load")
        for attempt in range(3):  # index.html is a meta-refresh redirect: inspect the page it lands on
            try:
                report = page.evaluate(INSPECT_PAGE, RENDER_TIMEOUT_MS)
                break
            except PlaywrightError as error:
                if "context was destroyed" not in str(error) or attempt == 2:
                    raise
                page.wait_for_load_state("load")
        page.wait_for_load_state("networkidle")
        for diagram in report["diagrams"]:
            if not diagram["svg"]:
                problems.append(f"mermaid diagram not rendered: {diagram['source']!r}")
            elif diagram["error"]:
                problems.append(f"mermaid drew its error picture for: {diagram['source']!r}")
        for formula in report["math"]:
            if not formula["typeset"]:
                problems.append(f"formula not typeset: {formula['source']!r}")
            elif formula["error"]:
                problems.append(f"MathJax error in formula: {formula['source']!r}")
        for image in report["images"]:
            if not image["loaded"]:
                problems.append(f"image did not load: {image['src']}")
        if screenshot is not None:
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(screenshot), full_page=True)
    finally:
        page.close()
    return problems, report


def screenshot_path(relative: str, suffix: str = "") -> pathlib.Path:
    return ARTIFACTS / (relative.replace("/", "__").removesuffix(".html") + suffix + ".png")


@pytest.fixture(scope="module")
def site(built_site) -> pathlib.Path:
    if not built_site.ok:
        pytest.fail("the book did not build, so there is no site to check (see test_book_builds_strictly):\n" + built_site.log_tail())
    return built_site.html


# ------------------------------------------------------------------ tests


def test_every_page_renders_offline_without_errors(site):
    pages = html_pages(site)
    assert "book/intro.html" in pages and "search.html" in pages, pages
    problems: dict[str, list[str]] = {}
    totals = {"diagrams": 0, "math": 0, "images": 0}
    with serve(site) as base, browser_context() as context:
        for relative in pages:
            found, report = check_page(context, base + relative, screenshot_path(relative))
            if found:
                problems[relative] = found
            for key in totals:
                totals[key] += len(report[key])
    assert not problems, "\n".join(f"{page}:\n  " + "\n  ".join(found) for page, found in problems.items())
    # the checks above looked at something: the landing page alone has a diagram, formulas and a logo
    assert totals["diagrams"] >= 1 and totals["math"] >= 2 and totals["images"] >= 1, totals


def test_search_finds_a_known_word(site):
    with serve(site) as base, browser_context() as context:
        page = context.new_page()
        page.goto(f"{base}search.html?q={SEARCH_WORD}", wait_until="load")
        page.wait_for_selector("ul.search li a", timeout=RENDER_TIMEOUT_MS)
        hits = page.eval_on_selector_all("ul.search li a", "links => links.map((a) => a.getAttribute('href'))")
        page.screenshot(path=str(screenshot_path("search", f"-{SEARCH_WORD}")), full_page=True)
    assert any("intro" in href for href in hits), hits


def test_a_folded_solution_opens_on_click(site):
    pages = [p for p in html_pages(site) if "solution" in (site / p).read_text()]
    with serve(site) as base, browser_context() as context:
        checked = []
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
            solution.locator("button.toggle-button").first.click()  # the chevron a reader clicks
            body.wait_for(state="visible", timeout=5_000)
            page.screenshot(path=str(screenshot_path(relative, "-solution-open")), full_page=False)
            checked.append(relative)
            page.close()
    assert checked, "no page has a folded solution (`.solution.dropdown`), so folding could not be checked"


def test_plots_stay_on_white_in_dark_mode(site):
    chapters = [p for p in html_pages(site) if p.startswith("book/") and (site / "_sources" / p).with_suffix(".ipynb").exists()]
    assert chapters, "no notebook pages were built"
    with serve(site) as base, browser_context(color_scheme="dark") as context:
        for relative in ["book/intro.html", chapters[0]]:
            problems, _ = check_page(context, base + relative, screenshot_path(relative, "-dark"))
            assert not problems, problems
        page = context.new_page()
        page.goto(base + chapters[0], wait_until="load")
        assert page.evaluate("document.documentElement.dataset.theme") == "dark"
        plots = page.locator(".cell_output img")
        assert plots.count(), f"{chapters[0]} has no plot to check"
        backgrounds = plots.evaluate_all("imgs => imgs.map((img) => getComputedStyle(img).backgroundColor)")
        edges = []
        for i in range(min(plots.count(), 3)):
            plots.nth(i).evaluate("img => img.scrollIntoView({block: 'center'})")  # clear of the sticky header
            edges.append(white_fraction_of_edges(page.screenshot(clip=plots.nth(i).bounding_box())))
    assert set(backgrounds) == {"rgb(255, 255, 255)"}, backgrounds
    # what a reader sees: the plot's frame is white, not the dark page showing through
    assert min(edges) > 0.9, edges


def white_fraction_of_edges(png: bytes) -> float:
    """Fraction of the pixels on an image's outer 3-pixel frame that are near white."""
    import io

    import numpy as np
    from PIL import Image

    pixels = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)  # (height, width, 3)
    frame = np.concatenate([pixels[:3].reshape(-1, 3), pixels[-3:].reshape(-1, 3), pixels[:, :3].reshape(-1, 3), pixels[:, -3:].reshape(-1, 3)])
    return float((frame.min(axis=1) >= 235).mean())


def test_a_page_opened_from_disk_renders_diagrams_and_math(site):
    # a reader who builds the site and opens _build/html/index.html has no server: file:// pages
    with browser_context() as context:
        problems, report = check_page(context, (site / "book" / "intro.html").as_uri(), screenshot_path("book/intro", "-file"))
    assert not problems, problems
    assert report["diagrams"] and report["math"], report


def test_the_check_catches_a_broken_diagram(site, tmp_path):
    """The page check can fail: the landing page with a diagram mermaid cannot parse is reported."""
    for entry in site.iterdir():
        (tmp_path / entry.name).symlink_to(entry)
    (tmp_path / "book").unlink()
    (tmp_path / "book").mkdir()
    for entry in (site / "book").iterdir():
        (tmp_path / "book" / entry.name).symlink_to(entry)
    intro = (site / "book" / "intro.html").read_text()
    assert intro.count("flowchart TD") == 1, "the landing page's chapter map is the diagram this test breaks"
    (tmp_path / "book" / "intro.html").unlink()
    (tmp_path / "book" / "intro.html").write_text(intro.replace("flowchart TD", "flowchart TD\n    this is -- not ((valid mermaid", 1))
    with serve(tmp_path) as base, browser_context() as context:
        problems, _ = check_page(context, base + "book/intro.html")
    assert any("mermaid" in p.lower() for p in problems), problems
