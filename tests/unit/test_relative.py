"""T5 relative buckets (exact equality with HF transformers' T5), the learned bias table, Shaw's clipping."""

import math

import pytest
import torch

# a hard import, not importorskip: the reference is a pinned test dependency (requirements-test.txt)
from transformers.models.t5.modeling_t5 import T5Attention

import posenc_lib as pe

RELATIVE = torch.arange(-5000, 5001)  # every relative position in a wide window


def valid_settings():
    """(bidirectional, num_buckets, max_distance) with max_distance beyond the exact buckets (HF divides by
    log(max_distance / max_exact), which is <= 0 otherwise; our function rejects those, tested below)."""
    for bidirectional in (True, False):
        for num_buckets in (4, 8, 16, 18, 32, 33, 64, 128, 320):
            for max_distance in (17, 64, 128, 256, 1000, 4096):
                max_exact = (num_buckets // 2 if bidirectional else num_buckets) // 2
                if max_distance > max_exact:
                    yield bidirectional, num_buckets, max_distance


@pytest.mark.parametrize("bidirectional,num_buckets,max_distance", list(valid_settings()))
def test_buckets_equal_hf_t5_exactly(bidirectional, num_buckets, max_distance):
    ours = pe.t5_relative_position_bucket(
        RELATIVE, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
    )
    reference = T5Attention._relative_position_bucket(
        RELATIVE, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
    )
    mismatches = int((ours != reference).sum())
    assert mismatches == 0, f"{mismatches} of {RELATIVE.numel()} relative positions in a different bucket"
    assert ours.dtype == torch.int64
    assert int(ours.min()) >= 0 and int(ours.max()) < num_buckets


def float64_buckets(relative, num_buckets, max_distance):
    """The bidirectional bucket rule evaluated in float64 (what a careful re-implementation might do)."""
    half = num_buckets // 2
    max_exact = half // 2
    distance = relative.abs()
    scaled = distance.clamp(min=max_exact).double() / max_exact
    log_bucket = max_exact + (torch.log(scaled) / math.log(max_distance / max_exact) * (half - max_exact)).long()
    return (relative > 0).long() * half + torch.where(distance < max_exact, distance, log_bucket.clamp(max=half - 1))


def test_float32_arithmetic_is_needed_for_exact_agreement():
    """With 18 buckets and max_distance 128, distances 8, 16 and 64 sit exactly on a bucket boundary:
    float32 rounds them below it, float64 does not. The reference (and pretrained T5) uses float32."""
    reference = T5Attention._relative_position_bucket(RELATIVE, bidirectional=True, num_buckets=18, max_distance=128)
    ours = pe.t5_relative_position_bucket(RELATIVE, bidirectional=True, num_buckets=18, max_distance=128)
    assert torch.equal(ours, reference)
    in_float64 = float64_buckets(RELATIVE, 18, 128)
    moved = RELATIVE[in_float64 != reference]
    assert sorted(moved.abs().unique().tolist()) == [8, 16, 64]
    # for T5's own settings the two agree everywhere
    assert torch.equal(float64_buckets(RELATIVE, 32, 128), pe.t5_relative_position_bucket(RELATIVE))


def test_t5_defaults_shape_of_buckets():
    """T5's default (32 buckets, 128): 8 exact distances per direction, log-spaced after, shared beyond 128."""
    rel = torch.arange(-300, 301)
    encoder = pe.t5_relative_position_bucket(rel)
    assert torch.equal(encoder[300 - 7 : 300 + 8], torch.tensor([7, 6, 5, 4, 3, 2, 1, 0, 17, 18, 19, 20, 21, 22, 23]))
    assert int(encoder[300 + 128]) == 31 and int(encoder[300 + 300]) == 31  # far future: last bucket
    assert int(encoder[300 - 128]) == 15 and int(encoder[0]) == 15  # far past: last past bucket
    decoder = pe.t5_relative_position_bucket(rel, bidirectional=False)
    assert torch.all(decoder[300:] == 0), "a causal decoder folds the future into bucket 0"
    assert torch.equal(decoder[300 - 15 : 301].flip(0), torch.arange(16))
    assert int(decoder[0]) == 31
    # buckets are monotone in distance, and wider further away
    past = decoder[:301].flip(0)  # distance 0 .. 300
    assert torch.all(past[1:] >= past[:-1])
    widths = torch.bincount(past, minlength=32)
    assert widths[30] > 4 * widths[16], (
        "log-spaced buckets widen with distance (floors make them only roughly monotone)"
    )


def test_relative_positions_align_queries_to_the_end():
    rel = pe.relative_positions(2, 5)
    assert torch.equal(rel, torch.tensor([[-3, -2, -1, 0, 1], [-4, -3, -2, -1, 0]]))
    assert torch.equal(pe.relative_positions(3), torch.arange(3).unsqueeze(0) - torch.arange(3).unsqueeze(1))


def test_bias_module_matches_hf_compute_bias():
    """Our table, loaded with HF's weights, gives HF T5's position bias."""
    from transformers import T5Config

    for is_decoder in (False, True):
        config = T5Config(
            d_model=16,
            d_kv=4,
            num_heads=3,
            relative_attention_num_buckets=32,
            relative_attention_max_distance=128,
            is_decoder=is_decoder,
        )
        torch.manual_seed(0)
        hf = T5Attention(config, has_relative_attention_bias=True)
        ours = pe.T5RelativeBias(3, 32, 128, bidirectional=not is_decoder)
        with torch.no_grad():
            ours.table.weight.copy_(hf.relative_attention_bias.weight)
        expected = hf.compute_bias(40, 40, device="cpu")[0]  # (h, s_q, s_k)
        torch.testing.assert_close(ours(40), expected, rtol=0, atol=0)
        assert ours(7, 40).shape == (3, 7, 40)
        torch.testing.assert_close(ours(7, 40), ours(40)[:, -7:, :], rtol=0, atol=0)


def test_bias_table_learns_through_attention():
    """The table is an ordinary parameter: gradients reach exactly the buckets in use."""
    bias = pe.T5RelativeBias(2, 16, 32, bidirectional=False)
    assert torch.all(bias(5) == 0), "starts with no preference"
    q = k = torch.zeros(1, 2, 5, 4)
    v = torch.randn(1, 2, 5, 4, generator=torch.Generator().manual_seed(1))
    out, _ = pe.attention(q, k, v, bias=bias(5), causal=True)
    out.sum().backward()
    used = torch.unique(bias.buckets(5)[pe.causal_mask(5, 5)])
    grad_rows = torch.nonzero(bias.table.weight.grad.abs().sum(dim=1)).flatten()
    assert set(grad_rows.tolist()) <= set(used.tolist())
    assert len(grad_rows) > 0


def test_shaw_clipping():
    index = pe.shaw_relative_index(4, 6, max_relative_position=2)
    rel = pe.relative_positions(4, 6)
    assert torch.equal(index, rel.clamp(-2, 2) + 2)
    assert int(index.min()) == 0 and int(index.max()) == 4


BAD = [
    (
        lambda: pe.t5_relative_position_bucket(torch.tensor([1.5])),
        TypeError,
        "relative_position must be an integer tensor",
    ),
    (lambda: pe.t5_relative_position_bucket([1, 2]), TypeError, "relative_position must be a torch.Tensor"),
    (
        lambda: pe.t5_relative_position_bucket(torch.arange(3), num_buckets=3),
        ValueError,
        "num_buckets must be >= 4 for bidirectional",
    ),
    (
        lambda: pe.t5_relative_position_bucket(torch.arange(3), bidirectional=False, num_buckets=1),
        ValueError,
        "num_buckets must be >= 2 for causal",
    ),
    (
        lambda: pe.t5_relative_position_bucket(torch.arange(3), num_buckets=32, max_distance=8),
        ValueError,
        "max_distance must exceed the 8 exact buckets",
    ),
    (
        lambda: pe.t5_relative_position_bucket(torch.arange(3), bidirectional=1),
        TypeError,
        "bidirectional must be True or False",
    ),
    (
        lambda: pe.t5_relative_position_bucket(torch.arange(3), num_buckets=32.0),
        TypeError,
        "num_buckets must be a positive integer",
    ),
    (lambda: pe.T5RelativeBias(0), ValueError, "n_heads must be a positive integer"),
    (lambda: pe.T5RelativeBias(2)(0), ValueError, "q_len must be a positive integer"),
    (lambda: pe.relative_positions(3, 0), ValueError, "k_len must be a positive integer"),
    (
        lambda: pe.shaw_relative_index(3, max_relative_position=0),
        ValueError,
        "max_relative_position must be a positive integer",
    ),
]


@pytest.mark.parametrize("call,exc,pattern", BAD, ids=[f"bad{i}" for i in range(len(BAD))])
def test_bad_input_raises_clear_error(call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call()
