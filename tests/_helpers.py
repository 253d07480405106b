"""Helpers that several test modules share (a test module never imports another test module).

- :func:`pins` reads the ``name==version`` lines of a requirements file, with ``packaging``;
- :func:`scratch_book` writes a one-chapter book with the course's configuration, for build tests.
"""

from __future__ import annotations

import pathlib
import shutil

import nbformat
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
