"""Self-check questions (posenc_lib.questions): every answer checked against the library, the format's
refusals, the exports read back, and the student edition and nbgrader source left as they were.

The browser side (feedback on each answer, keyboard and touch) is in tests/site/test_explorables.py.
"""

from __future__ import annotations

import json
import math
import re
import xml.etree.ElementTree as ElementTree
from typing import Any

import nbformat
import pytest

import chapter_model as cm
import export_questions
from _exercise_fixture import code, solution_notebook
from posenc_lib import alibi, explore, questions
from posenc_lib.questions import Choice, Numeric, Option, Wrong

CHAPTERS = questions.chapters()


def test_there_are_questions_and_the_demonstration_chapter_has_three_to_five():
    assert "alibi" in CHAPTERS
    for chapter in CHAPTERS:
        assert 3 <= len(questions.bank(chapter)) <= 5, chapter


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_answer_is_the_one_the_library_gives(chapter):
    for question in questions.bank(chapter):
        data = question.as_json()
        if isinstance(question, Choice):
            # the option marked right is the one the library's computation picks, and only it is marked
            assert question.verify() == question.correct
            assert [o["correct"] for o in data["options"]].count(True) == 1 and data["options"][question.correct][
                "correct"
            ]
        else:
            value = question.value()
            assert math.isclose(data["answer"], value, rel_tol=1e-11, abs_tol=1e-300)
            shown = float(question.shown().replace(",", ""))
            assert abs(shown - value) <= data["tolerance"]  # typing what "Show the answer" shows is right
            for wrong in data["wrong"]:
                assert abs(wrong["value"] - value) > data["tolerance"] + wrong["tolerance"]


def test_the_alibi_answers_are_the_authors_numbers():
    # computed independently of the bank: the authors' slopes for 12 heads, the bias -m|r|, the 90 % span
    answers = {q.label: q.as_json() for q in questions.bank("alibi")}
    assert answers["q-alibi-slope-12"]["answer"] == pytest.approx(2**-0.5, rel=1e-11)
    assert answers["q-alibi-bias"]["answer"] == -10 * 2**-4
    weights = [math.exp(-0.5 * r) for r in range(2048)]
    share = [sum(weights[: r + 1]) / sum(weights) for r in range(2048)]
    assert answers["q-alibi-span"]["answer"] == next(r for r, s in enumerate(share) if s >= 0.9) == 4
    assert answers["q-alibi-sorted"]["options"][1]["correct"]  # "No: the last four ... larger"


def question_choice(correct: int) -> Choice:
    return Choice(
        label="q-test-sorted",
        prompt="Are the 12 slopes sorted?",
        options=(Option("Yes", "no"), Option("No", "yes")),
        correct=correct,
        verify=lambda: 0 if bool((alibi.alibi_slopes(12).diff() < 0).all()) else 1,
        explanation="They are not.",
    )


def test_a_choice_marked_wrong_by_hand_is_refused():
    question_choice(1).check()
    with pytest.raises(ValueError, match="is not the one posenc_lib gives"):
        question_choice(0).check()


def test_a_numeric_answer_must_be_computed_and_distinct_from_its_wrong_answers():
    typed = Numeric(label="q-test-typed", prompt="?", answer=0.7071, explanation="")
    with pytest.raises(TypeError, match="answer must be a function"):
        typed.check()
    close = Numeric(
        label="q-test-close", prompt="?", answer=lambda: 0.5, explanation="", wrong=(Wrong(lambda: 0.5002, "x"),)
    )
    with pytest.raises(ValueError, match="within the tolerance"):
        close.check()
    coarse = Numeric(label="q-test-coarse", prompt="?", answer=lambda: 1 / 3, explanation="", digits=2, relative=1e-6)
    with pytest.raises(ValueError, match="give more digits"):
        coarse.check()
    with pytest.raises(ValueError, match="label"):
        Numeric(label="Alibi 1", prompt="?", answer=lambda: 1.0, explanation="").check()


def test_show_refuses_unknown_chapters_and_labels():
    with pytest.raises(ValueError, match="chapter must be one of"):
        questions.show("nope")
    with pytest.raises(ValueError, match="unknown"):
        questions.show("alibi", "q-alibi-nope")


def test_the_placed_questions_are_portable_html_with_the_computed_answers():
    shown = questions.show("alibi", "q-alibi-span", "q-alibi-slope-12")
    html = shown._repr_html_()
    assert html == questions.show("alibi", "q-alibi-span", "q-alibi-slope-12")._repr_html_()
    params = json.loads(re.search(r'class="pe-params">(.*?)</script>', html).group(1))
    assert [q["label"] for q in params["questions"]] == ["q-alibi-span", "q-alibi-slope-12"]
    assert params["questions"][0]["answer"] == 4 and 'data-pe-kind="quiz"' in html
    assert "KINDS.quiz =" in html and "KINDS.rope =" not in html  # only the module it needs


# ------------------------------------------------------------------ exports, read back


def gift_fields(text: str) -> list[str]:
    """A GIFT answer line split at its unescaped '#', each part unescaped."""
    parts, current, escaped = [], "", False
    for char in text:
        if escaped:
            current, escaped = current + char, False
        elif char == "\\":
            escaped = True
        elif char == "#":
            parts.append(current)
            current = ""
        else:
            current += char
    return [*parts, current]


def unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def parse_gift(text: str) -> tuple[str, list[dict]]:
    """The category and the questions of a GIFT file as tools/export_questions.py writes it."""
    header = re.match(r"\$CATEGORY: (.*)\n", text)
    assert header, text[:80]
    found = []
    for block in re.findall(r"^::(.*?)::(.*?) \{\n(.*?)\n\}$", text, re.MULTILINE | re.DOTALL):
        title, prompt, body = block
        answers: list[dict[str, Any]] = []
        question: dict[str, Any] = {
            "title": unescape(title),
            "prompt": unescape(prompt),
            "answers": answers,
            "general": None,
        }
        for line in body.split("\n"):
            line = line.strip()
            if line.startswith("####"):
                question["general"] = unescape(line[4:])
            elif line.startswith("#="):  # numerical: #=value:tolerance#feedback
                number, feedback = gift_fields(line[2:])
                value, tolerance = number.split(":")
                answers.append(
                    {"fraction": 100, "value": float(value), "tolerance": float(tolerance), "feedback": feedback}
                )
            elif line.startswith("=%0%"):
                number, feedback = gift_fields(line[4:])
                value, tolerance = number.split(":")
                answers.append(
                    {"fraction": 0, "value": float(value), "tolerance": float(tolerance), "feedback": feedback}
                )
            else:
                answer, feedback = gift_fields(line[1:])
                answers.append({"fraction": 100 if line[0] == "=" else 0, "text": answer, "feedback": feedback})
        found.append(question)
    return header.group(1), found


def expected(question) -> list[dict]:
    if isinstance(question, Choice):
        return [
            {"fraction": 100 if i == question.correct else 0, "text": o.text, "feedback": o.feedback}
            for i, o in enumerate(question.options)
        ]
    data = question.as_json()
    return [
        {"fraction": 100, "value": data["answer"], "tolerance": data["tolerance"], "feedback": question.explanation}
    ] + [
        {"fraction": 0, "value": w["value"], "tolerance": w["tolerance"], "feedback": w["feedback"]}
        for w in data["wrong"]
    ]


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_gift_export_reads_back_as_the_questions(chapter):
    bank = questions.bank(chapter)
    category, found = parse_gift(questions.to_gift(bank, chapter))
    assert category == chapter and len(found) == len(bank)
    for question, read in zip(bank, found):
        assert (read["title"], read["prompt"], read["general"]) == (
            question.label,
            question.prompt,
            question.explanation,
        )
        assert read["answers"] == expected(question)


def test_gift_escapes_its_special_characters():
    tricky = Choice(
        label="q-test-escape",
        prompt="Is {a} = #1 ~ b: c \\ d?",
        options=(Option("x = {1}", "a#b"), Option("~y:", "c\\d")),
        correct=0,
        verify=lambda: 0,
        explanation="=#~{}:\\",
    )
    _, (read,) = parse_gift(questions.to_gift([tricky], "t"))
    assert read["prompt"] == tricky.prompt and read["general"] == tricky.explanation
    assert read["answers"] == expected(tricky)


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_moodle_export_reads_back_as_the_questions(chapter):
    bank = questions.bank(chapter)
    root = ElementTree.fromstring(questions.to_moodle_xml(bank, chapter))
    category, *items = root.findall("question")
    assert category.get("type") == "category" and category.findtext("category/text") == f"$course$/{chapter}"
    assert len(items) == len(bank)
    for question, item in zip(bank, items):
        assert item.get("type") == ("multichoice" if isinstance(question, Choice) else "numerical")
        assert item.findtext("name/text") == question.label and item.findtext("questiontext/text") == question.prompt
        assert item.findtext("generalfeedback/text") == question.explanation
        answers = []
        for answer in item.findall("answer"):
            read = {"fraction": int(answer.get("fraction")), "feedback": answer.findtext("feedback/text")}
            if isinstance(question, Choice):
                read["text"] = answer.findtext("text")
            else:
                read["value"], read["tolerance"] = float(answer.findtext("text")), float(answer.findtext("tolerance"))
            answers.append(read)
        assert answers == expected(question)
        if isinstance(question, Choice):
            assert item.findtext("single") == "true"


def test_the_export_tool_writes_a_chapter_and_every_chapter(tmp_path, capsys):
    assert export_questions.main(["alibi", "--format", "gift", "-o", str(tmp_path / "a.gift")]) == 0
    assert parse_gift((tmp_path / "a.gift").read_text())[0] == "alibi"
    assert export_questions.main(["--all", "-o", str(tmp_path / "all")]) == 0
    assert sorted(p.name for p in (tmp_path / "all").iterdir()) == [f"{c}.xml" for c in CHAPTERS]
    assert "5 questions" in capsys.readouterr().out
    for wrong in (["nope"], [], ["alibi", "--all"]):  # an unknown chapter; neither a chapter nor --all; both
        with pytest.raises(SystemExit):
            export_questions.main(wrong)


# ------------------------------------------------------------------ the student edition and nbgrader


def test_explorables_and_questions_leave_the_student_edition_and_nbgrader_as_they_were(tmp_path):
    def html_output(item) -> nbformat.NotebookNode:
        return nbformat.v4.new_output("display_data", data={"text/html": item._repr_html_(), "text/plain": repr(item)})

    plain = solution_notebook()
    placed = solution_notebook()
    added = [
        code("pe.explore.alibi(n_heads=12)", outputs=[html_output(explore.alibi(12))], tags=["remove-input"]),
        code('pe.questions.show("alibi")', outputs=[html_output(questions.show("alibi"))], tags=["remove-input"]),
    ]
    placed.cells[2:2] = added
    editions = {}
    for name, notebook in [("plain", plain), ("placed", placed)]:
        path = tmp_path / f"{name}.ipynb"
        nbformat.write(notebook, path)
        chapter = cm.read_chapter(path)
        assert not chapter.problems, chapter.problems
        editions[name] = (chapter, cm.student_notebook(chapter))
    (plain_chapter, plain_student), (placed_chapter, placed_student) = editions["plain"], editions["placed"]
    # the same exercises, points and test cells: the questions are not graded
    assert [(e.label, e.points, e.checkers) for e in placed_chapter.exercises] == [
        (e.label, e.points, e.checkers) for e in plain_chapter.exercises
    ]
    graded = [c for c in placed_chapter.source.cells if "nbgrader" in c.metadata]
    assert len(graded) == len([c for c in plain_chapter.source.cells if "nbgrader" in c.metadata])
    # the two cells reach the student, source and outputs unchanged; every other cell is as before
    kept = [c for c in placed_student.cells if c.source in {cell.source for cell in added}]
    assert [(c.source, c.outputs, c.metadata.get("tags")) for c in kept] == [
        (c.source, c.outputs, c.metadata.get("tags")) for c in added
    ]
    others = [c for c in placed_student.cells if c not in kept]
    assert [(c.cell_type, c.source) for c in others] == [(c.cell_type, c.source) for c in plain_student.cells]


def test_a_stem_with_underscores_labels_its_questions_with_hyphens():
    # an underscore fails the label rule, so long_context.py's labels start "q-long-context-"
    assert questions.label_prefix("long_context") == "q-long-context-"
    assert all(q.label.startswith("q-long-context-") for q in questions.bank("long_context"))
    with pytest.raises(ValueError, match="label"):
        Numeric(label="q-long_context-x", prompt="?", answer=lambda: 1.0, explanation="").check()
