"""Self-check questions: multiple choice and numeric, answered on the page with feedback, no kernel.

A chapter's questions live in ``posenc_lib/questions/<chapter stem without number>.py`` (as the
exercise checkers do: ``alibi.py`` for ``06_alibi.ipynb``), in a function ``questions()`` that
builds them when the notebook runs. One line places them (tagged ``remove-input`` on the site)::

    pe.questions.show("alibi")                      # all of the chapter's questions
    pe.questions.show("alibi", "q-alibi-span")      # some of them, by label, e.g. at a section's end

The answers are computed, never typed: a :class:`Numeric` takes its answer (and each common wrong
answer) as a function that calls posenc_lib; a :class:`Choice` says which option is right and gives
a function that works out, with posenc_lib, which one is (:meth:`Choice.check` compares them, and
:func:`show` refuses a question whose two disagree, so the notebook run fails). The page gets the
numbers from that run, as JSON, and checks a reader's answers in the browser
(``posenc_lib/explore/static/quiz.js``). :func:`to_gift` and :func:`to_moodle_xml` export a chapter's
questions for a learning platform (``python tools/export_questions.py alibi --format moodle``).
Question text is plain text with Unicode symbols (θ, α, m_h): KaTeX does not reach into outputs.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import pkgutil
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable, Sequence
from typing import Any

from ..explore import Explorable

LABEL_PREFIX = "q-"


@dataclasses.dataclass(frozen=True)
class Option:
    """One answer of a multiple-choice question, and what the reader is told on picking it."""

    text: str
    feedback: str


@dataclasses.dataclass(frozen=True)
class Choice:
    """A multiple-choice question with one right option.

    ``correct`` is the index of the option the author marks right; ``verify`` computes, with
    posenc_lib, the index of the option that is right. :meth:`check` fails when they differ.
    """

    label: str
    prompt: str
    options: tuple[Option, ...]
    correct: int
    verify: Callable[[], int]
    explanation: str

    def check(self) -> None:
        _check_label(self.label)
        if len(self.options) < 2:
            raise ValueError(f"{self.label}: a choice needs at least two options, got {len(self.options)}")
        if not 0 <= self.correct < len(self.options):
            raise ValueError(
                f"{self.label}: correct must index one of the {len(self.options)} options, got {self.correct}"
            )
        computed = self.verify()
        if computed != self.correct:
            raise ValueError(
                f"{self.label}: the option marked right ({self.correct}: {self.options[self.correct].text!r}) is not "
                f"the one posenc_lib gives ({computed}: {self.options[computed].text!r})"
            )

    def as_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "type": "choice",
            "prompt": self.prompt,
            "explanation": self.explanation,
            "options": [
                {"text": o.text, "feedback": o.feedback, "correct": i == self.correct}
                for i, o in enumerate(self.options)
            ],
        }


@dataclasses.dataclass(frozen=True)
class Wrong:
    """A common wrong answer of a numeric question, computed (``value()``), and why it is wrong."""

    value: Callable[[], float]
    feedback: str


@dataclasses.dataclass(frozen=True)
class Numeric:
    """A question whose answer is a number, computed by ``answer()`` with posenc_lib when the notebook runs.

    A reader's number within ``tolerance`` of it (absolute, or ``relative`` × |answer|, whichever
    is larger) is right; one within the tolerance of a :class:`Wrong` value gets that feedback.
    The answer is shown with ``digits`` significant digits (so typing what is shown is right).
    """

    label: str
    prompt: str
    answer: Callable[[], float]
    explanation: str
    tolerance: float = 0.0
    relative: float = 1e-3
    digits: int = 4
    unit: str = ""
    hint: str = ""
    wrong: tuple[Wrong, ...] = ()

    def value(self) -> float:
        if not callable(self.answer):
            raise TypeError(
                f"{self.label}: answer must be a function that computes it with posenc_lib, got {self.answer!r}"
            )
        value = float(self.answer())
        if not math.isfinite(value):
            raise ValueError(f"{self.label}: the computed answer is {value}")
        return value

    def slack(self, value: float) -> float:
        return max(self.tolerance, self.relative * abs(value))

    def shown(self) -> str:
        value = self.value()
        return f"{value:,.0f}" if value == round(value) and abs(value) < 1e15 else f"{value:.{self.digits}g}"

    def check(self) -> None:
        _check_label(self.label)
        value = self.value()
        shown = float(self.shown().replace(",", ""))
        if abs(shown - value) > self.slack(value):
            raise ValueError(f"{self.label}: the answer shown, {shown}, is outside the tolerance; give more digits")
        for wrong in self.wrong:
            other = float(wrong.value())
            if abs(other - value) <= self.slack(value) + self.slack(other):
                raise ValueError(
                    f"{self.label}: the wrong answer {other} is within the tolerance of the answer {value}"
                )

    def as_json(self) -> dict[str, Any]:
        value = self.value()
        return {
            "label": self.label,
            "type": "numeric",
            "prompt": self.prompt,
            "explanation": self.explanation,
            "answer": _stable(value),
            "answer_text": self.shown(),
            "tolerance": _stable(self.slack(value)),
            "unit": self.unit,
            "hint": self.hint,
            "wrong": [
                {"value": _stable(v := float(w.value())), "tolerance": _stable(self.slack(v)), "feedback": w.feedback}
                for w in self.wrong
            ],
        }


Question = Choice | Numeric


def _check_label(label: str) -> None:
    if not label.startswith(LABEL_PREFIX) or not label.replace("-", "").isalnum() or label != label.lower():
        raise ValueError(
            f"a question label must look like 'q-<chapter>-<name>' (lower case, digits, hyphens), got {label!r}"
        )


def _stable(value: float) -> float:
    """The number to 12 significant digits: the same on every machine (a last bit of rounding is not)."""
    return float(f"{value:.12g}")


def label_prefix(chapter: str) -> str:
    """The start of a chapter's labels: ``q-`` and the module name with hyphens (``long_context``: ``q-long-context-``)."""
    return f"{LABEL_PREFIX}{chapter.replace('_', '-')}-"


def chapters() -> list[str]:
    """The chapters that have questions (modules of this package)."""
    return sorted(module.name for module in pkgutil.iter_modules(__path__) if not module.name.startswith("_"))


def bank(chapter: str) -> list[Question]:
    """All of a chapter's questions, each checked (:meth:`Choice.check`, :meth:`Numeric.check`)."""
    if chapter not in chapters():
        raise ValueError(f"chapter must be one of the chapters with questions {chapters()}, got {chapter!r}")
    questions = importlib.import_module(f"{__name__}.{chapter}").questions()
    labels = [q.label for q in questions]
    if len(set(labels)) != len(labels):
        raise ValueError(f"{chapter}: question labels must be unique, got {labels}")
    prefix = label_prefix(chapter)
    for question in questions:
        if not question.label.startswith(prefix):
            raise ValueError(f"{chapter}: labels must start with {prefix!r}, got {question.label!r}")
        question.check()
    return questions


def select(chapter: str, labels: Sequence[str] = ()) -> list[Question]:
    questions = bank(chapter)
    if not labels:
        return questions
    known = {q.label: q for q in questions}
    missing = [label for label in labels if label not in known]
    if missing:
        raise ValueError(f"labels must name questions of {chapter!r} ({sorted(known)}), got unknown {missing}")
    return [known[label] for label in labels]


def show(chapter: str, *labels: str, title: str = "Check yourself") -> Explorable:
    """The chapter's questions (or those labelled), as HTML that checks answers in the browser."""
    questions = select(chapter, labels)
    params = {"title": title, "questions": [q.as_json() for q in questions]}
    return Explorable("quiz", params, f"{len(questions)} self-check questions ({chapter})", css_class="pe-quiz")


# ------------------------------------------------------------------ export for learning platforms


def _gift_escape(text: str) -> str:
    for special in "\\~=#{}:":
        text = text.replace(special, "\\" + special)
    return text


def _number(value: float) -> str:
    return repr(_stable(value))


def to_gift(questions: Sequence[Question], category: str = "") -> str:
    """The questions in Moodle's GIFT format (multiple choice, and numerical with its tolerance)."""
    lines = [f"$CATEGORY: {category}", ""] if category else []
    for q in questions:
        title, prompt = _gift_escape(q.label), _gift_escape(q.prompt)
        if isinstance(q, Choice):
            answers = [
                f"{'=' if i == q.correct else '~'}{_gift_escape(o.text)}#{_gift_escape(o.feedback)}"
                for i, o in enumerate(q.options)
            ]
        else:
            value = q.value()
            answers = [f"#={_number(value)}:{_number(q.slack(value))}#{_gift_escape(q.explanation)}"]
            answers += [
                f"=%0%{_number(v := float(w.value()))}:{_number(q.slack(v))}#{_gift_escape(w.feedback)}"
                for w in q.wrong
            ]
        lines += [
            f"::{title}::{prompt} {{",
            *(f"\t{a}" for a in answers),
            f"\t####{_gift_escape(q.explanation)}",
            "}",
            "",
        ]
    return "\n".join(lines)


def to_moodle_xml(questions: Sequence[Question], category: str = "") -> str:
    """The questions as Moodle XML (``multichoice`` and ``numerical``), built with ElementTree."""
    quiz = ElementTree.Element("quiz")

    def text(parent: ElementTree.Element, tag: str, value: str, **attributes: str) -> ElementTree.Element:
        element = ElementTree.SubElement(parent, tag, attributes)
        ElementTree.SubElement(element, "text").text = value
        return element

    if category:
        text(ElementTree.SubElement(quiz, "question", type="category"), "category", f"$course$/{category}")
    for q in questions:
        kind = "multichoice" if isinstance(q, Choice) else "numerical"
        question = ElementTree.SubElement(quiz, "question", type=kind)
        text(question, "name", q.label)
        text(question, "questiontext", q.prompt, format="plain_text")
        text(question, "generalfeedback", q.explanation, format="plain_text")
        ElementTree.SubElement(question, "defaultgrade").text = "1"
        if isinstance(q, Choice):
            ElementTree.SubElement(question, "single").text = "true"
            ElementTree.SubElement(question, "shuffleanswers").text = "true"
            ElementTree.SubElement(question, "answernumbering").text = "abc"
            for i, option in enumerate(q.options):
                answer = text(
                    question, "answer", option.text, fraction="100" if i == q.correct else "0", format="plain_text"
                )
                text(answer, "feedback", option.feedback, format="plain_text")
            continue
        value = q.value()
        for number, fraction, feedback in [(value, "100", q.explanation)] + [
            (float(w.value()), "0", w.feedback) for w in q.wrong
        ]:
            answer = text(question, "answer", _number(number), fraction=fraction)
            ElementTree.SubElement(answer, "tolerance").text = _number(q.slack(number))
            text(answer, "feedback", feedback, format="plain_text")
        if q.unit:
            units = ElementTree.SubElement(question, "units")
            unit = ElementTree.SubElement(units, "unit")
            ElementTree.SubElement(unit, "multiplier").text = "1"
            ElementTree.SubElement(unit, "unit_name").text = q.unit
    ElementTree.indent(quiz)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ElementTree.tostring(quiz, encoding="unicode") + "\n"
