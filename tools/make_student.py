"""Generate the student edition of the course (solutions replaced by stubs) and an nbgrader course.

Usage::

    python tools/make_student.py                    # book/*.ipynb -> student/ and student.zip
    python tools/make_student.py --out DIR --zip FILE.zip   (or --no-zip)
    python tools/make_student.py --nbgrader DIR     # also DIR/source/<chapter>/<chapter>.ipynb + nbgrader_config.py

Each chapter is read by tools/chapter_model.py; the student edition is its :func:`student_notebook` (what
``nbgrader generate_assignment`` releases, minus the tests), the nbgrader course its source notebook. The
edition also gets the library, ``pyproject.toml``, the data files and a README (student_readme.md.j2).
"""

from __future__ import annotations

import argparse
import ast
import importlib.metadata
import pathlib
import shutil
import subprocess
import sys
import tomllib
import zipfile

import jinja2
import nbformat
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from book_files import ROOT, toc_chapters
from chapter_model import Chapter, NotebookError, parse_cell, read_chapter, student_notebook

NBGRADER_CONFIG = """c = get_config()  # noqa: F821  (written by tools/make_student.py)
# the release keeps the outputs of the teaching cells, like the student edition (the source notebooks
# hold no output that a solution computed)
c.ClearOutput.enabled = False
# each cell runs in seconds on a quiet machine; a busy one (a class graded side by side) can be many times
# slower, and nbgrader's default of 30 s per cell would then fail a correct notebook
c.Execute.timeout = 300
"""

WEBSITE_FILES = shutil.ignore_patterns(
    "*.ipynb", "*.md", "*.bib", "_build", "_static", ".ipynb_checkpoints", "__pycache__"
)


def extra_packages(chapters: list[Chapter], pyproject: pathlib.Path) -> dict[str, list[str]]:
    """``{pip name: [notebooks]}``: third-party modules the notebooks import that posenc_lib does not depend on."""
    needs = (
        tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["dependencies"] if pyproject.exists() else []
    )
    provided = {canonicalize_name(Requirement(d).name) for d in needs} | {"posenc-lib", "ipython", "ipykernel"}
    distributions = importlib.metadata.packages_distributions()  # {"yaml": ["PyYAML"], ...}
    extras: dict[str, list[str]] = {}
    for chapter in chapters:
        trees = [parse_cell(c.source) or ast.Module([], []) for c in chapter.source.cells if c.cell_type == "code"]
        nodes = [n for tree in trees for n in ast.walk(tree)]
        modules = {a.name for n in nodes if isinstance(n, ast.Import) for a in n.names}
        modules |= {n.module for n in nodes if isinstance(n, ast.ImportFrom) and n.module and not n.level}
        for module in sorted({m.split(".")[0] for m in modules} - set(sys.stdlib_module_names)):
            if (name := canonicalize_name(distributions.get(module, [module])[0])) not in provided:
                extras.setdefault(name, []).append(chapter.path.name)
    return extras


def make_student_edition(
    book: pathlib.Path = ROOT / "book",
    out: pathlib.Path = ROOT / "student",
    *,
    root: pathlib.Path = ROOT,
    zip_path: pathlib.Path | None = ROOT / "student.zip",
    nbgrader: pathlib.Path | None = None,
    package_root: pathlib.Path = ROOT,
) -> list[Chapter]:
    """Write the student edition of ``root``'s chapters into ``out`` (replaced whole), optionally an nbgrader course."""
    if out.exists() and not (out / "README.md").exists() and any(out.iterdir()):
        raise NotebookError(f"refusing to replace {out}: it exists and is not a student edition (no README.md)")
    shutil.rmtree(out, ignore_errors=True)
    chapters = [
        read_chapter(path, number) for path, number in toc_chapters(root) if path.parent.resolve() == book.resolve()
    ]
    folders = [(out / "book", student_notebook(c), c.path.name) for c in chapters]
    if nbgrader is not None:  # one assignment per chapter
        folders += [(nbgrader / "source" / c.path.stem, c.source, c.path.name) for c in chapters]
        nbgrader.mkdir(parents=True, exist_ok=True)
        (nbgrader / "nbgrader_config.py").write_text(NBGRADER_CONFIG, encoding="utf-8")
    for folder, notebook, name in folders:  # with the files the notebooks may read (book/data/), not the website's
        shutil.copytree(book, folder, ignore=WEBSITE_FILES, dirs_exist_ok=True)
        nbformat.write(notebook, folder / name)
    shutil.copytree(
        package_root / "posenc_lib", out / "posenc_lib", ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
    )
    shutil.copy2(package_root / "pyproject.toml", out / "pyproject.toml")  # students install the library from it
    commit = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    template = jinja2.Template((pathlib.Path(__file__).parent / "student_readme.md.j2").read_text(encoding="utf-8"))
    extras = dict(sorted(extra_packages(chapters, package_root / "pyproject.toml").items()))
    readme = template.render(chapters=chapters, commit=commit.stdout.strip() or "unknown", extras=extras)
    (out / "README.md").write_text(readme + "\n", encoding="utf-8")
    if zip_path is not None:  # reproducible: sorted entries, fixed timestamps
        with zipfile.ZipFile(zip_path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for file in sorted(p for p in out.rglob("*") if p.is_file()):
                info = zipfile.ZipInfo(
                    f"{out.name}/{file.relative_to(out).as_posix()}", date_time=(1980, 1, 1, 0, 0, 0)
                )
                info.external_attr, info.compress_type = 0o644 << 16, zipfile.ZIP_DEFLATED
                archive.writestr(info, file.read_bytes())
    return chapters


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=pathlib.Path, default=ROOT / "student", help="output folder, replaced whole")
    parser.add_argument("--zip", type=pathlib.Path, default=ROOT / "student.zip", help="zip to write")
    parser.add_argument("--no-zip", action="store_true", help="do not write a zip")
    parser.add_argument("--nbgrader", type=pathlib.Path, help="also write an nbgrader course into this folder")
    args = parser.parse_args(argv)
    try:
        chapters = make_student_edition(
            out=args.out, zip_path=None if args.no_zip else args.zip, nbgrader=args.nbgrader
        )
    except NotebookError as error:
        sys.exit(f"make_student: {error}")
    for chapter in chapters:
        print(
            f"{chapter.path.name}: {len(chapter.exercises)} exercise(s)",
            *(f"\n  warning: {p}" for p in chapter.problems),
        )
    print("wrote", args.out, *([] if args.no_zip else [args.zip]), *([args.nbgrader] if args.nbgrader else []))
    return 0


if __name__ == "__main__":
    sys.exit(main())
