"""tools/convert_markings.py: a chapter in the three old markings becomes the fixture's one marking."""

from __future__ import annotations

import copy

import nbformat

import convert_markings
from _exercise_fixture import code, md, solution_notebook


def old_style() -> nbformat.NotebookNode:
    """The fixture as the chapters marked it before: a {solution} directive, tags, notes in a cell of their own."""
    notebook = solution_notebook()
    cells = notebook.cells
    notes, end = cells[6].source.split("\n\n", 1)
    cells[6:7] = [md(notes), md(end)]
    cells[13:16] = [md(cells[13].source.replace("solution-start", "solution") + "\n" + cells[14].source + "\n```")]
    cells[13].source = cells[13].source.replace("\n```\nBecause", "\n\nBecause")
    cells[16] = code(cells[16].source, cells[16].outputs, tags=["solution"], count=5)
    cells[17] = md(cells[17].source, tags=["solution"])
    return notebook


def test_the_old_markings_become_the_one_marking():
    old = old_style()
    assert "{solution} ex-fixture-explain" in old.cells[13].source
    new = convert_markings.convert(copy.deepcopy(old), "fixture.ipynb")
    wanted = solution_notebook()
    assert [(c.cell_type, c.source, c.metadata.get("tags")) for c in new.cells] == [
        (c.cell_type, c.source, c.metadata.get("tags")) for c in wanted.cells
    ]
    assert [c.get("outputs") for c in new.cells] == [c.get("outputs") for c in wanted.cells]


def test_a_converted_notebook_is_left_alone(tmp_path):
    path = tmp_path / "fixture.ipynb"
    nbformat.write(old_style(), path)
    convert_markings.main([str(path)])
    once = path.read_text()
    convert_markings.main([str(path)])
    assert path.read_text() == once and "{solution}" not in once and '"solution"\n' not in once
