"""posenc_lib as it was before the performance work (commit 036153c), kept to show what each technique buys.

Only the no-autograd paths that `bench.py` times are kept. They compute the same numbers as
today's library (up to float rounding; the float32 sinusoidal table is *less* accurate here,
because it rounds the angles ``p * w`` to float32).
"""

from __future__ import annotations

import numpy as np
import torch

import posenc_lib as pe


def rotate_pairs(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, layout: str = "half") -> torch.Tensor:
    """Four strided multiply(-add)s into one output buffer, for either layout. x: (..., s, d); cos, sin: (s, d/2)."""
    if layout == "half":
        first, second = x.chunk(2, dim=-1)  # each (..., s, d/2)
    else:
        pairs = x.unflatten(-1, (-1, 2))  # (..., s, d/2, 2)
        first, second = pairs[..., 0], pairs[..., 1]
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


class RotaryEmbedding:
    """The old module's work per call: check x, slice the half-size float32 cos/sin cache, rotate_pairs."""

    def __init__(self, head_dim: int, max_seq_len: int, layout: str):
        self.head_dim, self.layout = head_dim, layout
        angles = torch.outer(torch.arange(max_seq_len, dtype=torch.float64), pe.rope_frequencies(head_dim))  # (s, d/2)
        self.cos_cached, self.sin_cached = angles.cos().float(), angles.sin().float()

    def __call__(self, x: torch.Tensor, start: int) -> torch.Tensor:
        if not isinstance(x, torch.Tensor) or x.shape[-1] != self.head_dim:
            raise ValueError("x must be a tensor (..., s, head_dim)")
        stop = start + x.shape[-2]
        cos, sin = self.cos_cached[start:stop], self.sin_cached[start:stop]
        return rotate_pairs(x, cos.to(x.dtype), sin.to(x.dtype), self.layout)


def sinusoidal_encoding(seq_len: int, d_model: int, *, dtype: type = np.float64, base: float = 10000.0) -> np.ndarray:
    """The direct formula, vectorised: one sin or cos per entry, angles rounded to ``dtype``. Interleaved layout."""
    omega = pe.sinusoidal_frequencies(d_model, base=base).astype(dtype)  # (m,)
    angles = np.multiply.outer(np.arange(seq_len, dtype=dtype), omega)  # (s, m)
    table = np.empty((seq_len, d_model), dtype=dtype)
    np.sin(angles, out=table[:, 0::2])
    np.cos(angles[:, : d_model // 2], out=table[:, 1::2])
    return table


def alibi_bias(n_heads: int, q_len: int, k_len: int, *, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """Causal ALiBi bias (h, s_q, s_k): the product, then an out-of-place masked_fill over the big tensor."""
    query_pos = torch.arange(k_len - q_len, k_len).unsqueeze(1)  # (s_q, 1)
    key_pos = torch.arange(k_len).unsqueeze(0)  # (1, s_k)
    offset = key_pos - query_pos  # (s_q, s_k)
    slopes = pe.alibi_slopes(n_heads).to(dtype).view(-1, 1, 1)  # (h, 1, 1)
    bias = slopes * offset.clamp(max=0).to(dtype)  # (h, s_q, s_k)
    return bias.masked_fill(offset > 0, float("-inf"))
