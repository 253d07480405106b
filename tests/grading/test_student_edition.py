"""The student edition (tools/make_student.py): nothing of a solution leaks, and it runs up to each stub.

Two halves. The generator is first tested on a fixture notebook with known content
(tests/_exercise_fixture.py: nbgrader markers at several indentations, whole answer cells,
notes on a solution, stored outputs). Then the real book is turned into a
student edition in a temporary folder, and for every notebook found under book/:

- no line of any solution appears in the edition (lines that are blank, comments,
  punctuation only, or that also appear outside solutions somewhere in the book are
  not evidence of a leak);
- no output of a solution cell appears in it;
- run cell by cell (errors allowed), the only errors are ``NotImplementedError`` in
  cells that hold a stub, and every checker called on a stubbed function prints a
  failing verdict instead of crashing. The run is nbgrader's autograde of the release
  (tests/_nbgrader_course.py), which tests/grading/test_nbgrader.py shows to be the student edition plus
  locked test cells; the test cells are left out of this check. In a chapter where some answers
  are library calls in that run, those cells hold no stub; every other answer cell does.

The solution lines and outputs are found here independently of the generator's own
bookkeeping (only the MyST directive reader is shared).
"""

from __future__ import annotations

import ast
import collections
import json
import pathlib
import re
import subprocess
import sys
import zipfile

import nbformat
import pytest
from nbclient import NotebookClient

import chapter_model as cm
import make_student as ms
from _exercise_fixture import ROOT, SQUARE_STUDENT, TOTAL_STUDENT, code, md, solution_notebook, write_book
from book_files import toc_chapters
from posenc_lib.exercises._core import FAIL_MARK, PASS_MARK

BOOK_NOTEBOOKS = [path for path, _ in toc_chapters()]
STUB = re.compile(r"^(?P<indent>\s*)# YOUR CODE HERE\n(?P=indent)raise NotImplementedError\(\)\s*$", re.MULTILINE)
TEXT_STUB = "YOUR ANSWER HERE"


def source(cell) -> str:
    return cell["source"]


def output_texts(cell) -> list[str]:
    """Every text payload of a cell's outputs (streams, results, images as base64, tracebacks)."""
    texts = []
    for output in cell.get("outputs", []):
        texts += [output["text"]] if "text" in output else []
        texts += [v if isinstance(v, str) else json.dumps(v, sort_keys=True) for v in output.get("data", {}).values()]
        texts += ["\n".join(output["traceback"])] if "traceback" in output else []
    return texts


def student_version(notebook: nbformat.NotebookNode, name: str = "x.ipynb") -> nbformat.NotebookNode:
    """The student edition of one notebook (written to a temporary file: the generator reads files)."""
    import tempfile

    folder = pathlib.Path(tempfile.mkdtemp())
    nbformat.write(notebook, folder / name)
    return cm.student_notebook(cm.read_chapter(folder / name))


def read(path: pathlib.Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


# --------------------------------------------------------------------------- the generator on known input


@pytest.fixture(scope="module")
def fixture_edition(tmp_path_factory):
    root = write_book(tmp_path_factory.mktemp("repo"), {"fixture": solution_notebook()})
    edition = ms.make_student_edition(root, root / "student", zip_path=root / "student.zip")
    return root, edition, read(root / "student" / "book" / "fixture.ipynb")


def test_a_marked_block_becomes_a_stub_indented_like_its_marker(fixture_edition):
    _, _, student = fixture_edition
    sources = [source(c) for c in student.cells if c.cell_type == "code"]
    assert SQUARE_STUDENT in sources  # inside a def: 4 spaces; the def line and the checker call stay
    assert TOTAL_STUDENT in sources  # inside a for loop: 8 spaces; two blocks in one cell; code after a block stays


def test_a_cell_without_markers_in_a_solution_becomes_a_stub_cell(fixture_edition):
    _, _, student = fixture_edition
    assert "# YOUR CODE HERE\nraise NotImplementedError()" in [
        source(c) for c in student.cells if c.cell_type == "code"
    ]
    answers = [c for c in student.cells if c.cell_type == "markdown" and source(c) == TEXT_STUB]
    assert len(answers) == 2  # the two markdown answers; the notes in a solution-end cell go


def test_exercise_text_stays_as_plain_markdown_and_the_solution_wrappers_go(fixture_edition):
    _, _, student = fixture_edition
    markdown = "\n\n".join(source(c) for c in student.cells if c.cell_type == "markdown")
    assert "#### Exercise 1.1: Square a number\n\nWrite `square(x)` that returns $x^2$." in markdown
    assert "#### Exercise 1.2: Loop sum" in markdown  # a longer fence around a nested directive
    assert "```{note}\nA nested directive" in markdown  # kept as written: it is part of the exercise
    assert "#### Exercise 1.3: Explain\n\nWhy is $x^2 \\geq 0$?" in markdown
    assert markdown.count("**Your answer.**") == 4
    for gone in ("{exercise}", "{solution", ":label:", ":class: dropdown", "````"):
        assert gone not in markdown


def test_no_solution_content_and_no_solution_output_is_written(fixture_edition):
    root, _, _ = fixture_edition
    files = [p for p in (root / "student").rglob("*") if p.is_file()]
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        assert "SECRET-" not in text, path
        assert "LEAKED-OUTPUT" not in text, path
    with zipfile.ZipFile(root / "student.zip") as archive:
        for name in archive.namelist():
            data = archive.read(name).decode("utf-8", errors="replace")
            assert "SECRET-" not in data and "LEAKED-OUTPUT" not in data, name


def test_everything_else_is_intact(fixture_edition):
    _, _, student = fixture_edition
    original = solution_notebook()
    kept = {source(c): c for c in student.cells}
    for index in (0, 1, 2, 20):  # the opening, the set-up cell, two teaching cells with outputs
        cell = original.cells[index]
        assert source(cell) in kept, index
        if cell.cell_type == "code":
            assert kept[source(cell)].outputs == cell.outputs
            assert kept[source(cell)].execution_count == cell.execution_count
    assert [c.cell_type for c in student.cells].count("code") == [c.cell_type for c in original.cells].count("code")
    assert all(not c.outputs for c in student.cells if c.cell_type == "code" and STUB.search(source(c)))


def test_a_later_cell_that_uses_a_solution_loses_its_output(tmp_path):
    root = write_book(tmp_path, {"fixture": solution_notebook(uses_solution_later=True)})
    ms.make_student_edition(root, root / "student")
    last = read(root / "student" / "book" / "fixture.ipynb").cells[-1]
    assert source(last) == 'print("square(5) =", square(5))'
    assert last.outputs == [] and last.execution_count is None


def test_a_cell_that_rebinds_a_name_cleanly_keeps_its_output():
    notebook = nbformat.v4.new_notebook(
        cells=[
            md("```{exercise} E\n:label: ex-a-b\n\nx\n```"),
            md("```{solution-start} ex-a-b\n:class: dropdown\n```"),
            code("value = 1  # SECRET"),
            md("```{solution-end}\n```"),
            code("value = 2\nprint(value)", [nbformat.v4.new_output("stream", name="stdout", text="2\n")], count=1),
            code("print(value + 1)", [nbformat.v4.new_output("stream", name="stdout", text="3\n")], count=2),
        ]
    )
    student = student_version(notebook)
    assert [len(c.get("outputs", [])) for c in student.cells if c.cell_type == "code"] == [0, 1, 1]


@pytest.mark.parametrize(
    "bad",
    [
        "def f():\n    ### BEGIN SOLUTION\n    return 1\n",  # never closed
        "def f():\n    return 1\n    ### END SOLUTION\n",  # END without BEGIN: the lines above it would leak
        "### BEGIN SOLUTION\n### BEGIN SOLUTION\nx = 1\n### END SOLUTION\n### END SOLUTION\n",  # nested
        "### END SOLUTION\nx = 1\n### BEGIN SOLUTION\n",  # the wrong way round
    ],
)
def test_unbalanced_markers_are_an_error_naming_the_cell(bad):
    notebook = nbformat.v4.new_notebook(
        cells=[md("```{solution-start} ex-a-b\n```"), code(bad), md("```{solution-end}\n```")]
    )
    with pytest.raises(cm.NotebookError, match="broken.ipynb, cell 1"):
        student_version(notebook, "broken.ipynb")


def test_the_edition_has_the_library_a_readme_and_a_reproducible_zip(fixture_edition, tmp_path):
    root, _, _ = fixture_edition
    out = root / "student"
    library = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "posenc_lib").rglob("*.py"))
    assert sorted(p.relative_to(out).as_posix() for p in (out / "posenc_lib").rglob("*.py")) == library
    readme = (out / "README.md").read_text()
    assert "pip install ." in readme and "book/fixture.ipynb" in readme and "1.1 (coding)" in readme
    assert (out / "pyproject.toml").read_text() == (ROOT / "pyproject.toml").read_text()
    with zipfile.ZipFile(root / "student.zip") as archive:
        names = sorted(archive.namelist())
    assert names == sorted(f"student/{p.relative_to(out).as_posix()}" for p in out.rglob("*") if p.is_file())
    ms.make_student_edition(root, tmp_path / "student", zip_path=tmp_path / "student.zip")
    assert (tmp_path / "student.zip").read_bytes() == (root / "student.zip").read_bytes()


def test_the_copied_library_is_the_one_the_edition_imports(fixture_edition):
    root, _, _ = fixture_edition
    found = subprocess.run(
        [sys.executable, "-c", "import posenc_lib.exercises, posenc_lib; print(posenc_lib.__file__)"],
        cwd=root / "student",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert found.returncode == 0, found.stderr
    assert pathlib.Path(found.stdout.strip()).is_relative_to(root / "student")


@pytest.mark.slow
def test_pip_install_of_the_edition_gets_every_module_of_the_library(fixture_edition, tmp_path):
    """What a student's ``pip install .`` installs (a wheel; not an editable install) has every module."""
    root, _, _ = fixture_edition
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp_path),
            str(root / "student"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = tmp_path.glob("posenc_lib-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        packaged = {name for name in archive.namelist() if name.endswith(".py")}
    modules = {p.relative_to(ROOT).as_posix() for p in (ROOT / "posenc_lib").rglob("*.py")}
    assert modules - packaged == set()


def test_the_readme_names_packages_the_notebooks_need_beyond_the_library(tmp_path):
    notebook = solution_notebook()
    notebook.cells.insert(
        1, code("import json\nimport numpy as np\nimport yaml\nfrom transformers import GPT2Config\n%matplotlib inline")
    )
    root = write_book(tmp_path / "repo", {"fixture": notebook})
    ms.make_student_edition(root, root / "student")
    readme = (root / "student" / "README.md").read_text()
    assert "pip install . jupyterlab pyyaml transformers" in readme
    assert "`transformers` (fixture.ipynb)" in readme and "numpy" not in readme and "json" not in readme


def test_data_files_come_along_but_not_the_website_assets(tmp_path):
    root = write_book(tmp_path / "repo", {"fixture": solution_notebook()})
    (root / "book" / "data").mkdir()
    (root / "book" / "data" / "results.json").write_text("{}")
    (root / "book" / "_static").mkdir()
    (root / "book" / "_static" / "site.css").write_text("body {}")
    ms.make_student_edition(root, root / "student")
    assert (root / "student" / "book" / "data" / "results.json").read_text() == "{}"
    assert not (root / "student" / "book" / "_static").exists()


def test_it_refuses_to_replace_a_folder_that_is_not_an_edition(tmp_path):
    root = write_book(tmp_path / "repo", {"fixture": solution_notebook()})
    (tmp_path / "precious").mkdir()
    (tmp_path / "precious" / "thesis.tex").write_text("keep me")
    with pytest.raises(cm.NotebookError, match="refusing"):
        ms.make_student_edition(root, tmp_path / "precious")
    assert (tmp_path / "precious" / "thesis.tex").read_text() == "keep me"


def test_the_nbgrader_source_marks_answers_and_adds_autograder_tests(tmp_path):
    root = write_book(tmp_path, {"fixture": solution_notebook()})
    chapter = cm.read_chapter(root / "book" / "fixture.ipynb", 1)
    graded = [c for c in chapter.source.cells if "nbgrader" in c.metadata]
    grade_ids = [c.metadata["nbgrader"]["grade_id"] for c in graded]
    assert len(grade_ids) == len(set(grade_ids))
    answers = [c for c in graded if c.metadata["nbgrader"]["solution"]]
    assert [c.cell_type for c in answers] == ["code", "code", "markdown", "code", "markdown"]
    assert "SECRET-A" in source(answers[0])  # nbgrader removes the solution itself
    assert [c.metadata["nbgrader"].get("points") for c in answers] == [None, None, 1, 1, 1]  # by hand: no checker
    tests = [c for c in graded if not c.metadata["nbgrader"]["solution"]]
    assert [source(c).split("\n")[-1] for c in tests] == ["assert check_square(square)", "assert check_total(total)"]
    assert all(c.metadata["nbgrader"]["locked"] and c.metadata["nbgrader"]["points"] == 2 for c in tests)
    # notes in the solution-end cell are not for students
    assert "SECRET-EXPLANATION" not in nbformat.writes(chapter.source)
    assert [e.points for e in chapter.exercises] == [(2, 0), (2, 0), (0, 1), (0, 2)]


def test_a_checker_call_inside_an_if_gets_a_test_cell_too(tmp_path):
    notebook = solution_notebook()
    notebook.cells[5].source = notebook.cells[5].source.replace(
        "check_square(square)", "if check_square(square):\n    print('ok')"
    )
    root = write_book(tmp_path, {"fixture": notebook})
    chapter = cm.read_chapter(root / "book" / "fixture.ipynb", 1)
    assert "assert check_square(square)" in [source(c).split("\n")[-1] for c in chapter.source.cells]


def test_the_nbgrader_course_has_a_config_that_keeps_teaching_outputs(tmp_path):
    root = write_book(tmp_path, {"fixture": solution_notebook()})
    ms.make_student_edition(root, root / "student", nbgrader=root / "course")
    assert "c.ClearOutput.enabled = False" in (root / "course" / "nbgrader_config.py").read_text()
    source_notebook = nbformat.read(root / "course" / "source" / "fixture" / "fixture.ipynb", as_version=4)
    assert "teaching output kept" in json.dumps([c.get("outputs") for c in source_notebook.cells])
    assert "LEAKED-OUTPUT" not in nbformat.writes(source_notebook)


# --------------------------------------------------------------------------- running a student notebook


def execute(path: pathlib.Path) -> nbformat.NotebookNode:
    """Run every cell, errors allowed, in the notebook's folder."""
    notebook = read(path)
    NotebookClient(
        notebook,
        timeout=300,
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(path.parent)}},
    ).execute()
    return notebook


def checker_calls(text: str) -> list[tuple[str, set[str]]]:
    """Calls of ``check_*`` (not ``check_function``) outside function bodies: (name, names in the arguments)."""
    try:
        tree = ast.parse("\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in text.split("\n")))
    except SyntaxError:
        return []
    calls = []

    def visit(node):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            return
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id.startswith("check_")
            and node.func.id != "check_function"
        ):
            names = {
                n.id
                for arg in [*node.args, *(k.value for k in node.keywords)]
                for n in ast.walk(arg)
                if isinstance(n, ast.Name)
            }
            calls.append((node.func.id, names))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return calls


def execution_problems(notebook: nbformat.NotebookNode) -> list[str]:
    """Errors other than a stub's NotImplementedError, and checker calls on stubs that print no failing verdict."""
    problems = []
    stubbed: set[str] = set()  # names bound in cells that hold a stub
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        text = source(cell)
        has_stub = bool(STUB.search(text))
        if cell.metadata.get("nbgrader", {}).get("locked") and not cell.metadata["nbgrader"].get("solution"):
            continue  # an nbgrader test cell: it fails on a stub by design
        if has_stub:
            stubbed |= cm.names_used_and_bound(text)[1]
        errors = [o for o in cell.outputs if o.output_type == "error"]
        for error in errors:
            if error.ename != "NotImplementedError" or not has_stub:
                where = "a stub cell" if has_stub else "a cell without a stub"
                problems.append(f"cell {index} ({where}) raised {error.ename}: {error.evalue}\n{text[:300]}")
        if errors:
            continue
        printed = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
        for name, arguments in checker_calls(text):
            if PASS_MARK not in printed and FAIL_MARK not in printed:
                problems.append(f"cell {index}: {name}(...) printed no verdict")
            elif arguments & stubbed and FAIL_MARK not in printed:
                problems.append(
                    f"cell {index}: {name}(...) on a stub did not print a failing verdict:\n{printed[:300]}"
                )
    return problems


@pytest.mark.slow
def test_the_fixture_edition_runs_up_to_each_stub(fixture_edition):
    root, _, _ = fixture_edition
    executed = execute(root / "student" / "book" / "fixture.ipynb")
    assert execution_problems(executed) == []
    printed = {
        i: "".join(o.get("text", "") for o in c.outputs) for i, c in enumerate(executed.cells) if c.cell_type == "code"
    }
    verdicts = [text for text in printed.values() if FAIL_MARK in text]
    assert len(verdicts) == 2 and all("not implemented yet" in text for text in verdicts)
    errors = [o.ename for c in executed.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert errors == ["NotImplementedError"]  # the tagged code cell, a stub at top level
    assert "after the exercises" in printed[max(printed)]  # cells after the stubs still run


@pytest.mark.slow
def test_the_run_check_catches_a_cell_that_needs_a_solution(tmp_path):
    root = write_book(tmp_path, {"fixture": solution_notebook(uses_solution_later=True)})
    ms.make_student_edition(root, root / "student")
    problems = execution_problems(execute(root / "student" / "book" / "fixture.ipynb"))
    assert len(problems) == 1 and "without a stub" in problems[0] and "NotImplementedError" in problems[0]


# --------------------------------------------------------------------------- the real book


def solution_parts(notebook: nbformat.NotebookNode) -> tuple[list[str], list[int]]:
    """(lines of solution content, indices of cells that sit inside a solution).

    Everything between solution-start and solution-end, except, in a code cell with nbgrader markers,
    the lines outside the markers (the scaffold)."""
    lines: list[str] = []
    cells: list[int] = []
    inside = False
    for index, cell in enumerate(notebook.cells):
        text = source(cell)
        if inside and cell.cell_type == "code":
            cells.append(index)
            if "BEGIN SOLUTION" not in text:
                lines += text.split("\n")
            in_markers = False
            for line in text.split("\n"):
                if "BEGIN SOLUTION" in line:
                    in_markers = True
                elif "END SOLUTION" in line:
                    in_markers = False
                elif in_markers:
                    lines.append(line)
        elif cell.cell_type == "markdown":
            text_lines, cursor, starts_inside = text.split("\n"), 0, inside
            for directive in cm.directives(text):
                if inside:
                    lines += text_lines[cursor : directive.start]
                cursor = directive.end
                inside = {"solution-start": True, "solution-end": False}.get(directive.name, inside)
            if inside:
                lines += text_lines[cursor:]
            if starts_inside or inside:
                cells.append(index)
    return lines, cells


def trivial(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith("#") or not re.search(r"[A-Za-z0-9]", stripped)


def output_lines(cell) -> list[str]:
    return [line.strip() for text in output_texts(cell) for line in text.split("\n")]


@pytest.fixture(scope="module")
def book_edition(tmp_path_factory):
    out = tmp_path_factory.mktemp("edition") / "student"
    chapters = ms.make_student_edition(ROOT, out)
    return {c.path.name: c for c in chapters}, out


@pytest.fixture(scope="module")
def book_solutions():
    """Per notebook: (solution lines, solution cells); and the lines that occur outside solutions anywhere."""
    parts, outside = {}, collections.Counter()
    for path in BOOK_NOTEBOOKS:
        notebook = read(path)
        lines, cells = solution_parts(notebook)
        parts[path.name] = (lines, cells)
        everything = collections.Counter(line.strip() for c in notebook.cells for line in source(c).split("\n"))
        everything.subtract(collections.Counter(line.strip() for line in lines))
        outside.update({line: n for line, n in everything.items() if n > 0})
    return parts, outside


def test_the_book_has_exercises(book_edition):
    chapters, _ = book_edition
    assert sum(len(c.exercises) for c in chapters.values()) > 0, "no exercises in any notebook under book/"
    assert sum(e.code_answers + e.manual for c in chapters.values() for e in c.exercises) > 0, (
        "exercises, but no solution is marked for the student edition"
    )


@pytest.mark.parametrize("path", BOOK_NOTEBOOKS, ids=lambda p: p.name)
def test_no_line_of_a_solution_is_in_the_student_edition(path, book_edition, book_solutions):
    _, out = book_edition
    parts, outside = book_solutions
    student_lines = set()
    for student_path in out.rglob("*.ipynb"):
        for cell in read(student_path).cells:
            student_lines |= {line.strip() for line in source(cell).split("\n")}
            student_lines |= set(output_lines(cell))
    student_lines |= {line.strip() for line in (out / "README.md").read_text().split("\n")}
    solution_lines, _ = parts[path.name]
    leaked = [
        line.strip()
        for line in solution_lines
        if not trivial(line) and not outside[line.strip()] and line.strip() in student_lines
    ]
    assert leaked == []


@pytest.mark.parametrize("path", BOOK_NOTEBOOKS, ids=lambda p: p.name)
def test_no_output_of_a_solution_cell_is_in_the_student_edition(path, book_edition, book_solutions):
    _, out = book_edition
    parts, _ = book_solutions
    notebook = read(path)
    _, solution_cells = parts[path.name]
    other_outputs = {line for i, c in enumerate(notebook.cells) if i not in solution_cells for line in output_lines(c)}
    student = read(out / path.relative_to(ROOT))
    student_outputs = {line for c in student.cells for line in output_lines(c)}
    hidden = {line for i in solution_cells for line in output_lines(notebook.cells[i]) if not trivial(line)}
    assert (hidden - other_outputs) & student_outputs == set()


@pytest.mark.slow
@pytest.mark.nbgrader
@pytest.mark.parametrize("path", BOOK_NOTEBOOKS, ids=lambda p: p.name)
def test_the_student_notebook_runs_up_to_each_stub(path, nbgrader_course):
    problems = execution_problems(nbgrader_course.executed(path.stem, nbgrader_course.released(path.stem)))
    assert problems == [], "\n\n".join(problems)
