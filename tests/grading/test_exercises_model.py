"""The checkers of chapters 1, 9, 10 and 11 fail on a stub and on typical wrong answers, and pass on the solution."""

import math
from collections.abc import Callable

import pytest
import torch

import posenc_lib as pe
from posenc_lib.exercises import (
    check_fraction_unseen,
    check_interleaved_to_half,
    check_is_equivariant,
    check_rope_scores,
)


def stub(*args, **kwargs):
    raise NotImplementedError()


# ---------------------------------------------------------------- chapter 1: is a layer permutation-equivariant?


def equivariant_solution(layer, x, n_trials=10, seed=0):
    generator = torch.Generator().manual_seed(seed)
    out = layer(x)
    for _ in range(n_trials):
        perm = torch.randperm(x.shape[0], generator=generator)
        if not torch.allclose(layer(x[perm]), out[perm], atol=1e-5, rtol=1e-5):
            return False
    return True


def equivariant_tests_invariance(layer, x):
    perm = torch.randperm(x.shape[0], generator=torch.Generator().manual_seed(1))
    return torch.allclose(layer(x[perm]), layer(x), atol=1e-5)


def equivariant_reversal_only(layer, x):
    return torch.allclose(layer(x.flip(0)), layer(x).flip(0), atol=1e-5)


def equivariant_inverse_perm(layer, x):
    perm = torch.randperm(x.shape[0], generator=torch.Generator().manual_seed(2))
    return torch.allclose(layer(x[perm]), layer(x)[torch.argsort(perm)], atol=1e-5)


def equivariant_no_permutation(layer, x):
    return torch.allclose(layer(x), layer(x))


def equivariant_returns_tensor(layer, x):
    """Right idea, but returns a float tensor instead of a bool."""
    return torch.tensor(float(equivariant_solution(layer, x)))


# ---------------------------------------------------------------- chapter 9: multi-head scores with RoPE


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


# ---------------------------------------------------------------- chapter 10: pairs that never turn a full circle


def fraction_unseen_solution(train_len, head_dim, base=10000.0):
    theta = pe.rope_frequencies(head_dim, base)
    return float(((train_len - 1) * theta < 2 * math.pi).double().mean())


def fraction_unseen_one_radian(train_len, head_dim, base=10000.0):
    theta = pe.rope_frequencies(head_dim, base)
    return float(((train_len - 1) * theta < 1).double().mean())


def fraction_unseen_count(train_len, head_dim, base=10000.0):
    theta = pe.rope_frequencies(head_dim, base)
    return int(((train_len - 1) * theta < 2 * math.pi).sum())


def fraction_unseen_no_factor_two(train_len, head_dim, base=10000.0):
    theta = base ** (-torch.arange(head_dim // 2, dtype=torch.float64) / head_dim)
    return float(((train_len - 1) * theta < 2 * math.pi).double().mean())


def fraction_unseen_ignores_base(train_len, head_dim, base=10000.0):
    return fraction_unseen_solution(train_len, head_dim)


# ---------------------------------------------------------------- chapter 11: interleaved to half layout


def to_half_solution(x):
    return torch.cat((x[..., 0::2], x[..., 1::2]), dim=-1)


def to_half_inverse(x):
    """The opposite conversion (half to interleaved), without the library."""
    d = x.shape[-1]
    y = torch.empty_like(x)
    y[..., 0::2], y[..., 1::2] = x[..., : d // 2], x[..., d // 2 :]
    return y


def to_half_odd_first(x):
    return torch.cat((x[..., 1::2], x[..., 0::2]), dim=-1)


def to_half_evens_only(x):
    return x[..., 0::2]


def to_half_numpy(x):
    """A right answer as a NumPy array (the reordering is exact in either)."""
    return to_half_solution(x).numpy()


def equivariant_swaps_first_two(layer, x):
    perm = torch.arange(x.shape[0])
    perm[:2] = torch.tensor([1, 0])
    return torch.allclose(layer(x[perm]), layer(x)[perm], atol=1e-5)


def equivariant_always_false(layer, x):
    return False


def fraction_unseen_last_position_off_by_one(train_len, head_dim, base=10000.0):
    theta = pe.rope_frequencies(head_dim, base)
    return float((train_len * theta < 2 * math.pi).double().mean())


def fraction_unseen_wavelength_longer_than_train_len(train_len, head_dim, base=10000.0):
    return float((pe.wavelengths(pe.rope_frequencies(head_dim, base)) > train_len).double().mean())


def fraction_unseen_as_text(train_len, head_dim, base=10000.0):
    return f"{fraction_unseen_solution(train_len, head_dim, base):.0%}"


def fraction_unseen_exact(train_len, head_dim, base=10000.0):
    """A right answer as an exact fraction."""
    from fractions import Fraction

    theta = pe.rope_frequencies(head_dim, base)
    return Fraction(int(((train_len - 1) * theta < 2 * math.pi).sum()), head_dim // 2)


CHECKERS: dict[str, tuple[Callable, Callable, list[tuple[Callable, str]]]] = {
    "equivariant": (
        check_is_equivariant,
        equivariant_solution,
        [
            (equivariant_tests_invariance, "tested invariance"),
            (equivariant_reversal_only, "the reversal"),
            (equivariant_inverse_perm, "inverse permutation"),
            (equivariant_no_permutation, "True for every layer"),
            (equivariant_returns_tensor, "return a bool"),
            (equivariant_swaps_first_two, "swapping only tokens 0 and 1"),
            (equivariant_always_false, "False for every layer"),
        ],
    ),
    "rope_scores": (
        check_rope_scores,
        rope_scores_solution,
        [
            (rope_scores_rotate_before_split, "before splitting"),
            (rope_scores_no_transpose, "transpose(1, 2)"),
            (rope_scores_wrong_scale, "sqrt(d_h)"),
            (rope_scores_interleaved, "interleaved layout"),
        ],
    ),
    "fraction_unseen": (
        check_fraction_unseen,
        fraction_unseen_solution,
        [
            (fraction_unseen_one_radian, "2 pi radians, not 1"),
            (fraction_unseen_count, "not a count"),
            (fraction_unseen_no_factor_two, "-2k / head_dim"),
            (fraction_unseen_ignores_base, "base argument is ignored"),
            (fraction_unseen_last_position_off_by_one, "off by one"),
            (fraction_unseen_wavelength_longer_than_train_len, "off by one"),
            (fraction_unseen_as_text, "return a number"),
        ],
    ),
    "interleaved_to_half": (
        check_interleaved_to_half,
        to_half_solution,
        [
            (to_half_inverse, "opposite conversion"),
            (to_half_odd_first, "even columns"),
            (to_half_evens_only, "the shape is"),
        ],
    ),
}


@pytest.mark.parametrize("name", CHECKERS)
def test_checker_passes_the_solution(name, capsys):
    checker, solution, _ = CHECKERS[name]
    result = checker(solution)
    assert result and result.passed
    assert "PASS" in capsys.readouterr().out


@pytest.mark.parametrize("name", CHECKERS)
def test_checker_fails_the_stub(name, capsys):
    checker, _, _ = CHECKERS[name]
    result = checker(stub)
    assert not result
    assert "not implemented" in capsys.readouterr().out


@pytest.mark.parametrize(
    "name, wrong, hint",
    [(name, wrong, hint) for name, (_, _, wrongs) in CHECKERS.items() for wrong, hint in wrongs],
    ids=lambda v: v.__name__ if callable(v) else v,
)
def test_checker_fails_typical_wrong_answers_with_a_specific_hint(name, wrong, hint, capsys):
    checker, _, _ = CHECKERS[name]
    result = checker(wrong)
    assert not result
    assert hint in result.hint and hint in capsys.readouterr().out


def test_a_constant_false_is_not_told_it_tested_invariance():
    result = check_is_equivariant(lambda layer, x: False)
    assert not result and "invariance" not in result.message


def test_right_answers_in_other_forms_pass():
    assert check_fraction_unseen(fraction_unseen_exact)
    assert check_interleaved_to_half(to_half_numpy)


def test_the_layout_checker_fails_an_answer_that_calls_the_library(capsys):
    result = check_interleaved_to_half(lambda x: x[..., pe.interleaved_to_half_permutation(x.shape[-1])])
    assert not result and result.reason == "calls the library"
    assert "interleaved_to_half_permutation" in capsys.readouterr().out


def test_checkers_reject_a_non_function(capsys):
    for checker, _, _ in CHECKERS.values():
        assert not checker(42)


def test_equivariance_checker_names_the_invariance_mistake(capsys):
    check_is_equivariant(equivariant_tests_invariance)
    assert "invariance" in capsys.readouterr().out


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
