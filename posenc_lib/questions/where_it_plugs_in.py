"""Self-check questions for chapter 9, where position plugs in: which tensors each scheme changes, and its cost.

Every answer is computed here with posenc_lib when the notebook runs: a small model is run under each scheme with
the same weights, as the chapter does (see the package docstring).
"""

from __future__ import annotations

import torch

from ..learned import LearnedPositionalEmbedding
from ..model import TRACE_STAGES, TransformerConfig, build_model, count_parameters
from . import Choice, Numeric, Option, Question, Wrong

SHIFT = 100  # positions added to every token in the shift question
SCHEMES = ("none", "sinusoidal", "learned", "rope", "alibi")  # chapter 9's five (not T5)
STAGE_NAMES = {"x": "the input x", "q": "the queries q (and the keys k)", "scores": "the scores"}


def questions() -> list[Question]:
    d_model, max_len, n_layers = 768, 1024, 12  # GPT-2 small
    table = count_parameters(LearnedPositionalEmbedding(d_model, max_len))
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
            verify=lambda: {"x": 0, "q_proj": 1, "q": 2, "scores": 3}[first["rope"]],
            explanation="The values are never rotated: RoPE changes what enters the dot product, not what is mixed.",
        ),
        Choice(
            label="q-where-it-plugs-in-alibi",
            prompt="The same question for ALiBi: which of x, q, the scores is the first tensor of block 1 that "
            "differs from the run without positions?",
            options=tuple(
                Option(STAGE_NAMES[stage], feedback)
                for stage, feedback in zip(
                    stage_options,
                    (
                        "ALiBi adds nothing to the token vectors.",
                        "The queries and keys are those of the run without positions.",
                        "ALiBi adds m_h r to the scores, in every layer; q and k are untouched.",
                    ),
                )
            ),
            correct=2,
            verify=lambda: stage_options.index(first["alibi"]),
            explanation="The difference of the two runs' scores is exactly pe.alibi_bias: the slope of the head "
            "times r = j - i.",
        ),
        Choice(
            label="q-where-it-plugs-in-shift",
            prompt=f"Every position of the input is moved by {SHIFT} (the same tokens, further into a document). For "
            "which schemes do block 1's attention scores change (beyond float32 rounding)?",
            options=(
                Option(
                    "sinusoidal and learned",
                    "An added vector differs at every new position; RoPE's rotations cancel in the score, and ALiBi "
                    "sees only r = j - i.",
                ),
                Option("all five", "NoPE has no position at all, and two of the others see only offsets."),
                Option("RoPE and ALiBi", "Those two see only the offset r = j - i, which the shift keeps."),
                Option("none of them", "An added encoding hands the block other vectors at the new positions."),
            ),
            correct=0,
            verify=lambda: {("sinusoidal", "learned"): 0, tuple(SCHEMES): 1, ("rope", "alibi"): 2, (): 3}.get(
                tuple(moved), -1
            ),
            explanation=f"Scores that change: {', '.join(moved)}. Relative schemes act on query-key pairs and give "
            "the same scores wherever the tokens stand.",
        ),
    ]


def _models() -> dict:
    config = TransformerConfig(vocab_size=64, scheme="none", causal=True, d_model=32, n_heads=4, max_len=256)
    nope = build_model(config, seed=0)
    return {scheme: nope.with_scheme(scheme) for scheme in SCHEMES}


IDS = torch.tensor([[5, 17, 3, 42, 8]])  # (b, s) = (1, 5)


def _largest_difference(a: torch.Tensor, b: torch.Tensor) -> float:
    finite = torch.isfinite(a) & torch.isfinite(b)  # the causal mask's -inf left out
    return (a - b)[finite].abs().max().item()


def _first_changed_stage() -> dict[str, str]:
    models = _models()
    with torch.no_grad():
        traces = {scheme: model.trace(IDS)[0] for scheme, model in models.items()}
    first = {}
    for scheme in SCHEMES[1:]:
        changed = [s for s in TRACE_STAGES if _largest_difference(traces[scheme][s], traces["none"][s]) > 0]
        first[scheme] = changed[0]
    return first


def _changed_by_shift() -> dict[str, bool]:
    with torch.no_grad():
        return {
            scheme: _largest_difference(model.trace(IDS, offset=SHIFT)[0]["scores"], model.trace(IDS)[0]["scores"])
            > 1e-5  # float32 rounding of RoPE's rotated vectors stays far below
            for scheme, model in _models().items()
        }
