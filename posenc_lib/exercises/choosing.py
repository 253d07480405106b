"""Checker for chapter 10 (choosing an encoding): the share of RoPE pairs that never turn in training.

- ``check_fraction_unseen(fn)``: ``fn(train_len, head_dim, base=10000.0)`` returns the fraction of
  pairs that complete less than one turn within ``train_len`` positions.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from ..rope import (
    rope_frequencies,
)
from ._core import Case, CheckResult, Diagnosis, check_function


def _fraction_unseen_reference(train_len: int, head_dim: int, base: float = 10000.0) -> float:
    theta = rope_frequencies(head_dim, base)  # (d/2,)
    largest_trained_angle = (train_len - 1) * theta  # (d/2,)
    return float((largest_trained_angle < 2 * math.pi).double().mean())


def _compares_with_one_radian(train_len, head_dim, base=10000.0):
    theta = rope_frequencies(head_dim, base)
    return float(((train_len - 1) * theta < 1.0).double().mean())


def _frequencies_without_factor_two(train_len, head_dim, base=10000.0):
    theta = base ** (-torch.arange(head_dim // 2, dtype=torch.float64) / head_dim)
    return float(((train_len - 1) * theta < 2 * math.pi).double().mean())


def _count_not_fraction(train_len, head_dim, base=10000.0):
    theta = rope_frequencies(head_dim, base)
    return float(((train_len - 1) * theta < 2 * math.pi).sum())


def _last_position_off_by_one(train_len, head_dim, base=10000.0):
    """``L * theta < 2 pi`` (equivalently: wavelength > L) instead of ``(L - 1) * theta < 2 pi``."""
    theta = rope_frequencies(head_dim, base)
    return float((train_len * theta < 2 * math.pi).double().mean())


def _fraction_of_all_coordinates(train_len, head_dim, base=10000.0):
    theta = rope_frequencies(head_dim, base)
    return float(((train_len - 1) * theta < 2 * math.pi).sum() / head_dim)


def check_fraction_unseen(fn: Callable[..., float]) -> CheckResult:
    """Check ``fn(train_len, head_dim, base=10000.0) -> float``.

    The answer is the fraction of RoPE's ``d/2`` pairs whose angles over the
    training positions ``0 .. train_len - 1`` do not complete one full turn,
    i.e. ``(train_len - 1) * theta_k < 2 pi`` with ``theta_k = base^(-2k/d)``.
    """
    cases = [
        Case(
            f"train_len={n}, head_dim={d}, base={b:g}",
            (n, d),
            {"base": b},
            expected=_fraction_unseen_reference(n, d, b),
        )
        for n, d, b in [
            (2048, 128, 10000.0),
            (4096, 128, 10000.0),
            (8192, 128, 500000.0),
            (512, 64, 10000.0),
            (1, 16, 10000.0),
            (100000, 64, 100.0),
        ]
    ]
    boundary = (
        "the positions are 0 .. L - 1, so the largest angle a pair reaches in training is (L - 1) * theta_k; "
        "here a wavelength lies between L - 1 and L, the case that tells (L - 1) * theta from L * theta."
    )
    cases += [
        Case(
            "train_len=7, head_dim=2 (one pair, theta = 1, wavelength 2 pi = 6.28: between L - 1 = 6 and L = 7)",
            (7, 2),
            {"base": 10000.0},
            expected=_fraction_unseen_reference(7, 2),
            hint=boundary,
        ),
        Case(
            "train_len=63, head_dim=4, base=100 (theta_1 = 0.1, wavelength 62.8: between 62 and 63)",
            (63, 4),
            {"base": 100.0},
            expected=_fraction_unseen_reference(63, 4, 100.0),
            hint=boundary,
        ),
    ]
    return check_function(
        "Pairs that never turn a full circle in training",
        fn,
        cases,
        hint="theta_k = base ** (-2k / head_dim) for k = 0 .. head_dim/2 - 1; a pair has seen every direction "
        "if (train_len - 1) * theta_k >= 2 pi; return the fraction of pairs that have not",
        diagnoses=[
            Diagnosis("a full turn is 2 pi radians, not 1", _compares_with_one_radian),
            Diagnosis(
                "the exponent is -2k / head_dim (pairs share a frequency), not -k / head_dim",
                _frequencies_without_factor_two,
            ),
            Diagnosis("return a fraction of the head_dim / 2 pairs, not a count", _count_not_fraction),
            Diagnosis(
                "there are head_dim / 2 pairs (rotation planes), not head_dim of them", _fraction_of_all_coordinates
            ),
            Diagnosis(
                "the base argument is ignored: theta_k = base ** (-2k / head_dim) with the base you are given",
                lambda n, d, base=10000.0: _fraction_unseen_reference(n, d),
            ),
            Diagnosis(
                "off by one: the training positions are 0 .. L - 1, so the largest trained angle is "
                "(L - 1) * theta_k, not L * theta_k (a wavelength > L test makes the same slip)",
                _last_position_off_by_one,
            ),
        ],
        explain=lambda got, expected: (
            ""
            if isinstance(got, numbers.Real) or isinstance(got, torch.Tensor)
            else f"return a number (a float or an exact fraction), not a {type(got).__name__}."
        ),
        compare=_same_number,
    )


def _same_number(got: Any, expected: float) -> bool:
    """A real number (Python, NumPy, an exact Fraction or a one-element tensor; not a bool) within 1e-9 of the expected one."""
    if isinstance(got, torch.Tensor):
        if got.numel() != 1 or got.dtype == torch.bool:
            return False
        got = got.item()
    if isinstance(got, (bool, np.bool_)) or not isinstance(got, numbers.Real):
        return False
    return abs(float(got) - expected) < 1e-9
