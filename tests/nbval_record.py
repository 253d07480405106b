"""A pytest plugin for `make test-nbval`: keep nbval's run of each chapter for the website and nbgrader.

    pytest --nbval --nbval-current-env -p nbval_record book

- The kernels draw SVG, as the website build does (``POSENC_FIGURE_FORMAT=svg``); nbval compares text,
  not images, so the stored PNGs are not compared with the SVGs.
- Each chapter's nbgrader test cells (``assert check_x(answer)``) run right after their answer, as in the
  nbgrader source notebook, so nbval's run is a run of that notebook. They print the checker's verdict
  again, so their output is not compared (none is stored); an error fails them. They are the items
  named ``Cell N nbgrader <grade id>``.
- Every notebook nbval ran through without a failure is written, with the outputs of that run, to
  ``test-artifacts/executed/<name>.ipynb`` (``POSENC_EXECUTED`` elsewhere), and the outputs of its test
  cells, when all passed, to ``<stem>.tests.json``. tools/book_build.py renders the website from those
  notebooks; tests/_nbgrader_course.py grades the solutions from them instead of executing the chapters
  again.
"""

from __future__ import annotations

import collections
import copy
import dataclasses
import json
import os
import pathlib
import shutil
from collections.abc import Iterator
from typing import Any

import nbformat
import pytest
from nbval.plugin import IPyNbCell

from book_files import ROOT, toc_chapters

EXECUTED = pathlib.Path(os.environ.get("POSENC_EXECUTED", ROOT / "test-artifacts" / "executed"))


@dataclasses.dataclass
class _Run:
    notebook: nbformat.NotebookNode  # a copy of the stored notebook, outputs replaced as cells pass
    cells: int  # code cells
    passed: set[int] = dataclasses.field(default_factory=set)
    failed: bool = False
    tests: dict[str, list] = dataclasses.field(default_factory=dict)  # grade id -> outputs of a passed test cell
    tests_failed: bool = False
    test_cells: int = 0  # how many nbgrader test cells run in this chapter


RUNS: dict[pathlib.Path, _Run] = {}


def _with_test_cells(items: list[pytest.Item]) -> list[pytest.Item]:
    """nbval's cells of each chapter, with each nbgrader test cell right after its answer."""
    import chapter_model as cm
    from _nbgrader_course import autograder_tests

    numbers = {path.resolve(): number for path, number in toc_chapters()}
    tests_after: dict[int, list[nbformat.NotebookNode]] = {}  # id(the answer's cell) -> its test cells
    for parent in {item.parent for item in items if isinstance(item, IPyNbCell)}:
        path = pathlib.Path(parent.path).resolve()
        run = RUNS.setdefault(path, _Run(copy.deepcopy(parent.nb), sum(c.cell_type == "code" for c in parent.nb.cells)))
        if path not in numbers:
            continue
        found = autograder_tests(cm.read_chapter(path, numbers[path]))
        run.test_cells = len(found)
        for index, test in found:
            tests_after.setdefault(id(parent.nb.cells[index]), []).append(test)
    result: list[pytest.Item] = []
    for item in items:
        result.append(item)
        if not isinstance(item, IPyNbCell):
            continue
        for test in tests_after.get(id(item.cell), []):
            grade_id = test.metadata["nbgrader"]["grade_id"]
            options: collections.defaultdict[str, bool] = collections.defaultdict(bool, check=False)
            extra = IPyNbCell.from_parent(
                item.parent, name=f"{item.name} nbgrader {grade_id}", cell_num=item.cell_num, cell=test, options=options
            )
            extra.grade_id = grade_id
            result.append(extra)
    return result


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items[:] = _with_test_cells(items)
    for item in items:
        # the stored notebooks hold PNG, this run draws SVG: images are not compared (PNG already is not)
        if isinstance(item, IPyNbCell) and "image/svg+xml" not in item.parent.skip_compare:
            item.parent.skip_compare += ("image/svg+xml",)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    """The kernel of a notebook starts in the first cell's set-up: it draws SVG, as in the website build."""
    before = os.environ.get("POSENC_FIGURE_FORMAT")
    os.environ["POSENC_FIGURE_FORMAT"] = "svg"
    try:
        yield
    finally:
        if before is None:
            del os.environ["POSENC_FIGURE_FORMAT"]
        else:
            os.environ["POSENC_FIGURE_FORMAT"] = before


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]  # pluggy's result object
    if not isinstance(item, IPyNbCell) or report.when not in ("setup", "call"):
        return
    run = RUNS[pathlib.Path(item.parent.path).resolve()]
    if (grade_id := getattr(item, "grade_id", None)) is not None:  # an nbgrader test cell
        if report.passed and report.when == "call":
            run.tests[grade_id] = copy.deepcopy(item.test_outputs)
        run.tests_failed = run.tests_failed or not report.passed
        return
    if not report.passed or report.when == "setup":
        run.failed = run.failed or not report.passed
        return
    index = next(i for i, cell in enumerate(item.parent.nb.cells) if cell is item.cell)
    run.notebook.cells[index].outputs = copy.deepcopy(item.test_outputs)
    run.passed.add(index)


def pytest_sessionfinish(session: pytest.Session) -> None:
    if not RUNS:
        return
    shutil.rmtree(EXECUTED, ignore_errors=True)
    EXECUTED.mkdir(parents=True)
    for path, run in RUNS.items():
        if run.failed or len(run.passed) != run.cells:
            continue
        nbformat.write(run.notebook, EXECUTED / path.name)
        if not run.tests_failed and len(run.tests) == run.test_cells:
            (EXECUTED / f"{path.stem}.tests.json").write_text(json.dumps(run.tests), encoding="utf-8")


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if RUNS:
        whole = len(list(EXECUTED.glob("*.ipynb")))
        terminalreporter.write_line(f"nbval_record: {whole} of {len(RUNS)} notebooks ran whole, kept in {EXECUTED}")


def executed_runs(executed: pathlib.Path = EXECUTED) -> dict[str, tuple[nbformat.NotebookNode, dict[str, list]]]:
    """Chapter stem -> (nbval's run of it, the outputs of its nbgrader test cells), for the chapters whose run and
    test cells all passed (tests/_nbgrader_course.py grades them)."""
    return {
        path.stem: (
            nbformat.read(path, as_version=4),
            nbformat.from_dict(json.loads(tests.read_text(encoding="utf-8"))),
        )
        for path in sorted(executed.glob("*.ipynb"))
        if (tests := executed / f"{path.stem}.tests.json").exists()
    }
