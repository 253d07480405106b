"""Attention with Linear Biases, ALiBi (Press, Smith and Lewis, 2022).

No vector is added to the tokens. Instead head ``h`` adds ``-m_h · |r|`` to the
score of every query/key pair, where ``r = j - i`` is the key's position seen
from the query and ``m_h`` is a fixed, head-specific slope: slope × distance.
Faster constructions of the same numbers live in :mod:`posenc_lib.fast`.
"""

from __future__ import annotations

import functools

import torch

from . import fast
from ._checks import check_bool, check_device, check_dtype, check_fits, check_positive_int
from .relative import relative_positions


def alibi_slopes(n_heads: int, *, device=None) -> torch.Tensor:
    """Per-head slopes ``m_h``, shape ``(n_h,)``, float64, as the ALiBi authors compute them.

    For a power of two ``n = n_h``, ``m_h = 2^(-8h/n)`` for heads ``h = 1 .. n``
    (8 heads: 1/2, 1/4, ..., 1/256). Otherwise, with ``p`` the largest power of
    two below ``n``: the ``p`` slopes for ``p`` heads, followed by every other
    slope (the 1st, 3rd, 5th, ...) of the ``2p``-head sequence, ``n - p`` of them.
    The result is then *not* sorted, e.g. for 12 heads the last four slopes
    ``2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5`` sit between the first eight.
    """
    n_heads = check_positive_int("n_heads", n_heads)
    device = check_device(device)
    check_fits(f"n_heads={n_heads}", (n_heads,), torch.float64, device)
    p = 1 << (n_heads.bit_length() - 1)  # the largest power of two <= n_h
    heads = torch.arange(1, p + 1, dtype=torch.float64, device=device)  # h = 1 .. p
    odd_heads = 2 * torch.arange(n_heads - p, dtype=torch.float64, device=device) + 1  # 1, 3, 5, ... of 2p heads
    return torch.cat((2 ** (-8 * heads / p), 2 ** (-8 * odd_heads / (2 * p))))  # (n_h,)


@functools.lru_cache(maxsize=64)
def _cached_slopes(n_heads: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """The slopes ``m_h`` as ``(n_h, 1, 1)`` in ``dtype``, for the fast paths: computed once, only read."""
    return alibi_slopes(n_heads, device=device).to(dtype).view(-1, 1, 1)


def _check_bias_args(n_heads, q_len, k_len, causal, dtype, device) -> tuple:
    """The arguments of :func:`alibi_bias`, checked (``k_len`` defaults to ``q_len``); refuses a bias that would not fit."""
    n_heads = check_positive_int("n_heads", n_heads)
    q_len = check_positive_int("q_len", q_len)
    k_len = q_len if k_len is None else check_positive_int("k_len", k_len)
    causal = check_bool("causal", causal)
    dtype, device = check_dtype(dtype), check_device(device)
    if causal and k_len < q_len:
        raise ValueError(
            f"causal ALiBi needs k_len >= q_len (queries are the last q_len positions), "
            f"got q_len={q_len}, k_len={k_len}"
        )
    check_fits(f"n_heads={n_heads}, q_len={q_len} and k_len={k_len}", (n_heads, q_len, k_len), dtype, device)
    return n_heads, q_len, k_len, causal, dtype, device


def alibi_bias(
    n_heads: int,
    q_len: int,
    k_len: int | None = None,
    *,
    causal: bool = True,
    dtype: torch.dtype = torch.float32,
    device=None,
) -> torch.Tensor:
    """The additive ALiBi bias ``-m_h · |j - i|`` for every head, query and key, shape ``(n_h, s_q, s_k)``.

    Queries are aligned to the *end* of the keys (query ``i`` sits at position
    ``s_k - s_q + i``), which is what decoding with a KV cache needs.

    - ``causal=True``: ``-m_h (i - j)`` for keys at or before the query and
      ``-inf`` for future keys, so the result is both bias and causal mask.
    - ``causal=False``: the symmetric form ``-m_h |i - j|``.

    Args:
        n_heads: number of heads ``n_h``.
        q_len: number of queries ``s_q``.
        k_len: number of keys ``s_k`` (default ``q_len``; must be >= ``q_len`` when causal).
        causal: ``True`` or ``False``.
        dtype: floating dtype of the result. The bias is computed in float64 and
            rounded once; in float16 and bfloat16 values beyond the dtype's range are
            clamped to its most negative finite value, so every past key keeps a
            finite bias (only future keys of the causal form are ``-inf``).
        device: where to build it.
    """
    n_heads, q_len, k_len, causal, dtype, device = _check_bias_args(n_heads, q_len, k_len, causal, dtype, device)
    if fast.alibi_applies(k_len, dtype):  # the same numbers in one pass, from slopes cached in the result's dtype
        return fast.alibi_bias(_cached_slopes(n_heads, dtype, device), q_len, k_len, causal)

    slopes = alibi_slopes(n_heads, device=device).view(-1, 1, 1)  # (n_h, 1, 1): m_h
    r = relative_positions(q_len, k_len, device=device)  # (s_q, s_k): r = j - i, < 0 for past keys
    bias = slopes * -r.abs()  # (n_h, s_q, s_k): -m_h |r|, float64
    bias = bias.clamp(min=torch.finfo(dtype).min).to(dtype)  # rounded once; finite in float16/bfloat16 too
    if causal:
        bias = bias.masked_fill(r > 0, float("-inf"))  # future keys are masked
    return bias


def alibi_bias_compact(n_heads: int, k_len: int, *, dtype: torch.dtype = torch.float32, device=None) -> torch.Tensor:
    """ALiBi as one row per head, shape ``(n_h, 1, s_k)``: ``-m_h (s_k - 1 - j)`` for key ``j``.

    This is the causal bias row of the *last* query. For any other query at
    position ``i`` the causal row ``-m_h (i - j)`` (keys ``j <= i``) differs from
    it by ``m_h (s_k - 1 - i)``, the same number for every key of that row,
    and softmax ignores a constant added to a whole row. So, with a causal mask
    applied separately,

        softmax(scores + alibi_bias_compact(n_h, s_k) + mask) == softmax(scores + alibi_bias(n_h, s_q, s_k))

    for every ``s_q <= s_k`` (queries aligned to the end of the keys), while
    storing ``n_h · s_k`` numbers instead of ``n_h · s_q · s_k``. This is the
    form MPT (and HF transformers' ``build_mpt_alibi_tensor``) uses.

    It holds no mask: future keys get a finite bias and must be masked by the
    caller. It does not replace the symmetric form (``alibi_bias(..., causal=False)``):
    ``-m_h |i - j|`` is not a row-wise shift of a single row.

    Args:
        n_heads: number of heads ``n_h``.
        k_len: number of keys ``s_k``.
        dtype: floating dtype of the result, rounded and clamped as in :func:`alibi_bias`.
        device: where to build it.
    """
    n_heads = check_positive_int("n_heads", n_heads)
    k_len = check_positive_int("k_len", k_len)
    dtype, device = check_dtype(dtype), check_device(device)
    check_fits(f"n_heads={n_heads} and k_len={k_len}", (n_heads, 1, k_len), dtype, device)
    if fast.alibi_applies(k_len, dtype):  # the same numbers in two calls, from the cached slopes
        return fast.alibi_bias_compact(_cached_slopes(n_heads, dtype, device), k_len)

    slopes = alibi_slopes(n_heads, device=device).view(-1, 1, 1)  # (n_h, 1, 1): m_h
    r = relative_positions(1, k_len, device=device)  # (1, s_k): key j seen from the last query, r = j - (s_k - 1)
    bias = slopes * r  # (n_h, 1, s_k): -m_h (s_k - 1 - j), float64
    return bias.clamp(min=torch.finfo(dtype).min).to(dtype)  # rounded once; finite in float16/bfloat16 too
