"""Checkers for the RoPE chapter's coding exercises: RoPE from scratch in both layouts.

The student's function has the signature ``fn(x, positions, base=10000.0)`` with
``x`` of shape ``(..., s, d)`` (e.g. ``(b, h, s, d)``) and ``positions`` a 1-D
integer tensor ``(s,)``. The reference is :func:`posenc_lib.apply_rope`.
"""

from __future__ import annotations

from typing import Any, Callable

import torch

from ..rope import apply_rope, rope_frequencies
from ._core import Case, CheckResult, Diagnosis, arrays_close, check_function


def _cases(layout: str) -> list[Case]:
    """Inputs from small to awkward: several heads, an offset start, another base, a single pair."""
    gen = torch.Generator().manual_seed(2024)

    def case(label: str, shape: tuple[int, ...], positions: torch.Tensor, base: float = 10000.0) -> Case:
        x = torch.randn(*shape, generator=gen)
        expected = apply_rope(x, positions, base=base, layout=layout)
        return Case(label, (x, positions), {"base": base}, expected)

    return [
        case("x of shape (1, 1, 4, 8), positions 0..3", (1, 1, 4, 8), torch.arange(4)),
        case("x of shape (2, 3, 5, 16), positions 37..41 (an offset, as with a KV cache)", (2, 3, 5, 16), torch.arange(37, 42)),
        case("x of shape (6, 8), positions 3..8, base=100", (6, 8), torch.arange(3, 9), 100.0),
        case("x of shape (1, 4, 3, 2) (one pair), positions [5, 0, 11]", (1, 4, 3, 2), torch.tensor([5, 0, 11])),
    ]


def _wrong_frequencies(x: torch.Tensor, positions: torch.Tensor, base: float = 10000.0, *, layout: str) -> torch.Tensor:
    d = x.shape[-1]
    slow = base ** (-torch.arange(d // 2, dtype=torch.float64) / d)  # base^(-k/d): one factor 2 missing
    return apply_rope(x, positions, base=base, layout=layout, frequencies=slow)


def _diagnoses(layout: str) -> list[Diagnosis]:
    other = "interleaved" if layout == "half" else "half"
    if layout == "half":
        layout_hint = (
            "you paired neighbouring coordinates (2k, 2k+1): that is the interleaved layout. "
            "In the half-split layout pair k is (x[..., k], x[..., k + d/2])."
        )
    else:
        layout_hint = (
            "you paired coordinate k with k + d/2: that is the half-split layout. "
            "In the interleaved layout pair k is (x[..., 2k], x[..., 2k+1])."
        )
    return [
        Diagnosis(layout_hint, lambda x, p, base=10000.0: apply_rope(x, p, base=base, layout=other)),
        Diagnosis(
            "you rotate by -theta: the pair (a, b) must become (a cos - b sin, b cos + a sin). "
            "Check the sign inside your rotate_half (it returns (-x2, x1)).",
            lambda x, p, base=10000.0: apply_rope(
                x, p, base=base, layout=layout, frequencies=-rope_frequencies(x.shape[-1], base)
            ),
        ),
        Diagnosis(
            "your frequencies look like base^(-k/d); RoPE uses theta_k = base^(-2k/d) for k = 0 .. d/2-1 "
            "(equivalently base^(-i/d) for the even i = 0, 2, ..., d-2).",
            lambda x, p, base=10000.0: _wrong_frequencies(x, p, base, layout=layout),
        ),
        Diagnosis(
            "you ignored the positions argument and used 0 .. s-1; rotate by the positions you are given "
            "(they can start at an offset).",
            lambda x, p, base=10000.0: apply_rope(x, None, base=base, layout=layout),
        ),
        Diagnosis(
            "the base argument is ignored: use it instead of a hard-coded 10000.",
            lambda x, p, base=10000.0: apply_rope(x, p, base=10000.0, layout=layout),
        ),
    ]


def _compare(got: Any, expected: Any) -> bool:
    # float32 angles of a student's own code are good to ~1e-6 at these positions
    return arrays_close(got, expected, atol=1e-4, rtol=1e-4)


def check_rope_half(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(x, positions, base=10000.0)`` against RoPE in the half-split (GPT-NeoX / HF) layout."""
    return check_function(
        "RoPE, half-split layout",
        fn,
        _cases("half"),
        hint=(
            "split x into halves x1, x2 = x[..., :d/2], x[..., d/2:]; with angles p * theta_k "
            "(shape (s, d/2)) return (x1 cos - x2 sin, x2 cos + x1 sin) concatenated on the last axis."
        ),
        diagnoses=_diagnoses("half"),
        compare=_compare,
    )


def check_rope_interleaved(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(x, positions, base=10000.0)`` against RoPE in the interleaved (RoFormer / Meta) layout."""
    return check_function(
        "RoPE, interleaved layout",
        fn,
        _cases("interleaved"),
        hint=(
            "the interleaved layout is the half-split one after reordering the last axis: gather "
            "x[..., [0, 2, ..., d-2, 1, 3, ..., d-1]], rotate with your half-split function, then undo the reordering."
        ),
        diagnoses=_diagnoses("interleaved"),
        compare=_compare,
    )
