"""The fast paths behind bench/bench.py compute what the direct formulas compute.

sinusoidal_encoding builds its table from a block of rows and one complex product
per row (the shift identity PE(p + B) = M_B PE(p)); RotaryEmbedding has a complex
multiplication path (interleaved), a few-calls path for small inputs (half) and
rotate_qk; alibi_bias masks a small table instead of the big one, and
alibi_bias_compact is MPT's one-row-per-head form. No timing is asserted here.
"""

import math

import mpmath
import numpy as np
import pytest
import torch

import posenc_lib as pe


def direct_table(seq_len: int, d_model: int, *, layout: str = "interleaved", base: float = 10000.0) -> np.ndarray:
    """The direct formula in float64: one sin or cos of the rounded angle p * w per entry."""
    omega = pe.sinusoidal_frequencies(d_model, base=base)  # (m,)
    angles = np.multiply.outer(np.arange(seq_len, dtype=np.float64), omega)  # (s, m)
    sines, cosines = np.sin(angles), np.cos(angles[:, : d_model // 2])
    if layout == "concatenated":
        return np.concatenate([sines, cosines], axis=1)
    table = np.empty((seq_len, d_model))
    table[:, 0::2], table[:, 1::2] = sines, cosines
    return table


def exact_entries(positions: np.ndarray, columns: np.ndarray, d_model: int) -> np.ndarray:
    """Entries of the interleaved table to 30 significant digits (mpmath), for the float64 frequencies."""
    omega = pe.sinusoidal_frequencies(d_model)
    mpmath.mp.dps = 30
    values = []
    for p, c in zip(positions.tolist(), columns.tolist()):
        angle = mpmath.mpf(p) * mpmath.mpf(float(omega[c // 2]))  # exact product of two binary numbers
        values.append(float(mpmath.sin(angle) if c % 2 == 0 else mpmath.cos(angle)))
    return np.array(values)


# ---------------------------------------------------------------------------------------------- sinusoidal


def test_float64_table_within_1e12_of_the_direct_formula_at_8192_by_1024():
    table = pe.sinusoidal_encoding(8192, 1024)
    assert table.dtype == np.float64 and table.shape == (8192, 1024)
    assert np.abs(table - direct_table(8192, 1024)).max() <= 1e-12


@pytest.mark.parametrize("seq_len", [1, 2, 3, 15, 16, 17, 99, 257, 1000])
@pytest.mark.parametrize("d_model", [1, 2, 3, 7, 8, 64])
@pytest.mark.parametrize("layout", ["interleaved", "concatenated"])
def test_every_size_and_layout_matches_the_direct_formula(seq_len, d_model, layout):
    expected = direct_table(seq_len, d_model, layout=layout)
    np.testing.assert_allclose(pe.sinusoidal_encoding(seq_len, d_model, layout=layout), expected, rtol=0, atol=1e-13)
    table32 = pe.sinusoidal_encoding(seq_len, d_model, layout=layout, dtype=np.float32)
    assert table32.dtype == np.float32
    np.testing.assert_allclose(table32, expected, rtol=0, atol=3e-7)


def test_long_table_is_accurate_to_a_few_ulp_where_the_direct_formula_is_not():
    # 300 000 positions: the direct formula rounds angles near 3e5 by up to ulp(3e5) / 2 = 2.9e-11 rad
    seq_len, d_model = 300_000, 8
    table = pe.sinusoidal_encoding(seq_len, d_model)
    direct = direct_table(seq_len, d_model)
    rng = np.random.default_rng(0)
    rows = np.concatenate([rng.integers(0, seq_len, 150), np.arange(seq_len - 50, seq_len)])
    cols = np.tile(np.arange(d_model), rows.size)
    rows = np.repeat(rows, d_model)
    exact = exact_entries(rows, cols, d_model)
    ours_error = np.abs(table[rows, cols] - exact).max()
    direct_error = np.abs(direct[rows, cols] - exact).max()
    assert ours_error < 2e-15
    assert direct_error > 1e-12  # the rounded angle, not the sine, is what limits the direct formula


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_8192_by_1024_against_exact_values_in_both_dtypes(dtype):
    table = pe.sinusoidal_encoding(8192, 1024, dtype=dtype)
    rng = np.random.default_rng(1)
    rows, cols = rng.integers(0, 8192, 400), rng.integers(0, 1024, 400)
    rows[:4], cols[:4] = 8191, [0, 1, 1022, 1023]  # the last row, where angles are largest
    error = np.abs(table[rows, cols].astype(np.float64) - exact_entries(rows, cols, 1024)).max()
    assert error < (2e-15 if dtype == np.float64 else 2.5e-7)  # float32: a product of two rounded phasors


def test_float32_table_is_within_a_few_float32_ulps_of_the_float64_table():
    t64 = pe.sinusoidal_encoding(4096, 256)
    t32 = pe.sinusoidal_encoding(4096, 256, dtype=np.float32)
    # one float32 product of two rounded unit phasors: a couple of ulps (6e-8 near 1), never the
    # 1e-4 the old float32 path lost by rounding angles near 4096 to float32
    assert np.abs(t32.astype(np.float64) - t64).max() <= 2.5e-7


def test_other_base_and_module_table():
    np.testing.assert_allclose(pe.sinusoidal_encoding(500, 10, base=100.0), direct_table(500, 10, base=100.0), atol=1e-13)
    module = pe.SinusoidalPositionalEncoding(d_model=16, max_len=3000)
    np.testing.assert_allclose(module.pe.numpy(), direct_table(3000, 16), atol=2e-7)


# ---------------------------------------------------------------------------------------------- RoPE


def reference(x: torch.Tensor, positions, layout: str) -> torch.Tensor:
    return pe.apply_rope(x.double(), positions, layout=layout)


@pytest.mark.parametrize("layout", ["half", "interleaved"])
@pytest.mark.parametrize("shape", [(1, 32, 1, 128), (2, 4, 33, 64), (4, 16, 300, 64), (5, 8)])
@pytest.mark.parametrize("start", [0, 7, 1000])
def test_module_fast_paths_match_float64_reference(layout, shape, start):
    torch.manual_seed(0)
    rotary = pe.RotaryEmbedding(shape[-1], 16, layout=layout)  # small cache: it must grow
    x = torch.randn(shape)
    with torch.no_grad():
        out = rotary(x, start)
    assert out.dtype == torch.float32 and out.shape == x.shape and out.is_contiguous()
    torch.testing.assert_close(out.double(), reference(x, start, layout), atol=2e-6, rtol=0)
    assert rotary.cached_len >= start + shape[-2]


@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_non_contiguous_and_misaligned_inputs_take_a_correct_path(layout):
    torch.manual_seed(1)
    rotary = pe.RotaryEmbedding(16, 64, layout=layout)
    b_s_h_d = torch.randn(2, 9, 4, 16)
    transposed = b_s_h_d.transpose(1, 2)  # (b, h, s, d) view, not contiguous
    storage = torch.randn(2 * 4 * 9 * 16 + 1)
    misaligned = storage[1:].view(2, 4, 9, 16)  # odd storage offset: no complex view of its pairs
    every_other = torch.randn(2, 4, 9, 32)[..., ::2]  # last-dimension stride 2
    for x in (transposed, misaligned, every_other):
        with torch.no_grad():
            out = rotary(x, 3)
        assert out.is_contiguous() and out.shape == x.shape
        torch.testing.assert_close(out.double(), reference(x, 3, layout), atol=2e-6, rtol=0)


@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_rotate_pairs_fast_path_equals_autograd_path(layout):
    torch.manual_seed(2)
    x = torch.randn(3, 4, 20, 32)
    angles = pe.rope_angles(torch.arange(20) + 50, 32)
    cos, sin = angles.cos().float(), angles.sin().float()
    with torch.no_grad():
        fast = pe.rotate_pairs(x, cos, sin, layout)
    slow = pe.rotate_pairs(x.clone().requires_grad_(), cos, sin, layout)
    torch.testing.assert_close(fast, slow.detach(), atol=1e-6, rtol=0)
    torch.testing.assert_close(fast.double(), reference(x, torch.arange(20) + 50, layout), atol=2e-6, rtol=0)


@pytest.mark.parametrize("layout", ["half", "interleaved"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_rotate_qk_equals_rotating_q_and_k_separately(layout, dtype):
    torch.manual_seed(3)
    rotary = pe.RotaryEmbedding(32, 8, layout=layout)
    q = torch.randn(2, 8, 5, 32).to(dtype)
    k = torch.randn(2, 2, 5, 32).to(dtype)  # fewer key heads, as in grouped-query attention
    for positions in (None, 11, torch.tensor([4, 0, 9, 9, 2]), torch.tensor([0.5, 1.0, 2.5, 3.0, 40.25])):
        with torch.no_grad():
            q_out, k_out = rotary.rotate_qk(q, k, positions)
            assert torch.equal(q_out, rotary(q, positions)) and torch.equal(k_out, rotary(k, positions))
    q_grad = q.float().requires_grad_()
    q_out, k_out = rotary.rotate_qk(q_grad, k.float())
    assert q_out.requires_grad
    q_out.pow(2).sum().backward()  # a rotation keeps norms: d/dq |R q|^2 = 2 q
    torch.testing.assert_close(q_grad.grad, 2 * q.float())


def test_rotate_qk_rejects_bad_input():
    rotary = pe.RotaryEmbedding(8, 4)
    with pytest.raises(ValueError, match="same sequence length"):
        rotary.rotate_qk(torch.zeros(1, 2, 3, 8), torch.zeros(1, 2, 4, 8))
    with pytest.raises(ValueError, match="k must have last dimension head_dim=8"):
        rotary.rotate_qk(torch.zeros(1, 2, 3, 8), torch.zeros(1, 2, 3, 6))
    with pytest.raises(TypeError, match="q must be a torch.Tensor"):
        rotary.rotate_qk(np.zeros((3, 8)), torch.zeros(3, 8))
    with pytest.raises(TypeError, match="k must have a floating-point dtype"):
        rotary.rotate_qk(torch.zeros(3, 8), torch.zeros(3, 8, dtype=torch.int64))
    with pytest.raises(ValueError, match="must be >= 0"):
        rotary.rotate_qk(torch.zeros(3, 8), torch.zeros(3, 8), -2)


@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_converted_module_keeps_the_input_dtype(layout):
    torch.manual_seed(4)
    x = torch.randn(2, 3, 6, 16)
    rotary = pe.RotaryEmbedding(16, 8, layout=layout).double()  # its float32 tables become float64
    with torch.no_grad():
        out = rotary(x, 2)
    assert out.dtype == torch.float32
    torch.testing.assert_close(out.double(), reference(x, 2, layout), atol=2e-6, rtol=0)


# ---------------------------------------------------------------------------------------------- ALiBi


def old_alibi_bias(n_heads: int, q_len: int, k_len: int, dtype: torch.dtype) -> torch.Tensor:
    """The construction before the change: the product, then masked_fill over the (h, s_q, s_k) result."""
    offset = torch.arange(k_len).unsqueeze(0) - torch.arange(k_len - q_len, k_len).unsqueeze(1)  # (s_q, s_k)
    slopes = pe.alibi_slopes(n_heads).to(dtype).view(-1, 1, 1)
    return (slopes * offset.clamp(max=0).to(dtype)).masked_fill(offset > 0, float("-inf"))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("n_heads,q_len,k_len", [(1, 1, 1), (8, 5, 5), (12, 3, 40), (32, 64, 64)])
def test_causal_bias_is_unchanged_bit_for_bit(dtype, n_heads, q_len, k_len):
    assert torch.equal(pe.alibi_bias(n_heads, q_len, k_len, dtype=dtype), old_alibi_bias(n_heads, q_len, k_len, dtype))


@pytest.mark.parametrize("n_heads", [1, 5, 8, 12, 32])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
def test_compact_is_the_last_query_row(n_heads, dtype):
    for k_len in (1, 6, 3000):
        compact = pe.alibi_bias_compact(n_heads, k_len, dtype=dtype)
        assert compact.shape == (n_heads, 1, k_len) and compact.dtype == dtype
        assert torch.equal(compact, pe.alibi_bias(n_heads, 1, k_len, dtype=dtype))


@pytest.mark.parametrize("q_len,k_len", [(1, 9), (9, 9), (4, 9)])
def test_compact_gives_the_same_attention_as_the_full_bias(q_len, k_len):
    gen = torch.Generator().manual_seed(5)
    scores = torch.randn(2, 6, q_len, k_len, generator=gen, dtype=torch.float64)  # (b, h, s_q, s_k)
    mask = torch.where(pe.causal_mask(q_len, k_len), 0.0, float("-inf")).double()  # (s_q, s_k)
    compact = pe.alibi_bias_compact(6, k_len, dtype=torch.float64)  # (h, 1, s_k)
    full = pe.alibi_bias(6, q_len, k_len, dtype=torch.float64)  # (h, s_q, s_k)
    torch.testing.assert_close(torch.softmax(scores + compact + mask, -1), torch.softmax(scores + full, -1))
    # not the same numbers: on the visible keys the two differ by a constant per query row
    visible = torch.isfinite(full)  # (h, s_q, s_k)
    shift = torch.where(visible, compact - full, 0.0)
    row = shift[..., :1]  # key 0 is visible to every query
    torch.testing.assert_close(torch.where(visible, shift, row), row.expand_as(shift))
    assert bool((row != 0).any()) == (q_len > 1)


@pytest.mark.parametrize("n_heads", [8, 12, 32])
def test_compact_matches_hugging_face_mpt(n_heads):
    from transformers.models.mpt.modeling_mpt import build_mpt_alibi_tensor

    torch.testing.assert_close(pe.alibi_bias_compact(n_heads, 300), build_mpt_alibi_tensor(n_heads, 300), rtol=1e-6, atol=0)


def test_compact_rejects_bad_input():
    with pytest.raises(ValueError, match="n_heads must be a positive integer"):
        pe.alibi_bias_compact(0, 4)
    with pytest.raises(TypeError, match="k_len must be a positive integer"):
        pe.alibi_bias_compact(4, 2.5)
    with pytest.raises(TypeError, match="dtype must be a floating-point torch dtype"):
        pe.alibi_bias_compact(4, 8, dtype=torch.int32)
    with pytest.raises(TypeError, match="dtype"):
        pe.alibi_bias_compact(4, 8, dtype=np.float32)
