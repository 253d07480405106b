"""Every package the code outside the library imports is pinned where its users install it.

The notebooks and the library: requirements.txt (and binder/, see tests/book/test_binder.py). The tests and
tools/: requirements-test.txt or requirements.txt. bench/: those or requirements-bench.txt. A package
that is only pulled in by another one (pinned in constraints.txt) is not enough: an upgrade of that
other package could drop it.
"""

from __future__ import annotations

import ast
import importlib.metadata
import pathlib
import sys

import pytest
from packaging.utils import canonicalize_name as canonical

from _helpers import pins
from book_files import ROOT

LOCAL = {"posenc_lib", "__future__"}
FOLDERS = {
    "tests": ["requirements.txt", "requirements-test.txt"],
    "tools": ["requirements.txt", "requirements-test.txt"],
    "experiments": ["requirements.txt", "requirements-test.txt"],
    "bench": ["requirements.txt", "requirements-test.txt", "requirements-bench.txt"],
}


def imported_modules(folder: pathlib.Path) -> set[str]:
    """Top-level modules that the Python files of ``folder`` import, less the standard library and local ones."""
    local = LOCAL | {path.stem for name in FOLDERS for path in (ROOT / name).glob("*.py")}
    found = set()
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return found - set(sys.stdlib_module_names) - local


def unpinned(folder: pathlib.Path, requirement_files: list[pathlib.Path]) -> dict[str, list[str]]:
    """{module: its distributions} for each module that ``folder`` imports whose distribution no file pins."""
    pinned = {name for file in requirement_files for name in pins(file)}
    distributions = importlib.metadata.packages_distributions()
    missing = {}
    for module in sorted(imported_modules(folder)):
        names: list[str] = [canonical(d) for d in distributions.get(module, [module])]
        if not pinned & set(names):
            missing[module] = names
    return missing


@pytest.mark.parametrize("folder", sorted(FOLDERS))
def test_every_imported_package_is_pinned(folder):
    assert imported_modules(ROOT / folder), f"no imports found in {folder}/: the scan is broken"
    assert unpinned(ROOT / folder, [ROOT / file for file in FOLDERS[folder]]) == {}


def test_the_check_finds_an_imported_package_that_is_not_pinned(tmp_path):
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "uses_them.py").write_text("import json\nimport yaml\nfrom jinja2 import Template\n")
    (tmp_path / "requirements.txt").write_text("Jinja2==3.1.6\n")
    assert imported_modules(tmp_path / "code") == {"yaml", "jinja2"}
    assert unpinned(tmp_path / "code", [tmp_path / "requirements.txt"]) == {"yaml": ["pyyaml"]}
