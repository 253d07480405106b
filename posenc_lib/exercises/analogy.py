"""Checkers for the analogy chapter's coding exercises.

- :func:`check_add_positions`: ``fn(words, d_model, first=0)`` returns the ``(s, d)`` input a
  Transformer's first block sees for a chunk of text whose first word sits at position
  ``first``: ``embed_words(words, d_model)`` plus the interleaved sinusoidal encoding of
  positions ``first .. first + s - 1``. A chunk padded on the left with :data:`PAD` tokens (a batch
  of chunks of unequal lengths) gets a zero row for each pad, and its first real word still sits at
  position ``first``: positions count real words only. The answer may build the rows with
  :func:`posenc_lib.sinusoidal_encoding` (the exercise asks for it); it runs with
  :class:`posenc_lib.SinusoidalPositionalEncoding` switched off, whose ``forward(x, offset)``
  computes the whole answer in one call.
- :func:`check_position_share`: ``fn(vector, d_model)`` returns ``(gamma, share)``, the factor that
  shrinks a sinusoidal table until its rows are as short as a drawn ``vector``, and the norm of
  such a shrunken position vector at width ``d_model`` relative to a std-1 word vector.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from ..sinusoidal import SinusoidalPositionalEncoding, sinusoidal_encoding
from ..toy import embed_words
from ._core import Case, CheckResult, Diagnosis, check_function

PAD = "<pad>"  # the padding token of the exercise: no word, no position

ADD_HINT = (
    "row i must be embed_words(words, d_model)[i] plus the sinusoidal position vector of position "
    "first + i: the rows first .. first + s - 1 of the table; with pads on the left, a pad's row is zero "
    "and the k-th real word gets position first + k."
)


def _positions(seq_len: int, d_model: int, first: int) -> torch.Tensor:
    return sinusoidal_encoding(seq_len, d_model, offset=first)  # (s, d): positions first .. first + s - 1


def reference_input(words: list[str], d_model: int, first: int = 0) -> torch.Tensor:
    """``embed_words(real) + PE[first : first + len(real)]`` in the rows of the real words, zeros for pads: (s, d)."""
    real = [word for word in words if word != PAD]
    out = torch.zeros(len(words), d_model)
    if real:
        rows = torch.tensor([word != PAD for word in words])  # (s,) bool
        out[rows] = embed_words(real, d_model) + _positions(len(real), d_model, first)
    return out


def _unpadded(wrong: Callable[[list[str], int, int], torch.Tensor | None]) -> Callable[..., torch.Tensor | None]:
    """A wrong answer for chunks without pads only (``None`` on a padded chunk)."""
    return lambda w, d, f: None if PAD in w else wrong(w, d, f)


def _pads_counted(words: list[str], d_model: int, first: int) -> torch.Tensor:
    """Pads zeroed, but the real words numbered from ``first`` over the whole chunk, pads included."""
    rows = torch.tensor([word != PAD for word in words])[:, None]  # (s, 1)
    return (embed_words(words, d_model) + _positions(len(words), d_model, first)) * rows


def check_add_positions(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(words, d_model, first=0) -> (s, d)``: word vectors plus the position vectors of ``first ..``."""
    sentence = "the cat sat on the mat".split()
    arguments = [
        (["The", "cat"], 4, 0, "the first chunk: positions 0 and 1."),
        (sentence, 8, 0, ""),
        (sentence, 8, 6, "the next chunk of six words: positions 6 .. 11."),
        ("and then it slept".split(), 16, 37, "a chunk that starts at position 37."),
        (["cat"], 5, 1000, "one word at position 1000, odd width: a single row, its last column a sine."),
        ([PAD, PAD, "the", "cat"], 8, 0, "left padding: two pads (zero rows), then 'the' at position 0."),
        ([PAD, "it", "slept"], 6, 12, "a padded later chunk: a zero row, then positions 12 and 13."),
    ]
    cases = [
        Case(f"words={w}, d_model={d}, first={f}", (w, d, f), {}, reference_input(w, d, f), hint)
        for w, d, f, hint in arguments
    ]
    diagnoses = [
        Diagnosis(
            f"a {PAD!r} token is padding, not a word: its row must be zero, and positions count the real words "
            "only, so the first real word sits at position first. You treated the pads as words.",
            lambda w, d, f: embed_words(w, d) + _positions(len(w), d, f) if PAD in w else None,
        ),
        Diagnosis(
            "the pads' rows are zero, but your positions count the pads too: the first real word must sit at "
            "position first, as it would without padding (what position_ids built from the mask give).",
            lambda w, d, f: _pads_counted(w, d, f) if PAD in w else None,
        ),
        Diagnosis(
            "every chunk restarts at position 0: the rows must be those of positions first, first + 1, ...; "
            "a later chunk that reuses positions 0, 1, ... tells the model it is at the start of the text.",
            _unpadded(lambda w, d, f: embed_words(w, d) + _positions(len(w), d, 0) if f else None),
        ),
        Diagnosis(
            "off by one: the first word sits at position first itself (the first chunk starts with the row "
            "[0, 1, 0, 1, ...] of position 0), not at first + 1.",
            _unpadded(lambda w, d, f: embed_words(w, d) + _positions(len(w), d, f + 1)),
        ),
        Diagnosis(
            "every word got the same position vector PE(first): word i sits at position first + i.",
            _unpadded(lambda w, d, f: embed_words(w, d) + _positions(1, d, f) if len(w) > 1 else None),
        ),
        Diagnosis(
            "these are the word vectors alone: add the position vectors.", _unpadded(lambda w, d, f: embed_words(w, d))
        ),
        Diagnosis(
            "these are the position vectors alone: add them to the word vectors.",
            _unpadded(lambda w, d, f: _positions(len(w), d, f)),
        ),
        Diagnosis(
            "you concatenated [word | position] (2 * d_model columns); the Transformer adds them, keeping d_model.",
            _unpadded(lambda w, d, f: torch.cat([embed_words(w, d), _positions(len(w), d, f)], dim=-1)),
        ),
        Diagnosis(
            "you multiplied the two; the position vector is added to the word vector.",
            _unpadded(lambda w, d, f: embed_words(w, d) * _positions(len(w), d, f)),
        ),
    ]
    return check_function(
        "Position vectors of a later, padded chunk",
        fn,
        cases,
        hint=ADD_HINT,
        diagnoses=diagnoses,
        forbidden=[SinusoidalPositionalEncoding],
    )


# --------------------------------------------------------------------------- how large is a shrunken table?


def _norm(vector: Any) -> tuple[float, int]:
    values = torch.as_tensor(vector, dtype=torch.float64).flatten()
    return float(values.norm()), values.numel()


def reference_share(vector: Any, d_model: int) -> tuple[float, float]:
    """``(gamma, share)`` for a drawn position vector of a width-``n`` table, ``n = len(vector)``.

    Every row of the sinusoidal table of width ``n`` has norm ``sqrt(n / 2)``, so shrinking the
    table until its rows are as short as ``vector`` takes ``gamma = |vector| / sqrt(n / 2)``. At width
    ``d_model`` the shrunken rows have norm ``gamma sqrt(d / 2)`` and word vectors with std-1 entries
    about ``sqrt(d)``: ``share = gamma / sqrt(2)``, whatever ``d_model`` is.
    """
    norm, n = _norm(vector)
    gamma = norm / (n / 2) ** 0.5
    return gamma, gamma * (d_model / 2) ** 0.5 / d_model**0.5


def _pair_close(got: Any, expected: tuple[float, float]) -> bool:
    """Two numbers (tuple, list, array or tensor), each within 0.1% of the expected one."""
    try:
        values = torch.as_tensor(got, dtype=torch.float64).flatten()
    except (TypeError, ValueError, RuntimeError):
        return False
    want = torch.tensor(expected, dtype=torch.float64)
    return values.shape == want.shape and bool(torch.allclose(values, want, rtol=1e-3, atol=1e-9))


def _wrong_share(
    vector: Any, d_model: int, *, row: str = "half", word: str = "full", table_width: str = "vector"
) -> tuple[float, float]:
    """``(gamma, share)`` with one mistake: a row norm of sqrt(n) instead of sqrt(n/2), a word norm of
    sqrt(d/2), or the table width taken from ``d_model`` instead of the vector."""
    norm, n = _norm(vector)
    width = n if table_width == "vector" else d_model
    gamma = norm / (width / 2 if row == "half" else width) ** 0.5
    position = gamma * (d_model / 2) ** 0.5
    words = d_model**0.5 if word == "full" else (d_model / 2) ** 0.5
    return gamma, position / words


SHARE_HINT = (
    "a row of the width-n table has norm sqrt(n/2), n = len(vector): gamma = |vector| / sqrt(n/2). "
    "At width d the shrunken rows have norm gamma sqrt(d/2), a std-1 word vector about sqrt(d)."
)


def check_position_share(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(vector, d_model) -> (gamma, share)`` (see :func:`reference_share`)."""
    drawn = [0.02, 0.01, 0.05, 0.03]
    arguments = [
        (drawn, 512, "the vector of the picture, at d = 512."),
        (drawn, 64, "the same vector at d = 64: does the share depend on d?"),
        ([0.1, -0.2, 0.05, 0.3, 0.0, 0.1], 768, "a drawn vector of 6 entries: a row of the d = 6 table."),
        ([0.5, 0.5], 16, "two entries: one sin/cos pair, norm 1 per row."),
    ]
    cases = [Case(f"vector={v}, d_model={d}", (v, d), {}, reference_share(v, d), hint) for v, d, hint in arguments]
    diagnoses = [
        Diagnosis(
            "a row of the width-n sinusoidal table has norm sqrt(n/2), not sqrt(n): each sin/cos pair "
            "contributes sin^2 + cos^2 = 1.",
            lambda v, d: _wrong_share(v, d, row="full"),
        ),
        Diagnosis(
            "gamma is right; at width d the position part has norm gamma sqrt(d/2) and the word vector, d entries "
            "of std 1, about sqrt(d), not sqrt(d/2): share is not gamma.",
            lambda v, d: _wrong_share(v, d, word="half"),
        ),
        Diagnosis(
            "the drawn vector is a row of the table of width n = len(vector); d_model is only the width "
            "at which the shrunken table is used.",
            lambda v, d: _wrong_share(v, d, table_width="d_model"),
        ),
        Diagnosis(
            "gamma is right; share is the position part over the word part, not the other way round.",
            lambda v, d: (reference_share(v, d)[0], 1 / reference_share(v, d)[1]),
        ),
    ]
    return check_function(
        "How large is a shrunken table?", fn, cases, hint=SHARE_HINT, diagnoses=diagnoses, compare=_pair_close
    )
