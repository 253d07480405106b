"""The checker of chapter 10's checker: the share of RoPE pairs that never complete a turn in training.

It fails a stub, a non-function and each typical wrong answer (with its own hint) and passes the solution."""

import math

import torch

import posenc_lib as pe
from _helpers import checker_contract
from posenc_lib.exercises import check_fraction_unseen


def fraction_unseen_solution(train_len, head_dim, base=10000.0):
    theta = pe.rope_frequencies(head_dim, base)
    return float(((train_len - 1) * theta < 2 * math.pi).double().mean())


def fraction_unseen_one_radian(train_len, head_dim, base=10000.0):
    theta = pe.rope_frequencies(head_dim, base)
    return float(((train_len - 1) * theta < 1).double().mean())


def fraction_unseen_count(train_len, head_dim, base=10000.0):
    theta = pe.rope_frequencies(head_dim, base)
    return int(((train_len - 1) * theta < 2 * math.pi).sum())


def fraction_unseen_no_factor_two(train_len, head_dim, base=10000.0):
    theta = base ** (-torch.arange(head_dim // 2, dtype=torch.float64) / head_dim)
    return float(((train_len - 1) * theta < 2 * math.pi).double().mean())


def fraction_unseen_ignores_base(train_len, head_dim, base=10000.0):
    return fraction_unseen_solution(train_len, head_dim)


def fraction_unseen_last_position_off_by_one(train_len, head_dim, base=10000.0):
    theta = pe.rope_frequencies(head_dim, base)
    return float((train_len * theta < 2 * math.pi).double().mean())


def fraction_unseen_wavelength_longer_than_train_len(train_len, head_dim, base=10000.0):
    return float((pe.wavelengths(pe.rope_frequencies(head_dim, base)) > train_len).double().mean())


def fraction_unseen_as_text(train_len, head_dim, base=10000.0):
    return f"{fraction_unseen_solution(train_len, head_dim, base):.0%}"


def fraction_unseen_exact(train_len, head_dim, base=10000.0):
    """A right answer as an exact fraction."""
    from fractions import Fraction

    theta = pe.rope_frequencies(head_dim, base)
    return Fraction(int(((train_len - 1) * theta < 2 * math.pi).sum()), head_dim // 2)


WRONG_ANSWERS = [
    (fraction_unseen_one_radian, "2 pi radians, not 1"),
    (fraction_unseen_count, "not a count"),
    (fraction_unseen_no_factor_two, "-2k / head_dim"),
    (fraction_unseen_ignores_base, "base argument is ignored"),
    (fraction_unseen_last_position_off_by_one, "off by one"),
    (fraction_unseen_wavelength_longer_than_train_len, "off by one"),
    (fraction_unseen_as_text, "return a number"),
]
test_passes_the_solution, test_fails_the_stub, test_fails_typical_wrong_answers = checker_contract(
    check_fraction_unseen, fraction_unseen_solution, WRONG_ANSWERS
)


def test_right_answers_in_other_forms_pass():
    assert check_fraction_unseen(fraction_unseen_exact)
