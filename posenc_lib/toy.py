"""Small deterministic toy inputs used across chapters: word vectors and one attention head."""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import torch

from ._checks import check_positive_int
from .attention import attention


def _word_generator(word: str, seed: int) -> torch.Generator:
    # zlib.crc32 is stable across runs (Python's hash() of a str is not)
    return torch.Generator().manual_seed(zlib.crc32(word.encode("utf-8")) + 1_000_003 * seed)


def embed_words(words: list[str], d_model: int, *, seed: int = 0, scale: float = 1.0) -> torch.Tensor:
    """Toy embeddings ``(s, d)``: every occurrence of a word gets the same vector.

    The vector depends only on the word, ``d_model`` and ``seed``, so "cat" is the
    same in every sentence and every chapter -- exactly the situation in which a
    model without positions cannot tell sentences with the same words apart.
    """
    d_model = check_positive_int("d_model", d_model)
    if isinstance(words, str) or not all(isinstance(w, str) for w in words) or len(words) == 0:
        raise TypeError("words must be a non-empty list of strings, e.g. 'the cat sat'.split()")
    rows = [scale * torch.randn(d_model, generator=_word_generator(w, seed)) for w in words]
    return torch.stack(rows)  # (s, d)


@dataclass
class ToyAttentionHead:
    """One self-attention head with fixed random projections ``W_q, W_k, W_v`` of shape ``(d, d)``.

    ``head(x, bias=None, causal=False)`` maps ``x`` of shape ``(..., s, d)`` to
    ``(output, weights)`` with shapes ``(..., s, d)`` and ``(..., s, s)``.
    """

    w_q: torch.Tensor
    w_k: torch.Tensor
    w_v: torch.Tensor

    @classmethod
    def random(cls, d_model: int, *, seed: int = 0) -> "ToyAttentionHead":
        d_model = check_positive_int("d_model", d_model)
        gen = torch.Generator().manual_seed(seed)
        scale = d_model**-0.5
        w_q, w_k, w_v = (scale * torch.randn(d_model, d_model, generator=gen) for _ in range(3))
        return cls(w_q, w_k, w_v)

    def __call__(
        self, x: torch.Tensor, *, bias: torch.Tensor | None = None, causal: bool = False
    ) -> tuple[torch.Tensor, torch.Tensor]:
        if x.shape[-1] != self.w_q.shape[0]:
            raise ValueError(f"x must have last dimension {self.w_q.shape[0]}, got shape {tuple(x.shape)}")
        q, k, v = x @ self.w_q, x @ self.w_k, x @ self.w_v  # each (..., s, d)
        return attention(q, k, v, bias=bias, causal=causal)
