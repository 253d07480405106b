"""The ALiBi chapter's analysis helpers, and a cross-check of the slopes against HF's BLOOM."""

import math

import pytest
import torch

import posenc_lib as pe
from posenc_lib.analysis import alibi_attention_span, alibi_weights_by_distance


def test_weights_by_distance_closed_form():
    n_heads, s = 4, 30
    weights = alibi_weights_by_distance(n_heads, s)
    assert weights.shape == (n_heads, s)
    torch.testing.assert_close(weights.sum(-1), torch.ones(n_heads, dtype=torch.float64))
    m = pe.alibi_slopes(n_heads)[:, None]  # (h, 1)
    r = torch.arange(s, dtype=torch.float64)[None, :]
    expected = torch.exp(-m * r) * (1 - torch.exp(-m)) / (1 - torch.exp(-m * s))  # geometric series
    torch.testing.assert_close(weights, expected)


def test_weights_by_distance_match_attention_with_equal_content_scores():
    n_heads, s = 8, 12
    q = k = torch.zeros(1, n_heads, s, 4, dtype=torch.float64)
    v = torch.randn(1, n_heads, s, 4, dtype=torch.float64)
    _, weights = pe.attention(q, k, v, bias=pe.alibi_bias(n_heads, s, dtype=torch.float64))
    torch.testing.assert_close(weights[0, :, -1, :].flip(-1), alibi_weights_by_distance(n_heads, s))


@pytest.mark.parametrize("n_heads,s,mass", [(8, 1024, 0.9), (12, 300, 0.5), (4, 64, 0.99), (16, 2000, 0.9)])
def test_span_closed_form(n_heads, s, mass):
    """Keys at distance <= r hold (1 - e^{-m(r+1)}) / (1 - e^{-ms}) of the weight."""
    m = pe.alibi_slopes(n_heads).tolist()
    expected = [min(s - 1, math.ceil(-math.log(1 - mass * (1 - math.exp(-mi * s))) / mi - 1 - 1e-9)) for mi in m]
    assert alibi_attention_span(n_heads, s, mass).tolist() == expected


def test_span_of_the_steepest_and_shallowest_heads():
    span = alibi_attention_span(8, 4096)
    assert span[0] == 4  # m = 1/2: ln(10) / 0.5 = 4.6 -> distances 0..4
    assert 500 < span[-1] < 600  # m = 1/256: about 256 ln(10) = 589
    assert alibi_attention_span(8, 10, mass=1.0).tolist() == [9] * 8


@pytest.mark.parametrize(
    "call,exc,pattern",
    [
        (lambda: alibi_attention_span(8, 100, mass=0.0), ValueError, r"mass must be in \(0, 1\]"),
        (lambda: alibi_attention_span(8, 100, mass=1.5), ValueError, "mass"),
        (lambda: alibi_attention_span(8, 100, mass="0.9"), TypeError, "mass must be a number"),
        (lambda: alibi_weights_by_distance(0, 10), ValueError, "n_heads must be a positive integer"),
        (lambda: alibi_weights_by_distance(4, 0), ValueError, "seq_len must be a positive integer"),
        (lambda: alibi_attention_span(4, 2.5), TypeError, "seq_len must be a positive integer"),
    ],
)
def test_bad_input(call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call()


@pytest.mark.parametrize("n_heads", [8, 12, 16, 20, 40, 112])
def test_slopes_match_hugging_face_bloom(n_heads):
    from transformers.models.bloom.modeling_bloom import build_alibi_tensor

    mask = torch.ones(1, 3)
    alibi = build_alibi_tensor(mask, n_heads, torch.float32)  # (h, 1, 3): slope * key position
    torch.testing.assert_close(alibi[:, 0, 1].double(), pe.alibi_slopes(n_heads), rtol=1e-6, atol=0)
