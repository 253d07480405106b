"""Shared fixtures. The steps of `make test` and what each runs are in the Makefile (`make help`).

- ``built_site``: the website of `make test-book` (tools/book_build.py), read from `_build/` (or from
  `$POSENC_BOOK_OUTPUT/_build/` when set, so a developer can test without touching a build someone else is
  serving); when no build is there, the fixture builds it, from nbval's runs if `make test-nbval` left them.
- ``nbgrader_course``: the nbgrader round trip on every chapter (tests/_nbgrader_course.py); the solutions
  graded are nbval's runs where `make test-nbval` left them (tests/nbval_record.py).
- ``one_thread``: a test on one torch thread.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib

import pytest

import book_build
from book_files import ROOT

build = book_build.build  # the strict build of a scratch book (tests/book/test_book.py, tests/site)


@dataclasses.dataclass
class BuiltSite:
    """What tools/book_build.py did: its exit status, the html folder, and the notebooks it rendered from nbval."""

    returncode: int
    html: pathlib.Path
    from_nbval: list[str]  # notebooks the build was handed nbval's run of
    executed: int  # notebooks the build executed itself
    log: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def log_tail(self) -> str:
        return self.log[-10000:]


@pytest.fixture(scope="session")
def built_site() -> BuiltSite:
    output = pathlib.Path(os.environ.get("POSENC_BOOK_OUTPUT", ROOT))
    info_path = output / "_build" / book_build.INFO
    if not info_path.exists():
        book_build.build_site(output)
    info = json.loads(info_path.read_text(encoding="utf-8"))
    log = (output / "_build" / "jupyter-book.log").read_text(encoding="utf-8")
    return BuiltSite(info["returncode"], pathlib.Path(info["html"]), info["from_nbval"], info["executed"], log)


@pytest.fixture(scope="session")
def nbgrader_course():
    from _nbgrader_course import course, grade_solutions
    from nbval_record import executed_runs

    graded = course()
    grade_solutions(graded, executed_runs())
    return graded


@pytest.fixture
def one_thread():
    """Run a test on one torch thread: tiny tensors are faster that way, and far faster when other
    processes share the cores. Use with ``pytestmark = pytest.mark.usefixtures("one_thread")``."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
