"""Check or stamp the set-up cell that every notebook starts with (see CONTRIBUTING.md).

The cell installs posenc_lib where it is missing (on Colab, for instance) and does nothing
elsewhere. It installs from the repository named in `_config.yml` (`repository.url`), the same
setting the launch buttons use, so a fork changes that one line and runs this tool.

On the website the cell is hidden: its metadata (`METADATA`) tags it `remove-input` and holds
one sentence for Colab readers (`SITE_NOTE`), which the site's Sphinx extension
(tools/course_site.py) shows in the cell's place. Jupyter and Colab show the cell as usual.

Usage:
    python tools/setup_cell.py [PATH ...]          stamp: insert or update the cell (default: book)
    python tools/setup_cell.py --check [PATH ...]  exit 1 and list notebooks whose cell is not current

A notebook that got a new set-up cell (or a new source in it) has stale stored outputs
(execution counts shift): re-execute it with `python tools/execute_notebooks.py NOTEBOOK`.
Stamping only the metadata needs no re-execution.
"""

from __future__ import annotations

import argparse
import copy
import pathlib
import sys

import nbformat
import yaml

from book_files import ROOT, notebooks_under

MARKER = "# Set-up: install the course library where it is missing"
TEMPLATE = """\
# Set-up: install the course library where it is missing (e.g. on Colab); does nothing elsewhere.
import importlib.util
if importlib.util.find_spec("posenc_lib") is None:
    %pip install --quiet "posenc_lib @ git+{url}"
"""


# `code` in backticks becomes inline code on the website
SITE_NOTE = (
    "On Colab, run the notebook’s first code cell before the others: it installs the course "
    "library, `posenc_lib` (anywhere it is already installed, the cell does nothing)."
)
METADATA = {"tags": ["remove-input"], "posenc": {"site_note": SITE_NOTE}}


def repository_url(config: pathlib.Path = ROOT / "_config.yml") -> str:
    """`repository.url` from the book's configuration, without a trailing slash or `.git`."""
    if not config.exists():
        raise ValueError(f"config must be an existing _config.yml, got {config}")
    url = (yaml.safe_load(config.read_text()) or {}).get("repository", {}).get("url")
    if not isinstance(url, str) or not url.startswith("https://"):
        raise ValueError(f"repository.url in {config} must be an https:// URL, got {url!r}")
    return url.rstrip("/").removesuffix(".git")


def cell_source(config: pathlib.Path = ROOT / "_config.yml") -> str:
    """The current text of the set-up cell (no trailing newline, as notebooks store it)."""
    return TEMPLATE.format(url=repository_url(config)).rstrip("\n")


def first_code_cell(notebook: nbformat.NotebookNode) -> int | None:
    return next((i for i, cell in enumerate(notebook.cells) if cell.cell_type == "code"), None)


def has_site_metadata(cell: nbformat.NotebookNode) -> bool:
    """The cell carries the website's metadata (`METADATA`): hidden, replaced by `SITE_NOTE`."""
    return all(cell.metadata.get(key) == value for key, value in METADATA.items())


def is_current(notebook: nbformat.NotebookNode, source: str) -> bool:
    index = first_code_cell(notebook)
    return index is not None and notebook.cells[index].source == source and has_site_metadata(notebook.cells[index])


def stamp(notebook: nbformat.NotebookNode, source: str) -> bool:
    """Make the notebook's first code cell the set-up cell; return whether anything changed.

    An older set-up cell (recognised by its first line) is updated in place: a new source
    clears its outputs; metadata alone (`METADATA`) is set without touching them. Otherwise
    a new cell goes before the first code cell (or at the end of a notebook with no code).
    """
    if is_current(notebook, source):
        return False
    index = first_code_cell(notebook)
    if index is not None and notebook.cells[index].source.startswith(MARKER):
        cell = notebook.cells[index]
        if cell.source != source:
            cell.source = source
            cell.outputs = []
            cell.execution_count = None
        cell.metadata.update(copy.deepcopy(METADATA))
        return True
    new = nbformat.v4.new_code_cell(source, metadata=copy.deepcopy(METADATA))
    notebook.cells.insert(len(notebook.cells) if index is None else index, new)
    return True


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only report notebooks whose set-up cell is not current")
    parser.add_argument("--config", type=pathlib.Path, default=ROOT / "_config.yml")
    parser.add_argument("paths", nargs="*", default=[str(ROOT / "book")])
    args = parser.parse_args(argv)
    source = cell_source(args.config)
    stale = []
    for path in notebooks_under(args.paths):
        notebook = nbformat.read(path, as_version=4)
        if args.check:
            if not is_current(notebook, source):
                stale.append(path)
            continue
        sources_before = [cell.source for cell in notebook.cells]
        if stamp(notebook, source):
            nbformat.write(notebook, path)
            stale.append(path)
            if [cell.source for cell in notebook.cells] == sources_before:
                print(f"{path}: set-up cell metadata stamped (outputs kept)")
            else:
                print(f"{path}: stamped (re-execute with tools/execute_notebooks.py)")
    if args.check:
        for path in stale:
            print(f"{path}: not current")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
