"""The course's exercises, read from the chapter notebooks: convention checks and the instructor guide's tables.

Usage::

    python tools/exercise_catalog.py            # rewrite the generated part of book/instructor_guide.md
    python tools/exercise_catalog.py --check    # exit 1 if that part is out of date (tests run this)
    python tools/exercise_catalog.py --problems # list exercise-convention problems per chapter

The generated part of the guide sits between the MyST comment lines
``% BEGIN GENERATED chapters`` and ``% END GENERATED chapters``. It lists, per
chapter in the table of contents: its learning objectives and prerequisites
(taken from the notebook's opening cell), its exercises with kind, checker and
time, and a time estimate. Times are rules of thumb, stated in the guide:
reading at 150 words of prose and 10 lines of code per minute; an exercise
takes 20 minutes if it is a coding exercise and 10 if written, unless the
exercise cell's metadata says otherwise (``{"exercise": {"minutes": N}}``).

Standard library only (like tools/make_student.py, whose parser it uses).
"""

from __future__ import annotations

import argparse
import math
import pathlib
import re
import sys
from dataclasses import dataclass, field

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import make_student as ms  # noqa: E402  (tools/ is not a package)

ROOT = ms.ROOT
GUIDE = ROOT / "book" / "instructor_guide.md"
BEGIN = "% BEGIN GENERATED chapters (tools/exercise_catalog.py; do not edit by hand)"
END = "% END GENERATED chapters"
PROSE_WORDS_PER_MINUTE = 150
CODE_LINES_PER_MINUTE = 10
DEFAULT_MINUTES = {"coding": 20, "written": 10}
LABEL = re.compile(r"^ex-[a-z0-9]+(?:-[a-z0-9]+)+$")


@dataclass
class Chapter:
    path: pathlib.Path
    number: int | None
    title: str
    objectives: list[str]
    prerequisites: str
    prose_words: int
    code_lines: int
    exercises: list[ms.ExerciseInfo]
    problems: list[str] = field(default_factory=list)  # structural problems from the generator

    @property
    def reading_minutes(self) -> int:
        return round_to_5(self.prose_words / PROSE_WORDS_PER_MINUTE + self.code_lines / CODE_LINES_PER_MINUTE)

    @property
    def exercise_minutes(self) -> int:
        return sum(exercise_minutes(e) for e in self.exercises)


def round_to_5(minutes: float) -> int:
    return max(5, 5 * math.ceil(minutes / 5))


def exercise_minutes(exercise: ms.ExerciseInfo) -> int:
    return exercise.minutes if exercise.minutes is not None else DEFAULT_MINUTES[exercise.kind]


def _opening_text(notebook: dict) -> str:
    """The markdown before the first code cell (where the conventions put objectives and prerequisites)."""
    texts = []
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") == "code":
            break
        if cell.get("cell_type") == "markdown":
            texts.append(ms.cell_source(cell))
    return "\n\n".join(texts)


def learning_objectives(text: str) -> list[str]:
    """The bullet list that follows "Learning objectives" (one item per bullet, continuation lines joined)."""
    match = re.search(r"learning objectives", text, flags=re.IGNORECASE)
    if not match:
        return []
    items: list[str] = []
    started = False
    for line in text[match.end():].split("\n")[1:]:
        bullet = re.match(r"^\s*(?:[-*+]|\d+[.)])\s+(.*)$", line)
        if bullet:
            items.append(bullet[1].strip())
            started = True
        elif started and line.strip() and line.startswith((" ", "\t")):
            items[-1] += " " + line.strip()
        elif started:
            break
    return items


def prerequisites(text: str) -> str:
    """The paragraph that starts with "Prerequisites", without that word."""
    match = re.search(r"\**prerequisites\.?\**:?\.?\**\s*", text, flags=re.IGNORECASE)
    if not match:
        return ""
    paragraph = re.split(r"\n\s*\n", text[match.end():], maxsplit=1)[0]
    return " ".join(line.strip() for line in paragraph.split("\n")).strip()


def _title(notebook: dict, path: pathlib.Path) -> str:
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") == "markdown":
            heading = re.search(r"^#\s+(.+)$", ms.cell_source(cell), flags=re.MULTILINE)
            if heading:
                return heading[1].strip()
    return path.stem


def analyse_chapter(path: pathlib.Path, numbers: dict[str, int], root: pathlib.Path = ROOT) -> Chapter:
    notebook = ms.read_notebook(path)
    prefix = ms.exercise_prefix(path, numbers, root)
    result = ms.make_student_notebook(notebook, path=path, prefix=prefix)
    opening = _opening_text(notebook)
    prose = code = 0
    for cell in result.notebook["cells"]:  # the student's view: solutions do not count as reading
        source = ms.cell_source(cell)
        if cell.get("cell_type") == "markdown":
            prose += len(re.findall(r"[A-Za-z][\w'-]*", source))
        elif cell.get("cell_type") == "code":
            code += sum(1 for line in source.split("\n") if line.strip() and not line.lstrip().startswith("#"))
    number = int(prefix.rstrip(".")) if prefix else None
    return Chapter(path, number, _title(notebook, path), learning_objectives(opening), prerequisites(opening),
                   prose, code, result.exercises, list(result.problems))


def chapters(root: pathlib.Path = ROOT) -> list[Chapter]:
    """Every notebook chapter of the table of contents, in reading order."""
    numbers = ms.chapter_numbers(root)
    return [analyse_chapter(path, numbers, root) for path in ms.toc_notebooks(root)]


# --------------------------------------------------------------------------- conventions


def structure_problems(chapter: Chapter) -> list[str]:
    """Ways a chapter's exercises break CONTRIBUTING.md (labels, folded solutions, what the student edition hides)."""
    problems = list(chapter.problems)
    for exercise in chapter.exercises:
        name = f"exercise {exercise.number} ({exercise.title or 'untitled'})"
        if not exercise.label:
            problems.append(f"{name} has no :label:")
            continue
        if not LABEL.match(exercise.label):
            problems.append(f"{name}: label {exercise.label!r} is not of the form ex-<chapter>-<name>")
        if not exercise.solution_form:
            problems.append(f"{name}: no solution or solution-start for {exercise.label!r}")
            continue
        if "dropdown" not in exercise.solution_classes:
            problems.append(f"{name}: its solution is not folded (add ':class: dropdown')")
        first = min(exercise.solution_cells)
        if first not in (exercise.cell, exercise.cell + 1):
            problems.append(f"{name}: its solution must follow it immediately (exercise in cell {exercise.cell}, solution starts in cell {first})")
        if exercise.code_stubs + exercise.text_stubs == 0:
            problems.append(f"{name}: its solution hides nothing from students (no nbgrader markers, no cell tagged 'solution')")
    return problems


def count_problems(chapter: Chapter) -> list[str]:
    """A chapter needs at least two exercises, at least one of them coding."""
    problems = []
    if len(chapter.exercises) < 2:
        problems.append(f"{len(chapter.exercises)} exercise(s), at least 2 expected")
    if not any(e.kind == "coding" for e in chapter.exercises):
        problems.append(f"no coding exercise (a solution code cell with nbgrader markers or the 'solution' tag)")
    return problems


# --------------------------------------------------------------------------- the guide's tables


def _escape(text: str) -> str:
    return text.replace("|", "\\|")


def render(chapter_list: list[Chapter]) -> str:
    lines = [
        "| chapter | exercises (coding + written) | reading | exercises | total |",
        "| --- | --- | --- | --- | --- |",
    ]
    for c in chapter_list:
        coding = sum(e.kind == "coding" for e in c.exercises)
        label = f"{c.number}. " if c.number else ""
        lines.append(
            f"| {{doc}}`{label}{_escape(c.title)} <{c.path.stem}>` | {coding} + {len(c.exercises) - coding} | "
            f"{c.reading_minutes} min | {c.exercise_minutes} min | {c.reading_minutes + c.exercise_minutes} min |"
        )
    total_reading = sum(c.reading_minutes for c in chapter_list)
    total_exercises = sum(c.exercise_minutes for c in chapter_list)
    count = sum(len(c.exercises) for c in chapter_list)
    lines.append(f"| **all chapters** | {count} | {total_reading} min | {total_exercises} min | "
                 f"{total_reading + total_exercises} min (about {round((total_reading + total_exercises) / 60, 1)} h) |")
    for c in chapter_list:
        label = f"Chapter {c.number}: " if c.number else ""
        lines += ["", f"### {label}{c.title}", ""]
        lines.append(f"{{doc}}`Open the chapter <{c.path.stem}>` · notebook `book/{c.path.name}` · "
                     f"about {c.reading_minutes} min to read and run, {c.exercise_minutes} min of exercises.")
        lines.append("")
        if c.objectives:
            lines.append("**Learning objectives.** After this chapter a student can")
            lines += [f"- {objective}" for objective in c.objectives]
        else:
            lines.append("**Learning objectives.** *(not stated in the notebook yet)*")
        lines += ["", f"**Prerequisites.** {c.prerequisites or '*(not stated in the notebook yet)*'}", ""]
        if c.exercises:
            lines += ["| exercise | kind | checker | time |", "| --- | --- | --- | --- |"]
            for e in c.exercises:
                title = _escape(e.title or "untitled")
                name = f"{{ref}}`{e.number} {title} <{e.label}>`" if e.label else f"{e.number} {title}"
                checker = ", ".join(f"`{n}`" for n in e.checkers) or "—"
                estimate = f"{exercise_minutes(e)} min" + ("" if e.minutes is not None else "*")
                lines.append(f"| {name} | {e.kind} | {checker} | {estimate} |")
        else:
            lines.append("*No exercises.*")
    lines += ["", "\\* default estimate (20 min coding, 10 min written); an author can set it in the exercise cell's metadata."]
    return "\n".join(lines)


def updated_guide(text: str, generated: str) -> str:
    if BEGIN not in text or END not in text:
        raise ValueError(f"the guide needs the lines {BEGIN!r} and {END!r} around its generated part")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n\n{generated}\n\n{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the guide's generated part is out of date")
    parser.add_argument("--problems", action="store_true", help="list exercise-convention problems")
    parser.add_argument("--guide", type=pathlib.Path, default=GUIDE)
    args = parser.parse_args(argv)
    chapter_list = chapters()
    if args.problems:
        for chapter in chapter_list:
            for problem in structure_problems(chapter) + count_problems(chapter):
                print(f"{chapter.path.name}: {problem}")
        return 0
    current = args.guide.read_text(encoding="utf-8")
    wanted = updated_guide(current, render(chapter_list))
    if args.check:
        if current != wanted:
            print(f"{args.guide} is out of date: run python tools/exercise_catalog.py", file=sys.stderr)
            return 1
        return 0
    if wanted != current:
        args.guide.write_text(wanted, encoding="utf-8")
        print(f"updated {args.guide}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
