"""Checker for chapter 11 (interview questions): interleaved to half-split layout.

- ``check_interleaved_to_half(fn)``: ``fn(x)`` reorders the last axis from the interleaved RoPE
  layout to the half-split one. It asks for what posenc_lib's permutations compute: they are switched
  off while the answer runs (see ``_core``).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from ..analysis import convert_qk_weight
from ..rope import half_to_interleaved_permutation, interleaved_to_half_permutation
from ._core import Case, CheckResult, Diagnosis, arrays_close, check_function


def _interleaved_to_half_reference(x: torch.Tensor) -> torch.Tensor:
    return x[..., interleaved_to_half_permutation(x.shape[-1])]


def _wrong_direction(x):
    return x[..., half_to_interleaved_permutation(x.shape[-1])]


def _second_halves_first(x):
    return torch.cat((x[..., 1::2], x[..., 0::2]), dim=-1)


def check_interleaved_to_half(fn: Callable[[torch.Tensor], torch.Tensor]) -> CheckResult:
    """Check ``fn(x) -> y``: re-order the last dimension of ``x`` from the interleaved RoPE layout to the half layout.

    ``x`` is ``(..., d)`` with pairs at ``(2k, 2k+1)``; ``y`` has the same pairs
    at ``(k, k + d/2)``, so ``apply_rope(y, layout="half")`` equals
    ``apply_rope(x, layout="interleaved")`` re-ordered the same way. The answer runs with the
    library's layout permutations and ``convert_qk_weight`` switched off.
    """
    cases = []
    for shape, seed in [((8,), 0), ((2, 3, 4), 1), ((1, 2, 5, 12), 2), ((2,), 3)]:
        x = torch.randn(*shape, generator=torch.Generator().manual_seed(20 + seed))
        cases.append(Case(f"x of shape {shape}", (x,), expected=_interleaved_to_half_reference(x)))
    return check_function(
        "Interleaved to half layout",
        fn,
        cases,
        hint="the half layout puts the first member of every pair (columns 0, 2, 4, ...) first, then the second "
        "members (1, 3, 5, ...)",
        diagnoses=[
            Diagnosis("that is the opposite conversion (half to interleaved)", _wrong_direction),
            Diagnosis(
                "the first members of the pairs (even columns) come first, then the odd columns", _second_halves_first
            ),
        ],
        # torch or NumPy: a reordering is exact
        compare=lambda got, expected: arrays_close(got, expected, atol=0, rtol=0),
        forbidden=(interleaved_to_half_permutation, half_to_interleaved_permutation, convert_qk_weight),
    )
