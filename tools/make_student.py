"""Generate the student edition of the course: every exercise solution replaced by a stub.

Usage::

    python tools/make_student.py                 # book/*.ipynb -> student/ and student.zip
    python tools/make_student.py --out DIR --zip FILE.zip
    python tools/make_student.py --nbgrader DIR  # also write nbgrader "source" notebooks

Standard library only, so an instructor can run it on a fresh clone without the
course's virtual environment.

What a solution is (see CONTRIBUTING.md, "Exercises"):

- the lines between nbgrader markers (a line containing ``BEGIN SOLUTION`` and
  one containing ``END SOLUTION``) in any cell: in a code cell they become
  ``# YOUR CODE HERE`` / ``raise NotImplementedError()`` indented like the
  ``BEGIN`` line, in a markdown cell ``YOUR ANSWER HERE``;
- a cell tagged ``solution`` (or with nbgrader metadata ``solution: true``) and
  no markers: a code cell becomes the two stub lines, a markdown cell
  ``YOUR ANSWER HERE``;
- the body of a ``{solution}`` directive: replaced by ``YOUR ANSWER HERE``;
- markdown text between ``{solution-start}`` and ``{solution-end}`` that is not
  in a tagged cell (an explanation of the solution): dropped.

The exercise text stays, rewritten from the MyST ``{exercise}`` directive (which
plain Jupyter shows as a code block) into a heading "Exercise 3.1: title" with
the number the website shows. ``{solution-start}`` becomes a bold "Your answer"
line and ``{solution-end}`` disappears. Code outside the markers (the ``def``
line, the checker call) stays.

Outputs are removed from every solution cell, from every cell inside a gated
solution, and from every later code cell that uses a name a solution defines
(its stored output was computed by the solution, e.g. a checker's ✅). All other
cells keep their outputs, so a student can read a chapter's figures before
solving its exercises. Lines between ``BEGIN HIDDEN TESTS`` / ``END HIDDEN TESTS``
(nbgrader's hidden tests) are removed.

The edition also contains a copy of ``posenc_lib`` and ``pyproject.toml`` (the
notebooks import the library; the student installs it with ``pip install .``),
the data files under ``book/`` (not the website's ``_static/``), any other file
of the repository a notebook refers to by a relative path, and a README saying
how to install and work. The zip is reproducible: same input, same bytes.
"""

from __future__ import annotations

import argparse
import ast
import copy
import json
import pathlib
import re
import shutil
import subprocess
import sys
import time
import zipfile
from dataclasses import dataclass, field
from typing import Any, Iterable

ROOT = pathlib.Path(__file__).resolve().parents[1]

BEGIN_SOLUTION = "BEGIN SOLUTION"  # nbgrader's delimiters: any line containing them is a marker
END_SOLUTION = "END SOLUTION"
BEGIN_HIDDEN = "BEGIN HIDDEN TESTS"
END_HIDDEN = "END HIDDEN TESTS"
CODE_STUB = ("# YOUR CODE HERE", "raise NotImplementedError()")
TEXT_STUB = "YOUR ANSWER HERE"
SOLUTION_TAG = "solution"
ANSWER_LINE = "**Your answer.**"
CHECKER_CALL = re.compile(r"\b(check_[A-Za-z0-9_]+)\s*\(")
EXERCISE_DIRECTIVES = ("exercise", "exercise-start", "exercise-end", "solution", "solution-start", "solution-end")


class NotebookError(ValueError):
    """A solution notebook that does not follow the exercise convention (unbalanced markers, ...)."""


# --------------------------------------------------------------------------- notebooks as JSON


def read_notebook(path: pathlib.Path) -> dict:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    if notebook.get("nbformat") != 4:
        raise NotebookError(f"{path}: expected an nbformat 4 notebook, got nbformat {notebook.get('nbformat')!r}")
    return notebook


def write_notebook(notebook: dict, path: pathlib.Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")


def cell_source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def cell_tags(cell: dict) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def is_tagged_solution(cell: dict) -> bool:
    """Tagged ``solution``, or marked as a solution cell by nbgrader's own metadata."""
    nbgrader = cell.get("metadata", {}).get("nbgrader", {})
    return SOLUTION_TAG in cell_tags(cell) or bool(nbgrader.get("solution"))


def output_texts(cell: dict) -> list[str]:
    """Every text payload of a cell's outputs (streams, results, images as base64, tracebacks)."""
    texts: list[str] = []
    for output in cell.get("outputs", []):
        if "text" in output:
            texts.append("".join(output["text"]) if isinstance(output["text"], list) else output["text"])
        for value in output.get("data", {}).values():
            if isinstance(value, list):
                texts.append("".join(value))
            elif isinstance(value, str):
                texts.append(value)
            else:
                texts.append(json.dumps(value, sort_keys=True))
        if "traceback" in output:
            texts.append("\n".join(output["traceback"]))
    return texts


# --------------------------------------------------------------------------- MyST directives


@dataclass
class Directive:
    """One fenced MyST directive in a markdown cell (```` ```{name} argument ```` or ``:::{name}``)."""

    name: str
    argument: str
    options: dict[str, str]
    body: str
    start: int  # index of the opening fence line
    end: int  # index of the closing fence line (== last line if unclosed)


FENCE_OPEN = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|:{3,})(?P<info>.*)$")
DIRECTIVE_INFO = re.compile(r"^\{(?P<name>[A-Za-z][\w.:-]*)\}\s*(?P<argument>.*?)\s*$")
OPTION_LINE = re.compile(r"^:(?P<key>[\w-]+):\s*(?P<value>.*?)\s*$")


def find_directives(text: str) -> list[Directive]:
    """The top-level fenced directives of a markdown text, in order. Plain code fences are skipped."""
    lines = text.split("\n")
    found: list[Directive] = []
    i = 0
    while i < len(lines):
        opening = FENCE_OPEN.match(lines[i])
        if not opening or (opening["fence"][0] == "`" and "`" in opening["info"]):
            i += 1
            continue
        fence = opening["fence"]
        close = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}\s*$")
        end = i + 1
        while end < len(lines) and not close.match(lines[end]):
            end += 1
        info = DIRECTIVE_INFO.match(opening["info"].strip())
        if info:
            body_lines = lines[i + 1 : end]
            options: dict[str, str] = {}
            if body_lines and body_lines[0].strip() == "---":  # YAML-style options block
                stop = next((k for k in range(1, len(body_lines)) if body_lines[k].strip() == "---"), None)
                if stop is not None:
                    for line in body_lines[1:stop]:
                        key, _, value = line.partition(":")
                        options[key.strip()] = value.strip()
                    body_lines = body_lines[stop + 1 :]
            while body_lines and OPTION_LINE.match(body_lines[0]):
                option = OPTION_LINE.match(body_lines[0])
                options[option["key"]] = option["value"]
                body_lines = body_lines[1:]
            found.append(Directive(info["name"], info["argument"], options, "\n".join(body_lines).strip("\n"), i, min(end, len(lines) - 1)))
        i = end + 1
    return found


def classes(directive: Directive) -> list[str]:
    return directive.options.get("class", "").split()


# --------------------------------------------------------------------------- nbgrader markers


def replace_marked_regions(source: str, stub: Iterable[str], *, where: str) -> tuple[str, list[list[str]]]:
    """Replace each ``BEGIN SOLUTION`` ... ``END SOLUTION`` block by ``stub``, indented like its ``BEGIN`` line.

    Hidden-test blocks (``BEGIN HIDDEN TESTS`` ... ``END HIDDEN TESTS``) are removed. Returns the new
    source and the removed solution lines, one list per block. Raises :class:`NotebookError` on an
    unbalanced or nested marker, naming ``where``.
    """
    stub = tuple(stub)
    out: list[str] = []
    removed: list[list[str]] = []
    state: str | None = None  # None, "solution" or "hidden"
    for number, line in enumerate(source.split("\n"), start=1):
        begins = BEGIN_SOLUTION in line or BEGIN_HIDDEN in line
        ends = END_SOLUTION in line or END_HIDDEN in line
        if begins:
            if state is not None:
                raise NotebookError(f"{where}, line {number}: a BEGIN marker inside an open {state} block")
            state = "solution" if BEGIN_SOLUTION in line else "hidden"
            if state == "solution":
                indent = line[: len(line) - len(line.lstrip())]
                out.extend(indent + stub_line for stub_line in stub)
                removed.append([])
            continue
        if ends:
            expected = END_SOLUTION if state == "solution" else END_HIDDEN
            if state is None or expected not in line:
                raise NotebookError(f"{where}, line {number}: {line.strip()!r} without a matching BEGIN marker")
            state = None
            continue
        if state == "solution":
            removed[-1].append(line)
        elif state is None:
            out.append(line)
    if state is not None:
        raise NotebookError(f"{where}: a {state} block is never closed (missing END marker)")
    return "\n".join(out), removed


def has_markers(source: str) -> bool:
    return BEGIN_SOLUTION in source or END_SOLUTION in source


# --------------------------------------------------------------------------- which names a cell uses


def _python_only(source: str) -> str:
    """Drop IPython magics and shell escapes so ``ast`` can parse a cell."""
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.split("\n"))


def names_used_and_bound(source: str) -> tuple[set[str], set[str]]:
    """(names a cell reads before binding them, names it binds at top level by assignment, ``def`` or ``class``).

    Statement by statement: a name the cell assigns first and reads afterwards is not "read". Imports are
    left out of the bound names (a module carries nothing of a solution). Unparseable code: every
    identifier counts as read, none as bound.
    """
    try:
        tree = ast.parse(_python_only(source))
    except SyntaxError:
        return set(re.findall(r"[A-Za-z_]\w*", source)), set()
    used: set[str] = set()
    bound: set[str] = set()

    def binds(node: ast.AST, found: set[str]) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
            return  # names inside a function or class body are local to it
        if isinstance(node, ast.Lambda):
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            found.add(node.id)
        for child in ast.iter_child_nodes(node):
            binds(child, found)

    for statement in tree.body:
        reads = {n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        used |= reads - bound
        binds(statement, bound)
    return used, bound


# --------------------------------------------------------------------------- table of contents


def _toc_data(root: pathlib.Path) -> Any:
    """``_toc.yml`` as Python data: PyYAML when it is installed, else a reader for the jb-book layout."""
    text = (root / "_toc.yml").read_text(encoding="utf-8")
    try:
        import yaml  # installed with jupyter-book; optional here
    except ImportError:
        return _read_simple_toc(text)
    return yaml.safe_load(text)


def _read_simple_toc(text: str) -> dict:
    """Read the jb-book ``_toc.yml`` shape (root, parts with caption/numbered/chapters of files) without PyYAML."""
    data: dict[str, Any] = {"parts": []}
    part: dict[str, Any] | None = None
    chapter_indent: int | None = None
    for raw in text.split("\n"):
        line = raw.split(" #", 1)[0].rstrip() if not raw.lstrip().startswith("#") else ""
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        item = line.strip().removeprefix("- ").strip()
        key, _, value = item.partition(":")
        key, value = key.strip(), value.strip()
        if indent == 0 and key == "root":
            data["root"] = value
        elif line.strip().startswith("- ") and key == "caption" or (indent == 0 and key == "chapters"):
            part = {"caption": value, "chapters": []}
            data["parts"].append(part)
            chapter_indent = None
        elif part is not None and key == "numbered":
            part["numbered"] = value.lower() in ("true", "yes", "1")
        elif part is not None and key == "file" and line.strip().startswith("- "):
            if chapter_indent is None:
                chapter_indent = indent
            if indent == chapter_indent:
                part["chapters"].append({"file": value})
    return data


def chapter_numbers(root: pathlib.Path = ROOT) -> dict[str, int]:
    """``{"book/03_sinusoidal": 3, ...}``: the number the website gives each chapter of a numbered part.

    Jupyter Book 1 numbers the chapters of each ``numbered`` part from 1 (sphinx-exercise then
    numbers a chapter's exercises 3.1, 3.2, ...).
    """
    if not (root / "_toc.yml").exists():
        return {}
    toc = _toc_data(root) or {}
    parts = toc.get("parts") or ([{"chapters": toc.get("chapters", []), "numbered": toc.get("numbered", False)}] if "chapters" in toc else [])
    numbers: dict[str, int] = {}
    for part in parts:
        if not part.get("numbered"):
            continue
        counter = 0
        for chapter in part.get("chapters", []) or []:
            if isinstance(chapter, dict) and "file" in chapter:
                counter += 1
                numbers[str(chapter["file"]).removesuffix(".ipynb").removesuffix(".md")] = counter
    return numbers


def toc_notebooks(root: pathlib.Path = ROOT) -> list[pathlib.Path]:
    """The ``.ipynb`` chapters listed in ``_toc.yml``, in reading order."""
    if not (root / "_toc.yml").exists():
        return []
    found: list[pathlib.Path] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("file", "root") and isinstance(value, str):
                    candidate = root / (value if value.endswith(".ipynb") else value + ".ipynb")
                    if candidate.is_file() and candidate not in found:
                        found.append(candidate)
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(_toc_data(root))
    return found


def exercise_prefix(path: pathlib.Path, numbers: dict[str, int], root: pathlib.Path = ROOT) -> str:
    """``"3."`` for a chapter numbered 3 on the website; ``""`` for a notebook outside a numbered part."""
    try:
        key = path.resolve().relative_to(root.resolve()).with_suffix("").as_posix()
    except ValueError:
        key = path.with_suffix("").name
    return f"{numbers[key]}." if key in numbers else ""


# --------------------------------------------------------------------------- analysis and transformation


@dataclass
class ExerciseInfo:
    """One exercise as the student edition (and the instructor guide) sees it."""

    label: str
    title: str
    number: str  # "3.2" as on the website
    body: str  # the exercise text (MyST)
    cell: int  # index of the exercise cell in the solution notebook
    solution_form: str = ""  # "gated", "directive" or "" (no solution found)
    solution_classes: list[str] = field(default_factory=list)
    solution_cells: list[int] = field(default_factory=list)  # indices in the solution notebook
    code_stubs: int = 0  # code cells / marked blocks replaced by a stub
    text_stubs: int = 0  # written answers replaced by a stub
    checkers: list[str] = field(default_factory=list)  # checker functions called in the solution's cells
    minutes: int | None = None  # optional cell metadata {"exercise": {"minutes": N}} on the exercise cell

    @property
    def kind(self) -> str:
        return "coding" if self.code_stubs else "written"


@dataclass
class NotebookResult:
    """What :func:`make_student_notebook` did to one notebook; the leak test uses it."""

    path: pathlib.Path
    notebook: dict  # the student notebook
    exercises: list[ExerciseInfo]
    solution_lines: list[str]  # every line of solution content that was taken out
    hidden_outputs: list[str]  # text of every output that was removed
    stub_cells: list[int]  # indices (in the student notebook) of cells holding a stub
    cleared_cells: list[int]  # indices (in the student notebook) of code cells whose outputs were removed
    problems: list[str]  # convention problems noticed on the way (not fatal; the conventions test fails on them)


def _render_exercise(directive: Directive, number: str) -> str:
    title = directive.argument.strip()
    heading = f"#### Exercise {number}" + (f": {title}" if title else "")
    return heading + ("\n\n" + directive.body if directive.body.strip() else "")


def _new_cell_id(base: str, taken: set[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9_-]", "-", base)[:56] or "cell"
    candidate, n = base, 0
    while candidate in taken:
        n += 1
        candidate = f"{base}-{n}"
    taken.add(candidate)
    return candidate


def make_student_notebook(notebook: dict, *, path: pathlib.Path, prefix: str = "", keep_solutions: bool = False) -> NotebookResult:
    """Return the student edition of one solution notebook (the input is not modified).

    ``prefix`` is the chapter's exercise-number prefix (``"3."``). With ``keep_solutions=True``
    the solution content stays where nbgrader expects it (marked regions, tagged cells, the body
    of a ``{solution}`` directive as its own cell) and those cells are flagged for
    :func:`make_nbgrader_notebook`; everything else is transformed as for students.
    """
    student = copy.deepcopy(notebook)
    cells_out: list[dict] = []
    taken_ids = {c.get("id") for c in notebook.get("cells", []) if c.get("id")}
    exercises: list[ExerciseInfo] = []
    by_label: dict[str, ExerciseInfo] = {}
    solution_lines: list[str] = []
    hidden_outputs: list[str] = []
    stub_cells: list[int] = []
    cleared: list[int] = []
    problems: list[str] = []
    region_label: str | None = None  # the gated solution we are inside, if any
    tainted: set[str] = set()  # names bound by solution code

    def region() -> ExerciseInfo | None:
        return by_label.get(region_label) if region_label else None

    def emit(cell: dict, *, stub: bool = False) -> None:
        if stub:
            stub_cells.append(len(cells_out))
            if keep_solutions:
                cell.setdefault("metadata", {})["nbgrader"] = {}  # filled in by make_nbgrader_notebook
        cells_out.append(cell)

    def note_solution_cell(index: int) -> None:
        owner = region()
        if owner is not None and index not in owner.solution_cells:
            owner.solution_cells.append(index)

    for index, original in enumerate(notebook.get("cells", [])):
        cell = copy.deepcopy(original)
        where = f"{path.name}, cell {index}"
        source = cell_source(cell)
        tagged = is_tagged_solution(cell)
        kind = cell.get("cell_type")

        if kind == "markdown":
            lines = source.split("\n")
            directives = find_directives(source)
            family = [d for d in directives if d.name in EXERCISE_DIRECTIVES]
            text: list[str] = []  # the student cell being built
            answers: list[str] = []  # separate answer cells (the body of {solution} directives)
            # a tagged cell is an answer as a whole, unless its answer is a {solution} directive (handled below)
            whole_cell_answer = tagged and not has_markers(source) and not any(d.name == "solution" for d in family)
            if whole_cell_answer and any(d.name in ("exercise", "exercise-start") for d in family):
                problems.append(f"{where}: a markdown cell tagged 'solution' also holds an exercise; put the answer in its own cell")
            if (whole_cell_answer or has_markers(source)) and region_label is None and not any(d.name == "solution-start" for d in family):
                problems.append(f"{where}: a solution markdown cell outside solution-start/solution-end (the website shows it unfolded)")

            def plain(chunk: list[str]) -> None:
                content = "\n".join(chunk)
                if not content.strip():
                    return
                if whole_cell_answer or region_label is not None:
                    solution_lines.extend(chunk)
                    note_solution_cell(index)
                    if keep_solutions and whole_cell_answer:
                        answers.append(content)
                else:
                    text.append(content)

            cursor = 0
            for directive in directives:
                plain(lines[cursor : directive.start])
                cursor = directive.end + 1
                if directive.name in ("exercise", "exercise-start"):
                    label = directive.options.get("label", "")
                    info = ExerciseInfo(label, directive.argument.strip(), f"{prefix}{len(exercises) + 1}", directive.body, index)
                    minutes = original.get("metadata", {}).get("exercise", {}).get("minutes")
                    info.minutes = int(minutes) if isinstance(minutes, (int, float)) and not isinstance(minutes, bool) else None
                    exercises.append(info)
                    if label:
                        if label in by_label:
                            problems.append(f"{where}: exercise label {label!r} is used twice")
                        by_label[label] = info
                    text.append(_render_exercise(directive, info.number))
                elif directive.name == "exercise-end":
                    pass
                elif directive.name == "solution":
                    target = by_label.get(directive.argument.strip())
                    if target is None:
                        problems.append(f"{where}: solution for unknown exercise {directive.argument.strip()!r}")
                    else:
                        target.solution_form, target.solution_classes = "directive", classes(directive)
                        target.solution_cells.append(index)
                        target.text_stubs += 1
                    solution_lines.extend(directive.body.split("\n"))
                    text.append(ANSWER_LINE)
                    answers.append(directive.body if keep_solutions else TEXT_STUB)
                elif directive.name == "solution-start":
                    if region_label is not None:
                        problems.append(f"{where}: solution-start inside the open solution of {region_label!r}")
                    region_label = directive.argument.strip()
                    owner = region()
                    if owner is None:
                        problems.append(f"{where}: solution-start for unknown exercise {region_label!r}")
                    else:
                        owner.solution_form, owner.solution_classes = "gated", classes(directive)
                        owner.solution_cells.append(index)
                    text.append(ANSWER_LINE)
                elif directive.name == "solution-end":
                    if region_label is None:
                        problems.append(f"{where}: solution-end without solution-start")
                    note_solution_cell(index)
                    region_label = None
                else:
                    plain(lines[directive.start : directive.end + 1])
            plain(lines[cursor:])
            if whole_cell_answer and not keep_solutions:
                answers.append(TEXT_STUB)
                owner = region()
                if owner is not None:
                    owner.text_stubs += 1

            new_source = "\n\n".join(chunk.strip("\n") for chunk in text)
            if has_markers(new_source):  # nbgrader markers in markdown: the marked lines are the answer
                stubbed, removed = replace_marked_regions(new_source, [TEXT_STUB], where=where)
                for block in removed:
                    solution_lines.extend(block)
                if not keep_solutions:
                    new_source = stubbed
                owner = region()
                if owner is not None:
                    owner.text_stubs += len(removed)
                note_solution_cell(index)
                cell["source"] = new_source
                emit(cell, stub=True)
            elif new_source.strip():
                cell["source"] = new_source
                tags = cell.get("metadata", {}).get("tags")
                if tags and SOLUTION_TAG in tags:  # what is left of a tagged cell is not an answer
                    cell["metadata"]["tags"] = [t for t in tags if t != SOLUTION_TAG]
                    if not cell["metadata"]["tags"]:
                        del cell["metadata"]["tags"]
                emit(cell)
            for k, answer in enumerate(answers):
                replaces_cell = k == 0 and not new_source.strip()  # the answer takes the original cell's place
                answer_cell = {
                    "cell_type": "markdown",
                    "metadata": copy.deepcopy(original.get("metadata", {})) if replaces_cell else {},
                    "source": answer,
                }
                if keep_solutions:
                    answer_cell["metadata"]["tags"] = sorted(set(answer_cell["metadata"].get("tags", [])) | {SOLUTION_TAG})
                if "id" in original:
                    answer_cell["id"] = original["id"] if replaces_cell else _new_cell_id(f"{original['id']}-answer", taken_ids)
                emit(answer_cell, stub=True)

        elif kind == "code":
            used, bound = names_used_and_bound(source)
            is_solution = False
            if (has_markers(source) or tagged) and region_label is None:
                problems.append(f"{where}: a solution code cell outside solution-start/solution-end (the website shows it unfolded)")
            if has_markers(source):
                stubbed, removed = replace_marked_regions(source, CODE_STUB, where=where)
                for block in removed:
                    solution_lines.extend(block)
                cell["source"] = source if keep_solutions else stubbed
                is_solution = True
                owner = region()
                if owner is not None:
                    owner.code_stubs += len(removed)
            elif tagged:
                solution_lines.extend(source.split("\n"))
                cell["source"] = source if keep_solutions else "\n".join(CODE_STUB)
                is_solution = True
                owner = region()
                if owner is not None:
                    owner.code_stubs += 1
            if region_label is not None:
                note_solution_cell(index)
                owner = region()
                if owner is not None:
                    owner.checkers += [n for n in CHECKER_CALL.findall(source) if n not in owner.checkers]
            if is_solution or region_label is not None or (used & tainted):
                hidden_outputs.extend(output_texts(cell))
                cell["outputs"] = []
                cell["execution_count"] = None
                cleared.append(len(cells_out))
                tainted |= bound
            else:
                tainted -= bound
            emit(cell, stub=is_solution)

        else:  # raw cells: markers still apply, a tagged one is an answer
            if has_markers(source) or tagged:
                if has_markers(source):
                    stubbed, removed = replace_marked_regions(source, [TEXT_STUB], where=where)
                    solution_lines.extend(line for block in removed for line in block)
                else:
                    stubbed = TEXT_STUB
                    solution_lines.extend(source.split("\n"))
                cell["source"] = source if keep_solutions else stubbed
                emit(cell, stub=True)
            elif region_label is not None:
                solution_lines.extend(source.split("\n"))  # solution text in a raw cell: dropped
            else:
                emit(cell)

    if region_label is not None:
        problems.append(f"{path.name}: the solution of {region_label!r} is never closed with solution-end")
    student["cells"] = cells_out
    if not keep_solutions:
        student.setdefault("metadata", {})["posenc_student_edition"] = {
            "generated_from": path.name,
            "generator": "tools/make_student.py",
            "note": "generated from the solution notebook; do not edit by hand",
        }
    return NotebookResult(path, student, exercises, solution_lines, hidden_outputs, stub_cells, cleared, problems)


def make_nbgrader_notebook(notebook: dict, *, path: pathlib.Path, prefix: str = "", points: int = 1) -> dict:
    """A copy of a solution notebook ready for nbgrader's ``generate_assignment``.

    Solutions stay (nbgrader takes them out); exercise directives are rewritten as in the student
    edition; every solution cell gets nbgrader metadata (a code answer is a ``solution`` cell, a
    written answer a manually graded answer worth ``points``); after every checker call that stays in
    the student's version, a locked autograder test cell ``assert check_x(...)`` worth ``points`` is
    added (a checker's result is truthy only when the answer is right).
    """
    result = make_student_notebook(notebook, path=path, prefix=prefix, keep_solutions=True)
    cells: list[dict] = []
    stem = re.sub(r"[^A-Za-z0-9_-]", "-", path.stem)
    taken = {c.get("id") for c in result.notebook["cells"] if c.get("id")}
    for index, cell in enumerate(result.notebook["cells"]):
        cells.append(cell)
        grade_id = f"{stem}-answer-{index}"
        if "nbgrader" in cell.get("metadata", {}):
            if cell["cell_type"] == "code":
                cell["metadata"]["nbgrader"] = {"grade": False, "grade_id": grade_id, "locked": False, "schema_version": 3, "solution": True}
            else:
                cell["metadata"]["nbgrader"] = {"grade": True, "grade_id": grade_id, "locked": False, "points": points, "schema_version": 3, "solution": True}
        if cell["cell_type"] != "code":
            continue
        student_source, _ = replace_marked_regions(cell_source(cell), CODE_STUB, where=path.name)
        if is_tagged_solution(cell) and not has_markers(cell_source(cell)):
            student_source = ""
        for k, call in enumerate(_checker_statements(student_source)):
            test_id = _new_cell_id(f"{stem}-test-{index}-{k}", taken)
            test = {
                "cell_type": "code",
                "execution_count": None,
                "metadata": {"nbgrader": {"grade": True, "grade_id": test_id, "locked": True, "points": points, "schema_version": 3, "solution": False}},
                "outputs": [],
                "source": f"# autograder test: the checker must accept the answer above\nassert {call}",
            }
            if "id" in cell:
                test["id"] = test_id
            cells.append(test)
    out = result.notebook
    out["cells"] = cells
    return out


def _checker_statements(source: str) -> list[str]:
    """The checker calls (``check_x(...)``) that are whole top-level statements of a cell, as source text."""
    code = _python_only(source)
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    calls = []
    for node in tree.body:
        call = node.value if isinstance(node, (ast.Expr, ast.Assign)) else None
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id.startswith("check_") and call.func.id != "check_function":
            calls.append(ast.get_source_segment(code, call))
    return calls


# --------------------------------------------------------------------------- the whole edition


def solution_notebooks(book: pathlib.Path) -> list[pathlib.Path]:
    return sorted(p for p in book.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts and "_build" not in p.parts)


LINK = re.compile(r"""(?:\]\(|src=["']|\{(?:figure|image)\}\s+)(?P<target>[^)"'\s#?]+)""")


def referenced_files(notebook: dict, notebook_path: pathlib.Path, root: pathlib.Path) -> list[pathlib.Path]:
    """Files under ``root`` that the notebook's markdown or code refers to by a relative path."""
    found: list[pathlib.Path] = []
    for cell in notebook.get("cells", []):
        text = cell_source(cell)
        candidates = [m["target"] for m in LINK.finditer(text)]
        if cell.get("cell_type") == "code":
            candidates += re.findall(r"""["']([\w./-]+\.\w{1,5})["']""", text)
        for target in candidates:
            if "://" in target or target.startswith(("/", "mailto:")):
                continue
            candidate = (notebook_path.parent / target).resolve()
            try:
                candidate.relative_to(root.resolve())
            except ValueError:
                continue
            if candidate.is_file() and candidate not in found:
                found.append(candidate)
    return found


def _git_commit(root: pathlib.Path) -> str:
    try:
        result = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return result.stdout.strip() or "unknown"


PIP_NAMES = {"sklearn": "scikit-learn", "yaml": "pyyaml", "PIL": "pillow", "cv2": "opencv-python"}


def imported_modules(notebook: dict) -> set[str]:
    """Top-level names of the modules a notebook's code cells import."""
    found: set[str] = set()
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        try:
            tree = ast.parse(_python_only(cell_source(cell)))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module.split(".")[0])
    return found


def library_dependencies(package_root: pathlib.Path) -> set[str]:
    """Distribution names in ``pyproject.toml``'s ``dependencies`` (a plain reader: no tomllib needed)."""
    text = (package_root / "pyproject.toml").read_text(encoding="utf-8") if (package_root / "pyproject.toml").exists() else ""
    match = re.search(r"^dependencies\s*=\s*\[(.*?)\]", text, flags=re.MULTILINE | re.DOTALL)
    names = re.findall(r"[\"']\s*([A-Za-z0-9_.-]+)", match[1]) if match else []
    return {name.lower().replace("_", "-") for name in names}


def extra_packages(notebooks: dict[str, dict], package_root: pathlib.Path) -> dict[str, list[str]]:
    """``{pip name: [notebooks]}`` for third-party modules the notebooks import that posenc_lib does not depend on."""
    provided = library_dependencies(package_root) | {"posenc-lib", "ipython", "ipykernel"}
    extras: dict[str, list[str]] = {}
    for name, notebook in notebooks.items():
        for module in sorted(imported_modules(notebook)):
            pip_name = PIP_NAMES.get(module, module).lower().replace("_", "-")
            if module in sys.stdlib_module_names or pip_name in provided:
                continue
            extras.setdefault(pip_name, []).append(name)
    return extras


def student_readme(results: list[NotebookResult], commit: str, extras: dict[str, list[str]] | None = None) -> str:
    extras = extras or {}
    install_extras = "".join(f" {name}" for name in sorted(extras))
    extras_note = ""
    if extras:
        listed = "; ".join(f"`{name}` ({', '.join(chapters)})" for name, chapters in sorted(extras.items()))
        extras_note = f"\nSome chapters also import packages that the course library does not need: {listed}.\nThe command above installs them too.\n"
    rows = "\n".join(
        f"| `book/{r.path.name}` | "
        + (", ".join(f"{e.number} ({e.kind})" for e in r.exercises) or "none")
        + " |"
        for r in results
    )
    return f"""# Positional Encoding in Transformers — student edition

These notebooks are the course's chapters with the solutions to the exercises
taken out. Where a solution was, you find

    # YOUR CODE HERE
    raise NotImplementedError()

in a code cell, or `YOUR ANSWER HERE` in a text cell. Replace it with your answer.

## Set up (once)

You need Python 3.10 or newer.

```bash
python -m venv .venv
source .venv/bin/activate                  # on Windows: .venv\\Scripts\\activate
# optional, saves a large download on a machine without a GPU:
pip install torch --index-url https://download.pytorch.org/whl/cpu
pip install . jupyterlab{install_extras}     # posenc_lib (the course library) from this folder, and Jupyter
jupyter lab book/
```
{extras_note}
On Google Colab, upload a notebook and run it: its first cell installs the
course library when it is missing.

## Working on an exercise

- Run the chapter from the top. Cells before an exercise work as they are.
- A code exercise is followed by a *checker* call such as `check_sinusoidal(my_sinusoidal)`.
  It runs your function on several inputs and prints ✅ when every result is right, or ❌ with
  the input that failed, what was expected, what your code returned and a hint.
  Until you write your answer it prints "not implemented yet".
- A cell whose whole content is your answer raises `NotImplementedError` until you replace the stub;
  "Run All" stops there, so run the cells below it one by one (Shift+Enter) or solve it first.
- Written answers (derivations, explanations) have no checker: your instructor reads them, or compare
  with the solutions in the online book.

## Contents

| notebook | exercises (number as in the online book) |
| --- | --- |
{rows}

Generated by `make student` from commit {commit} of the course repository. Do not edit this
folder by hand: regenerate it.
"""


@dataclass
class Edition:
    out: pathlib.Path
    results: list[NotebookResult]
    zip_path: pathlib.Path | None
    seconds: float


def make_student_edition(
    book: pathlib.Path = ROOT / "book",
    out: pathlib.Path = ROOT / "student",
    *,
    root: pathlib.Path = ROOT,
    zip_path: pathlib.Path | None = ROOT / "student.zip",
    nbgrader: pathlib.Path | None = None,
    package_root: pathlib.Path = ROOT,
) -> Edition:
    """Write the student edition of every notebook under ``book`` into ``out`` (replaced whole).

    ``root`` is the repository the notebooks belong to (its ``_toc.yml`` gives the exercise numbers,
    files they refer to are copied from it); ``package_root`` holds ``posenc_lib`` and
    ``pyproject.toml``, which are copied so that the student can install the library.
    """
    start = time.perf_counter()
    numbers = chapter_numbers(root)
    if out.exists():
        if not (out / "README.md").exists() and any(out.iterdir()):
            raise NotebookError(f"refusing to replace {out}: it exists and is not a student edition (no README.md)")
        shutil.rmtree(out)
    out.mkdir(parents=True)
    results: list[NotebookResult] = []
    sources: dict[str, dict] = {}
    extra: list[pathlib.Path] = []
    for path in solution_notebooks(book):
        notebook = read_notebook(path)
        sources[path.name] = notebook
        prefix = exercise_prefix(path, numbers, root)
        result = make_student_notebook(notebook, path=path, prefix=prefix)
        relative = path.resolve().relative_to(root.resolve()) if path.resolve().is_relative_to(root.resolve()) else pathlib.Path("book") / path.name
        write_notebook(result.notebook, out / relative)
        results.append(result)
        extra += [f for f in referenced_files(notebook, path, root) if f.suffix != ".ipynb" and f not in extra]
        if nbgrader is not None:
            write_notebook(make_nbgrader_notebook(notebook, path=path, prefix=prefix), nbgrader / path.stem / path.name)
    shutil.copytree(package_root / "posenc_lib", out / "posenc_lib", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", "LICENSE", "LICENSE.md", "LICENSE.txt"):
        if (package_root / name).is_file():
            shutil.copy2(package_root / name, out / name)
    for file in sorted(book.rglob("*")):  # data the notebooks read (e.g. book/data/); not the website's own files
        skip = {"_build", "_static", ".ipynb_checkpoints", "__pycache__"}
        if file.is_file() and file.suffix not in (".ipynb", ".md", ".bib") and not skip & set(file.relative_to(book).parts):
            if file.resolve() not in extra:
                extra.append(file.resolve())
    for file in extra:
        inside = file.is_relative_to(root.resolve())
        target = out / (file.relative_to(root.resolve()) if inside else pathlib.Path("book") / file.relative_to(book.resolve()))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(file, target)
    (out / "README.md").write_text(student_readme(results, _git_commit(root), extra_packages(sources, package_root)), encoding="utf-8")
    if zip_path is not None:
        write_zip(out, zip_path)
    return Edition(out, results, zip_path, time.perf_counter() - start)


def write_zip(folder: pathlib.Path, zip_path: pathlib.Path) -> None:
    """A reproducible zip of ``folder`` (sorted entries, fixed timestamps), entries under ``folder.name/``."""
    zip_path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(zip_path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for file in sorted(p for p in folder.rglob("*") if p.is_file()):
            info = zipfile.ZipInfo(f"{folder.name}/{file.relative_to(folder).as_posix()}", date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, file.read_bytes())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--book", type=pathlib.Path, default=ROOT / "book", help="folder of solution notebooks (default: book)")
    parser.add_argument("--out", type=pathlib.Path, default=ROOT / "student", help="output folder, replaced whole (default: student)")
    parser.add_argument("--zip", type=pathlib.Path, default=ROOT / "student.zip", help="zip to write (default: student.zip)")
    parser.add_argument("--no-zip", action="store_true", help="do not write a zip")
    parser.add_argument("--nbgrader", type=pathlib.Path, default=None, help="also write nbgrader source notebooks: DIR/<notebook>/<notebook>.ipynb")
    args = parser.parse_args(argv)
    try:
        edition = make_student_edition(args.book, args.out, zip_path=None if args.no_zip else args.zip, nbgrader=args.nbgrader)
    except NotebookError as error:
        print(f"make_student: {error}", file=sys.stderr)
        return 1
    problems = [p for r in edition.results for p in r.problems]
    for result in edition.results:
        exercises = len(result.exercises)
        print(f"{result.path.name}: {exercises} exercise(s), {len(result.stub_cells)} stub cell(s), "
              f"outputs removed from {len(result.cleared_cells)} cell(s)")
    for problem in problems:
        print(f"warning: {problem}", file=sys.stderr)
    size = sum(p.stat().st_size for p in edition.out.rglob("*") if p.is_file())
    print(f"student edition: {edition.out} ({size / 1e6:.2f} MB)", end="")
    if edition.zip_path is not None:
        print(f", {edition.zip_path} ({edition.zip_path.stat().st_size / 1e6:.2f} MB)", end="")
    print(f", {edition.seconds:.1f} s")
    if args.nbgrader is not None:
        print(f"nbgrader source notebooks: {args.nbgrader}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
