"""Checker for chapter 1 (why order matters): is a layer permutation-equivariant?

- ``check_is_equivariant(fn)``: ``fn(layer, x)`` returns a Python bool, whether ``layer`` maps a
  permutation of its input rows to the same permutation of its output rows.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from ..sinusoidal import sinusoidal_encoding
from ..toy import ToyAttentionHead
from ._core import Case, CheckResult, Diagnosis, check_function


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
