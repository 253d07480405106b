"""Every encoding function and module runs on the device of its input, and keeps its precision in bf16/fp16.

PyTorch's ``meta`` device runs the shape logic without memory: code that builds a tensor on
the CPU regardless of its input fails there (torchtune tests its RoPE the same way). The same
tests run on CUDA where CUDA is present; on a machine without it those cases are skipped with
that reason (marker ``cuda``).
"""

from __future__ import annotations

import pytest
import torch

import posenc_lib as pe
from posenc_lib.analysis import (
    alibi_attention_span,
    alibi_weights_by_distance,
    convert_qk_weight,
    rope_angle_gap,
    rope_decay_bound,
)

pytestmark = pytest.mark.usefixtures("one_thread")

CUDA = pytest.param(
    "cuda",
    marks=[pytest.mark.cuda, pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA is not available here")],
)
DEVICES = ["cpu", "meta", CUDA]


def on(device: str, result) -> None:
    """Assert that every tensor in ``result`` lives on ``device``."""
    tensors = result if isinstance(result, (tuple, list)) else [result]
    for tensor in tensors:
        assert isinstance(tensor, torch.Tensor) and tensor.device.type == device, (tensor.device, device)


def randn(*shape: int, device: str, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.randn(*shape, dtype=dtype).to(device)


@pytest.mark.parametrize("device", DEVICES)
def test_sinusoidal_on_device(device):
    on(device, pe.sinusoidal_frequencies(8, device=device))
    for layout in ("interleaved", "concatenated"):
        for dtype in (torch.float32, torch.float64, torch.bfloat16):
            table = pe.sinusoidal_encoding(50, 7, layout=layout, dtype=dtype, device=device, offset=10**6)
            on(device, table)
            assert table.shape == (50, 7) and table.dtype == dtype
            with pe.fast.disabled():
                on(device, pe.sinusoidal_encoding(50, 7, layout=layout, dtype=dtype, device=device))
    on(device, pe.fast.sinusoidal_table(33, 8, pe.sinusoidal_frequencies(8, device=device), device=device))
    on(device, pe.shift_matrix(2.5, 8, device=device))
    on(device, pe.interleaved_to_concatenated_permutation(9, device=device))
    on(device, pe.sinusoidal_dot_by_distance(torch.arange(5).to(device), 8))


@pytest.mark.parametrize("device", DEVICES)
def test_sinusoidal_module_on_device(device):
    built_there = pe.SinusoidalPositionalEncoding(8, 16, device=device)
    moved = pe.SinusoidalPositionalEncoding(8, 16).to(device)
    for module in (built_there, moved):
        on(device, module.pe)
        x = randn(2, 5, 8, device=device)
        on(device, module(x))
        on(device, module(x, offset=100))  # past the table: computed on x's device
        on(device, module(x.double(), offset=3))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_rope_functions_on_device(device, layout):
    theta = pe.rope_frequencies(16, device=device)
    on(device, theta)
    positions = torch.arange(5).to(device)
    on(device, pe.rope_angles(positions, theta))
    on(device, pe.wavelengths(theta))
    angles = pe.rope_angles(positions, theta)
    for dtype in (torch.float32, torch.float64, torch.bfloat16, torch.float16):
        x = randn(2, 3, 5, 16, device=device, dtype=dtype)
        on(device, pe.rotate_pairs(x, angles.cos(), angles.sin(), layout))
        on(device, pe.apply_rope(x, layout=layout))
        on(device, pe.apply_rope(x, positions, layout=layout))
        on(device, pe.apply_rope(x, offset=10**8, layout=layout, frequencies=pe.yarn_frequencies(theta, 4.0, 64)))
        with pe.fast.disabled():
            on(device, pe.apply_rope(x, layout=layout))
    x = randn(5, 16, device=device)
    on(device, pe.apply_rope(x, torch.arange(5)))  # CPU positions are moved to x's device
    on(device, pe.interleaved_to_half_permutation(16, device=device))
    on(device, pe.half_to_interleaved_permutation(16, device=device))
    on(device, convert_qk_weight(randn(32, 12, device=device), 2))
    on(device, rope_decay_bound(torch.arange(10).to(device), 16))
    on(device, rope_angle_gap(torch.arange(10).to(device), 8, 16))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_rotary_module_on_device(device, layout):
    built_there = pe.RotaryEmbedding(16, 32, layout=layout, attention_factor=1.1, device=device)
    moved = pe.RotaryEmbedding(16, 32, layout=layout).to(device)
    for rotary in (built_there, moved):
        on(device, [rotary.frequencies, rotary.cos_cached, rotary.sin_cached])
        for dtype in (torch.float32, torch.float64, torch.bfloat16, torch.float16):
            q, k = randn(2, 4, 5, 16, device=device, dtype=dtype), randn(2, 2, 5, 16, device=device, dtype=dtype)
            with torch.no_grad():
                on(device, rotary(q))
                on(device, rotary(q, offset=10**6))  # far beyond the cache
                on(device, rotary.rotate_qk(q, k, offset=30))  # crosses the end of the cache
            on(device, rotary(q, torch.arange(5).to(device)))
            on(device, rotary(q.requires_grad_() if dtype == torch.float32 else q))
        on(device, rotary.cos_sin(4, offset=10**9))


@pytest.mark.parametrize("device", DEVICES)
def test_rope_scaling_on_device(device):
    theta = pe.rope_frequencies(32, device=device)
    for result in (
        pe.rotations(theta, 100),
        pe.unseen_arc(theta, 400, theta, 100),
        pe.linear_scaling_frequencies(theta, 4.0),
        pe.ntk_aware_frequencies(theta, 4.0),
        pe.dynamic_ntk_frequencies(theta, 300, 100, 2.0),
        pe.yarn_ramp(theta, 100),
        pe.yarn_frequencies(theta, 4.0, 100),
        pe.llama3_frequencies(theta, 4.0, 100),
    ):
        on(device, result)
        assert result.shape == (16,) and result.dtype == torch.float64


@pytest.mark.parametrize("device", DEVICES)
def test_alibi_and_relative_on_device(device):
    on(device, pe.alibi_slopes(12, device=device))
    for dtype in (torch.float32, torch.float64, torch.bfloat16, torch.float16):
        for causal in (True, False):
            on(device, pe.alibi_bias(12, 5, 9, causal=causal, dtype=dtype, device=device))
            with pe.fast.disabled():
                on(device, pe.alibi_bias(12, 5, 9, causal=causal, dtype=dtype, device=device))
        on(device, pe.alibi_bias_compact(12, 9, dtype=dtype, device=device))
    on(device, alibi_weights_by_distance(4, 10, device=device))
    on(device, alibi_attention_span(4, 10, device=device))
    on(device, pe.relative_positions(3, 7, device=device))
    on(device, pe.shaw_relative_index(3, 7, max_relative_position=2, device=device))
    on(device, pe.t5_relative_position_bucket(pe.relative_positions(3, 7, device=device)))
    on(device, pe.T5RelativeBias(4, device=device)(3, 7))
    on(device, pe.T5RelativeBias(4).to(device)(3, 7))


def test_a_module_built_on_meta_is_materialised_by_to_empty_and_reset_parameters():
    for module, make in (
        (pe.RotaryEmbedding(16, 8, device="meta"), lambda: pe.RotaryEmbedding(16, 8)),
        (pe.SinusoidalPositionalEncoding(16, 8, device="meta"), lambda: pe.SinusoidalPositionalEncoding(16, 8)),
    ):
        module.to_empty(device="cpu")
        module.reset_parameters()
        expected = make()
        for name, buffer in expected.named_buffers():
            assert torch.equal(dict(module.named_buffers())[name], buffer), name


GIVEN_FREQUENCIES = {  # issue 22: these were rebuilt from uninitialised memory by reset_parameters
    "linear": lambda: pe.linear_scaling_frequencies(pe.rope_frequencies(16), 4.0),
    "yarn": lambda: pe.yarn_frequencies(pe.rope_frequencies(16), 4.0, 64),
    "llama3": lambda: pe.llama3_frequencies(pe.rope_frequencies(16, 500000.0), 8.0, 64),
    "arbitrary": lambda: torch.tensor([1.0, 0.3, 0.05, 1e-3, 7e-4, 2e-5, 1e-6, 3e-8], dtype=torch.float64),
}


@pytest.mark.parametrize("attention_factor", [1.0, 1.25])
@pytest.mark.parametrize("layout", ["half", "interleaved"])
@pytest.mark.parametrize("kind", sorted(GIVEN_FREQUENCIES))
def test_given_frequencies_survive_meta_to_empty_reset_parameters(kind, layout, attention_factor):
    theta = GIVEN_FREQUENCIES[kind]()
    settings = {"layout": layout, "frequencies": theta, "attention_factor": attention_factor}
    module = pe.RotaryEmbedding(16, 32, device="meta", **settings)  # the meta-device initialisation path
    module.to_empty(device="cpu")  # every buffer is now uninitialised memory
    module.reset_parameters()
    direct = pe.RotaryEmbedding(16, 32, **settings)
    assert dict(module.named_buffers()).keys() == dict(direct.named_buffers()).keys()
    for name, buffer in direct.named_buffers():
        assert torch.equal(dict(module.named_buffers())[name], buffer), name
    x = torch.randn(2, 3, 40, 16, generator=torch.Generator().manual_seed(0))  # past the cache too
    assert torch.equal(module(x), direct(x))
    assert torch.equal(module(x, torch.arange(40.0) * 0.5), direct(x, torch.arange(40.0) * 0.5))
    expected = pe.apply_rope(x.double(), layout=layout, frequencies=theta) * attention_factor  # the rotation asked for
    torch.testing.assert_close(module(x), expected.float(), atol=1e-5, rtol=1e-5)


def test_given_frequencies_survive_to_empty_on_a_module_built_on_the_cpu():
    theta = GIVEN_FREQUENCIES["yarn"]()
    module, direct = pe.RotaryEmbedding(16, 8, frequencies=theta), pe.RotaryEmbedding(16, 8, frequencies=theta)
    module.to_empty(device="cpu")
    module.reset_parameters()
    assert torch.equal(module.frequencies, theta) and torch.equal(module.cos_cached, direct.cos_cached)


def test_the_meta_device_keeps_the_size_budget():
    with pytest.raises(ValueError, match="posenc_lib's limit"):
        pe.RotaryEmbedding(8, 10**9, device="meta")
    with pytest.raises(ValueError, match="causal mask"):
        pe.causal_mask(10**6, 10**6, device="meta")
    with pytest.raises(ValueError, match="the attention scores"):
        pe.attention(*(torch.zeros(10**5, 8, device="meta"),) * 3)


def test_a_tensor_on_another_device_than_the_tables_is_a_clear_error():
    with pytest.raises(ValueError, match="x is on meta but this RotaryEmbedding's tables are on cpu"):
        pe.RotaryEmbedding(8)(torch.zeros(2, 8, device="meta"))
    with pytest.raises(ValueError, match="x is on meta but this SinusoidalPositionalEncoding's tables are on cpu"):
        pe.SinusoidalPositionalEncoding(8)(torch.zeros(2, 8, device="meta"))


# ---------------------------------------------------------------------------------------------- precision


@pytest.mark.parametrize(
    "convert",
    [lambda m: m.to(torch.bfloat16), lambda m: m.half(), lambda m: m.double(), lambda m: m.to("cpu", torch.bfloat16)],
    ids=["to_bf16", "half", "double", "to_cpu_bf16"],
)
@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_converted_rotary_keeps_its_tables_and_the_accuracy_of_apply_rope(convert, layout):
    torch.manual_seed(0)
    rotary = convert(pe.RotaryEmbedding(64, 8192, layout=layout))
    assert rotary.frequencies.dtype == torch.float64
    assert rotary.cos_cached.dtype == rotary.sin_cached.dtype == torch.float32
    torch.testing.assert_close(rotary.frequencies, pe.rope_frequencies(64), rtol=0, atol=0)
    for dtype in (torch.bfloat16, torch.float16, torch.float32, torch.float64):
        x = torch.randn(2, 4, 8, 64).to(dtype)
        exact = pe.apply_rope(x.double(), offset=4000, layout=layout)  # the same input, rotated in float64
        with torch.no_grad():
            ours = rotary(x, offset=4000)
        function = pe.apply_rope(x, offset=4000, layout=layout)
        assert ours.dtype == dtype
        module_error = (ours.double() - exact).abs().max().item()
        function_error = (function.double() - exact).abs().max().item()
        assert module_error <= function_error + 1e-12, (dtype, module_error, function_error)
        assert (
            module_error < {torch.bfloat16: 0.05, torch.float16: 0.01, torch.float32: 2e-6, torch.float64: 1e-13}[dtype]
        )


def test_unconverted_bf16_tables_would_be_wrong():
    """What the kept precision buys: rounding the frequencies to bf16 turns position 4000 by a wrong angle."""
    torch.manual_seed(1)
    x = torch.randn(1, 1, 1, 64, dtype=torch.float64)
    exact = pe.apply_rope(x, offset=4000)
    rounded = pe.apply_rope(x, offset=4000, frequencies=pe.rope_frequencies(64).bfloat16().double())
    assert (rounded - exact).abs().max() > 0.5


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_converted_sinusoidal_module_keeps_a_float32_table(dtype):
    module = pe.SinusoidalPositionalEncoding(16, 64).to(dtype)
    assert module.pe.dtype == torch.float32
    x = torch.randn(2, 10, 16).to(dtype)
    out = module(x, offset=5)
    assert out.dtype == dtype
    torch.testing.assert_close(out, x + pe.sinusoidal_encoding(10, 16, offset=5).to(dtype))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_low_precision_alibi_biases_stay_finite(dtype):
    # 12 heads: the largest slope is 2^-0.5, so distances past 65504 * 2^0.5 overflow float16
    for causal in (True, False):
        bias = pe.alibi_bias(12, 2, 100_000, causal=causal, dtype=dtype)
        past = bias[:, :, :99_999]  # keys at or before every query
        assert torch.isfinite(past).all()
        assert (past[8, :, 0] == torch.finfo(dtype).min).all() if dtype == torch.float16 else True
    compact = pe.alibi_bias_compact(12, 100_000, dtype=dtype)
    assert torch.isfinite(compact).all()
    torch.testing.assert_close(compact[:, 0, -50:], pe.alibi_bias_compact(12, 50, dtype=dtype)[:, 0])


@pytest.mark.parametrize("device", DEVICES)
def test_rope_variants_on_device(device):
    x = randn(2, 3, 5, 8, device=device)  # (b, n_h, s, d_h)
    for dtype in (torch.float32, torch.bfloat16):
        out = pe.apply_partial_rope(x.to(dtype), 4, offset=10**6)
        on(device, out)
        assert out.shape == x.shape and out.dtype == dtype
        rows, cols = torch.arange(5).to(device) // 2, torch.arange(5).to(device) % 2
        grid = pe.apply_rope_2d(x.to(dtype), rows, cols)
        on(device, grid)
        assert grid.shape == x.shape and grid.dtype == dtype


@pytest.mark.parametrize("device", DEVICES)
def test_score_terms_on_device(device):
    from posenc_lib.analysis import additive_score_terms
    from posenc_lib.model import Block, TransformerConfig

    block = Block(TransformerConfig(vocab_size=8, d_model=16, n_heads=2)).to(device)
    terms = additive_score_terms(block, randn(2, 5, 16, device=device), randn(5, 16, device=device))
    on(device, list(terms.values()))
    assert all(t.shape == (2, 2, 5, 5) for t in terms.values())
