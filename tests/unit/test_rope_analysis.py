"""The RoPE chapter's analysis helpers: decay bound, angle gaps, wavelengths, checkpoint conversion."""

import math

import numpy as np
import pytest
import torch

from posenc_lib.analysis import convert_qk_weight, rope_angle_gap, rope_decay_bound
from posenc_lib.rope import apply_rope, rope_frequencies, wavelengths


def test_wavelengths():
    torch.testing.assert_close(
        wavelengths(rope_frequencies(4, base=100.0)), torch.tensor([2 * math.pi, 20 * math.pi], dtype=torch.float64)
    )


def test_decay_bound_brute_force_and_value_at_zero():
    d = 16
    distances = torch.tensor([0, 1, 5, 40, 333])
    theta = rope_frequencies(d)
    expected = []
    for r in distances.tolist():
        terms = [complex(math.cos(r * t), math.sin(r * t)) for t in theta.tolist()]
        partial = np.cumsum(terms)
        expected.append(np.abs(partial).mean())
    torch.testing.assert_close(rope_decay_bound(distances, d), torch.tensor(expected, dtype=torch.float64))
    assert rope_decay_bound(torch.tensor([0]), d).item() == pytest.approx((d / 2 + 1) / 2)


def test_decay_bound_trends_down_but_is_not_monotone():
    curve = rope_decay_bound(torch.arange(1000), 128)
    assert curve[-100:].mean() < 0.25 * curve[0]
    assert (curve.diff() > 0).any(), "the RoFormer curve has wiggles"


def test_decay_bound_really_bounds_scores():
    """|q_m . k_n| <= max_k |h_{k+1} - h_k| * sum_j |S_j(n - m)| for any q, k (Abel summation)."""
    d, gen = 32, torch.Generator().manual_seed(0)
    for _ in range(20):
        q, k = torch.randn(2, 1, d, generator=gen, dtype=torch.float64)
        q_pairs = torch.complex(q[0, : d // 2], q[0, d // 2 :])  # half layout: pair k = (x_k, x_{k+d/2})
        k_pairs = torch.complex(k[0, : d // 2], k[0, d // 2 :])
        h = torch.cat([q_pairs * k_pairs.conj(), torch.zeros(1, dtype=torch.complex128)])
        max_step = (h[1:] - h[:-1]).abs().max()
        for m, n in [(0, 3), (10, 200), (5, 5), (900, 50)]:
            score = (apply_rope(q, offset=m) * apply_rope(k, offset=n)).sum()
            bound = max_step * rope_decay_bound(torch.tensor([n - m]), d)[0] * (d // 2)
            assert score.abs() <= bound + 1e-9


def test_angle_gap_is_zero_inside_training_and_brute_force_outside():
    d, train_len = 8, 50
    positions = torch.tensor([0, 7, 49, 50, 120, 777, 5000])
    gaps = rope_angle_gap(positions, train_len, d)
    assert gaps.shape == (7, 4)
    assert torch.all(gaps[:3] == 0)
    theta = rope_frequencies(d)
    seen = torch.outer(torch.arange(train_len, dtype=torch.float64), theta)  # (L, d/2)
    query = torch.outer(positions.double(), theta)  # (s, d/2)
    diff = torch.remainder(query[:, None, :] - seen[None, :, :], 2 * math.pi)  # (s, L, d/2)
    brute = torch.minimum(diff, 2 * math.pi - diff).min(dim=1).values
    torch.testing.assert_close(gaps, brute, atol=1e-9, rtol=0)


def test_angle_gap_separates_fast_from_slow_pairs():
    d, train_len = 64, 512
    gaps = rope_angle_gap(torch.arange(train_len, 4 * train_len), train_len, d)  # (3L, d/2)
    theta = rope_frequencies(d)
    wrapped = wavelengths(theta) < train_len
    # pairs that turned fully during training: every new angle lies between two seen ones
    assert torch.all(gaps[:, wrapped] <= theta[wrapped] / 2 + 1e-12)
    # the slowest pair: far outside anything seen
    assert gaps[:, -1].max() > 1000 * theta[-1]


def test_angle_gap_accepts_fractional_positions():
    gaps = rope_angle_gap(torch.tensor([0.5, 10.25]), 20, 8)
    assert gaps.shape == (2, 4) and torch.all(gaps >= 0)


@pytest.mark.parametrize("to", ["half", "interleaved"])
def test_converted_weights_give_identical_scores(to):
    gen = torch.Generator().manual_seed(3)
    n_heads, head_dim, d_model, s = 3, 8, 12, 7
    w_q, w_k = torch.randn(2, n_heads * head_dim, d_model, generator=gen, dtype=torch.float64)
    x = torch.randn(s, d_model, generator=gen, dtype=torch.float64)
    source = "interleaved" if to == "half" else "half"

    def scores(wq, wk, layout):
        q = (x @ wq.T).unflatten(-1, (n_heads, head_dim)).transpose(0, 1)  # (h, s, d)
        k = (x @ wk.T).unflatten(-1, (n_heads, head_dim)).transpose(0, 1)
        return apply_rope(q, layout=layout) @ apply_rope(k, layout=layout).transpose(-2, -1)

    reference = scores(w_q, w_k, source)
    converted = scores(convert_qk_weight(w_q, n_heads, to=to), convert_qk_weight(w_k, n_heads, to=to), to)
    torch.testing.assert_close(converted, reference)
    assert (scores(w_q, w_k, to) - reference).abs().max() > 1e-3  # without converting, they differ


def test_convert_matches_the_view_transpose_formulation():
    """The usual Meta -> HF conversion reshapes each head (d/2, 2) and transposes to (2, d/2)."""
    n_heads, head_dim, d_model = 4, 6, 5
    w = torch.arange(n_heads * head_dim * d_model, dtype=torch.float32).reshape(n_heads * head_dim, d_model)
    reference = w.view(n_heads, head_dim // 2, 2, d_model).transpose(1, 2).reshape(n_heads * head_dim, d_model)
    torch.testing.assert_close(convert_qk_weight(w, n_heads), reference)
    torch.testing.assert_close(convert_qk_weight(reference, n_heads, to="interleaved"), w)
    bias = torch.arange(n_heads * head_dim, dtype=torch.float32)
    torch.testing.assert_close(convert_qk_weight(bias, n_heads), reference[:, 0] / d_model)


@pytest.mark.parametrize(
    "call,exc,pattern",
    [
        (lambda: convert_qk_weight(torch.zeros(10, 4), 3), ValueError, "multiple of n_heads=3"),
        (lambda: convert_qk_weight(torch.zeros(9, 4), 3), ValueError, "head_dim .* must be even"),
        (lambda: convert_qk_weight(torch.zeros(8, 4), 2, to="neox"), ValueError, "to must be one of"),
        (lambda: convert_qk_weight([[1.0]], 1), TypeError, "weight must be a torch.Tensor"),
        (lambda: convert_qk_weight(torch.zeros(8, 4), 0), ValueError, "n_heads must be a positive integer"),
        (lambda: rope_angle_gap(torch.arange(4), 0, 8), ValueError, "train_len must be a positive integer"),
        (lambda: rope_angle_gap(torch.arange(4), 10, 7), ValueError, "head_dim must be even"),
        (lambda: rope_angle_gap(4, 10, 8), TypeError, "positions must be a 1-D tensor"),
        (lambda: rope_decay_bound([1, 2], 8), TypeError, "distances must be a 1-D torch.Tensor"),
        (lambda: rope_decay_bound(5, 8), TypeError, "distances must be a 1-D tensor"),
        (lambda: rope_decay_bound(torch.zeros(2, 2), 8), ValueError, r"distances must have shape \(s,\)"),
        (lambda: wavelengths(torch.tensor([1.0, 0.0])), ValueError, "frequencies must be finite and > 0"),
    ],
)
def test_bad_input(call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call()
