"""Checker for the ALiBi chapter's coding exercise: the per-head slopes, for any head count.

The student's function is ``fn(n_heads) -> sequence of n_heads floats`` (a list
or a tensor). The reference is :func:`posenc_lib.alibi_slopes`, which follows
the ALiBi authors' code, including its order for head counts that are not a
power of two. The answer runs with posenc_lib's ALiBi code (:func:`posenc_lib.alibi_slopes`,
:func:`posenc_lib.alibi_bias`, :func:`posenc_lib.alibi_bias_compact`) switched off.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from .. import fast
from ..alibi import alibi_bias, alibi_bias_compact, alibi_slopes
from ._core import Case, CheckResult, Diagnosis, arrays_close, check_function

HEAD_COUNTS = (8, 12, 6, 16, 24, 1)
ALIBI_CODE = (alibi_slopes, alibi_bias, alibi_bias_compact, fast.alibi_bias, fast.alibi_bias_compact)
SLOPES_HINT = (
    "for a power of two n the slopes are 2^(-8/n), 2^(-16/n), ..., 2^(-8). Otherwise take the "
    "slopes for p = the largest power of two below n, then append the 1st, 3rd, 5th, ... slopes "
    "of the 2p-head sequence until you have n."
)
CASE_HINTS = {
    12: "12 heads is not a power of two: the 8-head slopes, then every other slope of the 16-head sequence.",
    1: "one head: the geometric sequence for n = 1 is the single slope 2^(-8).",
}


def _naive(n_heads: int) -> torch.Tensor:
    """2^(-8h/n), h = 1..n, for every n: right only for powers of two."""
    return torch.tensor([2.0 ** (-8.0 * h / n_heads) for h in range(1, n_heads + 1)], dtype=torch.float64)


def _zero_based(n_heads: int) -> torch.Tensor:
    """2^(-8h/p'), h = 0..: off by one, the first head gets slope 1."""
    slopes = alibi_slopes(n_heads)
    return slopes * 2.0 ** (8.0 / 2 ** math.floor(math.log2(n_heads)))


def _odd_extras(n_heads: int) -> torch.Tensor:
    """Extra heads taken from the 2p-head sequence at [1::2] -- those repeat the p-head slopes."""
    p = 2 ** math.floor(math.log2(n_heads))
    base = [2.0 ** (-8.0 * (h + 1) / p) for h in range(p)]
    extra = [2.0 ** (-8.0 * (h + 1) / (2 * p)) for h in range(2 * p)][1::2][: n_heads - p]
    return torch.tensor(base + extra, dtype=torch.float64)


def _first_extras(n_heads: int) -> torch.Tensor:
    """Extra heads taken as the first n-p of the 2p-head sequence instead of every other one."""
    p = 2 ** math.floor(math.log2(n_heads))
    base = [2.0 ** (-8.0 * (h + 1) / p) for h in range(p)]
    extra = [2.0 ** (-8.0 * (h + 1) / (2 * p)) for h in range(2 * p)][: n_heads - p]
    return torch.tensor(base + extra, dtype=torch.float64)


def _next_power_truncated(n_heads: int) -> torch.Tensor:
    """The slopes of the next power of two, cut to n: a different set from the authors'."""
    q = 2 ** math.ceil(math.log2(n_heads))
    return torch.tensor([2.0 ** (-8.0 * h / q) for h in range(1, n_heads + 1)], dtype=torch.float64)


def _compare(got: Any, expected: Any) -> bool:
    return arrays_close(got, expected, atol=0.0, rtol=1e-6)  # float32 answers are fine


def check_alibi_slopes(fn: Callable[[int], Any]) -> CheckResult:
    """Check ``fn(n_heads)`` against the ALiBi authors' slopes for 8, 12, 6, 16, 24 and 1 heads."""
    cases = [Case(f"n_heads={n}", (n,), {}, alibi_slopes(n), CASE_HINTS.get(n, "")) for n in HEAD_COUNTS]
    return check_function(
        "ALiBi slopes",
        fn,
        cases,
        hint=SLOPES_HINT,
        diagnoses=[
            Diagnosis(
                "that is 2^(-8h/n) for every n. It is right for powers of two only; for other head counts "
                "the authors keep the slopes of the largest power of two below n and add extra ones.",
                _naive,
            ),
            Diagnosis(
                "your slopes are sorted; the authors' list is not: the p slopes of the power of two come first, "
                "the extra heads' slopes are appended after them. Do not sort.",
                lambda n: alibi_slopes(n).sort(descending=True).values,
            ),
            Diagnosis(
                "your slopes are sorted in increasing order; do not sort at all.",
                lambda n: alibi_slopes(n).sort().values,
            ),
            Diagnosis("off by one: the first head's slope is 2^(-8/n), not 1 (count heads from 1).", _zero_based),
            Diagnosis(
                "the extra slopes repeat ones you already have: from the 2p-head sequence take the 1st, 3rd, "
                "5th, ... entries ([0::2] in Python), not [1::2].",
                _odd_extras,
            ),
            Diagnosis(
                "the extra slopes should be every other entry of the 2p-head sequence ([0::2]), "
                "not its first n - p entries.",
                _first_extras,
            ),
            Diagnosis(
                "these are the first n slopes of the next power of two (2^(-8h/16) for 12 heads); the authors keep "
                "the slopes of the power of two BELOW n and add every other slope of twice that many heads.",
                _next_power_truncated,
            ),
        ],
        compare=_compare,
        forbidden=ALIBI_CODE,
    )
