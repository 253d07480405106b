"""posenc_lib.exercises._core: the verdicts every checker is built on."""

from __future__ import annotations

import pytest
import torch

from posenc_lib.exercises import Case, Diagnosis, check_function

CASES = [
    Case("x=[1, 2]", (torch.tensor([1.0, 2.0]),), expected=torch.tensor([2.0, 4.0])),
    Case("x=[3]", (torch.tensor([3.0]),), expected=torch.tensor([6.0])),
]


def double(x):
    return 2 * x


def test_a_right_answer_passes_and_is_truthy(capsys):
    result = check_function("Double", double, CASES, hint="multiply by two")
    assert result and result.passed
    assert "PASS Double: correct on all 2 test inputs." in capsys.readouterr().out


def test_the_stub_is_reported_as_not_implemented(capsys):
    def stub(x):
        raise NotImplementedError()

    result = check_function("Double", stub, CASES, hint="multiply by two")
    assert not result
    assert "not implemented yet" in capsys.readouterr().out


def test_a_wrong_answer_names_the_input_and_the_specific_hint(capsys):
    result = check_function(
        "Double",
        lambda x: x + 2,
        CASES,
        hint="multiply by two",
        diagnoses=[Diagnosis("you added 2 instead of multiplying", lambda x: x + 2)],
    )
    out = capsys.readouterr().out
    assert not result
    assert "wrong result for x=[1, 2]" in out and "you added 2 instead of multiplying" in out
    assert "[3. 4.]" in out  # what came back


def test_a_function_that_changes_its_input_cannot_change_the_cases(capsys):
    def in_place(x):
        x.mul_(2)
        return x

    cases = [Case("x=[1, 2]", (torch.tensor([1.0, 2.0]),), expected=torch.tensor([2.0, 4.0]))]
    assert check_function("Double", in_place, cases, hint="h")
    assert check_function("Double", in_place, cases, hint="h")  # the second run sees the original input again
    assert torch.equal(cases[0].args[0], torch.tensor([1.0, 2.0]))


def test_a_compare_that_raises_on_a_strange_answer_gives_a_verdict(capsys):
    def strict(got, expected):
        return bool((got == expected).all())  # raises AttributeError on a string

    result = check_function("Double", lambda x: "twice", CASES, hint="return a tensor", compare=strict)
    assert not result
    assert "wrong result for x=[1, 2]" in capsys.readouterr().out


def test_a_non_callable_answer_gets_a_verdict_first(capsys):
    assert not check_function("Double", "2 * x", [], hint="")
    assert "expected a function, got str" in capsys.readouterr().out


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        (dict(cases=[]), ValueError, "cases"),
        (dict(cases=[("x", (1,), 2)]), TypeError, "Case"),
        (dict(hint=None), TypeError, "hint"),
        (dict(exercise=""), TypeError, "exercise"),
    ],
)
def test_a_checker_set_up_wrongly_raises(kwargs, error, words):
    arguments = dict(exercise="Double", fn=double, cases=CASES, hint="h") | kwargs
    with pytest.raises(error, match=words):
        check_function(**arguments)


def test_a_cell_ending_in_a_checker_call_shows_only_the_printed_verdict():
    from IPython.core.formatters import DisplayFormatter

    from posenc_lib.exercises import CheckResult

    data, metadata = DisplayFormatter().format(CheckResult("demo", True, "PASS demo"))
    assert data == {} and metadata == {}


# --- the guard: library code an exercise asks the student to write is switched off while the answer runs ----

import posenc_lib as pe  # noqa: E402  (imports for the guard's tests sit with them)
from posenc_lib import sinusoidal as sinusoidal_module  # noqa: E402  (with the guard's tests)
from posenc_lib.exercises import LibraryCallError, library_unavailable  # noqa: E402  (with the guard's tests)
from posenc_lib.sinusoidal import shift_matrix  # noqa: E402  (a binding in this module's namespace, as in a notebook)

SHIFT_CASE = [Case("k=1, d=2", (1, 2), expected=torch.tensor([[0.5403, 0.8415], [-0.8415, 0.5403]]))]


def test_the_guard_replaces_every_binding_and_restores_them():
    original = pe.shift_matrix
    with library_unavailable(
        [pe.shift_matrix], student=test_the_guard_replaces_every_binding_and_restores_them
    ) as calls:
        for call in (
            lambda: pe.shift_matrix(1, 2),
            lambda: sinusoidal_module.shift_matrix(1, 2),
            lambda: shift_matrix(1, 2),
        ):
            with pytest.raises(LibraryCallError, match="shift_matrix"):
                call()
        assert pe.sinusoidal_encoding(2, 2) is not None  # what is not forbidden still works
    assert calls == ["posenc_lib.shift_matrix"] * 3
    assert pe.shift_matrix is original and sinusoidal_module.shift_matrix is original and shift_matrix is original


def test_the_guard_restores_after_an_error_and_guards_classes_instances_included():
    rotary = pe.RotaryEmbedding(4)  # made before: its methods are switched off too
    with pytest.raises(ZeroDivisionError):
        with library_unavailable([pe.RotaryEmbedding]) as calls:
            with pytest.raises(LibraryCallError):
                pe.RotaryEmbedding(4)
            with pytest.raises(LibraryCallError):
                rotary(torch.ones(1, 2, 4), torch.arange(2))
            raise ZeroDivisionError("an error inside the guard")
    assert calls == ["posenc_lib.RotaryEmbedding"] * 2
    assert rotary(torch.ones(1, 2, 4), torch.arange(2)).shape == (1, 2, 4) and isinstance(rotary, pe.RotaryEmbedding)


def test_an_answer_that_catches_the_guard_still_fails(capsys):
    def sneaky(k, d):
        try:
            return pe.shift_matrix(k, d)
        except Exception:
            return torch.tensor([[0.5403, 0.8415], [-0.8415, 0.5403]])

    result = check_function("Shift", sneaky, SHIFT_CASE, hint="h", forbidden=[pe.shift_matrix])
    assert not result and result.reason == "calls the library"
    assert "your answer calls posenc_lib.shift_matrix" in capsys.readouterr().out


def test_a_name_imported_into_the_answers_module_is_switched_off(capsys):
    result = check_function("Shift", lambda k, d: shift_matrix(k, d), SHIFT_CASE, hint="h", forbidden=[pe.shift_matrix])
    assert not result and result.reason == "calls the library"


def test_a_constant_answer_is_not_mistaken_for_a_subtle_mistake(capsys):
    cases = [Case("x=1", (1,), expected=True), Case("x=2", (2,), expected=False), Case("x=3", (3,), expected=True)]
    subtle = Diagnosis("you tested the wrong thing", lambda x: x != 1)  # wrong on x=1 and x=2, right on x=3
    constant = Diagnosis("your function always returns False", lambda x: False)
    result = check_function(
        "Yes or no",
        lambda x: False,
        cases,
        hint="general",
        diagnoses=[subtle, constant],
        compare=lambda got, expected: got is expected,
    )
    assert result.hint == "your function always returns False"
    assert (
        check_function(
            "Yes or no",
            lambda x: x != 1,
            cases,
            hint="general",
            diagnoses=[subtle, constant],
            compare=lambda got, expected: got is expected,
        ).hint
        == "you tested the wrong thing"
    )
