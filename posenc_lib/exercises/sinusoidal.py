"""Checkers for the sinusoidal chapter's coding exercises.

- :func:`check_sinusoidal`: ``fn(seq_len, d_model)`` returns the interleaved
  sinusoidal table ``(s, d)`` (numpy or torch), for any ``d`` including odd.
- :func:`check_shift_matrix`: ``fn(delta, d_model)`` returns the ``(d, d)`` matrix
  ``M_Δ`` with ``PE(p + Δ) = M_Δ @ PE(p)`` for every position ``p`` (even ``d``), in the
  *concatenated* layout (all sines, then all cosines) of tensor2tensor and fairseq; the
  chapter shows the interleaved one, so the answer is a step it does not show.

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
from ._core import Case, CheckResult, Diagnosis, check_function

# what the sinusoidal-table exercise asks the student to write (shift_matrix alone for the shift matrix)
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


SINUSOIDAL_DIAGNOSES = [
    Diagnosis(
        "your exponent is off by one pair: pair l = 0 must have frequency 1 (wavelength 2*pi), i.e. "
        "θ_l = 10000^(-2l/d) with l starting at 0, not 10000^(-2(l+1)/d).",
        lambda s, d: _table(s, d, exponent=lambda k, d: 2 * (k + 1) / d),
    ),
    Diagnosis(
        "the cosine column 2l+1 must use the SAME frequency as the sine column 2l: θ_l = 10000^(-2l/d). "
        "You used the odd column's own index, 10000^(-(2l+1)/d).",
        lambda s, d: _table(s, d, cos_exponent=lambda k, d: (2 * k + 1) / d),
    ),
    Diagnosis(
        "you doubled the index: with c = 2l the column index, the exponent is c/d = 2l/d, not 2c/d = 4l/d "
        "(writing 2i with i already the column index is the classic mix-up).",
        lambda s, d: _table(s, d, exponent=lambda k, d: 4 * k / d),
    ),
    Diagnosis(
        "sin and cos are swapped: even columns (0, 2, 4, ...) hold sin, odd columns hold cos. "
        "Check position 0: it must be [0, 1, 0, 1, ...].",
        lambda s, d: _table(s, d, swap=True),
    ),
    Diagnosis(
        "these are the right numbers in the concatenated layout [all sines | all cosines]; "
        "this exercise asks for the interleaved one: column 2l = sin, column 2l+1 = cos.",
        lambda s, d: _table(s, d, concatenated=True),
    ),
    Diagnosis(
        "positions start at 0, not 1: the first row is position 0.",
        lambda s, d: _table(s, d, first_position=1),
    ),
    Diagnosis(
        "for odd d_model the table still has d_model columns: the last one is a sine whose cosine partner "
        "does not fit. You returned d_model + 1 columns.",
        lambda s, d: _table(s, d + 1) if d % 2 else None,
    ),
    Diagnosis(
        "the exponent's sign is flipped: θ_l = 10000^(-2l/d) shrinks with l (angle p / 10000^(2l/d)); "
        "you multiplied p by 10000^(2l/d).",
        lambda s, d: _table(s, d, exponent=lambda k, d: -2 * k / d),
    ),
]

SINUSOIDAL_HINT = (
    "row p, column 2l is sin(p * θ_l), column 2l+1 is cos(p * θ_l), θ_l = 10000^(-2l/d); "
    "for odd d the last column is a sine."
)


def check_sinusoidal(fn: Callable[[int, int], Any]) -> CheckResult:
    """Check ``fn(seq_len, d_model) -> (s, d)`` against the interleaved sinusoidal table (base 10000)."""
    shapes = [
        (8, 6, ""),
        (50, 64, ""),
        (1, 4, "seq_len = 1: a single row, position 0."),
        (10, 7, "odd d_model: the last column is the sine of a pair whose cosine does not fit."),
        (3, 1, "d_model = 1: a single column, sin(p * 1)."),
    ]
    cases = [Case(f"seq_len={s}, d_model={d}", (s, d), {}, _table(s, d), hint) for s, d, hint in shapes]
    return check_function(
        "Sinusoidal table from the formula",
        fn,
        cases,
        hint=SINUSOIDAL_HINT,
        diagnoses=SINUSOIDAL_DIAGNOSES,
        forbidden=TABLE_CODE,
    )


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
