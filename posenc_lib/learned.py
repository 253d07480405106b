"""Learned absolute position embeddings (BERT, GPT-2)."""

from __future__ import annotations

import torch
from torch import nn

from ._checks import check_positive_int, check_tensor


class LearnedPositionalEmbedding(nn.Module):
    """One trainable vector per position ``0 .. max_len - 1``, added to the input.

    Args:
        max_len: number of positions the table holds; a longer sequence cannot be served.
        d_model: embedding width ``d``.

    Input ``x``: ``(b, s, d)``; output: ``(b, s, d)``, ``x + W[offset : offset + s]``.
    Unlike a bare ``nn.Embedding`` lookup, which fails with an ``IndexError``
    from inside the kernel, a sequence past ``max_len`` raises a ``ValueError``
    that says which position was asked for and how many exist.
    """

    def __init__(self, max_len: int, d_model: int, *, init_std: float = 0.02):
        super().__init__()
        self.max_len = check_positive_int("max_len", max_len)
        self.d_model = check_positive_int("d_model", d_model)
        self.embedding = nn.Embedding(max_len, d_model)
        nn.init.normal_(self.embedding.weight, std=init_std)

    @property
    def weight(self) -> torch.Tensor:
        """The position table, ``(max_len, d)``."""
        return self.embedding.weight

    def forward(self, x: torch.Tensor, offset: int = 0) -> torch.Tensor:
        x = check_tensor("x", x, min_dim=2)
        seq_len = x.shape[-2]
        if x.shape[-1] != self.d_model:
            raise ValueError(f"x must have last dimension d_model={self.d_model}, got shape {tuple(x.shape)}")
        if offset < 0:
            raise ValueError(f"offset must be >= 0, got {offset}")
        if offset + seq_len > self.max_len:
            raise ValueError(
                f"position {offset + seq_len - 1} requested, but the learned table only has positions "
                f"0..{self.max_len - 1} (max_len={self.max_len}); a learned table cannot serve "
                f"positions it was not trained with"
            )
        positions = torch.arange(offset, offset + seq_len, device=x.device)  # (s,)
        return x + self.embedding(positions)  # (b, s, d) + (s, d)
