"""Speed work, kept apart from the formulas.

The public functions of posenc_lib are written as the formulas the chapters
derive. Where a faster way to compute the *same numbers* exists, the public
function hands its work to a function here, in one line. This module is a
leaf: it imports nothing from the formula modules and reads no module's
state; it is handed the frequencies θ, the slopes and the cached tables as
arguments. ``tests/unit/test_fast_paths.py`` checks every path here against
the formula (random shapes, offsets, layouts, dtypes and strides), and the
appendix "Making it fast" explains each technique:

- :func:`sinusoidal_table`: the sinusoidal table from a block of rows and one
  complex product per row (the shift identity ``PE(p + Δ) = M_Δ PE(p)``), with
  angles that are never rounded: faster than the formula, and *more* exact far
  from position 0.
- :func:`rotate_pairs`: interleaved RoPE as one complex multiplication over a
  complex view of ``x``; other cases write one output buffer with half-size
  cos/sin and no ``torch.cat``.
- :func:`rotary_table`, :func:`rotary`, :func:`rotary_qk`: the tables
  :class:`~posenc_lib.RotaryEmbedding` caches so that one decoding step makes
  as few torch calls as possible, and the paths that read their rows.
- :func:`alibi_bias`, :func:`alibi_bias_compact`: ALiBi from given slopes,
  masking the small distance table instead of the big bias.

Every path here runs without autograd only (it writes into buffers); with
autograd the formulas run. ``with posenc_lib.fast.disabled():`` makes every
public function run its formula, e.g. to time or test the two side by side.

Lines are at most 80 characters: the appendix shows parts of this file.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator

import numpy as np
import torch

_enabled = True


def enabled() -> bool:
    """Whether public functions may use the paths here (default ``True``)."""
    return _enabled


@contextlib.contextmanager
def disabled() -> Iterator[None]:
    """Within this block every public function computes its formula."""
    global _enabled
    previous, _enabled = _enabled, False
    try:
        yield
    finally:
        _enabled = previous


def _without_autograd(*tensors: torch.Tensor) -> bool:
    return not torch.is_grad_enabled() or not any(
        t.requires_grad for t in tensors
    )


# --------------------------------------------------------------- sinusoidal


def sinusoidal_table(
    seq_len: int,
    d_model: int,
    theta: torch.Tensor,
    *,
    offset: int = 0,
    layout: str = "interleaved",
    dtype: torch.dtype = torch.float32,
    device=None,
) -> torch.Tensor:
    """The sinusoidal table of positions ``offset ..``, shape ``(s, d)``.

    ``theta``: the frequencies ``θ_ℓ`` ``(ceil(d/2),)``, float64, e.g.
    :func:`posenc_lib.sinusoidal_frequencies`; the other arguments as in
    :func:`posenc_lib.sinusoidal_encoding` (which calls this, after checking
    them; ``device`` defaults to ``theta``'s). Writing pair ``ℓ`` of row ``p`` as the complex number
    ``sin(p θ_ℓ) + i cos(p θ_ℓ)``, moving ``c`` rows down is a multiplication
    by the fixed phasor ``exp(-i c θ_ℓ)``. So only a block of ``c ≈ √s`` rows
    and ``s / c`` phasors need sines and cosines (and those are built the same
    way, one level down); every row is then one complex product *block row ×
    phasor*, written straight into the table: one pass over its memory.

    The small phasor tables are computed with NumPy on the CPU (one thread: a
    few dozen small operations, which torch would spread over its threads and
    so wait for every busy core) and copied to ``device``; the one big product
    runs there, in torch.

    Accuracy: the angles ``p θ_ℓ`` are never rounded (see :func:`_phasors`),
    so a float64 table is within a few units in the last place of the exact
    values at every position, where the direct formula ``sin(p θ_ℓ)`` loses
    up to half a unit in the last place of the *angle* (4.5e-13 near
    p = 8192, growing with ``p``). A float32 table is the product of the same
    phasors rounded to float32 (about 2e-7 from the exact values);
    bfloat16/float16 tables are rounded from float32.
    """
    device = theta.device if device is None else torch.device(device)
    if device.type == "meta":  # a table with no values: nothing to compute
        return torch.empty(seq_len, d_model, dtype=dtype, device=device)
    work = torch.float64 if dtype == torch.float64 else torch.float32
    complex_dtype = (
        torch.complex128 if work == torch.float64 else torch.complex64
    )
    # θ: (m,), m = ceil(d/2)
    frequencies = theta.detach().to("cpu", torch.float64).numpy()
    if theta.shape != ((d_model + 1) // 2,):
        raise ValueError(
            f"theta must have shape ({(d_model + 1) // 2},) for "
            f"d_model={d_model}, got {tuple(theta.shape)}"
        )
    n_pairs, n_cos = theta.shape[0], d_model // 2
    table = _empty_table(seq_len, d_model, work, device)
    direct = layout == "interleaved" and d_model % 2 == 0
    # an interleaved table of even width *is* an array of numbers sin + i cos
    pairs = (
        table.view(complex_dtype)
        if direct
        else torch.empty(
            seq_len, n_pairs, dtype=complex_dtype, device=device
        )
    )
    block = max(1, math.isqrt(seq_len))  # c ≈ √s rows per block
    n_blocks = -(-seq_len // block)  # ceil(s / c) blocks
    # the first block, p = offset .. offset + c - 1: sin + i cos = i exp(-i p θ)
    first = _on(
        1j * _phasor_rows(block, -1, -offset, frequencies),
        complex_dtype,
        table.device,
    )  # (block, m)
    # moving down by j blocks (j c rows) multiplies by exp(-i j c θ)
    steps = _on(
        _phasor_rows(n_blocks, -block, 0, frequencies),
        complex_dtype,
        table.device,
    )  # (n_blocks, m)
    full = seq_len // block
    # row r of block j: first[r] * steps[j], written into the table
    torch.mul(
        first[None, :, :],
        steps[:full, None, :],
        out=pairs[: full * block].view(full, block, n_pairs),
    )
    if full < n_blocks:  # the last, shorter block
        torch.mul(
            first[: seq_len - full * block],
            steps[full],
            out=pairs[full * block :],
        )
    if not direct:
        sines, cosines = pairs.real, pairs.imag[:, :n_cos]  # (s, m), (s, d//2)
        if layout == "interleaved":
            table[:, 0::2], table[:, 1::2] = sines, cosines
        else:
            table[:, :n_pairs], table[:, n_pairs:] = sines, cosines
    return table if dtype == work else table.to(dtype)


def _empty_table(
    seq_len: int, d_model: int, dtype: torch.dtype, device: torch.device
) -> torch.Tensor:
    """An uninitialised ``(s, d)`` table; on the CPU in NumPy's memory.

    NumPy asks Linux for transparent huge pages for large arrays, torch does
    not by default: for a 32 MiB table, writing fresh 4 KiB pages (one page
    fault each) took about three times as long as writing the huge pages
    NumPy gets. ``torch.from_numpy`` shares the memory, no copy.
    """
    if device.type == "cpu":
        return torch.from_numpy(
            np.empty(
                (seq_len, d_model),
                dtype=np.float64 if dtype == torch.float64 else np.float32,
            )
        )
    return torch.empty(seq_len, d_model, dtype=dtype, device=device)


def _on(
    values: np.ndarray, dtype: torch.dtype, device: torch.device
) -> torch.Tensor:
    """A small NumPy complex table as a torch ``dtype`` tensor on ``device``."""
    return torch.from_numpy(
        values.astype(
            np.complex128 if dtype == torch.complex128 else np.complex64
        )
    ).to(device)


def _phasor_rows(
    n: int, step: int, start: int, theta: np.ndarray
) -> np.ndarray:
    """``exp(i (start + r step) θ_ℓ)`` for ``r = 0 .. n-1``: ``(n, m)``.

    complex128, within a few ulp. The block trick one level down: ``√n`` rows
    and ``n / √n`` jumps from :func:`_phasors`, every row one product. An
    8192-row table needs about 40 rows of sines and cosines instead of 180.
    """
    if n <= 16:  # positions exact in float64
        return _phasors(start + step * np.arange(n, dtype=np.float64), theta)
    block = math.isqrt(n)
    first = _phasor_rows(block, step, start, theta)  # (block, m)
    # (ceil(n / block), m)
    jumps = _phasor_rows(-(-n // block), block * step, 0, theta)
    # (n / block, block, m) -> (n, m)
    return (jumps[:, None, :] * first[None, :, :]).reshape(
        -1, theta.shape[0]
    )[:n]


def _phasors(positions: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """``exp(i p θ_ℓ)`` for integer positions ``p`` ``(n,)``: ``(n, m)``.

    ``θ``: ``(m,)``; the result is complex128. The angle ``p θ`` is never
    rounded: ``θ = hi + lo`` with ``hi`` rounded to 24 significant bits, so
    ``p hi`` is exact in float64 for ``|p| < 2**29``, and ``p lo`` is below
    ``2**-24 p θ``, too small for its rounding to matter; then
    ``exp(i p θ) = exp(i p hi) exp(i p lo)``. (From ``|p| = 2**29`` on,
    ``p hi`` is rounded once, as in the direct formula.)
    """
    with np.errstate(over="ignore"):
        # (m,), 24 significant bits
        hi = theta.astype(np.float32).astype(np.float64)
    hi = np.where(np.isfinite(hi), hi, 0.0)  # θ past float32's range: all lo
    lo = theta - hi  # (m,), exact
    big = np.multiply.outer(positions, hi)  # (n, m), exact
    small = np.multiply.outer(positions, lo)  # (n, m), tiny
    return (np.cos(big) + 1j * np.sin(big)) * (
        np.cos(small) + 1j * np.sin(small)
    )


# --------------------------------------------------------------------- RoPE

_COMPLEX = {torch.float32: torch.complex64, torch.float64: torch.complex128}

# Below this many elements a rotation costs what its torch calls cost (a few
# microseconds each), not what its memory traffic costs, so small inputs take
# the path with the fewest calls.
_FEW_CALLS_NUMEL = 1 << 15

def rotate_pairs(
    x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, layout: str
) -> torch.Tensor | None:
    """:func:`posenc_lib.rotate_pairs` without autograd; ``None`` if no path.

    ``x``: ``(..., s, d_h)``; ``cos``, ``sin``: already in ``x``'s dtype and
    device, broadcastable to ``(..., s, d_h/2)``. Interleaved float32/float64
    pairs are one complex multiplication over a view of ``x`` (read once,
    write once); everything else goes through :func:`_rotate_into_buffer`.
    """
    if not _enabled or not _without_autograd(x, cos, sin):
        return None
    if layout == "interleaved":
        pairs = _complex_pairs(x)  # (..., s, d_h/2) complex view of x, or None
        if pairs is not None:
            return _rotate_complex(pairs, torch.complex(cos, sin), x)
    return _rotate_into_buffer(x, cos, sin, layout)


def _complex_pairs(x: torch.Tensor) -> torch.Tensor | None:
    """Interleaved pairs of ``x`` as complex numbers, sharing its memory.

    ``x``: ``(..., s, d_h)``; the result: ``(..., s, d_h/2)``. ``None`` when
    that view does not exist: a dtype other than float32/float64, or strides
    that do not keep each pair adjacent and aligned.
    """
    complex_dtype = _COMPLEX.get(x.dtype)
    if complex_dtype is None or x.stride(-1) != 1:
        return None
    try:
        # (..., s, d_h/2): the same bytes, two floats per complex number
        return x.view(complex_dtype)
    except RuntimeError:  # a stride or storage offset that splits a pair
        return None


def _rotate_complex(
    pairs: torch.Tensor, rotation: torch.Tensor, like: torch.Tensor
) -> torch.Tensor:
    """``pairs * rotation`` as a new contiguous real tensor like ``like``.

    ``(a + ib)(cos + i sin) = (a cos - b sin) + i (b cos + a sin)`` is the
    pair rotation, computed in one pass: read ``x`` once, write the result
    once. ``like``: ``(..., s, d_h)``.
    """
    if like.is_contiguous():  # so is the product: view it as real, no copy
        return (pairs * rotation).view(like.dtype)  # (..., s, d_h)
    out = torch.empty_like(like, memory_format=torch.contiguous_format)
    torch.mul(pairs, rotation, out=out.view(pairs.dtype))
    return out


def _rotate_into_buffer(
    x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, layout: str
) -> torch.Tensor:
    """The rotation written into one output buffer, ``(..., s, d_h)``.

    Four strided multiply(-add)s with half-size cos/sin ``(s, d_h/2)``, no
    ``torch.cat``.
    """
    if layout == "half":
        first, second = x.chunk(2, dim=-1)  # each (..., s, d_h/2)
    else:
        first, second = x[..., 0::2], x[..., 1::2]  # each (..., s, d_h/2)
    out = torch.empty_like(x, memory_format=torch.contiguous_format)
    if layout == "half":
        out_first, out_second = out.chunk(2, dim=-1)
    else:
        out_first, out_second = out[..., 0::2], out[..., 1::2]
    torch.mul(first, cos, out=out_first)
    out_first.addcmul_(second, sin, value=-1)  # a cos - b sin
    torch.mul(second, cos, out=out_second)
    out_second.addcmul_(first, sin)  # b cos + a sin
    return out


def rotary_table(
    cos: torch.Tensor, sin: torch.Tensor, layout: str
) -> tuple[torch.Tensor, ...]:
    """The tables :func:`rotary` reads, from cos/sin ``(s, d_h/2)``.

    Interleaved: one, ``(s, d_h)``, ``[cos_0, sin_0, cos_1, sin_1, ...]``,
    viewed as the complex rotation ``cos + i sin`` when used (stored as real
    numbers because ``Module.to(dtype)`` would drop the imaginary part of a
    complex buffer). Half: two, ``(s, d_h)`` each, ``[cos | cos]`` and
    ``[-sin | sin]``, for the three-call path of small inputs; the second's
    ``[:, d_h/2:]`` is ``sin`` again, for the passes of large ones. (Two
    tables, not one ``(s, 2, d_h)``: a decoding step slices each, which costs
    less than slicing one and splitting it with ``unbind``.)
    """
    if layout == "interleaved":
        return (torch.stack((cos, sin), dim=-1).flatten(-2),)
    return torch.cat((cos, cos), dim=-1), torch.cat((-sin, sin), dim=-1)


def rotary(
    x: torch.Tensor, rows: tuple[torch.Tensor, ...], layout: str
) -> torch.Tensor | None:
    """Rotate ``x`` ``(..., s, d_h)`` by ``rows``, the ``s`` rows of its positions.

    ``rows``: each table of ``rotary_table(...)``, ``[start : start + s]``.
    Applies to a float32 ``x`` without autograd when ``rows`` has all ``s``
    rows (a slice past the end of a table is shorter); ``None`` otherwise.
    """
    if (
        not _enabled
        or x.dtype != torch.float32
        or rows[0].dtype != torch.float32
        or rows[0].shape[0] != x.shape[-2]
        or not _without_autograd(x)
    ):
        return None
    return _rotate_rows(x, rows, layout)


def rotary_qk(
    q: torch.Tensor,
    k: torch.Tensor,
    rows: tuple[torch.Tensor, ...],
    layout: str,
) -> tuple[torch.Tensor, torch.Tensor] | None:
    """:func:`rotary` for queries and keys at the same positions.

    One check for both; ``None`` when no fast path applies.
    """
    if (
        not _enabled
        or q.dtype != torch.float32
        or k.dtype != torch.float32
        or rows[0].dtype != torch.float32
        or rows[0].shape[0] != q.shape[-2]
        or torch.is_grad_enabled() and (q.requires_grad or k.requires_grad)
    ):
        return None
    if layout == "half" and _few_calls(q) and _few_calls(k):
        # one decoding step: count the calls
        cos_full, sin_signed = rows  # (s, d_h): [cos|cos], [-sin|sin]
        return (
            _roll_rotation(q, cos_full, sin_signed),
            _roll_rotation(k, cos_full, sin_signed),
        )
    return _rotate_rows(q, rows, layout), _rotate_rows(k, rows, layout)


def _few_calls(x: torch.Tensor) -> bool:
    return x.numel() <= _FEW_CALLS_NUMEL and x.is_contiguous()


def _rotate_rows(
    x: torch.Tensor, rows: tuple[torch.Tensor, ...], layout: str
) -> torch.Tensor:
    """Rotate a float32 ``x`` ``(..., s, d_h)`` by rows of :func:`rotary_table`."""
    if layout == "interleaved":
        (table,) = rows  # (s, d_h): [cos_0, sin_0, ...]
        pairs = _complex_pairs(x)  # (..., s, d_h/2) complex64 view of x
        if pairs is not None:  # (s, d_h/2) complex64: cos + i sin
            return _rotate_complex(pairs, table.view(torch.complex64), x)
        # no complex view of x: the strided four-call path
        return _rotate_into_buffer(
            x, table[..., 0::2], table[..., 1::2], layout
        )
    cos_full, sin_signed = rows  # (s, d_h): [cos|cos], [-sin|sin]
    if _few_calls(x):
        return _roll_rotation(x, cos_full, sin_signed)
    # [cos | cos] and the half-size sin (s, d_h/2), inside the second table
    return _rotate_half(x, cos_full, sin_signed[:, x.shape[-1] // 2 :])


def _roll_rotation(
    x: torch.Tensor, cos_full: torch.Tensor, sin_signed: torch.Tensor
) -> torch.Tensor:
    """The half-split rotation of a small ``x`` ``(..., s, d_h)``: three calls.

    ``x * [cos | cos] + roll(x, d_h/2) * [-sin | sin]``: with ``x = [a | b]``,
    ``roll`` gives ``[b | a]``, and the sum is ``[a cos - b sin | b cos + a
    sin]``, summed in the formula's order, so rounded as it is.
    ``cos_full``, ``sin_signed``: ``(s, d_h)``.
    """
    rolled = x.roll(x.shape[-1] // 2, dims=-1)  # [b | a]
    return torch.addcmul(x * cos_full, rolled, sin_signed)


# The blocks of :func:`_rotate_half`: 1 MiB of float32 in, 1 MiB out, so a
# block's second and third passes find it in the cache (torch splits each
# pass between its threads). On a 2-core AMD EPYC with 1 MiB of L2 per core,
# (4, 16, 2048, 64) took 2.70, 2.45 and 2.57 times a clone with blocks of
# 2**17, 2**18 and 2**19 numbers, and 4.0 times without blocks.
_BLOCK_NUMEL = 1 << 18


def _rotate_half(
    x: torch.Tensor, cos_full: torch.Tensor, sin: torch.Tensor
) -> torch.Tensor:
    """The half-split rotation in three passes, ``(..., s, d_h)``.

    ``out = x * [cos | cos]`` in one pass over whole rows, then
    ``out[:d_h/2] -= b sin`` and ``out[d_h/2:] += a sin`` over half-rows:
    (a cos - b sin, b cos + a sin), with ``a, b`` the halves of ``x``.
    ``cos_full``: ``(s, d_h)``; ``sin``: ``(s, d_h/2)``. A large contiguous
    ``x`` goes through the passes a block of whole ``(s, d_h)`` slices at a
    time, so that memory sees one read of ``x`` and one write of ``out``.
    """
    out = torch.empty_like(x, memory_format=torch.contiguous_format)
    seq_len, head_dim = x.shape[-2:]
    per_block = _BLOCK_NUMEL // max(1, seq_len * head_dim)  # (s, d_h) slices
    x_blocks: tuple[torch.Tensor, ...] = (x,)
    out_blocks: tuple[torch.Tensor, ...] = (out,)
    if x.is_contiguous() and x.numel() > 0 and per_block >= 1:
        # (n, s, d_h) pieces; one split per tensor, not one slice per block
        x_blocks, out_blocks = (
            t.view(-1, seq_len, head_dim).split(per_block) for t in (x, out)
        )
    for x_, out_ in zip(x_blocks, out_blocks):
        first, second = x_.chunk(2, dim=-1)  # each (..., s, d_h/2)
        torch.mul(x_, cos_full, out=out_)
        out_first, out_second = out_.chunk(2, dim=-1)
        out_first.addcmul_(second, sin, value=-1)
        out_second.addcmul_(first, sin)
    return out


# -------------------------------------------------------------------- ALiBi

# the largest whole number below which every whole number is exact, per dtype
_EXACT_INTEGERS = {torch.float32: 2**24, torch.float64: 2**53}


def alibi_applies(k_len: int, dtype: torch.dtype) -> bool:
    """Whether the ALiBi paths apply: enabled, float32/float64, ``s_k`` exact."""
    return _enabled and k_len <= _EXACT_INTEGERS.get(dtype, 0)


def _check_exact(slopes: torch.Tensor, k_len: int) -> None:
    limit = _EXACT_INTEGERS.get(slopes.dtype)
    if limit is None:
        raise ValueError(
            f"slopes must be float32 or float64 (the result's dtype), "
            f"got {slopes.dtype}"
        )
    if k_len > limit:
        raise ValueError(
            f"k_len must be at most {limit:,} in {slopes.dtype} (distances "
            f"beyond it are not whole numbers there), got {k_len:,}"
        )


def alibi_bias(
    slopes: torch.Tensor, q_len: int, k_len: int, causal: bool
) -> torch.Tensor:
    """:func:`posenc_lib.alibi_bias` from the slopes ``(n_h, 1, 1)``.

    The result has the slopes' dtype (float32 or float64) and device. Works
    in that dtype: distances are whole numbers, exact up to ``2**24`` in
    float32 (a larger ``k_len`` is a ``ValueError``). Masks the small
    ``(s_q, s_k)`` distance table instead of the big result:
    ``m_h · (-inf) = -inf`` because every slope is > 0, so the one broadcast
    product is the only pass over the ``n_h · s_q · s_k`` numbers.
    """
    _check_exact(slopes, k_len)
    key = torch.arange(k_len, device=slopes.device)  # (s_k,)
    # (s_q,): the queries are the last positions
    query = torch.arange(k_len - q_len, k_len, device=slopes.device)
    relative = key[None, :] - query[:, None]  # (s_q, s_k), r = j - i
    if causal:
        # (s_q, s_k): r where r <= 0, -inf for future keys
        distance = relative.to(slopes.dtype).masked_fill_(
            relative > 0, float("-inf")
        )
        return slopes * distance  # (n_h, s_q, s_k)
    return slopes * (-relative.abs()).to(slopes.dtype)


def alibi_bias_compact(slopes: torch.Tensor, k_len: int) -> torch.Tensor:
    """:func:`posenc_lib.alibi_bias_compact` in two calls, ``(n_h, 1, s_k)``.

    ``slopes``: ``(n_h, 1, 1)``, float32 or float64 (the result's dtype), with
    ``s_k`` exact in it (:func:`alibi_applies`).
    """
    _check_exact(slopes, k_len)
    # (n_h, 1, s_k): -m_h (s_k - 1 - j)
    return slopes * torch.arange(
        1 - k_len, 1, dtype=slopes.dtype, device=slopes.device
    )
