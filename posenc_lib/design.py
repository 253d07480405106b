"""Designing a position code from what it should do: naive candidates and the desiderata.

A *code* maps the positions ``0 .. s-1`` of a sequence of ``s`` tokens to an ``(s, d)`` table,
one row per position. The candidates below are the ones a designer tries first; the checks
measure the five things we want of a code, each on a training length ``L`` and on ``factor * L``
positions (``s = factor * L``):

- **unique**: no two positions share a row (:func:`nearest_other_row`);
- **bounded**: every entry stays in ``[-1, 1]``, the scale of a word vector, at every position
  (:func:`largest_entry`);
- **smooth**: one step of position moves the row by the same distance everywhere
  (:func:`step_spread`, the largest over the smallest neighbour distance);
- **shift as a fixed linear map**: one matrix ``M`` with ``code(p + 1) = M code(p)`` for every
  ``p`` (:func:`shift_residual`, the residual of the least-squares ``M``);
- **extrapolates**: a position keeps its row when the sequence grows, and the rows past ``L``
  have no larger norm than those inside (:func:`extrapolation_gap`).

Every code here is a function ``code(seq_len) -> (seq_len, d)`` float64 tensor; the check
functions take such a function, so they can ask for the same code at two lengths. All checks
are exact up to float64 rounding, so each verdict uses the tolerance :data:`TOLERANCE`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from ._checks import check_even_int, check_positive_float, check_positive_int
from .sinusoidal import sinusoidal_encoding

Code = Callable[[int], torch.Tensor]  # seq_len -> (seq_len, d) float64

# a verdict of the checks: a measured value below this counts as zero (float64 rounding is ~1e-13)
TOLERANCE = 1e-9

DESIDERATA = ("unique", "bounded", "smooth", "linear shift", "extrapolates")


def _positions(seq_len: int) -> torch.Tensor:
    """(s,) float64 positions 0 .. s-1."""
    seq_len = check_positive_int("seq_len", seq_len)
    return torch.arange(seq_len, dtype=torch.float64)


def integer_code(seq_len: int) -> torch.Tensor:
    """(s, 1): the position itself, ``p``."""
    return _positions(seq_len)[:, None]


def normalised_code(seq_len: int) -> torch.Tensor:
    """(s, 1): the position divided by the length of its own sequence, ``p / s``."""
    return _positions(seq_len)[:, None] / seq_len


def binary_code(seq_len: int, *, bits: int = 8) -> torch.Tensor:
    """(s, bits): the binary digits of ``p``, least significant first, each 0 or 1.

    Raises ``ValueError`` if ``seq_len`` needs more than ``bits`` digits.
    """
    seq_len = check_positive_int("seq_len", seq_len)
    bits = check_positive_int("bits", bits, maximum=52)
    if seq_len > 2**bits:
        raise ValueError(f"seq_len must be at most 2**bits = {2**bits} for bits = {bits}, got {seq_len}")
    p = torch.arange(seq_len, dtype=torch.int64)[:, None]  # (s, 1)
    digit = torch.arange(bits, dtype=torch.int64)  # (bits,)
    return ((p >> digit) & 1).to(torch.float64)  # (s, bits)


def one_sine_code(seq_len: int, *, wavelength: float = 128.0) -> torch.Tensor:
    """(s, 1): one sine, ``sin(2 pi p / wavelength)``."""
    wavelength = check_positive_float("wavelength", wavelength)
    return torch.sin(2 * math.pi * _positions(seq_len) / wavelength)[:, None]


def one_pair_code(seq_len: int, *, wavelength: float = 128.0) -> torch.Tensor:
    """(s, 2): one sine and its cosine, ``[sin(p θ), cos(p θ)]`` with ``θ = 2 pi / wavelength``."""
    wavelength = check_positive_float("wavelength", wavelength)
    angle = 2 * math.pi * _positions(seq_len) / wavelength  # (s,)
    return torch.stack([angle.sin(), angle.cos()], dim=1)


def sinusoidal_code(seq_len: int, *, d_model: int = 64) -> torch.Tensor:
    """(s, d): the sinusoidal table of Vaswani et al. (interleaved, base 10 000)."""
    d_model = check_even_int("d_model", d_model)
    return sinusoidal_encoding(seq_len, d_model, dtype=torch.float64)


def nearest_other_row(table: torch.Tensor) -> float:
    """Smallest Euclidean distance between two different rows of ``table`` (s, d); s >= 2."""
    table = _check_table("table", table, min_rows=2)
    distance = torch.cdist(table, table)  # (s, s)
    distance.fill_diagonal_(math.inf)
    return float(distance.min())


def largest_entry(table: torch.Tensor) -> float:
    """Largest absolute entry of ``table`` (s, d)."""
    return float(_check_table("table", table).abs().max())


def step_spread(table: torch.Tensor) -> float:
    """Largest over smallest distance between neighbouring rows of ``table`` (s, d); s >= 2.

    1 when every step of one position moves the row by the same distance; infinite when two
    neighbours share a row.
    """
    table = _check_table("table", table, min_rows=2)
    step = (table[1:] - table[:-1]).norm(dim=1)  # (s - 1,): |code(p + 1) - code(p)|
    if float(step.min()) <= TOLERANCE * max(float(step.max()), 1.0):
        return math.inf
    return float(step.max() / step.min())


def shift_map(table: torch.Tensor) -> torch.Tensor:
    """(d, d): the least-squares ``M`` with ``table[p + 1] ≈ M table[p]`` for all rows p."""
    table = _check_table("table", table, min_rows=2)
    # rows: table[1:] ≈ table[:-1] @ M^T, solved for M^T
    solution = torch.linalg.lstsq(table[:-1], table[1:], driver="gelsd").solution  # (d, d): M^T
    return solution.T


def shift_residual(table: torch.Tensor) -> float:
    """Largest ``|table[p + 1] - M table[p]|`` over p for the least-squares shift map ``M``."""
    table = _check_table("table", table, min_rows=2)
    M = shift_map(table)
    return float((table[1:] - table[:-1] @ M.T).norm(dim=1).max())


def extrapolation_gap(code: Code, train_len: int, factor: int = 4) -> float:
    """How much a code changes or grows past its training length (0 if it extrapolates).

    The larger of (a) the largest change of a row ``0 .. L-1`` between the code of a sequence of
    ``L = train_len`` tokens and that of ``factor * L`` tokens, and (b) how far the largest row
    norm past ``L`` exceeds the largest row norm inside.
    """
    train_len = check_positive_int("train_len", train_len)
    factor = check_positive_int("factor", factor)
    if factor < 2:
        raise ValueError(f"factor must be at least 2 (a longer sequence than the training one), got {factor}")
    short = _check_table("code(train_len)", code(train_len))  # (L, d)
    long = _check_table("code(factor * train_len)", code(factor * train_len))  # (factor L, d)
    if short.shape[1] != long.shape[1]:
        raise ValueError(f"code must give the same width at every length, got {short.shape[1]} and {long.shape[1]}")
    moved = float((long[:train_len] - short).norm(dim=1).max())
    norm = long.norm(dim=1)  # (factor L,)
    grown = float(norm[train_len:].max() - norm[:train_len].max())
    return max(moved, grown, 0.0)


def desiderata(code: Code, train_len: int = 64, factor: int = 4) -> dict[str, bool]:
    """Which of :data:`DESIDERATA` ``code`` meets, measured on ``factor * train_len`` positions."""
    table = _check_table("code(factor * train_len)", code(factor * train_len))
    return {
        "unique": nearest_other_row(table) > TOLERANCE,
        "bounded": largest_entry(table) <= 1 + TOLERANCE,
        "smooth": step_spread(table) <= 1 + TOLERANCE,
        "linear shift": shift_residual(table) <= TOLERANCE,
        "extrapolates": extrapolation_gap(code, train_len, factor) <= TOLERANCE,
    }


def _check_table(name: str, table: object, *, min_rows: int = 1) -> torch.Tensor:
    """``table`` as a float64 (s, d) tensor with at least ``min_rows`` rows, else raise."""
    if not isinstance(table, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor of shape (s, d), got {type(table).__name__}")
    if table.dim() != 2 or table.shape[0] < min_rows or table.shape[1] < 1:
        raise ValueError(f"{name} must have shape (s, d) with s >= {min_rows}, d >= 1, got {tuple(table.shape)}")
    if not table.is_floating_point():
        raise TypeError(f"{name} must be a floating-point tensor, got {table.dtype}")
    return table.to(torch.float64)


def misread_table(seq_len: int, d_model: int, reading: str, *, base: float = 10000.0) -> torch.Tensor:
    """(s, d): the sinusoidal table built from one of the two misreadings of the paper's index.

    The paper writes ``PE(p, 2i) = sin(p / B^(2i/d))`` and ``PE(p, 2i+1) = cos(...)`` with ``i``
    the pair index. ``reading="A"`` lets ``i`` run over the even numbers ``0, 2, 4, ...``: the
    sines and cosines land in columns ``2i, 2i + 1`` = 0, 1, 4, 5, 8, 9, ... with the exponent that
    is right for those columns, and the columns of every odd pair stay zero. ``reading="B"`` puts
    ``sin(p / B^(2c/d))`` in every even column ``c`` (its cosine in ``c + 1``): the table is full,
    but pair ``ℓ`` gets the exponent ``4ℓ/d``, twice the right one.
    """
    seq_len = check_positive_int("seq_len", seq_len)
    d_model = check_even_int("d_model", d_model)
    base = check_positive_float("base", base)
    if reading not in ("A", "B"):
        raise ValueError(f"reading must be 'A' or 'B', got {reading!r}")
    p = _positions(seq_len)[:, None]  # (s, 1)
    column = torch.arange(0, d_model, 2, dtype=torch.float64)  # (d/2,): even columns c = 2ℓ
    table = torch.zeros(seq_len, d_model, dtype=torch.float64)
    if reading == "A":
        i = column[column < d_model / 2]  # i = 0, 2, 4, ... with 2i + 1 < d
        angle = p * base ** (-2 * i / d_model)  # (s, ·)
        at = (2 * i).long()  # columns 2i
        table[:, at], table[:, at + 1] = angle.sin(), angle.cos()
    else:
        angle = p * base ** (-2 * column / d_model)  # (s, d/2): exponent 2c/d = 4ℓ/d
        table[:, 0::2], table[:, 1::2] = angle.sin(), angle.cos()
    return table
