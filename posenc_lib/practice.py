"""Practice around an encoding: batches, caches, attention kernels and the choice of RoPE's base.

What a reader meets when a chosen encoding goes into a real model, each as a small computation:

- **Batches.** A left-padded batch and a packed row (several documents in one row) need the right
  ``position_ids`` and the right mask: :func:`position_ids_from_mask`, :func:`padded_mask`,
  :func:`packed_position_ids`, :func:`packed_mask`; :class:`PositionedHead` (one float64 head with a
  learned table or RoPE) and :func:`batching_gaps` compare a batch with separate runs.
- **Caches that evict.** A cache that keeps ``n_sink`` first tokens and the ``window`` most recent
  ones (StreamingLLM's attention sinks) gives the kept tokens new positions inside the cache:
  :func:`sink_cache_positions`; :func:`reposition_keys` turns cached RoPE keys to them.
- **Kernels.** :func:`sdpa_support` asks PyTorch's ``scaled_dot_product_attention`` backends which
  way of giving position each accepts, and checks every accepted result against the formula.
- **The base.** :func:`longest_wavelength` and :func:`smallest_rope_base`: the slowest pair's
  wavelength ``2π B^((d_h-2)/d_h)`` against a target context ``L``.

Shapes: ``b`` batch, ``n_h`` heads, ``s`` sequence length, ``d`` width (``d_h`` of a head).
Masks are boolean, ``True`` where a query may attend, shaped ``(b, 1, s, s)`` so they broadcast over
the heads of ``(b, n_h, s, s)`` scores.
"""

from __future__ import annotations

import math
import warnings

import torch
from torch import nn

from ._checks import (
    check_choice,
    check_device,
    check_even_int,
    check_fits,
    check_floating,
    check_int,
    check_nonnegative_int,
    check_positive_float,
    check_positive_int,
    check_same_device,
    check_same_dtype,
    check_tensor,
)
from .alibi import alibi_bias
from .attention import attention
from .relative import T5RelativeBias
from .rope import DEFAULT_BASE, LAYOUTS, apply_rope, rope_angles, rope_frequencies, rotate_pairs

SCHEMES = ("learned", "rope")

# the ways of giving position that sdpa_support tries, in its order
SDPA_CASES = (
    "NoPE, is_causal",
    "RoPE: q, k rotated, is_causal",
    "ALiBi: float mask (1, n_h, s, s)",
    "ALiBi: float mask (n_h, s, s)",
    "T5: float mask (1, n_h, s, s)",
    "padding: bool mask (b, 1, s, s)",
)
SDPA_BACKENDS = ("math", "flash", "efficient", "cudnn")


# --- position ids and masks of a batch ---------------------------------------------------------


def _check_attention_mask(attention_mask: object) -> torch.Tensor:
    """``attention_mask`` ``(b, s)`` of 0/1 (or bool) as bool; every row keeps at least one real token."""
    mask = check_tensor("attention_mask", attention_mask, min_dim=2)
    if mask.dim() != 2:
        raise ValueError(f"attention_mask must have shape (b, s), got shape {tuple(mask.shape)}")
    if mask.is_floating_point() or mask.is_complex():
        raise TypeError(f"attention_mask must be a bool or integer tensor of 0 and 1, got dtype {mask.dtype}")
    if mask.device.type == "meta":  # no values to check: the shapes still come out right
        return mask if mask.dtype == torch.bool else mask == 1
    if mask.dtype != torch.bool:
        if not bool(((mask == 0) | (mask == 1)).all()):
            raise ValueError("attention_mask must hold only 0 (padding) and 1 (a real token)")
        mask = mask == 1
    if mask.shape[1] == 0 or not bool(mask.any(dim=1).all()):
        raise ValueError("attention_mask must leave every row at least one real token (a 1)")
    return mask


def position_ids_from_mask(attention_mask: torch.Tensor) -> torch.Tensor:
    """Positions that count only the real tokens of each row, ``(b, s)`` int64.

    ``attention_mask`` ``(b, s)``: 1 (or ``True``) for a real token, 0 for padding. The real tokens of
    a row get ``0, 1, ..., n - 1`` in order, wherever the padding is (left padding puts it first);
    a padding token gets 0 (its value does not matter once :func:`padded_mask` hides it).
    """
    real = _check_attention_mask(attention_mask)
    counted = real.long().cumsum(dim=1) - 1  # (b, s): real tokens before and at each place, minus one
    return counted.clamp(min=0).masked_fill(~real, 0)  # (b, s)


def padded_mask(attention_mask: torch.Tensor) -> torch.Tensor:
    """Causal mask of a padded batch, ``(b, 1, s, s)`` bool: query ``i`` may see key ``j <= i`` if ``j`` is real.

    A padding query sees only itself, so that no row is empty (its output is ignored).
    """
    real = _check_attention_mask(attention_mask)
    seq_len = real.shape[1]
    causal = torch.ones(seq_len, seq_len, dtype=torch.bool, device=real.device).tril()  # (s, s)
    diagonal = torch.eye(seq_len, dtype=torch.bool, device=real.device)  # (s, s)
    return (causal & (real[:, None, :] | diagonal))[:, None]  # (b, 1, s, s)


def _check_document_ids(document_ids: object) -> torch.Tensor:
    """``document_ids`` ``(b, s)`` (or ``(s,)``, one row) of integers, as int64 ``(b, s)``."""
    ids = check_tensor("document_ids", document_ids)
    if ids.dim() == 1:
        ids = ids[None]  # (1, s)
    if ids.dim() != 2:
        raise ValueError(f"document_ids must have shape (b, s) or (s,), got shape {tuple(ids.shape)}")
    if ids.is_floating_point() or ids.is_complex() or ids.dtype == torch.bool:
        raise TypeError(f"document_ids must be an integer tensor (one id per token), got dtype {ids.dtype}")
    if ids.shape[1] == 0:
        raise ValueError("document_ids must hold at least one token per row, got s = 0")
    return ids.long()


def _document_starts(ids: torch.Tensor) -> torch.Tensor:
    """``(b, s)`` bool, ``True`` where a new document starts (the first token, or the id changes)."""
    starts = torch.ones_like(ids, dtype=torch.bool)  # (b, s)
    starts[:, 1:] = ids[:, 1:] != ids[:, :-1]
    return starts


def packed_position_ids(document_ids: torch.Tensor) -> torch.Tensor:
    """Positions restarting at 0 at each document of a packed row, ``(b, s)`` int64.

    ``document_ids`` ``(b, s)`` or ``(s,)``: which document each token belongs to; a document is a run
    of equal ids (``[0, 0, 0, 1, 1]`` packs a document of 3 tokens and one of 2). A 1-D input gives
    one row, ``(1, s)``.
    """
    ids = _check_document_ids(document_ids)
    index = torch.arange(ids.shape[1], device=ids.device).expand_as(ids)  # (b, s): 0 .. s-1
    start = torch.where(_document_starts(ids), index, 0).cummax(dim=1).values  # (b, s): its document's start
    return index - start


def packed_mask(document_ids: torch.Tensor) -> torch.Tensor:
    """Block-diagonal causal mask of a packed row, ``(b, 1, s, s)`` bool.

    Query ``i`` may see key ``j <= i`` of its own document only (a document is a run of equal ids).
    """
    ids = _check_document_ids(document_ids)
    run = _document_starts(ids).long().cumsum(dim=1)  # (b, s): runs numbered 1, 2, ...
    seq_len = ids.shape[1]
    causal = torch.ones(seq_len, seq_len, dtype=torch.bool, device=ids.device).tril()  # (s, s)
    same_document = run[:, :, None] == run[:, None, :]  # (b, s, s)
    return (same_document & causal)[:, None]  # (b, 1, s, s)


# --- one head with a position scheme --------------------------------------------------------------


class PositionedHead(nn.Module):
    """One attention head in float64 whose position comes from a learned table or from RoPE.

    Args:
        d_model: width ``d`` of the inputs (even for RoPE; the head is as wide as its input).
        scheme: ``"learned"`` (a table of ``max_len`` random rows added to the input) or ``"rope"``
            (queries and keys rotated, base 10 000, half layout).
        max_len: rows of the learned table (positions ``0 .. max_len - 1``).
        seed: seeds the random weights, so two heads of one seed hold the same ``W_q, W_k, W_v``.
        device: where to build the weights.

    ``forward(x, position_ids=None, mask=None)``: ``x`` ``(b, s, d)`` float64; ``position_ids``
    ``(b, s)`` integers (default ``0 .. s-1`` in every row); ``mask`` ``(b, 1, s, s)`` bool (default
    causal). Returns the head's output ``(b, s, d)``.
    """

    def __init__(self, d_model: int, *, scheme: str = "learned", max_len: int = 64, seed: int = 0, device=None):
        super().__init__()
        self.scheme = check_choice("scheme", scheme, SCHEMES)
        self.d_model = (
            check_even_int("d_model", d_model) if scheme == "rope" else check_positive_int("d_model", d_model)
        )
        self.max_len = check_positive_int("max_len", max_len)
        device = check_device(device)
        check_fits(f"max_len={max_len} and d_model={d_model}", (self.max_len, self.d_model), torch.float64, device)
        generator = torch.Generator().manual_seed(check_int("seed", seed))

        def random(*shape: int) -> torch.Tensor:
            return torch.randn(*shape, generator=generator, dtype=torch.float64).to(device)  # drawn on the CPU

        scale = self.d_model**-0.5
        self.w_q, self.w_k, self.w_v = (nn.Parameter(random(d_model, d_model) * scale) for _ in range(3))
        self.table = (
            nn.Parameter(random(self.max_len, self.d_model)) if self.scheme == "learned" else None
        )  # (max_len, d)

    def forward(
        self, x: torch.Tensor, position_ids: torch.Tensor | None = None, mask: torch.Tensor | None = None
    ) -> torch.Tensor:
        x = check_floating("x", check_tensor("x", x, min_dim=3))
        if x.dim() != 3 or x.shape[-1] != self.d_model:
            raise ValueError(f"x must have shape (b, s, d) with d = {self.d_model}, got {tuple(x.shape)}")
        check_same_dtype("x", x, torch.float64, "PositionedHead")
        check_same_device("x", x, self.w_q.device, "PositionedHead")
        batch, seq_len, _ = x.shape
        if position_ids is None:
            position_ids = torch.arange(seq_len, device=x.device).expand(batch, seq_len)  # (b, s)
        position_ids = check_tensor("position_ids", position_ids, min_dim=2)
        if tuple(position_ids.shape) != (batch, seq_len) or position_ids.is_floating_point():
            raise ValueError(f"position_ids must be an integer tensor of shape (b, s) = {(batch, seq_len)}")
        position_ids = position_ids.to(x.device).long()
        if mask is None:
            mask = torch.ones(seq_len, seq_len, dtype=torch.bool, device=x.device).tril()[None, None]  # (1, 1, s, s)
        mask = check_tensor("mask", mask, min_dim=4)
        if mask.dtype != torch.bool:
            raise TypeError(f"mask must be a bool tensor (True = may attend), got dtype {mask.dtype}")
        if self.table is not None:
            if int(position_ids.min()) < 0 or int(position_ids.max()) >= self.max_len:
                raise ValueError(f"position_ids must lie in 0 .. max_len - 1 = {self.max_len - 1} for a learned table")
            x = x + self.table[position_ids]  # (b, s, d): each token plus its position's row
        q, k, v = (x @ w for w in (self.w_q, self.w_k, self.w_v))  # (b, s, d) each
        if self.scheme == "rope":
            frequencies = rope_frequencies(self.d_model, device=x.device)  # (d/2,)
            angles = rope_angles(position_ids.flatten(), frequencies).view(batch, seq_len, -1)  # (b, s, d/2)
            q, k = (rotate_pairs(t, angles.cos(), angles.sin()) for t in (q, k))  # rotated by their own positions
        out, _ = attention(q[:, None], k[:, None], v[:, None], bias=mask.to(x.device))  # (b, 1, s, d)
        return out[:, 0]  # (b, s, d)


BATCH_LAYOUTS = ("left-padded", "packed")
BATCH_CHOICES = ("causal, 0..s-1", "masked, 0..s-1", "masked, counted")


def batching_gaps(head: PositionedHead, sequences: list[torch.Tensor], layout: str) -> dict[str, float]:
    """Largest difference between a batch's outputs and each sequence run on its own, for three choices.

    Args:
        head: the :class:`PositionedHead` to run.
        sequences: float64 tensors ``(s_n, d)``, one per sequence (at least two).
        layout: ``"left-padded"`` (one row per sequence, padded on the left with zero vectors to the
            longest) or ``"packed"`` (all sequences one after the other in a single row).

    Returns ``{choice: gap}`` over the real tokens, for the choices of :data:`BATCH_CHOICES`: a plain
    causal mask with positions ``0 .. s-1``; the padding (or block-diagonal) mask with positions
    ``0 .. s-1``; that mask with positions counted per sequence (:func:`position_ids_from_mask`,
    :func:`packed_position_ids`).
    """
    if not isinstance(head, PositionedHead):
        raise TypeError(f"head must be a PositionedHead, got {type(head).__name__}")
    layout = check_choice("layout", layout, BATCH_LAYOUTS)
    if not isinstance(sequences, (list, tuple)) or len(sequences) < 2:
        raise ValueError("sequences must be a list of at least two tensors (s_n, d)")
    for n, seq in enumerate(sequences):
        seq = check_tensor(f"sequences[{n}]", seq, min_dim=2)
        if seq.dim() != 2 or seq.shape[-1] != head.d_model or seq.shape[0] == 0:
            raise ValueError(f"sequences[{n}] must have shape (s_n, d) with d = {head.d_model}, got {tuple(seq.shape)}")
    alone = [head(seq[None])[0] for seq in sequences]  # each (s_n, d), run on its own
    lengths = [seq.shape[0] for seq in sequences]
    device = sequences[0].device
    if layout == "left-padded":
        longest = max(lengths)
        x = torch.stack([torch.cat([seq.new_zeros(longest - len(seq), seq.shape[1]), seq]) for seq in sequences])
        real = torch.stack([torch.arange(longest, device=device) >= longest - n for n in lengths])  # (b, s)
        mask, counted = padded_mask(real), position_ids_from_mask(real)  # (b, 1, s, s), (b, s)
        pieces = [(row, slice(longest - n, longest)) for row, n in enumerate(lengths)]
    else:
        x = torch.cat(list(sequences))[None]  # (1, s, d): the sequences one after the other
        ids = torch.repeat_interleave(torch.arange(len(lengths), device=device), torch.tensor(lengths, device=device))
        mask, counted = packed_mask(ids), packed_position_ids(ids)  # (1, 1, s, s), (1, s)
        ends = torch.tensor(lengths).cumsum(0).tolist()
        pieces = [(0, slice(end - n, end)) for n, end in zip(lengths, ends, strict=True)]
    runs = {"causal, 0..s-1": head(x), "masked, 0..s-1": head(x, mask=mask), "masked, counted": head(x, counted, mask)}
    return {
        choice: max((out[row, part] - ref).abs().max().item() for (row, part), ref in zip(pieces, alone, strict=True))
        for choice, out in runs.items()
    }


# --- a cache that keeps sinks and a window --------------------------------------------------------


def sink_cache_positions(seq_len: int, n_sink: int, window: int, *, device=None) -> tuple[torch.Tensor, torch.Tensor]:
    """Which tokens a sink cache keeps, and their positions inside the cache.

    After ``seq_len`` tokens a cache that keeps the first ``n_sink`` tokens (the attention sinks) and
    the ``window`` most recent ones holds ``c = min(seq_len, n_sink + window)`` of them. Returns
    ``(kept, new)``, both ``(c,)`` int64: ``kept`` the original positions of the kept tokens,
    ``new = 0 .. c-1`` the positions they take inside the cache.
    """
    seq_len = check_positive_int("seq_len", seq_len)
    n_sink = check_nonnegative_int("n_sink", n_sink)
    window = check_positive_int("window", window)
    device = check_device(device)
    everything = torch.arange(seq_len, device=device)  # (s,)
    if seq_len <= n_sink + window:
        return everything, everything.clone()
    kept = torch.cat([everything[:n_sink], everything[seq_len - window :]])  # (c,)
    return kept, torch.arange(kept.shape[0], device=device)


def reposition_keys(
    keys: torch.Tensor,
    old_positions: torch.Tensor,
    new_positions: torch.Tensor,
    *,
    base: float = DEFAULT_BASE,
    layout: str = "half",
    frequencies: torch.Tensor | None = None,
) -> torch.Tensor:
    """Turn keys rotated at ``old_positions`` into keys rotated at ``new_positions``.

    Rotations compose, ``R(new) k = R(new - old) R(old) k``, so a cached key is rotated once more, by
    ``new - old`` (negative when it moves back), without the unrotated key.

    Args:
        keys: RoPE keys ``(..., s, d_h)``, e.g. ``(b, n_h, s, d_h)``, rotated at ``old_positions``.
        old_positions, new_positions: ``(s,)`` integer positions.
        base, layout, frequencies: as in :func:`posenc_lib.apply_rope`.

    Returns a tensor shaped and typed like ``keys``.
    """
    keys = check_floating("keys", check_tensor("keys", keys, min_dim=2))
    old = check_tensor("old_positions", old_positions)
    new = check_tensor("new_positions", new_positions)
    for name, value in (("old_positions", old), ("new_positions", new)):
        if value.dim() != 1 or value.shape[0] != keys.shape[-2]:
            raise ValueError(f"{name} must have shape (s,) = ({keys.shape[-2]},), got {tuple(value.shape)}")
        if value.is_floating_point() or value.is_complex() or value.dtype == torch.bool:
            raise TypeError(f"{name} must be an integer tensor, got dtype {value.dtype}")
    layout = check_choice("layout", layout, LAYOUTS)
    shift = new.to(keys.device).long() - old.to(keys.device).long()  # (s,): how far each key moves
    return apply_rope(keys, shift, base=base, layout=layout, frequencies=frequencies)


# --- PyTorch's attention kernels -------------------------------------------------------------------


def _sdpa_inputs(seq_len: int, n_heads: int, head_dim: int, seed: int, device: torch.device) -> dict:
    """For each case of :data:`SDPA_CASES`: the SDPA arguments and the reference output, float64."""
    generator = torch.Generator().manual_seed(seed)
    q, k, v = torch.randn(3, 2, n_heads, seq_len, head_dim, generator=generator, dtype=torch.float64).to(device)
    alibi = alibi_bias(n_heads, seq_len, dtype=torch.float64, device=device)  # (n_h, s, s), -inf above the diagonal
    t5 = T5RelativeBias(n_heads, bidirectional=False).to(device=device, dtype=torch.float64)
    with torch.no_grad():
        t5.table.weight.normal_(generator=generator.manual_seed(seed + 1))  # a trained-looking bias
        t5_bias = t5(seq_len)  # (n_h, s, s)
    causal = torch.ones(seq_len, seq_len, dtype=torch.bool, device=device).tril()  # (s, s)
    t5_bias = t5_bias.masked_fill(~causal, float("-inf"))
    real = torch.ones(2, seq_len, dtype=torch.bool, device=device)
    real[1, : seq_len // 2] = False  # the second row is left-padded
    padding = padded_mask(real)  # (b, 1, s, s)
    q_rot, k_rot = apply_rope(q), apply_rope(k)  # (b, n_h, s, d_h)
    return {
        "NoPE, is_causal": ((q, k, v), {"is_causal": True}, attention(q, k, v, causal=True)[0]),
        "RoPE: q, k rotated, is_causal": (
            (q_rot, k_rot, v),
            {"is_causal": True},
            attention(q_rot, k_rot, v, causal=True)[0],
        ),
        "ALiBi: float mask (1, n_h, s, s)": ((q, k, v), {"attn_mask": alibi[None]}, attention(q, k, v, bias=alibi)[0]),
        "ALiBi: float mask (n_h, s, s)": ((q, k, v), {"attn_mask": alibi}, attention(q, k, v, bias=alibi)[0]),
        "T5: float mask (1, n_h, s, s)": ((q, k, v), {"attn_mask": t5_bias[None]}, attention(q, k, v, bias=t5_bias)[0]),
        "padding: bool mask (b, 1, s, s)": ((q, k, v), {"attn_mask": padding}, attention(q, k, v, bias=padding)[0]),
    }


def sdpa_support(
    *, seq_len: int = 8, n_heads: int = 4, head_dim: int = 16, seed: int = 0, device="cpu"
) -> dict[str, dict[str, str]]:
    """Which ``torch.nn.functional.scaled_dot_product_attention`` backend accepts which way of giving position.

    For every case of :data:`SDPA_CASES` (float64 ``q, k, v`` of shape ``(2, n_h, s, d_h)``) and every
    backend of :data:`SDPA_BACKENDS`, the call is forced onto that backend with
    ``torch.nn.attention.sdpa_kernel`` and its output compared with :func:`posenc_lib.attention`.

    Returns ``{case: {backend: verdict}}``, verdict ``"agrees"`` (accepted, within 1e-12 of the formula),
    ``"differs"`` (accepted, but not within 1e-12) or ``"refused"`` (the backend raised: no kernel for
    this input on ``device``). The answer depends on the device and the PyTorch build, not on
    timing: on a CPU only the math and flash backends have kernels.
    """
    from torch.nn.attention import SDPBackend, sdpa_kernel

    seq_len = check_positive_int("seq_len", seq_len, maximum=4096)
    n_heads = check_positive_int("n_heads", n_heads, maximum=64)
    head_dim = check_even_int("head_dim", head_dim)
    device = check_device(device)
    backends = {
        "math": SDPBackend.MATH,
        "flash": SDPBackend.FLASH_ATTENTION,
        "efficient": SDPBackend.EFFICIENT_ATTENTION,
        "cudnn": SDPBackend.CUDNN_ATTENTION,
    }
    verdicts: dict[str, dict[str, str]] = {}
    for case, (tensors, options, expected) in _sdpa_inputs(
        seq_len, n_heads, head_dim, check_int("seed", seed), device
    ).items():
        verdicts[case] = {}
        for name, backend in backends.items():
            try:
                with warnings.catch_warnings(), sdpa_kernel(backend):
                    warnings.simplefilter("ignore")  # a refused kernel warns before it raises
                    out = torch.nn.functional.scaled_dot_product_attention(*tensors, **options)  # (b, n_h, s, d_h)
            except RuntimeError:
                verdicts[case][name] = "refused"
                continue
            agrees = bool((out - expected).abs().max() < 1e-12)  # float64 rounding
            verdicts[case][name] = "agrees" if agrees else "differs"
    return verdicts


# --- the base of RoPE for a target context ----------------------------------------------------------


def longest_wavelength(head_dim: int, base: float = DEFAULT_BASE) -> float:
    """Wavelength of RoPE's slowest pair, ``λ_{d_h/2-1} = 2π B^((d_h-2)/d_h)``, in positions."""
    head_dim = check_even_int("head_dim", head_dim)
    base = check_positive_float("base", base)
    return 2 * math.pi * base ** ((head_dim - 2) / head_dim)


def smallest_rope_base(context: float, head_dim: int) -> float:
    """The base ``B = (L / 2π)^(d_h/(d_h-2))`` at which the slowest pair's wavelength equals ``context`` ``L``.

    With any larger base the slowest pair turns less than once over ``L`` positions. Needs
    ``d_h >= 4`` (with ``d_h = 2`` the only pair has ``θ_0 = 1`` whatever the base) and ``L > 2π``
    (pair 0 alone already turns once in 2π positions).
    """
    context = check_positive_float("context", context)
    head_dim = check_even_int("head_dim", head_dim)
    if head_dim < 4:
        raise ValueError(f"head_dim must be at least 4 (with 2 the only pair ignores the base), got {head_dim}")
    if context <= 2 * math.pi:
        raise ValueError(f"context must exceed 2π ≈ 6.28 positions (pair 0 turns once in 2π), got {context}")
    return (context / (2 * math.pi)) ** (head_dim / (head_dim - 2))
