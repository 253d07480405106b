"""What a page of the built site makes a browser fetch, in gzip bytes (level 6) by kind, what blocks its
first paint, and its element count: deterministic causes of a slow page, from tools/site_check.py's
report of each page (tests/site/test_browser.py budgets them).

    python tools/page_weight.py [_build/html]     (a table of every page at both widths)
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
    return len(gzip.compress(path.read_bytes(), compresslevel=6)) if path.is_file() else 0


def page_weight(html: pathlib.Path, report: site_check.PageReport) -> dict:
    """Gzip bytes by kind (each file once), the render-blocking requests and the element count of a page."""
    sizes = dict.fromkeys(sorted(set(KINDS.values())), 0)
    urls = [urllib.parse.urlsplit(entry["url"]) for entry in report.raw["fetched"]]
    files = {html / urllib.parse.unquote(url.path).lstrip("/") for url in urls if url.scheme in ("http", "https")}
    for path in {path / "index.html" if path.is_dir() else path for path in files}:
        sizes[KINDS.get(path.suffix, "data")] += gzip_size(path)
    blocking = {entry["url"].split("/")[-1] for entry in report.raw["fetched"] if entry["blocking"] == "blocking"}
    return {
        "page": report.page,
        "width": report.width,
        "gzip_bytes": sizes,
        "render_blocking": sorted(blocking),
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
