"""What a page of the built website makes a browser fetch, in gzip bytes by kind, and what blocks its
first paint: deterministic causes of a slow page (tests/site/test_browser.py budgets them; no timing).

tools/site_check.py opens each page in Chromium, lays out every section, loads every image, lets the fonts
settle and reports the URLs the page fetched (with Chromium's render-blocking status of each) and its
element count. Here each fetched file of the site is counted once, at its size gzip-compressed at level 6
(as tools/lighthouse_audit.py serves the site), by kind: html, css, js, font, image, data.

    python tools/page_weight.py [_build/html]     (prints the table for every page at both widths)
"""

from __future__ import annotations

import functools
import gzip
import pathlib
import sys
import urllib.parse

import site_check

ROOT = pathlib.Path(__file__).resolve().parents[1]
KINDS = {".html": "html", ".css": "css", ".js": "js", ".mjs": "js", ".json": "data"}
KINDS |= dict.fromkeys((".woff2", ".woff", ".ttf", ".otf"), "font")
KINDS |= dict.fromkeys((".svg", ".png", ".jpg", ".jpeg", ".gif", ".webp", ".ico"), "image")


@functools.cache
def gzip_size(path: pathlib.Path) -> int:
    return len(gzip.compress(path.read_bytes(), compresslevel=6))


def site_file(html: pathlib.Path, url: str) -> pathlib.Path | None:
    """The file of the site at `html` that a loopback `url` names (None for data: URLs and the like)."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https"):
        return None
    path = html / urllib.parse.unquote(parts.path).lstrip("/")
    return path / "index.html" if path.is_dir() else path


def page_weight(html: pathlib.Path, report: site_check.PageReport) -> dict:
    """Gzip bytes by kind, the render-blocking requests and the element count of one inspected page."""
    sizes = dict.fromkeys(sorted(set(KINDS.values())), 0)
    files = {found for entry in report.raw["fetched"] if (found := site_file(html, entry["url"]))}
    for found in files:
        sizes[KINDS.get(found.suffix, "data")] += gzip_size(found) if found.is_file() else 0
    blocking = sorted(
        {entry["url"].split("/")[-1] for entry in report.raw["fetched"] if entry["blocking"] == "blocking"}
    )
    return {
        "page": report.page,
        "width": report.width,
        "gzip_bytes": sizes,
        "render_blocking": blocking,
        "elements": report.raw["elements"],
    }


def main(argv: list[str]) -> int:
    html = pathlib.Path(argv[0]) if argv else ROOT / "_build" / "html"
    rows = [page_weight(html, report) for report in site_check.check_site(html)]
    kinds = list(rows[0]["gzip_bytes"])
    print(f"{'page':40} {'px':>4} " + " ".join(f"{k:>6}" for k in kinds) + "  blocking elements  (gzip KiB)")
    for row in rows:
        sizes = " ".join(f"{row['gzip_bytes'][k] / 1024:6.1f}" for k in kinds)
        print(f"{row['page']:40} {row['width']:4d} {sizes}  {len(row['render_blocking']):8d} {row['elements']:8d}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
