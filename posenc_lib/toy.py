"""Small deterministic toy inputs used across chapters: word vectors and one attention head."""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import torch

from ._checks import (
    check_bool,
    check_device,
    check_dtype,
    check_fits,
    check_int,
    check_positive_float,
    check_positive_int,
    check_tensor,
)
from .attention import attention


def _word_generator(word: str, seed: int) -> torch.Generator:
    # zlib.crc32 is stable across runs (Python's hash() of a str is not)
    return torch.Generator().manual_seed(zlib.crc32(word.encode("utf-8")) + 1_000_003 * seed)


def embed_words(
    words: list[str],
    d_model: int,
    *,
    seed: int = 0,
    scale: float = 1.0,
    dtype: torch.dtype = torch.float32,
    device: torch.device | str | None = None,
) -> torch.Tensor:
    """Toy embeddings ``(s, d)``: every occurrence of a word gets the same vector.

    The vector depends only on the word, ``d_model``, ``seed`` and ``scale`` (entries are
    ``scale`` times standard normal draws), so "cat" is the same in every sentence -- exactly
    the situation in which a model without positions cannot tell sentences with the same
    words apart. The draws are made on the CPU, then moved to ``device`` in ``dtype``.
    """
    d_model = check_positive_int("d_model", d_model)
    seed = check_int("seed", seed)
    scale = check_positive_float("scale", scale)
    dtype, device = check_dtype(dtype), check_device(device)
    if (
        isinstance(words, str)
        or not isinstance(words, (list, tuple))
        or len(words) == 0
        or not all(isinstance(w, str) for w in words)
    ):
        raise TypeError("words must be a non-empty list of strings, e.g. 'the cat sat'.split()")
    check_fits(f"{len(words)} words and d_model={d_model}", (len(words), d_model), dtype, device)
    rows = [scale * torch.randn(d_model, generator=_word_generator(w, seed)) for w in words]
    return torch.stack(rows).to(device=device, dtype=dtype)  # (s, d)


@dataclass
class ToyAttentionHead:
    """One self-attention head with fixed projections ``W_q, W_k, W_v`` of shape ``(d, d)``.

    ``head(x, *, bias=None, causal=False)`` maps ``x`` of shape ``(..., s, d)`` to
    ``(output, weights)`` with shapes ``(..., s, d)`` and ``(..., s, s)``; ``bias`` and
    ``causal`` are passed to :func:`posenc_lib.attention`. The projections are used in
    ``x``'s dtype and on its device.
    """

    w_q: torch.Tensor
    w_k: torch.Tensor
    w_v: torch.Tensor

    def __post_init__(self) -> None:
        for name in ("w_q", "w_k", "w_v"):
            w = check_tensor(name, getattr(self, name), min_dim=2)
            if w.dim() != 2 or w.shape[0] != w.shape[1] or w.shape[0] == 0:
                raise ValueError(f"{name} must be a square (d, d) matrix, got shape {tuple(w.shape)}")
            if not w.is_floating_point():
                raise TypeError(f"{name} must be a floating-point tensor, got dtype {w.dtype}")
        if not self.w_q.shape == self.w_k.shape == self.w_v.shape:
            raise ValueError(
                f"w_q, w_k and w_v must have the same shape (d, d), got {tuple(self.w_q.shape)}, "
                f"{tuple(self.w_k.shape)}, {tuple(self.w_v.shape)}"
            )

    @classmethod
    def random(
        cls,
        d_model: int,
        *,
        seed: int = 0,
        dtype: torch.dtype = torch.float32,
        device: torch.device | str | None = None,
    ) -> ToyAttentionHead:
        """Projections with entries ``N(0, 1/d)`` drawn from a CPU generator seeded by ``seed``."""
        d_model = check_positive_int("d_model", d_model)
        seed = check_int("seed", seed)
        dtype, device = check_dtype(dtype), check_device(device)
        check_fits(f"d_model={d_model}", (d_model, d_model), dtype, device)
        gen = torch.Generator().manual_seed(seed)
        scale = d_model**-0.5
        w_q, w_k, w_v = (scale * torch.randn(d_model, d_model, generator=gen) for _ in range(3))
        return cls(*(w.to(device=device, dtype=dtype) for w in (w_q, w_k, w_v)))

    def __call__(
        self, x: torch.Tensor, *, bias: torch.Tensor | None = None, causal: bool = False
    ) -> tuple[torch.Tensor, torch.Tensor]:
        x = check_tensor("x", x, min_dim=2)
        if not x.is_floating_point():
            raise TypeError(f"x must be a floating-point tensor, got dtype {x.dtype}")
        if x.shape[-1] != self.w_q.shape[0]:
            raise ValueError(f"x must have last dimension {self.w_q.shape[0]}, got shape {tuple(x.shape)}")
        check_bool("causal", causal)
        w_q, w_k, w_v = (w.to(device=x.device, dtype=x.dtype) for w in (self.w_q, self.w_k, self.w_v))
        q, k, v = x @ w_q, x @ w_k, x @ w_v  # each (..., s, d)
        output, weights = attention(q, k, v, bias=bias, causal=causal)
        return output, weights
