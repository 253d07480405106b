"""Checkers for the sinusoidal chapter's coding exercises.

- :func:`check_shift_matrix`: ``fn(delta, d_model)`` returns the ``(d, d)`` matrix
  ``M_Δ`` with ``PE(p + Δ) = M_Δ @ PE(p)`` for every position ``p`` (even ``d``), in the
  *concatenated* layout (all sines, then all cosines) of tensor2tensor and fairseq; the
  chapter shows the interleaved one, so the answer is a step it does not show.
- :func:`check_next_row`: ``fn(row)`` returns ``PE(p + 1)`` from the row ``PE(p)`` alone (even
  ``d``, interleaved), without being told ``p``. The chapter prints the table's formula and
  checks the shift identity, but never builds a row from the previous one.

The references are computed here from the formulas, in float64; the student's answer runs with
posenc_lib's sinusoidal table, frequencies and shift matrix switched off (see ``_core``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import fast
from ..sinusoidal import (
    SinusoidalPositionalEncoding,
    shift_matrix,
    sinusoidal_encoding,
    sinusoidal_encoding_loop,
    sinusoidal_frequencies,
)
from ._core import Case, CheckResult, Diagnosis, arrays_close, check_function

# what builds the table; the next-row exercise must not call it (shift_matrix alone for the shift matrix)
TABLE_CODE = (
    sinusoidal_encoding,
    sinusoidal_frequencies,
    sinusoidal_encoding_loop,
    SinusoidalPositionalEncoding,
    fast.sinusoidal_table,
)

BASE = 10000.0


def _table(
    seq_len: int,
    d_model: int,
    *,
    exponent: Callable[[np.ndarray, int], np.ndarray] | None = None,
    cos_exponent: Callable[[np.ndarray, int], np.ndarray] | None = None,
    swap: bool = False,
    first_position: int = 0,
    concatenated: bool = False,
) -> np.ndarray:
    """An interleaved table with one thing changed; the typical wrong answers are built from it.

    ``exponent(ℓ, d)`` gives the power of ``BASE`` dividing the angle for the sine column of
    pair ``ℓ`` (right answer: ``2ℓ / d``); ``cos_exponent`` the same for the cosine column.
    """
    exponent = exponent or (lambda k, d: 2 * k / d)
    cos_exponent = cos_exponent or exponent
    positions = np.arange(first_position, first_position + seq_len, dtype=np.float64)[:, None]  # (s, 1)
    sin_pairs = np.arange((d_model + 1) // 2, dtype=np.float64)  # (ceil(d/2),)
    cos_pairs = np.arange(d_model // 2, dtype=np.float64)  # (floor(d/2),)
    even = positions / BASE ** exponent(sin_pairs, d_model)  # (s, ceil(d/2)) angles of the even columns
    odd = positions / BASE ** cos_exponent(cos_pairs, d_model)  # (s, floor(d/2)) angles of the odd columns
    first, second = (np.cos, np.sin) if swap else (np.sin, np.cos)
    table = np.empty((seq_len, d_model))
    if concatenated:  # [all sines | all cosines]
        return np.concatenate([first(even), second(odd)], axis=1)
    table[:, 0::2] = first(even)
    table[:, 1::2] = second(odd)
    return table


def _theta(d_model: int, *, first_pair: int = 0) -> np.ndarray:
    """``θ_ℓ = 10000^(-2ℓ/d)`` for the ``d/2`` pairs ``ℓ = first_pair, first_pair + 1, ...``."""
    return BASE ** (-2.0 * (np.arange(d_model // 2) + first_pair) / d_model)


def _block_rotation(
    delta: float, d_model: int, theta: np.ndarray, *, sign: float = 1.0, mirror: float = -1.0
) -> np.ndarray:
    """Block-diagonal matrix of 2x2 blocks [[cos, sign*sin], [mirror*sign*sin, cos]] of angle Δ θ_ℓ.

    With the defaults this is the interleaved ``M_Δ``: ``sin(a + b) = sin a cos b + cos a sin b`` and
    ``cos(a + b) = cos a cos b - sin a sin b`` for the pair ``(sin a, cos a)``, ``b = Δ θ_ℓ``.
    """
    matrix = np.zeros((d_model, d_model))
    for pair, frequency in enumerate(theta):
        c, s = np.cos(delta * frequency), np.sin(delta * frequency)
        matrix[2 * pair : 2 * pair + 2, 2 * pair : 2 * pair + 2] = [[c, sign * s], [mirror * sign * s, c]]
    return matrix


def _shift(delta: float, d_model: int) -> np.ndarray:
    """The interleaved ``M_Δ`` (the chapter shows it; the exercise asks for the concatenated one)."""
    return _block_rotation(delta, d_model, _theta(d_model))


def _to_concatenated(d_model: int) -> np.ndarray:
    """Column order ``[0, 2, 4, ..., 1, 3, 5, ...]``: ``concatenated = interleaved[:, order]``."""
    return np.concatenate([np.arange(0, d_model, 2), np.arange(1, d_model, 2)])


def _permuted(matrix: np.ndarray, rows: np.ndarray | None, columns: np.ndarray | None) -> np.ndarray:
    """``matrix`` with its rows and/or columns taken in the given orders."""
    if rows is not None:
        matrix = matrix[rows]
    if columns is not None:
        matrix = matrix[:, columns]
    return matrix


def _concatenated_shift(delta: float, d_model: int) -> np.ndarray:
    """``M_Δ`` of the concatenated layout: the interleaved one with rows and columns reordered, ``P M_Δ P^T``."""
    order = _to_concatenated(d_model)
    return _permuted(_shift(delta, d_model), order, order)


SHIFT_DIAGNOSES = [
    Diagnosis(
        "this is M_Δ of the interleaved layout (2x2 blocks on the diagonal). In the concatenated layout the "
        "sine of pair l sits in column l and its cosine in column d/2 + l: reorder the rows AND the columns.",
        lambda delta, d: _shift(delta, d) if d > 2 else None,
    ),
    Diagnosis(
        "you reordered only the rows of the interleaved M_Δ. The layout reorders both the vector M_Δ "
        "produces (its rows) and the vector it acts on (its columns): P M_Δ P^T.",
        lambda delta, d: _permuted(_shift(delta, d), _to_concatenated(d), None) if d > 2 else None,
    ),
    Diagnosis(
        "you reordered only the columns of the interleaved M_Δ. The layout reorders both the vector M_Δ "
        "acts on (its columns) and the vector it produces (its rows): P M_Δ P^T.",
        lambda delta, d: _permuted(_shift(delta, d), None, _to_concatenated(d)) if d > 2 else None,
    ),
    Diagnosis(
        "you used the inverse order: interleaved_to_concatenated_permutation gives, for each column of the "
        "concatenated table, the interleaved column it comes from; take rows and columns in that order.",
        lambda delta, d: _permuted(_shift(delta, d), *(2 * [np.argsort(_to_concatenated(d))])) if d > 4 else None,
    ),
    Diagnosis(
        "your matrix shifts the wrong way: it maps PE(p) to PE(p - Δ). The sin(Δ θ_l) entry in the sine's "
        "row must be positive: sin(a + b) = sin a cos b + cos a sin b.",
        lambda delta, d: _concatenated_shift(-delta, d) if delta else None,
    ),
    Diagnosis(
        "every pair turns by its own angle Δ θ_l with θ_l = 10000^(-2l/d); you used Δ for all of them.",
        lambda delta, d: _permuted(_block_rotation(delta, d, np.ones(d // 2)), *(2 * [_to_concatenated(d)])),
    ),
    Diagnosis(
        "your matrix does not depend on Δ: it is the identity, which is M_0 only.",
        lambda delta, d: np.eye(d),
    ),
]

SHIFT_HINT = (
    "in the concatenated layout PE(p) = [sin(p θ) | cos(p θ)], so M_Δ = [[C, S], [-S, C]] "
    "with the diagonal matrices C = diag(cos(Δ θ_l)) and S = diag(sin(Δ θ_l)); equivalently "
    "the interleaved M_Δ with its rows and its columns reordered."
)


def check_shift_matrix(fn: Callable[[float, int], Any]) -> CheckResult:
    """Check ``fn(delta, d_model) -> (d, d)``: ``PE(p + Δ) = M_Δ PE(p)`` in the concatenated layout (even ``d``).

    The concatenated table is the interleaved one with its columns in the order ``P`` gives, so
    its shift matrix is the interleaved ``M_Δ`` with rows and columns reordered, ``P M_Δ P^T``
    (unique, as the rows of the table span the space). The answer runs with
    :func:`posenc_lib.shift_matrix` switched off.
    """
    arguments = [
        (1, 2, "d_model = 2: one pair, the same in both layouts."),
        (3, 4, ""),
        (0, 6, "Δ = 0: M_0 is the identity."),
        (-2, 8, "a negative Δ shifts towards earlier positions: angles Δ θ_l < 0."),
        (5, 16, ""),
        (7, 64, ""),
    ]
    cases = [
        Case(f"delta={delta}, d_model={d}", (delta, d), {}, _concatenated_shift(delta, d), hint)
        for delta, d, hint in arguments
    ]
    return check_function(
        "Shift matrix M_Δ, concatenated layout",
        fn,
        cases,
        hint=SHIFT_HINT,
        diagnoses=SHIFT_DIAGNOSES,
        forbidden=[shift_matrix],
    )


# --- the next row from the row alone (the exercise of the design path) -------------------------------------


def _rotate_pairs(row: np.ndarray, theta: np.ndarray, *, concatenated: bool = False) -> np.ndarray:
    """``row`` (d,) with pair ``ℓ``, held as ``(sin a, cos a)``, turned to ``(sin(a + θ_ℓ), cos(a + θ_ℓ))``.

    ``concatenated=True`` takes the pairs as columns ``(ℓ, d/2 + ℓ)`` (a wrong answer for the interleaved row).
    """
    half = len(row) // 2
    sines, cosines = (row[:half], row[half:]) if concatenated else (row[0::2], row[1::2])  # (d/2,) each
    c, s = np.cos(theta), np.sin(theta)  # (d/2,)
    new_sines, new_cosines = sines * c + cosines * s, cosines * c - sines * s
    out = np.empty_like(row)
    if concatenated:
        out[:half], out[half:] = new_sines, new_cosines
    else:
        out[0::2], out[1::2] = new_sines, new_cosines
    return out


NEXT_ROW_DIAGNOSES = [
    Diagnosis(
        "your function returns PE(p - 1): each pair turned backwards. With the pair (sin a, cos a) and b = θ_l, "
        "sin(a + b) = sin a cos b + cos a sin b: the sine gains + cos a sin b.",
        lambda row: _rotate_pairs(row, -_theta(len(row))),
    ),
    Diagnosis(
        "you doubled the exponent: pair l (columns 2l and 2l+1) turns by θ_l = 10000^(-2l/d) per step, "
        "not 10000^(-4l/d) (that is reading B of the index mix-up).",
        lambda row: _rotate_pairs(row, BASE ** (-4.0 * np.arange(len(row) // 2) / len(row))) if len(row) > 2 else None,
    ),
    Diagnosis(
        "every pair turns by its own angle θ_l = 10000^(-2l/d); you turned all of them by 1 radian.",
        lambda row: _rotate_pairs(row, np.ones(len(row) // 2)) if len(row) > 2 else None,
    ),
    Diagnosis(
        "you paired column l with column d/2 + l (the concatenated layout); in this row a pair is the "
        "neighbouring columns 2l (sine) and 2l + 1 (cosine).",
        lambda row: _rotate_pairs(row, _theta(len(row)), concatenated=True) if len(row) > 2 else None,
    ),
    Diagnosis(
        "your function returns the row it was given: one step of position turns every pair by θ_l.",
        lambda row: np.array(row, copy=True),
    ),
]

NEXT_ROW_HINT = (
    "the row holds, for each pair l, (sin(p θ_l), cos(p θ_l)) in columns 2l and 2l+1; the angle-addition "
    "formulas with b = θ_l = 10000^(-2l/d) give (sin(p θ_l + b), cos(p θ_l + b)) from those two numbers "
    "alone, without p."
)


def check_next_row(fn: Callable[[np.ndarray], Any]) -> CheckResult:
    """Check ``fn(row) -> (d,)``: from one row ``PE(p)`` of the interleaved table (even ``d``), ``PE(p + 1)``.

    ``fn`` is not told ``p``; the cases are rows at positions from 0 to 5,000 and widths from 2 to
    64. The answer runs with posenc_lib's table, frequencies and shift matrix switched off.
    """
    positions = [
        (0, 8, "position 0: the row [0, 1, 0, 1, ...]; the next one is PE(1)."),
        (7, 8, ""),
        (3, 2, "d_model = 2: one pair, which turns by 1 radian per step."),
        (1000, 16, "a far position: the answer must not depend on knowing p."),
        (5000, 64, ""),
        (123, 64, ""),
    ]
    cases = [
        Case(
            f"PE({p}) with d_model={d}",
            (_table(1, d, first_position=p)[0],),
            {},
            _table(1, d, first_position=p + 1)[0],
            hint,
        )
        for p, d, hint in positions
    ]
    return check_function(
        "The next row of the sinusoidal table",
        fn,
        cases,
        hint=NEXT_ROW_HINT,
        diagnoses=NEXT_ROW_DIAGNOSES,
        compare=lambda got, expected: arrays_close(got, expected, atol=1e-6, rtol=0.0),  # float32 passes
        forbidden=[*TABLE_CODE, shift_matrix],
    )
