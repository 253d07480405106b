"""`make test` is plain steps: each a make target that runs alone, in order within `make test`; conftest holds fixtures."""

from __future__ import annotations

import ast
import os
import re
import subprocess

import pytest

from book_files import ROOT

STEPS = ("test-lint", "test-units", "test-explorables", "test-nbval", "test-book", "test-site", "test-nbgrader")
# what each step runs (its command in `make -n`)
COMMAND = {
    "test-lint": "ruff check",
    "test-units": '-m "not (book or nbgrader or npm or scratch or retrain)" tests',
    "test-explorables": 'pytest -q --durations=5 -m "not book" tests/site/test_explorables.py',
    "test-nbval": "pytest -q --nbval --nbval-current-env -p nbval_record book",
    "test-book": "tools/book_build.py",
    "test-site": '-m "book or npm" tests/book tests/site',
    "test-nbgrader": "pytest -q -m nbgrader tests/grading",
    "test-controls": "-m scratch tests/book",
}


# what make hands the commands it runs: inside `make test` they carry IN_MAKE_TEST=1 (in the environment too)
MAKE_VARIABLES = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "IN_MAKE_TEST")


def make_n(*arguments: str) -> str:
    """What `make -n` prints, run as a fresh make, not as a child of the `make test` that may be running us."""
    env = {key: value for key, value in os.environ.items() if key not in MAKE_VARIABLES}
    return subprocess.run(
        ["make", "-n", *arguments], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    ).stdout


def dry_run(*arguments: str) -> list[str]:
    """The steps `make -n` would run, in its order (the STAMP and npm set-up left out)."""
    return [step for line in make_n(*arguments).splitlines() for step, command in COMMAND.items() if command in line]


@pytest.mark.parametrize("step", STEPS)
def test_each_step_runs_alone_and_prints_its_name_and_time(step):
    assert dry_run(step) == [step]
    out = make_n(step)
    assert f'echo "== {step}"' in out and f'echo "== {step}: $(( $(date +%s) - start )) s' in out


def test_make_test_runs_every_step_once():
    assert sorted(dry_run("test")) == sorted(STEPS)


def test_the_builds_that_must_fail_run_in_ci_after_make_test():
    assert dry_run("test-controls") == ["test-controls"]
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert ci.index("make test-controls") > ci.index("make test")


def test_within_make_test_the_steps_run_as_two_chains():
    """Each step waits for the one before it in its chain, so two steps can run at any moment and the website's
    path (nbval, its build, its checks) never waits for a slot; nbgrader also waits for the nbval runs it grades."""
    assert dry_run("IN_MAKE_TEST=1", "test-site") == ["test-nbval", "test-book", "test-site"]
    assert dry_run("IN_MAKE_TEST=1", "test-explorables") == ["test-lint", "test-units", "test-explorables"]
    assert dry_run("IN_MAKE_TEST=1", "test-nbgrader")[-2:] == ["test-explorables", "test-nbgrader"]


def step_environment(*arguments: str) -> str:
    """The value of OMP_NUM_THREADS that a recipe's shell sees, in a fresh make given ``arguments``."""
    env = {key: value for key, value in os.environ.items() if key not in (*MAKE_VARIABLES, "OMP_NUM_THREADS")}
    probe = "probe:\n\t@echo threads=$${OMP_NUM_THREADS-unset}\n"
    command = ["make", "-s", "--no-print-directory", "-f", "Makefile", "-f", "-", *arguments, "probe"]
    run = subprocess.run(command, cwd=ROOT, env=env, input=probe, capture_output=True, text=True, check=True)
    return run.stdout.strip()


def test_within_make_test_each_step_runs_torch_on_half_the_cores():
    # two steps run at once; with every core's thread in each, the threads of one spin waiting for the other's
    # cores; alone (make test-units) a step keeps torch's default
    assert step_environment("IN_MAKE_TEST=1") == f"threads={max(1, len(os.sched_getaffinity(0)) // 2)}"
    assert step_environment() == "threads=unset"


def test_conftest_holds_fixtures_only():
    """No hooks, no scheduling: every function at the top of tests/conftest.py is a pytest fixture."""
    tree = ast.parse((ROOT / "tests" / "conftest.py").read_text(encoding="utf-8"))
    functions = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    assert functions
    for function in functions:
        decorators = [ast.unparse(d) for d in function.decorator_list]
        assert any(re.match(r"pytest\.fixture\b", d) for d in decorators), function.name
        assert not function.name.startswith("pytest_"), function.name


# the steps that select tests by marker, and the folders they collect from
MARKED_STEPS = {
    "scratch": "tests/book tests/site",  # test-controls (tests/book), test-explorables (tests/site)
    "book": "tests/book tests/site",
    "npm": "tests/book tests/site",
    "nbgrader": "tests/grading",
    "retrain": "tests/experiments",
}


def test_every_marked_test_lies_where_its_step_collects():
    """A test marked for a step outside the folders that step collects would never run."""
    outside = []
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        text = path.read_text(encoding="utf-8")
        folder = path.parent.relative_to(ROOT).as_posix()
        for marker, folders in MARKED_STEPS.items():
            if re.search(rf"pytest\.mark\.{marker}\b", text) and folder not in folders.split():
                outside.append(f"{path.relative_to(ROOT)} (marker {marker}, collected from {folders})")
    assert not outside, outside
