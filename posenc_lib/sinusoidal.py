"""Fixed sinusoidal position encodings (Vaswani et al., 2017).

Notation: position ``p``, model width ``d`` (``d_model``), pair index
``k = 0 .. ceil(d/2) - 1``. Pair ``k`` shares one angular frequency

    omega_k = base ** (-2k / d)

and holds ``sin(p * omega_k)`` and ``cos(p * omega_k)``. Where the two values
sit in the vector is the *layout*:

- ``"interleaved"`` (the paper, tensor2tensor's successors, most tutorials):
  column ``2k`` is ``sin``, column ``2k + 1`` is ``cos``.
- ``"concatenated"`` (tensor2tensor, fairseq): all sines first, then all
  cosines, ``[sin_0 .. sin_{m-1} | cos_0 .. cos_{m'-1}]``.

For odd ``d`` the last pair has only its sine column.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from ._checks import check_choice, check_positive_float, check_positive_int, check_tensor

LAYOUTS = ("interleaved", "concatenated")


def sinusoidal_frequencies(d_model: int, *, base: float = 10000.0) -> np.ndarray:
    """Angular frequencies ``omega_k = base ** (-2k / d_model)``, shape ``(ceil(d_model / 2),)``.

    The wavelength of pair ``k`` is ``2 * pi / omega_k``: from ``2 * pi`` for
    ``k = 0`` up to almost ``2 * pi * base`` for the last pair.
    """
    d_model = check_positive_int("d_model", d_model)
    base = check_positive_float("base", base)
    pair_index = np.arange((d_model + 1) // 2, dtype=np.float64)  # (ceil(d/2),)
    return base ** (-2.0 * pair_index / d_model)


def sinusoidal_encoding(
    seq_len: int,
    d_model: int,
    *,
    base: float = 10000.0,
    layout: str = "interleaved",
    dtype: np.dtype | type = np.float64,
) -> np.ndarray:
    """Table of sinusoidal encodings for positions ``0 .. seq_len - 1``.

    Args:
        seq_len: number of positions ``s`` (positive integer).
        d_model: width ``d`` of each encoding (positive integer; odd is allowed,
            the last column is then a sine).
        base: the constant whose powers set the wavelengths (10000 in the paper).
        layout: ``"interleaved"`` (sin, cos, sin, cos, ...) or
            ``"concatenated"`` ([all sines | all cosines]).
        dtype: ``np.float64`` (default) or ``np.float32``.

    Returns:
        ``np.ndarray`` of shape ``(s, d)``.

    How it is computed: writing pair ``k`` of row ``p`` as the complex number
    ``sin(p w) + i cos(p w)``, moving ``B`` rows down is a multiplication by the
    fixed phasor ``exp(-i B w)`` (the shift identity ``PE(p + B) = M_B PE(p)``,
    see :func:`shift_matrix`). So only a block of ``B ~ sqrt(s)`` rows and
    ``s / B`` phasors need sin/cos; every row is then one complex product
    ``block row x phasor``, written straight into the table (one pass over its
    memory, no per-entry sin/cos). The angles ``p w`` are never rounded to
    float64 (see :func:`_phasors`), so the table is within a few units in the
    last place of the exact values. A float32 table is the product of the same
    phasors rounded to float32: within about 2e-7 of the exact values (the
    angles are never rounded to float32).
    """
    seq_len = check_positive_int("seq_len", seq_len)
    d_model = check_positive_int("d_model", d_model)
    check_choice("layout", layout, LAYOUTS)
    dtype = np.dtype(dtype)
    if dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise TypeError(f"dtype must be np.float32 or np.float64, got {dtype}")
    omega = sinusoidal_frequencies(d_model, base=base)  # (m,) float64, m = ceil(d/2)
    n_pairs, n_cos = omega.shape[0], d_model // 2
    complex_dtype = np.complex128 if dtype == np.float64 else np.complex64
    table = np.empty((seq_len, d_model), dtype=dtype)
    if layout == "interleaved" and d_model % 2 == 0:
        pairs = table.view(complex_dtype)  # (s, m): real part = sine column, imaginary part = cosine column
    else:
        pairs = np.empty((seq_len, n_pairs), dtype=complex_dtype)  # (s, m), scattered into the columns below
    block = max(1, math.isqrt(seq_len))
    n_blocks = -(-seq_len // block)
    # first block, sin + i cos = i * conj(exp(i p w)), for p = 0 .. block-1
    first = (1j * np.conj(_phasor_rows(block, 1, omega))).astype(complex_dtype)  # (block, m)
    # moving down by j * block rows multiplies by conj(exp(i j block w))
    steps = np.conj(_phasor_rows(n_blocks, block, omega)).astype(complex_dtype)  # (n_blocks, m)
    # the one pass over the table: torch's vectorised complex kernel, writing into the NumPy array's memory
    out, first_t, steps_t = torch.from_numpy(pairs), torch.from_numpy(first), torch.from_numpy(steps)
    full = seq_len // block
    torch.mul(first_t[None, :, :], steps_t[:full, None, :], out=out[: full * block].view(full, block, n_pairs))
    if full < n_blocks:
        rest = seq_len - full * block
        torch.mul(first_t[:rest], steps_t[full], out=out[full * block :])
    if layout == "interleaved" and d_model % 2 == 0:
        return table
    if layout == "interleaved":
        table[:, 0::2] = pairs.real
        table[:, 1::2] = pairs.imag[:, :n_cos]
    else:
        table[:, :n_pairs] = pairs.real
        table[:, n_pairs:] = pairs.imag[:, :n_cos]
    return table


def _phasor_rows(n: int, step: int, omega: np.ndarray) -> np.ndarray:
    """``exp(i r step w_k)`` for ``r = 0 .. n-1``: ``(n, m)`` complex128, each within a few units in the last place.

    The same block trick as the table, one level down: ``sqrt(n)`` rows and
    ``n / sqrt(n)`` jumps computed by :func:`_phasors`, every row one product.
    For an 8192-row table this needs about 40 rows of sin/cos instead of 180.
    """
    if n <= 16:
        return _phasors(np.arange(n) * step, omega)
    block = math.isqrt(n)
    first = _phasor_rows(block, step, omega)  # (block, m)
    jumps = _phasor_rows(-(-n // block), block * step, omega)  # (ceil(n / block), m)
    return (jumps[:, None, :] * first[None, :, :]).reshape(-1, omega.shape[0])[:n]  # (n, m)


def _phasors(positions: np.ndarray, omega: np.ndarray) -> np.ndarray:
    """``exp(i p w_k)`` for integer positions ``p`` ``(n,)`` and frequencies ``w`` ``(m,)``: ``(n, m)`` complex128.

    The product ``p * w`` is not rounded. ``w = hi + lo`` with ``hi`` rounded to
    24 significant bits, so ``p * hi`` is exact in float64 for ``p < 2**29`` and
    ``p * lo`` is below ``2**-24 * p * w``, where rounding no longer matters; then
    ``exp(i p w) = exp(i p hi) * exp(i p lo)``. Computing ``sin(p * w)`` directly
    instead rounds the angle first: up to half a unit in the last place of
    ``p * w``, ``4.5e-13`` for angles near 8192 and growing with ``p``. (From
    ``p = 2**29`` on, ``p * hi`` is rounded once too, like the direct formula.)
    """
    hi = omega.astype(np.float32).astype(np.float64)  # (m,), 24 significant bits
    lo = omega - hi  # (m,), exact
    p = positions.astype(np.float64)
    big = np.multiply.outer(p, hi)  # (n, m), exact
    small = np.multiply.outer(p, lo)  # (n, m), tiny
    return (np.cos(big) + 1j * np.sin(big)) * (np.cos(small) + 1j * np.sin(small))


def shift_matrix(k: float, d_model: int, *, base: float = 10000.0) -> np.ndarray:
    """The matrix ``M_k`` with ``PE(p + k) = M_k @ PE(p)`` for every position ``p``.

    For the interleaved layout, pair ``(sin(p w), cos(p w))`` moves to
    ``(sin((p + k) w), cos((p + k) w))`` by the angle-addition formulas, a 2x2
    rotation by ``-k w`` that does not depend on ``p``. ``M_k`` is the
    block-diagonal matrix of those rotations, shape ``(d, d)`` (for odd ``d``
    the lone last sine column is not closed under shifts, so ``d`` must be even).
    """
    d_model = check_positive_int("d_model", d_model)
    if d_model % 2:
        raise ValueError(f"d_model must be even for a shift matrix (pairs of sin/cos), got {d_model}")
    omega = sinusoidal_frequencies(d_model, base=base)  # (d/2,)
    cos_kw, sin_kw = np.cos(k * omega), np.sin(k * omega)
    shift = np.zeros((d_model, d_model))
    idx = np.arange(0, d_model, 2)
    # [sin(a+b)]   [ cos b  sin b] [sin a]
    # [cos(a+b)] = [-sin b  cos b] [cos a]
    shift[idx, idx] = cos_kw
    shift[idx, idx + 1] = sin_kw
    shift[idx + 1, idx] = -sin_kw
    shift[idx + 1, idx + 1] = cos_kw
    return shift


class SinusoidalPositionalEncoding(nn.Module):
    """Adds fixed sinusoidal encodings to a batch of token embeddings.

    Args:
        d_model: embedding width ``d``.
        max_len: longest sequence the precomputed table serves.
        base, layout: as in :func:`sinusoidal_encoding`.

    Input ``x``: ``(b, s, d)``; output: ``(b, s, d)``, ``x + PE[offset : offset + s]``.
    """

    def __init__(self, d_model: int, max_len: int = 2048, *, base: float = 10000.0, layout: str = "interleaved"):
        super().__init__()
        self.d_model = check_positive_int("d_model", d_model)
        self.max_len = check_positive_int("max_len", max_len)
        table = sinusoidal_encoding(max_len, d_model, base=base, layout=layout, dtype=np.float32)
        self.register_buffer("pe", torch.from_numpy(table), persistent=False)  # (max_len, d)

    def forward(self, x: torch.Tensor, offset: int = 0) -> torch.Tensor:
        x = check_tensor("x", x, min_dim=2)
        seq_len = x.shape[-2]
        if x.shape[-1] != self.d_model:
            raise ValueError(f"x must have last dimension d_model={self.d_model}, got shape {tuple(x.shape)}")
        if offset < 0:
            raise ValueError(f"offset must be >= 0, got {offset}")
        if offset + seq_len > self.max_len:
            raise ValueError(
                f"sequence needs positions up to {offset + seq_len - 1}, but this encoding was built "
                f"with max_len={self.max_len}; construct it with a larger max_len"
            )
        return x + self.pe[offset : offset + seq_len].to(x.dtype)


def sinusoidal_encoding_loop(seq_len: int, d_model: int, *, base: float = 10000.0) -> np.ndarray:
    """Reference table built one entry at a time with plain Python, interleaved layout, float64.

    Same numbers as ``sinusoidal_encoding(seq_len, d_model, base=base)`` (to
    float64 round-off): column ``c`` of row ``p`` is ``sin(p * omega_k)`` if
    ``c = 2k`` is even and ``cos(p * omega_k)`` if ``c = 2k + 1`` is odd, with
    ``omega_k = base ** (-2k / d)``. It exists to be read next to the formula
    and to be timed against the vectorised version; do not use it for real work.

    Returns:
        ``np.ndarray`` of shape ``(s, d)``.
    """
    seq_len = check_positive_int("seq_len", seq_len)
    d_model = check_positive_int("d_model", d_model)
    base = check_positive_float("base", base)
    table = np.empty((seq_len, d_model))
    for position in range(seq_len):
        for column in range(d_model):
            pair = column // 2  # columns 2k and 2k + 1 share pair index k
            angle = position * base ** (-2.0 * pair / d_model)
            table[position, column] = math.sin(angle) if column % 2 == 0 else math.cos(angle)
    return table


def interleaved_to_concatenated_permutation(d_model: int) -> np.ndarray:
    """Column order ``perm`` with ``concatenated = interleaved[:, perm]``, shape ``(d,)``, int64.

    The two layouts hold the same ``d`` numbers per position; the concatenated
    one lists the even (sine) columns of the interleaved one first, then the odd
    (cosine) columns: ``perm = [0, 2, 4, ..., 1, 3, 5, ...]``. The inverse order
    is ``np.argsort(perm)``.
    """
    d_model = check_positive_int("d_model", d_model)
    return np.concatenate([np.arange(0, d_model, 2), np.arange(1, d_model, 2)])


def sinusoidal_dot_by_distance(distance: object, d_model: int, *, base: float = 10000.0) -> np.ndarray:
    """``PE(p) . PE(p + k)`` for distances ``k``, which does not depend on ``p`` (even ``d`` only).

    Each sin/cos pair contributes ``sin(a) sin(b) + cos(a) cos(b) = cos(a - b)``
    with ``a - b = -k * omega_j``, so the dot product is ``sum_j cos(k * omega_j)``:
    ``d / 2`` at ``k = 0``, an even function of ``k``. The same holds in either
    layout (it is a column permutation). For odd ``d`` the lone sine column adds
    a term that depends on ``p``, so odd ``d`` is rejected.

    Args:
        distance: a number or an array of distances ``k`` (any shape, real).
        d_model: even width ``d``.
        base: as in :func:`sinusoidal_encoding`.

    Returns:
        float64 array with the shape of ``distance``.
    """
    d_model = check_positive_int("d_model", d_model)
    if d_model % 2:
        raise ValueError(f"d_model must be even (the dot product depends only on the distance for full sin/cos pairs), got {d_model}")
    try:
        distances = np.asarray(distance, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"distance must be a real number or an array of them, got {type(distance).__name__}") from None
    if not np.all(np.isfinite(distances)):
        raise ValueError("distance must be finite")
    omega = sinusoidal_frequencies(d_model, base=base)  # (d/2,)
    return np.cos(np.multiply.outer(distances, omega)).sum(axis=-1)  # (...,) summed over pairs
