"""Check or stamp the set-up cell that every notebook starts with (CONTRIBUTING.md).

    python tools/setup_cell.py [--check] [--config _config.yml] [PATH ...]   (default: book)

The cell installs posenc_lib where it is missing from `_config.yml`'s `repository.url`, the launch buttons' setting,
so a fork changes that line and runs this tool, then re-executes the notebooks (tools/execute_notebooks.py).
On the website the cell is hidden (`METADATA`) and tools/course_site.py shows `SITE_NOTE` in its place.
"""

import argparse
import copy
import pathlib
import sys

import nbformat

from book_files import ROOT, book_config, notebooks_under

MARKER = "# Set-up: install the course library where it is missing"
TEMPLATE = (
    MARKER
    + """ (e.g. on Colab); does nothing elsewhere.
import importlib.util
if importlib.util.find_spec("posenc_lib") is None:
    %pip install --quiet "posenc_lib @ git+{url}\""""
)
SITE_NOTE = (  # `code` in backticks becomes inline code on the website
    "On Colab, run the notebook’s first code cell before the others: it installs the course "
    "library, `posenc_lib` (anywhere it is already installed, the cell does nothing)."
)
METADATA = {"tags": ["remove-input"], "posenc": {"site_note": SITE_NOTE}}


def cell_source(config: pathlib.Path = ROOT / "_config.yml") -> str:
    """The set-up cell that installs from the repository named in ``config``."""
    url = book_config(config).get("repository", {}).get("url")
    if not isinstance(url, str) or not url.startswith("https://"):
        raise ValueError(f"repository.url in {config} must be an https:// URL, got {url!r}")
    return TEMPLATE.format(url=url.rstrip("/").removesuffix(".git"))


def first_code_cell(notebook: nbformat.NotebookNode) -> int | None:
    return next((i for i, cell in enumerate(notebook.cells) if cell.cell_type == "code"), None)


def has_site_metadata(cell: nbformat.NotebookNode) -> bool:
    return all(cell.metadata.get(key) == value for key, value in METADATA.items())


def stamp(notebook: nbformat.NotebookNode, source: str) -> str:
    """Make the first code cell the set-up cell ``source``, updating an older one; returns what changed ("": nothing)."""
    index = first_code_cell(notebook)
    if index is None or not notebook.cells[index].source.startswith(MARKER):
        index = len(notebook.cells) if index is None else index
        notebook.cells.insert(index, nbformat.v4.new_code_cell())  # filled in below, as an older cell is
    cell = notebook.cells[index]
    if cell.source == source and has_site_metadata(cell):
        return ""
    changed = "metadata stamped (outputs kept)" if cell.source == source else "stamped (re-execute it)"
    if cell.source != source:  # the outputs of an older cell go; a change of metadata alone keeps them
        cell.source, cell.outputs, cell.execution_count = source, [], None
    cell.metadata.update(copy.deepcopy(METADATA))
    return changed


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only list the notebooks whose set-up cell is not current")
    parser.add_argument("--config", type=pathlib.Path, default=ROOT / "_config.yml")
    parser.add_argument("paths", nargs="*", default=[ROOT / "book"])
    args = parser.parse_args(argv)
    source, stale = cell_source(args.config), False
    for path in notebooks_under(args.paths):
        notebook = nbformat.read(path, as_version=4)
        if changed := stamp(notebook, source):  # with --check, only read: the stamped copy is not written
            stale = True
            print(f"{path}: " + ("not current" if args.check else changed))
            if not args.check:
                nbformat.write(notebook, path)
    return int(args.check and stale)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
