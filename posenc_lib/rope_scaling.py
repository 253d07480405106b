"""Stretching RoPE to longer contexts: new rotation frequencies for old weights.

Every function here maps the original RoPE frequencies ``theta_k``, a ``(d/2,)``
tensor (e.g. :func:`posenc_lib.rope_frequencies`), and the method's parameters
to new ``(d/2,)`` frequencies, float64. Pass them to
:func:`posenc_lib.apply_rope` or :class:`posenc_lib.RotaryEmbedding` with
``frequencies=``. Notation: ``d`` head width, ``k = 0 .. d/2 - 1`` the pair
index, ``s`` the extension factor, ``L`` the context length the model was
trained on.

- :func:`linear_scaling_frequencies`: position interpolation (Chen et al.,
  2023), every frequency divided by ``s``.
- :func:`ntk_aware_frequencies`: "NTK-aware" scaling (bloc97, 2023), a larger
  base: the fastest pair is untouched, the slowest divided by exactly ``s``.
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

    freqs = yarn_frequencies(rope_frequencies(d), factor=4, original_max_len=4096)
    a = yarn_attention_factor(4)
    q = apply_rope(q, frequencies=freqs) * a   # (b, h, s, d)
    k = apply_rope(k, frequencies=freqs) * a
"""

from __future__ import annotations

import math

import torch

from ._checks import check_positive_float, check_positive_int, check_tensor


def _check_frequencies(frequencies: object, *, min_pairs: int = 1, name: str = "frequencies") -> torch.Tensor:
    """Validate a ``(d/2,)`` tensor of positive, finite frequencies and return it as float64."""
    frequencies = check_tensor(name, frequencies)
    if frequencies.dim() != 1:
        raise ValueError(f"{name} must be a 1-D tensor of shape (d/2,), got shape {tuple(frequencies.shape)}")
    if not frequencies.is_floating_point():
        raise TypeError(f"{name} must have a floating-point dtype, got {frequencies.dtype}")
    if frequencies.shape[0] < min_pairs:
        raise ValueError(f"{name} must hold at least {min_pairs} pairs, got {frequencies.shape[0]}")
    frequencies = frequencies.detach().to(torch.float64)
    if not bool(torch.isfinite(frequencies).all()) or not bool((frequencies > 0).all()):
        raise ValueError(f"{name} must be finite and > 0")
    return frequencies


def _check_factor(factor: object) -> float:
    factor = check_positive_float("factor", factor)
    if factor < 1.0:
        raise ValueError(f"factor must be >= 1 (how many times longer the new context is), got {factor}")
    return factor


def wavelengths(frequencies: torch.Tensor) -> torch.Tensor:
    """Tokens per full turn of each pair, ``2 pi / theta_k``, shape ``(d/2,)``, float64."""
    return 2 * math.pi / _check_frequencies(frequencies)


def rotations(frequencies: torch.Tensor, length: int) -> torch.Tensor:
    """How many full turns each pair makes over ``length`` positions, ``length * theta_k / (2 pi)``, ``(d/2,)``.

    A pair with fewer than one turn over the training length has never seen
    most of its circle: that is where extrapolation fails first.
    """
    length = check_positive_int("length", length)
    return length * _check_frequencies(frequencies) / (2 * math.pi)


def unseen_arc(
    frequencies: torch.Tensor, seq_len: int, trained_frequencies: torch.Tensor, train_len: int
) -> torch.Tensor:
    """Radians of each pair's circle reached at inference but never in training, shape ``(d/2,)``.

    In training, pair ``k`` swept the arc ``[0, (train_len - 1) * theta_k]`` with
    ``trained_frequencies``; at inference, with ``frequencies``, positions
    ``0 .. seq_len - 1`` sweep ``[0, (seq_len - 1) * theta'_k]``. Both arcs are
    capped at a full turn ``2 pi``. The result is the part of the second arc not
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
    reached = ((seq_len - 1) * frequencies).clamp(max=full_turn)  # (d/2,)
    trained = ((train_len - 1) * trained_frequencies).clamp(max=full_turn)  # (d/2,)
    return (reached - trained).clamp(min=0.0)


def linear_scaling_frequencies(frequencies: torch.Tensor, factor: float) -> torch.Tensor:
    """Position interpolation: ``theta_k / s`` for every pair, shape ``(d/2,)``.

    Rotating position ``p`` by ``p * theta_k / s`` is rotating position ``p / s``
    by ``theta_k``: a context ``s`` times longer is squeezed into the angle range
    seen in training. HF transformers calls this ``rope_type="linear"``.
    """
    return _check_frequencies(frequencies) / _check_factor(factor)


def ntk_aware_base(base: float, head_dim: int, factor: float) -> float:
    """The enlarged base of NTK-aware scaling, ``base * s ** (d / (d - 2))``."""
    base = check_positive_float("base", base)
    head_dim = check_positive_int("head_dim", head_dim)
    if head_dim < 4 or head_dim % 2:
        raise ValueError(f"head_dim must be even and >= 4, got {head_dim}")
    return base * _check_factor(factor) ** (head_dim / (head_dim - 2))


def ntk_aware_frequencies(frequencies: torch.Tensor, factor: float) -> torch.Tensor:
    """NTK-aware scaling: ``theta_k * s ** (-2k / (d - 2))``, shape ``(d/2,)``.

    For the standard ``theta_k = b ** (-2k/d)`` this is the same as
    ``rope_frequencies(d, ntk_aware_base(b, d, s))``: pair 0 keeps its
    frequency, the last pair (``k = d/2 - 1``) is divided by exactly ``s``, and
    the pairs in between by a geometric progression of factors. High
    frequencies, which resolve neighbouring tokens, are barely touched.
    """
    frequencies = _check_frequencies(frequencies, min_pairs=2)
    factor = _check_factor(factor)
    half = frequencies.shape[0]  # d/2
    pair_index = torch.arange(half, dtype=torch.float64)  # (d/2,)
    return frequencies * factor ** (-pair_index / (half - 1))  # -2k/(d-2) = -k/(d/2 - 1)


def dynamic_ntk_frequencies(
    frequencies: torch.Tensor, seq_len: int, original_max_len: int, factor: float = 1.0
) -> torch.Tensor:
    """Dynamic NTK scaling: NTK-aware frequencies whose factor follows the sequence length.

    The effective factor is ``max(1, factor * seq_len / L - (factor - 1))``
    with ``L = original_max_len`` (the rule of HF transformers'
    ``rope_type="dynamic"``): nothing changes up to ``L``; with ``factor=1``
    the effective factor is simply ``seq_len / L``.

    Args:
        frequencies: original frequencies ``(d/2,)``.
        seq_len: current sequence length (positions ``0 .. seq_len - 1``).
        original_max_len: the training context length ``L``.
        factor: the configured scaling factor, >= 1.
    """
    seq_len = check_positive_int("seq_len", seq_len)
    original_max_len = check_positive_int("original_max_len", original_max_len)
    factor = _check_factor(factor)
    effective = factor * max(seq_len, original_max_len) / original_max_len - (factor - 1)
    return ntk_aware_frequencies(frequencies, effective)


def _log_linear_index(frequencies: torch.Tensor, target: float) -> float:
    """Continuous pair index ``k`` at which ``log theta_k`` (linear in ``k``) equals ``log target``."""
    log_first, log_last = math.log(frequencies[0].item()), math.log(frequencies[-1].item())
    slope = (log_last - log_first) / (frequencies.shape[0] - 1)  # -2 ln(b) / d for the standard frequencies
    return (math.log(target) - log_first) / slope


def _check_geometric(frequencies: torch.Tensor) -> None:
    ratios = frequencies[1:] / frequencies[:-1]
    if not torch.allclose(ratios, ratios[0].expand_as(ratios), rtol=1e-6, atol=0.0) or not bool((ratios < 1).all()):
        raise ValueError(
            "frequencies must be the standard decreasing geometric sequence theta_k = base ** (-2k/d) "
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
    """YaRN's interpolation weight per pair, shape ``(d/2,)``: 0 = keep ``theta_k``, 1 = use ``theta_k / s``.

    The boundaries are the (continuous) pair indices at which a pair turns
    ``beta_fast`` times, respectively ``beta_slow`` times, within
    ``original_max_len`` positions; for the standard frequencies
    ``d * ln(L / (2 pi beta)) / (2 ln b)``. With ``truncate`` they are rounded
    outwards (floor, ceil), and then clamped to ``[0, d - 1]``, as in the
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
    if not isinstance(truncate, bool):
        raise TypeError(f"truncate must be a bool, got {truncate!r}")
    half = frequencies.shape[0]
    # frequency at which a pair turns beta times in L positions: beta * 2 pi / L
    low = _log_linear_index(frequencies, beta_fast * 2 * math.pi / original_max_len)
    high = _log_linear_index(frequencies, beta_slow * 2 * math.pi / original_max_len)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, 2 * half - 1)
    if low == high:
        high += 0.001  # as in the reference code: avoid dividing by zero
    pair_index = torch.arange(half, dtype=torch.float64)  # (d/2,)
    return ((pair_index - low) / (high - low)).clamp(0.0, 1.0)


def yarn_frequencies(
    frequencies: torch.Tensor,
    factor: float,
    original_max_len: int,
    *,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
    truncate: bool = True,
) -> torch.Tensor:
    """YaRN ("NTK-by-parts") frequencies, shape ``(d/2,)``.

    ``theta'_k = (1 - w_k) * theta_k + w_k * theta_k / s`` with ``w`` from
    :func:`yarn_ramp`: pairs that turn more than ``beta_fast`` (32) times
    within the training length ``L`` are left alone, pairs that turn less than
    ``beta_slow`` (1) times are interpolated like position interpolation, and
    the pairs in between are blended. Use it together with
    :func:`yarn_attention_factor`.

    Args:
        frequencies: the standard frequencies ``(d/2,)``.
        factor: ``s``, new context length / ``L``, >= 1.
        original_max_len: ``L``.
        beta_fast, beta_slow, truncate: see :func:`yarn_ramp`.
    """
    factor = _check_factor(factor)
    ramp = yarn_ramp(frequencies, original_max_len, beta_fast=beta_fast, beta_slow=beta_slow, truncate=truncate)
    frequencies = _check_frequencies(frequencies)
    return frequencies * (1 - ramp) + (frequencies / factor) * ramp


def yarn_attention_factor(factor: float, *, mscale: float | None = None, mscale_all_dim: float | None = None) -> float:
    """YaRN's magnitude factor ``0.1 ln(s) + 1`` (1 for ``s <= 1``).

    Multiply the rotated queries *and* keys by it (HF transformers multiplies cos
    and sin), so that the logits are multiplied by its square, which the paper
    writes as ``1 / t`` with ``sqrt(1/t) = 0.1 ln(s) + 1``: a slightly sharper
    softmax to offset the entropy added by a longer context.

    DeepSeek-style configurations give ``mscale`` and ``mscale_all_dim``; then
    the factor is ``m(s, mscale) / m(s, mscale_all_dim)`` with
    ``m(s, c) = 0.1 c ln(s) + 1``, as in HF transformers.
    """
    factor = check_positive_float("factor", factor)

    def magnitude(scale: float, coefficient: float = 1.0) -> float:
        return 1.0 if scale <= 1 else 0.1 * coefficient * math.log(scale) + 1.0

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
    """Llama 3.1's frequency scaling, shape ``(d/2,)``. Defaults are Llama 3.1's released settings.

    With wavelength ``lambda_k = 2 pi / theta_k`` and ``L = original_max_len``:

    - ``lambda_k < L / high_freq_factor`` (more than 4 turns in ``L``): unchanged;
    - ``lambda_k > L / low_freq_factor`` (less than 1 turn): ``theta_k / s``;
    - in between: ``(1 - g) theta_k / s + g theta_k`` with
      ``g = (L / lambda_k - low_freq_factor) / (high_freq_factor - low_freq_factor)``,
      a ramp that is linear in the number of turns ``L / lambda_k``.
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
    wavelength = 2 * math.pi / frequencies  # (d/2,)
    turns = original_max_len / wavelength  # (d/2,) turns within the training length
    blend = ((turns - low_freq_factor) / (high_freq_factor - low_freq_factor)).clamp(0.0, 1.0)  # 0 -> / s, 1 -> keep
    return (1 - blend) * frequencies / factor + blend * frequencies
