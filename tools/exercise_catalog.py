"""Write the instructor guide's exercise tables (book/data/exercises.md, layout exercise_tables.md.j2).

    python tools/exercise_catalog.py [--problems]   (--problems: list the breaches of the conventions instead)

Times are the guide's rules of thumb: 150 words of prose and 10 lines of code a minute to read and run; 20
minutes per coding and 10 per written exercise unless its cell's metadata says ``{"exercise": {"minutes": N}}``.
"""

import argparse
import itertools
import math
import pathlib
import re
import sys

import jinja2
from markdown_it.tree import SyntaxTreeNode

import chapter_model as cm
from book_files import ROOT, toc_chapters

TABLES = ROOT / "book" / "data" / "exercises.md"
DEFAULT_MINUTES = {"coding": 20, "written": 10}


def chapters(root: pathlib.Path = ROOT) -> list[cm.Chapter]:
    return [cm.read_chapter(path, number) for path, number in toc_chapters(root)]


def text(block: SyntaxTreeNode) -> str:
    """The inline text of a paragraph or heading, on one line ("" for other blocks)."""
    inline = block.children[0] if block.children else None
    return inline.content.replace("\n", " ") if inline is not None and inline.type == "inline" else ""


def summary(chapter: cm.Chapter) -> dict:
    """A chapter's row and section in the guide: title, objectives and prerequisites from its opening, times, points."""
    opening = itertools.takewhile(lambda c: c.cell_type == "markdown", chapter.source.cells)
    blocks = SyntaxTreeNode(cm.MARKDOWN.parse("\n\n".join(c.source for c in opening))).children
    titles = [text(b) for b in blocks if b.type == "heading" and b.tag == "h1"]
    objectives: list[str] = []  # the first list after a paragraph naming them
    for block, after in zip(blocks, blocks[1:]):
        if not objectives and re.search("learning objectives", text(block), re.I) and after.type == "bullet_list":
            objectives = [text(item.children[0]) for item in after.children]
    prerequisites = next((text(b) for b in blocks if re.match(r"\**prerequisites", text(b), re.I)), "")
    student = cm.student_notebook(chapter).cells
    words = sum(len(re.findall(r"[A-Za-z][\w'-]*", c.source)) for c in student if c.cell_type == "markdown")
    lines = [line.strip() for c in student if c.cell_type == "code" for line in c.source.split("\n")]
    code = sum(bool(line) and not line.startswith("#") for line in lines)
    exercises, number = chapter.exercises, chapter.number
    return {
        "title": titles[0] if titles else chapter.path.stem,
        "objectives": objectives,
        "prerequisites": re.sub(r"^\**prerequisites\.?\**:?\.?\**\s*", "", prerequisites, flags=re.I),
        "stem": chapter.path.stem,
        "number": number,
        "label": f"{number}. " if number else "",
        "exercises": exercises,
        "count": len(exercises),
        "reading": max(5, 5 * math.ceil((words / 150 + code / 10) / 5)),
        "work": sum(e.minutes or DEFAULT_MINUTES[e.kind] for e in exercises),
        "coding": sum(e.kind == "coding" for e in exercises),
        "written": sum(e.kind == "written" for e in exercises),
        "auto": sum(e.points[0] for e in exercises),
        "manual": sum(e.points[1] for e in exercises),
    }


def render(chapter_list: list[cm.Chapter]) -> str:
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(pathlib.Path(__file__).parent), keep_trailing_newline=True
    )
    environment.filters |= {
        "cell": lambda text: text.replace("|", "\\|"),
        "code": lambda name: f"`{name}`",
        "points": lambda p: " + ".join(f"{n} {kind}" for n, kind in zip(p, ("auto", "manual")) if n) or "0",
    }
    summaries = [summary(c) for c in chapter_list]
    reading, work = sum(c["reading"] for c in summaries), sum(c["work"] for c in summaries)
    template = environment.get_template("exercise_tables.md.j2")
    return template.render(chapters=summaries, default_minutes=DEFAULT_MINUTES, reading=reading, work=work)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", action="store_true", help="list breaches of the exercise conventions")
    args, chapter_list = parser.parse_args(argv), chapters()
    if args.problems:
        print("\n".join(problem for chapter in chapter_list for problem in chapter.problems) or "no problems")
    else:
        TABLES.write_text(render(chapter_list), encoding="utf-8")
        print(f"wrote {TABLES}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
