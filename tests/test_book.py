"""The website builds with warnings as errors, and a failing notebook fails the build."""

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
JUPYTER_BOOK = pathlib.Path(sys.executable).parent / "jupyter-book"


def build(source: pathlib.Path, output: pathlib.Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=f"{JUPYTER_BOOK.parent}{os.pathsep}{os.environ['PATH']}")
    return subprocess.run(
        [str(JUPYTER_BOOK), "build", "--all", "-W", "-n", "--keep-going", str(source), "--path-output", str(output)],
        capture_output=True, text=True, env=env, timeout=1200,
    )


@pytest.mark.book
def test_book_builds_strictly():
    result = build(ROOT, ROOT)
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-5000:]
    html = ROOT / "_build" / "html"
    assert (html / "index.html").exists()
    assert (html / "book" / "01_why_order_matters.html").exists()


@pytest.mark.book
def test_a_failing_notebook_fails_the_build(tmp_path):
    source = tmp_path / "src"
    (source / "book").mkdir(parents=True)
    shutil.copy(ROOT / "_config.yml", source)
    shutil.copy(ROOT / "book" / "intro.md", source / "book")
    (source / "_toc.yml").write_text("format: jb-book\nroot: book/intro\nchapters:\n  - file: book/broken\n")
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_markdown_cell("# Broken"), nbformat.v4.new_code_cell("1 / 0")]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, source / "book" / "broken.ipynb")
    result = build(source, tmp_path / "out")
    assert result.returncode != 0
    assert "ZeroDivisionError" in result.stdout + result.stderr
