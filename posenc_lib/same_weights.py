"""One set of weights under every positional scheme: the plumbing of chapter 9's comparison.

Chapter 9 runs the blocks of one :class:`~posenc_lib.model.TinyTransformer` under six schemes
and compares their tensors. :meth:`TinyTransformer.with_scheme` already shares the blocks;
what this module adds is T5's bias table. ``T5RelativeBias`` starts at zero (no preference
before training), and a zero table adds nothing to the scores: the ``"t5"`` model would give
exactly the numbers of the model without positions. So the comparison draws the table from a
seeded normal distribution, as a trained table would be some non-zero table.

- :data:`COMPARED_SCHEMES`: the six schemes, in the chapter's order.
- :func:`models_under_schemes`: ``{scheme: model}``, every model running ``model``'s weights.
- :func:`draw_t5_table`: fill a ``"t5"`` model's bias table, ``(num_buckets, n_h)``, from a seed.
- :func:`first_changed_stage`: the first traced stage where two block traces differ, or ``None``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import torch

from ._checks import check_choice, check_int, check_positive_float
from .model import SCHEMES, TRACE_STAGES, TinyTransformer

__all__ = ["COMPARED_SCHEMES", "T5_STD", "draw_t5_table", "first_changed_stage", "models_under_schemes"]

COMPARED_SCHEMES = ("none", "sinusoidal", "learned", "rope", "alibi", "t5")
T5_STD = 1.0  # standard deviation of the drawn T5 table: of the size of ALiBi's nearest biases


def draw_t5_table(model: TinyTransformer, *, seed: int = 0, std: float = T5_STD) -> TinyTransformer:
    """Fill the T5 bias table of ``model`` (scheme ``"t5"``) with ``N(0, std²)`` draws from ``seed``; return it.

    The table is ``model.relative_bias.table.weight``, ``(num_buckets, n_h)``, one scalar per
    bucket and head, shared by every block. The draws are made on the CPU in float64 (the same
    numbers on every device) and copied into the table in its own device and dtype. The global
    random state is not touched.
    """
    if not isinstance(model, TinyTransformer):
        raise TypeError(f"model must be a TinyTransformer, got {type(model).__name__}")
    if model.relative_bias is None:
        raise ValueError(f"model must run scheme 't5' to have a bias table, got scheme {model.config.scheme!r}")
    seed, std = check_int("seed", seed), check_positive_float("std", std)
    weight = model.relative_bias.table.weight  # (num_buckets, n_h)
    generator = torch.Generator().manual_seed(seed)
    draws = torch.randn(weight.shape, generator=generator, dtype=torch.float64) * std  # (num_buckets, n_h)
    with torch.no_grad():
        weight.copy_(draws.to(device=weight.device, dtype=weight.dtype))
    return model


def models_under_schemes(
    model: TinyTransformer,
    schemes: Iterable[str] = COMPARED_SCHEMES,
    *,
    seed: int = 0,
    t5_std: float = T5_STD,
) -> dict[str, TinyTransformer]:
    """``{scheme: model}`` for each of ``schemes``, every one running ``model``'s token table and blocks.

    Each model is ``model.with_scheme(scheme, seed=seed)`` (a learned table drawn from ``seed``);
    a ``"t5"`` model's bias table is then drawn by :func:`draw_t5_table` with ``seed`` and
    ``t5_std``, since its zero start would reproduce the model without positions exactly.
    """
    if not isinstance(model, TinyTransformer):
        raise TypeError(f"model must be a TinyTransformer, got {type(model).__name__}")
    if isinstance(schemes, str):
        raise TypeError(f"schemes must be a sequence of scheme names, not the str {schemes!r}")
    schemes = tuple(check_choice("schemes", scheme, SCHEMES) for scheme in schemes)
    if not schemes:
        raise ValueError("schemes must name at least one scheme")
    seed, t5_std = check_int("seed", seed), check_positive_float("t5_std", t5_std)
    models = {scheme: model.with_scheme(scheme, seed=seed) for scheme in schemes}
    if "t5" in models:
        draw_t5_table(models["t5"], seed=seed, std=t5_std)
    return models


def _largest_difference(a: torch.Tensor, b: torch.Tensor) -> float:
    finite = torch.isfinite(a) & torch.isfinite(b)  # the causal mask's -inf left out
    return (a - b)[finite].abs().max().item() if finite.any() else 0.0


def first_changed_stage(trace: Mapping[str, torch.Tensor], reference: Mapping[str, torch.Tensor]) -> str | None:
    """The first of :data:`~posenc_lib.model.TRACE_STAGES` where ``trace`` differs from ``reference``.

    Both are one block's :meth:`~posenc_lib.model.Block.trace` dicts (e.g. ``(b, s, d)`` inputs,
    ``(b, n_h, s, s)`` scores); masked ``-inf`` entries are left out. ``None`` when every stage is
    exactly equal (a scheme that changed nothing, such as T5 with its zero table).
    """
    for name, value in (("trace", trace), ("reference", reference)):
        if not isinstance(value, Mapping):
            raise TypeError(f"{name} must be a block trace (a dict of tensors), got {type(value).__name__}")
        missing = [stage for stage in TRACE_STAGES if stage not in value]
        if missing:
            raise ValueError(f"{name} must hold every traced stage; missing {missing}")
    for stage in TRACE_STAGES:
        if trace[stage].shape != reference[stage].shape:
            raise ValueError(
                f"trace and reference differ in shape at {stage!r}: "
                f"{tuple(trace[stage].shape)} vs {tuple(reference[stage].shape)}"
            )
        if _largest_difference(trace[stage], reference[stage]) > 0:
            return stage
    return None
