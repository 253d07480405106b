"""Checker for the experiments chapter's coding exercise: an ALiBi bias that can tell left from right.

The student's function is ``fn(slopes_past, slopes_future, seq_len) -> (h, s, s)``
(torch or numpy): for query ``i`` and key ``j`` of head ``h``,

- ``-slopes_past[h] * (i - j)`` when the key is at or before the query (``j <= i``),
- ``-slopes_future[h] * (j - i)`` when it is after (``j > i``).

With equal slopes on both sides this is the symmetric bias ``-m |i - j|`` of
:func:`posenc_lib.alibi_bias` with ``causal=False``, which cannot tell a
sequence from its reversal; different slopes can.
"""

from __future__ import annotations

from typing import Any, Callable

import torch

from ._core import Case, CheckResult, Diagnosis, check_function


def _offsets(seq_len: int) -> torch.Tensor:
    """``i - j`` for query ``i`` (rows) and key ``j`` (columns), ``(s, s)`` float64."""
    positions = torch.arange(seq_len, dtype=torch.float64)
    return positions[:, None] - positions[None, :]


def _as_column(slopes: Any) -> torch.Tensor:
    return torch.as_tensor(slopes, dtype=torch.float64).reshape(-1, 1, 1)  # (h, 1, 1)


def _directional(slopes_past: Any, slopes_future: Any, seq_len: int) -> torch.Tensor:
    """The reference answer, ``(h, s, s)`` float64."""
    offset = _offsets(seq_len)  # (s, s), > 0 for keys in the past
    past = -_as_column(slopes_past) * offset.clamp(min=0)  # (h, s, s)
    future = -_as_column(slopes_future) * (-offset).clamp(min=0)  # (h, s, s)
    return past + future


def _symmetric(slopes_past: Any, slopes_future: Any, seq_len: int) -> torch.Tensor:
    return -_as_column(slopes_past) * _offsets(seq_len).abs()


def _swapped(slopes_past: Any, slopes_future: Any, seq_len: int) -> torch.Tensor:
    return _directional(slopes_future, slopes_past, seq_len)


def _positive(slopes_past: Any, slopes_future: Any, seq_len: int) -> torch.Tensor:
    return -_directional(slopes_past, slopes_future, seq_len)


def _causal(slopes_past: Any, slopes_future: Any, seq_len: int) -> torch.Tensor:
    bias = _directional(slopes_past, slopes_future, seq_len)
    return bias.masked_fill(_offsets(seq_len) < 0, float("-inf"))


def _first_head_only(slopes_past: Any, slopes_future: Any, seq_len: int) -> torch.Tensor:
    past, future = torch.as_tensor(slopes_past, dtype=torch.float64), torch.as_tensor(slopes_future, dtype=torch.float64)
    return _directional(past[:1].expand(past.shape[0]), future[:1].expand(future.shape[0]), seq_len)


DIAGNOSES = [
    Diagnosis(
        "this is the symmetric bias -m |i - j| with the past slopes on both sides: keys after the query "
        "must use slopes_future.",
        _symmetric,
    ),
    Diagnosis(
        "left and right are swapped: keys at or BEFORE the query (j <= i) use slopes_past, keys after it use "
        "slopes_future. Row i is the query, column j the key.",
        _swapped,
    ),
    Diagnosis("the bias must be a penalty: minus slope times distance, so it is <= 0 everywhere.", _positive),
    Diagnosis(
        "you masked the future with -inf: that is the decoder's causal ALiBi. The encoder attends both ways; "
        "future keys get -slopes_future[h] * (j - i).",
        _causal,
    ),
    Diagnosis(
        "every head got the first head's slopes: broadcast slopes of shape (h,) to (h, 1, 1) so head h "
        "uses its own slope.",
        _first_head_only,
    ),
]


def check_directional_alibi(fn: Callable[[Any, Any, int], Any]) -> CheckResult:
    """Check ``fn(slopes_past, slopes_future, seq_len) -> (h, s, s)`` against the direction-aware ALiBi bias."""
    inputs = [
        (torch.tensor([0.5, 0.25]), torch.tensor([0.125, 1.0]), 5),
        (torch.tensor([0.25, 0.0625, 0.015625, 0.00390625]), torch.tensor([0.5, 0.125, 0.03125, 0.0078125]), 7),
        (torch.tensor([1.0, 0.5, 0.25]), torch.tensor([0.0, 0.0, 0.0]), 4),
        (torch.tensor([0.5]), torch.tensor([0.25]), 1),
    ]
    cases = [
        Case(f"slopes_past={past.tolist()}, slopes_future={future.tolist()}, seq_len={s}", (past, future, s), {},
             _directional(past, future, s))
        for past, future, s in inputs
    ]
    return check_function(
        "Direction-aware ALiBi",
        fn,
        cases,
        hint="bias[h, i, j] = -slopes_past[h] * (i - j) for j <= i and -slopes_future[h] * (j - i) for j > i; "
        "shape (h, s, s), rows are queries.",
        diagnoses=DIAGNOSES,
    )
