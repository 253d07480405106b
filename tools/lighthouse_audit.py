"""Lighthouse (package.json's, in Debian's Chromium) on the built website, served by site_check (gzip, loopback).

    python tools/lighthouse_audit.py [_build/html] [--pages book/intro.html ...] [--retries N] [--json FILE]

Every page but the index.html redirect, with the desktop preset and the default phone emulation. Exit status
1 when accessibility, best practices or SEO is below 1.0. Performance is a timing under simulated throttling
that moves with the machine's load: it is reported against its target (desktop 0.95, phone 0.9) and never
fails; a page that misses it is measured `--retries` more times and shown as the median.
"""

from __future__ import annotations

import argparse
import concurrent.futures
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
REQUIRED = {"accessibility": 1.0, "best-practices": 1.0, "seo": 1.0}  # on both presets
TARGETS = {"desktop": 0.95, "mobile": 0.9}  # performance: reported, never a failure
METRICS = ("first-contentful-paint", "largest-contentful-paint", "total-blocking-time", "cumulative-layout-shift")
# without timing (make test): the other categories and the audits of the deterministic causes of speed
BUDGET_AUDITS = ("dom-size", "unused-css-rules", "uses-responsive-images", "network-requests")


def run_lighthouse(url: str, preset: str, audits: tuple[str, ...] = (), categories=CATEGORIES) -> dict[str, Any]:
    """One Lighthouse run of the audits of `categories` and of `audits`; its JSON report."""
    if not LIGHTHOUSE.exists():
        raise RuntimeError(f"{LIGHTHOUSE} is missing: run `python tools/offline_site.py install` (npm ci)")
    flags = " ".join(["--headless=new", *site_check.CHROMIUM_FLAGS, f'--host-resolver-rules="{site_check.OFFLINE}"'])
    command = ["node", str(LIGHTHOUSE), url, "--output=json", "--quiet", f"--chrome-flags={flags}"]
    command += ["--disable-full-page-screenshot"] + (["--preset=desktop"] if preset == "desktop" else [])
    command += [f"--only-categories={','.join(categories)}"] if categories else []
    command += [f"--only-audits={','.join(audits)}"] if audits else []
    env = dict(os.environ, CHROME_PATH=site_check.chromium_executable())
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    if result.returncode != 0 or not result.stdout.startswith("{"):
        raise RuntimeError(f"lighthouse failed on {url} ({preset}):\n{result.stderr[-3000:]}")
    return json.loads(result.stdout)


def summary(report: dict[str, Any]) -> dict[str, Any]:
    """Scores, main metrics, the audits that lost points outside performance, and the deterministic budgets."""
    audits, categories = report["audits"], report["categories"]  # categories: those holding an audit that ran

    def items(audit: str) -> list[dict[str, Any]]:
        return audits.get(audit, {}).get("details", {}).get("items", [])

    refs = [ref for name in CATEGORIES[1:] for ref in categories.get(name, {}).get("auditRefs", [])]
    return {
        "scores": {name: categories[name]["score"] if name in categories else None for name in CATEGORIES},
        "metrics": {name: audits[name]["displayValue"] for name in METRICS if name in audits},
        "failing_audits": sorted({r["id"] for r in refs if r["weight"] and audits[r["id"]]["score"] not in (None, 1)}),
        "transfer_kib": round(sum(item.get("transferSize", 0) for item in items("network-requests")) / 1024),
        "unused_css_bytes": sum(item.get("wastedBytes", 0) for item in items("unused-css-rules")),
        "dom_elements": audits.get("dom-size", {}).get("numericValue"),
        "oversized_images": [
            i.get("url") for a in ("uses-responsive-images", "image-size-responsive") for i in items(a)
        ],
    }


def below(scores: dict[str, float | None]) -> list[str]:
    """The categories other than performance below `REQUIRED`."""
    return [f"{name} {scores[name]} < {low}" for name, low in REQUIRED.items() if (scores[name] or 0) < low]


def audit(html: pathlib.Path, jobs: list[tuple[str, str]], *, retries: int = 2, timing: bool = True) -> list[dict]:
    """A row per (page, preset) of `jobs`; with ``timing=False`` no performance, only `BUDGET_AUDITS` besides."""
    options: dict[str, Any] = {} if timing else {"categories": CATEGORIES[1:], "audits": BUDGET_AUDITS}

    def row(job: tuple[str, str]) -> dict:
        page, preset = job
        runs = [summary(run_lighthouse(base + page, preset, **options))]
        if timing and (runs[0]["scores"]["performance"] or 0) < TARGETS[preset]:
            runs += [summary(run_lighthouse(base + page, preset)) for _ in range(retries)]
        performance = [run["scores"]["performance"] for run in runs]
        row = runs[0] | {"page": page, "preset": preset, "performance_runs": performance}
        row["scores"]["performance"] = statistics.median(performance) if timing else None
        row["problems"] = below(row["scores"])
        print(format_row(row), flush=True)
        return row

    # runs without the timing side by side (two cores); a timing is taken alone, with the machine to itself
    with site_check.serve(html) as base, concurrent.futures.ThreadPoolExecutor(1 if timing else 2) as pool:
        return list(pool.map(row, jobs))


HEADER = f"{'page':40} {'preset':8} {'perf':>5} {'a11y':>5} {'b.p.':>5} {'seo':>5} {'KiB':>5}  FCP / LCP / TBT / CLS"


def format_row(row: dict[str, Any]) -> str:
    """One line of the table: scores, KiB transferred, metrics, and what missed its target or lost points."""
    scores, target = row["scores"], TARGETS[row["preset"]]
    cells = " ".join("    -" if scores[name] is None else f"{scores[name]:5.2f}" for name in CATEGORIES)
    line = f"{row['page']:40} {row['preset']:8} {cells} {row['transfer_kib']:5d}  "
    line += " / ".join(row["metrics"].get(name, "?") for name in METRICS)
    if len(row["performance_runs"]) > 1:
        line += f"  (runs {', '.join(f'{p:.2f}' for p in row['performance_runs'])})"
    if (scores["performance"] or target) < target:
        line += f"  (performance below its target {target})"
    return line + (f"  lost points: {', '.join(row['failing_audits'])}" if row["failing_audits"] else "")


def failures(rows: list[dict[str, Any]]) -> list[str]:
    return [f"BELOW REQUIRED: {r['page']} ({r['preset']}): {'; '.join(r['problems'])}" for r in rows if r["problems"]]


def report(rows: list[dict[str, Any]]) -> str:
    """The table of rows, and a line per row below `REQUIRED`."""
    return "\n".join([HEADER] + [format_row(row) for row in rows] + failures(rows))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("html", nargs="?", type=pathlib.Path, default=ROOT / "_build" / "html")
    parser.add_argument("--pages", nargs="*", help="pages relative to the site root (default: every page)")
    parser.add_argument("--retries", type=int, default=2, help="extra runs when performance misses its target")
    parser.add_argument("--json", type=pathlib.Path, help="write the rows here")
    args = parser.parse_args(argv)
    print(HEADER, flush=True)
    pages = args.pages or site_check.site_pages(args.html)
    rows = audit(args.html, [(page, preset) for page in pages for preset in TARGETS], retries=args.retries)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rows, indent=1))
    print(*failures(rows), sep="\n")
    return 1 if failures(rows) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
