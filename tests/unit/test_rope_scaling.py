"""RoPE context-extension frequencies, cross-checked against HF transformers' reference code.

HF computes in float32 and we in float64, so agreement is to float32 rounding:
we compare relative differences and print the largest one per variant
(``pytest -s tests/unit/test_rope_scaling.py`` shows them).
"""

import pytest
import torch

# a hard import, not importorskip: the reference is a pinned test dependency (requirements-test.txt)
import transformers
from transformers import LlamaConfig
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

import posenc_lib as pe

FLOAT32_RTOL = 2e-6  # a few float32 ulps: HF rounds base ** (2k/d) and the products in float32

LARGEST_DIFFERENCE: dict[str, float] = {}


def hf_config(head_dim: int, base: float, max_position_embeddings: int, **rope) -> LlamaConfig:
    """A config for HF's RoPE functions; transformers 5.x reads `rope_parameters` (4.x: rope_theta/rope_scaling)."""
    major = int(transformers.__version__.split(".")[0])
    params = {"rope_theta": base, **rope}
    kwargs = dict(
        hidden_size=head_dim * 4,
        num_attention_heads=4,
        head_dim=head_dim,
        max_position_embeddings=max_position_embeddings,
    )
    if major >= 5:
        return LlamaConfig(**kwargs, rope_parameters=params)
    rope_type = params.pop("rope_type")
    params.pop("rope_theta")
    scaling = None if rope_type == "default" else {"rope_type": rope_type, **params}
    return LlamaConfig(**kwargs, rope_theta=base, rope_scaling=scaling)


def relative_difference(ours: torch.Tensor, reference: torch.Tensor) -> float:
    return ((ours - reference.double()).abs() / reference.double().abs()).max().item()


def record(variant: str, difference: float) -> None:
    LARGEST_DIFFERENCE[variant] = max(LARGEST_DIFFERENCE.get(variant, 0.0), difference)


@pytest.fixture(scope="module", autouse=True)
def report_largest_differences():
    yield
    print("\nlargest relative difference to HF transformers, per variant:")
    for variant, difference in sorted(LARGEST_DIFFERENCE.items()):
        print(f"  {variant:>22}: {difference:.2e}")


SHAPES = [(64, 10_000.0), (128, 10_000.0), (128, 500_000.0), (32, 1_000_000.0), (96, 10_000.0)]


@pytest.mark.parametrize("head_dim,base", SHAPES)
def test_default_matches_hf(head_dim, base):
    config = hf_config(head_dim, base, 4096, rope_type="default")
    reference, scale = LlamaRotaryEmbedding.compute_default_rope_parameters(config)
    ours = pe.rope_frequencies(head_dim, base)
    difference = relative_difference(ours, reference)
    record("default", difference)
    assert scale == 1.0
    assert difference < FLOAT32_RTOL


@pytest.mark.parametrize("head_dim,base", SHAPES)
@pytest.mark.parametrize("factor", [1.0, 2.0, 4.0, 8.5, 32.0])
def test_linear_matches_hf(head_dim, base, factor):
    config = hf_config(head_dim, base, 4096, rope_type="linear", factor=factor)
    reference, scale = ROPE_INIT_FUNCTIONS["linear"](config, "cpu")
    ours = pe.linear_scaling_frequencies(pe.rope_frequencies(head_dim, base), factor)
    difference = relative_difference(ours, reference)
    record("linear (PI)", difference)
    assert scale == 1.0
    assert difference < FLOAT32_RTOL


@pytest.mark.parametrize("head_dim,base", SHAPES)
@pytest.mark.parametrize("factor", [1.0, 2.0, 4.0, 16.0])
@pytest.mark.parametrize("seq_len", [100, 2048, 4096, 5000, 8192, 65_536])
def test_dynamic_ntk_matches_hf(head_dim, base, factor, seq_len):
    original = 4096
    config = hf_config(head_dim, base, original, rope_type="dynamic", factor=factor)
    reference, scale = ROPE_INIT_FUNCTIONS["dynamic"](config, "cpu", seq_len=seq_len)
    ours = pe.dynamic_ntk_frequencies(pe.rope_frequencies(head_dim, base), seq_len, original, factor)
    difference = relative_difference(ours, reference)
    record("dynamic NTK", difference)
    assert scale == 1.0
    assert difference < 4 * FLOAT32_RTOL  # HF raises a float32-rounded new base to the power 2k/d


@pytest.mark.parametrize("head_dim,base", SHAPES)
@pytest.mark.parametrize("factor", [1.0, 2.0, 3.0, 8.0, 64.0])
def test_ntk_aware_matches_closed_form(head_dim, base, factor):
    """NTK-aware scaling is the standard frequencies for the base base * s^(d/(d-2))."""
    ours = pe.ntk_aware_frequencies(pe.rope_frequencies(head_dim, base), factor)
    closed_form = pe.rope_frequencies(head_dim, base * factor ** (head_dim / (head_dim - 2)))
    difference = relative_difference(ours, closed_form)
    record("NTK-aware (closed form)", difference)
    assert difference < 1e-12
    assert pe.ntk_aware_base(base, head_dim, factor) == pytest.approx(base * factor ** (head_dim / (head_dim - 2)))
    # the fastest pair is untouched, the slowest is divided by exactly the factor
    original = pe.rope_frequencies(head_dim, base)
    assert ours[0].item() == pytest.approx(original[0].item(), rel=1e-15)
    assert ours[-1].item() == pytest.approx(original[-1].item() / factor, rel=1e-12)


@pytest.mark.parametrize("head_dim,base", SHAPES)
@pytest.mark.parametrize("factor", [2.0, 5.0])
def test_ntk_aware_equals_hf_dynamic_at_factor_one(head_dim, base, factor):
    """HF's dynamic rule with factor=1 at seq_len = s * L is static NTK-aware scaling by s."""
    original = 2048
    config = hf_config(head_dim, base, original, rope_type="dynamic", factor=1.0)
    reference, _ = ROPE_INIT_FUNCTIONS["dynamic"](config, "cpu", seq_len=int(factor * original))
    ours = pe.ntk_aware_frequencies(pe.rope_frequencies(head_dim, base), factor)
    difference = relative_difference(ours, reference)
    record("NTK-aware (HF dynamic)", difference)
    assert difference < 4 * FLOAT32_RTOL


YARN_CASES = [
    # head_dim, base, factor, original length, beta_fast, beta_slow, truncate
    (64, 10_000.0, 4.0, 4096, 32, 1, True),
    (128, 10_000.0, 16.0, 4096, 32, 1, True),
    (128, 10_000.0, 32.0, 2048, 32, 1, False),
    (128, 500_000.0, 8.0, 8192, 32, 1, True),
    (128, 1_000_000.0, 4.0, 32_768, 32, 1, True),  # Qwen-style settings
    (64, 10_000.0, 2.0, 100_000, 32, 1, True),  # slowest boundary beyond the last pair: clamped to d - 1
    (96, 10_000.0, 8.0, 4096, 16, 2, True),
    (32, 10_000.0, 40.0, 4096, 64, 0.5, False),
    (128, 10_000.0, 1.0, 4096, 32, 1, True),
]


@pytest.mark.parametrize("head_dim,base,factor,original,beta_fast,beta_slow,truncate", YARN_CASES)
def test_yarn_matches_hf(head_dim, base, factor, original, beta_fast, beta_slow, truncate):
    config = hf_config(
        head_dim,
        base,
        int(original * factor),
        rope_type="yarn",
        factor=factor,
        original_max_position_embeddings=original,
        beta_fast=beta_fast,
        beta_slow=beta_slow,
        truncate=truncate,
    )
    reference, scale = ROPE_INIT_FUNCTIONS["yarn"](config, "cpu")
    ours = pe.yarn_frequencies(
        pe.rope_frequencies(head_dim, base),
        factor,
        original,
        beta_fast=beta_fast,
        beta_slow=beta_slow,
        truncate=truncate,
    )
    difference = relative_difference(ours, reference)
    record("yarn", difference)
    assert difference < FLOAT32_RTOL
    attention_factor = pe.yarn_attention_factor(factor)
    record("yarn attention factor", abs(attention_factor - scale) / scale)
    assert attention_factor == pytest.approx(scale, rel=1e-12)


@pytest.mark.parametrize(
    "factor,mscale,mscale_all_dim", [(40.0, 1.0, 1.0), (40.0, 0.707, 0.707), (16.0, 1.0, 0.5), (4.0, 2.0, 1.0)]
)
def test_yarn_deepseek_attention_factor_matches_hf(factor, mscale, mscale_all_dim):
    config = hf_config(
        64,
        10_000.0,
        4096 * int(factor),
        rope_type="yarn",
        factor=factor,
        original_max_position_embeddings=4096,
        mscale=mscale,
        mscale_all_dim=mscale_all_dim,
    )
    _, scale = ROPE_INIT_FUNCTIONS["yarn"](config, "cpu")
    ours = pe.yarn_attention_factor(factor, mscale=mscale, mscale_all_dim=mscale_all_dim)
    record("yarn attention factor", abs(ours - scale) / scale)
    assert ours == pytest.approx(scale, rel=1e-12)


def test_yarn_end_to_end_with_apply_rope_matches_hf_rotary():
    """apply_rope with YaRN frequencies, times the attention factor, equals HF's rotary embedding of q and k."""
    head_dim, factor, original = 64, 8.0, 1024
    config = hf_config(
        head_dim,
        10_000.0,
        int(original * factor),
        rope_type="yarn",
        factor=factor,
        original_max_position_embeddings=original,
    )
    rotary = LlamaRotaryEmbedding(config)
    gen = torch.Generator().manual_seed(0)
    q, k = torch.randn(2, 2, 3, 300, head_dim, generator=gen)  # each (b, h, s, d)
    positions = torch.arange(300) * 27  # up to 8073, beyond the original 1024
    cos, sin = rotary(q, positions.unsqueeze(0).expand(2, -1))
    q_hf, k_hf = apply_rotary_pos_emb(q, k, cos, sin)
    freqs = pe.yarn_frequencies(pe.rope_frequencies(head_dim), factor, original)
    a = pe.yarn_attention_factor(factor)
    q_ours = pe.apply_rope(q, positions, frequencies=freqs) * a
    k_ours = pe.apply_rope(k, positions, frequencies=freqs) * a
    difference = max((q_ours - q_hf).abs().max().item(), (k_ours - k_hf).abs().max().item())
    record("yarn q/k end to end (abs)", difference)
    # HF multiplies float32 positions by float32 frequencies; at position ~8000 that is ~1e-3 rad of rounding
    assert difference < 5e-3
    # and without the attention factor the magnitudes would be off by a * |q|, far more than that
    assert (pe.apply_rope(q, positions, frequencies=freqs) - q_hf).abs().max().item() > 0.1


LLAMA3_CASES = [
    # head_dim, base, factor, original, low_freq_factor, high_freq_factor
    (128, 500_000.0, 8.0, 8192, 1.0, 4.0),  # Llama 3.1
    (64, 500_000.0, 32.0, 8192, 1.0, 4.0),  # Llama 3.2 1B/3B
    (128, 10_000.0, 4.0, 4096, 1.0, 4.0),
    (128, 10_000.0, 4.0, 4096, 2.0, 8.0),
    (96, 100_000.0, 16.0, 2048, 0.5, 3.0),
]


@pytest.mark.parametrize("head_dim,base,factor,original,low,high", LLAMA3_CASES)
def test_llama3_matches_hf(head_dim, base, factor, original, low, high):
    config = hf_config(
        head_dim,
        base,
        int(original * factor),
        rope_type="llama3",
        factor=factor,
        original_max_position_embeddings=original,
        low_freq_factor=low,
        high_freq_factor=high,
    )
    reference, scale = ROPE_INIT_FUNCTIONS["llama3"](config, "cpu")
    ours = pe.llama3_frequencies(
        pe.rope_frequencies(head_dim, base), factor, original, low_freq_factor=low, high_freq_factor=high
    )
    difference = relative_difference(ours, reference)
    record("llama3", difference)
    assert scale == 1.0
    assert difference < FLOAT32_RTOL


def test_each_variant_changes_what_it_should():
    """Beyond the references: the properties the chapter teaches."""
    d, L, s = 128, 4096, 8.0
    theta = pe.rope_frequencies(d)
    turns = pe.rotations(theta, L)
    torch.testing.assert_close(pe.wavelengths(theta) * turns, torch.full_like(theta, float(L)))
    ratio_pi = pe.linear_scaling_frequencies(theta, s) / theta
    torch.testing.assert_close(ratio_pi, torch.full_like(theta, 1 / s))
    ratio_yarn = pe.yarn_frequencies(theta, s, L) / theta
    assert torch.all(ratio_yarn[turns > 32] == 1.0), "fast pairs (more than 32 turns in L) are left alone"
    torch.testing.assert_close(ratio_yarn[turns < 1], torch.full_like(ratio_yarn[turns < 1], 1 / s))
    assert torch.all(ratio_yarn[1:] <= ratio_yarn[:-1]), "the ramp is monotone"
    ratio_llama = pe.llama3_frequencies(theta, s, L) / theta
    assert torch.all(ratio_llama[turns > 4] == 1.0)
    torch.testing.assert_close(ratio_llama[turns < 1], torch.full_like(ratio_llama[turns < 1], 1 / s))
    ratio_ntk = pe.ntk_aware_frequencies(theta, s) / theta
    assert torch.all(ratio_ntk[1:] < ratio_ntk[:-1])
    # dynamic NTK leaves the training range alone
    torch.testing.assert_close(pe.dynamic_ntk_frequencies(theta, L, L, 4.0), theta)
    # frequencies from a variant go straight into apply_rope / RotaryEmbedding
    x = torch.randn(1, 2, 5, d)
    freqs = pe.llama3_frequencies(theta, s, L)
    torch.testing.assert_close(
        pe.RotaryEmbedding(d, 8, frequencies=freqs)(x, offset=3), pe.apply_rope(x, offset=3, frequencies=freqs)
    )


def test_interpolated_angles_stay_in_the_trained_range():
    """At s * L positions, PI keeps every pair's largest angle within less than one step of the trained range.

    Positions 0 .. sL-1 become 0, 1/s, ..., L - 1/s: the last one lies (1 - 1/s) of a step beyond the
    last trained position L - 1, never a whole step.
    """
    d, L, s = 64, 2048, 4.0
    theta = pe.rope_frequencies(d)
    trained_max = pe.rope_angles(torch.arange(L), theta).max(dim=0).values  # (d/2,) = (L-1) theta
    long_plain = pe.rope_angles(torch.arange(int(s * L)), theta).max(dim=0).values
    long_pi = pe.rope_angles(torch.arange(int(s * L)), pe.linear_scaling_frequencies(theta, s)).max(dim=0).values
    torch.testing.assert_close(long_pi, trained_max + (1 - 1 / s) * theta)
    assert torch.all(long_plain - trained_max >= (s - 1) * L * theta - 1e-9)


def test_unseen_arc_per_method():
    """Plain RoPE at 4L leaves the slow pairs' trained arc; PI, YaRN and Llama 3 stay within one step of it;
    NTK-aware scaling by exactly s leaves some middle pairs beyond it."""
    d, L, s = 128, 4096, 4
    theta = pe.rope_frequencies(d)
    slow = (L - 1) * theta < 2 * torch.pi  # pairs that never completed a turn in training
    plain = pe.unseen_arc(theta, s * L, theta, L)
    assert torch.all(plain[~slow] == 0) and torch.all(plain[slow] > 0)
    expected_plain = (torch.clamp((s * L - 1) * theta, max=2 * torch.pi) - (L - 1) * theta).clamp(min=0)
    torch.testing.assert_close(plain, expected_plain)
    for method in (
        pe.linear_scaling_frequencies(theta, s),
        pe.yarn_frequencies(theta, s, L),
        pe.llama3_frequencies(theta, s, L),
    ):
        in_steps = pe.unseen_arc(method, s * L, theta, L) / theta
        assert in_steps.max() < 1.0  # only the fractional tail (1 - 1/s) of a step
    ntk = pe.unseen_arc(pe.ntk_aware_frequencies(theta, s), s * L, theta, L)
    assert ntk.max() > 1.0 and ntk[-1] < 1e-3  # middle pairs out of range, the slowest pair is fine
    assert torch.equal(pe.unseen_arc(theta, L, theta, L), torch.zeros_like(theta))


BAD = [
    (lambda: pe.linear_scaling_frequencies(torch.ones(4), 0.5), ValueError, "factor must be >= 1"),
    (lambda: pe.linear_scaling_frequencies(torch.ones(4), "2"), TypeError, "factor must be a positive number"),
    (lambda: pe.linear_scaling_frequencies([1.0, 0.5], 2.0), TypeError, "frequencies must be a torch.Tensor"),
    (lambda: pe.linear_scaling_frequencies(torch.ones(2, 2), 2.0), ValueError, r"frequencies must be a 1-D tensor"),
    (lambda: pe.linear_scaling_frequencies(torch.arange(4), 2.0), TypeError, "floating-point"),
    (lambda: pe.linear_scaling_frequencies(torch.tensor([1.0, -1.0]), 2.0), ValueError, "finite and > 0"),
    (lambda: pe.ntk_aware_frequencies(torch.ones(1), 2.0), ValueError, "at least 2 pairs"),
    (lambda: pe.ntk_aware_base(10000.0, 2, 2.0), ValueError, "head_dim must be even and >= 4"),
    (
        lambda: pe.dynamic_ntk_frequencies(pe.rope_frequencies(8), 0, 10),
        ValueError,
        "seq_len must be a positive integer",
    ),
    (lambda: pe.dynamic_ntk_frequencies(pe.rope_frequencies(8), 10, 2.5), TypeError, "original_max_len"),
    (lambda: pe.yarn_frequencies(pe.rope_frequencies(8), 4.0, 0), ValueError, "original_max_len"),
    (
        lambda: pe.yarn_frequencies(pe.rope_frequencies(8), 4.0, 64, beta_fast=1, beta_slow=2),
        ValueError,
        "beta_fast must be greater",
    ),
    (lambda: pe.yarn_frequencies(torch.tensor([1.0, 0.5, 0.3]), 4.0, 64), ValueError, "geometric"),
    (
        lambda: pe.yarn_frequencies(pe.rope_frequencies(8), 4.0, 64, truncate=1),
        TypeError,
        "truncate must be True or False",
    ),
    (lambda: pe.yarn_attention_factor(-1.0), ValueError, "factor must be a finite positive number"),
    (
        lambda: pe.llama3_frequencies(pe.rope_frequencies(8), 8.0, 64, low_freq_factor=4, high_freq_factor=1),
        ValueError,
        "high_freq_factor must be greater",
    ),
    (lambda: pe.rotations(pe.rope_frequencies(8), 0), ValueError, "length must be a positive integer"),
    (
        lambda: pe.unseen_arc(pe.rope_frequencies(8), 10, pe.rope_frequencies(6), 5),
        ValueError,
        "trained_frequencies must have the shape",
    ),
    (
        lambda: pe.unseen_arc(pe.rope_frequencies(8), 10, torch.zeros(4), 5),
        ValueError,
        "trained_frequencies must be finite and > 0",
    ),
]


@pytest.mark.parametrize("call,exc,pattern", BAD, ids=[f"bad{i}" for i in range(len(BAD))])
def test_bad_input_raises_clear_error(call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call()
