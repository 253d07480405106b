"""The instructor's nbgrader workflow, run for real on every chapter (tests/_nbgrader_course.py).

For each chapter: ``nbgrader generate_assignment`` releases the student version; ``nbgrader autograde``
scores the solutions every autograded point and the release 0 autograded points, untouched or, in a
chapter with an exercise asking for code posenc_lib has, with each such answer written as a call of
that library code (the checkers switch it off, so the call fails). The release is the student edition
plus the locked test cells, outputs of the teaching cells included. The solutions graded are the run
of `make test-nbval` where there is one (it runs the test cells too, tests/nbval_record.py); grading
that run is shown to take the points of a test cell whose output is an error.
"""

from __future__ import annotations

import contextlib
import pathlib

import nbformat
import pytest

import chapter_model as cm
from _nbgrader_course import BROKEN, LIBRARY_ANSWERS, STUDENTS, is_test_cell, library_answer
from book_files import ROOT, toc_chapters
from nbval_record import executed_runs

pytestmark = [pytest.mark.slow, pytest.mark.nbgrader]  # generate_assignment and autograde on every chapter: minutes

CHAPTERS = [path.stem for path, _ in toc_chapters()]


@pytest.fixture(scope="module")
def graded(nbgrader_course):
    """The round trip (tests/conftest.py)."""
    print(f"\nnbgrader round trip: {nbgrader_course.seconds:.0f} s for generate_assignment + autograde")
    write_score_table(nbgrader_course, ROOT / "test-artifacts" / "nbgrader-scores.md")
    return nbgrader_course


def write_score_table(graded, path: pathlib.Path) -> None:
    """The autograded points of each submission per chapter, and the manually graded points waiting."""
    lines = [
        "| chapter | untouched release | release, library-call answers | solutions | manual points (waiting) |",
        "|---|---:|---:|---:|---:|",
    ]
    for chapter in CHAPTERS:
        cells = []
        for student in STUDENTS:
            if (chapter, student) in graded.grades:
                score, maximum = graded.autograded(chapter, student)
                cells.append(f"{score:g} / {maximum:g}")
            else:
                cells.append("—")
        manual = sum(g.max_score for g in graded.grades[chapter, "solutions"] if not g.test)
        lines.append(f"| {chapter} | {' | '.join(cells)} | {manual:g} |")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_every_chapter_was_released_and_graded(graded):
    assert sorted({assignment for assignment, _ in graded.grades}) == sorted(CHAPTERS)
    for chapter in CHAPTERS:
        students = {student for assignment, student in graded.grades if assignment == chapter} - {BROKEN}
        assert students == {"solutions", graded.released(chapter)}


def test_the_solutions_graded_are_nbvals_run_where_the_session_ran_every_chapter(graded):
    """nbval ran each chapter with its test cells after the answers: nbgrader graded that run, not a second one."""
    runs = executed_runs()
    if set(runs) >= set(CHAPTERS):
        assert sorted(graded.from_nbval) == sorted(CHAPTERS)
    else:  # a course folder with a chapter nbval did not run through is executed by nbgrader
        assert set(graded.from_nbval) <= set(runs)


def test_a_graded_run_loses_the_points_of_a_test_cell_whose_output_is_an_error(graded):
    """Grading stored outputs is not a formality: one chapter's graded solutions, with one test cell's output
    replaced by an error (as a failed assert leaves it), lose exactly that cell's points."""
    assert (graded.broken is None) == (not graded.from_nbval)
    if graded.broken is not None:
        score, maximum = graded.autograded(graded.broken, BROKEN)
        assert (score, maximum) == (maximum - cm.CHECKER_POINTS, graded.autograded(graded.broken, "solutions")[1])


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_release_scores_no_autograded_point_untouched_or_with_library_calls(chapter, graded):
    score, maximum = graded.autograded(chapter, graded.released(chapter))
    assert maximum > 0 and score == 0


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_solutions_score_every_autograded_point(chapter, graded):
    score, maximum = graded.autograded(chapter, "solutions")
    assert maximum > 0 and score == maximum


def test_every_chapter_with_an_exercise_the_library_computes_has_a_library_submission(graded):
    asked = {name for name in LIBRARY_ANSWERS}
    defined = {
        chapter.path.stem
        for chapter in graded.chapters
        for cell in chapter.source.cells
        if cell.cell_type == "code" and library_answer(cell.source) is not None
    }
    assert set(graded.cheated) == defined
    answered = {label for labels in graded.cheated.values() for label in labels}
    assert len(answered) == len(asked)  # every library answer was used by exactly one exercise


# every chapter with an exercise that a library call could answer (tests/_nbgrader_course.py's LIBRARY_ANSWERS)
LIBRARY_CHAPTERS = [
    path.stem
    for path, _ in toc_chapters()
    if any(cell.cell_type == "code" and library_answer(cell.source) for cell in nbformat.read(path, as_version=4).cells)
]


@pytest.mark.parametrize("chapter", LIBRARY_CHAPTERS)
def test_answers_that_call_the_library_score_nothing_because_the_checker_switched_it_off(chapter, graded):
    assert graded.released(chapter) == "library"
    cheated = graded.cheated[chapter]
    tests = [g for g in graded.grades[chapter, "library"] if g.test and g.exercise in cheated]
    assert {g.exercise for g in tests} == set(cheated) and all(g.score == 0 for g in tests), tests
    # each answer ran, and its checker refused the library call (not a stub's NotImplementedError, not a crash)
    answers = [
        cell
        for cell in graded.executed(chapter, "library").cells
        if cell.metadata.get("nbgrader", {}).get("solution") and cell.cell_type == "code"
    ]
    refused = [
        cell.metadata["nbgrader"]["grade_id"]
        for cell in answers
        if "which this exercise asks you to write yourself" in "".join(o.get("text", "") for o in cell.outputs)
        and not any(o.output_type == "error" for o in cell.outputs)
    ]
    assert sorted(label.rsplit("-answer", 1)[0] for label in refused) == sorted(cheated)


def test_each_library_answer_is_right_when_the_library_is_allowed(monkeypatch):
    """So a library submission scores 0 because of the guard, not because the call itself is wrong."""
    import posenc_lib.exercises as exercises
    import posenc_lib.exercises._core as core

    monkeypatch.setattr(core, "library_unavailable", lambda *a, **k: contextlib.nullcontext([]))
    namespace = {
        "pe": __import__("posenc_lib"),
        "torch": __import__("torch"),
        "copy": __import__("copy"),
        **vars(exercises),
    }
    seen = set()
    for chapter in toc_chapters():
        source = cm.read_chapter(*chapter).source
        for cell in source.cells:
            if cell.cell_type == "code" and (changed := library_answer(cell.source)):
                calls = cm.checker_calls(changed)
                # the answer and its checker call; what the cell does after that needs the chapter's state
                answer = changed[: changed.index(calls[0]) + len(calls[0])]
                answer = answer[: answer.rindex("\n") + 1] if "\n" in answer else ""
                exec(compile(f"{answer}_result = {calls[0]}\n", "answer", "exec"), namespace)
                assert namespace["_result"], changed
                seen.add(calls[0])
    assert len(seen) == len(LIBRARY_ANSWERS)


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_release_is_the_student_edition_plus_test_cells(chapter, graded):
    release = graded.release(chapter)
    student = nbformat.read(graded.root / "student" / "book" / f"{chapter}.ipynb", as_version=4)
    tests = [c for c in release.cells if is_test_cell(c)]
    kept = [c for c in release.cells if c not in tests]
    assert [(c.cell_type, c.source, c.get("outputs")) for c in kept] == [
        (c.cell_type, c.source, c.get("outputs")) for c in student.cells
    ]
    assert tests and all(c.source.split("\n")[-1].startswith("assert check_") for c in tests)


def test_the_releases_keep_the_outputs_of_the_teaching_cells(graded):
    """nbgrader's ClearOutput is off in the course's config: figures and printed results stay (the guide promises it)."""
    with_outputs = [chapter for chapter in CHAPTERS if any(c.get("outputs") for c in graded.release(chapter).cells)]
    assert len(with_outputs) >= len(CHAPTERS) - 1, with_outputs  # chapter 11 shows its code only inside solutions
