"""Plain scaled dot-product attention that returns its weights, for looking at them."""

from __future__ import annotations

import math

import torch

from ._checks import check_floating, check_tensor


def causal_mask(q_len: int, k_len: int, *, device: torch.device | None = None) -> torch.Tensor:
    """Boolean ``(s_q, s_k)`` mask, ``True`` where query ``i`` may see key ``j``.

    Queries are the last ``q_len`` of the ``k_len`` positions, so query ``i``
    sees keys ``0 .. k_len - q_len + i``.
    """
    query_pos = torch.arange(k_len - q_len, k_len, device=device).unsqueeze(1)  # (s_q, 1)
    key_pos = torch.arange(k_len, device=device).unsqueeze(0)  # (1, s_k)
    return key_pos <= query_pos


def attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    *,
    bias: torch.Tensor | None = None,
    causal: bool = False,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Scaled dot-product attention ``softmax(q k^T / sqrt(d) + bias) v``.

    Args:
        q: queries ``(..., s_q, d)``, e.g. ``(b, h, s_q, d)``.
        k: keys ``(..., s_k, d)``.
        v: values ``(..., s_k, d_v)``.
        bias: optional additive bias broadcastable to ``(..., s_q, s_k)``
            (ALiBi, T5 buckets, or a mask holding ``-inf``).
        causal: if true, query ``i`` attends only to keys at or before its
            position (queries aligned to the end of the keys).

    Returns:
        ``(output, weights)`` with shapes ``(..., s_q, d_v)`` and ``(..., s_q, s_k)``.
    """
    q = check_floating("q", check_tensor("q", q, min_dim=2))
    k = check_floating("k", check_tensor("k", k, min_dim=2))
    v = check_floating("v", check_tensor("v", v, min_dim=2))
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k must have the same last dimension d, got {tuple(q.shape)} and {tuple(k.shape)}")
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"k and v must have the same length s_k, got {tuple(k.shape)} and {tuple(v.shape)}")
    q_len, k_len = q.shape[-2], k.shape[-2]
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., s_q, s_k)
    if bias is not None:
        bias = check_tensor("bias", bias)
        try:
            torch.broadcast_shapes(bias.shape, scores.shape)
        except RuntimeError:
            raise ValueError(
                f"bias of shape {tuple(bias.shape)} does not broadcast to the scores' shape {tuple(scores.shape)}"
            ) from None
        scores = scores + bias
    if causal:
        if k_len < q_len:
            raise ValueError(f"causal attention needs s_k >= s_q, got s_q={q_len}, s_k={k_len}")
        scores = scores.masked_fill(~causal_mask(q_len, k_len, device=scores.device), float("-inf"))
    weights = torch.softmax(scores, dim=-1)  # (..., s_q, s_k)
    return weights @ v, weights
