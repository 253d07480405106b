"""Self-check questions for chapter 7, relative position biases: T5's buckets and what a causal mask gives NoPE.

Every number a reader sees is computed here with posenc_lib when the notebook runs (see the package docstring).
"""

from __future__ import annotations

import torch

from ..attention import attention
from ..relative import t5_relative_position_bucket
from . import Choice, Numeric, Option, Question, Wrong

NUM_BUCKETS, MAX_DISTANCE = 32, 128  # T5's settings


def questions() -> list[Question]:
    n, half = NUM_BUCKETS, NUM_BUCKETS // 2
    back = torch.arange(0, 4096)  # distances |r| = -r of keys behind the query
    decoder = t5_relative_position_bucket(-back, bidirectional=False, num_buckets=n, max_distance=MAX_DISTANCE)
    encoder = t5_relative_position_bucket(-back, num_buckets=n, max_distance=MAX_DISTANCE)  # (4096,) each
    last_from = int(back[decoder == n - 1].min())
    own_encoder = _largest_own_bucket(encoder)
    own_decoder = _largest_own_bucket(decoder)
    bucket_40 = int(decoder[40])
    mates = back[decoder == bucket_40]
    far = {distance: int(decoder[distance]) for distance in (200, 2000)}
    query = 9
    start_weight = _start_token_weight(position=query)
    return [
        Numeric(
            label="q-relative-biases-last-bucket",
            prompt=f"T5's decoder: {n} causal buckets, max_distance = {MAX_DISTANCE}. From which distance |r| on do "
            f"all keys behind the query share the last bucket (bucket {n - 1})?",
            answer=lambda: last_from,
            relative=0.0,
            explanation=f"The logarithmic buckets reach bucket {n - 1} at distance {last_from}, before max_distance: "
            f"every key {last_from} or more tokens back gets the same learned bias.",
            hint=f"The ramp is logarithmic from n/2 = {half} to max_distance, and it is rounded down.",
            wrong=(
                Wrong(
                    lambda: MAX_DISTANCE,
                    f"{MAX_DISTANCE} is max_distance, where the logarithmic ramp ends; the last bucket is the "
                    "ramp's last step, and that step starts before it.",
                ),
                Wrong(
                    lambda: own_decoder + 1,
                    f"Distances 0 to {own_decoder} get a bucket each; {own_decoder + 1} is where the logarithmic "
                    "buckets begin.",
                ),
            ),
        ),
        Numeric(
            label="q-relative-biases-exact",
            prompt=f"T5's encoder (bidirectional, {n} buckets): what is the largest distance |r| that has a bucket "
            "of its own, shared with no other distance in the same direction?",
            answer=lambda: own_encoder,
            relative=0.0,
            explanation=f"The encoder splits its {n} buckets into {half} per direction, and half of those are exact: "
            f"distances 0 to {own_encoder}. The causal decoder, with all {n} for the past, is exact up to {own_decoder}.",
            wrong=(
                Wrong(
                    lambda: own_decoder,
                    f"That is the decoder's: all {n} buckets describe the past there, {half} of them exact (0 to "
                    f"{own_decoder}). The encoder has only {half} per direction.",
                ),
            ),
        ),
        Numeric(
            label="q-relative-biases-mates",
            prompt=f"In T5's decoder ({n} buckets, max_distance = {MAX_DISTANCE}), how many distances |r|, counting 40 itself, "
            "share the bucket of distance 40?",
            answer=lambda: len(mates),
            relative=0.0,
            explanation=f"Distance 40 is in bucket {bucket_40}, with distances {int(mates.min())} to {int(mates.max())}: "
            f"{len(mates)} keys get the same bias, so a head that must attend exactly 40 back can at best spread "
            f"its weight over all {len(mates)}.",
            wrong=(Wrong(lambda: 1, f"Only distances below {own_decoder + 1} have a bucket of their own."),),
        ),
        Choice(
            label="q-relative-biases-far",
            prompt="In T5's decoder with its standard settings, a key 200 tokens back and a key 2,000 tokens back: "
            "what biases do they get from one head?",
            options=(
                Option(
                    "The same bias: both fall in the last bucket.",
                    f"Both are in bucket {far[200]}: the table cannot tell them apart.",
                ),
                Option(
                    "Different biases: the buckets keep widening logarithmically.",
                    f"The widening stops at the last bucket: 200 is in bucket {far[200]}, 2,000 in bucket {far[2000]}.",
                ),
                Option(
                    "The key 2,000 back gets no bias: it is beyond max_distance.",
                    "Every distance gets a bucket; those beyond the ramp share the last one.",
                ),
            ),
            correct=0,
            verify=lambda: 0 if far[200] == far[2000] else 1,
            explanation="Beyond the last bucket's first distance T5's bias is constant, so a longer input at test "
            "time meets no offset the table has not seen, and tells no far distances apart.",
        ),
        Numeric(
            label="q-relative-biases-nope",
            prompt="A causal attention head with no positional encoding and equal scores everywhere (uniform "
            "attention); the values are 1 on the start token at position 0 and 0 elsewhere. What does it output "
            f"at position i = {query}?",
            answer=lambda: start_weight,
            explanation=f"Query {query} sees the {query + 1} keys 0 .. {query} with equal weight, so the start token's "
            f"weight is 1/{query + 1} = {start_weight:g}: the output 1/(i+1) names the position, with no encoding at all.",
            wrong=(
                Wrong(lambda: 1 / query, "Query i sees i + 1 keys, itself included: 1/(i+1), not 1/i."),
                Wrong(
                    lambda: 1.0, "That is the start token's own value; it shares the attention with every other key."
                ),
            ),
        ),
    ]


def _largest_own_bucket(buckets: torch.Tensor) -> int:
    """The largest distance d such that every distance 0 .. d is alone in its bucket (buckets: by distance 0, 1, ...)."""
    counts = torch.bincount(buckets)
    alone = counts[buckets] == 1  # (distances,)
    return int(torch.nonzero(~alone)[0]) - 1


def _start_token_weight(position: int) -> float:
    flat = torch.zeros(position + 1, 4, dtype=torch.float64)  # equal queries and keys: uniform attention
    values = torch.zeros(position + 1, 1, dtype=torch.float64)
    values[0] = 1.0  # (s, 1): the start token's value is 1
    out, _ = attention(flat, flat, values, causal=True)  # (s, 1)
    return out[position, 0].item()
