"""Checkers for chapter 7 (relative position biases): where T5's buckets start, and the buckets training never reaches.

- ``check_bucket_starts(fn)``: ``fn(num_buckets=32, max_distance=128, bidirectional=False)`` returns,
  for each bucket of one direction, the smallest past distance in it (``None`` for a bucket no distance
  reaches): T5's rule inverted, a step the chapter does not show (it scans distances). The reference
  reads :func:`posenc_lib.t5_relative_position_bucket`, which with :class:`posenc_lib.T5RelativeBias`
  is switched off while the answer runs. In the cases the ceiling of the inverted rule is the same in
  float32 and float64, so an answer in either precision passes.
- ``check_untrained_buckets(fn)``: ``fn(train_len, num_buckets=32, max_distance=128)`` returns the
  causal T5 buckets (sorted) that training on ``train_len`` tokens never uses.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from ..relative import T5RelativeBias, t5_relative_position_bucket
from ._core import Case, CheckResult, Diagnosis, check_function

# --- where each T5 bucket starts ---------------------------------------------------------------


def _starts(num_buckets: int, max_distance: int, bidirectional: bool) -> list[int | None]:
    """The smallest past distance of each bucket of one direction (``None``: no distance reaches it).

    Read off :func:`posenc_lib.t5_relative_position_bucket` on every distance up to a bound past
    ``max_distance`` (the last bucket holds every larger one).
    """
    per_direction = num_buckets // 2 if bidirectional else num_buckets
    distance = torch.arange(4 * max_distance + per_direction)  # (t,)
    bucket = t5_relative_position_bucket(
        -distance, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
    )
    starts: list[int | None] = []
    for k in range(per_direction):
        hits = torch.nonzero(bucket == k)
        starts.append(int(distance[hits[0, 0]]) if len(hits) else None)
    return starts


def _formula_starts(
    num_buckets: int, max_distance: int, bidirectional: bool, *, rounding: str = "ceil", empty: bool = True
) -> list[int | None]:
    """The starts from the inverted rule with one typical mistake switched on (for diagnoses)."""
    n = num_buckets // 2 if bidirectional else num_buckets
    exact = n // 2
    starts: list[int | None] = list(range(exact))
    for k in range(exact, n):
        value = exact * (max_distance / exact) ** ((k - exact) / (n - exact))
        starts.append(math.ceil(value) if rounding == "ceil" else int(value))
    if empty:
        starts = [t if k == n - 1 or t != starts[k + 1] else None for k, t in enumerate(starts)]
    return starts


def _compare_starts(got: Any, expected: list[int | None]) -> bool:
    if isinstance(got, torch.Tensor):
        got = got.tolist()
    if not isinstance(got, (list, tuple)) or len(got) != len(expected):
        return False
    return all(
        (g is None and e is None) or (e is not None and g is not None and not isinstance(g, bool) and g == e)
        for g, e in zip(got, expected)
    )


def check_bucket_starts(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(num_buckets=32, max_distance=128, bidirectional=False)``: the first distance of each bucket.

    The answer is a list with one entry per bucket of one direction (``num_buckets``, or half of
    them when ``bidirectional``): the smallest past distance ``t = -r`` in that bucket, or ``None`` for
    a bucket no distance reaches. It runs with :func:`posenc_lib.t5_relative_position_bucket` and
    :class:`posenc_lib.T5RelativeBias` switched off.
    """
    settings = [  # (num_buckets, max_distance, bidirectional, hint)
        (32, 128, False, "T5's decoder: 32 causal buckets, max_distance 128."),
        (32, 128, True, "T5's encoder: 16 buckets per direction."),
        (16, 64, False, ""),
        (32, 32, False, "max_distance 32 with 16 logarithmic buckets: one of them holds no distance at all."),
        (64, 64, False, "64 buckets, max_distance 64: two buckets hold no distance."),
    ]
    cases = [
        Case(
            f"num_buckets={n}, max_distance={m}, bidirectional={b}",
            (),
            {"num_buckets": n, "max_distance": m, "bidirectional": b},
            _starts(n, m, b),
            hint,
        )
        for n, m, b, hint in settings
    ]
    return check_function(
        "Where each T5 bucket starts",
        fn,
        cases,
        forbidden=(t5_relative_position_bucket, T5RelativeBias),
        hint=(
            "with n buckets per direction and m = n // 2, bucket k < m starts at k; for k >= m the rule "
            "m + floor(ln(t/m) / ln(D/m) * (n - m)) >= k gives t >= m (D/m)^((k - m)/(n - m)), so the start is the "
            "smallest integer at or above that; a bucket whose start equals the next one's holds no distance."
        ),
        diagnoses=[
            Diagnosis(
                "only the first m = n // 2 buckets hold one distance each (bucket k < m starts at k); from m on a "
                "bucket holds a range of distances that widens logarithmically up to max_distance.",
                lambda **kw: list(range(kw["num_buckets"] // 2 if kw["bidirectional"] else kw["num_buckets"])),
            ),
            Diagnosis(
                "two buckets got the same start: when a step of one distance jumps over a bucket, that bucket holds "
                "no distance at all. Return None for it (its start is also the next bucket's start).",
                lambda **kw: _formula_starts(**kw, empty=False),
            ),
            Diagnosis(
                "you rounded down: the start of bucket k is the smallest integer t with t >= m (D/m)^((k-m)/(n-m)), "
                "the ceiling; the floor is a distance that still belongs to bucket k - 1.",
                lambda **kw: _formula_starts(**kw, rounding="floor"),
            ),
            Diagnosis(
                "in the bidirectional case each direction has num_buckets // 2 buckets; the list has one entry per "
                "bucket of one direction, with m and n computed from that half.",
                lambda **kw: _starts(kw["num_buckets"] * 2, kw["max_distance"], True) if kw["bidirectional"] else None,
            ),
        ],
        compare=_compare_starts,
    )


# --- T5 buckets a short training never reaches -------------------------------------------------


def _untrained_buckets(
    train_len: int, num_buckets: int = 32, max_distance: int = 128, *, bidirectional: bool = False, first: int = 0
) -> list[int]:
    """The causal buckets that no distance ``first .. train_len - 1`` uses, in increasing order."""
    distance = torch.arange(max(train_len, max_distance) + 1)  # every bucket has a distance in here
    bucket = t5_relative_position_bucket(
        -distance, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
    )
    every = set(range(num_buckets // 2)) if bidirectional else set(range(num_buckets))  # the past's buckets
    return sorted(every - set(bucket[first:train_len].tolist()))


def _untrained_cases() -> list[Case]:
    settings = [  # (train_len, num_buckets, max_distance, hint)
        (64, 32, 128, "T5's decoder settings, trained on 64 tokens"),
        (16, 32, 128, "16 tokens reach only the exact buckets 0..15"),
        (200, 32, 128, "200 tokens reach every bucket: an empty list"),
        (113, 32, 128, "distance 113 is the first of the last bucket: 113 tokens (distances 0..112) miss it"),
        (114, 32, 128, "114 tokens reach distance 113, the first of the last bucket"),
        (10, 8, 20, "8 buckets, max_distance 20"),
    ]
    return [
        Case(
            f"train_len={n}, num_buckets={b}, max_distance={m}",
            (n,),
            {"num_buckets": b, "max_distance": m},
            expected=_untrained_buckets(n, b, m),
            hint=hint,
        )
        for n, b, m, hint in settings
    ]


def check_untrained_buckets(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(train_len, num_buckets=32, max_distance=128)``: the causal T5 buckets (a sorted list) that
    training on ``train_len`` tokens never uses."""
    return check_function(
        "T5 buckets a short training never reaches",
        fn,
        _untrained_cases(),
        hint=(
            "training on train_len tokens shows the causal distances 0 .. train_len - 1; compute their buckets "
            "(bidirectional=False, relative position = -distance) and return, sorted, every bucket 0 .. "
            "num_buckets - 1 that is not among them."
        ),
        diagnoses=[
            Diagnosis(
                "a decoder's buckets are causal (bidirectional=False): all num_buckets of them describe the past.",
                lambda n, **kw: _untrained_buckets(n, **kw, bidirectional=True),
            ),
            Diagnosis(
                "off by one: training on train_len tokens shows distances 0 .. train_len - 1, not 0 .. train_len.",
                lambda n, **kw: _untrained_buckets(n + 1, **kw),
            ),
            Diagnosis(
                "distance 0 (a token attending to itself) is part of training too: it is bucket 0.",
                lambda n, **kw: _untrained_buckets(n, **kw, first=1),
            ),
        ],
        compare=lambda got, expected: list(got) == expected if isinstance(got, (list, tuple)) else False,
    )
