"""Chapter 3's checkers (the sinusoidal table; the shift matrix M_Δ) fail on the stub and on typical wrong answers
(with the matching hint), and pass on right answers written in several valid forms."""

import math

import numpy as np
import pytest
import torch

import posenc_lib as pe
from _helpers import numpy_sinusoidal_table as table
from posenc_lib.exercises import check_shift_matrix, check_sinusoidal
from posenc_lib.exercises.sinusoidal import SHIFT_HINT, SINUSOIDAL_HINT


def stub(*args, **kwargs):
    raise NotImplementedError()


# --- check_sinusoidal ---------------------------------------------------------------------------


def sinusoidal_student_loop(seq_len, d_model):
    """A right answer as a double loop, returning a torch tensor."""
    out = torch.zeros(seq_len, d_model, dtype=torch.float64)
    for p in range(seq_len):
        for c in range(d_model):
            angle = p / 10000 ** (2 * (c // 2) / d_model)
            out[p, c] = math.sin(angle) if c % 2 == 0 else math.cos(angle)
    return out


SINUSOIDAL_WRONG = {
    "off-by-one exponent 2(k+1)/d": (
        lambda s, d: table(s, d, exponent=lambda k, d: 2 * (k + 1) / d),
        "off by one pair",
    ),
    "odd column uses its own index": (
        lambda s, d: table(s, d, cos_exponent=lambda k, d: (2 * k + 1) / d),
        "SAME frequency",
    ),
    "exponent 2i/d with i the column index": (
        lambda s, d: table(s, d, exponent=lambda k, d: 4 * k / d),
        "doubled the index",
    ),
    "sin and cos swapped": (lambda s, d: table(s, d, swap=True), "swapped"),
    "concatenated layout": (lambda s, d: table(s, d, concatenated=True), "concatenated layout"),
    "positions start at 1": (lambda s, d: table(s, d, first=1), "positions start at 0"),
    "exponent sign flipped": (lambda s, d: table(s, d, exponent=lambda k, d: -2 * k / d), "sign is flipped"),
    "an extra column for odd d": (lambda s, d: table(s, d + d % 2), "d_model + 1 columns"),
    "a list of lists of zeros": (lambda s, d: np.zeros((s, d)).tolist(), "every entry of your result is 0"),
    "forgot to return": (lambda s, d: None, "returned None"),
    "crashes on odd d": (
        lambda s, d: table(s, d) if d % 2 == 0 else np.zeros((s, d))[:, ::3] @ np.ones((2, 2)),
        "odd d_model: the last column",
    ),
}


def test_sinusoidal_checker_fails_the_stub(capsys):
    assert not check_sinusoidal(stub)
    assert "not implemented" in capsys.readouterr().out


@pytest.mark.parametrize("name", SINUSOIDAL_WRONG)
def test_sinusoidal_checker_fails_wrong_answers_with_the_right_hint(name, capsys):
    wrong, hint = SINUSOIDAL_WRONG[name]
    result = check_sinusoidal(wrong)
    assert not result
    assert hint in capsys.readouterr().out
    assert result.hint != SINUSOIDAL_HINT  # a specific hint, not the general one


def test_sinusoidal_checker_passes_solutions():
    assert check_sinusoidal(table)
    assert check_sinusoidal(sinusoidal_student_loop)
    assert check_sinusoidal(lambda s, d: torch.from_numpy(table(s, d, dtype=np.float32)))  # float32, torch


@pytest.mark.parametrize(
    "call",
    [
        lambda s, d: pe.sinusoidal_encoding(s, d),
        lambda s, d: pe.sinusoidal_encoding_loop(s, d),
        lambda s, d: pe.SinusoidalPositionalEncoding(d, s)(torch.zeros(1, s, d))[0],
        lambda s, d: np.sin(np.arange(s)[:, None] * pe.sinusoidal_frequencies(d)),
    ],
)
def test_sinusoidal_checker_fails_an_answer_that_calls_the_library(call, capsys):
    result = check_sinusoidal(call)
    assert not result and result.reason == "calls the library"
    assert "switched off" in capsys.readouterr().out


# --- check_shift_matrix ---------------------------------------------------------------------


def theta(d_model):
    return 10000.0 ** (-2.0 * np.arange(d_model // 2) / d_model)  # (d/2,)


def interleaved(delta, d_model, *, frequencies=None, sign=1.0):
    """The interleaved M_Δ, block by block, written with NumPy (no posenc_lib)."""
    frequencies = theta(d_model) if frequencies is None else frequencies
    m = np.zeros((d_model, d_model))
    for pair, w in enumerate(frequencies):
        c, s = math.cos(delta * w), math.sin(delta * w)
        m[2 * pair : 2 * pair + 2, 2 * pair : 2 * pair + 2] = [[c, sign * s], [-sign * s, c]]
    return m


ORDER = {d: np.concatenate([np.arange(0, d, 2), np.arange(1, d, 2)]) for d in range(2, 129, 2)}


def by_blocks(delta, d_model):
    """A right answer: [[C, S], [-S, C]] with diagonal C = diag(cos Δθ), S = diag(sin Δθ)."""
    c, s = np.diag(np.cos(delta * theta(d_model))), np.diag(np.sin(delta * theta(d_model)))
    return np.block([[c, s], [-s, c]])


def by_reordering(delta, d_model):
    """A right answer: P M_Δ P^T with the library's permutation (allowed), in float32 torch."""
    order = pe.interleaved_to_concatenated_permutation(d_model)
    return torch.from_numpy(interleaved(delta, d_model)).float()[order][:, order]


def by_least_squares(delta, d_model):
    """A right answer: solve PE(p + Δ) = M PE(p) for M from the concatenated table itself."""
    full = pe.sinusoidal_encoding(60_100, d_model, layout="concatenated", dtype=torch.float64).numpy()
    start = np.arange(50, 60_000, 37)
    solution, *_ = np.linalg.lstsq(full[start], full[start + delta], rcond=None)  # table[p] @ M^T = table[p + Δ]
    return solution.T


def test_the_checker_fails_the_stub():
    assert not check_shift_matrix(stub)


WRONG = {
    "interleaved (first edition's answer)": (interleaved, "interleaved layout"),
    "rows only": (lambda delta, d: interleaved(delta, d)[ORDER[d]], "only the rows"),
    "columns only": (lambda delta, d: interleaved(delta, d)[:, ORDER[d]], "only the columns"),
    "inverse order": (
        lambda delta, d: interleaved(delta, d)[np.argsort(ORDER[d])][:, np.argsort(ORDER[d])],
        "inverse order",
    ),
    "wrong direction": (lambda delta, d: by_blocks(-delta, d), "wrong way"),
    "one angle for every pair": (
        lambda delta, d: interleaved(delta, d, frequencies=np.ones(d // 2))[ORDER[d]][:, ORDER[d]],
        "its own angle",
    ),
    "identity": (lambda delta, d: np.eye(d), "does not depend on"),
    "wrong size": (lambda delta, d: np.eye(d + 1), "the shape is"),
}


@pytest.mark.parametrize("name", WRONG)
def test_the_checker_fails_typical_wrong_answers_with_their_hint(name, capsys):
    wrong, hint = WRONG[name]
    result = check_shift_matrix(wrong)
    assert not result
    assert hint in capsys.readouterr().out
    if name != "wrong size":
        assert result.hint != SHIFT_HINT


@pytest.mark.parametrize(
    "answer", [by_blocks, by_reordering, by_least_squares], ids=["blocks", "reordered", "least-squares"]
)
def test_the_checker_passes_right_answers(answer):
    assert check_shift_matrix(answer)


def test_the_checker_fails_an_answer_that_calls_the_library(capsys):
    def reordered_library(delta, d_model):
        order = pe.interleaved_to_concatenated_permutation(d_model)
        return pe.shift_matrix(delta, d_model)[order][:, order]

    result = check_shift_matrix(reordered_library)
    assert not result and result.reason == "calls the library"
    assert "posenc_lib.shift_matrix" in capsys.readouterr().out


def test_the_reference_shifts_the_concatenated_table():
    """What the checker expects really is PE(p + Δ) = M_Δ PE(p) for the library's concatenated table."""
    d_model, delta = 16, 5
    table = pe.sinusoidal_encoding(40, d_model, layout="concatenated", dtype=torch.float64).numpy()  # (40, d)
    m = by_blocks(delta, d_model)
    np.testing.assert_allclose(table[:-delta] @ m.T, table[delta:], atol=1e-12)
