"""Checker for chapter 9 (where position plugs in): multi-head attention scores with RoPE.

- ``check_rope_scores(fn)``: ``fn(x, w_q, w_k, n_heads)`` returns the ``(n_h, s, s)`` scores of a
  multi-head layer that rotates queries and keys per head. The reference reuses the library's own
  pieces (``split_heads`` of the model, ``attention`` with ``return_scores=True``), so the checker and
  the model cannot disagree.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from ..attention import attention
from ..model import split_heads
from ..rope import (
    apply_rope,
)
from ._core import Case, CheckResult, Diagnosis, arrays_close, check_function


def _scores(x, w_q, w_k, n_heads, *, rotate="qk", rotate_before_split=False, split=split_heads):
    """Scores ``(b, n_h, s, s)`` of the exercise, and of its typical mistakes (the keyword arguments)."""
    q, k = x @ w_q, x @ w_k  # (b, s, d) each
    if rotate_before_split:
        q, k = apply_rope(q), apply_rope(k)  # the mistake: frequencies of a d-wide vector
    q, k = split(q, n_heads), split(k, n_heads)  # (b, n_h, s, d_h) each
    if not rotate_before_split:
        q = apply_rope(q) if "q" in rotate else q
        k = apply_rope(k) if "k" in rotate else k
    return attention(q, k, k, return_scores=True)[2]  # q k^T / sqrt(d_h); the values play no part


def _rope_scores_reference(x: torch.Tensor, w_q: torch.Tensor, w_k: torch.Tensor, n_heads: int) -> torch.Tensor:
    return _scores(x, w_q, w_k, n_heads)


def _rope_before_split(x, w_q, w_k, n_heads):
    return _scores(x, w_q, w_k, n_heads, rotate_before_split=True)


def _split_without_transpose(x, w_q, w_k, n_heads):
    b, s, d = x.shape
    return _scores(x, w_q, w_k, n_heads, split=lambda t, h: t.reshape(b, h, s, d // h))


def _only_queries_rotated(x, w_q, w_k, n_heads):
    return _scores(x, w_q, w_k, n_heads, rotate="q")


def _scaled_by_model_width(x, w_q, w_k, n_heads):
    return _rope_scores_reference(x, w_q, w_k, n_heads) * math.sqrt(x.shape[-1] // n_heads) / math.sqrt(x.shape[-1])


def _no_rope(x, w_q, w_k, n_heads):
    return _scores(x, w_q, w_k, n_heads, rotate="")


def _interleaved_layout(x, w_q, w_k, n_heads):
    """Typical wrong answer: RoPE in the interleaved layout (apply_rope's default is half-split)."""
    q, k = split_heads(x @ w_q, n_heads), split_heads(x @ w_k, n_heads)  # (b, n_h, s, d_h) each
    q, k = apply_rope(q, layout="interleaved"), apply_rope(k, layout="interleaved")
    return attention(q, k, k, return_scores=True)[2]  # q k^T / sqrt(d_h)


def check_rope_scores(fn: Callable[..., torch.Tensor]) -> CheckResult:
    """Check ``fn(x, w_q, w_k, n_heads) -> scores``: multi-head attention scores with RoPE.

    ``x`` is ``(b, s, d)``, ``w_q`` and ``w_k`` are ``(d, d)``; the answer is
    ``(b, h, s, s)``: queries and keys projected, split into ``h`` heads of
    width ``d_h = d / h``, rotated per head by ``apply_rope`` (positions
    ``0 .. s-1``, half layout, base 10000), then ``q k^T / sqrt(d_h)``.
    """
    cases = []
    for b, s, d, h, seed in [(1, 4, 8, 2, 0), (2, 5, 16, 4, 1), (1, 7, 12, 1, 2), (3, 3, 24, 3, 3)]:
        gen = torch.Generator().manual_seed(10 + seed)
        x = torch.randn(b, s, d, generator=gen)
        w_q, w_k = torch.randn(d, d, generator=gen) / math.sqrt(d), torch.randn(d, d, generator=gen) / math.sqrt(d)
        cases.append(
            Case(
                f"x of shape {(b, s, d)} and n_heads={h}",
                (x, w_q, w_k, h),
                expected=_rope_scores_reference(x, w_q, w_k, h),
            )
        )
    return check_function(
        "Multi-head scores with RoPE",
        fn,
        cases,
        hint="project, split (b, s, d) -> (b, h, s, d_h) with view + transpose, apply pe.apply_rope to q and k "
        "(not v), then q @ k^T / sqrt(d_h)",
        diagnoses=[
            Diagnosis(
                "you rotated the full d-wide projection before splitting it into heads; RoPE works per "
                "head, with frequencies set by the head width d_h",
                _rope_before_split,
            ),
            Diagnosis(
                "reshaping (b, s, d) straight to (b, h, s, d_h) mixes positions and heads; view as "
                "(b, s, h, d_h) and then transpose(1, 2)",
                _split_without_transpose,
            ),
            Diagnosis(
                "only the queries are rotated; the key must be rotated by its own position too, or the "
                "score depends on the query's absolute position",
                _only_queries_rotated,
            ),
            Diagnosis("divide by sqrt(d_h), the head width, not sqrt(d)", _scaled_by_model_width),
            Diagnosis("these are the scores without any rotation: apply pe.apply_rope to q and k", _no_rope),
            Diagnosis(
                "you rotated in the interleaved layout; use pe.apply_rope's default half-split layout, the "
                "one the model uses",
                _interleaved_layout,
            ),
        ],
        compare=lambda got, expected: arrays_close(got, expected, atol=1e-4, rtol=1e-4),
    )
