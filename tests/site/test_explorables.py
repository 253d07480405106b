"""Explorable figures and self-check questions on the website, in Debian's Chromium (Playwright).

A scratch book (tests/_helpers.py's ``scratch_book``) places every kind of explorable with its one-line
call, a static figure tagged ``explorable-fallback`` before the first, and a chapter's questions; it is
built with the course's configuration and extensions. In a browser, for every explorable, each control is
set (by keyboard where it can be: Home and End reach the edge values) to several values, and the numbers the
figure publishes (``script.pe-state``: ``{"kind", "params", "drawn"}``, CONTRIBUTING.md) are compared with
``posenc_lib.explore.reference``: the library's functions on the same parameters. The error measured is,
for each array drawn, max |page - library| / max |library| (float64 arithmetic on both sides); it must be
<= 1e-6. Integers (T5's buckets, which both sides compute through float32 logarithms as the library does, and
ALiBi's spans) must be equal. The largest differences go to ``test-artifacts/explorables.json``.

Every explorable of the course's own site is checked the same way at its start (the chapter's own
parameters) and after the first setting of its kind (the scratch book tries every setting of every kind on
the same script), and each check is shown to fail when the site's script has one formula broken.

Also: keyboard and touch (a 390 px phone) operate every kind of control; no page scrolls sideways; axe,
with Lighthouse's accessibility settings, finds nothing in light or dark mode; the Play button is not
there for readers who ask for reduced motion; the static figure is shown without JavaScript and in
print; a page with explorables loads one more script, at most 30 KB gzipped, and a page without loads
nothing of them.
"""

from __future__ import annotations

import gzip
import json
import math
import pathlib
import re
import shutil
from collections.abc import Iterator
from typing import Any

import nbformat
import pytest
from bs4 import BeautifulSoup

import site_check
from _helpers import scratch_book
from conftest import ROOT, build
from posenc_lib import explore
from posenc_lib.explore.reference import reference

# a scratch book of its own (make test-explorables: -m "not book"); the last test, marked book too, reads the
# course's website and runs with the website's checks (make test-site)
pytestmark = pytest.mark.scratch

ARTIFACTS = ROOT / "test-artifacts"
RESULTS = json.loads((ROOT / "book" / "data" / "experiments.json").read_text())
PAGE = "book/explorables.html"
TOLERANCE = 1e-6
BUDGET_GZIP_BYTES = 30 * 1024
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"

# the one-line calls a chapter author writes, each in a cell tagged remove-input
CALLS = [
    ("sinusoidal", "pe.explore.sinusoidal(d_model=64, base=10000)"),
    ("rope", "pe.explore.rope(base=10000, head_dim=64)"),
    ("alibi", "pe.explore.alibi(n_heads=12)"),
    ("rope_scaling", "pe.explore.rope_scaling(factor=4, original_max_len=4096)"),
    ("t5_buckets", "pe.explore.t5_buckets(num_buckets=32, max_distance=128)"),
    # 18 buckets: float64 logarithms would put r = -8 in another bucket than the library's float32 ones
    ("t5_buckets", "pe.explore.t5_buckets(num_buckets=18, max_distance=128, probe=-8)"),
    ("experiment_curves", "pe.explore.experiment_curves(results)"),
]
QUESTIONS = 'pe.questions.show("alibi")'
FALLBACK = """\
distance = torch.arange(-256, 257)
fig, ax = plt.subplots(figsize=(6, 2.6))
ax.plot(distance, pe.sinusoidal_dot_by_distance(distance, 64))
ax.set_title("PE(p) · PE(p + Δ), d = 64 (the static figure)")
plt.show()"""

# Control settings tried on each kind, in order (each step keeps what the steps before set).
# "home" and "end" press those keys on a slider: its first and last values, whatever they are.
SETTINGS: dict[str, list[dict[str, Any]]] = {
    "sinusoidal": [
        {"d_model": "home"},
        {"d_model": "end", "base": "home"},
        {"base": "end", "layout": "concatenated"},
        {"d_model": 64, "max_distance": "end"},
        {"max_distance": "home", "base": 500, "layout": "interleaved"},
    ],
    "rope": [
        {"head_dim": "home", "pair": "end"},
        {"head_dim": "end", "base": 1000000, "layout": "interleaved", "vector": "split"},
        {"pair": "end", "position": "end"},
        {"position": "home", "max_distance": "end", "layout": "half"},
        {"base": "home", "max_distance": "home", "pair": 3, "position": 77},
        {"base": "end", "head_dim": 128, "vector": "ones", "layout": "interleaved"},
    ],
    "alibi": [
        {"n_heads": "home"},
        {"n_heads": "end"},
        {"n_heads": 3},
        {"n_heads": 7, "mass": "home", "seq_len": "home"},
        {"n_heads": 24, "mass": "end", "seq_len": "end"},
        {"n_heads": 63, "mass": 0.9, "seq_len": 1024},
    ],
    "rope_scaling": [
        {"factor": "home"},
        {"factor": "end", "original_max_len": "home"},
        {"original_max_len": "end", "head_dim": "home"},
        {"head_dim": "end", "base": "home"},
        {"base": "end", "seq_multiple": "home", "factor": 1.5},
        {
            "seq_multiple": "end",
            "view": "wavelength",
            "factor": 8,
            "base": 500000,
            "original_max_len": 8192,
            "head_dim": 128,
        },
        {"methods": ["linear", "llama3"], "head_dim": 64, "factor": 32},
        {"methods": ["ntk", "dynamic_ntk", "yarn"], "original_max_len": 2048, "seq_multiple": 3},
    ],
    "t5_buckets": [
        {"bidirectional": False},
        {"num_buckets": "home", "max_distance": "home"},
        {"num_buckets": "end", "max_distance": "end"},
        {"probe": "home"},
        {"probe": "end", "bidirectional": True},
        {"num_buckets": 6, "max_distance": 8, "probe": -3},
        {"num_buckets": 48, "max_distance": 256, "bidirectional": False, "probe": -100},
    ],
    "experiment_curves": [
        {"task": "copy"},
        {"view": "extension_2"},
        {"view": "extension_4", "seeds": [5]},
        {"view": "fine_tuned", "seeds": [0, 2, 4], "series": ["plain", "yarn"]},
        {"task": "language", "view": "schemes", "seeds": []},
        {"seeds": [0, 1, 2, 3, 4, 5], "series": ["none", "rope", "alibi"]},
    ],
}

# one broken formula per kind, and what reaches it: the checks must fail on each
MUTANTS = {
    "sinusoidal": (
        "theta.push(Math.pow(p.base, (-2 * l) / d));",
        "theta.push(Math.pow(p.base, (-2 * l) / (d + 2)));",
        [],
    ),
    "rope": ("[x[2 * l], x[2 * l + 1]]", "[x[l], x[l + x.length / 2]]", [{"layout": "interleaved", "vector": "split"}]),
    "alibi": (
        "slopes.push(2 ** ((-8 * (2 * i + 1)) / (2 * p)));",
        "slopes.push(2 ** ((-8 * (p + i + 1)) / heads));",
        [{"n_heads": 12}],
    ),
    "rope_scaling": ("Math.floor(index((betaFast", "Math.round(index((betaFast", []),
    "t5_buckets": ("const f32 = Math.fround;", "const f32 = (x) => x;", []),
    "experiment_curves": ("chosen.some((run) => run[i] === null)", "false", [{"task": "copy"}]),
}

# Lighthouse 12's accessibility run of axe (node_modules/lighthouse/core/gather/gatherers/accessibility.js)
AXE_OPTIONS = {
    "runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa"]},
    "resultTypes": ["violations"],
    "rules": {
        **{
            rule: {"enabled": True}
            for rule in (
                "accesskeys",
                "aria-allowed-role",
                "aria-conditional-attr",
                "aria-deprecated-role",
                "aria-dialog-name",
                "aria-prohibited-attr",
                "aria-treeitem-name",
                "aria-text",
                "empty-heading",
                "heading-order",
                "html-xml-lang-mismatch",
                "identical-links-same-purpose",
                "image-redundant-alt",
                "input-button-name",
                "label-content-name-mismatch",
                "landmark-one-main",
                "link-in-text-block",
                "meta-viewport",
                "select-name",
                "skip-link",
                "tabindex",
                "table-duplicate-name",
                "table-fake-caption",
                "target-size",
                "td-has-header",
            )
        },
        **{
            rule: {"enabled": False}
            for rule in (
                "area-alt",
                "aria-braille-equivalent",
                "aria-roledescription",
                "audio-caption",
                "blink",
                "duplicate-id",
                "frame-focusable-content",
                "frame-title-unique",
                "marquee",
                "nested-interactive",
                "no-autoplay-audio",
                "role-img-alt",
                "scrollable-region-focusable",
                "server-side-image-map",
                "summary-name",
                "svg-img-alt",
            )
        },
    },
}

# rules Lighthouse runs but gives no weight in its score (default-config.js, group "hidden"): the theme's
# search button fails label-content-name-mismatch on every page of the site
UNSCORED = {
    "empty-heading",
    "identical-links-same-purpose",
    "landmark-one-main",
    "label-content-name-mismatch",
    "table-fake-caption",
    "td-has-header",
}

LARGEST: dict[str, float] = {}  # kind -> the largest normwise relative difference found (the artifact)


# ------------------------------------------------------------------ the scratch book


def scratch_notebook() -> nbformat.NotebookNode:
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    hidden = {"tags": ["remove-input"]}
    cells = [
        md("# Explorables\n\nEvery kind of explorable figure, placed as a chapter places one."),
        code(
            "import json\nimport pathlib\n\nimport matplotlib.pyplot as plt\nimport torch\n\nimport posenc_lib as pe\n"
            "from posenc_lib.plotting import use_course_style\n\nuse_course_style()\n"
            'results = json.loads(pathlib.Path("data/experiments.json").read_text())',
            metadata=hidden,
        ),
    ]
    for index, (kind, call) in enumerate(CALLS):
        cells.append(md(f"## {kind} {index}\n\nThe text a chapter has around its figure."))
        if index == 0:
            alt = "The dot product of two sinusoidal encodings against their distance, d = 64."
            tags = {"tags": ["remove-input", "explorable-fallback"], "mystnb": {"image": {"alt": alt}}}
            cells.append(code(FALLBACK, metadata=tags))
        cells.append(code(call, metadata=hidden))
    cells += [md("## Check yourself"), code(QUESTIONS, metadata=hidden)]
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return notebook


@pytest.fixture(scope="module")
def scratch_site(tmp_path_factory) -> pathlib.Path:
    tmp = tmp_path_factory.mktemp("explorables")
    source = scratch_book(tmp, "explorables", "")
    nbformat.write(scratch_notebook(), source / "book" / "explorables.ipynb")
    # a page with a figure and no explorable: what it loads is what a page loads without them
    plain = scratch_notebook()
    plain.cells = [plain.cells[0], plain.cells[1], plain.cells[3]]  # title, imports, the static figure
    plain.cells[0].source = "# Plain\n\nA page with a figure and no explorable."
    nbformat.write(plain, source / "book" / "plain.ipynb")
    toc = (source / "_toc.yml").read_text()
    (source / "_toc.yml").write_text(toc + "  - file: book/plain\n")
    shutil.copytree(ROOT / "book" / "_templates", source / "book" / "_templates")
    (source / "book" / "data").mkdir()
    shutil.copy(ROOT / "book" / "data" / "experiments.json", source / "book" / "data")
    result = build(source, tmp / "out")
    # also the control of tests/book/test_book.py's build failures: tests/_helpers.py's scratch set-up, with
    # notebooks that work, builds strictly (warnings are errors)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    site_check.chromium_executable()
    return tmp / "out" / "_build" / "html"


@pytest.fixture(scope="module")
def browser():
    with site_check.browser() as instance:  # one Chromium for the module's tests
        yield instance


@pytest.fixture
def contexts(browser):
    """Makes browser contexts (site_check's desktop or phone, or Playwright's own with ``raw``), closed after the test."""
    made = []

    def make(*, raw: dict | None = None, **options):
        made.append(browser.new_context(**raw) if raw is not None else site_check.new_context(browser, **options))
        return made[-1]

    yield make
    for context in made:
        context.close()


@pytest.fixture(scope="module")
def base(scratch_site) -> Iterator[str]:
    with site_check.serve(scratch_site) as url:
        yield url


@pytest.fixture(scope="module", autouse=True)
def write_largest_differences():
    yield
    if LARGEST:  # two steps write here (the scratch book's tests, the course site's): the larger of each
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / "explorables.json"
        found = json.loads(path.read_text()) if path.exists() else {}
        merged = {kind: max(found.get(kind, 0.0), LARGEST.get(kind, 0.0)) for kind in found | LARGEST}
        path.write_text(json.dumps(merged, indent=1, sort_keys=True))


# ------------------------------------------------------------------ reading and driving an explorable


def state_of(root) -> dict:
    return json.loads(root.locator(":scope > script.pe-state").text_content())


def arrays(value: Any, path: tuple = ()) -> Iterator[tuple[tuple, list]]:
    """The arrays of numbers in a drawn structure, by path (a number alone is an array of one)."""
    if isinstance(value, dict):
        for key in sorted(value):
            yield from arrays(value[key], (*path, key))
    elif isinstance(value, list) and not any(isinstance(v, (list, dict)) for v in value):
        yield path, value
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from arrays(item, (*path, index))
    else:
        yield path, [value]


def difference(drawn: dict, expected: dict) -> float:
    """The largest normwise relative difference over the arrays drawn; raises AssertionError on any other
    disagreement (another structure, a missing value, an integer that differs)."""
    got, want = dict(arrays(drawn)), dict(arrays(expected))
    assert got.keys() == want.keys(), (sorted(got.keys() - want.keys())[:5], sorted(want.keys() - got.keys())[:5])
    largest = 0.0
    for path, values in want.items():
        page = got[path]
        assert len(page) == len(values), (path, len(page), len(values))
        assert [v is None for v in page] == [v is None for v in values], (path, "missing values differ")
        pairs = [(p, v) for p, v in zip(page, values) if v is not None]
        if all(isinstance(v, (bool, int)) and not isinstance(v, float) for _, v in pairs):
            wrong = [(i, p, v) for i, (p, v) in enumerate(pairs) if p != v]
            assert not wrong, (path, f"{len(wrong)} values differ, first (index, page, library): {wrong[:3]}")
            continue
        scale = max((abs(v) for _, v in pairs), default=0.0) or 1.0
        error = max((abs(p - v) for p, v in pairs), default=0.0) / scale
        assert math.isfinite(error) and error <= TOLERANCE, (path, error)
        largest = max(largest, error)
    return largest


def check(root, kind: str) -> float:
    """Compare what the explorable draws now with the library; returns the difference."""
    state = state_of(root)
    assert state["kind"] == kind
    return difference(state["drawn"], reference(state, RESULTS))


def set_control(page, root, name: str, value: Any) -> None:
    """Set a control as a reader does: a slider by keyboard (Home, End, arrows) or, far from its value,
    by moving it; a list by picking an option; check boxes by clicking them."""
    control = root.locator(f'[data-pe-param="{name}"]')
    assert control.count() == 1, f"no control for {name!r}"
    values = json.loads(control.get_attribute("data-pe-values"))
    tag = control.evaluate("e => e.tagName.toLowerCase()")
    if tag == "select":
        control.select_option(index=values.index(value))
    elif tag == "fieldset":
        boxes = control.locator("input[type=checkbox]")
        for index, option in enumerate(values):
            box = boxes.nth(index)
            if box.is_checked() != (option in value):
                box.click()
    else:
        target = 0 if value == "home" else len(values) - 1 if value == "end" else values.index(value)
        current = int(control.input_value())
        control.focus()
        if value in ("home", "end"):
            page.keyboard.press("Home" if value == "home" else "End")
        elif abs(target - current) <= 20:
            for _ in range(abs(target - current)):
                page.keyboard.press("ArrowRight" if target > current else "ArrowLeft")
        else:
            control.evaluate("(e, i) => { e.value = i; e.dispatchEvent(new Event('input', {bubbles: true})); }", target)
        assert int(control.input_value()) == target
    if value not in ("home", "end"):
        assert state_of(root)["params"][name] == value, (name, value, state_of(root)["params"][name])


def drive(page, root, kind: str, settings: list[dict[str, Any]]) -> float:
    """The explorable at its start and after each setting, compared with the library each time."""
    largest = check(root, kind)
    for setting in settings:
        for name, value in setting.items():
            set_control(page, root, name, value)
        largest = max(largest, check(root, kind))
    return largest


def open_page(context, url: str):
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.route("**/*", lambda route: route.fallback() if site_check.is_local(route.request.url) else route.abort())
    page.goto(url, wait_until="load")
    for root in figures(page):  # each starts when it comes near the screen
        root.scroll_into_view_if_needed()
        root.locator(":scope > script.pe-state").wait_for(state="attached")
    page.errors = errors
    return page


def figures(page) -> list:
    found = page.locator(".pe-explore[data-pe-kind]")
    return [found.nth(i) for i in range(found.count())]


# ------------------------------------------------------------------ the numbers drawn


def test_every_explorable_draws_what_the_library_computes_at_every_setting(base, contexts):
    page = open_page(contexts(), base + PAGE)
    kinds = [root.get_attribute("data-pe-kind") for root in figures(page)]
    assert kinds == [kind for kind, _ in CALLS] + ["quiz"], kinds
    for root, (kind, _) in zip(figures(page), CALLS):
        LARGEST[kind] = max(LARGEST.get(kind, 0.0), drive(page, root, kind, SETTINGS[kind]))
    assert not page.errors, page.errors
    assert set(LARGEST) == set(SETTINGS)


@pytest.mark.parametrize("kind", sorted(MUTANTS))
def test_the_check_fails_when_a_formula_is_broken(scratch_site, base, contexts, kind):
    old, new, settings = MUTANTS[kind]
    script = (scratch_site / "_static" / "explore" / "explore.js").read_text()
    assert script.count(old) == 1, f"the mutation of {kind} no longer applies: {old!r}"
    context = contexts()
    broken = script.replace(old, new)
    context.route(
        "**/_static/explore/explore.js*", lambda route: route.fulfill(body=broken, content_type="text/javascript")
    )
    page = open_page(context, base + PAGE)
    caught = 0
    for root in [r for r in figures(page) if r.get_attribute("data-pe-kind") == kind]:
        try:
            drive(page, root, kind, settings)
        except AssertionError:
            caught += 1
    assert caught, f"no check failed with the broken {kind} formula"


def test_the_questions_check_answers_with_the_computed_numbers(base, contexts):
    from posenc_lib import questions

    bank = questions.bank("alibi")
    page = open_page(contexts(), base + PAGE)
    quiz = page.locator(".pe-quiz")
    answers = state_of(quiz)["drawn"]["answers"]
    for question in bank:
        fieldset = quiz.locator(f'[data-pe-label="{question.label}"]')
        if isinstance(question, questions.Choice):
            assert answers[question.label] == question.verify()  # the option the library gives
            wrong = next(i for i in range(len(question.options)) if i != question.correct)
            fieldset.locator("input[type=radio]").nth(wrong).check()
            assert fieldset.get_attribute("data-pe-result") == "wrong"
            assert question.options[wrong].feedback in fieldset.locator(".pe-feedback").text_content()
            fieldset.locator("input[type=radio]").nth(question.correct).check()
        else:
            assert math.isclose(answers[question.label], question.value(), rel_tol=1e-11)
            box = fieldset.locator("input.pe-input")
            for wrong in question.wrong:  # each common wrong answer gets its own feedback
                box.fill(repr(wrong.value()))
                box.press("Enter")
                assert fieldset.get_attribute("data-pe-result") == "wrong"
                assert wrong.feedback in fieldset.locator(".pe-feedback").text_content()
            box.fill(question.shown())  # what "Show the answer" shows is accepted
            fieldset.get_by_role("button", name="Check").click()
        assert fieldset.get_attribute("data-pe-result") == "correct", question.label
        assert question.explanation in fieldset.locator(".pe-feedback").text_content()
    assert not page.errors, page.errors


# ------------------------------------------------------------------ every reader


def test_the_page_renders_offline_fits_a_phone_and_is_accessible_in_both_modes(base, contexts):
    (ARTIFACTS / "screenshots").mkdir(parents=True, exist_ok=True)
    for mode in ("light", "dark"):
        for phone in (False, True):
            context = contexts(phone=phone, color_scheme=mode)
            width = (site_check.PHONE if phone else site_check.DESKTOP)["width"]
            page = open_page(context, base + PAGE)
            assert page.evaluate("document.documentElement.dataset.theme") == mode
            page.add_style_tag(content=site_check.LAY_OUT_EVERYTHING)
            # site_check's checks with every figure started: no sideways scroll, nothing wider than its box
            report = page.evaluate(site_check.INSPECT_PAGE, site_check.RENDER_TIMEOUT_MS)
            problems = [
                p for p in site_check.problems_of(report, phone=phone) if p.kind in ("load", "sideways", "wide")
            ]
            assert not problems and not page.errors, (problems, page.errors)
            page.screenshot(path=str(ARTIFACTS / "screenshots" / f"explorables-{mode}-{width}.png"), full_page=True)
            fits = page.evaluate(
                "() => [...document.querySelectorAll('.pe-explore, .pe-explore svg')].every((e) =>"
                " e.getBoundingClientRect().right <= document.documentElement.clientWidth + 1)"
            )
            assert fits, f"an explorable is wider than the {width} px window"
            quiz = page.locator(".pe-quiz")
            quiz.locator("input[type=radio]").first.check()  # feedback shown, in both colours
            quiz.locator("input.pe-input").first.fill("1")
            quiz.locator("input.pe-input").first.press("Enter")
            page.evaluate("window.scrollTo(0, 0)")  # as Lighthouse sees a page: the theme's back-to-top button hidden
            page.locator("#pst-back-to-top").wait_for(state="hidden")
            page.add_script_tag(path=str(AXE))
            violations = page.evaluate("options => axe.run(document, options).then((r) => r.violations)", AXE_OPTIONS)
            found = [(v["id"], [n["target"] for n in v["nodes"]][:3]) for v in violations if v["id"] not in UNSCORED]
            assert not found, f"{mode}, {width} px: {found}"


def test_a_figure_starts_when_it_comes_near_the_screen(base, contexts):
    # the page does no work for figures below the first screens: nothing computed, nothing moves
    page = contexts().new_page()
    page.goto(base + PAGE, wait_until="load")
    first, quiz = page.locator(".pe-explore").first, page.locator(".pe-quiz")
    first.locator(":scope > script.pe-state").wait_for(state="attached")
    page.wait_for_timeout(300)
    assert quiz.get_attribute("data-pe-waiting") == "" and quiz.locator("fieldset").count() == 0
    assert not quiz.locator(".pe-nojs").is_visible()  # the script runs: no "needs JavaScript" sentence
    quiz.scroll_into_view_if_needed()
    quiz.locator(":scope > script.pe-state").wait_for(state="attached")
    assert quiz.get_attribute("data-pe-live") == "" and quiz.locator("fieldset").count() == 5


def test_every_control_is_reached_and_worked_by_keyboard(base, contexts):
    page = open_page(contexts(), base + PAGE)
    rope = next(r for r in figures(page) if r.get_attribute("data-pe-kind") == "rope")
    order = []
    rope.locator("[data-pe-param]").first.focus()
    for _ in range(8):  # Tab walks through the controls in order, the Play button among them
        order.append(page.evaluate("document.activeElement.dataset.peParam || document.activeElement.dataset.pePlay"))
        outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
        assert outline != "none", f"no focus outline on {order[-1]}"
        page.keyboard.press("Tab")
    assert order == ["base", "head_dim", "layout", "vector", "pair", "position", "position", "max_distance"]
    rope.locator('[data-pe-param="position"]').focus()
    page.keyboard.press("ArrowRight")
    assert state_of(rope)["params"]["position"] == 9
    rope.locator('[data-pe-param="layout"]').focus()
    page.keyboard.press("ArrowDown")  # a closed list changes with the arrow keys
    assert state_of(rope)["params"]["layout"] == "interleaved"
    scaling = next(r for r in figures(page) if r.get_attribute("data-pe-kind") == "rope_scaling")
    scaling.locator("input[type=checkbox]").first.focus()
    page.keyboard.press("Space")
    assert state_of(scaling)["params"]["methods"] == ["ntk", "dynamic_ntk", "yarn", "llama3"]
    quiz = page.locator(".pe-quiz")
    choice = quiz.locator('[data-pe-label="q-alibi-sorted"] input[type=radio]')
    choice.first.focus()
    page.keyboard.press("ArrowDown")  # a radio group: the arrow picks the next option
    assert quiz.locator('[data-pe-label="q-alibi-sorted"]').get_attribute("data-pe-result") == "correct"
    quiz.locator('[data-pe-label="q-alibi-bias"] input.pe-input').focus()
    page.keyboard.type("-0.625")
    page.keyboard.press("Enter")
    assert quiz.locator('[data-pe-label="q-alibi-bias"]').get_attribute("data-pe-result") == "correct"
    assert check(rope, "rope") <= TOLERANCE and not page.errors


def test_touch_works_on_a_phone(base, contexts):
    page = open_page(contexts(phone=True), base + PAGE)
    alibi = next(r for r in figures(page) if r.get_attribute("data-pe-kind") == "alibi")
    slider = alibi.locator('[data-pe-param="n_heads"]')
    # mid-screen, where a reader's finger is: the phone header (which names the section) covers the top edge
    slider.evaluate("element => element.scrollIntoView({block: 'center'})")
    box = slider.bounding_box()
    assert box and box["height"] >= 24, box  # a finger's target
    y = box["y"] + box["height"] / 2
    cdp = page.context.new_cdp_session(page)
    start = box["x"] + box["width"] * 11 / 63  # the thumb, at 12 heads of 1 .. 64
    for event, x in [
        ("touchStart", start),
        ("touchMove", start + box["width"] / 4),
        ("touchMove", box["x"] + box["width"] - 2),
    ]:
        cdp.send("Input.dispatchTouchEvent", {"type": event, "touchPoints": [{"x": x, "y": y}]})
    cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    assert state_of(alibi)["params"]["n_heads"] >= 60, state_of(alibi)["params"]
    assert check(alibi, "alibi") <= TOLERANCE
    scaling = next(r for r in figures(page) if r.get_attribute("data-pe-kind") == "rope_scaling")
    scaling.locator("label.pe-check").nth(3).tap()  # YaRN
    assert "yarn" not in state_of(scaling)["params"]["methods"]
    quiz = page.locator(".pe-quiz")
    quiz.locator('[data-pe-label="q-alibi-longer"] label.pe-option').first.tap()
    assert quiz.locator('[data-pe-label="q-alibi-longer"]').get_attribute("data-pe-result") == "correct"
    assert not page.errors, page.errors


def test_play_moves_the_position_unless_the_reader_asks_for_less_motion(base, contexts):
    page = open_page(contexts(raw={"reduced_motion": "reduce"}), base + PAGE)
    assert page.locator("[data-pe-play]").count() == 0
    page = open_page(contexts(raw={"reduced_motion": "no-preference"}), base + PAGE)
    rope = next(r for r in figures(page) if r.get_attribute("data-pe-kind") == "rope")
    play = rope.locator("[data-pe-play]")
    before = state_of(rope)["params"]["position"]
    play.click()
    page.wait_for_function(
        f"() => JSON.parse(document.querySelectorAll('.pe-explore')[1].querySelector('.pe-state').textContent).params.position >= {before + 2}"
    )
    play.click()
    stopped = state_of(rope)["params"]["position"]
    page.wait_for_timeout(800)
    assert state_of(rope)["params"]["position"] == stopped and play.get_attribute("aria-pressed") == "false"
    assert check(rope, "rope") <= TOLERANCE


def shown(page, selector: str) -> bool:
    return page.locator(selector).first.evaluate(
        "e => getComputedStyle(e).display !== 'none' && !!e.querySelector('img')"
    )


def test_the_static_figure_stands_in_without_javascript_and_in_print(base, contexts):
    fallback = ".tag_explorable-fallback > .cell_output"
    page = open_page(contexts(), base + PAGE)
    assert not shown(page, fallback)  # on screen the explorable stands in for it
    page.emulate_media(media="print")
    assert shown(page, fallback) and not page.locator('.pe-explore[data-pe-kind="sinusoidal"]').is_visible()
    static = contexts(raw={"java_script_enabled": False}).new_page()
    static.goto(base + PAGE, wait_until="load")
    assert shown(static, fallback)
    assert static.locator(".pe-explore .pe-nojs").first.text_content() == explore.NO_SCRIPT


def test_a_page_opened_from_disk_starts_its_explorables(scratch_site, contexts):
    # a reader who builds the site and opens it from disk (file://): a classic script runs there
    page = open_page(contexts(), (scratch_site / PAGE).as_uri())
    assert all(root.get_attribute("data-pe-live") == "" for root in figures(page))
    assert check(figures(page)[1], "rope") <= TOLERANCE and not page.errors, page.errors


# ------------------------------------------------------------------ what pages load


def scripts_requested(context, url: str) -> set[str]:
    page = context.new_page()
    requested: list[str] = []
    page.on("request", lambda r: requested.append(r.url.split("?")[0]) if r.resource_type == "script" else None)
    page.goto(url, wait_until="networkidle")
    page.close()
    return set(requested)


def stylesheet_of(site: pathlib.Path, relative: str) -> str:
    """The style sheets a page links (one, after tools/course_site.py bundles them)."""
    links = re.findall(r'<link rel="stylesheet" href="([^"]+)"', (site / relative).read_text())
    return "".join(((site / relative).parent / href.split("?")[0]).read_text() for href in links if "//" not in href)


PE_RULE = re.compile(r"\.pe-[\w-]")


def test_a_page_with_explorables_adds_one_small_script_and_a_page_without_adds_nothing(scratch_site, base, contexts):
    html = (scratch_site / PAGE).read_text()
    assert "data-pe-inline" not in html  # the inline copies are replaced by the one file
    assert html.count("_static/explore/explore.js") == 1
    served = (scratch_site / "_static" / "explore" / "explore.js").read_text()
    assert served == explore.script()
    context = contexts()
    with_explorables = scripts_requested(context, base + PAGE)
    without = scripts_requested(context, base + "book/plain.html")
    added = with_explorables - without
    assert {url.rsplit("/", 1)[-1] for url in added} == {"explore.js"}, added
    assert not {url for url in without if "/explore/" in url}
    size = len(gzip.compress(served.encode()))
    assert size <= BUDGET_GZIP_BYTES, f"explore.js is {size} bytes gzipped"
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "explorables-bytes.json").write_text(json.dumps({"explore.js": len(served.encode()), "gzip": size}))
    assert ".pe-explore" in stylesheet_of(scratch_site, PAGE)
    sheet = stylesheet_of(scratch_site, PAGE)
    kept = [f".pe-s{i}" for i in range(6)] + [  # rules the purge must keep: names and attributes the script sets
        '.pe-explore[data-pe-kind="rope"]:not([data-pe-live])',
        '[data-pe-result="correct"]',
        "@media screen and (scripting: enabled)",
        'html[data-theme="dark"] .pe-explore',
        "prefers-reduced-motion",
    ]
    assert [rule for rule in kept if rule not in sheet] == []
    assert not PE_RULE.search(stylesheet_of(scratch_site, "book/plain.html"))


# ------------------------------------------------------------------ the course's own site


def stored_explorables(notebook: pathlib.Path) -> list[str]:
    """The kinds of the explorables in a notebook's stored outputs (elements only: the markup that the inline
    script's comments show is text to the parser)."""
    found = []
    for cell in nbformat.read(notebook, as_version=4).cells:
        for output in cell.get("outputs", []):
            soup = BeautifulSoup(output.get("data", {}).get("text/html", ""), "html.parser")
            found += [str(div["data-pe-kind"]) for div in soup.select("div.pe-explore[data-pe-kind]")]
    return found


@pytest.mark.book
def test_every_explorable_on_the_course_site_draws_what_the_library_computes(built_site, contexts):
    assert built_site.ok, built_site.log_tail()
    site = built_site.html
    checked = []
    with site_check.serve(site) as base:
        context = contexts()
        for relative in site_check.html_pages(site):
            html = (site / relative).read_text()
            notebook = (ROOT / relative).with_suffix(".ipynb")
            kinds = re.findall(r'class="pe-explore[^"]*" data-pe-kind="(\w+)"', html)
            assert kinds == (stored_explorables(notebook) if notebook.exists() else []), relative
            assert html.count("_static/explore/explore.js") == (1 if kinds else 0), relative
            if not kinds:
                assert not PE_RULE.search(stylesheet_of(site, relative)), relative
                continue
            page = open_page(context, base + relative)
            for root in figures(page):
                kind = root.get_attribute("data-pe-kind")
                if kind != "quiz":  # every setting: the scratch book's test, on the same script
                    LARGEST[kind] = max(LARGEST.get(kind, 0.0), drive(page, root, kind, SETTINGS[kind][:1]))
                checked.append((relative, kind))
            assert not page.errors, (relative, page.errors)
            page.close()
    pages_with = {relative for relative, _ in checked}
    assert len(checked) == sum(len(stored_explorables(p)) for p in (ROOT / "book").glob("*.ipynb")), pages_with
