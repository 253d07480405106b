"""A chapter notebook read once into what the student edition, the nbgrader course and the instructor guide need.

:func:`read_chapter` walks a solution notebook (MyST directives parsed with markdown-it-py) into its exercises
and its nbgrader source notebook. A solution is marked one way (CONTRIBUTING.md): every cell between
``solution-start`` and ``solution-end`` is an answer, an nbgrader solution cell. A code cell keeps what lies
outside its ``### BEGIN/END SOLUTION`` markers (a scaffold; without markers it becomes a stub), and each
checker call in it becomes a locked test cell ``assert check_x(fn)``, 2 points; an answer without a checker
is graded by hand, 1 point. Text in the solution-start and solution-end cells that lies inside the solution
is notes, left out. Outputs a solution computed are cleared. :func:`student_notebook` is what ``nbgrader
generate_assignment`` releases, minus the tests. Breaches of the conventions go into ``Chapter.problems``;
unbalanced solution markers raise.
"""

from __future__ import annotations

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

CHECKER_POINTS, ANSWER_POINTS = 2, 1
CHECKER = re.compile(r"\b(check_(?!function\b)\w+)\s*\(")
MARKDOWN = MarkdownIt("commonmark")
SOLUTION_DIRECTIVES = ("exercise", "solution", "solution-start", "solution-end")


class NotebookError(ValueError):
    """A solution notebook no edition can be built from (unbalanced solution markers)."""


class Directive(NamedTuple):
    name: str
    argument: str
    options: dict[str, str]
    body: str
    start: int  # its lines in the markdown text: start .. end - 1
    end: int


def directives(text: str) -> list[Directive]:
    """The fenced MyST directives at the top level of a markdown text, options (``:key: value``) parsed."""
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
    cell: int  # index of its cell in the solution notebook
    minutes: int | None = None  # the cell's metadata {"exercise": {"minutes": N}}
    folded: bool = False  # its solution-start has :class: dropdown
    solution_cells: list[int] = field(default_factory=list)
    checkers: list[str] = field(default_factory=list)  # autograded, one test cell each
    code_answers: int = 0  # code cells with a scaffold (nbgrader markers)
    manual: int = 0  # answers graded by hand: written ones, code without a checker

    @property
    def kind(self) -> str:
        return "coding" if self.code_answers else "written"

    @property
    def points(self) -> tuple[int, int]:
        """(autograded, manually graded) points in the nbgrader course."""
        return CHECKER_POINTS * len(self.checkers), ANSWER_POINTS * self.manual


@dataclass
class Chapter:
    path: pathlib.Path
    number: int | None
    source: nbformat.NotebookNode  # the nbgrader source notebook
    exercises: list[Exercise]
    problems: list[str]  # breaches of CONTRIBUTING.md's conventions (a test fails on them)


def student_code(source: str, where: str) -> str:
    """A solution code cell as nbgrader's ClearSolutions gives it to students; unbalanced markers are an error."""
    begins, ends = source.count("BEGIN SOLUTION"), source.count("END SOLUTION")
    try:  # nbgrader refuses nested and unclosed blocks, not an END without its BEGIN (the lines above would leak)
        if begins != ends:
            which = "BEGIN" if begins > ends else "END"
            raise RuntimeError(f"{abs(begins - ends)} {which} SOLUTION marker(s) without a partner")
        cell = nbformat.v4.new_code_cell(source, metadata={"nbgrader": {"solution": True}})
        return ClearSolutions().preprocess_cell(cell, {"language": "python"}, 0)[0].source
    except RuntimeError as error:  # also nbgrader's own: nested or unclosed blocks
        raise NotebookError(f"{where}: {error}") from None


def parse_cell(source: str) -> ast.Module | None:
    """A code cell's syntax tree (its magics and shell escapes blanked out), None if it is not Python."""
    try:  # IPython magics and shell escapes are not Python
        return ast.parse("\n".join("" if line.lstrip()[:1] in ("%", "!") else line for line in source.split("\n")))
    except SyntaxError:
        return None


def names_used_and_bound(source: str) -> tuple[set[str], set[str]]:
    """(names a cell reads before binding them, names it binds at top level, imports left out)."""
    if (tree := parse_cell(source)) is None:
        return set(re.findall(r"[A-Za-z_]\w*", source)), set()
    used: set[str] = set()
    bound: set[str] = set()
    for statement in tree.body:
        used |= {n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - bound
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(statement.name)
        elif not isinstance(statement, (ast.Import, ast.ImportFrom)):
            bound |= {n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return used, bound


def checker_calls(source: str) -> list[str]:
    """The checker calls of a cell outside function bodies (also inside an ``if``), as source text."""
    found, nodes = [], list(getattr(parse_cell(source), "body", []))
    while nodes:
        node = nodes.pop(0)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and CHECKER.match(node.func.id + "("):
            found.append(ast.unparse(node))
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            nodes.extend(ast.iter_child_nodes(node))
    return list(dict.fromkeys(found))


class _Reader:
    """Walks a solution notebook cell by cell, building the nbgrader source and the exercises."""

    def __init__(self, path: pathlib.Path, number: int | None):
        self.notebook = nbformat.read(path, as_version=4)
        self.chapter = Chapter(path, number, copy.deepcopy(self.notebook), [], [])
        self.by_label: dict[str, Exercise] = {}
        self.cells: list[nbformat.NotebookNode] = []
        self.taken = {c.get("id") for c in self.notebook.cells}  # cell and grade ids
        self.open_label: str | None = None  # the gated solution we are in
        self.tainted: set[str] = set()  # names the answers bind
        self.where = path.name

    def problem(self, text: str) -> None:
        self.chapter.problems.append(f"{self.where}: {text}")

    def new_id(self, base: str) -> str:
        base = candidate = re.sub(r"[^A-Za-z0-9_-]", "-", base)[:56]
        while candidate in self.taken:
            candidate = f"{base}-{len(self.taken)}"
        self.taken.add(candidate)
        return candidate

    def nbgrader(self, cell: nbformat.NotebookNode, grade_id: str, *, solution: bool, points: int | None) -> None:
        grading = {"grade": bool(points), "grade_id": grade_id, "locked": not solution, "schema_version": 3}
        cell.metadata["nbgrader"] = grading | {"solution": solution} | ({"points": points} if points else {})
        self.cells.append(cell)

    def answer(self, cell: nbformat.NotebookNode, owner: Exercise | None, index: int, points: int | None) -> None:
        """An nbgrader solution cell: autograded by the test cells after it if ``points`` is None, else by hand."""
        self.nbgrader(cell, self.new_id(f"{owner.label if owner else 'x'}-answer"), solution=True, points=points)
        if owner:
            owner.manual += bool(points)

    def exercise(self, index: int, cell: nbformat.NotebookNode, d: Directive) -> str:
        """Record an exercise directive; returns the heading the student edition shows in its place."""
        minutes = cell.metadata.get("exercise", {}).get("minutes")
        number = (f"{self.chapter.number}." if self.chapter.number else "") + str(len(self.chapter.exercises) + 1)
        label = d.options.get("label", "")
        if label in self.by_label:
            self.problem(f"exercise label {label!r} is used twice")
        exercise = Exercise(label, d.argument, number, index, minutes if isinstance(minutes, int) else None)
        self.chapter.exercises.append(exercise)
        self.by_label[label] = exercise
        heading = f"#### Exercise {number}" + (f": {d.argument}" if d.argument else "")
        return f"{heading}\n\n{d.body}" if d.body.strip() else heading

    def solution_start(self, index: int, d: Directive) -> None:
        if (target := self.by_label.get(d.argument)) is None:
            self.problem(f"solution-start for unknown exercise {d.argument!r}")
        else:
            target.folded, target.solution_cells = "dropdown" in d.options.get("class", "").split(), [index]
        if self.open_label is not None:
            self.problem(f"solution-start inside the open solution of {self.open_label!r}")
        self.open_label = d.argument

    def markdown(self, index: int, cell: nbformat.NotebookNode, owner: Exercise | None) -> None:
        found, lines, cursor = directives(cell.source), cell.source.split("\n"), 0
        if self.open_label is not None and not any(d.name in SOLUTION_DIRECTIVES for d in found):
            return self.answer(cell, owner, index, ANSWER_POINTS)  # a written answer
        kept: list[str] = []  # the parts the student edition keeps; notes inside a solution go
        for d in [*found, Directive("", "", {}, "", len(lines), len(lines))]:
            if self.open_label is None and (text := "\n".join(lines[cursor : d.start]).strip("\n")):
                kept.append(text)
            cursor = d.end if d.name in SOLUTION_DIRECTIVES else d.start
            if d.name == "exercise":
                kept.append(self.exercise(index, cell, d))
            elif d.name == "solution-start":
                self.solution_start(index, d)
                kept.append("**Your answer.**")
            elif d.name == "solution-end":
                if self.open_label is None:
                    self.problem("solution-end without solution-start")
                self.open_label = None
            elif d.name == "solution":
                self.problem("a {solution} directive: write solution-start, the answer, solution-end")
        if kept:
            cell.source = "\n\n".join(kept)
            self.cells.append(cell)

    def code(self, index: int, cell: nbformat.NotebookNode, owner: Exercise | None) -> None:
        is_answer = self.open_label is not None
        marked = "BEGIN SOLUTION" in cell.source or "END SOLUTION" in cell.source
        if marked and not is_answer:
            self.problem("solution markers outside solution-start/solution-end (the website shows them unfolded)")
        used, bound = names_used_and_bound(cell.source)
        if is_answer or used & self.tainted:
            ClearOutputPreprocessor().preprocess_cell(cell, {}, index)  # an output a solution computed
            self.tainted |= bound
        else:
            self.tainted -= bound
        if not is_answer:
            return self.cells.append(cell)
        tests = checker_calls(student_code(cell.source, self.where))
        self.answer(cell, owner, index, None if tests else ANSWER_POINTS)
        if owner:
            owner.code_answers += marked  # a scaffold the student completes
            owner.checkers += [call.split("(", 1)[0] for call in tests]
        for call in tests:
            test_id = self.new_id(f"{owner.label if owner else 'x'}-test")
            test = nbformat.v4.new_code_cell(
                f"# autograder test: the checker must accept the answer above\nassert {call}"
            )
            test.id = test_id
            self.nbgrader(test, test_id, solution=False, points=CHECKER_POINTS)

    def read(self) -> Chapter:
        for index, original in enumerate(self.notebook.cells):
            self.where = f"{self.chapter.path.name}, cell {index}"
            owner = self.by_label.get(self.open_label or "")
            if owner and index not in owner.solution_cells:
                owner.solution_cells.append(index)
            if "solution" in original.metadata.get("tags", []):
                self.problem("the tag 'solution' is not used: a solution is what solution-start/solution-end enclose")
            read = self.markdown if original.cell_type == "markdown" else self.code
            read(index, copy.deepcopy(original), owner)
        if self.open_label is not None:
            self.where = self.chapter.path.name
            self.problem(f"the solution of {self.open_label!r} is never closed with solution-end")
        self.chapter.source.cells = self.cells
        return self.chapter


def read_chapter(path: pathlib.Path, number: int | None = None) -> Chapter:
    """Parse one solution notebook (``number``: the chapter's number on the website) into the model."""
    return _Reader(path, number).read()


def student_notebook(chapter: Chapter) -> nbformat.NotebookNode:
    """The chapter as nbgrader releases it, without the test cells and nbgrader's metadata."""
    notebook = copy.deepcopy(chapter.source)
    notebook.cells = [c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("solution", True)]
    notebook, _ = ClearSolutions().preprocess(notebook, {})
    for cell in notebook.cells:
        cell.metadata.pop("nbgrader", None)
    note = "generated from the solution notebook; do not edit by hand"
    notebook.metadata["posenc_student_edition"] = {"generated_from": chapter.path.name, "note": note}
    notebook.metadata["posenc_student_edition"]["generator"] = "tools/make_student.py"
    return notebook
