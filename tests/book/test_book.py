"""The website builds with warnings as errors, and a failing notebook fails the build."""

import re

import nbformat
import pytest

from _helpers import scratch_book
from book_files import toc_chapters
from conftest import ROOT, build
from nbval_record import EXECUTED


@pytest.mark.book
def test_book_builds_strictly(built_site):
    assert built_site.ok, built_site.log_tail()
    html = built_site.html
    assert (html / "index.html").exists()
    assert (html / "book" / "01_why_order_matters.html").exists()


@pytest.mark.book
def test_the_build_executes_only_the_notebooks_nbval_did_not_run(built_site):
    """Each chapter runs once in `make test`: the build renders the outputs of nbval's run of it, if there was one."""
    assert built_site.ok, built_site.log_tail()
    chapters = [path for path, _ in toc_chapters()]
    # the notebooks `make test-nbval` ran through whole (tests/nbval_record.py keeps only those)
    assert set(built_site.from_nbval) <= {path.name for path in EXECUTED.glob("*.ipynb")}
    assert built_site.executed == len(chapters) - len(built_site.from_nbval), built_site.log_tail()
    # what nbval's kernels drew (SVG, as the website build asks for) is what the pages show: one SVG image
    # on the page for each figure in the notebook's outputs, and no PNG
    drawn_somewhere = False
    for name in built_site.from_nbval:
        notebook = nbformat.read(ROOT / "book" / name, as_version=4)
        drawn = sum(
            any(kind.startswith("image/") for kind in output.get("data", {}))
            for cell in notebook.cells
            if cell.cell_type == "code"
            for output in cell.outputs
        )
        page = (built_site.html / "book" / name).with_suffix(".html").read_text(encoding="utf-8")
        figures = [src for src in re.findall(r'<img[^>]*src="(\.\./_images/[^"]+)"', page) if "/mermaid-" not in src]
        assert len(figures) == drawn and not [src for src in figures if src.endswith(".png")], (name, drawn, figures)
        drawn_somewhere |= drawn > 0
    assert drawn_somewhere or not built_site.from_nbval


@pytest.mark.scratch
def test_a_failing_notebook_fails_the_build(tmp_path):
    # the control, the same scratch set-up with notebooks that work building without a warning, is
    # tests/site/test_explorables.py's ``scratch_site`` (CI runs these two in make test-controls)
    result = build(scratch_book(tmp_path, "broken", "1 / 0"), tmp_path / "out")
    assert result.returncode != 0
    assert "ZeroDivisionError" in result.stdout + result.stderr


@pytest.mark.scratch
def test_a_diagram_or_formula_that_cannot_be_drawn_fails_the_build(tmp_path):
    source = scratch_book(tmp_path, "faulty", "1 + 1")
    path = source / "book" / "faulty.ipynb"
    notebook = nbformat.read(path, as_version=4)
    notebook.cells.insert(
        1,
        nbformat.v4.new_markdown_cell(
            "A broken diagram:\n\n```{mermaid}\nflowchart TD\n    this is -- not ((valid mermaid\n```\n\n"
            "and a formula KaTeX cannot read: $\\frac{1}{$."
        ),
    )
    nbformat.write(notebook, path)
    result = build(source, tmp_path / "out")
    log = result.stdout + result.stderr
    assert result.returncode != 0
    assert "diagram could not be drawn" in log and "KaTeX cannot typeset" in log, log[-3000:]
