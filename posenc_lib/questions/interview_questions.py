"""Self-check questions for chapter 11, interview questions: the answers' computable claims, computed.

The chapter's answers state numbers (the slowest sinusoidal wavelength, the norm of a sinusoidal vector, how
much longer it is than a GPT-2 token vector, where bfloat16 positions collide) and a claim about mixed-up RoPE
layouts; each question here recomputes one with posenc_lib when the notebook runs.
"""

from __future__ import annotations

import math

import torch

from ..rope import apply_rope
from ..sinusoidal import sinusoidal_encoding, sinusoidal_frequencies
from . import Choice, Numeric, Option, Question, Wrong

GPT2_STD = 0.02  # GPT-2's initialisation of the token table


def questions() -> list[Question]:
    d_original, base = 512, 10_000.0
    slowest = 2 * math.pi / sinusoidal_frequencies(d_original, base=base)[-1].item()
    d, position = 64, 37
    norm = sinusoidal_encoding(position + 1, d, dtype=torch.float64)[position].norm().item()
    d_gpt2 = 768
    ratio = sinusoidal_encoding(1, d_gpt2, dtype=torch.float64)[0].norm().item() / (GPT2_STD * math.sqrt(d_gpt2))
    collide = _first_bfloat16_collision()
    # significand bits, the stored ones and the implicit leading 1: eps = 2^-(bits - 1)
    bits, bits_32 = (round(1 - math.log2(torch.finfo(dtype).eps)) for dtype in (torch.bfloat16, torch.float32))
    layouts = _mixed_layouts()
    return [
        Numeric(
            label="q-interview-questions-wavelength",
            prompt=f"The original Transformer's sinusoidal encoding, d = {d_original}, base {base:,.0f}: how many "
            "tokens does its slowest pair take for one full turn?",
            answer=lambda: slowest,
            digits=5,
            explanation=f"The slowest pair is ℓ = d/2 - 1, with θ = base^(-(d-2)/d): its wavelength is "
            f"2π base^({d_original - 2}/{d_original}) = {slowest:,.0f} tokens, just under 2π × base.",
            wrong=(
                Wrong(
                    lambda: 2 * math.pi * base,
                    f"2π × base = {2 * math.pi * base:,.0f} would be a pair ℓ = d/2, which does not exist: the "
                    "exponent of the last pair is (d-2)/d.",
                ),
                Wrong(lambda: base, "The wavelength is 2π / θ, not 1 / θ."),
            ),
        ),
        Numeric(
            label="q-interview-questions-norm",
            prompt=f"What is the length (Euclidean norm) of the sinusoidal vector PE(p) for d = {d} at p = {position}?",
            answer=lambda: norm,
            explanation=f"Each of the d/2 pairs holds (sin, cos) of one angle, a point on the unit circle: the "
            f"norm is sqrt(d/2) = {norm:.4g} at every position.",
            wrong=(
                Wrong(
                    lambda: math.sqrt(d), "Each pair contributes sin² + cos² = 1: d/2 pairs, not d coordinates of 1."
                ),
                Wrong(lambda: 1.0, "PE(p) is not normalised: each of its pairs is."),
            ),
        ),
        Numeric(
            label="q-interview-questions-gpt2-scale",
            prompt=f"Token vectors drawn with GPT-2's standard deviation {GPT2_STD} in d = {d_gpt2}, and no √d factor: "
            "about how many times longer is a sinusoidal position vector than a token vector?",
            answer=lambda: ratio,
            relative=0.01,
            digits=3,
            explanation=f"sqrt(d/2) against about σ sqrt(d): the ratio 1/(σ sqrt 2) = {ratio:.1f}, whatever d is. "
            "The position-position term then swamps the content in the scores.",
            wrong=(
                Wrong(lambda: 1 / GPT2_STD, "The sinusoidal vector's norm is sqrt(d/2), not sqrt(d): 1/(σ sqrt 2)."),
                Wrong(lambda: 1.0, "That holds with the √d factor and σ = 1/sqrt(d), not with GPT-2's σ."),
            ),
        ),
        Numeric(
            label="q-interview-questions-bfloat16",
            prompt="Positions stored in bfloat16: what is the smallest non-negative integer that bfloat16 cannot "
            "store exactly?",
            answer=lambda: collide,
            relative=0.0,
            explanation=f"bfloat16 keeps {bits} significant bits: every integer up to 2^{bits} = {collide - 1} is "
            f"exact, and {collide} is rounded to a neighbour. Compute RoPE angles from integer positions in float32 or better.",
            wrong=(
                Wrong(
                    lambda: 2**bits_32 + 1,
                    f"That is float32's first; bfloat16 has a significand of {bits} bits, not {bits_32}.",
                ),
                Wrong(lambda: collide - 1, f"{collide - 1} = 2^{bits} is stored exactly; the next one is not."),
            ),
        ),
        Choice(
            label="q-interview-questions-layouts",
            prompt="Weights trained with the interleaved RoPE layout are loaded, unconverted, into code that uses "
            "the half layout. Does the query-key score still depend only on r = j - i?",
            options=(
                Option(
                    "Yes, but it is the wrong function of r.",
                    "The same q, k at positions (2, 5) and (40, 43) score alike (to float64 rounding) "
                    f"under the half layout, yet differ from the trained layout's score by {layouts['wrong']:.2f}.",
                ),
                Option(
                    "No: the scores now depend on the absolute positions.",
                    "The half layout is a RoPE rotation too, with other pairs: R_i^T R_j = R_(j-i) still holds.",
                ),
                Option(
                    "The code raises an error: the shapes do not match.",
                    "Both layouts take vectors of the same width d_h; nothing crashes, which is why the bug is silent.",
                ),
            ),
            correct=0,
            verify=lambda: 0 if layouts["spread"] < 1e-12 and layouts["wrong"] > 1e-3 else 1,
            explanation="Coordinates that training rotated together at one frequency are turned with other partners "
            "at other frequencies: relative, but not what the weights learned.",
        ),
    ]


def _first_bfloat16_collision() -> int:
    integers = torch.arange(0, 4096, dtype=torch.float64)
    lost = integers.to(torch.bfloat16).double() != integers
    return int(integers[lost][0])


def _mixed_layouts() -> dict[str, float]:
    generator = torch.Generator().manual_seed(0)
    q, k = torch.randn(2, 1, 16, generator=generator, dtype=torch.float64)  # one query, one key, d_h = 16

    def score(i: int, j: int, layout: str) -> float:
        rotated_q = apply_rope(q, torch.tensor([i]), layout=layout)
        rotated_k = apply_rope(k, torch.tensor([j]), layout=layout)
        return (rotated_q @ rotated_k.T).item()

    half = [score(i, i + 3, "half") for i in (2, 40)]
    return {"spread": abs(half[0] - half[1]), "wrong": abs(half[0] - score(2, 5, "interleaved"))}
