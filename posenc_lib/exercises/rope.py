"""Checkers for the RoPE chapter's coding exercises: RoPE from scratch in both layouts.

The student's function has the signature ``fn(x, positions, base=10000.0)`` with
``x`` of shape ``(..., s, d)`` (e.g. ``(b, h, s, d)``) and ``positions`` a 1-D
integer tensor ``(s,)``. The reference is the formula, computed here in float64; the
answer runs with posenc_lib's RoPE code (:func:`posenc_lib.apply_rope`,
:func:`posenc_lib.rotate_pairs`, :func:`posenc_lib.rope_angles`,
:func:`posenc_lib.rope_frequencies`, :class:`posenc_lib.RotaryEmbedding` and the layout
permutations) switched off.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from .. import fast
from ..rope import (
    RotaryEmbedding,
    apply_rope,
    half_to_interleaved_permutation,
    interleaved_to_half_permutation,
    rope_angles,
    rope_frequencies,
    rotate_pairs,
)
from ._core import Case, CheckResult, Diagnosis, arrays_close, check_function

ROPE_CODE = (
    apply_rope,
    rotate_pairs,
    rope_angles,
    rope_frequencies,
    RotaryEmbedding,
    interleaved_to_half_permutation,
    half_to_interleaved_permutation,
    fast.rotate_pairs,
    fast.rotary,
    fast.rotary_qk,
)

HALF_HINT = (
    "split x into halves x1, x2 = x[..., :d/2], x[..., d/2:]; with angles p * theta_k "
    "(shape (s, d/2)) return (x1 cos - x2 sin, x2 cos + x1 sin) concatenated on the last axis."
)
INTERLEAVED_HINT = (
    "the interleaved layout is the half-split one after reordering the last axis: gather "
    "x[..., [0, 2, ..., d-2, 1, 3, ..., d-1]], rotate with your half-split function, then undo the reordering."
)
PRECISION_HINT = (
    "positions past 256 are where bfloat16 stops holding every integer (257 becomes 256) and float16 "
    "angles lose whole radians: compute the angles from integer (or float32/float64) positions in "
    "float32 or float64, and round only cos and sin to x's dtype."
)


def _rope(
    x: torch.Tensor, positions: torch.Tensor, base: float = 10000.0, *, layout: str, theta: torch.Tensor | None = None
) -> torch.Tensor:
    """RoPE by the formula, float64: pair k of token p turned by p * theta_k, theta_k = base^(-2k/d)."""
    d = x.shape[-1]
    theta = base ** (-2.0 * torch.arange(d // 2, dtype=torch.float64) / d) if theta is None else theta  # (d/2,)
    angles = positions.to(torch.float64)[:, None] * theta  # (s, d/2)
    cos, sin = angles.cos(), angles.sin()
    x = x.double()
    if layout == "half":
        first, second = x[..., : d // 2], x[..., d // 2 :]  # (..., s, d/2) each
        return torch.cat([first * cos - second * sin, second * cos + first * sin], dim=-1)
    first, second = x[..., 0::2], x[..., 1::2]
    return torch.stack([first * cos - second * sin, second * cos + first * sin], dim=-1).flatten(-2)


def _cases(layout: str) -> list[Case]:
    """Inputs from small to awkward: several heads, an offset start, another base, a single pair, far positions."""
    gen = torch.Generator().manual_seed(2024)

    def case(
        label: str, shape: tuple[int, ...], positions: torch.Tensor, base: float = 10000.0, hint: str = ""
    ) -> Case:
        x = torch.randn(*shape, generator=gen)
        return Case(label, (x, positions), {"base": base}, _rope(x, positions, base, layout=layout), hint)

    return [
        case("x of shape (1, 1, 4, 8), positions 0..3", (1, 1, 4, 8), torch.arange(4)),
        case(
            "x of shape (2, 3, 5, 16), positions 37..41 (an offset, as with a KV cache)",
            (2, 3, 5, 16),
            torch.arange(37, 42),
            hint="positions need not start at 0: rotate token i by positions[i].",
        ),
        case(
            "x of shape (6, 8), positions 3..8, base=100",
            (6, 8),
            torch.arange(3, 9),
            100.0,
            hint="use the base argument (here 100) for theta_k = base^(-2k/d).",
        ),
        case("x of shape (1, 4, 3, 2) (one pair), positions [5, 0, 11]", (1, 4, 3, 2), torch.tensor([5, 0, 11])),
        case(
            "x of shape (2, 3, 6, 32), positions [257, 259, 263, 271, 300, 400] (past 256)",
            (2, 3, 6, 32),
            torch.tensor([257, 259, 263, 271, 300, 400]),
            hint=PRECISION_HINT,
        ),
    ]


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

    def theta(x: torch.Tensor, base: float, exponent: float = 2.0) -> torch.Tensor:
        d = x.shape[-1]
        return base ** (-exponent * torch.arange(d // 2, dtype=torch.float64) / d)

    return [
        Diagnosis(layout_hint, lambda x, p, base=10000.0: _rope(x, p, base, layout=other)),
        Diagnosis(
            "you rotate by -theta: the pair (a, b) must become (a cos - b sin, b cos + a sin). "
            "Check the sign inside your rotate_half (it returns (-x2, x1)).",
            lambda x, p, base=10000.0: _rope(x, p, base, layout=layout, theta=-theta(x, base)),
        ),
        Diagnosis(
            "your frequencies look like base^(-k/d); RoPE uses theta_k = base^(-2k/d) for k = 0 .. d/2-1 "
            "(equivalently base^(-i/d) for the even i = 0, 2, ..., d-2).",
            lambda x, p, base=10000.0: _rope(x, p, base, layout=layout, theta=theta(x, base, 1.0)),
        ),
        Diagnosis(
            "you ignored the positions argument and used 0 .. s-1; rotate by the positions you are given "
            "(they can start at an offset).",
            lambda x, p, base=10000.0: _rope(x, torch.arange(x.shape[-2]), base, layout=layout),
        ),
        Diagnosis(
            "the base argument is ignored: use it instead of a hard-coded 10000.",
            lambda x, p, base=10000.0: _rope(x, p, 10000.0, layout=layout),
        ),
        Diagnosis(
            "your positions went through bfloat16, which holds integers exactly only up to 256 (257 becomes 256). "
            + PRECISION_HINT.split(": ", 1)[1],
            lambda x, p, base=10000.0: _rope(x, p.to(torch.bfloat16), base, layout=layout),
        ),
        Diagnosis(
            "you returned x unchanged: every pair must be rotated by its angle p * theta_k.",
            lambda x, p, base=10000.0: x,
        ),
    ]


def _compare(got: Any, expected: Any) -> bool:
    # float32 angles of a student's own code are good to ~1e-5 at these positions
    return arrays_close(got, expected, atol=1e-4, rtol=1e-4)


def check_rope_half(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(x, positions, base=10000.0)`` against RoPE in the half-split (GPT-NeoX / HF) layout."""
    return check_function(
        "RoPE, half-split layout",
        fn,
        _cases("half"),
        hint=HALF_HINT,
        diagnoses=_diagnoses("half"),
        compare=_compare,
        forbidden=ROPE_CODE,
    )


def check_rope_interleaved(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(x, positions, base=10000.0)`` against RoPE in the interleaved (RoFormer / Meta) layout."""
    return check_function(
        "RoPE, interleaved layout",
        fn,
        _cases("interleaved"),
        hint=INTERLEAVED_HINT,
        diagnoses=_diagnoses("interleaved"),
        compare=_compare,
        forbidden=ROPE_CODE,
    )
