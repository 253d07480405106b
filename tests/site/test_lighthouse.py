"""Lighthouse CI on two representative pages, served gzip-compressed from loopback as `make audit` serves every
page: chapter 5 (the heaviest page) with the desktop preset and chapter 12 (tables, explorables) on the phone.

What is asserted does not depend on timing: Lighthouse CI's assertions of lighthouserc.yml (accessibility,
best practices and SEO 1.0; DOM size and images larger than shown within their budgets) and the bytes of
unused CSS, read from its reports. These runs leave out the performance category, a timing under simulated
throttling that moves with the machine's load: CI (.ci/run) measures it on three pages afterwards and prints
it against its targets (desktop 0.95, phone 0.9), never failing a run; `make audit` measures every page
(tools/lighthouse_audit.py). A run costs about 20 s of CPU with or without the timing, so `make test` runs
two. Bytes, render-blocking requests and element counts of every page at both widths are budgeted in
tests/site/test_browser.py.

A control shows the checks can fail: the landing page with an image without alt text and 300 KB of
style rules it never uses.
"""

from __future__ import annotations

import concurrent.futures
import json

import pytest

import lighthouse_audit
import site_check
from conftest import ROOT
from lighthouse_audit import TIMELESS

pytestmark = pytest.mark.book

RUNS = [("book/05_rope.html", "desktop"), ("book/12_experiments.html", "mobile")]
# Measured on 2026-12-02 (the values in the comments), with headroom; raise one only with a reason.
# bytes of style rules a page loads and does not use at load: 22,723 (the landing page, phone); PurgeCSS
# keeps the rules of what appears only later (drawers, the search dialog, folded solutions). Raised from
# 26 KiB for the phone reading rules (scroll shades, row-by-row tables, the header's section name, print):
# 26,638 on chapter 5 (phone), measured after they landed; 25,905 on chapter 5 (desktop) and 27,296 on chapter 12
# (phone) on 2026-12-03 (it moves by ~600 bytes between runs: what is "used at load" depends on when it is read).
# Lighthouse CI's assertions can count the style sheets with unused rules, not the bytes: budgeted here.
UNUSED_CSS_BUDGET = 28 * 1024
# what the control's two faults must fail: its only audits (a fifth full run would cost ~23 s of CPU)
CONTROL = {"onlyAudits": ["image-alt", "unused-css-rules"]}


@pytest.fixture(scope="module")
def site(built_site):
    if not built_site.ok:
        pytest.fail("the book did not build:\n" + built_site.log_tail())
    try:
        site_check.chromium_executable()
    except RuntimeError as error:
        pytest.fail(str(error))
    return built_site.html


def unused_css_bytes(report: dict) -> int:
    """The bytes of style rules a page loads and does not use at load, from Lighthouse's report."""
    return sum(item["wastedBytes"] for item in report["audits"]["unused-css-rules"]["details"].get("items", []))


def deterministic_problems(run: lighthouse_audit.Run) -> list[str]:
    """What a Lighthouse CI run shows wrong that does not depend on timing: its failed assertions
    (lighthouserc.yml) and unused CSS over its budget."""
    over = [(lighthouse_audit.page_of(r["requestedUrl"]), unused_css_bytes(r)) for r in run.reports]
    return run.problems() + [
        f"{page}: {n} bytes of unused CSS > {UNUSED_CSS_BUDGET}" for page, n in over if n > UNUSED_CSS_BUDGET
    ]


@pytest.fixture(scope="module")
def control_run(site, tmp_path_factory):
    """The control's run (the landing page with an image without alt text and 300 KB of unused style rules),
    started in the background by the first test that asks for it: it runs beside the two pages' runs."""
    root = tmp_path_factory.mktemp("control")
    for entry in site.iterdir():
        (root / entry.name).symlink_to(entry)
    (root / "book").unlink()
    (root / "book").mkdir()
    for entry in (site / "book").iterdir():
        (root / "book" / entry.name).symlink_to(entry)
    rules = "".join(f".unused-{i} {{ margin: {i}px; padding: {i}px; }}\n" for i in range(8000))  # ~300 KB
    (root / "book" / "unused.css").write_text(rules)
    intro = (site / "book" / "intro.html").read_text()
    (root / "book" / "intro.html").unlink()
    page = intro.replace("</head>", '<link rel="stylesheet" href="unused.css"></head>', 1)
    page = page.replace(
        '<article class="bd-article">', '<article class="bd-article"><img src="../_static/logo.svg">', 1
    )
    (root / "book" / "intro.html").write_text(page)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        yield pool.submit(lighthouse_audit.lighthouse_ci, root, ["book/intro.html"], "mobile", only=CONTROL)


def test_two_pages_meet_the_non_timing_checks(site, control_run):
    # (control_run: the control's run starts now, beside these two, which run side by side: three on two cores)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        runs = list(pool.map(lambda job: lighthouse_audit.lighthouse_ci(site, [job[0]], job[1], only=TIMELESS), RUNS))
    out = ROOT / "test-artifacts" / "lighthouse.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    found = [
        {"preset": run.preset, "failed": run.failed, "unused_css_bytes": list(map(unused_css_bytes, run.reports))}
        for run in runs
    ]
    out.write_text(json.dumps(found, indent=1))
    assert [(lighthouse_audit.page_of(r["requestedUrl"]), run.preset) for run in runs for r in run.reports] == RUNS
    for report in (report for run in runs for report in run.reports):  # served as a static host serves it
        [page] = [
            r for r in report["audits"]["network-requests"]["details"]["items"] if r["resourceType"] == "Document"
        ]
        assert page["transferSize"] < page["resourceSize"] / 3, page  # gzip-compressed (by Lighthouse CI's server)
    failed = {run.preset: deterministic_problems(run) for run in runs}
    assert not any(failed.values()), f"{failed}\n" + "\n".join(run.printed for run in runs)


def test_the_checks_fail_on_a_missing_alt_text_and_unused_css(control_run):
    run = control_run.result()
    [report] = run.reports
    assert report["categories"]["accessibility"]["score"] == 0 and report["audits"]["image-alt"]["score"] == 0
    problems = " ".join(deterministic_problems(run))
    assert "categories.accessibility minScore >= 1, found 0" in problems and "unused CSS" in problems, problems
