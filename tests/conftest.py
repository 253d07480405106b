"""Shared fixtures: the website is built once per test session and used by every test that needs it.

`built_site` runs the same strict build as `make book` (warnings are errors, every notebook is
executed) into `_build/html`, or into `$POSENC_BOOK_OUTPUT/_build/html` when that variable is
set (so a developer can test without touching a build someone else is serving).
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
JUPYTER_BOOK = pathlib.Path(sys.executable).parent / "jupyter-book"

sys.path.insert(0, str(ROOT / "tools"))
import offline_site  # noqa: E402  (tools/ is not a package)


def build(source: pathlib.Path, output: pathlib.Path) -> subprocess.CompletedProcess:
    """Strict build of the book in `source` into `output`/_build/html."""
    offline_site.ensure_installed()  # mermaid and MathJax from npm, pinned by package-lock.json
    env = dict(os.environ, PATH=f"{JUPYTER_BOOK.parent}{os.pathsep}{os.environ['PATH']}")
    return subprocess.run(
        [str(JUPYTER_BOOK), "build", "--all", "-W", "-n", "--keep-going", str(source), "--path-output", str(output)],
        capture_output=True, text=True, env=env, timeout=1200,
    )


@dataclasses.dataclass
class BuiltSite:
    result: subprocess.CompletedProcess
    html: pathlib.Path

    @property
    def ok(self) -> bool:
        return self.result.returncode == 0

    def log_tail(self) -> str:
        return self.result.stdout[-5000:] + self.result.stderr[-5000:]


@pytest.fixture(scope="session")
def built_site() -> BuiltSite:
    output = pathlib.Path(os.environ.get("POSENC_BOOK_OUTPUT", ROOT))
    result = build(ROOT, output)
    return BuiltSite(result=result, html=output / "_build" / "html")


@pytest.fixture
def one_thread():
    """Run a test on one torch thread: tiny tensors are faster that way, and far faster when other
    processes share the cores. Use with ``pytestmark = pytest.mark.usefixtures("one_thread")``."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
