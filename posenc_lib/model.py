"""A tiny, readable Transformer whose positional scheme is one argument.

The positional scheme (``TransformerConfig.scheme``, one of :data:`SCHEMES`) is
where position enters:

- ``"none"``: nowhere (NoPE);
- ``"sinusoidal"``, ``"learned"``: a position vector is added to each token
  vector *once*, before the first block (``model.position``);
- ``"rope"``: ``model.rope``, one :class:`~posenc_lib.RotaryEmbedding` shared by
  all blocks, rotates queries and keys inside *every* attention layer;
- ``"alibi"``: ``alibi_bias`` is added to the scores inside every attention layer
  (the causal form in the decoder, the symmetric ``-m_h |i - j|`` form in the encoder);
- ``"t5"``: ``model.relative_bias``, one :class:`~posenc_lib.T5RelativeBias` (a learned
  scalar per head and distance bucket, T5's default 32 buckets up to distance 128) shared by
  all blocks, as T5 shares it across a stack, is added to the scores in every layer.

The blocks themselves hold no positional state: the model hands each block the
rotation (``rope``), the score bias (``bias``: ALiBi's or T5's) and the position of the first
token (``offset``). So the blocks have the same parameters, with the same names,
under every scheme, :meth:`TinyTransformer.with_scheme` can run the very same
weights under another scheme, and replacing ``model.rope`` (e.g. by a
``RotaryEmbedding`` with interpolated or YaRN frequencies) changes the rotation
every block uses.

Two variants share every block:

- **encoder** (``causal=False``): bidirectional attention, the last hidden
  states are mean-pooled and mapped to ``n_outputs`` class logits, ``(b, n_outputs)``.
- **decoder** (``causal=True``): causal attention and one prediction per
  position, ``(b, s, n_outputs)`` (``n_outputs`` defaults to the vocabulary).

Blocks are pre-LayerNorm (as in GPT-2), without dropout. Shapes: ``b`` batch,
``s`` sequence length, ``d`` model width, ``n_h`` heads, ``d_h = d / n_h``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch
from torch import nn

from ._checks import (
    check_bool,
    check_choice,
    check_device,
    check_fits,
    check_int,
    check_integer_tensor,
    check_offset,
    check_positive_int,
    check_same_device,
    check_same_dtype,
    check_tensor,
)
from .alibi import alibi_bias
from .attention import attention
from .learned import LearnedPositionalEmbedding
from .relative import T5RelativeBias
from .rope import RotaryEmbedding
from .sinusoidal import SinusoidalPositionalEncoding

SCHEMES = ("none", "sinusoidal", "learned", "rope", "alibi", "t5")
ADDED_TO_INPUT = ("sinusoidal", "learned")  # a vector added to the token vectors, once
INSIDE_ATTENTION = ("rope", "alibi", "t5")  # acts on queries/keys or scores, in every layer

# what Block.trace records, in the order it is computed
TRACE_STAGES = ("x", "q_proj", "k_proj", "v", "q", "k", "scores", "weights", "attn_out", "out")


@dataclass(frozen=True)
class TransformerConfig:
    """Hyper-parameters of :class:`TinyTransformer`.

    Args:
        vocab_size: number of token ids ``0 .. vocab_size - 1``.
        scheme: one of :data:`SCHEMES`: ``"none"``, ``"sinusoidal"``, ``"learned"``, ``"rope"``, ``"alibi"``,
            ``"t5"``.
        causal: ``False`` for the pooled bidirectional encoder, ``True`` for the causal decoder.
        n_outputs: classes of the encoder, or outputs per position of the decoder
            (``None``: ``vocab_size``).
        d_model: width ``d`` of the residual stream.
        n_heads: attention heads ``n_h``; ``d_model / n_heads`` must be an even integer (RoPE rotates pairs).
        n_layers: number of blocks.
        d_ff: hidden width of each block's MLP.
        max_len: rows of the learned position table (the longest input a ``learned`` model
            accepts), of the precomputed sinusoidal table and of the RoPE cos/sin cache
            (both compute the positions past it when asked for them).
        projection_bias: give the query/key/value and output projections a bias (GPT-2 has one).
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
    projection_bias: bool = False

    def __post_init__(self) -> None:
        check_choice("scheme", self.scheme, SCHEMES)
        check_bool("causal", self.causal)
        check_bool("projection_bias", self.projection_bias)
        for name in ("vocab_size", "d_model", "n_heads", "n_layers", "d_ff", "max_len"):
            object.__setattr__(self, name, check_positive_int(name, getattr(self, name)))  # numpy ints -> int
        if self.n_outputs is not None:
            object.__setattr__(self, "n_outputs", check_positive_int("n_outputs", self.n_outputs))
        if self.d_model % self.n_heads:
            raise ValueError(
                f"d_model must be divisible by n_heads, got d_model={self.d_model}, n_heads={self.n_heads}"
            )
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


def split_heads(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    """``(b, s, d) -> (b, n_h, s, d_h)``: view the last dimension as ``n_h`` heads of width ``d_h = d / n_h``.

    ``x`` must be 3-D and ``n_heads`` a positive integer that divides ``d``.
    """
    x = check_tensor("x", x, min_dim=3)
    n_heads = check_positive_int("n_heads", n_heads)
    if x.dim() != 3:
        raise ValueError(f"x must have shape (b, s, d), got shape {tuple(x.shape)}")
    b, s, d = x.shape
    if d % n_heads:
        raise ValueError(f"n_heads must divide the width d = x.shape[-1] = {d}, got n_heads={n_heads}")
    return x.reshape(b, s, n_heads, d // n_heads).transpose(1, 2)  # (b, s, n_h, d_h) -> (b, n_h, s, d_h)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """``(b, n_h, s, d_h) -> (b, s, d)``, the inverse of :func:`split_heads`; ``x`` must be 4-D."""
    x = check_tensor("x", x, min_dim=4)
    if x.dim() != 4:
        raise ValueError(f"x must have shape (b, n_h, s, d_h), got shape {tuple(x.shape)}")
    b, n_heads, s, head_dim = x.shape
    return x.transpose(1, 2).reshape(b, s, n_heads * head_dim)


class SelfAttention(nn.Module):
    """Multi-head self-attention on ``x`` of shape ``(b, s, d)``, built on :func:`posenc_lib.attention`."""

    def __init__(self, config: TransformerConfig):
        super().__init__()
        self.n_heads, self.head_dim, self.causal = config.n_heads, config.head_dim, config.causal
        self.qkv = nn.Linear(config.d_model, 3 * config.d_model, bias=config.projection_bias)
        self.out = nn.Linear(config.d_model, config.d_model, bias=config.projection_bias)

    def forward(
        self,
        x: torch.Tensor,
        *,
        rope: RotaryEmbedding | None = None,
        bias: torch.Tensor | None = None,
        offset: int = 0,
        window: int | None = None,
        record: dict[str, torch.Tensor] | None = None,
    ) -> torch.Tensor:
        x = _check_vectors(x, self.qkv.in_features, self.qkv.weight, "SelfAttention")
        offset = check_offset(offset, x.shape[1])  # the position of the first token, used by rope
        if rope is not None and not isinstance(rope, RotaryEmbedding):
            raise TypeError(f"rope must be a RotaryEmbedding or None, got {type(rope).__name__}")
        q, k, v = self.qkv(x).split(x.shape[-1], dim=-1)  # each (b, s, d)
        q, k, v = (split_heads(t, self.n_heads) for t in (q, k, v))  # each (b, n_h, s, d_h)
        q_proj, k_proj = q, k
        if rope is not None:
            q, k = rope(q, offset=offset), rope(k, offset=offset)  # rotated by their positions; v is not rotated
        y, weights, scores = attention(q, k, v, bias=bias, causal=self.causal, window=window, return_scores=True)
        out = self.out(merge_heads(y))  # (b, s, d)
        if record is not None:
            record.update(q_proj=q_proj, k_proj=k_proj, v=v, q=q, k=k, scores=scores, weights=weights)
        return out


class Block(nn.Module):
    """Pre-LayerNorm block: ``x + attn(ln(x))``, then ``x + mlp(ln(x))``; ``(b, s, d) -> (b, s, d)``.

    ``forward(x, *, rope=None, bias=None, offset=0, window=None)``: ``rope`` rotates
    queries and keys (a :class:`~posenc_lib.RotaryEmbedding`), ``bias`` is added to the
    scores (e.g. ALiBi, ``(n_h, s, s)``), ``offset`` is the position of the first token
    (used by ``rope``), ``window`` limits each query to its last ``window`` keys
    (causal blocks only). Without them the block is position-free (NoPE).

    ``x`` must have the dtype and device of the block's weights: a float64 ``x`` for a float32
    block is a ``TypeError`` naming ``x``, not a silent rounding (convert one of them,
    ``x.float()`` or ``block.double()``). :class:`SelfAttention` checks the same.
    """

    def __init__(self, config: TransformerConfig):
        super().__init__()
        self.d_model = config.d_model
        self.ln_attn = nn.LayerNorm(config.d_model)
        self.attn = SelfAttention(config)
        self.ln_mlp = nn.LayerNorm(config.d_model)
        self.mlp = nn.Sequential(
            nn.Linear(config.d_model, config.d_ff), nn.GELU(), nn.Linear(config.d_ff, config.d_model)
        )

    def _run(self, x, rope, bias, offset, window, record) -> torch.Tensor:
        x = _check_vectors(x, self.d_model, self.attn.qkv.weight, "Block")
        offset = check_offset(offset, x.shape[1])
        if rope is not None and not isinstance(rope, RotaryEmbedding):
            raise TypeError(f"rope must be a RotaryEmbedding or None, got {type(rope).__name__}")
        attn_out = self.attn(self.ln_attn(x), rope=rope, bias=bias, offset=offset, window=window, record=record)
        h = x + attn_out
        out = h + self.mlp(self.ln_mlp(h))  # (b, s, d)
        if record is not None:
            record.update(x=x, attn_out=attn_out, out=out)
        return out

    def forward(
        self,
        x: torch.Tensor,
        *,
        rope: RotaryEmbedding | None = None,
        bias: torch.Tensor | None = None,
        offset: int = 0,
        window: int | None = None,
    ) -> torch.Tensor:
        return self._run(x, rope, bias, offset, window, None)

    def trace(
        self,
        x: torch.Tensor,
        *,
        rope: RotaryEmbedding | None = None,
        bias: torch.Tensor | None = None,
        offset: int = 0,
        window: int | None = None,
    ) -> dict[str, torch.Tensor]:
        """Run the block as ``forward`` does and return every intermediate tensor, keyed by :data:`TRACE_STAGES`.

        ``x``, ``attn_out``, ``out``: ``(b, s, d)``; ``q_proj``, ``k_proj`` (before any
        rotation), ``v``, ``q``, ``k`` (what enters the dot product): ``(b, n_h, s, d_h)``;
        ``scores`` (pre-softmax, with the bias added and ``-inf`` at masked keys) and
        ``weights``: ``(b, n_h, s, s)``.
        """
        record: dict[str, torch.Tensor] = {}
        self._run(x, rope, bias, offset, window, record)
        return {stage: record[stage] for stage in TRACE_STAGES}


def _check_vectors(x: object, d_model: int, weight: torch.Tensor, owner: str, name: str = "x") -> torch.Tensor:
    """``x`` must be a floating-point ``(b, s, d_model)`` tensor in the dtype and on the device of ``weight``.

    A float64 ``x`` for float32 weights (or the reverse) is a ``TypeError``, not a silent conversion.
    """
    x = check_tensor(name, x, min_dim=3)
    if x.dim() != 3 or x.shape[-1] != d_model:
        raise ValueError(f"{name} must have shape (b, s, d_model={d_model}), got shape {tuple(x.shape)}")
    if not x.is_floating_point():
        raise TypeError(f"{name} must be a floating-point tensor of token vectors, got dtype {x.dtype}")
    check_same_dtype(name, x, weight.dtype, owner)
    check_same_device(name, x, weight.device, owner)
    return x


def _check_sizes(config: TransformerConfig) -> None:
    """Refuse, before allocating, a configuration whose weights exceed the size budget (MAX_TENSOR_BYTES)."""
    d, d_ff = config.d_model, config.d_ff
    per_block = 4 * d * d + 2 * d * d_ff + d_ff + 9 * d  # projections, MLP, two LayerNorms (biases included)
    t5_table = 32 * config.n_heads  # T5RelativeBias's default buckets, only under scheme "t5" (counted always)
    total = (config.vocab_size + config.max_len + config.outputs + 2) * d + config.outputs + config.n_layers * per_block
    total += t5_table
    sizes = (
        f"vocab_size={config.vocab_size}, d_model={d}, n_layers={config.n_layers}, d_ff={d_ff}, "
        f"max_len={config.max_len} and n_outputs={config.outputs}"
    )
    check_fits(sizes, (total,), torch.float32, check_device(None))


def _position_modules(
    config: TransformerConfig,
) -> tuple[nn.Module | None, RotaryEmbedding | None, T5RelativeBias | None]:
    """The module that adds position vectors to the input, the shared RoPE and the shared T5 bias (each or None)."""
    if config.scheme == "sinusoidal":
        return SinusoidalPositionalEncoding(config.d_model, config.max_len), None, None
    if config.scheme == "learned":
        return LearnedPositionalEmbedding(config.d_model, config.max_len), None, None
    if config.scheme == "rope":
        return None, RotaryEmbedding(config.head_dim, config.max_len), None
    if config.scheme == "t5":
        return None, None, T5RelativeBias(config.n_heads, bidirectional=not config.causal)
    return None, None, None


class TinyTransformer(nn.Module):
    """Token embedding, positional scheme, ``n_layers`` blocks, final LayerNorm, output head.

    Attributes:
        token_embedding: ``nn.Embedding(vocab_size, d)``.
        position: the module that adds position vectors to the token vectors
            (``SinusoidalPositionalEncoding`` or ``LearnedPositionalEmbedding``), else ``None``.
        rope: the ``RotaryEmbedding`` every block uses (scheme ``"rope"``), else ``None``.
            Assigning another ``RotaryEmbedding(d_h, ...)`` changes the frequencies used from then on.
        relative_bias: the ``T5RelativeBias`` every block adds to its scores (scheme ``"t5"``), else ``None``.
        blocks: the ``n_layers`` :class:`Block` modules; ``ln_final``; ``head``.

    ``model(tokens, *, offset=0, window=None, clamp_positions=False)``: ``tokens`` is an
    integer tensor ``(b, s)``; returns ``(b, n_outputs)`` logits for the encoder
    (mean-pooled) or ``(b, s, n_outputs)`` for the decoder.

    - ``offset``: position of the first token (positions ``offset .. offset + s - 1``).
    - ``window``: decoder only; each query sees only its last ``window`` keys
      (sliding-window attention, e.g. to evaluate past the training length).
    - ``clamp_positions`` (``learned`` only): every position past the table gets its
      last row instead of raising, to show what that does.
    """

    def __init__(self, config: TransformerConfig):
        super().__init__()
        if not isinstance(config, TransformerConfig):
            raise TypeError(f"config must be a TransformerConfig, got {type(config).__name__}")
        _check_sizes(config)
        self.config = config
        self.token_embedding = nn.Embedding(config.vocab_size, config.d_model)  # N(0, 1) init, like the sin/cos scale
        self.position, self.rope, self.relative_bias = _position_modules(config)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.n_layers))
        self.ln_final = nn.LayerNorm(config.d_model)
        self.head = nn.Linear(config.d_model, config.outputs)

    # --- input ---------------------------------------------------------------------------------

    def _check_tokens(self, tokens: object) -> torch.Tensor:
        tokens = check_integer_tensor("tokens", tokens, dim=2, shape_text="(b, s)")
        if tokens.shape[1] == 0:
            raise ValueError(f"tokens must hold at least one position, got shape {tuple(tokens.shape)}")
        device = self.token_embedding.weight.device
        if tokens.device != device:
            raise ValueError(
                f"tokens are on {tokens.device} but the model is on {device}: move them with tokens.to({str(device)!r})"
            )
        if tokens.numel() and tokens.device.type != "meta":
            low, high = int(tokens.min()), int(tokens.max())
            if low < 0 or high >= self.config.vocab_size:
                raise ValueError(
                    f"tokens must be ids in 0..{self.config.vocab_size - 1} (vocab_size={self.config.vocab_size}), "
                    f"got values in {low}..{high}"
                )
        return tokens

    def _check_position_args(
        self, offset: object, window: object, clamp_positions: object
    ) -> tuple[int, int | None, bool]:
        offset = check_offset(offset)
        if window is not None:
            window = check_positive_int("window", window)
            if not self.config.causal:
                raise ValueError(
                    "window (sliding-window attention) applies to the causal decoder only; this model has causal=False"
                )
        clamp_positions = check_bool("clamp_positions", clamp_positions)
        if clamp_positions and self.config.scheme != "learned":
            raise ValueError(f"clamp_positions only applies to scheme='learned', got scheme={self.config.scheme!r}")
        return offset, window, clamp_positions

    def embed(self, tokens: torch.Tensor, *, offset: int = 0, clamp_positions: bool = False) -> torch.Tensor:
        """Token vectors plus, for ``sinusoidal`` and ``learned``, position vectors: ``(b, s) -> (b, s, d)``.

        This is what the first block sees. For the other schemes it is the token embedding itself.
        """
        tokens = self._check_tokens(tokens)
        offset, _, clamp_positions = self._check_position_args(offset, None, clamp_positions)
        return self._embed(tokens, offset, clamp_positions)

    def _embed(self, tokens: torch.Tensor, offset: int, clamp_positions: bool) -> torch.Tensor:
        x = self.token_embedding(tokens)  # (b, s, d)
        s = tokens.shape[1]
        if isinstance(self.position, LearnedPositionalEmbedding) and clamp_positions:
            positions = torch.arange(offset, offset + s, device=x.device).clamp(max=self.position.max_len - 1)  # (s,)
            return x + self.position.weight[positions].to(x.dtype)  # (b, s, d) + (s, d)
        if self.position is not None:
            # (b, s, d) + (s, d); sinusoidal computes rows past its table, learned raises
            return self.position(x, offset=offset)
        return x

    def _score_bias(self, s: int, x: torch.Tensor) -> torch.Tensor | None:
        """What every block adds to its scores, ``(n_h, s, s)``: ALiBi's fixed bias, T5's learned one, or None."""
        if self.config.scheme == "alibi":
            return alibi_bias(self.config.n_heads, s, causal=self.config.causal, dtype=x.dtype, device=x.device)
        if self.relative_bias is not None:
            return self.relative_bias(s).to(x.dtype)
        return None

    # --- running -------------------------------------------------------------------------------

    def _run(self, tokens, offset, window, clamp_positions, traces: list | None) -> torch.Tensor:
        tokens = self._check_tokens(tokens)
        offset, window, clamp_positions = self._check_position_args(offset, window, clamp_positions)
        x = self._embed(tokens, offset, clamp_positions)  # (b, s, d)
        bias = self._score_bias(tokens.shape[1], x)
        for block in self.blocks:
            if traces is None:
                x = block(x, rope=self.rope, bias=bias, offset=offset, window=window)
            else:
                traces.append(block.trace(x, rope=self.rope, bias=bias, offset=offset, window=window))  # type: ignore[operator]  # a ModuleList yields Modules
                x = traces[-1]["out"]
        return self.ln_final(x)

    def hidden_states(
        self, tokens: torch.Tensor, *, offset: int = 0, window: int | None = None, clamp_positions: bool = False
    ) -> torch.Tensor:
        """The final LayerNorm's output, one vector per position: ``(b, s) -> (b, s, d)``."""
        return self._run(tokens, offset, window, clamp_positions, None)

    def forward(
        self, tokens: torch.Tensor, *, offset: int = 0, window: int | None = None, clamp_positions: bool = False
    ) -> torch.Tensor:
        x = self.hidden_states(tokens, offset=offset, window=window, clamp_positions=clamp_positions)  # (b, s, d)
        if self.config.causal:
            return self.head(x)  # (b, s, n_outputs)
        return self.head(x.mean(dim=1))  # (b, n_outputs): the order of positions is summed away

    def trace(
        self, tokens: torch.Tensor, *, offset: int = 0, window: int | None = None, clamp_positions: bool = False
    ) -> list[dict[str, torch.Tensor]]:
        """Run the blocks as ``forward`` does; one :meth:`Block.trace` dict per block (keys :data:`TRACE_STAGES`).

        ``trace(tokens)[0]["x"]`` is :meth:`embed`'s output and ``trace(tokens)[-1]["out"]``
        the last block's output (before the final LayerNorm).
        """
        traces: list[dict[str, torch.Tensor]] = []
        self._run(tokens, offset, window, clamp_positions, traces)
        return traces

    def with_scheme(self, scheme: str, *, seed: int = 0) -> TinyTransformer:
        """The same model under another positional scheme, sharing every weight with this one.

        The new model's token embedding, blocks, final LayerNorm and head are *this*
        model's modules (the same tensors, not copies: training one trains the other);
        only its positional module is its own (a learned table is drawn with ``seed``).
        No scheme adds a weight to a block, so the blocks serve every scheme as they are.
        """
        config = dataclasses.replace(self.config, scheme=check_choice("scheme", scheme, SCHEMES))
        seed = check_int("seed", seed)
        other = TinyTransformer.__new__(TinyTransformer)
        nn.Module.__init__(other)
        other.config = config
        other.token_embedding = self.token_embedding
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            other.position, other.rope, other.relative_bias = _position_modules(config)
        weight = self.token_embedding.weight
        for module in (other.position, other.rope, other.relative_bias):
            if module is not None:
                module.to(device=weight.device)
        for table in (other.position, other.relative_bias):
            if isinstance(table, LearnedPositionalEmbedding | T5RelativeBias):
                table.to(dtype=weight.dtype)  # a trainable table in the precision of the other weights
        other.blocks, other.ln_final, other.head = self.blocks, self.ln_final, self.head
        other.train(self.training)
        return other


def count_parameters(module: nn.Module) -> int:
    """Number of trainable scalars in ``module``; buffers (a sinusoidal table, a RoPE cache) do not count."""
    if not isinstance(module, nn.Module):
        raise TypeError(f"module must be a torch.nn.Module, got {type(module).__name__}")
    return sum(p.numel() for p in module.parameters() if p.requires_grad)


def build_model(config: TransformerConfig, *, seed: int) -> TinyTransformer:
    """A :class:`TinyTransformer` whose initial weights depend only on ``config`` and ``seed``.

    The global random state is left as it was (the weights are drawn inside ``torch.random.fork_rng``).
    """
    if not isinstance(config, TransformerConfig):
        raise TypeError(f"config must be a TransformerConfig, got {type(config).__name__}")
    seed = check_int("seed", seed)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return TinyTransformer(config)
