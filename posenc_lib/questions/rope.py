"""Self-check questions for chapter 5, RoPE (the format: see the package docstring).

Every number a reader sees is computed here with posenc_lib when the notebook runs (float64, so the
numbers are the formula's own); every option marked right is checked by a computation.
"""

from __future__ import annotations

import torch

from ..rope import apply_rope, rope_angles, rope_frequencies
from ..rope_scaling import rotations
from . import Choice, Numeric, Option, Question, Wrong

BASE = 10000.0


def questions() -> list[Question]:
    small = 8
    angles_at_3 = rope_angles(torch.tensor([3]), rope_frequencies(small))[0]  # (d_h/2,)
    gen = torch.Generator().manual_seed(1)
    q, k = torch.randn(2, 1, 64, generator=gen, dtype=torch.float64)  # one query, one key

    def score(i: int, j: int) -> float:
        return (apply_rope(q, offset=i) @ apply_rope(k, offset=j).T).item()

    near, far, flipped = score(3, 7), score(103, 107), score(7, 3)
    head_dim, train_len = 128, 4096
    theta = rope_frequencies(head_dim)  # (d_h/2,)
    turns = rotations(theta, train_len)  # (d_h/2,): L θ_ℓ / 2π
    unturned = int((turns < 1).sum())
    under_a_radian = int((train_len * theta < 1).sum())
    x = torch.randn(1, 2, 6, small, generator=gen, dtype=torch.float64)  # (b, n_h, s, d_h)
    layout_gap = (apply_rope(x, layout="half") - apply_rope(x, layout="interleaved")).abs().max().item()
    ones = torch.ones(1025, head_dim, dtype=torch.float64)  # q = k = all ones, r = 0 .. 1024
    curve = apply_rope(ones, torch.arange(1025)) @ ones[0]  # (1025,): q · R_r k
    rises = int((curve.diff() > 0).sum())
    return [
        Numeric(
            label="q-rope-angle",
            prompt=f"d_h = {small}, base 10000: by what angle (in radians) does RoPE turn pair ℓ = 1 of a query at "
            "position p = 3?",
            answer=lambda: angles_at_3[1].item(),
            explanation=f"θ_1 = 10000^(-2/{small}) = {10000 ** (-2 / small):g}, so the angle is p θ_1 = "
            f"{angles_at_3[1].item():g}. Each pair turns by its own angle: at p = 3 they are "
            f"{', '.join(f'{a:g}' for a in angles_at_3.tolist())}.",
            wrong=(
                Wrong(
                    lambda: angles_at_3[0].item(),
                    "That is 3 θ_0, the angle of pair 0. RoPE does not turn the whole vector by one angle: each "
                    "pair has its own θ_ℓ.",
                ),
                Wrong(
                    lambda: 3 * BASE ** (-4 / small),
                    "That uses the exponent 4/d_h: the exponent of pair ℓ is 2ℓ/d_h.",
                ),
            ),
        ),
        Choice(
            label="q-rope-relative",
            prompt="RoPE turns a query at position i and a key at position j. Which pair of positions gives the same "
            "score q̃ · k̃ as (i, j) = (3, 7), whatever q and k are?",
            options=(
                Option(
                    "(103, 107): only j - i matters.",
                    "R_i^T R_j = R_(j - i): the score is q^T R_(j-i) k.",
                ),
                Option(
                    "(7, 3): only the distance |j - i| matters.",
                    f"For a random q and k of width 64 the score is {near:.4f} at (3, 7) and {flipped:.4f} at (7, 3): "
                    "the sign of the offset matters.",
                ),
                Option(
                    "None: the score depends on i and j separately.",
                    "That is what adding position vectors to q and k does; rotations leave only their difference.",
                ),
            ),
            correct=0,
            verify=lambda: _relative_choice(near, far, flipped),
            explanation=f"For a random q and k of width 64: {near:.4f} at (3, 7), {far:.4f} at (103, 107), "
            f"{flipped:.4f} at (7, 3). RoPE can tell 4 to the left from 4 to the right.",
        ),
        Numeric(
            label="q-rope-unturned",
            prompt=f"d_h = {head_dim} (as in LLaMA), base 10000, trained on L = {train_len} tokens: how many of the "
            f"{head_dim // 2} pairs make less than one full turn within L positions?",
            answer=lambda: unturned,
            relative=0.0,
            explanation=f"Pair ℓ makes L θ_ℓ / 2π turns; {unturned} pairs stay below one (the slowest, "
            f"ℓ = {head_dim // 2 - 1}, makes {turns[-1].item():.3f}). Past L their angles are new to the model.",
            hint="A pair makes a full turn when L θ_ℓ reaches 2π.",
            wrong=(
                Wrong(
                    lambda: under_a_radian,
                    "That counts the pairs that turn less than one radian (L θ_ℓ < 1); a full turn is 2π radians.",
                ),
                Wrong(lambda: 1, "Not only the slowest pair: the wavelengths grow geometrically."),
            ),
        ),
        Choice(
            label="q-rope-layout",
            prompt="A checkpoint trained with Meta's interleaved layout is run in code written for the half-split "
            "layout, without converting W_q and W_k. What happens?",
            options=(
                Option(
                    "An error: the shapes do not match.", "Both layouts take and return (..., s, d_h): nothing fails."
                ),
                Option(
                    "It runs, and computes other scores than the model was trained with.",
                    f"The same input, rotated in the two layouts, differs by up to {layout_gap:.2f}.",
                ),
                Option(
                    "Nothing changes: both layouts turn by the same angles.",
                    "They turn other coordinates together: (x_2ℓ, x_2ℓ+1) in one, (x_ℓ, x_ℓ+d_h/2) in the other.",
                ),
            ),
            correct=1,
            verify=lambda: 1 if layout_gap > 0.5 else 2,
            explanation="The layouts are the same rotation up to a fixed reordering of the coordinates, so a "
            "checkpoint is converted by reordering the rows of W_q and W_k (convert_qk_weight).",
        ),
        Choice(
            label="q-rope-decay",
            prompt=f"q = k = all ones, d_h = {head_dim}: as r grows from 0 to 1024, does the score q · R_r k fall at "
            "every step?",
            options=(
                Option(
                    "Yes: RoPE makes scores decay with distance.",
                    f"It rises at {rises} of the 1024 steps.",
                ),
                Option(
                    "No: it falls fast, then wiggles, rising at many steps.",
                    "The fast pairs stop agreeing within a few steps; the slow pairs hold the score up.",
                ),
            ),
            correct=1,
            verify=lambda: 1 if rises > 0 else 0,
            explanation=f"From {curve[0].item():g} at r = 0 it rises at {rises} of 1024 steps (its lowest value is "
            f"{curve.min().item():.2f}). What trends down is RoFormer's bound, not the score.",
        ),
    ]


def _relative_choice(near: float, far: float, flipped: float) -> int:
    """Which option the scores at (3, 7), (103, 107) and (7, 3) support."""

    def same(a: float, b: float) -> bool:
        return abs(a - b) <= 1e-9 * max(abs(a), abs(b))

    if not same(near, far):
        return 2
    return 1 if same(near, flipped) else 0
