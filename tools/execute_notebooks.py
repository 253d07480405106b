"""Re-execute notebooks in place so their stored outputs are what the current code produces.

Usage: python tools/execute_notebooks.py [PATH ...]   (files or folders; default: book)

nbval compares these stored outputs with a fresh run, so run this after changing a
notebook or the library code it calls.
"""

from __future__ import annotations

import pathlib
import sys
import time

import nbformat
from nbclient import NotebookClient

from book_files import notebooks_under
from exact_streams import concatenate_stream_chunks


def execute(path: pathlib.Path) -> float:
    notebook = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    ).execute()
    elapsed = time.perf_counter() - start
    for cell in notebook.cells:  # keep diffs small: no per-run metadata, no timing-dependent chunks
        cell.get("metadata", {}).pop("execution", None)
        if cell.cell_type == "code":
            cell.outputs = concatenate_stream_chunks(cell.outputs)
    nbformat.write(notebook, path)
    return elapsed


def main(argv: list[str]) -> int:
    for path in notebooks_under(argv or ["book"]):
        print(f"{path}: executed in {execute(path):.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
