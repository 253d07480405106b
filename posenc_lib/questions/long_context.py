"""Self-check questions for chapter 8, longer contexts for RoPE: what each extension rule does to the frequencies.

Every number a reader sees is computed here with posenc_lib when the notebook runs (see the package docstring).
"""

from __future__ import annotations

import math

from ..rope import rope_frequencies, wavelengths
from ..rope_scaling import (
    dynamic_ntk_frequencies,
    linear_scaling_frequencies,
    ntk_aware_base,
    ntk_aware_frequencies,
    yarn_attention_factor,
)
from . import Choice, Numeric, Option, Question, Wrong


def questions() -> list[Question]:
    head_dim, base, train_len, factor = 128, 10_000.0, 4096, 4
    theta = rope_frequencies(head_dim, base)  # (d_h/2,)
    new_base = ntk_aware_base(base, head_dim, factor)
    ntk_slowest = (theta[-1] / ntk_aware_frequencies(theta, factor)[-1]).item()
    pi_fastest = (linear_scaling_frequencies(theta, factor)[0] / theta[0]).item()
    dynamic_factor, dynamic_len = 2.0, 3 * train_len
    dynamic = (theta[-1] / dynamic_ntk_frequencies(theta, dynamic_len, train_len, dynamic_factor)[-1]).item()
    yarn_factor = 16
    root = yarn_attention_factor(yarn_factor)  # sqrt(1/t), applied to queries and keys
    (old, old_base, old_len), (new, new_base_b, new_len) = ("Llama 2", 1e4, 4096), ("Llama 3", 5e5, 8192)
    longer = {
        name: int((wavelengths(rope_frequencies(head_dim, b)) > length).sum())
        for name, b, length in ((old, old_base, old_len), (new, new_base_b, new_len))
    }
    return [
        Numeric(
            label="q-long-context-ntk-base",
            prompt=f"NTK-aware scaling of a RoPE head with d_h = {head_dim} and base B = {base:,.0f}, by α = {factor}: "
            "what is the new base B'?",
            answer=lambda: new_base,
            digits=5,
            explanation=f"B' = B α^(d_h/(d_h-2)) = {base:,.0f} × {factor}^({head_dim}/{head_dim - 2}) = {new_base:,.0f}: "
            f"then the slowest pair is divided by exactly α (here {ntk_slowest:.4g}) and pair 0 keeps its frequency.",
            hint="Choose B' so that the slowest pair, ℓ = d_h/2 - 1, turns α times slower.",
            wrong=(
                Wrong(
                    lambda: base * factor,
                    f"B α = {base * factor:,.0f} divides the slowest pair by α^((d_h-2)/d_h), a little less than α: "
                    "the exponent of its frequency is -(d_h-2)/d_h, not -1.",
                ),
            ),
        ),
        Numeric(
            label="q-long-context-pi-fastest",
            prompt=f"Position interpolation by α = {factor}: the fastest pair turned {theta[0]:g} radian per token. How many "
            "radians per token does it turn now?",
            answer=lambda: pi_fastest * theta[0].item(),
            explanation=f"PI divides every frequency by α, the fastest included: {pi_fastest:g} rad per token, so "
            "neighbouring tokens are α times closer in angle than in training; YaRN and Llama 3 leave this pair alone.",
            wrong=(
                Wrong(
                    lambda: theta[0].item(),
                    "That is what YaRN, Llama 3 and NTK-aware scaling keep; PI divides every pair.",
                ),
            ),
        ),
        Numeric(
            label="q-long-context-dynamic",
            prompt=f"Dynamic NTK with α = {dynamic_factor:g}, trained on L = {train_len:,} tokens. The input is "
            f"{dynamic_len:,} tokens long. By what factor is the slowest pair's frequency divided?",
            answer=lambda: dynamic,
            explanation=f"The effective factor is max(1, α s/L - (α - 1)) = {dynamic_factor:g} × {dynamic_len / train_len:g} "
            f"- {dynamic_factor - 1:g} = {dynamic:g}, and NTK-aware scaling divides the slowest pair by exactly that.",
            wrong=(
                Wrong(
                    lambda: dynamic_len / train_len,
                    "The effective factor is not the length ratio s/L (it is only when α = 1).",
                ),
                Wrong(
                    lambda: dynamic_factor,
                    f"The factor follows the input: it is 1 up to s = L, reaches α at s = "
                    f"{(2 * dynamic_factor - 1) / dynamic_factor:g} L and keeps growing.",
                ),
            ),
        ),
        Numeric(
            label="q-long-context-yarn-logits",
            prompt=f"YaRN at α = {yarn_factor}: by what number are the attention logits multiplied, once the "
            "rotated queries and keys have both been scaled?",
            answer=lambda: root**2,
            explanation=f"sqrt(1/t) = 0.1 ln α + 1 = {root:.4f} multiplies both the queries and the keys, so the "
            f"logits get its square, 1/t = {root**2:.4f}.",
            wrong=(
                Wrong(
                    lambda: root,
                    f"{root:.4f} is sqrt(1/t), applied to the queries and to the keys: the logits get its square.",
                ),
            ),
        ),
        Choice(
            label="q-long-context-base",
            prompt=f"{old} (d_h = {head_dim}, base {old_base:,.0f}, L = {old_len:,}) and {new} (base {new_base_b:,.0f}, "
            f"L = {new_len:,}): how does the number of pairs whose wavelength exceeds L change?",
            options=(
                Option(
                    "It falls: a larger base makes every pair turn fully within L.",
                    f"A larger base slows every pair but pair 0: {longer[old]} pairs for Llama 2, "
                    f"{longer[new]} for Llama 3.",
                ),
                Option("It stays the same.", f"It goes from {longer[old]} to {longer[new]}."),
                Option(
                    "It rises.",
                    f"From {longer[old]} of {head_dim // 2} pairs to {longer[new]}: a larger base slows "
                    "every pair but pair 0.",
                ),
            ),
            correct=2,
            verify=lambda: 0 if longer[new] < longer[old] else 1 if longer[new] == longer[old] else 2,
            explanation="What the larger base changes is how slowly the bound on the score falls with distance; "
            f"the longest wavelength grows roughly in proportion to B (2π B^((d_h-2)/d_h) = "
            f"{2 * math.pi * new_base_b ** ((head_dim - 2) / head_dim):,.0f} tokens for {new}).",
        ),
    ]
