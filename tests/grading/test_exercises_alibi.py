"""Chapter 6's checker (ALiBi's slopes for any head count) fails on typical wrong answers (with the matching
hint) and on calls to the library, and passes the authors' rule written from scratch."""

import math

import pytest
import torch

import posenc_lib as pe
from posenc_lib.exercises import check_alibi_slopes
from posenc_lib.exercises.alibi import SLOPES_HINT

# --- ALiBi slopes ------------------------------------------------------------------------------


def authors_slopes(n):
    def power_of_two(count):
        return [2.0 ** (-8.0 * h / count) for h in range(1, count + 1)]

    if math.log2(n).is_integer():
        return power_of_two(n)
    p = 2 ** math.floor(math.log2(n))
    return power_of_two(p) + power_of_two(2 * p)[0::2][: n - p]


def naive_slopes(n):
    return [2.0 ** (-8.0 * h / n) for h in range(1, n + 1)]


def test_alibi_slopes_passes_on_right_answers():
    assert check_alibi_slopes(authors_slopes)
    assert check_alibi_slopes(lambda n: torch.tensor(authors_slopes(n)))


@pytest.mark.parametrize(
    "wrong,hint",
    [
        (naive_slopes, "2^(-8h/n) for every n"),
        (lambda n: sorted(authors_slopes(n), reverse=True), "your slopes are sorted"),
        (lambda n: sorted(authors_slopes(n)), "increasing order"),
        (lambda n: [2.0 ** (-8.0 * h / n) for h in range(n)], "off by one"),
        (
            lambda n: (
                authors_slopes(2 ** math.floor(math.log2(n)))
                + naive_slopes(2 * 2 ** math.floor(math.log2(n)))[1::2][: n - 2 ** math.floor(math.log2(n))]
            ),
            "[1::2]",
        ),
        (
            lambda n: (
                authors_slopes(2 ** math.floor(math.log2(n)))
                + naive_slopes(2 * 2 ** math.floor(math.log2(n)))[: n - 2 ** math.floor(math.log2(n))]
            ),
            "first n - p",
        ),
        (lambda n: authors_slopes(n)[:-1], "the shape is"),  # one slope short
        (lambda n: [2.0 ** (-8.0 * h / 2 ** math.ceil(math.log2(n))) for h in range(1, n + 1)], "next power of two"),
    ],
    ids=["naive", "sorted-desc", "sorted-asc", "zero-based", "odd-extras", "first-extras", "too-short", "next-power"],
)
def test_alibi_slopes_fails_on_wrong_answers_with_the_right_hint(wrong, hint, capsys):
    result = check_alibi_slopes(wrong)
    assert not result and result.hint != SLOPES_HINT
    assert hint in capsys.readouterr().out


@pytest.mark.parametrize(
    "call",
    [
        lambda n: pe.alibi_slopes(n),
        lambda n: -pe.alibi_bias(n, 2, causal=False)[:, 0, 1],
        lambda n: -pe.alibi_bias_compact(n, 2)[:, 0, 0],
    ],
    ids=["alibi_slopes", "alibi_bias", "alibi_bias_compact"],
)
def test_alibi_slopes_fails_an_answer_that_calls_the_library(call, capsys):
    result = check_alibi_slopes(call)
    assert not result and result.reason == "calls the library"


def stub(*args, **kwargs):
    raise NotImplementedError()


def test_the_stub_and_a_non_function_fail(capsys):
    assert not check_alibi_slopes(stub)
    assert "not implemented" in capsys.readouterr().out
    assert not check_alibi_slopes([0.5, 0.25])
