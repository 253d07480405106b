"""Where the book's files are: its notebooks, its table of contents and its configuration.

The one place the tools and the tests look them up:

- :func:`notebooks_under` finds the notebooks in files or folders (what the maintenance tools take
  on their command line); :func:`book_notebooks` is every notebook under ``book/``;
- :func:`toc_documents` and :func:`toc_chapters` read ``_toc.yml`` with sphinx-external-toc, the
  parser Jupyter Book itself uses: the documents in reading order, and the notebooks among them with
  their numbers on the website;
- :func:`book_config` reads ``_config.yml``.

``tools/`` is a folder of scripts, not a package: a tool imports this module as ``book_files``
(a script's own folder is on ``sys.path``, and so is ``tools/`` for the Sphinx extensions that
``_config.yml`` loads from it); pytest and mypy get ``tools/`` from ``pyproject.toml``.
"""

from __future__ import annotations

import pathlib
from collections.abc import Iterable
from typing import Any

import yaml
from sphinx_external_toc.api import FileItem
from sphinx_external_toc.parsing import parse_toc_yaml

ROOT = pathlib.Path(__file__).resolve().parents[1]


def notebooks_under(paths: Iterable[str | pathlib.Path]) -> list[pathlib.Path]:
    """The notebooks among ``paths`` (files or folders, searched recursively, checkpoints skipped), in order."""
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


def book_notebooks(root: pathlib.Path = ROOT) -> list[pathlib.Path]:
    """Every notebook under ``root/book``, sorted (the chapters, whether or not the table of contents lists them)."""
    return notebooks_under([root / "book"])


def toc_documents(root: pathlib.Path = ROOT) -> list[tuple[str, int | None]]:
    """The documents of ``root/_toc.yml`` in reading order, as ``(docname, number)``.

    ``docname`` is the path without its suffix (``"book/05_rope"``); ``number`` is the chapter's
    number on the website (its place in a numbered part), ``None`` outside numbered parts and for
    the root page and sections inside a chapter.
    """
    site_map = parse_toc_yaml(root / "_toc.yml")
    found: list[tuple[str, int | None]] = []

    def visit(docname: str, number: int | None, depth: int) -> None:
        found.append((docname, number))
        for tree in site_map[docname].subtrees:
            files = [item for item in tree.items if isinstance(item, FileItem)]  # no globs or URLs in this book
            for position, item in enumerate(files, start=1):
                visit(str(item), position if tree.numbered and depth == 0 else None, depth + 1)

    visit(site_map.root.docname, None, 0)
    return found


def toc_chapters(root: pathlib.Path = ROOT) -> list[tuple[pathlib.Path, int | None]]:
    """The notebooks of ``_toc.yml`` in reading order, each with its number on the website (or ``None``)."""
    paths = [(root / f"{docname}.ipynb", number) for docname, number in toc_documents(root)]
    return [(path, number) for path, number in paths if path.is_file()]


def book_config(root: pathlib.Path = ROOT) -> dict[str, Any]:
    """``root/_config.yml``, parsed."""
    return yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8")) or {}
