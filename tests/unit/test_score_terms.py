"""posenc_lib.analysis.additive_score_terms: the four-term split of an additive encoding's scores."""

import pytest
import torch

from posenc_lib.analysis import SCORE_TERMS, additive_score_terms
from posenc_lib.model import TransformerConfig, build_model

pytestmark = pytest.mark.usefixtures("one_thread")


def model(scheme: str, *, projection_bias: bool = True, seed: int = 0):
    config = TransformerConfig(
        vocab_size=20,
        scheme=scheme,
        causal=True,
        d_model=32,
        n_heads=4,
        n_layers=1,
        d_ff=64,
        max_len=16,
        projection_bias=projection_bias,
    )
    return build_model(config, seed=seed)


def parts(m, tokens):
    with torch.no_grad():
        e = m.token_embedding(tokens)  # (b, s, d)
        return e, m.embed(tokens) - e  # the position vectors the model added


@pytest.mark.parametrize("scheme", ["sinusoidal", "learned"])
@pytest.mark.parametrize("projection_bias", [True, False])
def test_the_terms_add_up_to_the_blocks_scores(scheme, projection_bias):
    m = model(scheme, projection_bias=projection_bias)
    block = m.blocks[0]
    with torch.no_grad():  # a LayerNorm that is not the identity, as after training
        block.ln_attn.weight.uniform_(0.5, 1.5)
        block.ln_attn.bias.normal_(0, 0.3)
    tokens = torch.randint(0, 20, (2, 10), generator=torch.Generator().manual_seed(1))
    e, position = parts(m, tokens)
    with torch.no_grad():
        terms = additive_score_terms(block, e, position)
        scores = m.trace(tokens)[0]["scores"]  # (b, n_h, s, s), -inf above the diagonal
    assert list(terms) == list(SCORE_TERMS)
    assert all(t.shape == (2, 4, 10, 10) for t in terms.values())
    visible = torch.isfinite(scores)
    total = sum(terms.values())
    torch.testing.assert_close(total[visible], scores[visible], atol=1e-5, rtol=1e-5)
    if not projection_bias:  # β alone still makes a rest
        assert terms["rest"].abs().max() > 1e-3


def test_each_term_is_the_bilinear_form_of_its_parts():
    """Without LayerNorm shift and projection bias, the terms are e W_q W_k^T PE etc. up to LN's scale."""
    m = model("sinusoidal", projection_bias=False)
    block = m.blocks[0]
    tokens = torch.randint(0, 20, (1, 6), generator=torch.Generator().manual_seed(2))
    e, position = parts(m, tokens)
    with torch.no_grad():
        terms = additive_score_terms(block, e, position)
        x = e + position
        sigma = (x.var(-1, unbiased=False, keepdim=True) + block.ln_attn.eps).sqrt()[0, :, 0]  # (s,)
        d = 32
        w_q, w_k = block.attn.qkv.weight[:d], block.attn.qkv.weight[d : 2 * d]
        centre = torch.eye(d) - 1.0 / d  # LayerNorm's centring, a linear map
        h = 1  # head 1: its rows of W_q, W_k
        a, b = w_q[8 * h : 8 * (h + 1)] @ centre, w_k[8 * h : 8 * (h + 1)] @ centre  # (d_h, d)
        form = a.T @ b / 8**0.5  # (d, d): the head's bilinear form
        by_hand = (position[0] @ form @ e[0].T) / sigma[:, None] / sigma[None, :]  # PE(i) . e_j
    assert terms["rest"].abs().max() == 0
    torch.testing.assert_close(terms["position-content"][0, h], by_hand, atol=1e-5, rtol=1e-5)
    assert not torch.allclose(terms["content-position"][0, h], by_hand, atol=1e-3)  # the order matters


def test_a_zero_position_leaves_only_content():
    m = model("learned")
    tokens = torch.randint(0, 20, (1, 5), generator=torch.Generator().manual_seed(3))
    e, position = parts(m, tokens)
    with torch.no_grad():
        terms = additive_score_terms(m.blocks[0], e, torch.zeros_like(position))
    for name in ("content-position", "position-content", "position-position"):
        assert terms[name].abs().max() == 0


def test_bad_input_is_named():
    m = model("sinusoidal")
    e = torch.zeros(1, 5, 32)
    with pytest.raises(TypeError, match="block"):
        additive_score_terms(m, e, e[0])
    with pytest.raises(ValueError, match="position_vectors"):
        additive_score_terms(m.blocks[0], e, torch.zeros(4, 32))
    with pytest.raises(TypeError, match="position_vectors"):
        additive_score_terms(m.blocks[0], e, [[0.0] * 32] * 5)
