"""Lighthouse on the built website, served gzip-compressed from loopback as a static host serves it.

    python tools/lighthouse_audit.py [_build/html] [--pages book/intro.html ...] [--json FILE]

Runs the Lighthouse pinned in package.json with Debian's chromium on every page of the site but
the index.html redirect (or `--pages`), twice: the desktop preset and the default mobile emulation (a mid-range
phone on a slow 4G link, simulated). Prints one table and exits 1 when a category that does not depend on
timing is below `REQUIRED` (accessibility, best practices and SEO: 1.0 on both presets). The performance
score is a timing taken under simulated throttling, so it moves with the machine's load: it is reported
against `TARGETS` (desktop 0.95, phone 0.9) and never fails a run. A page whose performance misses its
target is measured twice more and reported as the median of the three runs (Lighthouse's own advice for
noisy machines). `--report FILE` prints the table of rows written earlier with `--json`.

`make audit` runs it on every page; `make test` (tests/site/test_lighthouse.py) on two pages without the
performance category, and asserts the non-timing categories and the deterministic budgets (unused CSS, DOM
size, image sizes); CI (.ci/run) then prints the performance of three pages, `--retries 0`, never failing.
Python's http.server sends nothing compressed, so the pages are served here by a small handler
that gzips text (HTML, CSS, JavaScript, SVG, JSON), as every static host does.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import pathlib
import statistics
import subprocess
import sys
from typing import Any

import site_check

ROOT = pathlib.Path(__file__).resolve().parents[1]
LIGHTHOUSE = ROOT / "node_modules" / "lighthouse" / "cli" / "index.js"
CATEGORIES = ("performance", "accessibility", "best-practices", "seo")
PRESETS = ("desktop", "mobile")
REQUIRED: dict[str, float] = {"accessibility": 1.0, "best-practices": 1.0, "seo": 1.0}  # on both presets
TARGETS: dict[str, float] = {"desktop": 0.95, "mobile": 0.9}  # performance: reported, never a failure
RETRIES = 2  # extra runs, for the median, when performance misses its target
METRICS = ("first-contentful-paint", "largest-contentful-paint", "total-blocking-time", "cumulative-layout-shift")
COMPRESSIBLE = ("text/", "application/javascript", "application/json", "image/svg+xml", "application/xml")


class GzipHandler(site_check.QuietHandler):
    """Static files over HTTP/1.1, text gzip-compressed when the browser accepts it."""

    protocol_version = "HTTP/1.1"
    _cache: dict[tuple[str, float], bytes] = {}

    def send_head(self):
        path = self.translate_path(self.path)
        ctype = self.guess_type(path)
        accepts = "gzip" in self.headers.get("Accept-Encoding", "")
        if os.path.isdir(path) or not os.path.isfile(path) or not accepts or not ctype.startswith(COMPRESSIBLE):
            return super().send_head()
        key = (path, os.path.getmtime(path))
        if key not in self._cache:
            self._cache[key] = gzip.compress(pathlib.Path(path).read_bytes(), compresslevel=6)
        data = self._cache[key]
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Vary", "Accept-Encoding")
        self.end_headers()
        return io.BytesIO(data)


def site_pages(html: pathlib.Path) -> list[str]:
    """Every page of the site but index.html (a redirect to book/intro.html)."""
    return [page for page in site_check.html_pages(html) if page != "index.html"]


def run_lighthouse(
    url: str, preset: str, audits: tuple[str, ...] = (), categories: tuple[str, ...] = CATEGORIES
) -> dict[str, Any]:
    """One Lighthouse run; returns its JSON report. It runs the audits of ``categories`` and the ``audits``
    named (Lighthouse runs the union; with ``categories=()`` only those audits, scored in the categories
    that hold them)."""
    if not LIGHTHOUSE.exists():
        raise RuntimeError(f"{LIGHTHOUSE} is missing: run `python tools/offline_site.py install` (npm ci)")
    command = [
        "node",
        str(LIGHTHOUSE),
        url,
        "--output=json",
        "--output-path=stdout",
        "--quiet",
        "--disable-full-page-screenshot",  # a picture of the whole page for the HTML report, which is not written
        "--chrome-flags=--headless=new --no-sandbox --disable-gpu --no-first-run --disable-background-networking",
    ]
    if preset == "desktop":
        command.append("--preset=desktop")
    if categories:
        command.append(f"--only-categories={','.join(categories)}")
    if audits:
        command.append(f"--only-audits={','.join(audits)}")
    env = dict(os.environ, CHROME_PATH=site_check.chromium_executable())
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    if result.returncode != 0 or not result.stdout.strip().startswith("{"):
        raise RuntimeError(f"lighthouse failed on {url} ({preset}):\n{result.stderr[-3000:]}")
    return json.loads(result.stdout)


def summary(report: dict[str, Any]) -> dict[str, Any]:
    """Scores, the main metrics and the audits that lost points in the categories other than performance."""
    categories = report["categories"]  # only those holding an audit that ran (run_lighthouse's ``audits``)
    scores = {name: categories[name]["score"] if name in categories else None for name in CATEGORIES}
    metrics = {name: report["audits"][name]["displayValue"] for name in METRICS if name in report["audits"]}
    failing = sorted(
        {
            ref["id"]
            for name in CATEGORIES[1:]
            for ref in categories.get(name, {}).get("auditRefs", [])
            if ref.get("weight", 0) > 0 and report["audits"][ref["id"]].get("score") not in (None, 1)
        }
    )
    audits = report["audits"]

    def items(audit_id: str) -> list[dict[str, Any]]:
        return audits.get(audit_id, {}).get("details", {}).get("items", [])

    return {
        "scores": scores,
        "metrics": metrics,
        "failing_audits": failing,
        "transfer_kib": round(sum(item.get("transferSize", 0) for item in items("network-requests")) / 1024),
        # deterministic causes of speed, read from the same run (tests/site/test_lighthouse.py budgets them)
        "unused_css_bytes": sum(item.get("wastedBytes", 0) for item in items("unused-css-rules")),
        "dom_elements": audits.get("dom-size", {}).get("numericValue"),
        "oversized_images": [item.get("url") for item in items("uses-responsive-images")]
        + [item.get("url") for item in items("image-size-responsive")],
    }


def below(scores: dict[str, float]) -> list[str]:
    """The categories other than performance that are below `REQUIRED`."""
    return [f"{n} {scores[n]} < {low}" for n, low in REQUIRED.items() if scores[n] is None or scores[n] < low]


# what `make test` runs instead of the performance category: the categories that do not depend on timing and
# the audits that measure the deterministic causes of speed (tests/site/test_lighthouse.py budgets them);
# leaving the timing out makes a run no cheaper (~20 s of CPU either way), so make test runs fewer pages
NON_TIMING = CATEGORIES[1:]
BUDGET_AUDITS = ("dom-size", "unused-css-rules", "uses-responsive-images", "network-requests")


def audit(
    html: pathlib.Path, jobs: list[tuple[str, str]], *, retries: int = RETRIES, timing: bool = True
) -> list[dict[str, Any]]:
    """Each (page, preset) in `jobs`; performance is the median of 1 + `retries` runs when one run misses its
    target. With ``timing=False`` only `NON_TIMING` and `BUDGET_AUDITS` run (performance is None)."""
    rows = []
    lighthouse_options: dict[str, Any] = {} if timing else {"categories": NON_TIMING, "audits": BUDGET_AUDITS}
    with site_check.serve(html, GzipHandler) as base:
        for page, preset in jobs:
            if preset not in PRESETS:
                raise ValueError(f"preset must be one of {PRESETS}, got {preset!r}")
            runs = [summary(run_lighthouse(base + page, preset, **lighthouse_options))]
            if timing and (runs[0]["scores"]["performance"] or 0) < TARGETS[preset]:
                runs += [summary(run_lighthouse(base + page, preset)) for _ in range(retries)]
            row = dict(runs[0])
            performance = [run["scores"]["performance"] for run in runs]
            median = statistics.median(performance) if timing else None
            row["scores"] = dict(row["scores"], performance=median)
            row.update(page=page, preset=preset, performance_runs=performance, problems=below(row["scores"]))
            rows.append(row)
            print(format_row(row), flush=True)
    return rows


HEADER = f"{'page':40} {'preset':8} {'perf':>5} {'a11y':>5} {'b.p.':>5} {'seo':>5} {'KiB':>5}  FCP / LCP / TBT / CLS"


def format_row(row: dict[str, Any]) -> str:
    scores = row["scores"]
    cells = " ".join("    -" if scores[name] is None else f"{scores[name]:5.2f}" for name in CATEGORIES)
    metrics = " / ".join(row["metrics"].get(name, "?") for name in METRICS)
    runs = (
        f"  (runs {', '.join(f'{p:.2f}' for p in row['performance_runs'])})" if len(row["performance_runs"]) > 1 else ""
    )
    failing = f"  lost points: {', '.join(row['failing_audits'])}" if row["failing_audits"] else ""
    target = TARGETS[row["preset"]]
    missed = f"  (performance below its target {target})" if (scores["performance"] or target) < target else ""
    return f"{row['page']:40} {row['preset']:8} {cells} {row['transfer_kib']:5d}  {metrics}{runs}{missed}{failing}"


def report(rows: list[dict[str, Any]]) -> str:
    """The table of rows, and a line per page below `REQUIRED`."""
    lines = [HEADER] + [format_row(row) for row in rows]
    lines += [
        f"BELOW REQUIRED: {row['page']} ({row['preset']}): {'; '.join(row['problems'])}"
        for row in rows
        if row["problems"]
    ]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("html", nargs="?", type=pathlib.Path, default=ROOT / "_build" / "html")
    parser.add_argument(
        "--pages", nargs="*", help="pages relative to the site root (default: every page but index.html)"
    )
    parser.add_argument("--presets", nargs="*", choices=PRESETS, default=PRESETS, help="default: both")
    parser.add_argument("--retries", type=int, default=RETRIES, help="extra runs when performance misses its target")
    parser.add_argument("--json", type=pathlib.Path, help="write the rows here")
    parser.add_argument("--report", type=pathlib.Path, help="print the table of rows written earlier with --json")
    args = parser.parse_args(argv)
    if args.report:
        if not args.report.exists():
            print(f"no Lighthouse rows in {args.report} (the run that writes them did not get that far)")
            return 1
        print(report(json.loads(args.report.read_text())))
        return 0
    if not (args.html / "index.html").exists():
        parser.error(f"{args.html} is not a built site (no index.html); run `make book` first")
    print(HEADER, flush=True)
    jobs = [(page, preset) for page in args.pages or site_pages(args.html) for preset in args.presets]
    rows = audit(args.html, jobs, retries=args.retries)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rows, indent=1))
    failed = [row for row in rows if row["problems"]]
    for row in failed:
        print(f"BELOW REQUIRED: {row['page']} ({row['preset']}): {'; '.join(row['problems'])}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
