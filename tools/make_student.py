"""Write the student edition (every solution replaced by nbgrader's stub) and, with --nbgrader, an nbgrader course.

    python tools/make_student.py [--nbgrader nbgrader_course]   # book/*.ipynb -> student/, student.zip

The edition holds each chapter's student notebook (tools/chapter_model.py) with book/'s data files, the library, its
pyproject.toml and a README (student_readme.md.j2); the course, DIR/source/<chapter>/ with the nbgrader source notebook.
"""

import argparse
import ast
import importlib.metadata
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import jinja2
import nbformat
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from book_files import ROOT, toc_chapters
from chapter_model import Chapter, NotebookError, parse_cell, read_chapter, student_notebook

NBGRADER_CONFIG = """c = get_config()  # noqa: F821  (written by tools/make_student.py)
c.ClearOutput.enabled = False  # the release keeps the teaching cells' outputs, like the student edition
c.Execute.timeout = 300  # a class graded side by side can make a cell many times slower than nbgrader's 30 s
"""
WEBSITE_FILES = shutil.ignore_patterns(
    "*.ipynb", "*.md", "*.bib", "_build", "_static", ".ipynb_checkpoints", "__pycache__"
)


def extra_packages(chapters: list[Chapter]) -> dict[str, list[str]]:
    """``{pip name: [notebooks]}``: the third-party modules the notebooks import that posenc_lib does not depend on."""
    needs = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    provided = {canonicalize_name(Requirement(d).name) for d in needs} | {"posenc-lib", "ipython", "ipykernel"}
    distributions = importlib.metadata.packages_distributions()  # {"yaml": ["PyYAML"], ...}
    extras: dict[str, list[str]] = {}
    for chapter in chapters:
        trees = [parse_cell(c.source) for c in chapter.source.cells if c.cell_type == "code"]
        nodes = [node for tree in trees if tree for node in ast.walk(tree)]
        modules = {a.name for n in nodes if isinstance(n, ast.Import) for a in n.names}
        modules |= {n.module for n in nodes if isinstance(n, ast.ImportFrom) and n.module and not n.level}
        for module in sorted({m.split(".")[0] for m in modules} - set(sys.stdlib_module_names)):
            if (name := canonicalize_name(distributions.get(module, [module])[0])) not in provided:
                extras.setdefault(name, []).append(chapter.path.name)
    return dict(sorted(extras.items()))


def make_student_edition(
    root: Path, out: Path, *, zip_path: Path | None = None, nbgrader: Path | None = None
) -> list[Chapter]:
    """Write the student edition of ``root``'s chapters into ``out`` (replaced whole), the zip and the nbgrader course."""
    if out.exists() and not (out / "README.md").exists() and any(out.iterdir()):
        raise NotebookError(f"refusing to replace {out}: it exists and is not a student edition (no README.md)")
    shutil.rmtree(out, ignore_errors=True)
    chapters = [read_chapter(path, number) for path, number in toc_chapters(root)]
    folders = [(out / "book", student_notebook(c), c.path.name) for c in chapters]
    if nbgrader is not None:  # one assignment per chapter
        folders += [(nbgrader / "source" / c.path.stem, c.source, c.path.name) for c in chapters]
        nbgrader.mkdir(parents=True, exist_ok=True)
        (nbgrader / "nbgrader_config.py").write_text(NBGRADER_CONFIG, encoding="utf-8")
    for folder, notebook, name in folders:  # with the files the notebooks read (book/data/), not the website's
        shutil.copytree(root / "book", folder, ignore=WEBSITE_FILES, dirs_exist_ok=True)
        nbformat.write(notebook, folder / name)
    shutil.copytree(ROOT / "posenc_lib", out / "posenc_lib", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy2(ROOT / "pyproject.toml", out / "pyproject.toml")  # students install the library from it
    commit = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    template = jinja2.Template((ROOT / "tools" / "student_readme.md.j2").read_text(encoding="utf-8"))
    readme = template.render(
        chapters=chapters, commit=commit.stdout.strip() or "unknown", extras=extra_packages(chapters)
    )
    (out / "README.md").write_text(readme + "\n", encoding="utf-8")
    if zip_path is not None:
        with zipfile.ZipFile(zip_path, "w") as archive:  # reproducible: sorted entries, fixed times and modes
            for file in sorted(p for p in out.rglob("*") if p.is_file()):
                info = zipfile.ZipInfo(f"{out.name}/{file.relative_to(out).as_posix()}", (1980, 1, 1, 0, 0, 0))
                info.external_attr = 0o644 << 16
                archive.writestr(info, file.read_bytes(), compress_type=zipfile.ZIP_DEFLATED)
    return chapters


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nbgrader", type=Path, help="also write an nbgrader course into this folder")
    args = parser.parse_args(argv)
    try:
        chapters = make_student_edition(ROOT, ROOT / "student", zip_path=ROOT / "student.zip", nbgrader=args.nbgrader)
    except NotebookError as error:
        sys.exit(f"make_student: {error}")
    for problem in (problem for chapter in chapters for problem in chapter.problems):
        print(f"warning: {problem}")
    exercises = f"{sum(len(c.exercises) for c in chapters)} exercises in {len(chapters)} chapters"
    print(f"wrote student/, student.zip{f' and {args.nbgrader}' if args.nbgrader else ''}: {exercises}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
