"""Plain scaled dot-product attention that returns its weights (and, on request, its scores).

Shapes: ``s_q`` queries, ``s_k`` keys, ``d`` the width of a query and a key,
``d_v`` the width of a value; any leading dimensions (``b``, ``n_h``) broadcast.
Queries are aligned to the *end* of the keys: query ``i`` sits at position
``p_i = s_k - s_q + i``, as when decoding with a cache of earlier keys.
"""

from __future__ import annotations

import math

import torch

from ._checks import (
    check_bool,
    check_device,
    check_fits,
    check_floating,
    check_nonnegative_int,
    check_positive_int,
    check_tensor,
)


def causal_mask(
    q_len: int, k_len: int, *, window: int | None = None, device: torch.device | str | None = None
) -> torch.Tensor:
    """Boolean ``(s_q, s_k)`` mask, ``True`` where query ``i`` may attend to key ``j``.

    Query ``i`` sits at position ``p_i = k_len - q_len + i`` and sees the keys
    ``j <= p_i``; with ``window=w`` only the last ``w`` of them, ``p_i - w < j <= p_i``
    (sliding-window attention). Every row allows at least one key.

    Args:
        q_len: number of queries ``s_q`` (>= 0).
        k_len: number of keys ``s_k`` (>= 1 and >= ``q_len``: a query needs a key at or before it).
        window: optional number ``w >= 1`` of most recent keys each query may see.
        device: where to build the mask.

    The mask (one byte per pair) is refused before it is built if it exceeds
    :data:`posenc_lib._checks.MAX_TENSOR_BYTES`.
    """
    q_len = check_nonnegative_int("q_len", q_len)
    k_len = check_positive_int("k_len", k_len)
    if q_len > k_len:
        raise ValueError(
            f"causal_mask needs k_len >= q_len (query i sits at position k_len - q_len + i and needs a key "
            f"at or before it), got q_len={q_len}, k_len={k_len}"
        )
    if window is not None:
        window = check_positive_int("window", window)
    device = check_device(device)
    check_fits(f"q_len={q_len} and k_len={k_len} (causal mask)", (q_len, k_len), torch.bool, device)
    query_pos = torch.arange(k_len - q_len, k_len, device=device).unsqueeze(1)  # (s_q, 1)
    key_pos = torch.arange(k_len, device=device).unsqueeze(0)  # (1, s_k)
    mask = key_pos <= query_pos  # (s_q, s_k)
    if window is not None:
        mask &= key_pos > query_pos - window
    return mask


def _common_dtype(tensors: dict[str, torch.Tensor]) -> torch.dtype:
    first, *others = (tensor.dtype for tensor in tensors.values())
    for dtype in others:
        first = torch.promote_types(first, dtype)
    return first


def _check_inputs(q, k, v, bias, causal, window) -> tuple:
    q = check_floating("q", check_tensor("q", q, min_dim=2))
    k = check_floating("k", check_tensor("k", k, min_dim=2))
    v = check_floating("v", check_tensor("v", v, min_dim=2))
    causal = check_bool("causal", causal)
    if window is not None:
        window = check_positive_int("window", window)
        if not causal:
            raise ValueError(f"window={window} lets query i see keys i - window < j <= i: it needs causal=True")
    tensors = {"q": q, "k": k, "v": v}
    if bias is not None:
        bias = check_tensor("bias", bias)
        if bias.is_complex() or not (bias.is_floating_point() or bias.dtype == torch.bool):
            raise TypeError(
                f"bias must be a floating-point tensor (added to the scores) or a bool mask (True = may attend), "
                f"got dtype {bias.dtype}"
            )
        tensors["bias"] = bias
    devices = {name: t.device for name, t in tensors.items()}
    if len(set(devices.values())) > 1:
        raise ValueError(
            f"q, k, v and bias must be on one device, got {', '.join(f'{n}: {d}' for n, d in devices.items())}"
        )
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k must have the same last dimension d, got {tuple(q.shape)} and {tuple(k.shape)}")
    if q.shape[-1] == 0:
        raise ValueError(
            f"q and k must have a width d >= 1 (the scores divide by sqrt(d)), got q of shape {tuple(q.shape)}"
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"k and v must have the same length s_k, got {tuple(k.shape)} and {tuple(v.shape)}")
    if k.shape[-2] == 0:
        raise ValueError(f"attention needs at least one key, got k of shape {tuple(k.shape)} (s_k = 0)")
    try:
        batch = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except RuntimeError:
        raise ValueError(
            f"the leading dimensions of q, k and v must broadcast, got {tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}"
        ) from None
    scores_shape = (*batch, q.shape[-2], k.shape[-2])
    dtype = _common_dtype({n: t for n, t in tensors.items() if t.is_floating_point()})
    check_fits(
        f"q of shape {tuple(q.shape)} and k of shape {tuple(k.shape)} (the attention scores)", scores_shape, dtype
    )
    if bias is not None:
        try:
            broadcast = torch.broadcast_shapes(bias.shape, scores_shape)
        except RuntimeError:
            broadcast = None
        if broadcast != scores_shape:
            raise ValueError(
                f"bias of shape {tuple(bias.shape)} must broadcast to the scores' shape {scores_shape} "
                f"(..., s_q, s_k) without enlarging it"
            )
        if bias.is_floating_point() and bias.device.type != "meta" and bool((bias.isnan() | bias.isposinf()).any()):
            raise ValueError("bias must not hold NaN or +inf (use -inf, or a bool mask, to hide a key)")
    return q, k, v, bias, causal, window, dtype


def attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    *,
    bias: torch.Tensor | None = None,
    causal: bool = False,
    window: int | None = None,
    return_scores: bool = False,
) -> tuple[torch.Tensor, ...]:
    """Scaled dot-product attention ``softmax(q k^T / sqrt(d) + bias) v``.

    Args:
        q: queries ``(..., s_q, d)``, e.g. ``(b, n_h, s_q, d_h)``.
        k: keys ``(..., s_k, d)``, ``s_k >= 1``.
        v: values ``(..., s_k, d_v)``.
        bias: optional, broadcastable to the scores ``(..., s_q, s_k)`` without enlarging them.
            A floating-point bias is added to the scores (ALiBi, T5 buckets; ``-inf`` hides a
            key). A ``bool`` tensor is a mask: ``True`` where a query may attend.
        causal: if true, query ``i`` sees only keys at or before its position ``p_i``
            (queries aligned to the end of the keys; needs ``s_k >= s_q``).
        window: with ``causal=True``, the query at ``p_i`` sees only the keys
            ``p_i - window < j <= p_i`` (sliding-window attention).
        return_scores: also return the scores.

    ``q``, ``k``, ``v`` and a floating-point ``bias`` are promoted to their common dtype
    (``torch.promote_types``), which is the dtype of everything returned.
    A query row that the bias and mask leave without any key is an error, not NaN, and so is
    ``d = 0``. The score matrix is refused before it is computed if it exceeds
    :data:`posenc_lib._checks.MAX_TENSOR_BYTES`.

    Returns:
        ``(output, weights)``, shapes ``(..., s_q, d_v)`` and ``(..., s_q, s_k)``; with
        ``return_scores=True``, ``(output, weights, scores)`` where ``scores`` ``(..., s_q, s_k)``
        are the pre-softmax scores after bias and mask (``-inf`` at hidden keys).
    """
    q, k, v, bias, causal, window, dtype = _check_inputs(q, k, v, bias, causal, window)
    return_scores = check_bool("return_scores", return_scores)
    q, k, v = q.to(dtype), k.to(dtype), v.to(dtype)  # no-ops when the dtypes already agree
    q_len, k_len = q.shape[-2], k.shape[-2]
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., s_q, s_k)
    if bias is not None:
        if bias.dtype == torch.bool:
            scores = scores.masked_fill(~bias, float("-inf"))
        else:
            scores = scores + bias.to(dtype)
    if causal:
        if k_len < q_len:
            raise ValueError(f"causal attention needs s_k >= s_q, got s_q={q_len}, s_k={k_len}")
        scores = scores.masked_fill(~causal_mask(q_len, k_len, window=window, device=scores.device), float("-inf"))
    if bias is not None and scores.device.type != "meta" and bool(scores.isneginf().all(dim=-1).any()):
        raise ValueError(
            "the bias (with the causal mask or window, if any) leaves some query without any key to attend to; "
            "every row of the scores needs at least one key that is not -inf / False"
        )
    weights = torch.softmax(scores, dim=-1)  # (..., s_q, s_k)
    output = weights @ v  # (..., s_q, d_v)
    return (output, weights, scores) if return_scores else (output, weights)
