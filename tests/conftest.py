"""Shared fixtures and the test layers.

Layers (markers in pyproject.toml): a test that starts a notebook kernel, builds the website or a
wheel, drives a browser, Lighthouse or nbgrader, or re-trains an experiment is ``slow``;
``make test-fast`` leaves those out. Every nbval cell and every test that uses the website
(``built_site``) is marked here, so no such test can slip into the fast layer.

The website is built once per session (``built_site``), with the same strict settings as
``make book`` (warnings are errors, a notebook that raises fails the build), into `_build/html`,
or into `$POSENC_BOOK_OUTPUT/_build/html` when that variable is set (so a developer can test
without touching a build someone else is serving).

Each chapter is executed once for both nbval and the website: nbval runs first (its cells are
moved to the front of the session), in kernels that draw SVG figures as the website build does
(nbval compares text, not images), and each notebook that nbval ran through without a failure is
put, with the outputs of that run, into a Jupyter Book execution cache (jupyter-cache, Jupyter
Book's own mechanism). The session's build reads that cache (``execute_notebooks: cache``): it
renders those outputs and executes only notebooks missing from it (when nbval was not run, or
failed on them), failing on any that raises. ``make book`` executes every notebook
(``execute_notebooks: force`` in _config.yml); tests/book/test_book.py shows that a failing notebook
fails that build.

The same run serves nbgrader: nbval also runs each chapter's nbgrader test cells (``assert
check_x(answer)``), each right after its answer as in the nbgrader source notebook, so the run is one
of that notebook, and tests/_nbgrader_course.py grades its outputs instead of executing the
solutions again. Those extra items are named ``Cell N nbgrader <grade id>``.

Order and overlap (2 cores; most steps use one): nbval's cells run first; the nbgrader round trip
on the releases (tests/_nbgrader_course.py) starts in the background when the session starts, and the website build
as soon as nbval is done, so both run beside single-core steps.
"""

from __future__ import annotations

import collections
import copy
import dataclasses
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Generator, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import nbformat
import pytest
import yaml
from nbval.plugin import IPyNbCell

import offline_site
from book_files import ROOT, book_config, book_notebooks, toc_chapters

JUPYTER_BOOK = pathlib.Path(sys.executable).parent / "jupyter-book"


def build_command(source: pathlib.Path, output: pathlib.Path, *, cache: pathlib.Path | None = None) -> list[str]:
    """The strict build of the book in `source` into `output`/_build/html (`make book`'s settings).

    With ``cache`` (a jupyter-cache folder), notebooks found in the cache are rendered with its outputs
    and only the others are executed; without it, `source`'s _config.yml decides (the course's: every
    notebook is executed).
    """
    offline_site.ensure_installed()  # the website's build tools from npm, pinned by package-lock.json
    command = [str(JUPYTER_BOOK), "build", "--all", "-W", "-n", "--keep-going", str(source)]
    command += ["--path-output", str(output)]
    if cache is not None:
        config = copy.deepcopy(book_config(source))
        config["execute"] = dict(config.get("execute", {}), execute_notebooks="cache", cache=str(cache))
        # a configuration file elsewhere: local extensions are found relative to it
        local = config["sphinx"].get("local_extensions", {})
        config["sphinx"]["local_extensions"] = {name: str(source / path) for name, path in local.items()}
        path = pathlib.Path(tempfile.mkdtemp(prefix="posenc-config-")) / "_config.yml"
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        command += ["--config", str(path)]
    return command


def build_env() -> dict[str, str]:
    return dict(os.environ, PATH=f"{JUPYTER_BOOK.parent}{os.pathsep}{os.environ['PATH']}")


def build(
    source: pathlib.Path, output: pathlib.Path, *, cache: pathlib.Path | None = None
) -> subprocess.CompletedProcess:
    """Run :func:`build_command` and wait for it."""
    command = build_command(source, output, cache=cache)
    return subprocess.run(command, capture_output=True, text=True, env=build_env(), timeout=1200)


@dataclasses.dataclass
class BuiltSite:
    result: subprocess.CompletedProcess
    html: pathlib.Path
    from_nbval: list[str]  # notebooks whose outputs came from this session's nbval run

    @property
    def ok(self) -> bool:
        return self.result.returncode == 0

    @property
    def executed(self) -> int:
        """How many notebooks the build executed itself."""
        return len(re.findall(r"Executing notebook using", self.result.stdout + self.result.stderr))

    def log_tail(self) -> str:
        return self.result.stdout[-5000:] + self.result.stderr[-5000:]


# ------------------------------------------------------------------ nbval's run, kept for the website


@dataclasses.dataclass
class _Run:
    notebook: nbformat.NotebookNode  # a copy of the stored notebook, outputs replaced as cells pass
    cells: int  # code cells
    passed: set[int] = dataclasses.field(default_factory=set)
    failed: bool = False
    tests: dict[str, list] = dataclasses.field(default_factory=dict)  # grade id -> outputs of a passed test cell
    tests_failed: bool = False


_NBVAL_RUNS: dict[pathlib.Path, _Run] = {}
_TEST_CELLS: dict[pathlib.Path, int] = {}  # notebook -> how many nbgrader test cells nbval runs in it


def nbval_outputs() -> dict[pathlib.Path, nbformat.NotebookNode]:
    """The notebooks nbval ran through in this session without a failure, with the outputs of that run."""
    return {path: run.notebook for path, run in _NBVAL_RUNS.items() if not run.failed and len(run.passed) == run.cells}


def nbval_runs_for_grading() -> dict[str, tuple[nbformat.NotebookNode, dict[str, list]]]:
    """Chapter stem -> (the notebook with the outputs of nbval's run, the outputs of its nbgrader test cells), for
    the chapters nbval ran through with every test cell passing (tests/_nbgrader_course.py grades them)."""
    return {
        path.stem: (notebook, _NBVAL_RUNS[path].tests)
        for path, notebook in nbval_outputs().items()
        if not _NBVAL_RUNS[path].tests_failed and len(_NBVAL_RUNS[path].tests) == _TEST_CELLS.get(path, -1)
    }


def _with_test_cells(items: list[pytest.Item]) -> list[pytest.Item]:
    """nbval's cells of each chapter, with the chapter's nbgrader test cells (``assert check_x(answer)``) run right
    after their answer, as in the nbgrader source notebook: nbval's run is then a run of that notebook, which
    nbgrader grades without executing the chapter again. They print the checker's verdict again, so their
    output is not compared (there is none stored); an error fails them."""
    if not any(isinstance(item, IPyNbCell) for item in items):
        return items
    from _nbgrader_course import autograder_tests, ms

    numbers = {path.resolve(): number for path, number in toc_chapters()}
    tests_after: dict[int, list[nbformat.NotebookNode]] = {}  # id(the answer's cell) -> its test cells
    for parent in {item.parent for item in items if isinstance(item, IPyNbCell)}:
        path = pathlib.Path(parent.path).resolve()
        if path not in numbers:
            continue
        found = autograder_tests(ms.read_chapter(path, numbers[path]))
        _TEST_CELLS[path] = len(found)
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


def _uses(item: pytest.Item, fixture: str) -> bool:
    return fixture in getattr(item, "fixturenames", ())


def _sort_key(item: pytest.Item) -> int:
    """nbval's cells first; then the tests that need neither the website nor nbgrader (while both are made in
    the background); then those that need the website (built right after nbval); then those that read the
    nbgrader round trip (started with the session, it finishes last)."""
    if isinstance(item, IPyNbCell):
        return 0
    if _uses(item, "nbgrader_course"):
        return 3
    return 2 if _uses(item, "built_site") else 1


@pytest.hookimpl(tryfirst=True)  # before pytest's -m selection reads the markers
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items[:] = _with_test_cells(items)
    for item in items:
        if isinstance(item, IPyNbCell):
            item.add_marker(pytest.mark.slow)
            item.add_marker(pytest.mark.nbval)
            # images are not compared (PNG already is not): the stored notebooks hold PNG, this run draws SVG
            if "image/svg+xml" not in item.parent.skip_compare:
                item.parent.skip_compare += ("image/svg+xml",)
        elif item.get_closest_marker("npm"):
            item.add_marker(pytest.mark.slow)
        elif _uses(item, "built_site") or _uses(item, "nbgrader_course") or item.get_closest_marker("book"):
            if _uses(item, "nbgrader_course"):
                item.add_marker(pytest.mark.nbgrader)
            else:
                item.add_marker(pytest.mark.book)
            item.add_marker(pytest.mark.slow)
    items.sort(key=_sort_key)  # a stable sort keeps the order within each group


# ------------------------------------------------------------------ work in the background


class _Background:
    """The nbgrader round trip and the website build, started early and waited for where they are used."""

    def __init__(self) -> None:
        self.pool = ThreadPoolExecutor(max_workers=3, thread_name_prefix="posenc-background")
        self.course: Future | None = None
        self.graded: Future | None = None  # the course once its solutions are graded too
        self.site: Future | None = None
        self.lock = threading.Lock()
        self.started: dict[str, float] = {}
        self.finished: dict[str, float] = {}

    def summary(self) -> list[str]:
        jobs = {"nbgrader round trip": self.graded or self.course, "website build": self.site}
        lines = []
        for name, job in jobs.items():
            if job is None or not job.done():
                continue
            failed = job.exception() is not None
            seconds = self.finished.get(name, time.perf_counter()) - self.started[name]
            line = f"{name}: {'failed after' if failed else 'done in'} {seconds:.0f} s"
            if name == "website build" and not failed:
                site = job.result()
                line += f" ({len(site.from_nbval)} notebooks rendered from nbval's run, {site.executed} executed by the build)"
            lines.append(line)
        return lines

    def start_course(self) -> None:
        from _nbgrader_course import course

        self.started["nbgrader round trip"] = time.perf_counter()
        self.course = self.pool.submit(course, dict(os.environ))  # the environment read here, not in the thread
        self.course.add_done_callback(lambda _: self.finished.setdefault("nbgrader round trip", time.perf_counter()))

    def start_site(self, output: pathlib.Path, cache_path: pathlib.Path) -> None:
        with self.lock:
            if self.site is None:
                self.started["website build"] = time.perf_counter()
                self.site = self.pool.submit(_build_site, output, cache_path, build_env())
                self.site.add_done_callback(lambda _: self.finished.setdefault("website build", time.perf_counter()))

    def start_grading(self) -> None:
        """Grade the solutions from nbval's run (just finished) once the releases are graded."""
        course, runs = self.course, nbval_runs_for_grading()
        if course is None or self.graded is not None:
            return
        from _nbgrader_course import grade_solutions

        def grade() -> Any:
            graded = course.result()
            grade_solutions(graded, runs)
            return graded

        self.graded = self.pool.submit(grade)
        self.graded.add_done_callback(lambda _: self.finished.update({"nbgrader round trip": time.perf_counter()}))

    def wait(self) -> None:
        """Until nothing runs in the background (results and errors are collected by the fixtures)."""
        for job in (self.course, self.graded, self.site):
            if job is not None:
                job.exception()


BACKGROUND = _Background()


def _build_site(output: pathlib.Path, cache_path: pathlib.Path, env: dict[str, str]) -> BuiltSite:
    """Put nbval's outputs into a fresh jupyter-cache at `cache_path` and build the website from it."""
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    cache = get_cache(str(cache_path))
    fresh = nbval_outputs()
    for path, notebook in fresh.items():
        cache.cache_notebook_bundle(CacheBundleIn(notebook, str(path)), check_validity=False, overwrite=True)
    command = build_command(ROOT, output, cache=cache_path)
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=1200)
    (output / "_build").mkdir(parents=True, exist_ok=True)
    (output / "_build" / "jupyter-book.log").write_text(result.stdout + result.stderr, encoding="utf-8")
    names = sorted(path.name for path in fresh if path in {p.resolve() for p in book_notebooks()})
    return BuiltSite(result=result, html=output / "_build" / "html", from_nbval=names)


def _site_output() -> pathlib.Path:
    return pathlib.Path(os.environ.get("POSENC_BOOK_OUTPUT", ROOT))


class _SessionPlugin:
    """Run-time hooks. A plugin object, not conftest functions: pytest calls a conftest's run-time hooks
    only for items in its own folder, and the notebooks are in book/."""

    def __init__(self) -> None:
        self.wants_site = False

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.wants_site = any(_uses(item, "built_site") for item in session.items)
        if any(_uses(item, "nbgrader_course") for item in session.items):
            BACKGROUND.start_course()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Iterator[None]:
        """The kernel of a notebook starts in the first cell's set-up: it draws SVG, as in the website build."""
        if not isinstance(item, IPyNbCell):
            yield
            return
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
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[Any]) -> Generator[None, Any, None]:
        outcome = yield
        report = outcome.get_result()
        if not isinstance(item, IPyNbCell) or report.when not in ("setup", "call"):
            return
        path = pathlib.Path(item.parent.path).resolve()
        run = _NBVAL_RUNS.setdefault(
            path, _Run(copy.deepcopy(item.parent.nb), sum(1 for c in item.parent.nb.cells if c.cell_type == "code"))
        )
        if (grade_id := getattr(item, "grade_id", None)) is not None:  # an nbgrader test cell (_with_test_cells)
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

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_teardown(self, item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
        yield
        # nbval is done (its last kernel is shut down): build the website, and grade the solutions from nbval's
        # run once the releases are graded, beside the tests that follow
        if isinstance(item, IPyNbCell) and not isinstance(nextitem, IPyNbCell):
            if self.wants_site:
                BACKGROUND.start_site(_site_output(), pathlib.Path(tempfile.mkdtemp(prefix="posenc-jupyter-cache-")))
            BACKGROUND.start_grading()


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if lines := BACKGROUND.summary():
        terminalreporter.write_sep("-", "in the background")
        for line in lines:
            terminalreporter.write_line(line)


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(_SessionPlugin(), "posenc-session")


@pytest.fixture(scope="session")
def built_site() -> BuiltSite:
    """The website, built once per session (in the background after nbval when nbval runs first)."""
    BACKGROUND.start_site(_site_output(), pathlib.Path(tempfile.mkdtemp(prefix="posenc-jupyter-cache-")))
    assert BACKGROUND.site is not None
    return BACKGROUND.site.result()


@pytest.fixture(scope="session")
def nbgrader_course():
    """The nbgrader round trip on every chapter (tests/_nbgrader_course.py), started when the session starts."""
    from _nbgrader_course import grade_solutions

    if BACKGROUND.graded is not None:  # graded from nbval's run, in the background (start_grading)
        return BACKGROUND.graded.result()
    if BACKGROUND.course is None:
        BACKGROUND.start_course()
    assert BACKGROUND.course is not None
    course = BACKGROUND.course.result()
    grade_solutions(course, nbval_runs_for_grading())  # this session ran no nbval: nbgrader executes them
    BACKGROUND.finished["nbgrader round trip"] = time.perf_counter()
    return course


@pytest.fixture
def one_thread():
    """Run a test on one torch thread: tiny tensors are faster that way, and far faster when other
    processes share the cores. Use with ``pytestmark = pytest.mark.usefixtures("one_thread")``."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
