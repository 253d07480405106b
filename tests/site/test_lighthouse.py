"""Lighthouse on three representative pages (the landing page, chapter 5, chapter 12), served
gzip-compressed from loopback as `make audit` serves every page, with the thresholds of
tools/lighthouse_audit.py. Each page runs once, on the phone (performance 0.85, and here also
accessibility, best practices and SEO 1.0, as on the desktop); chapter 5, the page closest to both
performance thresholds, also runs with the desktop preset (performance 0.95, the rest 1.0). Four runs,
not six: they run alone at the end of the session (tests/conftest.py), so each costs its whole time;
`make audit` runs both presets on every page. The rows go to test-artifacts/lighthouse.json.

A control shows the check can fail: the landing page with a 2 MB script that blocks rendering
scores below the phone threshold.
"""

from __future__ import annotations

import base64
import json
import random

import pytest

import lighthouse_audit
import site_check
from conftest import ROOT

pytestmark = pytest.mark.book

RUNS = [
    ("book/intro.html", "mobile"),
    ("book/05_rope.html", "mobile"),
    ("book/05_rope.html", "desktop"),
    ("book/12_experiments.html", "mobile"),
]


@pytest.fixture(scope="module")
def site(built_site, quiet_machine):  # Lighthouse measures speed: nothing else may run (tests/conftest.py)
    if not built_site.ok:
        pytest.fail("the book did not build:\n" + built_site.log_tail())
    try:
        site_check.chromium_executable()
    except RuntimeError as error:
        pytest.fail(str(error))
    return built_site.html


def test_three_pages_meet_the_lighthouse_thresholds(site):
    rows = lighthouse_audit.audit(site, RUNS)
    out = ROOT / "test-artifacts" / "lighthouse.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rows, indent=1))
    assert [(row["page"], row["preset"]) for row in rows] == RUNS
    # on the phone too: accessibility, best practices and SEO as on the desktop
    others = {name: low for name, low in lighthouse_audit.THRESHOLDS["desktop"].items() if name != "performance"}
    for row in (row for row in rows if row["preset"] == "mobile"):
        row["problems"] += [f"{n} {row['scores'][n]} < {low}" for n, low in others.items() if row["scores"][n] < low]
    failed = {f"{row['page']} ({row['preset']})": row["problems"] for row in rows if row["problems"]}
    table = "\n".join(lighthouse_audit.format_row(row) for row in rows)
    assert not failed, f"{failed}\n{lighthouse_audit.HEADER}\n{table}"


def test_a_page_with_a_render_blocking_script_fails_the_phone_threshold(built_site, tmp_path):
    # a control that needs no quiet machine: the 2 MB script alone keeps the simulated phone far below the
    # threshold (it runs beside other tests, and other work can only lower a score further)
    assert built_site.ok, built_site.log_tail()
    site = built_site.html
    for entry in site.iterdir():
        (tmp_path / entry.name).symlink_to(entry)
    (tmp_path / "book").unlink()
    (tmp_path / "book").mkdir()
    for entry in (site / "book").iterdir():
        (tmp_path / "book" / entry.name).symlink_to(entry)
    filler = base64.b64encode(random.Random(0).randbytes(1_500_000)).decode()  # 2 MB that gzip cannot shrink
    (tmp_path / "book" / "slow.js").write_text(f"var filler = '{filler}';\n")
    intro = (site / "book" / "intro.html").read_text()
    (tmp_path / "book" / "intro.html").unlink()
    (tmp_path / "book" / "intro.html").write_text(intro.replace("</head>", '<script src="slow.js"></script></head>', 1))
    with site_check.serve(tmp_path, lighthouse_audit.GzipHandler) as base:
        row = lighthouse_audit.summary(lighthouse_audit.run_lighthouse(base + "book/intro.html", "mobile"))
    assert lighthouse_audit.below("mobile", row["scores"]), row
