"""The exercise conventions of CONTRIBUTING.md, checked on every chapter notebook in the table of contents.

- every exercise has a label ``ex-<chapter>-<name>``, unique in the book, and is followed
  immediately by its solution, folded (``:class: dropdown``);
- a solution is marked one way: the cells between ``solution-start`` and ``solution-end`` (no
  ``solution`` tag, no ``{solution}`` directive, no nbgrader markers outside them), and it hides
  something from students;
- every numbered chapter has at least two exercises, at least one of them coding
  (tools/chapter_model.py reports each breach in ``Chapter.problems``);
- every checker exported from ``posenc_lib.exercises`` is called in some chapter, outside the
  solution markers (so the call is still there in the student edition);
- the instructor guide's generated tables (book/data/exercises.md, pulled in with ``{include}``) are
  up to date (``python tools/exercise_catalog.py``).

The rules themselves are tested on the fixture notebook of tests/_exercise_fixture.py, which
follows them, and on broken variants of it.
"""

from __future__ import annotations

import collections
import pathlib
import re

import nbformat
import pytest

import chapter_model as cm
import exercise_catalog as catalog
from _exercise_fixture import ROOT, solution_notebook, write_book

CHAPTERS = catalog.chapters()


def chapter_of(notebook: nbformat.NotebookNode, tmp_path: pathlib.Path) -> cm.Chapter:
    root = write_book(tmp_path, {"fixture": notebook})
    return cm.read_chapter(root / "book" / "fixture.ipynb", 1)


# --------------------------------------------------------------------------- the rules, on known input


def test_the_fixture_follows_the_conventions(tmp_path):
    chapter = chapter_of(solution_notebook(), tmp_path)
    assert chapter.problems == []
    assert [e.label for e in chapter.exercises] == [
        "ex-fixture-square",
        "ex-fixture-loop",
        "ex-fixture-explain",
        "ex-fixture-value",
    ]
    assert [e.kind for e in chapter.exercises] == ["coding", "coding", "written", "written"]  # coding: a scaffold
    summary = catalog.summary(chapter)
    assert summary["objectives"] == ["square a number,", "sum a range."]
    assert summary["prerequisites"] == "Python functions."
    assert summary["title"] == "A fixture chapter" and (summary["auto"], summary["manual"]) == (4, 3)


def broken(change) -> nbformat.NotebookNode:
    notebook = solution_notebook()
    change(notebook.cells)
    return notebook


def replace_in(index: int, old: str, new: str):
    def change(cells):
        assert old in cells[index].source
        cells[index].source = cells[index].source.replace(old, new)

    return change


@pytest.mark.parametrize(
    "change, expected",
    [
        (replace_in(3, ":label: ex-fixture-square\n", ""), "its :label: '' is not of the form"),
        (replace_in(3, "ex-fixture-square", "Square"), "not of the form"),
        (replace_in(4, ":class: dropdown\n", ""), "not folded"),
        (replace_in(12, "{solution-start} ex-fixture-explain", "{solution-start} ex-fixture-typo"), "1.3: no solution"),
        (
            lambda cells: cells.insert(4, nbformat.v4.new_markdown_cell("Some text in between.")),
            "follow it immediately",
        ),
        (replace_in(5, "    ### END SOLUTION\n", ""), "BEGIN SOLUTION marker(s) without a partner"),
        (replace_in(5, "    ### BEGIN SOLUTION\n", ""), "END SOLUTION marker(s) without a partner"),
        (lambda cells: cells.__delitem__(9), "exercise 1.2: no solution"),  # an empty solution-start .. solution-end
        (
            lambda cells: cells.insert(3, nbformat.v4.new_code_cell("### BEGIN SOLUTION\nx = 1\n### END SOLUTION")),
            "outside solution-start",
        ),
        (  # the retired markings
            lambda cells: cells.insert(3, nbformat.v4.new_markdown_cell("It is 4.", metadata={"tags": ["solution"]})),
            "tag 'solution' is not used",
        ),
        (
            lambda cells: cells.__setitem__(
                slice(12, 15),
                [nbformat.v4.new_markdown_cell("```{solution} ex-fixture-explain\n:class: dropdown\n```")],
            ),
            "a {solution} directive",
        ),
        (replace_in(11, "ex-fixture-explain", "ex-fixture-square"), "used twice"),
        (lambda cells: cells.__delitem__(10), "inside the open solution"),
        (lambda cells: cells.__delitem__(19), "never closed with solution-end"),
    ],
)
def test_a_broken_exercise_is_reported(change, expected, tmp_path):
    try:
        chapter = chapter_of(broken(change), tmp_path)
    except cm.NotebookError as error:  # unbalanced markers stop the generator itself
        assert expected in str(error)
        return
    assert any(expected in p for p in chapter.problems), chapter.problems


def test_too_few_exercises_are_reported(tmp_path):
    notebook = solution_notebook()
    notebook.cells = notebook.cells[:3] + notebook.cells[11:15]  # only the written exercise
    problems = chapter_of(notebook, tmp_path).problems
    assert any("at least 2" in p for p in problems) and any("no coding exercise" in p for p in problems)


def test_a_coding_exercise_without_a_checker_does_not_count_as_autograded(tmp_path):
    notebook = solution_notebook()
    notebook.cells = notebook.cells[:3] + notebook.cells[11:20]  # the written exercise and a code answer, no checker
    assert chapter_of(notebook, tmp_path).problems == [
        "fixture.ipynb: no coding exercise with a checker (a solution code cell with nbgrader markers and a check_ call)"
    ]


# --------------------------------------------------------------------------- the book


def test_there_are_chapters():
    assert CHAPTERS, "no notebook chapters in _toc.yml"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: c.path.name)
def test_each_chapter_follows_the_exercise_conventions(chapter):
    """Labelled exercises, each followed by a folded solution that hides something; in a numbered chapter at
    least two of them, one coding (an appendix need not have exercises)."""
    assert chapter.problems == []


def test_an_unnumbered_chapter_needs_no_exercise(tmp_path):
    notebook = solution_notebook()
    notebook.cells = notebook.cells[:3]
    root = write_book(tmp_path, {"fixture": notebook})
    assert cm.read_chapter(root / "book" / "fixture.ipynb", None).problems == []
    assert len(cm.read_chapter(root / "book" / "fixture.ipynb", 1).problems) == 2


def test_exercise_labels_are_unique_in_the_book():
    labels = collections.Counter(e.label for c in CHAPTERS for e in c.exercises if e.label)
    assert [label for label, n in labels.items() if n > 1] == []


def exported_checkers() -> list[str]:
    import posenc_lib.exercises as exercises

    return sorted(name for name in exercises.__all__ if name.startswith("check_") and name != "check_function")


def test_every_checker_is_called_where_the_student_edition_keeps_it():
    calls = set()
    for chapter in CHAPTERS:
        for cell in cm.student_notebook(chapter).cells:
            if cell.cell_type == "code":
                calls |= set(re.findall(r"\b(check_\w+)\s*\(", cell.source))
    assert [name for name in exported_checkers() if name not in calls] == []


def test_the_instructor_guide_tables_are_up_to_date():
    assert catalog.TABLES.read_text(encoding="utf-8") == catalog.render(CHAPTERS), (
        "run: python tools/exercise_catalog.py"
    )


def test_the_guide_includes_the_tables_which_list_every_exercise_with_a_link_and_points():
    guide = (ROOT / "book" / "instructor_guide.md").read_text(encoding="utf-8")
    assert "```{include} data/exercises.md\n```" in guide
    tables = catalog.TABLES.read_text(encoding="utf-8")
    for chapter in CHAPTERS:
        for exercise in chapter.exercises:
            assert f"<{exercise.label}>`" in tables
        auto, manual = (sum(e.points[i] for e in chapter.exercises) for i in (0, 1))
        assert f"{auto} autograded + {manual} manually graded points" in tables


def test_every_coding_exercise_is_autograded_and_every_answer_has_points():
    for chapter in CHAPTERS:
        graded = [c.metadata["nbgrader"] for c in chapter.source.cells if "nbgrader" in c.metadata]
        assert all(g.get("points", 0) > 0 for g in graded if g["grade"]), chapter.path.name
        assert all(g["grade"] or any(o["grade"] and not o["solution"] for o in graded) for g in graded)
        for exercise in chapter.exercises:
            assert exercise.kind == "written" or exercise.checkers, f"{exercise.number} has no autograded test"
