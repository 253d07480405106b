"""Self-check questions for chapter 3, sinusoidal encodings (the format: see the package docstring).

Every number a reader sees is computed here with posenc_lib when the notebook runs (float64 tables,
so the numbers are the formula's own); every option marked right is checked by a computation.
"""

from __future__ import annotations

import math

import torch

from ..analysis import sinusoidal_dot_by_distance
from ..rope import wavelengths
from ..sinusoidal import shift_matrix, sinusoidal_encoding, sinusoidal_frequencies
from . import Choice, Numeric, Option, Question, Wrong

BASE = 10000.0


def questions() -> list[Question]:
    d = 64
    theta = sinusoidal_frequencies(d)  # (d/2,): θ_ℓ = B^(-2ℓ/d), float64
    column = 20  # columns 20 and 21 are pair 10
    wide = 512
    longest = wavelengths(sinusoidal_frequencies(wide))[-1].item()
    peak = sinusoidal_dot_by_distance(torch.tensor([0]), d)[0].item()
    table = sinusoidal_encoding(16, d, dtype=torch.float64)  # (16, d)
    gap = (table[3] + table[5] - table[8]).norm().item()
    shifted = (shift_matrix(5, d) @ table[3] - table[8]).abs().max().item()  # M_5 PE(3) - PE(8)
    concatenated = sinusoidal_encoding(16, d, layout="concatenated", dtype=torch.float64)
    gram_change = (concatenated @ concatenated.T - table @ table.T).abs().max().item()
    column_change = (concatenated - table).abs().max().item()
    return [
        Numeric(
            label="q-sinusoidal-theta",
            prompt=f"d = {d}, base B = 10000: what is the frequency θ of columns {column} and {column + 1} "
            "(radians per position)?",
            answer=lambda: theta[column // 2].item(),
            explanation=f"Columns {column} and {column + 1} are pair ℓ = {column // 2}: θ_ℓ = B^(-2ℓ/d) = "
            f"10000^(-{column}/{d}) = {theta[column // 2]:.4g}. A sine and its cosine partner share one frequency.",
            hint=f"Which pair ℓ owns column {column}?",
            wrong=(
                Wrong(
                    lambda: BASE ** (-2 * column / d),
                    f"That puts the column index c = {column} where the pair index goes, 10000^(-2c/d): the common mix-up "
                    "that doubles every exponent.",
                ),
                Wrong(lambda: BASE ** (-(column // 2) / d), "The exponent is 2ℓ/d, not ℓ/d."),
            ),
        ),
        Numeric(
            label="q-sinusoidal-longest",
            prompt=f"d = {wide}, base 10000: after how many positions does the slowest pair complete one turn?",
            answer=lambda: longest,
            digits=6,
            explanation=f"The last pair, ℓ = {wide // 2 - 1}, has λ = 2π · 10000^({wide - 2}/{wide}) = {longest:,.0f} "
            "positions, just "
            f"under 2π · 10000 = {2 * math.pi * BASE:,.0f}: the wavelengths grow geometrically from 2π.",
            wrong=(
                Wrong(
                    lambda: 2 * math.pi * BASE,
                    "That is 2π · B, which the last pair approaches but does not reach: its exponent is (d - 2)/d.",
                ),
                Wrong(lambda: 2 * math.pi, "That is the fastest pair, ℓ = 0 (θ = 1)."),
            ),
        ),
        Numeric(
            label="q-sinusoidal-dot",
            prompt=f"d = {d}: what is the dot product PE(p) · PE(p + Δ) at Δ = 0, for any position p?",
            answer=lambda: peak,
            explanation=f"PE(p) · PE(p + Δ) = Σ_ℓ cos(Δ θ_ℓ); at Δ = 0 each of the d/2 pairs adds cos 0 = 1: "
            f"{peak:g}. It depends on Δ alone, and it is the curve's peak.",
            wrong=(
                Wrong(lambda: d, "Each pair adds sin² + cos² = 1, not each column: there are d/2 terms."),
                Wrong(lambda: 1.0, "The rows are not unit vectors; their squared norm is d/2."),
            ),
        ),
        Choice(
            label="q-sinusoidal-sum",
            prompt=f"d = {d}: is PE(3) + PE(5) equal to PE(8)?",
            options=(
                Option(
                    "Yes: the encoding is linear in the position.",
                    f"|PE(3) + PE(5) - PE(8)| = {gap:.2f}: sine and cosine are not linear.",
                ),
                Option(
                    "No: what is linear is the shift, PE(p + Δ) = M_Δ PE(p).",
                    "The same rotation M_Δ moves every position by Δ.",
                ),
                Option(
                    "Only in the interleaved layout.",
                    "A layout only reorders the columns: the sum is just as far from PE(8) in both.",
                ),
            ),
            correct=1,
            verify=lambda: 1 if gap > 1 and shifted < 1e-12 else 0,
            explanation=f"|PE(3) + PE(5) - PE(8)| = {gap:.2f}, while M_5 PE(3) equals PE(8) up to float64 rounding.",
        ),
        Choice(
            label="q-sinusoidal-layout",
            prompt="A table is rebuilt in the concatenated layout (all sines, then all cosines) instead of the "
            "interleaved one. What happens to the dot products PE(p) · PE(q)?",
            options=(
                Option(
                    "They stay the same: the layouts differ by a fixed permutation of the columns.",
                    "A permutation moves the terms of a dot product, not their sum.",
                ),
                Option(
                    "They change, because the columns moved.",
                    f"The columns did move (by up to {column_change:.2f}), but each dot product sums the same "
                    "products in another order.",
                ),
                Option("They change sign.", "Every term sin·sin or cos·cos is the same in both layouts."),
            ),
            correct=0,
            verify=lambda: 0 if gram_change < 1e-9 and column_change > 0.1 else 1,
            explanation="Norms and dot products do not see the layout, but a trained layer does: its weights must be "
            "permuted with the table, word-vector columns included.",
        ),
    ]
