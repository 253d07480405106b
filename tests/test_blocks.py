"""posenc_lib.blocks: each scheme changes exactly the tensors it should, and nothing else."""

import pytest
import torch

import posenc_lib as pe
from posenc_lib.blocks import (
    ADDED_TO_INPUT,
    INSIDE_ATTENTION,
    SCHEMES,
    TRACE_STAGES,
    AttentionBlock,
    TokenFrontEnd,
    count_parameters,
)

VOCAB, D, H, MAX_LEN = 50, 16, 4, 32


def traces(ids, *, causal=True, offset=0):
    """One trace per scheme, with the same token table and the same block weights."""
    torch.manual_seed(0)
    tokens = torch.nn.Embedding(VOCAB, D)
    reference = AttentionBlock(D, H, "none", causal=causal)
    out = {}
    for scheme in SCHEMES:
        front = TokenFrontEnd(VOCAB, D, scheme, max_len=MAX_LEN, token_embedding=tokens)
        block = AttentionBlock(D, H, scheme, causal=causal)
        block.load_state_dict(reference.state_dict())
        with torch.no_grad():
            out[scheme] = block.trace(front(ids, offset), offset)
    return out


def differs(a, b):
    return not torch.equal(a, b)


@pytest.fixture(scope="module")
def ids():
    return torch.randint(0, VOCAB, (2, 7), generator=torch.Generator().manual_seed(1))


def test_shapes(ids):
    t = traces(ids)["rope"]
    assert t["x"].shape == t["out"].shape == t["attn_out"].shape == (2, 7, D)
    for stage in ("q_proj", "k_proj", "v", "q", "k"):
        assert t[stage].shape == (2, H, 7, D // H)
    assert t["scores"].shape == t["weights"].shape == (2, H, 7, 7)
    assert list(t) == list(TRACE_STAGES)


def test_additive_schemes_change_the_input_and_everything_after(ids):
    t = traces(ids)
    for scheme in ADDED_TO_INPUT:
        assert all(differs(t[scheme][stage], t["none"][stage]) for stage in TRACE_STAGES)


def test_rope_changes_q_and_k_only_after_the_projection(ids):
    t = traces(ids)
    for stage in ("x", "q_proj", "k_proj", "v"):
        assert torch.equal(t["rope"][stage], t["none"][stage]), stage
    for stage in ("q", "k", "scores", "weights", "out"):
        assert differs(t["rope"][stage], t["none"][stage]), stage
    # position 0 is rotated by angle 0
    torch.testing.assert_close(t["rope"]["q"][:, :, 0], t["none"]["q"][:, :, 0])


def test_alibi_changes_the_scores_but_not_q_k_v(ids):
    t = traces(ids)
    for stage in ("x", "q_proj", "k_proj", "v", "q", "k"):
        assert torch.equal(t["alibi"][stage], t["none"][stage]), stage
    bias = pe.alibi_bias(H, 7)  # (h, s, s), -inf above the diagonal
    finite = torch.isfinite(bias).expand_as(t["alibi"]["scores"])
    torch.testing.assert_close(t["alibi"]["scores"][finite], (t["none"]["scores"] + bias)[finite])
    assert differs(t["alibi"]["weights"], t["none"]["weights"])


def test_causal_mask_gives_zero_weight_to_future_keys(ids):
    for scheme, t in traces(ids).items():
        assert torch.all(t["weights"].triu(1) == 0), scheme
        torch.testing.assert_close(t["weights"].sum(-1), torch.ones(2, H, 7))


@pytest.mark.parametrize("scheme", INSIDE_ATTENTION + ("none",))
def test_relative_schemes_give_the_same_scores_at_any_offset(ids, scheme):
    start, shifted = traces(ids)[scheme], traces(ids, offset=9)[scheme]
    torch.testing.assert_close(shifted["scores"], start["scores"], atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(shifted["out"], start["out"], atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("scheme", ADDED_TO_INPUT)
def test_absolute_schemes_change_with_the_offset(ids, scheme):
    start, shifted = traces(ids)[scheme], traces(ids, offset=9)[scheme]
    assert (shifted["scores"] - start["scores"]).nan_to_num(0, 0, 0).abs().max() > 1e-3


def test_only_the_learned_table_adds_parameters():
    tokens = torch.nn.Embedding(VOCAB, D)
    counts = {s: count_parameters(TokenFrontEnd(VOCAB, D, s, max_len=MAX_LEN, token_embedding=tokens)) for s in SCHEMES}
    assert counts["learned"] - counts["none"] == MAX_LEN * D
    assert all(counts[s] == counts["none"] == VOCAB * D for s in ("sinusoidal", "rope", "alibi"))
    blocks = {s: count_parameters(AttentionBlock(D, H, s)) for s in SCHEMES}
    assert len(set(blocks.values())) == 1
    # 4 d^2 + 4 d (attention) + 8 d^2 + 5 d (MLP) + 4 d (two LayerNorms)
    assert blocks["none"] == 12 * D * D + 13 * D


def test_frontend_without_positions_is_the_token_embedding(ids):
    tokens = torch.nn.Embedding(VOCAB, D)
    for scheme in ("none",) + INSIDE_ATTENTION:
        assert torch.equal(TokenFrontEnd(VOCAB, D, scheme, token_embedding=tokens)(ids), tokens(ids))


def test_forward_equals_trace_out(ids):
    block = AttentionBlock(D, H, "alibi")
    x = torch.randn(2, 7, D)
    with torch.no_grad():
        torch.testing.assert_close(block(x), block.trace(x)["out"])


@pytest.mark.parametrize(
    "make, error, match",
    [
        (lambda: TokenFrontEnd(VOCAB, D, "t5"), ValueError, "scheme"),
        (lambda: TokenFrontEnd(0, D, "none"), ValueError, "vocab_size"),
        (lambda: TokenFrontEnd(VOCAB, D, "none", token_embedding=torch.nn.Embedding(3, D)), ValueError, "token_embedding"),
        (lambda: TokenFrontEnd(VOCAB, D, "none", token_embedding=torch.nn.Linear(D, D)), TypeError, "token_embedding"),
        (lambda: TokenFrontEnd(VOCAB, D, "none")(torch.zeros(2, 3)), TypeError, "ids"),
        (lambda: TokenFrontEnd(VOCAB, D, "none")(torch.tensor([[0, VOCAB]])), ValueError, "ids"),
        (lambda: TokenFrontEnd(VOCAB, D, "none")(torch.tensor([1, 2])), ValueError, "ids"),
        (lambda: TokenFrontEnd(VOCAB, D, "learned", max_len=4)(torch.zeros(1, 5, dtype=torch.long)), ValueError, "max_len"),
        (lambda: TokenFrontEnd(VOCAB, D, "none")(torch.zeros(1, 2, dtype=torch.long), offset=-1), ValueError, "offset"),
        (lambda: AttentionBlock(D, 3, "rope"), ValueError, "divisible"),
        (lambda: AttentionBlock(12, 4, "rope"), ValueError, "even"),
        (lambda: AttentionBlock(D, H, "rope", causal=1), TypeError, "causal"),
        (lambda: AttentionBlock(D, H, "rope")(torch.zeros(2, 3, D + 1)), ValueError, "x"),
        (lambda: AttentionBlock(D, H, "rope")(torch.zeros(3, D)), ValueError, "x"),
        (lambda: AttentionBlock(D, H, "rope")(torch.zeros(1, 3, D), offset=1.5), TypeError, "offset"),
        (lambda: count_parameters("block"), TypeError, "module"),
    ],
)
def test_bad_input_is_named(make, error, match):
    with pytest.raises(error, match=match):
        make()
