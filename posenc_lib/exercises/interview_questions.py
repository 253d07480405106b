"""Checker for chapter 11 (interview questions): which coordinates a RoPE implementation turns together.

- ``check_rope_partners(fn)``: ``fn(rope, head_dim)`` is given a RoPE implementation as a black box,
  ``rope(x, positions)`` with ``x`` of shape ``(..., s, d_h)`` and ``positions`` of shape ``(s,)``, and
  returns, for every coordinate ``c`` of a head, the coordinate that turns together with it (``c``
  itself when ``c`` is not rotated): an integer sequence of length ``d_h``. The black boxes use the
  half-split layout, the interleaved one, partial rotary and a pairing of their own. Chapter 5 converts
  between two *known* layouts; this asks to find the layout from the outside, so no posenc_lib code
  computes the answer and nothing is switched off.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from ._core import Case, CheckResult, Diagnosis, arrays_close, check_function

__all__ = ["check_rope_partners", "mystery_rope"]


class BlackBoxRope:
    """RoPE turning coordinate ``first[l]`` with ``second[l]`` by ``p * base^(-2l/r)``, ``r = 2 len(first)``.

    ``__call__(x, positions)``: ``x`` is ``(..., s, d_h)``, ``positions`` ``(s,)``; returns ``x``'s shape,
    computed in float64 and returned in ``dtype`` (``x``'s dtype when ``None``). Coordinates in neither
    list pass through.
    """

    def __init__(
        self, head_dim: int, first: Sequence[int], second: Sequence[int], base: float, dtype: torch.dtype | None
    ) -> None:
        self.head_dim, self.base, self.dtype = head_dim, base, dtype
        self.first, self.second = torch.tensor(list(first)), torch.tensor(list(second))  # (r/2,) each

    def __repr__(self) -> str:
        return f"<a RoPE implementation for heads of width {self.head_dim}>"

    def __call__(self, x: Any, positions: Any) -> torch.Tensor:
        x = torch.as_tensor(x)
        if x.shape[-1] != self.head_dim:
            raise ValueError(f"x.shape[-1] must be the head width {self.head_dim}, got shape {tuple(x.shape)}")
        positions = torch.as_tensor(positions).reshape(-1)
        if x.ndim < 2 or positions.shape[0] != x.shape[-2]:
            raise ValueError(f"positions must have one entry per row of x (x.shape[-2]), got {tuple(positions.shape)}")
        theta = self.base ** (-2.0 * torch.arange(len(self.first), dtype=torch.float64) / (2 * len(self.first)))
        angles = positions.double()[:, None] * theta  # (s, r/2)
        out = x.double().clone()  # (..., s, d_h)
        a, b = out[..., self.first], out[..., self.second]  # (..., s, r/2) each
        out[..., self.first] = a * angles.cos() - b * angles.sin()
        out[..., self.second] = b * angles.cos() + a * angles.sin()
        return out.to(self.dtype or (x.dtype if x.is_floating_point() else torch.float32))


def _half(d: int, rotated: int | None = None) -> tuple[list[int], list[int]]:
    r = rotated or d
    return list(range(r // 2)), list(range(r // 2, r))


def _interleaved(d: int, rotated: int | None = None) -> tuple[list[int], list[int]]:
    r = rotated or d
    return list(range(0, r, 2)), list(range(1, r, 2))


def _partners(box: BlackBoxRope) -> torch.Tensor:
    partner = torch.arange(box.head_dim)  # (d_h,)
    partner[box.first], partner[box.second] = box.second, box.first
    return partner


def _scrambled(d: int, seed: int) -> tuple[list[int], list[int]]:
    order = torch.randperm(d, generator=torch.Generator().manual_seed(seed)).tolist()
    return order[: d // 2], order[d // 2 :]


# the chapter's identification exercise: interleaved (GPT-J style), 32 of 64 coordinates, Llama 3's base
mystery_rope = BlackBoxRope(64, *_interleaved(64, 32), base=500000.0, dtype=torch.float32)


def _probe_partners(rope: Callable[..., Any], d: int, *, position: int = 1, threshold: float = 0.0) -> torch.Tensor:
    """A student's probe: rotate e_c to ``position``; the partner is the largest entry off the diagonal above ``threshold``."""
    rows = torch.as_tensor(rope(torch.eye(d, dtype=torch.float64), torch.full((d,), position))).double()  # (d, d)
    off = (rows - torch.diag(torch.diagonal(rows))).abs()  # (d, d): row c is R_p e_c without its own entry
    best = off.argmax(dim=1)
    return torch.where(off.max(dim=1).values > threshold, best, torch.arange(d))


OWN_PARTNER_HINT = (
    "coordinates came out as their own partner. At position 0 nothing turns; at position 1 the largest entry of "
    "row c is, for all but the fastest pairs, its own cos(theta): look at the entries off the diagonal."
)


def _largest_entry(rope: Callable[..., Any], d: int) -> torch.Tensor:
    """A wrong answer: the largest entry of row c of R_1, the diagonal included."""
    return torch.as_tensor(rope(torch.eye(d, dtype=torch.float64), torch.ones(d, dtype=torch.long))).abs().argmax(dim=1)


def check_rope_partners(fn: Callable[[Callable[..., Any], int], Any]) -> CheckResult:
    """Check ``fn(rope, head_dim) -> (d_h,)``: for each coordinate, the coordinate the black box turns it with."""
    boxes = [
        ("a half-split RoPE, d_h = 8", BlackBoxRope(8, *_half(8), 10000.0, None), ""),
        ("an interleaved RoPE, d_h = 8", BlackBoxRope(8, *_interleaved(8), 10000.0, None), ""),
        (
            "a half-split RoPE, d_h = 128",
            BlackBoxRope(128, *_half(128), 10000.0, None),
            "with d_h = 128 the slowest pair turns by only 1.2e-4 radian per position: a threshold on the entries "
            "misses it.",
        ),
        (
            "GPT-J-style partial rotary: interleaved pairs in the first 16 of 32 coordinates",
            BlackBoxRope(32, *_interleaved(32, 16), 10000.0, None),
            "coordinates that are not rotated come out unchanged; each is its own partner.",
        ),
        (
            "a pairing of its own, d_h = 12",
            BlackBoxRope(12, *_scrambled(12, 5), 10000.0, None),
            "any fixed pairing of the coordinates is a valid RoPE (chapter 5): do not assume one of the two layouts.",
        ),
        (
            "an interleaved RoPE in float32 with base 500,000, d_h = 64",
            BlackBoxRope(64, *_interleaved(64), 500000.0, torch.float32),
            "with base 500,000 the slowest pair turns by 3e-6 radian per position, and this one returns float32.",
        ),
    ]
    cases = [Case(label, (box, box.head_dim), expected=_partners(box), hint=hint) for label, box, hint in boxes]
    return check_function(
        "Which coordinates a RoPE turns together",
        fn,
        cases,
        hint="rotate the unit vectors e_0 .. e_(d_h-1) to position 1 with the black box (rows of torch.eye(d_h)); "
        "row c of the result is R_1 e_c, nonzero only at c and at c's partner.",
        diagnoses=[
            Diagnosis(OWN_PARTNER_HINT, lambda rope, d: torch.arange(d)),
            Diagnosis(OWN_PARTNER_HINT, _largest_entry),
            Diagnosis(
                "you assumed the half-split layout (c with c + d_h/2); find the pairs from the black box's output.",
                lambda rope, d: (torch.arange(d) + d // 2) % d,
            ),
            Diagnosis(
                "you assumed the interleaved layout (2l with 2l + 1); find the pairs from the black box's output.",
                lambda rope, d: torch.arange(d) ^ 1,
            ),
            Diagnosis(
                "the slow pairs are missing: at position 1 they turn by far less than 1e-3 radian (1.2e-4 for "
                "d_h = 128, 3e-6 with base 500,000), so a threshold on sin(theta) reads them as unrotated. Compare "
                "with exactly 0, or take the largest entry off the diagonal.",
                lambda rope, d: _probe_partners(rope, d, threshold=1e-3),
            ),
        ],
        compare=lambda got, expected: arrays_close(got, expected, atol=0, rtol=0),  # a list, NumPy or torch
    )
