"""Lighthouse CI (package.json's @lhci/cli, in Debian's Chromium) on the built website, a run per preset.

    python tools/lighthouse_audit.py [_build/html] [--pages book/intro.html ...] [--runs N] [--reports DIR]

Every page but the index.html redirect, with the desktop preset and the default phone emulation: one Lighthouse
CI run (collect, then assert) per preset, in a folder of its own, so that its assertions never mix the two.
``lighthouserc.yml`` holds the settings and the assertions. Exit status 1 when an assertion fails at level
"error": accessibility, best practices and SEO 1.0, and the deterministic causes of speed. Performance is a
timing under simulated throttling that moves with the machine's load: asserted at level "warn" against its
target (desktop 0.95, phone 0.9), so reported and never a failure; with ``--runs N`` the median of N runs.
``--reports DIR``: Lighthouse's HTML and JSON reports there (``lhci upload --target=filesystem``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import pathlib
import subprocess
import sys
import tempfile
import urllib.parse
from typing import Any

import yaml

import site_check

ROOT = pathlib.Path(__file__).resolve().parents[1]
LHCI = ROOT / "node_modules" / ".bin" / "lhci"
CONFIG = ROOT / "lighthouserc.yml"
TARGETS = {"desktop": 0.95, "mobile": 0.9}  # performance: reported, never a failure
# without timing (make test): the categories other than performance, and the audits of the deterministic
# causes of speed (the categories that hold them are then scored on them alone)
TIMELESS = {
    "onlyCategories": ["accessibility", "best-practices", "seo"],
    "onlyAudits": [
        "dom-size",
        "unused-css-rules",
        "uses-responsive-images",
        "image-size-responsive",
        "network-requests",
    ],
}


@dataclasses.dataclass
class Run:
    preset: str
    reports: list[dict[str, Any]]  # Lighthouse's JSON report of each page and run
    failed: list[dict[str, Any]]  # Lighthouse CI's failed assertions (its assertion-results.json)
    printed: str  # what `lhci assert` printed

    def problems(self, level: str = "error") -> list[str]:
        """The failed assertions at `level`, one line each: ``book/x.html: categories.seo minScore >= 1, found 0.92``."""
        return [
            f"{page_of(a['url'])}: {'.'.join(filter(None, (a['auditId'], a.get('auditProperty'))))} "
            f"{a['name']} {a['operator']} {a['expected']}, found {a['actual']}"
            for a in self.failed
            if a["level"] == level
        ]


def page_of(url: str) -> str:
    return urllib.parse.urlsplit(url).path.lstrip("/")


def lighthouse_ci(
    html: pathlib.Path,
    pages: list[str],
    preset: str,
    *,
    runs: int = 1,
    only: dict | None = None,
    reports: pathlib.Path | None = None,
) -> Run:
    """One Lighthouse CI run of `pages` of the site in `html` with one preset. ``only``: settings that leave
    the timing out (e.g. ``TIMELESS``); None: every category, performance asserted at level "warn"."""
    if not LHCI.exists():
        raise RuntimeError(f"{LHCI} is missing: run `python tools/offline_site.py install` (npm ci)")
    config = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))
    collect, assertions = config["ci"]["collect"], config["ci"]["assert"]["assertions"]
    collect |= {"staticDistDir": str(html), "url": [f"http://localhost/{page}" for page in pages]}
    collect |= {"numberOfRuns": runs, "chromePath": site_check.chromium_executable()}
    collect["settings"] |= ({"preset": "desktop"} if preset == "desktop" else {}) | (only or {})
    if only is None:
        assertions["categories:performance"] = ["warn", {"minScore": TARGETS[preset], "aggregationMethod": "median"}]
    if reports is not None:
        config["ci"]["upload"] = {"target": "filesystem", "outputDir": str(reports.resolve() / preset)}
    with tempfile.TemporaryDirectory(prefix=f"lhci-{preset}-") as folder:  # its results go to .lighthouseci/
        (pathlib.Path(folder) / "lighthouserc.json").write_text(json.dumps(config))
        printed = ""
        for step in ("collect", "assert", "upload")[: 3 if reports else 2]:
            command = [str(LHCI), step, "--config=lighthouserc.json"]
            done = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=1800)
            if step != "assert" and done.returncode:
                raise RuntimeError(f"lhci {step} failed ({preset}):\n{(done.stdout + done.stderr)[-3000:]}")
            printed += done.stdout + done.stderr if step == "assert" else ""
        results = pathlib.Path(folder) / ".lighthouseci"
        found = [json.loads(path.read_text()) for path in sorted(results.glob("lhr-*.json"))]
        asserted = results / "assertion-results.json"
        failed = [a for a in json.loads(asserted.read_text()) if not a["passed"]] if asserted.exists() else []
    return Run(preset, found, failed, printed)


def scores(report: dict[str, Any]) -> str:
    """A report in one line: its page, category scores and what it transferred."""
    transfer = sum(r.get("transferSize", 0) for r in report["audits"]["network-requests"]["details"]["items"])
    categories = "  ".join(f"{name} {c['score']:.2f}" for name, c in report["categories"].items())
    return f"{page_of(report['requestedUrl']):40} {categories}  {transfer / 1024:.0f} KiB"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("html", nargs="?", type=pathlib.Path, default=ROOT / "_build" / "html")
    parser.add_argument("--pages", nargs="*", help="pages relative to the site root (default: every page)")
    parser.add_argument("--runs", type=int, default=1, help="Lighthouse runs per page and preset (performance: median)")
    parser.add_argument("--reports", type=pathlib.Path, help="write Lighthouse's reports here, a folder per preset")
    args = parser.parse_args(argv)
    pages, failed = args.pages or site_check.site_pages(args.html), False
    for preset in TARGETS:
        run = lighthouse_ci(args.html, pages, preset, runs=args.runs, reports=args.reports)
        print(f"== {preset} (performance target {TARGETS[preset]})", *map(scores, run.reports), sep="\n")
        print(run.printed.strip() or "every assertion passed", flush=True)
        failed |= bool(run.problems())
    return int(failed)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
