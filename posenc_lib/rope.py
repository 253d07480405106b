"""Rotary position embeddings, RoPE (Su et al., 2021).

Notation: ``b`` batch, ``h`` heads, ``s`` sequence length, ``d`` head width
(``head_dim``, even). Pair ``k = 0 .. d/2 - 1`` of a query or key vector is
rotated by the angle ``p * theta_k`` with ``theta_k = base ** (-2k / d)``,
where ``p`` is the token's position. Which two coordinates form pair ``k``
is the *layout*:

- ``"half"`` (GPT-NeoX, HF transformers' ``rotate_half``): coordinates
  ``k`` and ``k + d/2``.
- ``"interleaved"`` (RoFormer, Meta's Llama reference, torchtune):
  coordinates ``2k`` and ``2k + 1``.

The two layouts are the same function up to a fixed permutation of the head
dimension (see :func:`interleaved_to_half_permutation`), which is why
checkpoints convert between them by permuting the rows of ``W_q`` and ``W_k``.
"""

from __future__ import annotations

import torch
from torch import nn

from ._checks import check_choice, check_even_int, check_floating, check_positive_float, check_positive_int, check_tensor

LAYOUTS = ("half", "interleaved")



def rope_frequencies(head_dim: int, base: float = 10000.0) -> torch.Tensor:
    """Rotation frequencies ``theta_k = base ** (-2k / d)``, shape ``(d/2,)``, float64."""
    head_dim = check_even_int("head_dim", head_dim)
    base = check_positive_float("base", base)
    pair_index = torch.arange(0, head_dim // 2, dtype=torch.float64)  # (d/2,)
    return base ** (-2.0 * pair_index / head_dim)


def _positions_tensor(positions: torch.Tensor | int | None, seq_len: int) -> torch.Tensor:
    """Turn ``None`` / an integer offset / a 1-D tensor into positions of shape ``(s,)``."""
    if positions is None:
        return torch.arange(seq_len)
    if isinstance(positions, int) and not isinstance(positions, bool):
        if positions < 0:
            raise ValueError(f"positions (an offset) must be >= 0, got {positions}")
        return torch.arange(positions, positions + seq_len)
    if not isinstance(positions, torch.Tensor):
        raise TypeError(
            f"positions must be None, an int offset or a 1-D torch.Tensor, got {type(positions).__name__}"
        )
    if positions.dim() != 1 or positions.shape[0] != seq_len:
        raise ValueError(
            f"positions must have shape (s,) = ({seq_len},) to match x, got shape {tuple(positions.shape)}"
        )
    if positions.is_complex() or positions.dtype == torch.bool:
        raise TypeError(f"positions must be integer or real, got dtype {positions.dtype}")
    return positions


def rope_angles(
    positions: torch.Tensor | int,
    head_dim: int,
    base: float = 10000.0,
    *,
    frequencies: torch.Tensor | None = None,
) -> torch.Tensor:
    """Rotation angles ``p * theta_k`` in float64, shape ``(s, d/2)``.

    Args:
        positions: a 1-D tensor of positions ``(s,)``, or an int ``s`` meaning ``0 .. s-1``.
        head_dim: ``d``, even.
        base: frequency base (ignored when ``frequencies`` is given).
        frequencies: optional ``(d/2,)`` frequencies replacing the standard
            ones, e.g. from a context-extension method.
    """
    head_dim = check_even_int("head_dim", head_dim)
    if isinstance(positions, int) and not isinstance(positions, bool):
        if positions <= 0:
            raise ValueError(f"positions (a count) must be a positive integer, got {positions}")
        positions = torch.arange(positions)
    elif not isinstance(positions, torch.Tensor) or positions.dim() != 1:
        raise TypeError("positions must be a positive int or a 1-D torch.Tensor of shape (s,)")
    freqs = _resolve_frequencies(head_dim, base, frequencies)
    return torch.outer(positions.to(torch.float64), freqs)  # (s, d/2)


def _resolve_frequencies(head_dim: int, base: float, frequencies: torch.Tensor | None) -> torch.Tensor:
    if frequencies is None:
        return rope_frequencies(head_dim, base)
    frequencies = check_tensor("frequencies", frequencies)
    if frequencies.shape != (head_dim // 2,):
        raise ValueError(
            f"frequencies must have shape (head_dim/2,) = ({head_dim // 2},), got {tuple(frequencies.shape)}"
        )
    return frequencies.to(torch.float64)


def _compute_dtype(x: torch.Tensor) -> torch.dtype:
    """cos/sin are rounded once to this dtype: float64 for float64 inputs, else float32."""
    return torch.float64 if x.dtype == torch.float64 else torch.float32


# Below this many elements a rotation costs what its torch calls cost (a few microseconds each),
# not what its memory traffic costs, so small inputs take the path with the fewest calls.
_FEW_CALLS_NUMEL = 1 << 15


def _needs_grad(*tensors: torch.Tensor) -> bool:
    return torch.is_grad_enabled() and any(t.requires_grad for t in tensors)


_COMPLEX = {torch.float32: torch.complex64, torch.float64: torch.complex128}


def _complex_pairs(x: torch.Tensor) -> torch.Tensor | None:
    """Interleaved pairs of ``x`` ``(..., s, d)`` seen as complex numbers ``(..., s, d/2)``, sharing memory.

    ``None`` when that view does not exist: a dtype other than float32/float64,
    or strides that do not keep each pair adjacent and aligned.
    """
    complex_dtype = _COMPLEX.get(x.dtype)
    if complex_dtype is None or x.stride(-1) != 1:
        return None
    try:
        return x.view(complex_dtype)  # (..., s, d/2): the same bytes, two floats per element
    except RuntimeError:  # a stride or storage offset that splits a pair
        return None


def _rotate_complex(pairs: torch.Tensor, rotation: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """``pairs * rotation`` written into a new contiguous real tensor shaped like ``like`` ``(..., s, d)``.

    ``pairs``: ``(..., s, d/2)`` complex; ``rotation``: ``cos + i sin`` of the same
    dtype, broadcastable to it. ``(a + ib)(cos + i sin) = (a cos - b sin) + i (b cos + a sin)`` is the
    pair rotation, computed in one pass: read ``x`` once, write the result once.
    """
    if like.is_contiguous():  # then so is the product: view it as real, no copy
        return (pairs * rotation).view(like.dtype)  # (..., s, d)
    out = torch.empty_like(like, memory_format=torch.contiguous_format)  # (..., s, d)
    torch.mul(pairs, rotation, out=out.view(pairs.dtype))
    return out


def _rotate_half_few_calls(x: torch.Tensor, cos_full: torch.Tensor, sin_signed: torch.Tensor) -> torch.Tensor:
    """Half layout in three torch calls, for small contiguous ``x`` ``(..., s, d)``.

    ``cos_full = [cos | cos]`` and ``sin_signed = [-sin | sin]``, each ``(s, d)``:
    ``x * cos_full + roll(x, d/2) * sin_signed`` is ``(a cos - b sin, b cos + a sin)``
    for every pair ``(a, b) = (x_k, x_{k + d/2})``.
    """
    return torch.addcmul(x * cos_full, x.roll(x.shape[-1] // 2, dims=-1), sin_signed)  # (..., s, d)


def rotate_pairs(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, layout: str = "half") -> torch.Tensor:
    """Rotate each pair of ``x`` by the angle whose cosine and sine are given.

    Args:
        x: ``(..., s, d)``.
        cos, sin: ``(s, d/2)`` (or anything broadcastable to ``(..., s, d/2)``).
        layout: ``"half"`` or ``"interleaved"``.

    Returns:
        A new tensor shaped and typed like ``x``. Pair ``(a, b)`` becomes
        ``(a cos - b sin, b cos + a sin)``.

    Without autograd the result is written in place into one output buffer
    (half-size cos/sin, no ``torch.cat``): for the interleaved layout of a
    float32/float64 ``x`` that is one complex multiplication, one pass over
    memory. With autograd it uses plain differentiable operations.
    """
    check_choice("layout", layout, LAYOUTS)
    cos = cos.to(x.dtype)
    sin = sin.to(x.dtype)
    if layout == "interleaved" and not _needs_grad(x, cos, sin):
        pairs = _complex_pairs(x)  # (..., s, d/2) complex view of x, or None
        if pairs is not None:
            return _rotate_complex(pairs, torch.complex(cos, sin), x)
    if layout == "half":
        first, second = x.chunk(2, dim=-1)  # each (..., s, d/2)
    else:
        pairs = x.unflatten(-1, (-1, 2))  # (..., s, d/2, 2)
        first, second = pairs[..., 0], pairs[..., 1]
    if torch.is_grad_enabled() and (x.requires_grad or cos.requires_grad or sin.requires_grad):
        new_first = first * cos - second * sin
        new_second = second * cos + first * sin
        if layout == "half":
            return torch.cat((new_first, new_second), dim=-1)
        return torch.stack((new_first, new_second), dim=-1).flatten(-2)
    out = torch.empty_like(x, memory_format=torch.contiguous_format)
    if layout == "half":
        out_first, out_second = out.chunk(2, dim=-1)
    else:
        out_pairs = out.unflatten(-1, (-1, 2))
        out_first, out_second = out_pairs[..., 0], out_pairs[..., 1]
    torch.mul(first, cos, out=out_first)
    out_first.addcmul_(second, sin, value=-1)
    torch.mul(second, cos, out=out_second)
    out_second.addcmul_(first, sin)
    return out


def apply_rope(
    x: torch.Tensor,
    positions: torch.Tensor | int | None = None,
    *,
    base: float = 10000.0,
    layout: str = "half",
    frequencies: torch.Tensor | None = None,
) -> torch.Tensor:
    """Rotate queries or keys by their positions.

    Args:
        x: queries or keys, ``(..., s, d)`` -- typically ``(b, h, s, d)``; ``d`` even.
        positions: ``None`` for ``0 .. s-1``; an int offset ``o`` for
            ``o .. o+s-1`` (decoding with a KV cache); or a 1-D tensor ``(s,)``.
        base: frequency base, 10000 in RoFormer and Llama 2, 500000 in Llama 3.
        layout: ``"half"`` (GPT-NeoX / HF) or ``"interleaved"`` (RoFormer / Meta).
        frequencies: optional ``(d/2,)`` frequencies replacing the standard ones.

    Returns:
        Tensor shaped and typed like ``x``. Angles are computed in float64 and
        cos/sin rounded once to float32 (float64 for float64 input), so a
        bfloat16 ``x`` does not round its positions.
    """
    x = check_tensor("x", x, min_dim=2)
    check_floating("x", x)
    check_choice("layout", layout, LAYOUTS)
    head_dim = check_even_int("head_dim (x.shape[-1])", x.shape[-1])
    pos = _positions_tensor(positions, x.shape[-2])
    angles = rope_angles(pos, head_dim, base, frequencies=frequencies)  # (s, d/2) float64
    dtype = _compute_dtype(x)
    return rotate_pairs(x, angles.cos().to(dtype), angles.sin().to(dtype), layout)


def interleaved_to_half_permutation(head_dim: int) -> torch.Tensor:
    """Index ``perm`` with ``x_half = x_interleaved[..., perm]``, shape ``(d,)``.

    ``perm = [0, 2, 4, ..., d-2, 1, 3, ..., d-1]``: the first coordinates of all
    pairs, then the second ones. Applying it to the output rows of ``W_q`` and
    ``W_k`` (per head) converts a Meta-layout checkpoint to the HF layout.
    """
    head_dim = check_even_int("head_dim", head_dim)
    return torch.cat((torch.arange(0, head_dim, 2), torch.arange(1, head_dim, 2)))


def half_to_interleaved_permutation(head_dim: int) -> torch.Tensor:
    """Inverse of :func:`interleaved_to_half_permutation`: ``x_interleaved = x_half[..., perm]``."""
    return torch.argsort(interleaved_to_half_permutation(head_dim))


class RotaryEmbedding(nn.Module):
    """RoPE with a cos/sin cache that grows when a longer sequence arrives.

    Args:
        head_dim: ``d``, even.
        max_seq_len: positions cached up front; the cache doubles as needed.
        base: frequency base.
        layout: ``"half"`` or ``"interleaved"``.
        frequencies: optional ``(d/2,)`` frequencies replacing the standard ones.

    ``forward(x, positions=None)``: ``x`` is ``(..., s, d)``, e.g. ``(b, h, s, d)``;
    ``positions`` as in :func:`apply_rope`. Integer positions are looked up in
    the cache; others are computed directly. ``rotate_qk(q, k, positions=None)``
    does queries and keys together with one lookup.

    Besides ``cos_cached`` / ``sin_cached`` the cache holds the tables each
    layout's fast path wants, so a call does no trigonometry and no
    ``torch.cat``: ``cos + i sin`` as complex numbers (interleaved), or
    ``[cos | cos]`` and ``[-sin | sin]`` (half, used for small inputs such as
    one decoding step, where the number of torch calls is what costs).
    """

    cos_cached: torch.Tensor
    sin_cached: torch.Tensor

    def __init__(
        self,
        head_dim: int,
        max_seq_len: int = 2048,
        *,
        base: float = 10000.0,
        layout: str = "half",
        frequencies: torch.Tensor | None = None,
    ):
        super().__init__()
        self.head_dim = check_even_int("head_dim", head_dim)
        self.layout = check_choice("layout", layout, LAYOUTS)
        self.base = check_positive_float("base", base)
        self.register_buffer("frequencies", _resolve_frequencies(head_dim, base, frequencies), persistent=False)
        self.build_cache(max_seq_len)

    def build_cache(self, seq_len: int) -> None:
        """(Re)build float32 cos/sin tables for positions ``0 .. seq_len - 1``, each ``(seq_len, d/2)``."""
        if not isinstance(seq_len, int) or seq_len <= 0:
            raise ValueError(f"seq_len must be a positive integer, got {seq_len!r}")
        angles = torch.outer(torch.arange(seq_len, dtype=torch.float64), self.frequencies)  # (s, d/2)
        cos, sin = angles.cos().float(), angles.sin().float()
        self._cached_len = seq_len  # a plain int: reading it costs nothing on every call
        self.register_buffer("cos_cached", cos, persistent=False)
        self.register_buffer("sin_cached", sin, persistent=False)
        if self.layout == "interleaved":
            # (s, d) real [cos_0, sin_0, cos_1, sin_1, ...], viewed as complex (s, d/2) when used:
            # Module.to(dtype) would drop the imaginary part of a complex buffer
            self.register_buffer("rotation_cached", torch.stack((cos, sin), dim=-1).flatten(-2), persistent=False)
        else:
            self.register_buffer("cos_full_cached", torch.cat((cos, cos), dim=-1), persistent=False)  # (s, d)
            self.register_buffer("sin_signed_cached", torch.cat((-sin, sin), dim=-1), persistent=False)  # (s, d)

    @property
    def cached_len(self) -> int:
        return self.cos_cached.shape[0]

    def forward(self, x: torch.Tensor, positions: torch.Tensor | int | None = None) -> torch.Tensor:
        x = self._check_input("x", x)
        seq_len = x.shape[-2]
        if positions is None or isinstance(positions, int):
            start = self._cached_offset(positions, seq_len)
            if x.dtype == torch.float32 and not _needs_grad(x):
                fast = self._rotate_fast(x, self._fast_tables(start, start + seq_len))
                if fast is not None:
                    return fast
            cos, sin = self.cos_cached[start : start + seq_len], self.sin_cached[start : start + seq_len]
        else:
            pos = _positions_tensor(positions, seq_len)
            if pos.is_floating_point():
                angles = torch.outer(pos.to(torch.float64), self.frequencies)
                cos, sin = angles.cos().float(), angles.sin().float()
            else:
                if pos.numel() and int(pos.min()) < 0:
                    raise ValueError("positions must be >= 0")
                self._ensure_cached(int(pos.max()) + 1 if pos.numel() else 0)
                cos, sin = self.cos_cached[pos], self.sin_cached[pos]
        if x.dtype == torch.float64:
            # the cache is float32; recompute for float64 inputs so they keep their precision
            pos = _positions_tensor(positions, seq_len)
            angles = torch.outer(pos.to(torch.float64), self.frequencies)
            cos, sin = angles.cos(), angles.sin()
        return rotate_pairs(x, cos, sin, self.layout)

    def rotate_qk(
        self, q: torch.Tensor, k: torch.Tensor, positions: torch.Tensor | int | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Rotate queries and keys at the same positions: ``(self(q, positions), self(k, positions))``.

        One argument check and one cache lookup serve both, which matters when
        ``q`` and ``k`` are small (one decoding step), where those fixed costs are
        most of the time.

        Args:
            q: queries ``(..., s, d)``, e.g. ``(b, h, s, d)``.
            k: keys ``(..., s, d)``; the other dimensions may differ from ``q``'s
                (fewer key heads in grouped-query attention), ``s`` may not.
            positions: as in :func:`apply_rope`, shared by ``q`` and ``k``.
        """
        q = self._check_input("q", q)
        k = self._check_input("k", k)
        if q.shape[-2] != k.shape[-2]:
            raise ValueError(
                f"q and k must have the same sequence length s (shape[-2]), got {tuple(q.shape)} and {tuple(k.shape)}"
            )
        q_out = k_out = None
        if (positions is None or isinstance(positions, int)) and not _needs_grad(q, k):
            start = self._cached_offset(positions, q.shape[-2])
            if q.dtype == torch.float32 and k.dtype == torch.float32:
                tables = self._fast_tables(start, start + q.shape[-2])
                q_out, k_out = self._rotate_fast(q, tables), self._rotate_fast(k, tables)
        return (self(q, positions) if q_out is None else q_out), (self(k, positions) if k_out is None else k_out)

    def _check_input(self, name: str, x: object) -> torch.Tensor:
        x = check_floating(name, check_tensor(name, x, min_dim=2))
        if x.shape[-1] != self.head_dim:
            raise ValueError(f"{name} must have last dimension head_dim={self.head_dim}, got shape {tuple(x.shape)}")
        return x

    def _cached_offset(self, positions: int | None, seq_len: int) -> int:
        """Validate an offset (``None`` means 0) and grow the cache to cover ``offset + seq_len`` positions."""
        start = 0 if positions is None else positions
        if start < 0:
            raise ValueError(f"positions (an offset) must be >= 0, got {start}")
        self._ensure_cached(start + seq_len)
        return start

    def _ensure_cached(self, needed: int) -> None:
        if needed > self._cached_len:
            self.build_cache(max(needed, 2 * self._cached_len))

    def _fast_tables(self, start: int, stop: int) -> tuple[torch.Tensor, ...]:
        """The cached rows a fast path needs for positions ``start .. stop - 1``.

        Read from ``self._buffers`` directly: ``nn.Module.__getattr__`` costs about
        a microsecond per buffer, a noticeable share of a decoding step.
        """
        buffers = self._buffers
        if self.layout == "interleaved":
            rotation = buffers["rotation_cached"][start:stop]  # (s, d)
            return (rotation.view(torch.complex64) if rotation.dtype == torch.float32 else rotation,)  # (s, d/2)
        return buffers["cos_full_cached"][start:stop], buffers["sin_signed_cached"][start:stop]  # (s, d) each

    def _rotate_fast(self, x: torch.Tensor, tables: tuple[torch.Tensor, ...]) -> torch.Tensor | None:
        """Fast paths for a float32 ``x`` ``(..., s, d)`` without autograd; ``None`` if none applies."""
        if tables[0].dtype not in (torch.float32, torch.complex64):  # module converted, e.g. by .double()
            return None
        if self.layout == "interleaved":
            pairs = _complex_pairs(x)  # (..., s, d/2) complex64 view of x
            return None if pairs is None else _rotate_complex(pairs, tables[0], x)
        if x.numel() <= _FEW_CALLS_NUMEL and x.is_contiguous():
            return _rotate_half_few_calls(x, tables[0], tables[1])
        return None  # large half-layout inputs: rotate_pairs writes one output buffer with half-size cos/sin


# --- Analysis helpers used by the RoPE chapter -------------------------------------------------


def rope_wavelengths(head_dim: int, base: float = 10000.0) -> torch.Tensor:
    """Positions pair ``k`` needs for one full turn, ``2 pi / theta_k``, shape ``(d/2,)``, float64."""
    return 2.0 * torch.pi / rope_frequencies(head_dim, base)


def rope_decay_bound(distances: torch.Tensor | int, head_dim: int, base: float = 10000.0) -> torch.Tensor:
    """RoFormer's long-term decay curve ``(1 / (d/2)) * sum_j |S_j(r)|``, shape ``(n,)``, float64.

    With ``S_j(r) = sum_{k<j} exp(i r theta_k)`` (``j = 1 .. d/2``), Abel summation
    bounds the score of any query/key pair at relative distance ``r`` by
    ``max_k |h_{k+1} - h_k| * sum_j |S_j(r)|`` (``h_k`` the complex product of
    pair ``k`` of ``q`` and the conjugate of pair ``k`` of ``k``, ``h_{d/2} = 0``).
    This returns the distance-dependent factor divided by ``d/2``: it equals
    ``(d/2 + 1) / 2`` at ``r = 0`` and trends down with ``r``, though not monotonically.

    Args:
        distances: relative distances ``r``, a 1-D tensor ``(n,)`` or an int ``n`` meaning ``0 .. n-1``.
        head_dim: ``d``, even.
        base: frequency base.
    """
    if isinstance(distances, bool) or not isinstance(distances, (int, torch.Tensor)):
        raise TypeError(f"distances must be a positive int or a 1-D torch.Tensor (n,), got {type(distances).__name__}")
    if isinstance(distances, int) and distances <= 0:
        raise ValueError(f"distances (a count) must be a positive integer, got {distances}")
    if isinstance(distances, torch.Tensor) and distances.dim() != 1:
        raise ValueError(f"distances must be 1-D (n,), got shape {tuple(distances.shape)}")
    angles = rope_angles(distances, head_dim, base)  # (n, d/2)
    partial_real = angles.cos().cumsum(dim=-1)  # (n, d/2): Re S_1 .. Re S_{d/2}
    partial_imag = angles.sin().cumsum(dim=-1)  # (n, d/2)
    return torch.hypot(partial_real, partial_imag).mean(dim=-1)


def rope_angle_gap(
    positions: torch.Tensor | int,
    train_len: int,
    head_dim: int,
    base: float = 10000.0,
    *,
    frequencies: torch.Tensor | None = None,
) -> torch.Tensor:
    """How far each rotation angle is from every angle seen in training, shape ``(s, d/2)``, float64.

    Entry ``[i, k]`` is the circular distance (radians, in ``[0, pi]``) between the
    angle ``p_i * theta_k`` of pair ``k`` at position ``p_i`` and the nearest of the
    angles ``r * theta_k`` that pair took at the positions ``r = 0 .. train_len - 1``
    of training. It is 0 for positions seen in training; for a pair whose wavelength
    exceeds ``train_len`` it grows once ``p_i`` passes ``train_len``, because those
    angles were never produced during training. Positions may be fractional (as
    in position interpolation).

    Args:
        positions: a 1-D tensor ``(s,)`` or an int ``s`` meaning ``0 .. s-1``.
        train_len: number of positions seen in training, ``L``.
        head_dim: ``d``, even.
        base: frequency base (ignored when ``frequencies`` is given).
        frequencies: optional ``(d/2,)`` frequencies replacing the standard ones.
    """
    train_len = check_positive_int("train_len", train_len)
    query = torch.remainder(rope_angles(positions, head_dim, base, frequencies=frequencies), 2 * torch.pi)
    query = query.T.contiguous()  # (d/2, s)
    seen = torch.remainder(rope_angles(train_len, head_dim, base, frequencies=frequencies), 2 * torch.pi)
    seen = seen.T.sort(dim=-1).values.contiguous()  # (d/2, L), each row sorted
    index = torch.searchsorted(seen, query)  # (d/2, s), in 0 .. L
    above = seen.gather(-1, index.clamp(max=train_len - 1))  # nearest seen angle >= query (or the largest)
    below = seen.gather(-1, (index - 1).clamp(min=0))  # nearest seen angle <= query (or the smallest)
    wrapped_first = seen[:, :1] + 2 * torch.pi  # the smallest seen angle, one turn up
    wrapped_last = seen[:, -1:] - 2 * torch.pi  # the largest seen angle, one turn down
    gaps = torch.stack(
        [(query - above).abs(), (query - below).abs(), (wrapped_first - query).abs(), (query - wrapped_last).abs()]
    )  # (4, d/2, s)
    return gaps.min(dim=0).values.T  # (s, d/2)


def convert_qk_weight(weight: torch.Tensor, n_heads: int, *, to: str = "half") -> torch.Tensor:
    """Permute a query/key projection so a checkpoint works with the other RoPE layout.

    ``weight`` is ``W_q`` or ``W_k`` as stored in ``nn.Linear`` -- shape
    ``(h * d, d_model)``, output rows grouped by head -- or its bias ``(h * d,)``.
    Within every head the rows are reordered with
    :func:`interleaved_to_half_permutation` (``to="half"``: Meta/RoFormer
    checkpoint -> HF/GPT-NeoX code) or its inverse (``to="interleaved"``). Queries
    and keys then come out permuted the same way, so after RoPE in the new layout
    every attention score is unchanged. ``W_v`` and ``W_o`` are not touched.

    Returns a new tensor shaped like ``weight``.
    """
    weight = check_tensor("weight", weight)
    n_heads = check_positive_int("n_heads", n_heads)
    check_choice("to", to, LAYOUTS)
    rows = weight.shape[0]
    if rows % n_heads:
        raise ValueError(f"weight.shape[0] must be a multiple of n_heads={n_heads}, got shape {tuple(weight.shape)}")
    head_dim = check_even_int("head_dim (weight.shape[0] // n_heads)", rows // n_heads)
    if to == "half":
        perm = interleaved_to_half_permutation(head_dim)
    else:
        perm = half_to_interleaved_permutation(head_dim)
    per_head = weight.unflatten(0, (n_heads, head_dim))  # (h, d, ...) or (h, d)
    return per_head[:, perm].flatten(0, 1)  # (h * d, ...)
