"""Helpers that several test modules share (a test module never imports another test module).

- :func:`pins` reads the ``name==version`` lines of a requirements file, with ``packaging``;
- :func:`scratch_book` writes a one-chapter book with the course's configuration, for build tests.
- :func:`checker_contract` gives the tests every exercise checker passes; :func:`numpy_sinusoidal_table`
  is a sinusoidal table written with NumPy (no posenc_lib), with one mistake switched on if asked.
"""

from __future__ import annotations

import pathlib
import shutil

import nbformat
import numpy as np
import pytest
import yaml
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from book_files import ROOT


def requirement_lines(path: pathlib.Path) -> list[str]:
    """The requirement lines of a requirements file: no comments, no blank lines."""
    return [
        line.split(" #")[0].strip()
        for line in path.read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]


def pins(path: pathlib.Path) -> dict[str, str]:
    """{canonical name: version} for every exact pin (``name==version``) of a requirements file."""
    found: dict[str, str] = {}
    for line in requirement_lines(path):
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            continue  # an option line such as --extra-index-url
        exact = [spec.version for spec in requirement.specifier if spec.operator == "=="]
        if exact:
            found[canonicalize_name(requirement.name)] = exact[0]
    return found


def scratch_book(tmp_path: pathlib.Path, chapter: str, code: str) -> pathlib.Path:
    """A one-chapter book with the repository's configuration, extensions and static files."""
    source = tmp_path / "src"
    (source / "book").mkdir(parents=True)
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    local = config["sphinx"].get("local_extensions", {})
    config["sphinx"]["local_extensions"] = {name: str(ROOT / path) for name, path in local.items()}
    (source / "_config.yml").write_text(yaml.safe_dump(config))
    shutil.copytree(ROOT / "book" / "_static", source / "book" / "_static")
    shutil.copy(ROOT / "book" / "references.bib", source / "book")
    (source / "book" / "intro.md").write_text("# Intro\n\nA scratch book with one chapter.\n")
    (source / "_toc.yml").write_text(f"format: jb-book\nroot: book/intro\nchapters:\n  - file: book/{chapter}\n")
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_markdown_cell(f"# {chapter}"), nbformat.v4.new_code_cell(code)]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, source / "book" / f"{chapter}.ipynb")
    return source


def printed_text(notebook_path: pathlib.Path) -> str:
    """Everything a notebook's stored code cells show as text, joined: what they printed (stream outputs) and
    the plain-text form of what they displayed (a results table shown as HTML carries it too)."""
    notebook = nbformat.read(notebook_path, as_version=4)
    return "".join(
        output.get("text", "") + output.get("data", {}).get("text/plain", "")
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
    )


def _stub(*args, **kwargs):
    raise NotImplementedError()


def checker_contract(checker, solution, wrong_answers):
    """The tests every exercise checker passes, for a test module to bind at its top level::

        test_passes_the_solution, test_fails_the_stub, test_fails_typical_wrong_answers = checker_contract(
            check_x, solution, [(wrong_answer, "a phrase of its specific hint"), ...]
        )

    The solution passes (and the verdict says PASS); a stub that raises NotImplementedError and a
    non-function fail; each typical wrong answer fails with its own hint, not the general one.
    """

    def test_passes_the_solution(capsys):
        result = checker(solution)
        assert result and result.passed
        assert "PASS" in capsys.readouterr().out

    def test_fails_the_stub(capsys):
        assert not checker(_stub)
        assert "not implemented" in capsys.readouterr().out
        assert not checker(42)  # not a function

    @pytest.mark.parametrize("wrong, hint", wrong_answers, ids=[wrong.__name__ for wrong, _ in wrong_answers])
    def test_fails_typical_wrong_answers(wrong, hint, capsys):
        result = checker(wrong)
        assert not result
        assert hint in result.hint and hint in capsys.readouterr().out

    return test_passes_the_solution, test_fails_the_stub, test_fails_typical_wrong_answers


def numpy_sinusoidal_table(
    seq_len,
    d_model,
    *,
    exponent=lambda k, d: 2 * k / d,
    cos_exponent=None,
    swap=False,
    first=0,
    concatenated=False,
    dtype=np.float64,
):
    """A sinusoidal table written with NumPy (no posenc_lib), with one mistake switched on if asked."""
    cos_exponent = cos_exponent or exponent
    p = np.arange(first, first + seq_len, dtype=np.float64)[:, None]  # (s, 1)
    sines = p / 10000.0 ** exponent(np.arange((d_model + 1) // 2), d_model)  # (s, ceil(d/2)) angles
    cosines = p / 10000.0 ** cos_exponent(np.arange(d_model // 2), d_model)  # (s, floor(d/2))
    even, odd = (np.cos(sines), np.sin(cosines)) if swap else (np.sin(sines), np.cos(cosines))
    if concatenated:
        return np.concatenate([even, odd], axis=1).astype(dtype)
    out = np.zeros((seq_len, d_model), dtype=dtype)
    out[:, 0::2], out[:, 1::2] = even, odd
    return out
