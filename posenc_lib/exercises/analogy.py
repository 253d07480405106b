"""Checker for the analogy chapter's coding exercise: word vector + position vector.

The student writes ``fn(words, d_model)`` returning the ``(s, d)`` input a
Transformer's first block sees: ``embed_words(words, d_model)`` plus the
interleaved sinusoidal encoding of positions ``0 .. s - 1``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from ..sinusoidal import sinusoidal_encoding
from ..toy import embed_words
from ._core import Case, CheckResult, Diagnosis, check_function


def _positions(seq_len: int, d_model: int, *, first: int = 0) -> torch.Tensor:
    return sinusoidal_encoding(seq_len, d_model, offset=first)  # (s, d)


def reference_input(words: list[str], d_model: int) -> torch.Tensor:
    """``embed_words(words, d_model) + PE[0 : s]``, shape ``(s, d)``."""
    return embed_words(words, d_model) + _positions(len(words), d_model)


def check_add_positions(fn: Callable[[list[str], int], Any]) -> CheckResult:
    """Check ``fn(words, d_model) -> (s, d)`` is word vectors plus sinusoidal position vectors."""
    arguments = [(["The", "cat"], 4), ("the cat sat on the mat".split(), 8), (["cat"], 5)]
    cases = [Case(f"words={w}, d_model={d}", (w, d), {}, reference_input(w, d)) for w, d in arguments]
    diagnoses = [
        Diagnosis(
            "the first word sits at position 0 (the row [0, 1, 0, 1, ...]); you started counting at 1.",
            lambda w, d: embed_words(w, d) + _positions(len(w), d, first=1),
        ),
        Diagnosis("these are the word vectors alone: add the position vectors.", lambda w, d: embed_words(w, d)),
        Diagnosis(
            "these are the position vectors alone: add them to the word vectors.", lambda w, d: _positions(len(w), d)
        ),
        Diagnosis(
            "you concatenated [word | position] (2 * d_model columns); the Transformer adds them, keeping d_model.",
            lambda w, d: torch.cat([embed_words(w, d), _positions(len(w), d)], dim=-1),
        ),
        Diagnosis(
            "you multiplied the two; the position vector is added to the word vector.",
            lambda w, d: embed_words(w, d) * _positions(len(w), d),
        ),
    ]
    return check_function(
        "Word vector + position vector",
        fn,
        cases,
        hint="row i must be embed_words(words, d_model)[i] + sinusoidal_encoding(len(words), d_model)[i].",
        diagnoses=diagnoses,
    )
