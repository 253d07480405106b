"""Every chapter notebook: listed in the table of contents, stored outputs fresh (nbval), no errors.

nbval runs through pytest's own collection: `make test` passes `book` to pytest
with `--nbval`, so every notebook under book/ is executed and compared; this file
checks the things nbval does not.
"""

import json

import pytest

from book_files import ROOT, book_notebooks, toc_documents

NOTEBOOKS = book_notebooks()


def test_there_are_notebooks():
    assert NOTEBOOKS, "no notebooks found under book/"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_in_the_toc(path):
    assert path.relative_to(ROOT).with_suffix("").as_posix() in {docname for docname, _ in toc_documents()}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_has_outputs_and_no_errors(path):
    notebook = json.loads(path.read_text())
    code_cells = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    assert code_cells, "a chapter without code is not executable"
    outputs = [o for c in code_cells for o in c.get("outputs", [])]
    assert outputs, "stored outputs are missing: run `make refresh-notebooks`"
    assert not [o for o in outputs if o["output_type"] == "error"]
    assert all(c.get("execution_count") for c in code_cells), "some code cells were never executed"
    counts = [c["execution_count"] for c in code_cells]
    assert counts == list(range(1, len(counts) + 1)), "cells were not executed top to bottom in one run"
