"""Checkers for chapter 7 (relative position biases): T5's buckets, and the buckets training never reaches.

- ``check_t5_bucket(fn)``: ``fn(relative_position, bidirectional=True, num_buckets=32,
  max_distance=128)`` returns T5's bucket for every entry of an integer tensor; the reference is
  :func:`posenc_lib.t5_relative_position_bucket`, which with :class:`posenc_lib.T5RelativeBias` is
  switched off while the answer runs. The cases avoid the few settings where float64 and float32
  arithmetic put a distance in different buckets, so an answer in either precision passes.
- ``check_untrained_buckets(fn)``: ``fn(train_len, num_buckets=32, max_distance=128)`` returns the
  causal T5 buckets (sorted) that training on ``train_len`` tokens never uses.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from ..relative import T5RelativeBias, relative_positions, t5_relative_position_bucket
from ._core import Case, CheckResult, Diagnosis, arrays_close, check_function

# --- T5 relative position buckets --------------------------------------------------------------


def _bucket_wrong(
    relative_position: torch.Tensor,
    bidirectional: bool = True,
    num_buckets: int = 32,
    max_distance: int = 128,
    *,
    halve: bool = True,
    cap: bool = True,
    causal_abs: bool = False,
    full_offset: bool = False,
    rounding: bool = False,
) -> torch.Tensor:
    """The bucket rule with one typical mistake switched on (for diagnoses)."""
    relative_position = relative_position.long()
    bucket = torch.zeros_like(relative_position)
    if bidirectional:
        offset = num_buckets
        if halve:
            num_buckets //= 2
        bucket = bucket + (relative_position > 0).long() * (offset if full_offset else num_buckets)
        distance = relative_position.abs()
    else:
        distance = relative_position.abs() if causal_abs else (-relative_position).clamp(min=0)
    max_exact = num_buckets // 2
    scaled = distance.clamp(min=max_exact).float() / max_exact
    fraction = torch.log(scaled) / math.log(max_distance / max_exact) * (num_buckets - max_exact)
    log_bucket = max_exact + (fraction.round() if rounding else fraction).long()
    if cap:
        log_bucket = log_bucket.clamp(max=num_buckets - 1)
    return bucket + torch.where(distance < max_exact, distance, log_bucket)


def _bucket_cases() -> list[Case]:
    def case(label: str, relative: torch.Tensor, hint: str = "", **kwargs: Any) -> Case:
        return Case(label, (relative,), kwargs, t5_relative_position_bucket(relative, **kwargs), hint)

    return [
        case("relative positions -200..200, T5's defaults (bidirectional, 32 buckets, 128)", torch.arange(-200, 201)),
        case(
            "relative positions -200..200, bidirectional=False",
            torch.arange(-200, 201),
            "causal: the distance is max(0, -relative position), so every future key is in bucket 0.",
            bidirectional=False,
        ),
        case(
            "the (6, 10) matrix relative_positions(6, 10), num_buckets=16, max_distance=64",
            relative_positions(6, 10),
            num_buckets=16,
            max_distance=64,
        ),
        case(
            "relative positions -3000..3000, bidirectional=False, num_buckets=64, max_distance=256",
            torch.arange(-3000, 3001),
            "distances beyond max_distance all share the last bucket, n - 1.",
            bidirectional=False,
            num_buckets=64,
            max_distance=256,
        ),
    ]


def _explain_buckets(got: Any, expected: Any) -> str:
    """Past and future keys at the same distance in the same bucket: the directions are not told apart."""
    got = torch.as_tensor(got)
    if (
        got.shape != expected.shape
        or got.dim() != 1
        or got.numel() % 2 == 0
        or bool((expected == expected.flip(0)).all())
    ):
        return ""
    if bool((got == got.flip(0)).all()):
        return (
            "your buckets are the same for relative positions r and -r: in the bidirectional case future keys "
            "(r > 0) use the upper half of the buckets (add num_buckets // 2)."
        )
    return ""


def _compare_buckets(got: Any, expected: Any) -> bool:
    return arrays_close(got, expected, atol=0.0, rtol=0.0)  # integer buckets: exact


def check_t5_bucket(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(relative_position, bidirectional=True, num_buckets=32, max_distance=128)`` against T5's buckets."""
    return check_function(
        "T5 relative position buckets",
        fn,
        _bucket_cases(),
        forbidden=(t5_relative_position_bucket, T5RelativeBias),
        hint=(
            "bidirectional: use half of the buckets per direction (future keys, relative position > 0, add "
            "num_buckets // 2) and work with |relative position|; causal: distance = max(0, -relative position). "
            "With n buckets per direction, distances below n // 2 are their own bucket; a larger distance r goes to "
            "n//2 + int(log(r / (n//2)) / log(max_distance / (n//2)) * (n - n//2)), capped at n - 1."
        ),
        diagnoses=[
            Diagnosis(
                "your buckets are mirrored: the relative position is the key's position minus the query's, so keys "
                "in the past are negative and use the lower half of the buckets.",
                lambda r, **kw: t5_relative_position_bucket(-r, **kw),
            ),
            Diagnosis(
                "in the bidirectional case each direction gets only half of the buckets (num_buckets // 2); "
                "the exact and logarithmic ranges are computed from that half.",
                lambda r, **kw: _bucket_wrong(r, **kw, halve=False),
            ),
            Diagnosis(
                "distances beyond max_distance must all share the last bucket of their direction: cap the "
                "logarithmic bucket at (buckets per direction) - 1.",
                lambda r, **kw: _bucket_wrong(r, **kw, cap=False),
            ),
            Diagnosis(
                "with bidirectional=False only the past counts: the distance is max(0, -relative position), so every "
                "future key falls into bucket 0 (the causal mask hides those keys anyway). You used |relative position|.",
                lambda r, **kw: _bucket_wrong(r, **kw, causal_abs=True),
            ),
            Diagnosis(
                "future keys are shifted by num_buckets // 2 (the half each direction gets), not by the full "
                "num_buckets: halve first, then add the halved count for relative position > 0.",
                lambda r, **kw: _bucket_wrong(r, **kw, full_offset=True),
            ),
            Diagnosis(
                "you rounded the logarithmic bucket; T5 truncates it (int(...), .long() or floor) before the cap.",
                lambda r, **kw: _bucket_wrong(r, **kw, rounding=True),
            ),
        ],
        compare=_compare_buckets,
        explain=_explain_buckets,
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
