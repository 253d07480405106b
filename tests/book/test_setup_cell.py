"""Every notebook starts with the current set-up cell, and tools/setup_cell.py keeps it that way."""

from __future__ import annotations

import subprocess
import sys

import nbformat
import pytest
import yaml

import setup_cell
from book_files import ROOT, book_config, book_notebooks

NOTEBOOKS = book_notebooks()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_starts_with_the_current_setup_cell(path):
    notebook = nbformat.read(path, as_version=4)
    index = setup_cell.first_code_cell(notebook)
    assert index is not None, "a chapter without code"
    assert notebook.cells[index].source == setup_cell.cell_source(), (
        "the first code cell is not the current set-up cell: run `python tools/setup_cell.py` "
        "and re-execute the notebook with tools/execute_notebooks.py"
    )
    assert setup_cell.has_site_metadata(notebook.cells[index]), (
        "the set-up cell lacks the website's metadata (hidden, one sentence for Colab readers): "
        "run `python tools/setup_cell.py` (no re-execution needed)"
    )


def test_the_cell_installs_from_the_repository_in_config():
    url = book_config()["repository"]["url"]
    assert f'"posenc_lib @ git+{url}"' in setup_cell.cell_source()


def test_the_cell_is_valid_ipython_that_installs_only_when_missing():
    from IPython.core.inputtransformer2 import TransformerManager

    python = TransformerManager().transform_cell(setup_cell.cell_source())
    compile(python, "<setup cell>", "exec")  # the %pip line inside the `if` is a valid magic there
    calls = []
    namespace = {"get_ipython": lambda: type("Shell", (), {"run_line_magic": lambda self, *a: calls.append(a)})()}
    exec(python, namespace)  # posenc_lib is importable here: nothing to install
    assert calls == []

    import importlib.util

    original = importlib.util.find_spec
    importlib.util.find_spec = lambda name, *a: None if name == "posenc_lib" else original(name, *a)
    try:
        exec(python, namespace)  # as on Colab: posenc_lib missing
    finally:
        importlib.util.find_spec = original
    assert len(calls) == 1 and calls[0][0] == "pip"
    assert calls[0][1].startswith('install --quiet "posenc_lib @ git+https://')


def scratch_notebook(*sources: str) -> nbformat.NotebookNode:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_markdown_cell("# Title")] + [nbformat.v4.new_code_cell(s) for s in sources]
    return notebook


def test_stamp_inserts_the_cell_before_the_first_code_cell():
    notebook = scratch_notebook("import torch", "print(1)")
    assert setup_cell.stamp(notebook, setup_cell.cell_source()) == "stamped (re-execute it)"
    assert [c.cell_type for c in notebook.cells] == ["markdown", "code", "code", "code"]
    assert notebook.cells[1].source == setup_cell.cell_source()
    assert notebook.cells[2].source == "import torch"
    nbformat.validate(notebook)  # the new cell has an id, as nbformat 4.5 requires


def test_a_new_cell_is_hidden_on_the_site_and_carries_the_colab_sentence():
    notebook = scratch_notebook("import torch")
    setup_cell.stamp(notebook, setup_cell.cell_source())
    cell = notebook.cells[1]
    assert "remove-input" in cell.metadata["tags"]
    assert cell.metadata["posenc"]["site_note"] == setup_cell.SITE_NOTE


def test_the_site_note_is_one_sentence_with_balanced_code_marks():
    note = setup_cell.SITE_NOTE
    assert note.count("`") % 2 == 0 and "Colab" in note and "posenc_lib" in note
    assert note.endswith(".") and note.count(". ") == 0


def test_stamping_metadata_keeps_the_outputs_of_an_executed_cell():
    notebook = scratch_notebook(setup_cell.cell_source(), "import torch")
    notebook.cells[1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="kept\n")]
    notebook.cells[1].execution_count = 1
    notebook.cells[1].metadata["tags"] = ["keep-me"]
    assert setup_cell.stamp(notebook, setup_cell.cell_source()) == "metadata stamped (outputs kept)"
    assert setup_cell.stamp(notebook, setup_cell.cell_source()) == ""  # now current
    assert notebook.cells[1].outputs[0]["text"] == "kept\n" and notebook.cells[1].execution_count == 1
    assert notebook.cells[1].metadata["tags"] == ["remove-input"]


def test_stamp_is_idempotent():
    notebook = scratch_notebook("import torch")
    setup_cell.stamp(notebook, setup_cell.cell_source())
    before = nbformat.writes(notebook)
    assert not setup_cell.stamp(notebook, setup_cell.cell_source())
    assert nbformat.writes(notebook) == before


def test_stamp_replaces_an_older_setup_cell_and_its_outputs():
    old = setup_cell.TEMPLATE.format(url="https://github.com/someone/old-fork").rstrip("\n")
    notebook = scratch_notebook(old, "import torch")
    notebook.cells[1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="installed\n")]
    notebook.cells[1].execution_count = 1
    assert setup_cell.stamp(notebook, setup_cell.cell_source()) == "stamped (re-execute it)"
    assert len(notebook.cells) == 3  # replaced, not added
    assert notebook.cells[1].source == setup_cell.cell_source()
    assert notebook.cells[1].outputs == [] and notebook.cells[1].execution_count is None


def test_a_fork_changes_one_line_and_reruns_the_tool(tmp_path):
    config = book_config()
    config["repository"]["url"] = "https://github.com/a-reader/my-fork/"
    (tmp_path / "_config.yml").write_text(yaml.safe_dump(config))
    path = tmp_path / "nb.ipynb"
    nbformat.write(scratch_notebook(setup_cell.cell_source(), "import torch"), path)
    tool = [sys.executable, str(ROOT / "tools" / "setup_cell.py"), "--config", str(tmp_path / "_config.yml")]

    check = subprocess.run([*tool, "--check", str(path)], capture_output=True, text=True)
    assert check.returncode == 1 and "nb.ipynb: not current" in check.stdout
    assert nbformat.read(path, as_version=4).cells[1].source == setup_cell.cell_source()  # --check writes nothing
    stamped = subprocess.run([*tool, str(path)], check=True, capture_output=True, text=True)
    assert "nb.ipynb: stamped (re-execute it)" in stamped.stdout
    assert subprocess.run([*tool, "--check", str(path)], capture_output=True).returncode == 0
    cell = nbformat.read(path, as_version=4).cells[1].source
    assert '"posenc_lib @ git+https://github.com/a-reader/my-fork"' in cell


@pytest.mark.parametrize("url", ["", "git@github.com:x/y.git", None])
def test_a_bad_repository_url_is_refused(tmp_path, url):
    (tmp_path / "_config.yml").write_text(yaml.safe_dump({"repository": {"url": url}}))
    with pytest.raises(ValueError, match="repository.url"):
        setup_cell.cell_source(tmp_path / "_config.yml")
