"""Checkers for the RoPE chapter's coding exercises: every offset's score from the complex form, in both layouts.

The student's function has the signature ``fn(q, k, offsets, base=10000.0)``: ``q`` and ``k``
are queries and keys *before* RoPE, of shape ``(..., d_h)`` (e.g. ``(b, n_h, d_h)``), and
``offsets`` is a 1-D integer tensor ``(n,)`` of relative positions ``r = j - i``. It returns the
scores ``q^T R_r k`` of shape ``(..., n)``, the score of the query at any position ``i`` with the
key at ``i + r``. The chapter computes such scores by rotating vectors and shows the complex form
only as a derivation (exercise ``ex-rope-relative``); the exercise asks for the scores from that
form, ``Re sum_l h_l exp(-i r theta_l)`` with ``h_l = q^(l) conj(k^(l))``. The reference is
computed here in float64; the answer runs with posenc_lib's RoPE code (:func:`posenc_lib.apply_rope`,
:func:`posenc_lib.rotate_pairs`, :func:`posenc_lib.rope_angles`, :func:`posenc_lib.rope_frequencies`,
:class:`posenc_lib.RotaryEmbedding`, the layout permutations and the fast kernels) switched off.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from .. import fast
from ..analysis import convert_qk_weight
from ..rope import (
    RotaryEmbedding,
    apply_partial_rope,
    apply_rope,
    half_to_interleaved_permutation,
    interleaved_to_half_permutation,
    rope_angles,
    rope_frequencies,
    rotate_pairs,
)
from ._core import Case, CheckResult, Diagnosis, arrays_close, check_function

ROPE_CODE = (
    apply_rope,
    apply_partial_rope,
    rotate_pairs,
    rope_angles,
    rope_frequencies,
    RotaryEmbedding,
    interleaved_to_half_permutation,
    half_to_interleaved_permutation,
    convert_qk_weight,
    fast.rotate_pairs,
    fast.rotary,
    fast.rotary_qk,
)

HALF_HINT = (
    "read pair l of q as the complex number q[..., l] + i q[..., l + d/2] (the same for k), form "
    "h_l = q^(l) * conj(k^(l)) (shape (..., d/2)), and return the real part of sum_l h_l exp(-i r theta_l) "
    "for every offset r, theta_l = base^(-2l/d): shape (..., n)."
)
INTERLEAVED_HINT = (
    "the interleaved layout is the half-split one after reordering the last axis: gather "
    "q[..., [0, 2, ..., d-2, 1, 3, ..., d-1]] and k the same way, then call your half-split function."
)


def _pairs(x: torch.Tensor, layout: str) -> torch.Tensor:
    """Pair ``l`` of ``x`` (..., d) as one complex number, (..., d/2) complex128."""
    d = x.shape[-1]
    x = x.double()
    if layout == "half":
        return torch.complex(x[..., : d // 2], x[..., d // 2 :])
    return torch.complex(x[..., 0::2], x[..., 1::2])


def _theta(d: int, base: float, exponent: float = 2.0) -> torch.Tensor:
    return base ** (-exponent * torch.arange(d // 2, dtype=torch.float64) / d)  # (d/2,)


def _scores(
    q: torch.Tensor,
    k: torch.Tensor,
    offsets: torch.Tensor,
    base: float = 10000.0,
    *,
    layout: str,
    theta: torch.Tensor | None = None,
    k_layout: str | None = None,
    part: str = "real",
) -> torch.Tensor:
    """``q^T R_r k`` for each offset, float64, (..., n): ``Re sum_l h_l exp(-i r theta_l)``.

    ``k_layout`` pairs ``k`` in another layout than ``q``, ``part`` takes ``"imag"`` or ``"abs"`` of the
    complex sum instead of its real part (both are wrong answers).
    """
    theta = _theta(q.shape[-1], base) if theta is None else theta  # (d/2,)
    h = _pairs(q, layout) * _pairs(k, k_layout or layout).conj()  # (..., d/2): content
    phases = torch.polar(torch.ones_like(theta), -offsets.double()[:, None] * theta)  # (n, d/2)
    total = (h[..., None, :] * phases).sum(dim=-1)  # (..., n) complex
    return {"real": total.real, "imag": total.imag, "abs": total.abs()}[part]


def _cases(layout: str) -> list[Case]:
    """From small to awkward: several heads, keys before the query, another base, one pair, far offsets."""
    gen = torch.Generator().manual_seed(2025)

    def case(
        label: str,
        shape: tuple[int, ...],
        offsets: torch.Tensor,
        base: float = 10000.0,
        hint: str = "",
        dtype: torch.dtype = torch.float32,
    ) -> Case:
        q, k = torch.randn(2, *shape, generator=gen, dtype=dtype)
        return Case(label, (q, k, offsets), {"base": base}, _scores(q, k, offsets, base, layout=layout), hint)

    return [
        case("q, k of shape (8,), offsets 0..5", (8,), torch.arange(6)),
        case(
            "q, k of shape (2, 3, 16), offsets [-7, -1, 0, 3, 100]",
            (2, 3, 16),
            torch.tensor([-7, -1, 0, 3, 100]),
            hint="negative offsets are keys before the query; the score at -r is not the score at r.",
        ),
        case(
            "q, k of shape (5, 8), offsets 0, 3, ..., 39, base=100",
            (5, 8),
            torch.arange(0, 40, 3),
            100.0,
            hint="use the base argument (here 100) for theta_l = base^(-2l/d).",
        ),
        case("q, k of shape (3, 2) (one pair), offsets 0..4", (3, 2), torch.arange(5)),
        case(
            "q, k of shape (4, 64), float64, offsets [0, 1, 1000, 4095, -4095]",
            (4, 64),
            torch.tensor([0, 1, 1000, 4095, -4095]),
            dtype=torch.float64,
        ),
    ]


def _diagnoses(layout: str) -> list[Diagnosis]:
    other = "interleaved" if layout == "half" else "half"
    if layout == "half":
        layout_hint = (
            "you paired neighbouring coordinates (2l, 2l+1): that is the interleaved layout. "
            "In the half-split layout pair l is (x[..., l], x[..., l + d/2])."
        )
    else:
        layout_hint = (
            "you paired coordinate l with l + d/2: that is the half-split layout. "
            "In the interleaved layout pair l is (x[..., 2l], x[..., 2l+1])."
        )

    def wrong(**options: Any) -> Callable[..., torch.Tensor]:
        def fn(q: torch.Tensor, k: torch.Tensor, offsets: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
            settings = {"layout": layout, **options}
            if callable(settings.get("theta")):
                settings["theta"] = settings["theta"](q.shape[-1], base)
            if "offsets" in settings:
                offsets = settings.pop("offsets")(offsets)
            if "scale" in settings:
                return _scores(q, k, offsets, base, layout=layout) / settings["scale"](q.shape[-1])
            return _scores(q, k, offsets, base, **settings)

        return fn

    diagnoses = [
        Diagnosis(layout_hint, wrong(layout=other)),
        Diagnosis(
            "you return the scores of offset -r: with h_l = q^(l) conj(k^(l)) the phase is exp(-i r theta_l), "
            "r = j - i (or you conjugated q instead of k).",
            wrong(offsets=lambda r: -r),
        ),
        Diagnosis(
            "your frequencies look like base^(-l/d); RoPE uses theta_l = base^(-2l/d) for l = 0 .. d/2-1.",
            wrong(theta=lambda d, base: _theta(d, base, 1.0)),
        ),
        Diagnosis(
            "the base argument is ignored: use it instead of a hard-coded 10000.",
            wrong(theta=lambda d, base: _theta(d, 10000.0)),
        ),
        Diagnosis(
            "your scores do not change with the offset: that is the score at r = 0 for every r. Each h_l must be "
            "turned by its phase exp(-i r theta_l) before the sum.",
            wrong(offsets=torch.zeros_like),
        ),
        Diagnosis(
            "you returned the modulus of the complex sum; the score is its real part (a dot product of 2-d "
            "vectors u, w is Re(u conj(w))).",
            wrong(part="abs"),
        ),
        Diagnosis(
            "you returned the imaginary part of the complex sum; the score is its real part.", wrong(part="imag")
        ),
        Diagnosis(
            "you divided by sqrt(d_h): that factor belongs to attention's softmax, not to the score q^T R_r k "
            "asked for here.",
            wrong(scale=lambda d: d**0.5),
        ),
    ]
    if layout == "interleaved":
        one_only = (
            "you reordered q but not k (or k but not q): both must go through the same reordering, so that "
            "pair l of q meets pair l of k."
        )
        diagnoses[1:1] = [
            Diagnosis(one_only, wrong(layout="interleaved", k_layout="half")),
            Diagnosis(one_only, wrong(layout="half", k_layout="interleaved")),
        ]
    return diagnoses


def _is_complex(value: Any) -> bool:
    return (isinstance(value, torch.Tensor) and value.is_complex()) or bool(np.iscomplexobj(value))


def _compare(got: Any, expected: Any) -> bool:
    # float32 angles at |r| = 4095 are good to ~1e-4 rad; a complex result is not a score
    return not _is_complex(got) and arrays_close(got, expected, atol=1e-3, rtol=1e-4)


def _explain(got: Any, expected: Any) -> str:
    if _is_complex(got):
        return "your result is complex: return its real part, the score (e.g. total.real)."
    return ""


def _check(title: str, fn: Callable[..., Any], layout: str, hint: str) -> CheckResult:
    return check_function(
        title,
        fn,
        _cases(layout),
        hint=hint,
        diagnoses=_diagnoses(layout),
        compare=_compare,
        explain=_explain,
        forbidden=ROPE_CODE,
    )


def check_offset_scores(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(q, k, offsets, base=10000.0) -> (..., n)``: ``q^T R_r k`` per offset, half-split layout."""
    return _check("RoPE scores by offset, half-split layout", fn, "half", HALF_HINT)


def check_offset_scores_interleaved(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(q, k, offsets, base=10000.0) -> (..., n)``: ``q^T R_r k`` per offset, interleaved layout."""
    return _check("RoPE scores by offset, interleaved layout", fn, "interleaved", INTERLEAVED_HINT)
