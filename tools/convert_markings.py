"""One-off: rewrite chapters from three solution markings to one (CONTRIBUTING.md, "Exercises").

Usage::

    python tools/convert_markings.py book/*.ipynb   # rewrites the notebooks in place; idempotent

- a ``{solution}`` directive becomes ``solution-start`` / its body in a cell of its own / ``solution-end``;
- the cell tag ``solution`` goes (every cell between solution-start and solution-end is the answer);
- markdown between solution-start and solution-end that was untagged (notes on the solution, not an
  answer to write) moves into the solution-end cell, before its fence, where the student edition drops it.

A notebook with neither a ``solution`` tag nor a ``{solution}`` directive is taken as converted and left
alone, so a second run changes nothing. Only sources, tags and cell ids of solution cells change; outputs are
left as they are. Delete this script once no branch carries the old markings.
"""

from __future__ import annotations

import sys

import nbformat

from chapter_model import directives


def untagged(cell: nbformat.NotebookNode) -> bool:
    """Drop the tag ``solution``; True if the cell did not have it."""
    tags = cell.metadata.get("tags", [])
    if "solution" not in tags:
        return True
    cell.metadata["tags"] = [t for t in tags if t != "solution"]
    if not cell.metadata["tags"]:
        del cell.metadata["tags"]
    return False


def convert(notebook: nbformat.NotebookNode, where: str) -> nbformat.NotebookNode:
    cells, notes, inside = [], [], False
    for cell in notebook.cells:
        found = directives(cell.source) if cell.cell_type == "markdown" else []
        names = [d.name for d in found]
        was_untagged = untagged(cell)
        if "solution" in names:  # {solution} X -> solution-start X, its body, solution-end
            (d,) = [d for d in found if d.name == "solution"]
            lines = cell.source.split("\n")
            before, after = "\n".join(lines[: d.start]).strip(), "\n".join(lines[d.end :]).strip()
            if before or after:
                sys.exit(f"{where}: text beside a {{solution}} directive; split the cell by hand first")
            options = "".join(f":{key}: {value}\n" for key, value in d.options.items())
            cell.source = f"```{{solution-start}} {d.argument}\n{options}```"
            body = nbformat.v4.new_markdown_cell(d.body, id=f"{cell.id}-answer"[:64])
            end = nbformat.v4.new_markdown_cell("```{solution-end}\n```", id=f"{cell.id}-end"[:64])
            cells += [cell, body, end]
            continue
        if inside and cell.cell_type == "markdown" and not names and was_untagged:
            notes.append(cell.source)  # notes on the solution
            continue
        if notes and "solution-end" not in names:
            sys.exit(f"{where}: notes on a solution are followed by an answer cell; move them by hand first")
        if "solution-end" in names and notes:
            cell.source = "\n\n".join([*notes, cell.source])
            notes = []
        for name in names:
            inside = {"solution-start": True, "solution-end": False}.get(name, inside)
        cells.append(cell)
    notebook.cells = cells
    return notebook


def main(paths: list[str]) -> int:
    for path in paths:
        notebook = nbformat.read(path, as_version=4)
        old = any("solution" in c.metadata.get("tags", []) or "{solution}" in c.source for c in notebook.cells)
        if old:
            convert(notebook, path)
            nbformat.write(notebook, path)
            print(f"converted {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
