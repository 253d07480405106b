"""Checkers for chapter 8 (longer contexts for RoPE): NTK-aware frequencies, Llama 3.1's groups.

- ``check_ntk_frequencies(fn)``: ``fn(head_dim, factor, base=10000.0)`` returns the ``(d_h/2,)``
  RoPE frequencies of NTK-aware scaling; the reference is :func:`posenc_lib.ntk_aware_frequencies`
  applied to :func:`posenc_lib.rope_frequencies`, both switched off while the answer runs.
- ``check_llama3_groups(fn)``: ``fn(frequencies, original_len)`` returns how many pairs Llama 3.1's
  rule leaves unchanged, blends and divides, ``(unchanged, blended, divided)``;
  :func:`posenc_lib.llama3_frequencies` is switched off while the answer runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from ..rope import rope_frequencies
from ..rope_scaling import dynamic_ntk_frequencies, llama3_frequencies, ntk_aware_base, ntk_aware_frequencies
from ._core import Case, CheckResult, Diagnosis, arrays_close, check_function

# --- NTK-aware frequencies ---------------------------------------------------------------------

NTK_SETTINGS = [  # (head_dim, factor, base)
    (8, 2.0, 10000.0),
    (128, 4.0, 10000.0),
    (64, 8.0, 500000.0),
    (4, 3.0, 10000.0),
    (16, 1.0, 10000.0),
]


NTK_CODE = (ntk_aware_frequencies, ntk_aware_base, dynamic_ntk_frequencies, rope_frequencies)
NTK_HINT = (
    "compute the new base b' = base * factor ** (d / (d - 2)) and return the standard frequencies "
    "b' ** (-2k / d) for k = 0 .. d/2 - 1, as a tensor of shape (d/2,)."
)


def _theta(head_dim: int, base: float, exponent: float = 2.0) -> torch.Tensor:
    """``base^(-exponent k / d)`` for ``k = 0 .. d/2 - 1``, float64 ``(d/2,)``."""
    return base ** (-exponent * torch.arange(head_dim // 2, dtype=torch.float64) / head_dim)


def _ntk(head_dim: int, factor: float, base: float = 10000.0) -> torch.Tensor:
    """The reference: the standard frequencies with the base enlarged to ``base * factor^(d / (d - 2))``."""
    return _theta(head_dim, base * factor ** (head_dim / (head_dim - 2)))


def _ntk_with_base(
    new_base: Callable[[float, int, float], float], exponent: float = 2.0
) -> Callable[..., torch.Tensor]:
    def wrong(head_dim: int, factor: float, base: float = 10000.0) -> torch.Tensor:
        return _theta(head_dim, new_base(base, head_dim, factor), exponent)

    return wrong


def _explain_frequencies(got: Any, expected: Any) -> str:
    """For an answer of the form b'^(-2k/d) with the wrong b': say which b' it used and which one is right."""
    got = torch.as_tensor(got, dtype=torch.float64).flatten()
    if got.shape != expected.shape or got.numel() < 2 or not (got > 0).all() or abs(float(got[0]) - 1) > 1e-6:
        return ""
    d = 2 * got.numel()
    implied = float(got[1]) ** (-d / 2)  # theta_1 = b'^(-2/d)
    if not torch.allclose(got, implied ** (-2.0 * torch.arange(d // 2, dtype=torch.float64) / d), rtol=1e-4):
        return ""
    right = float(expected[1]) ** (-d / 2)
    return (
        f"your frequencies have the right form b'^(-2k/d), but with b' = {implied:.6g}; the enlarged base is "
        f"b' = base * factor^(d / (d - 2)) = {right:.6g} here."
    )


def _compare_frequencies(got: Any, expected: Any) -> bool:
    return arrays_close(got, expected, atol=0.0, rtol=1e-5)  # float32 answers are fine


def check_ntk_frequencies(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(head_dim, factor, base=10000.0)`` against NTK-aware scaled RoPE frequencies ``(d/2,)``."""
    hints = {500000.0: "use the base argument (here 500000), not 10000.", 1.0: "factor 1 changes nothing."}
    cases = [
        Case(
            f"head_dim={d}, factor={s}, base={b:g}", (d, s), {"base": b}, _ntk(d, s, b), hints.get(b, hints.get(s, ""))
        )
        for d, s, b in NTK_SETTINGS
    ]
    return check_function(
        "NTK-aware frequencies",
        fn,
        cases,
        hint=NTK_HINT,
        diagnoses=[
            Diagnosis(
                "you divided every frequency by the factor: that is position interpolation. NTK-aware scaling "
                "changes the base instead, so the fast pairs keep (almost) their frequency.",
                lambda d, s, base=10000.0: _theta(d, base) / s,
            ),
            Diagnosis(
                "you multiplied the base by the factor. The exponent d / (d - 2) is what makes the slowest pair "
                "(k = d/2 - 1) slow down by exactly the factor.",
                _ntk_with_base(lambda b, d, s: b * s),
            ),
            Diagnosis(
                "your exponent is upside down: the base is multiplied by factor ** (d / (d - 2)), not ** ((d - 2) / d).",
                _ntk_with_base(lambda b, d, s: b * s ** ((d - 2) / d)),
            ),
            Diagnosis(
                "the base argument is ignored: start from the base you are given, not from 10000.",
                lambda d, s, base=10000.0: _ntk(d, s, 10000.0),
            ),
            Diagnosis(
                "you returned the original frequencies: the factor has no effect in your answer.",
                lambda d, s, base=10000.0: _theta(d, base),
            ),
            Diagnosis(
                "the new base is right but the frequencies use b'^(-k/d); RoPE's are b'^(-2k/d), k = 0 .. d/2 - 1.",
                _ntk_with_base(lambda b, d, s: b * s ** (d / (d - 2)), exponent=1.0),
            ),
        ],
        compare=_compare_frequencies,
        explain=_explain_frequencies,
        forbidden=NTK_CODE,
    )


# --- Llama 3.1's frequency groups --------------------------------------------------------------

LLAMA3_HINT = (
    "a pair turns L * theta_k / (2 pi) times in the first L tokens. Count the pairs with more than 4 turns "
    "(unchanged), fewer than 1 (divided by the factor) and the rest, 1 to 4 turns inclusive (blended); "
    "return (unchanged, blended, divided)."
)


def _groups(
    frequencies: torch.Tensor, original_len: int, *, turns_per: float = 2 * math.pi, inclusive: bool = True
) -> tuple[int, int, int]:
    """(unchanged, blended, divided) with ``turns = L theta / turns_per``; boundaries blended unless ``inclusive`` is False."""
    turns = original_len * frequencies.double() / turns_per  # (d/2,) full turns within the original length
    unchanged = int((turns > 4).sum() if inclusive else (turns >= 4).sum())
    divided = int((turns < 1).sum() if inclusive else (turns <= 1).sum())
    return unchanged, turns.numel() - unchanged - divided, divided


def _same_counts(got: Any, expected: tuple[int, int, int]) -> bool:
    """Three whole numbers (a tuple, list or tensor of them), equal to the expected counts."""
    values = [
        v.item() if isinstance(v, torch.Tensor) else v for v in (got.tolist() if isinstance(got, torch.Tensor) else got)
    ]
    return len(values) == 3 and all(float(v) == float(e) and not isinstance(v, bool) for v, e in zip(values, expected))


def check_llama3_groups(fn: Callable[[torch.Tensor, int], Any]) -> CheckResult:
    """Check ``fn(frequencies, original_len) -> (unchanged, blended, divided)``: how Llama 3.1's rule groups the pairs.

    A pair is unchanged if it turns more than 4 times in ``original_len`` tokens, divided by the factor if
    it turns less than once, blended otherwise (exactly 1 or 4 turns included), as
    :func:`posenc_lib.llama3_frequencies` does with its default thresholds; that function is switched off.
    """
    llama = 500000.0 ** (-2.0 * torch.arange(64, dtype=torch.float64) / 128)  # d_h = 128, base 500,000
    small = 10000.0 ** (-2.0 * torch.arange(32, dtype=torch.float64) / 64)
    edges = 2 * math.pi * torch.tensor([4.0, 1.0, 4.5, 0.5, 2.0], dtype=torch.float64) / 8192  # 4, 1, 4.5, 0.5, 2 turns
    boundary = "a pair that turns exactly 4 times or exactly once is blended: only MORE than 4 turns keeps it, FEWER than 1 divides it."
    settings = [
        ("Llama 3.1: head_dim=128, base=500000, original_len=8192", llama, 8192, ""),
        ("head_dim=64, base=10000, original_len=4096", small, 4096, ""),
        ("5 pairs turning 4, 1, 4.5, 0.5 and 2 times in original_len=8192", edges, 8192, boundary),
        ("the same 5 pairs with original_len=2048 (1, 0.25, 1.125, 0.125, 0.5 turns)", edges, 2048, boundary),
    ]
    cases = [Case(label, (theta, n), {}, _groups(theta, n), hint) for label, theta, n, hint in settings]
    return check_function(
        "Llama 3.1's frequency groups",
        fn,
        cases,
        hint=LLAMA3_HINT,
        diagnoses=[
            Diagnosis(
                "your order is (divided, blended, unchanged); return (unchanged, blended, divided).",
                lambda f, n: _groups(f, n)[::-1],
            ),
            Diagnosis(
                "a full turn is 2 pi radians: the number of turns is L * theta / (2 pi), not L * theta.",
                lambda f, n: _groups(f, n, turns_per=1.0),
            ),
            Diagnosis("a full turn is 2 pi radians, not pi.", lambda f, n: _groups(f, n, turns_per=math.pi)),
            Diagnosis(
                "a pair at exactly 4 turns or exactly 1 turn is blended: unchanged needs MORE than 4 turns "
                "(> 4, not >= 4), divided FEWER than 1 (< 1, not <= 1).",
                lambda f, n: _groups(f, n, inclusive=False),
            ),
        ],
        compare=_same_counts,
        forbidden=[llama3_frequencies],
    )
