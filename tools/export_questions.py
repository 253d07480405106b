"""Export self-check questions for a learning platform, as Moodle XML (default) or GIFT; Moodle imports both.

python tools/export_questions.py alibi [--format gift] [-o FILE]    # or --all [-o FOLDER]: every chapter
"""

import argparse
import pathlib
import sys

from posenc_lib import questions

WRITERS = {"moodle": (".xml", questions.to_moodle_xml), "gift": (".gift", questions.to_gift)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("chapter", nargs="?", choices=questions.chapters(), help="a chapter with questions")
    which.add_argument("--all", action="store_true", help="every chapter with questions (-o is then a folder)")
    parser.add_argument("--format", choices=sorted(WRITERS), default="moodle")
    parser.add_argument("-o", "--out", type=pathlib.Path, help="the file (the folder with --all) to write")
    args = parser.parse_args(argv)
    suffix, write = WRITERS[args.format]
    for chapter in questions.chapters() if args.all else [args.chapter]:
        name, bank = chapter + suffix, questions.bank(chapter)
        target = (args.out or pathlib.Path()) / name if args.all else args.out or pathlib.Path(name)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(write(bank, chapter), encoding="utf-8")
        print(f"{target}: {len(bank)} questions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
