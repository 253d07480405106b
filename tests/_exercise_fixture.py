"""A small solution notebook with known content, built in code, for testing the exercise tooling.

It is not stored as ``.ipynb`` (nbval would collect it). Its exercises mark their solutions the one way
CONTRIBUTING.md allows: scaffolds with nbgrader markers, whole answer cells, notes in the solution-end cell. Every piece of solution
content carries a ``SECRET-`` string and every stored output of a solution cell a
``LEAKED-OUTPUT-`` string, so a test can look for them in the student edition.
"""

from __future__ import annotations

import pathlib

import nbformat

ROOT = pathlib.Path(__file__).resolve().parents[1]


def stream(text: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_output("stream", name="stdout", text=text)


def md(source: str, tags: list[str] | None = None) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_markdown_cell(source)
    if tags:
        cell.metadata["tags"] = tags
    return cell


def code(
    source: str, outputs: list | None = None, tags: list[str] | None = None, count: int | None = None
) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(source, outputs=outputs or [], execution_count=count)
    if tags:
        cell.metadata["tags"] = tags
    return cell


SETUP = """\
from posenc_lib.exercises import Case, check_function


def check_square(fn):
    cases = [Case("x=3", (3,), expected=9.0), Case("x=-2", (-2,), expected=4.0)]
    return check_function("Square a number", fn, cases, hint="multiply x by itself")


def check_total(fn):
    cases = [Case("n=4", (4,), expected=6.0), Case("n=0", (0,), expected=0.0)]
    return check_function("Loop sum", fn, cases, hint="add 0 + 1 + ... + (n - 1)")"""

SQUARE = """\
def square(x):
    ### BEGIN SOLUTION
    result = x * x  # SECRET-A
    return result
    ### END SOLUTION

check_square(square)"""

SQUARE_STUDENT = """\
def square(x):
    # YOUR CODE HERE
    raise NotImplementedError()

check_square(square)"""

TOTAL = """\
def total(n):
    acc = 0
    for i in range(n):
        ### BEGIN SOLUTION
        acc += i  # SECRET-B
        ### END SOLUTION
    return acc


def scaled_total(n, k):
    ### BEGIN SOLUTION
    return k * total(n)  # SECRET-C
    ### END SOLUTION

check_total(total)"""

TOTAL_STUDENT = """\
def total(n):
    acc = 0
    for i in range(n):
        # YOUR CODE HERE
        raise NotImplementedError()
    return acc


def scaled_total(n, k):
    # YOUR CODE HERE
    raise NotImplementedError()

check_total(total)"""


def solution_notebook(*, uses_solution_later: bool = False) -> nbformat.NotebookNode:
    """The fixture chapter. ``uses_solution_later`` adds a cell after the exercises that calls ``square``
    (its stored output was computed by the solution; in the student edition it raises)."""
    cells = [
        md(
            "# A fixture chapter\n\n**Learning objectives.** After this chapter you can\n- square a number,\n"
            "- sum a range.\n\n**Prerequisites.** Python functions."
        ),
        code(SETUP, count=1),
        code('print("teaching output kept")', [stream("teaching output kept\n")], count=2),
        md(
            "## Exercises\n\n```{exercise} Square a number\n:label: ex-fixture-square\n\n"
            "Write `square(x)` that returns $x^2$.\n```"
        ),
        md("```{solution-start} ex-fixture-square\n:class: dropdown\n```"),
        code(SQUARE, [stream("PASS Square a number: correct on all 2 test inputs. LEAKED-OUTPUT-1\n")], count=3),
        md("Why it works: SECRET-EXPLANATION, multiplication is repeated addition.\n\n```{solution-end}\n```"),
        md(
            "````{exercise} Loop sum\n:label: ex-fixture-loop\n\nWrite `total(n)`, the sum $0 + 1 + \\dots + (n-1)$.\n\n"
            "```{note}\nA nested directive: its closing fence does not close the exercise.\n```\n````"
        ),
        md("````{solution-start} ex-fixture-loop\n:class: dropdown\n````"),
        code(TOTAL, [stream("PASS Loop sum: correct on all 2 test inputs. LEAKED-OUTPUT-2\n")], count=4),
        md("```{solution-end}\n```"),
        md("```{exercise} Explain\n:label: ex-fixture-explain\n\nWhy is $x^2 \\geq 0$?\n```"),
        md("```{solution-start} ex-fixture-explain\n:class: dropdown\n```"),
        md("Because SECRET-D: a product of two numbers of the same sign."),
        md("```{solution-end}\n```"),
        md("```{exercise} The answer\n:label: ex-fixture-value\n\nCompute six times seven into `answer`.\n```"),
        md("```{solution-start} ex-fixture-value\n:class: dropdown\n```"),
        code("answer = 6 * 7  # SECRET-E\nprint(answer)", [stream("42 LEAKED-OUTPUT-3\n")], count=5),
        md("The answer is SECRET-F, found by multiplying."),
        md("```{solution-end}\n```"),
        code('print("after the exercises")', [stream("after the exercises\n")], count=6),
    ]
    if uses_solution_later:
        cells.append(code('print("square(5) =", square(5))', [stream("square(5) = 25 LEAKED-OUTPUT-4\n")], count=7))
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook.metadata["language_info"] = {"name": "python"}
    return notebook


def write_book(
    folder: pathlib.Path, notebooks: dict[str, nbformat.NotebookNode], *, numbered: bool = True
) -> pathlib.Path:
    """A minimal repository: ``folder/_toc.yml`` and ``folder/book/<name>.ipynb``; returns ``folder``."""
    (folder / "book").mkdir(parents=True, exist_ok=True)
    chapters = "\n".join(f"      - file: book/{name}" for name in notebooks)
    (folder / "_toc.yml").write_text(
        "format: jb-book\nroot: book/intro\nparts:\n  - caption: Chapters\n"
        f"    numbered: {'true' if numbered else 'false'}\n    chapters:\n{chapters}\n"
    )
    for name, notebook in notebooks.items():
        nbformat.write(notebook, folder / "book" / f"{name}.ipynb")
    return folder
