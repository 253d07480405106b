"""Self-check questions for chapter 9, where position plugs in: which tensors each scheme changes, and its cost.

Every answer is computed here with posenc_lib when the notebook runs: a small model is run under each scheme with
the same weights, as the chapter does (see the package docstring), T5's bias table drawn from a seed as in
:mod:`posenc_lib.same_weights` (its zero start would change nothing).
"""

from __future__ import annotations

import functools

import torch

from ..learned import LearnedPositionalEmbedding
from ..model import TransformerConfig, build_model, count_parameters
from ..relative import T5RelativeBias
from ..same_weights import COMPARED_SCHEMES, first_changed_stage, models_under_schemes
from . import Choice, Numeric, Option, Question, Wrong

SHIFT = 100  # positions added to every token in the shift question
SCHEMES = COMPARED_SCHEMES  # chapter 9's six, T5 included
STAGE_NAMES = {"x": "the input x", "q": "the queries q (and the keys k)", "scores": "the scores"}


def questions() -> list[Question]:
    d_model, max_len, n_layers = 768, 1024, 12  # GPT-2 small
    table = count_parameters(LearnedPositionalEmbedding(d_model, max_len))
    n_heads = 12  # GPT-2 small's heads
    t5 = T5RelativeBias(n_heads, bidirectional=False)  # T5's 32 buckets, one table shared by every block
    t5_table = count_parameters(t5)
    first = _first_changed_stage()  # {scheme: the first stage of block 1 that differs from the NoPE run}
    shifted = _changed_by_shift()  # {scheme: do block 1's scores change when every position moves by SHIFT}
    stage_options = ("x", "q", "scores")
    moved = [scheme for scheme in SCHEMES if shifted[scheme]]
    return [
        Numeric(
            label="q-where-it-plugs-in-learned",
            prompt=f"GPT-2 small: width d = {d_model}, {max_len:,} positions, {n_layers} blocks. How many trainable "
            "parameters does its learned position table add to the model?",
            answer=lambda: table,
            relative=0.0,
            explanation=f"One vector of d numbers per position, {max_len:,} × {d_model} = {table:,}, added once to the "
            "input: the blocks have no position parameters.",
            wrong=(
                Wrong(
                    lambda: n_layers * table,
                    "The table is added to the input once, before block 1; it is not repeated in every block.",
                ),
                Wrong(lambda: 0, "The sinusoidal table is a fixed buffer; the learned one is trained."),
            ),
        ),
        Numeric(
            label="q-where-it-plugs-in-t5",
            prompt=f"The same model with T5's relative bias instead: {n_heads} heads, {t5.num_buckets} buckets of "
            "the offset r = j - i, one table shared by all the blocks. How many trainable parameters does it add?",
            answer=lambda: t5_table,
            relative=0.0,
            explanation=f"One learned scalar per bucket and head, {t5.num_buckets} × {n_heads} = {t5_table:,}, "
            f"added to the scores in every block: {table // t5_table:,} times fewer than the learned table.",
            wrong=(
                Wrong(
                    lambda: n_layers * t5_table,
                    "T5 keeps one table per stack, shared by its layers: it is not repeated in every block.",
                ),
                Wrong(
                    lambda: t5.num_buckets * d_model,
                    "The bias is one scalar per head added to a score, not a vector of width d.",
                ),
                Wrong(lambda: 0, "Unlike ALiBi's fixed slopes, T5's bias values are trained."),
            ),
        ),
        Choice(
            label="q-where-it-plugs-in-rope",
            prompt="The same weights run with RoPE and with no positional encoding. Which is the first tensor of "
            "block 1, in the order input x, queries q_proj = W_q x, rotated queries q, scores, that differs "
            "between the two runs?",
            options=(
                Option("The input x: RoPE is added to the token vectors.", "RoPE adds nothing to the token vectors."),
                Option("The projections q_proj = W_q x.", "The projections see the same x and the same W_q."),
                Option(
                    "The rotated queries and keys q, k.",
                    "x, q_proj and the values are the same as without positions; RoPE turns q and k before the "
                    "dot product, in every layer.",
                ),
                Option("Only the scores, by a bias.", "That is ALiBi; RoPE acts on q and k themselves."),
            ),
            correct=2,
            verify=lambda: {"x": 0, "q_proj": 1, "q": 2, "scores": 3}.get(first["rope"] or "", -1),
            explanation="The values are never rotated: RoPE changes what enters the dot product, not what is mixed.",
        ),
        Choice(
            label="q-where-it-plugs-in-alibi",
            prompt="The same question for ALiBi and for T5's learned bias (its table drawn at random, not zero): "
            "which of x, q, the scores is the first tensor of block 1 that differs from the run without positions?",
            options=tuple(
                Option(STAGE_NAMES[stage], feedback)
                for stage, feedback in zip(
                    stage_options,
                    (
                        "Neither adds anything to the token vectors.",
                        "The queries and keys are those of the run without positions.",
                        "ALiBi adds m_h r to the scores, T5 its table's value for the bucket of r, in every layer; "
                        "q and k are untouched.",
                    ),
                )
            ),
            correct=2,
            verify=lambda: stage_options.index(first["alibi"]) if first["alibi"] == first["t5"] else -1,
            explanation="The difference of the two runs' scores is exactly the bias: for ALiBi pe.alibi_bias, the "
            "slope of the head times r = j - i; for T5 the table's entry for the bucket of r. With T5's zero start "
            "nothing would differ at all.",
        ),
        Choice(
            label="q-where-it-plugs-in-shift",
            prompt=f"Every position of the input is moved by {SHIFT} (the same tokens, further into a document). For "
            "which schemes do block 1's attention scores change (beyond float32 rounding)?",
            options=(
                Option(
                    "sinusoidal and learned",
                    "An added vector differs at every new position; RoPE's rotations cancel in the score, and ALiBi "
                    "and T5 see only r = j - i.",
                ),
                Option("all six", "NoPE has no position at all, and three of the others see only offsets."),
                Option("RoPE, ALiBi and T5", "Those three see only the offset r = j - i, which the shift keeps."),
                Option("none of them", "An added encoding hands the block other vectors at the new positions."),
            ),
            correct=0,
            verify=lambda: {("sinusoidal", "learned"): 0, tuple(SCHEMES): 1, ("rope", "alibi", "t5"): 2, (): 3}.get(
                tuple(moved), -1
            ),
            explanation=f"Scores that change: {', '.join(moved)}. Relative schemes act on query-key pairs and give "
            "the same scores wherever the tokens stand.",
        ),
    ]


def _models() -> dict:
    config = TransformerConfig(vocab_size=64, scheme="none", causal=True, d_model=32, n_heads=4, max_len=256)
    return models_under_schemes(build_model(config, seed=0), SCHEMES)  # T5's table drawn, not zero


IDS = torch.tensor([[5, 17, 3, 42, 8]])  # (b, s) = (1, 5)


def _largest_difference(a: torch.Tensor, b: torch.Tensor) -> float:
    finite = torch.isfinite(a) & torch.isfinite(b)  # the causal mask's -inf left out
    return (a - b)[finite].abs().max().item()


@functools.cache  # the same seeded models every time: run them once per process
def _first_changed_stage() -> dict[str, str | None]:
    models = _models()
    with torch.no_grad():
        traces = {scheme: model.trace(IDS)[0] for scheme, model in models.items()}
    return {scheme: first_changed_stage(traces[scheme], traces["none"]) for scheme in SCHEMES[1:]}


@functools.cache  # the same seeded models every time: run them once per process
def _changed_by_shift() -> dict[str, bool]:
    with torch.no_grad():
        return {
            scheme: _largest_difference(model.trace(IDS, offset=SHIFT)[0]["scores"], model.trace(IDS)[0]["scores"])
            > 1e-5  # float32 rounding of RoPE's rotated vectors stays far below
            for scheme, model in _models().items()
        }
