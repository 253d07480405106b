"""Checker for chapter 13 (experiments on real text): the key set of the two-cause window test.

- ``check_key_set_mask(fn)``: ``fn(seq_len, n_keys, stride)`` returns the ``(s, s)`` score bias that
  lets query ``i`` see exactly the keys ``i, i - stride, ..., i - stride (n_keys - 1)`` (those that
  exist): 0 there, ``-inf`` everywhere else.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from ._core import Case, CheckResult, Diagnosis, check_function


def _mask(allowed: torch.Tensor) -> torch.Tensor:
    return torch.zeros(allowed.shape).masked_fill(~allowed, float("-inf"))


def _distances(seq_len: int) -> torch.Tensor:
    return torch.arange(seq_len)[:, None] - torch.arange(seq_len)[None, :]  # (s, s): i - j


def _reference(seq_len: int, n_keys: int, stride: int) -> torch.Tensor:
    r = _distances(seq_len)
    return _mask((r >= 0) & (r % stride == 0) & (r < stride * n_keys))


def _one_key_too_many(seq_len, n_keys, stride):
    r = _distances(seq_len)
    return _mask((r >= 0) & (r % stride == 0) & (r <= stride * n_keys))


def _future_keys_too(seq_len, n_keys, stride):
    r = _distances(seq_len)
    return _mask((r % stride == 0) & (r.abs() < stride * n_keys))


def _stride_on_the_key_index(seq_len, n_keys, stride):
    r = _distances(seq_len)
    j = torch.arange(seq_len)[None, :].expand(seq_len, -1)
    return _mask((r >= 0) & (j % stride == 0) & (r < stride * n_keys))


def _boolean_mask(seq_len, n_keys, stride):
    return _reference(seq_len, n_keys, stride) == 0


def check_key_set_mask(fn: Callable[[int, int, int], torch.Tensor]) -> CheckResult:
    """Check ``fn(seq_len, n_keys, stride) -> (seq_len, seq_len)`` tensor of 0 and ``-inf``."""
    cases = [
        Case(
            "seq_len=6, n_keys=6, stride=1", (6, 6, 1), expected=_reference(6, 6, 1), hint="stride 1: the causal mask"
        ),
        Case("seq_len=8, n_keys=3, stride=1", (8, 3, 1), expected=_reference(8, 3, 1), hint="a window of 3 keys"),
        Case("seq_len=12, n_keys=3, stride=2", (12, 3, 2), expected=_reference(12, 3, 2), hint="keys i, i-2, i-4"),
        Case(
            "seq_len=16, n_keys=4, stride=4", (16, 4, 4), expected=_reference(16, 4, 4), hint="keys i, i-4, ..., i-12"
        ),
    ]
    return check_function(
        "Key-set mask",
        fn,
        cases,
        hint="query i may see key j exactly when d = i - j satisfies 0 <= d, d % stride == 0 and d < stride * n_keys",
        diagnoses=[
            Diagnosis(
                "off by one: the farthest key is at distance stride * (n_keys - 1), not stride * n_keys",
                _one_key_too_many,
            ),
            Diagnosis("a causal model: keys after the query (j > i) must get -inf too", _future_keys_too),
            Diagnosis("the stride applies to the distance i - j, not to the key's index j", _stride_on_the_key_index),
            Diagnosis(
                "return the score bias itself: 0 where the key is allowed and -inf elsewhere, not a boolean mask",
                _boolean_mask,
            ),
        ],
    )
