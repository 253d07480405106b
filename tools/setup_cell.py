"""Check or stamp the set-up cell that every notebook starts with (see CONTRIBUTING.md).

The cell installs posenc_lib where it is missing (on Colab, for instance) and does nothing
elsewhere. It installs from the repository named in `_config.yml` (`repository.url`), the same
setting the launch buttons use, so a fork changes that one line and runs this tool.

Usage:
    python tools/setup_cell.py [PATH ...]          stamp: insert or update the cell (default: book)
    python tools/setup_cell.py --check [PATH ...]  exit 1 and list notebooks whose cell is not current

A stamped notebook's stored outputs are stale (execution counts shift): re-execute it with
`python tools/execute_notebooks.py NOTEBOOK`.
"""

from __future__ import annotations

import argparse
import pathlib
import sys

import nbformat
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[1]
MARKER = "# Set-up: install the course library where it is missing"
TEMPLATE = """\
# Set-up: install the course library where it is missing (e.g. on Colab); does nothing elsewhere.
import importlib.util
if importlib.util.find_spec("posenc_lib") is None:
    %pip install --quiet "posenc_lib @ git+{url}"
"""


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


def is_current(notebook: nbformat.NotebookNode, source: str) -> bool:
    index = first_code_cell(notebook)
    return index is not None and notebook.cells[index].source == source


def stamp(notebook: nbformat.NotebookNode, source: str) -> bool:
    """Make the notebook's first code cell the set-up cell; return whether anything changed.

    An older set-up cell (recognised by its first line) is replaced in place; otherwise a new
    cell goes before the first code cell (or at the end of a notebook with no code).
    """
    if is_current(notebook, source):
        return False
    index = first_code_cell(notebook)
    if index is not None and notebook.cells[index].source.startswith(MARKER):
        cell = notebook.cells[index]
        cell.source = source
        cell.outputs = []
        cell.execution_count = None
        return True
    new = nbformat.v4.new_code_cell(source)
    notebook.cells.insert(len(notebook.cells) if index is None else index, new)
    return True


def notebooks_under(paths: list[str]) -> list[pathlib.Path]:
    found: list[pathlib.Path] = []
    for raw in paths:
        path = pathlib.Path(raw)
        if path.is_dir():
            found += sorted(p for p in path.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
        elif path.suffix == ".ipynb" and path.exists():
            found.append(path)
        else:
            raise ValueError(f"paths must be notebooks or folders, got {raw}")
    return found


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
        elif stamp(notebook, source):
            nbformat.write(notebook, path)
            stale.append(path)
    verb = "not current" if args.check else "stamped (re-execute with tools/execute_notebooks.py)"
    for path in stale:
        print(f"{path}: {verb}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
