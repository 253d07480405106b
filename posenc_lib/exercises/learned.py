"""Checker for the learned-positions chapter's coding exercise: how many training sequences reach each row.

The student writes ``fn(lengths, max_len)``: ``lengths`` is a 1-D integer tensor ``(b,)`` with the
lengths of the training sequences (each uses positions ``0 .. length - 1``, as in the chapter), and
``max_len`` is the number of rows of the learned table. It returns an integer tensor ``(max_len,)``
whose entry ``p`` is the number of sequences that look up row ``p``: the ones whose loss sends a
gradient into that row. The chapter shows that rows past a fixed training length keep their initial
values; this counts how *often* each row is trained when lengths vary (the last rows that exist may be
reached by few sequences). The answer runs with :class:`posenc_lib.LearnedPositionalEmbedding` and the
checker's :func:`reference_updates_per_row` switched off.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from ..learned import LearnedPositionalEmbedding
from ._core import Case, CheckResult, Diagnosis, arrays_close, check_function


def _validated(lengths: torch.Tensor, max_len: int) -> torch.Tensor:
    if not isinstance(lengths, torch.Tensor) or lengths.dim() != 1 or lengths.is_floating_point():
        raise TypeError(f"lengths must be a 1-D integer tensor (b,), got {lengths!r}")
    if not isinstance(max_len, int) or max_len < 1:
        raise ValueError(f"max_len must be a positive int, got {max_len!r}")
    if lengths.numel() and (int(lengths.min()) < 1 or int(lengths.max()) > max_len):
        raise ValueError(f"lengths must lie in 1 .. max_len={max_len}, got {lengths.tolist()}")
    return lengths


def reference_updates_per_row(lengths: torch.Tensor, max_len: int) -> torch.Tensor:
    """Entry ``p``: how many of the sequences, of lengths ``lengths`` ``(b,)``, look up row ``p``; shape ``(max_len,)``.

    A sequence of length ``n`` uses rows ``0 .. n - 1``, so row ``p`` is reached by the sequences with
    ``n > p``. Returned as int64 on ``lengths``'s device.
    """
    lengths = _validated(lengths, max_len)
    rows = torch.arange(max_len, device=lengths.device)  # (max_len,)
    return (rows[:, None] < lengths[None, :]).sum(dim=1)  # (max_len, b) -> (max_len,)


def _rows(max_len: int, lengths: torch.Tensor) -> torch.Tensor:
    return torch.arange(max_len, device=lengths.device)[:, None]  # (max_len, 1)


DIAGNOSES = [
    Diagnosis(
        "off by one: a sequence of n tokens uses rows 0 .. n - 1, so row p is reached by the sequences with "
        "n > p (row n itself is not looked up).",
        lambda lengths, max_len: (_rows(max_len, lengths) <= lengths[None]).sum(dim=1),
    ),
    Diagnosis(
        "you counted the sequences too short to reach row p; row p is looked up by every sequence longer than p.",
        lambda lengths, max_len: (_rows(max_len, lengths) >= lengths[None]).sum(dim=1),
    ),
    Diagnosis(
        "you returned whether a row is reached at all (0 or 1); the question is how many sequences reach it.",
        lambda lengths, max_len: (_rows(max_len, lengths)[:, 0] < lengths.max()).long(),
    ),
    Diagnosis(
        "you returned fractions of the sequences; return the count (an integer per row).",
        lambda lengths, max_len: reference_updates_per_row(lengths, max_len).double() / len(lengths),
    ),
    Diagnosis(
        "one entry per row of the table, max_len of them: rows past the longest sequence are reached by "
        "no sequence and get 0.",
        lambda lengths, max_len: reference_updates_per_row(lengths, max_len)[: int(lengths.max())],
    ),
    Diagnosis(
        "you counted tokens, not sequences: each sequence that reaches row p looks it up once (at its "
        "position p), whatever its length.",
        lambda lengths, max_len: ((_rows(max_len, lengths) < lengths[None]) * lengths[None]).sum(dim=1),
    ),
]

UPDATES_HINT = (
    "a sequence of n tokens looks up rows 0 .. n - 1, once each; row p is reached by every sequence with "
    "n > p. Return a tensor of max_len integers: entry p counts those sequences."
)


def _compare(got: Any, expected: Any) -> bool:
    return arrays_close(got, expected, atol=0.0, rtol=0.0)  # counts: exact


def _cases() -> list[Case]:
    def case(label: str, lengths: list[int] | torch.Tensor, max_len: int, hint: str = "") -> Case:
        lengths = torch.as_tensor(lengths)
        return Case(label, (lengths, max_len), expected=reference_updates_per_row(lengths, max_len), hint=hint)

    return [
        case("lengths [3, 5, 5, 8], max_len=10", [3, 5, 5, 8], 10),
        case(
            "the chapter's probe: 32 sequences of 48 tokens, max_len=64",
            [48] * 32,
            64,
            "rows 0..47 are reached by all 32 sequences, rows 48..63 by none.",
        ),
        case(
            "one sequence as long as the table: lengths [10], max_len=10",
            [10],
            10,
            "a sequence of max_len tokens reaches the last row, max_len - 1.",
        ),
        case("lengths [1, 1, 2], max_len=4", [1, 1, 2], 4, "a sequence of one token uses row 0 only."),
        case(
            "BERT's schedule per 100 steps of one sequence: 90 of 128 tokens, then 10 of 512; max_len=512",
            [128] * 90 + [512] * 10,
            512,
        ),
        case(
            "200 lengths drawn from 1..64 (unsorted), max_len=64",
            torch.randint(1, 65, (200,), generator=torch.Generator().manual_seed(3)),
            64,
        ),
    ]


def check_updates_per_row(fn: Callable[[torch.Tensor, int], Any]) -> CheckResult:
    """Check ``fn(lengths, max_len)`` ``(b,) -> (max_len,)``: how many of the sequences look up each row.

    Exact integer counts pass as a torch or NumPy array of any numeric dtype. The answer runs with
    :class:`posenc_lib.LearnedPositionalEmbedding` and :func:`reference_updates_per_row` switched off.
    """
    return check_function(
        "How many training sequences reach each row?",
        fn,
        _cases(),
        hint=UPDATES_HINT,
        diagnoses=DIAGNOSES,
        compare=_compare,
        forbidden=[LearnedPositionalEmbedding, reference_updates_per_row],
    )
