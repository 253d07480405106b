"""The checker of chapter 11's checker: interleaved to half-split layout.

It fails a stub, a non-function and each typical wrong answer (with its own hint) and passes the solution."""

import torch

import posenc_lib as pe
from _helpers import checker_contract
from posenc_lib.exercises import check_interleaved_to_half


def to_half_solution(x):
    return torch.cat((x[..., 0::2], x[..., 1::2]), dim=-1)


def to_half_inverse(x):
    """The opposite conversion (half to interleaved), without the library."""
    d = x.shape[-1]
    y = torch.empty_like(x)
    y[..., 0::2], y[..., 1::2] = x[..., : d // 2], x[..., d // 2 :]
    return y


def to_half_odd_first(x):
    return torch.cat((x[..., 1::2], x[..., 0::2]), dim=-1)


def to_half_evens_only(x):
    return x[..., 0::2]


def to_half_numpy(x):
    """A right answer as a NumPy array (the reordering is exact in either)."""
    return to_half_solution(x).numpy()


WRONG_ANSWERS = [
    (to_half_inverse, "opposite conversion"),
    (to_half_odd_first, "even columns"),
    (to_half_evens_only, "the shape is"),
]
test_passes_the_solution, test_fails_the_stub, test_fails_typical_wrong_answers = checker_contract(
    check_interleaved_to_half, to_half_solution, WRONG_ANSWERS
)


def test_right_answers_in_other_forms_pass():
    assert check_interleaved_to_half(to_half_numpy)


def test_the_layout_checker_fails_an_answer_that_calls_the_library(capsys):
    result = check_interleaved_to_half(lambda x: x[..., pe.interleaved_to_half_permutation(x.shape[-1])])
    assert not result and result.reason == "calls the library"
    assert "interleaved_to_half_permutation" in capsys.readouterr().out
