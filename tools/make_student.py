"""Generate the student edition of the course (solutions replaced by stubs) and an nbgrader course.

Usage::

    python tools/make_student.py                    # book/*.ipynb -> student/ and student.zip
    python tools/make_student.py --out DIR --zip FILE.zip   (or --no-zip)
    python tools/make_student.py --nbgrader DIR     # also DIR/source/<chapter>/<chapter>.ipynb + nbgrader_config.py

:func:`read_chapter` parses a chapter once (MyST directives with markdown-it-py) into the model that
tools/exercise_catalog.py also uses: its exercises and its nbgrader source notebook, in which exercise
directives are headings, answers are nbgrader solution cells (a code answer with a checker call gets a
locked test cell ``assert check_x(fn)``, 2 points; written answers and code answers without a checker are
graded by hand, 1 point), and outputs a solution computed are cleared (nbconvert's ClearOutputPreprocessor).
The student edition is that notebook without the test cells, after nbgrader's ``ClearSolutions``: what
``nbgrader generate_assignment`` releases, minus the tests. CONTRIBUTING.md states the conventions.
"""

from __future__ import annotations

import argparse
import ast
import collections
import copy
import pathlib
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from dataclasses import dataclass, field

import jinja2
import nbformat
from markdown_it import MarkdownIt
from nbconvert.preprocessors import ClearOutputPreprocessor
from nbgrader.preprocessors import ClearSolutions

from book_files import ROOT, toc_chapters

CHECKER_POINTS, ANSWER_POINTS = 2, 1
CHECKER = re.compile(r"\b(check_(?!function\b)\w+)\s*\(")
MARKDOWN = MarkdownIt("commonmark")
NBGRADER_CONFIG = """c = get_config()  # noqa: F821  (written by tools/make_student.py)
# the release keeps the outputs of the teaching cells, like the student edition (the source notebooks
# hold no output that a solution computed)
c.ClearOutput.enabled = False
# each cell runs in seconds on a quiet machine; a busy one (a class graded side by side) can be many times
# slower, and nbgrader's default of 30 s per cell would then fail a correct notebook
c.Execute.timeout = 300
"""


class NotebookError(ValueError):
    """A solution notebook no edition can be built from (unbalanced solution markers)."""


Directive = collections.namedtuple("Directive", "name argument options body start end")  # lines start .. end - 1


def directives(text: str) -> list[Directive]:
    """The fenced MyST directives at the top level of a markdown text, options (``:key: value``) parsed."""
    found = []
    for token in MARKDOWN.parse(text):
        if token.type == "fence" and token.level == 0 and re.match(r"\{[\w-]+\}", token.info):
            name, argument = token.info[1:].split("}", 1)
            lines = token.content.split("\n")
            options = {}
            while lines and (option := re.match(r"^:([\w-]+):\s*(.*?)\s*$", lines[0])):
                options[option[1]] = option.group(2)
                lines.pop(0)
            start, end = token.map or (0, 0)  # a fence always has its lines
            found.append(Directive(name, argument.strip(), options, "\n".join(lines).strip("\n"), start, end))
    return found


@dataclass
class Exercise:
    label: str
    title: str
    number: str  # "3.1", as the website numbers it
    cell: int  # index of its cell in the solution notebook
    minutes: int | None = None  # the cell's metadata {"exercise": {"minutes": N}}
    folded: bool = False  # its solution has :class: dropdown
    solution_cells: list[int] = field(default_factory=list)
    checkers: list[str] = field(default_factory=list)  # autograded, one test cell each
    code_answers: int = 0
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
    try:
        if begins != ends:
            raise RuntimeError(
                f"{abs(begins - ends)} {'BEGIN' if begins > ends else 'END'} SOLUTION marker(s) without a partner"
            )
        cell = nbformat.v4.new_code_cell(source, metadata={"nbgrader": {"solution": True}})
        return ClearSolutions().preprocess_cell(cell, {"language": "python"}, 0)[0].source
    except RuntimeError as error:  # also nbgrader's own: nested or unclosed blocks
        raise NotebookError(f"{where}: {error}") from None


def _tree(source: str) -> ast.Module | None:
    try:  # IPython magics and shell escapes are not Python
        return ast.parse("\n".join("" if line.lstrip()[:1] in ("%", "!") else line for line in source.split("\n")))
    except SyntaxError:
        return None


def names_used_and_bound(source: str) -> tuple[set[str], set[str]]:
    """(names a cell reads before binding them, names it binds at top level, imports left out)."""
    if (tree := _tree(source)) is None:
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
    found, nodes = [], list(getattr(_tree(source), "body", []))
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

    def new_id(self, base: str) -> str:
        base = candidate = re.sub(r"[^A-Za-z0-9_-]", "-", base)[:56]
        while candidate in self.taken:
            candidate = f"{base}-{len(self.taken)}"
        self.taken.add(candidate)
        return candidate

    def answer(self, cell: nbformat.NotebookNode, owner: Exercise | None, index: int, points: int | None) -> None:
        """An nbgrader solution cell: autograded by the test cells after it if ``points`` is None, else by hand."""
        cell.metadata["nbgrader"] = {
            "grade": bool(points),
            "grade_id": self.new_id(f"{owner.label if owner else 'x'}-answer"),
            "locked": False,
            "schema_version": 3,
            "solution": True,
        } | ({"points": points} if points else {})
        if owner:
            owner.manual += bool(points)
            owner.solution_cells += [] if index in owner.solution_cells else [index]
        self.cells.append(cell)

    def markdown(self, index: int, cell: nbformat.NotebookNode, tags: list[str], owner: Exercise | None) -> None:
        found, lines, problems = directives(cell.source), cell.source.split("\n"), self.chapter.problems
        whole = "solution" in tags and not any(d.name == "solution" for d in found)  # the cell is a written answer
        kept: list[str] = []
        answers = [(cell.source, owner)] if whole else []
        if whole and (self.open_label is None or any(d.name == "exercise" for d in found)):
            problems.append(
                f"{self.where}: a markdown cell tagged 'solution' outside solution-start/solution-end "
                "or next to an exercise (the website shows it unfolded)"
            )
        cursor = 0
        for d in [*found, Directive("", "", {}, "", len(lines), len(lines))]:
            if "\n".join(lines[cursor : d.start]).strip() and not whole and self.open_label is None:
                kept.append("\n".join(lines[cursor : d.start]).strip("\n"))  # text outside a gated solution
            cursor = d.end if d.name in ("exercise", "solution", "solution-start", "solution-end") else d.start
            if d.name == "exercise":
                minutes = cell.metadata.get("exercise", {}).get("minutes")
                number = f"{self.chapter.number}." if self.chapter.number else ""
                exercise = Exercise(
                    d.options.get("label", ""),
                    d.argument,
                    f"{number}{len(self.chapter.exercises) + 1}",
                    index,
                    minutes if isinstance(minutes, int) else None,
                )
                if exercise.label in self.by_label:
                    problems.append(f"{self.where}: exercise label {exercise.label!r} is used twice")
                self.chapter.exercises.append(exercise)
                self.by_label[exercise.label] = exercise
                kept.append(
                    f"#### Exercise {exercise.number}"
                    + (f": {d.argument}" if d.argument else "")
                    + (f"\n\n{d.body}" if d.body.strip() else "")
                )
            elif d.name in ("solution", "solution-start"):
                if (target := self.by_label.get(d.argument)) is None:
                    problems.append(f"{self.where}: {d.name} for unknown exercise {d.argument!r}")
                else:
                    target.folded, target.solution_cells = "dropdown" in d.options.get("class", "").split(), [index]
                if d.name == "solution":
                    answers.append((d.body, target))
                elif self.open_label is not None:
                    problems.append(f"{self.where}: solution-start inside the open solution of {self.open_label!r}")
                self.open_label = d.argument if d.name == "solution-start" else self.open_label
                kept.append("**Your answer.**")
            elif d.name == "solution-end":
                if self.open_label is None:
                    problems.append(f"{self.where}: solution-end without solution-start")
                self.open_label = None
        original = copy.deepcopy(cell)
        if kept:
            cell.source = "\n\n".join(kept)
            if "solution" in tags:  # what is left of a tagged cell is not an answer
                cell.metadata["tags"] = [t for t in tags if t != "solution"]
                cell.metadata["tags"] or cell.metadata.pop("tags")
            self.cells.append(cell)
        for k, (text, target) in enumerate(answers):
            replaces = not kept and k == 0  # the answer takes the original cell's place (and id)
            written = nbformat.v4.new_markdown_cell(text, metadata=original.metadata if replaces else {})
            written.id = (
                original.id if replaces and "id" in original else self.new_id(f"{original.get('id', index)}-answer")
            )
            self.answer(written, target, index, ANSWER_POINTS)

    def code(self, index: int, cell: nbformat.NotebookNode, tags: list[str], owner: Exercise | None) -> None:
        is_answer = "solution" in tags or "BEGIN SOLUTION" in cell.source or "END SOLUTION" in cell.source
        student = student_code(cell.source, self.where) if is_answer else cell.source
        used, bound = names_used_and_bound(cell.source)
        if is_answer and self.open_label is None:
            self.chapter.problems.append(
                f"{self.where}: a solution code cell outside solution-start/solution-end "
                "(the website shows it unfolded)"
            )
        if self.open_label is not None or is_answer or used & self.tainted:
            ClearOutputPreprocessor().preprocess_cell(cell, {}, index)
            self.tainted |= bound
        else:
            self.tainted -= bound
        if not is_answer:
            return self.cells.append(cell)
        tests = checker_calls(student)
        self.answer(cell, owner, index, None if tests else ANSWER_POINTS)
        if owner:
            owner.code_answers += 1
            owner.checkers += [call.split("(", 1)[0] for call in tests]
        for call in tests:
            test = nbformat.v4.new_code_cell(
                f"# autograder test: the checker must accept the answer above\nassert {call}"
            )
            test.id = self.new_id(f"{owner.label if owner else 'x'}-test")
            test.metadata["nbgrader"] = {
                "grade": True,
                "grade_id": test.id,
                "locked": True,
                "points": CHECKER_POINTS,
                "schema_version": 3,
                "solution": False,
            }
            self.cells.append(test)

    def read(self) -> Chapter:
        for index, original in enumerate(self.notebook.cells):
            self.where = f"{self.chapter.path.name}, cell {index}"
            owner = self.by_label.get(self.open_label or "")
            if owner and index not in owner.solution_cells:
                owner.solution_cells.append(index)
            read = self.markdown if original.cell_type == "markdown" else self.code
            read(index, copy.deepcopy(original), original.metadata.get("tags", []), owner)
        if self.open_label is not None:
            self.chapter.problems.append(
                f"{self.chapter.path.name}: the solution of {self.open_label!r} is never closed with solution-end"
            )
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
    notebook.metadata["posenc_student_edition"] = {
        "generated_from": chapter.path.name,
        "generator": "tools/make_student.py",
        "note": "generated from the solution notebook; do not edit by hand",
    }
    return notebook


def extra_packages(chapters: list[Chapter], pyproject: pathlib.Path) -> dict[str, list[str]]:
    """``{pip name: [notebooks]}``: third-party modules the notebooks import that posenc_lib does not depend on."""
    needs = (
        tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["dependencies"] if pyproject.exists() else []
    )
    provided = {re.split(r"[<>=!~ \[;]", d)[0].lower() for d in needs} | {"posenc-lib", "ipython", "ipykernel"}
    extras: dict[str, list[str]] = {}
    for chapter in chapters:
        nodes = [
            n
            for c in chapter.source.cells
            if c.cell_type == "code"
            for n in ast.walk(_tree(c.source) or ast.Module([], []))
        ]
        modules = {a.name for n in nodes if isinstance(n, ast.Import) for a in n.names}
        modules |= {n.module for n in nodes if isinstance(n, ast.ImportFrom) and n.module and not n.level}
        for module in sorted({m.split(".")[0] for m in modules} - set(sys.stdlib_module_names)):
            if (
                name := {"yaml": "pyyaml", "sklearn": "scikit-learn"}.get(module, module).lower().replace("_", "-")
            ) not in provided:
                extras.setdefault(name, []).append(chapter.path.name)
    return extras


def data_files(book: pathlib.Path) -> list[pathlib.Path]:
    """Files the notebooks may read (e.g. book/data/): not notebooks, pages or the website's own files."""
    skip = {"_build", "_static", ".ipynb_checkpoints", "__pycache__"}
    return [
        f
        for f in sorted(book.rglob("*"))
        if f.is_file() and f.suffix not in (".ipynb", ".md", ".bib") and not skip & set(f.relative_to(book).parts)
    ]


def make_student_edition(
    book: pathlib.Path = ROOT / "book",
    out: pathlib.Path = ROOT / "student",
    *,
    root: pathlib.Path = ROOT,
    zip_path: pathlib.Path | None = ROOT / "student.zip",
    nbgrader: pathlib.Path | None = None,
    package_root: pathlib.Path = ROOT,
) -> list[Chapter]:
    """Write the student edition of ``root``'s chapters into ``out`` (replaced whole), optionally an nbgrader course."""
    if out.exists() and not (out / "README.md").exists() and any(out.iterdir()):
        raise NotebookError(f"refusing to replace {out}: it exists and is not a student edition (no README.md)")
    shutil.rmtree(out, ignore_errors=True)
    chapters = [
        read_chapter(path, number) for path, number in toc_chapters(root) if path.parent.resolve() == book.resolve()
    ]
    folders = [(out / "book", student_notebook(c), c.path.name) for c in chapters]
    if nbgrader is not None:  # one assignment per chapter
        folders += [(nbgrader / "source" / c.path.stem, c.source, c.path.name) for c in chapters]
        nbgrader.mkdir(parents=True, exist_ok=True)
        (nbgrader / "nbgrader_config.py").write_text(NBGRADER_CONFIG, encoding="utf-8")
    for folder, notebook, name in folders:
        folder.mkdir(parents=True, exist_ok=True)
        for file in data_files(book):
            (folder / file.relative_to(book)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(file, folder / file.relative_to(book))
        nbformat.write(notebook, folder / name)
    shutil.copytree(
        package_root / "posenc_lib", out / "posenc_lib", ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
    )
    shutil.copy2(package_root / "pyproject.toml", out / "pyproject.toml")  # students install the library from it
    commit = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    template = jinja2.Environment(loader=jinja2.FileSystemLoader(pathlib.Path(__file__).parent)).get_template(
        "student_readme.md.j2"
    )
    (out / "README.md").write_text(
        template.render(
            chapters=chapters,
            commit=commit or "unknown",
            extras=dict(sorted(extra_packages(chapters, package_root / "pyproject.toml").items())),
        )
        + "\n",
        encoding="utf-8",
    )
    if zip_path is not None:  # reproducible: sorted entries, fixed timestamps
        with zipfile.ZipFile(zip_path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for file in sorted(p for p in out.rglob("*") if p.is_file()):
                info = zipfile.ZipInfo(
                    f"{out.name}/{file.relative_to(out).as_posix()}", date_time=(1980, 1, 1, 0, 0, 0)
                )
                info.external_attr, info.compress_type = 0o644 << 16, zipfile.ZIP_DEFLATED
                archive.writestr(info, file.read_bytes())
    return chapters


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=pathlib.Path, default=ROOT / "student", help="output folder, replaced whole")
    parser.add_argument("--zip", type=pathlib.Path, default=ROOT / "student.zip", help="zip to write")
    parser.add_argument("--no-zip", action="store_true", help="do not write a zip")
    parser.add_argument("--nbgrader", type=pathlib.Path, help="also write an nbgrader course into this folder")
    args = parser.parse_args(argv)
    try:
        chapters = make_student_edition(
            out=args.out, zip_path=None if args.no_zip else args.zip, nbgrader=args.nbgrader
        )
    except NotebookError as error:
        sys.exit(f"make_student: {error}")
    for chapter in chapters:
        print(
            f"{chapter.path.name}: {len(chapter.exercises)} exercise(s)",
            *(f"\n  warning: {p}" for p in chapter.problems),
        )
    print(
        f"wrote {args.out}"
        + ("" if args.no_zip else f" and {args.zip}")
        + (f", nbgrader course {args.nbgrader}" * bool(args.nbgrader))
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
