"""Self-check questions for chapter 10, choosing an encoding: the rules of thumb, checked by computation.

Every number a reader sees is computed here with posenc_lib when the notebook runs, or read from chapter 12's
stored results (see the package docstring).
"""

from __future__ import annotations

import torch

from ..rope import rope_frequencies
from ..rope_scaling import rotations
from ..toy import ToyAttentionHead, embed_words
from . import Choice, Numeric, Option, Question, Wrong
from ._stored import experiments, region_mean

ROUNDING = 1e-5  # float32 rounding of the toy head's outputs stays far below


def questions() -> list[Question]:
    # Llama 2's head (chapter 5 counts its pairs at L = 4,096), trained four times as long
    head_dim, llama2_len, train_len = 128, 4096, 16_384
    turns = rotations(rope_frequencies(head_dim), train_len)  # (d_h/2,)
    unturned = int((turns < 1).sum())
    first_unturned = int(torch.nonzero(turns < 1)[0])
    llama2 = int((rotations(rope_frequencies(head_dim), llama2_len) < 1).sum())
    vocab = experiments()["settings"]["decoder_tasks"]["language"]["vocab_size"]
    rope = {region: region_mean("language", "rope", region) for region in ("inside", "4x")}
    errors = _float32_angle_errors(head_dim)  # (positions, d_h/2)
    reversal = _reversal_changes()
    return [
        Numeric(
            label="q-choosing-unturned",
            prompt=f"A Llama 2 head (d_h = {head_dim}, base 10,000), trained on L = {train_len:,} tokens instead of "
            f"{llama2_len:,}. How many of its {head_dim // 2} RoPE pairs turn less than one full turn within L?",
            answer=lambda: unturned,
            relative=0.0,
            explanation=f"Pair ℓ turns L θ_ℓ / 2π times within L; that is below 1 for pairs {first_unturned} to "
            f"{head_dim // 2 - 1}, {unturned} pairs ({llama2} at L = {llama2_len:,}). A longer training length turns "
            "more pairs, but some never complete a turn, and past L they reach angles training never showed them.",
            wrong=(
                Wrong(lambda: first_unturned, f"{first_unturned} is the first such pair's index, not their number."),
                Wrong(lambda: llama2, f"That is the count at L = {llama2_len:,}; four times as long turns more pairs."),
                Wrong(lambda: 0, "Relative scores do not make every pair turn: the slow ones never complete a turn."),
            ),
        ),
        Choice(
            label="q-choosing-rope-past",
            prompt="Chapter 12's RoPE decoders on the tiny language, trained on L tokens, read positions 2L to 4L "
            "without any change. What happens to their accuracy there?",
            options=(
                Option("It stays as it is inside L: RoPE's scores are relative.", _rope_feedback(rope, vocab)),
                Option("It degrades, but stays well above chance.", _rope_feedback(rope, vocab)),
                Option("It falls to chance at once, like a sinusoidal model.", _rope_feedback(rope, vocab)),
            ),
            correct=1,
            verify=lambda: _degrade_choice(rope["inside"], rope["4x"], 1 / vocab),
            explanation="Relative is not unlimited: the slow pairs meet unseen angles past L. A sliding window of L "
            "keys, or YaRN's frequencies, keeps most of the accuracy.",
        ),
        Choice(
            label="q-choosing-float32",
            prompt=f"RoPE angles p θ_ℓ computed in float32 for positions p up to 10^7 (all stored exactly), "
            f"d_h = {head_dim}: which pair's angle is exact at every such position?",
            options=(
                Option("Pair 0, the fastest.", "θ_0 = 1 is exact, and so is p × 1: no rounding at all."),
                Option(
                    "The slowest pair: its angles are small.",
                    f"Its θ_ℓ is rounded to float32, and the position multiplies that error: up to "
                    f"{errors[:, -1].max():.1e} rad here.",
                ),
                Option(
                    "Every pair: the positions are exact.",
                    f"The frequencies and the products are rounded: up to {errors.max():.2f} rad at 10^7.",
                ),
            ),
            correct=0,
            verify=lambda: 2 if bool((errors == 0).all()) else 0 if bool((errors[:, 0] == 0).all()) else 1,
            explanation="The position is not what goes wrong below 2^24: rounding θ_ℓ and the product p θ_ℓ is.",
        ),
        Choice(
            label="q-choosing-nope",
            prompt="One attention head with no positional encoding, its outputs averaged over the tokens. Reverse "
            "the sentence 'the dog bites the cat': which versions of the head give a different average?",
            options=(
                Option(
                    "Neither, bidirectional or causal: without positions there is no order.", _nope_feedback(reversal)
                ),
                Option("Only the causal one (with the mask).", _nope_feedback(reversal)),
                Option("Only the bidirectional one.", _nope_feedback(reversal)),
            ),
            correct=1,
            verify=lambda: {(False, False): 0, (False, True): 1, (True, False): 2}.get(
                (reversal["bidirectional"] > ROUNDING, reversal["causal"] > ROUNDING), -1
            ),
            explanation="The causal mask lets query i see exactly i + 1 keys, and that leaks position; a "
            "bidirectional encoder needs an explicit encoding.",
        ),
    ]


def _rope_feedback(rope: dict[str, float], vocab: int) -> str:
    return f"Stored accuracy: {rope['inside']:.2f} inside L, {rope['4x']:.2f} from 2L to 4L; chance is 1/{vocab}."


def _degrade_choice(inside: float, past: float, chance: float) -> int:
    if past > inside - 0.05:
        return 0
    return 1 if past > 2 * chance else 2


def _float32_angle_errors(head_dim: int) -> torch.Tensor:
    """|p θ_ℓ in float32 - p θ_ℓ| for p = 10^3 .. 10^7, shape (5, d_h/2)."""
    positions = torch.tensor([1e3, 1e4, 1e5, 1e6, 1e7], dtype=torch.float64)
    theta = rope_frequencies(head_dim)  # (d_h/2,) float64
    return (torch.outer(positions.float(), theta.float()).double() - torch.outer(positions, theta)).abs()


def _reversal_changes() -> dict[str, float]:
    x = embed_words("the dog bites the cat".split(), 16)  # (s, d)
    head = ToyAttentionHead.random(16, seed=0)
    changes = {}
    for name, causal in (("bidirectional", False), ("causal", True)):
        pooled, pooled_reversed = (head(words, causal=causal)[0].mean(0) for words in (x, x.flip(0)))
        changes[name] = (pooled - pooled_reversed).abs().max().item()
    return changes


def _nope_feedback(reversal: dict[str, float]) -> str:
    moved = "< 1e-5" if reversal["bidirectional"] < ROUNDING else f"{reversal['bidirectional']:.2g}"
    return f"Reversal moves the bidirectional average by {moved} (rounding) and the causal one by {reversal['causal']:.2f}."
