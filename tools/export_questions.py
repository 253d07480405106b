"""Export a chapter's self-check questions for a learning platform (Moodle XML or GIFT).

    python tools/export_questions.py alibi                     # alibi.xml (Moodle XML), in the current folder
    python tools/export_questions.py alibi --format gift -o questions/alibi.gift
    python tools/export_questions.py --all --format gift -o exports/   # every chapter with questions

The answers are computed by posenc_lib as the export runs (posenc_lib.questions); each chapter's
questions go into a category named after the chapter. Moodle imports both formats (Question bank,
Import); GIFT is also read by other platforms.
"""

from __future__ import annotations

import argparse
import pathlib
import sys

from posenc_lib import questions

SUFFIX = {"moodle": ".xml", "gift": ".gift"}


def export(chapter: str, form: str) -> str:
    bank = questions.bank(chapter)
    return questions.to_moodle_xml(bank, chapter) if form == "moodle" else questions.to_gift(bank, chapter)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chapter", nargs="?", help=f"one of {', '.join(questions.chapters())}")
    parser.add_argument("--all", action="store_true", help="every chapter with questions (-o is then a folder)")
    parser.add_argument("--format", choices=sorted(SUFFIX), default="moodle")
    parser.add_argument(
        "-o", "--out", type=pathlib.Path, help="file (or folder with --all); default: CHAPTER.xml / .gift"
    )
    args = parser.parse_args(argv)
    if bool(args.all) == bool(args.chapter):
        parser.error("give one chapter or --all")
    if args.chapter and args.chapter not in questions.chapters():
        parser.error(f"no questions for {args.chapter!r}; chapters with questions: {', '.join(questions.chapters())}")
    chapters = questions.chapters() if args.all else [args.chapter]
    for chapter in chapters:
        name = chapter + SUFFIX[args.format]
        target = (args.out or pathlib.Path(".")) / name if args.all else args.out or pathlib.Path(name)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(export(chapter, args.format), encoding="utf-8")
        print(f"{target}: {len(questions.bank(chapter))} questions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
