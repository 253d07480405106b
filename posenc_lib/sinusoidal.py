"""Fixed sinusoidal position encodings (Vaswani et al., 2017).

Position ``p``, width ``d`` (``d_model``), pair index ``ℓ = 0 .. ceil(d/2) - 1``
(``pair``). Pair ``ℓ`` has the angular frequency

    θ_ℓ = B^(-2ℓ/d)        (B = ``base``, 10 000)

and holds ``sin(p θ_ℓ)`` and ``cos(p θ_ℓ)``. Where the two values sit in the
vector is the *layout*:

- ``"interleaved"`` (the paper, most tutorials): column ``2ℓ`` is the sine,
  column ``2ℓ + 1`` the cosine.
- ``"concatenated"`` (tensor2tensor, fairseq): all sines first, then all
  cosines, ``[sin_0 .. sin_{m-1} | cos_0 .. cos_{m'-1}]``.

For odd ``d`` the last pair has only its sine column.

The functions below are the formulas. :func:`sinusoidal_encoding` hands the
same job to :func:`posenc_lib.fast.sinusoidal_table` (a faster construction that
is also more exact far out); inside ``posenc_lib.fast.disabled()`` the formula
written here runs instead.
"""

from __future__ import annotations

import math

import torch

from . import fast
from ._buffers import FixedPrecisionTables
from ._checks import (
    check_choice,
    check_device,
    check_dtype,
    check_fits,
    check_floating,
    check_offset,
    check_positive_float,
    check_positive_int,
    check_real,
    check_same_device,
    check_tensor,
)

LAYOUTS = ("interleaved", "concatenated")


def sinusoidal_frequencies(d_model: int, *, base: float = 10000.0, device=None) -> torch.Tensor:
    """Angular frequencies ``θ_ℓ = B^(-2ℓ/d)``, shape ``(ceil(d/2),)``, float64.

    The wavelength of pair ``ℓ`` is ``2π / θ_ℓ`` (see :func:`posenc_lib.wavelengths`):
    from ``2π`` for ``ℓ = 0`` up to almost ``2π B`` for the last pair.
    """
    d_model = check_positive_int("d_model", d_model)
    base = check_positive_float("base", base)
    device = check_device(device)
    check_fits(f"d_model={d_model}", ((d_model + 1) // 2,), torch.float64, device)
    pair = torch.arange((d_model + 1) // 2, dtype=torch.float64, device=device)  # (ceil(d/2),) = ℓ
    return base ** (-2 * pair / d_model)


def _check_table_args(seq_len, d_model, offset, base, layout, dtype, device) -> tuple:
    """The arguments of :func:`sinusoidal_encoding`, checked, in its order; refuses a table that would not fit."""
    seq_len = check_positive_int("seq_len", seq_len)
    d_model = check_positive_int("d_model", d_model)
    offset = check_offset(offset, seq_len)
    base = check_positive_float("base", base)
    layout = check_choice("layout", layout, LAYOUTS)
    dtype, device = check_dtype(dtype), check_device(device)
    check_fits(f"seq_len={seq_len} and d_model={d_model}", (seq_len, d_model), dtype, device)
    return seq_len, d_model, offset, base, layout, dtype, device


# chapter 3 prints the end of this function as it is written here: the formatter leaves it alone
# fmt: off
def sinusoidal_encoding(
    seq_len: int,
    d_model: int,
    *,
    offset: int = 0,
    base: float = 10000.0,
    layout: str = "interleaved",
    dtype: torch.dtype = torch.float32,
    device=None,
) -> torch.Tensor:
    """Table of sinusoidal encodings for positions ``offset .. offset + seq_len - 1``, shape ``(s, d)``.

    Args:
        seq_len: number of positions ``s``.
        d_model: width ``d`` (odd is allowed: the last column is then a sine).
        offset: the first position (default 0).
        base: ``B``, whose powers set the wavelengths (10 000 in the paper).
        layout: ``"interleaved"`` (sin, cos, sin, cos, ...) or ``"concatenated"``
            ([all sines | all cosines]).
        dtype: floating dtype of the table (default float32).
        device: where to build it (default: torch's default device).

    The angles ``p θ_ℓ`` are computed in float64 and the table is rounded once to
    ``dtype``. By default the work is done by :func:`posenc_lib.fast.sinusoidal_table`,
    which gives the same table (within a few units in the last place) faster.
    """
    seq_len, d_model, offset, base, layout, dtype, device = _check_table_args(
        seq_len, d_model, offset, base, layout, dtype, device)
    theta = sinusoidal_frequencies(d_model, base=base, device=device)  # (m,), m = ceil(d/2)
    if fast.enabled():  # the same table from a few sines and one complex product per row
        return fast.sinusoidal_table(seq_len, d_model, theta, offset=offset, layout=layout, dtype=dtype, device=device)

    positions = torch.arange(offset, offset + seq_len, dtype=torch.float64, device=device)
    angles = torch.outer(positions, theta)  # (s, m): angle p θ_ℓ of pair ℓ at position p
    sines = angles.sin()  # (s, m)
    cosines = angles[:, : d_model // 2].cos()  # (s, d // 2): an odd d has no last cosine
    if layout == "interleaved":
        table = torch.empty(seq_len, d_model, dtype=torch.float64, device=device)
        table[:, 0::2], table[:, 1::2] = sines, cosines  # column 2ℓ: sine, 2ℓ + 1: cosine
    else:
        table = torch.cat((sines, cosines), dim=1)  # (s, d): [all sines | all cosines]
    return table.to(dtype)


# fmt: on
def shift_matrix(
    delta: float, d_model: int, *, base: float = 10000.0, dtype: torch.dtype = torch.float64, device=None
) -> torch.Tensor:
    """The matrix ``M_Δ`` with ``PE(p + Δ) = M_Δ PE(p)`` for every position ``p``, shape ``(d, d)``.

    Interleaved layout, even ``d``. By the angle-addition formulas pair ``ℓ`` moves from
    ``(sin(p θ_ℓ), cos(p θ_ℓ))`` to ``(sin((p + Δ) θ_ℓ), cos((p + Δ) θ_ℓ))`` by a 2x2
    rotation through ``-Δ θ_ℓ`` that does not depend on ``p``; ``M_Δ`` is the
    block-diagonal matrix of those rotations. ``Δ`` may be any real number.
    """
    delta = check_real("delta", delta)
    d_model = check_positive_int("d_model", d_model)
    if d_model % 2:
        raise ValueError(f"d_model must be even for a shift matrix (pairs of sin/cos), got {d_model}")
    dtype, device = check_dtype(dtype), check_device(device)
    check_fits(f"d_model={d_model}", (d_model, d_model), dtype, device)
    angle = delta * sinusoidal_frequencies(d_model, base=base, device=device)  # (d/2,): Δ θ_ℓ
    cos, sin = angle.cos(), angle.sin()
    # [sin(a + b)]   [ cos b   sin b] [sin a]
    # [cos(a + b)] = [-sin b   cos b] [cos a]
    blocks = torch.stack((torch.stack((cos, sin), -1), torch.stack((-sin, cos), -1)), -2)  # (d/2, 2, 2)
    return torch.block_diag(*blocks).to(dtype)  # (d, d)


class SinusoidalPositionalEncoding(FixedPrecisionTables):
    """Adds fixed sinusoidal encodings to token vectors.

    Args:
        d_model: width ``d``.
        max_len: positions ``0 .. max_len - 1`` are precomputed in a float32 table
            (``self.pe``, shape ``(max_len, d)``); later positions are computed when asked for.
        base, layout: as in :func:`sinusoidal_encoding`.
        device: where to build the table.

    ``forward(x, offset=0)``: ``x`` is ``(b, s, d)`` (or ``(s, d)``), floating point;
    returns ``x + PE[offset : offset + s]`` in ``x``'s dtype. A float64 ``x`` gets
    rows computed in float64. ``.to(torch.bfloat16)`` or ``.half()`` keep the
    table in float32 (see :class:`posenc_lib._buffers.FixedPrecisionTables`).
    """

    pe: torch.Tensor

    def __init__(
        self, d_model: int, max_len: int = 2048, *, base: float = 10000.0, layout: str = "interleaved", device=None
    ):
        super().__init__()
        self.d_model = check_positive_int("d_model", d_model)
        self.max_len = check_positive_int("max_len", max_len)
        self.base = check_positive_float("base", base)
        self.layout = check_choice("layout", layout, LAYOUTS)
        self.register_buffer("pe", self._table(max_len, 0, torch.float32, check_device(device)), persistent=False)

    def reset_parameters(self) -> None:
        """Recompute the table on its current device (after ``to_empty``)."""
        self.pe = self._table(self.max_len, 0, torch.float32, self.pe.device)

    def _table(self, seq_len: int, offset: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
        return sinusoidal_encoding(
            seq_len, self.d_model, offset=offset, base=self.base, layout=self.layout, dtype=dtype, device=device
        )  # (s, d)

    def forward(self, x: torch.Tensor, offset: int = 0) -> torch.Tensor:
        x = check_floating("x", check_tensor("x", x, min_dim=2))
        if x.shape[-1] != self.d_model:
            raise ValueError(f"x must have last dimension d_model={self.d_model}, got shape {tuple(x.shape)}")
        check_same_device("x", x, self.pe.device, "SinusoidalPositionalEncoding")
        seq_len = x.shape[-2]
        offset = check_offset(offset, seq_len)
        if offset + seq_len <= self.max_len and x.dtype != torch.float64:
            rows = self.pe[offset : offset + seq_len]  # (s, d), from the table
        else:  # past the table, or float64: compute these rows only
            precision = torch.float64 if x.dtype == torch.float64 else torch.float32
            rows = self._table(seq_len, offset, precision, x.device)  # (s, d)
        return x + rows.to(x.dtype)

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, max_len={self.max_len}, base={self.base:g}, layout={self.layout!r}"


def sinusoidal_encoding_loop(seq_len: int, d_model: int, *, base: float = 10000.0) -> torch.Tensor:
    """The interleaved table built one entry at a time with plain Python, float64, shape ``(s, d)``.

    Column ``c`` of row ``p`` is ``sin(p θ_ℓ)`` if ``c = 2ℓ`` is even and ``cos(p θ_ℓ)``
    if ``c = 2ℓ + 1`` is odd, with ``θ_ℓ = B^(-2ℓ/d)``: the same numbers as
    ``sinusoidal_encoding(seq_len, d_model, dtype=torch.float64)`` to float64
    round-off. It exists to be read next to the formula and to be timed against
    the vectorised table; do not use it for real work.
    """
    seq_len = check_positive_int("seq_len", seq_len)
    d_model = check_positive_int("d_model", d_model)
    base = check_positive_float("base", base)
    check_fits(f"seq_len={seq_len} and d_model={d_model}", (seq_len, d_model), torch.float64, torch.device("cpu"))
    rows = []
    for position in range(seq_len):
        row = []
        for column in range(d_model):
            pair = column // 2  # columns 2ℓ and 2ℓ + 1 share pair index ℓ
            angle = position * base ** (-2.0 * pair / d_model)
            row.append(math.sin(angle) if column % 2 == 0 else math.cos(angle))
        rows.append(row)
    return torch.tensor(rows, dtype=torch.float64)


def interleaved_to_concatenated_permutation(d_model: int, *, device=None) -> torch.Tensor:
    """Column order ``perm`` with ``concatenated = interleaved[:, perm]``, shape ``(d,)``, int64.

    The two layouts hold the same ``d`` numbers per position; the concatenated
    one lists the even (sine) columns of the interleaved one first, then the odd
    (cosine) columns: ``perm = [0, 2, 4, ..., 1, 3, 5, ...]``. The inverse order
    is ``torch.argsort(perm)``.
    """
    d_model = check_positive_int("d_model", d_model)
    device = check_device(device)
    check_fits(f"d_model={d_model}", (d_model,), torch.int64, device)
    return torch.cat((torch.arange(0, d_model, 2, device=device), torch.arange(1, d_model, 2, device=device)))
