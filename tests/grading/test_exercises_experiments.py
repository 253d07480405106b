"""The experiments chapter's checkers fail on the stub and on typical wrong answers, and pass on right ones."""

import copy

import numpy as np
import pytest
import torch

import posenc_lib as pe
from posenc_lib.exercises import check_directional_alibi, check_interpolate
from posenc_lib.model import build_model


def stub(slopes_past, slopes_future, seq_len):
    raise NotImplementedError()


# --- right answers, written from scratch -----------------------------------------------------------


def solution(slopes_past, slopes_future, seq_len):
    i = torch.arange(seq_len)[:, None]  # (s, 1) queries
    j = torch.arange(seq_len)[None, :]  # (1, s) keys
    distance = (i - j).float()  # (s, s), > 0 for keys in the past
    past = -slopes_past.view(-1, 1, 1) * distance.clamp(min=0)  # (h, s, s)
    future = -slopes_future.view(-1, 1, 1) * (-distance).clamp(min=0)
    return past + future


def solution_numpy_loops(slopes_past, slopes_future, seq_len):
    h = len(slopes_past)
    out = np.zeros((h, seq_len, seq_len))
    for head in range(h):
        for i in range(seq_len):
            for j in range(seq_len):
                m = float(slopes_past[head]) if j <= i else float(slopes_future[head])
                out[head, i, j] = -m * abs(i - j)
    return out


# --- typical wrong answers --------------------------------------------------------------------------


def symmetric(slopes_past, slopes_future, seq_len):
    d = (torch.arange(seq_len)[:, None] - torch.arange(seq_len)[None, :]).abs().float()
    return -slopes_past.view(-1, 1, 1) * d


def swapped(slopes_past, slopes_future, seq_len):
    return solution(slopes_future, slopes_past, seq_len)


def transposed(slopes_past, slopes_future, seq_len):
    return solution(slopes_past, slopes_future, seq_len).transpose(-1, -2)


def causal_masked(slopes_past, slopes_future, seq_len):
    bias = solution(slopes_past, slopes_future, seq_len)
    return bias.masked_fill(torch.ones(seq_len, seq_len, dtype=torch.bool).triu(1), float("-inf"))


def positive(slopes_past, slopes_future, seq_len):
    return -solution(slopes_past, slopes_future, seq_len)


def one_slope_for_all_heads(slopes_past, slopes_future, seq_len):
    return solution(slopes_past[:1].expand(len(slopes_past)), slopes_future[:1].expand(len(slopes_future)), seq_len)


def test_passes_on_right_answers(capsys):
    assert check_directional_alibi(solution)
    assert check_directional_alibi(solution_numpy_loops)
    assert "PASS" in capsys.readouterr().out


def test_equal_slopes_give_the_libraries_symmetric_bias():
    slopes = pe.alibi_slopes(4).float()
    torch.testing.assert_close(solution(slopes, slopes, 6), pe.alibi_bias(4, 6, causal=False))


def test_fails_on_the_stub(capsys):
    result = check_directional_alibi(stub)
    assert not result
    assert "not implemented" in capsys.readouterr().out


@pytest.mark.parametrize(
    "wrong,hint",
    [
        (symmetric, "symmetric bias"),
        (swapped, "swapped"),
        (transposed, "swapped"),  # the transpose of the answer is the answer with the sides swapped
        (causal_masked, "causal"),
        (positive, "penalty"),
        (one_slope_for_all_heads, "its own slope"),
    ],
)
def test_fails_on_typical_wrong_answers_with_a_specific_hint(wrong, hint, capsys):
    result = check_directional_alibi(wrong)
    assert not result
    assert hint in capsys.readouterr().out


def test_a_crash_is_reported_not_raised(capsys):
    assert not check_directional_alibi(lambda p, f, s: p @ f @ s)
    assert "raised" in capsys.readouterr().out


# --- position interpolation on a trained RoPE decoder ----------------------------------------------


def interpolate(model, factor):
    stretched = copy.deepcopy(model)
    head_dim = model.config.head_dim
    stretched.rope = pe.RotaryEmbedding(head_dim, 256, frequencies=pe.rope_frequencies(head_dim) / factor)
    return stretched


def interpolate_rebuilt(model, factor):
    """Also right: a new model with the same weights, its own rope module's frequencies divided."""
    stretched = build_model(model.config, seed=123)
    stretched.load_state_dict(model.state_dict())
    head_dim = model.config.head_dim
    stretched.rope = pe.RotaryEmbedding(head_dim, frequencies=model.rope.frequencies / factor)
    return stretched


def interpolate_in_place(model, factor):
    head_dim = model.config.head_dim
    model.rope = pe.RotaryEmbedding(head_dim, 256, frequencies=pe.rope_frequencies(head_dim) / factor)
    return model


def multiplied(model, factor):
    return interpolate(model, 1 / factor)


def ntk(model, factor):
    stretched = copy.deepcopy(model)
    head_dim = model.config.head_dim
    frequencies = pe.ntk_aware_frequencies(pe.rope_frequencies(head_dim), factor)
    stretched.rope = pe.RotaryEmbedding(head_dim, 256, frequencies=frequencies)
    return stretched


def larger_base(model, factor):
    stretched = copy.deepcopy(model)
    head_dim = model.config.head_dim
    stretched.rope = pe.RotaryEmbedding(head_dim, 256, frequencies=pe.rope_frequencies(head_dim, 10000.0 * factor))
    return stretched


def test_interpolation_passes_on_right_answers(capsys):
    assert check_interpolate(interpolate)
    assert check_interpolate(interpolate_rebuilt)
    assert "correct on all 4 test inputs" in capsys.readouterr().out


def interpolate_with_the_library(model, factor):
    stretched = copy.deepcopy(model)
    frequencies = pe.linear_scaling_frequencies(pe.rope_frequencies(model.config.head_dim), factor)
    stretched.rope = pe.RotaryEmbedding(model.config.head_dim, frequencies=frequencies)
    return stretched


def test_interpolation_fails_when_it_calls_the_library(capsys):
    result = check_interpolate(interpolate_with_the_library)
    assert not result and result.reason == "calls the library"
    assert "linear_scaling_frequencies" in capsys.readouterr().out


def test_interpolation_fails_on_the_stub(capsys):
    assert not check_interpolate(lambda model, factor: stub(None, None, None))
    assert "not implemented" in capsys.readouterr().out


@pytest.mark.parametrize(
    "wrong,hint",
    [
        (interpolate_in_place, "work on a copy"),
        (multiplied, "DIVIDED"),
        (ntk, "NTK-aware"),
        (larger_base, "multiplied the base"),
        (lambda model, factor: copy.deepcopy(model), "still rotates with the trained frequencies"),
        (lambda model, factor: None, "must return a model"),
    ],
)
def test_interpolation_fails_on_typical_wrong_answers_with_a_specific_hint(wrong, hint, capsys):
    assert not check_interpolate(wrong)
    assert hint in capsys.readouterr().out
