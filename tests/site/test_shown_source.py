"""Library code a page shows as text (a Markdown code block, not a printed `inspect.getsource`) stays the
library's code: the statements parse to the same syntax tree as the function's, and every comment shown
is one of the function's comments. Line breaks and the place of a comment may differ (the page keeps its
lines within 80 characters), nothing else.
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap

import nbformat
import pytest

import posenc_lib as pe
from conftest import ROOT


def shown_block(notebook: str, cell_id: str) -> str:
    """The ```python block of a markdown cell of a chapter."""
    cells = nbformat.read(ROOT / "book" / notebook, as_version=4).cells
    (cell,) = [c for c in cells if c.get("id") == cell_id]
    found = re.search(r"```python\n(.*?)\n```", cell.source, flags=re.DOTALL)
    assert found, f"{notebook} cell {cell_id} has no ```python block"
    return found.group(1)


def statements(nodes: list[ast.stmt]) -> list[str]:
    return [ast.dump(node) for node in nodes]


def comments(code: str) -> list[str]:
    return [match.strip() for match in re.findall(r"#([^\n]*)", code)]


def sinusoidal_formula_path() -> tuple[list[ast.stmt], str]:
    """pe.sinusoidal_encoding's statements from `theta = ...` on, without the hand-off to posenc_lib.fast."""
    source = textwrap.dedent(inspect.getsource(pe.sinusoidal_encoding))
    (function,) = ast.parse(source).body
    assert isinstance(function, ast.FunctionDef)
    start = next(
        i
        for i, node in enumerate(function.body)
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "theta"
    )
    kept = [
        node
        for node in function.body[start:]
        if not (isinstance(node, ast.If) and "fast.enabled" in ast.unparse(node.test))
    ]
    return kept, source


SHOWN = [
    ("03_sinusoidal.ipynb", "sinusoidal-formula-source", sinusoidal_formula_path),
]


@pytest.mark.parametrize(("notebook", "cell_id", "library"), SHOWN, ids=[s[1] for s in SHOWN])
def test_a_code_block_on_a_page_is_the_library_source(notebook, cell_id, library):
    shown = shown_block(notebook, cell_id)
    # the block is a function body (it may `return`): parse it inside a def
    (wrapper,) = ast.parse("def shown():\n" + textwrap.indent(shown, "    ")).body
    assert isinstance(wrapper, ast.FunctionDef)
    kept, source = library()
    assert statements(wrapper.body) == statements(kept), (
        f"{notebook} cell {cell_id} no longer shows the library's code:\n" + ast.unparse(kept)
    )
    library_comments = comments(source)
    stray = [comment for comment in comments(shown) if comment not in library_comments]
    assert not stray, f"{notebook} cell {cell_id} shows comments the library does not have: {stray}"
    assert all(len(line) <= 80 for line in shown.splitlines()), "a shown line is over 80 characters"


def test_the_comparison_catches_a_changed_statement_and_a_made_up_comment():
    kept, source = sinusoidal_formula_path()
    shown = shown_block("03_sinusoidal.ipynb", "sinusoidal-formula-source")
    wrong = shown.replace("angles[:, : d_model // 2].cos()", "angles.cos()")
    (wrapper,) = ast.parse("def shown():\n" + textwrap.indent(wrong, "    ")).body
    assert isinstance(wrapper, ast.FunctionDef)
    assert statements(wrapper.body) != statements(kept)
    assert "a made-up comment" not in comments(source)
