"""The Binder environment (binder/) and the launch buttons that open the notebooks in Binder and Colab."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib

import nbformat
import pytest
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name as canonical

from _helpers import pins, requirement_lines
from book_files import ROOT, book_config, book_notebooks

BINDER = ROOT / "binder"
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
NOTEBOOKS = book_notebooks()


def public(version: str) -> str:
    return version.split("+")[0]  # 2.13.0+cpu -> 2.13.0


def test_every_binder_line_is_a_pin_the_cpu_index_or_the_course_library():
    lines = requirement_lines(BINDER / "requirements.txt")
    others = [line for line in lines if line not in (f"--extra-index-url {CPU_INDEX}", "-e .")]
    assert len(pins(BINDER / "requirements.txt")) == len(others), f"a line that is not an exact pin: {others}"


def test_binder_versions_agree_with_the_project_requirements():
    project = {**pins(ROOT / "requirements-test.txt"), **pins(ROOT / "requirements.txt")}
    binder = pins(BINDER / "requirements.txt")
    assert binder, "binder/requirements.txt pins nothing"
    disagree = {
        name: (version, project.get(name)) for name, version in binder.items() if public(version) != project.get(name)
    }
    assert not disagree, f"binder pin vs requirements*.txt pin: {disagree}"


def test_binder_gets_the_cpu_build_of_torch():
    lines = requirement_lines(BINDER / "requirements.txt")
    assert pins(BINDER / "requirements.txt")["torch"].endswith("+cpu"), "a bare torch pin lets pip take the CUDA build"
    assert f"--extra-index-url {CPU_INDEX}" in lines


def test_binder_installs_posenc_lib_from_the_repository():
    assert "-e ." in requirement_lines(BINDER / "requirements.txt")
    project = (ROOT / "pyproject.toml").read_text()
    assert re.search(r'^name = "posenc_lib"$', project, re.MULTILINE)


def test_binder_python_can_run_the_course():
    """Binder's Python (runtime.txt) is one that pyproject.toml allows and that every package Binder installs
    supports (each one's Requires-Python, read from the same version installed here). The Python running
    the tests may be another one."""
    runtime = (BINDER / "runtime.txt").read_text().strip()
    match = re.fullmatch(r"python-(\d+\.\d+)", runtime)
    assert match, f"runtime.txt must name a Python as python-X.Y, got {runtime!r}"
    python = match[1]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert SpecifierSet(project["requires-python"]).contains(python), (python, project["requires-python"])
    for name, version in pins(BINDER / "requirements.txt").items():
        distribution = importlib.metadata.distribution(name)
        assert public(distribution.version) == public(version), (
            f"{name}: {distribution.version} installed, {version} pinned"
        )
        requires = distribution.metadata.get("Requires-Python")
        assert requires is None or SpecifierSet(requires).contains(python), f"{name} {version} needs Python {requires}"


def top_level_imports(source: str) -> set[str]:
    from IPython.core.inputtransformer2 import TransformerManager

    tree = ast.parse(TransformerManager().transform_cell(source))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_binder_has_every_package_the_notebooks_and_the_library_import():
    modules = set()
    for path in NOTEBOOKS:
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code":
                modules |= top_level_imports(cell.source)
    for path in (ROOT / "posenc_lib").rglob("*.py"):
        modules |= top_level_imports(path.read_text())
    assert {"torch", "posenc_lib"} <= modules  # the scan sees imports at all
    distributions = importlib.metadata.packages_distributions()
    needed = {
        canonical(distributions[module][0])
        for module in modules - set(sys.stdlib_module_names) - {"posenc_lib", "__future__"}
        if module in distributions
    }
    unknown = {
        m for m in modules - set(sys.stdlib_module_names) - {"posenc_lib", "__future__"} if m not in distributions
    }
    assert not unknown, f"imported but not installed here: {unknown}"
    missing = needed - set(pins(BINDER / "requirements.txt"))
    assert not missing, f"the notebooks import these, binder/requirements.txt lacks them: {sorted(missing)}"


# ------------------------------------------------------------------ launch buttons on the website


def launch_links(config: dict, notebook: str) -> dict[str, str]:
    """The Binder and Colab links a notebook page must offer, from the one repository setting."""
    url = config["repository"]["url"].rstrip("/")
    org, repo = url.split("github.com/")[1].split("/")[:2]
    branch = config["repository"].get("branch", "main")
    launch = config["launch_buttons"]
    return {
        "Binder": f"{launch['binderhub_url'].rstrip('/')}/v2/gh/{org}/{repo}/{branch}?urlpath=lab/tree/{notebook}",
        "Colab": f"{launch['colab_url'].rstrip('/')}/github/{org}/{repo}/blob/{branch}/{notebook}",
    }


@pytest.mark.book
def test_every_notebook_page_has_binder_and_colab_buttons(built_site):
    assert built_site.ok, built_site.log_tail()
    config = book_config()
    assert config["launch_buttons"]["notebook_interface"] == "jupyterlab"
    pages = sorted(p for p in (built_site.html / "_sources" / "book").glob("*.ipynb"))
    assert pages, "no notebook pages were built"
    for source in pages:
        notebook = f"book/{source.name}"
        html = (built_site.html / notebook).with_suffix(".html").read_text()
        for name, link in launch_links(config, notebook).items():
            assert f'href="{link}"' in html, f"{notebook}: no {name} button linking to {link}"
