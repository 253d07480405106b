import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import posenc_lib as pe


def meta_complex_reference(x: torch.Tensor, positions: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """The complex-number formulation of Meta's Llama reference: adjacent pairs as complex numbers,
    multiplied by e^{i p theta_k}. x: (..., s, d)."""
    d = x.shape[-1]
    theta = 1.0 / base ** (torch.arange(0, d, 2, dtype=torch.float64) / d)  # (d/2,)
    angles = torch.outer(positions.double(), theta)  # (s, d/2)
    rotation = torch.polar(torch.ones_like(angles), angles)  # (s, d/2) complex
    as_complex = torch.view_as_complex(x.double().reshape(*x.shape[:-1], -1, 2))  # (..., s, d/2)
    return torch.view_as_real(as_complex * rotation).flatten(-2).to(x.dtype)


def test_frequencies():
    theta = pe.rope_frequencies(8, base=100.0)
    torch.testing.assert_close(theta, torch.tensor([1.0, 100**-0.25, 100**-0.5, 100**-0.75], dtype=torch.float64))


def test_interleaved_equals_meta_complex_formulation():
    torch.manual_seed(0)
    x = torch.randn(2, 3, 17, 16)
    positions = torch.arange(17) + 5
    torch.testing.assert_close(pe.apply_rope(x, positions, layout="interleaved"), meta_complex_reference(x, positions))


@settings(max_examples=30, deadline=None)
@given(
    half=st.integers(1, 32),
    seq_len=st.integers(1, 40),
    offset=st.integers(0, 100_000),
    layout=st.sampled_from(["half", "interleaved"]),
)
def test_rotation_preserves_norm(half, seq_len, offset, layout):
    gen = torch.Generator().manual_seed(half * 1000 + seq_len)
    x = torch.randn(2, seq_len, 2 * half, generator=gen, dtype=torch.float64)
    out = pe.apply_rope(x, offset=offset, layout=layout)
    torch.testing.assert_close(out.norm(dim=-1), x.norm(dim=-1))


@settings(max_examples=30, deadline=None)
@given(
    m=st.integers(0, 5000),
    n=st.integers(0, 5000),
    shift=st.integers(0, 5000),
    layout=st.sampled_from(["half", "interleaved"]),
)
def test_score_depends_only_on_relative_distance(m, n, shift, layout):
    gen = torch.Generator().manual_seed(7)
    q, k = torch.randn(2, 1, 64, generator=gen, dtype=torch.float64)
    score = (pe.apply_rope(q, offset=m, layout=layout) * pe.apply_rope(k, offset=n, layout=layout)).sum()
    shifted = (
        pe.apply_rope(q, offset=m + shift, layout=layout) * pe.apply_rope(k, offset=n + shift, layout=layout)
    ).sum()
    torch.testing.assert_close(score, shifted, rtol=1e-9, atol=1e-9)


def test_layouts_agree_after_permuting_head_dim():
    torch.manual_seed(1)
    x_interleaved = torch.randn(2, 4, 9, 32)
    to_half = pe.interleaved_to_half_permutation(32)
    x_half = x_interleaved[..., to_half]
    out_interleaved = pe.apply_rope(x_interleaved, layout="interleaved")
    out_half = pe.apply_rope(x_half, layout="half")
    torch.testing.assert_close(out_half, out_interleaved[..., to_half])
    back = pe.half_to_interleaved_permutation(32)
    torch.testing.assert_close(out_half[..., back], out_interleaved)


def test_position_zero_is_identity_and_offsets_match_slices():
    torch.manual_seed(2)
    x = torch.randn(1, 2, 6, 8)
    torch.testing.assert_close(pe.apply_rope(x[..., :1, :]), x[..., :1, :])
    full = pe.apply_rope(x)
    torch.testing.assert_close(pe.apply_rope(x[..., 4:, :], offset=4), full[..., 4:, :])
    torch.testing.assert_close(pe.apply_rope(x[..., 4:, :], torch.tensor([4, 5])), full[..., 4:, :])


def test_bfloat16_keeps_dtype_and_positions_stay_accurate():
    torch.manual_seed(3)
    x = torch.randn(1, 1, 4, 64)
    positions = torch.arange(4) + 60_000  # positions bf16 itself cannot represent exactly
    exact = pe.apply_rope(x.double(), positions)
    out = pe.apply_rope(x.bfloat16(), positions)
    assert out.dtype == torch.bfloat16
    # bf16 rounding of x and of the result only (~1%), not a wrong angle
    assert (out.double() - exact).abs().max() < 0.05
    # rounding the positions to bf16 first would be badly wrong:
    wrong = pe.apply_rope(x.double(), positions.bfloat16().double())
    assert (wrong - exact).abs().max() > 0.5


def test_gradient_flows_and_matches_no_grad_path():
    torch.manual_seed(4)
    x = torch.randn(2, 3, 5, 8, requires_grad=True)
    for layout in ("half", "interleaved"):
        with_grad = pe.apply_rope(x, layout=layout)
        with torch.no_grad():
            without = pe.apply_rope(x, layout=layout)
        torch.testing.assert_close(with_grad, without)
        with_grad.pow(2).sum().backward()  # rotation preserves norms, so d/dx |R x|^2 = 2x
        torch.testing.assert_close(x.grad, 2 * x.detach())
        x.grad = None


@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_rotary_module_matches_function_inside_and_beyond_its_cache(layout):
    torch.manual_seed(5)
    rotary = pe.RotaryEmbedding(16, max_len=4, layout=layout)
    x = torch.randn(2, 2, 10, 16)
    torch.testing.assert_close(rotary(x), pe.apply_rope(x, layout=layout))  # positions 0..9, past max_len=4
    torch.testing.assert_close(rotary(x[..., :3, :], offset=20), pe.apply_rope(x[..., :3, :], offset=20, layout=layout))
    positions = torch.tensor([0, 7, 3, 100, 1, 2, 2, 9, 40, 5])
    torch.testing.assert_close(rotary(x, positions), pe.apply_rope(x, positions, layout=layout))
    torch.testing.assert_close(rotary(x.double()), pe.apply_rope(x.double(), layout=layout))
    assert rotary.cos_cached.shape == (4, 8)  # the cache never grows


@pytest.mark.parametrize("offset", [10**6, 10**8, 2**40])
def test_far_positions_are_served_without_growing_the_cache(offset):
    torch.manual_seed(6)
    rotary = pe.RotaryEmbedding(64, max_len=16)
    x = torch.randn(1, 2, 1, 64)
    with torch.no_grad():
        out = rotary(x, offset=offset)
    torch.testing.assert_close(out, pe.apply_rope(x, offset=offset))
    exact = pe.apply_rope(x.double(), offset=offset)
    assert (out.double() - exact).abs().max() < 1e-5  # angles in float64: no float32 rounding of p * theta
    assert rotary.cos_cached.shape == (16, 32)


def test_integer_positions_mean_only_tensors():
    x = torch.randn(4, 8)
    with pytest.raises(TypeError, match="use offset="):
        pe.apply_rope(x, 3)
    with pytest.raises(TypeError, match="use offset="):
        pe.RotaryEmbedding(8)(x, 3)
    with pytest.raises(TypeError, match="use offset="):
        pe.rope_angles(5, pe.rope_frequencies(8))
    with pytest.raises(ValueError, match="not both"):
        pe.apply_rope(x, torch.arange(4), offset=2)
    torch.testing.assert_close(pe.apply_rope(x, offset=np.int64(3)), pe.apply_rope(x, torch.arange(3, 7)))
    torch.testing.assert_close(pe.apply_rope(x, offset=torch.tensor(3)), pe.apply_rope(x, torch.arange(3, 7)))


def test_rope_angles_is_positions_times_frequencies():
    theta = pe.rope_frequencies(8)
    positions = torch.tensor([0, 3, 10])
    angles = pe.rope_angles(positions, theta)
    assert angles.shape == (3, 4) and angles.dtype == torch.float64
    torch.testing.assert_close(angles, positions.double()[:, None] * theta[None, :], rtol=0, atol=0)
    torch.testing.assert_close(pe.rope_angles(torch.tensor([0.5]), theta)[0], 0.5 * theta)


def test_attention_factor_scales_queries_and_keys():
    torch.manual_seed(7)
    x = torch.randn(2, 5, 16)
    scaled = pe.RotaryEmbedding(16, 8, attention_factor=1.3)
    torch.testing.assert_close(scaled(x, offset=2), 1.3 * pe.apply_rope(x, offset=2))
    torch.testing.assert_close(scaled(x, offset=100), 1.3 * pe.apply_rope(x, offset=100))  # computed rows too
    q, k = scaled.rotate_qk(x, x)
    torch.testing.assert_close(q, 1.3 * pe.apply_rope(x))


def test_matches_hugging_face_apply_rotary_pos_emb():
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    torch.manual_seed(6)
    b, h, s, d = 2, 4, 33, 64
    q, k = torch.randn(b, h, s, d), torch.randn(b, h, s, d)
    positions = torch.arange(s) + 11
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
    freqs = torch.outer(positions.float(), inv_freq)  # HF's own float32 construction
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos()[None], emb.sin()[None]  # (1, s, d)
    q_ref, k_ref = apply_rotary_pos_emb(q, k, cos, sin)
    torch.testing.assert_close(pe.apply_rope(q, positions), q_ref, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(pe.apply_rope(k, positions), k_ref, atol=1e-5, rtol=1e-5)
