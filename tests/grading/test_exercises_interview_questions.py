"""The checker of chapter 11's layout question: which coordinates a RoPE black box turns together.

It fails a stub, a non-function and each typical wrong answer (with its own hint), passes the solution and right
answers written other ways, and its black boxes are RoPE: the half-split and interleaved ones equal posenc_lib's."""

import numpy as np
import torch

import posenc_lib as pe
from _helpers import checker_contract
from posenc_lib.exercises import check_rope_partners, mystery_rope
from posenc_lib.exercises.interview_questions import BlackBoxRope, _half, _interleaved


def partners_solution(rope, d_h):
    """The notebook's answer: rotate e_0 .. e_(d_h-1) to position 1; the partner is the nonzero entry off the diagonal."""
    rows = rope(torch.eye(d_h, dtype=torch.float64), torch.ones(d_h, dtype=torch.long))  # (d_h, d_h)
    off = rows.double().abs() * (1 - torch.eye(d_h))
    return torch.where(off.amax(dim=1) > 0, off.argmax(dim=1), torch.arange(d_h))


def partners_by_pairs_of_coordinates(rope, d_h):
    """A right answer written differently: for each pair of coordinates, does one leak into the other? (NumPy)"""
    out = np.arange(d_h)
    for c in range(d_h):
        x = torch.zeros(1, d_h, dtype=torch.float32)
        x[0, c] = 1.0
        turned = np.asarray(rope(x, torch.tensor([3]))[0].double())
        turned[c] = 0.0
        if np.any(turned != 0):
            out[c] = int(np.argmax(np.abs(turned)))
    return out


def partners_as_list(rope, d_h):
    return partners_solution(rope, d_h).tolist()


def assume_half(rope, d_h):
    return (torch.arange(d_h) + d_h // 2) % d_h


def assume_interleaved(rope, d_h):
    return torch.arange(d_h) ^ 1


def probe_at_position_zero(rope, d_h):
    rows = rope(torch.eye(d_h), torch.zeros(d_h, dtype=torch.long))
    off = rows.abs() * (1 - torch.eye(d_h))
    return torch.where(off.amax(dim=1) > 0, off.argmax(dim=1), torch.arange(d_h))


def largest_entry_of_the_row(rope, d_h):
    return rope(torch.eye(d_h), torch.ones(d_h, dtype=torch.long)).abs().argmax(dim=1)


def threshold_on_sine(rope, d_h):
    rows = rope(torch.eye(d_h), torch.ones(d_h, dtype=torch.long))
    off = rows.abs() * (1 - torch.eye(d_h))
    return torch.where(off.amax(dim=1) > 1e-3, off.argmax(dim=1), torch.arange(d_h))


def pairs_not_partners(rope, d_h):
    """Returns the list of pairs (a, b) instead of a partner per coordinate."""
    partner = partners_solution(rope, d_h)
    return torch.tensor([[a, int(partner[a])] for a in range(d_h) if a < partner[a]])


WRONG_ANSWERS = [
    (assume_half, "assumed the half-split layout"),
    (assume_interleaved, "assumed the interleaved layout"),
    (probe_at_position_zero, "their own partner"),
    (largest_entry_of_the_row, "off the diagonal"),
    (threshold_on_sine, "slow pairs are missing"),
    (pairs_not_partners, "the shape is"),
]
test_passes_the_solution, test_fails_the_stub, test_fails_typical_wrong_answers = checker_contract(
    check_rope_partners, partners_solution, WRONG_ANSWERS
)


def test_right_answers_in_other_forms_pass():
    assert check_rope_partners(partners_by_pairs_of_coordinates)
    assert check_rope_partners(partners_as_list)


def test_the_black_boxes_are_rope():
    gen = torch.Generator().manual_seed(0)
    x, positions = torch.randn(2, 5, 16, generator=gen, dtype=torch.float64), torch.tensor([0, 3, 9, 200, -4])
    half = BlackBoxRope(16, *_half(16), 10000.0, None)
    interleaved = BlackBoxRope(16, *_interleaved(16), 10000.0, None)
    torch.testing.assert_close(half(x, positions), pe.apply_rope(x, positions))
    torch.testing.assert_close(interleaved(x, positions), pe.apply_rope(x, positions, layout="interleaved"))
    wide = torch.randn(5, 64, generator=gen, dtype=torch.float64)
    expected = pe.apply_partial_rope(wide, 32, positions, base=500000.0, layout="interleaved")
    torch.testing.assert_close(mystery_rope(wide, positions).double(), expected, atol=1e-5, rtol=1e-5)
    assert mystery_rope(wide, positions).dtype == torch.float32


def test_a_black_box_names_a_wrong_width():
    try:
        mystery_rope(torch.ones(2, 8), torch.arange(2))
    except ValueError as error:
        assert "64" in str(error)
    else:
        raise AssertionError("a wrong width must raise")
