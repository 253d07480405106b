"""Relative position biases: T5's log-spaced buckets and Shaw et al.'s clipped distances.

Notation: ``n_h`` heads, ``s_q`` queries, ``s_k`` keys. The *relative position*
of key ``j`` seen from query ``i`` is ``r = j - i`` (the key's position minus the
query's), so keys in the past have negative relative positions. As in
:func:`posenc_lib.alibi_bias`, queries are aligned to the *end* of the keys:
query ``i`` sits at position ``s_k - s_q + i``.

- Shaw, Uszkoreit and Vaswani (2018) learn one vector per relative position,
  clipped to ``[-c, c]`` (:func:`shaw_relative_index`).
- T5 (Raffel et al., 2020) learns one *scalar* per head and per bucket of
  relative positions and adds it to the attention logits. Small distances get
  a bucket each; larger ones share buckets whose width grows logarithmically up
  to ``max_distance``, beyond which all distances share the last bucket
  (:func:`t5_relative_position_bucket`, :class:`T5RelativeBias`).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from ._checks import check_bool, check_device, check_fits, check_positive_int, check_tensor


def relative_positions(q_len: int, k_len: int | None = None, *, device=None) -> torch.Tensor:
    """Key position minus query position, ``r = j - i``, shape ``(s_q, s_k)``, int64.

    Queries are the last ``q_len`` of the ``k_len`` positions (``k_len``
    defaults to ``q_len``), so entry ``[i, j]`` is ``j - (s_k - s_q + i)``.
    """
    q_len = check_positive_int("q_len", q_len)
    k_len = q_len if k_len is None else check_positive_int("k_len", k_len)
    device = check_device(device)
    check_fits(f"q_len={q_len} and k_len={k_len}", (q_len, k_len), torch.int64, device)
    query = torch.arange(k_len - q_len, k_len, device=device)  # (s_q,): i, the last s_q positions
    key = torch.arange(k_len, device=device)  # (s_k,): j
    return key[None, :] - query[:, None]  # (s_q, s_k)


def _check_bucket_arguments(bidirectional: object, num_buckets: object, max_distance: object) -> tuple[int, int]:
    check_bool("bidirectional", bidirectional)
    num_buckets = check_positive_int("num_buckets", num_buckets)
    max_distance = check_positive_int("max_distance", max_distance)
    per_direction = num_buckets // 2 if bidirectional else num_buckets
    max_exact = per_direction // 2
    if max_exact < 1:
        need = 4 if bidirectional else 2
        kind = "bidirectional" if bidirectional else "causal"
        raise ValueError(f"num_buckets must be >= {need} for {kind} buckets, got {num_buckets}")
    if max_distance <= max_exact:
        raise ValueError(
            f"max_distance must exceed the {max_exact} exact buckets (num_buckets={num_buckets}, "
            f"bidirectional={bidirectional}), got {max_distance}"
        )
    return num_buckets, max_distance


def t5_relative_position_bucket(
    relative_position: torch.Tensor,
    *,
    bidirectional: bool = True,
    num_buckets: int = 32,
    max_distance: int = 128,
) -> torch.Tensor:
    """T5's bucket index for each relative position, same shape, int64, in ``[0, num_buckets)``.

    Args:
        relative_position: integer tensor of any shape, key position minus
            query position (e.g. from :func:`relative_positions`).
        bidirectional: ``True`` (encoder): half of the buckets are for keys
            before the query, half for keys after it. ``False`` (decoder):
            all buckets describe the past; future positions fall in bucket 0,
            which is harmless because the causal mask hides them.
        num_buckets: total number of buckets (32 in T5).
        max_distance: distances at or beyond this share the last bucket of
            their direction (128 in T5).

    With ``n`` buckets per direction, distances ``0 .. n/2 - 1`` get a bucket
    each; a distance ``r`` from ``n/2`` on goes to
    ``n/2 + floor(log(r / (n/2)) / log(max_distance / (n/2)) * (n - n/2))``,
    capped at ``n - 1``. The logarithm is evaluated in float32 in the same
    order of operations as Mesh TensorFlow and HF transformers, because that is
    what pretrained T5 checkpoints were trained with: float64 puts a handful of
    distances, for some settings, into the neighbouring bucket.
    """
    relative_position = check_tensor("relative_position", relative_position, min_dim=0)
    if relative_position.is_floating_point() or relative_position.is_complex() or relative_position.dtype == torch.bool:
        raise TypeError(f"relative_position must be an integer tensor, got dtype {relative_position.dtype}")
    num_buckets, max_distance = _check_bucket_arguments(bidirectional, num_buckets, max_distance)
    # the result and its float32 intermediate have one entry per input entry, even for an expanded (stride-0) input
    check_fits(
        f"relative_position of shape {tuple(relative_position.shape)}",
        tuple(relative_position.shape),
        torch.int64,
        relative_position.device,
    )
    relative_position = relative_position.long()
    bucket = torch.zeros_like(relative_position)
    if bidirectional:
        num_buckets //= 2
        bucket = bucket + (relative_position > 0).long() * num_buckets  # future keys use the upper half
        distance = relative_position.abs()
    else:
        distance = (-relative_position).clamp(min=0)  # past keys only; the future collapses to 0
    max_exact = num_buckets // 2
    # clamp so that log() never sees 0; these entries take the exact branch below anyway
    scaled = distance.clamp(min=max_exact).float() / max_exact
    log_bucket = max_exact + (torch.log(scaled) / math.log(max_distance / max_exact) * (num_buckets - max_exact)).to(
        torch.long
    )
    log_bucket = log_bucket.clamp(max=num_buckets - 1)
    return bucket + torch.where(distance < max_exact, distance, log_bucket)


def shaw_relative_index(
    q_len: int, k_len: int | None = None, *, max_relative_position: int, device=None
) -> torch.Tensor:
    """Index of Shaw et al.'s relative embedding for each query/key pair, shape ``(s_q, s_k)``, int64.

    The relative position ``r = j - i`` is clipped to ``[-c, c]`` with
    ``c = max_relative_position`` and shifted by ``c``, so the result indexes a
    table of ``2c + 1`` learned vectors.
    """
    clip = check_positive_int("max_relative_position", max_relative_position)
    return relative_positions(q_len, k_len, device=device).clamp(-clip, clip) + clip


class T5RelativeBias(nn.Module):
    """A learned scalar bias per head and per relative-position bucket, added to attention logits.

    Args:
        n_heads: number of heads ``n_h``.
        num_buckets: number of buckets (32 in T5).
        max_distance: where the last bucket starts (128 in T5).
        bidirectional: ``True`` for an encoder, ``False`` for a causal decoder.
        device: where to build the table.

    The table is ``self.table``, an ``nn.Embedding(num_buckets, n_h)`` (T5 keeps one
    such table per stack and shares it across the stack's layers).

    ``forward(q_len, k_len=None)`` returns the bias ``(n_h, s_q, s_k)``, ready for
    :func:`posenc_lib.attention`'s ``bias=`` argument (broadcasts over ``b``).
    """

    def __init__(
        self, n_heads: int, num_buckets: int = 32, max_distance: int = 128, *, bidirectional: bool = True, device=None
    ):
        super().__init__()
        self.n_heads = check_positive_int("n_heads", n_heads)
        self.num_buckets, self.max_distance = _check_bucket_arguments(bidirectional, num_buckets, max_distance)
        self.bidirectional = bidirectional
        device = check_device(device)
        check_fits(
            f"num_buckets={self.num_buckets} and n_heads={self.n_heads}",
            (self.num_buckets, self.n_heads),
            torch.float32,
            device,
        )
        self.table = nn.Embedding(self.num_buckets, self.n_heads, device=device)
        nn.init.zeros_(self.table.weight)  # start with no preference; training shapes it

    def buckets(self, q_len: int, k_len: int | None = None) -> torch.Tensor:
        """Bucket index of every query/key pair, ``(s_q, s_k)``, int64."""
        return t5_relative_position_bucket(
            relative_positions(q_len, k_len, device=self.table.weight.device),
            bidirectional=self.bidirectional,
            num_buckets=self.num_buckets,
            max_distance=self.max_distance,
        )

    def forward(self, q_len: int, k_len: int | None = None) -> torch.Tensor:
        q_len = check_positive_int("q_len", q_len)
        k_len = q_len if k_len is None else check_positive_int("k_len", k_len)
        weight = self.table.weight
        check_fits(f"q_len={q_len} and k_len={k_len}", (self.n_heads, q_len, k_len), weight.dtype, weight.device)
        buckets = self.buckets(q_len, k_len)  # (s_q, s_k), on the table's device
        return self.table(buckets).permute(2, 0, 1)  # (s_q, s_k, n_h) -> (n_h, s_q, s_k)

    def extra_repr(self) -> str:
        return (
            f"n_heads={self.n_heads}, num_buckets={self.num_buckets}, max_distance={self.max_distance}, "
            f"bidirectional={self.bidirectional}"
        )
