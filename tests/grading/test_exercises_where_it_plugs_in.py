"""The checker of chapter 9's checker: multi-head attention scores with RoPE.

It fails a stub, a non-function and each typical wrong answer (with its own hint) and passes the solution."""

import math

import torch

import posenc_lib as pe
from _helpers import checker_contract
from posenc_lib.exercises import check_rope_scores


def rope_scores_solution(x, w_q, w_k, n_heads):
    b, s, d = x.shape
    head_dim = d // n_heads
    q = (x @ w_q).view(b, s, n_heads, head_dim).transpose(1, 2)
    k = (x @ w_k).view(b, s, n_heads, head_dim).transpose(1, 2)
    q, k = pe.apply_rope(q), pe.apply_rope(k)
    return q @ k.transpose(-2, -1) / math.sqrt(head_dim)


def rope_scores_rotate_before_split(x, w_q, w_k, n_heads):
    b, s, d = x.shape
    head_dim = d // n_heads
    q = pe.apply_rope(x @ w_q).view(b, s, n_heads, head_dim).transpose(1, 2)
    k = pe.apply_rope(x @ w_k).view(b, s, n_heads, head_dim).transpose(1, 2)
    return q @ k.transpose(-2, -1) / math.sqrt(head_dim)


def rope_scores_no_transpose(x, w_q, w_k, n_heads):
    b, s, d = x.shape
    head_dim = d // n_heads
    q = pe.apply_rope((x @ w_q).reshape(b, n_heads, s, head_dim))
    k = pe.apply_rope((x @ w_k).reshape(b, n_heads, s, head_dim))
    return q @ k.transpose(-2, -1) / math.sqrt(head_dim)


def rope_scores_wrong_scale(x, w_q, w_k, n_heads):
    return rope_scores_solution(x, w_q, w_k, n_heads) * math.sqrt(x.shape[-1] // n_heads) / math.sqrt(x.shape[-1])


def rope_scores_interleaved(x, w_q, w_k, n_heads):
    b, s, d = x.shape
    head_dim = d // n_heads
    q = pe.apply_rope((x @ w_q).view(b, s, n_heads, head_dim).transpose(1, 2), layout="interleaved")
    k = pe.apply_rope((x @ w_k).view(b, s, n_heads, head_dim).transpose(1, 2), layout="interleaved")
    return q @ k.transpose(-2, -1) / math.sqrt(head_dim)


WRONG_ANSWERS = [
    (rope_scores_rotate_before_split, "before splitting"),
    (rope_scores_no_transpose, "transpose(1, 2)"),
    (rope_scores_wrong_scale, "sqrt(d_h)"),
    (rope_scores_interleaved, "interleaved layout"),
]
test_passes_the_solution, test_fails_the_stub, test_fails_typical_wrong_answers = checker_contract(
    check_rope_scores, rope_scores_solution, WRONG_ANSWERS
)


def test_rope_scores_checker_names_the_missing_transpose(capsys):
    check_rope_scores(rope_scores_no_transpose)
    assert "transpose" in capsys.readouterr().out


def test_the_rope_scores_solution_matches_the_model_s_rope_block():
    """The exercise's answer is what a block of the rope model computes (no mask, fresh LayerNorm)."""
    from posenc_lib.model import TransformerConfig, build_model

    model = build_model(TransformerConfig(vocab_size=8, scheme="rope", causal=False, d_model=16, n_heads=4), seed=0)
    block = model.blocks[0]
    with torch.no_grad():
        x = torch.randn(2, 5, 16, generator=torch.Generator().manual_seed(0))
        trace = block.trace(x, rope=model.rope)
        w_q, w_k, _ = block.attn.qkv.weight.split(16, dim=0)  # nn.Linear stores (out, in)
        normed = torch.nn.functional.layer_norm(x, (16,))  # the block's LayerNorm at initialisation
        expected = rope_scores_solution(normed, w_q.T, w_k.T, 4)
    torch.testing.assert_close(trace["scores"], expected, atol=1e-5, rtol=1e-5)
