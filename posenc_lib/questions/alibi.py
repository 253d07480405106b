"""Self-check questions for chapter 6, ALiBi (the demonstration of the format; see the package docstring).

Every number a reader sees, in a prompt, an answer or an explanation, is computed here with posenc_lib
when the notebook runs, and every option marked right is checked by a computation.
"""

from __future__ import annotations

import math

import torch

from ..alibi import alibi_bias, alibi_slopes
from ..analysis import alibi_attention_span, alibi_weights_by_distance
from . import Choice, Numeric, Option, Question, Wrong


def questions() -> list[Question]:
    slopes_4, slopes_8, slopes_12, slopes_16 = (alibi_slopes(n) for n in (4, 8, 12, 16))
    naive_9 = 2 ** (-8 * 9 / 12)  # 2^(-8h/n), the rule for a power of two, misapplied
    bias = alibi_bias(4, 11)[1, 10, 0].item()  # head 2 of 4, the last of 11 queries, key 0: 10 back
    share = alibi_weights_by_distance(8, 2048)[0].cumsum(-1)  # head 1 of 8: share within 0 .. |r|
    span_1 = int(alibi_attention_span(8, 2048, 0.9)[0])
    span_2048, span_4096 = (alibi_attention_span(8, n, 0.9)[7].item() for n in (2048, 4096))
    added = alibi_weights_by_distance(8, 4096)[7, 2048:].sum().item()  # weight on the keys beyond 2048
    return [
        Numeric(
            label="q-alibi-slope-12",
            prompt="A model has 12 heads. With the ALiBi authors' rule, what is the slope m_h of head h = 9?",
            answer=lambda: slopes_12[8].item(),
            explanation="12 is not a power of two: heads 1 to 8 take the slopes of 8 heads, 2^(-h), and heads 9 to 12 "
            f"every other slope of 16 heads, 2^(-0.5), 2^(-1.5), ...: head 9 gets 2^(-0.5) = {slopes_12[8]:.4f}.",
            hint="12 is not a power of two: start from the slopes of 8 heads.",
            wrong=(
                Wrong(
                    lambda: naive_9,
                    "That is 2^(-8h/n) with n = 12, the rule for a power of two. For 12 heads the "
                    "authors take the slopes of 8 heads, then every other slope of 16 heads.",
                ),
                Wrong(
                    lambda: slopes_16[8].item(),
                    "That is head 9 of 16 heads; for 12 heads, heads 9 to 12 take the 1st, "
                    "3rd, 5th and 7th slopes of 16 heads.",
                ),
            ),
        ),
        Choice(
            label="q-alibi-sorted",
            prompt="Are the 12 slopes m_1, ..., m_12 of that model sorted from the largest to the smallest?",
            options=(
                Option(
                    "Yes, each head's slope is smaller than the one before.",
                    f"Look at heads 8 and 9: {slopes_12[7]:.4g}, then {slopes_12[8]:.4g}.",
                ),
                Option(
                    "No: the last four slopes are larger than some of the first eight.",
                    "The list is the slopes of 8 heads followed by four slopes of 16 heads, which fall between them.",
                ),
                Option(
                    "No: all 12 slopes are equal.",
                    "Every head has its own slope; that is how heads look at different ranges.",
                ),
            ),
            correct=1,
            verify=lambda: _sorted_choice(slopes_12),
            explanation="A library that sorts them, or uses 2^(-8h/12), adds other biases than the trained checkpoints used.",
        ),
        Numeric(
            label="q-alibi-bias",
            prompt=f"Head 2 of a 4-head ALiBi model has slope m = 2^({math.log2(slopes_4[1]):g}). What bias does it add "
            "to the score of a key 10 positions before the query?",
            answer=lambda: bias,
            explanation=f"The bias is -m |r| = -10 × {slopes_4[1]:g} = {bias:g}: the further back the key, the lower its score.",
            wrong=(Wrong(lambda: -bias, "The bias lowers the score of distant keys: it is negative."),),
        ),
        Numeric(
            label="q-alibi-span",
            prompt=f"Head 1 of 8 (m = {slopes_8[0]:g}), equal content scores, the last query of 2048 tokens: what is the smallest "
            "distance |r| such that the keys at distances 0 .. |r| hold 90 % of its attention?",
            answer=lambda: span_1,
            relative=0.0,
            explanation=f"The weights fall as e^(-{slopes_8[0]:g} |r|): the keys at 0 .. {span_1} hold {100 * share[span_1]:.1f} %, "
            f"those at 0 .. {span_1 - 1} only {100 * share[span_1 - 1]:.1f} %.",
            wrong=(
                Wrong(
                    lambda: span_1 + 1,
                    f"That counts the keys (distances 0 to {span_1} are {span_1 + 1} keys); "
                    "the question asks for the distance.",
                ),
            ),
        ),
        Choice(
            label="q-alibi-longer",
            prompt=f"Head 8 of 8 (m = 1/{1 / slopes_8[7]:g}) holds 90 % of its attention within some distance. The sequence grows "
            "from 2048 to 4096 tokens. What happens to that distance?",
            options=(
                Option(
                    "It stays about the same.",
                    f"The weights depend on the distance alone: {span_2048} positions "
                    f"at 2048 tokens, {span_4096} at 4096.",
                ),
                Option("It doubles.", f"The 2048 keys added hold only {100 * added:.2f} % of the weight."),
                Option("It halves.", "A longer sequence adds keys; it does not sharpen the head."),
            ),
            correct=0,
            verify=lambda: _growth_choice(span_2048, span_4096),
            explanation=f"ALiBi's reach is set by the slope: about ln(10)/m = {math.log(10) / slopes_8[7]:.0f} positions for "
            "this head, at any length.",
        ),
    ]


def _sorted_choice(slopes: torch.Tensor) -> int:
    if bool((slopes == slopes[0]).all()):
        return 2
    return 0 if bool((slopes[1:] < slopes[:-1]).all()) else 1


def _growth_choice(before: float, after: float) -> int:
    ratio = after / before
    return 0 if 0.9 < ratio < 1.1 else 1 if ratio >= 1.5 else 2
