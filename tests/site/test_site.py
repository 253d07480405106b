"""The built website's HTML: what tools/course_site.py and tools/offline_site.py promise, page by page.

(The same site in a browser is tests/site/test_browser.py; its speed is tests/site/test_lighthouse.py.)
"""

from __future__ import annotations

import re

import pytest

import setup_cell
import site_check
from book_files import book_notebooks
from conftest import ROOT

pytestmark = pytest.mark.book

NOTEBOOKS = book_notebooks()


@pytest.fixture(scope="module")
def html(built_site):
    if not built_site.ok:
        pytest.fail("the book did not build:\n" + built_site.log_tail())
    return built_site.html


def chapter_pages(html):
    return [html / "book" / (path.stem + ".html") for path in NOTEBOOKS]


def test_the_setup_cell_is_one_sentence_on_every_chapter_page(html):
    note = setup_cell.SITE_NOTE.split("`")[0]
    for page in chapter_pages(html):
        text = page.read_text()
        assert text.count('class="setup-note"') == 1, page.name
        assert note.replace("’", "&#8217;") in text or note in text, page.name
        assert setup_cell.MARKER not in text, f"{page.name} shows the set-up cell's code"


def test_solution_code_shows_no_nbgrader_markers(html):
    assert any("### BEGIN SOLUTION" in path.read_text() for path in NOTEBOOKS), "no notebook has markers to strip"
    for page in site_check.html_pages(html):
        text = (html / page).read_text()
        assert "BEGIN SOLUTION" not in text and "END SOLUTION" not in text, page


def test_an_exercise_without_a_body_has_no_empty_strip(html):
    page = (html / "book" / "03_sinusoidal.html").read_text()
    assert page.count('class="exercise admonition') >= 2
    for page in chapter_pages(html):
        assert not re.search(r'<section id="exercise-content">\s*</section>', page.read_text()), page.name


def test_each_interview_question_is_shown_once_in_its_solution_bar(html):
    from bs4 import BeautifulSoup

    page = BeautifulSoup((html / "book" / "11_interview_questions.html").read_text(), "html.parser")
    bars = page.select("div.solution.dropdown")
    titles = [bar.select_one(".admonition-title").get_text(" ", strip=True) for bar in bars]
    # a question all in its title is the bar itself (no empty exercise box above it), and a link to the
    # question lands on its bar; a question with a body keeps its box, and its bar does not repeat it
    merged = [t for t in titles if re.match(r"Exercise 11\.\d+ \(.+\)$", t)]
    assert len(merged) >= 20, titles
    assert all(re.match(r"Solution to Exercise 11\.\d+$", t) for t in titles if t not in merged), titles
    boxes = page.select("div.exercise")
    assert len(boxes) == len(titles) - len(merged) and all(b.select_one("section") for b in boxes), boxes
    ids = [bar.get("id", "") for bar, title in zip(bars, titles, strict=True) if title in merged]
    assert all(i.startswith("ex-interview") for i in ids), ids
    questions = merged + [b.select_one(".admonition-title").get_text(" ", strip=True) for b in boxes]
    for title in questions:
        question = title.split("(", 1)[1].rsplit(")", 1)[0]
        assert page.get_text(" ").count(question) == 1, question


def test_a_solution_bar_holds_no_link_that_leaves_it(html):
    # the link back to the exercise was the part of the bar a reader clicked: it scrolled away, folded
    pages = [p for p in site_check.html_pages(html) if 'class="solution' in (html / p).read_text()]
    assert len(pages) >= 10, pages
    for relative in pages:
        text = (html / relative).read_text()
        titles = re.findall(r'<div class="solution[^"]*"[^>]*>\s*<p class="admonition-title">(.*?)</p>', text, re.S)
        assert titles and not [t for t in titles if "<a " in t], (relative, titles[:3])


def test_every_page_has_its_own_meta_description(html):
    descriptions = {}
    for page in site_check.html_pages(html):
        if page == "index.html":  # a redirect to book/intro.html
            continue
        found = re.findall(r'<meta name="description" content="([^"]*)"', (html / page).read_text())
        assert len(found) == 1 and len(found[0]) >= 50, (page, found)
        descriptions[page] = found[0]
    chapters = [d for page, d in descriptions.items() if page.startswith("book/")]
    assert len(set(chapters)) == len(chapters), "two pages share a description"


def test_pages_load_no_icon_diagram_or_math_engine_script(html):
    for page in site_check.html_pages(html):
        if page == "index.html":  # a redirect to book/intro.html
            continue
        text = (html / page).read_text()
        scripts = re.findall(r'<script[^>]*src="([^"]+)"', text)
        for banned in ("fontawesome", "mermaid", "mathjax", "katex", "thebe"):
            assert not [s for s in scripts if banned in s.lower()], (page, banned, scripts)
        assert ("searchindex.js" in " ".join(scripts)) == (page == "search.html"), (page, scripts)
        sheets = re.findall(r'<link[^>]*rel="stylesheet"[^>]*href="([^"]+)"', text)
        assert len(sheets) == 1, (page, sheets)  # one bundle, not a dozen render-blocking requests
        css = ((html / page).parent / sheets[0]).resolve().read_text()
        assert (".katex{" in css) == ('class="katex"' in text), (
            f"{page}: KaTeX's CSS must be there exactly when formulas are"
        )
        icons = re.findall(r'<(?:i|span)\b[^>]*class="[^"]*\b(?:fa-solid|fa-regular|fa-brands|fas|far|fab)\b', text)
        assert not icons, f"{page} still has Font Awesome icon elements: {icons[:3]}"


def test_every_script_file_is_deferred_but_the_options_inline_scripts_read(html):
    # (book/_templates/layout.html) none blocks the first paint; the search page's tools run at once
    for page in site_check.html_pages(html):
        if page in ("index.html", "search.html"):  # a redirect to book/intro.html; the search page
            continue
        scripts = re.findall(r"<script\b[^>]*\bsrc=[^>]*>", (html / page).read_text())
        waiting = [s for s in scripts if not re.search(r"\b(defer|async)\b", s) and "documentation_options" not in s]
        assert len(scripts) >= 5 and not waiting, (page, waiting)
    search = (html / "search.html").read_text()
    assert '<script src="_static/doctools.js' in search


def test_figures_are_svg_and_diagrams_are_images_at_their_natural_size(html):
    figures = diagrams = 0
    for page in chapter_pages(html) + [html / "book" / "intro.html"]:
        text = page.read_text()
        for tag in re.findall(r"<img\b[^>]*>", text):
            src = re.search(r'src="([^"]+)"', tag).group(1)
            if not src.startswith("../_images/") or 'class="diagram' in tag:
                continue  # the logo, the launch buttons' logos, diagrams
            assert src.endswith(".svg"), (page.name, src)
            assert 'loading="lazy"' in tag, (page.name, tag)  # fetched and drawn when the reader comes near
            figures += 1
        assert '<pre class="mermaid"' not in text and "<object" not in text, page.name
        for tag in re.findall(r'<img class="diagram[^>]*>', text):
            width, height = re.search(r'width="(\d+)" height="(\d+)"', tag).groups()
            src = re.search(r'src="([^"]+)"', tag).group(1)
            assert (page.parent / src).resolve().exists(), src
            assert int(width) > 50 and int(height) > 20, tag
            diagrams += 1
    assert figures >= 10 and diagrams >= 5, (figures, diagrams)


def test_code_has_no_span_the_code_style_draws_in_the_blocks_colour(html):
    from pydata_sphinx_theme.pygments import get_pygments_stylesheet
    from pygments.token import STANDARD_TYPES

    import course_site

    # the styles of the theme's light and dark modes, those course_site read
    light, dark = "a11y-high-contrast-light", "a11y-high-contrast-dark"
    assert (html / "_static" / "pygments.css").read_text() == get_pygments_stylesheet(light, dark)
    plain = {STANDARD_TYPES[token] for token in course_site.plain_token_types(light, dark)}
    assert {"n", "p"} <= plain, plain  # names and punctuation: a third of a chapter's elements
    spans = re.compile(rf'<span class="(?:{"|".join(sorted(plain))})">')
    for page in chapter_pages(html):
        text = page.read_text()
        assert not spans.findall(text), page.name
        assert '<span class="k">def</span>' in text, page.name  # still highlighted


def test_references_link_arxiv_and_are_in_author_order(html):
    text = (html / "book" / "references.html").read_text()
    entries = re.findall(r'<div class="citation" id="[^"]*" role="listitem">(.*?)</div>', text, re.DOTALL)
    assert len(entries) >= 15
    plain = [re.sub(r"<[^>]+>", "", entry).split("]", 1)[1].strip() for entry in entries]
    arxiv = [entry for entry in entries if "arXiv:" in entry]
    assert len(arxiv) >= 10
    for entry in arxiv:
        number = re.search(r"arXiv:(\d{4}\.\d{4,5})", entry).group(1)
        assert f'href="https://arxiv.org/abs/{number}"' in entry, entry
    # in order of the first author's last name (braces of organisation names do not count), first
    # names (two Wangs), then year
    from pybtex.database import parse_file

    bib = parse_file(str(ROOT / "book" / "references.bib"))
    clean = lambda s: re.sub(r"[{}]", "", s).lower()  # noqa: E731  (a one-line sort key, used once)
    expected = sorted(
        bib.entries.values(),
        key=lambda e: (
            clean(" ".join(e.persons["author"][0].last_names)),
            clean(" ".join(e.persons["author"][0].first_names)),
            e.fields["year"],
        ),
    )
    position = {}
    for entry in expected:
        title = clean(entry.fields["title"])[:30]
        matches = [i for i, p in enumerate(plain) if title in p.lower()]
        assert len(matches) == 1, (title, plain)
        position[entry.key] = matches[0]
    assert [position[e.key] for e in expected] == list(range(len(expected))), "\n".join(plain)
    assert 'role="doc-biblioentry"' not in text and text.count('role="listitem"') == len(entries)  # valid ARIA
    labels = re.findall(r'<span class="label"><span class="fn-bracket">\[</span>([^<]+)<', text)
    assert "BigScience22" in labels and not [label for label in labels if "Workshop" in label or "Team" in label], (
        labels
    )


def test_contributing_is_not_a_web_link(html):
    text = (html / "book" / "instructor_guide.html").read_text()
    assert "http://CONTRIBUTING.md" not in text and "CONTRIBUTING.md" in text


# chapters whose explorable fallbacks have no caption yet (their figure is shown only in print and without
# scripts): remove a chapter when its fallbacks get one
FALLBACKS_WITHOUT_CAPTION = {"05_rope", "06_alibi", "08_long_context"}


def fallback_cells(text: str) -> list[str]:
    """The HTML of each cell tagged explorable-fallback (up to the next cell)."""
    starts = [m.start() for m in re.finditer(r'<div class="cell [^"]*tag_explorable-fallback', text)]
    return [text[start : text.find('<div class="cell ', start + 1)] for start in starts]


def test_an_explorables_printed_figure_has_a_caption_and_no_number(html):
    # printed (or without scripts) the static figure stands where the explorable is: it says what it shows
    # (posenc_lib.explore.fallback_caption), unnumbered, since on screen it is not there and the figure
    # numbers a reader sees must not skip one
    uncaptioned = set()
    seen = 0
    for page in chapter_pages(html):
        for cell in fallback_cells(page.read_text()):
            seen += 1
            assert "<figcaption" not in cell, f"{page.stem}: a fallback is a numbered figure"
            caption = re.search(r'<p class="pe-fallback-caption">(.*?)</p>', cell, flags=re.DOTALL)
            if caption is None:
                uncaptioned.add(page.stem)
                continue
            assert len(caption.group(1).strip()) > 40, page.stem
    assert seen >= 6
    assert uncaptioned == FALLBACKS_WITHOUT_CAPTION
