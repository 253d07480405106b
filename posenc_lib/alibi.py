"""Attention with Linear Biases, ALiBi (Press, Smith and Lewis, 2022).

No vector is added to the tokens. Instead head ``h`` adds ``-m_h * distance``
to every attention score, where ``distance`` is how far the key is from the
query and ``m_h`` is a fixed, head-specific slope.
"""

from __future__ import annotations

import math

import torch

from ._checks import check_positive_int


def _power_of_two_slopes(n: int) -> list[float]:
    """Geometric sequence starting at and with ratio ``2 ** (-8 / n)``: ``2^(-8/n), 2^(-16/n), ..., 2^-8``."""
    return [2.0 ** (-8.0 * (h + 1) / n) for h in range(n)]


def alibi_slopes(n_heads: int) -> torch.Tensor:
    """Per-head slopes ``m_h``, shape ``(h,)``, float64, as the ALiBi authors compute them.

    For a power of two ``n``, ``m_h = 2 ** (-8 (h + 1) / n)`` for ``h = 0 .. n-1``
    (8 heads: 1/2, 1/4, ..., 1/256). Otherwise, with ``p`` the largest power of
    two below ``n``: the ``p`` slopes for ``p`` heads, followed by every other
    slope (the 1st, 3rd, 5th, ...) of the ``2p``-head sequence, ``n - p`` of them.
    The result is then *not* sorted, e.g. for 12 heads the last four slopes
    ``2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5`` sit between the first eight.
    """
    n_heads = check_positive_int("n_heads", n_heads)
    closest = 2 ** int(math.floor(math.log2(n_heads)))
    slopes = _power_of_two_slopes(closest)
    if closest != n_heads:
        slopes += _power_of_two_slopes(2 * closest)[0::2][: n_heads - closest]
    return torch.tensor(slopes, dtype=torch.float64)


def alibi_bias(
    n_heads: int,
    q_len: int,
    k_len: int | None = None,
    *,
    causal: bool = True,
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """The additive ALiBi bias for every head, query and key, shape ``(h, q_len, k_len)``.

    Queries are aligned to the *end* of the keys (query ``i`` sits at position
    ``k_len - q_len + i``), which is what decoding with a KV cache needs.

    - ``causal=True``: ``-m_h * (i - j)`` for keys at or before the query and
      ``-inf`` for future keys, so the result is both bias and causal mask.
    - ``causal=False``: the symmetric form ``-m_h * |i - j|``.

    Args:
        n_heads: number of heads ``h``.
        q_len: number of queries ``s_q``.
        k_len: number of keys ``s_k`` (default ``q_len``; must be >= ``q_len`` when causal).
        dtype: floating dtype of the result.
    """
    n_heads = check_positive_int("n_heads", n_heads)
    q_len = check_positive_int("q_len", q_len)
    k_len = q_len if k_len is None else check_positive_int("k_len", k_len)
    if causal and k_len < q_len:
        raise ValueError(
            f"causal ALiBi needs k_len >= q_len (queries are the last q_len positions), got q_len={q_len}, k_len={k_len}"
        )
    if not dtype.is_floating_point:
        raise TypeError(f"dtype must be a floating-point torch dtype, got {dtype}")
    query_pos = torch.arange(k_len - q_len, k_len).unsqueeze(1)  # (s_q, 1)
    key_pos = torch.arange(k_len).unsqueeze(0)  # (1, s_k)
    offset = key_pos - query_pos  # (s_q, s_k), integer, < 0 for keys in the past
    slopes = alibi_slopes(n_heads).to(dtype).view(-1, 1, 1)  # (h, 1, 1)
    if causal:
        # Mask the small (s_q, s_k) distance table, not the big (h, s_q, s_k) result: m_h * -inf = -inf
        # (every slope is > 0), so the one broadcast product below is the only pass over h * s_q * s_k.
        distance = offset.to(dtype)  # (s_q, s_k)
        distance.masked_fill_(offset > 0, float("-inf"))
        return slopes * distance  # (h, s_q, s_k)
    return slopes * (-offset.abs()).to(dtype)


def alibi_bias_compact(n_heads: int, k_len: int, *, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """ALiBi as one row per head, shape ``(h, 1, k_len)``: ``-m_h * (k_len - 1 - j)`` for key ``j``.

    This is the causal bias row of the *last* query. For any other query at
    position ``i`` the causal row ``-m_h * (i - j)`` (keys ``j <= i``) differs from
    it by ``m_h * (k_len - 1 - i)``, the same number for every key of that row,
    and softmax ignores a constant added to a whole row. So, with a causal mask
    applied separately,

        softmax(scores + alibi_bias_compact(h, k_len) + mask) == softmax(scores + alibi_bias(h, q_len, k_len))

    for every ``q_len <= k_len`` (queries aligned to the end of the keys), while
    storing ``h * k_len`` numbers instead of ``h * q_len * k_len``. This is the
    form MPT (and HF transformers' ``build_mpt_alibi_tensor``) uses.

    It holds no mask: future keys get a finite bias and must be masked by the
    caller. It does not replace the symmetric form (``alibi_bias(..., causal=False)``):
    ``-m_h |i - j|`` is not a row-wise shift of a single row.

    Args:
        n_heads: number of heads ``h``.
        k_len: number of keys ``s_k``.
        dtype: floating dtype of the result.
    """
    n_heads = check_positive_int("n_heads", n_heads)
    k_len = check_positive_int("k_len", k_len)
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(f"dtype must be a floating-point torch dtype, got {dtype}")
    if dtype in (torch.float32, torch.float64):  # whole numbers, exact in these dtypes for any realistic k_len
        distance = torch.arange(1 - k_len, 1, dtype=dtype)  # (s_k,), -(k_len - 1 - j)
    else:  # float16 / bfloat16: round each integer once, as alibi_bias does
        distance = torch.arange(1 - k_len, 1).to(dtype)  # (s_k,)
    slopes = alibi_slopes(n_heads).to(dtype).view(-1, 1, 1)  # (h, 1, 1)
    return slopes * distance  # (h, 1, s_k)


# --- Analysis helpers used by the ALiBi chapter ------------------------------------------------


def alibi_weights_by_distance(n_heads: int, seq_len: int) -> torch.Tensor:
    """Attention weights the ALiBi bias alone gives, by distance, shape ``(h, s)``, float64.

    The query is the last of ``seq_len`` positions and every content score
    ``q . k`` is equal, so the weights are ``softmax(-m_h * r)`` over the
    distances ``r = 0 .. s-1`` to the keys; column ``r`` is distance ``r``.
    Each row sums to 1.
    """
    n_heads = check_positive_int("n_heads", n_heads)
    seq_len = check_positive_int("seq_len", seq_len)
    bias = alibi_bias(n_heads, 1, seq_len, dtype=torch.float64)  # (h, 1, s), key j at distance s-1-j
    weights = torch.softmax(bias[:, 0, :], dim=-1)  # (h, s), indexed by key position
    return weights.flip(-1)  # (h, s), indexed by distance


def alibi_attention_span(n_heads: int, seq_len: int, mass: float = 0.9) -> torch.Tensor:
    """Per head, the smallest distance ``r`` whose keys ``0 .. r`` back hold ``mass`` of the attention.

    Uses :func:`alibi_weights_by_distance` (equal content scores, last query of
    ``seq_len``). For a long sequence this is about ``ln(1 / (1 - mass)) / m_h``.
    Returns an int64 tensor ``(h,)`` with values in ``0 .. seq_len - 1``.
    """
    if isinstance(mass, bool) or not isinstance(mass, (int, float)):
        raise TypeError(f"mass must be a number in (0, 1], got {mass!r}")
    if not 0.0 < mass <= 1.0:
        raise ValueError(f"mass must be in (0, 1], got {mass}")
    cumulative = alibi_weights_by_distance(n_heads, seq_len).cumsum(dim=-1)  # (h, s)
    span = (cumulative < mass - 1e-12).sum(dim=-1)  # number of distances still short of `mass`
    return span.clamp(max=seq_len - 1)
