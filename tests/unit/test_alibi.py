import math

import pytest
import torch

import posenc_lib as pe


def paper_slopes(n: int) -> list[float]:
    """The ALiBi paper's recipe, written from its description: geometric sequence starting at
    2^(-8/n) for power-of-two n; else the closest lower power of two's slopes plus every other
    slope of twice that power."""

    def geometric(count: int) -> list[float]:
        start = 2 ** (-(2 ** -(math.log2(count) - 3)))
        return [start * start**i for i in range(count)]

    if math.log2(n).is_integer():
        return geometric(n)
    lower = 2 ** math.floor(math.log2(n))
    return geometric(lower) + geometric(2 * lower)[0::2][: n - lower]


def test_eight_heads_are_powers_of_one_half():
    torch.testing.assert_close(pe.alibi_slopes(8), torch.tensor([2.0**-i for i in range(1, 9)], dtype=torch.float64))


@pytest.mark.parametrize("n_heads", list(range(1, 65)) + [80, 96, 100, 128])
def test_slopes_match_the_papers_recipe_for_any_head_count(n_heads):
    torch.testing.assert_close(
        pe.alibi_slopes(n_heads), torch.tensor(paper_slopes(n_heads), dtype=torch.float64), rtol=1e-12, atol=0
    )


def test_twelve_heads_are_not_monotone():
    slopes = pe.alibi_slopes(12).tolist()
    assert slopes[:8] == [2.0**-i for i in range(1, 9)]
    assert slopes[8:] == pytest.approx([2**-0.5, 2**-1.5, 2**-2.5, 2**-3.5])
    assert slopes != sorted(slopes, reverse=True)


def test_bias_symmetric_form():
    bias = pe.alibi_bias(2, 4, causal=False)
    slopes = pe.alibi_slopes(2).float()
    i = torch.arange(4)
    expected = -slopes[:, None, None] * (i[:, None] - i[None, :]).abs()
    torch.testing.assert_close(bias, expected)
    assert bias.shape == (2, 4, 4)


def test_bias_causal_form_masks_the_future_and_aligns_queries_to_the_end():
    bias = pe.alibi_bias(4, 2, 5)  # two newest queries against five keys
    assert bias.shape == (4, 2, 5)
    assert torch.isinf(bias[:, 0, 4]).all() and (bias[:, 0, :4] <= 0).all()
    assert torch.isfinite(bias[:, 1]).all()
    m = pe.alibi_slopes(4).float()
    torch.testing.assert_close(bias[:, 1, 0], -4 * m)  # query at position 4, key at 0
    torch.testing.assert_close(bias[:, 1, 4], torch.zeros(4))


def test_bias_feeds_attention():
    torch.manual_seed(0)
    q = k = v = torch.randn(1, 4, 6, 8)
    out, weights = pe.attention(q, k, v, bias=pe.alibi_bias(4, 6))
    assert torch.all(weights.triu(1) == 0)
    torch.testing.assert_close(weights.sum(-1), torch.ones(1, 4, 6))
