"""Where position enters a Transformer: a token front end and one attention block.

Both take the positional ``scheme`` as an argument, so one chapter can run the
same weights under every scheme and compare the tensors stage by stage:

- ``"sinusoidal"`` and ``"learned"`` add a vector to each token *once*, in the
  front end, before the first block;
- ``"rope"`` rotates queries and keys inside *every* attention layer;
- ``"alibi"`` adds a distance penalty to the scores inside every attention layer;
- ``"none"`` (NoPE) adds nothing anywhere.

Each module does its part and ignores the schemes that belong to the other one.
Shapes: ``b`` batch, ``s`` sequence length, ``d`` model width, ``h`` heads,
``d_h = d / h`` head width.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from ._checks import check_choice, check_positive_int, check_tensor
from .alibi import alibi_bias
from .attention import attention, causal_mask
from .learned import LearnedPositionalEmbedding
from .rope import RotaryEmbedding
from .sinusoidal import SinusoidalPositionalEncoding

SCHEMES = ("none", "sinusoidal", "learned", "rope", "alibi")
ADDED_TO_INPUT = ("sinusoidal", "learned")
INSIDE_ATTENTION = ("rope", "alibi")

# the stages AttentionBlock.trace records, in the order they are computed
TRACE_STAGES = ("x", "q_proj", "k_proj", "v", "q", "k", "scores", "weights", "attn_out", "out")


def _check_offset(offset: object) -> int:
    if isinstance(offset, bool) or not isinstance(offset, int):
        raise TypeError(f"offset must be a non-negative int, got {offset!r} of type {type(offset).__name__}")
    if offset < 0:
        raise ValueError(f"offset must be a non-negative int, got {offset}")
    return offset


class TokenFrontEnd(nn.Module):
    """Token ids to the vectors the first block sees.

    Args:
        vocab_size: number of token ids.
        d_model: width ``d`` of every token vector.
        scheme: one of :data:`SCHEMES`. Only ``"sinusoidal"`` and ``"learned"``
            add anything here; for the others the output is the token embedding.
        max_len: positions the sinusoidal/learned table holds.
        token_embedding: an existing ``nn.Embedding(vocab_size, d_model)`` to use
            (and share) instead of a fresh one, so front ends that differ only in
            their scheme see identical token vectors.

    ``forward(ids, offset=0)``: ``ids`` is an integer tensor ``(b, s)``; the
    result is ``(b, s, d)``. ``offset`` is the position of the first token.
    """

    def __init__(
        self,
        vocab_size: int,
        d_model: int,
        scheme: str,
        *,
        max_len: int = 1024,
        token_embedding: nn.Embedding | None = None,
    ):
        super().__init__()
        self.vocab_size = check_positive_int("vocab_size", vocab_size)
        self.d_model = check_positive_int("d_model", d_model)
        self.scheme = check_choice("scheme", scheme, SCHEMES)
        self.max_len = check_positive_int("max_len", max_len)
        if token_embedding is None:
            token_embedding = nn.Embedding(vocab_size, d_model)
            nn.init.normal_(token_embedding.weight, std=0.02)  # GPT-2's initialisation
        elif not isinstance(token_embedding, nn.Embedding):
            raise TypeError(f"token_embedding must be an nn.Embedding, got {type(token_embedding).__name__}")
        elif tuple(token_embedding.weight.shape) != (vocab_size, d_model):
            raise ValueError(
                f"token_embedding must have weight shape (vocab_size, d_model) = ({vocab_size}, {d_model}), "
                f"got {tuple(token_embedding.weight.shape)}"
            )
        self.token_embedding = token_embedding
        self.position: nn.Module | None = None
        if scheme == "sinusoidal":
            self.position = SinusoidalPositionalEncoding(d_model, max_len)
        elif scheme == "learned":
            self.position = LearnedPositionalEmbedding(max_len, d_model)

    def forward(self, ids: torch.Tensor, offset: int = 0) -> torch.Tensor:
        ids = check_tensor("ids", ids, min_dim=2)
        offset = _check_offset(offset)
        if ids.dim() != 2:
            raise ValueError(f"ids must have shape (b, s), got shape {tuple(ids.shape)}")
        if ids.is_floating_point() or ids.is_complex() or ids.dtype == torch.bool:
            raise TypeError(f"ids must be an integer tensor of token ids, got dtype {ids.dtype}")
        if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= self.vocab_size):
            raise ValueError(
                f"ids must lie in 0..{self.vocab_size - 1} (vocab_size={self.vocab_size}), "
                f"got values from {int(ids.min())} to {int(ids.max())}"
            )
        x = self.token_embedding(ids)  # (b, s, d)
        if self.position is not None:
            x = self.position(x, offset)  # (b, s, d) + (s, d) broadcast over the batch
        return x


class AttentionBlock(nn.Module):
    """A pre-norm Transformer block: multi-head self-attention and an MLP, each with a residual.

    Args:
        d_model: width ``d``.
        n_heads: heads ``h``; ``d`` must be divisible by ``h`` and ``d / h`` even (for RoPE).
        scheme: one of :data:`SCHEMES`. ``"rope"`` rotates ``q`` and ``k`` by their
            positions, ``"alibi"`` adds ``-m_h * distance`` to the scores; the
            other schemes leave attention position-free.
        causal: decoder-style mask (query ``i`` sees keys ``0..i``) if true.
        rope_base: RoPE frequency base.

    ``forward(x, offset=0)``: ``x`` is ``(b, s, d)``, the result ``(b, s, d)``;
    ``offset`` is the position of the first token (used by RoPE; ALiBi and the
    position-free schemes depend only on distances, so it changes nothing there).
    The block has the same parameters, with the same names, for every scheme:
    none of RoPE, ALiBi or NoPE adds a trainable weight.
    """

    def __init__(
        self, d_model: int, n_heads: int, scheme: str, *, causal: bool = True, rope_base: float = 10000.0
    ):
        super().__init__()
        self.d_model = check_positive_int("d_model", d_model)
        self.n_heads = check_positive_int("n_heads", n_heads)
        self.scheme = check_choice("scheme", scheme, SCHEMES)
        if not isinstance(causal, bool):
            raise TypeError(f"causal must be a bool, got {causal!r}")
        if d_model % n_heads:
            raise ValueError(f"d_model must be divisible by n_heads, got d_model={d_model}, n_heads={n_heads}")
        self.head_dim = d_model // n_heads
        if self.head_dim % 2:
            raise ValueError(f"head_dim = d_model / n_heads must be even, got {self.head_dim}")
        self.causal = causal
        self.norm_attn = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.norm_mlp = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))
        self.rope = RotaryEmbedding(self.head_dim, base=rope_base) if scheme == "rope" else None

    def _split_heads(self, t: torch.Tensor) -> torch.Tensor:
        b, s, _ = t.shape
        return t.view(b, s, self.n_heads, self.head_dim).transpose(1, 2)  # (b, s, d) -> (b, h, s, d_h)

    def _run(self, x: torch.Tensor, offset: int, record: dict[str, torch.Tensor] | None) -> torch.Tensor:
        x = check_tensor("x", x, min_dim=3)
        offset = _check_offset(offset)
        if x.dim() != 3 or x.shape[-1] != self.d_model:
            raise ValueError(f"x must have shape (b, s, d_model={self.d_model}), got shape {tuple(x.shape)}")
        b, s, d = x.shape
        q, k, v = self.qkv(self.norm_attn(x)).split(d, dim=-1)  # each (b, s, d)
        q, k, v = self._split_heads(q), self._split_heads(k), self._split_heads(v)  # each (b, h, s, d_h)
        q_proj, k_proj = q, k
        bias = None
        if self.rope is not None:
            q, k = self.rope(q, offset), self.rope(k, offset)  # rotated, still (b, h, s, d_h)
        elif self.scheme == "alibi":
            bias = alibi_bias(self.n_heads, s, causal=self.causal, dtype=x.dtype)  # (h, s, s)
        attn, weights = attention(q, k, v, bias=bias, causal=self.causal)  # (b, h, s, d_h), (b, h, s, s)
        attn_out = self.proj(attn.transpose(1, 2).reshape(b, s, d))  # (b, s, d)
        h = x + attn_out
        out = h + self.mlp(self.norm_mlp(h))  # (b, s, d)
        if record is not None:
            scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)  # (b, h, s, s), before any mask
            if bias is not None:
                scores = scores + bias
            if self.causal:
                scores = scores.masked_fill(~causal_mask(s, s, device=x.device), float("-inf"))
            record.update(x=x, q_proj=q_proj, k_proj=k_proj, v=v, q=q, k=k, scores=scores,
                          weights=weights, attn_out=attn_out, out=out)
        return out

    def forward(self, x: torch.Tensor, offset: int = 0) -> torch.Tensor:
        return self._run(x, offset, None)

    def trace(self, x: torch.Tensor, offset: int = 0) -> dict[str, torch.Tensor]:
        """Run the block and return every intermediate tensor, keyed by :data:`TRACE_STAGES`.

        ``x``, ``attn_out``, ``out``: ``(b, s, d)``; ``q_proj``, ``k_proj``
        (before any rotation), ``v``, ``q``, ``k`` (what enters the dot
        product): ``(b, h, s, d_h)``; ``scores`` (pre-softmax, with bias and
        ``-inf`` for masked keys) and ``weights``: ``(b, h, s, s)``.
        """
        record: dict[str, torch.Tensor] = {}
        self._run(x, offset, record)
        return {stage: record[stage] for stage in TRACE_STAGES}


def count_parameters(module: nn.Module) -> int:
    """Number of trainable scalars in ``module`` (buffers such as a sinusoidal table do not count)."""
    if not isinstance(module, nn.Module):
        raise TypeError(f"module must be a torch.nn.Module, got {type(module).__name__}")
    return sum(p.numel() for p in module.parameters() if p.requires_grad)
