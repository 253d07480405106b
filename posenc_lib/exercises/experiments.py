"""Checkers for the experiments chapter's coding exercises.

``check_interpolate(fn)``: ``fn(model, factor)`` returns a copy of a trained RoPE
decoder (:class:`posenc_lib.model.TinyTransformer`) whose rotary embedding uses
position interpolation, every frequency divided by ``factor``; the model passed
in must stay as it was.

``check_directional_alibi(fn)``: an ALiBi bias that can tell left from right,
``fn(slopes_past, slopes_future, seq_len) -> (h, s, s)`` (torch or numpy): for
query ``i`` and key ``j`` of head ``h``,

- ``-slopes_past[h] * (i - j)`` when the key is at or before the query (``j <= i``),
- ``-slopes_future[h] * (j - i)`` when it is after (``j > i``).

With equal slopes on both sides this is the symmetric bias ``-m |i - j|`` of
:func:`posenc_lib.alibi_bias` with ``causal=False``, which cannot tell a
sequence from its reversal; different slopes can.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from ..model import TransformerConfig, build_model
from ..rope import RotaryEmbedding, rope_frequencies
from ..rope_scaling import linear_scaling_frequencies, ntk_aware_frequencies
from ._core import Case, CheckResult, Diagnosis, arrays_close, check_function


def _offsets(seq_len: int) -> torch.Tensor:
    """``i - j`` for query ``i`` (rows) and key ``j`` (columns), ``(s, s)`` float64."""
    positions = torch.arange(seq_len, dtype=torch.float64)
    return positions[:, None] - positions[None, :]


def _as_column(slopes: Any) -> torch.Tensor:
    return torch.as_tensor(slopes, dtype=torch.float64).reshape(-1, 1, 1)  # (h, 1, 1)


def _directional(slopes_past: Any, slopes_future: Any, seq_len: int) -> torch.Tensor:
    """The reference answer, ``(h, s, s)`` float64."""
    offset = _offsets(seq_len)  # (s, s), > 0 for keys in the past
    past = -_as_column(slopes_past) * offset.clamp(min=0)  # (h, s, s)
    future = -_as_column(slopes_future) * (-offset).clamp(min=0)  # (h, s, s)
    return past + future


def _symmetric(slopes_past: Any, slopes_future: Any, seq_len: int) -> torch.Tensor:
    return -_as_column(slopes_past) * _offsets(seq_len).abs()


def _swapped(slopes_past: Any, slopes_future: Any, seq_len: int) -> torch.Tensor:
    return _directional(slopes_future, slopes_past, seq_len)


def _positive(slopes_past: Any, slopes_future: Any, seq_len: int) -> torch.Tensor:
    return -_directional(slopes_past, slopes_future, seq_len)


def _causal(slopes_past: Any, slopes_future: Any, seq_len: int) -> torch.Tensor:
    bias = _directional(slopes_past, slopes_future, seq_len)
    return bias.masked_fill(_offsets(seq_len) < 0, float("-inf"))


def _first_head_only(slopes_past: Any, slopes_future: Any, seq_len: int) -> torch.Tensor:
    past, future = (
        torch.as_tensor(slopes_past, dtype=torch.float64),
        torch.as_tensor(slopes_future, dtype=torch.float64),
    )
    return _directional(past[:1].expand(past.shape[0]), future[:1].expand(future.shape[0]), seq_len)


DIAGNOSES = [
    Diagnosis(
        "this is the symmetric bias -m |i - j| with the past slopes on both sides: keys after the query "
        "must use slopes_future.",
        _symmetric,
    ),
    Diagnosis(
        "left and right are swapped: keys at or BEFORE the query (j <= i) use slopes_past, keys after it use "
        "slopes_future. Row i is the query, column j the key.",
        _swapped,
    ),
    Diagnosis("the bias must be a penalty: minus slope times distance, so it is <= 0 everywhere.", _positive),
    Diagnosis(
        "you masked the future with -inf: that is the decoder's causal ALiBi. The encoder attends both ways; "
        "future keys get -slopes_future[h] * (j - i).",
        _causal,
    ),
    Diagnosis(
        "every head got the first head's slopes: broadcast slopes of shape (h,) to (h, 1, 1) so head h "
        "uses its own slope.",
        _first_head_only,
    ),
]


def check_directional_alibi(fn: Callable[[Any, Any, int], Any]) -> CheckResult:
    """Check ``fn(slopes_past, slopes_future, seq_len) -> (h, s, s)`` against the direction-aware ALiBi bias."""
    inputs = [
        (torch.tensor([0.5, 0.25]), torch.tensor([0.125, 1.0]), 5),
        (torch.tensor([0.25, 0.0625, 0.015625, 0.00390625]), torch.tensor([0.5, 0.125, 0.03125, 0.0078125]), 7),
        (torch.tensor([1.0, 0.5, 0.25]), torch.tensor([0.0, 0.0, 0.0]), 4),
        (torch.tensor([0.5]), torch.tensor([0.25]), 1),
    ]
    cases = [
        Case(
            f"slopes_past={past.tolist()}, slopes_future={future.tolist()}, seq_len={s}",
            (past, future, s),
            {},
            _directional(past, future, s),
        )
        for past, future, s in inputs
    ]
    return check_function(
        "Direction-aware ALiBi",
        fn,
        cases,
        hint="bias[h, i, j] = -slopes_past[h] * (i - j) for j <= i and -slopes_future[h] * (j - i) for j > i; "
        "shape (h, s, s), rows are queries.",
        diagnoses=DIAGNOSES,
    )


# --- position interpolation on a trained RoPE decoder --------------------------------------------


def _small_rope_decoder() -> Any:
    """A RoPE decoder with random weights: 2 layers, 2 heads of width 8, trained length 8."""
    config = TransformerConfig(
        vocab_size=9, n_outputs=8, scheme="rope", causal=True, max_len=8, d_model=16, n_heads=2, n_layers=2, d_ff=32
    )
    return build_model(config, seed=0)


def _with_frequencies(model: Any, frequencies: torch.Tensor) -> Any:
    stretched = copy.deepcopy(model)
    stretched.rope = RotaryEmbedding(model.config.head_dim, 64, frequencies=frequencies)
    return stretched


def _interpolated(model: Any, factor: float) -> Any:
    return _with_frequencies(model, rope_frequencies(model.config.head_dim) / factor)


@dataclass
class _Logits:
    """The logits ``(b, s, vocab)`` of the model a student's function returned and of the model passed in."""

    returned: torch.Tensor
    given: torch.Tensor

    def __repr__(self) -> str:
        def first(logits: torch.Tensor) -> str:
            return ", ".join(f"{v:.3f}" for v in logits[0, -1, :3].tolist())

        return (
            f"logits of the first sequence's last token: returned model [{first(self.returned)}, ...], "
            f"model passed in [{first(self.given)}, ...]"
        )


def _same_logits(got: Any, expected: _Logits) -> bool:
    return isinstance(got, _Logits) and all(
        arrays_close(a, b, atol=1e-5, rtol=1e-4)
        for a, b in ((got.returned, expected.returned), (got.given, expected.given))
    )


def _outputs(make: Callable[[Any, float], Any]) -> Callable[[Any, float, torch.Tensor], _Logits]:
    """What the checker compares: the logits of the returned model and of the model passed in, after the call."""

    @torch.no_grad()
    def run(model: Any, factor: float, tokens: torch.Tensor) -> _Logits:
        returned = make(model, factor)
        if not isinstance(returned, torch.nn.Module):
            raise TypeError(f"interpolate must return a model (torch.nn.Module), got {type(returned).__name__}")
        return _Logits(returned(tokens), model(tokens))

    return run


def _in_place(model: Any, factor: float) -> Any:
    model.rope = _interpolated(model, factor).rope
    return model


INTERPOLATION_DIAGNOSES = [
    Diagnosis(
        "the frequencies must be DIVIDED by the factor: position p then turns by the angle position "
        "p / factor had in training, so the longer sequence is squeezed into the trained range.",
        _outputs(lambda m, s: _with_frequencies(m, rope_frequencies(m.config.head_dim) * s)),
    ),
    Diagnosis(
        "the model you were given changed too: work on a copy (copy.deepcopy(model)), so the trained "
        "model stays as it was for the comparison.",
        _outputs(_in_place),
    ),
    Diagnosis(
        "that is NTK-aware scaling (the fastest pair keeps its frequency): position interpolation divides "
        "EVERY frequency by the factor.",
        _outputs(lambda m, s: _with_frequencies(m, ntk_aware_frequencies(rope_frequencies(m.config.head_dim), s))),
    ),
    Diagnosis(
        "you multiplied the base by the factor: that slows the pairs by different amounts. Position "
        "interpolation divides every frequency by the factor.",
        _outputs(lambda m, s: _with_frequencies(m, rope_frequencies(m.config.head_dim, 10000.0 * s))),
    ),
    Diagnosis(
        "the returned model still rotates with the trained frequencies: replace its `rope` module "
        "(one RotaryEmbedding shared by every block) with one built from the new frequencies.",
        _outputs(lambda m, s: copy.deepcopy(m)),
    ),
]


def check_interpolate(fn: Callable[[Any, float], Any]) -> CheckResult:
    """Check ``fn(model, factor)``: a copy of a RoPE decoder that rotates with frequencies ``theta / factor``.

    The checker compares the logits of the returned model with the reference's,
    and checks that the model passed in still gives its own logits afterwards.
    """
    model = _small_rope_decoder()
    generator = torch.Generator().manual_seed(0)
    cases = []
    for factor, seq_len in ((2, 16), (4, 32), (1.5, 12), (1, 8)):
        tokens = torch.randint(0, 9, (3, seq_len), generator=generator)  # (b, s)
        cases.append(
            Case(
                f"a small random RoPE decoder, factor={factor}, {seq_len} tokens",
                (model, factor, tokens),
                {},
                _outputs(_interpolated)(model, factor, tokens),
            )
        )
    return check_function(
        "Position interpolation on a trained model",
        _outputs(fn),
        cases,
        hint="return a copy of the model whose `rope` is RotaryEmbedding(head_dim, max_len, "
        "frequencies=rope_frequencies(head_dim) / factor); leave the model you were given unchanged.",
        diagnoses=INTERPOLATION_DIAGNOSES,
        compare=_same_logits,
        forbidden=[linear_scaling_frequencies],
    )
