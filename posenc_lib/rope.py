"""Rotary position embeddings, RoPE (Su et al., 2021).

Notation: ``b`` batch, ``n_h`` heads, ``s`` sequence length, ``d_h`` head width
(``head_dim``, even), pair index ``ℓ = 0 .. d_h/2 - 1``. Pair ``ℓ`` of a query or
key at position ``p`` is rotated by the angle ``p θ_ℓ`` with

    θ_ℓ = B^(-2ℓ/d_h)        (B = ``base``, 10 000 unless stated)

Which two coordinates form pair ``ℓ`` is the *layout*:

- ``"half"`` (GPT-NeoX, HF transformers' ``rotate_half``): coordinates
  ``ℓ`` and ``ℓ + d_h/2``.
- ``"interleaved"`` (RoFormer, Meta's Llama reference, torchtune):
  coordinates ``2ℓ`` and ``2ℓ + 1``.

The two layouts are the same function up to a fixed permutation of the head
dimension (:func:`interleaved_to_half_permutation`), which is why checkpoints
convert between them by permuting the rows of ``W_q`` and ``W_k``.

The functions below are the formulas: angles = positions × frequencies, then
cos/sin of the angles, then rotate the pairs. Faster ways to compute the same
numbers live in :mod:`posenc_lib.fast`; the public functions hand their work to
it in one marked line.
"""

from __future__ import annotations

import math
from typing import cast

import torch

from . import fast
from ._buffers import FixedPrecisionTables
from ._checks import (
    check_choice,
    check_device,
    check_dtype,
    check_even_int,
    check_fits,
    check_floating,
    check_frequencies,
    check_offset,
    check_positions,
    check_positive_float,
    check_positive_int,
    check_same_device,
    check_tensor,
)

LAYOUTS = ("half", "interleaved")
DEFAULT_BASE = 10000.0


def rope_frequencies(head_dim: int, base: float = DEFAULT_BASE, *, device=None) -> torch.Tensor:
    """Rotation frequencies ``θ_ℓ = B^(-2ℓ/d_h)``, shape ``(d_h/2,)``, float64."""
    head_dim = check_even_int("head_dim", head_dim)
    base = check_positive_float("base", base)
    device = check_device(device)
    check_fits(f"head_dim={head_dim}", (head_dim // 2,), torch.float64, device)
    pair = torch.arange(head_dim // 2, dtype=torch.float64, device=device)  # (d_h/2,) = ℓ
    return base ** (-2 * pair / head_dim)


def rope_angles(positions: torch.Tensor, frequencies: torch.Tensor) -> torch.Tensor:
    """Rotation angles ``p θ_ℓ``: positions × frequencies, shape ``(s, d_h/2)``, float64.

    Args:
        positions: token positions ``(s,)``, integer or real (e.g. ``torch.arange(s)``).
        frequencies: ``θ`` ``(d_h/2,)``, e.g. :func:`rope_frequencies` or a
            context-extension rule from :mod:`posenc_lib.rope_scaling`.

    The result is on ``positions``' device.
    """
    positions = check_positions(positions)
    frequencies = check_frequencies(frequencies)
    check_fits(
        f"positions of length {positions.shape[0]} and {frequencies.shape[0]} frequencies",
        (positions.shape[0], frequencies.shape[0]),
        torch.float64,
        positions.device,
    )
    return torch.outer(positions.to(torch.float64), frequencies.to(positions.device))  # (s, d_h/2)


def wavelengths(frequencies: torch.Tensor) -> torch.Tensor:
    """Positions per full turn of each pair, ``λ_ℓ = 2π / θ_ℓ``, shape ``(d_h/2,)``, float64.

    Works for any positive frequencies: :func:`rope_frequencies`,
    :func:`posenc_lib.sinusoidal_frequencies` or a context-extension rule.
    """
    return 2 * math.pi / check_frequencies(frequencies, positive=True)


def _check_x(name: str, x: object, *, min_dim: int = 2) -> torch.Tensor:
    x = check_floating(name, check_tensor(name, x, min_dim=min_dim))
    check_even_int(f"head_dim ({name}.shape[-1])", x.shape[-1])
    return x


def _check_rotate_args(x: object, cos: object, sin: object, layout: object) -> tuple:
    """The arguments of :func:`rotate_pairs`, checked; ``cos`` and ``sin`` rounded once to ``x``'s dtype, on its device."""
    x = _check_x("x", x, min_dim=1)
    layout = check_choice("layout", layout, LAYOUTS)
    half_shape = (*x.shape[:-1], x.shape[-1] // 2)  # (..., s, d_h/2)
    rounded = []
    for name, value in (("cos", cos), ("sin", sin)):
        value = check_floating(name, check_tensor(name, value, min_dim=0))
        try:
            fits = torch.broadcast_shapes(value.shape, half_shape) == half_shape
        except RuntimeError:
            fits = False
        if not fits:
            raise ValueError(f"{name} must broadcast to (..., s, d_h/2) = {half_shape}, got shape {tuple(value.shape)}")
        rounded.append(value.to(x.device, x.dtype))  # in x's precision
    return x, *rounded, layout


def rotate_pairs(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, layout: str = "half") -> torch.Tensor:
    """Rotate each pair ``(a, b)`` of ``x`` to ``(a cos - b sin, b cos + a sin)``.

    Args:
        x: ``(..., s, d_h)``, floating point, ``d_h`` even.
        cos, sin: ``(s, d_h/2)``, or anything that broadcasts to ``(..., s, d_h/2)``
            without enlarging it.
        layout: ``"half"`` (pair ``ℓ`` is ``x_ℓ, x_{ℓ+d_h/2}``) or ``"interleaved"``
            (``x_{2ℓ}, x_{2ℓ+1}``).

    Returns:
        A new tensor shaped and typed like ``x``; ``cos`` and ``sin`` are rounded
        once to ``x``'s dtype and moved to its device.
    """
    x, cos, sin, layout = _check_rotate_args(x, cos, sin, layout)  # cos, sin in x's dtype, on its device
    if (out := fast.rotate_pairs(x, cos, sin, layout)) is not None:  # same numbers, faster
        return out

    if layout == "half":
        a, b = x.chunk(2, dim=-1)  # (..., s, d_h/2) each: pair ℓ is (x_ℓ, x_{ℓ + d_h/2})
    else:
        a, b = x[..., 0::2], x[..., 1::2]  # (..., s, d_h/2) each: pair ℓ is (x_2ℓ, x_2ℓ+1)
    a_rotated = a * cos - b * sin
    b_rotated = b * cos + a * sin
    if layout == "half":
        return torch.cat((a_rotated, b_rotated), dim=-1)  # (..., s, d_h)
    return torch.stack((a_rotated, b_rotated), dim=-1).flatten(-2)  # (..., s, d_h): pairs


def _resolve_frequencies(head_dim: int, base: float, frequencies: object, device: torch.device) -> torch.Tensor:
    """The standard frequencies for ``base``, or the given ones (``base`` then plays no part), float64 on ``device``."""
    if frequencies is None:
        return rope_frequencies(head_dim, base, device=device)
    return check_frequencies(frequencies, size=head_dim // 2).to(device)


def _consecutive_or_given(positions: object, offset: object, seq_len: int, device: torch.device) -> torch.Tensor:
    """``positions`` (checked, on ``device``) or, when it is ``None``, ``offset .. offset + s - 1``."""
    if positions is None:
        offset = check_offset(offset, seq_len)
        return torch.arange(offset, offset + seq_len, device=device)  # (s,)
    positions = check_positions(positions, seq_len)
    if check_offset(offset) != 0:
        raise ValueError("give positions or offset, not both (offset is the first of consecutive positions)")
    return positions.to(device)


def apply_rope(
    x: torch.Tensor,
    positions: torch.Tensor | None = None,
    *,
    offset: int = 0,
    base: float = DEFAULT_BASE,
    layout: str = "half",
    frequencies: torch.Tensor | None = None,
) -> torch.Tensor:
    """Rotate queries or keys by their positions.

    Args:
        x: queries or keys ``(..., s, d_h)``, typically ``(b, n_h, s, d_h)``; ``d_h`` even.
        positions: token positions ``(s,)``; default ``offset .. offset + s - 1``.
        offset: the first position when ``positions`` is not given (a KV cache's length).
        base: ``B``, 10 000 in RoFormer and Llama 2, 500 000 in Llama 3.
        layout: ``"half"`` (GPT-NeoX / HF) or ``"interleaved"`` (RoFormer / Meta).
        frequencies: ``(d_h/2,)`` frequencies replacing the standard ones (``base``
            is then not used), e.g. from :mod:`posenc_lib.rope_scaling`.

    Returns:
        A tensor shaped and typed like ``x``. The angles are computed in float64
        and cos/sin rounded once to float32 (float64 for a float64 ``x``), so a
        bfloat16 ``x`` does not round its positions.
    """
    x, layout, base = _check_x("x", x), check_choice("layout", layout, LAYOUTS), check_positive_float("base", base)
    seq_len, head_dim = x.shape[-2], x.shape[-1]
    positions = _consecutive_or_given(positions, offset, seq_len, x.device)  # (s,)
    frequencies = _resolve_frequencies(head_dim, base, frequencies, x.device)  # (d_h/2,)
    angles = rope_angles(positions, frequencies)  # (s, d_h/2), float64
    precision = torch.float64 if x.dtype == torch.float64 else torch.float32
    cos, sin = angles.cos().to(precision), angles.sin().to(precision)  # rounded once
    return rotate_pairs(x, cos, sin, layout)


def interleaved_to_half_permutation(head_dim: int, *, device=None) -> torch.Tensor:
    """Index ``perm`` with ``x_half = x_interleaved[..., perm]``, shape ``(d_h,)``, int64.

    ``perm = [0, 2, 4, ..., d_h-2, 1, 3, ..., d_h-1]``: the first coordinates of all
    pairs, then the second ones. Applying it to the output rows of ``W_q`` and
    ``W_k`` (per head) converts a Meta-layout checkpoint to the HF layout.
    """
    head_dim = check_even_int("head_dim", head_dim)
    device = check_device(device)
    check_fits(f"head_dim={head_dim}", (head_dim,), torch.int64, device)
    return torch.cat((torch.arange(0, head_dim, 2, device=device), torch.arange(1, head_dim, 2, device=device)))


def half_to_interleaved_permutation(head_dim: int, *, device=None) -> torch.Tensor:
    """Inverse of :func:`interleaved_to_half_permutation`: ``x_interleaved = x_half[..., perm]``."""
    return torch.argsort(interleaved_to_half_permutation(head_dim, device=device))


class RotaryEmbedding(FixedPrecisionTables):
    """RoPE with a cache of cos/sin for positions ``0 .. max_len - 1``.

    Args:
        head_dim: ``d_h``, even.
        max_len: positions cached up front. Later positions are computed when asked
            for (the cache never grows).
        base: ``B`` (not used when ``frequencies`` is given).
        layout: ``"half"`` or ``"interleaved"``.
        frequencies: ``(d_h/2,)`` frequencies replacing the standard ones.
        attention_factor: multiplies cos and sin, hence queries and keys (YaRN's
            magnitude factor, :func:`posenc_lib.yarn_attention_factor`); 1 by default.
        device: where to build the tables.

    ``forward(x, positions=None, *, offset=0)``: ``x`` is ``(..., s, d_h)``, e.g.
    ``(b, n_h, s, d_h)``; positions as in :func:`apply_rope`. Returns ``x``'s shape
    and dtype, with the numbers :func:`apply_rope` gives (times ``attention_factor``).
    ``rotate_qk(q, k, positions=None, *, offset=0)`` rotates queries and keys at
    the same positions with one lookup.

    Buffers: ``frequencies`` ``(d_h/2,)`` float64, ``cos_cached`` and ``sin_cached``
    ``(max_len, d_h/2)`` float32, and the tables of :func:`posenc_lib.fast.rotary_table`: ``rotation_cached``
    (interleaved), or ``rotation_cos_cached`` and ``rotation_sin_cached`` (half).
    They follow ``.to(device)``; ``.to(torch.bfloat16)``, ``.half()`` and ``.double()``
    leave them in their precision (see :class:`posenc_lib._buffers.FixedPrecisionTables`).
    """

    frequencies: torch.Tensor
    cos_cached: torch.Tensor
    sin_cached: torch.Tensor

    def __init__(
        self,
        head_dim: int,
        max_len: int = 2048,
        *,
        base: float = DEFAULT_BASE,
        layout: str = "half",
        frequencies: torch.Tensor | None = None,
        attention_factor: float = 1.0,
        device=None,
    ):
        super().__init__()
        self.head_dim = check_even_int("head_dim", head_dim)
        self.max_len = check_positive_int("max_len", max_len)
        self.base = check_positive_float("base", base)
        self.layout = check_choice("layout", layout, LAYOUTS)
        self.attention_factor = check_positive_float("attention_factor", attention_factor)
        device = check_device(device)
        check_fits(
            f"max_len={max_len} and head_dim={head_dim} (cos/sin tables)",
            (max_len, 2 * head_dim),
            torch.float32,
            device,
        )
        self.standard_frequencies = frequencies is None
        given = None if frequencies is None else check_frequencies(frequencies, size=self.head_dim // 2).detach()
        # the given frequencies' values, kept off any device, so reset_parameters (after to_empty) rebuilds them
        self.given_frequencies = None if given is None or given.device.type == "meta" else given.tolist()
        theta = rope_frequencies(self.head_dim, self.base, device=device) if given is None else given.to(device)
        self.register_buffer("frequencies", theta, persistent=False)
        self.build_cache()

    def build_cache(self) -> None:
        """Compute ``cos_cached`` and ``sin_cached`` for positions ``0 .. max_len - 1``, each ``(max_len, d_h/2)``.

        In float64 on the frequencies' device, rounded once to float32.
        """
        positions = torch.arange(self.max_len, device=self.frequencies.device)  # (max_len,)
        angles = rope_angles(positions, self.frequencies)  # (max_len, d_h/2), float64
        cos = (angles.cos() * self.attention_factor).float()
        sin = (angles.sin() * self.attention_factor).float()
        self.register_buffer("cos_cached", cos, persistent=False)
        self.register_buffer("sin_cached", sin, persistent=False)
        tables = fast.rotary_table(cos, sin, self.layout)  # (max_len, d_h) each
        names = ("rotation_cos_cached", "rotation_sin_cached") if self.layout == "half" else ("rotation_cached",)
        for name, table in zip(names, tables, strict=True):
            self.register_buffer(name, table, persistent=False)

    def reset_parameters(self) -> None:
        """Recompute every table on its current device, e.g. after ``to_empty``, from ``base`` or the given frequencies.

        Frequencies given on the ``meta`` device hold no values to rebuild from: a ``ValueError``.
        """
        device = self.frequencies.device
        if self.standard_frequencies:
            self.frequencies = rope_frequencies(self.head_dim, self.base, device=device)
        elif self.given_frequencies is not None:
            self.frequencies = torch.tensor(self.given_frequencies, dtype=torch.float64, device=device)
        elif device.type != "meta":
            raise ValueError(
                "this RotaryEmbedding was built with frequencies on the meta device, which hold no values: "
                "reset_parameters cannot rebuild them; build it with frequencies that have values "
                "(e.g. on the CPU) and device='meta'"
            )
        self.build_cache()

    def cos_sin(
        self,
        seq_len: int,
        positions: torch.Tensor | None = None,
        *,
        offset: int = 0,
        dtype: torch.dtype = torch.float32,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """cos and sin (times ``attention_factor``) for ``seq_len`` positions, each ``(s, d_h/2)``.

        From the cache when the positions are consecutive, cached and ``dtype`` is not
        float64; otherwise computed directly in float64 and rounded once to float32
        (float64 when ``dtype`` is float64).
        """
        seq_len = check_positive_int("seq_len", seq_len)
        dtype = check_dtype(dtype)
        device = self.frequencies.device
        if positions is None and check_offset(offset, seq_len) + seq_len <= self.max_len and dtype != torch.float64:
            return self.cos_cached[offset : offset + seq_len], self.sin_cached[offset : offset + seq_len]
        positions = _consecutive_or_given(positions, offset, seq_len, device)  # (s,)
        angles = rope_angles(positions, self.frequencies)  # (s, d_h/2), float64: only these rows
        precision = torch.float64 if dtype == torch.float64 else torch.float32
        return (angles.cos() * self.attention_factor).to(precision), (angles.sin() * self.attention_factor).to(
            precision
        )

    def forward(self, x: torch.Tensor, positions: torch.Tensor | None = None, *, offset: int = 0) -> torch.Tensor:
        x = self._check_input("x", x)
        if (
            positions is None
            and (out := fast.rotary(x, self._cached_rows(offset, x.shape[-2]), self.layout)) is not None
        ):
            return out  # the same numbers from the fast path's cached table
        cos, sin = self.cos_sin(x.shape[-2], positions, offset=offset, dtype=x.dtype)  # (s, d_h/2) each
        return rotate_pairs(x, cos, sin, self.layout)

    def rotate_qk(
        self, q: torch.Tensor, k: torch.Tensor, positions: torch.Tensor | None = None, *, offset: int = 0
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Rotate queries and keys at the same positions: ``(self(q, ...), self(k, ...))`` with one lookup.

        Args:
            q: queries ``(..., s, d_h)``, e.g. ``(b, n_h, s, d_h)``.
            k: keys ``(..., s, d_h)``; the other dimensions may differ from ``q``'s
                (fewer key heads in grouped-query attention), ``s`` may not.
            positions, offset: as in :meth:`forward`, shared by ``q`` and ``k``.
        """
        q, k = self._check_input("q", q), self._check_input("k", k)
        if q.shape[-2] != k.shape[-2]:
            raise ValueError(
                f"q and k must have the same sequence length s (shape[-2]), got {tuple(q.shape)} and {tuple(k.shape)}"
            )
        if positions is None and (out := fast.rotary_qk(q, k, self._cached_rows(offset, q.shape[-2]), self.layout)):
            return out  # one lookup in the fast path's cached table
        precision = torch.float64 if torch.float64 in (q.dtype, k.dtype) else torch.float32
        cos, sin = self.cos_sin(q.shape[-2], positions, offset=offset, dtype=precision)  # (s, d_h/2) each
        return rotate_pairs(q, cos, sin, self.layout), rotate_pairs(k, cos, sin, self.layout)

    def _cached_rows(self, offset: object, seq_len: int) -> tuple[torch.Tensor, ...]:
        """Rows ``offset .. offset + s - 1`` of the fast path's tables (fewer, or none, past ``max_len``)."""
        start = check_offset(offset, seq_len)
        end = start + seq_len
        # self._buffers, not self.rotation_cached: nn.Module.__getattr__ costs ~1 µs; every one is a table
        tables = cast(dict[str, torch.Tensor], self._buffers)
        if self.layout == "half":
            return tables["rotation_cos_cached"][start:end], tables["rotation_sin_cached"][start:end]
        return (tables["rotation_cached"][start:end],)

    def _check_input(self, name: str, x: object) -> torch.Tensor:
        x = check_floating(name, check_tensor(name, x, min_dim=2))
        if x.shape[-1] != self.head_dim:
            raise ValueError(f"{name} must have last dimension head_dim={self.head_dim}, got shape {tuple(x.shape)}")
        frequencies = self._buffers["frequencies"]  # not self.frequencies: nn.Module.__getattr__ costs ~1 µs
        check_same_device(name, x, frequencies.device, "RotaryEmbedding")  # type: ignore[union-attr]  # never None: a buffer
        return x

    def extra_repr(self) -> str:
        extra = "" if self.attention_factor == 1.0 else f", attention_factor={self.attention_factor:g}"
        return f"head_dim={self.head_dim}, max_len={self.max_len}, base={self.base:g}, layout={self.layout!r}{extra}"


# --- Variants: partial rotary, 2-D (axial) RoPE ----------------------------------------------


def apply_partial_rope(
    x: torch.Tensor,
    rotary_dim: int,
    positions: torch.Tensor | None = None,
    *,
    offset: int = 0,
    base: float = DEFAULT_BASE,
    layout: str = "half",
) -> torch.Tensor:
    """Rotate only the first ``rotary_dim`` coordinates of each head; pass the rest through.

    This is partial rotary: GPT-NeoX's ``rotary_pct`` (``rotary_dim = rotary_pct · d_h``,
    half layout) and GPT-J's ``rotary_dim`` (interleaved layout). The rotated part
    uses the frequencies of a head of width ``rotary_dim``,
    ``θ_ℓ = B^(-2ℓ/rotary_dim)``, ``ℓ = 0 .. rotary_dim/2 - 1``; the other
    ``d_h - rotary_dim`` coordinates carry no position. With ``rotary_dim = d_h``
    this is :func:`apply_rope`.

    Args:
        x: queries or keys ``(..., s, d_h)``, typically ``(b, n_h, s, d_h)``.
        rotary_dim: how many leading coordinates of each head are rotated; even,
            ``2 <= rotary_dim <= d_h``.
        positions, offset, base, layout: as in :func:`apply_rope`.

    Returns:
        A tensor shaped and typed like ``x``.
    """
    x = check_floating("x", check_tensor("x", x, min_dim=2))
    rotary_dim = check_even_int("rotary_dim", rotary_dim)
    if rotary_dim > x.shape[-1]:
        raise ValueError(f"rotary_dim must be <= head_dim (x.shape[-1] = {x.shape[-1]}), got {rotary_dim}")
    rotated = apply_rope(x[..., :rotary_dim], positions, offset=offset, base=base, layout=layout)  # (..., s, rot)
    return torch.cat((rotated, x[..., rotary_dim:]), dim=-1)  # (..., s, d_h)


def apply_rope_2d(
    x: torch.Tensor,
    rows: torch.Tensor,
    cols: torch.Tensor,
    *,
    base: float = DEFAULT_BASE,
    layout: str = "half",
) -> torch.Tensor:
    """2-D (axial) RoPE for tokens on a grid, e.g. image patches.

    The first half of each head is rotated by the token's row, the second half by
    its column, each half as a RoPE head of width ``d_h/2`` (frequencies
    ``B^(-2ℓ/(d_h/2))``). The score of a query at ``(row, col)`` and a key at
    ``(row', col')`` then depends on the positions only through
    ``(row' - row, col' - col)``.

    Args:
        x: queries or keys ``(..., s, d_h)`` with ``d_h`` a multiple of 4 (each half
            is made of pairs).
        rows, cols: the row and the column of every token, 1-D tensors ``(s,)``.
        base, layout: as in :func:`apply_rope`, used for both halves.

    Returns:
        A tensor shaped and typed like ``x``.
    """
    x = check_floating("x", check_tensor("x", x, min_dim=2))
    head_dim = x.shape[-1]
    if head_dim % 4:
        raise ValueError(f"x.shape[-1] (head_dim) must be a multiple of 4 for 2-D RoPE, got {head_dim}")
    rows = check_positions(rows, x.shape[-2], name="rows")
    cols = check_positions(cols, x.shape[-2], name="cols")
    half = head_dim // 2
    by_row = apply_rope(x[..., :half], rows, base=base, layout=layout)  # (..., s, d_h/2)
    by_col = apply_rope(x[..., half:], cols, base=base, layout=layout)  # (..., s, d_h/2)
    return torch.cat((by_row, by_col), dim=-1)  # (..., s, d_h)
