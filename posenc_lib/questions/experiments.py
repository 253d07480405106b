"""Self-check questions for chapter 12, the experiments: read from the stored results, computed with posenc_lib.

The measured numbers come from ``book/data/experiments.json`` (the file the chapter reads; ``make experiments``
writes it), the rest from posenc_lib when the notebook runs (see the package docstring).
"""

from __future__ import annotations

from ..explore import METHOD_LABELS
from ..rope import DEFAULT_BASE, rope_frequencies
from ..rope_scaling import rotations
from . import Choice, Numeric, Option, Question, Wrong
from ._stored import experiments, region_mean


def _extended(task: str, method: str, region: str, factor: int = 4) -> float:
    """The mean over seeds of a RoPE model's stored accuracy after a rule, without fine-tuning."""
    return region_mean(task, "rope", region, lambda run: run["extension"]["no_fine_tune"][method][str(factor)])


def questions() -> list[Question]:
    settings = experiments()["settings"]
    language, copy = settings["decoder_tasks"]["language"], settings["decoder_tasks"]["copy"]
    p_rule, vocab = language["p_rule"], language["vocab_size"]
    best = p_rule + (1 - p_rule) / vocab
    head_dim = settings["model"]["d_model"] // settings["model"]["n_heads"]
    train_len = settings["decoder"]["train_len"]
    turns = rotations(rope_frequencies(head_dim), train_len)  # (d_h/2,)
    methods, factor, lag = ("plain", "linear", "ntk", "yarn"), 4, copy["lag"]
    past = {m: _extended("language", m, "4x", factor) for m in methods}
    pi_copy = {region: _extended("copy", "linear", region, factor) for region in ("inside", "4x")}
    plain_copy = _extended("copy", "plain", "inside", factor)
    chance = 1 / copy["vocab_size"]
    window = {
        "inside": region_mean("language", "rope", "inside"),
        "4x": region_mean("language", "rope", "4x", lambda run: run["window"]),
        "plain 4x": region_mean("language", "rope", "4x"),
    }
    return [
        Numeric(
            label="q-experiments-best",
            prompt=f"The tiny language: each word is, with probability {p_rule:g}, a fixed function of the two "
            f"before it, otherwise one of the {vocab} words at random. What is the best accuracy any model can reach?",
            answer=lambda: best,
            explanation=f"Predict the rule's word: right with probability {p_rule:g}, and also when the random word "
            f"happens to be it, (1 - {p_rule:g}) / {vocab}: {best:g} in all.",
            wrong=(Wrong(lambda: p_rule, f"A random word is the rule's word 1 time in {vocab}: add (1 - p)/{vocab}."),),
        ),
        Numeric(
            label="q-experiments-pair0",
            prompt=f"The RoPE decoders have heads of d_h = {head_dim} (base {DEFAULT_BASE:,.0f}) and are trained on L = {train_len} "
            "tokens. How many full turns does pair 0 make within L?",
            answer=lambda: turns[0].item(),
            relative=0.01,
            digits=3,
            explanation=f"L θ_0 / 2π = {train_len} / 2π = {turns[0]:.3g} turns; pair 1 makes {turns[1]:.2g} and the "
            "others less than one. Pair 0 tells neighbouring offsets apart, which is why dividing it by α hurts.",
            wrong=(
                Wrong(lambda: float(train_len), "θ_0 = 1 radian per token, and a turn is 2π radians."),
                Wrong(lambda: turns[1].item(), "That is pair 1; pair 0 is the fastest."),
            ),
        ),
        Choice(
            label="q-experiments-yarn",
            prompt=f"Stretched to α = {factor} without fine-tuning, which rule gives the tiny-language models the highest "
            "accuracy from 2L to 4L?",
            options=tuple(
                Option(METHOD_LABELS[m], f"Stored accuracy from 2L to 4L: {', '.join(_listing(past))}.")
                for m in methods
            ),
            correct=3,
            verify=lambda: methods.index(max(past, key=past.__getitem__)),
            explanation="YaRN keeps the fast pairs and interpolates the slow ones, so it loses neither the short "
            "offsets nor the trained angles.",
        ),
        Choice(
            label="q-experiments-pi-copy",
            prompt=f"The copy task (output the token {lag} back), RoPE models stretched by position interpolation "
            f"to α = {factor}, no fine-tune. What is their accuracy inside the training length?",
            options=(
                Option(
                    "About what it was: inside L every position was seen in training.",
                    _pi_feedback(pi_copy, plain_copy, chance),
                ),
                Option("A little lower.", _pi_feedback(pi_copy, plain_copy, chance)),
                Option("Near chance.", _pi_feedback(pi_copy, plain_copy, chance)),
            ),
            correct=2,
            verify=lambda: 0 if pi_copy["inside"] > plain_copy - 0.05 else 2 if pi_copy["inside"] < 2 * chance else 1,
            explanation="Interpolation changes every angle between a query and a key: offset "
            f"{lag} now turns pair 0 as offset {lag / factor:g} did in training, and the head that looked exactly "
            f"{lag} back finds nothing.",
        ),
        Choice(
            label="q-experiments-window",
            prompt="The tiny-language RoPE models read 4L tokens, but each query sees only its last L keys (a "
            "sliding window). From 2L to 4L, their accuracy is:",
            options=(
                Option("about what it is inside L.", _window_feedback(window)),
                Option("as low as without the window.", _window_feedback(window)),
                Option("lower than without the window: the queries see less.", _window_feedback(window)),
            ),
            correct=0,
            verify=lambda: (
                0
                if window["4x"] > window["inside"] - 0.03
                else 1
                if abs(window["4x"] - window["plain 4x"]) < 0.03
                else 2
            ),
            explanation="What breaks RoPE past L is distances it never saw, not large positions: with a window of L "
            "keys every distance is a trained one, and the scores depend on distances only.",
        ),
    ]


def _listing(values: dict[str, float]) -> list[str]:
    return [f"{METHOD_LABELS[m]} {v:.2f}" for m, v in values.items()]


def _pi_feedback(pi: dict[str, float], plain: float, chance: float) -> str:
    return (
        f"Stored: {pi['inside']:.2f} inside L (plain RoPE: {plain:.2f}); chance is {chance:.4g}; "
        f"from 2L to 4L {pi['4x']:.2f}."
    )


def _window_feedback(window: dict[str, float]) -> str:
    return (
        f"Stored: {window['4x']:.2f} from 2L to 4L with the window, {window['inside']:.2f} inside L, "
        f"{window['plain 4x']:.2f} from 2L to 4L without it."
    )
