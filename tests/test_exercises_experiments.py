"""The experiments chapter's checker fails on the stub and on typical wrong answers, and passes on right ones."""

import numpy as np
import pytest
import torch

import posenc_lib as pe
from posenc_lib.exercises import check_directional_alibi


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
