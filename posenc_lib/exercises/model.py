"""Checkers for the exercises of chapters 1 (why order matters), 8 (where it plugs in),
9 (choosing an encoding) and 10 (interview questions).

The layout exercise (chapter 11) asks for what posenc_lib's permutations compute: they are
switched off while the answer runs (see ``_core``). The other three are meant to use the library.

The reference answers reuse the library's own pieces (``split_heads`` of the model,
``attention`` with ``return_scores=True``), so a checker and the model cannot disagree.

Every checker takes the student's function, runs it on fixed inputs (edge cases
included), prints a verdict with a hint, and returns a truthy/falsy
:class:`~posenc_lib.exercises.CheckResult`.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from ..attention import attention
from ..model import split_heads
from ..rope import (
    apply_rope,
    convert_qk_weight,
    half_to_interleaved_permutation,
    interleaved_to_half_permutation,
    rope_frequencies,
)
from ..sinusoidal import sinusoidal_encoding
from ..toy import ToyAttentionHead
from ._core import Case, CheckResult, Diagnosis, arrays_close, check_function

__all__ = [
    "check_fraction_unseen",
    "check_interleaved_to_half",
    "check_is_equivariant",
    "check_rope_scores",
]


# --------------------------------------------------------------------------- chapter 1


def _same_bool(got: Any, expected: Any) -> bool:
    """A yes/no answer must be a bool (Python, numpy or a one-element bool tensor), equal to the expected one."""
    if isinstance(got, torch.Tensor):
        if got.numel() != 1 or got.dtype != torch.bool:
            return False
        got = bool(got.item())
    if not isinstance(got, (bool, np.bool_)):
        return False
    return bool(got) == bool(expected)


class _Layer:
    """A named sequence layer ``(s, d) -> (s, d)`` (the name makes the verdict readable)."""

    def __init__(self, name: str, fn: Callable[[torch.Tensor], torch.Tensor]):
        self.name, self.fn = name, fn

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return self.fn(x)

    def __repr__(self) -> str:
        return self.name


def _equivariance_layers(d_model: int) -> list[tuple[_Layer, bool]]:
    """Layers ``(s, d) -> (s, d)`` with the right answer to "is it permutation-equivariant?"."""
    head = ToyAttentionHead.random(d_model, seed=3)
    gen = torch.Generator().manual_seed(4)
    w = torch.randn(d_model, d_model, generator=gen) / math.sqrt(d_model)

    def with_positions(x: torch.Tensor) -> torch.Tensor:
        table = sinusoidal_encoding(x.shape[0], d_model, dtype=x.dtype)  # (s, d)
        return head(x + table)[0]

    return [
        (_Layer("attention head, no positions", lambda x: head(x)[0]), True),
        (_Layer("attention head with a causal mask", lambda x: head(x, causal=True)[0]), False),
        (_Layer("per-token MLP tanh(x @ W)", lambda x: torch.tanh(x @ w)), True),
        (_Layer("sinusoidal positions added, then attention", with_positions), False),
        (_Layer("x + mean over tokens", lambda x: x + x.mean(dim=0, keepdim=True)), True),
        (_Layer("running sum over tokens (cumsum)", lambda x: x.cumsum(dim=0)), False),
        (_Layer("x + x reversed (symmetric under reversal only)", lambda x: x + x.flip(0)), False),
        (_Layer("mean over tokens, copied to every token", lambda x: x.mean(dim=0, keepdim=True).expand_as(x)), True),
        (
            _Layer(
                "a position vector per PAIR of tokens (0 and 1 share one, 2 and 3 the next, ...)",
                lambda x: x + (torch.arange(x.shape[0]) // 2).to(x.dtype)[:, None] * w[0],
            ),
            False,
        ),
    ]


def _permutations(seq_len: int, count: int = 10) -> list[torch.Tensor]:
    generator = torch.Generator().manual_seed(0)
    return [torch.randperm(seq_len, generator=generator) for _ in range(count)]


def _close(a: torch.Tensor, b: torch.Tensor) -> bool:
    return bool(torch.allclose(a, b, atol=1e-5))


def _invariance_test(layer, x):
    """Typical wrong answer: tests invariance, layer(P x) == layer(x)."""
    return all(_close(layer(x[perm]), layer(x)) for perm in _permutations(x.shape[0]))


def _reversal_only(layer, x):
    """Typical wrong answer: tries only one permutation, the reversal."""
    return _close(layer(x.flip(0)), layer(x).flip(0))


def _swap_first_two(layer, x):
    """Typical wrong answer: tries only the permutation that swaps tokens 0 and 1."""
    perm = torch.arange(x.shape[0])
    perm[:2] = perm[:2].flip(0)
    return _close(layer(x[perm]), layer(x)[perm])


def _inverse_permutation(layer, x):
    """Typical wrong answer: un-permutes the output with the inverse permutation."""
    return all(_close(layer(x[perm]), layer(x)[torch.argsort(perm)]) for perm in _permutations(x.shape[0]))


def _explain_bool(got: Any, expected: bool) -> str:
    if isinstance(got, (bool, np.bool_)) or (
        isinstance(got, torch.Tensor) and got.dtype == torch.bool and got.numel() == 1
    ):
        return ""
    return f"return a bool (True or False), not a {type(got).__name__}: e.g. bool(torch.allclose(...))."


EQUIVARIANCE_HINT = (
    "permute the tokens with several random permutations perm and compare layer(x[perm]) "
    "with layer(x)[perm] using torch.allclose; return a Python bool"
)


def check_is_equivariant(fn: Callable[[Callable, torch.Tensor], bool]) -> CheckResult:
    """Check ``fn(layer, x) -> bool``: is ``layer`` ((s, d) -> (s, d)) permutation-equivariant on ``x``?

    Right answer: ``layer(x[perm])`` equals ``layer(x)[perm]`` (within float
    tolerance) for several random permutations ``perm``. Among the layers, one commutes with
    the reversal only and one with swapping tokens 0 and 1 (and 2 and 3, ...) only, so an answer
    that tries only such a permutation fails.
    """
    d_model, seq_len = 8, 6
    x = torch.randn(seq_len, d_model, generator=torch.Generator().manual_seed(5))  # (s, d)
    cases = [Case(f"layer = {layer!r}", (layer, x), expected=answer) for layer, answer in _equivariance_layers(d_model)]
    return check_function(
        "Is this layer permutation-equivariant?",
        fn,
        cases,
        hint=EQUIVARIANCE_HINT,
        diagnoses=[
            Diagnosis(
                "your function returns False for every layer: an attention head without positions, a "
                "per-token MLP and a mean copied to every token are equivariant",
                lambda layer, x: False,
            ),
            Diagnosis(
                "your function returns True for every layer: compare layer(x[perm]) with layer(x)[perm] "
                "for permutations perm that actually move tokens",
                lambda layer, x: True,
            ),
            Diagnosis(
                "you tested invariance, layer(x[perm]) == layer(x), or un-shuffled the output with the inverse "
                "permutation (both give these verdicts); equivariance compares layer(x[perm]) with layer(x)[perm], "
                "the output shuffled the same way",
                _invariance_test,
            ),
            Diagnosis(
                "a single fixed permutation (the reversal) is not enough: some layers commute with it "
                "and with nothing else; try several random permutations",
                _reversal_only,
            ),
            Diagnosis(
                "swapping only tokens 0 and 1 is not enough: a layer can treat those two alike and still "
                "depend on order; use random permutations that move every token",
                _swap_first_two,
            ),
            Diagnosis(
                "you un-shuffled the output with the inverse permutation; if the input is x[perm], "
                "the output of an equivariant layer is layer(x)[perm]",
                _inverse_permutation,
            ),
        ],
        compare=_same_bool,
        explain=_explain_bool,
    )


# --------------------------------------------------------------------------- chapter 9


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


# --------------------------------------------------------------------------- chapter 10


def _fraction_unseen_reference(train_len: int, head_dim: int, base: float = 10000.0) -> float:
    theta = rope_frequencies(head_dim, base)  # (d/2,)
    largest_trained_angle = (train_len - 1) * theta  # (d/2,)
    return float((largest_trained_angle < 2 * math.pi).double().mean())


def _compares_with_one_radian(train_len, head_dim, base=10000.0):
    theta = rope_frequencies(head_dim, base)
    return float(((train_len - 1) * theta < 1.0).double().mean())


def _frequencies_without_factor_two(train_len, head_dim, base=10000.0):
    theta = base ** (-torch.arange(head_dim // 2, dtype=torch.float64) / head_dim)
    return float(((train_len - 1) * theta < 2 * math.pi).double().mean())


def _count_not_fraction(train_len, head_dim, base=10000.0):
    theta = rope_frequencies(head_dim, base)
    return float(((train_len - 1) * theta < 2 * math.pi).sum())


def _last_position_off_by_one(train_len, head_dim, base=10000.0):
    """``L * theta < 2 pi`` (equivalently: wavelength > L) instead of ``(L - 1) * theta < 2 pi``."""
    theta = rope_frequencies(head_dim, base)
    return float((train_len * theta < 2 * math.pi).double().mean())


def _fraction_of_all_coordinates(train_len, head_dim, base=10000.0):
    theta = rope_frequencies(head_dim, base)
    return float(((train_len - 1) * theta < 2 * math.pi).sum() / head_dim)


def check_fraction_unseen(fn: Callable[..., float]) -> CheckResult:
    """Check ``fn(train_len, head_dim, base=10000.0) -> float``.

    The answer is the fraction of RoPE's ``d/2`` pairs whose angles over the
    training positions ``0 .. train_len - 1`` do not complete one full turn,
    i.e. ``(train_len - 1) * theta_k < 2 pi`` with ``theta_k = base^(-2k/d)``.
    """
    cases = [
        Case(
            f"train_len={n}, head_dim={d}, base={b:g}",
            (n, d),
            {"base": b},
            expected=_fraction_unseen_reference(n, d, b),
        )
        for n, d, b in [
            (2048, 128, 10000.0),
            (4096, 128, 10000.0),
            (8192, 128, 500000.0),
            (512, 64, 10000.0),
            (1, 16, 10000.0),
            (100000, 64, 100.0),
        ]
    ]
    boundary = (
        "the positions are 0 .. L - 1, so the largest angle a pair reaches in training is (L - 1) * theta_k; "
        "here a wavelength lies between L - 1 and L, the case that tells (L - 1) * theta from L * theta."
    )
    cases += [
        Case(
            "train_len=7, head_dim=2 (one pair, theta = 1, wavelength 2 pi = 6.28: between L - 1 = 6 and L = 7)",
            (7, 2),
            {"base": 10000.0},
            expected=_fraction_unseen_reference(7, 2),
            hint=boundary,
        ),
        Case(
            "train_len=63, head_dim=4, base=100 (theta_1 = 0.1, wavelength 62.8: between 62 and 63)",
            (63, 4),
            {"base": 100.0},
            expected=_fraction_unseen_reference(63, 4, 100.0),
            hint=boundary,
        ),
    ]
    return check_function(
        "Pairs that never turn a full circle in training",
        fn,
        cases,
        hint="theta_k = base ** (-2k / head_dim) for k = 0 .. head_dim/2 - 1; a pair has seen every direction "
        "if (train_len - 1) * theta_k >= 2 pi; return the fraction of pairs that have not",
        diagnoses=[
            Diagnosis("a full turn is 2 pi radians, not 1", _compares_with_one_radian),
            Diagnosis(
                "the exponent is -2k / head_dim (pairs share a frequency), not -k / head_dim",
                _frequencies_without_factor_two,
            ),
            Diagnosis("return a fraction of the head_dim / 2 pairs, not a count", _count_not_fraction),
            Diagnosis(
                "there are head_dim / 2 pairs (rotation planes), not head_dim of them", _fraction_of_all_coordinates
            ),
            Diagnosis(
                "the base argument is ignored: theta_k = base ** (-2k / head_dim) with the base you are given",
                lambda n, d, base=10000.0: _fraction_unseen_reference(n, d),
            ),
            Diagnosis(
                "off by one: the training positions are 0 .. L - 1, so the largest trained angle is "
                "(L - 1) * theta_k, not L * theta_k (a wavelength > L test makes the same slip)",
                _last_position_off_by_one,
            ),
        ],
        explain=lambda got, expected: (
            ""
            if isinstance(got, numbers.Real) or isinstance(got, torch.Tensor)
            else f"return a number (a float or an exact fraction), not a {type(got).__name__}."
        ),
        compare=_same_number,
    )


def _same_number(got: Any, expected: float) -> bool:
    """A real number (Python, NumPy, an exact Fraction or a one-element tensor; not a bool) within 1e-9 of the expected one."""
    if isinstance(got, torch.Tensor):
        if got.numel() != 1 or got.dtype == torch.bool:
            return False
        got = got.item()
    if isinstance(got, (bool, np.bool_)) or not isinstance(got, numbers.Real):
        return False
    return abs(float(got) - expected) < 1e-9


# --------------------------------------------------------------------------- chapter 11


def _interleaved_to_half_reference(x: torch.Tensor) -> torch.Tensor:
    return x[..., interleaved_to_half_permutation(x.shape[-1])]


def _wrong_direction(x):
    return x[..., half_to_interleaved_permutation(x.shape[-1])]


def _second_halves_first(x):
    return torch.cat((x[..., 1::2], x[..., 0::2]), dim=-1)


def check_interleaved_to_half(fn: Callable[[torch.Tensor], torch.Tensor]) -> CheckResult:
    """Check ``fn(x) -> y``: re-order the last dimension of ``x`` from the interleaved RoPE layout to the half layout.

    ``x`` is ``(..., d)`` with pairs at ``(2k, 2k+1)``; ``y`` has the same pairs
    at ``(k, k + d/2)``, so ``apply_rope(y, layout="half")`` equals
    ``apply_rope(x, layout="interleaved")`` re-ordered the same way. The answer runs with the
    library's layout permutations and ``convert_qk_weight`` switched off.
    """
    cases = []
    for shape, seed in [((8,), 0), ((2, 3, 4), 1), ((1, 2, 5, 12), 2), ((2,), 3)]:
        x = torch.randn(*shape, generator=torch.Generator().manual_seed(20 + seed))
        cases.append(Case(f"x of shape {shape}", (x,), expected=_interleaved_to_half_reference(x)))
    return check_function(
        "Interleaved to half layout",
        fn,
        cases,
        hint="the half layout puts the first member of every pair (columns 0, 2, 4, ...) first, then the second "
        "members (1, 3, 5, ...)",
        diagnoses=[
            Diagnosis("that is the opposite conversion (half to interleaved)", _wrong_direction),
            Diagnosis(
                "the first members of the pairs (even columns) come first, then the odd columns", _second_halves_first
            ),
        ],
        # torch or NumPy: a reordering is exact
        compare=lambda got, expected: arrays_close(got, expected, atol=0, rtol=0),
        forbidden=(interleaved_to_half_permutation, half_to_interleaved_permutation, convert_qk_weight),
    )
