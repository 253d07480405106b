"""A tiny, readable Transformer whose positional scheme is one argument.

Two variants share every block:

- **encoder** (``causal=False``): bidirectional attention, the last hidden
  states are mean-pooled and mapped to ``n_outputs`` class logits, ``(b, n_outputs)``.
- **decoder** (``causal=True``): causal attention and one prediction per
  position, ``(b, s, n_outputs)`` (``n_outputs`` defaults to the vocabulary).

The positional scheme (``TransformerConfig.scheme``) is where position enters:

- ``"none"``: nowhere (NoPE);
- ``"sinusoidal"``: ``SinusoidalPositionalEncoding`` added to the token embeddings;
- ``"learned"``: ``LearnedPositionalEmbedding`` added to the token embeddings;
- ``"rope"``: ``RotaryEmbedding`` rotates queries and keys in every layer;
- ``"alibi"``: ``alibi_bias`` added to the attention scores in every layer
  (the causal form in the decoder, the symmetric ``-m |i - j|`` form in the encoder).

All of them are the library's own modules; this file only wires them in.
Blocks are pre-LayerNorm (as in GPT-2), no dropout, no biases in attention.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from ._checks import check_choice, check_positive_int, check_tensor
from .alibi import alibi_bias
from .attention import attention
from .learned import LearnedPositionalEmbedding
from .rope import RotaryEmbedding
from .sinusoidal import SinusoidalPositionalEncoding

SCHEMES = ("none", "sinusoidal", "learned", "rope", "alibi")


@dataclass(frozen=True)
class TransformerConfig:
    """Hyper-parameters of :class:`TinyTransformer`.

    Args:
        vocab_size: number of token ids ``0 .. vocab_size - 1``.
        scheme: one of ``SCHEMES``: ``"none"``, ``"sinusoidal"``, ``"learned"``, ``"rope"``, ``"alibi"``.
        causal: ``False`` for the pooled bidirectional encoder, ``True`` for the causal decoder.
        n_outputs: classes of the encoder, or outputs per position of the decoder
            (``None``: ``vocab_size``).
        d_model: width ``d`` of the residual stream.
        n_heads: attention heads ``h``; ``d_model / n_heads`` must be an even integer (RoPE rotates pairs).
        n_layers: number of blocks.
        d_ff: hidden width of each block's MLP.
        max_len: rows of the learned position table (the longest input a ``learned`` model
            accepts) and the initial size of the sinusoidal table and RoPE cache, which grow on demand.
    """

    vocab_size: int
    scheme: str = "none"
    causal: bool = False
    n_outputs: int | None = None
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 2
    d_ff: int = 128
    max_len: int = 64

    def __post_init__(self) -> None:
        check_choice("scheme", self.scheme, SCHEMES)
        if not isinstance(self.causal, bool):
            raise TypeError(f"causal must be a bool, got {self.causal!r}")
        for name in ("vocab_size", "d_model", "n_heads", "n_layers", "d_ff", "max_len"):
            check_positive_int(name, getattr(self, name))
        if self.n_outputs is not None:
            check_positive_int("n_outputs", self.n_outputs)
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model must be divisible by n_heads, got d_model={self.d_model}, n_heads={self.n_heads}")
        if (self.d_model // self.n_heads) % 2:
            raise ValueError(
                f"head_dim = d_model / n_heads must be even (RoPE rotates pairs), got {self.d_model // self.n_heads}"
            )

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads

    @property
    def outputs(self) -> int:
        """Number of logits per example (encoder) or per position (decoder)."""
        return self.vocab_size if self.n_outputs is None else self.n_outputs


class SelfAttention(nn.Module):
    """Multi-head self-attention on ``x`` of shape ``(b, s, d)``, built on :func:`posenc_lib.attention`."""

    def __init__(self, config: TransformerConfig):
        super().__init__()
        self.n_heads, self.head_dim, self.causal = config.n_heads, config.head_dim, config.causal
        self.qkv = nn.Linear(config.d_model, 3 * config.d_model, bias=False)
        self.out = nn.Linear(config.d_model, config.d_model, bias=False)

    def forward(
        self,
        x: torch.Tensor,
        *,
        rope: RotaryEmbedding | None = None,
        bias: torch.Tensor | None = None,
    ) -> torch.Tensor:
        b, s, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=-1)  # each (b, s, d)
        q, k, v = (t.view(b, s, self.n_heads, self.head_dim).transpose(1, 2) for t in (q, k, v))  # each (b, h, s, hd)
        if rope is not None:
            q, k = rope(q), rope(k)  # rotated by their positions; v is not rotated
        y, _ = attention(q, k, v, bias=bias, causal=self.causal)  # (b, h, s, hd)
        return self.out(y.transpose(1, 2).reshape(b, s, d))


class Block(nn.Module):
    """Pre-LayerNorm block: ``x + attn(ln(x))``, then ``x + mlp(ln(x))``; ``(b, s, d) -> (b, s, d)``."""

    def __init__(self, config: TransformerConfig):
        super().__init__()
        self.ln_attn = nn.LayerNorm(config.d_model)
        self.attn = SelfAttention(config)
        self.ln_mlp = nn.LayerNorm(config.d_model)
        self.mlp = nn.Sequential(
            nn.Linear(config.d_model, config.d_ff), nn.GELU(), nn.Linear(config.d_ff, config.d_model)
        )

    def forward(self, x: torch.Tensor, *, rope: RotaryEmbedding | None, bias: torch.Tensor | None) -> torch.Tensor:
        x = x + self.attn(self.ln_attn(x), rope=rope, bias=bias)
        return x + self.mlp(self.ln_mlp(x))


class TinyTransformer(nn.Module):
    """Token embedding, positional scheme, ``n_layers`` blocks, final LayerNorm, output head.

    ``model(tokens)``: ``tokens`` is an integer tensor ``(b, s)``; returns
    ``(b, n_outputs)`` logits for the encoder (mean-pooled) or ``(b, s, n_outputs)``
    for the decoder.

    ``clamp_positions=True`` (``learned`` only) maps every position past the
    table to its last row instead of raising, to show what that does.
    """

    def __init__(self, config: TransformerConfig):
        super().__init__()
        if not isinstance(config, TransformerConfig):
            raise TypeError(f"config must be a TransformerConfig, got {type(config).__name__}")
        self.config = config
        self.token_embedding = nn.Embedding(config.vocab_size, config.d_model)  # N(0, 1) init, like the sin/cos scale
        self.sinusoidal = SinusoidalPositionalEncoding(config.d_model, config.max_len) if config.scheme == "sinusoidal" else None
        self.learned = LearnedPositionalEmbedding(config.max_len, config.d_model) if config.scheme == "learned" else None
        self.rope = RotaryEmbedding(config.head_dim, config.max_len) if config.scheme == "rope" else None
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.n_layers))
        self.ln_final = nn.LayerNorm(config.d_model)
        self.head = nn.Linear(config.d_model, config.outputs)

    def num_parameters(self) -> int:
        """Number of trainable parameters (fixed tables such as the sinusoidal one are buffers, not counted)."""
        return sum(p.numel() for p in self.parameters() if p.requires_grad)

    def _check_tokens(self, tokens: object) -> torch.Tensor:
        tokens = check_tensor("tokens", tokens, min_dim=2)
        if tokens.dim() != 2:
            raise ValueError(f"tokens must have shape (b, s), got {tuple(tokens.shape)}")
        if tokens.is_floating_point() or tokens.is_complex() or tokens.dtype == torch.bool:
            raise TypeError(f"tokens must be an integer tensor of token ids, got dtype {tokens.dtype}")
        if tokens.numel() and (int(tokens.min()) < 0 or int(tokens.max()) >= self.config.vocab_size):
            raise ValueError(
                f"tokens must be ids in 0..{self.config.vocab_size - 1} (vocab_size={self.config.vocab_size}), "
                f"got values in {int(tokens.min())}..{int(tokens.max())}"
            )
        return tokens

    def _add_positions(self, x: torch.Tensor, clamp_positions: bool) -> torch.Tensor:
        s = x.shape[1]
        if self.sinusoidal is not None:
            if s > self.sinusoidal.max_len:  # a fixed function of position: just compute a longer table
                self.sinusoidal = SinusoidalPositionalEncoding(self.config.d_model, max(s, 2 * self.sinusoidal.max_len))
            return self.sinusoidal(x)
        if self.learned is not None:
            if clamp_positions:
                positions = torch.arange(s, device=x.device).clamp(max=self.learned.max_len - 1)  # (s,)
                return x + self.learned.weight[positions]  # (b, s, d) + (s, d)
            return self.learned(x)  # raises ValueError past the table
        return x

    def hidden_states(self, tokens: torch.Tensor, *, clamp_positions: bool = False) -> torch.Tensor:
        """The final LayerNorm's output, one vector per position: ``(b, s) -> (b, s, d)``."""
        tokens = self._check_tokens(tokens)
        if clamp_positions and self.config.scheme != "learned":
            raise ValueError(f"clamp_positions only applies to scheme='learned', got scheme={self.config.scheme!r}")
        x = self._add_positions(self.token_embedding(tokens), clamp_positions)  # (b, s, d)
        s = tokens.shape[1]
        bias = alibi_bias(self.config.n_heads, s, causal=self.config.causal) if self.config.scheme == "alibi" else None  # (h, s, s)
        for block in self.blocks:
            x = block(x, rope=self.rope, bias=bias)
        return self.ln_final(x)

    def forward(self, tokens: torch.Tensor, *, clamp_positions: bool = False) -> torch.Tensor:
        x = self.hidden_states(tokens, clamp_positions=clamp_positions)  # (b, s, d)
        if self.config.causal:
            return self.head(x)  # (b, s, n_outputs)
        return self.head(x.mean(dim=1))  # (b, n_outputs): the order of positions is summed away


def build_model(config: TransformerConfig, *, seed: int) -> TinyTransformer:
    """A :class:`TinyTransformer` whose initial weights depend only on ``config`` and ``seed``.

    The global random state is left as it was (the weights are drawn inside ``torch.random.fork_rng``).
    """
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be an int, got {seed!r}")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return TinyTransformer(config)
