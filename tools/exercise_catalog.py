"""The course's exercises, read from the chapter notebooks: convention checks and the instructor guide's tables.

Usage::

    python tools/exercise_catalog.py            # rewrite book/data/exercises.md (the guide includes it)
    python tools/exercise_catalog.py --check    # exit 1 if that file is out of date (tests run this)
    python tools/exercise_catalog.py --problems # list exercise-convention problems per chapter

The exercises come from tools/chapter_model.py (the model the student edition and the nbgrader
course are built from); objectives and prerequisites from each notebook's opening markdown. Times are
rules of thumb, stated in the guide: 150 words of prose and 10 lines of code per minute; 20 minutes
per coding exercise and 10 per written one unless the exercise cell's metadata says
``{"exercise": {"minutes": N}}``. The tables' layout is tools/exercise_tables.md.j2.
"""

from __future__ import annotations

import argparse
import math
import pathlib
import re
import sys

import jinja2

import chapter_model as cm
from book_files import ROOT, toc_chapters

TABLES = ROOT / "book" / "data" / "exercises.md"
DEFAULT_MINUTES = {"coding": 20, "written": 10}
LABEL = re.compile(r"^ex-[a-z0-9]+(?:-[a-z0-9]+)+$")


def summary(chapter: cm.Chapter) -> dict:
    """What the guide says about a chapter: title, objectives, prerequisites, times and points."""
    cells = chapter.source.cells
    opening = "\n\n".join(c.source for c in cells[: next((i for i, c in enumerate(cells) if c.cell_type == "code"), 0)])
    blocks = [t for t in cm.MARKDOWN.parse(opening) if t.type in ("inline", "bullet_list_open", "bullet_list_close")]
    start = next(
        (i for i, t in enumerate(blocks) if re.search("learning objectives", t.content, re.IGNORECASE)), len(blocks)
    )
    objectives, inside = [], start + 1 < len(blocks) and blocks[start + 1].type == "bullet_list_open"
    for token in blocks[start + 2 :] if inside else []:
        if token.type == "bullet_list_close" and token.level == 0:
            break
        objectives += [token.content.replace("\n", " ")] if token.type == "inline" else []
    prerequisites = next(
        (
            re.sub(r"^\**prerequisites\.?\**:?\.?\**\s*", "", t.content, flags=re.IGNORECASE).replace("\n", " ")
            for t in blocks
            if re.match(r"^\**prerequisites", t.content, re.IGNORECASE)
        ),
        "",
    )
    student = cm.student_notebook(chapter).cells
    words = sum(len(re.findall(r"[A-Za-z][\w'-]*", c.source)) for c in student if c.cell_type == "markdown")
    code = sum(
        bool(line.strip()) and not line.lstrip().startswith("#")
        for c in student
        if c.cell_type == "code"
        for line in c.source.split("\n")
    )
    exercises, number = chapter.exercises, chapter.number
    return {
        "title": next(iter(re.findall(r"^#\s+(.+)$", opening, flags=re.MULTILINE)), chapter.path.stem),
        "objectives": objectives,
        "prerequisites": prerequisites,
        "stem": chapter.path.stem,
        "number": number,
        "label": f"{number}. " if number else "",
        "exercises": exercises,
        "count": len(exercises),
        "reading": max(5, 5 * math.ceil((words / 150 + code / 10) / 5)),
        "work": sum(e.minutes or DEFAULT_MINUTES[e.kind] for e in exercises),
        "coding": sum(e.kind == "coding" for e in exercises),
        "written": sum(e.kind == "written" for e in exercises),
        "auto": sum(e.points[0] for e in exercises),
        "manual": sum(e.points[1] for e in exercises),
    }


def chapters(root: pathlib.Path = ROOT) -> list[cm.Chapter]:
    return [cm.read_chapter(path, number) for path, number in toc_chapters(root)]


def structure_problems(chapter: cm.Chapter) -> list[str]:
    """Ways a chapter's exercises break CONTRIBUTING.md (labels, folded solutions, what the student edition hides)."""
    problems = list(chapter.problems)
    for exercise in chapter.exercises:
        name = f"exercise {exercise.number} ({exercise.title or 'untitled'})"
        if not exercise.label:
            problems.append(f"{name} has no :label:")
        elif not LABEL.match(exercise.label):
            problems.append(f"{name}: label {exercise.label!r} is not of the form ex-<chapter>-<name>")
        elif not exercise.solution_cells:
            problems.append(f"{name}: no solution-start for {exercise.label!r}")
        elif not exercise.folded:
            problems.append(f"{name}: its solution is not folded (add ':class: dropdown')")
        elif min(exercise.solution_cells) not in (exercise.cell, exercise.cell + 1):
            problems.append(
                f"{name}: its solution must follow it immediately (exercise in cell {exercise.cell}, "
                f"solution starts in cell {min(exercise.solution_cells)})"
            )
        elif exercise.code_answers + exercise.manual == 0:
            problems.append(
                f"{name}: its solution hides nothing from students (no cell between solution-start and solution-end)"
            )
    return problems


def count_problems(chapter: cm.Chapter) -> list[str]:
    """A chapter needs at least two exercises, at least one of them coding with a checker (autograded)."""
    problems = [f"{len(chapter.exercises)} exercise(s), at least 2 expected"] if len(chapter.exercises) < 2 else []
    if not any(e.checkers for e in chapter.exercises):
        problems.append(
            "no coding exercise with a checker (a solution code cell with nbgrader markers and a check_ call)"
        )
    return problems


def render(chapter_list: list[cm.Chapter]) -> str:
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(pathlib.Path(__file__).parent), keep_trailing_newline=True
    )
    environment.filters |= {
        "cell": lambda text: text.replace("|", "\\|"),
        "code": lambda name: f"`{name}`",
        "points": lambda p: " + ".join(f"{n} {kind}" for n, kind in zip(p, ("auto", "manual")) if n) or "0",
    }
    summaries = [summary(c) for c in chapter_list]
    return environment.get_template("exercise_tables.md.j2").render(
        chapters=summaries,
        default_minutes=DEFAULT_MINUTES,
        reading=sum(c["reading"] for c in summaries),
        work=sum(c["work"] for c in summaries),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help=f"exit 1 if {TABLES.name} is out of date")
    parser.add_argument("--problems", action="store_true", help="list exercise-convention problems")
    args = parser.parse_args(argv)
    chapter_list = chapters()
    if args.problems:
        for chapter in chapter_list:
            print(
                "".join(f"{chapter.path.name}: {p}\n" for p in structure_problems(chapter) + count_problems(chapter)),
                end="",
            )
        return 0
    wanted = render(chapter_list)
    if args.check:
        stale = not TABLES.exists() or TABLES.read_text(encoding="utf-8") != wanted
        print(f"{TABLES} is {'out of date: run python tools/exercise_catalog.py' if stale else 'up to date'}")
        return int(stale)
    TABLES.write_text(wanted, encoding="utf-8")
    print(f"wrote {TABLES}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
