"""posenc_lib.attention: against PyTorch's SDPA and a loop-by-loop reference; masks, windows, scores, dtypes, devices."""

import itertools
import math

import pytest
import torch

import posenc_lib as pe


def naive_attention(q, k, v, *, bias=None, causal=False, window=None):
    """One query, one key at a time, in float64: the formula, nothing clever. Returns (output, weights, scores)."""
    q, k, v = q.double(), k.double(), v.double()
    s_q, d = q.shape[-2:]
    s_k = k.shape[-2]
    shape = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    q, k, v = q.expand(*shape, s_q, d), k.expand(*shape, s_k, d), v.expand(*shape, s_k, v.shape[-1])
    scores = torch.empty(*shape, s_q, s_k, dtype=torch.float64)
    if bias is not None:
        bias = bias.expand(*shape, s_q, s_k)
    for index in itertools.product(*(range(n) for n in shape)):  # every batch and head
        for i in range(s_q):
            position = s_k - s_q + i  # queries aligned to the end of the keys
            for j in range(s_k):
                score = float(q[index][i] @ k[index][j]) / math.sqrt(d)
                if bias is not None:
                    b = bias[index][i, j]
                    score = score + float(b) if b.dtype != torch.bool else (score if b else -math.inf)
                if causal and (j > position or (window is not None and j <= position - window)):
                    score = -math.inf
                scores[index][i, j] = score
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights, scores


def randn(*shape, seed=0, dtype=torch.float32):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


def test_matches_torch_sdpa():
    q, k, v = randn(2, 3, 7, 8, seed=0), randn(2, 3, 9, 8, seed=1), randn(2, 3, 9, 5, seed=2)
    bias = randn(3, 7, 9, seed=3)
    out, weights = pe.attention(q, k, v, bias=bias)
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=bias)
    torch.testing.assert_close(out, ref)
    assert weights.shape == (2, 3, 7, 9)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 3, 7))


def test_causal_matches_torch_sdpa():
    q, k, v = (randn(1, 2, 6, 4, seed=s) for s in range(3))
    out, weights = pe.attention(q, k, v, causal=True)
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    torch.testing.assert_close(out, ref)
    assert torch.all(weights.triu(1) == 0)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("with_bias", [False, True])
def test_matches_the_loop_reference(causal, with_bias):
    q, k, v = randn(2, 2, 4, 6, seed=4), randn(2, 2, 6, 6, seed=5), randn(2, 2, 6, 3, seed=6)
    bias = randn(2, 4, 6, seed=7) if with_bias else None
    out, weights, scores = pe.attention(q, k, v, bias=bias, causal=causal, return_scores=True)
    ref_out, ref_weights, ref_scores = naive_attention(q, k, v, bias=bias, causal=causal)
    torch.testing.assert_close(out, ref_out.float(), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(weights, ref_weights.float(), atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(scores, ref_scores.float(), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("window", [1, 2, 3, 5, 9])
@pytest.mark.parametrize("q_len", [5, 3, 1])
def test_window_matches_the_loop_reference(window, q_len):
    q, k, v = randn(1, 2, q_len, 4, seed=8), randn(1, 2, 5, 4, seed=9), randn(1, 2, 5, 4, seed=10)
    out, weights, scores = pe.attention(q, k, v, causal=True, window=window, return_scores=True)
    ref_out, ref_weights, ref_scores = naive_attention(q, k, v, causal=True, window=window)
    torch.testing.assert_close(out, ref_out.float(), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(weights, ref_weights.float(), atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(scores, ref_scores.float(), atol=1e-5, rtol=1e-5)
    visible = (weights > 0).sum(-1)  # (1, 2, q_len): keys each query sees
    assert torch.all(visible == torch.clamp(torch.arange(5 - q_len, 5) + 1, max=window))


def test_window_one_copies_the_query_s_own_value():
    q, k, v = randn(1, 6, 4, seed=11), randn(1, 6, 4, seed=12), randn(1, 6, 3, seed=13)
    out, _ = pe.attention(q, k, v, causal=True, window=1)
    torch.testing.assert_close(out, v)


def test_window_as_large_as_the_sequence_is_plain_causal_attention():
    q, k, v = (randn(2, 7, 4, seed=s) for s in (14, 15, 16))
    torch.testing.assert_close(pe.attention(q, k, v, causal=True, window=7)[0], pe.attention(q, k, v, causal=True)[0])


def test_a_bool_mask_is_a_mask_not_added_as_one_and_zero():
    q, k, v = (randn(1, 5, 4, seed=s) for s in (17, 18, 19))
    mask = pe.causal_mask(5, 5)
    out, weights = pe.attention(q, k, v, bias=mask)
    assert torch.all(weights.triu(1) == 0)  # no weight at all on a future key
    torch.testing.assert_close(out, pe.attention(q, k, v, causal=True)[0])
    torch.testing.assert_close(out, naive_attention(q, k, v, bias=mask)[0].float(), atol=1e-5, rtol=1e-5)


def test_return_scores_are_after_bias_and_mask():
    q, k, v = (randn(1, 4, 4, seed=s) for s in (20, 21, 22))
    bias = randn(4, 4, seed=23)
    out, weights, scores = pe.attention(q, k, v, bias=bias, causal=True, return_scores=True)
    expected = (q @ k.transpose(-2, -1) / 2 + bias).masked_fill(~pe.causal_mask(4, 4), float("-inf"))
    torch.testing.assert_close(scores, expected)
    torch.testing.assert_close(weights, torch.softmax(scores, -1))
    assert len(pe.attention(q, k, v)) == 2


def test_causal_with_cache_aligns_queries_to_the_end():
    mask = pe.causal_mask(2, 4)
    assert mask.tolist() == [[True, True, True, False], [True, True, True, True]]
    assert pe.causal_mask(3, 5, window=2).tolist() == [
        [False, True, True, False, False],
        [False, False, True, True, False],
        [False, False, False, True, True],
    ]
    assert pe.causal_mask(0, 3).shape == (0, 3)


@pytest.mark.parametrize(
    "dtypes",
    [
        (torch.float32, torch.float64, torch.float32, None),
        (torch.bfloat16, torch.float32, torch.float32, None),
        (torch.float16, torch.float16, torch.float16, torch.float32),
        (torch.float32, torch.float32, torch.float32, torch.float64),
        (torch.bfloat16, torch.bfloat16, torch.bfloat16, torch.bfloat16),
    ],
)
def test_mixed_float_dtypes_are_promoted(dtypes):
    q_dtype, k_dtype, v_dtype, bias_dtype = dtypes
    q, k, v = randn(2, 3, 4, seed=24), randn(2, 5, 4, seed=25), randn(2, 5, 2, seed=26)
    bias = None if bias_dtype is None else randn(3, 5, seed=27).to(bias_dtype)
    expected = torch.promote_types(torch.promote_types(q_dtype, k_dtype), v_dtype)
    if bias_dtype is not None:
        expected = torch.promote_types(expected, bias_dtype)
    out, weights, scores = pe.attention(
        q.to(q_dtype), k.to(k_dtype), v.to(v_dtype), bias=bias, causal=True, return_scores=True
    )
    assert out.dtype == weights.dtype == scores.dtype == expected
    reference = naive_attention(q.to(q_dtype), k.to(k_dtype), v.to(v_dtype), bias=bias, causal=True)[0]
    tolerance = 1e-5 if expected in (torch.float32, torch.float64) else 3e-2
    torch.testing.assert_close(out.double(), reference, atol=tolerance, rtol=tolerance)


def test_meta_device():
    q, k, v = (torch.empty(2, 4, 6, 8, device="meta") for _ in range(3))
    bias = torch.empty(4, 6, 6, device="meta")
    out, weights, scores = pe.attention(q, k, v, bias=bias, causal=True, window=3, return_scores=True)
    assert out.device.type == weights.device.type == scores.device.type == "meta"
    assert out.shape == (2, 4, 6, 8) and weights.shape == scores.shape == (2, 4, 6, 6)
    out, _ = pe.attention(q, k, v, bias=torch.empty(6, 6, dtype=torch.bool, device="meta"))
    assert out.device.type == "meta"
    assert pe.causal_mask(3, 5, window=2, device="meta").device.type == "meta"


def test_permutation_equivariance_without_mask():
    head = pe.ToyAttentionHead.random(8, seed=3)
    x = randn(5, 8, seed=2)
    perm = torch.tensor([3, 0, 4, 1, 2])
    torch.testing.assert_close(head(x[perm])[0], head(x)[0][perm])


def test_toy_head_follows_its_input_dtype_and_device():
    head = pe.ToyAttentionHead.random(8, seed=3)
    x = randn(5, 8, seed=2)
    out64, _ = head(x.double())
    assert out64.dtype == torch.float64
    torch.testing.assert_close(out64.float(), head(x)[0])
    out_meta, weights_meta = head(torch.empty(5, 8, device="meta"), causal=True)
    assert out_meta.device.type == weights_meta.device.type == "meta"


def test_embed_words_is_per_word_and_stable():
    a = pe.embed_words("the cat the".split(), 6)
    torch.testing.assert_close(a[0], a[2])
    assert not torch.allclose(a[0], a[1])
    torch.testing.assert_close(pe.embed_words(["cat"], 6)[0], a[1])
    assert math.isfinite(a.sum().item())
    torch.testing.assert_close(pe.embed_words(["cat"], 6, scale=2.0)[0], 2 * a[1])
    on_meta = pe.embed_words(["cat", "sat"], 6, dtype=torch.float64, device="meta")
    assert on_meta.device.type == "meta" and on_meta.dtype == torch.float64 and on_meta.shape == (2, 6)


def test_t5_bias_feeds_attention_on_the_meta_device_and_in_bf16():
    t5 = pe.T5RelativeBias(4, num_buckets=8, max_distance=16, bidirectional=False)
    q, k, v = (randn(2, 4, 6, 8, seed=s) for s in (28, 29, 30))
    out, _ = pe.attention(q, k, v, bias=t5(6), causal=True)
    reference = naive_attention(q, k, v, bias=t5(6).detach(), causal=True)[0]
    torch.testing.assert_close(out, reference.float(), atol=1e-5, rtol=1e-5)
    meta = t5.to("meta")
    q_meta = torch.empty(2, 4, 6, 8, device="meta")
    out_meta, weights_meta = pe.attention(q_meta, q_meta, q_meta, bias=meta(6), causal=True)
    assert out_meta.device.type == weights_meta.device.type == "meta" and out_meta.shape == (2, 4, 6, 8)
    half = pe.T5RelativeBias(4, num_buckets=8, max_distance=16).to(torch.bfloat16)
    out_half, _ = pe.attention(q.bfloat16(), k.bfloat16(), v.bfloat16(), bias=half(6))
    assert out_half.dtype == torch.bfloat16 and torch.isfinite(out_half).all()
