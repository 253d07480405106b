import math

import torch

import posenc_lib as pe


def test_matches_torch_sdpa():
    torch.manual_seed(0)
    q, k, v = torch.randn(2, 3, 7, 8), torch.randn(2, 3, 9, 8), torch.randn(2, 3, 9, 5)
    bias = torch.randn(3, 7, 9)
    out, weights = pe.attention(q, k, v, bias=bias)
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=bias)
    torch.testing.assert_close(out, ref)
    assert weights.shape == (2, 3, 7, 9)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 3, 7))


def test_causal_matches_torch_sdpa():
    torch.manual_seed(1)
    q, k, v = (torch.randn(1, 2, 6, 4) for _ in range(3))
    out, weights = pe.attention(q, k, v, causal=True)
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    torch.testing.assert_close(out, ref)
    assert torch.all(weights.triu(1) == 0)


def test_causal_with_cache_aligns_queries_to_the_end():
    mask = pe.causal_mask(2, 4)
    assert mask.tolist() == [[True, True, True, False], [True, True, True, True]]


def test_permutation_equivariance_without_mask():
    torch.manual_seed(2)
    head = pe.ToyAttentionHead.random(8, seed=3)
    x = torch.randn(5, 8)
    perm = torch.tensor([3, 0, 4, 1, 2])
    torch.testing.assert_close(head(x[perm])[0], head(x)[0][perm])


def test_embed_words_is_per_word_and_stable():
    a = pe.embed_words("the cat the".split(), 6)
    torch.testing.assert_close(a[0], a[2])
    assert not torch.allclose(a[0], a[1])
    torch.testing.assert_close(pe.embed_words(["cat"], 6)[0], a[1])
    assert math.isfinite(a.sum().item())
