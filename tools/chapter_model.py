"""A chapter notebook read into its exercises and its nbgrader source notebook (CONTRIBUTING.md, "Exercises").

Every cell between ``solution-start`` and ``solution-end`` becomes an nbgrader answer cell, and each checker
call in a code answer a locked test cell ``assert check_x(fn)`` after it.
"""

import ast
import copy
import pathlib
import re
from dataclasses import dataclass, field
from typing import NamedTuple

import nbformat
from markdown_it import MarkdownIt
from nbconvert.preprocessors import ClearOutputPreprocessor
from nbgrader.preprocessors import ClearSolutions

CHECKER_POINTS, ANSWER_POINTS = 2, 1  # a test cell; an answer graded by hand
MARKDOWN = MarkdownIt("commonmark")
MARKING = ("exercise", "solution", "solution-start", "solution-end")
LABEL = re.compile(r"^ex-[a-z0-9]+(?:-[a-z0-9]+)+$")


class NotebookError(ValueError):
    """A solution notebook with unbalanced solution markers, from which no edition can be built."""


class Directive(NamedTuple):
    name: str
    argument: str
    options: dict[str, str]
    body: str
    start: int  # its lines in the markdown text: start .. end - 1
    end: int


def directives(text: str) -> list[Directive]:
    """The MyST directives fenced at the top level of a markdown text, with their ``:key: value`` options."""
    found = []
    for token in MARKDOWN.parse(text):
        if token.type == "fence" and token.level == 0 and (head := re.match(r"\{([\w-]+)\}(.*)", token.info)):
            lines = token.content.split("\n")
            options = {}
            while lines and (option := re.match(r"^:([\w-]+):\s*(.*?)\s*$", lines[0])):
                options[option[1]] = option[2]
                lines.pop(0)
            start, end = token.map or (0, 0)  # a fence always has its lines
            found.append(Directive(head[1], head[2].strip(), options, "\n".join(lines).strip("\n"), start, end))
    return found


@dataclass
class Exercise:
    label: str
    title: str
    number: str  # "3.1", as the website numbers it
    cell: int  # its cell in the solution notebook
    minutes: int | None = None  # from the cell's metadata {"exercise": {"minutes": N}}
    checkers: list[str] = field(default_factory=list)  # one autograded test cell each
    code_answers: int = 0  # code answers with a scaffold (nbgrader markers)
    manual: int = 0  # answers graded by hand: written ones, and code without a checker

    @property
    def kind(self) -> str:
        return "coding" if self.code_answers else "written"

    @property
    def points(self) -> tuple[int, int]:
        return CHECKER_POINTS * len(self.checkers), ANSWER_POINTS * self.manual  # (autograded, by hand)


@dataclass
class Chapter:
    path: pathlib.Path
    number: int | None  # its number on the website
    source: nbformat.NotebookNode  # the nbgrader source notebook
    exercises: list[Exercise]
    problems: list[str]  # breaches of CONTRIBUTING.md's conventions


def student_code(source: str, where: str) -> str:
    """A solution code cell as nbgrader's ClearSolutions gives it to students."""
    begins, ends = source.count("BEGIN SOLUTION"), source.count("END SOLUTION")
    try:  # nbgrader refuses nested and unclosed blocks, not an END without its BEGIN (what precedes would leak)
        if begins != ends:
            raise RuntimeError(
                f"{abs(begins - ends)} {'BEGIN' if begins > ends else 'END'} SOLUTION marker(s) without a partner"
            )
        cell = nbformat.v4.new_code_cell(source, metadata={"nbgrader": {"solution": True}})
        return ClearSolutions().preprocess_cell(cell, {"language": "python"}, 0)[0].source
    except RuntimeError as error:
        raise NotebookError(f"{where}: {error}") from None


def parse_cell(source: str) -> ast.Module | None:
    """A code cell's syntax tree with its magics and shell escapes blanked out; None if it is not Python."""
    try:
        return ast.parse("\n".join("" if line.lstrip()[:1] in ("%", "!") else line for line in source.split("\n")))
    except SyntaxError:
        return None


def names_used_and_bound(source: str) -> tuple[set[str], set[str]]:
    """(the names a cell reads before it binds them, the names it binds at top level other than by import)."""
    if (tree := parse_cell(source)) is None:
        return set(re.findall(r"[A-Za-z_]\w*", source)), set()
    used: set[str] = set()
    bound: set[str] = set()
    for statement in tree.body:
        names = [n for n in ast.walk(statement) if isinstance(n, ast.Name)]
        used |= {n.id for n in names if isinstance(n.ctx, ast.Load)} - bound
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(statement.name)
        elif not isinstance(statement, (ast.Import, ast.ImportFrom)):
            bound |= {n.id for n in names if isinstance(n.ctx, ast.Store)}
    return used, bound


def checker_calls(source: str) -> list[str]:
    """The calls of ``check_*`` (not ``check_function``) in a cell outside function bodies, as source text."""
    found, nodes = [], list(getattr(parse_cell(source), "body", []))
    while nodes:
        node = nodes.pop(0)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id.startswith("check_"):
            found += [ast.unparse(node)] if node.func.id != "check_function" else []
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            nodes.extend(ast.iter_child_nodes(node))
    return list(dict.fromkeys(found))


class _Reader:
    """Walks a solution notebook cell by cell into the nbgrader source notebook, the exercises and the problems."""

    def __init__(self, path: pathlib.Path, number: int | None):
        self.chapter = Chapter(path, number, nbformat.read(path, as_version=4), [], [])
        self.exercises: dict[str, Exercise] = {}
        self.ids = {c.get("id") for c in self.chapter.source.cells}  # cell ids and grade ids taken
        self.open: str | None = None  # the label of the solution we are in
        self.tainted: set[str] = set()  # names whose value a solution computed
        self.cells: list[nbformat.NotebookNode] = []
        self.where = path.name

    def problem(self, text: str) -> None:
        self.chapter.problems.append(f"{self.where}: {text}")

    def grade(self, cell: nbformat.NotebookNode, kind: str, points: int | None) -> None:
        """Add a cell as an nbgrader ``answer`` (autograded by test cells if ``points`` is None) or ``test``."""
        owner = self.exercises.get(self.open or "")
        base = grade_id = re.sub(r"[^A-Za-z0-9_-]", "-", f"{owner.label if owner else 'x'}-{kind}")[:56]
        while grade_id in self.ids:
            grade_id = f"{base}-{len(self.ids)}"
        self.ids.add(grade_id)
        solution = kind == "answer"
        grading = {"grade": bool(points), "grade_id": grade_id, "locked": not solution, "solution": solution}
        cell.metadata["nbgrader"] = grading | {"schema_version": 3} | ({"points": points} if points else {})
        if owner and solution:
            owner.manual += bool(points)
        if not solution:
            cell.id = grade_id
        self.cells.append(cell)

    def markdown(self, index: int, cell: nbformat.NotebookNode) -> None:
        found = [d for d in directives(cell.source) if d.name in MARKING]
        if self.open is not None and not found:
            return self.grade(cell, "answer", ANSWER_POINTS)  # a written answer
        lines, cursor, kept = cell.source.split("\n"), 0, []
        for d in [*found, Directive("", "", {}, "", len(lines), len(lines))]:
            if self.open is None and (text := "\n".join(lines[cursor : d.start]).strip("\n")):
                kept.append(text)  # text inside a solution is notes: left out
            cursor = d.end
            if d.name == "exercise":
                kept.append(self.exercise(index, cell, d))
            elif d.name == "solution-start":
                self.solution_start(index, d)
                kept.append("**Your answer.**")
            elif d.name == "solution-end":
                if self.open is None:
                    self.problem("solution-end without solution-start")
                self.open = None
            elif d.name == "solution":
                self.problem("a {solution} directive: write solution-start, the answer, solution-end")
        if kept:
            cell.source = "\n\n".join(kept)
            self.cells.append(cell)

    def exercise(self, index: int, cell: nbformat.NotebookNode, d: Directive) -> str:
        """Record an exercise; returns the heading and text the student edition shows in its place."""
        minutes = cell.metadata.get("exercise", {}).get("minutes")
        minutes = minutes if isinstance(minutes, int) else None
        number = (f"{self.chapter.number}." if self.chapter.number else "") + str(len(self.chapter.exercises) + 1)
        label = d.options.get("label", "")
        if label in self.exercises:
            self.problem(f"exercise label {label!r} is used twice")
        if not LABEL.match(label):  # also a missing one
            self.problem(f"exercise {number}: its :label: {label!r} is not of the form ex-<chapter>-<name>")
        self.exercises[label] = Exercise(label, d.argument, number, index, minutes)
        self.chapter.exercises.append(self.exercises[label])
        heading = f"#### Exercise {number}" + (f": {d.argument}" if d.argument else "")
        return f"{heading}\n\n{d.body}" if d.body.strip() else heading

    def solution_start(self, index: int, d: Directive) -> None:
        if self.open is not None:
            self.problem(f"solution-start inside the open solution of {self.open!r}")
        if (target := self.exercises.get(d.argument)) is None:
            self.problem(f"solution-start for unknown exercise {d.argument!r}")
        elif "dropdown" not in d.options.get("class", "").split():
            self.problem(f"exercise {target.number}: its solution is not folded (add ':class: dropdown')")
        elif index not in (target.cell, target.cell + 1):
            self.problem(f"exercise {target.number}: its solution must follow it immediately")
        self.open = d.argument

    def code(self, index: int, cell: nbformat.NotebookNode) -> None:
        marked = "BEGIN SOLUTION" in cell.source or "END SOLUTION" in cell.source
        if marked and self.open is None:
            self.problem("solution markers outside solution-start/solution-end (the website shows them unfolded)")
        used, bound = names_used_and_bound(cell.source)
        if self.open is not None or used & self.tainted:
            ClearOutputPreprocessor().preprocess_cell(cell, {}, index)  # an output a solution computed
            self.tainted |= bound
        else:
            self.tainted -= bound
        if self.open is None:
            return self.cells.append(cell)
        tests = checker_calls(student_code(cell.source, self.where))
        if owner := self.exercises.get(self.open):
            owner.code_answers += marked  # a scaffold the student completes
            owner.checkers += [call.split("(", 1)[0] for call in tests]
        self.grade(cell, "answer", None if tests else ANSWER_POINTS)
        for call in tests:
            test = f"# autograder test: the checker must accept the answer above\nassert {call}"
            self.grade(nbformat.v4.new_code_cell(test), "test", CHECKER_POINTS)

    def read(self) -> Chapter:
        for index, original in enumerate(self.chapter.source.cells):
            self.where = f"{self.chapter.path.name}, cell {index}"
            if "solution" in original.metadata.get("tags", []):
                self.problem("the tag 'solution' is not used: a solution is what solution-start/solution-end enclose")
            (self.markdown if original.cell_type == "markdown" else self.code)(index, copy.deepcopy(original))
        self.where, exercises = self.chapter.path.name, self.chapter.exercises
        if self.open is not None:
            self.problem(f"the solution of {self.open!r} is never closed with solution-end")
        for e in exercises:
            if e.code_answers + e.manual == 0:  # no solution-start, or nothing before its solution-end
                self.problem(f"exercise {e.number}: no solution (no cell between solution-start {e.label} and -end)")
        if self.chapter.number is not None and len(exercises) < 2:  # an unnumbered appendix needs no exercise
            self.problem(f"{len(exercises)} exercise(s), at least 2 expected")
        if self.chapter.number is not None and not any(e.checkers for e in exercises):
            self.problem(
                "no coding exercise with a checker (a solution code cell with nbgrader markers and a check_ call)"
            )
        self.chapter.source.cells = self.cells
        return self.chapter


def read_chapter(path: pathlib.Path, number: int | None = None) -> Chapter:
    """Read one solution notebook; ``number`` is its chapter's number on the website (None: unnumbered)."""
    return _Reader(path, number).read()


def student_notebook(chapter: Chapter) -> nbformat.NotebookNode:
    """The chapter as ``nbgrader generate_assignment`` releases it, without the test cells and nbgrader's metadata."""
    notebook = copy.deepcopy(chapter.source)
    notebook.cells = [c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("solution", True)]
    notebook, _ = ClearSolutions().preprocess(notebook, {})
    for cell in notebook.cells:
        cell.metadata.pop("nbgrader", None)
    notebook.metadata["posenc_student_edition"] = {
        "generated_from": chapter.path.name,
        "generator": "tools/make_student.py",
        "note": "generated from the solution notebook; do not edit by hand",
    }
    return notebook
