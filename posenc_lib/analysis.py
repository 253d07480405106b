"""Analysis helpers: what the encodings imply, computed (chapters 3, 5, 6 and 9).

None of these is an encoding; each measures or converts one, using the formulas of
:mod:`posenc_lib.sinusoidal`, :mod:`posenc_lib.rope`, :mod:`posenc_lib.alibi` and
:mod:`posenc_lib.model`:

- sinusoidal: :func:`sinusoidal_dot_by_distance`, ``PE(p) · PE(p + Δ)`` by distance;
- RoPE: :func:`rope_decay_bound` (RoFormer's long-term decay), :func:`rope_angle_gap`
  (angles never seen in training) and :func:`convert_qk_weight` (a checkpoint from one
  layout to the other);
- ALiBi: :func:`alibi_weights_by_distance` and :func:`alibi_attention_span`;
- a block's scores: :func:`additive_score_terms`, the four-term split of an additive
  encoding's attention scores.

Notation as in :mod:`posenc_lib`.
"""

from __future__ import annotations

import math
import numbers

import torch

from ._checks import (
    check_choice,
    check_even_int,
    check_fits,
    check_floating,
    check_positions,
    check_positive_float,
    check_positive_int,
    check_real,
    check_same_device,
    check_same_dtype,
    check_tensor,
)
from .alibi import alibi_bias
from .model import Block, _check_vectors, split_heads
from .rope import (
    DEFAULT_BASE,
    LAYOUTS,
    _resolve_frequencies,
    half_to_interleaved_permutation,
    interleaved_to_half_permutation,
    rope_angles,
    rope_frequencies,
)
from .sinusoidal import sinusoidal_frequencies

# --- sinusoidal ----------------------------------------------------------------------------------


def sinusoidal_dot_by_distance(distance: object, d_model: int, *, base: float = 10000.0) -> torch.Tensor:
    """``PE(p) · PE(p + Δ)`` for distances ``Δ``, which does not depend on ``p`` (even ``d`` only).

    Each sin/cos pair contributes ``sin(a) sin(b) + cos(a) cos(b) = cos(a - b)`` with
    ``a - b = -Δ θ_ℓ``, so the dot product is ``Σ_ℓ cos(Δ θ_ℓ)``: ``d / 2`` at ``Δ = 0``,
    an even function of ``Δ``. The same holds in either layout (a column permutation).
    For odd ``d`` the lone sine column adds a term that depends on ``p``, so odd ``d``
    is rejected.

    Args:
        distance: a tensor of distances (any shape, integer or real) or one number.
        d_model: even width ``d``.
        base: as in :func:`sinusoidal_encoding`.

    Returns:
        float64 tensor with the shape of ``distance``, on its device.
    """
    d_model = check_positive_int("d_model", d_model)
    if d_model % 2:
        raise ValueError(
            f"d_model must be even (the dot product depends only on the distance for full sin/cos pairs), got {d_model}"
        )
    if isinstance(distance, torch.Tensor):
        if distance.is_complex() or distance.dtype == torch.bool:
            raise TypeError(f"distance must hold real numbers, got dtype {distance.dtype}")
        distances = distance.to(torch.float64)
        if distances.device.type != "meta" and not bool(torch.isfinite(distances).all()):
            raise ValueError("distance must be finite")
    else:
        distances = torch.tensor(check_real("distance", distance), dtype=torch.float64)
    theta = sinusoidal_frequencies(d_model, base=base, device=distances.device)  # (d/2,)
    check_fits(
        f"distance of {distances.numel()} values and d_model={d_model}",
        (*distances.shape, d_model // 2),
        torch.float64,
        distances.device,
    )
    return torch.cos(distances[..., None] * theta).sum(dim=-1)  # (...,): Σ_ℓ cos(Δ θ_ℓ)


# --- RoPE ----------------------------------------------------------------------------------------


def rope_decay_bound(distances: torch.Tensor, head_dim: int, base: float = DEFAULT_BASE) -> torch.Tensor:
    """RoFormer's long-term decay curve ``(1 / (d_h/2)) Σ_j |S_j(r)|``, shape ``(n,)``, float64.

    With ``S_j(r) = Σ_{ℓ<j} exp(i r θ_ℓ)`` (``j = 1 .. d_h/2``), Abel summation
    bounds the score of any query/key pair at relative distance ``r`` by
    ``max_ℓ |h_{ℓ+1} - h_ℓ| · Σ_j |S_j(r)|`` (``h_ℓ`` the complex product of pair
    ``ℓ`` of ``q`` and the conjugate of pair ``ℓ`` of ``k``, ``h_{d_h/2} = 0``).
    This returns the distance-dependent factor divided by ``d_h/2``: it equals
    ``(d_h/2 + 1) / 2`` at ``r = 0`` and trends down with ``r``, though not monotonically.

    Args:
        distances: relative distances ``r``, a 1-D tensor ``(n,)`` (e.g. ``torch.arange(n)``).
        head_dim: ``d_h``, even.
        base: ``B``.
    """
    distances = check_positions(distances, name="distances")
    angles = rope_angles(distances, rope_frequencies(head_dim, base, device=distances.device))  # (n, d_h/2)
    partial_real = angles.cos().cumsum(dim=-1)  # (n, d_h/2): Re S_1 .. Re S_{d_h/2}
    partial_imag = angles.sin().cumsum(dim=-1)  # (n, d_h/2)
    return torch.hypot(partial_real, partial_imag).mean(dim=-1)


def rope_angle_gap(
    positions: torch.Tensor,
    train_len: int,
    head_dim: int,
    base: float = DEFAULT_BASE,
    *,
    frequencies: torch.Tensor | None = None,
) -> torch.Tensor:
    """How far each rotation angle is from every angle seen in training, shape ``(s, d_h/2)``, float64.

    Entry ``[i, ℓ]`` is the circular distance (radians, in ``[0, π]``) between the
    angle ``p_i θ_ℓ`` of pair ``ℓ`` at position ``p_i`` and the nearest of the angles
    ``r θ_ℓ`` that pair took at the positions ``r = 0 .. L - 1`` of training
    (``L = train_len``). It is 0 for positions seen in training; for a pair whose
    wavelength exceeds ``L`` it grows once ``p_i`` passes ``L``, because those angles
    were never produced during training. Positions may be fractional (as in
    position interpolation).

    Args:
        positions: a 1-D tensor ``(s,)``.
        train_len: ``L``, the number of positions seen in training.
        head_dim: ``d_h``, even.
        base: ``B`` (not used when ``frequencies`` is given).
        frequencies: ``(d_h/2,)`` frequencies replacing the standard ones.
    """
    positions = check_positions(positions)
    train_len = check_positive_int("train_len", train_len)
    head_dim = check_even_int("head_dim", head_dim)
    theta = _resolve_frequencies(head_dim, check_positive_float("base", base), frequencies, positions.device)
    check_fits(
        f"train_len={train_len} and head_dim={head_dim}", (train_len, head_dim // 2), torch.float64, positions.device
    )
    query = torch.remainder(rope_angles(positions, theta), 2 * math.pi).T.contiguous()  # (d_h/2, s)
    seen = torch.remainder(rope_angles(torch.arange(train_len, device=positions.device), theta), 2 * math.pi)
    seen = seen.T.sort(dim=-1).values.contiguous()  # (d_h/2, L), each row sorted
    index = torch.searchsorted(seen, query)  # (d_h/2, s), in 0 .. L
    above = seen.gather(-1, index.clamp(max=train_len - 1))  # nearest seen angle >= query (or the largest)
    below = seen.gather(-1, (index - 1).clamp(min=0))  # nearest seen angle <= query (or the smallest)
    wrapped_first = seen[:, :1] + 2 * math.pi  # the smallest seen angle, one turn up
    wrapped_last = seen[:, -1:] - 2 * math.pi  # the largest seen angle, one turn down
    gaps = torch.stack(
        [(query - above).abs(), (query - below).abs(), (wrapped_first - query).abs(), (query - wrapped_last).abs()]
    )  # (4, d_h/2, s)
    return gaps.min(dim=0).values.T  # (s, d_h/2)


def convert_qk_weight(weight: torch.Tensor, n_heads: int, *, to: str = "half") -> torch.Tensor:
    """Permute a query/key projection so a checkpoint works with the other RoPE layout.

    ``weight`` is ``W_q`` or ``W_k`` as stored in ``nn.Linear`` -- shape
    ``(n_h · d_h, d)``, output rows grouped by head -- or its bias ``(n_h · d_h,)``.
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
        perm = interleaved_to_half_permutation(head_dim, device=weight.device)
    else:
        perm = half_to_interleaved_permutation(head_dim, device=weight.device)
    per_head = weight.unflatten(0, (n_heads, head_dim))  # (n_h, d_h, ...) or (n_h, d_h)
    return per_head[:, perm].flatten(0, 1)  # (n_h · d_h, ...)


# --- ALiBi ---------------------------------------------------------------------------------------


def alibi_weights_by_distance(n_heads: int, seq_len: int, *, device=None) -> torch.Tensor:
    """Attention weights the ALiBi bias alone gives, by distance, shape ``(n_h, s)``, float64.

    The query is the last of ``seq_len`` positions and every content score
    ``q · k`` is equal, so the weights are ``softmax(-m_h r)`` over the distances
    ``r = 0 .. s-1`` to the keys; column ``r`` is distance ``r``. Each row sums to 1.
    """
    n_heads = check_positive_int("n_heads", n_heads)
    seq_len = check_positive_int("seq_len", seq_len)
    bias = alibi_bias(n_heads, 1, seq_len, dtype=torch.float64, device=device)  # (n_h, 1, s), key j at distance s-1-j
    weights = torch.softmax(bias[:, 0, :], dim=-1)  # (n_h, s), indexed by key position
    return weights.flip(-1)  # (n_h, s), indexed by distance


def alibi_attention_span(n_heads: int, seq_len: int, mass: float = 0.9, *, device=None) -> torch.Tensor:
    """Per head, the smallest distance ``r`` whose keys ``0 .. r`` back hold ``mass`` of the attention.

    Uses :func:`alibi_weights_by_distance` (equal content scores, last query of
    ``seq_len``). For a long sequence this is about ``ln(1 / (1 - mass)) / m_h``.
    Returns an int64 tensor ``(n_h,)`` with values in ``0 .. seq_len - 1``.
    """
    if isinstance(mass, bool) or not isinstance(mass, numbers.Real):
        raise TypeError(f"mass must be a number in (0, 1], got {mass!r}")
    if not 0.0 < mass <= 1.0:
        raise ValueError(f"mass must be in (0, 1], got {mass}")
    cumulative = alibi_weights_by_distance(n_heads, seq_len, device=device).cumsum(dim=-1)  # (n_h, s)
    span = (cumulative < mass - 1e-12).sum(dim=-1)  # number of distances still short of `mass`
    return span.clamp(max=cumulative.shape[-1] - 1)


# --- a block's attention scores -------------------------------------------------------------------

SCORE_TERMS = ("content-content", "content-position", "position-content", "position-position", "rest")


def additive_score_terms(
    block: Block, token_vectors: torch.Tensor, position_vectors: torch.Tensor
) -> dict[str, torch.Tensor]:
    """Split a block's attention scores on ``e + PE`` into content and position terms.

    With an encoding added to the input, the block's input is ``x_i = e_i + PE(i)``.
    For a fixed token ``i`` the block's LayerNorm is affine,
    ``LN(x_i) = γ ⊙ (x_i - mean(x_i)) / σ_i + β`` with ``σ_i`` the scale of the whole
    sum, so the query ``q_i`` is a content part (from ``e_i``), a position part (from
    ``PE(i)``) and a constant part (``W_q β`` plus the projection bias); the same holds
    for the key ``k_j``. The pre-softmax score ``q_i · k_j / sqrt(d_h)`` is then the sum of
    the products of the parts (the expansion of Ke et al., "Rethinking positional
    encoding in language pre-training", 2021):

    - ``"content-content"``: the query's content part against the key's content part;
    - ``"content-position"``: the query's content part against the key's position part;
    - ``"position-content"``: the query's position part against the key's content part;
    - ``"position-position"``: the query's position part against the key's position part;
    - ``"rest"``: the five products that involve a constant part.

    Args:
        block: a :class:`Block` (its ``ln_attn`` and the query/key rows of ``attn.qkv``).
        token_vectors: ``(b, s, d)`` token vectors ``e``.
        position_vectors: ``(s, d)`` or ``(b, s, d)`` position vectors ``PE``.

    Returns:
        ``{term: (b, n_h, s, s)}`` for the names in :data:`SCORE_TERMS`, without mask or
        bias; they add up (to rounding) to the block's scores for the input
        ``token_vectors + position_vectors`` (``Block.trace(...)["scores"]`` of a block
        without rotation, at the keys the mask leaves visible).
    """
    if not isinstance(block, Block):
        raise TypeError(f"block must be a posenc_lib.model.Block, got {type(block).__name__}")
    weight = block.attn.qkv.weight
    token_vectors = _check_vectors(token_vectors, block.d_model, weight, "Block", "token_vectors")
    position_vectors = check_tensor("position_vectors", position_vectors, min_dim=2)
    if position_vectors.shape[-2:] != token_vectors.shape[-2:] or position_vectors.dim() > 3:
        raise ValueError(
            f"position_vectors must have shape (s, d) = {tuple(token_vectors.shape[-2:])} or (b, s, d), "
            f"got {tuple(position_vectors.shape)}"
        )
    if position_vectors.dim() == 3 and position_vectors.shape[0] not in (1, token_vectors.shape[0]):
        raise ValueError(
            f"position_vectors of shape (b, s, d) must have b = 1 or b = {token_vectors.shape[0]} (token_vectors' "
            f"batch), got {tuple(position_vectors.shape)}"
        )
    check_floating("position_vectors", position_vectors)
    check_same_dtype("position_vectors", position_vectors, weight.dtype, "Block")
    check_same_device("position_vectors", position_vectors, weight.device, "Block")
    x = token_vectors + position_vectors  # (b, s, d)
    ln, attn, d = block.ln_attn, block.attn, block.d_model
    sigma = (x.var(dim=-1, unbiased=False, keepdim=True) + ln.eps).sqrt()  # (b, s, 1): LN's scale

    def normalised(part: torch.Tensor) -> torch.Tensor:  # what `part` contributes to LN(x), (b, s, d)
        centred = (part - part.mean(dim=-1, keepdim=True)) / sigma
        return centred * ln.weight if ln.weight is not None else centred

    w_q, w_k = attn.qkv.weight[:d], attn.qkv.weight[d : 2 * d]  # (d, d) each, nn.Linear's (out, in)
    zero = x.new_zeros(d)
    shift = ln.bias if ln.bias is not None else zero  # β, (d,)
    b_q, b_k = (attn.qkv.bias[:d], attn.qkv.bias[d : 2 * d]) if attn.qkv.bias is not None else (zero, zero)
    parts = {"content": normalised(token_vectors), "position": normalised(position_vectors.expand_as(x))}
    q = {name: part @ w_q.T for name, part in parts.items()}  # (b, s, d) each
    k = {name: part @ w_k.T for name, part in parts.items()}
    q["constant"] = (shift @ w_q.T + b_q).expand_as(x)  # the same for every token, (b, s, d)
    k["constant"] = (shift @ w_k.T + b_k).expand_as(x)

    def product(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:  # (b, n_h, s, s)
        heads_a, heads_b = split_heads(a, attn.n_heads), split_heads(b, attn.n_heads)
        return heads_a @ heads_b.transpose(-2, -1) / attn.head_dim**0.5

    terms = {f"{a}-{b}": product(q[a], k[b]) for a in ("content", "position") for b in ("content", "position")}
    rest = [product(q[a], k[b]) for a in q for b in k if "constant" in (a, b)]
    terms["rest"] = torch.stack(rest).sum(dim=0)
    return terms
