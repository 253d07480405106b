"""posenc_lib.exercises._core: the verdicts every checker is built on."""

from __future__ import annotations

import pytest
import torch

from posenc_lib.exercises import Case, Diagnosis, check_function

CASES = [Case("x=[1, 2]", (torch.tensor([1.0, 2.0]),), expected=torch.tensor([2.0, 4.0])),
         Case("x=[3]", (torch.tensor([3.0]),), expected=torch.tensor([6.0]))]


def double(x):
    return 2 * x


def test_a_right_answer_passes_and_is_truthy(capsys):
    result = check_function("Double", double, CASES, hint="multiply by two")
    assert result and result.passed
    assert "✅ Double: correct on all 2 test inputs." in capsys.readouterr().out


def test_the_stub_is_reported_as_not_implemented(capsys):
    def stub(x):
        raise NotImplementedError()

    result = check_function("Double", stub, CASES, hint="multiply by two")
    assert not result
    assert "not implemented yet" in capsys.readouterr().out


def test_a_wrong_answer_names_the_input_and_the_specific_hint(capsys):
    result = check_function("Double", lambda x: x + 2, CASES, hint="multiply by two",
                            diagnoses=[Diagnosis("you added 2 instead of multiplying", lambda x: x + 2)])
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


@pytest.mark.parametrize("kwargs, error, words", [
    (dict(cases=[]), ValueError, "cases"),
    (dict(cases=[("x", (1,), 2)]), TypeError, "Case"),
    (dict(hint=None), TypeError, "hint"),
    (dict(exercise=""), TypeError, "exercise"),
])
def test_a_checker_set_up_wrongly_raises(kwargs, error, words):
    arguments = dict(exercise="Double", fn=double, cases=CASES, hint="h") | kwargs
    with pytest.raises(error, match=words):
        check_function(**arguments)


def test_a_cell_ending_in_a_checker_call_shows_only_the_printed_verdict():
    from IPython.core.formatters import DisplayFormatter

    from posenc_lib.exercises import CheckResult

    data, metadata = DisplayFormatter().format(CheckResult("demo", True, "✅ demo"))
    assert data == {} and metadata == {}
