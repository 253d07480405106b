"""Stretching RoPE to longer contexts: new rotation frequencies for old weights.

Every function here maps the original RoPE frequencies ``θ_ℓ``, a ``(d_h/2,)``
tensor (e.g. :func:`posenc_lib.rope_frequencies`), and the method's parameters
to new ``(d_h/2,)`` frequencies, float64, on the same device. Pass them to
:func:`posenc_lib.apply_rope` or :class:`posenc_lib.RotaryEmbedding` with
``frequencies=``. Notation: ``d_h`` head width, ``ℓ = 0 .. d_h/2 - 1`` the pair
index, ``α`` (``factor``) the extension factor, ``L`` the context length the
model was trained on.

- :func:`linear_scaling_frequencies`: position interpolation (Chen et al.,
  2023), every frequency divided by ``α``.
- :func:`ntk_aware_frequencies`: "NTK-aware" scaling (bloc97, 2023), a larger
  base: the fastest pair is untouched, the slowest divided by exactly ``α``.
- :func:`dynamic_ntk_frequencies`: NTK-aware scaling whose factor grows with
  the current sequence length (as in HF transformers' ``"dynamic"``).
- :func:`yarn_frequencies` and :func:`yarn_attention_factor`: YaRN (Peng et
  al., 2024): pairs that turn many times within ``L`` keep their frequency,
  pairs that turn less than once are interpolated, a linear ramp in between;
  plus a temperature on the attention logits.
- :func:`llama3_frequencies`: Llama 3.1's rule, the same idea with the ramp
  defined on wavelengths.

The YaRN attention factor multiplies *both* rotated queries and keys (or,
equivalently, cos and sin), so the logits are multiplied by its square::

    freqs = yarn_frequencies(rope_frequencies(d_h), factor=4, original_max_len=4096)
    a = yarn_attention_factor(4)
    q = apply_rope(q, frequencies=freqs) * a   # (b, n_h, s, d_h)
    k = apply_rope(k, frequencies=freqs) * a
    # or: RotaryEmbedding(d_h, frequencies=freqs, attention_factor=a).rotate_qk(q, k)
"""

from __future__ import annotations

import math

import torch

from ._checks import check_bool, check_frequencies, check_positive_float, check_positive_int
from .rope import wavelengths


def _check_frequencies(frequencies: object, *, min_pairs: int = 1, name: str = "frequencies") -> torch.Tensor:
    """Validate a ``(d_h/2,)`` tensor of positive, finite frequencies and return it as float64."""
    frequencies = check_frequencies(frequencies, name=name, positive=True)
    if frequencies.shape[0] < min_pairs:
        raise ValueError(f"{name} must hold at least {min_pairs} pairs, got {frequencies.shape[0]}")
    return frequencies


def _check_factor(factor: object) -> float:
    factor = check_positive_float("factor", factor)
    if factor < 1.0:
        raise ValueError(f"factor must be >= 1 (how many times longer the new context is), got {factor}")
    return factor


def rotations(frequencies: torch.Tensor, length: int) -> torch.Tensor:
    """How many full turns each pair makes over ``length`` positions, ``length θ_ℓ / 2π``, shape ``(d_h/2,)``.

    A pair with fewer than one turn over the training length has never seen
    most of its circle: that is where extrapolation fails first.
    """
    length = check_positive_int("length", length)
    return length * _check_frequencies(frequencies) / (2 * math.pi)


def unseen_arc(
    frequencies: torch.Tensor, seq_len: int, trained_frequencies: torch.Tensor, train_len: int
) -> torch.Tensor:
    """Radians of each pair's circle reached at inference but never in training, shape ``(d_h/2,)``.

    In training, pair ``ℓ`` swept the arc ``[0, (L - 1) θ_ℓ]`` (``L = train_len``,
    ``θ`` = ``trained_frequencies``); at inference, with ``frequencies`` ``θ'``,
    positions ``0 .. seq_len - 1`` sweep ``[0, (seq_len - 1) θ'_ℓ]``. Both arcs are
    capped at a full turn ``2π``. The result is the part of the second arc not
    covered by the first: 0 for a pair that already turned fully in training,
    and for a pair whose new angles stay inside the trained range. Divide by
    ``trained_frequencies`` to count it in positions' worth of rotation.
    """
    seq_len = check_positive_int("seq_len", seq_len)
    train_len = check_positive_int("train_len", train_len)
    frequencies = _check_frequencies(frequencies)
    trained_frequencies = _check_frequencies(trained_frequencies, name="trained_frequencies")
    if trained_frequencies.shape != frequencies.shape:
        raise ValueError(
            f"trained_frequencies must have the shape of frequencies {tuple(frequencies.shape)}, "
            f"got {tuple(trained_frequencies.shape)}"
        )
    full_turn = 2 * math.pi
    reached = ((seq_len - 1) * frequencies).clamp(max=full_turn)  # (d_h/2,)
    trained = ((train_len - 1) * trained_frequencies.to(frequencies.device)).clamp(max=full_turn)  # (d_h/2,)
    return (reached - trained).clamp(min=0.0)


def linear_scaling_frequencies(frequencies: torch.Tensor, factor: float) -> torch.Tensor:
    """Position interpolation: ``θ_ℓ / α`` for every pair, shape ``(d_h/2,)``.

    Rotating position ``p`` by ``p θ_ℓ / α`` is rotating position ``p / α`` by
    ``θ_ℓ``: a context ``α`` times longer is squeezed into the angle range seen in
    training. HF transformers calls this ``rope_type="linear"``.
    """
    return _check_frequencies(frequencies) / _check_factor(factor)


def ntk_aware_base(base: float, head_dim: int, factor: float) -> float:
    """The enlarged base of NTK-aware scaling, ``B α^(d_h / (d_h - 2))``."""
    base = check_positive_float("base", base)
    head_dim = check_positive_int("head_dim", head_dim)
    if head_dim < 4 or head_dim % 2:
        raise ValueError(f"head_dim must be even and >= 4, got {head_dim}")
    return base * _check_factor(factor) ** (head_dim / (head_dim - 2))


def ntk_aware_frequencies(frequencies: torch.Tensor, factor: float) -> torch.Tensor:
    """NTK-aware scaling: ``θ_ℓ α^(-2ℓ / (d_h - 2))``, shape ``(d_h/2,)``.

    For the standard ``θ_ℓ = B^(-2ℓ/d_h)`` this is the same as
    ``rope_frequencies(d_h, ntk_aware_base(B, d_h, α))``: pair 0 keeps its
    frequency, the last pair (``ℓ = d_h/2 - 1``) is divided by exactly ``α``, and
    the pairs in between by a geometric progression of factors. High
    frequencies, which resolve neighbouring tokens, are barely touched.
    """
    frequencies = _check_frequencies(frequencies, min_pairs=2)
    factor = _check_factor(factor)
    half = frequencies.shape[0]  # d_h/2
    pair = torch.arange(half, dtype=torch.float64, device=frequencies.device)  # (d_h/2,) = ℓ
    return frequencies * factor ** (-pair / (half - 1))  # -2ℓ/(d_h - 2) = -ℓ/(d_h/2 - 1)


def dynamic_ntk_frequencies(
    frequencies: torch.Tensor, seq_len: int, original_max_len: int, factor: float = 1.0
) -> torch.Tensor:
    """Dynamic NTK scaling: NTK-aware frequencies whose factor follows the sequence length.

    The effective factor is ``max(1, α s / L - (α - 1))`` with ``L = original_max_len``
    and ``s = seq_len`` (the rule of HF transformers' ``rope_type="dynamic"``):
    nothing changes up to ``L``; with ``α = 1`` the effective factor is simply ``s / L``.

    Args:
        frequencies: original frequencies ``(d_h/2,)``.
        seq_len: current sequence length (positions ``0 .. seq_len - 1``).
        original_max_len: the training context length ``L``.
        factor: the configured scaling factor ``α``, >= 1.
    """
    seq_len = check_positive_int("seq_len", seq_len)
    original_max_len = check_positive_int("original_max_len", original_max_len)
    factor = _check_factor(factor)
    effective = factor * max(seq_len, original_max_len) / original_max_len - (factor - 1)
    return ntk_aware_frequencies(frequencies, effective)


def _log_linear_index(frequencies: torch.Tensor, target: float) -> torch.Tensor:
    """Continuous pair index ``ℓ`` at which ``log θ_ℓ`` (linear in ``ℓ``) equals ``log target``, a 0-d tensor."""
    log_first, log_last = frequencies[0].log(), frequencies[-1].log()
    slope = (log_last - log_first) / (frequencies.shape[0] - 1)  # -2 ln(B) / d_h for the standard frequencies
    return (math.log(target) - log_first) / slope


def _check_geometric(frequencies: torch.Tensor) -> None:
    if frequencies.device.type == "meta":  # no values to check
        return
    ratios = frequencies[1:] / frequencies[:-1]
    if not torch.allclose(ratios, ratios[0].expand_as(ratios), rtol=1e-6, atol=0.0) or not bool((ratios < 1).all()):
        raise ValueError(
            "frequencies must be the standard decreasing geometric sequence θ_ℓ = B^(-2ℓ/d_h) "
            "(YaRN locates its ramp by the log-linear pair index)"
        )


def yarn_ramp(
    frequencies: torch.Tensor,
    original_max_len: int,
    *,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
    truncate: bool = True,
) -> torch.Tensor:
    """YaRN's interpolation weight per pair, shape ``(d_h/2,)``: 0 = keep ``θ_ℓ``, 1 = use ``θ_ℓ / α``.

    The boundaries are the (continuous) pair indices at which a pair turns
    ``beta_fast`` times, respectively ``beta_slow`` times, within
    ``L = original_max_len`` positions; for the standard frequencies
    ``d_h ln(L / (2π β)) / (2 ln B)``. With ``truncate`` they are rounded
    outwards (floor, ceil), and then clamped to ``[0, d_h - 1]``, as in the
    authors' code and HF transformers. The weight rises linearly in the pair
    index between them (the paper writes the ramp as a function of the number of
    turns; the reference code, followed here, ramps in the index).
    """
    frequencies = _check_frequencies(frequencies, min_pairs=2)
    _check_geometric(frequencies)
    original_max_len = check_positive_int("original_max_len", original_max_len)
    beta_fast = check_positive_float("beta_fast", beta_fast)
    beta_slow = check_positive_float("beta_slow", beta_slow)
    if beta_fast <= beta_slow:
        raise ValueError(f"beta_fast must be greater than beta_slow, got beta_fast={beta_fast}, beta_slow={beta_slow}")
    truncate = check_bool("truncate", truncate)
    half = frequencies.shape[0]
    # frequency at which a pair turns β times in L positions: β 2π / L
    low = _log_linear_index(frequencies, beta_fast * 2 * math.pi / original_max_len)  # 0-d
    high = _log_linear_index(frequencies, beta_slow * 2 * math.pi / original_max_len)  # 0-d
    if truncate:
        low, high = low.floor(), high.ceil()
    low, high = low.clamp(min=0), high.clamp(max=2 * half - 1)
    high = torch.where(low == high, high + 0.001, high)  # as in the reference code: avoid dividing by zero
    pair = torch.arange(half, dtype=torch.float64, device=frequencies.device)  # (d_h/2,) = ℓ
    return ((pair - low) / (high - low)).clamp(0.0, 1.0)


def yarn_frequencies(
    frequencies: torch.Tensor,
    factor: float,
    original_max_len: int,
    *,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
    truncate: bool = True,
) -> torch.Tensor:
    """YaRN ("NTK-by-parts") frequencies, shape ``(d_h/2,)``.

    ``θ'_ℓ = (1 - w_ℓ) θ_ℓ + w_ℓ θ_ℓ / α`` with ``w`` from :func:`yarn_ramp`:
    pairs that turn more than ``beta_fast`` (32) times within the training length
    ``L`` are left alone, pairs that turn less than ``beta_slow`` (1) times are
    interpolated like position interpolation, and the pairs in between are
    blended. Use it together with :func:`yarn_attention_factor`.

    Args:
        frequencies: the standard frequencies ``(d_h/2,)``.
        factor: ``α``, new context length / ``L``, >= 1.
        original_max_len: ``L``.
        beta_fast, beta_slow, truncate: see :func:`yarn_ramp`.
    """
    factor = _check_factor(factor)
    ramp = yarn_ramp(frequencies, original_max_len, beta_fast=beta_fast, beta_slow=beta_slow, truncate=truncate)
    frequencies = _check_frequencies(frequencies)
    return frequencies * (1 - ramp) + (frequencies / factor) * ramp


def yarn_attention_factor(factor: float, *, mscale: float | None = None, mscale_all_dim: float | None = None) -> float:
    """YaRN's magnitude factor ``0.1 ln(α) + 1`` (1 for ``α <= 1``).

    Multiply the rotated queries *and* keys by it (HF transformers multiplies cos
    and sin; :class:`posenc_lib.RotaryEmbedding` takes it as ``attention_factor``),
    so that the logits are multiplied by its square, which the paper writes as
    ``1 / t`` with ``sqrt(1/t) = 0.1 ln(α) + 1``: a slightly sharper softmax to
    offset the entropy added by a longer context.

    DeepSeek-style configurations give ``mscale`` and ``mscale_all_dim``; then
    the factor is ``m(α, mscale) / m(α, mscale_all_dim)`` with
    ``m(α, c) = 0.1 c ln(α) + 1``, as in HF transformers.
    """
    factor = check_positive_float("factor", factor)

    def magnitude(scale: float, coefficient: float = 1.0) -> float:
        return 1.0 if scale <= 1 else 0.1 * coefficient * math.log(scale) + 1.0

    if (mscale is None) != (mscale_all_dim is None):
        raise ValueError("give both mscale and mscale_all_dim, or neither")
    if mscale is not None and mscale_all_dim is not None:
        mscale = check_positive_float("mscale", mscale)
        mscale_all_dim = check_positive_float("mscale_all_dim", mscale_all_dim)
        return magnitude(factor, mscale) / magnitude(factor, mscale_all_dim)
    return magnitude(factor)


def llama3_frequencies(
    frequencies: torch.Tensor,
    factor: float = 8.0,
    original_max_len: int = 8192,
    *,
    low_freq_factor: float = 1.0,
    high_freq_factor: float = 4.0,
) -> torch.Tensor:
    """Llama 3.1's frequency scaling, shape ``(d_h/2,)``. Defaults are Llama 3.1's released settings.

    With wavelength ``λ_ℓ = 2π / θ_ℓ`` and ``L = original_max_len``:

    - ``λ_ℓ < L / high_freq_factor`` (more than 4 turns in ``L``): unchanged;
    - ``λ_ℓ > L / low_freq_factor`` (less than 1 turn): ``θ_ℓ / α``;
    - in between: ``(1 - g) θ_ℓ / α + g θ_ℓ`` with
      ``g = (L / λ_ℓ - low_freq_factor) / (high_freq_factor - low_freq_factor)``,
      a ramp that is linear in the number of turns ``L / λ_ℓ``.
    """
    frequencies = _check_frequencies(frequencies)
    factor = _check_factor(factor)
    original_max_len = check_positive_int("original_max_len", original_max_len)
    low_freq_factor = check_positive_float("low_freq_factor", low_freq_factor)
    high_freq_factor = check_positive_float("high_freq_factor", high_freq_factor)
    if high_freq_factor <= low_freq_factor:
        raise ValueError(
            f"high_freq_factor must be greater than low_freq_factor, got {high_freq_factor} <= {low_freq_factor}"
        )
    turns = original_max_len / wavelengths(frequencies)  # (d_h/2,) turns within the training length, L / λ_ℓ
    blend = ((turns - low_freq_factor) / (high_freq_factor - low_freq_factor)).clamp(0.0, 1.0)  # 0 -> / α, 1 -> keep
    return (1 - blend) * frequencies / factor + blend * frequencies
