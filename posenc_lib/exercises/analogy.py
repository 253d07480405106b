"""Checker for the analogy chapter's coding exercise: word vectors plus position vectors of a later chunk.

The student writes ``fn(words, d_model, first=0)`` returning the ``(s, d)`` input a
Transformer's first block sees for a chunk of text whose first word sits at position
``first``: ``embed_words(words, d_model)`` plus the interleaved sinusoidal encoding of
positions ``first .. first + s - 1``. The answer may build the rows with
:func:`posenc_lib.sinusoidal_encoding` (the exercise asks for it); it runs with
:class:`posenc_lib.SinusoidalPositionalEncoding` switched off, whose ``forward(x, offset)``
computes the whole answer in one call.
"""

from __future__ import annotations

from typing import Any, Callable

import torch

from ..sinusoidal import SinusoidalPositionalEncoding, sinusoidal_encoding
from ..toy import embed_words
from ._core import Case, CheckResult, Diagnosis, check_function

ADD_HINT = ("row i must be embed_words(words, d_model)[i] plus the sinusoidal position vector of position "
            "first + i: the rows first .. first + s - 1 of the table.")


def _positions(seq_len: int, d_model: int, first: int) -> torch.Tensor:
    return sinusoidal_encoding(seq_len, d_model, offset=first)  # (s, d): positions first .. first + s - 1


def reference_input(words: list[str], d_model: int, first: int = 0) -> torch.Tensor:
    """``embed_words(words, d_model) + PE[first : first + s]``, shape ``(s, d)``."""
    return embed_words(words, d_model) + _positions(len(words), d_model, first)


def check_add_positions(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(words, d_model, first=0) -> (s, d)``: word vectors plus the position vectors of ``first ..``."""
    sentence = "the cat sat on the mat".split()
    arguments = [
        (["The", "cat"], 4, 0, "the first chunk: positions 0 and 1."),
        (sentence, 8, 0, ""),
        (sentence, 8, 6, "the next chunk of six words: positions 6 .. 11."),
        ("and then it slept".split(), 16, 37, "a chunk that starts at position 37."),
        (["cat"], 5, 1000, "one word at position 1000, odd width: a single row, its last column a sine."),
    ]
    cases = [Case(f"words={w}, d_model={d}, first={f}", (w, d, f), {}, reference_input(w, d, f), hint)
             for w, d, f, hint in arguments]
    diagnoses = [
        Diagnosis(
            "every chunk restarts at position 0: the rows must be those of positions first, first + 1, ...; "
            "a later chunk that reuses positions 0, 1, ... tells the model it is at the start of the text.",
            lambda w, d, f: embed_words(w, d) + _positions(len(w), d, 0) if f else None,
        ),
        Diagnosis(
            "off by one: the first word sits at position first itself (the first chunk starts with the row "
            "[0, 1, 0, 1, ...] of position 0), not at first + 1.",
            lambda w, d, f: embed_words(w, d) + _positions(len(w), d, f + 1),
        ),
        Diagnosis(
            "every word got the same position vector PE(first): word i sits at position first + i.",
            lambda w, d, f: embed_words(w, d) + _positions(1, d, f) if len(w) > 1 else None,
        ),
        Diagnosis("these are the word vectors alone: add the position vectors.", lambda w, d, f: embed_words(w, d)),
        Diagnosis("these are the position vectors alone: add them to the word vectors.",
                  lambda w, d, f: _positions(len(w), d, f)),
        Diagnosis(
            "you concatenated [word | position] (2 * d_model columns); the Transformer adds them, keeping d_model.",
            lambda w, d, f: torch.cat([embed_words(w, d), _positions(len(w), d, f)], dim=-1),
        ),
        Diagnosis("you multiplied the two; the position vector is added to the word vector.",
                  lambda w, d, f: embed_words(w, d) * _positions(len(w), d, f)),
    ]
    return check_function(
        "Word vectors + position vectors of a later chunk",
        fn,
        cases,
        hint=ADD_HINT,
        diagnoses=diagnoses,
        forbidden=[SinusoidalPositionalEncoding],
    )
