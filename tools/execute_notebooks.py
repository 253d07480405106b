"""Re-execute notebooks in place, so that their stored outputs are what the current code prints (nbval compares).

python tools/execute_notebooks.py [PATH ...]   (notebooks or folders; default: book)
"""

import sys
import time

import nbformat
from nbclient import NotebookClient

from book_files import notebooks_under


def main(paths: list[str]) -> int:
    for path in notebooks_under(paths or ["book"]):
        notebook, start = nbformat.read(path, as_version=4), time.perf_counter()
        # one output per stream and no timing in the metadata: a re-run changes only what the code changed
        NotebookClient(notebook, timeout=300, coalesce_streams=True, record_timing=False).execute(cwd=str(path.parent))
        nbformat.write(notebook, path)
        print(f"{path}: executed in {time.perf_counter() - start:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
