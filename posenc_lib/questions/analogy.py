"""Self-check questions for chapter 2, the analogy (the format: see the package docstring).

Every number a reader sees is computed here with posenc_lib when the notebook runs; every option marked
right is checked by a computation.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from ..model import count_parameters
from ..sinusoidal import sinusoidal_encoding
from ..toy import embed_words
from . import Choice, Numeric, Option, Question, Wrong

GPT2_WIDTH, GPT2_POSITIONS = 768, 1024


def mean_overlap(width: int, n_words: int = 100, n_positions: int = 64) -> float:
    """Mean |cos| between the toy word vectors and the sinusoidal position vectors at width ``width``."""
    words = nn.functional.normalize(embed_words([f"word{i}" for i in range(n_words)], width), dim=-1)  # (n, d)
    table = nn.functional.normalize(sinusoidal_encoding(n_positions, width), dim=-1)  # (s, d)
    return (words @ table.T).abs().mean().item()


def questions() -> list[Question]:
    d = 512
    position_norm = sinusoidal_encoding(778, d, dtype=torch.float64)[777].norm().item()  # PE(777)
    word_norm = 0.02 * math.sqrt(d)  # entries of standard deviation 0.02: norm about 0.02 sqrt(d)
    added = count_parameters(nn.Linear(GPT2_WIDTH, 3 * GPT2_WIDTH, bias=False, device="meta"))  # q, k, v
    concatenated = count_parameters(nn.Linear(2 * GPT2_WIDTH, 3 * GPT2_WIDTH, bias=False, device="meta"))
    one_projection = count_parameters(nn.Linear(GPT2_WIDTH, GPT2_WIDTH, bias=False, device="meta"))
    table = GPT2_POSITIONS * GPT2_WIDTH
    overlap_64, overlap_1024 = mean_overlap(64), mean_overlap(1024)
    return [
        Numeric(
            label="q-analogy-norm",
            prompt=f"What is the norm |PE(p)| of the sinusoidal position vector at position p = 777, for d = {d}?",
            answer=lambda: position_norm,
            explanation=f"Each (sin, cos) pair adds sin² + cos² = 1 to the squared norm, so every row has norm "
            f"sqrt(d/2) = {position_norm:g}, at every position: position vectors are not small corrections.",
            hint="Look at one (sin, cos) pair first.",
            wrong=(
                Wrong(
                    lambda: math.sqrt(d),
                    "That is sqrt(d), the norm of a vector of d entries of size 1. The table has d/2 pairs, "
                    "each contributing sin² + cos² = 1.",
                ),
                Wrong(lambda: 1.0, "The rows are not unit vectors: each pair alone has norm 1."),
            ),
        ),
        Numeric(
            label="q-analogy-concat",
            prompt=f"GPT-2 small has d = {GPT2_WIDTH}. If the first block's query, key and value projections (no "
            "biases) read the concatenation [e ; PE(p)] instead of the sum e + PE(p), how many parameters do they "
            "gain?",
            answer=lambda: concatenated - added,
            relative=0.0,
            explanation=f"Each of the three projections gets {GPT2_WIDTH} more input columns: "
            f"3 × {GPT2_WIDTH} × {GPT2_WIDTH} = {concatenated - added:,}, more than GPT-2's whole learned table "
            f"of {GPT2_POSITIONS} position vectors ({table:,}).",
            wrong=(
                Wrong(
                    lambda: table,
                    f"That is GPT-2's learned position table ({GPT2_POSITIONS} × {GPT2_WIDTH}); the wider "
                    "projections cost more than that.",
                ),
                Wrong(
                    lambda: one_projection,
                    "That is one projection; the query, key and value projections all read the input.",
                ),
            ),
        ),
        Choice(
            label="q-analogy-overlap",
            prompt="Word vectors with independent random entries and sinusoidal position vectors: as d grows from 64 "
            "to 1024, what happens to the mean |cos| between a word vector and a position vector?",
            options=(
                Option(
                    "It stays about the same.",
                    f"Measured: {overlap_64:.3f} at d = 64, {overlap_1024:.3f} at d = 1024.",
                ),
                Option(
                    "It shrinks about 4 times, like 1/sqrt(d).",
                    "Unrelated directions in many dimensions are nearly orthogonal.",
                ),
                Option("It grows: more coordinates, more overlap.", "The overlap is a cosine: it is normalised by d."),
            ),
            correct=1,
            verify=lambda: (
                1 if 3 < overlap_64 / overlap_1024 < 5 else 0 if 0.8 < overlap_64 / overlap_1024 < 1.25 else 2
            ),
            explanation=f"The mean |cos| goes from {overlap_64:.3f} to {overlap_1024:.3f} (sqrt(2/(π d)) predicts "
            f"{math.sqrt(2 / (math.pi * 64)):.3f} and {math.sqrt(2 / (math.pi * 1024)):.3f}): the sum keeps both "
            "parts readable, which is why adding works.",
        ),
        Numeric(
            label="q-analogy-scale",
            prompt=f"Word vectors with entries of standard deviation 0.02 at d = {d}, not multiplied by sqrt(d): about "
            "how many times longer is a sinusoidal position vector than a word vector?",
            answer=lambda: position_norm / word_norm,
            relative=0.01,
            digits=3,
            explanation=f"|PE(p)| = sqrt(d/2) = {position_norm:g}, a word vector about 0.02 sqrt(d) = {word_norm:.3f}: "
            f"the position part is {position_norm / word_norm:.1f} times longer and swamps the meaning. "
            "The original Transformer multiplies the embeddings by sqrt(d).",
            wrong=(
                Wrong(
                    lambda: position_norm / (word_norm * math.sqrt(d)),
                    "That is with the embeddings multiplied by sqrt(d), as the original Transformer does.",
                ),
                Wrong(
                    lambda: word_norm / position_norm, "That is the word vector's length over the position vector's."
                ),
            ),
        ),
    ]
