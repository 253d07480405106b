"""Where the book's files are, for every tool and test: its notebooks, its table of contents and its configuration."""

import pathlib
from collections.abc import Iterable
from typing import Any

import yaml
from sphinx_external_toc.api import FileItem
from sphinx_external_toc.parsing import parse_toc_yaml

ROOT = pathlib.Path(__file__).resolve().parents[1]


def notebooks_under(paths: Iterable[str | pathlib.Path]) -> list[pathlib.Path]:
    """The notebooks among ``paths``, which are notebooks or folders (searched recursively, checkpoints left out)."""
    found: list[pathlib.Path] = []
    for path in map(pathlib.Path, paths):
        if path.is_dir():
            found += sorted(p for p in path.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
        elif path.suffix == ".ipynb" and path.exists():
            found.append(path)
        else:
            raise ValueError(f"paths must be notebooks or folders, got {path}")
    return found


def book_notebooks(root: pathlib.Path = ROOT) -> list[pathlib.Path]:
    """Every notebook under ``root/book``, whether the table of contents lists it or not."""
    return notebooks_under([root / "book"])


def toc_documents(root: pathlib.Path = ROOT) -> list[tuple[str, int | None]]:
    """``_toc.yml``'s documents in reading order (read as Jupyter Book reads it), with their chapter numbers or None."""
    site_map, found = parse_toc_yaml(root / "_toc.yml"), []

    def visit(docname: str, number: int | None, depth: int) -> None:
        found.append((docname, number))
        for tree in site_map[docname].subtrees:
            files = [item for item in tree.items if isinstance(item, FileItem)]  # no globs or URLs in this book
            for position, item in enumerate(files, start=1):
                visit(str(item), position if tree.numbered and depth == 0 else None, depth + 1)

    visit(site_map.root.docname, None, 0)
    return found


def toc_chapters(root: pathlib.Path = ROOT) -> list[tuple[pathlib.Path, int | None]]:
    """The notebooks of ``_toc.yml`` in reading order, with their chapter numbers or None."""
    paths = [(root / f"{docname}.ipynb", number) for docname, number in toc_documents(root)]
    return [(path, number) for path, number in paths if path.is_file()]


def book_config(path: pathlib.Path = ROOT / "_config.yml") -> dict[str, Any]:
    return yaml.safe_load(path.read_text(encoding="utf-8")) or {}
